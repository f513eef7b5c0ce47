//! Issue #28 (High): a `kill -9` loses no finished hand from the archive,
//! and the restarted dealer never deals a hand under a number it used.
//!
//! The real `claw-dealer` (built-in points server, escrow settlement: the
//! defaults) deals Hold'em to three SDK bots that save every hand they see
//! end. It is killed with SIGKILL four times, each time at a random moment
//! (right after a bot saw a hand end, a few milliseconds later, or at a
//! random point of play), and restarted on the same data directory; the
//! last run stops with SIGTERM. Then every hand whose `game-end` any bot
//! saw is archived exactly once, no hand number is used twice (archived or
//! voided), and the audit of the dealer's archive — with the bots' own
//! saved transcripts beside it — passes every check, `balances` across the
//! restarts included. The dealer binary can be swapped (`CLAW_DEALER_BIN`)
//! to run this test against another build.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use claw_audit::{bind_balances, Auditor, HandVerdict};
use claw_player::bots::strategy;
use claw_player::node::{NodeConfig as PlayerConfig, NodeEvent, PlayerNode, ReconnectPolicy};
use claw_player::play::play_bot;
use claw_protocol::{HandId, Identity, PlayerId};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha20Rng;

use crate::stop::DealerProc;
use crate::GUARD;

const ROOM: &str = "texas-holdem";
const KILLS: usize = 4;
const BOTS: u8 = 3;

/// The dealer binary under test: this build's, or `CLAW_DEALER_BIN`.
pub fn dealer_bin() -> PathBuf {
    std::env::var_os("CLAW_DEALER_BIN")
        .map_or_else(|| env!("CARGO_BIN_EXE_claw-dealer").into(), PathBuf::from)
}

/// A Hold'em dealer on `data` with its defaults (built-in points server,
/// escrow settlement), fast hands.
fn command(data: &Path, log: &Path) -> Command {
    let mut c = Command::new(dealer_bin());
    c.args(["--game", ROOM, "--listen", "127.0.0.1:0", "--http-listen", "off"])
        .args(["--timeout", "30s", "--between-hands", "0", "--shutdown-grace", "1s"])
        .args(["--welcome", "10000", "--commission", "1"])
        .arg("--data-dir")
        .arg(data)
        .env("RUST_LOG", "claw_dealer=info,claw_engine=info")
        .stdin(Stdio::null())
        .stderr(Stdio::from(std::fs::File::create(log).expect("log file")));
    c
}

/// Hands the bots saw end, and a signal per hand end.
#[derive(Default)]
struct Seen {
    ended: Mutex<BTreeSet<HandId>>,
    count: tokio::sync::Notify,
}

/// Seats the bots; they play (saving every hand into `saved`) until their
/// task is aborted or the dealer goes away.
async fn seat_bots(d: &DealerProc, saved: &Path, seen: &Arc<Seen>) -> Vec<tokio::task::JoinHandle<()>> {
    let invite = d.invite();
    let mut tasks = Vec::new();
    for i in 0..BOTS {
        let me = Arc::new(Identity::from_seed([70 + i; 32]));
        let config = PlayerConfig {
            save_transcripts: Some(saved.to_owned()),
            reconnect: ReconnectPolicy {
                initial: Duration::from_millis(100),
                max: Duration::from_millis(200),
                give_up_after: Duration::from_millis(500),
            },
            ..PlayerConfig::default()
        };
        let mut node = tokio::time::timeout(GUARD, PlayerNode::connect(&invite, me, config))
            .await
            .expect("guard: connect")
            .expect("bot connects");
        let seen = Arc::clone(seen);
        tasks.push(tokio::spawn(async move {
            let s = strategy(ROOM, "simple").expect("strategy");
            let mut rng = ChaCha20Rng::seed_from_u64(u64::from(i));
            let _ = play_bot(&mut node, s.as_ref(), &mut rng, None, |ev| {
                if let NodeEvent::HandEnded { hand_id, seat: Some(_), audit, .. } = ev {
                    assert!(audit.ok, "live audit of {hand_id}: {audit:?}");
                    seen.ended.lock().unwrap().insert(*hand_id);
                    seen.count.notify_waiters();
                }
            })
            .await;
        }));
    }
    tasks
}

