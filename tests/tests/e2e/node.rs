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

/// A TCP relay in front of the dealer whose dealer-to-player direction can
/// be stalled (what the dealer sends is lost) and whose connections can be
/// cut: a connection that dies silently, then is noticed.
struct Relay {
    addr: std::net::SocketAddr,
    stalled: Arc<std::sync::atomic::AtomicBool>,
    cut: tokio::sync::watch::Sender<u32>,
}

impl Relay {
    async fn start(dealer: std::net::SocketAddr) -> Relay {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let stalled = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let (cut, cuts) = tokio::sync::watch::channel(0u32);
        let st = Arc::clone(&stalled);
        tokio::spawn(async move {
            while let Ok((inbound, _)) = listener.accept().await {
                let Ok(outbound) = tokio::net::TcpStream::connect(dealer).await else { continue };
                let (mut ci, mut co) = inbound.into_split();
                let (mut di, mut dout) = outbound.into_split();
                let (st, mut cuts) = (Arc::clone(&st), cuts.clone());
                cuts.mark_unchanged();
                tokio::spawn(async move {
                    let up = async {
                        let mut b = vec![0u8; 16 * 1024];
                        while let Ok(n @ 1..) = ci.read(&mut b).await {
                            if dout.write_all(&b[..n]).await.is_err() {
                                break;
                            }
                        }
                    };
                    let down = async {
                        let mut b = vec![0u8; 16 * 1024];
                        while let Ok(n @ 1..) = di.read(&mut b).await {
                            if st.load(Ordering::SeqCst) {
                                continue; // lost on the way
                            }
                            if co.write_all(&b[..n]).await.is_err() {
                                break;
                            }
                        }
                    };
                    tokio::select! {
                        _ = up => {}
                        _ = down => {}
                        _ = cuts.changed() => {}
                    }
                });
            }
        });
        Relay { addr, stalled, cut }
    }

    /// Drops every relayed connection and lets frames through again.
    fn cut(&self) {
        self.cut.send_modify(|n| *n += 1);
        self.stalled.store(false, Ordering::SeqCst);
    }
}

/// A player whose network stalls between two hands misses the next hand's
/// seed window: the dealer deals it in without its seed. When its
/// connection is cut and it resumes, the dealer resends that hand; the
/// player does not hold the missing seed against the dealer (it cannot
/// know whether its seed came in time), and every hand audits.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_player_whose_network_stalls_through_the_seed_window_resumes_without_a_false_failure() {
    const HANDS: u64 = 5;
    let mut room = fast_room("r", "texas-holdem");
    room.min_players = 2;
    room.max_players = 2;
    room.between_hands = Duration::from_millis(800);
    room.seed_timeout = Duration::from_millis(300);
    room.entropy = claw_protocol::messages::EntropyMode::Joint;
    room.away_timeout = Duration::from_secs(10); // the stalled hand waits for the resume
    let d = start_dealer(vec![room], 10_000_000).await;
    let direct = d.node.invite_url("r").unwrap();
    let dealer_addr: std::net::SocketAddr =
        direct.trim_start_matches("ws://").split('/').next().unwrap().parse().unwrap();
    let relay = Arc::new(Relay::start(dealer_addr).await);
    let via_relay =
        Invite::parse(&direct.replace(&dealer_addr.to_string(), &relay.addr.to_string())).unwrap();
    let mut staller =
        PlayerNode::connect(&via_relay, Arc::new(Identity::from_seed([41; 32])), NodeConfig::default())
            .await
            .unwrap();
    let others = connect_players(&d.invite("r"), 1, 42, NodeConfig::default()).await;
    let mut others = tokio::spawn(run_bots(others, "texas-holdem", "simple", HANDS, 5));
    let s = claw_player::bots::strategy("texas-holdem", "simple").unwrap();
    let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(3);
    let (ended, failed, resumed) =
        (Arc::new(AtomicU32::new(0)), Arc::new(AtomicU32::new(0)), Arc::new(AtomicU32::new(0)));
    let incomplete = Arc::new(AtomicU32::new(0));
    let (e, f, r, rl, inc) =
        (ended.clone(), failed.clone(), resumed.clone(), Arc::clone(&relay), incomplete.clone());
    let bot = play_bot(&mut staller, s.as_ref(), &mut rng, None, move |ev| match ev {
        NodeEvent::HandEnded { seat: Some(_), audit, .. } => {
            if !audit.ok {
                f.fetch_add(1, Ordering::SeqCst);
            }
            // After the second hand: stall through the next hand's seed
            // window, then cut the connection. Heads-up, the button (small
            // blind, first to act) alternates: in that third hand the
            // staller acts first, so the hand waits for it and is resent.
            if e.fetch_add(1, Ordering::SeqCst) == 1 {
                rl.stalled.store(true, Ordering::SeqCst);
                let rl = Arc::clone(&rl);
                tokio::spawn(async move {
                    tokio::time::sleep(Duration::from_millis(1800)).await;
                    rl.cut();
                });
            }
        }
        NodeEvent::VerificationFailed { check, detail, .. } => {
            eprintln!("stalled player: check {check} failed: {detail}");
            f.fetch_add(1, Ordering::SeqCst);
        }
        NodeEvent::Reconnected { .. } => {
            r.fetch_add(1, Ordering::SeqCst);
        }
        NodeEvent::HandIncomplete { .. } => {
            inc.fetch_add(1, Ordering::SeqCst);
        }
        _ => {}
    });
    let reports = within(120, "stall test", async {
        tokio::select! {
            r = bot => panic!("the stalling player stopped first: {r:?}"),
            o = &mut others => o.unwrap(),
        }
    })
    .await;
    staller.close().await;
    assert!(reports[0].failures.is_empty(), "{:?}", reports[0].failures);
    assert_eq!(resumed.load(Ordering::SeqCst), 1, "the cut connection resumed once");
    assert_eq!(failed.load(Ordering::SeqCst), 0, "no check failed at the stalled player");
    assert_eq!(incomplete.load(Ordering::SeqCst), 0, "the stalled hand was resent and ended at the player");
    let ended = ended.load(Ordering::SeqCst);
    assert!(ended >= 4, "it played on after resuming: {ended} hands ended");
    // The scenario happened: a hand dealt the staller in without its seed.
    let staller_id = Identity::from_seed([41; 32]).id();
    let dir = d.dir.path().join("rooms/r/transcripts");
    let mut seedless = 0;
    for f in std::fs::read_dir(&dir).unwrap().flatten().filter(|f| f.path().is_file()) {
        let t =
            claw_protocol::transcript::Transcript::from_jsonl(&std::fs::read_to_string(f.path()).unwrap())
                .unwrap();
        for ev in &t.events {
            if let Ok(claw_protocol::messages::EventBody::GameStart(g)) = ev.decode_body() {
                let seat = g.players.iter().position(|p| p.id == staller_id);
                if let Some(seat) = seat {
                    if !g.player_seeds.iter().any(|s| s.seat.index() == seat) {
                        seedless += 1;
                    }
                }
            }
        }
    }
    assert_eq!(seedless, 1, "exactly the stalled hand lacks the staller's seed");
    d.stop().await;
}
