//! `claw-evm`: deploys the chip vault and acts as a player or admin on it
//! (docs/chips-evm.md). Every command prints one JSON object on stdout.

use std::path::PathBuf;

use alloy::primitives::{Address, U256};
use alloy::sol_types::SolConstructor;
use anyhow::{bail, Context, Result};
use clap::{Parser, Subcommand};
use claw_chips::evm::binding::sign_binding;
use claw_chips::evm::contract::{ChipVault, TestChip};
use claw_chips::evm::{load_key_file, Chain, ChainSettings};
use claw_protocol::{Identity, PlayerId};
use serde_json::json;

#[derive(Parser)]
#[command(name = "claw-evm", version, about = "Deploy and use the game-claw chip vault on an EVM chain")]
struct Cli {
    /// JSON-RPC URL (https, or http to a loopback host).
    #[arg(long, env = "CLAW_EVM_RPC_URL")]
    rpc_url: String,
    /// Chain id the node must serve (31337 for a local anvil).
    #[arg(long, env = "CLAW_EVM_CHAIN_ID")]
    chain_id: u64,
    /// Permit a private-network RPC host.
    #[arg(long)]
    allow_private: bool,
    /// File with the sender's secp256k1 key in hex (mode 0600).
    #[arg(long, env = "CLAW_EVM_KEY_FILE")]
    key_file: PathBuf,
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Deploys the vault (and a test token unless --token is given); the sender becomes admin.
    Deploy {
        /// An existing ERC-20 whose base unit is one chip.
        #[arg(long)]
        token: Option<Address>,
        /// Longest hand lock the vault accepts, in seconds.
        #[arg(long, default_value_t = 86_400)]
        max_lock: u32,
        /// Operator addresses to appoint (the dealer's key); repeatable.
        #[arg(long)]
        operator: Vec<Address>,
    },
    /// Admin: appoints (or with --disable removes) an operator.
    SetOperator {
        #[arg(long)]
        vault: Address,
        #[arg(long)]
        operator: Address,
        #[arg(long)]
        disable: bool,
    },
    /// Test token minter: creates chips for an address.
    Mint {
        #[arg(long)]
        token: Address,
        #[arg(long)]
        to: Address,
        #[arg(long)]
        amount: u64,
    },
    /// Player: binds the sender's address to the player id of a claw key file.
    Register {
        #[arg(long)]
        vault: Address,
        /// The player's claw key file (player-sdk `--key`; created, mode
        /// 0600, if missing).
        #[arg(long)]
        identity: PathBuf,
    },
    /// Player: approves the vault and deposits chips from the sender.
    Deposit {
        #[arg(long)]
        vault: Address,
        #[arg(long)]
        amount: u64,
    },
    /// Player: withdraws free chips to the sender, without the dealer.
    Withdraw {
        #[arg(long)]
        vault: Address,
        #[arg(long)]
        amount: u64,
    },
    /// Free and locked chips of an address (default: the sender).
    Balance {
        #[arg(long)]
        vault: Address,
        #[arg(long)]
        owner: Option<Address>,
    },
}

#[tokio::main]
async fn main() -> Result<()> {
    tracing_subscriber::fmt().with_writer(std::io::stderr).with_max_level(tracing::Level::WARN).init();
    let cli = Cli::parse();
    let signer = load_key_file(&cli.key_file)?;
    let settings = ChainSettings {
        rpc_url: cli.rpc_url.clone(),
        chain_id: cli.chain_id,
        allow_private: cli.allow_private,
        confirmations: 0,
        tx_timeout: std::time::Duration::from_secs(180),
        request_timeout: std::time::Duration::from_secs(20),
        poll: std::time::Duration::from_millis(500),
    };
    let vault = match &cli.cmd {
        Cmd::SetOperator { vault, .. }
        | Cmd::Register { vault, .. }
        | Cmd::Deposit { vault, .. }
        | Cmd::Withdraw { vault, .. }
        | Cmd::Balance { vault, .. } => *vault,
        Cmd::Deploy { .. } | Cmd::Mint { .. } => Address::ZERO,
    };
    let chain = Chain::connect(settings, vault, signer).await.context("connecting to the node")?;
    let me = chain.address();
    let out = match cli.cmd {
        Cmd::Deploy { token, max_lock, operator } => {
            let token = match token {
                Some(t) => t,
                None => {
                    chain.deploy(TestChip::BYTECODE.to_vec()).await.context("deploying the test token")?
                }
            };
            let mut code = ChipVault::BYTECODE.to_vec();
            code.extend(ChipVault::constructorCall { token_: token, maxLock_: max_lock }.abi_encode());
            let block = chain.block_number().await?;
            let vault = chain.deploy(code).await.context("deploying the vault")?;
            for op in &operator {
                let call = ChipVault::setOperatorCall { operator: *op, enabled: true };
                chain.send_to(vault, &call).await.with_context(|| format!("appointing {op}"))?;
            }
            json!({"token": token, "vault": vault, "from_block": block, "admin": me, "operators": operator})
        }
        Cmd::SetOperator { operator, disable, .. } => {
            chain.send_vault(&ChipVault::setOperatorCall { operator, enabled: !disable }).await?;
            json!({"operator": operator, "enabled": !disable})
        }
        Cmd::Mint { token, to, amount } => {
            chain.send_to(token, &TestChip::mintCall { to, amount: U256::from(amount) }).await?;
            json!({"token": token, "to": to, "minted": amount})
        }
        Cmd::Register { identity, .. } => {
            let id = Identity::load_or_create(&identity, &mut rand::rngs::OsRng)
                .with_context(|| format!("key file {}", identity.display()))?;
            let sig = sign_binding(&id, cli.chain_id, vault, me);
            let game_id = alloy::primitives::B256::from(*id.id().as_bytes());
            let call = ChipVault::registerCall { gameId: game_id, binding: sig.0.to_vec().into() };
            chain.send_vault(&call).await?;
            json!({"owner": me, "player": id.id().to_string()})
        }
        Cmd::Deposit { amount, .. } => {
            let token = chain.contract().token().call().await.context("reading the vault's token")?;
            let approve = TestChip::approveCall { spender: vault, amount: U256::from(amount) };
            chain.send_to(token, &approve).await.context("approving the vault")?;
            chain.send_vault(&ChipVault::depositCall { amount: U256::from(amount) }).await?;
            balance_json(&chain, me).await?
        }
        Cmd::Withdraw { amount, .. } => {
            chain.send_vault(&ChipVault::withdrawCall { amount: U256::from(amount) }).await?;
            balance_json(&chain, me).await?
        }
        Cmd::Balance { owner, .. } => balance_json(&chain, owner.unwrap_or(me)).await?,
    };
    println!("{out}");
    Ok(())
}

async fn balance_json(chain: &Chain, owner: Address) -> Result<serde_json::Value> {
    let c = chain.contract();
    let b = c.balanceOf(owner).call().await.context("reading the balance")?;
    let game_id = c.gameIdOf(owner).call().await.context("reading the binding")?;
    let player = if game_id.is_zero() { None } else { Some(PlayerId::from_bytes(game_id.0).to_string()) };
    if b.free > U256::from(u64::MAX) || b.locked > U256::from(u64::MAX) {
        bail!("balance beyond u64");
    }
    Ok(
        json!({"owner": owner, "player": player, "free": b.free.to::<u64>(), "locked": b.locked.to::<u64>(), "lock_until": b.lockUntil}),
    )
}
