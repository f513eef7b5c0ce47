//! `SolanaChips`: chips are an SPL Token mint (docs/chips-solana.md).
//!
//! A player's game key is an Ed25519 key, which is a Solana address: their
//! chips sit in their own associated token account, and they sign an SPL
//! `approve` letting the dealer's operator key move at most their buy-in.
//! The provider settles per hand: `open_hand` checks each stake against the
//! approval and balance (chips stay in the players' accounts), debits and
//! credits during the hand are checked against the stakes and journaled
//! ("debit at bet time"), and `close_hand` moves the net in one transaction:
//! delegated transfers of the losses into the table's escrow, transfers of
//! the gains out of it (the house's take stays), and a memo naming the hand.
//! The settlement is signed once per blockhash and journaled before it is
//! sent; a retry or a restart looks its signatures up before signing anew,
//! and signs anew only when the last blockhash has expired (so the earlier
//! transaction can no longer land): nothing moves twice.

pub mod client;
pub mod error;
#[cfg(feature = "solana-litesvm")]
pub mod litesvm;
pub mod player;
pub mod spl;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use claw_protocol::{Chips, PlayerId};
use serde::{Deserialize, Serialize};
pub use solana_address::Address;
pub use solana_hash::Hash;
use solana_instruction::Instruction;
pub use solana_keypair::Keypair;
pub use solana_signature::Signature;
pub use solana_signer::Signer;
pub use solana_transaction::Transaction;

use crate::book::{apply_in_hand, bad, lock, HandBook, LiveHand, OpLine};
use crate::hand_journal::{file_name, read_lines, HandFile, Journal, JournalError};
use crate::{AccountId, AccountOp, ChipError, ChipOp, ChipProvider, HandRef, IdempotencyKey, Reconciled};
pub use client::{RawAccount, RpcClient, SolanaClient, TxStatus};
pub use error::SolanaError;
pub use spl::TokenAccount;

/// Base58 text for addresses in configs and journals.
pub mod b58 {
    use serde::{Deserialize, Deserializer, Serializer};
    use solana_address::Address;

    pub fn serialize<S: Serializer>(a: &Address, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&a.to_string())
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Address, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(|_| serde::de::Error::custom(format!("{s:?} is not a base58 Solana address")))
    }
}

/// Settings of a [`SolanaChips`] provider (rooms-file `chips.solana` / `--solana-*` flags).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SolanaChipsConfig {
    /// JSON-RPC URL: https, or http to a loopback host; no credentials in it.
    pub rpc_url: String,
    /// The chip mint (an SPL Token mint).
    #[serde(with = "b58")]
    pub mint: Address,
    /// The table's escrow: a token account of the mint owned by the operator key.
    #[serde(with = "b58")]
    pub escrow: Address,
    /// The operator's keypair file (the Solana CLI's JSON array), mode 0600.
    pub operator_key_file: PathBuf,
    /// Where the provider journals hands (one directory per node).
    pub journal_dir: PathBuf,
    /// Permit a private-network RPC host (still over TLS).
    #[serde(default)]
    pub allow_private: bool,
    /// Time allowed for a settlement to be confirmed (seconds).
    #[serde(default = "default_tx_timeout")]
    pub tx_timeout_secs: u64,
    /// Pause between status polls (milliseconds).
    #[serde(default = "default_poll_ms")]
    pub poll_ms: u64,
}

fn default_tx_timeout() -> u64 {
    90
}
fn default_poll_ms() -> u64 {
    400
}

impl SolanaChipsConfig {
    /// Defaults: 90 s per settlement, polls every 400 ms.
    pub fn new(
        rpc_url: impl Into<String>,
        mint: Address,
        escrow: Address,
        operator_key_file: impl Into<PathBuf>,
        journal_dir: impl Into<PathBuf>,
    ) -> SolanaChipsConfig {
        SolanaChipsConfig {
            rpc_url: rpc_url.into(),
            mint,
            escrow,
            operator_key_file: operator_key_file.into(),
            journal_dir: journal_dir.into(),
            allow_private: false,
            tx_timeout_secs: default_tx_timeout(),
            poll_ms: default_poll_ms(),
        }
    }

