//! Chip handling for hands: the I/O side of the sans-IO chip ledger
//! ([`claw_chips::ledger`], where every decision lives: keys, journal
//! lines, retries, settlement, conservation, void, refunds, recovery).
//! [`LedgerIo`] runs its effects: journal files through the one journal
//! design ([`claw_chips::hand_journal`], off the async workers) and
//! provider calls (one attempt each: the ledger times and retries them).
//!
//! A journal is one JSON-lines file per running hand under
//! `rooms/<room>/journal/open/`. When the hand settles or is voided its
//! lines are appended to `rooms/<room>/journal/chips.jsonl` and the open
//! file is removed; whatever is still open when the node starts belongs to
//! a hand that a crash interrupted, and [`recover`] finishes it exactly
//! once: settled when its `complete` line (with the dealer's fee) was
//! written, else refunded. The log and the `open/` directory are opened
//! once per room and a hand's own file is read back through its open
//! descriptor, so closing a hand's journal needs no new file descriptor: a
//! process out of descriptors still settles its hands.
//!
//! Welcome grants are recorded in `welcome.jsonl` in the data directory
//! before they are asked for ([`WelcomeDesk`]), so their budgets hold
//! across restarts.

use std::collections::{BTreeMap, HashMap};
use std::fs::OpenOptions;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use claw_chips::hand_journal::{read_lines, HandFile, Journal};
use claw_chips::ledger::welcome::{DayCaps, Decision, GrantKind, GrantLine, WelcomeBook, WelcomeCaps};
use claw_chips::ledger::{
    HandStep, JournalLine, Ledger, LedgerEffect, LedgerInput, Outcome, Policy, Report, Settlement,
};
use claw_chips::{
    AccountId, ChipError, ChipOp, ChipProvider, HandRef, IdempotencyKey, LocalChips, Reconciled,
};
use claw_protocol::Chips;
use tokio::sync::mpsc;

pub use claw_chips::ledger::{LedgerError, Recovered, RecoveredAs, Totals};

use crate::archive::Archive;
use crate::metrics::{dec, inc, Metrics};

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

/// The node's access to chips: the provider, its capability, call policy.
#[derive(Clone)]
pub struct ChipDesk {
    provider: Arc<dyn ChipProvider>,
    settlement: Settlement,
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
        let settlement = Settlement::of(provider.as_ref());
        ChipDesk { provider, settlement, timeout, attempts: attempts.max(1), dealer_account }
    }

    /// The provider's name, for logs.
    pub fn provider_name(&self) -> &'static str {
        self.provider.name()
    }

    /// Moves `amount` from `from` to `to` in one atomic, idempotent call
    /// (an operator-funded grant: refused, nothing moved, when `from`
    /// cannot cover it).
    pub async fn transfer(
        &self,
        key: &IdempotencyKey,
        from: &AccountId,
        to: &AccountId,
        amount: Chips,
        memo: &str,
    ) -> Result<(), ChipError> {
        let ops = [
            claw_chips::AccountOp::new(ChipOp::Debit, from, amount, memo),
            claw_chips::AccountOp::new(ChipOp::Credit, to, amount, memo),
        ];
        // Same key each attempt: the provider applies it once.
        self.retrying(true, || self.provider.settle(key, &ops)).await
    }

    /// How the provider moves chips (per call, or per hand).
    pub fn settlement(&self) -> Settlement {
        self.settlement
    }

    /// The ledger's call policy.
    pub fn policy(&self) -> Policy {
        Policy { attempts: self.attempts, call_timeout: self.timeout }
    }

    /// Runs `f` with the call timeout (`bounded`) and retries while the
    /// error is retryable (reads and reconciliation; the ledger times and
    /// retries its own calls).
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
                tokio::time::sleep(claw_chips::ledger::backoff(attempt)).await;
            }
        }
        Err(last)
    }

    /// A balance, with the call timeout and retries.
    pub async fn balance(&self, account: &AccountId) -> Result<Chips, ChipError> {
        self.retrying(true, || self.provider.balance(account)).await
    }

    /// One attempt of a debit or credit, bounded by the call timeout.
    pub async fn call_once(
        &self,
        kind: ChipOp,
        key: &IdempotencyKey,
        account: &AccountId,
        amount: Chips,
        memo: &str,
    ) -> Result<Chips, ChipError> {
        let call = async {
            match kind {
                ChipOp::Debit => self.provider.debit(key, account, amount, memo).await,
                ChipOp::Credit => self.provider.credit(key, account, amount, memo).await,
            }
        };
        tokio::time::timeout(self.timeout, call).await.unwrap_or(Err(ChipError::Timeout))
    }

    /// One attempt of a per-hand provider's step (not bound by the call
    /// timeout: the provider bounds its own transactions).
    pub async fn hand_step(&self, hand: &HandRef, step: &HandStep) -> Result<(), ChipError> {
        match step {
            HandStep::Open(stakes) => self.provider.open_hand(hand, stakes).await,
            HandStep::Close => self.provider.close_hand(hand).await,
            HandStep::Abandon => self.provider.abandon_hand(hand).await,
        }
    }

    /// Finishes the provider's interrupted hands (after a crash).
    pub async fn reconcile(&self) -> Result<Reconciled, ChipError> {
        self.retrying(false, || self.provider.reconcile()).await
    }
}

