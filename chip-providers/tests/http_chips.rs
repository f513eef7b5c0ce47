//! `HttpChips` against a real `claw-points` server on 127.0.0.1: the provider
//! contract, typed errors, retries with the same key after a dropped answer,
//! and the URL policy.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use claw_chips::http::{validate_url, HttpConfigError};
use claw_chips::{
    AccountId, AccountOp, ChipError, ChipOp, ChipProvider, HttpChips, HttpChipsConfig, IdempotencyKey,
};
use claw_points::{Limits, RunningServer, ServerConfig};
use claw_protocol::Chips;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

const TOKEN: &str = "http-chips-test-token-0123456789";

fn acct(s: &str) -> AccountId {
    AccountId::new(s).unwrap()
}

fn key(s: &str) -> IdempotencyKey {
    IdempotencyKey::new(s).unwrap()
}

struct Server {
    inner: RunningServer,
    _dir: tempfile::TempDir,
}

async fn server(limits: Limits) -> Server {
    let dir = tempfile::tempdir().unwrap();
    let cfg = ServerConfig {
        db_url: claw_points::sqlite_url(&dir.path().join("points.db")),
        listen: "127.0.0.1:0".parse().unwrap(),
        token: TOKEN.into(),
        limits,
    };
    Server { inner: claw_points::serve(cfg).await.unwrap(), _dir: dir }
}

fn unlimited() -> Limits {
    Limits { rate_per_sec: 0, ..Limits::default() }
}

/// Fast retry settings so failure tests stay short.
fn config(url: impl Into<String>) -> HttpChipsConfig {
    HttpChipsConfig {
        timeout: Duration::from_secs(5),
        backoff_base: Duration::from_millis(10),
        backoff_max: Duration::from_millis(50),
        ..HttpChipsConfig::new(url, TOKEN)
    }
}

fn client(url: impl Into<String>) -> HttpChips {
    HttpChips::new(config(url)).unwrap()
}

#[tokio::test]
async fn provider_contract() {
    let s = server(unlimited()).await;
    let c = client(s.inner.url());
    assert_eq!(c.name(), "http");
    c.health().await.unwrap();
    assert_eq!(c.balance(&acct("a")).await.unwrap(), Chips(0));
    assert_eq!(c.grant(&key("g"), &acct("a"), Chips(100), "buy-in").await.unwrap(), Chips(100));
    assert_eq!(c.debit(&key("k1"), &acct("a"), Chips(60), "bet").await.unwrap(), Chips(40));
    // Retry: same answer, nothing moves.
    assert_eq!(c.debit(&key("k1"), &acct("a"), Chips(60), "bet").await.unwrap(), Chips(40));
    assert_eq!(c.balance(&acct("a")).await.unwrap(), Chips(40));
    // Same key, another request.
    assert!(matches!(c.debit(&key("k1"), &acct("a"), Chips(1), "bet").await, Err(ChipError::KeyReused(_))));
    assert_eq!(
        c.debit(&key("k2"), &acct("a"), Chips(41), "bet").await,
        Err(ChipError::Insufficient { account: "a".into(), balance: 40, needed: 41 })
    );
    assert!(matches!(c.debit(&key("k3"), &acct("a"), Chips(0), "bet").await, Err(ChipError::BadRequest(_))));
    assert!(matches!(
        c.credit(&key("k4"), &acct("a"), Chips(u64::MAX), "win").await,
        Err(ChipError::BadRequest(_))
    ));
    assert_eq!(c.credit(&key("k5"), &acct("b"), Chips(5), "win").await.unwrap(), Chips(5));

    // Settle: all or nothing.
    let ops = vec![
        AccountOp { kind: ChipOp::Credit, account: acct("b"), amount: Chips(5), memo: "win".into() },
        AccountOp { kind: ChipOp::Debit, account: acct("a"), amount: Chips(41), memo: "loss".into() },
    ];
    assert!(matches!(c.settle(&key("s1"), &ops).await, Err(ChipError::Insufficient { .. })));
    assert_eq!(c.balance(&acct("b")).await.unwrap(), Chips(5));
    let ops = vec![
        AccountOp { kind: ChipOp::Debit, account: acct("a"), amount: Chips(40), memo: "loss".into() },
        AccountOp { kind: ChipOp::Credit, account: acct("b"), amount: Chips(40), memo: "win".into() },
    ];
    c.settle(&key("s2"), &ops).await.unwrap();
    c.settle(&key("s2"), &ops).await.unwrap();
    assert_eq!(c.balance(&acct("a")).await.unwrap(), Chips(0));
    assert_eq!(c.balance(&acct("b")).await.unwrap(), Chips(45));
    let report = c.verify_audit().await.unwrap();
    assert_eq!(report["ok"], true);
    assert_eq!(report["total_balance"], 45);
    // Works through the name `localhost` too (resolved and checked to be loopback).
    let local = client(format!("http://localhost:{}/", s.inner.local_addr().port()));
    assert_eq!(local.balance(&acct("b")).await.unwrap(), Chips(45));
    s.inner.shutdown().await.unwrap();
}

