//! The admin HTTP API over real HTTP: the bearer token, opening a room and
//! a private room at run time, joining them, closing one, an empty room
//! expiring, the lobby and a restart; and the binary's token file.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use claw_dealer::admin::AdminConfig;
use claw_player::node::{NodeConfig as PlayerConfig, NodeEvent, PlayerNode};
use claw_player::Invite;
use claw_protocol::messages::{KickReason, QueryData, QueryType, RevealPolicy};
use claw_protocol::Identity;
use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use claw_chips::LocalChips;
use claw_dealer::{DealerNode, NodeConfig as DealerConfig};
use claw_protocol::Chips;

use crate::stop::DealerProc;
use crate::{holdem, GUARD};

const TOKEN: &str = "0123456789abcdef0123456789abcdef-admin";

/// One HTTP/1.1 request over a fresh connection: (status, JSON body or null).
async fn http(addr: SocketAddr, method: &str, path: &str, token: Option<&str>, body: &str) -> (u16, Value) {
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
    (status, serde_json::from_str(body).unwrap_or(Value::Null))
}

async fn join(invite: &str, seed: u8) -> Result<PlayerNode, claw_player::node::NodeError> {
    let invite = Invite::parse(invite).expect("invite parses");
    let me = Arc::new(Identity::from_seed([seed; 32]));
    tokio::time::timeout(GUARD, PlayerNode::connect(&invite, me, PlayerConfig::default()))
        .await
        .expect("guard")
}

