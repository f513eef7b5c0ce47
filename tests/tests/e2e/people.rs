//! People at a table (SPEC.md §9.8) with the SDK and the `claw-player`
//! binary against a real dealer: the bots answer the ready check and vote
//! for every rematch; `claw-player join` shows both as event lines and
//! takes the answers as input lines; quick match seats a player at a room
//! of the game it asks for, says why when none plays it, and refuses a
//! dealer whose signed room configuration is not the game asked for.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use claw_e2e::harness::*;
use claw_player::bots::strategy;
use claw_player::node::{NodeConfig, NodeError, NodeEvent, PlayerNode};
use claw_player::play::play_bot;
use claw_player::Invite;
use claw_protocol::handshake::{ChallengeBook, ServerHandshake};
use claw_protocol::messages::{
    decode_client, ClientMessage, Matched, QuickMatch, RawJson, ServerMessage, VoteState,
};
use claw_protocol::Identity;
use futures_util::{SinkExt, StreamExt};
use rand::rngs::OsRng;
use rand_chacha::rand_core::SeedableRng;
use serde_json::{json, Value};
use tokio_tungstenite::tungstenite::Message;

fn unix_ms() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_millis() as u64
}

/// A room that asks for `ready` before every hand (each hand is a match
/// outside Guandan) and votes on a rematch after it.
fn people_room(id: &str, game: &str) -> claw_dealer::RoomConfig {
    let mut room = fast_room(id, game);
    room.ready_check = Duration::from_secs(30);
    room.rematch_vote = Duration::from_secs(30);
    room
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bots_answer_the_ready_check_and_vote_for_every_rematch() {
    let mut room = people_room("r", "texas-holdem");
    room.min_players = 2;
    let d = start_dealer(vec![room], 10_000_000).await;
    let nodes = connect_players(&d.invite("r"), 2, 30, NodeConfig::default()).await;
    let mut tasks = Vec::new();
    for (i, mut node) in nodes.into_iter().enumerate() {
        tasks.push(tokio::spawn(async move {
            let s = strategy("texas-holdem", "simple").unwrap();
            let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(i as u64);
            let mut seen = Vec::new();
            let r =
                play_bot(&mut node, s.as_ref(), &mut rng, Some(3), |e| seen.push(e.clone())).await.unwrap();
            let me = node.id();
            node.close().await;
            (me, r, seen)
        }));
    }
    for t in tasks {
        let (me, report, seen) = within(120, "three hands with votes", t).await.unwrap();
        assert_eq!((report.hands, report.audited_ok), (3, 3), "{report:?}");
        assert!(report.failures.is_empty() && report.rejected == 0, "{report:?}");
        let asked = seen.iter().any(|e| matches!(e, NodeEvent::ReadyCheck(c) if c.state == VoteState::Open && c.waiting.contains(&me)));
        assert!(asked, "the first hand waited for this seat's ready");
        let passed = |kind: &str| {
            seen.iter()
                .filter(|e| match e {
                    NodeEvent::ReadyCheck(c) => kind == "ready" && c.state == VoteState::Passed,
                    NodeEvent::Rematch(r) => kind == "rematch" && r.state == VoteState::Passed,
                    _ => false,
                })
                .count()
        };
        assert_eq!(passed("ready"), 1, "one ready check: a rematch's yes is the next match's ready");
        assert!(passed("rematch") >= 2, "hands 2 and 3 were rematches voted yes");
    }
    d.stop().await;
}

/// `claw-player join`'s JSON lines: `ready-check` and `rematch` lines ask;
/// `{"cmd":"ready"}` and `{"cmd":"rematch","accept":true}` answer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn json_lines_answer_the_ready_check_and_the_rematch() {
    let bin = claw_player_bin("json_lines_answer_the_ready_check_and_the_rematch");
    let mut room = people_room("r", "blackjack");
    room.min_players = 1;
    let d = start_dealer(vec![room], 10_000_000).await;
    let url = d.node.invite_url("r").unwrap();
    let (status, seen) = within(
        120,
        "claw-player plays two hands with votes",
        tokio::task::spawn_blocking(move || {
            let mut me = String::new();
            json_lines_session(bin, &url, 2, &[], move |v| {
                let asks =
                    v["state"] == "open" && v["waiting"].as_array().is_some_and(|w| w.contains(&json!(me)));
                match v["event"].as_str() {
                    Some("joined") => {
                        me = v["player"].as_str().unwrap_or_default().to_owned();
                        Vec::new()
                    }
                    Some("ready-check") if asks => vec![r#"{"cmd":"ready"}"#.to_owned()],
                    Some("rematch") if asks => vec![r#"{"cmd":"rematch","accept":true}"#.to_owned()],
                    Some("your-turn") => vec![act_first(v)],
                    _ => Vec::new(),
                }
            })
        }),
    )
    .await
    .unwrap();
    let kinds: Vec<&str> = seen.iter().filter_map(|v| v["event"].as_str()).collect();
    assert_eq!(status.code(), Some(0), "{kinds:?}");
    let line = |kind: &str, state: &str| seen.iter().find(|v| v["event"] == kind && v["state"] == state);
    let open = line("ready-check", "open").unwrap_or_else(|| panic!("no open ready-check line: {kinds:?}"));
    assert!(open["deadline_ms"].as_u64().unwrap() > unix_ms() - 60_000, "{open}");
    assert!(line("ready-check", "passed").is_some(), "{kinds:?}");
    assert!(line("rematch", "passed").is_some(), "the second hand followed a rematch voted yes: {kinds:?}");
    let ended: Vec<&Value> = seen.iter().filter(|v| v["event"] == "hand-ended").collect();
    assert_eq!(ended.len(), 2, "{kinds:?}");
    assert!(ended.iter().all(|e| e["audit"]["ok"] == true));
    d.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn quick_match_seats_the_player_at_a_room_of_its_game() {
    let mut holdem = fast_room("holdem", "texas-holdem");
    holdem.min_players = 2;
    let d = start_dealer(vec![fast_room("bj", "blackjack"), holdem], 10_000_000).await;
    // Any invite of the dealer gives its address and key.
    let dealer = d.invite("bj");
    let me = Arc::new(Identity::from_seed([31; 32]));
    let request = QuickMatch { game: "texas-holdem".into(), tier: None };
    let node =
        within(30, "quick match", PlayerNode::quick_match(&dealer, request, me, NodeConfig::default()))
            .await
            .expect("seated by quick match");
    let state = node.state();
    assert_eq!(
        state.room.as_ref().map(|r| (r.room_id.as_str(), r.game.as_str())),
        Some(("holdem", "texas-holdem"))
    );
    assert!(state.seat.is_some(), "{state:?}");
    assert_eq!(node.invite().room, "holdem", "reconnects go to the matched room");
    node.close().await;
    // No room plays the game: the dealer's reason, signed, and no seat.
    let me = Arc::new(Identity::from_seed([32; 32]));
    let request = QuickMatch { game: "go-fish".into(), tier: None };
    match PlayerNode::quick_match(&dealer, request, me, NodeConfig::default()).await {
        Err(NodeError::QuickMatch(why)) => assert!(!why.is_empty()),
        Err(e) => panic!("expected a quick-match refusal, got {e}"),
        Ok(_) => panic!("seated at a game no room plays"),
    }
    d.stop().await;
}

/// A dealer that answers `quick-match` for `texas-holdem` with a room whose
/// signed configuration plays Blackjack: the SDK refuses it after the
/// handshake and never asks for the seat.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_matched_room_of_another_game_is_refused() {
    let dealer = Arc::new(Identity::from_seed([33; 32]));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let invite = Invite::parse(&format!("ws://{addr}/any#{}", dealer.id())).unwrap();
    let asked_seat = Arc::new(AtomicBool::new(false));
    let asked = Arc::clone(&asked_seat);
    let config = json!({
        "room_id": "r", "game": "blackjack", "settings": {}, "buy_in": 1000, "min_bet": 10, "max_bet": 0,
        "commission": 0, "min_players": 1, "max_players": 6, "entropy": "joint", "reveal": "full",
        "action_timeout_ms": 10000, "between_hands_ms": 0, "seed_timeout_ms": 2000
    });
    let task = tokio::spawn(async move {
        let (tcp, _) = listener.accept().await.unwrap();
        let mut ws = tokio_tungstenite::accept_async(tcp).await.unwrap();
        let mut hs = ServerHandshake::new(dealer, "r", RawJson::from_string(config.to_string()).unwrap());
        let mut book = ChallengeBook::new();
        while let Some(Ok(Message::Text(t))) = ws.next().await {
            let reply = match decode_client(t.as_str()).unwrap() {
                ClientMessage::QuickMatch(q) => {
                    // The lie: unsigned `matched` names the game asked for.
                    ServerMessage::Matched(Matched {
                        room_id: "r".into(),
                        game: q.game,
                        tier: None,
                        opened: false,
                    })
                }
                ClientMessage::Hello(h) => {
                    ServerMessage::Challenge(hs.on_hello(&h, unix_ms(), &mut OsRng).unwrap())
                }
                ClientMessage::Response(r) => {
                    hs.on_response(&r, unix_ms(), &mut book).unwrap();
                    ServerMessage::Accepted(hs.accept(None, None, unix_ms(), &mut OsRng).unwrap())
                }
                ClientMessage::JoinRequest(_) => {
                    asked.store(true, Ordering::SeqCst);
                    continue;
                }
                _ => continue,
            };
            ws.send(Message::text(reply.encode().unwrap())).await.unwrap();
        }
    });
    let me = Arc::new(Identity::from_seed([34; 32]));
    let request = QuickMatch { game: "texas-holdem".into(), tier: None };
    match within(30, "quick match", PlayerNode::quick_match(&invite, request, me, NodeConfig::default()))
        .await
    {
        Err(NodeError::QuickMatch(why)) => assert!(why.contains("blackjack"), "{why}"),
        Err(e) => panic!("expected a quick-match refusal, got {e}"),
        Ok(_) => panic!("seated at a room of another game"),
    }
    assert!(!asked_seat.load(Ordering::SeqCst), "the seat was never asked for");
    task.abort();
}
