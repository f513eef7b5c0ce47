//! Deferred reveals (Sam Gong's default) survive the dealer: stopped by
//! SIGTERM or killed with pending reveals, a dealer restarted on the same
//! data directory publishes them, and every archived hand then audits with
//! every check run.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use claw_audit::Auditor;
use claw_player::bots::strategy;
use claw_player::node::PlayerNode;
use claw_player::play::play_bot;
use claw_protocol::Identity;
use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;

use crate::stop::DealerProc;
use crate::GUARD;

/// A Sam Gong dealer (reveal `deferred` by default: at room close) on `data`.
async fn start(data: &Path, log: &Path) -> DealerProc {
    let mut c = DealerProc::command_for("sam-gong", data, log);
    c.args(["--min-players", "3"]);
    DealerProc::start_with(c, log.to_owned()).await
}

fn hand_files(data: &Path) -> Vec<std::path::PathBuf> {
    let dir = data.join("rooms/sam-gong/transcripts");
    let mut v: Vec<_> = std::fs::read_dir(dir)
        .map(|d| {
            d.flatten().map(|e| e.path()).filter(|p| p.extension().is_some_and(|e| e == "jsonl")).collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

fn pending(data: &Path) -> usize {
    std::fs::read_dir(data.join("rooms/sam-gong/pending")).map(|d| d.count()).unwrap_or(0)
}

/// Three bots play until at least `hands` hands are archived; the bot tasks
/// are returned still playing.
async fn play_until(d: &DealerProc, data: &Path, hands: usize) -> Vec<tokio::task::JoinHandle<()>> {
    let invite = d.invite();
    let mut tasks = Vec::new();
    for i in 0..3u8 {
        let me = Arc::new(Identity::from_seed([40 + i; 32]));
        let mut node = tokio::time::timeout(GUARD, PlayerNode::connect(&invite, me, Default::default()))
            .await
            .expect("guard: connect")
            .expect("player connects");
        tasks.push(tokio::spawn(async move {
            let s = strategy("sam-gong", "simple").expect("strategy");
            let mut rng = ChaCha20Rng::seed_from_u64(u64::from(i));
            let _ = play_bot(&mut node, s.as_ref(), &mut rng, None, |_| {}).await;
        }));
    }
    tokio::time::timeout(GUARD, async {
        while hand_files(data).len() < hands {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await
    .expect("guard: hands archived");
    tasks
}

/// Every archived hand audits with no check skipped.
fn audit_all(data: &Path, dealer: claw_protocol::PlayerId) -> usize {
    let files = hand_files(data);
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        let verdicts = Auditor::new(Some(dealer)).audit_jsonl(&text).expect("a transcript");
        for v in verdicts {
            let report = v.outcome.unwrap_or_else(|e| panic!("{}: {e}", f.display()));
            assert!(report.skipped.is_empty(), "{}: skipped {:?}", f.display(), report.skipped);
        }
    }
    files.len()
}

async fn survives(crash: bool) {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    let d1 = start(&data, &tmp.path().join("dealer-1.log")).await;
    let dealer = d1.invite().dealer;
    let bots = play_until(&d1, &data, 3).await;
    let log = if crash {
        d1.kill()
    } else {
        let (status, log) = d1.terminate().await;
        assert_eq!(status.code(), Some(0), "{log}");
        log
    };
    for b in bots {
        b.abort();
    }
    let archived = hand_files(&data).len();
    assert!(archived >= 3, "{log}");
    if crash {
        assert!(pending(&data) > 0, "a crash leaves reveals pending on disk");
    }
    // Restarted on the same data directory, with nobody at the table.
    let d2 = start(&data, &tmp.path().join("dealer-2.log")).await;
    tokio::time::timeout(GUARD, async {
        while pending(&data) > 0 {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await
    .unwrap_or_else(|_| panic!("guard: reveals still pending; log:\n{}", d2.log_text()));
    let (status, log) = d2.terminate().await;
    assert_eq!(status.code(), Some(0), "{log}");
    // A crash may come after a hand was staged and paid but before it was
    // moved into the archive: the restart archives it (issue #28), so there
    // may be more hands than were counted at the crash, never fewer.
    let audited = audit_all(&data, dealer);
    assert!(audited >= archived, "no hand lost: {audited} audited, {archived} archived at the stop");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pending_reveals_survive_a_sigterm_and_every_hand_audits() {
    survives(false).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pending_reveals_survive_kill_9_and_every_hand_audits() {
    survives(true).await;
}