    /// How long to wait for confirmations, and how often to ask.
    pub fn timing(&self) -> Timing {
        Timing {
            tx_timeout: Duration::from_secs(self.tx_timeout_secs),
            poll: Duration::from_millis(self.poll_ms.max(10)),
        }
    }
}

/// Confirmation waiting.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timing {
    pub tx_timeout: Duration,
    pub poll: Duration,
}

impl Default for Timing {
    fn default() -> Self {
        Timing {
            tx_timeout: Duration::from_secs(default_tx_timeout()),
            poll: Duration::from_millis(default_poll_ms()),
        }
    }
}

/// Reads a keypair file in the Solana CLI's format (a JSON array of 64
/// bytes), readable by the owner only (mode 0600 or 0400).
pub fn load_keypair_file(path: &Path) -> Result<Keypair, SolanaError> {
    let text = crate::key_file::read_private(path).map_err(SolanaError::Config)?;
    let bad = || {
        SolanaError::Config(format!(
            "key file {}: not a Solana keypair (a JSON array of 64 bytes)",
            path.display()
        ))
    };
    let bytes = zeroize::Zeroizing::new(serde_json::from_str::<Vec<u8>>(text.trim()).map_err(|_| bad())?);
    Keypair::try_from(bytes.as_slice()).map_err(|_| bad())
}

/// Writes `key` in the Solana CLI's format with mode 0600.
pub fn write_keypair_file(key: &Keypair, path: &Path) -> Result<(), SolanaError> {
    let text =
        serde_json::to_string(&key.to_bytes().to_vec()).map_err(|e| SolanaError::Config(e.to_string()))?;
    let mut o = std::fs::OpenOptions::new();
    o.write(true).create(true).truncate(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut o, 0o600);
    let mut f = o.open(path).map_err(|e| SolanaError::Config(format!("{}: {e}", path.display())))?;
    std::io::Write::write_all(&mut f, text.as_bytes()).map_err(|e| SolanaError::Config(e.to_string()))
}

/// The Solana address of a player: their Ed25519 game key.
pub fn player_address(player: &PlayerId) -> Address {
    Address::new_from_array(*player.as_bytes())
}

/// One seat of a hand: who, the token account the dealer moves chips of, the stake.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Seat {
    pub account: AccountId,
    #[serde(with = "b58")]
    pub token_account: Address,
    pub stake: Chips,
}

/// How a hand ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Outcome {
    /// The net moved with the dealer's result.
    Settled,
    /// The settlement had landed already (an earlier attempt or run).
    Already,
    /// Ended without a result: nothing moved (chips never left the players).
    Refunded,
    /// The settlement was refused (approval revoked or exhausted, an account
    /// missing or short): nothing moved; the hand is void.
    Void,
}

impl std::fmt::Display for Outcome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Outcome::Settled => "settled",
            Outcome::Already => "already settled",
            Outcome::Refunded => "refunded",
            Outcome::Void => "void: the settlement was refused",
        })
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", tag = "line")]
enum Line {
    /// The stakes were checked against the approvals.
    Open { hand: HandRef, seats: Vec<Seat> },
    /// A debit or credit inside the hand (applied locally).
    Op(OpLine),
    /// The result to settle (before any settlement is signed).
    Close { payouts: Vec<Chips>, fee: Chips },
    /// A settlement signed over `blockhash` (before it is sent; signing is
    /// deterministic, so the blockhash rebuilds the same transaction).
    Sent { signature: String, blockhash: String },
    /// The hand is over.
    End { outcome: Outcome, reason: Option<String> },
}

/// What a journal file says about a hand.
#[derive(Debug, Clone)]
struct Record {
    hand: HandRef,
    seats: Vec<Seat>,
    close: Option<(Vec<Chips>, Chips)>,
    sent: Vec<(Signature, Hash)>,
    ended: bool,
}

