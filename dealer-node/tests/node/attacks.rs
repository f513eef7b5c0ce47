//! Every attack of SPEC.md §9 (docs/security.md lists them) that touches the node, over real sockets.
//! Each one must be refused and must leave the node and the other players
//! unharmed.

use std::sync::Arc;
use std::time::Duration;

use claw_dealer::RoomConfig;
use claw_protocol::handshake::{hello_body, ClientHandshake, HandshakeError, Hello, RejectReason, Response};
use claw_protocol::messages::{
    ActionRejectCode, ClientMessage, ErrorCode, EventBody, PlayerSeed, QueryData, QueryType, RawJson,
    ServerMessage, SignedAction, PROTOCOL_VERSION,
};
use claw_protocol::{Identity, Nonce, Purpose, Seed, Signature};
use futures_util::StreamExt;
use rand::rngs::OsRng;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::common::*;

fn hello_for(me: &Identity, room: &str, ts: u64, version: &str) -> Hello {
    let mut h = Hello {
        protocol_version: version.into(),
        sdk_version: "attacker".into(),
        room_id: room.into(),
        player: me.id(),
        encryption_key: me.encryption_key(),
        timestamp_ms: ts,
        client_nonce: Nonce::random(&mut OsRng),
        reconnect_token: None,
        sig: Signature([0; 64]),
    };
    h.sig = me.sign(Purpose::Hello, &hello_body(&h));
    h
}

async fn rejected_reason(ws: &mut Ws) -> RejectReason {
    loop {
        match recv_ws(ws).await {
            Some(ServerMessage::Rejected(r)) => return r.reason,
            Some(ServerMessage::Challenge(_)) => continue,
            other => panic!("expected a rejection, got {other:?}"),
        }
    }
}

/// The room still serves honest players after an attack.
async fn still_serves(f: &Fixture, room: &str) {
    let mut c = f.client(room, 200).await;
    let ServerMessage::QueryResult(r) = c.query(QueryType::RoomConfig, "alive").await else {
        panic!("no answer")
    };
    assert!(matches!(r.data, QueryData::RoomConfig { .. }));
}

fn room() -> Vec<RoomConfig> {
    vec![RoomConfig::new("a", "high-card"), RoomConfig::new("b", "high-card")]
}

#[tokio::test]
async fn impersonation_is_refused() {
    let f = Fixture::start(room()).await;
    let victim = Identity::from_seed([1; 32]);
    let attacker = Identity::from_seed([2; 32]);
    // Hello claiming the victim's key, signed by the attacker.
    let mut h = hello_for(&victim, "a", now_ms(), PROTOCOL_VERSION);
    h.sig = attacker.sign(Purpose::Hello, &hello_body(&h));
    let mut ws = raw_ws(f.addr(), "a").await;
    send_text(&mut ws, ClientMessage::Hello(h).encode().unwrap()).await;
    assert_eq!(rejected_reason(&mut ws).await, RejectReason::BadHelloSignature);
    // A correct hello by the victim (replayed by the attacker), then a
    // response the attacker signs: refused.
    let h = hello_for(&victim, "a", now_ms(), PROTOCOL_VERSION);
    let mut ws = raw_ws(f.addr(), "a").await;
    send_text(&mut ws, ClientMessage::Hello(h).encode().unwrap()).await;
    let Some(ServerMessage::Challenge(c)) = recv_ws(&mut ws).await else { panic!("challenge") };
    let mut r =
        Response { challenge: c.challenge, dealer: c.dealer, room_id: "a".into(), sig: Signature([0; 64]) };
    r.sig = attacker.sign(Purpose::Response, b"anything");
    send_text(&mut ws, ClientMessage::Response(r).encode().unwrap()).await;
    assert_eq!(rejected_reason(&mut ws).await, RejectReason::BadResponseSignature);
    assert!(recv_ws(&mut ws).await.is_none(), "closed after the rejection");
    still_serves(&f, "a").await;
}

