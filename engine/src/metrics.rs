//! Node metrics: plain atomics rendered in the Prometheus text format, so
//! the health endpoint needs no metrics library.

use std::fmt::Write;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// The value of the `severity` field on log events a pager must see at once
/// (a chip conservation failure, a refund left unfinished, a broken audit
/// chain): `tracing::error!(severity = CRITICAL, …)`. The binaries' JSON
/// logs carry it as `"severity":"CRITICAL"` for a log shipper to route.
pub const CRITICAL: &str = "CRITICAL";

/// Upper bounds (seconds) of the action-latency histogram buckets.
const BUCKETS: [f64; 12] = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.5, 1.0];

/// Counters and gauges of one node.
#[derive(Debug, Default)]
pub struct Metrics {
    /// Rooms not closed (gauge).
    pub rooms_open: AtomicU64,
    /// Open WebSocket connections (gauge).
    pub connections_open: AtomicU64,
    /// TCP connections accepted.
    pub connections_total: AtomicU64,
    /// Connections refused by the connection cap.
    pub connections_refused_cap: AtomicU64,
    /// Handshakes rejected or timed out.
    pub handshakes_failed: AtomicU64,
    /// Handshake steps that waited for their turn (`handshake_concurrency`).
    pub handshake_steps_queued: AtomicU64,
    /// Players with a verified connection (gauge).
    pub players_connected: AtomicU64,
    /// Players holding a seat (gauge).
    pub players_seated: AtomicU64,
    /// Hands prepared.
    pub hands_started: AtomicU64,
    /// Hands settled.
    pub hands_finished: AtomicU64,
    /// Hands voided with refunds.
    pub hands_voided: AtomicU64,
    /// Player actions applied.
    pub actions_accepted: AtomicU64,
    /// Player actions refused.
    pub actions_rejected: AtomicU64,
    /// Auto actions (timeouts, leavers).
    pub timeouts: AtomicU64,
    /// Queries answered.
    pub queries: AtomicU64,
    /// Messages refused by a rate limit.
    pub rate_limited: AtomicU64,
    /// Frames delayed by the per-connection frame throttle.
    pub throttled: AtomicU64,
    /// Malformed, unknown or oversize frames.
    pub bad_frames: AtomicU64,
    /// Failed chip provider calls.
    pub chip_errors: AtomicU64,
    /// Sockets closed at once: their source address was over its limits.
    pub connections_refused_addr: AtomicU64,
    /// Connections still in the handshake closed to make room for a newer one
    /// (the pending budget of their address or of the node was full).
    pub handshakes_evicted: AtomicU64,
    /// Idle watchers kicked and sit-out seats freed.
    pub kicked_idle: AtomicU64,
    /// Seats sat out because the timer took their turns too often in a row.
    pub sat_out_idle: AtomicU64,
    /// Connections closed for a missed pong.
    pub pongs_missed: AtomicU64,
    /// Times a connection's reader fell behind its send budget.
    pub send_behind: AtomicU64,
    /// Connections closed for staying behind past the grace (`too slow`).
    pub send_too_slow: AtomicU64,
    /// Hands whose chip moves did not add up (voided and refunded).
    pub chip_conservation_failures: AtomicU64,
    /// Welcome grants made.
    pub welcome_grants: AtomicU64,
    /// Chips granted as welcome chips.
    pub welcome_chips: AtomicU64,
    /// Welcome grants refused by the per-node total.
    pub welcome_refused: AtomicU64,
    /// Voided hands whose refund waits for the chip service (gauge).
    pub refunds_pending: AtomicU64,
    /// Chips those hands still hold (gauge).
    pub chips_held: AtomicU64,
    /// Archive folders read to index a room's hands (HTTP port).
    pub archive_scans: AtomicU64,
    /// Archived hands audited to answer a hand-history request.
    pub archive_audits: AtomicU64,
    /// Archive reads refused by the per-address rate (`429`).
    pub archive_rate_limited: AtomicU64,
    /// The node's connection cap (`max_connections`), for budget alerts (gauge).
    pub connections_max: AtomicU64,
    /// Settlements, refunds and journal closes the chip service did not
    /// confirm at once, retried in the background.
    pub settlement_retries: AtomicU64,
    /// Identities banned now (gauge, set by the node).
    pub bans_active: AtomicU64,
    /// Identities frozen now (gauge, set by the node).
    pub freezes_active: AtomicU64,
    /// Operator actions on identities (ban, unban, freeze, unfreeze; rule bans too).
    pub sanction_actions: AtomicU64,
    /// Hands' chip journals not yet closed, by when they were opened.
    pub journals: OpenJournals,
    /// Abuse signals per identity (only aggregates are rendered).
    pub conduct: crate::conduct::Conduct,
    latency_buckets: [AtomicU64; BUCKETS.len()],
    latency_count: AtomicU64,
    latency_sum_ns: AtomicU64,
}

