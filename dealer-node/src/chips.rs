//! Chip handling for hands: turns the hand's debits and credits into
//! [`ChipProvider`] calls with idempotency keys `<room>/<hand_id>/<n>`,
//! bounds every call with a timeout (retrying with the same key), journals
//! each operation in the data directory before and after the call, checks
//! conservation, and refunds a voided hand.
//!
//! A journal is one JSON-lines file per running hand under
//! `rooms/<room>/journal/open/`. When the hand settles or is voided its lines
//! are appended to `rooms/<room>/journal/chips.jsonl` and the open file is
//! removed; whatever is still open when the node starts belongs to a hand
//! that a crash interrupted, and [`recover`] finishes it exactly once:
//! settled when its `complete` line (with the dealer's fee) was written,
//! else refunded. The files a settlement writes to are opened once per room
//! ([`RoomJournal`]) and a hand's own file is read back through its open
//! descriptor, so closing a hand's journal needs no new file descriptor: a
//! process out of descriptors still settles its hands.

use std::collections::BTreeMap;
use std::fs::{self, File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use claw_chips::{
    AccountId, ChipError, ChipOpKind, ChipProvider, HandRef, IdempotencyKey, LocalChips, Reconciled,
};
use claw_protocol::Chips;
use serde::{Deserialize, Serialize};

use crate::archive::Archive;
use crate::metrics::Metrics;

/// Operator grants outside of hands (welcome chips, a house bankroll); only
/// some providers offer them (the local ledger, the points server).
#[async_trait]
pub trait Grants: Send + Sync {
    /// Adds `amount` to `account` once per `key`; returns the new balance.
    async fn grant(
        &self,
        key: &IdempotencyKey,
        account: &AccountId,
        amount: Chips,
        memo: &str,
    ) -> Result<Chips, ChipError>;
}

#[async_trait]
impl Grants for LocalChips {
    async fn grant(
        &self,
        _key: &IdempotencyKey,
        account: &AccountId,
        amount: Chips,
        _memo: &str,
    ) -> Result<Chips, ChipError> {
        LocalChips::grant(self, account, amount).await
    }
}

#[async_trait]
impl Grants for claw_chips::HttpChips {
    async fn grant(
        &self,
        key: &IdempotencyKey,
        account: &AccountId,
        amount: Chips,
        memo: &str,
    ) -> Result<Chips, ChipError> {
        claw_chips::HttpChips::grant(self, key, account, amount, memo).await
    }
}

/// The node's access to chips: the provider plus call policy.
#[derive(Clone)]
pub struct ChipDesk {
    provider: Arc<dyn ChipProvider>,
    /// Time allowed for one call.
    pub timeout: Duration,
    /// Attempts for retryable failures (same idempotency key each time).
    pub attempts: u32,
    /// The account commission and rake are paid to.
    pub dealer_account: AccountId,
}

impl ChipDesk {
    /// A desk over `provider`, paying commission to `dealer_account`.
    pub fn new(
        provider: Arc<dyn ChipProvider>,
        dealer_account: AccountId,
        timeout: Duration,
        attempts: u32,
    ) -> ChipDesk {
        ChipDesk { provider, timeout, attempts: attempts.max(1), dealer_account }
    }

    /// The provider's name, for logs.
    pub fn provider_name(&self) -> &'static str {
        self.provider.name()
    }

    /// Runs `f` with the call timeout (`bounded`) and retries while the
    /// error is retryable. A final retryable error means the outcome is
    /// unknown (the provider may have applied it).
    async fn retrying<T, F, Fut>(&self, bounded: bool, mut f: F) -> Result<T, ChipError>
    where
        F: FnMut() -> Fut,
        Fut: std::future::Future<Output = Result<T, ChipError>>,
    {
        let mut last = ChipError::Timeout;
        for attempt in 0..self.attempts {
            let r = if bounded {
                tokio::time::timeout(self.timeout, f()).await.unwrap_or(Err(ChipError::Timeout))
            } else {
                f().await
            };
            match r {
                Ok(v) => return Ok(v),
                Err(e) if !e.is_retryable() => return Err(e),
                Err(e) => last = e,
            }
            if attempt + 1 < self.attempts {
                backoff(attempt).await;
            }
        }
        Err(last)
    }

    /// A balance, with the call timeout and retries.
    pub async fn balance(&self, account: &AccountId) -> Result<Chips, ChipError> {
        self.retrying(true, || self.provider.balance(account)).await
    }

    /// One debit or credit with the timeout, retried with the same key while
    /// the error is retryable.
    pub async fn call(
        &self,
        kind: ChipOpKind,
        key: &IdempotencyKey,
        account: &AccountId,
        amount: Chips,
        memo: &str,
    ) -> Result<Chips, ChipError> {
        self.retrying(true, || async {
            match kind {
                ChipOpKind::Debit => self.provider.debit(key, account, amount, memo).await,
                ChipOpKind::Credit => self.provider.credit(key, account, amount, memo).await,
            }
        })
        .await
    }

    /// Whether the provider moves chips once per hand (see
    /// [`ChipProvider::settles_hands`]): the ledger then opens and closes
    /// hands on it, and recovery is the provider's reconciliation.
    pub fn settles_hands(&self) -> bool {
        self.provider.settles_hands()
    }

    /// Locks the stakes of a hand, retried with the same stakes. Not bound
    /// by the call timeout: the provider bounds its own transactions.
    pub async fn open_hand(&self, hand: &HandRef, stakes: &[(AccountId, Chips)]) -> Result<(), ChipError> {
        self.retrying(false, || self.provider.open_hand(hand, stakes)).await
    }

    /// Settles a hand on the provider, retried (safe: the hand's key is used once).
    pub async fn close_hand(&self, hand: &HandRef) -> Result<(), ChipError> {
        self.retrying(false, || self.provider.close_hand(hand)).await
    }

    /// Releases what a failed `open_hand` may have locked.
    pub async fn abandon_hand(&self, hand: &HandRef) -> Result<(), ChipError> {
        self.retrying(false, || self.provider.abandon_hand(hand)).await
    }

    /// Finishes the provider's interrupted hands (after a crash).
    pub async fn reconcile(&self) -> Result<Reconciled, ChipError> {
        self.retrying(false, || self.provider.reconcile()).await
    }
}

async fn backoff(attempt: u32) {
    tokio::time::sleep(Duration::from_millis(20u64 << attempt.min(5))).await;
}

/// The outcome of one chip operation of a hand.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum OpStatus {
    /// Applied by the provider.
    Done,
    /// Refused for good (e.g. insufficient balance): nothing moved.
    Refused,
    /// The provider did not answer in time: it may or may not have applied it.
    Uncertain,
}

