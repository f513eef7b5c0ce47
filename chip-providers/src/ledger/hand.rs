//! One hand of the [`super::Ledger`]: its operations and the program of
//! steps its current job (or background work) still has to run.

use std::collections::{BTreeMap, VecDeque};
use std::time::{Duration, Instant};

use claw_protocol::Chips;
use serde::Serialize;

use super::{
    backoff, longer, CallId, HandOp, HandStep, Job, JournalLine, LedgerEffect, LedgerError, LedgerInput,
    MoveFailure, OpStatus, Outcome, Policy, Recovered, RecoveredAs, Report, Settlement, FIRST_PAUSE,
};
use crate::{AccountId, ChipError, ChipOp, HandRef, IdempotencyKey};

/// Debited and credited totals of a hand's applied operations.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct Totals {
    /// Sum of applied debits.
    pub debits: u128,
    /// Sum of applied credits.
    pub credits: u128,
}

/// One step of a hand's program.
#[derive(Debug, Clone)]
enum Step {
    /// Create the journal with its first line.
    Create(JournalLine),
    /// Append a line.
    Write(JournalLine),
    /// One operation: intent journaled, call (retried), status journaled.
    Op { kind: ChipOp, account: AccountId, amount: Chips, memo: String, tag: &'static str },
    /// Ask again, same keys, about every operation whose outcome is unknown.
    Reask,
    /// Give every account back its net change over the applied operations
    /// from index `from` on.
    Reverse { from: usize, tag: &'static str, memo: &'static str },
    /// Read the balances of who may stake, then lock the stakes.
    Stakes { accounts: Vec<AccountId>, cap: Chips },
    /// A per-hand provider's step.
    Provider(HandStep),
    /// Settlement's check: nothing unknown, chips conserved (else void).
    SettleCheck,
    /// Debits equal credits, or the program fails.
    Conserved,
    /// Recovery of a complete hand: pay the fee its `complete` line
    /// recorded if the crash came before it was asked for.
    RecoveredFee,
    /// Move the ended journal into the room's log.
    Archive,
}

/// What a hand's steps serve: the job whose outcome is owed, or work in
/// the background.
#[derive(Debug, Clone)]
enum Goal {
    Open,
    Moves {
        undo: bool,
        mark: usize,
        undoing: Option<String>,
    },
    Settle,
    /// Voided because its moves did not add up (the detail for the log).
    Unbalanced(String),
    Void,
    Recover(RecoveredAs),
    /// A voided hand's refund, retried until the provider answers.
    Refund,
    /// Nothing: closing the journal, or idle.
    Idle,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum CallFor {
    /// Operation `i`, first asked.
    Op(usize),
    /// Operation `i`, asked again (void, recovery).
    Reask(usize),
    Provider(HandStep),
}

#[derive(Debug, Clone)]
enum OpFail {
    Refused(ChipError),
    Unavailable(ChipError),
    Journal(String),
}

#[derive(Debug, Clone)]
enum AfterJournal {
    Next,
    Intent(HandOp),
    Status(Result<Chips, OpFail>),
    Archive,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Wake {
    Archive,
    Refund,
}

#[derive(Debug, Clone)]
enum Wait {
    Ready,
    Journal(AfterJournal),
    Call { id: CallId, attempt: u32, deadline: Option<Instant>, what: CallFor },
    Pause { until: Instant, attempt: u32, what: CallFor },
    Balances { id: CallId, accounts: Vec<AccountId>, cap: Chips },
    Sleep { until: Instant, then: Wake },
}

#[derive(Debug, Clone)]
enum Failure {
    Journal(String),
    Refused(ChipError),
    Unavailable(ChipError),
    Unsettled,
    Conservation(Totals),
    Key(String),
    Stakes(String),
    Lock(ChipError),
}

impl Failure {
    fn ledger_error(&self) -> LedgerError {
        match self {
            Failure::Journal(s) => LedgerError::Journal(s.clone()),
            Failure::Refused(e) | Failure::Lock(e) => LedgerError::Chip(e.clone()),
            Failure::Unavailable(_) | Failure::Unsettled => LedgerError::Unsettled,
            Failure::Conservation(t) => LedgerError::Conservation { debits: t.debits, credits: t.credits },
            Failure::Key(s) | Failure::Stakes(s) => LedgerError::Key(s.clone()),
        }
    }

