//! Reveal policy `deferred` (Sam Gong keeps folded hands face down): the
//! hand-end audit passes with the secret-dependent checks pending, and the
//! later `audit-reveal` completes every check.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use claw_e2e::harness::*;
use claw_player::node::{NodeConfig, NodeEvent};
use claw_player::play::play_bot;
use claw_protocol::audit::AuditCheck;
use claw_protocol::messages::RevealPolicy;
use rand_chacha::rand_core::SeedableRng;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deferred_reveals_complete_the_audit_later() {
    const HANDS: u64 = 8;
    let mut room = fast_room("r", "sam-gong");
    room.min_players = 3;
    room.reveal = RevealPolicy::Deferred;
    room.reveal_delay = Some(Duration::from_millis(20));
    let d = start_dealer(vec![room], 10_000_000).await;
    let nodes = connect_players(&d.invite("r"), 3, 11, NodeConfig::default()).await;
    let mut tasks = Vec::new();
    for (i, mut node) in nodes.into_iter().enumerate() {
        tasks.push(tokio::spawn(async move {
            let s = claw_player::bots::strategy("sam-gong", "simple").unwrap();
            let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(i as u64);
            let (pending, completed) = (AtomicU64::new(0), AtomicU64::new(0));
            let count = |e: &NodeEvent| match e {
                NodeEvent::HandEnded { audit, .. } => {
                    // Pending or complete, never failed; `ok` only once complete.
                    assert!(audit.failed.is_none(), "{audit:?}");
                    assert_eq!(audit.ok, audit.skipped.is_empty(), "{audit:?}");
                    if audit.skipped.contains(&AuditCheck::Shuffle) {
                        pending.fetch_add(1, Ordering::SeqCst);
                    }
                }
                NodeEvent::AuditCompleted { audit, .. } => {
                    assert!(audit.ok && audit.skipped.is_empty(), "{audit:?}");
                    completed.fetch_add(1, Ordering::SeqCst);
                }
                NodeEvent::VerificationFailed { check, detail, .. } => panic!("{check}: {detail}"),
                _ => {}
            };
            let r = play_bot(&mut node, s.as_ref(), &mut rng, Some(HANDS), count).await.unwrap();
            // The last reveals come after the last hand: keep listening a little.
            while completed.load(Ordering::SeqCst) < HANDS {
                match tokio::time::timeout(Duration::from_secs(5), node.next_event()).await {
                    Ok(Some(e)) => count(&e),
                    _ => break,
                }
            }
            node.close().await;
            (r, pending.load(Ordering::SeqCst), completed.load(Ordering::SeqCst))
        }));
    }
    for t in tasks {
        let (r, pending, completed) = t.await.unwrap();
        assert_eq!(r.hands, HANDS);
        assert!(r.failures.is_empty(), "{:?}", r.failures);
        assert_eq!(pending, HANDS, "every hand ends with the shuffle check pending");
        assert_eq!(completed, HANDS, "every hand's audit completes after its reveal");
    }
    d.stop().await;
}

/// Reveals at room close (Sam Gong's default) for more hands than the SDK
/// keeps: every hand's reveal is recognised and completes its audit, none
/// raises a false hash-chain failure.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reveals_at_close_complete_every_hand_however_old() {
    const HANDS: u64 = 11;
    let mut room = fast_room("r", "sam-gong");
    room.min_players = 3;
    room.reveal = RevealPolicy::Deferred;
    room.max_hands = Some(HANDS);
    let d = start_dealer(vec![room], 10_000_000).await;
    let nodes = connect_players(&d.invite("r"), 3, 21, NodeConfig::default()).await;
    let mut tasks = Vec::new();
    for (i, mut node) in nodes.into_iter().enumerate() {
        tasks.push(tokio::spawn(async move {
            let s = claw_player::bots::strategy("sam-gong", "simple").unwrap();
            let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(i as u64);
            let r = play_bot(&mut node, s.as_ref(), &mut rng, Some(HANDS), |_| {}).await.unwrap();
            assert_eq!(r.pending, HANDS, "every hand is pending until the room closes: {r:?}");
            assert_eq!(r.audited_ok, 0, "a pending hand is never counted as audited OK");
            let mut completed = 0;
            while let Ok(Some(e)) = tokio::time::timeout(Duration::from_secs(30), node.next_event()).await {
                match e {
                    NodeEvent::AuditCompleted { audit, .. } => {
                        assert!(audit.ok && audit.skipped.is_empty(), "{audit:?}");
                        completed += 1;
                    }
                    NodeEvent::VerificationFailed { check, detail, .. } => panic!("{check}: {detail}"),
                    NodeEvent::Kicked { .. } | NodeEvent::Closed { .. } => break,
                    _ => {}
                }
            }
            node.close().await;
            completed
        }));
    }
    for t in tasks {
        assert_eq!(t.await.unwrap(), HANDS, "every hand's reveal arrives at close");
    }
    d.stop().await;
}

