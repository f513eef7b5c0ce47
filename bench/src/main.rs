//! `claw-bench`: the load generator. Starts a real `claw-dealer` process
//! with N rooms, seats M SDK bots in each over real WebSockets (every bot
//! verifies every signature, leaf and sealed card, and audits every hand),
//! lets the tables play for a bounded time, and reports hands/s, the
//! action → broadcast latency seen by the other players, the dealer's CPU
//! and memory per connection, refused or dropped connections, and the
//! machine's load average beside the figures (docs/performance.md).

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use clap::{Parser, ValueEnum};
use claw_engine::room::config::parse_duration;
use claw_player::bots;
use claw_player::node::{NodeConfig, NodeEvent, PlayerNode};
use claw_player::play::play_bot_paced;
use claw_player::Invite;
use claw_protocol::messages::KickReason;
use claw_protocol::{HandId, Identity, Seat};
use rand::rngs::{OsRng, StdRng};
use rand::SeedableRng;
use serde::Serialize;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// Load generator: N rooms × M verifying bots against a real claw-dealer.
#[derive(Debug, Parser)]
#[command(name = "claw-bench", version, about)]
struct Cli {
    /// The claw-dealer binary (default: next to this one).
    #[arg(long)]
    dealer: Option<PathBuf>,
    /// Game of every room.
    #[arg(long, default_value = "texas-holdem")]
    game: String,
    /// Rooms.
    #[arg(long, default_value_t = 1)]
    rooms: usize,
    /// Bots per room (every one a full SDK player).
    #[arg(long, default_value_t = 6)]
    players: u8,
    /// Time measured, after the warm-up (e.g. 20s).
    #[arg(long, value_parser = parse_duration, default_value = "20s")]
    duration: Duration,
    /// Time played before measuring (connections, first hands).
    #[arg(long, value_parser = parse_duration, default_value = "3s")]
    warmup: Duration,
    /// Where chips live: the dealer's built-in durable points server, or in memory.
    #[arg(long, value_enum, default_value = "builtin")]
    chips: Chips,
    /// Shuffle entropy of every room.
    #[arg(long, value_enum, default_value = "joint")]
    entropy: Entropy,
    /// Handshakes in flight at once while seating (the dealer allows 32 per
    /// address by default; a connection storm is its own measurement).
    #[arg(long, default_value_t = 16)]
    connect_concurrency: usize,
    /// Print the report as one JSON object instead of text.
    #[arg(long)]
    json: bool,
    /// Keep the dealer's data directory here (default: a temporary one).
    #[arg(long)]
    data_dir: Option<PathBuf>,
    /// Query flood: K extra identities per room, each a watcher (handshake,
    /// no seat) sending queries for the whole run (issue #17).
    #[arg(long, default_value_t = 0)]
    flood: usize,
    /// Queries per second each flood identity sends (the dealer's per-player
    /// limit is 10/s; 20 identities at 10/s meet the room's 200/s budget).
    #[arg(long, default_value_t = 10.0)]
    flood_rate: f64,
    /// What the flood asks: `my-balance` (a chip-service lookup each) or
    /// `room-state` (answered from the room's state).
    #[arg(long, value_enum, default_value = "my-balance")]
    flood_query: FloodQuery,
    /// Seat the bots in rooms that wait for one more player, so no hand
    /// starts: the dealer's memory per idle seated connection.
    #[arg(long)]
    idle: bool,
    /// Each bot waits this long before it acts (a table at a person's pace,
    /// e.g. 1s; 0: as fast as the bots go). Latency is then counted from the
    /// end of the wait.
    #[arg(long, value_parser = parse_duration, default_value = "0s")]
    think: Duration,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum FloodQuery {
    MyBalance,
    RoomState,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum Chips {
    /// The built-in points server, settling per hand through escrow (the dealer's default).
    Builtin,
    /// The built-in points server with one ledger write per bet (`--chips-settle call`).
    BuiltinPerCall,
    /// In memory.
    Local,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum Entropy {
    Joint,
    Dealer,
}

/// What every bot records into.
#[derive(Default)]
struct Shared {
    measuring: AtomicBool,
    /// When each seat learned it was its turn, per hand (the action's start).
    turns: Mutex<HashMap<HandId, HashMap<Seat, Instant>>>,
    /// Action → broadcast at the other players, in µs, while measuring.
    latencies_us: Mutex<Vec<u32>>,
    hands: AtomicU64,
    audit_failures: AtomicU64,
    incomplete: AtomicU64,
    connected: AtomicU64,
    connect_failed: AtomicU64,
    closed: AtomicU64,
    /// Bots the dealer removed because their chips ran out (a game outcome,
    /// not a dropped connection).
    busted: AtomicU64,
    first_error: Mutex<Option<String>>,
    /// Flood queries answered / refused (`rate-limited`) while measuring.
    flood_answered: AtomicU64,
    flood_refused: AtomicU64,
}

impl Shared {
    fn note_error(&self, e: String) {
        let mut f = self.first_error.lock().unwrap_or_else(|p| p.into_inner());
        f.get_or_insert(e);
    }
}

async fn bot(
    invite: Invite,
    game: String,
    think: Duration,
    shared: Arc<Shared>,
    gate: Arc<tokio::sync::Semaphore>,
) {
    let me = Arc::new(Identity::generate(&mut OsRng));
    let permit = gate.acquire_owned().await;
    let mut node = match PlayerNode::connect(&invite, me, NodeConfig::default()).await {
        Ok(n) => n,
        Err(e) => {
            shared.connect_failed.fetch_add(1, Ordering::Relaxed);
            shared.note_error(format!("connect: {e}"));
            return;
        }
    };
    drop(permit);
    shared.connected.fetch_add(1, Ordering::Relaxed);
    let strategy = match bots::strategy(&game, "simple") {
        Ok(s) => s,
        Err(e) => return shared.note_error(e.to_string()),
    };
    let mut rng = match StdRng::from_rng(OsRng) {
        Ok(r) => r,
        Err(e) => return shared.note_error(format!("the OS RNG: {e}")),
    };
    let mut my_seat: Option<Seat> = None;
    let busted = Arc::new(AtomicBool::new(false));
    let b = Arc::clone(&busted);
    let s = Arc::clone(&shared);
    let on_event = move |ev: &NodeEvent| {
        let measuring = s.measuring.load(Ordering::Relaxed);
        match ev {
            NodeEvent::HandStarted { seat, .. } => my_seat = *seat,
            NodeEvent::YourTurn { hand_id, seat, .. } => {
                let mut t = s.turns.lock().unwrap_or_else(|p| p.into_inner());
                t.entry(*hand_id).or_default().insert(*seat, Instant::now() + think);
            }
            NodeEvent::Kicked { code: KickReason::InsufficientBalance, .. } => {
                b.store(true, Ordering::Relaxed)
            }
            NodeEvent::ActionApplied { hand_id, seat, timeout: None, .. }
                if measuring && my_seat != Some(*seat) =>
            {
                let started = s
                    .turns
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .get(hand_id)
                    .and_then(|m| m.get(seat))
                    .copied();
                if let Some(t0) = started {
                    let us = t0.elapsed().as_micros().min(u128::from(u32::MAX)) as u32;
                    s.latencies_us.lock().unwrap_or_else(|p| p.into_inner()).push(us);
                }
            }
            NodeEvent::HandEnded { hand_id, seat, audit, .. } => {
                // A pending hand (deferred reveal) is not OK yet, nor a failure.
                if audit.failed.is_some() {
                    s.audit_failures.fetch_add(1, Ordering::Relaxed);
                    s.note_error(format!(
                        "audit: {:?} {}",
                        audit.failed,
                        audit.detail.clone().unwrap_or_default()
                    ));
                }
                if *seat == Some(Seat(0)) {
                    if measuring {
                        s.hands.fetch_add(1, Ordering::Relaxed);
                    }
                    // Every broadcast of this hand has been seen by now or is not worth waiting for.
                    s.turns.lock().unwrap_or_else(|p| p.into_inner()).remove(hand_id);
                }
            }
            NodeEvent::HandIncomplete { .. } if measuring => {
                s.incomplete.fetch_add(1, Ordering::Relaxed);
            }
            _ => {}
        }
    };
    match play_bot_paced(&mut node, strategy.as_ref(), &mut rng, None, think, on_event).await {
        Ok(_) if busted.load(Ordering::Relaxed) => {
            shared.busted.fetch_add(1, Ordering::Relaxed);
        }
        Ok(r) => {
            shared.closed.fetch_add(1, Ordering::Relaxed);
            shared.note_error(format!("bot stopped: {}", r.closed.unwrap_or_default()));
        }
        Err(e) => {
            shared.closed.fetch_add(1, Ordering::Relaxed);
            shared.note_error(format!("bot: {e}"));
        }
    }
}

/// Welcome chips each bench identity is granted.
const WELCOME: u64 = 1_000_000_000;

fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// One flood identity: the 4-step handshake, no join (a watcher), then a
/// query every `1/rate` s for as long as the run lasts, reading every frame.
async fn flooder(
    invite: Invite,
    query: FloodQuery,
    rate: f64,
    shared: Arc<Shared>,
    gate: Arc<tokio::sync::Semaphore>,
) {
    use claw_protocol::handshake::ClientHandshake;
    use claw_protocol::messages::{
        decode_server, ClientMessage, Query, QueryErrorCode, QueryType, ServerMessage,
    };
    use futures_util::{SinkExt, StreamExt};
    use tokio_tungstenite::tungstenite::Message;
    let me = Arc::new(Identity::generate(&mut OsRng));
    // Handshakes share the bots' gate (the dealer caps them per address).
    let permit = gate.acquire_owned().await;
    let Ok((mut ws, _)) = tokio_tungstenite::connect_async(invite.ws_url.as_str()).await else {
        return shared.note_error("flood: connect failed".into());
    };
    let (mut hs, hello) = ClientHandshake::start(
        me,
        invite.dealer,
        &invite.room,
        "claw-bench-flood/0",
        None,
        now_ms(),
        &mut OsRng,
    );
    let text = |m: &ClientMessage| m.encode().map(|t| Message::Text(t.into()));
    let next = async |ws: &mut tokio_tungstenite::WebSocketStream<_>| loop {
        match ws.next().await {
            Some(Ok(Message::Text(t))) => return decode_server(&t).ok(),
            Some(Ok(_)) => continue,
            _ => return None,
        }
    };
    let Ok(hello) = text(&ClientMessage::Hello(hello)) else { return };
    if ws.send(hello).await.is_err() {
        return;
    }
    let Some(ServerMessage::Challenge(c)) = next(&mut ws).await else {
        return shared.note_error("flood: no challenge".into());
    };
    let Ok(resp) = hs.on_challenge(&c, now_ms()) else {
        return shared.note_error("flood: bad challenge".into());
    };
    let Ok(resp) = text(&ClientMessage::Response(resp)) else { return };
    if ws.send(resp).await.is_err() {
        return;
    }
    let Some(ServerMessage::Accepted(a)) = next(&mut ws).await else {
        return shared.note_error("flood: refused".into());
    };
    if hs.on_accepted(&a, now_ms()).is_err() {
        return shared.note_error("flood: bad accepted".into());
    }
    drop(permit);
    let kind = match query {
        FloodQuery::MyBalance => QueryType::MyBalance,
        FloodQuery::RoomState => QueryType::RoomState,
    };
    let mut tick = tokio::time::interval(Duration::from_secs_f64(1.0 / rate.max(0.01)));
    let mut n = 0u64;
    loop {
        tokio::select! {
            _ = tick.tick() => {
                n += 1;
                let Ok(q) = text(&ClientMessage::Query(Query::new(kind, format!("f{n}")))) else { return };
                if ws.send(q).await.is_err() {
                    return;
                }
            }
            m = next(&mut ws) => {
                let measuring = shared.measuring.load(Ordering::Relaxed);
                match m {
                    Some(ServerMessage::QueryResult(_)) if measuring => {
                        shared.flood_answered.fetch_add(1, Ordering::Relaxed);
                    }
                    Some(ServerMessage::QueryError(e)) if measuring && e.error == QueryErrorCode::RateLimited => {
                        shared.flood_refused.fetch_add(1, Ordering::Relaxed);
                    }
                    Some(_) => {}
                    None => return,
                }
            }
        }
    }
}

/// CPU seconds (user + system) a process has used, from /proc.
fn cpu_seconds(pid: &str) -> Option<f64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // Fields after the `(comm)`: state is field 3, utime 14, stime 15.
    let rest = &stat[stat.rfind(')')? + 2..];
    let f: Vec<&str> = rest.split(' ').collect();
    let ticks: u64 = f.get(11)?.parse::<u64>().ok()? + f.get(12)?.parse::<u64>().ok()?;
    Some(ticks as f64 / 100.0) // USER_HZ is 100 on Linux
}

/// Resident memory of a process in KiB, from /proc.
fn rss_kib(pid: &str) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status.lines().find_map(|l| l.strip_prefix("VmRSS:"))?.split_whitespace().next()?.parse().ok()
}

fn loadavg() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "unknown".into())
}

