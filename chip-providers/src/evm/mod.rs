//! `EvmChips`: chips held in the `ChipVault` contract on an EVM chain
//! (docs/chips-evm.md).
//!
//! A hand costs two transactions, whatever its number of bets: `open_hand`
//! locks every seat's stake in the vault, debits and credits during the hand
//! are checked against those stakes and journaled locally ("debit at bet
//! time"), and `close_hand` settles the net result in one `settleHand`.
//! Hand keys on chain are `keccak256("<room>/<hand_id>")`, room ids
//! `keccak256(room)`; the vault accepts each key once, so a retry or a
//! restart never moves chips twice, and [`EvmChips::reconcile`] finishes
//! every hand a crash interrupted from the journal.

pub mod binding;
pub mod chain;
pub mod contract;
pub mod error;
pub mod journal;

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Mutex;
use std::time::Duration;

use alloy::primitives::{keccak256, Address, B256, U256};
use alloy::providers::Provider;
use alloy::rpc::types::Filter;
use alloy::sol_types::SolEvent;
use async_trait::async_trait;
use claw_protocol::{Chips, PlayerId};
use serde::{Deserialize, Serialize};

use crate::book::{apply_in_hand, bad, lock, HandBook, LiveHand, OpLine};
use crate::hand_journal::{HandFile, Journal};
use crate::{AccountId, AccountOp, ChipError, ChipOp, ChipProvider, HandRef, IdempotencyKey, Reconciled};
pub use chain::{load_key_file, Chain, ChainSettings};
use contract::{ChipVault, OnChainHand};
pub use error::{EvmError, Revert};
use journal::{Line, Outcome, Record, Stake};

/// Settings of an [`EvmChips`] provider (rooms-file `chips.evm` / `--evm-*` flags).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EvmChipsConfig {
    /// JSON-RPC URL: https, or http to a loopback host; no credentials in it.
    pub rpc_url: String,
    /// The chain the node must serve (checked at connect).
    pub chain_id: u64,
    /// The `ChipVault` contract.
    pub contract: Address,
    /// File with the operator's secp256k1 key in hex, mode 0600.
    pub operator_key_file: PathBuf,
    /// Where the provider journals hands (one directory per node).
    pub journal_dir: PathBuf,
    /// Blocks on top of the including block before a transaction counts.
    #[serde(default)]
    pub confirmations: u64,
    /// Permit a private-network RPC host (still over TLS).
    #[serde(default)]
    pub allow_private: bool,
    /// How long a hand's stakes stay locked without a settlement (seconds).
    #[serde(default = "default_lock_seconds")]
    pub lock_seconds: u32,
    /// Time allowed for a transaction to be confirmed (seconds).
    #[serde(default = "default_tx_timeout")]
    pub tx_timeout_secs: u64,
    /// Pause between receipt polls (milliseconds).
    #[serde(default = "default_poll_ms")]
    pub poll_ms: u64,
    /// First block to search for player registrations (the vault's deployment).
    #[serde(default)]
    pub from_block: u64,
}

fn default_lock_seconds() -> u32 {
    900
}
fn default_tx_timeout() -> u64 {
    120
}
fn default_poll_ms() -> u64 {
    500
}

impl EvmChipsConfig {
    /// Defaults for a node at `rpc_url`: 0 confirmations, 15-minute locks,
    /// 2 minutes per transaction, polls every 500 ms.
    pub fn new(
        rpc_url: impl Into<String>,
        chain_id: u64,
        contract: Address,
        operator_key_file: impl Into<PathBuf>,
        journal_dir: impl Into<PathBuf>,
    ) -> EvmChipsConfig {
        EvmChipsConfig {
            rpc_url: rpc_url.into(),
            chain_id,
            contract,
            operator_key_file: operator_key_file.into(),
            journal_dir: journal_dir.into(),
            confirmations: 0,
            allow_private: false,
            lock_seconds: default_lock_seconds(),
            tx_timeout_secs: default_tx_timeout(),
            poll_ms: default_poll_ms(),
            from_block: 0,
        }
    }

