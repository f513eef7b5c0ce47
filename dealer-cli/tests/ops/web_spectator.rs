//! The web app as a spectator sees it: bots play hands of every game while a
//! spectator polls every page and API endpoint over real HTTP; afterwards
//! every response is scanned for each hand's secrets (dealer seed, every
//! salt) and the dealer's key. A secret may only appear in a response
//! received after its hand was archived plus the spectator delay. The
//! spectator also attacks the file endpoint with paths outside the archive.

use std::collections::HashSet;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use claw_chips::{ChipProvider, LocalChips};
use claw_dealer::{DealerNode, NodeConfig, RoomConfig};
use claw_dealer_cli::demo::{run, DemoParams};
use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

const DELAY: Duration = Duration::from_millis(1500);

/// One HTTP/1.1 GET over a fresh connection: (status, body).
async fn get(addr: SocketAddr, path: &str) -> (u16, String) {
    let mut s = TcpStream::connect(addr).await.expect("connect");
    let req = format!("GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n");
    s.write_all(req.as_bytes()).await.expect("write");
    let mut buf = Vec::new();
    s.read_to_end(&mut buf).await.expect("read");
    let text = String::from_utf8_lossy(&buf).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let status = head.split(' ').nth(1).and_then(|c| c.parse().ok()).unwrap_or(0);
    let body = if head.to_ascii_lowercase().contains("transfer-encoding: chunked") {
        dechunk(body)
    } else {
        body.to_owned()
    };
    (status, body)
}

fn dechunk(mut s: &str) -> String {
    let mut out = String::new();
    while let Some((len, rest)) = s.split_once("\r\n") {
        let n = usize::from_str_radix(len.trim(), 16).unwrap_or(0);
        if n == 0 || rest.len() < n {
            break;
        }
        out.push_str(&rest[..n]);
        s = rest[n..].trim_start_matches("\r\n");
    }
    out
}

struct Seen {
    at: SystemTime,
    path: String,
    body: String,
}

