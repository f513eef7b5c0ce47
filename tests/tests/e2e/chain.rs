//! The chain of a room's hands with the real `claw-player` binary against a
//! real dealer (SPEC.md §9.5 `previous`, §11.4): `audit --fetch` fetches the
//! previous hands the saved files lack so that every saved hand is compared
//! with the hand it continues; after a dealer restart a new chain starts
//! and audits; a deferred reveal the dealer's archive still withholds past
//! its due time fails `reveal-complete`.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use claw_dealer::{DealerNode, NodeConfig as DealerConfig, NodeHandle, RoomConfig};
use claw_e2e::harness::*;
use claw_player::node::NodeConfig;
use claw_protocol::messages::{EventBody, RevealPolicy};
use claw_protocol::transcript::{Transcript, TranscriptBuilder};
use claw_protocol::Identity;

/// The dealer's key: the test signs as a cheating dealer would.
fn dealer_identity() -> Identity {
    Identity::from_seed([0x5a; 32])
}

/// A dealer over `data` (kept across restarts) with its HTTP port, hands
/// public at once.
async fn launch(data: &Path, room: RoomConfig) -> NodeHandle {
    let mut cfg = DealerConfig::local(data, vec![room]);
    cfg.http_listen = Some(([127, 0, 0, 1], 0).into());
    cfg.spectator_delay = Some(Duration::ZERO);
    DealerNode::builder(cfg)
        .identity(dealer_identity())
        .local_chips(std::sync::Arc::new(claw_chips::LocalChips::new()), claw_protocol::Chips(10_000_000))
        .launch()
        .await
        .expect("dealer starts")
}

/// Plays `hands` hands of `game` with 3 bots saving their transcripts in `saved`.
async fn play(d: &NodeHandle, game: &str, saved: &Path, hands: u64, seed: u64) {
    let invite = claw_player::Invite::parse(&d.invite_url("r").unwrap()).unwrap();
    let config = NodeConfig { save_transcripts: Some(saved.to_owned()), ..NodeConfig::default() };
    let nodes = connect_players(&invite, 3, seed, config).await;
    within(120, "bots play", run_bots(nodes, game, "simple", hands, seed)).await;
}

/// The saved hands, by hand number: (number, file, transcript).
fn saved_hands(saved: &Path) -> Vec<(u64, PathBuf, Transcript)> {
    let mut out: Vec<_> = std::fs::read_dir(saved)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .map(|p| {
            let t = Transcript::from_jsonl(&std::fs::read_to_string(&p).unwrap()).unwrap();
            let n = match t.events[0].decode_body().unwrap() {
                EventBody::HandPrepare(h) => h.hand_number,
                other => panic!("{other:?}"),
            };
            (n, p, t)
        })
        .collect();
    out.sort_by_key(|(n, _, _)| *n);
    out
}

fn game_start_of(t: &Transcript) -> claw_protocol::messages::GameStart {
    match t.events[1].decode_body().unwrap() {
        EventBody::GameStart(g) => g,
        other => panic!("{other:?}"),
    }
}

/// `t` with `change` applied to its bodies, every event re-signed by the
/// dealer's key where it was signed (a cheating dealer).
fn resigned(t: &Transcript, change: impl Fn(&mut EventBody)) -> Transcript {
    let h = t.header.as_ref().unwrap();
    let mut b = TranscriptBuilder::with_header(t.hand_id, h.dealer, h.room_id.clone());
    let dealer = dealer_identity();
    for e in &t.events {
        let mut body = e.decode_body().unwrap();
        change(&mut body);
        if e.sig.is_some() {
            b.append(&dealer, &body).unwrap();
        } else {
            b.append_unsigned(&dealer, &body).unwrap();
        }
    }
    b.into_transcript()
}

