//! Room and player lifecycles: reconnects, timeouts, mid-hand joiners,
//! kicks, sit-out, leaving, chips failing mid-hand (refunds), shutdown,
//! crash recovery, key persistence, health and metrics.

use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use claw_chips::{AccountId, AccountOp, ChipError, ChipOp, ChipProvider, IdempotencyKey, LocalChips};
use claw_dealer::{DealerNode, NodeConfig, RoomConfig};
use claw_protocol::handshake::{HandshakeError, RejectReason};
use claw_protocol::messages::{
    ActionRejectCode, ClientMessage, ErrorCode, EventBody, KickReason, PlayerStatus, QueryData, QueryType,
    ServerMessage,
};
use claw_protocol::{Chips, Identity, Seat};
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::common::*;

fn hc(id: &str, min_players: u8) -> RoomConfig {
    let mut r = fast_room(id, "high-card");
    r.min_players = min_players;
    r.entropy = claw_protocol::messages::EntropyMode::Dealer;
    r
}

async fn next_turn(c: &mut Client) -> claw_protocol::messages::YourTurn {
    c.recv_until(|m| match m {
        ServerMessage::YourTurn(t) => Some(t.clone()),
        _ => None,
    })
    .await
}

async fn game_end(c: &mut Client) -> claw_protocol::messages::GameEnd {
    c.recv_until(|m| match m {
        ServerMessage::Event(e) => match e.decode_body().unwrap() {
            EventBody::GameEnd(g) => Some(g),
            _ => None,
        },
        _ => None,
    })
    .await
}

#[tokio::test]
async fn reconnect_within_the_window_resends_cards_and_transcript() {
    let f = Fixture::start(vec![hc("r", 2)]).await;
    let mut a = f.client("r", 1).await;
    let mut b = f.client("r", 2).await;
    assert!(a.join().await.accepted);
    assert!(b.join().await.accepted);
    // a (seat 0) gets its turn, then its connection drops.
    let t = next_turn(&mut a).await;
    let seen = a.events.len();
    assert!(seen >= 3);
    let (me, token) = (a.me.clone(), a.session.reconnect_token);
    drop(a);
    // Back with the token: same seat, the hand from seq 0 with the sealed
    // card, and the turn again.
    let mut a = Client::connect(f.addr(), "r", f.dealer(), me, Some(token)).await.unwrap();
    assert_eq!(a.session.seat, Some(Seat(0)));
    assert_eq!(a.session.reconnect_token, token);
    let t2 = next_turn(&mut a).await;
    assert_eq!(t2.hand_id, t.hand_id);
    assert_eq!(a.events.len(), seen, "the whole transcript so far was re-sent");
    assert_eq!(a.events[0].seq, 0);
    a.act(t2.hand_id, &json!({"type": "bet"})).await;
    let t = next_turn(&mut b).await;
    b.act(t.hand_id, &json!({"type": "bet"})).await;
    game_end(&mut a).await;
    let report = a.audit(claw_engine::testgame::high_card(), false);
    assert_eq!(report.hand.my_cards.len(), 1, "a opened its re-sent sealed card");
}

