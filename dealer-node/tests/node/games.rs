//! Complete hands of every registered game (and the test game), end to
//! end: real WebSockets, joint entropy, every hand audited by every player.

use std::collections::HashSet;
use std::sync::Arc;

use claw_dealer::archive::Archive;
use claw_dealer::RoomConfig;
use claw_protocol::messages::{QueryData, QueryType, RevealPolicy, ServerMessage};
use claw_protocol::HandId;

use crate::common::*;

async fn play_game(game: &str, players: u8, hands: u64, reveal: RevealPolicy) {
    let mut room = fast_room("r", game);
    room.max_hands = Some(hands);
    room.min_players = players;
    room.reveal = reveal;
    if game == "blackjack" {
        room.house_bankroll = claw_protocol::Chips(1_000_000);
    }
    let f = Fixture::start(vec![room]).await;
    let g: Arc<dyn claw_games::DynGame> = match game {
        "high-card" => claw_engine::testgame::high_card(),
        other => claw_games::registry::get(other).unwrap(),
    };
    let clients = seat_players(&f, "r", 10, players).await;
    let ids: Vec<_> = clients.iter().map(|c| c.id()).collect();
    let reports = run_bots(clients, g, hands as usize).await;
    for (_, r) in &reports {
        assert_eq!(r.hands_audited as u64, hands, "{game}: every hand audited by every player");
    }
    f.node.room("r").unwrap().wait_closed().await;
    // Chips are conserved: what players lost, the dealer and house hold.
    let bankroll = if game == "blackjack" { 1_000_000 } else { 0 };
    assert_eq!(f.chips.total().await, 10_000 * u128::from(players) + bankroll);
    let m = f.node.metrics();
    assert_eq!(m.hands_finished.load(std::sync::atomic::Ordering::Relaxed), hands);
    assert_eq!(m.hands_voided.load(std::sync::atomic::Ordering::Relaxed), 0);
    // Every hand is archived and audits offline.
    let files = Archive::reader(f.dir.path(), "r").files();
    assert_eq!(files.len() as u64, hands);
    let g2: Arc<dyn claw_games::DynGame> = match game {
        "high-card" => claw_engine::testgame::high_card(),
        other => claw_games::registry::get(other).unwrap(),
    };
    for path in files {
        let text = std::fs::read_to_string(&path).unwrap();
        let r = claw_games::audit::GamesReplayer::default().with_game(g2.clone());
        let opts = claw_protocol::audit::AuditOptions {
            dealer: Some(f.dealer()),
            replayer: Some(&r),
            ..Default::default()
        };
        let rep = claw_protocol::audit::audit_jsonl(&text, &opts)
            .unwrap_or_else(|e| panic!("{game}: archived hand: {e}"));
        assert!(rep.complete());
    }
    let _ = ids;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn high_card_hands_end_to_end() {
    play_game("high-card", 4, 5, RevealPolicy::Full).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn texas_holdem_hands_end_to_end() {
    play_game("texas-holdem", 6, 5, RevealPolicy::Full).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn blackjack_hands_end_to_end() {
    play_game("blackjack", 3, 5, RevealPolicy::Full).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dou_di_zhu_hands_end_to_end() {
    play_game("dou-di-zhu", 3, 3, RevealPolicy::Full).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sam_gong_hands_with_deferred_reveal() {
    play_game("sam-gong", 4, 5, RevealPolicy::Deferred).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn guandan_deals_end_to_end() {
    // Deals of a match: from the second on, tribute and return move sealed
    // cards between players (`card-transfer`), checked live and offline.
    play_game("guandan", 4, 4, RevealPolicy::Full).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_registered_game_is_covered() {
    let tested = ["texas-holdem", "blackjack", "dou-di-zhu", "sam-gong", "guandan"];
    for name in claw_games::registry::names() {
        assert!(tested.contains(&name), "add an end-to-end test for {name}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn queries_answer_without_secrets() {
    let mut room = RoomConfig::new("q", "high-card");
    room.commission = claw_protocol::Chips(1);
    let f = Fixture::start(vec![room]).await;
    let mut c = f.client("q", 1).await;
    let j = c.join().await;
    assert!(j.accepted);
    let ServerMessage::QueryResult(r) = c.query(QueryType::MyBalance, "n1").await else { panic!() };
    assert!(matches!(r.data, QueryData::MyBalance { balance } if balance.0 == 10_000));
    let ServerMessage::QueryResult(r) = c.query(QueryType::RoomConfig, "n2").await else { panic!() };
    let QueryData::RoomConfig { config } = r.data else { panic!() };
    assert_eq!(config.room_id, "q");
    let ServerMessage::QueryResult(r) = c.query(QueryType::MyStatus, "n3").await else { panic!() };
    assert!(matches!(r.data, QueryData::MyStatus { seat: Some(_), .. }));
    let ServerMessage::QueryResult(r) = c.query(QueryType::RoomState, "n4").await else { panic!() };
    assert!(matches!(r.data, QueryData::RoomState { ref players, .. } if players.len() == 1));
    let ServerMessage::QueryResult(r) = c.query(QueryType::TableState, "n5").await else { panic!() };
    assert!(matches!(r.data, QueryData::TableState { hand_id: None, .. }));
    c.send_raw(r#"{"type":"query","query_type":"dealer-deck","nonce":"n6"}"#).await;
    let e = c
        .recv_until(|m| match m {
            ServerMessage::QueryError(e) => Some(e.clone()),
            _ => None,
        })
        .await;
    assert_eq!(e.nonce, "n6");
    // Start a hand with a second player and ask for the table mid-hand: the
    // answer holds no hidden card, no salt and no seed.
    let mut d = f.client("q", 2).await;
    assert!(d.join().await.accepted);
    let hand = c
        .recv_until(|m| match m {
            ServerMessage::Event(e)
                if matches!(e.decode_body().unwrap(), claw_protocol::messages::EventBody::GameStart(_)) =>
            {
                Some(e.hand_id)
            }
            _ => None,
        })
        .await;
    let ServerMessage::QueryResult(r) = c.query(QueryType::TableState, "n7").await else { panic!() };
    let text = serde_json::to_string(&r).unwrap();
    assert!(text.contains(&hand.to_string()));
    for secret in ["salt", "seed", "sealed", "deck", "hole"] {
        assert!(!text.contains(secret), "table-state mentions {secret}: {text}");
    }
    for q in [QueryType::RoomConfig, QueryType::RoomState, QueryType::MyStatus] {
        let text = serde_json::to_string(&c.query(q, "n8").await).unwrap();
        // No member named for a secret (`seed_timeout_ms` is a public limit).
        for secret in ["token", "salt", "seed", "secret"] {
            let named = [format!("\"{secret}\":"), format!("_{secret}\":")];
            assert!(!named.iter().any(|n| text.contains(n)), "{q:?} carries a {secret}: {text}");
        }
    }
    let _ = d;
}

/// Back-to-back hands at full speed: actions paced by the dealer are never
/// throttled away (a lost action would stall the hand until the guard).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fast_back_to_back_hands_never_lose_an_action() {
    let mut room = fast_room("r", "dou-di-zhu");
    room.max_hands = Some(40);
    room.min_players = 3;
    room.action_timeout = std::time::Duration::from_secs(120);
    let f = Fixture::start(vec![room]).await;
    let clients = seat_players(&f, "r", 10, 3).await;
    let reports = run_bots(clients, claw_games::registry::get("dou-di-zhu").unwrap(), 40).await;
    for (_, r) in &reports {
        assert_eq!(r.hands_audited, 40);
        assert_eq!(r.timeouts_seen, 0);
        assert!(r.actions > 40);
    }
}

/// When a Guandan test player stops.
#[derive(Clone, Copy)]
enum Stop {
    /// After this many actions.
    Acted(usize),
    /// At the game end of this hand number.
    GameEndOf(u64),
}

/// `f`, or a failure past the guard (an unanswered turn would cost the
/// full action timeout, and a deal has many turns).
async fn bounded<T>(f: impl std::future::Future<Output = T>) -> T {
    tokio::time::timeout(GUARD * 4, f).await.expect("guard: the deal did not end")
}

/// Plays `c` with random legal actions (auditing each hand it sees end)
/// until `stop`; returns the actions it took. Panics on a rejection.
/// `seeded`: the hands this identity sent its seed for (carried over a
/// reconnect, whose re-sent `hand-prepare` must not be seeded twice).
async fn guandan_player(c: &mut Client, stop: Stop, seed: u64, seeded: &mut HashSet<HandId>) -> usize {
    use claw_protocol::messages::EventBody;
    use rand::SeedableRng;
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let (mut number, mut acted) = (0u64, 0usize);
    // Auto actions the dealer took for this seat, and refusals excused by
    // them (an answer to a turn the dealer had just taken over).
    let (mut seat, mut taken, mut excused) = (None, 0usize, 0usize);
    loop {
        let m = c.recv().await.expect("the dealer keeps the connection");
        answer_votes(c, &m).await;
        match m {
            ServerMessage::Event(e) => match e.decode_body().unwrap() {
                EventBody::HandPrepare(p) => {
                    number = p.hand_number;
                    if p.players.contains(&c.id()) && seeded.insert(e.hand_id) {
                        c.seed(e.hand_id).await;
                    }
                }
                EventBody::GameStart(g) => {
                    seat =
                        g.players.iter().position(|p| p.id == c.id()).map(|i| claw_protocol::Seat(i as u8));
                }
                EventBody::TimeoutAction(t) if Some(t.seat) == seat => taken += 1,
                EventBody::GameEnd(_) => {
                    let r = c.audit(claw_games::registry::get("guandan").unwrap(), false);
                    assert!(r.complete(), "every check ran");
                    if matches!(stop, Stop::GameEndOf(n) if n == number) {
                        return acted;
                    }
                }
                _ => {}
            },
            // Every offered turn is answered, a re-sent one too: the dealer
            // re-sends a turn only while it holds no answer to it (an answer
            // sent just before the drop can be lost with the connection), and
            // a seq past the offer's is accepted (it need only exceed the last
            // accepted one).
            ServerMessage::YourTurn(t) => {
                // At least the offer's seq (an answer the dealer never got
                // left a gap; one sent before a refusal arrived moved it on).
                let next = c.seq.entry(t.hand_id).or_insert(0);
                *next = (*next).max(t.seq);
                let a = pick(&t, &mut rng);
                c.act(t.hand_id, &a).await;
                acted += 1;
                if matches!(stop, Stop::Acted(n) if n == acted) {
                    return acted;
                }
            }
            // Back from away, the re-sent turn may already have run out (the
            // away deadline is short): the dealer took its auto action before
            // this answer arrived, which is then refused (not this seat's
            // turn, or no longer beating the table).
            // The seq is not rewound: an answer sent after the refused one
            // may already have been accepted with a later seq.
            ServerMessage::ActionRejected(_) if excused < taken => {
                excused += 1;
                acted -= 1;
            }
            ServerMessage::ActionRejected(r) => panic!("a legal action was rejected: {r:?}"),
            _ => {}
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_away_guandan_player_is_played_by_the_takeover_then_plays_on() {
    // Seed §七 断线托管: one of four players drops mid-deal; the dealer plays
    // its seat with the games crate's L2 takeover (`timeout-action`, reason
    // `disconnected`, replayed by every auditor as the game's auto action);
    // the deal finishes, the player comes back with its token and plays on.
    use claw_protocol::messages::{EventBody, TimeoutReason};
    const HANDS: u64 = 2;
    let mut room = fast_room("r", "guandan");
    room.max_hands = Some(HANDS);
    room.min_players = 4;
    room.away_timeout = std::time::Duration::from_millis(20);
    let f = Fixture::start(vec![room]).await;
    let g = claw_games::registry::get("guandan").unwrap();
    let mut clients = seat_players(&f, "r", 30, 4).await;
    let mut away = clients.pop().unwrap();
    let others = tokio::spawn(run_bots(clients, g, HANDS as usize));
    // Two turns of the first deal, then the connection drops.
    let mut seeded = HashSet::new();
    bounded(guandan_player(&mut away, Stop::Acted(2), 7, &mut seeded)).await;
    let seat = away
        .events
        .iter()
        .find_map(|e| match e.decode_body() {
            Ok(EventBody::GameStart(g)) => g.players.iter().position(|p| p.id == away.id()),
            _ => None,
        })
        .map(|i| claw_protocol::Seat(i as u8))
        .expect("seated in the first deal");
    let (me, token, seqs, away_seed) =
        (away.me.clone(), away.session.reconnect_token, away.seq.clone(), away.my_seed);
    drop(away);
    tokio::time::sleep(std::time::Duration::from_millis(400)).await;
    let mut back = Client::connect(f.addr(), "r", f.dealer(), me, Some(token)).await.unwrap();
    assert_eq!(back.session.seat, Some(seat), "the seat was kept");
    back.seq = seqs;
    back.my_seed = away_seed;
    let acted = bounded(guandan_player(&mut back, Stop::GameEndOf(HANDS - 1), 8, &mut seeded)).await;
    assert!(acted > 0, "the player acted again after it came back");
    for (_, r) in others.await.unwrap() {
        assert_eq!(r.hands_audited as u64, HANDS);
    }
    f.node.room("r").unwrap().wait_closed().await;
    // The archived deals: the seat's moves while away are the dealer's
    // takeover; nobody else was played for; every deal audits with the replay
    // (which recomputes each timeout action as the game's auto action).
    let files = Archive::reader(f.dir.path(), "r").files();
    assert_eq!(files.len() as u64, HANDS);
    let (mut taken_over, mut own_after, mut away_now) = (0, 0, false);
    for (i, path) in files.iter().enumerate() {
        let text = std::fs::read_to_string(path).unwrap();
        let t = claw_protocol::transcript::Transcript::from_jsonl(&text).unwrap();
        for e in &t.events {
            match e.decode_body().unwrap() {
                EventBody::TimeoutAction(x) => {
                    // Away: `disconnected`; a re-sent turn that ran out just
                    // after the reconnect: `timeout`.
                    assert_eq!(x.seat, seat, "only the away seat is played for");
                    assert!(matches!(x.reason, TimeoutReason::Disconnected | TimeoutReason::Timeout));
                    taken_over += usize::from(x.reason == TimeoutReason::Disconnected);
                    away_now = true;
                }
                EventBody::ActionResult(a) if a.seat == seat => {
                    own_after += usize::from(away_now);
                }
                _ => {}
            }
        }
        let r = claw_games::audit::GamesReplayer::default()
            .with_game(claw_games::registry::get("guandan").unwrap());
        let opts = claw_protocol::audit::AuditOptions {
            dealer: Some(f.dealer()),
            replayer: Some(&r),
            ..Default::default()
        };
        let rep = claw_protocol::audit::audit_jsonl(&text, &opts).unwrap_or_else(|e| panic!("deal {i}: {e}"));
        assert!(rep.complete(), "deal {i}: every check ran");
    }
    assert!(taken_over > 0, "the dealer played the away seat");
    assert!(own_after > 0, "the seat's own signed actions follow the takeover");
}
