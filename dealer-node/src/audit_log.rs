//! The operator's audit log: `DATA_DIR/admin-audit.jsonl`, one JSON object
//! per line for every admin action on an identity (ban, unban, freeze,
//! unfreeze, and the bans the abuse rule asks for). Each line carries the
//! hash of the line before it, so a line edited, removed or inserted later
//! breaks the chain, and [`verify`] says where:
//!
//! ```text
//! hash = SHA-256("claw/v1/admin-audit" || prev (32 bytes) || seq (u64 BE) || entry JSON)
//! ```
//!
//! where `entry JSON` is the line's `entry` object exactly as written. The
//! first line's `prev` is 64 zeros. Writes are appended and synced, off the
//! async workers (`spawn_blocking`), one at a time.

use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

/// The log's file name in the data directory.
pub const AUDIT_FILE: &str = "admin-audit.jsonl";

/// Domain separation of the chain's hashes.
const DOMAIN: &[u8] = b"claw/v1/admin-audit";

/// Why the log could not be read, written or trusted.
#[derive(Debug, thiserror::Error)]
pub enum AuditError {
    /// The file could not be read or written.
    #[error("admin audit log {path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// Why.
        source: std::io::Error,
    },
    /// A line does not parse, or its hash or link does not match.
    #[error("admin audit log: line {line} is broken: {why}")]
    Broken {
        /// The 1-based line number.
        line: usize,
        /// What does not match.
        why: String,
    },
}

/// One line of the log.
#[derive(Debug, Serialize, Deserialize)]
struct Line<'a> {
    seq: u64,
    prev: String,
    hash: String,
    #[serde(borrow)]
    entry: &'a RawValue,
}

fn hash(prev: &[u8; 32], seq: u64, entry: &str) -> [u8; 32] {
    claw_protocol::sha256(&[DOMAIN, prev, &seq.to_be_bytes(), entry.as_bytes()]).0
}

/// The append end of the log: the next sequence number and the last hash.
#[derive(Debug)]
pub struct AuditLog {
    path: PathBuf,
    head: std::sync::Mutex<(u64, [u8; 32])>,
}

/// The chain's state after reading every line: lines read and the last hash.
fn read_chain(path: &Path) -> Result<(u64, [u8; 32]), AuditError> {
    let io = |e| AuditError::Io { path: path.display().to_string(), source: e };
    let f = match std::fs::File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok((0, [0; 32])),
        Err(e) => return Err(io(e)),
    };
    let mut prev = [0u8; 32];
    let mut n = 0u64;
    for (i, text) in std::io::BufReader::new(f).lines().enumerate() {
        let text = text.map_err(io)?;
        let broken = |why: String| AuditError::Broken { line: i + 1, why };
        let line: Line<'_> = serde_json::from_str(&text).map_err(|e| broken(e.to_string()))?;
        if line.seq != n + 1 {
            return Err(broken(format!("seq {} where {} was due", line.seq, n + 1)));
        }
        if line.prev != hex::encode(prev) {
            return Err(broken("its prev is not the hash of the line before".into()));
        }
        let h = hash(&prev, line.seq, line.entry.get());
        if line.hash != hex::encode(h) {
            return Err(broken("its hash does not match its content".into()));
        }
        prev = h;
        n = line.seq;
    }
    Ok((n, prev))
}

/// Checks the whole chain of the log at `path`; returns how many lines it has.
pub fn verify(path: &Path) -> Result<u64, AuditError> {
    read_chain(path).map(|(n, _)| n)
}

impl AuditLog {
    /// Opens the log in `data_dir` (blocking: call off the async workers).
    /// A broken chain is an error: the operator must look before the node
    /// appends to it.
    pub fn open(data_dir: &Path) -> Result<AuditLog, AuditError> {
        let path = data_dir.join(AUDIT_FILE);
        let head = read_chain(&path)?;
        Ok(AuditLog { path, head: std::sync::Mutex::new(head) })
    }

    /// The log's file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends `entry` (blocking: call off the async workers) and syncs it.
    pub fn append(&self, entry: &serde_json::Value) -> Result<(), AuditError> {
        let io = |e| AuditError::Io { path: self.path.display().to_string(), source: e };
        let mut head = self.head.lock().unwrap_or_else(|p| p.into_inner());
        let (n, prev) = *head;
        let entry = entry.to_string();
        let h = hash(&prev, n + 1, &entry);
        let raw = RawValue::from_string(entry).map_err(|e| io(std::io::Error::other(e)))?;
        let line = Line { seq: n + 1, prev: hex::encode(prev), hash: hex::encode(h), entry: &raw };
        let text = serde_json::to_string(&line).map_err(|e| io(std::io::Error::other(e)))?;
        let mut f = std::fs::OpenOptions::new().create(true).append(true).open(&self.path).map_err(io)?;
        f.write_all(format!("{text}\n").as_bytes()).map_err(io)?;
        f.sync_all().map_err(io)?;
        *head = (n + 1, h);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_chain_verifies_and_any_edit_is_detected() {
        let dir = tempfile::tempdir().unwrap();
        let log = AuditLog::open(dir.path()).unwrap();
        for i in 0..4 {
            log.append(&json!({ "action": "ban", "player": format!("p{i}"), "reason": "spam" })).unwrap();
        }
        let path = dir.path().join(AUDIT_FILE);
        assert_eq!(verify(&path).unwrap(), 4);
        // Reopened, it continues the chain.
        AuditLog::open(dir.path()).unwrap().append(&json!({ "action": "unban" })).unwrap();
        assert_eq!(verify(&path).unwrap(), 5);
        let good = std::fs::read_to_string(&path).unwrap();
        let lines: Vec<&str> = good.lines().collect();

        // An edited reason, a removed line, swapped lines, a forged hash.
        let edited = good.replacen("spam", "late", 1);
        let removed = [&lines[..1], &lines[2..]].concat().join("\n");
        let swapped = [lines[1], lines[0], lines[2], lines[3], lines[4]].join("\n");
        for (what, text, line) in [("edited", edited, 1), ("removed", removed, 2), ("swapped", swapped, 1)] {
            std::fs::write(&path, format!("{text}\n")).unwrap();
            match verify(&path) {
                Err(AuditError::Broken { line: l, .. }) => assert_eq!(l, line, "{what}"),
                other => panic!("{what}: {other:?}"),
            }
            assert!(AuditLog::open(dir.path()).is_err(), "{what}: the node does not append to a broken log");
        }
        // Rewriting one entry and its own hash still breaks the next link.
        let mut v: serde_json::Value = serde_json::from_str(lines[1]).unwrap();
        let entry = json!({ "action": "ban", "player": "someone-else", "reason": "spam" }).to_string();
        let prev: [u8; 32] = hex::decode(v["prev"].as_str().unwrap()).unwrap().try_into().unwrap();
        v["hash"] = json!(hex::encode(hash(&prev, 2, &entry)));
        v["entry"] = serde_json::from_str(&entry).unwrap();
        let forged = [lines[0].to_owned(), v.to_string(), lines[2..].join("\n")].join("\n");
        std::fs::write(&path, format!("{forged}\n")).unwrap();
        assert!(matches!(verify(&path), Err(AuditError::Broken { line: 3, .. })), "{:?}", verify(&path));
    }
}
