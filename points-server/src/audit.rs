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
//!
//! A sharded ledger (layout v3) keeps one chain per account shard: an entry
//! is linked into the chain of every shard its accounts belong to, and its
//! hash covers those links (`links`: `SHARD:SHARD_SEQ:PREV_HASH` per shard,
//! ascending, comma-separated), so one row is tamper-evident in every chain
//! it is part of:
//!
//! ```text
//! "claw/v3/points-audit"                  20 bytes
//! seq                                     u64, the operation's ledger-wide id
//! len(links)       u32 || links           the text exactly as stored
//! created_ms, op, key, body, fingerprint, status, answer   as in v2
//! ```
//!
//! Entries written before shards (v2, `links` empty) stay valid as the
//! history of shard 0 of a one-shard ledger.

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// Domain-separation prefix of every audit hash.
pub const AUDIT_DOMAIN: &[u8] = b"claw/v2/points-audit";

/// Domain-separation prefix of every sharded (v3) audit hash.
pub const AUDIT_DOMAIN_V3: &[u8] = b"claw/v3/points-audit";

/// Domain-separation prefix of the head of heads.
pub const HEADS_DOMAIN: &[u8] = b"claw/v3/points-heads";

/// Domain-separation prefix of the account-to-shard map.
pub const SHARD_DOMAIN: &[u8] = b"claw/v3/points-shard";

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
    /// The shard chains this entry is linked into, `SHARD:SHARD_SEQ:PREV_HASH`
    /// per shard, ascending, comma-separated; empty for an entry written
    /// before shards (layout v2).
    #[serde(default)]
    pub links: String,
}

/// One link of an entry into a shard's chain.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShardLink {
    /// The shard.
    pub shard: u32,
    /// Position in that shard's chain, from 1 without gaps.
    pub shard_seq: u64,
    /// Hash of the shard's previous entry (hex), [`GENESIS_HASH`] for the first.
    pub prev_hash: String,
}

/// The stored text of an entry's links (ascending by shard).
pub fn links_text(links: &[ShardLink]) -> String {
    links.iter().map(|l| format!("{}:{}:{}", l.shard, l.shard_seq, l.prev_hash)).collect::<Vec<_>>().join(",")
}

/// Parses stored links; `None` unless canonical (shards strictly ascending,
/// positions from 1, hashes 64 lowercase hex), so one text has one meaning.
pub fn parse_links(text: &str) -> Option<Vec<ShardLink>> {
    let mut out: Vec<ShardLink> = Vec::new();
    for part in text.split(',') {
        let mut it = part.split(':');
        let (shard, seq, prev) = (it.next()?, it.next()?, it.next()?);
        if it.next().is_some() {
            return None;
        }
        let link = ShardLink {
            shard: shard.parse().ok()?,
            shard_seq: seq.parse().ok()?,
            prev_hash: prev.to_owned(),
        };
        let canonical = link.shard.to_string() == shard
            && link.shard_seq.to_string() == seq
            && link.shard_seq >= 1
            && prev.len() == 64
            && prev.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
        if !canonical || out.last().is_some_and(|l| l.shard >= link.shard) {
            return None;
        }
        out.push(link);
    }
    Some(out)
}

/// The shard an account's chain is in: the first 8 bytes of
/// SHA-256(SHARD_DOMAIN || account), big-endian, modulo `shards`.
pub fn shard_of(account: &str, shards: u32) -> u32 {
    let d = Sha256::new().chain_update(SHARD_DOMAIN).chain_update(account.as_bytes()).finalize();
    let mut b = [0u8; 8];
    b.copy_from_slice(&d[..8]);
    (u64::from_be_bytes(b) % u64::from(shards.max(1))) as u32
}

/// Domain-separation prefix of a checkpoint's hash.
pub const CHECKPOINT_DOMAIN: &[u8] = b"claw/v3/points-checkpoint";

/// The stored text of every shard's head at a checkpoint: `SHARD:SEQ:HASH`
/// for shards 0, 1, … in order, comma-separated.
pub fn heads_text(heads: &[(u64, String)]) -> String {
    heads.iter().enumerate().map(|(s, (seq, hash))| format!("{s}:{seq}:{hash}")).collect::<Vec<_>>().join(",")
}

/// Parses a checkpoint's heads; `None` unless canonical (shards 0, 1, … in
/// order, hashes 64 lowercase hex).
pub fn parse_heads(text: &str) -> Option<Vec<(u64, String)>> {
    let mut out = Vec::new();
    for (i, part) in text.split(',').enumerate() {
        let mut it = part.split(':');
        let (shard, seq, hash) = (it.next()?, it.next()?, it.next()?);
        let n: u64 = seq.parse().ok()?;
        let ok = it.next().is_none()
            && shard == i.to_string()
            && n.to_string() == seq
            && hash.len() == 64
            && hash.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
        if !ok {
            return None;
        }
        out.push((n, hash.to_owned()));
    }
    Some(out)
}

