//! Denial of service by players who are inside (or at the door), each
//! attack over real sockets: idle authenticated connections, a flood of
//! sockets from one address, a frozen client, a flood of binary frames.
//! docs/security.md lists the defences.

use std::net::SocketAddr;
use std::sync::atomic::Ordering;
use std::time::Duration;

use claw_dealer::RoomConfig;
use claw_protocol::handshake::{HandshakeError, RejectReason};
use claw_protocol::messages::{
    ClientMessage, EntropyMode, EventBody, KickReason, PlayerStatus, QueryData, QueryType, ServerMessage,
};
use futures_util::{SinkExt, StreamExt};
use tokio::io::AsyncReadExt;
use tokio::net::{TcpSocket, TcpStream};
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::Message;

use crate::common::*;

/// Receives until the dealer sends `kicked`; its code.
async fn kicked_code(c: &mut Client) -> KickReason {
    c.recv_until(|m| match m {
        ServerMessage::Kicked(k) => Some(k.code),
        _ => None,
    })
    .await
}

#[tokio::test]
async fn idle_authenticated_connections_cannot_lock_a_room() {
    let mut r = RoomConfig::new("a", "high-card");
    r.min_players = 3;
    let rooms = vec![r, RoomConfig::new("b", "high-card"), RoomConfig::new("c", "high-card")];
    let f = Fixture::start_with(
        rooms,
        |mut c| {
            c.limits.max_watchers = 8;
            c.limits.idle_timeout = Duration::from_secs(3);
            c.limits.max_conns_per_identity = 2;
            c
        },
        |b| b,
    )
    .await;
    let mut seated = f.client("a", 1).await;
    assert!(seated.join().await.accepted);
    // Eight identities connect and do nothing: the watchers' budget is full.
    let mut idle = Vec::new();
    for i in 0..8 {
        idle.push(f.client("a", 100 + i).await);
    }
    // An honest newcomer still gets in (the longest-idle watcher makes
    // room) and takes a seat.
    let mut honest = f.client("a", 2).await;
    let j = honest.join().await;
    assert!(j.accepted, "{j:?}");
    // Every idle connection is kicked (`idle`) and closed: one to make room,
    // the others after the idle timeout.
    for c in &mut idle {
        assert_eq!(kicked_code(c).await, KickReason::Idle);
        while c.recv().await.is_some() {}
    }
    // The seats were never touched.
    let ServerMessage::QueryResult(q) = seated.query(QueryType::RoomState, "seats").await else {
        panic!("no answer")
    };
    let QueryData::RoomState { players, .. } = q.data else { panic!() };
    assert_eq!(players.iter().filter(|p| p.status == PlayerStatus::Seated).count(), 2, "{players:?}");
    assert!(f.node.metrics().kicked_idle.load(Ordering::Relaxed) >= 8);
    // One identity holds at most two connections on the node.
    let me = std::sync::Arc::new(claw_protocol::Identity::from_seed([50; 32]));
    let _b = Client::connect(f.addr(), "b", f.dealer(), me.clone(), None).await.unwrap();
    let _c = Client::connect(f.addr(), "c", f.dealer(), me.clone(), None).await.unwrap();
    let e = Client::connect(f.addr(), "a", f.dealer(), me, None).await.err().expect("a third connection");
    assert_eq!(e, HandshakeError::Rejected(RejectReason::Busy));
}

/// A TCP connection to `to` from the loopback address `from`.
async fn tcp_from(from: [u8; 4], to: SocketAddr) -> std::io::Result<TcpStream> {
    let s = TcpSocket::new_v4()?;
    s.bind(SocketAddr::from((from, 0)))?;
    s.connect(to).await
}