    /// Whether the provider may answer later; in a background refund also
    /// the file system (descriptors come back).
    fn transient(&self, background: bool) -> bool {
        match self {
            Failure::Unavailable(_) | Failure::Unsettled => true,
            Failure::Journal(_) => background,
            _ => false,
        }
    }
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Failure::Refused(e) | Failure::Unavailable(e) => write!(f, "chip provider: {e}"),
            Failure::Stakes(s) => f.write_str(s),
            Failure::Lock(e) => write!(f, "locking the stakes: {e}"),
            other => write!(f, "{}", other.ledger_error()),
        }
    }
}

/// Whether the hand takes jobs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Life {
    /// Being opened.
    Opening,
    /// Open: moves, then a settlement or a void.
    Open,
    /// Settled, voided, recovered or failed: no more jobs.
    Terminal,
}

/// A hand of the ledger.
#[derive(Debug)]
pub(super) struct Hand<T> {
    pub(super) r: HandRef,
    pub(super) ops: Vec<HandOp>,
    mode: Settlement,
    hand_number: Option<u64>,
    life: Life,
    /// The job whose outcome is owed.
    job: Option<T>,
    goal: Goal,
    steps: VecDeque<Step>,
    wait: Wait,
    /// The outcome decided before the steps end (a failed open's cleanup).
    verdict: Option<Outcome>,
    balances: Vec<Chips>,
    /// A per-hand provider's close or abandon not confirmed.
    provider_error: Option<String>,
    /// That step, retried in the background: (step, in flight or asleep until).
    provider_bg: Option<(HandStep, Result<CallId, Instant>, Duration)>,
    /// The pause of the next background retry.
    pause: Duration,
    /// `complete` recorded: the fee and the operations before it (recovery).
    complete: Option<(Option<Chips>, usize)>,
    dealer: Option<AccountId>,
    /// Chips held until a background refund goes through.
    holding: Option<Vec<(AccountId, u64)>>,
    /// A per-hand provider's stakes, once asked to lock them.
    locked: Vec<(AccountId, u64)>,
    pub(super) fx: VecDeque<LedgerEffect>,
    pub(super) out: VecDeque<(T, Outcome)>,
}

impl<T: Clone> Hand<T> {
    fn blank(r: HandRef, mode: Settlement) -> Hand<T> {
        Hand {
            r,
            ops: Vec::new(),
            mode,
            hand_number: None,
            life: Life::Opening,
            job: None,
            goal: Goal::Idle,
            steps: VecDeque::new(),
            wait: Wait::Ready,
            verdict: None,
            balances: Vec::new(),
            provider_error: None,
            provider_bg: None,
            pause: FIRST_PAUSE,
            complete: None,
            dealer: None,
            holding: None,
            locked: Vec::new(),
            fx: VecDeque::new(),
            out: VecDeque::new(),
        }
    }

    /// A hand being opened by `tag`'s job.
    pub(super) fn open(
        r: HandRef,
        hand_number: Option<u64>,
        at_ms: u64,
        stakers: Vec<AccountId>,
        cap: Chips,
        mode: Settlement,
        tag: T,
    ) -> Hand<T> {
        let mut h = Hand::blank(r, mode);
        h.hand_number = hand_number;
        h.job = Some(tag);
        h.goal = Goal::Open;
        h.steps.push_back(Step::Create(JournalLine::Begin {
            room: h.r.room.clone(),
            hand_id: h.r.hand_id.clone(),
            at_ms,
            hand_number,
        }));
        if mode == Settlement::PerHand {
            h.steps.push_back(Step::Stakes { accounts: stakers, cap });
        }
        h
    }

    /// An interrupted hand read back from its journal, with its recovery program.
    pub(super) fn from_lines(
        lines: Vec<JournalLine>,
        mode: Settlement,
        tag: T,
        dealer: AccountId,
    ) -> Result<Hand<T>, LedgerError> {
        let mut h: Option<Hand<T>> = None;
        let mut ended: Option<String> = None;
        for l in lines {
            match (l, h.as_mut()) {
                (JournalLine::Begin { room, hand_id, hand_number, .. }, None) => {
                    let mut x = Hand::blank(HandRef::new(room, hand_id), mode);
                    x.hand_number = hand_number;
                    h = Some(x);
                }
                (JournalLine::Intent { op }, Some(h)) => h.ops.push(op),
                (JournalLine::Status { n, status, .. }, Some(h)) => {
                    if let Some(o) = h.ops.iter_mut().find(|o| o.n == n) {
                        o.status = Some(status);
                    }
                }
                (JournalLine::Complete { fee }, Some(h)) => h.complete = Some((fee, h.ops.len())),
                (JournalLine::Void, Some(h)) => h.complete = None,
                (JournalLine::End { outcome }, Some(_)) => ended = Some(outcome),
                _ => {}
            }
        }
        let mut h = h.ok_or(LedgerError::NoBegin)?;
        h.life = Life::Terminal;
        h.job = Some(tag);
        h.dealer = Some(dealer);
        let (how, steps): (RecoveredAs, Vec<Step>) = if let Some(how) = ended {
            // Ended before the crash; only its journal was still to be closed.
            let as_ = if how.starts_with("voided") { RecoveredAs::Refunded } else { RecoveredAs::Ended };
            (as_, vec![Step::Archive])
        } else if mode == Settlement::PerHand {
            // The provider's own journal settled or refunded the hand where
            // the chips are held; nothing moves from here.
            (RecoveredAs::ByProvider, vec![end("reconciled-by-provider"), Step::Archive])
        } else if h.complete.is_some() {
            let s = vec![
                Step::Reask,
                Step::RecoveredFee,
                Step::Conserved,
                end("settled-after-restart"),
                Step::Archive,
            ];
            (RecoveredAs::Settled, s)
        } else {
            let s = vec![Step::Reask, refund(), Step::Conserved, end("voided-after-restart"), Step::Archive];
            (RecoveredAs::Refunded, s)
        };
        h.goal = Goal::Recover(how);
        h.steps.extend(steps);
        Ok(h)
    }

