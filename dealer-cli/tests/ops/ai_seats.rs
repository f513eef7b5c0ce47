//! House-AI seats with the real `claw-dealer` (issue #30): one person (an
//! SDK player, its moves chosen by a bot strategy in this test) sits alone
//! at a 4-seat Guandan room started with `--ai-seats`; the dealer's own
//! bots fill the three other seats over its WebSocket listener, the hand is
//! played to its end and audited, and `room-state` and the archived
//! `game-start` mark the house's seats. The same for a Sam Gong tutorial
//! table, whose NPC banker (seat 1) is the house AI the server runs.

use std::path::Path;
use std::sync::Arc;

use claw_dealer::archive::Archive;
use claw_player::bots::strategy;
use claw_player::node::{NodeConfig as PlayerConfig, PlayerNode};
use claw_player::play::play_bot;
use claw_protocol::messages::{EventBody, QueryData, QueryType};
use claw_protocol::transcript::Transcript;
use claw_protocol::Identity;
use rand::SeedableRng;

use crate::stop::DealerProc;
use crate::GUARD;

/// The `house_ai` flags of the first archived hand's `game-start`, by seat.
fn archived_flags(data: &Path, room: &str) -> Vec<bool> {
    let files = Archive::reader(data, room).files();
    let first = files.first().unwrap_or_else(|| panic!("no archived hand of {room}"));
    let text = std::fs::read_to_string(first).unwrap();
    let t = Transcript::from_jsonl(&text).unwrap();
    t.events
        .iter()
        .find_map(|e| match e.decode_body().ok()? {
            EventBody::GameStart(g) => Some(g.players.iter().map(|p| p.house_ai).collect()),
            _ => None,
        })
        .expect("a game-start")
}

/// Starts the dealer with `args`, seats one person who plays one hand with
/// `strategy_name`; returns the `house_ai` flags `room-state` showed after it.
async fn one_person_plays_a_hand(
    game: &str,
    args: &[&str],
    strategy_name: &str,
    data: &Path,
    log: &Path,
) -> Vec<bool> {
    let mut cmd = DealerProc::command_for(game, data, log);
    cmd.args(args);
    let dealer = DealerProc::start_with(cmd, log.to_path_buf()).await;
    let me = Arc::new(Identity::from_seed([7; 32]));
    let mut person =
        tokio::time::timeout(GUARD, PlayerNode::connect(&dealer.invite(), me, PlayerConfig::default()))
            .await
            .expect("guard: connect")
            .expect("the person sits down");
    let bot = strategy(game, strategy_name).unwrap();
    let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(7);
    let report = tokio::time::timeout(GUARD, play_bot(&mut person, bot.as_ref(), &mut rng, Some(1), |_| {}))
        .await
        .unwrap_or_else(|_| panic!("guard: no hand ended; log:\n{}", dealer.log_text()))
        .expect("the hand is played");
    assert_eq!(report.hands, 1, "{report:?}\n{}", dealer.log_text());
    assert!(report.failures.is_empty(), "{report:?}");
    // Sam Gong defers its reveal: every check that could run passed.
    assert_eq!(report.audited_ok + report.pending, 1, "the person's live audit passed: {report:?}");
    let state =
        tokio::time::timeout(GUARD, person.query(QueryType::RoomState)).await.expect("guard").unwrap();
    let QueryData::RoomState { players, .. } = state else { panic!("not a room-state: {state:?}") };
    let flags = players.iter().filter(|p| p.seat.is_some()).map(|p| p.house_ai).collect();
    person.close().await;
    let log_text = dealer.log_text();
    assert!(log_text.contains("house AI funded"), "AI chips paid from the house-AI account:\n{log_text}");
    assert!(log_text.contains("house-AI budget granted"), "{log_text}");
    flags
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_person_plays_guandan_against_three_house_ais() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    let args = ["--ai-seats", "1s", "--ai-level", "1"];
    let flags =
        one_person_plays_a_hand("guandan", &args, "guandan-l2", &data, &tmp.path().join("dealer.log")).await;
    assert_eq!(flags.iter().filter(|f| **f).count(), 3, "room-state: three house AIs, {flags:?}");
    let signed = archived_flags(&data, "guandan");
    assert_eq!(signed.len(), 4);
    assert_eq!(signed.iter().filter(|f| **f).count(), 3, "game-start marks the AI seats: {signed:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_sam_gong_tutorials_npc_banker_is_a_house_ai_run_by_the_server() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    let args = ["--ai-seats", "1s", "--max-players", "2", "--settings", r#"{"tutorial":true}"#];
    let flags =
        one_person_plays_a_hand("sam-gong", &args, "simple", &data, &tmp.path().join("dealer.log")).await;
    assert_eq!(flags, vec![false, true], "the learner at seat 0, the house AI at seat 1");
    // Seat 1 is the tutorial's banker: the house AI banks.
    assert_eq!(archived_flags(&data, "sam-gong"), vec![false, true]);
}

/// A house-AI budget smaller than one AI's chips seats no AI: the transfer
/// from the house-AI account is refused (nothing is minted) and the person
/// sits alone, told nothing false.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_budget_that_cannot_pay_an_ai_seats_none() {
    let tmp = tempfile::tempdir().unwrap();
    let (data, log) = (tmp.path().join("data"), tmp.path().join("dealer.log"));
    let mut cmd = DealerProc::command_for("guandan", &data, &log);
    cmd.args(["--ai-seats", "1s", "--ai-chips", "10000", "--ai-budget", "5000"]);
    let dealer = DealerProc::start_with(cmd, log.clone()).await;
    let me = Arc::new(Identity::from_seed([8; 32]));
    let person =
        tokio::time::timeout(GUARD, PlayerNode::connect(&dealer.invite(), me, PlayerConfig::default()))
            .await
            .expect("guard: connect")
            .expect("the person sits down");
    let started = std::time::Instant::now();
    while !dealer.log_text().contains("no house AI for the seat") {
        assert!(started.elapsed() < GUARD, "guard: no refusal logged:\n{}", dealer.log_text());
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    let text = dealer.log_text();
    assert!(text.contains("the house-AI account house-ai cannot pay"), "{text}");
    assert!(!text.contains("house AI funded"), "{text}");
    let state = person.query(QueryType::RoomState).await.unwrap();
    let QueryData::RoomState { players, .. } = state else { panic!("not a room-state: {state:?}") };
    assert_eq!(players.iter().filter(|p| p.seat.is_some()).count(), 1, "only the person: {players:?}");
    assert!(players.iter().all(|p| !p.house_ai));
}
