//! The lines of the provider's per-hand journal ([`crate::hand_journal`]).
//! `open` and `close` lines are synced to disk before the transaction they
//! describe is sent, so a restart knows every lock it may have taken and
//! every result it may have submitted.

use std::path::Path;

use alloy::primitives::Address;
use claw_protocol::Chips;
use serde::{Deserialize, Serialize};

use super::error::EvmError;
use crate::book::OpLine;
use crate::hand_journal::{read_lines, JournalError};
use crate::{AccountId, HandRef};

impl From<JournalError> for EvmError {
    fn from(e: JournalError) -> EvmError {
        EvmError::Journal(e.0)
    }
}

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

impl std::fmt::Display for Outcome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Outcome::Settled => "settled",
            Outcome::Refunded => "refunded",
            Outcome::Already => "already settled on chain",
            Outcome::Lapsed => "lapsed: the vault freed the stakes",
            Outcome::NotOpened => "never opened",
        })
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", tag = "line")]
pub enum Line {
    /// Intent to lock (before the `openHand` transaction).
    Open { hand: HandRef, deadline: u32, stakes: Vec<Stake> },
    /// The lock is confirmed.
    Opened { tx: String },
    /// A debit or credit inside the hand (applied locally).
    Op(OpLine),
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

/// Reads a hand's file (a torn last line is skipped: [`read_lines`]).
pub fn read(path: &Path) -> Result<Record, EvmError> {
    let mut rec: Option<Record> = None;
    for l in read_lines::<Line>(path)? {
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
