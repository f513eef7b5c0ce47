//! The live feed over real sockets, the secret scan extended to it: a
//! watcher follows every game's table (`watch`) while bots play; each
//! hand's seed and hidden salts must not reach it before that hand's
//! `game-end`, and what it got of each hand is the hand as archived.

use std::sync::Arc;

use claw_dealer::archive::Archive;
use claw_protocol::messages::{ClientMessage, EventBody, RevealPolicy, ServerMessage, Watch};
use claw_protocol::transcript::EventEnvelope;
use claw_protocol::HandId;

use crate::common::*;

/// The seeds and salts a hand's `game-end` (or `audit-reveal`) reveals that
/// no event before its `game-end` made public.
fn hidden_secrets(events: &[EventEnvelope]) -> Vec<String> {
    let end =
        events.iter().position(|e| matches!(e.decode_body(), Ok(EventBody::GameEnd(_)))).expect("a game-end");
    let before: String = events[..end].iter().map(|e| e.body.as_str()).collect();
    let mut out = Vec::new();
    for e in &events[end..] {
        match e.decode_body() {
            Ok(EventBody::GameEnd(g)) => {
                out.extend(g.openings.iter().map(|o| o.salt.to_string()));
                out.extend(g.dealer_seed.map(|s| s.to_string()));
            }
            Ok(EventBody::AuditReveal(r)) => {
                out.extend(r.openings.iter().map(|o| o.salt.to_string()));
                out.push(r.dealer_seed.to_string());
            }
            _ => {}
        }
    }
    out.retain(|s| !before.contains(s.as_str()));
    out
}

async fn follow_game(game: &str, players: u8, hands: u64, reveal: RevealPolicy) {
    let mut room = fast_room("r", game);
    room.max_hands = Some(hands);
    room.min_players = players;
    room.reveal = reveal;
    room.watch_delay = 2;
    if game == "blackjack" {
        room.house_bankroll = claw_protocol::Chips(1_000_000);
    }
    let f = Fixture::start(vec![room]).await;
    let mut watcher = f.client("r", 99).await;
    watcher.send(ClientMessage::Watch(Watch { on: true })).await;
    let w = watcher
        .recv_until(|m| match m {
            ServerMessage::Watching(w) => Some(w.clone()),
            _ => None,
        })
        .await;
    assert!(w.on && w.delay == 2, "{w:?}");
    // Everything the follower gets, in order, until the room closes.
    let follower = tokio::spawn(async move {
        let mut got = Vec::new();
        while let Some(m) = recv_ws(&mut watcher.ws).await {
            got.push(m);
        }
        got
    });
    let g = claw_games::registry::get(game).unwrap();
    let clients = seat_players(&f, "r", 10, players).await;
    let reports = run_bots(clients, Arc::clone(&g), hands as usize).await;
    for (_, r) in &reports {
        assert_eq!(r.hands_audited as u64, hands, "{game}: every hand audited by every player");
    }
    f.node.room("r").unwrap().wait_closed().await;
    let got = tokio::time::timeout(GUARD, follower).await.expect("guard: the feed ended").unwrap();
    assert!(!got.iter().any(|m| matches!(m, ServerMessage::YourTurn(_) | ServerMessage::Turn(_))));
    let frames: Vec<String> = got.iter().map(|m| serde_json::to_string(m).unwrap()).collect();
    let files = Archive::reader(f.dir.path(), "r").files();
    assert_eq!(files.len() as u64, hands);
    let mut scanned = 0;
    for path in files {
        let text = std::fs::read_to_string(&path).unwrap();
        let t = claw_protocol::transcript::Transcript::from_jsonl(&text).unwrap();
        let (hand, events): (HandId, Vec<EventEnvelope>) = (t.hand_id, t.events);
        let fed: Vec<&EventEnvelope> = got
            .iter()
            .filter_map(|m| match m {
                ServerMessage::Event(e) if e.hand_id == hand => Some(e),
                _ => None,
            })
            .collect();
        let table: Vec<&EventEnvelope> =
            events.iter().filter(|e| !matches!(e.decode_body(), Ok(EventBody::AuditReveal(_)))).collect();
        assert_eq!(fed, table, "{game}: the follower got hand {hand} as the table did");
        let end = got
            .iter()
            .position(|m| {
                matches!(m, ServerMessage::Event(e)
                    if e.hand_id == hand && matches!(e.decode_body(), Ok(EventBody::GameEnd(_))))
            })
            .expect("the follower got the hand's end");
        let secrets = hidden_secrets(&events);
        assert!(!secrets.is_empty(), "{game}: hand {hand} hid nothing to scan for");
        for (i, f) in frames[..end].iter().enumerate() {
            for s in &secrets {
                assert!(!f.contains(s.as_str()), "{game}: frame {i} carried a secret of hand {hand} early");
            }
        }
        scanned += secrets.len();
    }
    assert!(scanned > 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_follower_gets_nothing_early_holdem() {
    follow_game("texas-holdem", 4, 3, RevealPolicy::Full).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_follower_gets_nothing_early_blackjack() {
    follow_game("blackjack", 3, 3, RevealPolicy::Full).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_follower_gets_nothing_early_dou_di_zhu() {
    follow_game("dou-di-zhu", 3, 2, RevealPolicy::Full).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_follower_gets_nothing_early_sam_gong() {
    follow_game("sam-gong", 4, 3, RevealPolicy::Deferred).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_follower_gets_nothing_early_guandan() {
    follow_game("guandan", 4, 2, RevealPolicy::Full).await;
}
