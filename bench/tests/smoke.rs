//! The load generator against the real dealer binary, briefly: it seats every
//! bot, tables play, every hand audits, and the report's figures are there.
//! No figure is asserted (performance is measured, never tested).

use std::path::PathBuf;
use std::process::Command;

/// The `claw-dealer` binary: `CLAW_DEALER_BIN`, else next to claw-bench
/// (`cargo test --workspace` builds both). Another package's binary, so no
/// `CARGO_BIN_EXE_…`: missing, the test fails saying how to build it.
fn dealer(test: &str) -> PathBuf {
    if let Some(p) = std::env::var_os("CLAW_DEALER_BIN") {
        return PathBuf::from(p);
    }
    let d = PathBuf::from(env!("CARGO_BIN_EXE_claw-bench"))
        .with_file_name(format!("claw-dealer{}", std::env::consts::EXE_SUFFIX));
    assert!(
        d.exists(),
        "{test}: no claw-dealer binary at {}: run the workspace's tests (`cargo test --workspace`), \
         or `cargo build -p claw-dealer-cli` first, or set CLAW_DEALER_BIN",
        d.display()
    );
    d
}

/// Runs claw-bench briefly with `args` against the dealer next to it and
/// returns its JSON report.
fn bench(test: &str, args: &[&str]) -> serde_json::Value {
    let dealer = dealer(test);
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
    serde_json::from_str(stdout.trim()).expect("one JSON report")
}

#[test]
fn two_rooms_play_and_report() {
    let r = bench("two_rooms_play_and_report", &["--rooms", "2", "--players", "3"]);
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
    let r = bench("a_query_flood_is_sent_answered_and_reported", &args);
    assert_eq!(r["flood_identities_per_room"], 4, "{r}");
    assert!(r["flood_queries_per_sec"].as_f64().unwrap() > 0.0, "the flood was answered: {r}");
    assert_eq!(r["connected"], 3, "flood identities take no seat: {r}");
    assert!(r["hands"].as_u64().unwrap() > 0, "{r}");
}

#[test]
fn bots_at_a_set_pace_play_and_report_it() {
    let args = ["--rooms", "1", "--players", "3", "--think", "20ms"];
    let r = bench("bots_at_a_set_pace_play_and_report_it", &args);
    assert_eq!(r["think_ms"], 20, "{r}");
    assert_eq!(r["connected"], 3, "{r}");
    assert_eq!(r["dropped"], 0, "{r}");
    assert_eq!(r["audit_failures"], 0, "{r}");
    assert!(r["hands"].as_u64().unwrap() > 0, "{r}");
    assert!(r["latency_samples"].as_u64().unwrap() > 0, "{r}");
}