    /// Starts a job on this open hand (not `Open`).
    pub(super) fn start(&mut self, tag: T, job: Job) {
        self.job = Some(tag);
        self.verdict = None;
        self.balances.clear();
        self.provider_error = None;
        match job {
            Job::Open { .. } => {}
            Job::Moves { moves, undo_on_refusal, .. } => {
                self.goal = Goal::Moves { undo: undo_on_refusal, mark: self.ops.len(), undoing: None };
                self.steps.extend(moves.into_iter().map(|m| Step::Op {
                    kind: m.kind,
                    account: m.account,
                    amount: m.amount,
                    memo: m.memo,
                    tag: "",
                }));
            }
            Job::Settle { fee, dealer, .. } => {
                self.life = Life::Terminal;
                self.goal = Goal::Settle;
                self.steps.push_back(Step::Write(JournalLine::Complete { fee: Some(fee) }));
                if fee.0 > 0 {
                    self.steps.push_back(Step::Op {
                        kind: ChipOp::Credit,
                        account: dealer,
                        amount: fee,
                        memo: "commission and rake".into(),
                        tag: "",
                    });
                }
                self.steps.push_back(Step::SettleCheck);
                self.steps.push_back(end("settled"));
                self.close_steps();
            }
            Job::Void { .. } => {
                self.life = Life::Terminal;
                self.goal = Goal::Void;
                self.void_steps();
            }
        }
    }

    fn void_steps(&mut self) {
        self.steps.clear();
        self.steps.extend([
            Step::Write(JournalLine::Void),
            Step::Reask,
            refund(),
            Step::Conserved,
            end("voided"),
        ]);
        self.close_steps();
    }

    /// A per-hand provider's close, then the journal's.
    fn close_steps(&mut self) {
        if self.mode == Settlement::PerHand {
            self.steps.push_back(Step::Provider(HandStep::Close));
        }
        self.steps.push_back(Step::Archive);
    }

    pub(super) fn takes_jobs(&self) -> bool {
        self.life == Life::Open
            && self.job.is_none()
            && self.steps.is_empty()
            && matches!(self.wait, Wait::Ready)
    }

    pub(super) fn has_job(&self) -> bool {
        self.job.is_some()
    }

    /// Nothing to do and nothing in flight (an open hand between jobs).
    pub(super) fn is_parked(&self) -> bool {
        self.job.is_none()
            && self.steps.is_empty()
            && matches!(self.wait, Wait::Ready)
            && self.provider_bg.is_none()
    }

    /// Finished for good: the ledger forgets it.
    pub(super) fn is_gone(&self) -> bool {
        self.life == Life::Terminal && self.is_parked()
    }

    pub(super) fn refunding(&self) -> bool {
        self.holding.is_some()
    }

    pub(super) fn deadline(&self) -> Option<Instant> {
        let main = match &self.wait {
            Wait::Call { deadline, .. } => *deadline,
            Wait::Pause { until, .. } | Wait::Sleep { until, .. } => Some(*until),
            _ => None,
        };
        let bg = match &self.provider_bg {
            Some((_, Err(until), _)) => Some(*until),
            _ => None,
        };
        main.into_iter().chain(bg).min()
    }

    fn totals(&self) -> Totals {
        let mut t = Totals::default();
        for o in self.ops.iter().filter(|o| o.status == Some(OpStatus::Done)) {
            match o.kind {
                ChipOp::Debit => t.debits += u128::from(o.amount.0),
                ChipOp::Credit => t.credits += u128::from(o.amount.0),
            }
        }
        t
    }

