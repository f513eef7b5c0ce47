//! The audit log's entry format and hash chain.
//!
//! Every applied mutation appends one entry. Its hash is SHA-256 over this
//! fixed layout (all integers big-endian, strings UTF-8 with a u32 length):
//!
//! ```text
//! "claw/v1/points-audit"            20 bytes, domain separation
//! seq                               u64
//! prev_hash                         32 bytes (all zero for seq 1)
//! created_ms                        i64 (unix milliseconds)
//! len(op)   u32 || op               "debit" | "credit" | "grant" | "settle"
//! len(key)  u32 || idempotency key
//! len(body) u32 || body             the JSON text exactly as stored
//! ```
//!
//! `body` is `{"entries":[{"account","kind","amount","balance","memo"},…]}`
//! (see [`AuditBody`]); `balance` is the account's balance after that entry.

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// Domain-separation prefix of every audit hash.
pub const AUDIT_DOMAIN: &[u8] = b"claw/v1/points-audit";

/// The `prev_hash` of the first entry and the head hash of an empty log.
pub const GENESIS_HASH: &str = "0000000000000000000000000000000000000000000000000000000000000000";

/// The kind of one account movement.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum EntryKind {
    /// Chips taken from the account (a bet, a commission).
    Debit,
    /// Chips given to the account (a win, a refund).
    Credit,
    /// Chips created by the operator (a buy-in, a daily gift).
    Grant,
}

impl EntryKind {
    /// The stable text used in the database and the hashed body.
    pub fn as_str(self) -> &'static str {
        match self {
            EntryKind::Debit => "debit",
            EntryKind::Credit => "credit",
            EntryKind::Grant => "grant",
        }
    }

    /// Parses the stable text form.
    pub fn parse(s: &str) -> Option<EntryKind> {
        match s {
            "debit" => Some(EntryKind::Debit),
            "credit" => Some(EntryKind::Credit),
            "grant" => Some(EntryKind::Grant),
            _ => None,
        }
    }
}

/// One account movement inside an audit entry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AuditMove {
    /// The account moved.
    pub account: String,
    /// Debit, credit or grant.
    pub kind: EntryKind,
    /// Chips moved (positive).
    pub amount: u64,
    /// The account's balance right after this movement.
    pub balance: u64,
    /// Free text from the caller (hand id, reason).
    pub memo: String,
}

/// The JSON body stored (and hashed) in each audit entry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AuditBody {
    /// The movements, in the order they were applied.
    pub entries: Vec<AuditMove>,
}

/// One row of the audit log, as returned by the audit query endpoint.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AuditEntry {
    /// Position in the chain, from 1 without gaps.
    pub seq: u64,
    /// `debit`, `credit`, `grant` or `settle`.
    pub op: String,
    /// The idempotency key of the request that made this entry.
    pub key: String,
    /// The exact stored JSON text of the entry's [`AuditBody`].
    pub body: String,
    /// Unix milliseconds when the entry was written.
    pub created_ms: i64,
    /// Hash of the previous entry (hex), [`GENESIS_HASH`] for seq 1.
    pub prev_hash: String,
    /// This entry's hash (hex), see the module docs for the layout.
    pub hash: String,
}

/// Computes an entry's hash over the documented fixed layout; returns hex.
/// `prev_hash` must be 64 hex characters, else `None`.
pub fn entry_hash(
    seq: u64,
    prev_hash: &str,
    created_ms: i64,
    op: &str,
    key: &str,
    body: &str,
) -> Option<String> {
    let mut prev = [0u8; 32];
    hex::decode_to_slice(prev_hash, &mut prev).ok()?;
    let mut h = Sha256::new();
    h.update(AUDIT_DOMAIN);
    h.update(seq.to_be_bytes());
    h.update(prev);
    h.update(created_ms.to_be_bytes());
    for part in [op, key, body] {
        let len = u32::try_from(part.len()).ok()?;
        h.update(len.to_be_bytes());
        h.update(part.as_bytes());
    }
    Some(hex::encode(h.finalize()))
}

impl AuditEntry {
    /// Recomputes this entry's hash from its fields.
    pub fn computed_hash(&self) -> Option<String> {
        entry_hash(self.seq, &self.prev_hash, self.created_ms, &self.op, &self.key, &self.body)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hash_is_fixed_layout() {
        // Recompute by hand to pin the layout.
        let mut h = Sha256::new();
        h.update(b"claw/v1/points-audit");
        h.update(1u64.to_be_bytes());
        h.update([0u8; 32]);
        h.update(5i64.to_be_bytes());
        for p in ["debit", "k1", "{}"] {
            h.update((p.len() as u32).to_be_bytes());
            h.update(p.as_bytes());
        }
        let want = hex::encode(h.finalize());
        assert_eq!(entry_hash(1, GENESIS_HASH, 5, "debit", "k1", "{}").unwrap(), want);
        // Any field change changes the hash; field boundaries are unambiguous.
        assert_ne!(entry_hash(1, GENESIS_HASH, 5, "debit", "k", "1{}").unwrap(), want);
        assert_ne!(entry_hash(2, GENESIS_HASH, 5, "debit", "k1", "{}").unwrap(), want);
        assert!(entry_hash(1, "zz", 5, "debit", "k1", "{}").is_none());
    }

    #[test]
    fn kinds_round_trip() {
        for k in [EntryKind::Debit, EntryKind::Credit, EntryKind::Grant] {
            assert_eq!(EntryKind::parse(k.as_str()), Some(k));
        }
        assert_eq!(EntryKind::parse("mint"), None);
    }
}