#[tokio::test]
async fn one_address_cannot_close_the_node_to_others() {
    let f = Fixture::start_with(
        vec![RoomConfig::new("a", "high-card")],
        |mut c| {
            c.limits.max_connections = 40;
            c.limits.max_conns_per_addr = 10;
            c.limits.max_handshakes_per_addr = 10;
            c
        },
        |b| b,
    )
    .await;
    // 127.0.0.2 opens 200 idle sockets (far beyond the node's cap of 40).
    let mut flood = Vec::new();
    for _ in 0..200 {
        if let Ok(s) = tcp_from([127, 0, 0, 2], f.addr()).await {
            flood.push(s);
        }
    }
    assert!(flood.len() >= 150, "the attacker opened its sockets ({})", flood.len());
    // Those beyond its address's limit are closed at once.
    let mut last = flood.pop().unwrap();
    let mut buf = [0u8; 16];
    let n = tokio::time::timeout(GUARD, last.read(&mut buf)).await.expect("guard: closed").unwrap_or(0);
    assert_eq!(n, 0, "closed without an answer");
    // A WebSocket from the flooding address is refused too.
    let tcp = tcp_from([127, 0, 0, 2], f.addr()).await.unwrap();
    let r = tokio_tungstenite::client_async(format!("ws://{}/a", f.addr()), tcp).await;
    assert!(r.is_err(), "the flooding address is over its limit");
    // An honest player on another address is served.
    let mut c = f.client("a", 3).await;
    assert!(c.join().await.accepted);
    assert!(f.node.metrics().connections_refused_addr.load(Ordering::Relaxed) >= 150);
    drop(flood);
}

#[tokio::test]
async fn a_frozen_client_is_away_and_its_turn_is_short() {
    let mut r = RoomConfig::new("a", "high-card");
    r.min_players = 2;
    r.entropy = EntropyMode::Dealer;
    // Far beyond the test's guard: a turn that waits this long fails it.
    r.action_timeout = Duration::from_secs(300);
    r.away_timeout = Duration::from_millis(100);
    let f = Fixture::start_with(
        vec![r],
        |mut c| {
            c.limits.ping_interval = Duration::from_millis(200);
            c
        },
        |b| b,
    )
    .await;
    let mut frozen = f.client("a", 70).await;
    assert!(frozen.join().await.accepted);
    let frozen_id = frozen.id();
    // `frozen` reads (and so answers pings) until the hand is prepared.
    let reader = tokio::spawn(async move {
        frozen.recv_until(|m| matches!(m, ServerMessage::Event(e) if e.seq == 0).then_some(())).await;
        frozen
    });
    let mut b = f.client("a", 71).await;
    assert!(b.join().await.accepted);
    // From here on `frozen` reads nothing (a stopped process): no pong.
    let frozen = reader.await.unwrap();
    let mut rng = rand::thread_rng();
    let reason = loop {
        match b.recv().await.expect("b stays connected") {
            ServerMessage::YourTurn(t) => {
                let a = pick(&t, &mut rng);
                b.act(t.hand_id, &a).await;
            }
            ServerMessage::Event(e) => {
                if let EventBody::TimeoutAction(t) = e.decode_body().unwrap() {
                    break t.reason;
                }
            }
            _ => {}
        }
    };
    assert_eq!(
        reason,
        claw_protocol::messages::TimeoutReason::Disconnected,
        "the frozen player was away when its turn came"
    );
    let ServerMessage::QueryResult(q) = b.query(QueryType::RoomState, "who").await else { panic!() };
    let QueryData::RoomState { players, .. } = q.data else { panic!() };
    let p = players.iter().find(|p| p.id == frozen_id).expect("the seat is held");
    assert_eq!(p.status, PlayerStatus::Disconnected);
    assert!(f.node.metrics().pongs_missed.load(Ordering::Relaxed) >= 1);
    drop(frozen);
}

#[tokio::test]
async fn a_flood_of_binary_frames_closes_with_1008() {
    let f = Fixture::start(vec![RoomConfig::new("a", "high-card")]).await;
    let mut c = f.client("a", 80).await;
    for _ in 0..80 {
        if c.ws.send(Message::Binary(vec![0xde, 0xad].into())).await.is_err() {
            break;
        }
    }
    let code = loop {
        match tokio::time::timeout(GUARD, c.ws.next()).await.expect("guard: the dealer closes") {
            Some(Ok(Message::Close(f))) => break f.map(|f| f.code),
            Some(Ok(_)) => continue,
            other => panic!("closed without a close frame: {other:?}"),
        }
    };
    assert_eq!(code, Some(CloseCode::Policy));
}