    /// Chips the hand took per account and has not given back.
    /// What each account has out in this hand while it runs (none once
    /// it is settled, voided or refunding): with a per-hand provider its
    /// locked stake; else its debits applied or in flight less its credits
    /// applied, so a debit whose answer is still out counts.
    pub(super) fn at_stake(&self) -> Vec<(AccountId, u64)> {
        if self.life == Life::Terminal || self.refunding() {
            return Vec::new();
        }
        if self.mode == Settlement::PerHand {
            return self.locked.clone();
        }
        let mut net: BTreeMap<AccountId, i128> = BTreeMap::new();
        for o in &self.ops {
            let d = i128::from(o.amount.0);
            match (o.kind, o.status) {
                (ChipOp::Debit, None | Some(OpStatus::Done | OpStatus::Uncertain)) => {
                    *net.entry(o.account.clone()).or_default() -= d
                }
                (ChipOp::Credit, Some(OpStatus::Done)) => *net.entry(o.account.clone()).or_default() += d,
                _ => {}
            }
        }
        net.into_iter()
            .filter(|(_, n)| *n < 0)
            .map(|(a, n)| (a, u64::try_from(-n).unwrap_or(u64::MAX)))
            .collect()
    }

    pub(super) fn held_by(&self) -> Vec<(AccountId, u64)> {
        net(&self.ops, 0)
            .into_iter()
            .filter(|(_, n)| *n < 0)
            .map(|(a, n)| (a, u64::try_from(-n).unwrap_or(u64::MAX)))
            .collect()
    }

    fn call_id(next: &mut u64) -> CallId {
        *next += 1;
        CallId(*next)
    }

    fn send(&mut self, now: Instant, policy: &Policy, next: &mut u64, attempt: u32, what: CallFor) {
        let id = Hand::<T>::call_id(next);
        let deadline = match &what {
            CallFor::Op(i) | CallFor::Reask(i) => {
                let op = self.ops[*i].clone();
                self.fx.push_back(LedgerEffect::Call { hand: self.r.clone(), id, op });
                Some(now + policy.call_timeout)
            }
            CallFor::Provider(step) => {
                self.fx.push_back(LedgerEffect::Provider { hand: self.r.clone(), id, step: step.clone() });
                None
            }
        };
        self.wait = Wait::Call { id, attempt, deadline, what };
    }

    fn append(&mut self, line: JournalLine, then: AfterJournal) {
        let sync = line.synced(self.mode);
        self.fx.push_back(LedgerEffect::Append { hand: self.r.clone(), line, sync });
        self.wait = Wait::Journal(then);
    }

    /// A completion for this hand.
    pub(super) fn complete(&mut self, now: Instant, input: LedgerInput, policy: &Policy, next: &mut u64) {
        match input {
            LedgerInput::Journaled { result, .. } => {
                let Wait::Journal(then) = std::mem::replace(&mut self.wait, Wait::Ready) else { return };
                self.journaled(now, policy, next, then, result);
            }
            LedgerInput::Answered { id, result, .. } => {
                if let Some((step, Ok(bg), pause)) = &self.provider_bg {
                    if *bg == id {
                        let (step, pause) = (step.clone(), *pause);
                        self.provider_bg_answer(now, step, pause, result);
                        return;
                    }
                }
                match &self.wait {
                    Wait::Call { id: want, .. } if *want == id => {}
                    // A second answer, or one to an attempt given up: the
                    // retry asked again with the same key.
                    _ => return,
                }
                let Wait::Call { attempt, what, .. } = std::mem::replace(&mut self.wait, Wait::Ready) else {
                    return;
                };
                self.answered(now, policy, attempt, what, result);
            }
            LedgerInput::Balances { id, results, .. } => {
                let Wait::Balances { id: want, accounts, cap } = &self.wait else { return };
                if *want != id {
                    return;
                }
                let (accounts, cap) = (accounts.clone(), *cap);
                self.wait = Wait::Ready;
                self.stakes(now, accounts, cap, results);
            }
        }
    }

    /// Deadlines due at `now`.
    pub(super) fn timeout(&mut self, now: Instant, policy: &Policy, next: &mut u64) {
        if let Some((step, Err(until), pause)) = &self.provider_bg {
            if *until <= now {
                let (step, pause) = (step.clone(), *pause);
                let id = Hand::<T>::call_id(next);
                self.fx.push_back(LedgerEffect::Provider { hand: self.r.clone(), id, step: step.clone() });
                self.provider_bg = Some((step, Ok(id), pause));
            }
        }
        match &self.wait {
            Wait::Call { deadline: Some(d), .. } if *d <= now => {
                let Wait::Call { attempt, what, .. } = std::mem::replace(&mut self.wait, Wait::Ready) else {
                    return;
                };
                self.answered(now, policy, attempt, what, Err(ChipError::Timeout));
            }
            Wait::Pause { until, .. } if *until <= now => {
                let Wait::Pause { attempt, what, .. } = std::mem::replace(&mut self.wait, Wait::Ready) else {
                    return;
                };
                self.send(now, policy, next, attempt, what);
            }
            Wait::Sleep { until, then } if *until <= now => {
                let then = *then;
                self.wait = Wait::Ready;
                match then {
                    Wake::Archive => self.steps.push_front(Step::Archive),
                    Wake::Refund => {
                        self.goal = Goal::Refund;
                        self.steps.extend([Step::Reask, refund(), Step::Conserved, end("voided")]);
                        self.close_steps();
                    }
                }
            }
            _ => {}
        }
    }

