//! The node is strict about the operator's audit log: a log that cannot be
//! read, or whose hash chain is broken, stops the start with a typed error
//! naming the line (and a `CRITICAL` log line); it never appends to a
//! chain it cannot verify. Moving the log aside starts a new chain.

use std::sync::Arc;
use std::time::Duration;

use claw_chips::LocalChips;
use claw_dealer::audit_log::{verify, AuditError, AuditLog, AUDIT_FILE};
use claw_dealer::sanctions::SanctionError;
use claw_dealer::{DealerNode, NodeConfig, NodeError, NodeHandle, RoomConfig};
use claw_protocol::Chips;
use serde_json::json;

async fn launch(dir: &std::path::Path) -> Result<NodeHandle, NodeError> {
    let mut config = NodeConfig::local(dir, vec![RoomConfig::new("a", "high-card")]);
    config.limits.ping_interval = Duration::from_secs(10);
    DealerNode::builder(config)
        .local_chips(Arc::new(LocalChips::new()), Chips::ZERO)
        .game(claw_engine::testgame::high_card())
        .launch()
        .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_broken_or_unreadable_audit_log_stops_the_start_until_the_operator_moves_it_aside() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join(AUDIT_FILE);
    let log = AuditLog::open(dir.path()).unwrap();
    log.append(&json!({"action": "ban", "reason": "chip dumping"})).unwrap();
    log.append(&json!({"action": "unban", "reason": "appeal upheld"})).unwrap();
    drop(log);
    // The attack: an operator (or an intruder) rewrites line 2 to hide the unban.
    let text = std::fs::read_to_string(&file).unwrap();
    std::fs::write(&file, text.replacen("appeal upheld", "never happened", 1)).unwrap();
    match launch(dir.path()).await {
        Err(NodeError::Sanctions(SanctionError::Audit(AuditError::Broken { line: 2, why }))) => {
            assert!(why.contains("hash"), "{why}")
        }
        Err(e) => panic!("another refusal: {e}"),
        Ok(_) => panic!("started on a broken audit log"),
    }
    assert_eq!(std::fs::read_to_string(&file).unwrap().lines().count(), 2, "nothing appended");

    // Unreadable (here a directory where the file should be): refused too.
    let other = tempfile::tempdir().unwrap();
    std::fs::create_dir(other.path().join(AUDIT_FILE)).unwrap();
    let refused = launch(other.path()).await.err().expect("no start on an unreadable log");
    assert!(
        matches!(refused, NodeError::Sanctions(SanctionError::Audit(AuditError::Io { .. }))),
        "{refused}"
    );

    // The operator's way out: the broken log moved aside (kept as evidence).
    std::fs::rename(&file, dir.path().join("admin-audit.broken.jsonl")).unwrap();
    let node = launch(dir.path()).await.expect("starts with a new chain");
    assert_eq!(verify(&file).unwrap(), 0, "a new chain, empty until the next admin action");
    node.shutdown(Duration::ZERO).await;
}
