//! Quick match over real sockets: players who name a game and a tier are
//! sent to rooms of that tier with a free seat, rooms are opened from the
//! operator's templates when those are full, and the path refuses anything
//! but a `quick-match` before the handshake.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::Arc;

use claw_dealer::matchmaking::{RoomTemplate, QUICK_MATCH_PATH};
use claw_dealer::RoomConfig;
use claw_protocol::handshake::RejectReason;
use claw_protocol::messages::{ClientMessage, Matched, QuickMatch, ServerMessage};
use claw_protocol::Identity;
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use super::common::{raw_ws, recv_ws, send_text, Client, Fixture, GUARD};

/// A Sam Gong room of `tier` that deals only once all six seats are taken.
fn sam_gong(id: &str, tier: &str) -> RoomConfig {
    let mut r = RoomConfig::new(id, "sam-gong");
    r.settings = json!({ "tier": tier });
    r.min_players = 6;
    r.max_players = 6;
    r
}

fn ask(game: &str, tier: Option<&str>) -> QuickMatch {
    QuickMatch { game: game.into(), tier: tier.map(str::to_owned) }
}

/// Quick-matches on the socket path; the `matched` answer, or the
/// `rejected` one.
async fn quick_match(
    addr: SocketAddr,
    req: &QuickMatch,
) -> (super::common::Ws, Result<Matched, RejectReason>) {
    let mut ws = raw_ws(addr, QUICK_MATCH_PATH).await;
    send_text(&mut ws, ClientMessage::QuickMatch(req.clone()).encode().unwrap()).await;
    let answer = match recv_ws(&mut ws).await {
        Some(ServerMessage::Matched(m)) => Ok(m),
        Some(ServerMessage::Rejected(r)) => Err(r.reason),
        other => panic!("expected matched or rejected, got {other:?}"),
    };
    (ws, answer)
}