    fn settings(&self) -> ChainSettings {
        ChainSettings {
            rpc_url: self.rpc_url.clone(),
            chain_id: self.chain_id,
            allow_private: self.allow_private,
            confirmations: self.confirmations,
            tx_timeout: Duration::from_secs(self.tx_timeout_secs),
            request_timeout: Duration::from_secs(10),
            poll: Duration::from_millis(self.poll_ms.max(10)),
        }
    }
}

/// The vault key of a hand.
pub fn hand_key(hand: &HandRef) -> B256 {
    keccak256(hand.key_prefix().as_bytes())
}

/// The vault id of a room.
pub fn room_id(room: &str) -> B256 {
    keccak256(room.as_bytes())
}

/// A hand this process runs.
struct Live {
    rec: Record,
    book: HandBook,
    /// The lock is confirmed on chain.
    opened: bool,
    /// The settlement is decided (`close` journaled): no more operations.
    closing: bool,
    /// None while a transaction of the hand is in flight.
    file: Option<HandFile>,
}

impl LiveHand for Live {
    type Line = Line;

    fn refusal(&self, hand: &HandRef) -> Option<String> {
        if self.closing {
            Some(format!("hand {hand} is being settled"))
        } else if !self.opened {
            Some(format!("hand {hand}: the lock is not confirmed"))
        } else {
            None
        }
    }

    fn parts(&mut self) -> (&mut HandBook, Option<&mut HandFile>) {
        (&mut self.book, self.file.as_mut())
    }

    fn op_line(op: OpLine) -> Line {
        Line::Op(op)
    }
}

/// Chip provider over a `ChipVault` contract.
pub struct EvmChips {
    chain: Chain,
    journal: Journal,
    house: AccountId,
    lock_seconds: u32,
    from_block: u64,
    owners: Mutex<HashMap<PlayerId, Address>>,
    live: Mutex<HashMap<HandRef, Live>>,
}

impl std::fmt::Debug for EvmChips {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EvmChips")
            .field("vault", &self.chain.vault())
            .field("operator", &self.chain.address())
            .finish_non_exhaustive()
    }
}

impl EvmChips {
    /// Loads the operator key, connects (URL policy, chain id check) and
    /// opens the journal. `house` is the dealer's account id: chips credited
    /// to it go to the operator's own vault account.
    pub async fn connect(cfg: &EvmChipsConfig, house: AccountId) -> Result<EvmChips, EvmError> {
        let signer = load_key_file(&cfg.operator_key_file)?;
        let chain = Chain::connect(cfg.settings(), cfg.contract, signer).await?;
        Self::preflight(&chain).await?;
        let journal = Journal::new(&cfg.journal_dir)?;
        if cfg.lock_seconds == 0 {
            return Err(EvmError::Config("lock_seconds must be positive".into()));
        }
        Ok(EvmChips {
            chain,
            journal,
            house,
            lock_seconds: cfg.lock_seconds,
            from_block: cfg.from_block,
            owners: Mutex::new(HashMap::new()),
            live: Mutex::new(HashMap::new()),
        })
    }

    /// Refuses to start against a vault that cannot work: no contract at the
    /// address, an operator key the vault has not appointed, or one without
    /// coin for gas (each would otherwise fail the first hand).
    async fn preflight(chain: &Chain) -> Result<(), EvmError> {
        let code = chain.provider().get_code_at(chain.vault()).await.map_err(EvmError::from_rpc)?;
        if code.is_empty() {
            return Err(EvmError::NoContract(chain.vault()));
        }
        let appointed =
            chain.contract().isOperator(chain.address()).call().await.map_err(chain::contract_error)?;
        if !appointed {
            return Err(EvmError::NotAppointed(chain.address()));
        }
        let coin = chain.provider().get_balance(chain.address()).await.map_err(EvmError::from_rpc)?;
        if coin.is_zero() {
            return Err(EvmError::Unfunded(chain.address()));
        }
        Ok(())
    }

    /// The node connection (views, the operator address).
    pub fn chain(&self) -> &Chain {
        &self.chain
    }