fn free_port() -> anyhow::Result<u16> {
    Ok(std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?.port())
}

fn rooms_file(cli: &Cli, path: &Path) -> anyhow::Result<()> {
    let mut f = std::fs::File::create(path).with_context(|| format!("writing {}", path.display()))?;
    let entropy = match cli.entropy {
        Entropy::Joint => "joint",
        Entropy::Dealer => "dealer",
    };
    for i in 0..cli.rooms {
        writeln!(
            f,
            "[[room]]\nid = \"bench-{i}\"\ngame = \"{}\"\nmin_players = {p}\nmax_players = {p}\n\
             action_timeout = \"10s\"\nbetween_hands = \"0s\"\nreveal = \"full\"\nentropy = \"{entropy}\"\n",
            cli.game,
            p = usize::from(cli.players) + usize::from(cli.idle)
        )?;
    }
    Ok(())
}

/// Starts the dealer and reads one invite URL per room from its stdout.
fn start_dealer(cli: &Cli, data: &Path, http_port: u16) -> anyhow::Result<(Child, Vec<Invite>)> {
    let bin = match &cli.dealer {
        Some(b) => b.clone(),
        None => std::env::current_exe()?.with_file_name("claw-dealer"),
    };
    let rooms = data.join("bench-rooms.toml");
    rooms_file(cli, &rooms)?;
    let seats = cli.rooms * (usize::from(cli.players) + cli.flood);
    let chips: &[&str] = match cli.chips {
        Chips::Builtin => &["--chips", "auto"],
        Chips::BuiltinPerCall => &["--chips", "auto", "--chips-settle", "call"],
        Chips::Local => &["--chips", "local"],
    };
    let mut child = Command::new(&bin)
        .arg("--rooms")
        .arg(&rooms)
        .args(["--listen", "127.0.0.1:0", "--http-listen", &format!("127.0.0.1:{http_port}")])
        .arg("--data-dir")
        .arg(data.join("dealer"))
        .args(chips)
        .args(["--welcome", &WELCOME.to_string(), "--log-format", "json"])
        // The node's welcome budget (default 100 grants) sized to every identity the bench makes.
        .args(["--welcome-total", &(WELCOME * (seats as u64 + 64)).to_string()])
        .args(["--max-connections", &(seats + 1024).to_string()])
        // Every bot connects from 127.0.0.1: lift the per-address cap above the bots.
        .args(["--max-conns-per-addr", &(seats + 64).to_string()])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(std::fs::File::create(data.join("dealer.log"))?)
        .spawn()
        .with_context(|| {
            format!("starting {} (build it: cargo build --release -p claw-dealer-cli)", bin.display())
        })?;
    let out = child.stdout.take().context("dealer stdout")?;
    let mut lines = BufReader::new(out).lines();
    let mut invites = Vec::new();
    while invites.len() < cli.rooms {
        let Some(line) = lines.next() else {
            bail!("the dealer exited before printing its invites; see {}", data.join("dealer.log").display())
        };
        let line = line?;
        invites.push(Invite::parse(line.trim()).with_context(|| format!("dealer printed {line:?}"))?);
    }
    // Keep draining stdout so the dealer never blocks on a full pipe.
    std::thread::spawn(move || for _ in lines {});
    Ok((child, invites))
}