/// A player that left before the reveal saved pending hands: the dealer's
/// HTTP endpoint serves them without any secret while pending, and after
/// the reveal (here: the dealer stopped and restarted) `claw-player audit
/// --fetch` completes them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn saved_pending_hands_are_completed_later_by_audit_fetch() {
    use claw_dealer::{DealerNode, NodeConfig as DealerConfig};
    use claw_protocol::messages::{HandRecord, RevealState};
    let bin = claw_player_bin("saved_pending_hands_are_completed_later_by_audit_fetch");
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let saved = dir.path().join("hands");
    let launch = || async {
        let mut room = fast_room("r", "sam-gong");
        room.min_players = 3;
        room.reveal = RevealPolicy::Deferred;
        let mut cfg = DealerConfig::local(&data, vec![room]);
        cfg.http_listen = Some(([127, 0, 0, 1], 0).into());
        cfg.spectator_delay = Some(Duration::ZERO);
        DealerNode::builder(cfg)
            .local_chips(std::sync::Arc::new(claw_chips::LocalChips::new()), claw_protocol::Chips(10_000_000))
            .launch()
            .await
            .expect("dealer starts")
    };
    let d = launch().await;
    let invite = claw_player::Invite::parse(&d.invite_url("r").unwrap()).unwrap();
    let config = NodeConfig { save_transcripts: Some(saved.clone()), ..NodeConfig::default() };
    let nodes = connect_players(&invite, 3, 31, config).await;
    run_bots(nodes, "sam-gong", "simple", 2, 1).await;
    let files: Vec<_> = std::fs::read_dir(&saved).unwrap().flatten().map(|e| e.path()).collect();
    assert!(!files.is_empty());
    let base = format!("http://{}", d.http_addr().unwrap());

    // Pending: the endpoint serves exactly what the table saw, no secret.
    let client = claw_chips::http::client_builder().build().unwrap();
    for f in &files {
        let t =
            claw_protocol::transcript::Transcript::from_jsonl(&std::fs::read_to_string(f).unwrap()).unwrap();
        // A hand is public once archived, which follows its settlement: the
        // players may see its end a moment before (SPEC §9.4).
        let url = format!("{base}/rooms/r/hands/{}", t.hand_id);
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        let resp = loop {
            let resp = client.get(&url).send().await.unwrap();
            if resp.status().as_u16() != 404 || std::time::Instant::now() > deadline {
                break resp;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        };
        let status = resp.status();
        assert!(status.is_success(), "{status} {}", resp.text().await.unwrap_or_default());
        let text = resp.text().await.unwrap();
        assert!(!text.contains("audit-reveal") && !text.contains("dealer_seed"), "{text}");
        let record: HandRecord = serde_json::from_str(&text).unwrap();
        assert_eq!(record.reveal, RevealState::Pending);
        assert_eq!(record.events, t.events);
    }
    let not_found = client.get(format!("{base}/rooms/r/hands/{}", "0".repeat(32))).send().await.unwrap();
    assert_eq!(not_found.status().as_u16(), 404);
    let audit = |base: String| {
        let (bin, files) = (bin.clone(), files.clone());
        tokio::task::spawn_blocking(move || {
            std::process::Command::new(bin)
                .arg("audit")
                .args(&files)
                .args(["--fetch", &base])
                .output()
                .unwrap()
        })
    };
    let out = audit(base).await.unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    assert_eq!(out.status.code(), Some(3), "pending is its own exit code: {stdout}");
    assert!(stdout.lines().all(|l| l.starts_with("PENDING ")), "{stdout}");

    // The dealer stops (publishing the reveals) and comes back: fetched
    // later, every saved hand audits complete.
    within(30, "dealer stop", d.shutdown(Duration::from_secs(2))).await;
    let d = launch().await;
    let base = format!("http://{}", d.http_addr().unwrap());
    let out = audit(base).await.unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert_eq!(out.status.code(), Some(0), "{stdout}{stderr}");
    assert!(stdout.lines().all(|l| l.starts_with("OK ")), "{stdout}");
    within(30, "dealer stop", d.shutdown(Duration::from_secs(2))).await;

    // The completed hands were written back into the saved files: they now
    // audit complete offline, without --fetch; no temporary file is left.
    assert!(stderr.contains("rewritten with the fetched reveal"), "{stderr}");
    for f in &files {
        assert!(std::fs::read_to_string(f).unwrap().contains("audit-reveal"), "{}", f.display());
    }
    let offline = tokio::task::spawn_blocking({
        let (bin, files) = (bin.clone(), files.clone());
        move || std::process::Command::new(bin).arg("audit").args(&files).output().unwrap()
    })
    .await
    .unwrap();
    let stdout = String::from_utf8_lossy(&offline.stdout).to_string();
    assert_eq!(offline.status.code(), Some(0), "{stdout}");
    assert!(stdout.lines().all(|l| l.starts_with("OK ")), "{stdout}");
    let left: Vec<_> = std::fs::read_dir(&saved).unwrap().flatten().map(|e| e.file_name()).collect();
    assert_eq!(left.len(), files.len(), "{left:?}");
}