/// The chip journals of hands still open (keyed by `room/hand`), with the
/// unix time each was opened: `/metrics` shows the oldest, for an alert on
/// a hand whose chips stay unsettled.
#[derive(Debug, Default)]
pub struct OpenJournals(std::sync::Mutex<std::collections::HashMap<String, u64>>);

impl OpenJournals {
    /// A journal was opened at `unix_ms`.
    pub fn opened(&self, key: String, unix_ms: u64) {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).insert(key, unix_ms);
    }

    /// A journal was closed (settled or refunded).
    pub fn closed(&self, key: &str) {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).remove(key);
    }

    /// How many are open, and when the oldest was opened (unix ms).
    pub fn oldest(&self) -> (usize, Option<u64>) {
        let g = self.0.lock().unwrap_or_else(|p| p.into_inner());
        (g.len(), g.values().min().copied())
    }
}

/// Adds one to a counter.
pub fn inc(c: &AtomicU64) {
    c.fetch_add(1, Ordering::Relaxed);
}

/// Subtracts one from a gauge (never below zero).
pub fn dec(c: &AtomicU64) {
    let _ = c.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |v| Some(v.saturating_sub(1)));
}

impl Metrics {
    /// Records the time from an action's arrival to its broadcast.
    pub fn observe_action(&self, d: Duration) {
        let s = d.as_secs_f64();
        for (i, b) in BUCKETS.iter().enumerate() {
            if s <= *b {
                inc(&self.latency_buckets[i]);
            }
        }
        inc(&self.latency_count);
        self.latency_sum_ns.fetch_add(u64::try_from(d.as_nanos()).unwrap_or(u64::MAX), Ordering::Relaxed);
    }