/// The dealer's own action-latency histogram from /metrics: cumulative
/// counts by bucket bound (seconds, `+Inf` last), and the sum in seconds.
#[derive(Debug, Clone, PartialEq)]
struct DealerLatency {
    buckets: Vec<(f64, u64)>,
    sum: f64,
}

impl DealerLatency {
    fn parse(body: &str) -> Option<DealerLatency> {
        let mut buckets = Vec::new();
        let mut sum = None;
        for line in body.lines() {
            if let Some(rest) = line.strip_prefix("claw_action_latency_seconds_bucket{le=\"") {
                let (bound, count) = rest.split_once("\"}")?;
                let bound = if bound == "+Inf" { f64::INFINITY } else { bound.parse().ok()? };
                buckets.push((bound, count.trim().parse().ok()?));
            } else if let Some(v) = line.strip_prefix("claw_action_latency_seconds_sum ") {
                sum = v.trim().parse().ok();
            }
        }
        (!buckets.is_empty()).then_some(DealerLatency { buckets, sum: sum? })
    }

    /// The observations between `self` (earlier) and `later`.
    fn since(&self, later: &DealerLatency) -> Option<DealerLatency> {
        if self.buckets.len() != later.buckets.len() {
            return None;
        }
        let buckets = self
            .buckets
            .iter()
            .zip(&later.buckets)
            .map(|(&(b, c0), &(_, c1))| (b, c1.saturating_sub(c0)))
            .collect();
        Some(DealerLatency { buckets, sum: later.sum - self.sum })
    }

