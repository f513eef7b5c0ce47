//! The node's metrics: the counters the room core and the driver keep
//! (`claw_engine::metrics`) and their Prometheus text exposition, so the
//! health endpoint needs no metrics library.

use std::fmt::Write;
use std::sync::atomic::{AtomicU64, Ordering};

pub use claw_engine::metrics::*;

/// Prometheus metric types.
#[derive(Clone, Copy)]
enum Kind {
    Counter,
    Gauge,
}

impl Kind {
    fn as_str(self) -> &'static str {
        match self {
            Kind::Counter => "counter",
            Kind::Gauge => "gauge",
        }
    }
}

use Kind::{Counter, Gauge};

/// The plain counters and gauges: name, type, help, the value.
type Plain = (&'static str, Kind, &'static str, fn(&Metrics) -> &AtomicU64);

#[rustfmt::skip]
const PLAIN: &[Plain] = &[
    ("claw_rooms_open", Gauge, "Rooms not closed.", |m| &m.rooms_open),
    ("claw_connections_open", Gauge, "Open WebSocket connections.", |m| &m.connections_open),
    ("claw_connections_total", Counter, "Accepted TCP connections.", |m| &m.connections_total),
    ("claw_connections_refused_total", Counter, "Connections refused by the connection cap.", |m| &m.connections_refused_cap),
    ("claw_handshakes_failed_total", Counter, "Handshakes rejected or timed out.", |m| &m.handshakes_failed),
    ("claw_handshake_steps_queued_total", Counter, "Handshake steps that waited for their turn (handshake concurrency).", |m| &m.handshake_steps_queued),
    ("claw_players_connected", Gauge, "Players with a verified connection.", |m| &m.players_connected),
    ("claw_players_seated", Gauge, "Players holding a seat.", |m| &m.players_seated),
    ("claw_hands_started_total", Counter, "Hands started.", |m| &m.hands_started),
    ("claw_hands_finished_total", Counter, "Hands settled.", |m| &m.hands_finished),
    ("claw_hands_voided_total", Counter, "Hands voided with refunds.", |m| &m.hands_voided),
    ("claw_actions_accepted_total", Counter, "Player actions applied.", |m| &m.actions_accepted),
    ("claw_actions_rejected_total", Counter, "Player actions refused.", |m| &m.actions_rejected),
    ("claw_timeouts_total", Counter, "Auto actions after a timeout.", |m| &m.timeouts),
    ("claw_queries_total", Counter, "Queries answered.", |m| &m.queries),
    ("claw_rate_limited_total", Counter, "Messages refused by the rate limit.", |m| &m.rate_limited),
    ("claw_bad_frames_total", Counter, "Malformed, unknown or oversize frames.", |m| &m.bad_frames),
    ("claw_chip_errors_total", Counter, "Failed chip provider calls.", |m| &m.chip_errors),
    ("claw_connections_refused_addr_total", Counter, "Sockets closed at once: their source address was over its limits.", |m| &m.connections_refused_addr),
    ("claw_handshakes_evicted_total", Counter, "Connections still in the handshake closed to make room for a newer one.", |m| &m.handshakes_evicted),
    ("claw_kicked_idle_total", Counter, "Idle watchers kicked and sit-out seats freed.", |m| &m.kicked_idle),
    ("claw_sat_out_idle_total", Counter, "Seats sat out because the timer took their turns too often in a row.", |m| &m.sat_out_idle),
    ("claw_pongs_missed_total", Counter, "Connections closed for a missed pong.", |m| &m.pongs_missed),
    ("claw_send_behind_total", Counter, "Times a connection's reader fell behind its send budget.", |m| &m.send_behind),
    ("claw_send_too_slow_total", Counter, "Connections closed for staying behind past the grace (too slow).", |m| &m.send_too_slow),
    ("claw_chip_conservation_failures_total", Counter, "Hands whose chip moves did not add up (voided and refunded).", |m| &m.chip_conservation_failures),
    ("claw_welcome_grants_total", Counter, "Welcome grants made.", |m| &m.welcome_grants),
    ("claw_welcome_chips_total", Counter, "Chips granted as welcome chips.", |m| &m.welcome_chips),
    ("claw_welcome_refused_total", Counter, "Welcome grants refused by the node's total.", |m| &m.welcome_refused),
    ("claw_refunds_pending", Gauge, "Voided hands whose refund waits for the chip service.", |m| &m.refunds_pending),
    ("claw_chips_held", Gauge, "Chips held by voided hands not yet refunded.", |m| &m.chips_held),
    ("claw_archive_scans_total", Counter, "Archive folders read to index a room's hands.", |m| &m.archive_scans),
    ("claw_archive_audits_total", Counter, "Archived hands audited for a hand-history request.", |m| &m.archive_audits),
    ("claw_archive_rate_limited_total", Counter, "Archive reads refused by the per-address rate.", |m| &m.archive_rate_limited),
    ("claw_connections_max", Gauge, "The node's connection cap (limit max_connections).", |m| &m.connections_max),
    ("claw_settlement_retries_total", Counter, "Settlements, refunds and journal closes not confirmed at once, retried in the background.", |m| &m.settlement_retries),
    ("claw_bans_active", Gauge, "Identities banned now.", |m| &m.bans_active),
    ("claw_freezes_active", Gauge, "Identities frozen now.", |m| &m.freezes_active),
    ("claw_sanction_actions_total", Counter, "Bans, unbans, freezes and unfreezes (operator and abuse rule).", |m| &m.sanction_actions),
];

/// The Prometheus text exposition of every metric.
pub fn render(m: &Metrics) -> String {
    let mut s = String::new();
    let mut one = |name: &str, kind: &str, help: &str, v: u64| {
        let _ = writeln!(s, "# HELP {name} {help}\n# TYPE {name} {kind}\n{name} {v}");
    };
    for (name, kind, help, value) in PLAIN {
        one(name, kind.as_str(), help, value(m).load(Ordering::Relaxed));
    }
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
