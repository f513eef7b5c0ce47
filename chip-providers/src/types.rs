//! Accounts, keys, operations and errors shared by every provider.

use std::fmt;

use claw_protocol::Chips;
use serde::{Deserialize, Serialize};

pub use claw_protocol::{AccountId, IdempotencyKey};

/// A hand as chip providers see it: the operations of a hand have keys
/// `<room>/<hand_id>/<n>` (see [`HandRef::contains`]).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct HandRef {
    /// The room id.
    pub room: String,
    /// The hand id (hex).
    pub hand_id: String,
}

impl HandRef {
    pub fn new(room: impl Into<String>, hand_id: impl Into<String>) -> HandRef {
        HandRef { room: room.into(), hand_id: hand_id.into() }
    }

    /// `<room>/<hand_id>`: the prefix of the hand's operation keys.
    pub fn key_prefix(&self) -> String {
        self.to_string()
    }

    /// Whether `key` names an operation of this hand (`<room>/<hand_id>/<tail>`, tail without `/`).
    pub fn contains(&self, key: &IdempotencyKey) -> bool {
        key.as_str()
            .rsplit_once('/')
            .is_some_and(|(prefix, tail)| !tail.is_empty() && prefix == self.key_prefix())
    }
}

impl fmt::Display for HandRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.room, self.hand_id)
    }
}

/// What [`crate::ChipProvider::reconcile`] did with interrupted hands.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Reconciled {
    /// Settled with the result the dealer had recorded.
    pub settled: Vec<HandRef>,
    /// Refunded: every stake went back.
    pub refunded: Vec<HandRef>,
    /// Already settled before (nothing moved now).
    pub already: Vec<HandRef>,
    /// Past the lock deadline: the stakes became free by themselves.
    pub lapsed: Vec<HandRef>,
}

/// Debit or credit: the protocol's one definition.
pub use claw_protocol::messages::ChipOp;

/// One operation of a batch settlement.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AccountOp {
    pub kind: ChipOp,
    pub account: AccountId,
    pub amount: Chips,
    pub memo: String,
}

impl AccountOp {
    /// One operation of `kind` on `account` (what a single debit or credit is).
    pub fn new(kind: ChipOp, account: &AccountId, amount: Chips, memo: &str) -> AccountOp {
        AccountOp { kind, account: account.clone(), amount, memo: memo.to_owned() }
    }
}

/// Why a chip call failed. `is_retryable` tells the caller whether the same
/// call (same key) may be tried again.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", tag = "code")]
pub enum ChipError {
    #[error("insufficient balance in {account}: has {balance}, needs {needed}")]
    Insufficient { account: String, balance: u64, needed: u64 },
    #[error("unknown account {0}")]
    UnknownAccount(String),
    #[error("unauthorised: {0}")]
    Unauthorized(String),
    #[error("bad request: {0}")]
    BadRequest(String),
    #[error("idempotency key {0} was already used for a different request")]
    KeyReused(String),
    #[error("chip service unreachable: {0}")]
    Unreachable(String),
    #[error("chip service timed out")]
    Timeout,
    #[error("rate limited")]
    RateLimited,
    #[error("chip service error: {0}")]
    Service(String),
}

impl From<claw_protocol::IdError> for ChipError {
    fn from(e: claw_protocol::IdError) -> ChipError {
        ChipError::BadRequest(e.to_string())
    }
}

impl ChipError {
    /// Whether retrying the same request (same idempotency key) may succeed.
    pub fn is_retryable(&self) -> bool {
        matches!(
            self,
            ChipError::Unreachable(_) | ChipError::Timeout | ChipError::RateLimited | ChipError::Service(_)
        )
    }
}