    fn count(&self) -> u64 {
        self.buckets.last().map_or(0, |&(_, c)| c)
    }

    fn mean_ms(&self) -> Option<f64> {
        let n = self.count();
        (n > 0).then(|| self.sum / n as f64 * 1000.0)
    }

    /// The bound (ms) of the first bucket holding at least a share `p` of
    /// the observations: the `p` quantile is at most this.
    fn quantile_bound_ms(&self, p: f64) -> Option<f64> {
        let n = self.count();
        if n == 0 {
            return None;
        }
        let want = (n as f64 * p).ceil() as u64;
        self.buckets.iter().find(|&&(_, c)| c >= want).map(|&(b, _)| b * 1000.0)
    }
}

async fn dealer_latency(http_port: u16) -> Option<DealerLatency> {
    let mut s = tokio::net::TcpStream::connect(("127.0.0.1", http_port)).await.ok()?;
    s.write_all(b"GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n").await.ok()?;
    let mut body = String::new();
    s.read_to_string(&mut body).await.ok()?;
    DealerLatency::parse(&body)
}

fn percentile(sorted: &[u32], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let i = ((sorted.len() - 1) as f64 * p).round() as usize;
    f64::from(sorted[i]) / 1000.0
}

/// The report, in ms, per second and KiB.
#[derive(Debug, Serialize)]
struct Report {
    game: String,
    rooms: usize,
    players_per_room: u8,
    chips: String,
    think_ms: u64,
    seconds: f64,
    hands: u64,
    hands_per_sec: f64,
    latency_samples: usize,
    latency_ms_p50: f64,
    latency_ms_p90: f64,
    latency_ms_p99: f64,
    latency_ms_max: f64,
    dealer_latency_mean_ms: Option<f64>,
    /// The dealer's own p99 as the bound of its histogram bucket (≤ this).
    dealer_latency_ms_p99_at_most: Option<f64>,
    dealer_cpu_ms_per_hand: f64,
    bots_cpu_ms_per_hand: f64,
    dealer_rss_kib: u64,
    dealer_rss_kib_per_connection: f64,
    /// This process's resident memory (the bots), at the end of the run.
    bench_rss_kib: u64,
    bench_rss_kib_per_bot: f64,
    connected: u64,
    connect_failed: u64,
    dropped: u64,
    busted: u64,
    audit_failures: u64,
    incomplete_hands: u64,
    flood_identities_per_room: usize,
    flood_queries_per_sec: f64,
    flood_refused_per_sec: f64,
    load_before: String,
    load_after: String,
    first_error: Option<String>,
}

fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    if cli.rooms == 0 || cli.players < 2 {
        bail!("give at least one room and two players per room");
    }
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    let tmp = tempfile::tempdir()?;
    let data = cli.data_dir.clone().unwrap_or_else(|| tmp.path().to_owned());
    std::fs::create_dir_all(&data).with_context(|| format!("creating {}", data.display()))?;
    let http_port = free_port()?;
    let load_before = loadavg();
    let (mut dealer, invites) = start_dealer(&cli, &data, http_port)?;
    let pid = dealer.id().to_string();
    let result = rt.block_on(run(&cli, invites, &pid, http_port, load_before));
    let _ = Command::new("kill").args(["-TERM", &pid]).status();
    let deadline = Instant::now() + Duration::from_secs(20);
    while Instant::now() < deadline && dealer.try_wait().ok().flatten().is_none() {
        std::thread::sleep(Duration::from_millis(100));
    }
    let _ = dealer.kill();
    let _ = dealer.wait();
    let report = result?;
    if cli.json {
        println!("{}", serde_json::to_string(&report)?);
    } else {
        print_text(&report);
    }
    rt.shutdown_timeout(Duration::from_secs(1));
    Ok(())
}

async fn run(
    cli: &Cli,
    invites: Vec<Invite>,
    pid: &str,
    http_port: u16,
    load_before: String,
) -> anyhow::Result<Report> {
    let shared = Arc::new(Shared::default());
    let rss_idle = rss_kib(pid).unwrap_or(0);
    let gate = Arc::new(tokio::sync::Semaphore::new(cli.connect_concurrency.max(1)));
    for invite in &invites {
        for _ in 0..cli.players {
            tokio::spawn(bot(
                invite.clone(),
                cli.game.clone(),
                cli.think,
                Arc::clone(&shared),
                Arc::clone(&gate),
            ));
        }
        for _ in 0..cli.flood {
            let (s, g) = (Arc::clone(&shared), Arc::clone(&gate));
            tokio::spawn(flooder(invite.clone(), cli.flood_query, cli.flood_rate, s, g));
        }
    }
    tokio::time::sleep(cli.warmup).await;
    let me = std::process::id().to_string();
    let (dealer_cpu0, bots_cpu0) = (cpu_seconds(pid).unwrap_or(0.0), cpu_seconds(&me).unwrap_or(0.0));
    let lat0 = dealer_latency(http_port).await;
    let start = Instant::now();
    shared.measuring.store(true, Ordering::Relaxed);
    tokio::time::sleep(cli.duration).await;
    shared.measuring.store(false, Ordering::Relaxed);
    let seconds = start.elapsed().as_secs_f64();
    let (dealer_cpu, bots_cpu) =
        (cpu_seconds(pid).unwrap_or(0.0) - dealer_cpu0, cpu_seconds(&me).unwrap_or(0.0) - bots_cpu0);
    let lat1 = dealer_latency(http_port).await;
    let rss = rss_kib(pid).unwrap_or(0);
    let bench_rss = rss_kib(&me).unwrap_or(0);
    let load_after = loadavg();
    let hands = shared.hands.load(Ordering::Relaxed);
    let mut lat = std::mem::take(&mut *shared.latencies_us.lock().unwrap_or_else(|p| p.into_inner()));
    lat.sort_unstable();
    let connected = shared.connected.load(Ordering::Relaxed);
    let per_hand = |cpu: f64| if hands > 0 { cpu * 1000.0 / hands as f64 } else { 0.0 };
    let window = match (&lat0, &lat1) {
        (Some(a), Some(b)) => a.since(b),
        _ => None,
    };
    let dealer_latency_mean_ms = window.as_ref().and_then(DealerLatency::mean_ms);
    let dealer_latency_ms_p99_at_most = window.as_ref().and_then(|w| w.quantile_bound_ms(0.99));
    let first_error = shared.first_error.lock().unwrap_or_else(|p| p.into_inner()).clone();
    Ok(Report {
        game: cli.game.clone(),
        rooms: cli.rooms,
        players_per_room: cli.players,
        chips: cli.chips.to_possible_value().map_or_else(String::new, |v| v.get_name().to_owned()),
        think_ms: u64::try_from(cli.think.as_millis()).unwrap_or(u64::MAX),
        seconds,
        hands,
        hands_per_sec: hands as f64 / seconds,
        latency_samples: lat.len(),
        latency_ms_p50: percentile(&lat, 0.50),
        latency_ms_p90: percentile(&lat, 0.90),
        latency_ms_p99: percentile(&lat, 0.99),
        latency_ms_max: lat.last().map(|&u| f64::from(u) / 1000.0).unwrap_or(0.0),
        dealer_latency_mean_ms,
        dealer_latency_ms_p99_at_most,
        dealer_cpu_ms_per_hand: per_hand(dealer_cpu),
        bots_cpu_ms_per_hand: per_hand(bots_cpu),
        dealer_rss_kib: rss,
        dealer_rss_kib_per_connection: if connected > 0 {
            rss.saturating_sub(rss_idle) as f64 / connected as f64
        } else {
            0.0
        },
        bench_rss_kib: bench_rss,
        bench_rss_kib_per_bot: if connected > 0 { bench_rss as f64 / connected as f64 } else { 0.0 },
        connected,
        connect_failed: shared.connect_failed.load(Ordering::Relaxed),
        dropped: shared.closed.load(Ordering::Relaxed),
        busted: shared.busted.load(Ordering::Relaxed),
        audit_failures: shared.audit_failures.load(Ordering::Relaxed),
        incomplete_hands: shared.incomplete.load(Ordering::Relaxed),
        flood_identities_per_room: cli.flood,
        flood_queries_per_sec: shared.flood_answered.load(Ordering::Relaxed) as f64 / seconds,
        flood_refused_per_sec: shared.flood_refused.load(Ordering::Relaxed) as f64 / seconds,
        load_before,
        load_after,
        first_error,
    })
}

