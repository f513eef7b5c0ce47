//! The transcript archive: every finished hand as JSON lines under
//! `DATA_DIR/rooms/<room>/transcripts/<hand_number>-<hand_id>.jsonl`
//! (a header line, then one signed `event` per line), ready for
//! `claw-player audit`. A deferred `audit-reveal` is appended to its hand's
//! file when it is published.

use std::fs::{self, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use claw_protocol::transcript::{EventEnvelope, Transcript};
use claw_protocol::HandId;

/// Why archiving failed (logged; the hand itself is not affected).
#[derive(Debug, thiserror::Error)]
pub enum ArchiveError {
    /// The file system refused.
    #[error("archive i/o: {0}")]
    Io(#[from] std::io::Error),
    /// The transcript could not be encoded.
    #[error("archive encoding: {0}")]
    Encode(String),
}

/// One room's transcript directory.
#[derive(Debug, Clone)]
pub struct Archive {
    dir: PathBuf,
}

impl Archive {
    /// The archive of `room` under `data_dir` (created if missing).
    pub fn open(data_dir: &Path, room: &str) -> Result<Archive, ArchiveError> {
        let dir = data_dir.join("rooms").join(room).join("transcripts");
        fs::create_dir_all(&dir)?;
        Ok(Archive { dir })
    }

    /// The directory holding the files.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The file of one hand.
    pub fn path(&self, hand_number: u64, hand_id: &HandId) -> PathBuf {
        self.dir.join(format!("{hand_number:08}-{hand_id}.jsonl"))
    }

    /// Writes a hand's transcript (atomically: temp file, then rename).
    pub fn write(&self, hand_number: u64, t: &Transcript) -> Result<PathBuf, ArchiveError> {
        let text = t.to_jsonl().map_err(|e| ArchiveError::Encode(e.to_string()))?;
        let path = self.path(hand_number, &t.hand_id);
        let tmp = path.with_extension("jsonl.tmp");
        fs::write(&tmp, text)?;
        fs::rename(&tmp, &path)?;
        Ok(path)
    }

    /// Appends one event (a deferred `audit-reveal`) to a hand's file.
    pub fn append(&self, hand_number: u64, env: &EventEnvelope) -> Result<(), ArchiveError> {
        let line = env.encode().map_err(|e| ArchiveError::Encode(e.to_string()))?;
        let mut f = OpenOptions::new().append(true).open(self.path(hand_number, &env.hand_id))?;
        writeln!(f, "{line}")?;
        Ok(())
    }

    /// Keeps a voided hand's transcript under `voided/<hand_id>.jsonl`.
    pub fn write_voided(&self, t: &Transcript) -> Result<PathBuf, ArchiveError> {
        let text = t.to_jsonl().map_err(|e| ArchiveError::Encode(e.to_string()))?;
        let dir = self.dir.join("voided");
        fs::create_dir_all(&dir)?;
        let path = dir.join(format!("{}.jsonl", t.hand_id));
        fs::write(&path, text)?;
        Ok(path)
    }

    /// The number after the highest archived hand (0 for an empty archive),
    /// so that hand numbers and file names continue across restarts.
    pub fn next_hand_number(&self) -> u64 {
        self.files()
            .iter()
            .filter_map(|p| p.file_name()?.to_str()?.split_once('-')?.0.parse::<u64>().ok())
            .max()
            .map_or(0, |n| n.saturating_add(1))
    }

    /// Every archived transcript file, in hand order.
    pub fn files(&self) -> Vec<PathBuf> {
        let mut v: Vec<PathBuf> = fs::read_dir(&self.dir)
            .map(|d| {
                d.flatten()
                    .map(|e| e.path())
                    .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
                    .collect()
            })
            .unwrap_or_default();
        v.sort();
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn next_hand_number_follows_the_highest_file() {
        let dir = tempfile::tempdir().unwrap();
        let a = Archive::open(dir.path(), "r").unwrap();
        assert_eq!(a.next_hand_number(), 0);
        for name in ["00000000-aa.jsonl", "00000007-bb.jsonl", "00000003-cc.jsonl", "junk.jsonl", "9-x.txt"] {
            fs::write(a.dir().join(name), "").unwrap();
        }
        assert_eq!(a.next_hand_number(), 8);
    }
}
