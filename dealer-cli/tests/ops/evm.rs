//! `claw-dealer --chips evm` end to end on a real local node: anvil, the
//! vault and its test token deployed, 6 players registered and funded, the
//! real binary with 6 bots playing 20 Hold'em hands; then the chain is
//! checked: every opened hand settled exactly once, the vault's tokens
//! equal its accounts (commission included), and each player's vault
//! balance is the balance the dealer reported.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use alloy::primitives::{Address, B256, U256};
use alloy::providers::Provider;
use alloy::rpc::types::{Filter, Log};
use alloy::sol_types::SolEvent;
use claw_chips::evm::contract::{ChipVault, TestChip};
use claw_chips::evm::Chain;
use claw_protocol::Identity;

use crate::anvil::{anvil_bin, deploy, fund, register, settings, signer, write_key_file, Anvil, CHAIN_ID};
use crate::{wait_dealer, GUARD};

const PLAYERS: usize = 6;
const HANDS: u64 = 20;
const DEPOSIT: u64 = 1000;

async fn logs(admin: &Chain, vault: Address, sig: B256) -> Vec<Log> {
    let f = Filter::new().address(vault).event_signature(sig).from_block(0);
    admin.provider().get_logs(&f).await.expect("vault logs")
}

/// (min, mean, max) gas used by the transactions that emitted `logs`.
async fn gas(admin: &Chain, logs: &[Log]) -> (u64, u64, u64) {
    let mut used = Vec::new();
    for l in logs {
        let tx = l.transaction_hash.expect("log of a mined transaction");
        let r = admin.provider().get_transaction_receipt(tx).await.expect("receipt").expect("mined");
        used.push(r.gas_used);
    }
    let n = used.len().max(1) as u64;
    let min = used.iter().copied().min().unwrap_or(0);
    let max = used.iter().copied().max().unwrap_or(0);
    (min, used.iter().sum::<u64>() / n, max)
}

/// A node with the token and vault deployed, the operator (anvil key 1)
/// appointed, and `n` bots (key files `dir/bots/bot-<i>.key`) registered to
/// anvil keys 4… with `deposit` chips each.
pub struct VaultWithBots {
    pub anvil: Anvil,
    pub url: String,
    pub admin: Chain,
    pub operator: Address,
    pub token: Address,
    pub vault: Address,
    /// Bot id (short) → its EVM address.
    pub owners: BTreeMap<String, Address>,
    /// The operator key file, `dir/operator.key`.
    pub key_file: PathBuf,
    pub bots: PathBuf,
}

pub async fn vault_with_bots(bin: &Path, dir: &Path, n: usize, deposit: u64) -> VaultWithBots {
    let anvil = Anvil::start(bin, 0);
    let url = anvil.url();
    let admin = Chain::connect(settings(&url), Address::ZERO, signer(&anvil.keys[0])).await.expect("admin");
    let operator = signer(&anvil.keys[1]).address();
    let (token, vault) = deploy(&admin, 3600, &[operator]).await;
    let bots = dir.join("bots");
    std::fs::create_dir_all(&bots).expect("bots dir");
    let mut owners = BTreeMap::new();
    for i in 0..n {
        let id = Identity::load_or_create(bots.join(format!("bot-{i}.key")), &mut rand::rngs::OsRng)
            .expect("bot key");
        let chain = Chain::connect(settings(&url), vault, signer(&anvil.keys[4 + i])).await.expect("player");
        register(&id, &chain, vault).await.expect("register");
        fund(&admin, token, &chain, deposit).await;
        owners.insert(id.id().short(), chain.address());
    }
    let key_file = write_key_file(&dir.join("operator.key"), &anvil.keys[1]);
    VaultWithBots { anvil, url, admin, operator, token, vault, owners, key_file, bots }
}