    /// The vault address `player` plays from: the latest registration of
    /// their id whose Ed25519 binding verifies and that the address has not
    /// replaced since. Cached.
    pub async fn owner_of(&self, player: &PlayerId) -> Result<Address, EvmError> {
        if let Some(a) = lock(&self.owners).get(player) {
            return Ok(*a);
        }
        let game_id = B256::from(*player.as_bytes());
        let filter = Filter::new()
            .address(self.chain.vault())
            .event_signature(ChipVault::Registered::SIGNATURE_HASH)
            .topic1(game_id)
            .from_block(self.from_block);
        let logs = self.chain.provider().get_logs(&filter).await.map_err(EvmError::from_rpc)?;
        for log in logs.iter().rev() {
            let Ok(ev) = log.log_decode::<ChipVault::Registered>() else { continue };
            let ev = ev.inner.data;
            if !binding::verify_binding(
                self.chain.chain_id(),
                self.chain.vault(),
                ev.owner,
                player,
                &ev.binding,
            ) {
                continue;
            }
            let bound =
                self.chain.contract().gameIdOf(ev.owner).call().await.map_err(chain::contract_error)?;
            if bound == game_id {
                lock(&self.owners).insert(*player, ev.owner);
                return Ok(ev.owner);
            }
        }
        Err(EvmError::NotBound(player.to_string()))
    }

    async fn owner_of_account(&self, account: &AccountId) -> Result<Address, EvmError> {
        if *account == self.house {
            return Ok(self.chain.address());
        }
        let player: PlayerId =
            account.as_str().parse().map_err(|_| EvmError::NotBound(account.to_string()))?;
        self.owner_of(&player).await
    }

    fn opening(rec: &Record) -> (B256, B256, Vec<Address>, Vec<U256>) {
        (
            hand_key(&rec.hand),
            room_id(&rec.hand.room),
            rec.stakes.iter().map(|s| s.owner).collect(),
            rec.stakes.iter().map(|s| U256::from(s.stake.0)).collect(),
        )
    }

    async fn send_open(&self, rec: &Record) -> Result<(), EvmError> {
        let (key, room, players, stakes) = Self::opening(rec);
        let call = ChipVault::openHandCall { key, room, deadline: rec.deadline, players, stakes };
        self.chain.send_vault(&call).await.map(|_| ())
    }

    /// Brings one hand to its end on chain: re-sends the opening if the
    /// vault does not know the hand (a refusal means nothing was locked),
    /// then settles with the journaled result, or refunds without one.
    async fn finish(&self, rec: &Record) -> Result<Outcome, EvmError> {
        let (key, room, players, stakes) = Self::opening(rec);
        match self.chain.hand(key).await? {
            OnChainHand::Settled => return Ok(Outcome::Already),
            OnChainHand::None => match self.send_open(rec).await {
                Ok(()) => {}
                Err(EvmError::Reverted(_) | EvmError::Insufficient { .. }) => return Ok(Outcome::NotOpened),
                Err(e) => return Err(e),
            },
            OnChainHand::Open { .. } => {}
        }
        if self.chain.now().await? > u64::from(rec.deadline) {
            return Ok(Outcome::Lapsed);
        }
        let (payouts, fee, outcome) = match &rec.close {
            Some((p, f)) => (p.iter().map(|c| U256::from(c.0)).collect(), U256::from(f.0), Outcome::Settled),
            None => (stakes.clone(), U256::ZERO, Outcome::Refunded),
        };
        let call = ChipVault::settleHandCall { key, room, players, stakes, payouts, fee };
        match self.chain.send_vault(&call).await {
            Ok(_) => Ok(outcome),
            Err(EvmError::Reverted(Revert::Vault(ChipVault::ChipVaultErrors::HandExpired(_)))) => {
                Ok(Outcome::Lapsed)
            }
            Err(e) => Err(e),
        }
    }

    fn end(&self, mut file: HandFile, outcome: Outcome) -> Result<(), EvmError> {
        file.append(&Line::End { outcome }, true)?;
        Ok(self.journal.archive(file)?)
    }