#[tokio::test]
async fn wrong_token_is_unauthorized() {
    let s = server(unlimited()).await;
    let c =
        HttpChips::new(HttpChipsConfig { token: "not-the-token".into(), ..config(s.inner.url()) }).unwrap();
    assert!(matches!(c.balance(&acct("a")).await, Err(ChipError::Unauthorized(_))));
    assert!(matches!(c.grant(&key("g"), &acct("a"), Chips(1), "").await, Err(ChipError::Unauthorized(_))));
    assert!(!ChipError::Unauthorized(String::new()).is_retryable());
    s.inner.shutdown().await.unwrap();
}

#[tokio::test]
async fn unreachable_and_timeout() {
    // A port with nobody listening.
    let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let closed = l.local_addr().unwrap();
    drop(l);
    let c =
        HttpChips::new(HttpChipsConfig { max_attempts: 3, ..config(format!("http://{closed}")) }).unwrap();
    let e = c.debit(&key("k"), &acct("a"), Chips(1), "").await.unwrap_err();
    assert!(matches!(e, ChipError::Unreachable(_)), "{e:?}");
    assert!(e.is_retryable());

    // A server that accepts and never answers.
    let silent = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = silent.local_addr().unwrap();
    let accepted = Arc::new(AtomicUsize::new(0));
    let acc = accepted.clone();
    let hold = tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((sock, _)) = silent.accept().await {
            acc.fetch_add(1, Ordering::SeqCst);
            held.push(sock);
        }
    });
    let c = HttpChips::new(HttpChipsConfig {
        timeout: Duration::from_millis(300),
        max_attempts: 2,
        ..config(format!("http://{addr}"))
    })
    .unwrap();
    assert_eq!(c.debit(&key("k"), &acct("a"), Chips(1), "").await, Err(ChipError::Timeout));
    assert_eq!(accepted.load(Ordering::SeqCst), 2, "one connection per attempt");
    hold.abort();
}

#[tokio::test]
async fn rate_limited_then_retried_after() {
    // The client holds the token, so the operator bucket is the one that limits it.
    let s = server(Limits { operator_rate_per_sec: 1, operator_burst: 1, ..Limits::default() }).await;
    let once = HttpChips::new(HttpChipsConfig { max_attempts: 1, ..config(s.inner.url()) }).unwrap();
    once.balance(&acct("a")).await.unwrap();
    assert_eq!(once.balance(&acct("a")).await, Err(ChipError::RateLimited));
    // With retries, the client waits for Retry-After and gets through.
    let patient = HttpChips::new(HttpChipsConfig { max_attempts: 4, ..config(s.inner.url()) }).unwrap();
    assert_eq!(patient.balance(&acct("a")).await.unwrap(), Chips(0));
    // A Retry-After longer than the client accepts fails fast.
    let hasty = HttpChips::new(HttpChipsConfig {
        max_attempts: 4,
        max_retry_after: Duration::from_millis(100),
        ..config(s.inner.url())
    })
    .unwrap();
    let _ = hasty.balance(&acct("a")).await;
    assert_eq!(hasty.balance(&acct("a")).await, Err(ChipError::RateLimited));
    s.inner.shutdown().await.unwrap();
}

#[derive(Clone, Copy)]
enum Fault {
    /// Forward the request, let the server answer, then cut the connection before the answer.
    DropAnswer,
    /// Answer 503 without forwarding.
    Unavailable,
}