    fn journaled(
        &mut self,
        now: Instant,
        policy: &Policy,
        next: &mut u64,
        then: AfterJournal,
        result: Result<(), String>,
    ) {
        match (then, result) {
            (AfterJournal::Next, Ok(())) => {}
            (AfterJournal::Next, Err(e)) => self.fail(now, Failure::Journal(e)),
            (AfterJournal::Intent(op), Ok(())) => {
                let i = self.ops.len();
                let zero = op.amount.0 == 0;
                self.ops.push(op);
                if zero {
                    self.status(i, OpStatus::Done, None, Ok(Chips::ZERO));
                } else {
                    self.send(now, policy, next, 0, CallFor::Op(i));
                }
            }
            (AfterJournal::Intent(_), Err(e)) => self.fail(now, Failure::Journal(e)),
            (AfterJournal::Status(r), Ok(())) => self.op_done(now, r),
            (AfterJournal::Status(_), Err(e)) => self.op_done(now, Err(OpFail::Journal(e))),
            (AfterJournal::Archive, Ok(())) => {}
            (AfterJournal::Archive, Err(e)) => {
                if matches!(self.goal, Goal::Recover(_)) {
                    self.fail(now, Failure::Journal(e));
                } else {
                    // An ended journal is never abandoned: retried until it closes.
                    self.fx.push_back(LedgerEffect::Report(Report::ArchiveRetry {
                        hand: self.r.clone(),
                        error: e,
                    }));
                    self.answer();
                    self.wait = Wait::Sleep { until: now + self.pause, then: Wake::Archive };
                    self.pause = longer(self.pause);
                }
            }
        }
    }

    /// Records operation `i`'s outcome (a status line), then `r` goes to the program.
    fn status(&mut self, i: usize, status: OpStatus, error: Option<String>, r: Result<Chips, OpFail>) {
        let n = match self.ops.get_mut(i) {
            Some(op) => {
                op.status = Some(status);
                op.n
            }
            None => return,
        };
        self.append(JournalLine::Status { n, status, error }, AfterJournal::Status(r));
    }

    fn answered(
        &mut self,
        now: Instant,
        policy: &Policy,
        attempt: u32,
        what: CallFor,
        result: Result<Chips, ChipError>,
    ) {
        if let Err(e) = &result {
            if e.is_retryable() && attempt + 1 < policy.attempts {
                self.wait = Wait::Pause { until: now + backoff(attempt), attempt: attempt + 1, what };
                return;
            }
        }
        match (what, result) {
            (CallFor::Op(i), Ok(b)) => self.status(i, OpStatus::Done, None, Ok(b)),
            (CallFor::Op(i), Err(e)) if e.is_retryable() => {
                self.status(i, OpStatus::Uncertain, Some(e.to_string()), Err(OpFail::Unavailable(e)))
            }
            (CallFor::Op(i), Err(e)) => {
                self.status(i, OpStatus::Refused, Some(e.to_string()), Err(OpFail::Refused(e)))
            }
            (CallFor::Reask(i), Ok(_)) => {
                self.steps.push_front(Step::Reask);
                self.status(i, OpStatus::Done, None, Ok(Chips::ZERO));
            }
            (CallFor::Reask(_), Err(e)) if e.is_retryable() => self.fail(now, Failure::Unsettled),
            (CallFor::Reask(i), Err(e)) => {
                self.steps.push_front(Step::Reask);
                self.status(i, OpStatus::Refused, Some(e.to_string()), Ok(Chips::ZERO));
            }
            (CallFor::Provider(_), Ok(_)) => {}
            (CallFor::Provider(HandStep::Open(_)), Err(e)) => self.fail(now, Failure::Lock(e)),
            (CallFor::Provider(step), Err(e)) => {
                let retrying = e.is_retryable();
                self.provider_error = Some(format!(
                    "finishing the hand with the chip provider: {e}{}",
                    if retrying { " (retrying)" } else { "" }
                ));
                if retrying {
                    self.fx.push_back(LedgerEffect::Report(Report::ProviderPending {
                        hand: self.r.clone(),
                        error: e.to_string(),
                    }));
                    self.provider_bg = Some((step, Err(now + FIRST_PAUSE), FIRST_PAUSE));
                }
            }
        }
    }