/// The name of the log of ended hands in a room's journal directory.
const LOG: &str = "chips.jsonl";

/// A room's journal directory.
pub fn journal_dir(data_dir: &Path, room: &str) -> PathBuf {
    data_dir.join("rooms").join(room).join("journal")
}

/// A finished journal effect (the hand's file comes back with it).
pub struct FileDone {
    hand: HandRef,
    file: Option<HandFile>,
    journal: Option<Journal>,
    result: Result<(), String>,
}

/// A completed effect of a [`LedgerIo`].
pub enum Completion {
    /// A provider call answered.
    Input(LedgerInput),
    /// A journal effect finished.
    File(FileDone),
}

/// Runs a [`Ledger`]'s effects: journal files (in `spawn_blocking`, each
/// hand's file owned by the one effect in flight) and provider calls (each
/// in its own task); completions come back on the channel given at
/// creation, to feed with [`LedgerIo::complete`].
pub struct LedgerIo {
    desk: ChipDesk,
    data_dir: PathBuf,
    journals: HashMap<String, Journal>,
    files: HashMap<HandRef, HandFile>,
    done: mpsc::UnboundedSender<Completion>,
    metrics: Option<Arc<Metrics>>,
    held: Option<Arc<HeldChips>>,
}

impl LedgerIo {
    /// Effects against `desk`, journals under `data_dir`.
    pub fn new(
        desk: ChipDesk,
        data_dir: &Path,
        metrics: Option<Arc<Metrics>>,
        held: Option<Arc<HeldChips>>,
    ) -> (LedgerIo, mpsc::UnboundedReceiver<Completion>) {
        let (done, rx) = mpsc::unbounded_channel();
        let io = LedgerIo {
            desk,
            data_dir: data_dir.to_owned(),
            journals: HashMap::new(),
            files: HashMap::new(),
            done,
            metrics,
            held,
        };
        (io, rx)
    }

    /// Starts every effect `ledger` has queued.
    pub fn run<T: Clone>(&mut self, ledger: &mut Ledger<T>) {
        while let Some(e) = ledger.poll_effect() {
            self.start(e);
        }
    }

    /// Takes a completion back: its file, and the ledger's input.
    pub fn complete(&mut self, c: Completion) -> LedgerInput {
        match c {
            Completion::Input(i) => i,
            Completion::File(FileDone { hand, file, journal, result }) => {
                // Open journals and their age, for `/metrics` (an alert on a
                // hand whose chips stay unsettled).
                if let Some(m) = &self.metrics {
                    if journal.is_some() && file.is_some() {
                        m.journals.opened(hand.to_string(), crate::room::unix_ms());
                    } else if file.is_none() && result.is_ok() {
                        m.journals.closed(&hand.to_string());
                    }
                }
                if let Some(j) = journal {
                    self.journals.insert(hand.room.clone(), j);
                }
                if let Some(f) = file {
                    self.files.insert(hand.clone(), f);
                }
                LedgerInput::Journaled { hand, result }
            }
        }
    }

    fn file_job(
        &mut self,
        hand: HandRef,
        f: impl FnOnce(Option<&Journal>, &mut HandFile) -> Result<bool, String> + Send + 'static,
    ) {
        let done = self.done.clone();
        let journal = self.journals.get(&hand.room).cloned();
        let Some(mut file) = self.files.remove(&hand) else {
            let _ = done.send(Completion::File(FileDone {
                hand,
                file: None,
                journal: None,
                result: Err("no journal file".into()),
            }));
            return;
        };
        tokio::spawn(async move {
            let h = hand.clone();
            let r = tokio::task::spawn_blocking(move || {
                let r = f(journal.as_ref(), &mut file);
                (file, r)
            })
            .await;
            let d = match r {
                // `true`: the file is closed for good.
                Ok((file, Ok(closed))) => {
                    FileDone { hand: h, file: (!closed).then_some(file), journal: None, result: Ok(()) }
                }
                Ok((file, Err(e))) => FileDone { hand: h, file: Some(file), journal: None, result: Err(e) },
                Err(e) => FileDone { hand: h, file: None, journal: None, result: Err(e.to_string()) },
            };
            let _ = done.send(Completion::File(d));
        });
    }