/// A TCP proxy in front of `upstream` that applies `fault` to its first
/// `faulty` connections and forwards the rest untouched.
async fn faulty_proxy(upstream: SocketAddr, fault: Fault, faulty: usize) -> (SocketAddr, Arc<AtomicUsize>) {
    let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = l.local_addr().unwrap();
    let count = Arc::new(AtomicUsize::new(0));
    let n = count.clone();
    tokio::spawn(async move {
        while let Ok((mut client, _)) = l.accept().await {
            let i = n.fetch_add(1, Ordering::SeqCst);
            tokio::spawn(async move {
                if i >= faulty {
                    let mut up = tokio::net::TcpStream::connect(upstream).await.unwrap();
                    let _ = tokio::io::copy_bidirectional(&mut client, &mut up).await;
                    return;
                }
                match fault {
                    Fault::DropAnswer => {
                        let up = tokio::net::TcpStream::connect(upstream).await.unwrap();
                        let (mut cr, cw) = client.into_split();
                        let (mut ur, mut uw) = up.into_split();
                        let fwd = tokio::spawn(async move { tokio::io::copy(&mut cr, &mut uw).await });
                        // Wait until the server starts answering (the operation is committed)...
                        let mut buf = [0u8; 1];
                        let _ = ur.read(&mut buf).await;
                        // ...then lose the answer.
                        fwd.abort();
                        drop(cw);
                        drop(ur);
                    }
                    Fault::Unavailable => {
                        let mut buf = [0u8; 4096];
                        let _ = client.read(&mut buf).await;
                        let body = r#"{"code":"unavailable","message":"try later"}"#;
                        let resp = format!(
                            "HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                            body.len()
                        );
                        let _ = client.write_all(resp.as_bytes()).await;
                    }
                }
            });
        }
    });
    (addr, count)
}

#[tokio::test]
async fn dropped_answer_is_retried_with_the_same_key_and_moves_once() {
    let s = server(unlimited()).await;
    let direct = client(s.inner.url());
    direct.grant(&key("g"), &acct("a"), Chips(100), "").await.unwrap();

    let (proxy, conns) = faulty_proxy(s.inner.local_addr(), Fault::DropAnswer, 2).await;
    let c = client(format!("http://{proxy}"));
    // Two answers are lost; the third attempt gets the recorded answer.
    assert_eq!(c.debit(&key("bet"), &acct("a"), Chips(30), "bet").await.unwrap(), Chips(70));
    assert_eq!(conns.load(Ordering::SeqCst), 3, "two lost answers, one retry that got through");
    assert_eq!(direct.balance(&acct("a")).await.unwrap(), Chips(70), "moved once");

    // A settle through a proxy that loses the first answer.
    let (proxy, conns) = faulty_proxy(s.inner.local_addr(), Fault::DropAnswer, 1).await;
    let c = client(format!("http://{proxy}"));
    let ops = vec![
        AccountOp { kind: ChipOp::Debit, account: acct("a"), amount: Chips(70), memo: "loss".into() },
        AccountOp { kind: ChipOp::Credit, account: acct("b"), amount: Chips(70), memo: "win".into() },
    ];
    c.settle(&key("settle"), &ops).await.unwrap();
    assert_eq!(conns.load(Ordering::SeqCst), 2);
    assert_eq!(direct.balance(&acct("a")).await.unwrap(), Chips(0));
    assert_eq!(direct.balance(&acct("b")).await.unwrap(), Chips(70));

    // With too few attempts the caller sees a retryable error, and a later
    // retry with the same key still moves nothing twice.
    let (proxy, _) = faulty_proxy(s.inner.local_addr(), Fault::DropAnswer, 1).await;
    let once =
        HttpChips::new(HttpChipsConfig { max_attempts: 1, ..config(format!("http://{proxy}")) }).unwrap();
    let e = once.credit(&key("refund"), &acct("a"), Chips(5), "refund").await.unwrap_err();
    assert!(e.is_retryable(), "{e:?}");
    assert_eq!(once.credit(&key("refund"), &acct("a"), Chips(5), "refund").await.unwrap(), Chips(5));
    assert_eq!(direct.balance(&acct("a")).await.unwrap(), Chips(5));

    let report = direct.verify_audit().await.unwrap();
    assert_eq!(report["ok"], true);
    assert_eq!(report["entries"], 4, "grant, bet, settle, refund: each exactly once");
    s.inner.shutdown().await.unwrap();
}

