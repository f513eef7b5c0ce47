//! `EvmChips` and the `ChipVault` contract against a real local node
//! (`anvil`, started here on 127.0.0.1 with a free port). The node binary is
//! `$CLAW_ANVIL`, else the repo-local `chip-providers/evm/node_modules`
//! install (scripts/install-evm-tools.sh). Without CLAW_ANVIL or
//! CLAW_REQUIRE_EVM the tests are built `#[ignore]`d (`cfg(claw_evm)` of
//! scripts/test-services-cfg.rs) and reported skipped; with either, a
//! missing node (or node.js and solc for the artifacts check) fails them.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use alloy::primitives::{Address, B256, U256};
use alloy::providers::Provider;
use alloy::rpc::types::Filter;
use alloy::sol_types::SolEvent;
use claw_chips::evm::binding::sign_binding;
use claw_chips::evm::contract::{ChipVault, TestChip};
use claw_chips::evm::{hand_key, room_id, Chain, EvmChips, EvmChipsConfig, EvmError, Revert};
use claw_chips::{AccountId, ChipError, ChipProvider, HandRef, IdempotencyKey};
use claw_protocol::{Chips, Identity};

#[path = "support/anvil.rs"]
mod anvil;

use anvil::{anvil_bin, deploy, fund, settings, signer, write_key_file, Anvil};

const DEPOSIT: u64 = 1000;

struct Player {
    id: Identity,
    chain: Chain,
}

impl Player {
    fn account(&self) -> AccountId {
        AccountId::from(self.id.id())
    }
    fn address(&self) -> Address {
        self.chain.address()
    }
}

/// A node with the token and vault deployed, two operators appointed (keys
/// 1 and 2) and `n` registered players with `DEPOSIT` chips each (keys 4…).
struct World {
    anvil: Anvil,
    dir: tempfile::TempDir,
    admin: Chain,
    token: Address,
    vault: Address,
    players: Vec<Player>,
}

async fn world(bin: &Path, n: usize) -> World {
    let anvil = Anvil::start(bin, 0);
    let url = anvil.url();
    let admin = Chain::connect(settings(&url), Address::ZERO, signer(&anvil.keys[0])).await.unwrap();
    let operators = [1, 2].map(|k| signer(&anvil.keys[k]).address());
    let (token, vault) = deploy(&admin, 3600, &operators).await;
    let mut players = Vec::new();
    for i in 0..n {
        let id = Identity::from_seed([i as u8 + 1; 32]);
        let chain = Chain::connect(settings(&url), vault, signer(&anvil.keys[4 + i])).await.unwrap();
        let p = Player { id, chain };
        register(&p, vault).await.unwrap();
        fund(&admin, token, &p.chain, DEPOSIT).await;
        players.push(p);
    }
    World { anvil, dir: tempfile::tempdir().unwrap(), admin, token, vault, players }
}

async fn register(p: &Player, vault: Address) -> Result<(), EvmError> {
    anvil::register(&p.id, &p.chain, vault).await
}

fn house() -> AccountId {
    AccountId::new("dealer:test").unwrap()
}

fn key(s: &str) -> IdempotencyKey {
    IdempotencyKey::new(s).unwrap()
}

impl World {
    fn url(&self) -> String {
        self.anvil.url()
    }

    /// Operator key `k` (1 or 2) written to a 0600 file.
    fn key_file(&self, k: usize) -> PathBuf {
        write_key_file(&self.dir.path().join(format!("operator-{k}.key")), &self.anvil.keys[k])
    }

    fn config(&self, k: usize, journal: &str) -> EvmChipsConfig {
        EvmChipsConfig {
            poll_ms: 20,
            tx_timeout_secs: 20,
            ..EvmChipsConfig::new(
                self.url(),
                31337,
                self.vault,
                self.key_file(k),
                self.dir.path().join(journal),
            )
        }
    }

    async fn provider(&self, k: usize, journal: &str) -> EvmChips {
        EvmChips::connect(&self.config(k, journal), house()).await.unwrap()
    }

    async fn operator_chain(&self, k: usize) -> Chain {
        Chain::connect(settings(&self.url()), self.vault, signer(&self.anvil.keys[k])).await.unwrap()
    }

    /// (free, locked) of an address in the vault.
    async fn vault_balance(&self, who: Address) -> (u64, u64) {
        let b = self.admin_vault().balanceOf(who).call().await.unwrap();
        (b.free.to::<u64>(), b.locked.to::<u64>())
    }

    fn admin_vault(&self) -> ChipVault::ChipVaultInstance<&alloy::providers::DynProvider> {
        ChipVault::new(self.vault, self.admin.provider())
    }

    async fn free(&self, i: usize) -> u64 {
        self.vault_balance(self.players[i].address()).await.0
    }

    /// Tokens held by the vault = the sum of all free and locked balances of `who`.
    async fn assert_conserved(&self, who: &[Address]) {
        let held =
            TestChip::new(self.token, self.admin.provider()).balanceOf(self.vault).call().await.unwrap();
        let mut sum = 0u64;
        for a in who {
            let (f, l) = self.vault_balance(*a).await;
            sum += f + l;
        }
        assert_eq!(held, U256::from(sum), "vault tokens vs account balances");
    }