/// One chip operation of a hand, as journaled.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HandOp {
    /// Index in the hand (the last part of the idempotency key).
    pub n: u32,
    /// `<room>/<hand_id>/<n>` (refunds: `…/refund-<n>`, undos: `…/undo-<n>`).
    pub key: IdempotencyKey,
    /// Debit or credit.
    pub kind: ChipOpKind,
    /// Whose chips.
    pub account: AccountId,
    /// How many.
    pub amount: Chips,
    /// Why (the game's reason, `commission`, `refund: …`).
    pub memo: String,
    /// The outcome; none while the call is in flight.
    pub status: Option<OpStatus>,
}

/// A journal line.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", tag = "kind")]
enum JournalLine {
    Begin {
        room: String,
        hand_id: String,
        at_ms: u64,
        /// The number the hand gets if it is dealt: a crash leaves it
        /// reserved, so that hand numbers never repeat (older journals: none).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        hand_number: Option<u64>,
    },
    Intent {
        op: HandOp,
    },
    Status {
        n: u32,
        status: OpStatus,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        error: Option<String>,
    },
    /// The game is over and every game movement is done; `fee` is what the
    /// dealer is owed (commission and rake), so that a restart pays it.
    Complete {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        fee: Option<Chips>,
    },
    /// The hand is being voided: a restart refunds it even if it was complete.
    Void,
    End {
        outcome: String,
    },
}

/// Why chips for a hand could not be handled.
#[derive(Debug, thiserror::Error)]
pub enum LedgerError {
    /// The provider refused or failed the call.
    #[error("chip provider: {0}")]
    Chip(#[from] ChipError),
    /// Writing the journal failed.
    #[error("chip journal: {0}")]
    Journal(#[from] std::io::Error),
    /// An account or key could not be formed.
    #[error("chip ids: {0}")]
    Key(String),
    /// Applied debits and credits differ.
    #[error("conservation broken: debited {debits}, credited {credits}")]
    Conservation {
        /// Total debited.
        debits: u128,
        /// Total credited.
        credits: u128,
    },
    /// Some operation's outcome is still unknown.
    #[error("unsettled operations remain (provider unreachable); the journal stays open for recovery")]
    Unsettled,
}

/// A room's journal directory (`rooms/<room>/journal/`) with the files that
/// closing a hand's journal writes to held open: the log of finished hands
/// (`chips.jsonl`) and the `open/` directory (synced after a hand's file is
/// removed). Opened once per room, so that settling needs no new file
/// descriptor.
#[derive(Debug)]
pub struct RoomJournal {
    dir: PathBuf,
    log: std::sync::Mutex<File>,
    open_dir: File,
}

impl RoomJournal {
    /// Opens (creating them if missing) the journal directory `dir`, its
    /// `open/` directory and its log.
    pub fn open(dir: &Path) -> Result<Arc<RoomJournal>, LedgerError> {
        let open = dir.join("open");
        fs::create_dir_all(&open)?;
        let log = OpenOptions::new().create(true).append(true).open(dir.join("chips.jsonl"))?;
        let open_dir = File::open(&open)?;
        Ok(Arc::new(RoomJournal { dir: dir.to_owned(), log: std::sync::Mutex::new(log), open_dir }))
    }

    /// The journal directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Appends a finished hand's lines to the log, synced.
    fn append(&self, content: &[u8]) -> std::io::Result<()> {
        let mut f = self.log.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        f.write_all(content)?;
        f.sync_data()
    }
}

/// The chip operations of one hand: keys, journal, totals, refunds.
pub struct HandLedger {
    room: String,
    hand_id: String,
    ops: Vec<HandOp>,
    /// The hand's file, open for reading and appending.
    journal: Option<(PathBuf, File)>,
    sink: Option<Arc<RoomJournal>>,
    /// The hand's lines are in the log already (only the file's removal
    /// is left to retry).
    logged: bool,
    /// Journal lines written and synced to disk.
    synced: u64,
    /// Whether operation lines are synced (not when the provider settles
    /// per hand: its own journal decides recovery, see [`recover`]).
    sync_ops: bool,
}

/// Debited and credited totals of a hand's applied operations.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct Totals {
    /// Sum of applied debits.
    pub debits: u128,
    /// Sum of applied credits.
    pub credits: u128,
}

impl HandLedger {
    /// Opens the hand's journal under `journal_dir` (none = no journal, for
    /// tests and benchmarks).
    pub fn open(
        room: &str,
        hand_id: &str,
        journal_dir: Option<&Path>,
        now_ms: u64,
    ) -> Result<HandLedger, LedgerError> {
        match journal_dir {
            Some(dir) => HandLedger::open_in(&RoomJournal::open(dir)?, room, hand_id, None, now_ms),
            None => Ok(HandLedger::unjournaled(room, hand_id)),
        }
    }

    fn unjournaled(room: &str, hand_id: &str) -> HandLedger {
        HandLedger {
            room: room.to_owned(),
            hand_id: hand_id.to_owned(),
            ops: Vec::new(),
            journal: None,
            sink: None,
            logged: false,
            synced: 0,
            sync_ops: true,
        }
    }

    /// Opens the hand's journal in the room's `journal` (one new file
    /// descriptor, the hand's file, kept until the journal is closed);
    /// `hand_number` is the number the hand will be dealt under, reserved
    /// by a crash.
    pub fn open_in(
        journal: &Arc<RoomJournal>,
        room: &str,
        hand_id: &str,
        hand_number: Option<u64>,
        now_ms: u64,
    ) -> Result<HandLedger, LedgerError> {
        let mut l = HandLedger::unjournaled(room, hand_id);
        let path = journal.dir.join("open").join(format!("{hand_id}.jsonl"));
        let f = OpenOptions::new().create(true).read(true).append(true).open(&path)?;
        l.journal = Some((path, f));
        l.sink = Some(Arc::clone(journal));
        l.write(&JournalLine::Begin {
            room: room.to_owned(),
            hand_id: hand_id.to_owned(),
            at_ms: now_ms,
            hand_number,
        })?;
        Ok(l)
    }

    /// Appends a line and syncs it to disk before the call it records goes
    /// out: the journal is as durable as the ledger it mirrors (which
    /// commits with fsync), so a power loss cannot lose an applied operation.
    fn write(&mut self, line: &JournalLine) -> Result<(), LedgerError> {
        if let Some((_, f)) = &mut self.journal {
            let mut s = serde_json::to_string(line).map_err(|e| LedgerError::Key(e.to_string()))?;
            s.push('\n');
            f.write_all(s.as_bytes())?;
            let op_line = matches!(
                line,
                JournalLine::Intent { .. } | JournalLine::Status { .. } | JournalLine::Complete { .. }
            );
            if self.sync_ops || !op_line {
                f.sync_data()?;
                self.synced += 1;
            }
        }
        Ok(())
    }

    /// Stops syncing operation lines: for a provider that settles per hand,
    /// which journals and recovers the hand itself (a crash mid-hand
    /// refunds it there), so these lines are a log, not a recovery record.
    pub fn without_op_sync(mut self) -> HandLedger {
        self.sync_ops = false;
        self
    }

