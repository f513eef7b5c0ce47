//! The provider's own journal: one JSON-lines file per hand under
//! `<dir>/open/` while the hand may still hold locks, appended to
//! `<dir>/hands.jsonl` when it ends. `open` and `close` lines are synced to
//! disk before the transaction they describe is sent, so a restart knows
//! every lock it may have taken and every result it may have submitted.

use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use alloy::primitives::Address;
use claw_protocol::Chips;
use serde::{Deserialize, Serialize};

use super::error::EvmError;
use crate::{AccountId, ChipOpKind, HandRef, IdempotencyKey};

/// One seat of a hand: who, which vault account, the stake locked.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Stake {
    pub account: AccountId,
    pub owner: Address,
    pub stake: Chips,
}

/// How a hand ended on chain.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Outcome {
    /// Paid out with the dealer's result.
    Settled,
    /// Every stake returned.
    Refunded,
    /// Already settled on chain (by an earlier run).
    Already,
    /// The deadline passed; the vault freed the stakes.
    Lapsed,
    /// The lock never happened (refused by the vault): nothing moved.
    NotOpened,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", tag = "line")]
pub enum Line {
    /// Intent to lock (before the `openHand` transaction).
    Open { hand: HandRef, deadline: u32, stakes: Vec<Stake> },
    /// The lock is confirmed.
    Opened { tx: String },
    /// A debit or credit inside the hand (applied locally).
    Op { key: IdempotencyKey, kind: ChipOpKind, account: AccountId, amount: Chips },
    /// Intent to settle with these payouts (before `settleHand`).
    Close { payouts: Vec<Chips>, fee: Chips },
    /// The hand is over on chain.
    End { outcome: Outcome },
}

/// What a journal file says about a hand.
#[derive(Debug, Clone)]
pub struct Record {
    pub hand: HandRef,
    pub deadline: u32,
    pub stakes: Vec<Stake>,
    pub close: Option<(Vec<Chips>, Chips)>,
    pub ended: bool,
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

fn io(e: std::io::Error) -> EvmError {
    EvmError::Journal(e.to_string())
}

impl Journal {
    pub fn new(dir: &Path) -> Result<Journal, EvmError> {
        fs::create_dir_all(dir.join("open")).map_err(io)?;
        Ok(Journal { dir: dir.to_owned() })
    }

    /// Creates the hand's file with its `open` line, synced.
    pub fn create(&self, file_name: &str, open: &Line) -> Result<HandFile, EvmError> {
        let path = self.dir.join("open").join(format!("{file_name}.jsonl"));
        let file = OpenOptions::new().create_new(true).append(true).open(&path).map_err(|e| {
            if e.kind() == std::io::ErrorKind::AlreadyExists {
                EvmError::Journal(format!("{} exists: the hand has not been reconciled", path.display()))
            } else {
                io(e)
            }
        })?;
        let mut f = HandFile { path, file };
        f.append(open, true)?;
        Ok(f)
    }

    /// Re-opens an interrupted hand's file for appending.
    pub fn reopen(&self, path: &Path) -> Result<HandFile, EvmError> {
        let file = OpenOptions::new().append(true).open(path).map_err(io)?;
        Ok(HandFile { path: path.to_owned(), file })
    }

    /// Files of hands that have not ended.
    pub fn open_files(&self) -> Result<Vec<PathBuf>, EvmError> {
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
    pub fn archive(&self, f: HandFile) -> Result<(), EvmError> {
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
    /// Appends a line; `sync` forces it to disk (before a transaction).
    pub fn append(&mut self, line: &Line, sync: bool) -> Result<(), EvmError> {
        let mut s = serde_json::to_string(line).map_err(|e| EvmError::Journal(e.to_string()))?;
        s.push('\n');
        self.file.write_all(s.as_bytes()).map_err(io)?;
        if sync {
            self.file.sync_data().map_err(io)?;
        }
        Ok(())
    }
}

/// Reads a hand's file. A torn last line (a crash mid-write) is ignored:
/// the line it would have been was written before its transaction was sent,
/// so a torn `close` means the settlement was never sent.
pub fn read(path: &Path) -> Result<Record, EvmError> {
    let text = fs::read_to_string(path).map_err(io)?;
    let mut rec: Option<Record> = None;
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let Ok(l) = serde_json::from_str::<Line>(line) else { continue };
        match (l, rec.as_mut()) {
            (Line::Open { hand, deadline, stakes }, None) => {
                rec = Some(Record { hand, deadline, stakes, close: None, ended: false })
            }
            (Line::Close { payouts, fee }, Some(r)) => r.close = Some((payouts, fee)),
            (Line::End { .. }, Some(r)) => r.ended = true,
            _ => {}
        }
    }
    rec.ok_or_else(|| EvmError::Journal(format!("{}: no open line", path.display())))
}