    async fn all_accounts(&self) -> Vec<Address> {
        let mut v: Vec<Address> = self.players.iter().map(|p| p.address()).collect();
        v.push(signer(&self.anvil.keys[1]).address());
        v.push(signer(&self.anvil.keys[2]).address());
        v
    }

    fn stakes(&self, seats: &[usize], stake: u64) -> Vec<(AccountId, Chips)> {
        seats.iter().map(|&i| (self.players[i].account(), Chips(stake))).collect()
    }

    async fn rpc<R: serde::de::DeserializeOwned + std::fmt::Debug + Send + Sync + Unpin + 'static>(
        &self,
        method: &'static str,
        params: serde_json::Value,
    ) -> R {
        self.admin.provider().raw_request(method.into(), params).await.unwrap()
    }
}

fn open_journals(dir: &Path) -> usize {
    std::fs::read_dir(dir.join("open")).map(|d| d.count()).unwrap_or(0)
}

/// Runs one Hold'em-like hand on `chips`: 2 commission from every seat, a
/// 50 bet from every seat, the pot to `winner`, the commission to the house.
async fn play(chips: &EvmChips, w: &World, hand: &HandRef, seats: &[usize], winner: usize) {
    let p = hand.key_prefix();
    let mut n = 0;
    let mut next = || {
        n += 1;
        key(&format!("{p}/{n}"))
    };
    for &i in seats {
        chips.debit(&next(), &w.players[i].account(), Chips(2), "commission").await.unwrap();
    }
    for &i in seats {
        chips.debit(&next(), &w.players[i].account(), Chips(50), "bet").await.unwrap();
    }
    let pot = 50 * seats.len() as u64;
    chips.credit(&next(), &w.players[winner].account(), Chips(pot), "pot").await.unwrap();
    chips.credit(&next(), &house(), Chips(2 * seats.len() as u64), "commission").await.unwrap();
}

#[tokio::test]
#[cfg_attr(
    not(claw_evm),
    ignore = "skipped: no local EVM node; set CLAW_ANVIL (scripts/install-evm-tools.sh prints it) or CLAW_REQUIRE_EVM=1"
)]
async fn six_player_hand_settles_in_one_transaction_and_players_withdraw() {
    let bin = anvil_bin("six_player_hand");
    let w = world(&bin, 6).await;
    let chips = w.provider(1, "j").await;
    let hand = HandRef::new("room-a", "00aa");
    let seats = [0, 1, 2, 3, 4, 5];
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();

    let t0 = Instant::now();
    chips.open_hand(&hand, &w.stakes(&seats, 200)).await.unwrap();
    let open_ms = t0.elapsed().as_secs_f64() * 1e3;
    let open_block = w.admin.block_number().await.unwrap();
    assert_eq!(w.vault_balance(w.players[0].address()).await, (DEPOSIT - 200, 200));
    // In-hand balance: the free chips plus the stake.
    assert_eq!(chips.balance(&w.players[0].account()).await.unwrap(), Chips(DEPOSIT));

    play(&chips, &w, &hand, &seats, 2).await;
    assert_eq!(chips.balance(&w.players[2].account()).await.unwrap(), Chips(DEPOSIT - 52 + 300));
    // Nothing moved on chain during the hand.
    assert_eq!(w.admin.block_number().await.unwrap(), open_block);

    let t1 = Instant::now();
    chips.close_hand(&hand).await.unwrap();
    let settle_ms = t1.elapsed().as_secs_f64() * 1e3;
    let settle_block = w.admin.block_number().await.unwrap();
    assert_eq!(settle_block, open_block + 1, "one settlement transaction");

    for i in seats {
        let want = if i == 2 { DEPOSIT - 52 + 300 } else { DEPOSIT - 52 };
        assert_eq!(w.vault_balance(w.players[i].address()).await, (want, 0), "player {i}");
    }
    let operator = chips.chain().address();
    assert_eq!(w.vault_balance(operator).await, (12, 0), "commission to the dealer's account");
    assert_eq!(chips.balance(&house()).await.unwrap(), Chips(12));
    w.assert_conserved(&w.all_accounts().await).await;
    assert_eq!(open_journals(&w.dir.path().join("j")), 0);

    // Gas of the two transactions of the hand.
    let mut gas = Vec::new();
    for b in [open_block, settle_block] {
        let receipts = w.admin.provider().get_block_receipts(b.into()).await.unwrap().unwrap();
        assert_eq!(receipts.len(), 1);
        gas.push(receipts[0].gas_used);
    }
    println!(
        "MEASURE evm hand, 6 players: openHand {} gas {open_ms:.1} ms; settleHand {} gas {settle_ms:.1} ms; loadavg {}",
        gas[0],
        gas[1],
        load.trim()
    );

    // Every movement has an event: six Released and one FeePaid for the hand.
    let logs = w
        .admin
        .provider()
        .get_logs(
            &Filter::new()
                .address(w.vault)
                .event_signature(ChipVault::Released::SIGNATURE_HASH)
                .from_block(0),
        )
        .await
        .unwrap();
    assert_eq!(logs.len(), 6);
    let fee_logs = w
        .admin
        .provider()
        .get_logs(
            &Filter::new().address(w.vault).event_signature(ChipVault::FeePaid::SIGNATURE_HASH).from_block(0),
        )
        .await
        .unwrap();
    assert_eq!(fee_logs.len(), 1);

    // Withdrawal needs no dealer: the player's own transaction.
    let p = &w.players[2];
    p.chain.send_vault(&ChipVault::withdrawCall { amount: U256::from(DEPOSIT + 248) }).await.unwrap();
    let tokens = TestChip::new(w.token, w.admin.provider()).balanceOf(p.address()).call().await.unwrap();
    assert_eq!(tokens, U256::from(DEPOSIT + 248));
    assert_eq!(w.free(2).await, 0);
    // More than the free balance is refused by the contract.
    let e = w.players[0].chain.send_vault(&ChipVault::withdrawCall { amount: U256::from(DEPOSIT) }).await;
    assert!(matches!(e, Err(EvmError::Insufficient { free: 948, needed: 1000, .. })), "{e:?}");
}