fn read_record(path: &Path) -> Result<Record, SolanaError> {
    let mut rec: Option<Record> = None;
    for l in read_lines::<Line>(path)? {
        match (l, rec.as_mut()) {
            (Line::Open { hand, seats }, None) => {
                rec = Some(Record { hand, seats, close: None, sent: Vec::new(), ended: false })
            }
            (Line::Close { payouts, fee }, Some(r)) => r.close = Some((payouts, fee)),
            (Line::Sent { signature, blockhash }, Some(r)) => {
                if let (Ok(s), Ok(h)) = (signature.parse(), blockhash.parse()) {
                    r.sent.push((s, h));
                }
            }
            (Line::End { .. }, Some(r)) => r.ended = true,
            _ => {}
        }
    }
    rec.ok_or_else(|| SolanaError::Journal(format!("{}: no open line", path.display())))
}

impl From<JournalError> for SolanaError {
    fn from(e: JournalError) -> SolanaError {
        SolanaError::Journal(e.0)
    }
}

/// A hand this process runs.
struct Live {
    book: HandBook,
    /// The result is decided (`close` journaled): no more operations.
    closing: bool,
    /// None while a settlement of the hand is in flight.
    file: Option<HandFile>,
}

impl LiveHand for Live {
    type Line = Line;

    fn refusal(&self, hand: &HandRef) -> Option<String> {
        self.closing.then(|| format!("hand {hand} is being settled"))
    }

    fn parts(&mut self) -> (&mut HandBook, Option<&mut HandFile>) {
        (&mut self.book, self.file.as_mut())
    }

    fn op_line(op: OpLine) -> Line {
        Line::Op(op)
    }
}

/// What ended a settlement attempt that did not fail outright.
enum Settled {
    Done(Outcome),
    Void(SolanaError),
}

/// Chip provider over an SPL Token mint.
pub struct SolanaChips {
    client: Arc<dyn SolanaClient>,
    operator: Keypair,
    mint: Address,
    escrow: Address,
    house: AccountId,
    journal: Journal,
    timing: Timing,
    live: Mutex<HashMap<HandRef, Live>>,
}

impl std::fmt::Debug for SolanaChips {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SolanaChips")
            .field("mint", &self.mint.to_string())
            .field("escrow", &self.escrow.to_string())
            .field("operator", &self.operator.pubkey().to_string())
            .finish_non_exhaustive()
    }
}

impl SolanaChips {
    /// Loads the operator key, connects over JSON-RPC (URL policy) and checks
    /// the mint and escrow. `house` is the dealer's account id: its chips
    /// are the escrow's.
    pub async fn connect(cfg: &SolanaChipsConfig, house: AccountId) -> Result<SolanaChips, SolanaError> {
        let operator = load_keypair_file(&cfg.operator_key_file)?;
        let client = RpcClient::new(&cfg.rpc_url, cfg.allow_private, Duration::from_secs(10))?;
        Self::with_client(
            Arc::new(client),
            operator,
            cfg.mint,
            cfg.escrow,
            &cfg.journal_dir,
            house,
            cfg.timing(),
        )
        .await
    }

    /// Over any [`SolanaClient`] (the in-process bank in tests and demos).
    pub async fn with_client(
        client: Arc<dyn SolanaClient>,
        operator: Keypair,
        mint: Address,
        escrow: Address,
        journal_dir: &Path,
        house: AccountId,
        timing: Timing,
    ) -> Result<SolanaChips, SolanaError> {
        match client.account(&mint).await? {
            Some(a) if a.owner == spl::TOKEN_PROGRAM && a.data.len() == spl::MINT_LEN => {}
            _ => return Err(SolanaError::Config(format!("{mint} is not an SPL Token mint on this cluster"))),
        }
        let esc = read_token_account(client.as_ref(), &escrow).await?;
        match esc {
            Some(t) if t.mint == mint && t.owner == operator.pubkey() => {}
            _ => {
                return Err(SolanaError::Config(format!(
                    "escrow {escrow} must be a token account of mint {mint} owned by the operator {}",
                    operator.pubkey()
                )))
            }
        }
        let journal = Journal::new(journal_dir)?;
        Ok(SolanaChips {
            client,
            operator,
            mint,
            escrow,
            house,
            journal,
            timing,
            live: Mutex::new(HashMap::new()),
        })
    }

