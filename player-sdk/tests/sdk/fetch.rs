//! Attacks on `claw-player audit --fetch` ([`fetch_completion`]) by a
//! hostile or broken dealer HTTP port, each a real TCP server on
//! 127.0.0.1: one that accepts and never answers, one whose answer is
//! endless or says it is 1 GiB, and a transcript whose room id tries to
//! leave its URL path segment. Every wait is bounded. docs/security.md
//! lists the defences.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use claw_player::fetch::{fetch_completion, hand_url, FetchError, FetchLimits, Fetcher};
use claw_protocol::transcript::{Transcript, TranscriptHeader};
use claw_protocol::{HandId, Identity};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// A saved pending hand of `room` (no events: any record extends it).
fn saved(room: &str) -> Transcript {
    let hand_id = HandId([0xab; 16]);
    let dealer = Identity::from_seed([1; 32]).id();
    Transcript { header: Some(TranscriptHeader::new(dealer, room, hand_id)), hand_id, events: Vec::new() }
}

/// Reads a request head from `s` (bounded); its request line.
async fn request_line(s: &mut TcpStream) -> String {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 1024];
    while !buf.windows(4).any(|w| w == b"\r\n\r\n") && buf.len() < 64 * 1024 {
        match tokio::time::timeout(Duration::from_secs(10), s.read(&mut chunk)).await {
            Ok(Ok(n)) if n > 0 => buf.extend_from_slice(&chunk[..n]),
            _ => break,
        }
    }
    String::from_utf8_lossy(&buf).lines().next().unwrap_or_default().to_owned()
}

#[tokio::test]
async fn a_silent_server_fails_the_fetch_with_a_timeout() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    // Accepts, reads nothing, answers nothing, keeps every socket open.
    let server = tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((s, _)) = listener.accept().await {
            held.push(s);
        }
    });
    let fetcher = Fetcher::new(FetchLimits::with_timeout(Duration::from_secs(1))).unwrap();
    let start = Instant::now();
    let r = tokio::time::timeout(Duration::from_secs(15), fetch_completion(&fetcher, &base, &saved("r")))
        .await
        .expect("the fetch still waits after 15 s");
    let took = start.elapsed();
    assert!(matches!(r, Err(FetchError::Timeout { .. })), "{r:?}");
    assert!(took < Duration::from_secs(5), "timed out after {took:?}");
    assert!(r.unwrap_err().to_string().contains("timed out"));
    server.abort();
}

#[tokio::test]
async fn an_endless_answer_is_refused_at_the_size_cap() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let sent = Arc::new(AtomicU64::new(0));
    // Answers 200 with a chunked body that never ends (64 KiB chunks of a
    // JSON string), until the client hangs up.
    let server = tokio::spawn({
        let sent = Arc::clone(&sent);
        async move {
            while let Ok((mut s, _)) = listener.accept().await {
                let sent = Arc::clone(&sent);
                tokio::spawn(async move {
                    request_line(&mut s).await;
                    let head = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n";
                    if s.write_all(head.as_bytes()).await.is_err() {
                        return;
                    }
                    let data = "a".repeat(64 * 1024);
                    let chunk = format!("{:x}\r\n{data}\r\n", data.len());
                    let _ = s.write_all(b"6\r\n{\"x\":\"\r\n").await;
                    while s.write_all(chunk.as_bytes()).await.is_ok() {
                        sent.fetch_add(data.len() as u64, Ordering::Relaxed);
                    }
                });
            }
        }
    });
    let limits = FetchLimits { max_bytes: 256 * 1024, ..FetchLimits::with_timeout(Duration::from_secs(5)) };
    let fetcher = Fetcher::new(limits).unwrap();
    let r = tokio::time::timeout(Duration::from_secs(15), fetch_completion(&fetcher, &base, &saved("r")))
        .await
        .expect("the fetch still reads after 15 s");
    assert!(matches!(r, Err(FetchError::TooLarge { limit: 262_144, .. })), "{r:?}");
    // The server could send little more than what the socket buffers hold.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let n = sent.load(Ordering::Relaxed);
    assert!(n < 64 * 1024 * 1024, "{n} bytes were sent");
    server.abort();
}