#[tokio::test]
#[cfg_attr(
    not(claw_evm),
    ignore = "skipped: no local EVM node; set CLAW_ANVIL (scripts/install-evm-tools.sh prints it) or CLAW_REQUIRE_EVM=1"
)]
async fn insufficient_and_reverted_calls_move_nothing() {
    let bin = anvil_bin("insufficient_and_reverted");
    let w = world(&bin, 2).await;
    let chips = w.provider(1, "j").await;
    let journal = w.dir.path().join("j");

    // A stake above the free balance: refused by the vault's simulation, nothing locked.
    let hand = HandRef::new("room-b", "01");
    let e = chips.open_hand(&hand, &w.stakes(&[0, 1], DEPOSIT + 1)).await.unwrap_err();
    assert!(matches!(e, ChipError::Insufficient { balance: 1000, needed: 1001, .. }), "{e:?}");
    assert_eq!(w.vault_balance(w.players[0].address()).await, (DEPOSIT, 0));
    assert_eq!(open_journals(&journal), 0);

    // A debit above the stake, during a hand: refused locally.
    let hand = HandRef::new("room-b", "02");
    chips.open_hand(&hand, &w.stakes(&[0, 1], 100)).await.unwrap();
    let a = w.players[0].account();
    chips.debit(&key("room-b/02/1"), &a, Chips(60), "bet").await.unwrap();
    let e = chips.debit(&key("room-b/02/2"), &a, Chips(41), "bet").await.unwrap_err();
    assert_eq!(e, ChipError::Insufficient { account: a.to_string(), balance: 40, needed: 41 });
    // Outside any hand, and for a stranger to the hand.
    assert!(matches!(
        chips.debit(&key("room-b/99/1"), &a, Chips(1), "x").await,
        Err(ChipError::BadRequest(_))
    ));
    let stranger = AccountId::from(Identity::from_seed([9; 32]).id());
    assert!(matches!(
        chips.credit(&key("room-b/02/3"), &stranger, Chips(1), "x").await,
        Err(ChipError::BadRequest(_))
    ));
    // A hand that does not net to zero is not sent.
    let e = chips.close_hand(&hand).await.unwrap_err();
    assert!(matches!(e, ChipError::BadRequest(ref m) if m.contains("net to zero")), "{e:?}");
    chips.credit(&key("room-b/02/4"), &w.players[1].account(), Chips(60), "pot").await.unwrap();

    // A reverting transaction: an unbalanced settlement sent by hand is refused, typed.
    let op = w.operator_chain(1).await;
    let h = hand_key(&hand);
    let players = vec![w.players[0].address(), w.players[1].address()];
    let stakes = vec![U256::from(100), U256::from(100)];
    let bad = ChipVault::settleHandCall {
        key: h,
        room: room_id("room-b"),
        players: players.clone(),
        stakes: stakes.clone(),
        payouts: vec![U256::from(0), U256::from(250)],
        fee: U256::ZERO,
    };
    let e = op.send_vault(&bad).await.unwrap_err();
    assert!(
        matches!(e, EvmError::Reverted(Revert::Vault(ChipVault::ChipVaultErrors::NotBalanced(_)))),
        "{e:?}"
    );
    assert_eq!(w.vault_balance(w.players[1].address()).await, (DEPOSIT - 100, 100));

    chips.close_hand(&hand).await.unwrap();
    assert_eq!(w.free(0).await, DEPOSIT - 60);
    assert_eq!(w.free(1).await, DEPOSIT + 60);
    // An unregistered address cannot deposit.
    let outsider = Chain::connect(settings(&w.url()), w.vault, signer(&w.anvil.keys[15])).await.unwrap();
    let e = outsider.send_vault(&ChipVault::depositCall { amount: U256::from(1) }).await.unwrap_err();
    assert!(
        matches!(e, EvmError::Reverted(Revert::Vault(ChipVault::ChipVaultErrors::NotRegistered(_)))),
        "{e:?}"
    );
}

