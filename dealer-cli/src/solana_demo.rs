//! `claw-dealer --chips solana --solana-litesvm`: a Solana bank in process
//! (litesvm with the real SPL Token, ATA and Memo programs) behind a
//! JSON-RPC responder on 127.0.0.1, so the dealer's provider runs its
//! production RPC path; the demo bots get SOL for fees and test chips, and
//! approve the dealer with their game keys.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::Context as _;
use claw_chips::solana::litesvm::LiteSvmChain;
use claw_chips::solana::{
    player, player_address, spl, write_keypair_file, Address, Keypair, RpcClient, Signer,
};
use claw_protocol::Identity;

/// The running demo bank.
pub struct DemoChain {
    pub chain: LiteSvmChain,
    pub rpc_url: String,
    pub mint: Address,
    pub escrow: Address,
    /// The operator keypair file the provider loads.
    pub key_file: PathBuf,
}

const LAMPORTS_PER_SOL: u64 = 1_000_000_000;

/// Starts the bank and its RPC responder, creates the chip mint and the
/// operator's escrow, and gives each of `bots` `chips` chips and an approval
/// of the dealer (signed with the bot's game key, sent over the RPC).
pub async fn start(data_dir: &Path, bots: &[Identity], chips: u64) -> anyhow::Result<DemoChain> {
    let chain = LiteSvmChain::new();
    let addr =
        chain.spawn_rpc(SocketAddr::from(([127, 0, 0, 1], 0))).await.context("litesvm RPC listener")?;
    let rpc_url = format!("http://{addr}");
    let operator = Keypair::new();
    let key_file = data_dir.join("solana-operator.json");
    write_keypair_file(&operator, &key_file).context("operator key file")?;
    chain.airdrop(&operator.pubkey(), 100 * LAMPORTS_PER_SOL).context("operator SOL")?;
    let mint = chain.create_mint(&operator).context("chip mint")?;
    let escrow = chain.fund(&operator, &mint, &operator.pubkey(), 0).context("escrow account")?;
    let rpc = RpcClient::new(&rpc_url, false, Duration::from_secs(10)).context("RPC client")?;
    for id in bots {
        let me = player_address(&id.id());
        chain.airdrop(&me, LAMPORTS_PER_SOL).context("bot SOL")?;
        chain.fund(&operator, &mint, &me, chips).context("bot chips")?;
        let key = player::game_keypair(&id.signing_secret());
        player::approve(&rpc, &key, &mint, &operator.pubkey(), u64::MAX)
            .await
            .with_context(|| format!("bot {} approves the dealer", id.id().short()))?;
    }
    Ok(DemoChain { chain, rpc_url, mint, escrow, key_file })
}

impl DemoChain {
    /// The chips `id` holds on the bank.
    pub fn tokens_of(&self, id: &Identity) -> u64 {
        let a = spl::associated_account(&player_address(&id.id()), &self.mint);
        self.chain.token_account(&a).map_or(0, |t| t.amount)
    }

    /// The chips in the escrow (commission and rake).
    pub fn escrow_tokens(&self) -> u64 {
        self.chain.token_account(&self.escrow).map_or(0, |t| t.amount)
    }
}