    fn provider_bg_answer(
        &mut self,
        now: Instant,
        step: HandStep,
        pause: Duration,
        r: Result<Chips, ChipError>,
    ) {
        match r {
            Err(e) if e.is_retryable() => {
                let pause = longer(pause);
                self.provider_bg = Some((step, Err(now + pause), pause));
            }
            r => {
                self.provider_bg = None;
                self.fx.push_back(LedgerEffect::Report(Report::ProviderFinished {
                    hand: self.r.clone(),
                    error: r.err().map(|e| e.to_string()),
                }));
            }
        }
    }

    /// An operation's result goes to the program.
    fn op_done(&mut self, now: Instant, r: Result<Chips, OpFail>) {
        match r {
            Ok(b) => {
                if let Goal::Moves { undoing: None, .. } = self.goal {
                    self.balances.push(b);
                }
            }
            Err(OpFail::Refused(e)) => self.fail(now, Failure::Refused(e)),
            Err(OpFail::Unavailable(e)) => self.fail(now, Failure::Unavailable(e)),
            Err(OpFail::Journal(e)) => self.fail(now, Failure::Journal(e)),
        }
    }

    /// The stakes from the balances read: each balance capped, accounts
    /// without chips or refused for good left out.
    fn stakes(
        &mut self,
        now: Instant,
        accounts: Vec<AccountId>,
        cap: Chips,
        results: Vec<Result<Chips, ChipError>>,
    ) {
        let mut stakes = Vec::with_capacity(accounts.len());
        for (account, balance) in accounts.into_iter().zip(results) {
            match balance {
                Ok(b) if b.0 > 0 => stakes.push((account, Chips(b.0.min(cap.0)))),
                Ok(_) => {}
                Err(e) if e.is_retryable() => {
                    return self.fail(now, Failure::Stakes(format!("balance of {account}: {e}")))
                }
                Err(e) => self.fx.push_back(LedgerEffect::Report(Report::LeftOut {
                    hand: self.r.clone(),
                    account,
                    error: e.to_string(),
                })),
            }
        }
        if stakes.is_empty() {
            return self.fail(now, Failure::Stakes("no player has chips to stake".into()));
        }
        self.locked = stakes.iter().map(|(a, c)| (a.clone(), c.0)).collect();
        self.steps.push_front(Step::Provider(HandStep::Open(stakes)));
    }

    /// Runs steps until the hand waits or its program ends.
    pub(super) fn run(&mut self, now: Instant, policy: &Policy, next: &mut u64) {
        while matches!(self.wait, Wait::Ready) {
            let Some(step) = self.steps.pop_front() else {
                self.finished();
                return;
            };
            self.step(now, policy, next, step);
        }
    }