    /// The operator's address (the delegate players approve).
    pub fn operator(&self) -> Address {
        self.operator.pubkey()
    }

    pub fn mint(&self) -> Address {
        self.mint
    }

    pub fn escrow(&self) -> Address {
        self.escrow
    }

    fn token_account_of(&self, account: &AccountId) -> Result<Address, SolanaError> {
        if *account == self.house {
            return Ok(self.escrow);
        }
        let player: PlayerId = account
            .as_str()
            .parse()
            .map_err(|_| SolanaError::MissingTokenAccount { account: account.to_string() })?;
        Ok(spl::associated_account(&player_address(&player), &self.mint))
    }

    async fn token_account(
        &self,
        account: &AccountId,
        address: &Address,
    ) -> Result<TokenAccount, SolanaError> {
        match read_token_account(self.client.as_ref(), address).await? {
            Some(t) if t.mint == self.mint => Ok(t),
            _ => Err(SolanaError::MissingTokenAccount { account: account.to_string() }),
        }
    }

    /// Chips `account` holds in this process's live hands (stakes reserved, chips in hand).
    fn in_hands(&self, account: &AccountId) -> (u64, u64) {
        lock(&self.live).values().fold((0u64, 0u64), |(res, inh), h| match h.book.seat(account) {
            Some(i) => (res.saturating_add(h.book.stakes()[i].1 .0), inh.saturating_add(h.book.in_hand(i))),
            None => (res, inh),
        })
    }

    /// Checks that the dealer may move `needed` more from `account` on top of `reserved`.
    fn check_spendable(
        &self,
        account: &AccountId,
        t: &TokenAccount,
        reserved: u64,
        needed: u64,
    ) -> Result<(), SolanaError> {
        let want = reserved.saturating_add(needed);
        let allowed = match t.delegate {
            Some((d, allowed)) if d == self.operator.pubkey() && !t.frozen => allowed,
            _ => return Err(SolanaError::NotApproved { account: account.to_string() }),
        };
        if allowed < want {
            return Err(SolanaError::InsufficientAllowance {
                account: account.to_string(),
                allowed: allowed.saturating_sub(reserved),
                needed,
            });
        }
        if t.amount < want {
            return Err(SolanaError::Insufficient {
                account: account.to_string(),
                balance: t.amount.saturating_sub(reserved),
                needed,
            });
        }
        Ok(())
    }

    /// The settlement's instructions: losses into the escrow first, then
    /// gains out of it, then the memo. Empty when no chip changes hands.
    fn settlement(&self, hand: &HandRef, seats: &[Seat], payouts: &[Chips], fee: Chips) -> Vec<Instruction> {
        let op = self.operator.pubkey();
        let mut ixs = Vec::new();
        for (s, p) in seats.iter().zip(payouts) {
            if p.0 < s.stake.0 {
                ixs.push(spl::transfer(&s.token_account, &self.escrow, &op, s.stake.0 - p.0));
            }
        }
        for (s, p) in seats.iter().zip(payouts) {
            if p.0 > s.stake.0 {
                ixs.push(spl::transfer(&self.escrow, &s.token_account, &op, p.0 - s.stake.0));
            }
        }
        if !ixs.is_empty() {
            ixs.push(spl::memo(&format!("claw:{hand}/settle fee={}", fee.0)));
        }
        ixs
    }