#[tokio::test]
async fn an_answer_that_says_it_is_one_gigabyte_is_refused_before_its_body() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let server = tokio::spawn(async move {
        while let Ok((mut s, _)) = listener.accept().await {
            request_line(&mut s).await;
            let _ = s.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 1073741824\r\n\r\n{").await;
            // The body never comes: a client that waits for it would time out.
            tokio::time::sleep(Duration::from_secs(3600)).await;
        }
    });
    let fetcher = Fetcher::new(FetchLimits::with_timeout(Duration::from_secs(5))).unwrap();
    let start = Instant::now();
    let r = tokio::time::timeout(Duration::from_secs(15), fetch_completion(&fetcher, &base, &saved("r")))
        .await
        .expect("the fetch still waits after 15 s");
    assert!(matches!(r, Err(FetchError::TooLarge { .. })), "{r:?}");
    assert!(start.elapsed() < Duration::from_secs(4), "refused after {:?}", start.elapsed());
    server.abort();
}

#[tokio::test]
async fn a_room_id_cannot_leave_its_url_path_segment() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}/", listener.local_addr().unwrap());
    let paths = Arc::new(Mutex::new(Vec::new()));
    // Records each request line, answers 404.
    let server = tokio::spawn({
        let paths = Arc::clone(&paths);
        async move {
            while let Ok((mut s, _)) = listener.accept().await {
                let line = request_line(&mut s).await;
                paths.lock().unwrap().push(line);
                let _ = s
                    .write_all(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
                    .await;
            }
        }
    });
    let fetcher = Fetcher::new(FetchLimits::with_timeout(Duration::from_secs(5))).unwrap();
    let hand = "abababababababababababababababab";
    let cases = [
        ("a/b", "a%2Fb"),
        ("../../admin/rooms", "..%2F..%2Fadmin%2Frooms"),
        ("x?y=1", "x%3Fy%3D1"),
        ("r#frag", "r%23frag"),
        ("%2e%2e", "%252e%252e"),
        ("a b\\c", "a%20b%5Cc"),
    ];
    for (room, encoded) in cases {
        let r =
            tokio::time::timeout(Duration::from_secs(15), fetch_completion(&fetcher, &base, &saved(room)))
                .await
                .expect("guard");
        assert!(
            matches!(&r, Err(FetchError::Http { reason, .. }) if reason.contains("404")),
            "{room}: {r:?}"
        );
        let line = paths.lock().unwrap().pop().unwrap_or_default();
        assert_eq!(line, format!("GET /rooms/{encoded}/hands/{hand} HTTP/1.1"), "{room}");
    }
    // A room id that is a dot segment is never sent: a URL would resolve it away.
    for room in ["..", ".", ""] {
        let r = fetch_completion(&fetcher, &base, &saved(room)).await;
        assert!(matches!(r, Err(FetchError::BadRoom(_))), "{room:?}: {r:?}");
        assert!(hand_url("http://h", room, HandId([0xab; 16])).is_err());
    }
    assert_eq!(paths.lock().unwrap().len(), 0, "nothing more was asked");
    server.abort();
}

/// A dealer rating archive reads (`429`, `Retry-After`) is asked again as
/// it says, a bounded number of times, then the fetch fails naming the status.
#[tokio::test]
async fn a_rate_limited_fetch_waits_as_asked_then_gives_up() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let asked = Arc::new(AtomicU64::new(0));
    let server = tokio::spawn({
        let asked = Arc::clone(&asked);
        async move {
            while let Ok((mut s, _)) = listener.accept().await {
                let asked = Arc::clone(&asked);
                tokio::spawn(async move {
                    while !request_line(&mut s).await.is_empty() {
                        asked.fetch_add(1, Ordering::Relaxed);
                        let body = "slow down";
                        let answer = format!(
                            "HTTP/1.1 429 Too Many Requests\r\nRetry-After: 0\r\nContent-Length: {}\r\n\r\n{body}",
                            body.len()
                        );
                        if s.write_all(answer.as_bytes()).await.is_err() {
                            break;
                        }
                    }
                });
            }
        }
    });
    let fetcher = Fetcher::new(FetchLimits::with_timeout(Duration::from_secs(5))).unwrap();
    let r = tokio::time::timeout(Duration::from_secs(15), fetch_completion(&fetcher, &base, &saved("r")))
        .await
        .expect("a rate-limited fetch ends");
    let e = r.expect_err("never answered but 429").to_string();
    assert!(e.contains("429"), "{e}");
    assert_eq!(asked.load(Ordering::Relaxed), 1 + claw_player::fetch::RATE_RETRIES as u64);
    server.abort();
}