fn print_text(r: &Report) {
    println!(
        "claw-bench: {} rooms x {} players of {} (chips {}, think {} ms), {:.1} s measured",
        r.rooms, r.players_per_room, r.game, r.chips, r.think_ms, r.seconds
    );
    println!("  hands        {} ({:.1} hands/s)", r.hands, r.hands_per_sec);
    println!(
        "  action → broadcast at the other players: p50 {:.2} ms, p90 {:.2} ms, p99 {:.2} ms, max {:.2} ms ({} samples)",
        r.latency_ms_p50, r.latency_ms_p90, r.latency_ms_p99, r.latency_ms_max, r.latency_samples
    );
    if let Some(m) = r.dealer_latency_mean_ms {
        let p99 = r.dealer_latency_ms_p99_at_most.map_or_else(String::new, |b| format!(", p99 ≤ {b} ms"));
        println!("  dealer's own action latency (arrival → broadcast, /metrics): mean {m:.2} ms{p99}");
    }
    println!(
        "  CPU per hand: dealer {:.2} ms, bots {:.2} ms",
        r.dealer_cpu_ms_per_hand, r.bots_cpu_ms_per_hand
    );
    println!(
        "  dealer RSS   {} KiB ({:.1} KiB per connection over idle)",
        r.dealer_rss_kib, r.dealer_rss_kib_per_connection
    );
    println!(
        "  load generator RSS {} KiB ({:.1} KiB per bot, everything included)",
        r.bench_rss_kib, r.bench_rss_kib_per_bot
    );
    println!(
        "  connections  {} seated, {} refused, {} dropped, {} out of chips; {} audit failures, {} incomplete hands",
        r.connected, r.connect_failed, r.dropped, r.busted, r.audit_failures, r.incomplete_hands
    );
    if r.flood_identities_per_room > 0 {
        println!(
            "  query flood  {} identities per room: {:.1} answers/s, {:.1} rate-limited/s",
            r.flood_identities_per_room, r.flood_queries_per_sec, r.flood_refused_per_sec
        );
    }
    println!("  load average before {} / after {}", r.load_before, r.load_after);
    if let Some(e) = &r.first_error {
        println!("  first error: {e}");
    }
}