#[tokio::test]
async fn reconnect_after_the_window_starts_over() {
    let mut r = hc("r", 3);
    r.reconnect_window = Duration::from_millis(100);
    let f = Fixture::start(vec![r]).await;
    let mut a = f.client("r", 1).await;
    assert!(a.join().await.accepted);
    let mut watcher = f.client("r", 9).await;
    let (me, token) = (a.me.clone(), a.session.reconnect_token);
    drop(a);
    // Wait until the room says the player is gone.
    loop {
        let ServerMessage::QueryResult(r) = watcher.query(QueryType::RoomState, "w").await else { panic!() };
        let QueryData::RoomState { players, .. } = r.data else { panic!() };
        if !players.iter().any(|p| p.id == me.id()) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let mut a = Client::connect(f.addr(), "r", f.dealer(), me, Some(token)).await.unwrap();
    assert_eq!(a.session.seat, None, "the seat was released");
    assert_ne!(a.session.reconnect_token, token, "a new session");
    assert!(a.join().await.accepted);
}

#[tokio::test]
async fn action_timeout_takes_the_auto_action() {
    let mut r = hc("r", 2);
    r.action_timeout = Duration::from_millis(50);
    r.max_hands = Some(1);
    let f = Fixture::start(vec![r]).await;
    let mut a = f.client("r", 1).await;
    let mut b = f.client("r", 2).await;
    assert!(a.join().await.accepted);
    assert!(b.join().await.accepted);
    // Nobody acts: both fold by timeout.
    let mut timeouts = Vec::new();
    loop {
        let m = b.recv().await.expect("open");
        if let ServerMessage::Event(e) = &m {
            match e.decode_body().unwrap() {
                EventBody::TimeoutAction(t) => {
                    assert_eq!(t.action, json!({"type": "fold"}));
                    assert_eq!(t.reason, claw_protocol::messages::TimeoutReason::Timeout);
                    timeouts.push(t.seat);
                }
                EventBody::GameEnd(_) => break,
                _ => {}
            }
        }
    }
    assert_eq!(timeouts, vec![Seat(0), Seat(1)]);
    b.audit(claw_engine::testgame::high_card(), false);
    // Everyone folded: the antes came back.
    assert_eq!(f.balance(&a.id()).await, 10_000);
    let _ = a.recv().await;
}

#[tokio::test]
async fn mid_hand_joiners_wait_for_the_next_hand() {
    let mut r = hc("r", 2);
    r.max_hands = Some(2);
    let f = Fixture::start(vec![r]).await;
    let mut a = f.client("r", 1).await;
    let mut b = f.client("r", 2).await;
    assert!(a.join().await.accepted);
    assert!(b.join().await.accepted);
    let t = next_turn(&mut a).await;
    let mut c = f.client("r", 3).await;
    let j = c.join().await;
    assert!(j.accepted);
    assert!(j.message.unwrap_or_default().contains("next"));
    a.act(t.hand_id, &json!({"type": "fold"})).await;
    let t = next_turn(&mut b).await;
    b.act(t.hand_id, &json!({"type": "fold"})).await;
    // c's first event is the next hand's hand-prepare, listing c.
    let first = c
        .recv_until(|m| match m {
            ServerMessage::Event(e) => Some(e.clone()),
            _ => None,
        })
        .await;
    assert_eq!(first.seq, 0);
    let EventBody::HandPrepare(p) = first.decode_body().unwrap() else { panic!("hand-prepare first") };
    assert_ne!(first.hand_id, t.hand_id);
    assert!(p.players.contains(&c.id()));
}

#[tokio::test]
async fn players_who_cannot_cover_the_minimum_are_kicked() {
    let mut r = hc("r", 3);
    r.min_bet = Chips(50);
    r.commission = Chips(5);
    let f = Fixture::start(vec![r]).await;
    let mut v = seat_players(&f, "r", 1, 3).await;
    // Hand 1: the third player's chips are spent elsewhere meanwhile.
    let acct = AccountId::from(v[2].id());
    let t = next_turn(&mut v[0]).await;
    let have = f.balance(&v[2].id()).await;
    f.chips.debit(&IdempotencyKey::new("drain").unwrap(), &acct, Chips(have - 10), "drain").await.unwrap();
    v[0].act(t.hand_id, &json!({"type": "fold"})).await;
    let t = next_turn(&mut v[1]).await;
    v[1].act(t.hand_id, &json!({"type": "fold"})).await;
    let t = next_turn(&mut v[2]).await;
    v[2].act(t.hand_id, &json!({"type": "fold"})).await;
    // Hand 2 starts by kicking it (its commission is given back).
    let k = v[2]
        .recv_until(|m| match m {
            ServerMessage::Kicked(k) => Some(k.clone()),
            _ => None,
        })
        .await;
    assert_eq!(k.code, KickReason::InsufficientBalance);
    assert_eq!(f.balance(&v[2].id()).await, 11, "10 left, the ante back (all folded), the commission back");
    let ServerMessage::QueryResult(r) = v[0].query(QueryType::RoomState, "rs").await else { panic!() };
    let QueryData::RoomState { players, .. } = r.data else { panic!() };
    assert_eq!(players.len(), 2);
}

#[tokio::test]
async fn join_is_refused_below_the_buy_in_and_when_full() {
    let mut r = hc("r", 8);
    r.buy_in = Chips(20_000);
    let mut small = hc("s", 2);
    small.max_players = 2;
    let f = Fixture::start(vec![r, small]).await;
    let mut a = f.client("r", 1).await;
    let j = a.join().await;
    assert!(!j.accepted);
    assert_eq!(j.reason, Some(claw_protocol::messages::JoinRejectReason::InsufficientBalance));
    let mut room_s = Vec::new();
    for i in 0..2 {
        let mut c = f.client("s", 10 + i).await;
        assert!(c.join().await.accepted);
        room_s.push(c);
    }
    let mut late = f.client("s", 20).await;
    let j = late.join().await;
    assert_eq!(j.reason, Some(claw_protocol::messages::JoinRejectReason::RoomFull));
}

#[tokio::test]
async fn sit_out_skips_hands_and_leaving_mid_hand_costs_credit() {
    let mut r = hc("r", 2);
    r.max_hands = Some(3);
    let f = Fixture::start(vec![r]).await;
    let mut a = f.client("r", 1).await;
    let mut b = f.client("r", 2).await;
    let mut c = f.client("r", 3).await;
    assert!(a.join().await.accepted);
    assert!(b.join().await.accepted);
    // Hand 1: a and b. c joins and sits out.
    let t = next_turn(&mut a).await;
    assert!(c.join().await.accepted);
    c.send(ClientMessage::SitOut).await;
    let ServerMessage::QueryResult(r) = c.query(QueryType::MyStatus, "s").await else { panic!() };
    assert!(matches!(r.data, QueryData::MyStatus { status: PlayerStatus::SitOut, .. }));
    // a leaves mid-hand: the hand plays on with its auto action.
    a.send(ClientMessage::Leave).await;
    let t2 = next_turn(&mut b).await;
    assert_eq!(t2.hand_id, t.hand_id);
    b.act(t2.hand_id, &json!({"type": "bet"})).await;
    let end = game_end(&mut b).await;
    assert_eq!(end.result.winners, vec![Seat(1)]);
    let timeouts: Vec<_> = b
        .events
        .iter()
        .filter_map(|e| match e.decode_body().unwrap() {
            EventBody::TimeoutAction(t) => Some(t.reason.to_string()),
            _ => None,
        })
        .collect();
    assert_eq!(timeouts, vec!["left".to_owned()]);
    b.audit(claw_engine::testgame::high_card(), false);
    // c sits in: hand 2 is b and c.
    c.send(ClientMessage::SitIn).await;
    let p = c
        .recv_until(|m| match m {
            ServerMessage::Event(e) => match e.decode_body().unwrap() {
                EventBody::HandPrepare(p) => Some(p),
                _ => None,
            },
            _ => None,
        })
        .await;
    assert_eq!(p.players, vec![b.id(), c.id()]);
    // a comes back later as a new session with a lower credit score.
    let mut a2 = f.client("r", 1).await;
    assert!(a2.join().await.accepted);
    let ServerMessage::QueryResult(r) = a2.query(QueryType::MyStatus, "cs").await else { panic!() };
    let QueryData::MyStatus { credit_score, .. } = r.data else { panic!() };
    assert_eq!(credit_score, 90, "leaving mid-hand cost credit, kept across sessions");
}

/// Local chips that can be told to fail: 1 = the next `lost` debits for
/// bets are applied but their answer is lost (timeout), 2 = every call is
/// unreachable.
struct Flaky {
    inner: LocalChips,
    mode: AtomicU8,
    lost: std::sync::atomic::AtomicU32,
}

#[async_trait]
impl ChipProvider for Flaky {
    fn name(&self) -> &'static str {
        "flaky"
    }
    async fn balance(&self, a: &AccountId) -> Result<Chips, ChipError> {
        if self.mode.load(Ordering::SeqCst) == 2 {
            return Err(ChipError::Unreachable("down".into()));
        }
        self.inner.balance(a).await
    }
    async fn debit(&self, k: &IdempotencyKey, a: &AccountId, x: Chips, m: &str) -> Result<Chips, ChipError> {
        match self.mode.load(Ordering::SeqCst) {
            1 if m == "bet" && self.lost.load(Ordering::SeqCst) > 0 => {
                self.lost.fetch_sub(1, Ordering::SeqCst);
                let _ = self.inner.debit(k, a, x, m).await;
                Err(ChipError::Timeout)
            }
            2 => Err(ChipError::Unreachable("down".into())),
            _ => self.inner.debit(k, a, x, m).await,
        }
    }
    async fn credit(&self, k: &IdempotencyKey, a: &AccountId, x: Chips, m: &str) -> Result<Chips, ChipError> {
        if self.mode.load(Ordering::SeqCst) == 2 {
            return Err(ChipError::Unreachable("down".into()));
        }
        self.inner.credit(k, a, x, m).await
    }
    async fn settle(&self, k: &IdempotencyKey, ops: &[AccountOp]) -> Result<(), ChipError> {
        self.inner.settle(k, ops).await
    }
}