#[tokio::test]
#[cfg_attr(
    not(claw_evm),
    ignore = "skipped: no local EVM node; set CLAW_ANVIL (scripts/install-evm-tools.sh prints it) or CLAW_REQUIRE_EVM=1"
)]
async fn idempotency_keys_replayed_with_same_and_different_bodies() {
    let bin = anvil_bin("idempotency_keys");
    let w = world(&bin, 2).await;
    let chips = w.provider(1, "j").await;
    let hand = HandRef::new("room-c", "03");
    let stakes = w.stakes(&[0, 1], 100);
    chips.open_hand(&hand, &stakes).await.unwrap();
    // Same opening again: no second lock.
    chips.open_hand(&hand, &stakes).await.unwrap();
    assert_eq!(w.vault_balance(w.players[0].address()).await, (DEPOSIT - 100, 100));
    assert!(matches!(chips.open_hand(&hand, &w.stakes(&[0, 1], 99)).await, Err(ChipError::KeyReused(_))));

    let a = w.players[0].account();
    assert_eq!(chips.debit(&key("room-c/03/1"), &a, Chips(30), "bet").await.unwrap(), Chips(70));
    assert_eq!(chips.debit(&key("room-c/03/1"), &a, Chips(30), "bet").await.unwrap(), Chips(70));
    assert!(matches!(
        chips.debit(&key("room-c/03/1"), &a, Chips(31), "bet").await,
        Err(ChipError::KeyReused(_))
    ));
    assert_eq!(chips.balance(&a).await.unwrap(), Chips(DEPOSIT - 30));

    // The vault's own key check, bypassing the provider.
    let op = w.operator_chain(1).await;
    let h = hand_key(&hand);
    let players = vec![w.players[0].address(), w.players[1].address()];
    let st = vec![U256::from(100), U256::from(100)];
    let hands = w.admin_vault().hands(h).call().await.unwrap();
    let reopen = ChipVault::openHandCall {
        key: h,
        room: room_id("room-c"),
        deadline: hands.deadline,
        players: players.clone(),
        stakes: st.clone(),
    };
    op.send_vault(&reopen).await.unwrap();
    assert_eq!(w.vault_balance(w.players[0].address()).await, (DEPOSIT - 100, 100), "replay locked nothing");
    let other = ChipVault::openHandCall { stakes: vec![U256::from(1), U256::from(1)], ..reopen.clone() };
    let e = op.send_vault(&other).await.unwrap_err();
    assert!(
        matches!(e, EvmError::Reverted(Revert::Vault(ChipVault::ChipVaultErrors::KeyReused(_)))),
        "{e:?}"
    );

    chips.credit(&key("room-c/03/2"), &w.players[1].account(), Chips(30), "pot").await.unwrap();
    chips.close_hand(&hand).await.unwrap();
    assert_eq!((w.free(0).await, w.free(1).await), (DEPOSIT - 30, DEPOSIT + 30));
    // Settlement replayed: same body is a no-op, another body and a re-open are refused.
    let settle = ChipVault::settleHandCall {
        key: h,
        room: room_id("room-c"),
        players,
        stakes: st,
        payouts: vec![U256::from(70), U256::from(130)],
        fee: U256::ZERO,
    };
    op.send_vault(&settle).await.unwrap();
    assert_eq!((w.free(0).await, w.free(1).await), (DEPOSIT - 30, DEPOSIT + 30), "replay paid nothing");
    let e = op
        .send_vault(&ChipVault::settleHandCall { payouts: vec![U256::from(0), U256::from(200)], ..settle })
        .await;
    assert!(
        matches!(e, Err(EvmError::Reverted(Revert::Vault(ChipVault::ChipVaultErrors::KeyReused(_))))),
        "{e:?}"
    );
    let e = op.send_vault(&reopen).await;
    assert!(
        matches!(e, Err(EvmError::Reverted(Revert::Vault(ChipVault::ChipVaultErrors::HandClosed(_))))),
        "{e:?}"
    );
}