#[tokio::test]
async fn replayed_and_stale_handshakes_are_refused() {
    let f = Fixture::start(room()).await;
    let me = Arc::new(Identity::from_seed([3; 32]));
    // Record an honest handshake.
    let mut ws = raw_ws(f.addr(), "a").await;
    let (mut hs, hello) =
        ClientHandshake::start(me.clone(), f.dealer(), "a", "t", None, now_ms(), &mut OsRng);
    send_text(&mut ws, ClientMessage::Hello(hello.clone()).encode().unwrap()).await;
    let Some(ServerMessage::Challenge(c)) = recv_ws(&mut ws).await else { panic!() };
    let resp = hs.on_challenge(&c, now_ms()).unwrap();
    send_text(&mut ws, ClientMessage::Response(resp.clone()).encode().unwrap()).await;
    assert!(matches!(recv_ws(&mut ws).await, Some(ServerMessage::Accepted(_))));
    // Replay both messages on a new connection: the old response answers a
    // challenge this connection never issued (and was used already).
    let mut ws2 = raw_ws(f.addr(), "a").await;
    send_text(&mut ws2, ClientMessage::Hello(hello).encode().unwrap()).await;
    let Some(ServerMessage::Challenge(_)) = recv_ws(&mut ws2).await else { panic!() };
    send_text(&mut ws2, ClientMessage::Response(resp).encode().unwrap()).await;
    let reason = rejected_reason(&mut ws2).await;
    assert!(matches!(reason, RejectReason::ChallengeReused | RejectReason::UnknownChallenge), "{reason:?}");
    // A hello from a minute ago (a replay of an old capture).
    let mut ws3 = raw_ws(f.addr(), "a").await;
    let old = hello_for(&Identity::from_seed([4; 32]), "a", now_ms() - 60_000, PROTOCOL_VERSION);
    send_text(&mut ws3, ClientMessage::Hello(old).encode().unwrap()).await;
    assert_eq!(rejected_reason(&mut ws3).await, RejectReason::ClockSkew);
    // Another protocol version.
    let mut ws4 = raw_ws(f.addr(), "a").await;
    let v2 = hello_for(&Identity::from_seed([5; 32]), "a", now_ms(), "claw/2");
    send_text(&mut ws4, ClientMessage::Hello(v2).encode().unwrap()).await;
    assert_eq!(rejected_reason(&mut ws4).await, RejectReason::VersionMismatch);
    // A hello for room b sent on room a's path.
    let mut ws5 = raw_ws(f.addr(), "a").await;
    let wrong = hello_for(&Identity::from_seed([6; 32]), "b", now_ms(), PROTOCOL_VERSION);
    send_text(&mut ws5, ClientMessage::Hello(wrong).encode().unwrap()).await;
    assert_eq!(rejected_reason(&mut ws5).await, RejectReason::WrongRoom);
    still_serves(&f, "a").await;
}

#[tokio::test]
async fn an_incompatible_reference_sdk_is_refused_with_its_reason_and_why() {
    use claw_protocol::handshake::{REFERENCE_SDK, RELEASE};
    let f = Fixture::start(room()).await;
    let major: u64 = RELEASE.split('.').next().unwrap().parse().unwrap();
    let other_line = format!("{REFERENCE_SDK}/{}.0.0", major + 1);
    for (seed, sdk, ok) in [(20u8, format!("{REFERENCE_SDK}/{RELEASE}"), true), (21, other_line, false)] {
        let me = Arc::new(Identity::from_seed([seed; 32]));
        let mut ws = raw_ws(f.addr(), "a").await;
        let (mut hs, hello) =
            ClientHandshake::start(me, f.dealer(), "a", sdk.clone(), None, now_ms(), &mut OsRng);
        send_text(&mut ws, ClientMessage::Hello(hello).encode().unwrap()).await;
        match recv_ws(&mut ws).await {
            Some(ServerMessage::Challenge(_)) if ok => {}
            Some(ServerMessage::Rejected(r)) if !ok => {
                assert_eq!(r.reason, RejectReason::SdkVersionMismatch);
                let why = r.message.clone().unwrap_or_default();
                assert!(why.contains(&sdk) && why.contains("not compatible"), "{why}");
                assert_eq!(hs.on_rejected(&r), HandshakeError::Rejected(RejectReason::SdkVersionMismatch));
                assert!(recv_ws(&mut ws).await.is_none(), "closed after the rejection");
            }
            other => panic!("{sdk}: {other:?}"),
        }
    }
    still_serves(&f, "a").await;
}

#[tokio::test]
async fn relayed_handshake_for_another_dealer_is_refused() {
    let f = Fixture::start(room()).await;
    let me = Identity::from_seed([7; 32]);
    let mut ws = raw_ws(f.addr(), "a").await;
    let h = hello_for(&me, "a", now_ms(), PROTOCOL_VERSION);
    let nonce = h.client_nonce;
    send_text(&mut ws, ClientMessage::Hello(h.clone()).encode().unwrap()).await;
    let Some(ServerMessage::Challenge(c)) = recv_ws(&mut ws).await else { panic!() };
    // The player believes it talks to another dealer (a relay in between).
    let other_dealer = Identity::from_seed([8; 32]).id();
    let mut r = Response {
        challenge: c.challenge,
        dealer: other_dealer,
        room_id: "a".into(),
        sig: Signature([0; 64]),
    };
    r.sig = me.sign(Purpose::Response, &claw_protocol::handshake::response_body(&r, &nonce, &me.id()));
    send_text(&mut ws, ClientMessage::Response(r).encode().unwrap()).await;
    assert_eq!(rejected_reason(&mut ws).await, RejectReason::WrongDealer);
    // And a client holding the wrong dealer key in its invite URL refuses
    // the real dealer.
    let e = Client::connect(f.addr(), "a", other_dealer, Arc::new(me), None).await.err().unwrap();
    assert!(matches!(e, HandshakeError::DealerKeyMismatch { .. }));
}

