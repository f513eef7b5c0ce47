//! The node's metrics: the counters the room core and the driver keep
//! (`claw_engine::metrics`) and their Prometheus text exposition, so the
//! health endpoint needs no metrics library.

use std::fmt::Write;
use std::sync::atomic::{AtomicU64, Ordering};

pub use claw_engine::metrics::*;

/// The Prometheus text exposition of every metric.
pub fn render(m: &Metrics) -> String {
    let g = |c: &AtomicU64| c.load(Ordering::Relaxed);
    let mut s = String::new();
    let mut one = |name: &str, kind: &str, help: &str, v: u64| {
        let _ = writeln!(s, "# HELP {name} {help}\n# TYPE {name} {kind}\n{name} {v}");
    };
    one("claw_rooms_open", "gauge", "Rooms not closed.", g(&m.rooms_open));
    one("claw_connections_open", "gauge", "Open WebSocket connections.", g(&m.connections_open));
    one("claw_connections_total", "counter", "Accepted TCP connections.", g(&m.connections_total));
    one(
        "claw_connections_refused_total",
        "counter",
        "Connections refused by the connection cap.",
        g(&m.connections_refused_cap),
    );
    one(
        "claw_handshakes_failed_total",
        "counter",
        "Handshakes rejected or timed out.",
        g(&m.handshakes_failed),
    );
    one(
        "claw_handshake_steps_queued_total",
        "counter",
        "Handshake steps that waited for their turn (handshake concurrency).",
        g(&m.handshake_steps_queued),
    );
    one("claw_players_connected", "gauge", "Players with a verified connection.", g(&m.players_connected));
    one("claw_players_seated", "gauge", "Players holding a seat.", g(&m.players_seated));
    one("claw_hands_started_total", "counter", "Hands started.", g(&m.hands_started));
    one("claw_hands_finished_total", "counter", "Hands settled.", g(&m.hands_finished));
    one("claw_hands_voided_total", "counter", "Hands voided with refunds.", g(&m.hands_voided));
    one("claw_actions_accepted_total", "counter", "Player actions applied.", g(&m.actions_accepted));
    one("claw_actions_rejected_total", "counter", "Player actions refused.", g(&m.actions_rejected));
    one("claw_timeouts_total", "counter", "Auto actions after a timeout.", g(&m.timeouts));
    one("claw_queries_total", "counter", "Queries answered.", g(&m.queries));
    one("claw_rate_limited_total", "counter", "Messages refused by the rate limit.", g(&m.rate_limited));
    one("claw_bad_frames_total", "counter", "Malformed, unknown or oversize frames.", g(&m.bad_frames));
    one("claw_chip_errors_total", "counter", "Failed chip provider calls.", g(&m.chip_errors));
    one(
        "claw_connections_refused_addr_total",
        "counter",
        "Sockets closed at once: their source address was over its limits.",
        g(&m.connections_refused_addr),
    );
    one(
        "claw_handshakes_evicted_total",
        "counter",
        "Connections still in the handshake closed to make room for a newer one.",
        g(&m.handshakes_evicted),
    );
    one(
        "claw_kicked_idle_total",
        "counter",
        "Idle watchers kicked and sit-out seats freed.",
        g(&m.kicked_idle),
    );
    one(
        "claw_sat_out_idle_total",
        "counter",
        "Seats sat out because the timer took their turns too often in a row.",
        g(&m.sat_out_idle),
    );
    one("claw_pongs_missed_total", "counter", "Connections closed for a missed pong.", g(&m.pongs_missed));
    one(
        "claw_send_behind_total",
        "counter",
        "Times a connection's reader fell behind its send budget.",
        g(&m.send_behind),
    );
    one(
        "claw_send_too_slow_total",
        "counter",
        "Connections closed for staying behind past the grace (too slow).",
        g(&m.send_too_slow),
    );
    one(
        "claw_chip_conservation_failures_total",
        "counter",
        "Hands whose chip moves did not add up (voided and refunded).",
        g(&m.chip_conservation_failures),
    );
    one("claw_welcome_grants_total", "counter", "Welcome grants made.", g(&m.welcome_grants));
    one("claw_welcome_chips_total", "counter", "Chips granted as welcome chips.", g(&m.welcome_chips));
    one(
        "claw_welcome_refused_total",
        "counter",
        "Welcome grants refused by the node's total.",
        g(&m.welcome_refused),
    );
    one(
        "claw_refunds_pending",
        "gauge",
        "Voided hands whose refund waits for the chip service.",
        g(&m.refunds_pending),
    );
    one("claw_chips_held", "gauge", "Chips held by voided hands not yet refunded.", g(&m.chips_held));
    one(
        "claw_archive_scans_total",
        "counter",
        "Archive folders read to index a room's hands.",
        g(&m.archive_scans),
    );
    one(
        "claw_archive_audits_total",
        "counter",
        "Archived hands audited for a hand-history request.",
        g(&m.archive_audits),
    );
    one(
        "claw_archive_rate_limited_total",
        "counter",
        "Archive reads refused by the per-address rate.",
        g(&m.archive_rate_limited),
    );
    one(
        "claw_connections_max",
        "gauge",
        "The node's connection cap (limit max_connections).",
        g(&m.connections_max),
    );
    one(
        "claw_settlement_retries_total",
        "counter",
        "Settlements, refunds and journal closes not confirmed at once, retried in the background.",
        g(&m.settlement_retries),
    );
    one("claw_bans_active", "gauge", "Identities banned now.", g(&m.bans_active));
    one("claw_freezes_active", "gauge", "Identities frozen now.", g(&m.freezes_active));
    one(
        "claw_sanction_actions_total",
        "counter",
        "Bans, unbans, freezes and unfreezes (operator and abuse rule).",
        g(&m.sanction_actions),
    );
    let (open, oldest) = m.journals.oldest();
    one("claw_chip_journals_open", "gauge", "Hands' chip journals not yet closed.", open as u64);
    one(
        "claw_chip_journal_oldest_open_timestamp_seconds",
        "gauge",
        "Unix time the oldest open chip journal was opened (0: none open).",
        oldest.unwrap_or(0) / 1000,
    );
    let c = m.conduct.totals();
    let _ = writeln!(
        s,
        "# HELP claw_abuse_flags_total Flags against identities (voided hands, timeouts, disconnects on their turn).\n\
         # TYPE claw_abuse_flags_total counter"
    );
    for (flag, n) in &c.flags {
        let _ = writeln!(s, "claw_abuse_flags_total{{flag=\"{flag}\"}} {n}");
    }
    let mut one = |name: &str, kind: &str, help: &str, v: u128| {
        let _ = writeln!(s, "# HELP {name} {help}\n# TYPE {name} {kind}\n{name} {v}");
    };
    one(
        "claw_abuse_max_pair_flow_chips",
        "gauge",
        "Largest net chips moved from one identity to one other across hands.",
        c.max_pair_flow,
    );
    one(
        "claw_abuse_shared_addresses",
        "gauge",
        "Source addresses from which more than one identity completed a handshake.",
        c.shared_addresses as u128,
    );
    one(
        "claw_abuse_max_identities_per_address",
        "gauge",
        "Most identities seen from one source address.",
        c.max_identities_per_address as u128,
    );
    one(
        "claw_abuse_rule_trips_total",
        "counter",
        "Temporary bans the abuse rule asked for.",
        u128::from(c.rule_trips),
    );
    one(
        "claw_abuse_untracked_total",
        "counter",
        "Signals not kept because the record is full.",
        u128::from(c.untracked),
    );
    let _ = writeln!(
        s,
        "# HELP claw_action_latency_seconds Time from an action's arrival to its broadcast.\n\
         # TYPE claw_action_latency_seconds histogram"
    );
    let (buckets, count, sum) = m.latency();
    for (b, n) in buckets {
        let _ = writeln!(s, "claw_action_latency_seconds_bucket{{le=\"{b}\"}} {n}");
    }
    let _ = writeln!(s, "claw_action_latency_seconds_bucket{{le=\"+Inf\"}} {count}");
    let _ = writeln!(s, "claw_action_latency_seconds_sum {sum}");
    let _ = writeln!(s, "claw_action_latency_seconds_count {count}");
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn renders_counters_signals_and_the_histogram() {
        let m = Metrics::default();
        inc(&m.hands_started);
        inc(&m.players_seated);
        dec(&m.players_seated);
        dec(&m.players_seated);
        m.observe_action(Duration::from_micros(300));
        let t = render(&m);
        assert!(t.contains("claw_hands_started_total 1\n"));
        assert!(t.contains("claw_players_seated 0\n"));
        assert!(t.contains("claw_abuse_flags_total{flag=\"timeout\"} 0\n"), "{t}");
        assert!(t.contains("claw_abuse_shared_addresses 0\n"));
        assert!(t.contains("claw_action_latency_seconds_bucket{le=\"0.0005\"} 1\n"));
        assert!(t.contains("claw_action_latency_seconds_bucket{le=\"0.00025\"} 0\n"));
        assert!(t.contains("claw_action_latency_seconds_count 1\n"));
    }
}
