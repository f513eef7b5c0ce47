//! The load generator against the real dealer binary, briefly: it seats every
//! bot, tables play, every hand audits, and the report's figures are there.
//! No figure is asserted (performance is measured, never tested).

use std::path::PathBuf;
use std::process::Command;

fn dealer() -> Option<PathBuf> {
    let d = PathBuf::from(env!("CARGO_BIN_EXE_claw-bench")).with_file_name("claw-dealer");
    d.exists().then_some(d)
}

/// Runs claw-bench briefly with `args` against the dealer next to it and
/// returns its JSON report; `None` (SKIPPED printed) without that dealer.
fn bench(test: &str, args: &[&str]) -> Option<serde_json::Value> {
    let Some(dealer) = dealer() else {
        // `cargo test --workspace` builds it; `-p claw-bench` alone does not.
        eprintln!("SKIPPED {test}: no claw-dealer binary next to claw-bench (run the workspace's tests)");
        return None;
    };
    let out = Command::new(env!("CARGO_BIN_EXE_claw-bench"))
        .arg("--dealer")
        .arg(&dealer)
        .args(["--warmup", "2s", "--duration", "3s", "--json"])
        .args(args)
        .output()
        .expect("claw-bench runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "exit {:?}\n{stdout}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    Some(serde_json::from_str(stdout.trim()).expect("one JSON report"))
}

#[test]
fn two_rooms_play_and_report() {
    let Some(r) = bench("two_rooms_play_and_report", &["--rooms", "2", "--players", "3"]) else { return };
    assert_eq!(r["connected"], 6, "{r}");
    assert_eq!(r["connect_failed"], 0, "{r}");
    assert_eq!(r["audit_failures"], 0, "{r}");
    assert!(r["hands"].as_u64().unwrap() > 0, "{r}");
    assert!(r["latency_samples"].as_u64().unwrap() > 0, "{r}");
    assert!(r["dealer_cpu_ms_per_hand"].as_f64().unwrap() > 0.0, "{r}");
    assert!(r["load_before"].as_str().unwrap().split(' ').count() == 3, "{r}");
}

#[test]
fn a_query_flood_is_sent_answered_and_reported() {
    let args = [
        "--rooms",
        "1",
        "--players",
        "3",
        "--flood",
        "4",
        "--flood-rate",
        "5",
        "--flood-query",
        "room-state",
    ];
    let Some(r) = bench("a_query_flood_is_sent_answered_and_reported", &args) else { return };
    assert_eq!(r["flood_identities_per_room"], 4, "{r}");
    assert!(r["flood_queries_per_sec"].as_f64().unwrap() > 0.0, "the flood was answered: {r}");
    assert_eq!(r["connected"], 3, "flood identities take no seat: {r}");
    assert!(r["hands"].as_u64().unwrap() > 0, "{r}");
}

#[test]
fn bots_at_a_set_pace_play_and_report_it() {
    let args = ["--rooms", "1", "--players", "3", "--think", "20ms"];
    let Some(r) = bench("bots_at_a_set_pace_play_and_report_it", &args) else { return };
    assert_eq!(r["think_ms"], 20, "{r}");
    assert_eq!(r["connected"], 3, "{r}");
    assert_eq!(r["dropped"], 0, "{r}");
    assert_eq!(r["audit_failures"], 0, "{r}");
    assert!(r["hands"].as_u64().unwrap() > 0, "{r}");
    assert!(r["latency_samples"].as_u64().unwrap() > 0, "{r}");
}