    /// Journal lines written, each synced to disk.
    pub fn synced_lines(&self) -> u64 {
        self.synced
    }

    /// The hand's open journal file (none without a journal).
    pub fn journal_path(&self) -> Option<&Path> {
        self.journal.as_ref().map(|(p, _)| p.as_path())
    }

    /// Chips the hand took from accounts and has not given back (what a
    /// voided hand holds until its refund).
    pub fn held(&self) -> u64 {
        let t = self.totals();
        u64::try_from(t.debits.saturating_sub(t.credits)).unwrap_or(u64::MAX)
    }

    /// [`HandLedger::held`] per account (accounts the hand owes chips).
    pub fn held_by(&self) -> Vec<(AccountId, u64)> {
        let mut net: BTreeMap<&AccountId, i128> = BTreeMap::new();
        for o in self.ops.iter().filter(|o| o.status == Some(OpStatus::Done)) {
            let e = net.entry(&o.account).or_default();
            match o.kind {
                ChipOpKind::Debit => *e += i128::from(o.amount.0),
                ChipOpKind::Credit => *e -= i128::from(o.amount.0),
            }
        }
        net.into_iter()
            .filter(|(_, n)| *n > 0)
            .map(|(a, n)| (a.clone(), u64::try_from(n).unwrap_or(u64::MAX)))
            .collect()
    }

    /// The operations so far.
    pub fn ops(&self) -> &[HandOp] {
        &self.ops
    }

    fn next_key(&self, tag: &str) -> Result<(u32, IdempotencyKey), LedgerError> {
        let n = self.ops.len() as u32;
        let key = IdempotencyKey::new(format!("{}/{}/{tag}{n}", self.room, self.hand_id))
            .map_err(|e| LedgerError::Key(e.to_string()))?;
        Ok((n, key))
    }

    /// Runs one operation: journal the intent, call, journal the outcome.
    /// `Err(ChipError)` tells the caller the operation did not certainly
    /// happen; [`HandLedger::has_uncertain`] says whether it may have.
    pub async fn run(
        &mut self,
        desk: &ChipDesk,
        kind: ChipOpKind,
        account: &AccountId,
        amount: Chips,
        memo: &str,
    ) -> Result<Chips, LedgerError> {
        self.run_tagged(desk, kind, account, amount, memo, "").await
    }

    async fn run_tagged(
        &mut self,
        desk: &ChipDesk,
        kind: ChipOpKind,
        account: &AccountId,
        amount: Chips,
        memo: &str,
        tag: &str,
    ) -> Result<Chips, LedgerError> {
        let (n, key) = self.next_key(tag)?;
        let op = HandOp {
            n,
            key: key.clone(),
            kind,
            account: account.clone(),
            amount,
            memo: memo.to_owned(),
            status: None,
        };
        self.write(&JournalLine::Intent { op: op.clone() })?;
        self.ops.push(op);
        if amount.0 == 0 {
            return self.finish(n, OpStatus::Done, None).map(|_| Chips::ZERO);
        }
        match desk.call(kind, &key, account, amount, memo).await {
            Ok(b) => {
                self.finish(n, OpStatus::Done, None)?;
                Ok(b)
            }
            Err(e) => {
                let status = if e.is_retryable() { OpStatus::Uncertain } else { OpStatus::Refused };
                self.finish(n, status, Some(e.to_string()))?;
                Err(LedgerError::Chip(e))
            }
        }
    }

    fn finish(&mut self, n: u32, status: OpStatus, error: Option<String>) -> Result<(), LedgerError> {
        if let Some(op) = self.ops.get_mut(n as usize) {
            op.status = Some(status);
        }
        self.write(&JournalLine::Status { n, status, error })
    }

    /// Whether some operation's outcome is unknown (the hand must be voided).
    pub fn has_uncertain(&self) -> bool {
        self.ops.iter().any(|o| o.status == Some(OpStatus::Uncertain))
    }

    /// Totals of the applied operations.
    pub fn totals(&self) -> Totals {
        totals(&self.ops)
    }

    /// Conservation: every chip debited in the hand was credited somewhere.
    pub fn check_conservation(&self) -> Result<Totals, LedgerError> {
        let t = self.totals();
        if t.debits == t.credits {
            Ok(t)
        } else {
            Err(LedgerError::Conservation { debits: t.debits, credits: t.credits })
        }
    }

    /// The number of operations so far: a mark for [`HandLedger::undo_since`].
    pub fn mark(&self) -> usize {
        self.ops.len()
    }

    /// Gives back the net effect of the operations since `mark` (a player
    /// action whose later debit was refused). `Unsettled` if the provider
    /// does not answer: the hand must then be voided.
    pub async fn undo_since(&mut self, desk: &ChipDesk, mark: usize) -> Result<(), LedgerError> {
        if self
            .ops
            .iter()
            .skip(mark)
            .any(|o| o.status != Some(OpStatus::Done) && o.status != Some(OpStatus::Refused))
        {
            return Err(LedgerError::Unsettled);
        }
        reverse_from(self, desk, mark, "undo-", "undo: action refused").await
    }

    /// Records that the game is over and every game movement is done, and
    /// that the dealer is owed `fee`: a restart completes the remaining
    /// payouts (the fee) instead of refunding the hand.
    pub fn mark_complete(&mut self, fee: Chips) -> Result<(), LedgerError> {
        self.write(&JournalLine::Complete { fee: Some(fee) })
    }

    /// Closes a settled hand's journal.
    pub fn close_settled(mut self) -> Result<Totals, LedgerError> {
        let t = self.end_settled()?;
        self.close_journal()?;
        Ok(t)
    }

    /// Checks conservation and records (synced) that the hand is settled;
    /// the journal stays open until [`HandLedger::close_journal`].
    pub fn end_settled(&mut self) -> Result<Totals, LedgerError> {
        let t = self.check_conservation()?;
        self.write(&JournalLine::End { outcome: "settled".into() })?;
        Ok(t)
    }

    /// Voids the hand: settles uncertain operations by asking again with the
    /// same key, then gives every account back its net change. Closes the
    /// journal when everything is settled; otherwise leaves it open for
    /// [`recover`] and returns `Unsettled`.
    pub async fn void(mut self, desk: &ChipDesk) -> Result<Totals, LedgerError> {
        let t = self.void_kept(desk).await?;
        self.close_journal()?;
        Ok(t)
    }

    /// [`HandLedger::void`] without closing the journal (the caller closes
    /// it with [`HandLedger::close_journal`], retrying if it must).
    pub async fn void_kept(&mut self, desk: &ChipDesk) -> Result<Totals, LedgerError> {
        self.write(&JournalLine::Void)?;
        refund_ops(self, desk).await?;
        let t = self.check_conservation()?;
        self.write(&JournalLine::End { outcome: "voided".into() })?;
        Ok(t)
    }

