//! The audit log's entry format and hash chain.
//!
//! Every answered mutation (applied, or refused as `insufficient` or
//! `balance-overflow`) appends one entry, so every answer an idempotency key
//! replays is under the chain. Its hash is SHA-256 over this fixed layout (all
//! integers big-endian, strings UTF-8 with a u32 length):
//!
//! ```text
//! "claw/v2/points-audit"                  20 bytes, domain separation
//! seq                                     u64
//! prev_hash                               32 bytes (all zero for seq 1)
//! created_ms                              i64 (unix milliseconds)
//! len(op)          u32 || op              "debit" | "credit" | "grant" | "settle"
//! len(key)         u32 || idempotency key
//! len(body)        u32 || body            the JSON text exactly as stored
//! len(fingerprint) u32 || fingerprint     hex SHA-256 of the canonical request
//! status                                  u16, the HTTP status of the answer (200 or 409)
//! len(answer)      u32 || answer          the answer's JSON text, replayed byte for byte
//! ```
//!
//! `body` is `{"entries":[{"account","kind","amount","balance","memo"},…]}`
//! (see [`AuditBody`]); `balance` is the account's balance after that entry.
//! A refused mutation's body has no entries. The fingerprint, status and
//! answer are stored in the `idempotency` table (one row per entry).

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// Domain-separation prefix of every audit hash.
pub const AUDIT_DOMAIN: &[u8] = b"claw/v2/points-audit";

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
    /// Hex SHA-256 of the canonical request the key is bound to.
    pub fingerprint: String,
    /// HTTP status of the stored answer: 200 applied, 409 refused.
    pub status: u16,
    /// The stored answer's JSON text, replayed on a repeat of the key.
    pub answer: String,
    /// Unix milliseconds when the entry was written.
    pub created_ms: i64,
    /// Hash of the previous entry (hex), [`GENESIS_HASH`] for seq 1.
    pub prev_hash: String,
    /// This entry's hash (hex), see the module docs for the layout.
    pub hash: String,
}

/// The hashed fields of one entry, borrowed.
#[derive(Debug, Clone, Copy)]
pub struct EntryFields<'a> {
    /// Position in the chain.
    pub seq: u64,
    /// Previous entry's hash, 64 hex characters.
    pub prev_hash: &'a str,
    /// Unix milliseconds.
    pub created_ms: i64,
    /// `debit`, `credit`, `grant` or `settle`.
    pub op: &'a str,
    /// Idempotency key.
    pub key: &'a str,
    /// Stored [`AuditBody`] JSON.
    pub body: &'a str,
    /// Request fingerprint (hex).
    pub fingerprint: &'a str,
    /// Answer status.
    pub status: u16,
    /// Answer JSON.
    pub answer: &'a str,
}

/// Computes an entry's hash over the documented fixed layout; returns hex.
/// `prev_hash` must be 64 hex characters, else `None`.
pub fn entry_hash(f: EntryFields<'_>) -> Option<String> {
    let mut prev = [0u8; 32];
    hex::decode_to_slice(f.prev_hash, &mut prev).ok()?;
    let mut h = Sha256::new();
    h.update(AUDIT_DOMAIN);
    h.update(f.seq.to_be_bytes());
    h.update(prev);
    h.update(f.created_ms.to_be_bytes());
    let mut part = |p: &str| -> Option<()> {
        h.update(u32::try_from(p.len()).ok()?.to_be_bytes());
        h.update(p.as_bytes());
        Some(())
    };
    part(f.op)?;
    part(f.key)?;
    part(f.body)?;
    part(f.fingerprint)?;
    h.update(f.status.to_be_bytes());
    h.update(u32::try_from(f.answer.len()).ok()?.to_be_bytes());
    h.update(f.answer.as_bytes());
    Some(hex::encode(h.finalize()))
}

impl AuditEntry {
    /// The hashed fields of this entry.
    pub fn fields(&self) -> EntryFields<'_> {
        EntryFields {
            seq: self.seq,
            prev_hash: &self.prev_hash,
            created_ms: self.created_ms,
            op: &self.op,
            key: &self.key,
            body: &self.body,
            fingerprint: &self.fingerprint,
            status: self.status,
            answer: &self.answer,
        }
    }

    /// Recomputes this entry's hash from its fields.
    pub fn computed_hash(&self) -> Option<String> {
        entry_hash(self.fields())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fields() -> EntryFields<'static> {
        EntryFields {
            seq: 1,
            prev_hash: GENESIS_HASH,
            created_ms: 5,
            op: "debit",
            key: "k1",
            body: "{}",
            fingerprint: "ab",
            status: 200,
            answer: "{\"a\":1}",
        }
    }

    #[test]
    fn hash_is_fixed_layout() {
        // Recompute by hand to pin the layout.
        let mut h = Sha256::new();
        h.update(b"claw/v2/points-audit");
        h.update(1u64.to_be_bytes());
        h.update([0u8; 32]);
        h.update(5i64.to_be_bytes());
        for p in ["debit", "k1", "{}", "ab"] {
            h.update((p.len() as u32).to_be_bytes());
            h.update(p.as_bytes());
        }
        h.update(200u16.to_be_bytes());
        h.update(7u32.to_be_bytes());
        h.update(b"{\"a\":1}");
        let want = hex::encode(h.finalize());
        assert_eq!(entry_hash(fields()).unwrap(), want);
        // Any field change changes the hash; field boundaries are unambiguous.
        assert_ne!(entry_hash(EntryFields { key: "k", body: "1{}", ..fields() }).unwrap(), want);
        assert_ne!(entry_hash(EntryFields { seq: 2, ..fields() }).unwrap(), want);
        assert_ne!(entry_hash(EntryFields { status: 409, ..fields() }).unwrap(), want);
        assert_ne!(entry_hash(EntryFields { answer: "{\"a\":2}", ..fields() }).unwrap(), want);
        assert_ne!(entry_hash(EntryFields { fingerprint: "ac", ..fields() }).unwrap(), want);
        assert!(entry_hash(EntryFields { prev_hash: "zz", ..fields() }).is_none());
    }

    #[test]
    fn kinds_round_trip() {
        for k in [EntryKind::Debit, EntryKind::Credit, EntryKind::Grant] {
            assert_eq!(EntryKind::parse(k.as_str()), Some(k));
        }
        assert_eq!(EntryKind::parse("mint"), None);
    }
}
