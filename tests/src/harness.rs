//! Start a dealer node in-process on 127.0.0.1 (free port, in-memory chips,
//! a temporary data directory) and connect players to it over WebSockets.

use std::sync::Arc;
use std::time::Duration;

use claw_chips::LocalChips;
use claw_dealer::{DealerNode, NodeConfig, NodeHandle, RoomConfig};
use claw_player::bots::strategy;
use claw_player::node::{NodeConfig as PlayerConfig, PlayerNode};
use claw_player::play::{play_bot, BotReport};
use claw_player::Invite;
use claw_protocol::{Chips, Identity};
use rand_chacha::rand_core::SeedableRng;
use rand_chacha::ChaCha20Rng;

/// Runs `fut`, failing the test (instead of hanging the run) after `secs`.
pub async fn within<T>(secs: u64, what: &str, fut: impl std::future::Future<Output = T>) -> T {
    match tokio::time::timeout(Duration::from_secs(secs), fut).await {
        Ok(t) => t,
        Err(_) => panic!("{what}: no result within {secs} s"),
    }
}

/// A running dealer and the directory it keeps its files in.
pub struct Dealer {
    pub node: NodeHandle,
    pub dir: tempfile::TempDir,
    pub chips: Arc<LocalChips>,
}

impl Dealer {
    /// The invite URL of `room`.
    pub fn invite(&self, room: &str) -> Invite {
        Invite::parse(&self.node.invite_url(room).expect("room exists")).expect("invite parses")
    }

    /// Stops the node (a hung shutdown fails the test after 30 s).
    pub async fn stop(self) {
        let t =
            tokio::time::timeout(Duration::from_secs(30), self.node.shutdown(Duration::from_secs(2))).await;
        assert!(t.is_ok(), "dealer shutdown hung");
    }
}

/// A room for fast tests: no pause between hands, short timeouts.
pub fn fast_room(id: &str, game: &str) -> RoomConfig {
    let mut r = RoomConfig::new(id, game);
    // Every hand audited at its end (Sam Gong's default is deferred).
    r.reveal = claw_protocol::messages::RevealPolicy::Full;
    r.between_hands = Duration::ZERO;
    r.seed_timeout = Duration::from_secs(2);
    r.action_timeout = Duration::from_secs(10);
    if claw_dealer::config::has_house(game) {
        r.house_bankroll = Chips(100_000_000);
    }
    r
}

/// Starts a dealer with `rooms`; every new player is granted `welcome` chips.
pub async fn start_dealer(rooms: Vec<RoomConfig>, welcome: u64) -> Dealer {
    let dir = tempfile::tempdir().expect("temp dir");
    let chips = Arc::new(LocalChips::new());
    let node = DealerNode::builder(NodeConfig::local(dir.path(), rooms))
        .local_chips(Arc::clone(&chips), Chips(welcome))
        .launch()
        .await
        .expect("dealer starts");
    Dealer { node, dir, chips }
}

/// Connects `n` players (fresh identities from `seed`) to `invite`.
pub async fn connect_players(invite: &Invite, n: usize, seed: u64, config: PlayerConfig) -> Vec<PlayerNode> {
    let mut rng = ChaCha20Rng::seed_from_u64(seed);
    let mut out = Vec::new();
    for _ in 0..n {
        let me = Arc::new(Identity::generate(&mut rng));
        out.push(PlayerNode::connect(invite, me, config.clone()).await.expect("player connects"));
    }
    out
}

/// Runs `strategy` on every node until each has played `hands` hands.
pub async fn run_bots(
    nodes: Vec<PlayerNode>,
    game: &str,
    strat: &str,
    hands: u64,
    seed: u64,
) -> Vec<BotReport> {
    let strategies = vec![strat.to_string(); nodes.len()];
    run_mixed(nodes, game, &strategies, hands, seed).await
}