/// A checkpoint's hash: SHA-256(CHECKPOINT_DOMAIN || id u64 || prev_hash 32
/// bytes || created_ms i64 || len(heads) u32 || heads), hex; `None` if
/// `prev_hash` is not 64 hex.
pub fn checkpoint_hash(id: u64, prev_hash: &str, created_ms: i64, heads: &str) -> Option<String> {
    let mut prev = [0u8; 32];
    hex::decode_to_slice(prev_hash, &mut prev).ok()?;
    let mut h = Sha256::new();
    h.update(CHECKPOINT_DOMAIN);
    h.update(id.to_be_bytes());
    h.update(prev);
    h.update(created_ms.to_be_bytes());
    h.update(u32::try_from(heads.len()).ok()?.to_be_bytes());
    h.update(heads.as_bytes());
    Some(hex::encode(h.finalize()))
}

/// The head of heads: SHA-256(HEADS_DOMAIN || shard count u32 || for each
/// shard in order: its last position u64 || its head hash 32 bytes), hex.
/// One value that pins every shard chain; `None` if a head is not 64 hex.
pub fn heads_hash(heads: &[(u64, String)]) -> Option<String> {
    let mut h = Sha256::new();
    h.update(HEADS_DOMAIN);
    h.update(u32::try_from(heads.len()).ok()?.to_be_bytes());
    for (seq, hash) in heads {
        let mut b = [0u8; 32];
        hex::decode_to_slice(hash, &mut b).ok()?;
        h.update(seq.to_be_bytes());
        h.update(b);
    }
    Some(hex::encode(h.finalize()))
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

/// Computes a sharded (v3) entry's hash: `links` replaces `seq`'s single
/// `prev_hash` (`f.prev_hash` is not hashed); returns hex.
pub fn entry_hash_v3(f: EntryFields<'_>, links: &str) -> Option<String> {
    let mut h = Sha256::new();
    h.update(AUDIT_DOMAIN_V3);
    h.update(f.seq.to_be_bytes());
    h.update(u32::try_from(links.len()).ok()?.to_be_bytes());
    h.update(links.as_bytes());
    h.update(f.created_ms.to_be_bytes());
    for p in [f.op, f.key, f.body, f.fingerprint] {
        h.update(u32::try_from(p.len()).ok()?.to_be_bytes());
        h.update(p.as_bytes());
    }
    h.update(f.status.to_be_bytes());
    h.update(u32::try_from(f.answer.len()).ok()?.to_be_bytes());
    h.update(f.answer.as_bytes());
    Some(hex::encode(h.finalize()))
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

    /// Recomputes this entry's hash from its fields (layout v3 when it has
    /// links, else v2).
    pub fn computed_hash(&self) -> Option<String> {
        if self.links.is_empty() {
            entry_hash(self.fields())
        } else {
            entry_hash_v3(self.fields(), &self.links)
        }
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
    fn links_are_canonical_and_hashed() {
        let h = "ab".repeat(32);
        let links = vec![
            ShardLink { shard: 2, shard_seq: 7, prev_hash: h.clone() },
            ShardLink { shard: 9, shard_seq: 1, prev_hash: GENESIS_HASH.into() },
        ];
        let text = links_text(&links);
        assert_eq!(parse_links(&text), Some(links));
        let swapped = format!("9:1:{GENESIS_HASH},2:7:{h}");
        for bad in [swapped.as_str(), "2:07:x", "", "2:0:00", &format!("2:1:{}", "AB".repeat(32))] {
            assert_eq!(parse_links(bad), None, "{bad}");
        }
        let v3 = entry_hash_v3(fields(), &text).unwrap();
        assert_ne!(v3, entry_hash(fields()).unwrap());
        assert_ne!(v3, entry_hash_v3(fields(), &format!("2:7:{h}")).unwrap());
        // prev_hash is carried by the links in v3, not hashed on its own.
        assert_eq!(v3, entry_hash_v3(EntryFields { prev_hash: "zz", ..fields() }, &text).unwrap());
    }

    #[test]
    fn shards_spread_and_heads_pin_every_chain() {
        let mut seen = [0u32; 16];
        for i in 0..1600 {
            seen[shard_of(&format!("player-{i}"), 16) as usize] += 1;
        }
        assert!(seen.iter().all(|&n| n > 50), "{seen:?}");
        assert_eq!(shard_of("anyone", 1), 0);
        let heads = vec![(3, "ab".repeat(32)), (0, GENESIS_HASH.to_owned())];
        let hh = heads_hash(&heads).unwrap();
        assert_ne!(hh, heads_hash(&[(2, "ab".repeat(32)), (0, GENESIS_HASH.to_owned())]).unwrap());
        assert_ne!(hh, heads_hash(&heads[..1]).unwrap());
    }

    #[test]
    fn kinds_round_trip() {
        for k in [EntryKind::Debit, EntryKind::Credit, EntryKind::Grant] {
            assert_eq!(EntryKind::parse(k.as_str()), Some(k));
        }
        assert_eq!(EntryKind::parse("mint"), None);
    }
}