    /// Finishes every hand of the journal that this process is not running
    /// (after a crash): settled with the recorded result, or refunded, each
    /// exactly once (the vault refuses a second settlement of a key).
    pub async fn reconcile_journal(&self) -> Result<Reconciled, EvmError> {
        let mut report = Reconciled::default();
        let running: Vec<B256> = lock(&self.live).keys().map(hand_key).collect();
        for path in self.journal.open_files()? {
            let rec = journal::read(&path)?;
            if running.contains(&hand_key(&rec.hand)) {
                continue;
            }
            let file = self.journal.reopen(&path)?;
            if rec.ended {
                self.journal.archive(file)?;
                continue;
            }
            let outcome = self.finish(&rec).await?;
            tracing::info!(hand = %rec.hand, %outcome, "reconciled an interrupted hand");
            self.end(file, outcome)?;
            match outcome {
                Outcome::Settled => report.settled.push(rec.hand),
                Outcome::Refunded | Outcome::NotOpened => report.refunded.push(rec.hand),
                Outcome::Already => report.already.push(rec.hand),
                Outcome::Lapsed => report.lapsed.push(rec.hand),
            }
        }
        Ok(report)
    }

    fn apply(&self, key: &IdempotencyKey, ops: &[AccountOp]) -> Result<Chips, ChipError> {
        apply_in_hand(&mut lock(&self.live), "EVM", &self.house, key, ops)
    }
}

