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
                    assert!(audit.ok, "{audit:?}");
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
