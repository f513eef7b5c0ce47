//! Operating a dealer: TLS (`wss://`) joins with a generated CA, SIGTERM
//! stops of the real binary, the data directory lock, hand numbers that
//! continue across restarts, `--chips evm` on a local anvil, `--chips
//! solana` on an in-process Solana bank, the Guandan
//! bots demo audited offline, deferred reveals that survive a stop or crash,
//! the launch paths' defaults, a demo whose table breaks up, the admin API,
//! two nodes on one PostgreSQL ledger, a dealer killed mid-hand (refunded
//! once), a spectator who sees no secret early, a build without the chains
//! refusing them in one line, and the README's dealer commands run as
//! written (first contact).
//!
//! The chain tests are compiled with the crate's features only: `evm` for
//! the anvil ones, `solana-litesvm` for the Solana bank's
//! (`cargo test --workspace --all-features`, as CI runs).

mod admin;
mod ai_seats;
#[cfg(feature = "evm")]
#[path = "../../../chip-providers/tests/support/anvil.rs"]
mod anvil;
mod blind;
mod build_features;
mod crash_archive;
mod datadir;
mod dealer_crash;
mod e2e;
#[cfg(feature = "evm")]
mod evm;
mod fd_exhaustion;
mod guandan;
mod launch;
#[path = "../../../points-server/tests/points/common/pg.rs"]
mod pg;
mod quick_match_cli;
mod reveals;
#[cfg(feature = "evm")]
mod rooms_chips;
mod sanctions;
mod scale;
#[cfg(feature = "solana-litesvm")]
mod solana;
mod stop;
mod tls;
mod web_spectator;

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use claw_chips::LocalChips;
use claw_dealer::{DealerNode, NodeConfig, NodeHandle, RoomConfig};
use claw_player::bots::strategy;
use claw_player::node::{NodeConfig as PlayerConfig, PlayerNode};
use claw_player::play::{play_bot, BotReport};
use claw_player::Invite;
use claw_protocol::{Chips, Identity};
use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;

/// Failure guard for every wait (never an assertion about speed).
pub const GUARD: Duration = Duration::from_secs(120);

/// Waits for a spawned `claw-dealer` (output piped) to exit; past `guard`
/// it is killed and the test fails.
pub async fn wait_dealer(mut child: std::process::Child, guard: Duration) -> std::process::Output {
    let started = std::time::Instant::now();
    while child.try_wait().expect("dealer status").is_none() {
        if started.elapsed() > guard {
            let _ = child.kill();
            panic!("guard: claw-dealer did not finish within {guard:?}");
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    child.wait_with_output().expect("dealer output")
}

/// A Hold'em room that deals at once and closes after `hands` hands.
pub fn holdem(hands: u64) -> RoomConfig {
    let mut r = RoomConfig::new("holdem", "texas-holdem");
    r.between_hands = Duration::ZERO;
    r.seed_timeout = Duration::from_secs(2);
    r.action_timeout = Duration::from_secs(10);
    r.max_hands = Some(hands);
    r
}

/// Starts an in-process node on `data_dir` (local chips, 10 000 welcome).
pub async fn start_node(
    data_dir: &Path,
    rooms: Vec<RoomConfig>,
    builder: impl FnOnce(DealerNode) -> DealerNode,
) -> Result<NodeHandle, claw_dealer::NodeError> {
    let b = DealerNode::builder(NodeConfig::local(data_dir, rooms))
        .local_chips(Arc::new(LocalChips::new()), Chips(10_000));
    builder(b).launch().await
}

/// Seats two `simple` bots and plays until the room closes.
pub async fn play_two(invite: &Invite, config: PlayerConfig, seed: u8) -> Vec<BotReport> {
    let mut tasks = Vec::new();
    for i in 0..2u8 {
        let me = Arc::new(Identity::from_seed([seed.wrapping_add(i); 32]));
        let node = tokio::time::timeout(GUARD, PlayerNode::connect(invite, me, config.clone()))
            .await
            .expect("guard: connect")
            .expect("player connects");
        tasks.push(tokio::spawn(async move {
            let mut node = node;
            let s = strategy("texas-holdem", "simple").expect("strategy");
            let mut rng = ChaCha20Rng::seed_from_u64(u64::from(i));
            let r = play_bot(&mut node, s.as_ref(), &mut rng, None, |_| {}).await.expect("bot plays");
            node.close().await;
            r
        }));
    }
    let mut out = Vec::new();
    for t in tasks {
        out.push(tokio::time::timeout(GUARD, t).await.expect("guard: bot").expect("bot task"));
    }
    out
}