#[async_trait]
impl ChipProvider for EvmChips {
    fn name(&self) -> &'static str {
        "evm"
    }

    /// The free balance in the vault plus what the account holds in this
    /// process's open hands.
    async fn balance(&self, account: &AccountId) -> Result<Chips, ChipError> {
        let owner = self.owner_of_account(account).await?;
        let free = self.chain.free_balance(owner).await?;
        let in_hands: u128 = lock(&self.live)
            .values()
            .filter(|h| h.opened)
            .map(|h| {
                if *account == self.house {
                    u128::from(h.book.fee())
                } else {
                    h.book.seat(account).map(|i| u128::from(h.book.in_hand(i))).unwrap_or(0)
                }
            })
            .sum();
        Ok(Chips(u64::try_from(free + in_hands).unwrap_or(u64::MAX)))
    }

    async fn debit(
        &self,
        key: &IdempotencyKey,
        account: &AccountId,
        amount: Chips,
        memo: &str,
    ) -> Result<Chips, ChipError> {
        let op = AccountOp::new(ChipOp::Debit, account, amount, memo);
        self.apply(key, std::slice::from_ref(&op))
    }

    async fn credit(
        &self,
        key: &IdempotencyKey,
        account: &AccountId,
        amount: Chips,
        memo: &str,
    ) -> Result<Chips, ChipError> {
        let op = AccountOp::new(ChipOp::Credit, account, amount, memo);
        self.apply(key, std::slice::from_ref(&op))
    }

    async fn settle(&self, key: &IdempotencyKey, ops: &[AccountOp]) -> Result<(), ChipError> {
        self.apply(key, ops).map(|_| ())
    }

    fn settles_hands(&self) -> bool {
        true
    }

    /// Locks the stakes in one `openHand` transaction. Calling again with
    /// the same stakes is safe (re-sends the same opening if it is not
    /// confirmed); other stakes for a running hand are `KeyReused`.
    async fn open_hand(&self, hand: &HandRef, stakes: &[(AccountId, Chips)]) -> Result<(), ChipError> {
        let wanted: Vec<(AccountId, Chips)> = stakes.to_vec();
        let pending = {
            let live = lock(&self.live);
            match live.get(hand) {
                Some(h) => {
                    let have: Vec<(AccountId, Chips)> =
                        h.rec.stakes.iter().map(|s| (s.account.clone(), s.stake)).collect();
                    if have != wanted {
                        return Err(ChipError::KeyReused(hand.key_prefix()));
                    }
                    if h.opened {
                        return Ok(());
                    }
                    if h.file.is_none() {
                        return Err(ChipError::Service(format!("hand {hand}: the lock is being sent")));
                    }
                    Some(h.rec.clone())
                }
                None => None,
            }
        };
        let rec = match pending {
            Some(rec) => rec,
            None => {
                if stakes.is_empty() || stakes.len() > 32 {
                    return Err(bad("a hand has 1 to 32 stakes"));
                }
                let mut seen = std::collections::BTreeSet::new();
                let mut seats = Vec::with_capacity(stakes.len());
                for (account, stake) in stakes {
                    if *account == self.house || !seen.insert(account) || stake.0 == 0 {
                        return Err(bad(format!(
                            "stake of {account}: each player once, positive, not the house"
                        )));
                    }
                    let owner = self.owner_of_account(account).await?;
                    seats.push(Stake { account: account.clone(), owner, stake: *stake });
                }
                let now = self.chain.now().await?;
                let deadline = u32::try_from(now + u64::from(self.lock_seconds))
                    .map_err(|_| bad("deadline beyond 2106"))?;
                let rec = Record { hand: hand.clone(), deadline, stakes: seats, close: None, ended: false };
                let line = Line::Open { hand: hand.clone(), deadline, stakes: rec.stakes.clone() };
                let file = self.journal.create(&hex::encode(hand_key(hand)), &line)?;
                let mut live = lock(&self.live);
                if live.contains_key(hand) {
                    return Err(ChipError::Service(format!("hand {hand}: opened concurrently")));
                }
                live.insert(
                    hand.clone(),
                    Live {
                        rec: rec.clone(),
                        book: HandBook::new(stakes.to_vec()),
                        opened: false,
                        closing: false,
                        file: Some(file),
                    },
                );
                rec
            }
        };
        let sent = self.send_open(&rec).await;
        let mut live = lock(&self.live);
        let Some(h) = live.get_mut(hand) else { return Err(bad(format!("hand {hand} vanished"))) };
        match sent {
            Ok(()) => {
                h.opened = true;
                if let Some(f) = h.file.as_mut() {
                    f.append(&Line::Opened { tx: String::new() }, false)?;
                }
                Ok(())
            }
            Err(e @ (EvmError::Unconfirmed(_) | EvmError::Dropped(_))) => Err(e.into()),
            Err(e) => {
                // Refused before or at inclusion: nothing is locked.
                if let Some(h) = live.remove(hand) {
                    if let Some(file) = h.file {
                        self.end(file, Outcome::NotOpened)?;
                    }
                }
                Err(e.into())
            }
        }
    }

    /// Settles the hand in one `settleHand` transaction: each seat gets
    /// stake − debits + credits, the house its credits. Retry after an error.
    async fn close_hand(&self, hand: &HandRef) -> Result<(), ChipError> {
        let (rec, file) = {
            let mut live = lock(&self.live);
            let h = live.get_mut(hand).ok_or_else(|| bad(format!("hand {hand} is not open here")))?;
            if h.file.is_none() {
                return Err(ChipError::Service(format!("hand {hand}: a transaction is in flight")));
            }
            if h.rec.close.is_none() {
                let (payouts, fee) = h.book.result(hand)?;
                let close = Line::Close { payouts: payouts.clone(), fee };
                if let Some(f) = h.file.as_mut() {
                    f.append(&close, true)?;
                }
                h.rec.close = Some((payouts, fee));
                h.closing = true;
            }
            (h.rec.clone(), h.file.take())
        };
        let file =
            file.ok_or_else(|| ChipError::Service(format!("hand {hand}: a transaction is in flight")))?;
        let result = self.finish(&rec).await;
        let mut live = lock(&self.live);
        match result {
            Ok(outcome @ (Outcome::Settled | Outcome::Already)) => {
                live.remove(hand);
                drop(live);
                self.end(file, outcome)?;
                Ok(())
            }
            Ok(outcome) => {
                live.remove(hand);
                drop(live);
                self.end(file, outcome)?;
                Err(bad(format!("hand {hand} ended {outcome:?}: every stake went back to its owner")))
            }
            Err(e) => {
                if let Some(h) = live.get_mut(hand) {
                    h.file = Some(file);
                }
                Err(e.into())
            }
        }
    }

    async fn reconcile(&self) -> Result<Reconciled, ChipError> {
        Ok(self.reconcile_journal().await?)
    }
}