/// Quick match, then the handshake with the matched room, then a seat.
async fn match_and_sit(f: &Fixture, seed: u8, tier: &str) -> (Matched, Client) {
    let (ws, m) = quick_match(f.addr(), &ask("sam-gong", Some(tier))).await;
    let m = m.expect("a room");
    let me = Arc::new(Identity::from_seed([seed; 32]));
    let mut c = Client::handshake(ws, f.addr(), &m.room_id, f.dealer(), me, None).await.expect("handshake");
    let j = c.join().await;
    assert!(j.accepted, "player {seed} seated at {}: {j:?}", m.room_id);
    (m, c)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn quick_match_seats_20_players_into_the_right_tiers() {
    let templates = vec![
        RoomTemplate { room: sam_gong("sgb", "bronze"), max_rooms: 2 },
        RoomTemplate { room: sam_gong("sgs", "silver"), max_rooms: 1 },
    ];
    let rooms = vec![sam_gong("sg-bronze", "bronze"), sam_gong("sg-silver", "silver")];
    let f = Fixture::start_with(rooms, |c| c, |b| b.templates(templates)).await;
    // 12 ask for bronze, 8 for silver, all at once.
    let tasks: Vec<_> = (0..20u8)
        .map(|i| {
            let tier = if i % 5 < 3 { "bronze" } else { "silver" };
            let f = &f;
            async move { (tier, match_and_sit(f, 100 + i, tier).await) }
        })
        .collect();
    let seated = futures_util::future::join_all(tasks).await;
    let mut per_room: HashMap<String, usize> = HashMap::new();
    for (tier, (m, _)) in &seated {
        assert_eq!(m.game, "sam-gong");
        assert_eq!(m.tier.as_deref(), Some(*tier), "{} is not a {tier} room", m.room_id);
        *per_room.entry(m.room_id.clone()).or_default() += 1;
    }
    let want: HashMap<String, usize> = [("sg-bronze", 6), ("sgb-1", 6), ("sg-silver", 6), ("sgs-1", 2)]
        .map(|(r, n)| (r.to_owned(), n))
        .into();
    assert_eq!(per_room, want, "full tables first, one room opened per template as needed");
    for (room, n) in &want {
        let snapshot = f.node.room(room).expect("served").inspect().await.expect("open");
        assert_eq!(snapshot.players.iter().filter(|p| p.seat.is_some()).count(), *n, "{room}");
    }
    // Both templates are at their limit or have a free seat: a bronze
    // request opens the second bronze room, a silver one joins `sgs-1`.
    let (_b, m) = quick_match(f.addr(), &ask("sam-gong", Some("bronze"))).await;
    assert_eq!(m.map(|m| (m.room_id, m.opened)), Ok(("sgb-2".into(), true)));
    let (_s, m) = quick_match(f.addr(), &ask("sam-gong", Some("silver"))).await;
    assert_eq!(m.map(|m| (m.room_id, m.opened)), Ok(("sgs-1".into(), false)));
    // No room plays that tier, nor that game.
    let (_, m) = quick_match(f.addr(), &ask("sam-gong", Some("diamond"))).await;
    assert_eq!(m, Err(RejectReason::Refused));
    let (_, m) = quick_match(f.addr(), &ask("no-such-game", None)).await;
    assert_eq!(m, Err(RejectReason::Refused));
    drop(seated);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_tier_without_a_template_is_refused_and_no_tier_means_the_entry_tier() {
    let mut small = sam_gong("sg-gold", "gold");
    small.min_players = 2;
    small.max_players = 2;
    let f =
        Fixture::start(vec![sam_gong("sg-silver", "silver"), small, sam_gong("sg-bronze", "bronze")]).await;
    let (_a, m) = quick_match(f.addr(), &ask("sam-gong", None)).await;
    assert_eq!(m.unwrap().room_id, "sg-bronze", "no tier: the lowest entry threshold");
    let (_x, a) = quick_match(f.addr(), &ask("sam-gong", Some("gold"))).await;
    let (_y, b) = quick_match(f.addr(), &ask("sam-gong", Some("gold"))).await;
    assert!(a.is_ok() && b.is_ok());
    // Two seats, both held for the matched connections still open.
    let (_, c) = quick_match(f.addr(), &ask("sam-gong", Some("gold"))).await;
    assert_eq!(c, Err(RejectReason::Refused));
    // A matched connection that goes away gives its seat back.
    drop(_x);
    let again = async {
        loop {
            let (ws, m) = quick_match(f.addr(), &ask("sam-gong", Some("gold"))).await;
            if let Ok(m) = m {
                return (ws, m);
            }
        }
    };
    let (_z, m) = tokio::time::timeout(GUARD, again).await.expect("guard: the seat came back");
    assert_eq!(m.room_id, "sg-gold");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_quick_match_path_takes_nothing_but_a_quick_match_first() {
    let f = Fixture::start(vec![sam_gong("sg", "bronze")]).await;
    // A hello straight away: refused, closed.
    let me = Arc::new(Identity::from_seed([9; 32]));
    let err =
        Client::handshake(raw_ws(f.addr(), QUICK_MATCH_PATH).await, f.addr(), "sg", f.dealer(), me, None)
            .await
            .err()
            .expect("refused");
    assert!(err.to_string().contains("unexpected-message"), "{err}");
    // Oversized names are malformed.
    let long = "x".repeat(claw_protocol::messages::MAX_MATCH_NAME_LEN + 1);
    let mut ws = raw_ws(f.addr(), QUICK_MATCH_PATH).await;
    send_text(&mut ws, json!({"type": "quick-match", "game": long}).to_string()).await;
    assert!(
        matches!(recv_ws(&mut ws).await, Some(ServerMessage::Rejected(r)) if r.reason == RejectReason::Malformed)
    );
    // A quick-match on a room's own path is not a handshake step.
    let mut ws = raw_ws(f.addr(), "sg").await;
    send_text(&mut ws, ClientMessage::QuickMatch(ask("sam-gong", None)).encode().unwrap()).await;
    assert!(
        matches!(recv_ws(&mut ws).await, Some(ServerMessage::Rejected(r)) if r.reason == RejectReason::UnexpectedMessage)
    );
    // After a handshake it is refused too, and the connection stays.
    let mut c = f.client("sg", 10).await;
    c.send(ClientMessage::QuickMatch(ask("sam-gong", None))).await;
    let e = c
        .recv_until(|m| match m {
            ServerMessage::Error(e) => Some(e.clone()),
            _ => None,
        })
        .await;
    assert_eq!(e.code, claw_protocol::messages::ErrorCode::NotAllowed);
    assert!(c.join().await.accepted);
}

/// One HTTP/1.1 POST of `body`: (status, body).
async fn post(addr: SocketAddr, path: &str, body: &str) -> (u16, serde_json::Value) {
    let mut s = TcpStream::connect(addr).await.expect("connect");
    let req = format!(
        "POST {path} HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    s.write_all(req.as_bytes()).await.expect("write");
    let mut buf = Vec::new();
    s.read_to_end(&mut buf).await.expect("read");
    let text = String::from_utf8_lossy(&buf).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let status = head.split(' ').nth(1).and_then(|c| c.parse().ok()).unwrap_or(0);
    (status, serde_json::from_str(body).unwrap_or_default())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn quick_match_over_http_names_the_room_and_holds_one_seat_per_address() {
    let mut pair = sam_gong("sg-pair", "silver");
    pair.min_players = 2;
    pair.max_players = 2;
    let f = Fixture::start_with(
        vec![pair, sam_gong("sg-b", "bronze")],
        |mut c| {
            c.http_listen = Some(SocketAddr::from(([127, 0, 0, 1], 0)));
            c
        },
        |b| b,
    )
    .await;
    let http = f.node.http_addr().unwrap();
    let (status, v) = post(http, "/quick-match", r#"{"game":"sam-gong","tier":"silver"}"#).await;
    assert_eq!(status, 200, "{v}");
    assert_eq!(v["room"], "sg-pair");
    assert_eq!(v["tier"], "silver");
    assert_eq!(v["invite"], f.node.invite_url("sg-pair").unwrap());
    // The same address asking again replaces its hold instead of adding
    // one: a page reloaded many times cannot fill a table.
    for _ in 0..5 {
        let (status, v) = post(http, "/quick-match", r#"{"game":"sam-gong","tier":"silver"}"#).await;
        assert_eq!((status, &v["room"]), (200, &json!("sg-pair")));
    }
    let (_ws, m) = quick_match(f.addr(), &ask("sam-gong", Some("silver"))).await;
    assert_eq!(m.map(|m| m.room_id), Ok("sg-pair".into()), "one seat held for the address, one free");
    let (status, v) = post(http, "/quick-match", r#"{"game":"sam-gong","tier":"diamond"}"#).await;
    assert_eq!(status, 404, "{v}");
    let (status, _) = post(http, "/quick-match", r#"{"game":"#).await;
    assert_eq!(status, 400);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flood_of_http_quick_matches_meets_the_address_rate() {
    let f = Fixture::start_with(
        vec![sam_gong("sg", "bronze")],
        |mut c| {
            c.http_listen = Some(SocketAddr::from(([127, 0, 0, 1], 0)));
            c.limits.http_archive_reads_per_sec = 1;
            c.limits.http_archive_burst = 1;
            c
        },
        |b| b,
    )
    .await;
    let http = f.node.http_addr().unwrap();
    let mut statuses = Vec::new();
    for _ in 0..10 {
        statuses.push(post(http, "/quick-match", r#"{"game":"sam-gong"}"#).await.0);
    }
    assert_eq!(statuses[0], 200);
    assert!(statuses.contains(&429), "{statuses:?}");
}