#[tokio::test]
#[cfg_attr(
    not(claw_evm),
    ignore = "skipped: no local EVM node; set CLAW_ANVIL (scripts/install-evm-tools.sh prints it) or CLAW_REQUIRE_EVM=1"
)]
async fn lock_lapses_after_the_deadline_and_the_player_withdraws_alone() {
    let bin = anvil_bin("lock_lapses");
    let w = world(&bin, 2).await;
    let cfg = EvmChipsConfig { lock_seconds: 60, ..w.config(1, "j") };
    let chips = EvmChips::connect(&cfg, house()).await.unwrap();
    let hand = HandRef::new("room-d", "04");
    chips.open_hand(&hand, &w.stakes(&[0, 1], 400)).await.unwrap();
    let e = w.players[0].chain.send_vault(&ChipVault::withdrawCall { amount: U256::from(DEPOSIT) }).await;
    assert!(matches!(e, Err(EvmError::Insufficient { free: 600, .. })), "locked chips cannot leave: {e:?}");

    // The dealer vanishes; time passes beyond the deadline.
    let _: serde_json::Value = w.rpc("evm_increaseTime", serde_json::json!([61])).await;
    let _: serde_json::Value = w.rpc("evm_mine", serde_json::json!([])).await;
    assert_eq!(w.vault_balance(w.players[0].address()).await, (DEPOSIT, 0));
    w.players[0].chain.send_vault(&ChipVault::withdrawCall { amount: U256::from(DEPOSIT) }).await.unwrap();
    let lapsed = w
        .admin
        .provider()
        .get_logs(
            &Filter::new().address(w.vault).event_signature(ChipVault::Lapsed::SIGNATURE_HASH).from_block(0),
        )
        .await
        .unwrap();
    assert_eq!(lapsed.len(), 1, "the lapse is an event");

    // A late settlement is refused by the vault and reported.
    chips.debit(&key("room-d/04/1"), &w.players[0].account(), Chips(400), "bet").await.unwrap();
    chips.credit(&key("room-d/04/2"), &w.players[1].account(), Chips(400), "pot").await.unwrap();
    let e = chips.close_hand(&hand).await.unwrap_err();
    assert!(matches!(e, ChipError::BadRequest(ref m) if m.contains("Lapsed")), "{e:?}");
    assert_eq!(w.vault_balance(w.players[1].address()).await, (DEPOSIT, 0));
    assert_eq!(open_journals(&w.dir.path().join("j")), 0);
}

#[tokio::test]
#[cfg_attr(
    not(claw_evm),
    ignore = "skipped: no local EVM node; set CLAW_ANVIL (scripts/install-evm-tools.sh prints it) or CLAW_REQUIRE_EVM=1"
)]
async fn node_killed_mid_hand_and_restarted_from_its_state() {
    let bin = anvil_bin("node_killed_mid_hand");
    let mut w = world(&bin, 2).await;
    let chips = w.provider(1, "j").await;
    let hand = HandRef::new("room-e", "05");
    chips.open_hand(&hand, &w.stakes(&[0, 1], 100)).await.unwrap();
    let state: String = w.rpc("anvil_dumpState", serde_json::json!([])).await;
    w.anvil.kill();

    // Bets need no node.
    chips.debit(&key("room-e/05/1"), &w.players[0].account(), Chips(80), "bet").await.unwrap();
    chips.credit(&key("room-e/05/2"), &w.players[1].account(), Chips(80), "pot").await.unwrap();
    let e = chips.close_hand(&hand).await.unwrap_err();
    assert!(e.is_retryable(), "node away is retryable: {e:?}");

    w.anvil.restart();
    let loaded: bool = w.rpc("anvil_loadState", serde_json::json!([state])).await;
    assert!(loaded);
    // As the dealer's chip desk does: retry with the same hand (a pooled
    // connection to the old node may fail once).
    let mut result = chips.close_hand(&hand).await;
    for _ in 0..3 {
        match &result {
            Err(e) if e.is_retryable() => result = chips.close_hand(&hand).await,
            _ => break,
        }
    }
    result.unwrap();
    assert_eq!((w.free(0).await, w.free(1).await), (DEPOSIT - 80, DEPOSIT + 80));
    w.assert_conserved(&w.all_accounts().await).await;
}

