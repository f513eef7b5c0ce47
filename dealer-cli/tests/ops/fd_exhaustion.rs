//! Issue #28 (High): a few seconds without file descriptors must not leave
//! a room dead with chips in escrow.
//!
//! The real `claw-dealer` (built-in points server, escrow settlement: the
//! defaults) runs under a low open-file limit (soft = hard = 256, so the
//! start cannot raise it) while three SDK bots play Hold'em. The test then
//! fills every descriptor the dealer has left with idle TCP connections
//! (the connection limits are lifted, as many addresses would), holds them
//! for a few seconds while hands try to settle, and lets them go. Hands
//! must then end again (before the fix, the hand that settled meanwhile
//! stayed open in escrow and every later hand failed with `no stake left
//! to lock`), and once the dealer is stopped no chip is held: no journal
//! left open, nothing in escrow, every chip granted accounted for.
//!
//! A second test checks the start: a soft limit below the hard one is
//! raised to the hard one, and the log says so.

use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use claw_chips::AccountId;
use claw_player::bots::strategy;
use claw_player::node::{NodeConfig as PlayerConfig, NodeEvent, PlayerNode};
use claw_player::play::play_bot;
use claw_points::{sqlite_url, Store};
use claw_protocol::Identity;
use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;

use crate::crash_archive::dealer_bin;
use crate::stop::DealerProc;
use crate::GUARD;

const ROOM: &str = "texas-holdem";
/// The dealer's open-file limit, soft and hard.
const LIMIT: u64 = 256;
/// How long the descriptors stay exhausted.
const HOLD: Duration = Duration::from_secs(4);

/// `claw-dealer` with its defaults under `ulimit -Sn soft -Hn hard`, the
/// connection limits lifted.
fn command(data: &Path, log: &Path, soft: u64, hard: u64) -> Command {
    let mut c = Command::new("sh");
    c.arg("-c")
        .arg(format!("ulimit -Sn {soft} && ulimit -Hn {hard} && exec \"$0\" \"$@\""))
        .arg(dealer_bin())
        .args(["--game", ROOM, "--listen", "127.0.0.1:0", "--http-listen", "off"])
        .args(["--timeout", "30s", "--between-hands", "0", "--shutdown-grace", "1s"])
        .args(["--welcome", "10000", "--commission", "1"])
        .args(["--limit", "max_connections=100000", "--limit", "max_conns_per_addr=100000"])
        .args(["--limit", "max_handshakes=100000", "--limit", "max_handshakes_per_addr=100000"])
        .args(["--limit", "handshake_deadline=10s"])
        .arg("--data-dir")
        .arg(data)
        .env("RUST_LOG", "claw_dealer=info,claw_engine=info,claw_chips=info")
        .stdin(Stdio::null())
        .stderr(Stdio::from(std::fs::File::create(log).expect("log file")));
    c
}

fn open_fds(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd")).map(|d| d.count()).unwrap_or(0)
}

fn files(dir: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(dir).map(|d| d.flatten().map(|e| e.path()).collect()).unwrap_or_default()
}