#[tokio::test]
#[cfg_attr(
    not(claw_evm),
    ignore = "skipped: no local EVM node; set CLAW_ANVIL (scripts/install-evm-tools.sh prints it) or CLAW_REQUIRE_EVM=1"
)]
async fn dealer_binary_plays_twenty_hands_settled_on_chain() {
    let bin = anvil_bin("dealer_binary_plays_twenty_hands_settled_on_chain");
    let dir = tempfile::tempdir().expect("temp dir");
    let VaultWithBots { anvil: _anvil, url, admin, operator, token, vault, owners, key_file, bots } =
        vault_with_bots(&bin, dir.path(), PLAYERS, DEPOSIT).await;
    let data = dir.path().join("data");

    let hands = HANDS.to_string();
    let child = Command::new(env!("CARGO_BIN_EXE_claw-dealer"))
        .args(["--game", "texas-holdem", "--bots", "6", "--hands", &hands, "--commission", "1"])
        .args(["--chips", "evm", "--evm-rpc-url", &url, "--evm-chain-id", &CHAIN_ID.to_string()])
        .args(["--evm-vault", &vault.to_string(), "--evm-key-file"])
        .arg(&key_file)
        .arg("--bot-keys")
        .arg(&bots)
        .arg("--data-dir")
        .arg(&data)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start claw-dealer");
    let started = Instant::now();
    let out = wait_dealer(child, GUARD * 3).await;
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "claw-dealer failed:\n{stdout}\n{stderr}");
    assert!(stdout.contains(&format!("{HANDS} hands audited OK")), "{stdout}");

    // Every hand opened on chain was settled exactly once.
    let opened = logs(&admin, vault, ChipVault::HandOpened::SIGNATURE_HASH).await;
    let settled = logs(&admin, vault, ChipVault::HandSettled::SIGNATURE_HASH).await;
    let opened_keys: BTreeSet<B256> = opened.iter().map(|l| l.topics()[1]).collect();
    let settled_keys: Vec<B256> = settled.iter().map(|l| l.topics()[1]).collect();
    let settled_set: BTreeSet<B256> = settled_keys.iter().copied().collect();
    assert_eq!(settled_set.len(), settled_keys.len(), "a hand settled twice");
    assert_eq!(opened_keys, settled_set, "opened vs settled hands");
    assert!(settled_set.len() as u64 >= HANDS, "{} hands settled on chain", settled_set.len());

    // Conservation: the vault holds exactly the deposits; nothing locked.
    let v = ChipVault::new(vault, admin.provider());
    let held = TestChip::new(token, admin.provider()).balanceOf(vault).call().await.expect("tokens");
    assert_eq!(held, U256::from(DEPOSIT * PLAYERS as u64));
    let mut players_total = 0u64;
    for (short, owner) in &owners {
        let b = v.balanceOf(*owner).call().await.expect("balance");
        assert_eq!(b.locked, U256::ZERO, "{short}: chips still locked");
        let free = b.free.to::<u64>();
        players_total += free;
        // The dealer's final balance of this player, from the demo summary.
        let line = stdout
            .lines()
            .find(|l| l.trim_start().starts_with("bot-") && l.contains(short.as_str()))
            .unwrap_or_else(|| panic!("no summary line for {short}:\n{stdout}"));
        let reported: u64 = line
            .rsplit("balance")
            .next()
            .and_then(|t| t.split_whitespace().next())
            .and_then(|t| t.parse().ok())
            .unwrap_or_else(|| panic!("no balance in {line:?}"));
        assert_eq!(free, reported, "{short}: on chain vs dealer");
    }
    let fees = v.balanceOf(operator).call().await.expect("operator balance");
    assert_eq!(fees.locked, U256::ZERO);
    assert_eq!(players_total + fees.free.to::<u64>(), DEPOSIT * PLAYERS as u64, "players + commission");
    assert!(fees.free.to::<u64>() >= HANDS, "commission of 1 per player per hand reached the operator");

    let (omin, omean, omax) = gas(&admin, &opened).await;
    let (smin, smean, smax) = gas(&admin, &settled).await;
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    eprintln!(
        "gas per hand ({PLAYERS} seats, {} hands): openHand min {omin} mean {omean} max {omax}; \
         settleHand min {smin} mean {smean} max {smax}; {:.1?} for the run; loadavg {}",
        settled_set.len(),
        started.elapsed(),
        load.trim()
    );
}