/// Runs `claw-player audit FILES ARGS` (off the async workers): exit code,
/// stdout, stderr.
async fn audit(files: Vec<PathBuf>, args: Vec<String>) -> (Option<i32>, String, String) {
    let bin = claw_player_bin("chain");
    let out = tokio::task::spawn_blocking(move || {
        std::process::Command::new(bin).arg("audit").args(&files).args(&args).output().unwrap()
    })
    .await
    .unwrap();
    let text = |b: &[u8]| String::from_utf8_lossy(b).to_string();
    (out.status.code(), text(&out.stdout), text(&out.stderr))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn audit_fetch_compares_each_saved_hand_with_the_previous_hand_it_lacks() {
    // Dou Di Zhu: its replay never reads a balance, so only the chain binds one.
    let dir = tempfile::tempdir().unwrap();
    let (data, saved) = (dir.path().join("data"), dir.path().join("hands"));
    let d = launch(&data, fast_room("r", "dou-di-zhu")).await;
    play(&d, "dou-di-zhu", &saved, 4, 41).await;
    let base = format!("http://{}", d.http_addr().unwrap());
    let hands = saved_hands(&saved);
    assert!(hands.len() >= 4, "{} hands", hands.len());
    // The player kept every other hand: each names a previous hand it lacks.
    let kept: Vec<_> = hands.iter().skip(1).step_by(2).cloned().collect();
    for (_, _, t) in &kept {
        let prev = game_start_of(t).previous.expect("names its previous hand");
        assert!(!kept.iter().any(|(_, _, k)| k.hand_id == prev.hand_id));
    }
    let files: Vec<PathBuf> = kept.iter().map(|(_, f, _)| f.clone()).collect();
    let (code, out, err) = audit(files.clone(), vec![]).await;
    assert_eq!(code, Some(0), "{out}{err}");
    assert!(!err.contains("fetched"), "{err}");
    let (code, out, err) = audit(files.clone(), vec!["--fetch".into(), base.clone()]).await;
    assert_eq!(code, Some(0), "{out}{err}");
    assert!(err.contains(&format!("{} previous hand(s) fetched", kept.len())), "{err}");
    assert_eq!(out.lines().count(), kept.len(), "one line per saved hand: {out}");

    // A cheating dealer starts seat 0 one chip richer than its previous hand
    // left it: alone, nothing binds the balance; beside the fetched previous
    // hand, `balances` fails.
    let (_, _, t) = &kept[0];
    let cheat = resigned(t, |b| {
        if let EventBody::GameStart(g) = b {
            g.players[0].balance.0 += 1;
        }
    });
    let tampered = dir.path().join("tampered.jsonl");
    std::fs::write(&tampered, cheat.to_jsonl().unwrap()).unwrap();
    let (code, out, err) = audit(vec![tampered.clone()], vec![]).await;
    assert_eq!(code, Some(0), "alone it passes: {out}{err}");
    let (code, out, err) = audit(vec![tampered], vec!["--fetch".into(), base]).await;
    assert_eq!(code, Some(1), "{out}{err}");
    assert!(out.contains("check balances failed"), "{out}");
    within(30, "dealer stop", d.shutdown(Duration::from_secs(2))).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn after_a_dealer_restart_a_new_chain_starts_and_every_hand_audits() {
    let dir = tempfile::tempdir().unwrap();
    let (data, saved) = (dir.path().join("data"), dir.path().join("hands"));
    // Three seated before the first hand, so that every bot plays each hand.
    let room = || RoomConfig { min_players: 3, ..fast_room("r", "texas-holdem") };
    let d = launch(&data, room()).await;
    play(&d, "texas-holdem", &saved, 2, 43).await;
    within(30, "dealer stop", d.shutdown(Duration::from_secs(2))).await;
    let before = saved_hands(&saved);
    let d = launch(&data, room()).await;
    play(&d, "texas-holdem", &saved, 2, 47).await;
    let base = format!("http://{}", d.http_addr().unwrap());
    let hands = saved_hands(&saved);
    let after: Vec<_> =
        hands.iter().filter(|(_, _, t)| !before.iter().any(|(_, _, b)| b.hand_id == t.hand_id)).collect();
    assert!(before.len() >= 2 && after.len() >= 2, "{} then {}", before.len(), after.len());
    // The first hand after the restart names no previous hand, starts from
    // no table memory and takes a number above every hand before it; the
    // next one continues it.
    let first = game_start_of(&after[0].2);
    assert_eq!(first.previous, None);
    assert!(first.memory.is_null(), "{}", first.memory);
    assert!(after[0].0 > before.last().unwrap().0);
    let second = game_start_of(&after[1].2).previous.expect("continues the first");
    assert_eq!(second.hand_id, after[0].2.hand_id);
    // Every hand of both sessions audits OK together, and with --fetch.
    let files: Vec<PathBuf> = hands.iter().map(|(_, f, _)| f.clone()).collect();
    let (code, out, err) = audit(files.clone(), vec![]).await;
    assert_eq!(code, Some(0), "{out}{err}");
    assert_eq!(out.lines().filter(|l| l.starts_with("OK ")).count(), hands.len(), "{out}");
    let (code, out, err) = audit(files, vec!["--fetch".into(), base]).await;
    assert_eq!(code, Some(0), "{out}{err}");
    assert!(!err.contains("fetched"), "nothing lacking: {err}");
    within(30, "dealer stop", d.shutdown(Duration::from_secs(2))).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reveal_still_withheld_past_its_due_time_fails_with_audit_fetch() {
    // Sam Gong keeps folded hands face down; the room publishes each reveal
    // ten minutes after the hand.
    let dir = tempfile::tempdir().unwrap();
    let (data, saved) = (dir.path().join("data"), dir.path().join("hands"));
    let mut room = fast_room("r", "sam-gong");
    room.min_players = 3;
    room.reveal = RevealPolicy::Deferred;
    room.reveal_delay = Some(Duration::from_secs(600));
    let d = launch(&data, room).await;
    play(&d, "sam-gong", &saved, 1, 53).await;
    let base = format!("http://{}", d.http_addr().unwrap());
    let files: Vec<PathBuf> = saved_hands(&saved).into_iter().map(|(_, f, _)| f).collect();
    assert!(!files.is_empty());
    // Archived once settled: wait (bounded) until the dealer serves it.
    let (mut code, mut out, mut err) = (None, String::new(), String::new());
    for _ in 0..100 {
        (code, out, err) = audit(files.clone(), vec!["--fetch".into(), base.clone()]).await;
        if !err.contains("status 404") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // Not due yet: pending, exit 3.
    assert_eq!(code, Some(3), "{out}{err}");
    assert!(out.lines().all(|l| l.starts_with("PENDING ")), "{out}");
    // The files were written an hour ago: the reveal was due 50 minutes ago
    // and the dealer's archive still has it pending.
    let hour_ago = SystemTime::now() - Duration::from_secs(3600);
    for f in &files {
        std::fs::File::options().write(true).open(f).unwrap().set_modified(hour_ago).unwrap();
    }
    let (code, out, err) = audit(files.clone(), vec![]).await;
    assert_eq!(code, Some(3), "without asking the dealer it stays pending: {out}{err}");
    let (code, out, err) = audit(files.clone(), vec!["--fetch".into(), base.clone()]).await;
    assert_eq!(code, Some(1), "{out}{err}");
    assert!(out.lines().all(|l| l.contains("check reveal-complete failed: the reveal is withheld")), "{out}");
    // A grace longer than the lateness keeps it pending.
    let (code, out, err) =
        audit(files, vec!["--fetch".into(), base, "--reveal-grace".into(), "7200".into()]).await;
    assert_eq!(code, Some(3), "{out}{err}");
    within(30, "dealer stop", d.shutdown(Duration::from_secs(2))).await;
}