    /// Moves an ended hand's lines to the room's log and removes its file,
    /// through descriptors already open (the hand's file and the room's
    /// [`RoomJournal`]). May be called again after an error: the lines are
    /// logged once.
    pub fn close_journal(&mut self) -> Result<(), LedgerError> {
        let (Some((path, f)), Some(sink)) = (&self.journal, &self.sink) else { return Ok(()) };
        if !self.logged {
            let mut content = Vec::new();
            let mut r: &File = f;
            r.seek(SeekFrom::Start(0))?;
            r.read_to_end(&mut content)?;
            sink.append(&content)?;
            self.logged = true;
        }
        match fs::remove_file(path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e.into()),
            _ => {}
        }
        sink.open_dir.sync_all()?;
        self.journal = None;
        self.sink = None;
        Ok(())
    }

    /// Whether the journal is closed (or there is none).
    pub fn is_closed(&self) -> bool {
        self.journal.is_none()
    }
}

fn totals(ops: &[HandOp]) -> Totals {
    let mut t = Totals::default();
    for o in ops.iter().filter(|o| o.status == Some(OpStatus::Done)) {
        match o.kind {
            ChipOpKind::Debit => t.debits += u128::from(o.amount.0),
            ChipOpKind::Credit => t.credits += u128::from(o.amount.0),
        }
    }
    t
}

/// Re-asks uncertain operations, then refunds net changes. Shared by `void`
/// and crash recovery.
async fn refund_ops(l: &mut HandLedger, desk: &ChipDesk) -> Result<(), LedgerError> {
    settle_uncertain(l, desk).await?;
    reverse_from(l, desk, 0, "refund-", "refund: hand voided").await
}

/// Asks the provider again, with the same keys, about every operation whose
/// outcome is unknown (uncertain, or an intent without an answer).
async fn settle_uncertain(l: &mut HandLedger, desk: &ChipDesk) -> Result<(), LedgerError> {
    let uncertain: Vec<usize> = l
        .ops
        .iter()
        .enumerate()
        .filter(|(_, o)| o.status == Some(OpStatus::Uncertain) || o.status.is_none())
        .map(|(i, _)| i)
        .collect();
    for i in uncertain {
        let o = l.ops[i].clone();
        if o.amount.0 == 0 {
            l.finish(o.n, OpStatus::Done, None)?;
            continue;
        }
        match desk.call(o.kind, &o.key, &o.account, o.amount, &o.memo).await {
            Ok(_) => l.finish(o.n, OpStatus::Done, None)?,
            Err(e) if !e.is_retryable() => l.finish(o.n, OpStatus::Refused, Some(e.to_string()))?,
            Err(_) => return Err(LedgerError::Unsettled),
        }
    }
    Ok(())
}