/// `<number>-<hand id>.jsonl` files of a directory: (number, hand id, path).
fn numbered(dir: &Path) -> Vec<(u64, HandId, PathBuf)> {
    let mut v: Vec<_> = std::fs::read_dir(dir)
        .map(|d| {
            d.flatten()
                .filter_map(|e| {
                    let p = e.path();
                    let name = p.file_name()?.to_str()?.strip_suffix(".jsonl")?.to_owned();
                    let (n, id) = name.split_once('-')?;
                    Some((n.parse().ok()?, id.parse().ok()?, p))
                })
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

fn audit_files(
    auditor: &Auditor<'_>,
    files: impl IntoIterator<Item = PathBuf>,
) -> Vec<(PathBuf, HandVerdict)> {
    let mut out = Vec::new();
    for f in files {
        let text = std::fs::read_to_string(&f).expect("transcript file");
        for v in auditor.audit_jsonl(&text).unwrap_or_else(|e| panic!("{}: {e}", f.display())) {
            out.push((f.clone(), v));
        }
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_9_at_random_moments_loses_no_finished_hand_and_repeats_no_hand_number() {
    let seed: u64 = std::env::var("CLAW_CRASH_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or_else(|| {
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(1, |d| d.as_nanos() as u64)
    });
    println!("seed {seed} (CLAW_CRASH_SEED={seed} repeats the kill moments)");
    let mut rng = ChaCha20Rng::seed_from_u64(seed);
    let tmp = tempfile::tempdir().expect("temp dir");
    let data = tmp.path().join("data");
    let saved = tmp.path().join("saved");
    let seen = Arc::new(Seen::default());
    let mut dealer_key: Option<PlayerId> = None;
    let mut logs = Vec::new();

    for run in 0..=KILLS {
        let log = tmp.path().join(format!("dealer-{run}.log"));
        let d = DealerProc::start_with(command(&data, &log), log.clone()).await;
        let key: PlayerId = d.key().parse().expect("dealer key");
        assert_eq!(*dealer_key.get_or_insert(key), key, "the dealer key survives a crash");
        let bots = seat_bots(&d, &saved, &seen).await;
        // Some play first (2 to 12 hands), so that every run deals hands.
        let before = seen.ended.lock().unwrap().len();
        let first = rng.gen_range(2..=12);
        tokio::time::timeout(GUARD, async {
            while seen.ended.lock().unwrap().len() < before + first {
                let _ = tokio::time::timeout(Duration::from_millis(100), seen.count.notified()).await;
            }
        })
        .await
        .unwrap_or_else(|_| panic!("guard: no hand ends in run {run}; log:\n{}", d.log_text()));
        if run == KILLS {
            let (status, text) = d.terminate().await;
            assert_eq!(status.code(), Some(0), "{text}");
            logs.push(text);
        } else {
            // The moment: at a hand's end as a player sees it, a little
            // after, or anywhere in play.
            let moment = rng.gen_range(0..3u8);
            match moment {
                0 | 1 => {
                    tokio::time::timeout(GUARD, seen.count.notified()).await.expect("guard: a hand ends");
                    if moment == 1 {
                        tokio::time::sleep(Duration::from_millis(rng.gen_range(1..15))).await;
                    }
                }
                _ => tokio::time::sleep(Duration::from_millis(rng.gen_range(50..1500))).await,
            }
            println!(
                "run {run}: kill -9 ({})",
                ["at a hand's end", "just after a hand's end", "mid-play"][usize::from(moment)]
            );
            logs.push(d.kill());
        }
        for b in bots {
            b.abort();
            let _ = b.await;
        }
    }
    let dealer = dealer_key.expect("a run");
    let all_logs = logs.join("\n");
    let ended = seen.ended.lock().unwrap().clone();
    assert!(ended.len() >= 2 * (KILLS + 1), "hands seen ending: {}", ended.len());

    // 1. Every hand any bot saw end is archived, once; numbers never repeat.
    let transcripts = data.join("rooms").join(ROOM).join("transcripts");
    let archived = numbered(&transcripts);
    let voided = numbered(&transcripts.join("voided"));
    let mut by_number: BTreeMap<u64, HandId> = BTreeMap::new();
    for (n, id, p) in archived.iter().chain(&voided) {
        if let Some(other) = by_number.insert(*n, *id) {
            panic!("hand number {n} used twice: {other} and {id} ({}); logs:\n{all_logs}", p.display());
        }
    }
    let archived_ids: BTreeMap<HandId, u64> = archived.iter().map(|(n, id, _)| (*id, *n)).collect();
    assert_eq!(archived_ids.len(), archived.len(), "a hand archived twice");
    let lost: Vec<&HandId> = ended.iter().filter(|id| !archived_ids.contains_key(id)).collect();
    assert!(
        lost.is_empty(),
        "{} of {} hands seen ending are missing from the archive: {lost:?}; logs:\n{all_logs}",
        lost.len(),
        ended.len()
    );

    // 2. The dealer's archive audits, `balances` across the restarts included.
    let auditor = Auditor::new(Some(dealer));
    let mut verdicts: Vec<HandVerdict> = audit_files(&auditor, archived.iter().map(|(_, _, p)| p.clone()))
        .into_iter()
        .map(|(_, v)| v)
        .collect();
    let pairs = bind_balances(&mut verdicts);
    for v in &verdicts {
        if let Err(e) = &v.outcome {
            panic!("archived hand {} fails {:?}: {}; logs:\n{all_logs}", v.hand_id, e.check, e.detail);
        }
    }
    assert!(pairs + KILLS + 1 >= verdicts.len(), "{pairs} consecutive pairs of {} hands", verdicts.len());

    // 3. With the bots' own saved transcripts beside it: no two hands share
    //    a number, and every binding holds.
    let saved_files: Vec<PathBuf> = std::fs::read_dir(&saved)
        .expect("saved transcripts")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .collect();
    assert!(!saved_files.is_empty());
    let mut together: Vec<HandVerdict> = audit_files(&auditor, saved_files)
        .into_iter()
        .map(|(_, v)| v)
        .chain(audit_files(&auditor, archived.iter().map(|(_, _, p)| p.clone())).into_iter().map(|(_, v)| v))
        .collect();
    bind_balances(&mut together);
    for v in &together {
        if let Err(e) = &v.outcome {
            panic!(
                "hand {} fails {:?} beside the players' files: {}; logs:\n{all_logs}",
                v.hand_id, e.check, e.detail
            );
        }
    }
    println!(
        "{} hands seen ending, {} archived, {} voided, {pairs} balance bindings checked",
        ended.len(),
        archived.len(),
        voided.len()
    );
}
