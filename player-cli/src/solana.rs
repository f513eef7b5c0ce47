//! `claw-player approve` / `claw-player revoke`: the player signs, with their
//! game key (an Ed25519 key is a Solana address), the SPL Token approval
//! that lets a dealer's operator move at most the buy-in from their chip
//! account, or ends it. docs/chips-solana.md.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context as _;
use claw_chips::solana::{player, player_address, spl, Address, RpcClient};
use claw_protocol::Identity;

/// Where the chips are: the cluster and the mint.
#[derive(Debug, clap::Args)]
pub struct ChainArgs {
    /// The player's key file (it must exist: the identity you play with).
    #[arg(long, value_name = "FILE")]
    pub key: PathBuf,
    /// JSON-RPC URL of the Solana cluster (https, or http to a loopback host).
    #[arg(long, env = "CLAW_SOLANA_RPC_URL", value_name = "URL")]
    pub rpc_url: String,
    /// The chip mint (base58), as the dealer announces it.
    #[arg(long, value_name = "ADDRESS")]
    pub mint: String,
    /// Permit an RPC host on a private network (still over TLS).
    #[arg(long)]
    pub allow_private: bool,
}

/// Arguments of `claw-player approve`.
#[derive(Debug, clap::Args)]
pub struct ApproveArgs {
    /// The chain, the mint and the player's key.
    #[command(flatten)]
    pub chain: ChainArgs,
    /// The dealer's operator address (base58; `claw-dealer` prints it at start).
    #[arg(long, value_name = "ADDRESS")]
    pub operator: String,
    /// The most chips the dealer may move (replaces any earlier approval).
    #[arg(long)]
    pub amount: u64,
}

fn address(what: &str, s: &str) -> anyhow::Result<Address> {
    s.parse().map_err(|_| anyhow::anyhow!("--{what} {s:?} is not a base58 Solana address"))
}

fn open(c: &ChainArgs) -> anyhow::Result<(Identity, RpcClient, Address)> {
    let id = Identity::load(&c.key).with_context(|| format!("key file {}", c.key.display()))?;
    let rpc = RpcClient::new(&c.rpc_url, c.allow_private, Duration::from_secs(15))
        .with_context(|| format!("--rpc-url {}", c.rpc_url))?;
    Ok((id, rpc, address("mint", &c.mint)?))
}

/// Approves the operator; returns the line to print.
pub async fn approve(a: &ApproveArgs) -> anyhow::Result<String> {
    let (id, rpc, mint) = open(&a.chain)?;
    let operator = address("operator", &a.operator)?;
    let key = player::game_keypair(&id.signing_secret());
    let sig = player::approve(&rpc, &key, &mint, &operator, a.amount).await.context("approve")?;
    let account = spl::associated_account(&player_address(&id.id()), &mint);
    Ok(serde_json::json!({
        "approved": a.amount, "operator": operator.to_string(), "token_account": account.to_string(),
        "signature": sig.to_string(),
    })
    .to_string())
}

/// Revokes any approval; returns the line to print.
pub async fn revoke(c: &ChainArgs) -> anyhow::Result<String> {
    let (id, rpc, mint) = open(c)?;
    let key = player::game_keypair(&id.signing_secret());
    let sig = player::revoke(&rpc, &key, &mint).await.context("revoke")?;
    Ok(serde_json::json!({"revoked": true, "signature": sig.to_string()}).to_string())
}