/// A live node that was away when a deferred reveal went out asks for the
/// hand with the `hand` query; the reveal completes its audit, checked
/// against the hand it saw.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_live_node_completes_a_missed_reveal_with_the_hand_query() {
    use claw_player::node::ReconnectPolicy;
    use claw_protocol::messages::RevealState;
    let mut room = fast_room("r", "sam-gong");
    room.min_players = 3;
    room.reveal = RevealPolicy::Deferred;
    room.reveal_delay = Some(Duration::from_secs(3));
    let d = start_dealer(vec![room], 10_000_000).await;
    // Player 0 reconnects only well after the reveal is out.
    let slow = NodeConfig {
        reconnect: ReconnectPolicy {
            initial: Duration::from_secs(8),
            max: Duration::from_secs(8),
            give_up_after: Duration::from_secs(40),
        },
        ..NodeConfig::default()
    };
    let mut nodes = connect_players(&d.invite("r"), 1, 41, slow).await;
    nodes.extend(connect_players(&d.invite("r"), 2, 42, NodeConfig::default()).await);
    let mut tasks = Vec::new();
    for (i, mut node) in nodes.into_iter().enumerate() {
        tasks.push(tokio::spawn(async move {
            let s = claw_player::bots::strategy("sam-gong", "simple").unwrap();
            let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(i as u64);
            let r = play_bot(&mut node, s.as_ref(), &mut rng, Some(1), |_| {}).await.unwrap();
            if i == 0 {
                node.drop_connection().await.unwrap();
            }
            (node, r)
        }));
    }
    let mut played = Vec::new();
    for t in tasks {
        played.push(within(60, "a hand", t).await.unwrap());
    }
    let (mut node, report) = played.swap_remove(0);
    assert_eq!((report.hands, report.pending), (1, 1), "{report:?}");
    let hand = node.hand().expect("the hand it played").hand_id;

    // Back after the reveal went out; it did not get it.
    within(60, "reconnect", async {
        loop {
            match node.next_event().await.expect("node runs") {
                NodeEvent::Reconnected { .. } => break,
                NodeEvent::AuditCompleted { hand_id, .. } if hand_id == hand => {
                    panic!("the reveal reached an away player")
                }
                _ => {}
            }
        }
    })
    .await;
    let record = within(30, "hand query", node.fetch_hand(hand)).await.expect("hand-record");
    assert_eq!(record.hand_id, hand);
    assert_eq!(record.reveal, RevealState::Complete);
    let audit = within(30, "audit completed", async {
        loop {
            match node.next_event().await.expect("node runs") {
                NodeEvent::AuditCompleted { hand_id, audit } if hand_id == hand => break audit,
                NodeEvent::VerificationFailed { hand_id, check, detail, .. } if hand_id == hand => {
                    panic!("{check}: {detail}")
                }
                _ => {}
            }
        }
    })
    .await;
    assert!(audit.ok && audit.skipped.is_empty(), "{audit:?}");
    // A hand that does not exist is the dealer's not-found, not a hang.
    let missing = node.fetch_hand(claw_protocol::HandId([9; 16])).await;
    assert!(matches!(missing, Err(claw_player::node::NodeError::Query { .. })), "{missing:?}");
    for (n, _) in played {
        n.close().await;
    }
    node.close().await;
    d.stop().await;
}
