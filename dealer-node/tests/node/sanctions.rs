//! Operator controls over real sockets: a ban through the admin API while
//! the player is in a hand (the hand settles, then `kicked` `banned` and
//! close 4001; refused at the next handshake with `banned` and close 4001),
//! a freeze (balance yes, seat no, close 4000), the listing and the audit
//! log (tampering detected), the admin API refusing bad input, and
//! scripted abusers: one that never acts (banned by the abuse rule) and one
//! that dumps chips to another identity (seen in the signals).

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use claw_chips::{AccountId, ChipProvider};
use claw_dealer::admin::AdminConfig;
use claw_dealer::room::RoomEvent;
use claw_protocol::handshake::{ClientHandshake, HandshakeError, RejectReason};
use claw_protocol::messages::{
    ClientMessage, EntropyMode, EventBody, JoinRejectReason, KickReason, QueryData, QueryType, ServerMessage,
};
use claw_protocol::{HandId, Identity};
use futures_util::StreamExt;
use rand::rngs::OsRng;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::Message;

use crate::common::*;

const TOKEN: &str = "0123456789abcdef0123456789abcdef-admin";

/// One HTTP/1.1 request over a fresh connection: (status, body text).
async fn http(addr: SocketAddr, method: &str, path: &str, token: Option<&str>, body: &str) -> (u16, String) {
    let mut s = TcpStream::connect(addr).await.expect("connect");
    let auth = token.map(|t| format!("Authorization: Bearer {t}\r\n")).unwrap_or_default();
    let req = format!(
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\n{auth}Content-Type: application/json\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    s.write_all(req.as_bytes()).await.expect("write");
    let mut buf = Vec::new();
    tokio::time::timeout(GUARD, s.read_to_end(&mut buf)).await.expect("guard: http").expect("read");
    let text = String::from_utf8_lossy(&buf).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let status = head.split(' ').nth(1).and_then(|c| c.parse().ok()).unwrap_or(0);
    (status, body.to_owned())
}

async fn admin(addr: SocketAddr, method: &str, path: &str, body: &str) -> (u16, Value) {
    let (code, text) = http(addr, method, path, Some(TOKEN), body).await;
    (code, serde_json::from_str(&text).unwrap_or(Value::Null))
}

/// A node with the admin API and `room`, limits tweaked by `limits`.
async fn node(room: claw_dealer::RoomConfig, limits: impl FnOnce(&mut claw_dealer::Limits)) -> Fixture {
    Fixture::start_with(
        vec![room],
        |mut c| {
            c.http_listen = Some(SocketAddr::from(([127, 0, 0, 1], 0)));
            limits(&mut c.limits);
            c
        },
        |b| {
            b.admin(AdminConfig {
                token: TOKEN.into(),
                room_expiry: Duration::from_secs(600),
                close_grace: Duration::from_secs(1),
            })
        },
    )
    .await
}

/// The close frame's code after the messages still queued (none: closed without one).
async fn close_code(ws: &mut Ws) -> Option<u16> {
    loop {
        match tokio::time::timeout(GUARD, ws.next()).await.expect("guard: no close") {
            Some(Ok(Message::Close(f))) => return f.map(|f| u16::from(f.code)),
            Some(Ok(_)) => continue,
            _ => return None,
        }
    }
}

/// A full handshake that the dealer refuses: the reason and the close code.
async fn refused_handshake(f: &Fixture, room: &str, seed: u8) -> (RejectReason, Option<String>, Option<u16>) {
    let mut ws = raw_ws(f.addr(), room).await;
    let me = Arc::new(Identity::from_seed([seed; 32]));
    let (mut hs, hello) = ClientHandshake::start(me, f.dealer(), room, "tests/0", None, now_ms(), &mut OsRng);
    send_text(&mut ws, ClientMessage::Hello(hello).encode().unwrap()).await;
    let Some(ServerMessage::Challenge(ch)) = recv_ws(&mut ws).await else { panic!("no challenge") };
    let resp = hs.on_challenge(&ch, now_ms()).unwrap();
    send_text(&mut ws, ClientMessage::Response(resp).encode().unwrap()).await;
    let Some(ServerMessage::Rejected(r)) = recv_ws(&mut ws).await else { panic!("not rejected") };
    // The rejection is signed: the client trusts its reason.
    assert_eq!(hs.on_rejected(&r), HandshakeError::Rejected(r.reason));
    (r.reason, r.message.clone(), close_code(&mut ws).await)
}

fn dealer_account(f: &Fixture) -> AccountId {
    AccountId::new(format!("dealer:{}", f.dealer())).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_player_banned_mid_hand_plays_it_out_is_paid_then_kicked_and_refused_at_the_handshake() {
    let f = node(fast_room("t", "high-card"), |_| {}).await;
    let h = f.node.http_addr().unwrap();
    let mut events = f.node.subscribe();
    let mut a = f.client("t", 1).await;
    assert!(a.join().await.accepted);
    let mut b = f.client("t", 2).await;
    assert!(b.join().await.accepted);
    let (ida, idb) = (a.id(), b.id());
    let game = claw_engine::testgame::high_card();
    let bot_b = tokio::spawn(bot(b, game.clone(), 1000, 9));

    let mut rng = ChaCha8Rng::seed_from_u64(4);
    let mut banned_in: Option<HandId> = None;
    let mut finished_banned_hand = false;
    let kicked = loop {
        let m = a.recv().await.expect("the connection closed before `kicked`");
        match m {
            ServerMessage::Event(e) => match e.decode_body().unwrap() {
                EventBody::HandPrepare(p) => {
                    assert!(banned_in.is_none() || !finished_banned_hand, "dealt again after the ban");
                    if p.entropy == EntropyMode::Joint {
                        a.seed(e.hand_id).await;
                    }
                    if banned_in.is_none() {
                        let (code, body) = admin(
                            h,
                            "POST",
                            &format!("/admin/players/{ida}/ban"),
                            r#"{"reason":"collusion with seat 2","for":"24h"}"#,
                        )
                        .await;
                        assert_eq!(code, 201, "{body}");
                        assert_eq!(body["sanction"]["kind"], "ban");
                        banned_in = Some(e.hand_id);
                    }
                }
                // The banned player's hand ran to its end and audits.
                EventBody::GameEnd(_) if Some(e.hand_id) == banned_in => {
                    assert!(a.audit(game.clone(), false).complete());
                    finished_banned_hand = true;
                }
                _ => {}
            },
            ServerMessage::YourTurn(t) => {
                let act = pick(&t, &mut rng);
                a.act(t.hand_id, &act).await;
            }
            ServerMessage::Kicked(k) => break k,
            _ => {}
        }
    };
    assert_eq!(kicked.code, KickReason::Banned);
    assert!(kicked.reason.contains("collusion with seat 2"), "{}", kicked.reason);
    assert!(finished_banned_hand, "kicked only after the hand it was in had ended");
    assert_eq!(close_code(&mut a.ws).await, Some(claw_protocol::close::BANNED));
    // That hand was settled, not voided.
    let banned_in = banned_in.unwrap();
    // (Reported once its archive write is done, maybe after the kick.)
    loop {
        match tokio::time::timeout(GUARD, events.recv()).await.expect("guard: the hand's report") {
            Ok(RoomEvent::HandFinished { hand_id, .. }) if hand_id == banned_in => break,
            Ok(RoomEvent::HandVoided { hand_id, .. }) => assert_ne!(hand_id, banned_in, "voided"),
            Ok(_) => {}
            Err(e) => panic!("events: {e}"),
        }
    }
    // Chips are safe: the two welcome grants, all accounted for.
    tokio::time::sleep(Duration::from_millis(200)).await;
    let dealer = f.chips.balance(&dealer_account(&f)).await.map_or(0, |c| c.0);
    assert_eq!(f.balance(&ida).await + f.balance(&idb).await + dealer, 20_000);

    // Refused at the handshake, by name, with close 4001.
    let (reason, message, code) = refused_handshake(&f, "t", 1).await;
    assert_eq!(reason, RejectReason::Banned);
    assert!(message.unwrap_or_default().contains("collusion"));
    assert_eq!(code, Some(claw_protocol::close::BANNED));
    // Listed, and the room no longer holds the player.
    let (_, list) = admin(h, "GET", "/admin/sanctions", "").await;
    let s = &list["sanctions"][0];
    assert_eq!(
        (s["player"].as_str(), s["kind"].as_str(), s["by"].as_str()),
        (Some(&*ida.to_string()), Some("ban"), Some("admin"))
    );
    let day = 24 * 3600 * 1000;
    assert_eq!(s["until_ms"].as_u64().unwrap() - s["created_ms"].as_u64().unwrap(), day);
    let snap = f.node.room("t").unwrap().inspect().await.unwrap();
    assert!(snap.players.iter().all(|p| p.id != ida));

    // Lifted: the identity plays again.
    let (code, _) = admin(h, "DELETE", &format!("/admin/players/{ida}/ban"), "").await;
    assert_eq!(code, 200);
    let (code, _) = admin(h, "DELETE", &format!("/admin/players/{ida}/ban"), "").await;
    assert_eq!(code, 404, "nothing left to lift");
    let mut again = f.client("t", 1).await;
    assert!(again.join().await.accepted);
    bot_b.abort();
    // Every action is in the chained audit log: ban, unban, unban (not found).
    let (code, audit) = admin(h, "GET", "/admin/audit", "").await;
    assert_eq!((code, audit["lines"].as_u64()), (200, Some(3)), "{audit}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_frozen_player_sees_its_balance_but_cannot_sit_and_tampering_with_the_audit_log_is_detected() {
    let f = node(fast_room("t", "high-card"), |_| {}).await;
    let h = f.node.http_addr().unwrap();
    let mut a = f.client("t", 1).await;
    assert!(a.join().await.accepted);
    let ida = a.id();
    // Alone at the table (no hand): the seat is freed at once, close 4000.
    let (code, body) =
        admin(h, "POST", &format!("/admin/players/{ida}/freeze"), r#"{"reason":"chargeback"}"#).await;
    assert_eq!(code, 201, "{body}");
    assert_eq!(body["sanction"]["until_ms"], Value::Null, "no term: until lifted");
    let k = a.recv_until(|m| if let ServerMessage::Kicked(k) = m { Some(k.clone()) } else { None }).await;
    assert_eq!(k.code, KickReason::Frozen);
    assert_eq!(close_code(&mut a.ws).await, Some(claw_protocol::close::KICKED));
    // It may connect and see its balance; it may not sit down.
    let mut a = f.client("t", 1).await;
    match a.query(QueryType::MyBalance, "b1").await {
        ServerMessage::QueryResult(r) => {
            assert!(matches!(r.data, QueryData::MyBalance { balance } if balance.0 == 10_000), "{r:?}")
        }
        other => panic!("{other:?}"),
    }
    let j = a.join().await;
    assert!(!j.accepted);
    assert_eq!(j.reason, Some(JoinRejectReason::Frozen));
    assert!(j.message.unwrap_or_default().contains("chargeback"));
    let (code, _) = admin(h, "DELETE", &format!("/admin/players/{ida}/freeze"), "").await;
    assert_eq!(code, 200);
    assert!(a.join().await.accepted, "unfrozen: seated");

    // Bad input is refused, nothing logged: no token, a bad id, no reason,
    // a term out of range, an unknown field.
    let path = format!("/admin/players/{ida}/ban");
    assert_eq!(http(h, "POST", &path, None, r#"{"reason":"x"}"#).await.0, 401);
    assert_eq!(admin(h, "POST", "/admin/players/zz/ban", r#"{"reason":"x"}"#).await.0, 400);
    assert_eq!(admin(h, "POST", &path, r#"{"reason":"  "}"#).await.0, 400);
    assert_eq!(admin(h, "POST", &path, r#"{"reason":"x","for":"1y"}"#).await.0, 400);
    assert_eq!(admin(h, "POST", &path, &format!(r#"{{"reason":"{}"}}"#, "x".repeat(201))).await.0, 400);
    assert_eq!(admin(h, "POST", &path, r#"{"reason":"x","until":1}"#).await.0, 400);
    let (code, audit) = admin(h, "GET", "/admin/audit", "").await;
    assert_eq!((code, audit["lines"].as_u64()), (200, Some(2)), "{audit}");

    // An edited line breaks the chain: the API says so (and logs CRITICAL).
    let file = f.dir.path().join(claw_dealer::audit_log::AUDIT_FILE);
    let text = std::fs::read_to_string(&file).unwrap();
    std::fs::write(&file, text.replacen("chargeback", "nothing", 1)).unwrap();
    let (code, body) = admin(h, "GET", "/admin/audit", "").await;
    assert_eq!(code, 500, "{body}");
    assert!(body["error"].as_str().unwrap().contains("line 1"), "{body}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scripted_abusers_show_in_the_signals_and_one_that_never_acts_is_banned_by_the_rule() {
    let mut room = fast_room("t", "high-card");
    room.action_timeout = Duration::from_millis(300);
    room.timeouts_to_sit_out = 0;
    let f = node(room, |l| {
        l.abuse_flags = 3;
        l.abuse_window_hands = 5;
        l.abuse_ban = Duration::from_secs(3600);
    })
    .await;
    let h = f.node.http_addr().unwrap();
    // `idler` never acts: the timer folds for it; `dumper` always folds its
    // ante to `taker`, who always bets.
    let mut idler = f.client("t", 1).await;
    assert!(idler.join().await.accepted);
    let taker = f.client("t", 2).await;
    let dumper = f.client("t", 3).await;
    let (id_idler, id_taker, id_dumper) = (idler.id(), taker.id(), dumper.id());
    let scripted = |mut c: Client, action: &'static str| async move {
        assert!(c.join().await.accepted);
        while let Some(m) = c.recv().await {
            match m {
                ServerMessage::Event(e) => {
                    if let EventBody::HandPrepare(p) = e.decode_body().unwrap() {
                        if p.entropy == EntropyMode::Joint {
                            c.seed(e.hand_id).await;
                        }
                    }
                }
                ServerMessage::YourTurn(t) => {
                    c.act(t.hand_id, &json!({ "type": action })).await;
                }
                _ => {}
            }
        }
    };
    let t1 = tokio::spawn(scripted(taker, "bet"));
    let t2 = tokio::spawn(scripted(dumper, "fold"));
    let kicked = loop {
        match idler.recv().await.expect("closed before `kicked`") {
            ServerMessage::Event(e) => {
                if let EventBody::HandPrepare(p) = e.decode_body().unwrap() {
                    if p.entropy == EntropyMode::Joint {
                        idler.seed(e.hand_id).await;
                    }
                }
            }
            ServerMessage::Kicked(k) => break k,
            _ => {}
        }
    };
    assert_eq!(kicked.code, KickReason::Banned);
    assert!(kicked.reason.contains("abuse rule"), "{}", kicked.reason);
    assert_eq!(close_code(&mut idler.ws).await, Some(claw_protocol::close::BANNED));
    let (code, list) = admin(h, "GET", "/admin/sanctions", "").await;
    assert_eq!(code, 200);
    let s = &list["sanctions"][0];
    assert_eq!((s["player"].as_str(), s["by"].as_str()), (Some(&*id_idler.to_string()), Some("rule")));

    // Let the other two play a few hands, then read the signals.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let (_, me) = admin(h, "GET", &format!("/admin/players/{id_idler}"), "").await;
    assert!(me["signals"]["timeouts"].as_u64().unwrap() >= 3, "{me}");
    assert_eq!(me["sanctions"][0]["kind"], "ban");
    let (_, dumper) = admin(h, "GET", &format!("/admin/players/{id_dumper}"), "").await;
    let flow = &dumper["signals"]["top_flow_to"];
    assert_eq!(flow["to"].as_str(), Some(&*id_taker.to_string()), "{dumper}");
    assert!(flow["chips"].as_u64().unwrap() >= 2, "{dumper}");
    assert!(dumper["signals"]["sharing_address_with"].as_u64().unwrap() >= 2, "all on 127.0.0.1: {dumper}");
    let (_, top) = admin(h, "GET", "/admin/signals?limit=1", "").await;
    assert_eq!(top["signals"].as_array().unwrap().len(), 1);
    assert_eq!(top["signals"][0]["player"].as_str(), Some(&*id_idler.to_string()), "most flags first");

    // /metrics: aggregates only, no identity in any label.
    let (code, m) = http(h, "GET", "/metrics", None, "").await;
    assert_eq!(code, 200);
    let value = |name: &str| -> u64 {
        m.lines()
            .find_map(|l| l.strip_prefix(&format!("{name} ")))
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("{name}: {m}"))
    };
    assert!(value("claw_abuse_flags_total{flag=\"timeout\"}") >= 3);
    assert_eq!(value("claw_abuse_rule_trips_total"), 1);
    assert!(value("claw_abuse_max_pair_flow_chips") >= 2);
    assert!(value("claw_abuse_shared_addresses") >= 1);
    assert_eq!(value("claw_bans_active"), 1);
    for id in [id_idler, id_taker, id_dumper] {
        assert!(!m.contains(&id.to_string()), "an identity in /metrics");
    }
    assert!(!m.contains("127.0.0.1"), "an address in /metrics");
    t1.abort();
    t2.abort();
}
