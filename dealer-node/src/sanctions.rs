//! Bans and freezes of identities, kept in `DATA_DIR/sanctions.json`
//! (written whole and atomically, off the async workers) with their reason,
//! creation time and expiry; an expired one stops applying and is dropped
//! at the next write. Every change is first appended to the operator's
//! audit log ([`crate::audit_log`]), then stored, then applied: the server
//! refuses a banned identity at the handshake (`banned`), and every room is
//! told ([`claw_engine::room::Input::Bar`]) so that a seated player leaves
//! once its running hand has settled.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use claw_engine::room::{Bar, BarKind};
use claw_protocol::PlayerId;
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::audit_log::{AuditError, AuditLog};

/// Longest reason (it travels in `rejected` and `kicked`, with the expiry).
pub const MAX_REASON: usize = 200;

/// The file of the sanctions in the data directory.
pub const SANCTIONS_FILE: &str = "sanctions.json";

/// One ban or freeze.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Sanction {
    /// The identity (its public key).
    pub player: PlayerId,
    /// Ban or freeze.
    pub kind: BarKind,
    /// Why (told to the player).
    pub reason: String,
    /// When it was set (unix ms).
    pub created_ms: u64,
    /// When it stops applying (unix ms); none: until lifted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub until_ms: Option<u64>,
    /// Who set it: `admin`, or `rule` (the abuse rule).
    pub by: String,
}

impl Sanction {
    /// Whether it applies at `unix_ms`.
    pub fn applies(&self, unix_ms: u64) -> bool {
        self.until_ms.is_none_or(|u| unix_ms < u)
    }

    /// The player's text for a refused handshake: the reason and the expiry.
    pub fn text(&self) -> String {
        match self.until_ms {
            Some(u) => format!("banned by the operator: {} (until unix ms {u})", self.reason),
            None => format!("banned by the operator: {}", self.reason),
        }
    }

    fn bar(&self) -> Bar {
        Bar { kind: self.kind, reason: self.reason.clone(), until_ms: self.until_ms }
    }
}