#[tokio::test]
async fn forged_ids_and_out_of_turn_actions_are_refused() {
    let mut r = RoomConfig::new("a", "high-card");
    r.min_players = 2;
    let f = Fixture::start(vec![r]).await;
    let mut a = f.client("a", 10).await;
    let mut b = f.client("a", 11).await;
    assert!(a.join().await.accepted);
    assert!(b.join().await.accepted);
    // Hand prepare: b sends a seed claiming to be a (from field), signed by b.
    let hand = b
        .recv_until(|m| match m {
            ServerMessage::Event(e) if matches!(e.decode_body().unwrap(), EventBody::HandPrepare(_)) => {
                Some(e.hand_id)
            }
            _ => None,
        })
        .await;
    let mut forged = PlayerSeed::sign(&b.me, hand, Seed([9; 32]));
    forged.from = Some(a.id());
    b.send(ClientMessage::PlayerSeed(forged)).await;
    let e = b
        .recv_until(|m| match m {
            ServerMessage::Error(e) => Some(e.clone()),
            _ => None,
        })
        .await;
    assert_eq!(e.code, ErrorCode::BadSeed);
    // b signs a seed as a: refused too (signature checked against b's key).
    let stolen = PlayerSeed::sign(&a.me, hand, Seed([9; 32]));
    b.send(ClientMessage::PlayerSeed(stolen)).await;
    let e = b
        .recv_until(|m| match m {
            ServerMessage::Error(e) => Some(e.clone()),
            _ => None,
        })
        .await;
    assert_eq!(e.code, ErrorCode::BadSeed);
    a.seed(hand).await;
    b.seed(hand).await;
    // Seat 0 (a) acts first. b acts out of turn.
    let turn = a
        .recv_until(|m| match m {
            ServerMessage::YourTurn(t) => Some(t.clone()),
            _ => None,
        })
        .await;
    b.act(hand, &serde_json::json!({"type": "bet"})).await;
    let r = b
        .recv_until(|m| match m {
            ServerMessage::ActionRejected(r) => Some(r.clone()),
            _ => None,
        })
        .await;
    assert_eq!(r.code, ActionRejectCode::NotYourTurn);
    // b sends a's action (signed by a, as if relayed) on its own connection.
    let signed = SignedAction::sign(
        &a.me,
        hand,
        turn.seq,
        RawJson::from_value(&serde_json::json!({"type": "bet"})).unwrap(),
    );
    b.send(ClientMessage::Action(signed)).await;
    let r = b
        .recv_until(|m| match m {
            ServerMessage::ActionRejected(r) => Some(r.clone()),
            _ => None,
        })
        .await;
    assert_eq!(r.code, ActionRejectCode::NotYourTurn);
    // a's own action with b's signature: the signature is checked against
    // the connection's identity.
    let signed = SignedAction::sign(
        &b.me,
        hand,
        turn.seq,
        RawJson::from_value(&serde_json::json!({"type": "bet"})).unwrap(),
    );
    a.send(ClientMessage::Action(signed)).await;
    let r = a
        .recv_until(|m| match m {
            ServerMessage::ActionRejected(r) => Some(r.clone()),
            _ => None,
        })
        .await;
    assert_eq!(r.code, ActionRejectCode::BadSignature);
    // A query with a `from` naming someone else answers about the sender.
    b.send_raw(format!(r#"{{"type":"query","query_type":"my-status","nonce":"x","from":"{}"}}"#, a.id()))
        .await;
    let r = b
        .recv_until(|m| match m {
            ServerMessage::QueryResult(r) => Some(r.clone()),
            _ => None,
        })
        .await;
    let QueryData::MyStatus { seat, .. } = r.data else { panic!() };
    assert_eq!(seat, b.session.seat.or(Some(claw_protocol::Seat(1))));
    // The honest move still goes through.
    a.act(hand, &serde_json::json!({"type": "fold"})).await;
    let e = b.recv_until(|m| match m {
        ServerMessage::Event(e) if matches!(e.decode_body().unwrap(), EventBody::ActionResult(_)) => Some(()),
        _ => None,
    });
    e.await;
}

#[tokio::test]
async fn malformed_unknown_and_oversize_frames_keep_the_node_up() {
    let f = Fixture::start(room()).await;
    let mut c = f.client("a", 20).await;
    for bad in [
        "not json",
        "{}",
        r#"{"type": 5}"#,
        r#"{"type":"launch-missiles"}"#,
        r#"{"type":"action","hand_id":"zz"}"#,
    ] {
        c.send_raw(bad).await;
        let e = c
            .recv_until(|m| match m {
                ServerMessage::Error(e) => Some(e.clone()),
                _ => None,
            })
            .await;
        assert!(matches!(e.code, ErrorCode::Malformed | ErrorCode::UnknownType), "{bad}: {e:?}");
    }
    // A binary frame.
    use futures_util::SinkExt;
    c.ws.send(tokio_tungstenite::tungstenite::Message::Binary(vec![1, 2, 3].into())).await.unwrap();
    let e = c
        .recv_until(|m| match m {
            ServerMessage::Error(e) => Some(e.clone()),
            _ => None,
        })
        .await;
    assert_eq!(e.code, ErrorCode::Malformed);
    // Over the protocol's 64 KiB: an oversize error, the connection stays.
    let big = format!(r#"{{"type":"query","query_type":"room-config","nonce":"{}"}}"#, "x".repeat(100_000));
    c.send_raw(big).await;
    let e = c
        .recv_until(|m| match m {
            ServerMessage::Error(e) => Some(e.clone()),
            _ => None,
        })
        .await;
    assert_eq!(e.code, ErrorCode::Oversize);
    let ServerMessage::QueryResult(_) = c.query(QueryType::RoomConfig, "still-here").await else { panic!() };
    // Over the hard WebSocket limit: that connection closes, nothing else.
    c.send_raw("y".repeat(2_000_000)).await;
    loop {
        match tokio::time::timeout(GUARD, c.ws.next()).await.expect("guard") {
            None | Some(Err(_)) | Some(Ok(tokio_tungstenite::tungstenite::Message::Close(_))) => break,
            _ => {}
        }
    }
    // Garbage before a handshake: rejected, closed.
    let mut ws = raw_ws(f.addr(), "a").await;
    send_text(&mut ws, "garbage").await;
    assert_eq!(rejected_reason(&mut ws).await, RejectReason::Malformed);
    let mut ws = raw_ws(f.addr(), "a").await;
    send_text(&mut ws, r#"{"type":"query","query_type":"my-balance","nonce":"n"}"#).await;
    assert_eq!(rejected_reason(&mut ws).await, RejectReason::UnexpectedMessage);
    still_serves(&f, "a").await;
    still_serves(&f, "b").await;
}

#[tokio::test]
async fn handshake_messages_after_the_handshake_are_refused() {
    let f = Fixture::start(room()).await;
    let mut c = f.client("a", 21).await;
    let h = hello_for(&c.me, "a", now_ms(), PROTOCOL_VERSION);
    c.send(ClientMessage::Hello(h)).await;
    let e = c
        .recv_until(|m| match m {
            ServerMessage::Error(e) => Some(e.clone()),
            _ => None,
        })
        .await;
    assert_eq!(e.code, ErrorCode::NotAllowed);
}

#[tokio::test]
async fn floods_are_rate_limited_without_disturbing_others() {
    let f = Fixture::start(room()).await;
    let mut flooder = f.client("a", 30).await;
    let mut other = f.client("a", 31).await;
    for i in 0..40 {
        flooder
            .send(ClientMessage::Query(claw_protocol::messages::Query::new(
                QueryType::RoomState,
                format!("f{i}"),
            )))
            .await;
    }
    let (mut ok, mut limited) = (0, 0);
    while ok + limited < 40 {
        match flooder.recv().await.expect("the flooder stays connected below the close threshold") {
            ServerMessage::QueryResult(_) => ok += 1,
            ServerMessage::QueryError(e)
                if e.error == claw_protocol::messages::QueryErrorCode::RateLimited =>
            {
                limited += 1
            }
            _ => {}
        }
    }
    assert!(limited > 0, "some queries were rate limited");
    assert!((1..40).contains(&ok));
    // The other player is served normally.
    let ServerMessage::QueryResult(_) = other.query(QueryType::MyBalance, "calm").await else { panic!() };
    // A flood far beyond the limit closes the flooder's connection.
    for i in 0..400 {
        flooder.send_raw(format!(r#"{{"type":"query","query_type":"room-state","nonce":"g{i}"}}"#)).await;
    }
    // (The guard in recv fails the test if the connection stays open.)
    while flooder.recv().await.is_some() {}
    let ServerMessage::QueryResult(_) = other.query(QueryType::MyBalance, "calm2").await else { panic!() };
}

#[tokio::test]
async fn slow_handshakes_hit_the_deadline() {
    let f = Fixture::start_with(
        room(),
        |mut c| {
            c.limits.handshake_deadline = Duration::from_millis(300);
            c
        },
        |b| b,
    )
    .await;
    // WebSocket open, no hello.
    let mut ws = raw_ws(f.addr(), "a").await;
    assert_eq!(rejected_reason(&mut ws).await, RejectReason::DeadlineExceeded);
    // Hello, then silence.
    let mut ws = raw_ws(f.addr(), "a").await;
    send_text(
        &mut ws,
        ClientMessage::Hello(hello_for(&Identity::from_seed([40; 32]), "a", now_ms(), PROTOCOL_VERSION))
            .encode()
            .unwrap(),
    )
    .await;
    assert_eq!(rejected_reason(&mut ws).await, RejectReason::DeadlineExceeded);
    // TCP open, not even the HTTP upgrade: the socket is closed.
    let mut tcp = tokio::net::TcpStream::connect(f.addr()).await.unwrap();
    tcp.write_all(b"GET /a HTTP/1.1\r\n").await.unwrap();
    let mut buf = [0u8; 64];
    let n = tokio::time::timeout(GUARD, tcp.read(&mut buf)).await.expect("guard").unwrap_or(0);
    assert_eq!(n, 0, "closed without an answer");
    // (No honest handshake here: this node's deadline is too short to be
    // fair on a loaded machine. The failures are counted.)
    assert!(f.node.metrics().handshakes_failed.load(std::sync::atomic::Ordering::Relaxed) >= 2);
}

#[tokio::test]
async fn unknown_rooms_and_the_connection_cap() {
    let f = Fixture::start_with(
        room(),
        |mut c| {
            c.limits.max_connections = 3;
            c
        },
        |b| b,
    )
    .await;
    let Err(e) = tokio_tungstenite::connect_async(format!("ws://{}/nope", f.addr())).await else {
        panic!("an unknown room must be refused")
    };
    assert!(e.to_string().contains("404"), "{e}");
    let mut open = Vec::new();
    for _ in 0..3 {
        open.push(raw_ws(f.addr(), "a").await);
    }
    let Err(e) = tokio_tungstenite::connect_async(format!("ws://{}/a", f.addr())).await else {
        panic!("refused at the cap")
    };
    assert!(e.to_string().contains("503"), "{e}");
    // Closing one frees a slot (the server notices the close).
    let mut first = open.remove(0);
    let _ = first.close(None).await;
    drop(first);
    let mut ok = false;
    for _ in 0..200 {
        if let Ok((ws, _)) = tokio_tungstenite::connect_async(format!("ws://{}/a", f.addr())).await {
            open.push(ws);
            ok = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(ok, "a slot was freed");
}

#[tokio::test]
async fn a_disconnected_seat_cannot_be_used_by_another_connection() {
    let mut r = RoomConfig::new("a", "high-card");
    r.min_players = 3;
    let f = Fixture::start(vec![r]).await;
    let mut a = f.client("a", 50).await;
    assert!(a.join().await.accepted);
    let token = a.session.reconnect_token;
    let me = a.me.clone();
    drop(a);
    // Same key, no token: the seat belongs to the session with the token.
    let e = Client::connect(f.addr(), "a", f.dealer(), me.clone(), None).await.err().unwrap();
    assert_eq!(e, HandshakeError::Rejected(RejectReason::Refused));
    // A wrong token: refused too.
    let e = Client::connect(f.addr(), "a", f.dealer(), me.clone(), Some(Nonce([1; 32]))).await.err().unwrap();
    assert_eq!(e, HandshakeError::Rejected(RejectReason::Refused));
    // Another identity cannot act for the seat: it is not in any hand.
    let mut x = f.client("a", 51).await;
    x.act(claw_protocol::HandId([0; 16]), &serde_json::json!({"type": "bet"})).await;
    let r = x
        .recv_until(|m| match m {
            ServerMessage::ActionRejected(r) => Some(r.clone()),
            _ => None,
        })
        .await;
    assert_eq!(r.code, ActionRejectCode::NotInHand);
    // The right token resumes the seat.
    let back = Client::connect(f.addr(), "a", f.dealer(), me, Some(token)).await.unwrap();
    assert!(back.session.seat.is_some());
}

#[tokio::test]
async fn spamming_bad_actions_on_ones_turn_runs_out_of_tokens() {
    let mut r = RoomConfig::new("a", "high-card");
    r.min_players = 2;
    r.entropy = claw_protocol::messages::EntropyMode::Dealer;
    let f = Fixture::start(vec![r]).await;
    let mut a = f.client("a", 60).await;
    let mut b = f.client("a", 61).await;
    assert!(a.join().await.accepted);
    assert!(b.join().await.accepted);
    let turn = a
        .recv_until(|m| match m {
            ServerMessage::YourTurn(t) => Some(t.clone()),
            _ => None,
        })
        .await;
    // Each forged action costs the dealer a signature check: after the
    // burst, they are refused unchecked.
    for _ in 0..30 {
        let forged = SignedAction::sign(
            &b.me,
            turn.hand_id,
            turn.seq,
            RawJson::from_value(&serde_json::json!({"type": "bet"})).unwrap(),
        );
        a.send(ClientMessage::Action(forged)).await;
    }
    let (mut bad_sig, mut limited) = (0, 0);
    while bad_sig + limited < 30 {
        match a.recv().await.expect("open") {
            ServerMessage::ActionRejected(r) if r.code == ActionRejectCode::BadSignature => bad_sig += 1,
            ServerMessage::ActionRejected(r) if r.code == ActionRejectCode::RateLimited => limited += 1,
            _ => {}
        }
    }
    assert!(bad_sig <= 12, "{bad_sig} signature checks");
    assert!(limited >= 18);
}

/// Issue: throw-away identities each drew 10 000 welcome chips. With a
/// node total, the identities after it get nothing and cannot sit down.
#[tokio::test]
async fn throw_away_identities_cannot_drain_more_than_the_welcome_total() {
    let f = Fixture::start_with(
        vec![RoomConfig::new("a", "high-card")],
        |c| c,
        |b| b.welcome_total(Some(20_000)),
    )
    .await;
    assert_eq!(fresh_identities_join(&f, 4).await, 2, "two welcome grants of 10 000 fit the 20 000 total");
    assert_welcome_counted(&f, 2, 2).await;
}

/// `n` fresh identities join room `a`; returns how many sat down (the
/// others are refused for their balance: they were granted nothing).
async fn fresh_identities_join(f: &Fixture, n: u8) -> usize {
    let mut accepted = 0;
    for seed in 1..=n {
        let mut c = f.client("a", seed).await;
        let j = c.join().await;
        if j.accepted {
            accepted += 1;
        } else {
            assert_eq!(j.reason, Some(claw_protocol::messages::JoinRejectReason::InsufficientBalance));
        }
    }
    accepted
}

/// `granted` welcome grants of 10 000 were made and `refused` refused,
/// and no other chips exist.
async fn assert_welcome_counted(f: &Fixture, granted: u64, refused: u64) {
    assert_eq!(
        f.chips.total().await,
        u128::from(granted) * 10_000,
        "no chips beyond the grants were created"
    );
    let m = claw_dealer::metrics::render(&f.node.metrics());
    assert!(m.contains(&format!("claw_welcome_grants_total {granted}")), "{m}");
    assert!(m.contains(&format!("claw_welcome_chips_total {}", granted * 10_000)), "{m}");
    assert!(m.contains(&format!("claw_welcome_refused_total {refused}")), "{m}");
}

/// Issue #17: welcome grants are limited per period too (`--welcome-per-day`):
/// beyond the period's chips, fresh identities get nothing, whatever the
/// node total still allows.
#[tokio::test]
async fn throw_away_identities_cannot_drain_more_than_a_periods_welcome() {
    let f = Fixture::start_with(
        vec![RoomConfig::new("a", "high-card")],
        |c| c,
        |b| b.welcome_total(Some(1_000_000)).welcome_per_period(Some((20_000, Duration::from_secs(86_400)))),
    )
    .await;
    assert_eq!(fresh_identities_join(&f, 4).await, 2, "two grants of 10 000 fit the day's 20 000");
    assert_welcome_counted(&f, 2, 2).await;
}

/// Issue #28: the welcome budgets were kept in memory only, so a restart
/// granted 40 000 chips within a minute against caps of 20 000 a day and
/// 30 000 in all. Every grant is now recorded in the data directory before
/// it is made: after a real restart of the node over the same data
/// directory (and the same ledger), a fresh identity is refused for the
/// day, and an account welcomed before the restart (its chips spent since)
/// is not welcomed again.
#[tokio::test]
async fn welcome_budgets_hold_across_a_restart() {
    use claw_chips::{AccountId, ChipProvider, IdempotencyKey, LocalChips};
    use claw_dealer::{DealerNode, NodeConfig};
    let dir = tempfile::tempdir().unwrap();
    let chips = Arc::new(LocalChips::new());
    let start = || async {
        let mut config = NodeConfig::local(dir.path(), vec![RoomConfig::new("a", "high-card")]);
        config.limits.ping_interval = Duration::from_secs(10);
        DealerNode::builder(config)
            .local_chips(chips.clone(), claw_protocol::Chips(10_000))
            .welcome_total(Some(30_000))
            .welcome_per_period(Some((20_000, Duration::from_secs(86_400))))
            .game(claw_engine::testgame::high_card())
            .launch()
            .await
            .unwrap()
    };
    let joins = |node: &claw_dealer::NodeHandle, seed: u8| {
        let (addr, dealer) = (node.addr(), node.dealer_id());
        async move {
            let me = Arc::new(Identity::from_seed([seed; 32]));
            let mut c = Client::connect(addr, "a", dealer, me, None).await.unwrap();
            c.join().await.accepted
        }
    };
    let node = start().await;
    assert!(joins(&node, 1).await && joins(&node, 2).await, "two grants fit the day's 20 000");
    node.shutdown(Duration::ZERO).await;
    // Player 1 loses its chips elsewhere.
    let one = AccountId::from(Identity::from_seed([1; 32]).id());
    chips
        .debit(&IdempotencyKey::new("spent").unwrap(), &one, claw_protocol::Chips(10_000), "spent")
        .await
        .unwrap();

    let node = start().await;
    assert!(!joins(&node, 3).await, "the day's budget was used before the restart");
    assert!(!joins(&node, 1).await, "welcomed before the restart: not again");
    assert_eq!(chips.total().await, 10_000, "20 000 granted in all, 10 000 of them spent");
    let m = claw_dealer::metrics::render(&node.metrics());
    assert!(m.contains("claw_welcome_grants_total 0"), "{m}");
    assert!(m.contains("claw_welcome_refused_total 1"), "{m}");
    let record = std::fs::read_to_string(dir.path().join("welcome.jsonl")).unwrap();
    assert_eq!(record.lines().count(), 2, "{record}");
    node.shutdown(Duration::ZERO).await;
}

/// Round 3: a player pads its signed action with JSON whitespace to just
/// under the frame limit, so that the dealer cannot record it and voids the
/// hand. The frame is refused to its sender (`action-rejected`) before the
/// hand sees it; the turn stays, the hand finishes and nobody is refunded.
#[tokio::test]
async fn an_action_padded_to_the_frame_limit_is_refused_and_cannot_void_the_hand() {
    let mut r = RoomConfig::new("a", "high-card");
    r.min_players = 2;
    r.max_players = 2;
    r.entropy = claw_protocol::messages::EntropyMode::Dealer;
    let f = Fixture::start(vec![r]).await;
    let mut a = f.client("a", 30).await;
    let mut b = f.client("a", 31).await;
    assert!(a.join().await.accepted);
    assert!(b.join().await.accepted);
    let game = claw_engine::testgame::high_card();
    let (a, b) = (
        tokio::spawn(async move {
            let turn = a
                .recv_until(|m| match m {
                    ServerMessage::YourTurn(t) => Some(t.clone()),
                    ServerMessage::Event(e) if e.seq == 0 => None,
                    _ => None,
                })
                .await;
            // {"type":"bet"} + 65,136 spaces: the exploit's frame.
            let text = format!(r#"{{"type":"bet"{}}}"#, " ".repeat(65_136 - 512));
            let signed =
                SignedAction::sign(&a.me, turn.hand_id, turn.seq, RawJson::from_string(text).unwrap());
            let frame = ClientMessage::Action(signed).encode().expect("under the frame limit");
            assert!(frame.len() <= claw_protocol::messages::MAX_FRAME_BYTES);
            a.send_raw(frame).await;
            let rejected = a
                .recv_until(|m| match m {
                    ServerMessage::ActionRejected(r) => Some(r.clone()),
                    ServerMessage::Error(e) => panic!("an error instead of action-rejected: {e:?}"),
                    _ => None,
                })
                .await;
            assert_eq!(rejected.code, ActionRejectCode::Malformed);
            assert_eq!((rejected.hand_id, rejected.seq), (turn.hand_id, turn.seq));
            assert!(rejected.reason.contains("4096"), "{}", rejected.reason);
            // Still its turn: it plays honestly and the hand goes on.
            a.act(turn.hand_id, &serde_json::json!({"type": "bet"})).await;
            a
        }),
        tokio::spawn(async move { b }),
    );
    let (a, b) = (a.await.unwrap(), b.await.unwrap());
    // Both play the hand out; a voided hand would never reach game-end.
    let bots = [a, b].map(|c| tokio::spawn(bot(c, game.clone(), 1, 7)));
    for (i, h) in bots.into_iter().enumerate() {
        let (_, report) =
            tokio::time::timeout(Duration::from_secs(30), h).await.expect("the hand finishes").unwrap();
        assert_eq!(report.hands_audited, 1, "player {i}: the hand was played out and audited");
    }
}

/// Issue 31 (REQ-020a): the daily and rescue grants, farmed. Sybils
/// (fresh identities), repeated claims (a second room, a second
/// connection) and a restart of the node over the same data directory get
/// at most one daily and one rescue grant per identity and day, within the
/// node's budget per day; every chip granted comes out of the operator
/// account (no chip is created), and an operator account that cannot pay
/// grants nothing.
#[tokio::test]
async fn daily_and_rescue_grants_cannot_be_farmed_by_sybils_repeats_or_restarts() {
    use claw_chips::ledger::welcome::{DayCaps, GrantKind};
    use claw_chips::{AccountId, ChipProvider, LocalChips};
    use claw_dealer::{DealerNode, NodeConfig};
    use claw_protocol::Chips;
    let dir = tempfile::tempdir().unwrap();
    let chips = Arc::new(LocalChips::new());
    let operator = AccountId::new("operator").unwrap();
    chips.grant(&operator, Chips(20_000)).await.unwrap();
    let days = vec![
        (
            GrantKind::Daily,
            DayCaps { amount: Chips(5_000), below: None, per_account: 1, budget_per_day: Some(10_000) },
        ),
        (
            GrantKind::Rescue,
            DayCaps {
                amount: Chips(1_000),
                below: Some(Chips(500)),
                per_account: 1,
                budget_per_day: Some(3_000),
            },
        ),
    ];
    let start = |from: AccountId| {
        let (chips, days, dir) = (chips.clone(), days.clone(), dir.path().to_owned());
        async move {
            let rooms = vec![RoomConfig::new("a", "high-card"), RoomConfig::new("b", "high-card")];
            let mut config = NodeConfig::local(&dir, rooms);
            config.limits.ping_interval = Duration::from_secs(10);
            DealerNode::builder(config)
                .local_chips(chips, Chips::ZERO)
                .day_grants(days, Some(from))
                .game(claw_engine::testgame::high_card())
                .launch()
                .await
                .unwrap()
        }
    };
    let joins = |node: &claw_dealer::NodeHandle, room: &'static str, seed: u8| {
        let (addr, dealer) = (node.addr(), node.dealer_id());
        async move {
            let me = Arc::new(Identity::from_seed([seed; 32]));
            // A second session while the first one's seat is held is
            // refused at the handshake: a claim that gets nothing too.
            match Client::connect(addr, room, dealer, me, None).await {
                Ok(mut c) => c.join().await.accepted,
                Err(_) => false,
            }
        }
    };
    let balance = |seed: u8| {
        let chips = chips.clone();
        async move { chips.balance(&AccountId::from(Identity::from_seed([seed; 32]).id())).await.unwrap().0 }
    };
    let node = start(operator.clone()).await;
    // Six sybils: two daily grants fill the day's 10 000; the next three are
    // rescued (balance 0 < 500) within the rescue budget of 3 000; the sixth
    // gets nothing and cannot sit down.
    for seed in 1..=6 {
        assert_eq!(joins(&node, "a", seed).await, seed <= 5, "sybil {seed}");
    }
    let got: Vec<u64> = futures_util::future::join_all((1..=6).map(balance)).await;
    assert_eq!(got, vec![5_000, 5_000, 1_000, 1_000, 1_000, 0]);
    // Repeated claims: the same identities in the other room, twice.
    for _ in 0..2 {
        for seed in 1..=6 {
            let _ = joins(&node, "b", seed).await;
        }
    }
    let again: Vec<u64> = futures_util::future::join_all((1..=6).map(balance)).await;
    assert_eq!(again, got, "no second grant the same day");
    node.shutdown(Duration::ZERO).await;
    // A restart over the same data directory: the record holds.
    let node = start(operator.clone()).await;
    for seed in 1..=7 {
        let _ = joins(&node, "a", seed).await;
    }
    let after: Vec<u64> = futures_util::future::join_all((1..=7).map(balance)).await;
    assert_eq!(
        after,
        vec![5_000, 5_000, 1_000, 1_000, 1_000, 0, 0],
        "budgets and per-identity limits restored"
    );
    assert_eq!(chips.balance(&operator).await.unwrap(), Chips(7_000), "13 000 paid by the operator");
    assert_eq!(chips.total().await, 20_000, "no chip was created");
    node.shutdown(Duration::ZERO).await;
    // An operator account that cannot pay: refused, nothing moves, and the
    // refusal is not counted against the budget.
    let broke = AccountId::new("broke").unwrap();
    let other = tempfile::tempdir().unwrap();
    let node = {
        let mut config = NodeConfig::local(other.path(), vec![RoomConfig::new("a", "high-card")]);
        config.limits.ping_interval = Duration::from_secs(10);
        DealerNode::builder(config)
            .local_chips(chips.clone(), Chips::ZERO)
            .day_grants(days.clone(), Some(broke))
            .game(claw_engine::testgame::high_card())
            .launch()
            .await
            .unwrap()
    };
    assert!(!joins(&node, "a", 8).await, "nothing to pay the grant with");
    assert_eq!(balance(8).await, 0);
    assert_eq!(chips.total().await, 20_000);
    let record = std::fs::read_to_string(other.path().join("welcome.jsonl")).unwrap();
    assert!(record.contains(r#""kind":"refused""#), "{record}");
    node.shutdown(Duration::ZERO).await;
}