/// Runs bot `i` with `strategies[i]` until each has played `hands` hands.
/// `CLAW_E2E_TRACE=1` prints every event on stderr.
pub async fn run_mixed(
    nodes: Vec<PlayerNode>,
    game: &str,
    strategies: &[String],
    hands: u64,
    seed: u64,
) -> Vec<BotReport> {
    let mut tasks = Vec::new();
    for (i, mut node) in nodes.into_iter().enumerate() {
        let s = strategy(game, &strategies[i]).expect("strategy");
        tasks.push(tokio::spawn(async move {
            let mut rng = ChaCha20Rng::seed_from_u64(seed + i as u64);
            let trace = std::env::var_os("CLAW_E2E_TRACE").is_some();
            let r = play_bot(&mut node, s.as_ref(), &mut rng, Some(hands), |e| {
                if trace {
                    let line = serde_json::to_string(e).unwrap_or_default();
                    eprintln!("bot {i}: {}", line.chars().take(400).collect::<String>());
                }
            })
            .await
            .expect("bot runs");
            node.close().await;
            r
        }));
    }
    let mut out = Vec::new();
    for t in tasks {
        out.push(t.await.expect("bot task"));
    }
    out
}

/// Runs `claw-player join URL --hands N` as a script would: `first` lines
/// go to its stdin at once, then every JSON line it prints is kept and
/// handed to `answer`, whose lines go back to its stdin. Blocking (run it
/// with `spawn_blocking`); returns the exit status and every line.
pub fn json_lines_session(
    bin: std::path::PathBuf,
    url: &str,
    hands: u32,
    first: &[&str],
    mut answer: impl FnMut(&serde_json::Value) -> Vec<String>,
) -> (std::process::ExitStatus, Vec<serde_json::Value>) {
    use std::io::{BufRead, BufReader, Write};
    use std::process::{Command, Stdio};
    let mut child = Command::new(bin)
        .args(["join", url, "--hands", &hands.to_string()])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn claw-player");
    let mut stdin = child.stdin.take().expect("its stdin");
    let stdout = BufReader::new(child.stdout.take().expect("its stdout"));
    for l in first {
        writeln!(stdin, "{l}").expect("write to claw-player");
    }
    let mut seen = Vec::new();
    for line in stdout.lines() {
        let line = line.expect("a line from claw-player");
        if std::env::var_os("CLAW_E2E_TRACE").is_some() {
            eprintln!("cli: {}", line.chars().take(300).collect::<String>());
        }
        let v: serde_json::Value = serde_json::from_str(&line).expect("a JSON line");
        for a in answer(&v) {
            writeln!(stdin, "{a}").expect("write to claw-player");
        }
        seen.push(v);
    }
    (child.wait().expect("claw-player exits"), seen)
}

/// The first affordable option of a `your-turn` line, as an `act` command
/// (a script's play: the option at its minimum).
pub fn act_first(turn: &serde_json::Value) -> String {
    let first = turn["actions"].as_array().and_then(|a| a.iter().find(|a| a["affordable"] == true));
    serde_json::json!({"cmd": "act", "action": first.expect("an affordable option")["action"]}).to_string()
}

/// The `claw-player` binary for the CLI tests: `CLAW_PLAYER_BIN` if set,
/// else the one cargo built beside this test (`cargo test --workspace`
/// builds every binary of the workspace first). The binary belongs to
/// another package, so `CARGO_BIN_EXE_…` is not available here, and a test
/// never runs `cargo build` itself. Missing, the test fails saying how to
/// build it: it never passes without running.
pub fn claw_player_bin(test: &str) -> std::path::PathBuf {
    if let Some(p) = std::env::var_os("CLAW_PLAYER_BIN") {
        return p.into();
    }
    // target/<profile>/deps/<test> → target/<profile>/claw-player
    let exe = std::env::current_exe().expect("the test's path");
    let dir = exe.parent().and_then(std::path::Path::parent).expect("target/<profile>");
    let bin = dir.join(format!("claw-player{}", std::env::consts::EXE_SUFFIX));
    assert!(
        bin.exists(),
        "{test}: no claw-player binary at {}: run the workspace's tests (`cargo test --workspace`), \
         or `cargo build -p claw-player-cli` first, or set CLAW_PLAYER_BIN",
        bin.display()
    );
    bin
}