    fn step(&mut self, now: Instant, policy: &Policy, next: &mut u64, step: Step) {
        match step {
            Step::Create(first) => {
                self.fx.push_back(LedgerEffect::Create { hand: self.r.clone(), first });
                self.wait = Wait::Journal(AfterJournal::Next);
            }
            Step::Write(line) => self.append(line, AfterJournal::Next),
            Step::Op { kind, account, amount, memo, tag } => {
                let n = self.ops.len() as u32;
                let key = match IdempotencyKey::new(format!("{}/{}/{tag}{n}", self.r.room, self.r.hand_id)) {
                    Ok(k) => k,
                    Err(e) => return self.fail(now, Failure::Key(e.to_string())),
                };
                let op = HandOp { n, key, kind, account, amount, memo, status: None };
                self.append(JournalLine::Intent { op: op.clone() }, AfterJournal::Intent(op));
            }
            Step::Reask => {
                let Some(i) =
                    self.ops.iter().position(|o| matches!(o.status, None | Some(OpStatus::Uncertain)))
                else {
                    return;
                };
                if self.ops[i].amount.0 == 0 {
                    self.steps.push_front(Step::Reask);
                    self.status(i, OpStatus::Done, None, Ok(Chips::ZERO));
                } else {
                    self.send(now, policy, next, 0, CallFor::Reask(i));
                }
            }
            Step::Reverse { from, tag, memo } => {
                // Crediting first would create chips if a later debit
                // failed: debit the accounts that gained first, then credit.
                let net = net(&self.ops, from);
                let debits = net.iter().filter(|(_, n)| **n > 0).map(|(a, n)| (ChipOp::Debit, a, *n));
                let credits = net.iter().filter(|(_, n)| **n < 0).map(|(a, n)| (ChipOp::Credit, a, -*n));
                let plan: Vec<Step> = debits
                    .chain(credits)
                    .map(|(kind, a, n)| Step::Op {
                        kind,
                        account: a.clone(),
                        amount: Chips(u64::try_from(n).unwrap_or(u64::MAX)),
                        memo: memo.to_owned(),
                        tag,
                    })
                    .collect();
                for s in plan.into_iter().rev() {
                    self.steps.push_front(s);
                }
            }
            Step::Stakes { accounts, cap } => {
                let id = Hand::<T>::call_id(next);
                self.fx.push_back(LedgerEffect::Balances {
                    hand: self.r.clone(),
                    id,
                    accounts: accounts.clone(),
                });
                self.wait = Wait::Balances { id, accounts, cap };
            }
            Step::Provider(step) => self.send(now, policy, next, 0, CallFor::Provider(step)),
            Step::SettleCheck => {
                if self.ops.iter().any(|o| o.status == Some(OpStatus::Uncertain)) {
                    self.verdict = Some(Outcome::Done(Err("unsettled operations remain".into())));
                    return self.drop_journal();
                }
                let t = self.totals();
                if t.debits != t.credits {
                    let detail = Failure::Conservation(t).to_string();
                    self.goal = Goal::Unbalanced(detail);
                    self.void_steps();
                }
            }
            Step::Conserved => {
                let t = self.totals();
                if t.debits != t.credits {
                    self.fail(now, Failure::Conservation(t));
                }
            }
            Step::RecoveredFee => {
                if let (Some((Some(fee), before)), Some(dealer)) = (self.complete, &self.dealer) {
                    if fee.0 > 0 && self.ops.len() == before {
                        self.steps.push_front(Step::Op {
                            kind: ChipOp::Credit,
                            account: dealer.clone(),
                            amount: fee,
                            memo: "commission and rake".into(),
                            tag: "",
                        });
                    }
                }
            }
            Step::Archive => {
                self.fx.push_back(LedgerEffect::Archive { hand: self.r.clone() });
                self.wait = Wait::Journal(AfterJournal::Archive);
            }
        }
    }

    /// The program failed: what happens next depends on what it served.
    fn fail(&mut self, now: Instant, f: Failure) {
        self.steps.clear();
        self.wait = Wait::Ready;
        match self.goal.clone() {
            Goal::Open => {
                self.life = Life::Terminal;
                match f {
                    // No journal: nothing to close.
                    Failure::Journal(e) if self.ops.is_empty() && self.verdict.is_none() => {
                        self.verdict = Some(Outcome::Done(Err(format!("chip journal: {e}"))));
                        self.drop_journal();
                    }
                    Failure::Stakes(_) | Failure::Lock(_) if self.verdict.is_none() => {
                        self.verdict = Some(Outcome::Done(Err(f.to_string())));
                        // Nothing was locked (or the attempt is released):
                        // the hand's empty journal is closed.
                        if matches!(f, Failure::Lock(_)) {
                            self.steps.push_back(Step::Provider(HandStep::Abandon));
                        }
                        self.steps.extend([Step::Write(JournalLine::Void), end("voided"), Step::Archive]);
                    }
                    _ => {
                        if self.verdict.is_none() {
                            self.verdict = Some(Outcome::Done(Err(f.to_string())));
                        }
                        self.drop_journal();
                    }
                }
            }
            Goal::Moves { undo, mark, undoing: None } => match f {
                Failure::Refused(e) if undo => {
                    let why = e.to_string();
                    if self.ops[mark..]
                        .iter()
                        .all(|o| matches!(o.status, Some(OpStatus::Done | OpStatus::Refused)))
                    {
                        self.goal = Goal::Moves { undo, mark, undoing: Some(why) };
                        self.steps.push_back(Step::Reverse {
                            from: mark,
                            tag: "undo-",
                            memo: "undo: action refused",
                        });
                    } else {
                        self.verdict = Some(Outcome::Moves(Err((MoveFailure::Refused(why), false))));
                    }
                }
                Failure::Refused(e) => {
                    self.verdict = Some(Outcome::Moves(Err((MoveFailure::Refused(e.to_string()), false))))
                }
                other => {
                    self.verdict =
                        Some(Outcome::Moves(Err((MoveFailure::Unavailable(other.to_string()), false))))
                }
            },
            Goal::Moves { undoing: Some(why), .. } => {
                self.verdict = Some(Outcome::Moves(Err((MoveFailure::Refused(why), false))));
            }
            Goal::Settle => {
                let why = match &f {
                    Failure::Refused(_) | Failure::Unavailable(_) => format!("dealer credit failed: {f}"),
                    _ => f.to_string(),
                };
                self.verdict = Some(Outcome::Done(Err(why)));
                self.drop_journal();
            }
            Goal::Void | Goal::Unbalanced(_) | Goal::Refund
                if f.transient(matches!(self.goal, Goal::Refund)) && self.life == Life::Terminal =>
            {
                // The provider (or the file system) did not answer: the
                // refund goes on in the background until it does.
                if self.job.is_some() && self.verdict.is_none() {
                    self.verdict = Some(match &self.goal {
                        Goal::Unbalanced(d) => Outcome::Unbalanced(d.clone()),
                        _ => Outcome::Done(Err(
                            "the chip service did not answer; the refund is retried in the background".into(),
                        )),
                    });
                }
                self.answer();
                if self.holding.is_none() {
                    let held = self.held_by();
                    self.fx.push_back(LedgerEffect::Report(Report::Holding {
                        hand: self.r.clone(),
                        held: held.clone(),
                    }));
                    self.holding = Some(held);
                    self.pause = FIRST_PAUSE;
                } else {
                    self.pause = longer(self.pause);
                }
                self.goal = Goal::Refund;
                self.wait = Wait::Sleep { until: now + self.pause, then: Wake::Refund };
            }
            Goal::Void | Goal::Unbalanced(_) | Goal::Refund => {
                if self.verdict.is_none() {
                    self.verdict = Some(match &self.goal {
                        Goal::Unbalanced(d) => Outcome::Unbalanced(d.clone()),
                        _ => Outcome::Done(Err(f.to_string())),
                    });
                }
                self.drop_journal();
            }
            Goal::Recover(_) => {
                self.verdict = Some(Outcome::Recovered(Err(f.ledger_error())));
                self.drop_journal();
            }
            Goal::Idle => self.drop_journal(),
        }
    }

