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
//! that a crash interrupted, and [`recover`] refunds it exactly once.

use std::collections::BTreeMap;
use std::fs::{self, File, OpenOptions};
use std::io::Write;
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
    Complete,
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

/// The chip operations of one hand: keys, journal, totals, refunds.
pub struct HandLedger {
    room: String,
    hand_id: String,
    ops: Vec<HandOp>,
    journal: Option<(PathBuf, File)>,
    log_path: Option<PathBuf>,
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
        let mut l = HandLedger {
            room: room.to_owned(),
            hand_id: hand_id.to_owned(),
            ops: Vec::new(),
            journal: None,
            log_path: None,
            synced: 0,
            sync_ops: true,
        };
        if let Some(dir) = journal_dir {
            let open = dir.join("open");
            fs::create_dir_all(&open)?;
            let path = open.join(format!("{hand_id}.jsonl"));
            let f = OpenOptions::new().create(true).append(true).open(&path)?;
            l.journal = Some((path, f));
            l.log_path = Some(dir.join("chips.jsonl"));
            l.write(&JournalLine::Begin {
                room: room.to_owned(),
                hand_id: hand_id.to_owned(),
                at_ms: now_ms,
            })?;
        }
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
                JournalLine::Intent { .. } | JournalLine::Status { .. } | JournalLine::Complete
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

    /// Records that the game is over and every game movement is done: a
    /// restart completes the remaining payouts (dealer commission) instead
    /// of refunding the hand.
    pub fn mark_complete(&mut self) -> Result<(), LedgerError> {
        self.write(&JournalLine::Complete)
    }

    /// Closes a settled hand's journal.
    pub fn close_settled(mut self) -> Result<Totals, LedgerError> {
        let t = self.check_conservation()?;
        self.write(&JournalLine::End { outcome: "settled".into() })?;
        self.archive()?;
        Ok(t)
    }

    /// Voids the hand: settles uncertain operations by asking again with the
    /// same key, then gives every account back its net change. Closes the
    /// journal when everything is settled; otherwise leaves it open for
    /// [`recover`] and returns `Unsettled`.
    pub async fn void(mut self, desk: &ChipDesk) -> Result<Totals, LedgerError> {
        self.write(&JournalLine::Void)?;
        refund_ops(&mut self, desk).await?;
        let t = self.check_conservation()?;
        self.write(&JournalLine::End { outcome: "voided".into() })?;
        self.archive()?;
        Ok(t)
    }

    fn archive(&mut self) -> Result<(), LedgerError> {
        if let (Some((path, f)), Some(log)) = (self.journal.take(), self.log_path.take()) {
            drop(f);
            let content = fs::read(&path)?;
            let mut out = OpenOptions::new().create(true).append(true).open(&log)?;
            out.write_all(&content)?;
            out.sync_data()?;
            fs::remove_file(&path)?;
            if let Some(dir) = path.parent() {
                File::open(dir)?.sync_all()?;
            }
        }
        Ok(())
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
}

/// Refunds every hand whose journal is still open under
/// `data_dir/rooms/*/journal/open/` (a crash interrupted it); with a
/// provider that settles per hand, first lets it reconcile its hands and
/// then only closes these journals. Idempotent:
/// operations are re-issued with their original keys and refunds carry keys
/// derived from the hand, so running it twice moves nothing more.
pub async fn recover(data_dir: &Path, desk: &ChipDesk) -> Vec<Result<Recovered, (PathBuf, LedgerError)>> {
    let mut out = Vec::new();
    if desk.settles_hands() {
        match desk.reconcile().await {
            Ok(r) => tracing::info!(
                provider = desk.provider_name(),
                settled = r.settled.len(),
                refunded = r.refunded.len(),
                already = r.already.len(),
                lapsed = r.lapsed.len(),
                "chip provider reconciled interrupted hands"
            ),
            Err(e) => {
                // Leave the journals open: the next start reconciles again.
                tracing::error!(provider = desk.provider_name(), error = %e, "chip provider reconciliation failed");
                return out;
            }
        }
    }
    let rooms = data_dir.join("rooms");
    let Ok(entries) = fs::read_dir(&rooms) else { return out };
    for room in entries.flatten() {
        let open = room.path().join("journal").join("open");
        let Ok(files) = fs::read_dir(&open) else { continue };
        for f in files.flatten() {
            let path = f.path();
            if path.extension().and_then(|e| e.to_str()) != Some("jsonl") {
                continue;
            }
            out.push(recover_one(&path, desk).await.map_err(|e| (path.clone(), e)));
        }
    }
    out
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
    let (mut room, mut hand_id) = (String::new(), String::new());
    let mut ops: Vec<HandOp> = Vec::new();
    let mut ended = false;
    let mut complete = false;
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        // A torn last line (crash mid-write) is skipped; its op is re-issued
        // below only if its intent line survived.
        let Ok(l) = serde_json::from_str::<JournalLine>(line) else { continue };
        match l {
            JournalLine::Begin { room: r, hand_id: h, .. } => {
                room = r;
                hand_id = h;
            }
            JournalLine::Intent { op } => ops.push(op),
            JournalLine::Status { n, status, .. } => {
                if let Some(o) = ops.iter_mut().find(|o| o.n == n) {
                    o.status = Some(status);
                }
            }
            JournalLine::Complete => complete = true,
            JournalLine::Void => complete = false,
            JournalLine::End { .. } => ended = true,
        }
    }
    let dir = path.parent().and_then(Path::parent).map(Path::to_path_buf);
    let f = OpenOptions::new().append(true).open(path)?;
    let mut l = HandLedger {
        room: room.clone(),
        hand_id: hand_id.clone(),
        ops,
        journal: Some((path.to_path_buf(), f)),
        log_path: dir.map(|d| d.join("chips.jsonl")),
        synced: 0,
        sync_ops: true,
    };
    if !ended && desk.settles_hands() {
        // The provider's own journal and reconciliation settled or refunded
        // the hand where the chips are held; nothing moves from here.
        l.write(&JournalLine::End { outcome: "reconciled-by-provider".into() })?;
    } else if !ended && complete {
        // The hand was played out: finish its payouts.
        settle_uncertain(&mut l, desk).await?;
        l.check_conservation()?;
        l.write(&JournalLine::End { outcome: "settled-after-restart".into() })?;
    } else if !ended {
        refund_ops(&mut l, desk).await?;
        l.check_conservation()?;
        l.write(&JournalLine::End { outcome: "voided-after-restart".into() })?;
    }
    let totals = l.totals();
    l.archive()?;
    Ok(Recovered { room, hand_id, totals })
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
