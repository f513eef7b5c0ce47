//! Node metrics: plain atomics the room core and the driver count; the
//! node renders them (`claw_dealer::metrics::render`).

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

    /// The action-latency histogram: each bucket's upper bound (seconds) with
    /// its cumulative count, the count and the sum (seconds).
    pub fn latency(&self) -> ([(f64, u64); BUCKETS.len()], u64, f64) {
        let buckets = std::array::from_fn(|i| (BUCKETS[i], self.latency_buckets[i].load(Ordering::Relaxed)));
        let sum = self.latency_sum_ns.load(Ordering::Relaxed) as f64 / 1e9;
        (buckets, self.latency_count.load(Ordering::Relaxed), sum)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_gauges_and_the_histogram() {
        let m = Metrics::default();
        inc(&m.players_seated);
        dec(&m.players_seated);
        dec(&m.players_seated);
        m.observe_action(Duration::from_micros(300));
        assert_eq!(m.players_seated.load(Ordering::Relaxed), 0, "a gauge never goes below zero");
        let (b, count, sum) = m.latency();
        assert_eq!((b[1], b[2], count), ((0.00025, 0), (0.0005, 1), 1));
        assert!((sum - 0.0003).abs() < 1e-9);
    }
}