    fn sign(&self, ixs: &[Instruction], blockhash: Hash) -> Transaction {
        Transaction::new_signed_with_payer(ixs, Some(&self.operator.pubkey()), &[&self.operator], blockhash)
    }

    /// Checks every loss against the payer's approval and balance, so a
    /// revoked or exhausted approval is a typed refusal before anything is sent.
    async fn precheck(&self, rec: &Record, payouts: &[Chips]) -> Result<(), SolanaError> {
        for (s, p) in rec.seats.iter().zip(payouts) {
            if p.0 < s.stake.0 {
                let t = self.token_account(&s.account, &s.token_account).await?;
                self.check_spendable(&s.account, &t, 0, s.stake.0 - p.0)?;
            }
        }
        Ok(())
    }

    /// Waits until `signature` lands, fails, or its blockhash expires.
    async fn confirm(&self, signature: &Signature, blockhash: &Hash) -> Result<Settled, SolanaError> {
        let start = Instant::now();
        loop {
            match self.client.status(signature).await? {
                TxStatus::Landed => return Ok(Settled::Done(Outcome::Settled)),
                TxStatus::Failed(e) => return Ok(Settled::Void(SolanaError::Failed(e))),
                TxStatus::Unknown => {}
            }
            if !self.client.is_blockhash_valid(blockhash).await? {
                // One last look: it may have landed just before expiring.
                return match self.client.status(signature).await? {
                    TxStatus::Landed => Ok(Settled::Done(Outcome::Settled)),
                    TxStatus::Failed(e) => Ok(Settled::Void(SolanaError::Failed(e))),
                    TxStatus::Unknown => Err(SolanaError::BlockhashExpired(signature.to_string())),
                };
            }
            if start.elapsed() > self.timing.tx_timeout {
                return Err(SolanaError::Unconfirmed(signature.to_string()));
            }
            tokio::time::sleep(self.timing.poll).await;
        }
    }

    /// Brings one hand to its end: without a result nothing moved (refunded);
    /// with one, an earlier signature that landed ends it, one still valid is
    /// re-sent and awaited, and otherwise a new one is signed and sent.
    async fn finish(&self, rec: &mut Record, file: &mut HandFile) -> Result<Settled, SolanaError> {
        let Some((payouts, fee)) = rec.close.clone() else { return Ok(Settled::Done(Outcome::Refunded)) };
        let ixs = self.settlement(&rec.hand, &rec.seats, &payouts, fee);
        if ixs.is_empty() {
            return Ok(Settled::Done(Outcome::Settled));
        }
        for (sig, _) in &rec.sent {
            match self.client.status(sig).await? {
                TxStatus::Landed => return Ok(Settled::Done(Outcome::Already)),
                TxStatus::Failed(e) => return Ok(Settled::Void(SolanaError::Failed(e))),
                TxStatus::Unknown => {}
            }
        }
        let mut resend = match rec.sent.last() {
            Some((_, hash)) if self.client.is_blockhash_valid(hash).await? => Some(*hash),
            _ => None,
        };
        for _ in 0..3 {
            let blockhash = match resend.take() {
                Some(h) => h,
                None => {
                    if let Err(e) = self.precheck(rec, &payouts).await {
                        return match e {
                            SolanaError::Unreachable(_) | SolanaError::Rpc(_) => Err(e),
                            e => Ok(Settled::Void(e)),
                        };
                    }
                    let h = self.client.latest_blockhash().await?;
                    let tx = self.sign(&ixs, h);
                    let sig = tx.signatures[0];
                    file.append(&Line::Sent { signature: sig.to_string(), blockhash: h.to_string() }, true)?;
                    rec.sent.push((sig, h));
                    h
                }
            };
            let tx = self.sign(&ixs, blockhash);
            let sig = tx.signatures[0];
            match self.client.send(&tx).await {
                Ok(()) => {}
                Err(SolanaError::BlockhashExpired(_)) => continue,
                Err(SolanaError::Failed(e)) => return Ok(Settled::Void(SolanaError::Failed(e))),
                Err(e) => return Err(e),
            }
            match self.confirm(&sig, &blockhash).await {
                Err(SolanaError::BlockhashExpired(_)) => continue,
                other => return other,
            }
        }
        Err(SolanaError::BlockhashExpired(format!("hand {}: three blockhashes expired", rec.hand)))
    }