    /// The Prometheus text exposition of every metric.
    pub fn render(&self) -> String {
        let g = |c: &AtomicU64| c.load(Ordering::Relaxed);
        let mut s = String::new();
        let mut one = |name: &str, kind: &str, help: &str, v: u64| {
            let _ = writeln!(s, "# HELP {name} {help}\n# TYPE {name} {kind}\n{name} {v}");
        };
        one("claw_rooms_open", "gauge", "Rooms not closed.", g(&self.rooms_open));
        one("claw_connections_open", "gauge", "Open WebSocket connections.", g(&self.connections_open));
        one("claw_connections_total", "counter", "Accepted TCP connections.", g(&self.connections_total));
        one(
            "claw_connections_refused_total",
            "counter",
            "Connections refused by the connection cap.",
            g(&self.connections_refused_cap),
        );
        one(
            "claw_handshakes_failed_total",
            "counter",
            "Handshakes rejected or timed out.",
            g(&self.handshakes_failed),
        );
        one(
            "claw_handshake_steps_queued_total",
            "counter",
            "Handshake steps that waited for their turn (handshake concurrency).",
            g(&self.handshake_steps_queued),
        );
        one(
            "claw_players_connected",
            "gauge",
            "Players with a verified connection.",
            g(&self.players_connected),
        );
        one("claw_players_seated", "gauge", "Players holding a seat.", g(&self.players_seated));
        one("claw_hands_started_total", "counter", "Hands started.", g(&self.hands_started));
        one("claw_hands_finished_total", "counter", "Hands settled.", g(&self.hands_finished));
        one("claw_hands_voided_total", "counter", "Hands voided with refunds.", g(&self.hands_voided));
        one("claw_actions_accepted_total", "counter", "Player actions applied.", g(&self.actions_accepted));
        one("claw_actions_rejected_total", "counter", "Player actions refused.", g(&self.actions_rejected));
        one("claw_timeouts_total", "counter", "Auto actions after a timeout.", g(&self.timeouts));
        one("claw_queries_total", "counter", "Queries answered.", g(&self.queries));
        one(
            "claw_rate_limited_total",
            "counter",
            "Messages refused by the rate limit.",
            g(&self.rate_limited),
        );
        one(
            "claw_bad_frames_total",
            "counter",
            "Malformed, unknown or oversize frames.",
            g(&self.bad_frames),
        );
        one("claw_chip_errors_total", "counter", "Failed chip provider calls.", g(&self.chip_errors));
        one(
            "claw_connections_refused_addr_total",
            "counter",
            "Sockets closed at once: their source address was over its limits.",
            g(&self.connections_refused_addr),
        );
        one(
            "claw_handshakes_evicted_total",
            "counter",
            "Connections still in the handshake closed to make room for a newer one.",
            g(&self.handshakes_evicted),
        );
        one(
            "claw_kicked_idle_total",
            "counter",
            "Idle watchers kicked and sit-out seats freed.",
            g(&self.kicked_idle),
        );
        one(
            "claw_sat_out_idle_total",
            "counter",
            "Seats sat out because the timer took their turns too often in a row.",
            g(&self.sat_out_idle),
        );
        one(
            "claw_pongs_missed_total",
            "counter",
            "Connections closed for a missed pong.",
            g(&self.pongs_missed),
        );
        one(
            "claw_send_behind_total",
            "counter",
            "Times a connection's reader fell behind its send budget.",
            g(&self.send_behind),
        );
        one(
            "claw_send_too_slow_total",
            "counter",
            "Connections closed for staying behind past the grace (too slow).",
            g(&self.send_too_slow),
        );
        one(
            "claw_chip_conservation_failures_total",
            "counter",
            "Hands whose chip moves did not add up (voided and refunded).",
            g(&self.chip_conservation_failures),
        );
        one("claw_welcome_grants_total", "counter", "Welcome grants made.", g(&self.welcome_grants));
        one("claw_welcome_chips_total", "counter", "Chips granted as welcome chips.", g(&self.welcome_chips));
        one(
            "claw_welcome_refused_total",
            "counter",
            "Welcome grants refused by the node's total.",
            g(&self.welcome_refused),
        );
        one(
            "claw_refunds_pending",
            "gauge",
            "Voided hands whose refund waits for the chip service.",
            g(&self.refunds_pending),
        );
        one("claw_chips_held", "gauge", "Chips held by voided hands not yet refunded.", g(&self.chips_held));
        one(
            "claw_archive_scans_total",
            "counter",
            "Archive folders read to index a room's hands.",
            g(&self.archive_scans),
        );
        one(
            "claw_archive_audits_total",
            "counter",
            "Archived hands audited for a hand-history request.",
            g(&self.archive_audits),
        );
        one(
            "claw_archive_rate_limited_total",
            "counter",
            "Archive reads refused by the per-address rate.",
            g(&self.archive_rate_limited),
        );
        one(
            "claw_connections_max",
            "gauge",
            "The node's connection cap (limit max_connections).",
            g(&self.connections_max),
        );
        one(
            "claw_settlement_retries_total",
            "counter",
            "Settlements, refunds and journal closes not confirmed at once, retried in the background.",
            g(&self.settlement_retries),
        );
        one("claw_bans_active", "gauge", "Identities banned now.", g(&self.bans_active));
        one("claw_freezes_active", "gauge", "Identities frozen now.", g(&self.freezes_active));
        one(
            "claw_sanction_actions_total",
            "counter",
            "Bans, unbans, freezes and unfreezes (operator and abuse rule).",
            g(&self.sanction_actions),
        );
        let (open, oldest) = self.journals.oldest();
        one("claw_chip_journals_open", "gauge", "Hands' chip journals not yet closed.", open as u64);
        one(
            "claw_chip_journal_oldest_open_timestamp_seconds",
            "gauge",
            "Unix time the oldest open chip journal was opened (0: none open).",
            oldest.unwrap_or(0) / 1000,
        );
        self.conduct.render(&mut s);
        let _ = writeln!(
            s,
            "# HELP claw_action_latency_seconds Time from an action's arrival to its broadcast.\n\
             # TYPE claw_action_latency_seconds histogram"
        );
        for (i, b) in BUCKETS.iter().enumerate() {
            let _ = writeln!(
                s,
                "claw_action_latency_seconds_bucket{{le=\"{b}\"}} {}",
                g(&self.latency_buckets[i])
            );
        }
        let count = g(&self.latency_count);
        let _ = writeln!(s, "claw_action_latency_seconds_bucket{{le=\"+Inf\"}} {count}");
        let _ = writeln!(s, "claw_action_latency_seconds_sum {}", g(&self.latency_sum_ns) as f64 / 1e9);
        let _ = writeln!(s, "claw_action_latency_seconds_count {count}");
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_counters_and_histogram() {
        let m = Metrics::default();
        inc(&m.hands_started);
        inc(&m.players_seated);
        dec(&m.players_seated);
        dec(&m.players_seated);
        m.observe_action(Duration::from_micros(300));
        let t = m.render();
        assert!(t.contains("claw_hands_started_total 1\n"));
        assert!(t.contains("claw_players_seated 0\n"));
        assert!(t.contains("claw_action_latency_seconds_bucket{le=\"0.0005\"} 1\n"));
        assert!(t.contains("claw_action_latency_seconds_bucket{le=\"0.00025\"} 0\n"));
        assert!(t.contains("claw_action_latency_seconds_count 1\n"));
    }
}