fn listed(health: &Value) -> Vec<String> {
    health["rooms"].as_array().into_iter().flatten().filter_map(|r| r.as_str().map(str::to_owned)).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rooms_are_opened_joined_closed_and_expired_through_the_admin_api() {
    let data = tempfile::tempdir().unwrap();
    let node = launch_admin_node(data.path(), Duration::from_millis(400)).await;
    let h = node.http_addr().expect("http on");

    // No token, a wrong one: refused, nothing opened.
    let open = r#"{"room":{"id":"sg","game":"sam-gong","between_hands":"0s"}}"#;
    assert_eq!(http(h, "POST", "/admin/rooms", None, open).await.0, 401);
    assert_eq!(
        http(h, "POST", "/admin/rooms", Some("wrong-token-wrong-token-wrong-token"), open).await.0,
        401
    );
    assert_eq!(http(h, "GET", "/admin/rooms", None, "").await.0, 401);
    assert!(node.invite_url("sg").is_none());

    // Open a room: listed, joinable, with the same defaults as the rooms file.
    let (code, body) = http(h, "POST", "/admin/rooms", Some(TOKEN), open).await;
    assert_eq!(code, 201, "{body}");
    let invite = body["invite"].as_str().unwrap().to_owned();
    assert_eq!(Some(invite.clone()), node.invite_url("sg"));
    assert!(listed(&http(h, "GET", "/health", None, "").await.1).contains(&"sg".to_owned()));
    let p = join(&invite, 1).await.expect("joins the opened room");
    let cfg = tokio::time::timeout(GUARD, p.query(QueryType::RoomConfig)).await.unwrap();
    assert!(
        matches!(cfg, Ok(QueryData::RoomConfig { ref config }) if config.reveal == RevealPolicy::Deferred)
    );
    // Taken ids and bad rooms are refused with a reason.
    assert_eq!(http(h, "POST", "/admin/rooms", Some(TOKEN), open).await.0, 409);
    let (code, body) =
        http(h, "POST", "/admin/rooms", Some(TOKEN), r#"{"room":{"id":"x","game":"chess"}}"#).await;
    assert_eq!(code, 400, "{body}");
    assert_eq!(http(h, "POST", "/admin/rooms", Some(TOKEN), "{").await.0, 400);

    // A private room: not listed, its id unguessable, its invite joins it.
    let (code, body) = open_vip(h).await;
    assert_eq!(code, 201, "{body}");
    let vip = body["room"].as_str().unwrap().to_owned();
    assert!(vip.starts_with("vip-") && vip.len() == "vip-".len() + 32, "{vip}");
    let health = http(h, "GET", "/health", None, "").await.1;
    assert!(!listed(&health).iter().any(|r| r.starts_with("vip")), "{health}");
    let guessed = invite.replace("/sg#", "/vip#");
    assert!(join(&guessed, 2).await.is_err(), "the name alone reaches nothing");
    let q = join(body["invite"].as_str().unwrap(), 3).await.expect("the invite joins the private room");
    let all = http(h, "GET", "/admin/rooms", Some(TOKEN), "").await.1;
    assert!(all["rooms"]
        .as_array()
        .unwrap()
        .iter()
        .any(|r| r["room"] == vip.as_str() && r["private"] == true));

    // Close: the seated player is told, the room is gone.
    let (code, body) = http(h, "DELETE", "/admin/rooms/sg", Some(TOKEN), "").await;
    assert_eq!(code, 200, "{body}");
    let mut p = p;
    let kicked = tokio::time::timeout(GUARD, async {
        loop {
            match p.next_event().await {
                Some(NodeEvent::Kicked { code, .. }) => break Some(code),
                Some(_) => {}
                None => break None,
            }
        }
    })
    .await
    .expect("guard: kicked");
    assert_eq!(kicked, Some(KickReason::RoomClosed));
    assert!(node.invite_url("sg").is_none());
    assert!(!listed(&http(h, "GET", "/health", None, "").await.1).contains(&"sg".to_owned()));
    assert_eq!(http(h, "DELETE", "/admin/rooms/sg", Some(TOKEN), "").await.0, 404);

    // Expiry: seated, the private room stays past the expiry; empty, it closes.
    tokio::time::sleep(Duration::from_millis(1200)).await;
    assert!(node.invite_url(&vip).is_some(), "a room with a seated player does not expire");
    q.leave().await.unwrap();
    tokio::time::timeout(GUARD, async {
        while node.invite_url(&vip).is_some() {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await
    .expect("guard: the empty room expires");
    // A configured room is not expired, even empty.
    assert!(node.invite_url("holdem").is_some());
    node.shutdown(Duration::from_secs(1)).await;
}

/// Opens the private room `vip` (Hold'em): (status, body).
async fn open_vip(h: SocketAddr) -> (u16, Value) {
    let body = r#"{"room":{"id":"vip","game":"texas-holdem"},"private":true}"#;
    http(h, "POST", "/admin/rooms", Some(TOKEN), body).await
}

/// The rooms the web lobby (`/api/rooms`) lists, by id.
async fn lobby(h: SocketAddr) -> Vec<String> {
    let (code, body) = http(h, "GET", "/api/rooms", None, "").await;
    assert_eq!(code, 200, "{body}");
    body["rooms"].as_array().unwrap().iter().map(|r| r["room"].as_str().unwrap().to_owned()).collect()
}

/// A node with the admin API on `data`, its run-time rooms closed after
/// `room_expiry` with nobody seated.
async fn launch_admin_node(data: &std::path::Path, room_expiry: Duration) -> claw_dealer::NodeHandle {
    let admin = AdminConfig { token: TOKEN.into(), room_expiry, close_grace: Duration::from_secs(1) };
    let mut cfg = DealerConfig::local(data, vec![holdem(1000)]);
    cfg.http_listen = Some(SocketAddr::from(([127, 0, 0, 1], 0)));
    DealerNode::builder(cfg)
        .local_chips(Arc::new(LocalChips::new()), Chips(10_000))
        .admin(admin)
        .launch()
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rooms_opened_through_the_api_show_in_the_lobby_and_survive_a_restart_until_closed() {
    let data = tempfile::tempdir().unwrap();
    let node = launch_admin_node(data.path(), Duration::from_secs(600)).await;
    let h = node.http_addr().unwrap();
    // One validation path: the API refuses what the flags and the rooms
    // file refuse, with the same reason.
    let (code, body) =
        http(h, "POST", "/admin/rooms", Some(TOKEN), r#"{"room":{"id":"pub","game":"blackjack"}}"#).await;
    assert_eq!(code, 400, "{body}");
    assert!(body["error"].as_str().unwrap().contains("blackjack has a house"), "{body}");
    let (code, body) = http(
        h,
        "POST",
        "/admin/rooms",
        Some(TOKEN),
        r#"{"room":{"id":"nohouse","game":"texas-holdem","house_bankroll":5}}"#,
    )
    .await;
    assert_eq!(code, 400, "{body}");
    assert!(body["error"].as_str().unwrap().contains("has no house"), "{body}");
    let (code, body) = http(
        h,
        "POST",
        "/admin/rooms",
        Some(TOKEN),
        r#"{"room":{"id":"pub","game":"blackjack","house_bankroll":100000}}"#,
    )
    .await;
    assert_eq!(code, 201, "{body}");
    let (code, body) = open_vip(h).await;
    assert_eq!(code, 201);
    let vip = body["room"].as_str().unwrap().to_owned();
    let (code, _) =
        http(h, "POST", "/admin/rooms", Some(TOKEN), r#"{"room":{"id":"gone","game":"sam-gong"}}"#).await;
    assert_eq!(code, 201);
    assert_eq!(http(h, "DELETE", "/admin/rooms/gone", Some(TOKEN), "").await.0, 200);
    // The lobby lists the configured room and the public run-time one, never
    // the private one; the private room's hands are reached by its id.
    assert_eq!(lobby(h).await, vec!["holdem".to_owned(), "pub".to_owned()]);
    assert_eq!(http(h, "GET", &format!("/api/rooms/{vip}/hands"), None, "").await.0, 200);
    assert_eq!(http(h, "GET", "/api/rooms/vi/hands", None, "").await.0, 404);
    let vip_invite = node.invite_url(&vip).unwrap();
    node.shutdown(Duration::from_secs(1)).await;

    // Restarted on the same data directory: the open rooms are served again
    // at their ids (the private invite still joins), the closed one is not.
    let node = launch_admin_node(data.path(), Duration::from_secs(600)).await;
    let h = node.http_addr().unwrap();
    assert!(node.invite_url("pub").is_some());
    assert!(node.invite_url("gone").is_none(), "a closed room stays closed");
    // ... and its archive stays readable after the restart.
    assert_eq!(http(h, "GET", "/api/rooms/gone/hands", None, "").await.0, 200);
    assert_eq!(http(h, "GET", "/api/rooms/never-served/hands", None, "").await.0, 404);
    // Same room id and dealer key (the test's port is a new one).
    let after = node.invite_url(&vip).expect("the private room is served again");
    let path = |u: &str| u.split_once("/vip").map(|(_, p)| p.to_owned());
    assert_eq!(path(&after), path(&vip_invite));
    assert_eq!(lobby(h).await, vec!["holdem".to_owned(), "pub".to_owned()]);
    join(&after, 4).await.expect("the private invite joins after the restart");
    // Closed now: not served after the next restart.
    assert_eq!(http(h, "DELETE", "/admin/rooms/pub", Some(TOKEN), "").await.0, 200);
    node.shutdown(Duration::from_secs(1)).await;
    let node = launch_admin_node(data.path(), Duration::from_secs(600)).await;
    assert!(node.invite_url("pub").is_none());
    assert!(node.invite_url(&vip).is_some());
    node.shutdown(Duration::from_secs(1)).await;
}

#[cfg(unix)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claw_dealer_admin_api_creates_a_0600_token_file_and_prints_its_path() {
    use std::os::unix::fs::PermissionsExt;
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    let log = tmp.path().join("dealer.log");
    let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_claw-dealer"));
    c.args([
        "--game",
        "texas-holdem",
        "--listen",
        "127.0.0.1:0",
        "--http-listen",
        "127.0.0.1:0",
        "--admin-api",
    ])
    .arg("--data-dir")
    .arg(&data)
    .stdin(std::process::Stdio::null())
    .stderr(std::process::Stdio::from(std::fs::File::create(&log).unwrap()));
    let d = DealerProc::start_with(c, log).await;
    let token_file = data.join(claw_dealer::admin::TOKEN_FILE);
    let mode = std::fs::metadata(&token_file).expect("token file").permissions().mode();
    assert_eq!(mode & 0o777, 0o600);
    let token = std::fs::read_to_string(&token_file).unwrap();
    assert!(token.trim().len() >= 32);
    let (_, log) = d.terminate().await;
    assert!(log.contains(&format!("bearer token in {}", token_file.display())), "{log}");
    assert!(!log.contains(token.trim()), "the token itself is never logged");
}