#[async_trait]
impl claw_dealer::chips::Grants for Flaky {
    async fn grant(
        &self,
        _k: &IdempotencyKey,
        a: &AccountId,
        x: Chips,
        _m: &str,
    ) -> Result<Chips, ChipError> {
        self.inner.grant(a, x).await
    }
}

#[tokio::test]
async fn a_chip_failure_mid_hand_voids_it_with_refunds() {
    let flaky = Arc::new(Flaky { inner: LocalChips::new(), mode: AtomicU8::new(0), lost: 0.into() });
    let mut r = hc("r", 2);
    r.commission = Chips(3);
    // Voided hands do not count: one settled hand, then the room closes.
    r.max_hands = Some(1);
    let fl = flaky.clone();
    let f = Fixture::start_with(
        vec![r],
        |mut c| {
            c.limits.chip_attempts = 2;
            c
        },
        move |b| b.chips(fl.clone()).grants(fl, Chips(10_000)),
    )
    .await;
    let mut a = f.client("r", 1).await;
    let mut b = f.client("r", 2).await;
    assert!(a.join().await.accepted);
    assert!(b.join().await.accepted);
    let ida = AccountId::from(a.id());
    let idb = AccountId::from(b.id());
    let t = next_turn(&mut a).await;
    let first = t.hand_id;
    // Antes and commission are taken.
    assert_eq!(flaky.inner.balance(&ida).await.unwrap(), Chips(10_000 - 3 - 1));
    // Every attempt of the bet's debit (2) loses its answer: the outcome is
    // unknown, the hand is voided; the refund asks again and succeeds.
    flaky.lost.store(2, Ordering::SeqCst);
    flaky.mode.store(1, Ordering::SeqCst);
    a.act(t.hand_id, &json!({"type": "bet"})).await;
    let e = a
        .recv_until(|m| match m {
            ServerMessage::Error(e) => Some(e.clone()),
            _ => None,
        })
        .await;
    assert_eq!(e.code, ErrorCode::Internal);
    assert!(e.message.contains("voided"), "{}", e.message);
    flaky.mode.store(0, Ordering::SeqCst);
    // Every chip of the hand is back, commission included (the refund runs
    // beside the frame that tells of the void: wait for it, within the guard).
    let refunded = async {
        while flaky.inner.balance(&ida).await.unwrap() != Chips(10_000)
            || flaky.inner.balance(&idb).await.unwrap() != Chips(10_000)
        {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    };
    tokio::time::timeout(GUARD, refunded).await.expect("guard: the void's refund");
    assert_eq!(flaky.inner.balance(&ida).await.unwrap(), Chips(10_000));
    assert_eq!(flaky.inner.balance(&idb).await.unwrap(), Chips(10_000));
    assert_eq!(flaky.inner.total().await, 20_000);
    // The room goes on: the next hand is played and settled.
    let t = next_turn(&mut a).await;
    assert_ne!(t.hand_id, first);
    a.act(t.hand_id, &json!({"type": "fold"})).await;
    let t = next_turn(&mut b).await;
    b.act(t.hand_id, &json!({"type": "fold"})).await;
    game_end(&mut b).await;
    f.node.room("r").unwrap().wait_closed().await;
    let dealer = AccountId::new(format!("dealer:{}", f.dealer())).unwrap();
    assert_eq!(flaky.inner.balance(&dealer).await.unwrap(), Chips(6), "commission of the settled hand");
    assert_eq!(flaky.inner.total().await, 20_000);
    let m = f.node.metrics();
    assert_eq!(m.hands_voided.load(Ordering::Relaxed), 1);
}

#[tokio::test]
async fn a_refused_debit_rejects_the_action_and_the_hand_goes_on() {
    let f = Fixture::start(vec![hc("r", 2)]).await;
    let mut a = f.client("r", 1).await;
    let mut b = f.client("r", 2).await;
    assert!(a.join().await.accepted);
    assert!(b.join().await.accepted);
    let t = next_turn(&mut a).await;
    // a's chips are spent elsewhere (another room) during the hand.
    let acct = AccountId::from(a.id());
    let left = f.balance(&a.id()).await;
    f.chips
        .debit(&IdempotencyKey::new("elsewhere").unwrap(), &acct, Chips(left), "other room")
        .await
        .unwrap();
    a.act(t.hand_id, &json!({"type": "bet"})).await;
    let r = a
        .recv_until(|m| match m {
            ServerMessage::ActionRejected(r) => Some(r.clone()),
            _ => None,
        })
        .await;
    assert_eq!(r.code, ActionRejectCode::BadAmount);
    assert!(r.reason.contains("insufficient"), "{}", r.reason);
    // Still a's turn; folding works; the hand ends and audits.
    let t2 = next_turn(&mut a).await;
    assert_eq!(t2.hand_id, t.hand_id);
    a.act(t2.hand_id, &json!({"type": "fold"})).await;
    let t3 = next_turn(&mut b).await;
    b.act(t3.hand_id, &json!({"type": "bet"})).await;
    game_end(&mut b).await;
    b.audit(claw_engine::testgame::high_card(), false);
}

#[tokio::test]
async fn shutdown_voids_the_running_hand_and_refunds() {
    let mut r = hc("r", 2);
    r.commission = Chips(2);
    let f = Fixture::start(vec![r]).await;
    let mut a = f.client("r", 1).await;
    let mut b = f.client("r", 2).await;
    assert!(a.join().await.accepted);
    assert!(b.join().await.accepted);
    let _ = next_turn(&mut a).await;
    let (ida, idb) = (a.id(), b.id());
    let Fixture { node, chips, dir } = f;
    node.shutdown(Duration::ZERO).await;
    let k = a
        .recv_until(|m| match m {
            ServerMessage::Kicked(k) => Some(k.clone()),
            _ => None,
        })
        .await;
    assert_eq!(k.code, KickReason::RoomClosed);
    assert_eq!(chips.balance(&AccountId::from(ida)).await.unwrap(), Chips(10_000));
    assert_eq!(chips.balance(&AccountId::from(idb)).await.unwrap(), Chips(10_000));
    assert!(dir.path().join("rooms/r/transcripts/voided").exists());
}

#[tokio::test]
async fn a_restarted_node_refunds_hands_a_crash_interrupted() {
    let dir = tempfile::tempdir().unwrap();
    let chips = Arc::new(LocalChips::new());
    let p = AccountId::new("a".repeat(64)).unwrap();
    chips.grant(&p, Chips(100)).await.unwrap();
    // A hand that took 30 chips when the previous process died: its
    // journal (begin, intent, status) is on disk, the debit applied.
    {
        use claw_chips::hand_journal::Journal;
        use claw_chips::ledger::{HandOp, JournalLine, OpStatus};
        let key = IdempotencyKey::new("r/deadbeef/0").unwrap();
        chips.debit(&key, &p, Chips(30), "bet").await.unwrap();
        let j = Journal::with_log(&dir.path().join("rooms/r/journal"), "chips.jsonl").unwrap();
        let begin =
            JournalLine::Begin { room: "r".into(), hand_id: "deadbeef".into(), at_ms: 0, hand_number: None };
        let mut f = j.create("deadbeef", &begin).unwrap();
        let op = HandOp {
            n: 0,
            key,
            kind: ChipOp::Debit,
            account: p.clone(),
            amount: Chips(30),
            memo: "bet".into(),
            status: None,
        };
        f.append(&JournalLine::Intent { op }, true).unwrap();
        f.append(&JournalLine::Status { n: 0, status: OpStatus::Done, error: None }, true).unwrap();
    }
    assert_eq!(chips.balance(&p).await.unwrap(), Chips(70));
    let node = DealerNode::builder(NodeConfig::local(dir.path(), vec![hc("r", 2)]))
        .chips(chips.clone())
        .game(claw_engine::testgame::high_card())
        .launch()
        .await
        .unwrap();
    assert_eq!(chips.balance(&p).await.unwrap(), Chips(100));
    let id = node.dealer_id();
    node.shutdown(Duration::ZERO).await;
    // Restarting again moves nothing; the dealer key is the same.
    let node = DealerNode::builder(NodeConfig::local(dir.path(), vec![hc("r", 2)]))
        .chips(chips.clone())
        .game(claw_engine::testgame::high_card())
        .launch()
        .await
        .unwrap();
    assert_eq!(chips.balance(&p).await.unwrap(), Chips(100));
    assert_eq!(node.dealer_id(), id, "the dealer key persists in the data dir");
    let url = node.invite_url("r").unwrap();
    assert_eq!(url, format!("ws://{}/r#{}", node.addr(), id));
    node.shutdown(Duration::ZERO).await;
}

#[tokio::test]
async fn health_and_metrics_over_http() {
    let f = Fixture::start_with(
        vec![hc("r", 2)],
        |mut c| {
            c.http_listen = Some("127.0.0.1:0".parse().unwrap());
            c
        },
        |b| b,
    )
    .await;
    let mut c = f.client("r", 1).await;
    assert!(c.join().await.accepted);
    let http = f.node.http_addr().unwrap();
    let get = |path: &'static str| async move {
        let mut s = tokio::net::TcpStream::connect(http).await.unwrap();
        s.write_all(format!("GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").as_bytes())
            .await
            .unwrap();
        let mut out = String::new();
        tokio::time::timeout(GUARD, s.read_to_string(&mut out)).await.unwrap().unwrap();
        out
    };
    let h = get("/health").await;
    assert!(h.starts_with("HTTP/1.1 200"), "{h}");
    assert!(h.contains("\"status\":\"ok\""));
    let m = get("/metrics").await;
    assert!(m.contains("claw_rooms_open 1"), "{m}");
    assert!(m.contains("claw_players_seated 1"));
    assert!(m.contains("claw_action_latency_seconds_bucket"));
    assert!(!m.contains(&f.dealer().to_string()) || h.contains(&f.dealer().to_string()));
}