async fn wait_hands(ended: &AtomicUsize, at_least: usize, within: Duration) -> bool {
    let start = Instant::now();
    while ended.load(Ordering::SeqCst) < at_least {
        if start.elapsed() > within {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    true
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn running_out_of_descriptors_while_hands_settle_leaves_no_room_dead_and_no_chip_held() {
    let tmp = tempfile::tempdir().expect("temp dir");
    let data = tmp.path().join("data");
    let log = tmp.path().join("dealer.log");
    let d = DealerProc::start_with(command(&data, &log, LIMIT, LIMIT), log.clone()).await;
    let pid = d.pid();
    let key = d.key().to_owned();
    let invite = d.invite();
    let ended = Arc::new(AtomicUsize::new(0));
    let started = Arc::new(tokio::sync::Notify::new());
    let mut bots = Vec::new();
    for i in 0..3u8 {
        let me = Arc::new(Identity::from_seed([90 + i; 32]));
        let mut node = tokio::time::timeout(GUARD, PlayerNode::connect(&invite, me, PlayerConfig::default()))
            .await
            .expect("guard: connect")
            .expect("bot connects");
        let (ended, started) = (Arc::clone(&ended), Arc::clone(&started));
        bots.push(tokio::spawn(async move {
            let s = strategy(ROOM, "simple").expect("strategy");
            let mut rng = ChaCha20Rng::seed_from_u64(u64::from(i));
            let _ = play_bot(&mut node, s.as_ref(), &mut rng, None, |ev| match ev {
                NodeEvent::HandEnded { seat: Some(_), .. } => {
                    ended.fetch_add(1, Ordering::SeqCst);
                }
                NodeEvent::HandStarted { .. } => started.notify_waiters(),
                _ => {}
            })
            .await;
        }));
    }
    assert!(wait_hands(&ended, 9, GUARD).await, "no hands before the attack; log:\n{}", d.log_text());

    // Fill the descriptors the dealer has left but a few; when the next
    // hand has started, take those too (so that the hand in play ends
    // without any), hold, release.
    let addr = d.url.strip_prefix("ws://").and_then(|r| r.split_once('/')).map(|(a, _)| a.to_owned());
    let addr = addr.expect("invite host and port");
    let mut idle = Vec::new();
    let connect = |idle: &mut Vec<TcpStream>| idle.push(TcpStream::connect(&addr).expect("connect"));
    while open_fds(pid) + 8 < LIMIT as usize && idle.len() < 4 * LIMIT as usize {
        connect(&mut idle);
        if idle.len() % 16 == 0 {
            std::thread::sleep(Duration::from_millis(2));
        }
    }
    tokio::time::timeout(GUARD, started.notified()).await.expect("guard: a hand starts");
    let full_at = Instant::now();
    for _ in 0..32 {
        connect(&mut idle);
    }
    while open_fds(pid) < LIMIT as usize && full_at.elapsed() < Duration::from_secs(2) {
        connect(&mut idle);
    }
    let peak = open_fds(pid);
    println!(
        "{} idle sockets; dealer at {peak} of {LIMIT} descriptors after {:?}",
        idle.len(),
        full_at.elapsed()
    );
    assert!(peak + 2 >= LIMIT as usize, "the dealer never ran out of descriptors ({peak})");
    let during = ended.load(Ordering::SeqCst);
    tokio::time::sleep(HOLD).await;
    let held_out = open_fds(pid);
    drop(idle);
    let released = ended.load(Ordering::SeqCst);
    println!(
        "hands ended: {during} at exhaustion, {released} at release ({held_out} descriptors open before it)"
    );

    // Hands end again.
    let again = wait_hands(&ended, released + 6, Duration::from_secs(60)).await;
    let text = d.log_text();
    assert!(
        again,
        "no hands after the descriptors came back ({} ended since); log tail:\n{}",
        ended.load(Ordering::SeqCst) - released,
        tail(&text, 60)
    );

    if std::env::var_os("CLAW_TEST_VERBOSE").is_some() {
        println!(
            "{}",
            text.lines().filter(|l| l.contains("WARN") || l.contains("ERROR")).collect::<Vec<_>>().join("\n")
        );
    }
    // Stopped: no chip held anywhere.
    let (status, text) = d.terminate().await;
    for b in bots {
        b.abort();
        let _ = b.await;
    }
    assert_eq!(status.code(), Some(0), "{}", tail(&text, 40));
    let room_open = files(&data.join("rooms").join(ROOM).join("journal").join("open"));
    assert!(room_open.is_empty(), "chip journals left open: {room_open:?}");
    let escrow_open = files(&data.join("escrow-journal").join("open"));
    assert!(escrow_open.is_empty(), "escrowed hands left open: {escrow_open:?}");
    let store = Store::open(&sqlite_url(&data.join("points.db"))).await.expect("open points.db");
    let escrow = AccountId::new(format!("escrow:{key}")).expect("escrow account");
    assert_eq!(store.balance(&escrow).await.expect("balance"), 0, "chips left in escrow");
    let report = store.verify().await.expect("verify");
    store.close().await;
    assert!(report.ok, "{report:?}");
    assert_eq!(report.total_balance, report.total_granted, "every chip granted is in an account: {report:?}");
}

/// A soft limit below the hard one is raised to it at start, and logged.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_soft_open_file_limit_is_raised_to_the_hard_limit_at_start() {
    let tmp = tempfile::tempdir().expect("temp dir");
    let data = tmp.path().join("data");
    let log = tmp.path().join("dealer.log");
    let d = DealerProc::start_with(command(&data, &log, 200, 4000), log.clone()).await;
    let limits = std::fs::read_to_string(format!("/proc/{}/limits", d.pid())).expect("/proc limits");
    let line = limits.lines().find(|l| l.starts_with("Max open files")).expect("Max open files").to_owned();
    let fields: Vec<&str> = line.split_whitespace().collect();
    let text = d.log_text();
    let (status, _) = d.terminate().await;
    assert_eq!(status.code(), Some(0));
    assert_eq!(fields[3..5], ["4000", "4000"], "{line}");
    let logged = text.lines().find(|l| l.contains("open-file limit")).unwrap_or_else(|| panic!("{text}"));
    assert!(
        logged.contains("soft=4000") && logged.contains("hard=4000") && logged.contains("was=200"),
        "{logged}"
    );
}

fn tail(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}