    /// Leaves the journal on disk, open, for the next start.
    fn drop_journal(&mut self) {
        self.steps.clear();
        self.life = Life::Terminal;
        self.fx.push_back(LedgerEffect::Drop { hand: self.r.clone() });
        self.release();
    }

    /// A background refund ended (done or given up): its chips are not held any more.
    fn release(&mut self) {
        if let Some(held) = self.holding.take() {
            self.fx.push_back(LedgerEffect::Report(Report::Released { hand: self.r.clone(), held }));
        }
    }

    /// The owed job's outcome, if one is owed.
    fn answer(&mut self) {
        let Some(tag) = self.job.take() else { return };
        let outcome = match self.verdict.take() {
            Some(v) => v,
            None => match &self.goal {
                Goal::Open => Outcome::Done(Ok(())),
                Goal::Moves { undoing: None, .. } => Outcome::Moves(Ok(std::mem::take(&mut self.balances))),
                Goal::Moves { undoing: Some(why), .. } => {
                    Outcome::Moves(Err((MoveFailure::Refused(why.clone()), true)))
                }
                Goal::Settle | Goal::Void | Goal::Refund | Goal::Idle => {
                    Outcome::Done(self.provider_error.clone().map_or(Ok(()), Err))
                }
                Goal::Unbalanced(d) => Outcome::Unbalanced(d.clone()),
                Goal::Recover(how) => Outcome::Recovered(Ok(Recovered {
                    room: self.r.room.clone(),
                    hand_id: self.r.hand_id.clone(),
                    totals: self.totals(),
                    outcome: *how,
                    hand_number: self.hand_number,
                })),
            },
        };
        self.out.push_back((tag, outcome));
    }

    /// The program ran to its end.
    fn finished(&mut self) {
        if self.life == Life::Opening {
            self.life = if self.verdict.is_some() { Life::Terminal } else { Life::Open };
        }
        self.answer();
        if self.life == Life::Terminal {
            self.release();
        }
        if !matches!(self.goal, Goal::Recover(_)) {
            self.goal = Goal::Idle;
        }
    }
}

fn end(outcome: &str) -> Step {
    Step::Write(JournalLine::End { outcome: outcome.to_owned() })
}

fn refund() -> Step {
    Step::Reverse { from: 0, tag: "refund-", memo: "refund: hand voided" }
}

/// Net change per account over the applied operations from `from` on
/// (credits positive).
fn net(ops: &[HandOp], from: usize) -> BTreeMap<AccountId, i128> {
    let mut net: BTreeMap<AccountId, i128> = BTreeMap::new();
    for o in ops.iter().skip(from).filter(|o| o.status == Some(OpStatus::Done)) {
        let d = i128::from(o.amount.0);
        *net.entry(o.account.clone()).or_default() += if o.kind == ChipOp::Credit { d } else { -d };
    }
    net
}