#[tokio::test]
#[cfg_attr(
    not(claw_evm),
    ignore = "skipped: no local EVM node; set CLAW_ANVIL (scripts/install-evm-tools.sh prints it) or CLAW_REQUIRE_EVM=1"
)]
async fn dealer_dropped_mid_settlement_is_reconciled_exactly_once() {
    let bin = anvil_bin("dealer_dropped");
    let w = world(&bin, 3).await;
    let quick = EvmChipsConfig { tx_timeout_secs: 1, ..w.config(1, "j") };

    // (a) The settlement is sent but not mined when the dealer goes away.
    let chips = EvmChips::connect(&quick, house()).await.unwrap();
    let ha = HandRef::new("room-f", "0a");
    chips.open_hand(&ha, &w.stakes(&[0, 1], 100)).await.unwrap();
    chips.debit(&key("room-f/0a/1"), &w.players[0].account(), Chips(100), "bet").await.unwrap();
    chips.credit(&key("room-f/0a/2"), &w.players[1].account(), Chips(100), "pot").await.unwrap();
    let _: serde_json::Value = w.rpc("evm_setAutomine", serde_json::json!([false])).await;
    let e = chips.close_hand(&ha).await.unwrap_err();
    assert_eq!(e, ChipError::Timeout, "sent, unconfirmed");
    drop(chips);
    let _: serde_json::Value = w.rpc("evm_mine", serde_json::json!([])).await;
    let _: serde_json::Value = w.rpc("evm_setAutomine", serde_json::json!([true])).await;
    let restarted = w.provider(1, "j").await;
    let r = restarted.reconcile().await.unwrap();
    assert_eq!(r.already, vec![ha.clone()]);
    assert_eq!((w.free(0).await, w.free(1).await), (DEPOSIT - 100, DEPOSIT + 100));
    drop(restarted);

    // (b) The settlement is sent, then dropped by the node, and the dealer goes away.
    let chips = EvmChips::connect(&quick, house()).await.unwrap();
    let hb = HandRef::new("room-f", "0b");
    chips.open_hand(&hb, &w.stakes(&[1, 2], 100)).await.unwrap();
    chips.debit(&key("room-f/0b/1"), &w.players[1].account(), Chips(40), "bet").await.unwrap();
    chips.credit(&key("room-f/0b/2"), &w.players[2].account(), Chips(40), "pot").await.unwrap();
    let _: serde_json::Value = w.rpc("evm_setAutomine", serde_json::json!([false])).await;
    assert!(chips.close_hand(&hb).await.is_err());
    drop(chips);
    let _: serde_json::Value = w.rpc("anvil_dropAllTransactions", serde_json::json!([])).await;
    let _: serde_json::Value = w.rpc("evm_setAutomine", serde_json::json!([true])).await;
    assert_eq!(w.vault_balance(w.players[2].address()).await, (DEPOSIT - 100, 100), "not settled yet");

    // (c) A hand interrupted before its end: refunded.
    let chips = w.provider(1, "j").await;
    let hc = HandRef::new("room-g", "0c");
    chips.open_hand(&hc, &w.stakes(&[0, 2], 50)).await.unwrap();
    chips.debit(&key("room-g/0c/1"), &w.players[0].account(), Chips(50), "bet").await.unwrap();
    drop(chips);

    let restarted = w.provider(1, "j").await;
    let r = restarted.reconcile().await.unwrap();
    assert_eq!(r.settled, vec![hb.clone()]);
    assert_eq!(r.refunded, vec![hc.clone()]);
    let expect = (DEPOSIT - 100, DEPOSIT + 100 - 40, DEPOSIT + 40);
    assert_eq!((w.free(0).await, w.free(1).await, w.free(2).await), expect);
    // Again: nothing left, nothing moves twice.
    assert_eq!(restarted.reconcile().await.unwrap(), claw_chips::Reconciled::default());
    assert_eq!((w.free(0).await, w.free(1).await, w.free(2).await), expect);
    assert_eq!(open_journals(&w.dir.path().join("j")), 0);
    w.assert_conserved(&w.all_accounts().await).await;
}

#[tokio::test]
#[cfg_attr(
    not(claw_evm),
    ignore = "skipped: no local EVM node; set CLAW_ANVIL (scripts/install-evm-tools.sh prints it) or CLAW_REQUIRE_EVM=1"
)]
async fn operators_are_refused_on_each_others_rooms() {
    let bin = anvil_bin("two_operators");
    let w = world(&bin, 2).await;
    let a = w.provider(1, "ja").await;
    let b = w.provider(2, "jb").await;
    let hand = HandRef::new("room-h", "0d");
    a.open_hand(&hand, &w.stakes(&[0, 1], 100)).await.unwrap();

    // B cannot open a hand in A's room …
    let e = b.open_hand(&HandRef::new("room-h", "0e"), &w.stakes(&[0, 1], 100)).await.unwrap_err();
    assert!(matches!(e, ChipError::Unauthorized(ref m) if m.contains("RoomTaken")), "{e:?}");
    // … nor settle A's hand, even with a balanced result.
    let settle = ChipVault::settleHandCall {
        key: hand_key(&hand),
        room: room_id("room-h"),
        players: vec![w.players[0].address(), w.players[1].address()],
        stakes: vec![U256::from(100), U256::from(100)],
        payouts: vec![U256::from(0), U256::from(0)],
        fee: U256::from(200),
    };
    let e = w.operator_chain(2).await.send_vault(&settle).await.unwrap_err();
    assert!(
        matches!(e, EvmError::Reverted(Revert::Vault(ChipVault::ChipVaultErrors::NotHandOperator(_)))),
        "{e:?}"
    );
    // A key that is no operator cannot lock anything.
    let stranger = Chain::connect(settings(&w.url()), w.vault, signer(&w.anvil.keys[3])).await.unwrap();
    let open = ChipVault::openHandCall {
        key: B256::repeat_byte(7),
        room: room_id("room-x"),
        deadline: u32::MAX,
        players: vec![w.players[0].address()],
        stakes: vec![U256::from(1)],
    };
    let e = stranger.send_vault(&open).await.unwrap_err();
    assert!(
        matches!(e, EvmError::Reverted(Revert::Vault(ChipVault::ChipVaultErrors::NotOperator(_)))),
        "{e:?}"
    );

    // B runs its own room.
    let hb = HandRef::new("room-i", "0f");
    b.open_hand(&hb, &w.stakes(&[0, 1], 100)).await.unwrap();
    b.close_hand(&hb).await.unwrap();
    a.close_hand(&hand).await.unwrap();
    assert_eq!((w.free(0).await, w.free(1).await), (DEPOSIT, DEPOSIT));
}