    fn end(&self, mut file: HandFile, outcome: Outcome, reason: Option<String>) -> Result<(), SolanaError> {
        file.append(&Line::End { outcome, reason }, true)?;
        Ok(self.journal.archive(file)?)
    }

    /// Finishes every hand of the journal that this process is not running
    /// (after a crash): settled with the recorded result, or refunded, each
    /// exactly once.
    pub async fn reconcile_journal(&self) -> Result<Reconciled, SolanaError> {
        let mut report = Reconciled::default();
        let running: Vec<HandRef> = lock(&self.live).keys().cloned().collect();
        for path in self.journal.open_files()? {
            let mut rec = read_record(&path)?;
            if running.contains(&rec.hand) {
                continue;
            }
            let mut file = self.journal.reopen(&path)?;
            if rec.ended {
                self.journal.archive(file)?;
                continue;
            }
            let (outcome, reason) = match self.finish(&mut rec, &mut file).await? {
                Settled::Done(o) => (o, None),
                Settled::Void(e) => (Outcome::Void, Some(e.to_string())),
            };
            tracing::info!(hand = %rec.hand, %outcome, "reconciled an interrupted hand");
            self.end(file, outcome, reason)?;
            match outcome {
                Outcome::Settled => report.settled.push(rec.hand),
                Outcome::Refunded | Outcome::Void => report.refunded.push(rec.hand),
                Outcome::Already => report.already.push(rec.hand),
            }
        }
        Ok(report)
    }

    fn apply(&self, key: &IdempotencyKey, ops: &[AccountOp]) -> Result<Chips, ChipError> {
        apply_in_hand(&mut lock(&self.live), "Solana", &self.house, key, ops)
    }
}

/// Reads a token account of the SPL Token program (None if absent or another kind).
pub async fn read_token_account(
    client: &dyn SolanaClient,
    address: &Address,
) -> Result<Option<TokenAccount>, SolanaError> {
    Ok(client
        .account(address)
        .await?
        .filter(|a| a.owner == spl::TOKEN_PROGRAM)
        .and_then(|a| TokenAccount::decode(&a.data)))
}