    fn start(&mut self, e: LedgerEffect) {
        let done = self.done.clone();
        match e {
            LedgerEffect::Create { hand, first } => {
                let journal = self.journals.get(&hand.room).cloned();
                let dir = journal_dir(&self.data_dir, &hand.room);
                tokio::spawn(async move {
                    let h = hand.clone();
                    let r = tokio::task::spawn_blocking(move || {
                        // Opened once per room (reopened at the next hand if it could not be).
                        let j = match journal {
                            Some(j) => j,
                            None => Journal::with_log(&dir, LOG).map_err(|e| e.to_string())?,
                        };
                        let f = j.create(&h.hand_id, &first).map_err(|e| e.to_string())?;
                        Ok::<_, String>((j, f))
                    })
                    .await;
                    let d = match r {
                        Ok(Ok((j, f))) => FileDone { hand, file: Some(f), journal: Some(j), result: Ok(()) },
                        Ok(Err(e)) => FileDone { hand, file: None, journal: None, result: Err(e) },
                        Err(e) => FileDone { hand, file: None, journal: None, result: Err(e.to_string()) },
                    };
                    let _ = done.send(Completion::File(d));
                });
            }
            LedgerEffect::Append { hand, line, sync } => {
                self.file_job(hand, move |_, f| f.append(&line, sync).map(|()| false).map_err(|e| e.0))
            }
            LedgerEffect::Archive { hand } => self.file_job(hand, |j, f| match j {
                Some(j) => j.close(f).map(|()| true).map_err(|e| e.0),
                None => Err("the room's journal is not open".into()),
            }),
            LedgerEffect::Drop { hand } => {
                if let Some(m) = &self.metrics {
                    m.journals.closed(&hand.to_string());
                }
                self.files.remove(&hand);
            }
            LedgerEffect::Call { hand, id, op } => {
                let desk = self.desk.clone();
                tokio::spawn(async move {
                    let result = desk.call_once(op.kind, &op.key, &op.account, op.amount, &op.memo).await;
                    let _ = done.send(Completion::Input(LedgerInput::Answered { hand, id, result }));
                });
            }
            LedgerEffect::Balances { hand, id, accounts } => {
                let desk = self.desk.clone();
                tokio::spawn(async move {
                    let results =
                        futures_util::future::join_all(accounts.iter().map(|a| desk.balance(a))).await;
                    let _ = done.send(Completion::Input(LedgerInput::Balances { hand, id, results }));
                });
            }
            LedgerEffect::Provider { hand, id, step } => {
                let desk = self.desk.clone();
                tokio::spawn(async move {
                    let result = desk.hand_step(&hand, &step).await.map(|()| Chips::ZERO);
                    let _ = done.send(Completion::Input(LedgerInput::Answered { hand, id, result }));
                });
            }
            LedgerEffect::Report(r) => self.report(r),
        }
    }

    fn report(&self, r: Report) {
        let m = self.metrics.as_deref();
        match r {
            Report::Holding { hand, held } => {
                tracing::warn!(%hand, "the chip service did not answer a refund; retried in the background");
                if let Some(m) = m {
                    inc(&m.settlement_retries);
                }
                let total = held.iter().fold(0u64, |t, (_, n)| t.saturating_add(*n));
                if let Some(m) = m {
                    inc(&m.refunds_pending);
                    m.chips_held.fetch_add(total, Relaxed);
                }
                if let Some(h) = &self.held {
                    h.change(&held, true);
                }
            }
            Report::Released { hand, held } => {
                tracing::info!(%hand, "voided hand refunded after a chip service outage");
                let total = held.iter().fold(0u64, |t, (_, n)| t.saturating_add(*n));
                if let Some(m) = m {
                    dec(&m.refunds_pending);
                    let _ = m.chips_held.fetch_update(Relaxed, Relaxed, |v| Some(v.saturating_sub(total)));
                }
                if let Some(h) = &self.held {
                    h.change(&held, false);
                }
            }
            Report::ProviderPending { hand, error } => {
                tracing::warn!(%hand, %error, "not confirmed by the chip provider; retrying in the background");
                if let Some(m) = m {
                    inc(&m.settlement_retries);
                    inc(&m.refunds_pending);
                }
            }
            Report::ProviderFinished { hand, error } => {
                if let Some(error) = error {
                    tracing::error!(%hand, %error, "refused by the chip provider; a restart reconciles it");
                }
                if let Some(m) = m {
                    dec(&m.refunds_pending);
                }
            }
            Report::ArchiveRetry { hand, error } => {
                tracing::warn!(%hand, %error, "closing a chip journal failed; retrying");
                if let Some(m) = m {
                    inc(&m.settlement_retries);
                }
            }
            Report::LeftOut { hand, account, error } => {
                tracing::warn!(%hand, %account, %error, "no stake: left out of the hand")
            }
        }
    }
}