#[cfg(test)]
mod tests {
    use super::DealerLatency;

    fn metrics(counts: [u64; 4], sum: f64) -> String {
        format!(
            "# TYPE claw_action_latency_seconds histogram\n\
             claw_action_latency_seconds_bucket{{le=\"0.001\"}} {}\n\
             claw_action_latency_seconds_bucket{{le=\"0.01\"}} {}\n\
             claw_action_latency_seconds_bucket{{le=\"0.1\"}} {}\n\
             claw_action_latency_seconds_bucket{{le=\"+Inf\"}} {}\n\
             claw_action_latency_seconds_sum {sum}\n\
             claw_action_latency_seconds_count {}\n",
            counts[0], counts[1], counts[2], counts[3], counts[3]
        )
    }

    #[test]
    fn the_dealers_quantile_is_bounded_by_its_bucket_over_the_window() {
        let before = DealerLatency::parse(&metrics([10, 10, 10, 10], 0.005)).unwrap();
        // In the window: 100 observations, 98 under 1 ms, 1 under 10 ms, 1 under 100 ms.
        let after = DealerLatency::parse(&metrics([108, 109, 110, 110], 0.105)).unwrap();
        let w = before.since(&after).unwrap();
        assert_eq!(w.count(), 100);
        assert_eq!(w.quantile_bound_ms(0.50), Some(1.0));
        assert_eq!(w.quantile_bound_ms(0.99), Some(10.0));
        assert_eq!(w.quantile_bound_ms(1.0), Some(100.0));
        assert!((w.mean_ms().unwrap() - 1.0).abs() < 1e-9);
    }

    #[test]
    fn no_histogram_no_figure() {
        assert_eq!(DealerLatency::parse("claw_rooms_open 3\n"), None);
        let empty = DealerLatency::parse(&metrics([0, 0, 0, 0], 0.0)).unwrap();
        assert_eq!(empty.since(&empty).unwrap().quantile_bound_ms(0.99), None);
    }
}