/// Polls everything a spectator can reach until `stop`.
async fn spectate(addr: SocketAddr, room: String, stop: Arc<AtomicBool>) -> (Vec<Seen>, bool) {
    let mut seen = Vec::new();
    let mut fetched = HashSet::new();
    let mut saw_hidden = false;
    for p in ["/", "/app.js", "/app.css", &format!("/room/{room}"), "/audit"] {
        let (status, body) = get(addr, p).await;
        assert_eq!(status, 200, "{p}");
        seen.push(Seen { at: SystemTime::now(), path: p.to_owned(), body });
    }
    while !stop.load(Ordering::Relaxed) {
        let (_, rooms) = get(addr, "/api/rooms").await;
        seen.push(Seen { at: SystemTime::now(), path: "/api/rooms".into(), body: rooms });
        let list_path = format!("/api/rooms/{room}/hands");
        let (status, list) = get(addr, &list_path).await;
        assert_eq!(status, 200);
        let v: Value = serde_json::from_str(&list).expect("hands JSON");
        saw_hidden |= v["not_yet_public"].as_u64().unwrap_or(0) > 0;
        seen.push(Seen { at: SystemTime::now(), path: list_path, body: list });
        for h in v["hands"].as_array().into_iter().flatten() {
            let file = h["file"].as_str().unwrap_or_default().to_owned();
            if !fetched.insert(file.clone()) {
                continue;
            }
            for p in [
                format!("/api/rooms/{room}/hands/{file}"),
                format!("/api/rooms/{room}/hands/{file}/history?format=text"),
            ] {
                let (status, body) = get(addr, &p).await;
                assert_eq!(status, 200, "{p}: {body}");
                seen.push(Seen { at: SystemTime::now(), path: p, body });
            }
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    (seen, saw_hidden)
}

fn hex_secrets(line: &Value, out: &mut Vec<String>) {
    let body = &line["body"];
    if let Some(s) = body["dealer_seed"].as_str() {
        out.push(s.to_owned());
    }
    for o in body["openings"].as_array().into_iter().flatten() {
        if let Some(s) = o["salt"].as_str() {
            out.push(s.to_owned());
        }
    }
}

async fn watch_game(game: &str, bots: u8, hands: u64) {
    let data = tempfile::tempdir().expect("tempdir");
    let mut room = RoomConfig::new(game, game);
    room.between_hands = Duration::from_millis(20);
    room.max_hands = Some(hands);
    room.reveal = claw_dealer::config::RevealPolicy::Full;
    if claw_dealer::config::has_house(game) {
        room.house_bankroll = claw_protocol::Chips(1_000_000);
    }
    let mut config = NodeConfig::local(data.path(), vec![room]);
    config.http_listen = Some(SocketAddr::from(([127, 0, 0, 1], 0)));
    config.spectator_delay = Some(DELAY);
    // The spectator scrapes as fast as it can: not the rate under test here.
    config.limits.http_archive_reads_per_sec = 100_000;
    config.limits.http_archive_burst = 100_000;
    let chips = Arc::new(LocalChips::new());
    let provider: Arc<dyn ChipProvider> = chips.clone();
    let node = DealerNode::builder(config)
        .chips(provider.clone())
        .grants(chips, claw_protocol::Chips(1_000_000))
        .launch()
        .await
        .expect("node starts");
    let http = node.http_addr().expect("http on");
    let stop = Arc::new(AtomicBool::new(false));
    let spectator = tokio::spawn(spectate(http, game.to_owned(), stop.clone()));
    let params = DemoParams {
        room: game.into(),
        game: game.into(),
        bots,
        hands,
        strategy: "simple".into(),
        bot_keys: None,
        progress: false,
    };
    let mut log = Vec::new();
    let outcome = run(&node, &provider, &params, &mut log).await.expect("demo runs");
    let log = String::from_utf8_lossy(&log);
    // The secrets scan needs hands, and no bot may have caught the dealer; a hand a bot
    // did not see end (a slow machine's dropped connection) is reported, not a failure.
    assert!(outcome.hands > 0 && outcome.audit_failures == 0, "{game}: audits failed:\n{log}");
    if !outcome.all_audited {
        println!("{game}: {} hands not seen to their end by a bot:\n{log}", outcome.incomplete);
    }
    // Let the last hands become public, then stop watching.
    tokio::time::sleep(DELAY + Duration::from_millis(500)).await;
    stop.store(true, Ordering::Relaxed);
    let (seen, saw_hidden) = spectator.await.expect("spectator");
    assert!(saw_hidden, "{game}: the spectator never saw a hand held back by the delay");

    // Attacks on the file endpoint: nothing outside the archive, nothing not public.
    for p in [
        format!("/api/rooms/{game}/hands/..%2F..%2F..%2Fdealer.key"),
        format!("/api/rooms/{game}/hands/../../../dealer.key"),
        format!("/api/rooms/{game}/hands/%2e%2e%2fdealer.key"),
        "/api/rooms/nope/hands".to_owned(),
        format!("/api/rooms/{game}/hands/00000000-00000000000000000000000000000000.jsonl"),
    ] {
        let (status, body) = get(http, &p).await;
        assert_ne!(status, 200, "{p} answered: {body}");
    }

    // Secrets of every archived hand, with the time each became public.
    let dir = data.path().join("rooms").join(game).join("transcripts");
    let mut secrets: Vec<(String, SystemTime)> = Vec::new();
    let mut n_hands = 0;
    // Settled hands only (a voided hand's file is kept apart, under voided/).
    for e in std::fs::read_dir(&dir).expect("archive").flatten().filter(|e| e.path().is_file()) {
        let written = e.metadata().and_then(|m| m.modified()).expect("mtime");
        let text = std::fs::read_to_string(e.path()).expect("read");
        let mut s = Vec::new();
        for line in text.lines() {
            hex_secrets(&serde_json::from_str(line).expect("json line"), &mut s);
        }
        assert!(!s.is_empty(), "{}: no secrets found to scan for", e.path().display());
        secrets.extend(s.into_iter().map(|x| (x, written + DELAY)));
        n_hands += 1;
    }
    assert_eq!(n_hands as u64, outcome.hands, "{game}: one archive file per hand");
    let key: Value =
        serde_json::from_str(&std::fs::read_to_string(data.path().join("dealer.key")).expect("key"))
            .expect("key");
    let dealer_secrets =
        [key["signing_secret"].as_str().unwrap(), key["encryption_secret"].as_str().unwrap()];
    let mut after_public = 0usize;
    for s in &seen {
        for d in dealer_secrets {
            assert!(!s.body.contains(d), "{game}: {} carries a dealer secret key", s.path);
        }
        for (secret, public_at) in &secrets {
            if s.body.contains(secret.as_str()) {
                assert!(
                    s.at + Duration::from_millis(50) >= *public_at,
                    "{game}: {} carried a secret {:?} before its hand was public",
                    s.path,
                    public_at.duration_since(s.at)
                );
                after_public += 1;
            }
        }
    }
    assert!(after_public > 0, "{game}: the spectator never saw a revealed hand");
    println!(
        "{game}: {} hands, {} responses scanned, {} secrets, {after_public} sightings all after the delay",
        outcome.hands,
        seen.len(),
        secrets.len()
    );
    node.shutdown(Duration::from_secs(1)).await;
}

fn hands() -> u64 {
    std::env::var("CLAW_WEB_HANDS").ok().and_then(|s| s.parse().ok()).unwrap_or(50)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn spectator_sees_no_secret_early_holdem() {
    watch_game("texas-holdem", 4, hands()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn spectator_sees_no_secret_early_blackjack() {
    watch_game("blackjack", 3, hands()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn spectator_sees_no_secret_early_dou_di_zhu() {
    watch_game("dou-di-zhu", 3, hands()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn spectator_sees_no_secret_early_sam_gong() {
    watch_game("sam-gong", 4, hands()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn spectator_sees_no_secret_early_guandan() {
    watch_game("guandan", 4, hands()).await;
}