#[tokio::test]
#[cfg_attr(
    not(claw_evm),
    ignore = "skipped: no local EVM node; set CLAW_ANVIL (scripts/install-evm-tools.sh prints it) or CLAW_REQUIRE_EVM=1"
)]
async fn concurrent_hands_of_several_rooms_share_one_nonce_sequence() {
    let bin = anvil_bin("concurrent_hands");
    let w = world(&bin, 6).await;
    let chips = w.provider(1, "j").await;
    let rooms = ["r0", "r1", "r2"];
    let seats: [[usize; 3]; 3] = [[0, 1, 2], [3, 4, 5], [0, 3, 5]];
    let run = |r: usize| {
        let (chips, w) = (&chips, &w);
        async move {
            for h in 0..3 {
                let hand = HandRef::new(rooms[r], format!("{r}{h}"));
                chips.open_hand(&hand, &w.stakes(&seats[r], 60)).await.unwrap();
                play(chips, w, &hand, &seats[r], seats[r][h]).await;
                chips.close_hand(&hand).await.unwrap();
            }
        }
    };
    tokio::join!(run(0), run(1), run(2));
    // Every seat paid 3 × 52 per room; each won one pot of 150 per room it sits in.
    for i in 0..6 {
        let rooms_in = seats.iter().filter(|s| s.contains(&i)).count() as u64;
        let wins = seats.iter().filter(|s| s.contains(&i)).count() as u64;
        assert_eq!(w.free(i).await, DEPOSIT - rooms_in * 3 * 52 + wins * 150, "player {i}");
    }
    assert_eq!(w.vault_balance(chips.chain().address()).await.0, 3 * 3 * 6);
    w.assert_conserved(&w.all_accounts().await).await;
}

#[tokio::test]
#[cfg_attr(
    not(claw_evm),
    ignore = "skipped: no local EVM node; set CLAW_ANVIL (scripts/install-evm-tools.sh prints it) or CLAW_REQUIRE_EVM=1"
)]
async fn a_binding_needs_the_players_signature() {
    let bin = anvil_bin("binding");
    let w = world(&bin, 1).await;
    let chips = w.provider(1, "j").await;
    let victim = Identity::from_seed([42; 32]);
    let attacker = Player {
        id: Identity::from_seed([43; 32]),
        chain: Chain::connect(settings(&w.url()), w.vault, signer(&w.anvil.keys[12])).await.unwrap(),
    };
    let victim_key = Chain::connect(settings(&w.url()), w.vault, signer(&w.anvil.keys[13])).await.unwrap();
    let game_id = B256::from(*victim.id().as_bytes());
    // The attacker claims the victim's id: with its own signature, then with
    // the victim's signature of another address.
    let own = sign_binding(&attacker.id, 31337, w.vault, attacker.address());
    attacker
        .chain
        .send_vault(&ChipVault::registerCall { gameId: game_id, binding: own.0.to_vec().into() })
        .await
        .unwrap();
    let victims = sign_binding(&victim, 31337, w.vault, victim_key.address());
    let replayed = ChipVault::registerCall { gameId: game_id, binding: victims.0.to_vec().into() };
    attacker.chain.send_vault(&replayed).await.unwrap();
    let e = chips.balance(&AccountId::from(victim.id())).await.unwrap_err();
    assert!(matches!(e, ChipError::UnknownAccount(_)), "{e:?}");
    assert!(chips
        .open_hand(&HandRef::new("room-j", "10"), &[(AccountId::from(victim.id()), Chips(1))])
        .await
        .is_err());

    // The victim's own registration is the one used.
    victim_key.send_vault(&replayed).await.unwrap();
    assert_eq!(chips.owner_of(&victim.id()).await.unwrap(), victim_key.address());
    assert_eq!(chips.balance(&AccountId::from(victim.id())).await.unwrap(), Chips(0));
}

