//! The player node against a real dealer (and a silent fake one): the
//! dealer key pinned by the invite, queries matched by nonce with a
//! timeout, and reconnecting after a dropped connection.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::Duration;

use claw_e2e::harness::*;
use claw_player::node::{NodeConfig, NodeError, NodeEvent, PlayerNode};
use claw_player::play::play_bot;
use claw_player::Invite;
use claw_protocol::handshake::{ChallengeBook, HandshakeError, ServerHandshake};
use claw_protocol::messages::{
    decode_client, ClientMessage, JoinResponse, QueryData, QueryResult, QueryType, RawJson, ServerMessage,
};
use claw_protocol::{Chips, Identity};
use futures_util::{SinkExt, StreamExt};
use rand::rngs::OsRng;
use rand_chacha::rand_core::SeedableRng;
use tokio_tungstenite::tungstenite::Message;

fn unix_ms() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_millis() as u64
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dealer_with_another_key_is_refused() {
    let d = start_dealer(vec![fast_room("r", "texas-holdem")], 1_000_000).await;
    let good = d.invite("r");
    let other = Identity::from_seed([42; 32]).id();
    let bad = Invite { dealer: other, ..good.clone() };
    let me = Arc::new(Identity::from_seed([1; 32]));
    match PlayerNode::connect(&bad, me.clone(), NodeConfig::default()).await {
        Err(NodeError::Handshake(HandshakeError::DealerKeyMismatch { expected, got })) => {
            assert_eq!(expected, other);
            assert_eq!(got, d.node.dealer_id());
        }
        Err(e) => panic!("wrong error: {e}"),
        Ok(_) => panic!("connected to a dealer with another key"),
    }
    // The right key works.
    let node = PlayerNode::connect(&good, me, NodeConfig::default()).await.unwrap();
    node.close().await;
    d.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_query_is_answered() {
    let d = start_dealer(vec![fast_room("r", "blackjack")], 1_000_000).await;
    let nodes = connect_players(&d.invite("r"), 1, 5, NodeConfig::default()).await;
    let node = &nodes[0];
    match node.query(QueryType::MyBalance).await.unwrap() {
        QueryData::MyBalance { balance } => assert!(balance > Chips(0)),
        other => panic!("{other:?}"),
    }
    assert!(matches!(node.query(QueryType::RoomState).await.unwrap(), QueryData::RoomState { .. }));
    assert!(matches!(node.query(QueryType::TableState).await.unwrap(), QueryData::TableState { .. }));
    match node.query(QueryType::RoomConfig).await.unwrap() {
        QueryData::RoomConfig { config } => assert_eq!(config.game, "blackjack"),
        other => panic!("{other:?}"),
    }
    match node.query(QueryType::MyStatus).await.unwrap() {
        QueryData::MyStatus { seat, .. } => assert_eq!(seat, node.state().seat),
        other => panic!("{other:?}"),
    }
    assert!(matches!(node.query(QueryType::Unknown).await, Err(NodeError::Query { .. })));
    // Several queries in flight at once are matched by their nonces.
    let h = node.handle();
    let (a, b, c) = tokio::join!(
        h.query(QueryType::MyBalance),
        h.query(QueryType::RoomConfig),
        h.query(QueryType::MyStatus)
    );
    assert!(matches!(a.unwrap(), QueryData::MyBalance { .. }));
    assert!(matches!(b.unwrap(), QueryData::RoomConfig { .. }));
    assert!(matches!(c.unwrap(), QueryData::MyStatus { .. }));
    for n in nodes {
        n.close().await;
    }
    d.stop().await;
}

/// A dealer that completes the handshake and the join, then answers
/// queries only with a wrong nonce (`my-balance`) or correctly (`room-state`).
async fn silent_dealer(dealer: Arc<Identity>) -> (Invite, tokio::task::JoinHandle<()>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let invite = Invite::parse(&format!("ws://{addr}/quiet#{}", dealer.id())).unwrap();
    let task = tokio::spawn(async move {
        let (tcp, _) = listener.accept().await.unwrap();
        let mut ws = tokio_tungstenite::accept_async(tcp).await.unwrap();
        let mut hs = ServerHandshake::new(dealer, "quiet", RawJson::from_string("{}".into()).unwrap());
        let mut book = ChallengeBook::new();
        while let Some(Ok(Message::Text(t))) = ws.next().await {
            let reply = match decode_client(t.as_str()).unwrap() {
                ClientMessage::Hello(h) => {
                    ServerMessage::Challenge(hs.on_hello(&h, unix_ms(), &mut OsRng).unwrap())
                }
                ClientMessage::Response(r) => {
                    hs.on_response(&r, unix_ms(), &mut book).unwrap();
                    ServerMessage::Accepted(hs.accept(None, None, unix_ms(), &mut OsRng).unwrap())
                }
                ClientMessage::JoinRequest(_) => ServerMessage::JoinResponse(JoinResponse {
                    accepted: true,
                    reason: None,
                    message: None,
                    seat: None,
                    room: None,
                    players: Vec::new(),
                }),
                ClientMessage::Query(q) if q.query_type == QueryType::MyBalance => {
                    ServerMessage::QueryResult(QueryResult {
                        nonce: format!("{}-not-yours", q.nonce),
                        data: QueryData::MyBalance { balance: Chips(1) },
                    })
                }
                ClientMessage::Query(q) => ServerMessage::QueryResult(QueryResult {
                    nonce: q.nonce,
                    data: QueryData::TableState { hand_id: None, public_state: None },
                }),
                _ => continue,
            };
            ws.send(Message::text(reply.encode().unwrap())).await.unwrap();
        }
    });
    (invite, task)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_query_without_its_answer_times_out() {
    let dealer = Arc::new(Identity::from_seed([9; 32]));
    let (invite, task) = silent_dealer(dealer).await;
    let config = NodeConfig { query_timeout: Duration::from_millis(300), ..NodeConfig::default() };
    let node = PlayerNode::connect(&invite, Arc::new(Identity::from_seed([3; 32])), config).await.unwrap();
    // The answer carries another nonce: it is not ours, so the query times out.
    match node.query(QueryType::MyBalance).await {
        Err(NodeError::Timeout("query")) => {}
        other => panic!("expected a timeout, got {other:?}"),
    }
    // A matching answer is delivered.
    assert!(matches!(node.query(QueryType::TableState).await.unwrap(), QueryData::TableState { .. }));
    // The default timeout is the protocol's 5 s.
    assert_eq!(NodeConfig::default().query_timeout, Duration::from_secs(5));
    node.close().await;
    task.abort();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reconnect_after_a_dropped_connection() {
    const HANDS: u64 = 12;
    let mut room = fast_room("r", "texas-holdem");
    room.min_players = 3;
    let d = start_dealer(vec![room], 10_000_000).await;
    let mut nodes = connect_players(&d.invite("r"), 3, 7, NodeConfig::default()).await;
    let mut dropper = nodes.remove(0);
    let mut others = tokio::spawn(run_bots(nodes, "texas-holdem", "simple", HANDS, 7));
    let handle = dropper.handle();
    let drops = Arc::new(AtomicU32::new(0));
    let (disconnects, reconnects) = (Arc::new(AtomicU32::new(0)), Arc::new(AtomicU32::new(0)));
    let s = claw_player::bots::strategy("texas-holdem", "simple").unwrap();
    let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(1);
    let (ok, bad, incomplete) =
        (Arc::new(AtomicU32::new(0)), Arc::new(AtomicU32::new(0)), Arc::new(AtomicU32::new(0)));
    let (dr, dc, rc) = (drops.clone(), disconnects.clone(), reconnects.clone());
    let (okc, badc, incc) = (ok.clone(), bad.clone(), incomplete.clone());
    // The dropper plays until the two others have played their hands. Its
    // connection drops mid-hand (right after its cards are dealt) in three
    // hands; a hand whose end passes while it is away is reported as
    // incomplete, every other one must audit OK.
    let bot = play_bot(&mut dropper, s.as_ref(), &mut rng, None, move |e| match e {
        NodeEvent::Dealt { my_cards, .. } if !my_cards.is_empty() => {
            let n = dr.fetch_add(1, Ordering::SeqCst);
            if n % 3 == 1 && n < 9 {
                let h = handle.clone();
                tokio::spawn(async move { h.drop_connection().await });
            }
        }
        NodeEvent::Disconnected { .. } => {
            dc.fetch_add(1, Ordering::SeqCst);
        }
        NodeEvent::Reconnected { .. } => {
            rc.fetch_add(1, Ordering::SeqCst);
        }
        NodeEvent::HandEnded { seat: Some(_), audit, .. } => {
            if audit.ok { &okc } else { &badc }.fetch_add(1, Ordering::SeqCst);
        }
        NodeEvent::VerificationFailed { .. } => {
            badc.fetch_add(1, Ordering::SeqCst);
        }
        NodeEvent::HandIncomplete { .. } => {
            incc.fetch_add(1, Ordering::SeqCst);
        }
        _ => {}
    });
    let others = within(300, "reconnect test", async {
        tokio::select! {
            r = bot => panic!("the dropper stopped first: {r:?}"),
            o = &mut others => o.unwrap(),
        }
    })
    .await;
    let state = dropper.state();
    dropper.close().await;
    for r in &others {
        assert!(r.failures.is_empty(), "{:?}", r.failures);
        assert_eq!(r.audited_ok, HANDS, "{r:?}");
    }
    let (dc, rc) = (disconnects.load(Ordering::SeqCst), reconnects.load(Ordering::SeqCst));
    assert!(dc >= 2, "the connection was dropped {dc} times");
    assert!(rc == dc || rc + 1 == dc, "{dc} disconnects, {rc} reconnects");
    assert!(state.seat.is_some(), "still seated after the reconnects");
    let (ok, bad, incomplete) =
        (ok.load(Ordering::SeqCst), bad.load(Ordering::SeqCst), incomplete.load(Ordering::SeqCst));
    assert_eq!(bad, 0, "failed checks");
    assert!(incomplete <= dc, "{incomplete} incomplete hands for {dc} drops");
    assert!(u64::from(ok + incomplete) >= HANDS - 1, "{ok} audited + {incomplete} incomplete of {HANDS}");
    d.stop().await;
}