/// Why a sanction could not be changed or loaded.
#[derive(Debug, thiserror::Error)]
pub enum SanctionError {
    /// The file could not be read, parsed or written.
    #[error("sanctions file {path}: {why}")]
    Store {
        /// The file.
        path: String,
        /// Why.
        why: String,
    },
    /// The audit log refused the entry.
    #[error(transparent)]
    Audit(#[from] AuditError),
    /// The reason is empty or longer than [`MAX_REASON`] bytes.
    #[error("a reason of 1 to 200 bytes is required")]
    Reason,
}

/// A change the operator (or the abuse rule) asks for.
#[derive(Debug, Clone)]
pub enum Change {
    /// Set a ban or freeze for `duration` (none: until lifted).
    Set {
        /// Ban or freeze.
        kind: BarKind,
        /// Why.
        reason: String,
        /// How long; none: until lifted.
        duration: Option<Duration>,
        /// `admin` or `rule`.
        by: String,
    },
    /// Lift the ban or freeze.
    Lift(BarKind),
}

/// The node's sanctions. Reads are in memory; changes go one at a time.
pub struct Sanctions {
    path: PathBuf,
    entries: Mutex<BTreeMap<(PlayerId, BarKind), Sanction>>,
    audit: AuditLog,
    /// One change at a time: the file and the log keep their order.
    writing: tokio::sync::Mutex<()>,
}

impl Sanctions {
    /// Loads the sanctions and opens the audit log of `data_dir` (blocking).
    pub fn load(data_dir: &Path) -> Result<Sanctions, SanctionError> {
        let path = data_dir.join(SANCTIONS_FILE);
        let store = |why: String| SanctionError::Store { path: path.display().to_string(), why };
        let list: Vec<Sanction> = match std::fs::read_to_string(&path) {
            Ok(t) => serde_json::from_str(&t).map_err(|e| store(e.to_string()))?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
            Err(e) => return Err(store(e.to_string())),
        };
        let entries = list.into_iter().map(|s| ((s.player, s.kind), s)).collect();
        let audit = AuditLog::open(data_dir)?;
        Ok(Sanctions { path, entries: Mutex::new(entries), audit, writing: tokio::sync::Mutex::new(()) })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeMap<(PlayerId, BarKind), Sanction>> {
        self.entries.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The ban on `id` that applies at `unix_ms`.
    pub fn ban_of(&self, id: &PlayerId, unix_ms: u64) -> Option<Sanction> {
        self.lock().get(&(*id, BarKind::Ban)).filter(|s| s.applies(unix_ms)).cloned()
    }

    /// What a room must apply to `id` at `unix_ms`: a ban over a freeze.
    pub fn bar_of(&self, id: &PlayerId, unix_ms: u64) -> Option<Bar> {
        let g = self.lock();
        [BarKind::Ban, BarKind::Freeze]
            .iter()
            .find_map(|k| g.get(&(*id, *k)).filter(|s| s.applies(unix_ms)))
            .map(Sanction::bar)
    }

    /// Every sanction that applies at `unix_ms`.
    pub fn list(&self, unix_ms: u64) -> Vec<Sanction> {
        self.lock().values().filter(|s| s.applies(unix_ms)).cloned().collect()
    }

    /// How many bans and freezes apply at `unix_ms`.
    pub fn counts(&self, unix_ms: u64) -> (u64, u64) {
        let g = self.lock();
        let n = |k| g.values().filter(|s| s.kind == k && s.applies(unix_ms)).count() as u64;
        (n(BarKind::Ban), n(BarKind::Freeze))
    }

    /// The audit log's file.
    pub fn audit_path(&self) -> &Path {
        self.audit.path()
    }

    /// Applies `change` to `player` at `unix_ms`: logged in the audit log,
    /// then stored, then in effect. Returns the sanction set (none for a
    /// lift) and whether a lift found one to lift.
    pub async fn change(
        self: &Arc<Self>,
        player: PlayerId,
        change: Change,
        unix_ms: u64,
    ) -> Result<(Option<Sanction>, bool), SanctionError> {
        let _one = self.writing.lock().await;
        let mut next = self.lock().clone();
        next.retain(|_, s| s.applies(unix_ms));
        let (set, found, entry) = match change {
            Change::Set { kind, reason, duration, by } => {
                if reason.trim().is_empty() || reason.len() > MAX_REASON {
                    return Err(SanctionError::Reason);
                }
                let until_ms = duration.map(|d| unix_ms.saturating_add(d.as_millis() as u64));
                let s = Sanction { player, kind, reason, created_ms: unix_ms, until_ms, by };
                let entry = json!({
                    "action": kind.name(), "player": player, "reason": s.reason, "at_ms": unix_ms,
                    "until_ms": until_ms, "by": s.by,
                });
                next.insert((player, kind), s.clone());
                (Some(s), true, entry)
            }
            Change::Lift(kind) => {
                let found = next.remove(&(player, kind)).is_some();
                let action = match kind {
                    BarKind::Ban => "unban",
                    BarKind::Freeze => "unfreeze",
                };
                (None, found, json!({ "action": action, "player": player, "at_ms": unix_ms, "found": found }))
            }
        };
        let list: Vec<Sanction> = next.values().cloned().collect();
        let me = Arc::clone(self);
        let written = tokio::task::spawn_blocking(move || -> Result<(), SanctionError> {
            me.audit.append(&entry)?;
            let text = serde_json::to_string_pretty(&list).map_err(|e| SanctionError::Store {
                path: me.path.display().to_string(),
                why: e.to_string(),
            })?;
            crate::archive::write_atomic(&me.path, &text)
                .map_err(|e| SanctionError::Store { path: me.path.display().to_string(), why: e.to_string() })
        })
        .await
        .map_err(|e| SanctionError::Store { path: self.path.display().to_string(), why: e.to_string() })?;
        written?;
        *self.lock() = next;
        Ok((set, found))
    }
}

/// Tells every room what now applies to `player` and refreshes the gauges.
pub(crate) async fn enforce(
    ctx: &crate::room::NodeContext,
    rooms: &crate::registry::Registry,
    player: PlayerId,
) {
    let now = crate::room::unix_ms();
    let bar = ctx.sanctions.bar_of(&player, now);
    for (r, _) in rooms.all() {
        r.send(crate::room::RoomCmd::Bar { player, bar: bar.clone() }).await;
    }
    gauges(ctx, now);
}

fn gauges(ctx: &crate::room::NodeContext, now: u64) {
    use std::sync::atomic::Ordering::Relaxed;
    let (bans, freezes) = ctx.sanctions.counts(now);
    ctx.metrics.bans_active.store(bans, Relaxed);
    ctx.metrics.freezes_active.store(freezes, Relaxed);
}

/// Bans the identities the abuse rule trips on (unless a longer ban already
/// applies) and keeps the gauges current, until `stop`.
pub(crate) async fn run_rule(
    ctx: Arc<crate::room::NodeContext>,
    rooms: Arc<crate::registry::Registry>,
    mut stop: tokio::sync::watch::Receiver<bool>,
) {
    loop {
        tokio::select! {
            () = tokio::time::sleep(Duration::from_millis(200)) => {}
            r = stop.changed() => if r.is_err() || *stop.borrow() { return },
        }
        let now = crate::room::unix_ms();
        gauges(&ctx, now);
        for trip in ctx.metrics.conduct.take_trips() {
            let ban = trip.rule.ban;
            let until = now.saturating_add(ban.as_millis() as u64);
            if ctx.sanctions.ban_of(&trip.player, now).is_some_and(|b| b.until_ms.is_none_or(|u| u >= until))
            {
                continue;
            }
            let change = Change::Set {
                kind: BarKind::Ban,
                reason: format!("abuse rule: {}", trip.reason),
                duration: Some(ban),
                by: "rule".into(),
            };
            match ctx.sanctions.change(trip.player, change, now).await {
                Ok(_) => {
                    crate::metrics::inc(&ctx.metrics.sanction_actions);
                    tracing::warn!(player = %trip.player, reason = %trip.reason, ban = ?ban,
                        "abuse rule: identity banned");
                    enforce(&ctx, &rooms, trip.player).await;
                }
                Err(e) => {
                    tracing::error!(player = %trip.player, error = %e, "abuse rule: the ban could not be stored")
                }
            }
        }
    }
}

/// Parses how long a ban or freeze lasts: a whole number and a unit, `s`,
/// `m`, `h` or `d` (`90s`, `30m`, `24h`, `7d`), at most 3650 days.
pub fn parse_term(text: &str) -> Result<Duration, String> {
    let t = text.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (n, unit) = t.split_at(split);
    let n: u64 = n.parse().map_err(|_| format!("{text:?}: expected e.g. 90s, 30m, 24h or 7d"))?;
    let secs = match unit {
        "s" => n,
        "m" => n.saturating_mul(60),
        "h" => n.saturating_mul(3600),
        "d" => n.saturating_mul(86_400),
        _ => return Err(format!("{text:?}: the unit is s, m, h or d")),
    };
    if secs == 0 || secs > 3650 * 86_400 {
        return Err(format!("{text:?}: from 1 s to 3650 days"));
    }
    Ok(Duration::from_secs(secs))
}

#[cfg(test)]
mod tests {
    use super::*;
    use claw_protocol::Identity;

    #[test]
    fn terms_parse_with_units_and_bounds() {
        assert_eq!(parse_term("24h"), Ok(Duration::from_secs(86_400)));
        assert_eq!(parse_term("7d"), Ok(Duration::from_secs(7 * 86_400)));
        assert_eq!(parse_term(" 90s "), Ok(Duration::from_secs(90)));
        for bad in ["", "0s", "24", "1y", "-1h", "3651d", "1.5h", "h"] {
            assert!(parse_term(bad).is_err(), "{bad}");
        }
    }

    #[tokio::test]
    async fn sanctions_persist_expire_and_are_audited() {
        let dir = tempfile::tempdir().unwrap();
        let s = Arc::new(Sanctions::load(dir.path()).unwrap());
        let (a, b) = (Identity::from_seed([1; 32]).id(), Identity::from_seed([2; 32]).id());
        let set = |kind, d: Option<u64>| Change::Set {
            kind,
            reason: "chip dumping".into(),
            duration: d.map(Duration::from_millis),
            by: "admin".into(),
        };
        s.change(a, set(BarKind::Ban, Some(1_000)), 10_000).await.unwrap();
        s.change(b, set(BarKind::Freeze, None), 10_000).await.unwrap();
        assert!(matches!(
            s.change(
                b,
                Change::Set { kind: BarKind::Ban, reason: " ".into(), duration: None, by: "admin".into() },
                1
            )
            .await,
            Err(SanctionError::Reason)
        ));
        assert!(s.ban_of(&a, 10_999).is_some());
        assert!(s.ban_of(&a, 11_000).is_none(), "expired at its until_ms");
        assert_eq!(s.bar_of(&b, 99_999_999).map(|b| b.kind), Some(BarKind::Freeze));
        // Reloaded from the data directory: the same.
        let again = Sanctions::load(dir.path()).unwrap();
        assert_eq!(again.list(10_500), s.list(10_500));
        assert_eq!(again.list(10_500).len(), 2);
        let (_, found) = s.change(b, Change::Lift(BarKind::Freeze), 12_000).await.unwrap();
        assert!(found);
        assert!(s.list(12_000).is_empty(), "lifted and expired");
        let (_, found) = s.change(b, Change::Lift(BarKind::Freeze), 12_000).await.unwrap();
        assert!(!found);
        assert_eq!(
            crate::audit_log::verify(s.audit_path()).unwrap(),
            4,
            "every change logged, refused ones not"
        );
    }
}
