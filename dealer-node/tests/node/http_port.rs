//! Attacks on the HTTP port (health, metrics, archive, web app, admin API)
//! over real sockets on 127.0.0.x: a slow-loris request, a dripped body,
//! idle keep-alive connections, floods from one and from several
//! addresses; and the security headers of every answer. Limits are small
//! so that each test runs in a few seconds; every wait is bounded.
//! docs/security.md lists the defences.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use claw_dealer::admin::AdminConfig;
use claw_dealer::{Limits, RoomConfig};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpSocket, TcpStream};

use crate::common::*;

const TOKEN: &str = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

/// A node serving HTTP on 127.0.0.1 with the admin API, its HTTP limits
/// set by `limits`.
async fn http_node(limits: impl FnOnce(&mut Limits)) -> (Fixture, SocketAddr) {
    let f = Fixture::start_with(
        vec![RoomConfig::new("a", "high-card")],
        |mut c| {
            c.http_listen = Some("127.0.0.1:0".parse().unwrap());
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
    .await;
    let http = f.node.http_addr().unwrap();
    (f, http)
}

/// A socket from `from` (any 127.0.0.x is loopback on Linux) to `to`.
async fn tcp_from(from: [u8; 4], to: SocketAddr) -> TcpStream {
    let s = TcpSocket::new_v4().unwrap();
    s.bind(SocketAddr::from((from, 0))).unwrap();
    s.connect(to).await.unwrap()
}

/// One answer read from `s`: status line, header block (lower-cased
/// names), body (by `content-length`).
async fn read_response(s: &mut TcpStream) -> (String, String, String) {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    let head_end = loop {
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
        let n = tokio::time::timeout(GUARD, s.read(&mut chunk)).await.expect("guard: an answer").unwrap();
        assert!(n > 0, "closed before an answer: {:?}", String::from_utf8_lossy(&buf));
        buf.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).to_string();
    let (status, headers) = head.split_once("\r\n").unwrap();
    let headers = headers
        .lines()
        .map(|l| match l.split_once(':') {
            Some((k, v)) => format!("{}:{v}\n", k.to_ascii_lowercase()),
            None => String::new(),
        })
        .collect::<String>();
    let len: usize = headers
        .lines()
        .find_map(|l| l.strip_prefix("content-length:"))
        .map_or(0, |v| v.trim().parse().unwrap());
    while buf.len() < head_end + len {
        let n = tokio::time::timeout(GUARD, s.read(&mut chunk)).await.expect("guard: the body").unwrap();
        assert!(n > 0, "closed in the body");
        buf.extend_from_slice(&chunk[..n]);
    }
    let body = String::from_utf8_lossy(&buf[head_end..head_end + len]).to_string();
    (status.to_owned(), headers, body)
}

/// `GET path` on `s`, kept alive; the answer.
async fn get(s: &mut TcpStream, path: &str) -> (String, String, String) {
    s.write_all(format!("GET {path} HTTP/1.1\r\nHost: x\r\n\r\n").as_bytes()).await.unwrap();
    read_response(s).await
}

/// Reads `s` until the node closes it (or resets it), at most `within`:
/// the time it took and what was read, or `None` if it is still open.
async fn closed_within(s: &mut TcpStream, within: Duration) -> Option<(Duration, String)> {
    let start = Instant::now();
    let mut out = Vec::new();
    let mut chunk = [0u8; 1024];
    let r = tokio::time::timeout(within, async {
        loop {
            match s.read(&mut chunk).await {
                Ok(0) | Err(_) => break,
                Ok(n) => out.extend_from_slice(&chunk[..n]),
            }
        }
    })
    .await;
    r.ok().map(|()| (start.elapsed(), String::from_utf8_lossy(&out).into_owned()))
}

/// Sends `bytes` one at a time, one every 200 ms, until the node closes
/// the socket; reads meanwhile. How long the socket stayed open (`None`:
/// still open after `within`) and what the node answered.
async fn drip(s: TcpStream, first: &[u8], bytes: &[u8], within: Duration) -> Option<(Duration, String)> {
    let (mut rd, mut wr) = s.into_split();
    wr.write_all(first).await.unwrap();
    let bytes = bytes.to_vec();
    let writer = tokio::spawn(async move {
        for b in bytes {
            tokio::time::sleep(Duration::from_millis(200)).await;
            if wr.write_all(&[b]).await.is_err() {
                return;
            }
        }
        // Kept open (a drip that ran out of bytes is not a close).
        tokio::time::sleep(Duration::from_secs(3600)).await;
    });
    let start = Instant::now();
    let mut out = Vec::new();
    let r = tokio::time::timeout(within, async {
        let mut chunk = [0u8; 1024];
        loop {
            match rd.read(&mut chunk).await {
                Ok(0) | Err(_) => break,
                Ok(n) => out.extend_from_slice(&chunk[..n]),
            }
        }
    })
    .await;
    writer.abort();
    r.ok().map(|()| (start.elapsed(), String::from_utf8_lossy(&out).into_owned()))
}

#[tokio::test]
async fn a_slow_loris_request_is_cut_at_the_header_deadline() {
    let (_f, http) = http_node(|l| {
        l.http_header_timeout = Duration::from_secs(1);
        l.http_idle_timeout = Duration::from_secs(20);
    })
    .await;
    // One byte every 200 ms: the head would take 20 s.
    let head = format!("GET /health HTTP/1.1\r\nHost: x\r\nX-Pad: {}\r\n\r\n", "a".repeat(60));
    let s = tcp_from([127, 0, 0, 1], http).await;
    let (open_for, answer) = drip(s, b"G", &head.as_bytes()[1..], Duration::from_secs(6))
        .await
        .expect("the slow loris is still open after 6 s");
    assert!(open_for < Duration::from_secs(3), "cut after {open_for:?}");
    assert!(!answer.contains("200 OK"), "{answer}");
    // An honest request is answered at once.
    let mut honest = tcp_from([127, 0, 0, 1], http).await;
    assert!(get(&mut honest, "/health").await.0.starts_with("HTTP/1.1 200"));
}

#[tokio::test]
async fn a_dripped_body_is_refused_at_the_body_deadline() {
    let (_f, http) = http_node(|l| {
        l.http_body_timeout = Duration::from_secs(1);
        l.http_idle_timeout = Duration::from_secs(20);
    })
    .await;
    let head = format!(
        "POST /admin/rooms HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {TOKEN}\r\n\
         Content-Type: application/json\r\nContent-Length: 100\r\n\r\n"
    );
    let body = format!("{{\"room\":{{\"id\":\"b\",\"game\":\"high-card\"}},\"pad\":\"{}\"}}", "a".repeat(50));
    let s = tcp_from([127, 0, 0, 1], http).await;
    let (open_for, answer) = drip(s, head.as_bytes(), body.as_bytes(), Duration::from_secs(6))
        .await
        .expect("the dripped body is still read after 6 s");
    assert!(open_for < Duration::from_secs(3), "cut after {open_for:?}");
    assert!(answer.starts_with("HTTP/1.1 400"), "{answer}");
}

#[tokio::test]
async fn idle_keep_alive_and_silent_connections_are_closed_after_the_idle_timeout() {
    let (_f, http) = http_node(|l| l.http_idle_timeout = Duration::from_secs(1)).await;
    // Kept alive and used: each request restarts the idle clock.
    let mut s = tcp_from([127, 0, 0, 1], http).await;
    assert!(get(&mut s, "/health").await.0.starts_with("HTTP/1.1 200"));
    tokio::time::sleep(Duration::from_millis(600)).await;
    assert!(get(&mut s, "/health").await.0.starts_with("HTTP/1.1 200"), "cut before the idle timeout");
    // Then left idle: closed after about a second.
    let (after, rest) =
        closed_within(&mut s, Duration::from_secs(5)).await.expect("idle keep-alive still open after 5 s");
    assert!(after >= Duration::from_millis(800) && after < Duration::from_secs(3), "closed after {after:?}");
    assert!(rest.is_empty(), "{rest}");
    // A socket that never sends a byte.
    let mut silent = tcp_from([127, 0, 0, 1], http).await;
    let (after, _) =
        closed_within(&mut silent, Duration::from_secs(5)).await.expect("silent socket still open after 5 s");
    assert!(after < Duration::from_secs(3), "closed after {after:?}");
}

#[tokio::test]
async fn a_reader_that_stops_reading_its_answers_is_closed() {
    let (_f, http) = http_node(|l| l.http_idle_timeout = Duration::from_secs(1)).await;
    // A small receive buffer, and thousands of pipelined requests whose
    // answers are never read: the node's writes stall.
    let sock = TcpSocket::new_v4().unwrap();
    sock.set_recv_buffer_size(4096).unwrap();
    let mut s = sock.connect(http).await.unwrap();
    let one = "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n";
    s.write_all(one.repeat(3000).as_bytes()).await.unwrap();
    tokio::time::sleep(Duration::from_secs(3)).await;
    // Reading now drains what was sent, then meets the close.
    let mut sink = Vec::new();
    let r = tokio::time::timeout(Duration::from_secs(3), s.read_to_end(&mut sink)).await;
    let answers = String::from_utf8_lossy(&sink).matches("HTTP/1.1 200").count();
    assert!(r.is_ok(), "still open after 6 s ({answers} answers read)");
    assert!(answers < 3000, "every answer was written: the writes never stalled");
}

#[tokio::test]
async fn connections_past_the_per_address_cap_are_refused_and_others_still_get_in() {
    let (_f, http) = http_node(|l| {
        l.http_max_conns_per_addr = 4;
        l.http_max_connections = 64;
        l.http_idle_timeout = Duration::from_secs(20);
        l.http_header_timeout = Duration::from_secs(20);
    })
    .await;
    let mut kept = Vec::new();
    for _ in 0..4 {
        kept.push(tcp_from([127, 0, 0, 3], http).await);
    }
    // Let the node account for them before the next ones.
    tokio::time::sleep(Duration::from_millis(200)).await;
    for i in 0..6 {
        let mut extra = tcp_from([127, 0, 0, 3], http).await;
        let (_, answer) = closed_within(&mut extra, Duration::from_secs(3))
            .await
            .unwrap_or_else(|| panic!("socket {} is still open", 5 + i));
        assert!(answer.is_empty() || answer.starts_with("HTTP/1.1 503"), "{answer}");
    }
    // The address's first four are served, and so is another address.
    for s in &mut kept {
        assert!(get(s, "/health").await.0.starts_with("HTTP/1.1 200"));
    }
    let mut honest = tcp_from([127, 0, 0, 2], http).await;
    assert!(get(&mut honest, "/health").await.0.starts_with("HTTP/1.1 200"));
}

#[tokio::test]
async fn a_flood_from_many_addresses_makes_room_for_an_honest_request() {
    let (_f, http) = http_node(|l| {
        l.http_max_conns_per_addr = 4;
        l.http_max_connections = 8;
        l.http_idle_timeout = Duration::from_secs(20);
        l.http_header_timeout = Duration::from_secs(20);
    })
    .await;
    // Four addresses, four slow-loris sockets each: twice the node's budget.
    let mut flood = Vec::new();
    for host in 10..14u8 {
        for _ in 0..4 {
            let mut s = tcp_from([127, 0, 0, host], http).await;
            s.write_all(b"GET /health HTTP/1.1\r\n").await.unwrap();
            flood.push(s);
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
    // Honest requests from a fresh address are served during the flood.
    for _ in 0..5 {
        let mut honest = tcp_from([127, 0, 0, 2], http).await;
        let (status, _, _) = get(&mut honest, "/health").await;
        assert!(status.starts_with("HTTP/1.1 200"), "{status}");
        // And its keep-alive socket stays in the budget while it is used.
        assert!(get(&mut honest, "/metrics").await.0.starts_with("HTTP/1.1 200"));
    }
    // The budget holds: at most 8 sockets are open, the oldest were closed.
    let mut open = 0;
    for s in &mut flood {
        if closed_within(s, Duration::from_millis(100)).await.is_none() {
            open += 1;
        }
    }
    assert!(open <= 8, "{open} of the flood's 16 sockets still open against a budget of 8");
}

#[tokio::test]
async fn every_answer_forbids_sniffing_and_framing() {
    let (_f, http) = http_node(|_| {}).await;
    let mut s = tcp_from([127, 0, 0, 1], http).await;
    let mut paths = vec!["/health", "/metrics", "/no-such-page", "/rooms/a/hands/7", "/admin/rooms"];
    if cfg!(feature = "web") {
        paths.extend(["/", "/app.js", "/api/rooms"]);
    }
    for path in paths {
        let (status, headers, _) = get(&mut s, path).await;
        assert!(headers.contains("x-content-type-options: nosniff\n"), "{path} {status}: {headers}");
        assert!(headers.contains("x-frame-options: DENY\n"), "{path} {status}: {headers}");
        let csp =
            headers.lines().find_map(|l| l.strip_prefix("content-security-policy:")).unwrap_or_default();
        assert!(csp.contains("frame-ancestors 'none'"), "{path} {status}: {headers}");
        if path == "/" {
            // The app's own policy stays (its assets load from the node).
            assert!(csp.contains("default-src 'self'"), "{csp}");
        }
    }
}

/// A counter of `/metrics`.
async fn metric(http: SocketAddr, name: &str) -> u64 {
    let mut s = tcp_from([127, 0, 0, 1], http).await;
    let (_, _, body) = get(&mut s, "/metrics").await;
    body.lines()
        .find_map(|l| l.strip_prefix(name).and_then(|v| v.trim().parse().ok()))
        .unwrap_or_else(|| panic!("no {name} in /metrics"))
}

#[tokio::test]
async fn archive_reads_past_the_per_address_rate_get_429_and_other_addresses_are_served() {
    let (_f, http) = http_node(|l| {
        l.http_archive_reads_per_sec = 1;
        l.http_archive_burst = 3;
    })
    .await;
    let mut s = tcp_from([127, 0, 0, 2], http).await;
    for _ in 0..3 {
        let (status, _, _) = get(&mut s, "/rooms/a/hands/1").await;
        assert!(status.contains(" 404 "), "within the burst: answered ({status})");
    }
    let (status, headers, _) = get(&mut s, "/rooms/a/hands/1").await;
    assert!(status.contains(" 429 "), "past the burst: {status}");
    assert!(headers.contains("retry-after: 1\n"), "{headers}");
    // Another address is not charged for it; health is not an archive read.
    let mut other = tcp_from([127, 0, 0, 3], http).await;
    assert!(get(&mut other, "/rooms/a/hands/1").await.0.contains(" 404 "));
    assert!(get(&mut s, "/health").await.0.contains(" 200 "));
    assert_eq!(metric(http, "claw_archive_rate_limited_total").await, 1);
}

/// Listing a room with many archived hands reads its folder once (and
/// again only when it changed), a page at a time; a hand history is
/// audited once however often it is asked for.
#[cfg(feature = "web")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_big_archive_is_indexed_once_paginated_and_its_audits_cached() {
    use claw_dealer::archive::Archive;

    const FILES: u64 = 20_000;
    let mut room = fast_room("t", "texas-holdem");
    room.max_hands = Some(1);
    room.min_players = 2;
    let f = Fixture::start_with(
        vec![room, RoomConfig::new("big", "high-card")],
        |mut c| {
            c.http_listen = Some("127.0.0.1:0".parse().unwrap());
            c.spectator_delay = Some(Duration::ZERO);
            c.limits.http_archive_reads_per_sec = 10_000;
            c.limits.http_archive_burst = 10_000;
            c
        },
        |b| b,
    )
    .await;
    let http = f.node.http_addr().unwrap();
    let big = f.dir.path().join("rooms/big/transcripts");
    std::fs::create_dir_all(&big).unwrap();
    for n in 0..FILES {
        std::fs::write(big.join(format!("{n:08}-{:032x}.jsonl", n)), "{}\n").unwrap();
    }
    let mut s = tcp_from([127, 0, 0, 4], http).await;
    let (mut seen, mut before) = (Vec::new(), None::<u64>);
    loop {
        let path = match before {
            Some(b) => format!("/api/rooms/big/hands?before={b}"),
            None => "/api/rooms/big/hands".to_owned(),
        };
        let (status, _, body) = get(&mut s, &path).await;
        assert!(status.contains(" 200 "), "{status}: {body}");
        let page: serde_json::Value = serde_json::from_str(&body).unwrap();
        let hands = page["hands"].as_array().unwrap();
        assert!(hands.len() <= 200);
        seen.extend(hands.iter().map(|h| h["hand_number"].as_u64().unwrap()));
        match page["next_before"].as_u64() {
            Some(b) => before = Some(b),
            None => break,
        }
    }
    assert_eq!(seen, (0..FILES).rev().collect::<Vec<_>>(), "every hand once, newest first");
    assert_eq!(metric(http, "claw_archive_scans_total").await, 1, "the folder was read once");
    // A new hand is listed once the folder changed (read again at most once a second).
    std::fs::write(big.join(format!("{FILES:08}-{:032x}.jsonl", FILES)), "{}\n").unwrap();
    tokio::time::sleep(Duration::from_millis(1100)).await;
    let (_, _, body) = get(&mut s, "/api/rooms/big/hands?limit=1").await;
    let page: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(page["hands"][0]["hand_number"], FILES);
    assert_eq!(metric(http, "claw_archive_scans_total").await, 2);

    // One real hand, its history asked for five times: audited once.
    let g = claw_games::registry::get("texas-holdem").unwrap();
    let clients = seat_players(&f, "t", 30, 2).await;
    run_bots(clients, g, 1).await;
    f.node.room("t").unwrap().wait_closed().await;
    let file = Archive::reader(f.dir.path(), "t").files().pop().expect("the hand is archived");
    let file = file.file_name().unwrap().to_str().unwrap().to_owned();
    let mut bodies = Vec::new();
    for _ in 0..5 {
        let (status, _, body) = get(&mut s, &format!("/api/rooms/t/hands/{file}/history?format=text")).await;
        assert!(status.contains(" 200 "), "{status}: {body}");
        bodies.push(body);
    }
    assert!(bodies.windows(2).all(|w| w[0] == w[1]));
    assert_eq!(metric(http, "claw_archive_audits_total").await, 1, "one audit for five requests");
}