/// An interrupted hand's journal found at start.
struct Found {
    path: PathBuf,
    journal: Journal,
    lines: Vec<JournalLine>,
    file: HandFile,
}

/// Every journal left open under `data_dir/rooms/*/journal/open/`.
fn find_open(data_dir: &Path) -> Vec<Result<Found, (PathBuf, LedgerError)>> {
    let mut out = Vec::new();
    let Ok(rooms) = std::fs::read_dir(data_dir.join("rooms")) else { return out };
    for room in rooms.flatten() {
        let dir = room.path().join("journal");
        if !dir.join("open").is_dir() {
            continue;
        }
        let journal = match Journal::with_log(&dir, LOG) {
            Ok(j) => j,
            Err(e) => {
                out.push(Err((dir, LedgerError::Journal(e.0))));
                continue;
            }
        };
        let paths = match journal.open_files() {
            Ok(p) => p,
            Err(e) => {
                out.push(Err((dir, LedgerError::Journal(e.0))));
                continue;
            }
        };
        for path in paths {
            let found = read_lines::<JournalLine>(&path).and_then(|lines| {
                let file = journal.reopen(&path)?;
                Ok(Found { path: path.clone(), journal: journal.clone(), lines, file })
            });
            out.push(found.map_err(|e| (path, LedgerError::Journal(e.0))));
        }
    }
    out
}