#[tokio::test]
async fn a_second_connection_of_a_connected_player_is_refused() {
    let f = Fixture::start(vec![hc("r", 3)]).await;
    let a = f.client("r", 1).await;
    let e = Client::connect(f.addr(), "r", f.dealer(), a.me.clone(), None).await.err().unwrap();
    assert_eq!(e, HandshakeError::Rejected(RejectReason::Refused));
    // With the token the new connection takes over; the old one is told.
    let token = a.session.reconnect_token;
    let mut old = a;
    let _new = Client::connect(f.addr(), "r", f.dealer(), old.me.clone(), Some(token)).await.unwrap();
    let k = old
        .recv_until(|m| match m {
            ServerMessage::Kicked(k) => Some(k.clone()),
            _ => None,
        })
        .await;
    assert_eq!(k.code, KickReason::Replaced);
    let _ = Identity::from_seed([0; 32]);
}

#[tokio::test]
async fn deferred_reveal_is_published_after_the_delay() {
    let mut r = hc("r", 2);
    r.reveal = claw_protocol::messages::RevealPolicy::Deferred;
    r.reveal_delay = Some(Duration::from_millis(50));
    r.max_hands = Some(1);
    r.between_hands = Duration::from_secs(3600);
    let f = Fixture::start(vec![r]).await;
    let mut a = f.client("r", 1).await;
    let mut b = f.client("r", 2).await;
    assert!(a.join().await.accepted);
    assert!(b.join().await.accepted);
    let t = next_turn(&mut a).await;
    a.act(t.hand_id, &json!({"type": "fold"})).await;
    let t = next_turn(&mut b).await;
    b.act(t.hand_id, &json!({"type": "bet"})).await;
    let end = game_end(&mut a).await;
    assert!(end.dealer_seed.is_none(), "seeds held back at hand end");
    assert!(!a.audit(claw_engine::testgame::high_card(), true).complete());
    // The audit-reveal follows on the same chain.
    a.recv_until(|m| match m {
        ServerMessage::Event(e) => {
            matches!(e.decode_body().unwrap(), EventBody::AuditReveal(_)).then_some(())
        }
        _ => None,
    })
    .await;
    assert!(a.audit(claw_engine::testgame::high_card(), false).complete());
    // The archived file has it too.
    let dir = f.dir.path().join("rooms/r/transcripts");
    let file = std::fs::read_dir(&dir).unwrap().flatten().find(|e| e.path().is_file()).unwrap().path();
    let text = std::fs::read_to_string(file).unwrap();
    assert!(text.contains("audit-reveal"));
}