#[tokio::test]
async fn sit_out_squatters_cannot_fill_the_room() {
    let mut r = RoomConfig::new("a", "high-card");
    r.min_players = 3;
    r.max_players = 3;
    r.sit_out_limit = Duration::from_secs(1);
    let f = Fixture::start(vec![r]).await;
    // Three identities take every seat and sit out (at most one of three
    // seats may sit out: each new one frees the one out longest).
    let mut squatters = Vec::new();
    for i in 0..3 {
        let mut c = f.client("a", 90 + i).await;
        assert!(c.join().await.accepted);
        c.send(ClientMessage::SitOut).await;
        squatters.push(c);
    }
    for c in &mut squatters[..2] {
        assert_eq!(kicked_code(c).await, KickReason::Idle);
    }
    let mut honest = f.client("a", 4).await;
    let j = honest.join().await;
    assert!(j.accepted, "{j:?}");
    // The last squatter's seat is freed after the sit-out limit.
    assert_eq!(kicked_code(&mut squatters[2]).await, KickReason::Idle);
    let ServerMessage::QueryResult(q) = honest.query(QueryType::RoomState, "seats").await else { panic!() };
    let QueryData::RoomState { players, .. } = q.data else { panic!() };
    assert_eq!(players.len(), 1, "only the honest player is left: {players:?}");
}

#[tokio::test]
async fn a_refused_rejoin_says_why() {
    let mut r = RoomConfig::new("a", "high-card");
    r.min_players = 3;
    let f = Fixture::start(vec![r]).await;
    let mut a = f.client("a", 60).await;
    assert!(a.join().await.accepted);
    let me = a.me.clone();
    drop(a);
    // The same key without the session's reconnect token, by hand to read
    // the `rejected` frame itself.
    let mut ws = raw_ws(f.addr(), "a").await;
    let (mut hs, hello) = claw_protocol::handshake::ClientHandshake::start(
        me.clone(),
        f.dealer(),
        "a",
        "t",
        None,
        now_ms(),
        &mut rand::rngs::OsRng,
    );
    send_text(&mut ws, ClientMessage::Hello(hello).encode().unwrap()).await;
    let Some(ServerMessage::Challenge(c)) = recv_ws(&mut ws).await else { panic!("challenge") };
    let resp = hs.on_challenge(&c, now_ms()).unwrap();
    send_text(&mut ws, ClientMessage::Response(resp).encode().unwrap()).await;
    let Some(ServerMessage::Rejected(rej)) = recv_ws(&mut ws).await else { panic!("rejected") };
    assert_eq!(hs.on_rejected(&rej), HandshakeError::Rejected(RejectReason::Refused));
    let why = rej.message.expect("a refusal says why");
    assert!(why.contains("reconnect token"), "{why}");
    assert!(why.contains("held for") || why.contains("another connection"), "{why}");
}

/// A fast Hold'em room (hands from four players): bots act at once, the
/// player that stops reading times out quickly (so the table only waits its
/// turns).
fn slow_reader_room() -> RoomConfig {
    let mut r = fast_room("s", "texas-holdem");
    r.min_players = 4;
    r.entropy = EntropyMode::Dealer;
    r.action_timeout = Duration::from_millis(300);
    r.away_timeout = Duration::from_millis(100);
    // The silent reader stays dealt in (the test is about its send budget,
    // not about seats that never act).
    r.timeouts_to_sit_out = 0;
    r
}

/// A node whose connections may have 64 KiB queued (the least allowed) and
/// stay behind for `grace`; pings far apart, so only the budget decides.
async fn budget_fixture(grace: Duration) -> Fixture {
    Fixture::start_with(
        vec![slow_reader_room()],
        |mut c| {
            c.limits.send_budget_bytes = claw_protocol::messages::MAX_FRAME_BYTES;
            c.limits.send_grace = grace;
            c.limits.ping_interval = Duration::from_secs(10);
            c
        },
        |b| b,
    )
    .await
}