#[tokio::test]
#[cfg_attr(
    not(claw_evm),
    ignore = "skipped: no local EVM node; set CLAW_ANVIL (scripts/install-evm-tools.sh prints it) or CLAW_REQUIRE_EVM=1"
)]
async fn claw_evm_deploys_and_players_use_it() {
    let bin = anvil_bin("claw_evm_cli");
    let anvil = Anvil::start(&bin, 0);
    let dir = tempfile::tempdir().unwrap();
    let admin = write_key_file(&dir.path().join("admin.key"), &anvil.keys[0]);
    let player = write_key_file(&dir.path().join("player.key"), &anvil.keys[5]);
    let identity = dir.path().join("player.json");
    Identity::from_seed([5; 32]).save(&identity).unwrap();
    let run = |key: &Path, args: &[&str]| -> serde_json::Value {
        let out = Command::new(env!("CARGO_BIN_EXE_claw-evm"))
            .args(["--rpc-url", &anvil.url(), "--chain-id", "31337", "--key-file"])
            .arg(key)
            .args(args)
            .output()
            .unwrap();
        assert!(out.status.success(), "claw-evm {args:?}: {}", String::from_utf8_lossy(&out.stderr));
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let operator = signer(&anvil.keys[1]).address().to_string();
    let d = run(&admin, &["deploy", "--operator", &operator]);
    let (token, vault) = (d["token"].as_str().unwrap().to_owned(), d["vault"].as_str().unwrap().to_owned());
    let me = signer(&anvil.keys[5]).address().to_string();
    run(&admin, &["mint", "--token", &token, "--to", &me, "--amount", "500"]);
    run(&player, &["register", "--vault", &vault, "--identity", identity.to_str().unwrap()]);
    let b = run(&player, &["deposit", "--vault", &vault, "--amount", "300"]);
    assert_eq!(b["free"], 300);
    assert_eq!(b["player"], Identity::from_seed([5; 32]).id().to_string());
    let b = run(&player, &["withdraw", "--vault", &vault, "--amount", "100"]);
    assert_eq!(b["free"], 200);
    let b = run(&admin, &["balance", "--vault", &vault, "--owner", &me]);
    assert_eq!(b["free"], 200);
}

#[tokio::test]
async fn config_refuses_unsafe_urls_and_readable_keys() {
    let dir = tempfile::tempdir().unwrap();
    let key = dir.path().join("op.key");
    std::fs::write(&key, "0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d").unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o644)).unwrap();
        let cfg = EvmChipsConfig::new("http://127.0.0.1:1", 1, Address::ZERO, &key, dir.path().join("j"));
        let e = EvmChips::connect(&cfg, house()).await.unwrap_err();
        assert!(matches!(e, EvmError::Config(ref m) if m.contains("mode 644")), "{e:?}");
        std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o600)).unwrap();
    }
    for (url, allow, what) in [
        ("http://rpc.example.com", false, "TLS required"),
        ("https://user:pw@rpc.example.com", false, "credentials"),
        ("https://10.1.2.3/rpc", false, "private"),
        ("ftp://127.0.0.1", false, "scheme"),
    ] {
        let cfg = EvmChipsConfig {
            allow_private: allow,
            ..EvmChipsConfig::new(url, 1, Address::ZERO, &key, dir.path().join("j"))
        };
        let e = EvmChips::connect(&cfg, house()).await.unwrap_err();
        assert!(matches!(e, EvmError::Config(ref m) if m.contains("RPC URL")), "{what}: {e:?}");
    }
    // The rooms-file form.
    let cfg: EvmChipsConfig = serde_json::from_value(serde_json::json!({
        "rpc_url": "https://rpc.example.com", "chain_id": 137,
        "contract": "0x5fbdb2315678afecb367f032d93f642f64180aa3",
        "operator_key_file": "/etc/claw/operator.key", "journal_dir": "/var/lib/claw/evm",
        "confirmations": 3
    }))
    .unwrap();
    assert_eq!((cfg.confirmations, cfg.lock_seconds), (3, 900));
}

#[tokio::test]
#[cfg_attr(
    not(claw_evm),
    ignore = "skipped: no local EVM node; set CLAW_ANVIL (scripts/install-evm-tools.sh prints it) or CLAW_REQUIRE_EVM=1"
)]
async fn start_is_refused_on_a_wrong_chain_a_missing_vault_or_an_unusable_operator() {
    let bin = anvil_bin("start_is_refused");
    let w = world(&bin, 0).await;
    let e =
        EvmChips::connect(&EvmChipsConfig { chain_id: 1, ..w.config(1, "j") }, house()).await.unwrap_err();
    assert!(matches!(e, EvmError::ChainMismatch { node: 31337, configured: 1 }), "{e:?}");
    let nowhere = Address::repeat_byte(0x11);
    let e = EvmChips::connect(&EvmChipsConfig { contract: nowhere, ..w.config(1, "j") }, house())
        .await
        .unwrap_err();
    assert_eq!(e, EvmError::NoContract(nowhere));
    // Key 3 was never appointed.
    let e = EvmChips::connect(&w.config(3, "j"), house()).await.unwrap_err();
    assert_eq!(e, EvmError::NotAppointed(signer(&w.anvil.keys[3]).address()));
    // An appointed operator without coin for gas.
    let broke = format!("0x{}", "42".repeat(32));
    let op = signer(&broke).address();
    w.admin.send_to(w.vault, &ChipVault::setOperatorCall { operator: op, enabled: true }).await.unwrap();
    let file = write_key_file(&w.dir.path().join("broke.key"), &broke);
    let cfg = EvmChipsConfig { operator_key_file: file, ..w.config(1, "j") };
    let e = EvmChips::connect(&cfg, house()).await.unwrap_err();
    assert_eq!(e, EvmError::Unfunded(op));
    assert!(e.to_string().contains("no native coin for gas"), "{e}");
}

#[test]
#[cfg_attr(
    not(claw_evm),
    ignore = "skipped: no EVM tools (node.js, solcjs); set CLAW_ANVIL (scripts/install-evm-tools.sh prints it) or CLAW_REQUIRE_EVM=1"
)]
fn committed_artifacts_match_a_fresh_compile() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("evm");
    let solc = dir.join("node_modules/solc");
    let node = Command::new("node").arg("--version").output().is_ok_and(|o| o.status.success());
    assert!(
        node && solc.is_dir(),
        "node.js or {} is missing (run scripts/install-evm-tools.sh)",
        solc.display()
    );
    let out = Command::new("node").arg(dir.join("compile.js")).arg("--check").output().unwrap();
    assert!(
        out.status.success(),
        "artifacts differ from the sources: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}