/// Gives every account back its net change over the applied operations
/// from index `from` on.
async fn reverse_from(
    l: &mut HandLedger,
    desk: &ChipDesk,
    from: usize,
    tag: &str,
    memo: &str,
) -> Result<(), LedgerError> {
    let mut net: BTreeMap<AccountId, i128> = BTreeMap::new();
    for o in l.ops.iter().skip(from).filter(|o| o.status == Some(OpStatus::Done)) {
        let d = i128::from(o.amount.0);
        *net.entry(o.account.clone()).or_default() += if o.kind == ChipOpKind::Credit { d } else { -d };
    }
    // Crediting first would create chips if a later debit failed: debit the
    // accounts that gained first (they hold the chips), then credit.
    let mut plan: Vec<(ChipOpKind, AccountId, Chips)> = Vec::new();
    for (acct, n) in &net {
        if *n > 0 {
            plan.push((ChipOpKind::Debit, acct.clone(), Chips(u64::try_from(*n).unwrap_or(u64::MAX))));
        }
    }
    for (acct, n) in &net {
        if *n < 0 {
            plan.push((ChipOpKind::Credit, acct.clone(), Chips(u64::try_from(-*n).unwrap_or(u64::MAX))));
        }
    }
    for (kind, acct, amount) in plan {
        match l.run_tagged(desk, kind, &acct, amount, memo, tag).await {
            Ok(_) => {}
            Err(LedgerError::Chip(e)) if e.is_retryable() => return Err(LedgerError::Unsettled),
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// What recovery did with one interrupted hand.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recovered {
    /// The room of the hand.
    pub room: String,
    /// The hand (hex).
    pub hand_id: String,
    /// Its totals after recovery (equal when settled).
    pub totals: Totals,
    /// How it ended.
    pub outcome: RecoveredAs,
    /// The number it was (or would have been) dealt under, when its journal
    /// recorded it: reserved, so that no later hand repeats it.
    pub hand_number: Option<u64>,
}

/// How recovery finished an interrupted hand.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RecoveredAs {
    /// Its game was complete: its payouts (the dealer's fee) were finished.
    Settled,
    /// Every chip it moved went back.
    Refunded,
    /// The provider settles per hand and finished it (see its report).
    ByProvider,
    /// It had ended before the crash; only its journal was closed.
    Ended,
}

/// Finishes every hand whose journal is still open under
/// `data_dir/rooms/*/journal/open/` (a crash interrupted it): settled when
/// its game was complete, refunded otherwise; with a provider that settles
/// per hand, first lets it reconcile its hands (its journal decides) and
/// then only closes these journals. Idempotent: operations are re-issued
/// with their original keys and refunds carry keys derived from the hand,
/// so running it twice moves nothing more.
///
/// The transcript archive is brought in line: a hand is filed before its
/// end is sent and settled before it is sent too, so a refunded hand whose
/// file is in the archive was never seen ending; its file is set aside as
/// voided ([`Archive::void_filed`]). The number each interrupted hand had
/// reserved is kept ([`Archive::reserve`]), so no later hand repeats it.
pub async fn recover(data_dir: &Path, desk: &ChipDesk) -> Vec<Result<Recovered, (PathBuf, LedgerError)>> {
    let mut out = Vec::new();
    let mut refunded_by_provider: Vec<HandRef> = Vec::new();
    if desk.settles_hands() {
        match desk.reconcile().await {
            Ok(r) => {
                tracing::info!(
                    provider = desk.provider_name(),
                    settled = r.settled.len(),
                    refunded = r.refunded.len(),
                    already = r.already.len(),
                    lapsed = r.lapsed.len(),
                    "chip provider reconciled interrupted hands"
                );
                refunded_by_provider.extend(r.refunded.iter().chain(&r.lapsed).cloned());
            }
            Err(e) => {
                // Leave the journals open: the next start reconciles again.
                tracing::error!(provider = desk.provider_name(), error = %e, "chip provider reconciliation failed");
                return out;
            }
        }
    }
    let rooms = data_dir.join("rooms");
    if let Ok(entries) = fs::read_dir(&rooms) {
        for room in entries.flatten() {
            let open = room.path().join("journal").join("open");
            let Ok(files) = fs::read_dir(&open) else { continue };
            for f in files.flatten() {
                let path = f.path();
                if path.extension().and_then(|e| e.to_str()) != Some("jsonl") {
                    continue;
                }
                let r = recover_one(&path, desk).await;
                if let Ok(rec) = &r {
                    if let Err(e) = file_recovered(data_dir, rec) {
                        tracing::error!(room = %rec.room, hand = %rec.hand_id, error = %e,
                            "could not bring the transcript archive in line with a recovered hand");
                    }
                }
                out.push(r.map_err(|e| (path.clone(), e)));
            }
        }
    }
    for h in refunded_by_provider {
        if let Err(e) = void_filed(data_dir, &h.room, &h.hand_id) {
            tracing::error!(room = %h.room, hand = %h.hand_id, error = %e,
                "could not set aside the file of a hand the chip provider refunded");
        }
    }
    out
}

/// The archive side of a recovered hand: its number reserved; its file set
/// aside as voided when its chips were refunded.
fn file_recovered(data_dir: &Path, rec: &Recovered) -> Result<(), crate::archive::ArchiveError> {
    let archive = Archive::open(data_dir, &rec.room)?;
    if let Some(n) = rec.hand_number {
        archive.reserve(n.saturating_add(1))?;
    }
    if rec.outcome == RecoveredAs::Refunded {
        void_filed(data_dir, &rec.room, &rec.hand_id)?;
    }
    Ok(())
}

fn void_filed(data_dir: &Path, room: &str, hand_id: &str) -> Result<(), crate::archive::ArchiveError> {
    let Ok(id) = hand_id.parse::<claw_protocol::HandId>() else { return Ok(()) };
    if !data_dir.join("rooms").join(room).exists() {
        return Ok(());
    }
    let archive = Archive::open(data_dir, room)?;
    if let Some(path) = archive.void_filed(&id)? {
        tracing::warn!(room, hand = %id, file = %path.display(),
            "a hand a crash interrupted before its settlement was refunded; its file (never seen ending) is kept as voided");
    }
    Ok(())
}

/// The first pause of a background retry.
pub(crate) const FIRST_PAUSE: Duration = Duration::from_millis(250);

/// The next pause of a background retry: doubled, at most 30 s.
pub(crate) fn longer(pause: Duration) -> Duration {
    (pause * 2).min(Duration::from_secs(30))
}

/// A budget of chips per period: at most `limit` in each window of
/// `period`; a window starts with the first take after the last one ended.
#[derive(Debug)]
pub struct PeriodBudget {
    limit: u64,
    period: Duration,
    window: Option<(std::time::Instant, u64)>,
}

impl PeriodBudget {
    /// `limit` chips per `period`.
    pub fn new(limit: u64, period: Duration) -> PeriodBudget {
        PeriodBudget { limit, period, window: None }
    }

    /// Takes `n` chips at `now` if this window has them left.
    pub fn try_take(&mut self, now: std::time::Instant, n: u64) -> bool {
        let (start, used) = match self.window {
            Some((start, used)) if now.saturating_duration_since(start) < self.period => (start, used),
            _ => (now, 0),
        };
        let Some(after) = used.checked_add(n).filter(|a| *a <= self.limit) else {
            self.window = Some((start, used));
            return false;
        };
        self.window = Some((start, after));
        true
    }
}

/// Chips the node holds per account: taken by voided hands whose refund
/// the chip service has not answered yet (shown in `my-status` and, in
/// total, as `claw_chips_held`).
#[derive(Debug, Default)]
pub struct HeldChips(std::sync::Mutex<BTreeMap<AccountId, u64>>);

impl HeldChips {
    /// Chips held for `account`.
    pub fn of(&self, account: &AccountId) -> Chips {
        Chips(self.0.lock().map(|m| m.get(account).copied().unwrap_or(0)).unwrap_or(0))
    }

    fn change(&self, held: &[(AccountId, u64)], add: bool) {
        let Ok(mut m) = self.0.lock() else { return };
        for (a, n) in held {
            let e = m.entry(a.clone()).or_default();
            *e = if add { e.saturating_add(*n) } else { e.saturating_sub(*n) };
            if *e == 0 {
                m.remove(a);
            }
        }
    }
}

/// Finishes a voided hand whose refund the chip service did not answer:
/// retries from its journal (same keys, so nothing moves twice) with a
/// growing pause until the service answers, counting it in `refunds_pending`,
/// `chips_held` and per account in `registry` meanwhile. A restart does the
/// same from the journal.
pub async fn refund_in_background(
    path: PathBuf,
    desk: ChipDesk,
    metrics: Arc<Metrics>,
    registry: Arc<HeldChips>,
    held: Vec<(AccountId, u64)>,
) {
    let total = held.iter().fold(0u64, |t, (_, n)| t.saturating_add(*n));
    crate::metrics::inc(&metrics.refunds_pending);
    metrics.chips_held.fetch_add(total, Relaxed);
    registry.change(&held, true);
    let mut pause = FIRST_PAUSE;
    loop {
        tokio::time::sleep(pause).await;
        match recover_one(&path, &desk).await {
            Ok(r) => {
                tracing::info!(room = %r.room, hand = %r.hand_id, "voided hand refunded after a chip service outage");
                break;
            }
            Err(LedgerError::Unsettled | LedgerError::Chip(_)) => pause = longer(pause),
            // Out of file descriptors: they come back.
            Err(LedgerError::Journal(e)) if crate::archive::out_of_descriptors(&e) => {
                tracing::warn!(journal = %path.display(), error = %e, "refund waits for file descriptors");
                pause = longer(pause)
            }
            Err(e) => {
                tracing::error!(journal = %path.display(), error = %e, "refund failed; a restart retries it");
                break;
            }
        }
    }
    crate::metrics::dec(&metrics.refunds_pending);
    let _ = metrics.chips_held.fetch_update(Relaxed, Relaxed, |v| Some(v.saturating_sub(total)));
    registry.change(&held, false);
}

async fn recover_one(path: &Path, desk: &ChipDesk) -> Result<Recovered, LedgerError> {
    let text = fs::read_to_string(path)?;
    let (mut room, mut hand_id, mut hand_number) = (String::new(), String::new(), None);
    let mut ops: Vec<HandOp> = Vec::new();
    let mut ended: Option<String> = None;
    // The dealer's fee recorded with `complete`, and the operations since.
    let mut complete: Option<(Option<Chips>, usize)> = None;
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        // A torn last line (crash mid-write) is skipped; its op is re-issued
        // below only if its intent line survived.
        let Ok(l) = serde_json::from_str::<JournalLine>(line) else { continue };
        match l {
            JournalLine::Begin { room: r, hand_id: h, hand_number: n, .. } => {
                room = r;
                hand_id = h;
                hand_number = n;
            }
            JournalLine::Intent { op } => ops.push(op),
            JournalLine::Status { n, status, .. } => {
                if let Some(o) = ops.iter_mut().find(|o| o.n == n) {
                    o.status = Some(status);
                }
            }
            JournalLine::Complete { fee } => complete = Some((fee, ops.len())),
            JournalLine::Void => complete = None,
            JournalLine::End { outcome } => ended = Some(outcome),
        }
    }
    let journal = RoomJournal::open(path.parent().and_then(Path::parent).unwrap_or(Path::new(".")))?;
    let f = OpenOptions::new().read(true).append(true).open(path)?;
    let mut l = HandLedger::unjournaled(&room, &hand_id);
    l.ops = ops;
    l.journal = Some((path.to_path_buf(), f));
    l.sink = Some(journal);
    let outcome = if let Some(how) = ended {
        // Ended before the crash; only its journal was still to be closed.
        if how.starts_with("voided") {
            RecoveredAs::Refunded
        } else {
            RecoveredAs::Ended
        }
    } else if desk.settles_hands() {
        // The provider's own journal and reconciliation settled or refunded
        // the hand where the chips are held; nothing moves from here.
        l.write(&JournalLine::End { outcome: "reconciled-by-provider".into() })?;
        RecoveredAs::ByProvider
    } else if let Some((fee, ops_before)) = complete {
        // The hand was played out: finish its payouts, the dealer's fee
        // included when the crash came before it was asked for.
        settle_uncertain(&mut l, desk).await?;
        if let Some(fee) = fee.filter(|f| f.0 > 0 && l.ops.len() == ops_before) {
            let dealer = desk.dealer_account.clone();
            match l.run(desk, ChipOpKind::Credit, &dealer, fee, "commission and rake").await {
                Ok(_) => {}
                Err(LedgerError::Chip(e)) if e.is_retryable() => return Err(LedgerError::Unsettled),
                Err(e) => return Err(e),
            }
        }
        l.check_conservation()?;
        l.write(&JournalLine::End { outcome: "settled-after-restart".into() })?;
        RecoveredAs::Settled
    } else {
        refund_ops(&mut l, desk).await?;
        l.check_conservation()?;
        l.write(&JournalLine::End { outcome: "voided-after-restart".into() })?;
        RecoveredAs::Refunded
    };
    let totals = l.totals();
    l.close_journal()?;
    Ok(Recovered { room, hand_id, totals, outcome, hand_number })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicBool, Ordering};

    fn acct(s: &str) -> AccountId {
        AccountId::new(s).unwrap()
    }

    /// Local chips that can be told to time out.
    struct Flaky {
        inner: LocalChips,
        down: AtomicBool,
    }

    #[async_trait]
    impl ChipProvider for Flaky {
        fn name(&self) -> &'static str {
            "flaky"
        }
        async fn balance(&self, a: &AccountId) -> Result<Chips, ChipError> {
            self.inner.balance(a).await
        }
        async fn debit(
            &self,
            k: &IdempotencyKey,
            a: &AccountId,
            x: Chips,
            m: &str,
        ) -> Result<Chips, ChipError> {
            let r = self.inner.debit(k, a, x, m).await;
            if self.down.load(Ordering::SeqCst) {
                return Err(ChipError::Unreachable("down".into()));
            }
            r
        }
        async fn credit(
            &self,
            k: &IdempotencyKey,
            a: &AccountId,
            x: Chips,
            m: &str,
        ) -> Result<Chips, ChipError> {
            let r = self.inner.credit(k, a, x, m).await;
            if self.down.load(Ordering::SeqCst) {
                return Err(ChipError::Unreachable("down".into()));
            }
            r
        }
        async fn settle(&self, k: &IdempotencyKey, ops: &[claw_chips::ChipOp]) -> Result<(), ChipError> {
            self.inner.settle(k, ops).await
        }
    }

    fn desk(p: Arc<dyn ChipProvider>) -> ChipDesk {
        ChipDesk::new(p, acct("dealer:x"), Duration::from_secs(5), 2)
    }

    #[tokio::test]
    async fn settle_and_void_conserve_chips() {
        let chips = Arc::new(LocalChips::new());
        chips.grant(&acct("a"), Chips(100)).await.unwrap();
        chips.grant(&acct("b"), Chips(100)).await.unwrap();
        let d = desk(chips.clone());
        let dir = tempfile::tempdir().unwrap();

        let mut l = HandLedger::open("r", "h1", Some(dir.path()), 0).unwrap();
        l.run(&d, ChipOpKind::Debit, &acct("a"), Chips(10), "bet").await.unwrap();
        l.run(&d, ChipOpKind::Debit, &acct("b"), Chips(10), "bet").await.unwrap();
        // A refused debit moves nothing and is recorded as refused.
        assert!(l.run(&d, ChipOpKind::Debit, &acct("b"), Chips(1000), "bet").await.is_err());
        assert!(!l.has_uncertain());
        assert!(l.check_conservation().is_err());
        l.run(&d, ChipOpKind::Credit, &acct("a"), Chips(20), "pot").await.unwrap();
        assert_eq!(l.ops()[0].key.as_str(), "r/h1/0");
        l.close_settled().unwrap();
        assert_eq!(chips.balance(&acct("a")).await.unwrap(), Chips(110));
        assert!(dir.path().join("chips.jsonl").exists());
        assert_eq!(fs::read_dir(dir.path().join("open")).unwrap().count(), 0);

        let mut l = HandLedger::open("r", "h2", Some(dir.path()), 0).unwrap();
        l.run(&d, ChipOpKind::Debit, &acct("a"), Chips(30), "bet").await.unwrap();
        l.run(&d, ChipOpKind::Credit, &acct("b"), Chips(5), "returned").await.unwrap();
        let t = l.void(&d).await.unwrap();
        assert_eq!(t.debits, t.credits);
        assert_eq!(chips.balance(&acct("a")).await.unwrap(), Chips(110));
        assert_eq!(chips.balance(&acct("b")).await.unwrap(), Chips(90));
        assert_eq!(chips.total().await, 200);
    }

    #[tokio::test]
    async fn undo_gives_back_one_step() {
        let chips = Arc::new(LocalChips::new());
        chips.grant(&acct("a"), Chips(10)).await.unwrap();
        let d = desk(chips.clone());
        let mut l = HandLedger::open("r", "h", None, 0).unwrap();
        l.run(&d, ChipOpKind::Debit, &acct("a"), Chips(4), "blind").await.unwrap();
        let m = l.mark();
        l.run(&d, ChipOpKind::Debit, &acct("a"), Chips(3), "bet").await.unwrap();
        assert!(l.run(&d, ChipOpKind::Debit, &acct("a"), Chips(30), "bet").await.is_err());
        l.undo_since(&d, m).await.unwrap();
        assert_eq!(chips.balance(&acct("a")).await.unwrap(), Chips(6));
        l.run(&d, ChipOpKind::Credit, &acct("a"), Chips(4), "blind back").await.unwrap();
        l.close_settled().unwrap();
        assert_eq!(chips.balance(&acct("a")).await.unwrap(), Chips(10));
    }

    #[tokio::test]
    async fn uncertain_ops_are_settled_by_asking_again() {
        let chips = Arc::new(Flaky { inner: LocalChips::new(), down: AtomicBool::new(false) });
        chips.inner.grant(&acct("a"), Chips(100)).await.unwrap();
        let d = desk(chips.clone());
        let mut l = HandLedger::open("r", "h", None, 0).unwrap();
        chips.down.store(true, Ordering::SeqCst);
        // Applied by the ledger but the answer is lost.
        assert!(l.run(&d, ChipOpKind::Debit, &acct("a"), Chips(40), "bet").await.is_err());
        assert!(l.has_uncertain());
        assert!(matches!(l.void(&d).await, Err(LedgerError::Unsettled)));
        chips.down.store(false, Ordering::SeqCst);
        let mut l = HandLedger::open("r", "h", None, 0).unwrap();
        assert!(l.run(&d, ChipOpKind::Debit, &acct("a"), Chips(40), "bet").await.is_ok());
        l.void(&d).await.unwrap();
        assert_eq!(chips.inner.balance(&acct("a")).await.unwrap(), Chips(100));
    }

    #[tokio::test]
    async fn every_journal_line_is_synced_before_the_call_it_records() {
        let chips = Arc::new(LocalChips::new());
        chips.grant(&acct("a"), Chips(100)).await.unwrap();
        let d = desk(chips.clone());
        let dir = tempfile::tempdir().unwrap();
        let mut l = HandLedger::open("r", "h", Some(dir.path()), 0).unwrap();
        l.run(&d, ChipOpKind::Debit, &acct("a"), Chips(10), "bet").await.unwrap();
        l.run(&d, ChipOpKind::Credit, &acct("a"), Chips(10), "pot").await.unwrap();
        let on_disk = fs::read_to_string(l.journal_path().unwrap()).unwrap().lines().count() as u64;
        // begin + (intent, status) × 2, each followed by fsync.
        assert_eq!(on_disk, 5);
        assert_eq!(l.synced_lines(), on_disk);
    }

    #[test]
    fn a_period_budget_refuses_beyond_its_limit_until_the_next_window() {
        let t0 = std::time::Instant::now();
        let day = Duration::from_secs(86_400);
        let mut b = PeriodBudget::new(20_000, day);
        assert!(b.try_take(t0, 10_000));
        assert!(b.try_take(t0 + Duration::from_secs(60), 10_000));
        assert!(!b.try_take(t0 + Duration::from_secs(120), 10_000), "the day's 20 000 are used");
        assert!(!b.try_take(t0 + day - Duration::from_secs(1), 1));
        assert!(b.try_take(t0 + day, 10_000), "a new window");
        assert!(!PeriodBudget::new(5, day).try_take(t0, 6));
    }

    #[tokio::test]
    async fn a_refund_the_service_did_not_answer_is_retried_in_the_background() {
        let chips = Arc::new(Flaky { inner: LocalChips::new(), down: AtomicBool::new(false) });
        chips.inner.grant(&acct("a"), Chips(100)).await.unwrap();
        let d = desk(chips.clone());
        let data = tempfile::tempdir().unwrap();
        let jdir = data.path().join("rooms").join("r").join("journal");
        let mut l = HandLedger::open("r", "h", Some(&jdir), 0).unwrap();
        l.run(&d, ChipOpKind::Debit, &acct("a"), Chips(40), "bet").await.unwrap();
        let (path, held) = (l.journal_path().unwrap().to_path_buf(), l.held());
        assert_eq!(held, 40);
        let by = l.held_by();
        assert_eq!(by, vec![(acct("a"), 40)]);
        chips.down.store(true, Ordering::SeqCst);
        assert!(matches!(l.void(&d).await, Err(LedgerError::Unsettled)));
        let metrics = Arc::new(Metrics::default());
        let registry = Arc::new(HeldChips::default());
        let task = tokio::spawn(refund_in_background(
            path.clone(),
            d.clone(),
            Arc::clone(&metrics),
            Arc::clone(&registry),
            by,
        ));
        tokio::time::sleep(Duration::from_millis(100)).await;
        assert_eq!(metrics.refunds_pending.load(Relaxed), 1);
        assert_eq!(metrics.chips_held.load(Relaxed), 40);
        assert_eq!(registry.of(&acct("a")), Chips(40), "what my-status shows");
        assert!(metrics.render().contains("claw_chips_held 40"));
        // The service comes back: the refund goes through without a restart.
        chips.down.store(false, Ordering::SeqCst);
        tokio::time::timeout(Duration::from_secs(60), task).await.expect("guard: refund").unwrap();
        assert_eq!(chips.inner.balance(&acct("a")).await.unwrap(), Chips(100));
        assert_eq!(metrics.refunds_pending.load(Relaxed), 0);
        assert_eq!(metrics.chips_held.load(Relaxed), 0);
        assert_eq!(registry.of(&acct("a")), Chips(0));
        assert!(!path.exists(), "journal archived");
    }

    const HAND: &str = "00112233445566778899aabbccddeeff";

    /// Issue #28: a crash after the `complete` line and before the dealer's
    /// fee was asked for: the restart settles the hand, fee included (it
    /// used to fail conservation and leave the journal open), and keeps the
    /// number the hand was dealt under.
    #[tokio::test]
    async fn a_complete_hand_is_settled_after_a_crash_with_the_dealers_fee() {
        let chips = Arc::new(LocalChips::new());
        chips.grant(&acct("a"), Chips(100)).await.unwrap();
        chips.grant(&acct("b"), Chips(100)).await.unwrap();
        let d = desk(chips.clone());
        let data = tempfile::tempdir().unwrap();
        let jdir = data.path().join("rooms").join("r").join("journal");
        {
            let j = RoomJournal::open(&jdir).unwrap();
            let mut l = HandLedger::open_in(&j, "r", HAND, Some(41), 0).unwrap();
            l.run(&d, ChipOpKind::Debit, &acct("a"), Chips(10), "bet").await.unwrap();
            l.run(&d, ChipOpKind::Debit, &acct("b"), Chips(10), "bet").await.unwrap();
            l.run(&d, ChipOpKind::Credit, &acct("a"), Chips(17), "pot").await.unwrap();
            l.mark_complete(Chips(3)).unwrap();
            // Crash: dropped before the fee.
        }
        let r = recover(data.path(), &d).await;
        let rec = r[0].as_ref().unwrap();
        assert_eq!((rec.outcome, rec.hand_number), (RecoveredAs::Settled, Some(41)));
        assert_eq!(rec.totals.debits, rec.totals.credits);
        assert_eq!(chips.balance(&acct("dealer:x")).await.unwrap(), Chips(3), "the fee is paid");
        assert_eq!(chips.balance(&acct("a")).await.unwrap(), Chips(107));
        assert_eq!(chips.total().await, 200);
        assert!(recover(data.path(), &d).await.is_empty(), "once");
        assert_eq!(Archive::open(data.path(), "r").unwrap().next_hand_number(), 42, "number 41 stays used");
    }

    /// Issue #28: a hand filed at its end whose settlement a crash cut off
    /// is refunded at restart; nobody saw it end (its end is sent after
    /// both), so its file is set aside as voided, not left as a finished
    /// hand whose chips went back.
    #[tokio::test]
    async fn a_refunded_hand_found_on_file_is_set_aside_as_voided() {
        use claw_protocol::messages::{EntropyMode, EventBody, HandPrepare};
        let chips = Arc::new(LocalChips::new());
        chips.grant(&acct("a"), Chips(100)).await.unwrap();
        let d = desk(chips.clone());
        let data = tempfile::tempdir().unwrap();
        let jdir = data.path().join("rooms").join("r").join("journal");
        let id: claw_protocol::HandId = HAND.parse().unwrap();
        let dealer = claw_protocol::Identity::from_seed([9; 32]);
        let mut b = claw_protocol::transcript::TranscriptBuilder::with_header(id, dealer.id(), "r");
        let body = EventBody::HandPrepare(HandPrepare {
            hand_number: 7,
            seed_commitment: claw_protocol::sha256(&[b"s"]),
            entropy: EntropyMode::Dealer,
            players: Vec::new(),
            seed_timeout_ms: 0,
        });
        b.append(&dealer, &body).unwrap();
        let archive = Archive::open(data.path(), "r").unwrap();
        archive.stage(7, &b.into_transcript(), None).unwrap();
        {
            let j = RoomJournal::open(&jdir).unwrap();
            let mut l = HandLedger::open_in(&j, "r", HAND, Some(7), 0).unwrap();
            l.run(&d, ChipOpKind::Debit, &acct("a"), Chips(30), "bet").await.unwrap();
        }
        let r = recover(data.path(), &d).await;
        assert_eq!(r[0].as_ref().unwrap().outcome, RecoveredAs::Refunded);
        assert_eq!(chips.balance(&acct("a")).await.unwrap(), Chips(100));
        assert!(archive.files().is_empty(), "not a finished hand any more");
        assert!(archive.dir().join("voided").join(format!("00000007-{HAND}.jsonl")).exists());
        assert_eq!(archive.next_hand_number(), 8);
    }

    /// Journals written before issue #28 (no hand number, no fee with
    /// `complete`) still read.
    #[test]
    fn older_journal_lines_still_read() {
        let begin: JournalLine =
            serde_json::from_str(r#"{"kind":"begin","room":"r","hand_id":"h","at_ms":1}"#).unwrap();
        assert!(matches!(begin, JournalLine::Begin { hand_number: None, .. }));
        let complete: JournalLine = serde_json::from_str(r#"{"kind":"complete"}"#).unwrap();
        assert!(matches!(complete, JournalLine::Complete { fee: None }));
        let line = serde_json::to_string(&JournalLine::Complete { fee: Some(Chips(3)) }).unwrap();
        assert_eq!(line, r#"{"kind":"complete","fee":3}"#);
    }

    /// Closing a hand's journal reads it back through its own descriptor
    /// and appends to the room's open log: no file is opened (issue #28: a
    /// process out of descriptors still closes its journals).
    #[tokio::test]
    async fn closing_a_journal_opens_no_file() {
        let chips = Arc::new(LocalChips::new());
        chips.grant(&acct("a"), Chips(100)).await.unwrap();
        let d = desk(chips.clone());
        let data = tempfile::tempdir().unwrap();
        let j = RoomJournal::open(data.path()).unwrap();
        let mut l = HandLedger::open_in(&j, "r", "h", None, 0).unwrap();
        l.run(&d, ChipOpKind::Debit, &acct("a"), Chips(5), "bet").await.unwrap();
        l.run(&d, ChipOpKind::Credit, &acct("a"), Chips(5), "pot").await.unwrap();
        l.end_settled().unwrap();
        let path = l.journal_path().unwrap().to_path_buf();
        let lines = fs::read_to_string(&path).unwrap();
        // Hide the directory's files from any new open: only descriptors
        // already open can finish the job.
        let moved = data.path().join("elsewhere");
        fs::rename(data.path().join("chips.jsonl"), &moved).unwrap();
        l.close_journal().unwrap();
        assert!(l.is_closed() && !path.exists());
        assert_eq!(fs::read_to_string(&moved).unwrap(), lines, "appended through the open log");
    }

    #[tokio::test]
    async fn recovery_refunds_open_hands_once() {
        let chips = Arc::new(LocalChips::new());
        chips.grant(&acct("a"), Chips(100)).await.unwrap();
        let d = desk(chips.clone());
        let data = tempfile::tempdir().unwrap();
        let jdir = data.path().join("rooms").join("r").join("journal");
        {
            let mut l = HandLedger::open("r", "h9", Some(&jdir), 0).unwrap();
            l.run(&d, ChipOpKind::Debit, &acct("a"), Chips(25), "commission").await.unwrap();
            l.run(&d, ChipOpKind::Debit, &acct("a"), Chips(25), "bet").await.unwrap();
            // Crash: the ledger is dropped without settling.
        }
        // An intent whose call never happened (crash before the call).
        let mut f = OpenOptions::new().append(true).open(jdir.join("open").join("h9.jsonl")).unwrap();
        let op = HandOp {
            n: 2,
            key: IdempotencyKey::new("r/h9/2").unwrap(),
            kind: ChipOpKind::Debit,
            account: acct("a"),
            amount: Chips(7),
            memo: "bet".into(),
            status: None,
        };
        writeln!(f, "{}", serde_json::to_string(&JournalLine::Intent { op }).unwrap()).unwrap();
        writeln!(f, "{{\"kind\":\"sta").unwrap(); // torn line
        drop(f);
        assert_eq!(chips.balance(&acct("a")).await.unwrap(), Chips(50));
        let r = recover(data.path(), &d).await;
        assert_eq!(r.len(), 1);
        let rec = r[0].as_ref().unwrap();
        assert_eq!(rec.hand_id, "h9");
        assert_eq!(rec.totals.debits, rec.totals.credits);
        assert_eq!(chips.balance(&acct("a")).await.unwrap(), Chips(100));
        // Second run: nothing open, nothing moves.
        assert!(recover(data.path(), &d).await.is_empty());
        assert_eq!(chips.balance(&acct("a")).await.unwrap(), Chips(100));
        assert!(fs::read_to_string(jdir.join("chips.jsonl")).unwrap().contains("voided-after-restart"));
    }
}