/// Finishes every hand whose journal is still open under
/// `data_dir/rooms/*/journal/open/` (a crash interrupted it): the ledger
/// decides ([`Ledger::recover`]: settled when its game was complete,
/// refunded otherwise; with a provider that settles per hand, that
/// provider reconciles first and the journals are only closed).
/// Idempotent: operations are re-issued with their original keys and
/// refunds carry keys derived from the hand.
///
/// The transcript archive is brought in line: a hand is filed before its
/// end is sent and settled before it is sent too, so a refunded hand whose
/// file is in the archive was never seen ending; its file is set aside as
/// voided ([`Archive::void_filed`]). The number each interrupted hand had
/// reserved is kept ([`Archive::reserve`]), so no later hand repeats it.
pub async fn recover(data_dir: &Path, desk: &ChipDesk) -> Vec<Result<Recovered, (PathBuf, LedgerError)>> {
    let mut out = Vec::new();
    let mut refunded_by_provider: Vec<HandRef> = Vec::new();
    if desk.settlement() == Settlement::PerHand {
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
    let dir = data_dir.to_owned();
    let found = tokio::task::spawn_blocking(move || find_open(&dir)).await.unwrap_or_default();
    let (mut io, mut rx) = LedgerIo::new(desk.clone(), data_dir, None, None);
    let mut ledger: Ledger<usize> = Ledger::new(desk.policy(), desk.settlement());
    let mut paths = Vec::new();
    for f in found {
        let Found { path, journal, lines, file } = match f {
            Ok(f) => f,
            Err(e) => {
                out.push(Err(e));
                continue;
            }
        };
        let begin = lines.iter().find_map(|l| match l {
            JournalLine::Begin { room, hand_id, .. } => Some(HandRef::new(room, hand_id)),
            _ => None,
        });
        let Some(hand) = begin else {
            out.push(Err((path, LedgerError::NoBegin)));
            continue;
        };
        io.journals.insert(hand.room.clone(), journal);
        io.files.insert(hand, file);
        ledger.recover(Instant::now(), paths.len(), lines, desk.dealer_account.clone());
        paths.push(path);
    }
    for (i, o) in run_to_idle(&mut io, &mut rx, &mut ledger).await {
        let path = paths[i].clone();
        let r = match o {
            Outcome::Recovered(r) => r,
            other => Err(LedgerError::Journal(format!("unexpected outcome {other:?}"))),
        };
        if let Ok(rec) = &r {
            let (d, rec) = (data_dir.to_owned(), rec.clone());
            let filed = tokio::task::spawn_blocking(move || file_recovered(&d, &rec)).await;
            if let Ok(Err(e)) | Err(e) =
                filed.map_err(|e| crate::archive::ArchiveError::Io(std::io::Error::other(e)))
            {
                tracing::error!(journal = %path.display(), error = %e,
                    "could not bring the transcript archive in line with a recovered hand");
            }
        }
        out.push(r.map_err(|e| (path, e)));
    }
    let d = data_dir.to_owned();
    let _ = tokio::task::spawn_blocking(move || {
        for h in refunded_by_provider {
            if let Err(e) = void_filed(&d, &h.room, &h.hand_id) {
                tracing::error!(room = %h.room, hand = %h.hand_id, error = %e,
                    "could not set aside the file of a hand the chip provider refunded");
            }
        }
    })
    .await;
    out
}

/// Sleeps until `at`; forever without one.
pub async fn sleep_until(at: Option<Instant>) {
    match at {
        Some(t) => tokio::time::sleep_until(tokio::time::Instant::from_std(t)).await,
        None => std::future::pending().await,
    }
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

/// Chips each account has out in running hands, per room (staked, or
/// debited with the answer still out): added to its balance when a grant
/// depends on the balance, so parking chips on one table cannot claim a
/// rescue at another.
#[derive(Debug, Default)]
pub struct StakedChips(std::sync::Mutex<HashMap<String, BTreeMap<AccountId, u64>>>);

impl StakedChips {
    /// Chips `account` has out in the running hands of every room.
    pub fn of(&self, account: &AccountId) -> Chips {
        let Ok(m) = self.0.lock() else { return Chips::ZERO };
        Chips(m.values().filter_map(|r| r.get(account)).fold(0u64, |t, n| t.saturating_add(*n)))
    }

    /// What `room`'s ledger has out now.
    pub fn set(&self, room: &str, now: BTreeMap<AccountId, u64>) {
        let Ok(mut m) = self.0.lock() else { return };
        if now.is_empty() {
            m.remove(room);
        } else if m.get(room) != Some(&now) {
            m.insert(room.to_owned(), now);
        }
    }
}

/// The welcome record's file in the data directory.
const WELCOME_FILE: &str = "welcome.jsonl";

/// Welcome grants with their budgets kept on disk: a grant's line is
/// synced to `welcome.jsonl` before the grant is asked for, and read back
/// at start, so the node's total, the period's budget and "once per
/// account" hold across restarts (issue #28).
pub struct WelcomeDesk {
    book: std::sync::Mutex<WelcomeBook>,
    /// The operator account that pays the daily and rescue grants.
    funder: Option<AccountId>,
    file: PathBuf,
    /// Serialises appends (lines in decision order).
    write: tokio::sync::Mutex<()>,
}

impl WelcomeDesk {
    /// Reads the record in `data_dir` (blocking: call off the async workers).
    pub fn load(data_dir: &Path, caps: WelcomeCaps) -> std::io::Result<WelcomeDesk> {
        WelcomeDesk::load_all(data_dir, caps, [])
    }

    /// [`WelcomeDesk::load`] of a node that also grants the daily or rescue
    /// grants of `days` (blocking: call off the async workers).
    pub fn load_all(
        data_dir: &Path,
        caps: WelcomeCaps,
        days: impl IntoIterator<Item = (GrantKind, DayCaps)>,
    ) -> std::io::Result<WelcomeDesk> {
        let file = data_dir.join(WELCOME_FILE);
        let lines = match std::fs::read_to_string(&file) {
            Ok(text) => text
                .lines()
                .filter(|l| !l.trim().is_empty())
                // A torn last line (a crash mid-write): its grant was never asked for.
                .filter_map(|l| serde_json::from_str::<GrantLine>(l).ok())
                .collect(),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
            Err(e) => return Err(e),
        };
        let days: Vec<(GrantKind, DayCaps)> = days.into_iter().collect();
        let on = days.iter().any(|(k, c)| *k != GrantKind::Welcome && c.amount.0 > 0);
        let mut book = WelcomeBook::replay_all(caps, days, lines);
        // Outcome lines are kept for the daily and rescue grants only.
        if on && book.needs_paid_lines() {
            let mut s = serde_json::to_string(&GrantLine::PaidLines).map_err(std::io::Error::other)?;
            s.push('\n');
            let mut f = OpenOptions::new().create(true).append(true).open(&file)?;
            f.write_all(s.as_bytes())?;
            f.sync_data()?;
            book.apply(&GrantLine::PaidLines);
        }
        Ok(WelcomeDesk {
            book: std::sync::Mutex::new(book),
            funder: None,
            file,
            write: tokio::sync::Mutex::new(()),
        })
    }

    /// The daily and rescue grants are paid from `account`.
    pub fn funded_by(mut self, account: AccountId) -> WelcomeDesk {
        self.funder = Some(account);
        self
    }

    /// The operator account that pays the daily and rescue grants.
    pub fn funder(&self) -> Option<&AccountId> {
        self.funder.as_ref()
    }

    fn book(&self) -> std::sync::MutexGuard<'_, WelcomeBook> {
        self.book.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Claims `account` for this run's one look at it (false: seen or welcomed before).
    pub fn claim(&self, account: &AccountId) -> bool {
        self.book().claim(account)
    }

    /// Decides the daily or rescue grant of `account` at its `balance`.
    pub fn decide_day(&self, kind: GrantKind, account: &AccountId, balance: Chips, now_ms: u64) -> Decision {
        self.book().decide_day(kind, account, balance, now_ms)
    }

    /// Decides a claimed account's grant at its `balance`.
    pub fn decide(&self, account: &AccountId, balance: Chips, now_ms: u64) -> Decision {
        self.book().decide(account, balance, now_ms)
    }

    /// Appends `line`, synced, off the async workers; a line that cannot be
    /// written is taken back from the book (no grant without its record).
    pub async fn record(&self, line: GrantLine) -> Result<(), String> {
        let _order = self.write.lock().await;
        let (path, l) = (self.file.clone(), line.clone());
        let r = tokio::task::spawn_blocking(move || -> std::io::Result<()> {
            let mut s = serde_json::to_string(&l).map_err(std::io::Error::other)?;
            s.push('\n');
            let mut f = OpenOptions::new().create(true).append(true).open(&path)?;
            f.write_all(s.as_bytes())?;
            f.sync_data()
        })
        .await
        .map_err(|e| e.to_string())
        .and_then(|r| r.map_err(|e| e.to_string()));
        if r.is_err() {
            if let GrantLine::Grant { grant, account, amount, at_ms } = line {
                self.book().apply(&GrantLine::Refused { grant, account, amount, at_ms });
            }
        }
        r
    }

    /// The daily and rescue grants decided before a crash whose outcome
    /// was never recorded (asked again at start, same keys).
    pub fn unsettled(&self) -> Vec<GrantLine> {
        self.book().unsettled()
    }

    /// A daily or rescue grant the provider applied: recorded `paid`, so a
    /// restart does not ask for it again.
    pub async fn paid(&self, line: GrantLine) -> Result<(), String> {
        let GrantLine::Grant { grant, account, amount, at_ms } = line else { return Ok(()) };
        let done = GrantLine::Paid { grant, account, amount, at_ms };
        self.book().apply(&done);
        self.record(done).await
    }

    /// A grant refused for good: recorded, and taken back from the budgets.
    pub async fn refused(&self, line: GrantLine) {
        let GrantLine::Grant { grant, account, amount, at_ms } = line else { return };
        let back = GrantLine::Refused { grant, account, amount, at_ms };
        self.book().apply(&back);
        if let Err(e) = self.record(back).await {
            tracing::warn!(error = %e, "could not record a refused welcome grant");
        }
    }
}

/// Runs `ledger`'s effects with `io` until it has no work left; the
/// outcomes of its jobs, by job.
async fn run_to_idle(
    io: &mut LedgerIo,
    rx: &mut mpsc::UnboundedReceiver<Completion>,
    ledger: &mut Ledger<usize>,
) -> BTreeMap<usize, Outcome> {
    let mut out = BTreeMap::new();
    loop {
        io.run(ledger);
        while let Some((i, o)) = ledger.poll_outcome() {
            out.insert(i, o);
        }
        if ledger.is_idle() {
            return out;
        }
        let wake = ledger.poll_timeout();
        tokio::select! {
            Some(c) = rx.recv() => {
                let input = io.complete(c);
                ledger.handle(Instant::now(), input);
            }
            _ = sleep_until(wake) => ledger.handle_timeout(Instant::now()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn acct(s: &str) -> AccountId {
        AccountId::new(s).unwrap()
    }

    fn desk(p: Arc<dyn ChipProvider>) -> ChipDesk {
        ChipDesk::new(p, acct("dealer:x"), Duration::from_secs(5), 2)
    }

    const HAND: &str = "00112233445566778899aabbccddeeff";

    /// Runs `jobs` of one room's ledger over the real journal files.
    async fn run_jobs(data: &Path, d: &ChipDesk, jobs: Vec<claw_chips::ledger::Job>) -> Vec<Outcome> {
        let (mut io, mut rx) = LedgerIo::new(d.clone(), data, None, None);
        let mut ledger: Ledger<usize> = Ledger::new(d.policy(), d.settlement());
        let n = jobs.len();
        for (i, j) in jobs.into_iter().enumerate() {
            ledger.submit(Instant::now(), i, j);
        }
        let out = run_to_idle(&mut io, &mut rx, &mut ledger).await;
        assert_eq!(out.len(), n, "every job has its outcome");
        out.into_values().collect()
    }

    fn journal_lines(path: &Path) -> Vec<JournalLine> {
        read_lines(path).unwrap()
    }

    /// Writes the journal a crash left: `begin` then each line.
    fn crashed_journal(data: &Path, hand: &str, number: Option<u64>, lines: &[JournalLine]) -> PathBuf {
        let j = Journal::with_log(&journal_dir(data, "r"), LOG).unwrap();
        let begin =
            JournalLine::Begin { room: "r".into(), hand_id: hand.into(), at_ms: 0, hand_number: number };
        let mut f = j.create(hand, &begin).unwrap();
        for l in lines {
            f.append(l, true).unwrap();
        }
        f.path().to_owned()
    }

    fn op(n: u32, tag: &str, kind: ChipOp, a: &str, amount: u64, hand: &str) -> claw_chips::ledger::HandOp {
        claw_chips::ledger::HandOp {
            n,
            key: IdempotencyKey::new(format!("r/{hand}/{tag}{n}")).unwrap(),
            kind,
            account: acct(a),
            amount: Chips(amount),
            memo: "bet".into(),
            status: None,
        }
    }

    #[tokio::test]
    async fn a_hand_settles_over_the_real_journal_and_every_line_is_on_disk() {
        use claw_chips::ledger::{Job, Move};
        let chips = Arc::new(LocalChips::new());
        chips.grant(&acct("a"), Chips(100)).await.unwrap();
        chips.grant(&acct("b"), Chips(100)).await.unwrap();
        let d = desk(chips.clone());
        let data = tempfile::tempdir().unwrap();
        let hand = HandRef::new("r", HAND);
        let mv = |kind, a: &str, n| Move { kind, account: acct(a), amount: Chips(n), memo: "bet".into() };
        let out = run_jobs(
            data.path(),
            &d,
            vec![
                Job::Open {
                    hand: hand.clone(),
                    hand_number: Some(3),
                    at_ms: 0,
                    stakers: vec![],
                    cap: Chips(0),
                },
                Job::Moves {
                    hand: hand.clone(),
                    moves: vec![mv(ChipOp::Debit, "a", 10), mv(ChipOp::Debit, "b", 10)],
                    undo_on_refusal: false,
                },
                Job::Moves {
                    hand: hand.clone(),
                    moves: vec![mv(ChipOp::Credit, "a", 19)],
                    undo_on_refusal: false,
                },
                Job::Settle { hand: hand.clone(), fee: Chips(1), dealer: acct("dealer:x") },
            ],
        )
        .await;
        assert_eq!(out[3], Outcome::Done(Ok(())), "{out:?}");
        assert_eq!(chips.balance(&acct("a")).await.unwrap(), Chips(109));
        assert_eq!(chips.balance(&acct("dealer:x")).await.unwrap(), Chips(1));
        assert_eq!(chips.total().await, 200);
        let jdir = journal_dir(data.path(), "r");
        assert_eq!(std::fs::read_dir(jdir.join("open")).unwrap().count(), 0);
        let log = journal_lines(&jdir.join(LOG));
        // begin, 4 × (intent, status), complete, end.
        assert_eq!(log.len(), 11, "{log:?}");
        assert!(matches!(log.last(), Some(JournalLine::End { outcome }) if outcome == "settled"));
    }

    /// Issue #28: a crash after the `complete` line and before the dealer's
    /// fee was asked for: the restart settles the hand, fee included, and
    /// keeps the number the hand was dealt under.
    #[tokio::test]
    async fn a_complete_hand_is_settled_after_a_crash_with_the_dealers_fee() {
        let chips = Arc::new(LocalChips::new());
        // Where the hand's moves left the accounts (100 each before it).
        chips.grant(&acct("a"), Chips(107)).await.unwrap();
        chips.grant(&acct("b"), Chips(90)).await.unwrap();
        let d = desk(chips.clone());
        let data = tempfile::tempdir().unwrap();
        let mut lines = Vec::new();
        let moves = [(ChipOp::Debit, "a", 10), (ChipOp::Debit, "b", 10), (ChipOp::Credit, "a", 17)];
        for (i, (kind, a, n)) in moves.into_iter().enumerate() {
            lines.push(JournalLine::Intent { op: op(i as u32, "", kind, a, n, HAND) });
            lines.push(JournalLine::Status {
                n: i as u32,
                status: claw_chips::ledger::OpStatus::Done,
                error: None,
            });
        }
        lines.push(JournalLine::Complete { fee: Some(Chips(3)) });
        crashed_journal(data.path(), HAND, Some(41), &lines);
        let r = recover(data.path(), &d).await;
        let rec = r[0].as_ref().unwrap();
        assert_eq!((rec.outcome, rec.hand_number), (RecoveredAs::Settled, Some(41)));
        assert_eq!(rec.totals.debits, rec.totals.credits);
        assert_eq!(chips.balance(&acct("dealer:x")).await.unwrap(), Chips(3), "the fee is paid");
        assert_eq!(chips.total().await, 200);
        assert!(recover(data.path(), &d).await.is_empty(), "once");
        assert_eq!(Archive::open(data.path(), "r").unwrap().next_hand_number(), 42, "number 41 stays used");
    }

    /// Issue #28: a hand filed at its end whose settlement a crash cut off
    /// is refunded at restart and its file set aside as voided; an intent
    /// whose call never went out and a torn last line are handled.
    #[tokio::test]
    async fn a_refunded_hand_found_on_file_is_set_aside_as_voided() {
        use claw_protocol::messages::{EntropyMode, EventBody, HandPrepare};
        let chips = Arc::new(LocalChips::new());
        chips.grant(&acct("a"), Chips(100)).await.unwrap();
        let d = desk(chips.clone());
        let data = tempfile::tempdir().unwrap();
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
        let o = op(0, "", ChipOp::Debit, "a", 30, HAND);
        d.call_once(o.kind, &o.key, &o.account, o.amount, "bet").await.unwrap();
        let path = crashed_journal(
            data.path(),
            HAND,
            Some(7),
            &[
                JournalLine::Intent { op: o },
                JournalLine::Status { n: 0, status: claw_chips::ledger::OpStatus::Done, error: None },
                // Its call never went out.
                JournalLine::Intent { op: op(1, "", ChipOp::Debit, "a", 7, HAND) },
            ],
        );
        let mut f = OpenOptions::new().append(true).open(&path).unwrap();
        writeln!(f, "{{\"kind\":\"sta").unwrap();
        drop(f);
        let r = recover(data.path(), &d).await;
        assert_eq!(r[0].as_ref().unwrap().outcome, RecoveredAs::Refunded);
        assert_eq!(chips.balance(&acct("a")).await.unwrap(), Chips(100));
        assert!(archive.files().is_empty(), "not a finished hand any more");
        assert!(archive.dir().join("voided").join(format!("00000007-{HAND}.jsonl")).exists());
        assert_eq!(archive.next_hand_number(), 8);
        let log = std::fs::read_to_string(journal_dir(data.path(), "r").join(LOG)).unwrap();
        assert!(log.contains("voided-after-restart"));
        assert!(recover(data.path(), &d).await.is_empty());
        assert_eq!(chips.balance(&acct("a")).await.unwrap(), Chips(100));
    }

    /// Closing a hand's journal reads it back through its own descriptor
    /// and appends to the room's open log: no file is opened (issue #28: a
    /// process out of descriptors still closes its journals).
    #[test]
    fn closing_a_journal_opens_no_file() {
        let data = tempfile::tempdir().unwrap();
        let j = Journal::with_log(data.path(), LOG).unwrap();
        let begin = JournalLine::Begin { room: "r".into(), hand_id: "h".into(), at_ms: 0, hand_number: None };
        let mut f = j.create("h", &begin).unwrap();
        f.append(&JournalLine::End { outcome: "settled".into() }, true).unwrap();
        let path = f.path().to_owned();
        let lines = std::fs::read_to_string(&path).unwrap();
        // Hide the directory's files from any new open: only descriptors
        // already open can finish the job.
        let moved = data.path().join("elsewhere");
        std::fs::rename(data.path().join(LOG), &moved).unwrap();
        j.close(&mut f).unwrap();
        assert!(!path.exists());
        assert_eq!(std::fs::read_to_string(&moved).unwrap(), lines, "appended through the open log");
    }

    #[test]
    fn the_welcome_record_is_read_back_with_its_budgets() {
        let data = tempfile::tempdir().unwrap();
        let caps = WelcomeCaps { amount: Chips(10), total: Some(15), per_period: None };
        let line =
            GrantLine::Grant { grant: Default::default(), account: acct("a"), amount: Chips(10), at_ms: 1 };
        std::fs::write(
            data.path().join(WELCOME_FILE),
            format!("{}\n{{\"kind\":\"gra", serde_json::to_string(&line).unwrap()),
        )
        .unwrap();
        let w = WelcomeDesk::load(data.path(), caps).unwrap();
        assert!(!w.claim(&acct("a")), "welcomed before");
        assert!(w.claim(&acct("b")));
        assert_eq!(w.decide(&acct("b"), Chips::ZERO, 2), Decision::TotalUsedUp);
    }
}
