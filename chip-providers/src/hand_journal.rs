//! A per-hand journal for providers that settle per hand: one JSON-lines
//! file per hand under `<dir>/open/` while the hand may still move chips,
//! appended to `<dir>/hands.jsonl` when it ends. Lines that describe a
//! transaction are synced to disk before it is sent, so a restart knows
//! everything it may have submitted.

use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::de::DeserializeOwned;
use serde::Serialize;

/// Why the journal could not be read or written.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct JournalError(pub String);

impl From<JournalError> for crate::ChipError {
    fn from(e: JournalError) -> crate::ChipError {
        crate::ChipError::Service(format!("chip journal: {}", e.0))
    }
}

fn io(e: std::io::Error) -> JournalError {
    JournalError(e.to_string())
}

/// The journal directory.
#[derive(Debug, Clone)]
pub struct Journal {
    dir: PathBuf,
}

/// An open hand's journal file.
pub struct HandFile {
    path: PathBuf,
    file: File,
}

impl Journal {
    pub fn new(dir: &Path) -> Result<Journal, JournalError> {
        fs::create_dir_all(dir.join("open")).map_err(io)?;
        Ok(Journal { dir: dir.to_owned() })
    }

    /// Creates the hand's file with its first line, synced.
    pub fn create(&self, file_name: &str, first: &impl Serialize) -> Result<HandFile, JournalError> {
        let path = self.dir.join("open").join(format!("{file_name}.jsonl"));
        let file = OpenOptions::new().create_new(true).append(true).open(&path).map_err(|e| {
            if e.kind() == std::io::ErrorKind::AlreadyExists {
                JournalError(format!("{} exists: the hand has not been reconciled", path.display()))
            } else {
                io(e)
            }
        })?;
        let mut f = HandFile { path, file };
        f.append(first, true)?;
        Ok(f)
    }

    /// Re-opens an interrupted hand's file for appending.
    pub fn reopen(&self, path: &Path) -> Result<HandFile, JournalError> {
        let file = OpenOptions::new().append(true).open(path).map_err(io)?;
        Ok(HandFile { path: path.to_owned(), file })
    }

    /// Files of hands that have not ended.
    pub fn open_files(&self) -> Result<Vec<PathBuf>, JournalError> {
        let mut v: Vec<PathBuf> = fs::read_dir(self.dir.join("open"))
            .map_err(io)?
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().and_then(|e| e.to_str()) == Some("jsonl"))
            .collect();
        v.sort();
        Ok(v)
    }

    /// Moves an ended hand's lines to `hands.jsonl`.
    pub fn archive(&self, f: HandFile) -> Result<(), JournalError> {
        let HandFile { path, file } = f;
        drop(file);
        let content = fs::read(&path).map_err(io)?;
        let mut out =
            OpenOptions::new().create(true).append(true).open(self.dir.join("hands.jsonl")).map_err(io)?;
        out.write_all(&content).map_err(io)?;
        out.sync_data().map_err(io)?;
        fs::remove_file(&path).map_err(io)
    }
}

impl HandFile {
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends a line; `sync` forces it to disk (before a transaction).
    pub fn append(&mut self, line: &impl Serialize, sync: bool) -> Result<(), JournalError> {
        let mut s = serde_json::to_string(line).map_err(|e| JournalError(e.to_string()))?;
        s.push('\n');
        self.file.write_all(s.as_bytes()).map_err(io)?;
        if sync {
            self.file.sync_data().map_err(io)?;
        }
        Ok(())
    }
}

/// The journal file name of a hand (its key prefix, `/` spelled `+`).
pub fn file_name(hand: &crate::HandRef) -> String {
    hand.key_prefix().replace('/', "+")
}

/// A hand file's lines. A torn last line (a crash mid-write) is skipped:
/// it was written before the transaction it describes was sent, so that
/// transaction was never sent.
pub fn read_lines<L: DeserializeOwned>(path: &Path) -> Result<Vec<L>, JournalError> {
    let text = fs::read_to_string(path).map_err(io)?;
    Ok(text.lines().filter(|l| !l.trim().is_empty()).filter_map(|l| serde_json::from_str(l).ok()).collect())
}