/// A seated player over a socket with a small receive buffer (so the
/// dealer's queue, not the kernel, holds what it does not read).
async fn small_buffer_player(f: &Fixture, seed: u8) -> Client {
    let sock = TcpSocket::new_v4().unwrap();
    sock.set_recv_buffer_size(4096).unwrap();
    let tcp = sock.connect(f.addr()).await.unwrap();
    let url = format!("ws://{}/s", f.addr());
    let (ws, _) =
        tokio_tungstenite::client_async(url, tokio_tungstenite::MaybeTlsStream::Plain(tcp)).await.unwrap();
    let me = std::sync::Arc::new(claw_protocol::Identity::from_seed([seed; 32]));
    let mut c = Client::handshake(ws, f.addr(), "s", f.dealer(), me, None).await.unwrap();
    assert!(c.join().await.accepted);
    c
}

/// Waits (bounded by a generous guard) until `counter` is at least 1.
async fn until_counted(counter: &std::sync::atomic::AtomicU64, what: &str) {
    for _ in 0..1200 {
        if counter.load(Ordering::Relaxed) >= 1 {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("guard: {what} never happened");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reader_behind_past_the_grace_is_closed_too_slow_and_the_table_plays_on() {
    let f = budget_fixture(Duration::from_secs(1)).await;
    // Seated first, then it reads nothing more.
    let mut slow = small_buffer_player(&f, 90).await;
    let bots = seat_players(&f, "s", 91, 4).await;
    let game = claw_games::registry::get("texas-holdem").unwrap();
    let playing = tokio::spawn(run_bots(bots, game, 30));
    let m = f.node.metrics();
    until_counted(&m.send_too_slow, "the slow reader closed").await;
    assert!(m.send_behind.load(Ordering::Relaxed) >= 1, "it was behind before it was too slow");
    // Reading again, it gets what was queued before the verdict, then the reason.
    let mut frames = 0usize;
    let close = loop {
        match tokio::time::timeout(GUARD, slow.ws.next()).await.expect("guard: the dealer closes") {
            Some(Ok(Message::Close(c))) => break c,
            Some(Ok(_)) => frames += 1,
            other => panic!("closed without a close frame after {frames} frames: {other:?}"),
        }
    };
    let close = close.expect("a close frame with a reason");
    assert_eq!((close.code, close.reason.as_str()), (CloseCode::Policy, claw_dealer::conn::TOO_SLOW));
    assert!(frames > 0, "what was queued before the verdict came first");
    // The healthy players were never dropped: every bot finishes and
    // audits its 30 hands, and only the slow reader was closed.
    for (_, r) in playing.await.unwrap() {
        assert_eq!(r.hands_audited, 30);
        assert!(!r.kicked);
    }
    assert_eq!(m.send_too_slow.load(Ordering::Relaxed), 1, "only the slow reader was closed");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reader_that_catches_up_within_the_grace_stays() {
    let f = budget_fixture(Duration::from_secs(60)).await;
    let slow = small_buffer_player(&f, 100).await;
    let bots = seat_players(&f, "s", 101, 4).await;
    let game = claw_games::registry::get("texas-holdem").unwrap();
    let playing = tokio::spawn(run_bots(bots, game.clone(), 8));
    let m = f.node.metrics();
    // It stops reading until the dealer counts it behind, then reads again.
    until_counted(&m.send_behind, "the reader fell behind").await;
    let (slow, report) =
        tokio::time::timeout(GUARD * 4, bot(slow, game, 3, 7)).await.expect("guard: the slow reader plays");
    assert_eq!(report.hands_audited, 3, "it caught up and audited whole hands");
    assert!(!report.kicked);
    for (_, r) in playing.await.unwrap() {
        assert_eq!(r.hands_audited, 8);
        assert!(!r.kicked);
    }
    assert_eq!(m.send_too_slow.load(Ordering::Relaxed), 0, "nobody was closed");
    drop(slow);
}

/// A handshake that fails on purpose, after costing the dealer a signed
/// challenge and a signature check: an open socket and a signed hello,
/// made before the storm so that the hellos arrive together.
async fn bogus_handshake(
    addr: SocketAddr,
    dealer: claw_protocol::PlayerId,
    i: u32,
) -> Option<(Ws, claw_protocol::handshake::ClientHandshake, String)> {
    let (ws, _) = tokio_tungstenite::connect_async(format!("ws://{addr}/s")).await.ok()?;
    let mut seed = [7u8; 32];
    seed[..4].copy_from_slice(&i.to_be_bytes());
    let me = std::sync::Arc::new(claw_protocol::Identity::from_seed(seed));
    let (hs, hello) = claw_protocol::handshake::ClientHandshake::start(
        me,
        dealer,
        "s",
        "storm",
        None,
        now_ms(),
        &mut rand::rngs::OsRng,
    );
    Some((ws, hs, ClientMessage::Hello(hello).encode().unwrap()))
}

/// Sends the hello, then a response whose signature is wrong; quietly gives
/// up if the dealer refuses earlier.
async fn storm_one(mut ws: Ws, mut hs: claw_protocol::handshake::ClientHandshake, hello: String) {
    send_text(&mut ws, hello).await;
    let challenge = loop {
        match tokio::time::timeout(GUARD, ws.next()).await {
            Ok(Some(Ok(Message::Text(t)))) => match claw_protocol::messages::decode_server(t.as_str()) {
                Ok(ServerMessage::Challenge(c)) => break c,
                _ => return,
            },
            Ok(Some(Ok(_))) => continue,
            _ => return,
        }
    };
    let Ok(mut resp) = hs.on_challenge(&challenge, now_ms()) else { return };
    resp.sig.0[0] ^= 1;
    send_text(&mut ws, ClientMessage::Response(resp).encode().unwrap()).await;
    while let Ok(Some(Ok(_))) = tokio::time::timeout(GUARD, ws.next()).await {}
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_handshake_storm_drops_no_player_of_a_running_hand_and_an_honest_handshake_completes() {
    const BOGUS: u32 = 300;
    const SILENT: usize = 100;
    let mut room = slow_reader_room();
    // The bots share this process with the storm: turns long enough that
    // only a dropped player would time out.
    room.action_timeout = Duration::from_secs(20);
    let f = Fixture::start_with(
        vec![room],
        |mut c| {
            // The storm comes from one address: lift the per-address limits
            // so that only the node-wide handshake budget meets it.
            c.limits.max_conns_per_addr = 4096;
            c.limits.max_handshakes_per_addr = 4096;
            c.limits.handshake_concurrency = 1;
            c
        },
        |b| b,
    )
    .await;
    let bots = seat_players(&f, "s", 110, 4).await;
    let game = claw_games::registry::get("texas-holdem").unwrap();
    let playing = tokio::spawn(run_bots(bots, game, 12));
    let m = f.node.metrics();
    // Hands are running when the storm starts.
    until_counted(&m.hands_finished, "a hand finished").await;
    // Sockets that upgrade and then say nothing (each holds a handshake
    // slot until its deadline), and handshakes that fail their signature.
    let mut silent = Vec::new();
    for _ in 0..SILENT {
        if let Ok((ws, _)) = tokio_tungstenite::connect_async(format!("ws://{}/s", f.addr())).await {
            silent.push(ws);
        }
    }
    let mut ready = Vec::new();
    for i in 0..BOGUS {
        ready.extend(bogus_handshake(f.addr(), f.dealer(), i).await);
    }
    assert!(ready.len() >= 250, "the storm's sockets opened ({})", ready.len());
    let storm: Vec<_> =
        ready.into_iter().map(|(ws, hs, hello)| tokio::spawn(storm_one(ws, hs, hello))).collect();
    // Once the storm makes handshake steps wait their turn, an honest
    // player connects: its handshake completes within the deadline and it
    // takes a seat.
    until_counted(&m.handshake_steps_queued, "a handshake step waited for its turn").await;
    let mut honest = f.client("s", 120).await;
    let j = honest.join().await;
    assert!(j.accepted, "{j:?}");
    drop(honest);
    let refused = storm.len() as u64;
    for t in storm {
        t.await.unwrap();
    }
    assert!(
        m.handshakes_failed.load(Ordering::Relaxed) >= refused,
        "every bogus handshake was refused ({})",
        m.handshakes_failed.load(Ordering::Relaxed)
    );
    // The running hands lost nobody: every bot plays and audits its hands.
    for (_, r) in playing.await.unwrap() {
        assert_eq!(r.hands_audited, 12);
        assert!(!r.kicked);
    }
    assert_eq!(m.pongs_missed.load(Ordering::Relaxed), 0, "no player missed its heartbeat");
    drop(silent);
}

/// Round 3: idle sockets from many addresses fill the node's handshake
/// budget (8 addresses × 4 = the node's 32), and a sustained stream of new
/// idle sockets from 10 more addresses keeps it full. Honest newcomers from
/// fresh addresses still complete the handshake and sit down: each newcomer
/// closes the oldest pending socket instead of being refused.
#[tokio::test]
async fn a_slow_loris_from_many_addresses_cannot_keep_newcomers_out() {
    let mut r = RoomConfig::new("a", "high-card");
    r.max_players = 8;
    r.min_players = 8; // nobody plays: the test is about the door
    let f = Fixture::start_with(
        vec![r],
        |mut c| {
            c.limits.max_handshakes_per_addr = 4;
            c.limits.max_handshakes = 32;
            c
        },
        |b| b,
    )
    .await;
    let addr = f.addr();
    let mut idle = Vec::new();
    for a in 10..18u8 {
        for _ in 0..4 {
            idle.push(tcp_from([127, 0, 0, a], addr).await.expect("an idle socket"));
        }
    }
    // The flood goes on while the newcomers arrive: a new idle socket every 5 ms.
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let flood = {
        let stop = stop.clone();
        tokio::spawn(async move {
            let mut held = Vec::new();
            let mut n = 0u32;
            while !stop.load(Ordering::Relaxed) && n < 4_000 {
                if let Ok(s) = tcp_from([127, 0, 0, 20 + (n % 10) as u8], addr).await {
                    held.push(s);
                }
                n += 1;
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
            held.len()
        })
    };
    tokio::time::sleep(Duration::from_millis(200)).await;
    for i in 0..8u8 {
        let tcp = tcp_from([127, 0, 0, 40 + i], addr).await.expect("a newcomer's socket");
        let (ws, _) = tokio::time::timeout(
            GUARD,
            tokio_tungstenite::client_async(
                format!("ws://{addr}/a"),
                tokio_tungstenite::MaybeTlsStream::Plain(tcp),
            ),
        )
        .await
        .expect("guard")
        .unwrap_or_else(|e| panic!("newcomer {i} refused during the flood: {e}"));
        let me = std::sync::Arc::new(claw_protocol::Identity::from_seed([150 + i; 32]));
        let mut c = tokio::time::timeout(GUARD, Client::handshake(ws, addr, "a", f.dealer(), me, None))
            .await
            .expect("guard")
            .unwrap_or_else(|e| panic!("newcomer {i}: handshake failed during the flood: {e:?}"));
        assert!(c.join().await.accepted, "newcomer {i} sits down");
    }
    stop.store(true, Ordering::Relaxed);
    let opened = flood.await.unwrap();
    assert!(opened > 20, "the flood went on ({opened} sockets)");
    // The first idle sockets were closed to make room.
    let mut buf = [0u8; 16];
    let n = tokio::time::timeout(GUARD, idle[0].read(&mut buf)).await.expect("guard: closed").unwrap_or(0);
    assert_eq!(n, 0, "the oldest idle socket was closed");
    assert!(f.node.metrics().handshakes_evicted.load(Ordering::Relaxed) >= 8);
}