#[tokio::test]
async fn service_errors_are_retried() {
    let s = server(unlimited()).await;
    let (proxy, conns) = faulty_proxy(s.inner.local_addr(), Fault::Unavailable, 2).await;
    let c = client(format!("http://{proxy}"));
    assert_eq!(c.grant(&key("g"), &acct("a"), Chips(9), "").await.unwrap(), Chips(9));
    assert_eq!(conns.load(Ordering::SeqCst), 3);
    let (proxy, _) = faulty_proxy(s.inner.local_addr(), Fault::Unavailable, 100).await;
    let c = HttpChips::new(HttpChipsConfig { max_attempts: 2, ..config(format!("http://{proxy}")) }).unwrap();
    assert!(matches!(c.balance(&acct("a")).await, Err(ChipError::Service(_))));
    s.inner.shutdown().await.unwrap();
}

#[test]
fn url_policy() {
    use HttpConfigError::*;
    let ok = |u: &str| validate_url(u, false).unwrap_or_else(|e| panic!("{u}: {e}"));
    assert_eq!(ok("http://127.0.0.1:7700").as_str(), "http://127.0.0.1:7700/");
    assert_eq!(ok("http://localhost:7700/points").as_str(), "http://localhost:7700/points/");
    ok("http://[::1]:7700/");
    ok("http://127.8.9.10/");
    ok("https://points.example.com/");
    ok("https://8.8.8.8/api/");

    let err = |u: &str, allow: bool| validate_url(u, allow).unwrap_err();
    // Credentials in the URL.
    assert_eq!(err("https://user:pw@points.example.com/", false), Credentials);
    assert_eq!(err("http://user@127.0.0.1/", false), Credentials);
    // TLS for anything not loopback.
    assert!(matches!(err("http://points.example.com/", false), TlsRequired(_)));
    assert!(matches!(err("http://8.8.8.8/", false), TlsRequired(_)));
    // Private, link-local, metadata, unique-local, mapped: refused unless allowed.
    for u in [
        "https://10.0.0.1/",
        "https://172.16.5.4/",
        "https://192.168.1.10/",
        "https://169.254.169.254/",
        "https://100.64.1.1/",
        "https://0.0.0.0/",
        "https://[fd00::1]/",
        "https://[fe80::1]/",
        "https://[::ffff:192.168.0.1]/",
        "http://10.0.0.1/",
    ] {
        assert!(matches!(err(u, false), PrivateAddress(_)), "{u}");
    }
    validate_url("https://10.0.0.1/", true).unwrap();
    validate_url("https://[fd00::1]/", true).unwrap();
    // Allowed private hosts still need TLS.
    assert!(matches!(err("http://192.168.1.10/", true), TlsRequired(_)));
    // Other schemes, missing hosts, queries, garbage.
    assert!(matches!(err("ftp://127.0.0.1/", false), Scheme(_)));
    assert!(matches!(err("file:///etc/passwd", false), Scheme(_)));
    assert_eq!(err("https://points.example.com/?token=x", false), QueryOrFragment);
    assert_eq!(err("https://points.example.com/#x", false), QueryOrFragment);
    assert!(matches!(err("not a url", false), BadUrl(_)));

    // The constructor applies the policy and checks the token.
    assert!(matches!(
        HttpChips::new(HttpChipsConfig::new("http://10.1.1.1/", TOKEN)),
        Err(PrivateAddress(_))
    ));
    assert!(matches!(HttpChips::new(HttpChipsConfig::new("http://127.0.0.1:1/", "")), Err(BadToken)));
    assert!(matches!(HttpChips::new(HttpChipsConfig::new("http://127.0.0.1:1/", "a b")), Err(BadToken)));
    let c = HttpChips::new(HttpChipsConfig::new("http://127.0.0.1:1/", TOKEN)).unwrap();
    assert!(!format!("{c:?}").contains(TOKEN), "Debug never shows the token");
}