#[async_trait]
impl ChipProvider for SolanaChips {
    fn name(&self) -> &'static str {
        "solana"
    }

    /// A player: what the dealer may move from their token account (the
    /// smaller of balance and approval) less the stakes of live hands plus
    /// their chips in those hands. The house: the escrow plus live hands' take.
    async fn balance(&self, account: &AccountId) -> Result<Chips, ChipError> {
        let address = self.token_account_of(account)?;
        let t = self.token_account(account, &address).await?;
        if *account == self.house {
            let fees: u64 = lock(&self.live).values().map(|h| h.book.fee()).sum();
            return Ok(Chips(t.amount.saturating_add(fees)));
        }
        let (reserved, in_hand) = self.in_hands(account);
        Ok(Chips(t.spendable_by(&self.operator.pubkey()).saturating_sub(reserved).saturating_add(in_hand)))
    }

    async fn debit(
        &self,
        key: &IdempotencyKey,
        account: &AccountId,
        amount: Chips,
        memo: &str,
    ) -> Result<Chips, ChipError> {
        self.apply(key, &[AccountOp::new(ChipOp::Debit, account, amount, memo)])
    }

    async fn credit(
        &self,
        key: &IdempotencyKey,
        account: &AccountId,
        amount: Chips,
        memo: &str,
    ) -> Result<Chips, ChipError> {
        self.apply(key, &[AccountOp::new(ChipOp::Credit, account, amount, memo)])
    }

    async fn settle(&self, key: &IdempotencyKey, ops: &[AccountOp]) -> Result<(), ChipError> {
        self.apply(key, ops).map(|_| ())
    }

    fn settles_hands(&self) -> bool {
        true
    }

    /// Checks each stake against the player's approval and balance (less
    /// what live hands already reserve) and journals the hand. Nothing is
    /// sent: the chips stay in the players' accounts until the settlement.
    async fn open_hand(&self, hand: &HandRef, stakes: &[(AccountId, Chips)]) -> Result<(), ChipError> {
        if let Some(h) = lock(&self.live).get(hand) {
            return if h.book.stakes() == stakes {
                Ok(())
            } else {
                Err(ChipError::KeyReused(hand.key_prefix()))
            };
        }
        if stakes.is_empty() || stakes.len() > 16 {
            return Err(bad("a hand has 1 to 16 stakes (one settlement transaction)"));
        }
        let mut seen = std::collections::BTreeSet::new();
        let mut seats = Vec::with_capacity(stakes.len());
        for (account, stake) in stakes {
            if *account == self.house || !seen.insert(account) || stake.0 == 0 {
                return Err(bad(format!("stake of {account}: each player once, positive, not the house")));
            }
            let address = self.token_account_of(account)?;
            let t = self.token_account(account, &address).await?;
            if t.owner != player_address(&account.as_str().parse().map_err(|_| bad("player id"))?) {
                return Err(SolanaError::MissingTokenAccount { account: account.to_string() }.into());
            }
            let (reserved, _) = self.in_hands(account);
            self.check_spendable(account, &t, reserved, stake.0)?;
            seats.push(Seat { account: account.clone(), token_account: address, stake: *stake });
        }
        let file = self.journal.create(&file_name(hand), &Line::Open { hand: hand.clone(), seats })?;
        let mut live = lock(&self.live);
        if live.contains_key(hand) {
            return Err(ChipError::Service(format!("hand {hand}: opened concurrently")));
        }
        live.insert(
            hand.clone(),
            Live { book: HandBook::new(stakes.to_vec()), closing: false, file: Some(file) },
        );
        Ok(())
    }

    /// Settles the hand in one transaction: each seat ends with stake −
    /// debits + credits, the house keeps its credits. Retry after an error.
    /// A refused settlement (approval revoked or exhausted, an account
    /// missing or short) voids the hand: nothing moved, and the error says why.
    async fn close_hand(&self, hand: &HandRef) -> Result<(), ChipError> {
        let (rec, file) = {
            let mut live = lock(&self.live);
            let h = live.get_mut(hand).ok_or_else(|| bad(format!("hand {hand} is not open here")))?;
            let Some(file) = h.file.as_mut() else {
                return Err(ChipError::Service(format!("hand {hand}: a settlement is in flight")));
            };
            if !h.closing {
                let (payouts, fee) = h.book.result(hand)?;
                file.append(&Line::Close { payouts, fee }, true)?;
                h.closing = true;
            }
            let file = h
                .file
                .take()
                .ok_or_else(|| ChipError::Service(format!("hand {hand}: a settlement is in flight")))?;
            (read_record(file.path()), file)
        };
        let mut rec = match rec {
            Ok(rec) => rec,
            Err(e) => {
                if let Some(h) = lock(&self.live).get_mut(hand) {
                    h.file = Some(file);
                }
                return Err(e.into());
            }
        };
        let mut file = file;
        let result = self.finish(&mut rec, &mut file).await;
        let mut live = lock(&self.live);
        match result {
            Ok(Settled::Done(outcome)) => {
                live.remove(hand);
                drop(live);
                self.end(file, outcome, None)?;
                Ok(())
            }
            Ok(Settled::Void(e)) => {
                live.remove(hand);
                drop(live);
                self.end(file, Outcome::Void, Some(e.to_string()))?;
                tracing::warn!(%hand, error = %e, "settlement refused: the hand is void, nothing moved");
                Err(e.into())
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
