//! Alerts and probes over real HTTP: every metric docs/alerts.example.yml
//! names is in the node's /metrics, and `/ready` (unlike `/health`)
//! answers 503 with its reasons when the chip provider is down or no room
//! is open.

use std::collections::BTreeSet;
use std::net::SocketAddr;
use std::sync::Arc;

use async_trait::async_trait;
use claw_chips::{AccountId, AccountOp, ChipError, ChipProvider, IdempotencyKey};
use claw_protocol::Chips;
use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::common::*;

async fn get(addr: SocketAddr, path: &str) -> (u16, String) {
    let mut s = TcpStream::connect(addr).await.unwrap();
    let req = format!("GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n");
    s.write_all(req.as_bytes()).await.unwrap();
    let mut buf = Vec::new();
    tokio::time::timeout(GUARD, s.read_to_end(&mut buf)).await.expect("guard").unwrap();
    let text = String::from_utf8_lossy(&buf).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    (head.split(' ').nth(1).and_then(|c| c.parse().ok()).unwrap_or(0), body.to_owned())
}

async fn http_fixture(chips: Option<Arc<dyn ChipProvider>>) -> (Fixture, SocketAddr) {
    let f = Fixture::start_with(
        vec![fast_room("r", "high-card")],
        |mut c| {
            c.http_listen = Some(SocketAddr::from(([127, 0, 0, 1], 0)));
            c
        },
        |b| match chips {
            Some(p) => b.chips(p),
            None => b,
        },
    )
    .await;
    let h = f.node.http_addr().unwrap();
    (f, h)
}

/// The metric names an alert expression uses (`claw_…`).
fn names_in(expr: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = expr;
    while let Some(i) = rest.find("claw_") {
        let tail = &rest[i..];
        let end = tail.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).unwrap_or(tail.len());
        out.push(tail[..end].to_owned());
        rest = &tail[end..];
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_metric_the_example_alert_rules_name_is_exported() {
    let rules = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/alerts.example.yml"))
        .expect("docs/alerts.example.yml");
    let (_f, h) = http_fixture(None).await;
    let (code, metrics) = get(h, "/metrics").await;
    assert_eq!(code, 200);
    let exported: BTreeSet<&str> = metrics
        .lines()
        .filter_map(|l| l.strip_prefix("# TYPE "))
        .filter_map(|l| l.split(' ').next())
        .collect();
    let mut named = BTreeSet::new();
    for line in rules.lines().filter_map(|l| l.trim().strip_prefix("expr:")) {
        named.extend(names_in(line));
    }
    assert!(named.len() >= 10, "the rules name the metrics: {named:?}");
    for n in &named {
        assert!(exported.contains(n.as_str()), "alert rule names {n}, which /metrics does not export");
    }
    // The conditions the operator asked to be paged on are all covered.
    for m in [
        "claw_chip_conservation_failures_total",
        "claw_hands_voided_total",
        "claw_settlement_retries_total",
        "claw_chip_journal_oldest_open_timestamp_seconds",
        "claw_connections_max",
        "claw_connections_open",
    ] {
        assert!(named.contains(m), "no rule on {m}");
    }
    // No rule is malformed YAML-wise at the level Prometheus reads: each
    // alert has an expr and a severity label.
    let alerts = rules.matches("- alert:").count();
    let keyed = |k: &str| rules.lines().filter(|l| l.trim_start().starts_with(k)).count();
    assert_eq!(keyed("expr:"), alerts);
    assert_eq!(keyed("severity: "), alerts);
    let (code, m) = get(h, "/metrics").await;
    assert_eq!(code, 200);
    assert!(m.contains("claw_connections_max 10000\n"), "the cap is exported");
}

/// A chip provider that is down.
struct Down;

#[async_trait]
impl ChipProvider for Down {
    fn name(&self) -> &'static str {
        "down"
    }
    async fn balance(&self, _: &AccountId) -> Result<Chips, ChipError> {
        Err(ChipError::Unreachable("down".into()))
    }
    async fn debit(&self, _: &IdempotencyKey, _: &AccountId, _: Chips, _: &str) -> Result<Chips, ChipError> {
        Err(ChipError::Unreachable("down".into()))
    }
    async fn credit(&self, _: &IdempotencyKey, _: &AccountId, _: Chips, _: &str) -> Result<Chips, ChipError> {
        Err(ChipError::Unreachable("down".into()))
    }
    async fn settle(&self, _: &IdempotencyKey, _: &[AccountOp]) -> Result<(), ChipError> {
        Err(ChipError::Unreachable("down".into()))
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ready_is_distinct_from_health_and_says_why_it_is_not() {
    let (f, h) = http_fixture(None).await;
    let (code, body) = get(h, "/ready").await;
    assert_eq!((code, body.contains("\"ready\"")), (200, true), "{body}");
    // No room open: not ready, while /health still answers 200.
    let room = f.node.room("r").unwrap();
    let (done, rx) = tokio::sync::oneshot::channel();
    room.send(claw_dealer::room::RoomCmd::Shutdown { grace: std::time::Duration::ZERO, done }).await;
    rx.await.unwrap();
    room.wait_closed().await;
    let (code, body) = get(h, "/ready").await;
    assert_eq!(code, 503, "{body}");
    let v: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(v["reasons"], serde_json::json!(["no room is open"]), "{body}");
    assert_eq!(get(h, "/health").await.0, 200);

    // The chip provider down: not ready, said so (its error only in the log).
    let (_f, h) = http_fixture(Some(Arc::new(Down))).await;
    let (code, body) = get(h, "/ready").await;
    assert_eq!(code, 503, "{body}");
    assert!(body.contains("the chip provider is unreachable"), "{body}");
    assert!(!body.contains("down"), "the provider's own text is not served: {body}");
    assert_eq!(get(h, "/health").await.0, 200);
}

/// Counts the docs state about the tree, checked against the tree.
#[test]
fn the_docs_counts_and_lists_match_the_tree() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/..");
    let read =
        |p: &str| std::fs::read_to_string(format!("{root}/{p}")).unwrap_or_else(|e| panic!("{p}: {e}"));
    let evm = read("chip-providers/tests/evm.rs");
    let tests =
        evm.lines().filter(|l| l.trim_start().starts_with("#[tokio::test") || l.trim() == "#[test]").count();
    let security = read("docs/security.md");
    assert!(
        security.contains(&format!("`chip-providers/tests/evm.rs` ({tests} tests)")),
        "docs/security.md: {tests} EVM tests"
    );
    let dealer = read("docs/dealer.md");
    assert!(
        dealer.contains("`--chips auto\\|local\\|http\\|evm\\|solana`"),
        "docs/dealer.md: the --chips row"
    );
    for g in claw_games::registry::names() {
        assert!(dealer.contains(&format!("`{g}`")), "docs/dealer.md does not name the game {g}");
    }
}
