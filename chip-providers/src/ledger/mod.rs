//! The dealer's chip ledger as a sans-IO state machine: every decision of a
//! hand's chip sequence (journal before each call, idempotency keys,
//! retries with backoff, stakes on a per-hand provider, settlement,
//! conservation, void and refund, recovery after a crash, background
//! refunds) with no file, no socket, no clock and no task of its own.
//!
//! [`Ledger`] takes jobs ([`Job`]), completions ([`LedgerInput`]) and the
//! time, and returns effects ([`LedgerEffect`]: journal lines to append,
//! provider calls with their keys) and job outcomes ([`Outcome`]); retry
//! pauses and call timeouts are deadlines ([`Ledger::poll_timeout`]), never
//! sleeps. The dealer node runs the effects; tests run them against an
//! in-memory provider under a virtual clock. A completion that comes after
//! its call was given up (timed out, answered already) is ignored: the
//! retry asked again with the same key, whose first answer stands.
//!
//! Jobs run one at a time, in the order submitted (a hand's moves before
//! the next hand opens); work left after a job's outcome (closing a
//! journal the file system refused, a refund the provider did not answer,
//! a per-hand provider's close) goes on in the background, each hand's
//! effects still one at a time.

mod hand;
pub mod welcome;

use std::collections::{BTreeMap, VecDeque};
use std::time::{Duration, Instant};

use claw_protocol::Chips;
use serde::{Deserialize, Serialize};

use crate::{AccountId, ChipError, ChipOp, HandRef, IdempotencyKey};

use hand::Hand;
pub use hand::Totals;

/// How the provider moves chips: its one capability the ledger branches on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Settlement {
    /// Every debit and credit moves chips at once (local, HTTP): the
    /// ledger's journal is the recovery record; every line is synced.
    PerCall,
    /// Chips move once per hand (escrow, EVM, Solana): stakes are locked
    /// at open and the hand closed at the end; the provider's own journal
    /// decides recovery, so operation lines are a log (not synced).
    PerHand,
}

impl Settlement {
    /// The capability of a provider.
    pub fn of(p: &dyn crate::ChipProvider) -> Settlement {
        if p.settles_hands() {
            Settlement::PerHand
        } else {
            Settlement::PerCall
        }
    }
}

/// Call policy: attempts per call (same key each time) and the time one
/// debit or credit may take.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Policy {
    /// Attempts for retryable failures, at least 1.
    pub attempts: u32,
    /// Time allowed for one debit or credit (per-hand provider steps bound
    /// their own transactions).
    pub call_timeout: Duration,
}

/// The pause before retry `attempt + 1` of a call: 20 ms doubling, at most 640 ms.
pub fn backoff(attempt: u32) -> Duration {
    Duration::from_millis(20u64 << attempt.min(5))
}

/// The first pause of a background retry.
pub const FIRST_PAUSE: Duration = Duration::from_millis(250);

/// The next pause of a background retry: doubled, at most 30 s.
pub fn longer(pause: Duration) -> Duration {
    (pause * 2).min(Duration::from_secs(30))
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
    pub kind: ChipOp,
    /// Whose chips.
    pub account: AccountId,
    /// How many.
    pub amount: Chips,
    /// Why (the game's reason, `commission`, `refund: …`).
    pub memo: String,
    /// The outcome; none while the call is in flight.
    pub status: Option<OpStatus>,
}

/// A line of a hand's chip journal (JSON lines; this format is on disk in
/// every data directory, older lines included, and must stay readable).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", tag = "kind")]
pub enum JournalLine {
    /// The hand's first line.
    Begin {
        /// The room.
        room: String,
        /// The hand (hex).
        hand_id: String,
        /// When the hand opened (unix ms).
        at_ms: u64,
        /// The number the hand gets if it is dealt: a crash leaves it
        /// reserved, so that hand numbers never repeat (older journals: none).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        hand_number: Option<u64>,
    },
    /// An operation about to be sent.
    Intent {
        /// The operation (no status yet).
        op: HandOp,
    },
    /// The answer to operation `n`.
    Status {
        /// The operation.
        n: u32,
        /// Its outcome.
        status: OpStatus,
        /// The provider's error, if any.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        error: Option<String>,
    },
    /// The game is over and every game movement is done; `fee` is what the
    /// dealer is owed (commission and rake), so that a restart pays it.
    Complete {
        /// The dealer's fee (older journals: none).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        fee: Option<Chips>,
    },
    /// The hand is being voided: a restart refunds it even if it was complete.
    Void,
    /// The hand ended (`settled`, `voided`, `…-after-restart`).
    End {
        /// How.
        outcome: String,
    },
}

impl JournalLine {
    /// Whether the line must be on disk before the next effect runs: every
    /// line, except operation lines of a per-hand provider (a log there).
    pub fn synced(&self, mode: Settlement) -> bool {
        mode == Settlement::PerCall
            || !matches!(
                self,
                JournalLine::Intent { .. } | JournalLine::Status { .. } | JournalLine::Complete { .. }
            )
    }
}

/// A provider call's identity: completions name it; a stale one is ignored.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct CallId(pub u64);

/// A per-hand provider's step.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HandStep {
    /// Lock these stakes for the hand.
    Open(Vec<(AccountId, Chips)>),
    /// Settle the hand: its net moves, its locks end.
    Close,
    /// Release what a failed opening may have locked.
    Abandon,
}

/// What the ledger asks its driver to do. Effects of one hand come one at
/// a time: the next only after the completion of the last.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LedgerEffect {
    /// Create the hand's journal with `first` (synced): answered by
    /// [`LedgerInput::Journaled`].
    Create {
        /// The hand.
        hand: HandRef,
        /// Its `begin` line.
        first: JournalLine,
    },
    /// Append `line` to the hand's journal, synced to disk when `sync`:
    /// answered by [`LedgerInput::Journaled`].
    Append {
        /// The hand.
        hand: HandRef,
        /// The line.
        line: JournalLine,
        /// Forced to disk before the answer.
        sync: bool,
    },
    /// Move an ended hand's journal into the room's log and remove it;
    /// answered by [`LedgerInput::Journaled`]. Safe to repeat.
    Archive {
        /// The hand.
        hand: HandRef,
    },
    /// Forget the hand's journal without archiving it (it stays on disk,
    /// open, for recovery at the next start). No answer.
    Drop {
        /// The hand.
        hand: HandRef,
    },
    /// One debit or credit at the provider under `op.key` (a retry reuses
    /// it): answered by [`LedgerInput::Answered`] with `id`.
    Call {
        /// The hand.
        hand: HandRef,
        /// This attempt.
        id: CallId,
        /// The operation.
        op: HandOp,
    },
    /// The balances of `accounts` (a per-hand provider's stakes): answered
    /// by [`LedgerInput::Balances`].
    Balances {
        /// The hand.
        hand: HandRef,
        /// This lookup.
        id: CallId,
        /// Whose.
        accounts: Vec<AccountId>,
    },
    /// A per-hand provider's step: answered by [`LedgerInput::Answered`]
    /// (the amount is unused).
    Provider {
        /// The hand.
        hand: HandRef,
        /// This attempt.
        id: CallId,
        /// What.
        step: HandStep,
    },
    /// Something for metrics and logs.
    Report(Report),
}

/// Events for the operator: metrics and logs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Report {
    /// A voided hand's refund was not answered: the ledger holds these
    /// chips per account until it is (retried in the background).
    Holding {
        /// The hand.
        hand: HandRef,
        /// Chips owed back per account.
        held: Vec<(AccountId, u64)>,
    },
    /// The background refund went through.
    Released {
        /// The hand.
        hand: HandRef,
        /// What it held.
        held: Vec<(AccountId, u64)>,
    },
    /// A per-hand provider did not confirm a close or abandon; retried in the background.
    ProviderPending {
        /// The hand.
        hand: HandRef,
        /// Why.
        error: String,
    },
    /// The background provider step finished (`error`: refused for good).
    ProviderFinished {
        /// The hand.
        hand: HandRef,
        /// Set when the provider refused it (a restart reconciles it).
        error: Option<String>,
    },
    /// Closing a journal failed; retried in the background.
    ArchiveRetry {
        /// The hand.
        hand: HandRef,
        /// Why.
        error: String,
    },
    /// A stake lookup failed for good: the account is left out of the hand.
    LeftOut {
        /// The hand.
        hand: HandRef,
        /// Whose.
        account: AccountId,
        /// Why.
        error: String,
    },
}

/// A completion fed back to the ledger.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LedgerInput {
    /// A `Create`, `Append` or `Archive` of `hand` finished.
    Journaled {
        /// The hand.
        hand: HandRef,
        /// Its result.
        result: Result<(), String>,
    },
    /// A provider call answered (a second answer to the same `id` is ignored).
    Answered {
        /// The hand.
        hand: HandRef,
        /// The attempt.
        id: CallId,
        /// The answer: the balance after a debit or credit.
        result: Result<Chips, ChipError>,
    },
    /// Balances, in the order asked.
    Balances {
        /// The hand.
        hand: HandRef,
        /// The lookup.
        id: CallId,
        /// One per account.
        results: Vec<Result<Chips, ChipError>>,
    },
}

impl LedgerInput {
    fn hand(&self) -> &HandRef {
        match self {
            LedgerInput::Journaled { hand, .. }
            | LedgerInput::Answered { hand, .. }
            | LedgerInput::Balances { hand, .. } => hand,
        }
    }
}

/// One debit or credit of a hand.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Move {
    /// Debit or credit.
    pub kind: ChipOp,
    /// Whose chips.
    pub account: AccountId,
    /// How many.
    pub amount: Chips,
    /// Why.
    pub memo: String,
}

/// Work for the ledger, run in the order submitted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Job {
    /// Open the hand's journal; on a per-hand provider then lock the stakes
    /// of `stakers` (their balance, at most `cap`; players without chips
    /// or whose balance cannot be read for good are left out).
    Open {
        /// The hand.
        hand: HandRef,
        /// The number it will be dealt under (reserved by a crash).
        hand_number: Option<u64>,
        /// Now, unix ms (the `begin` line).
        at_ms: u64,
        /// Who may stake (per-hand provider only).
        stakers: Vec<AccountId>,
        /// The most a hand takes from one account.
        cap: Chips,
    },
    /// Run `moves` in order, stopping at the first failure; with
    /// `undo_on_refusal` a refused debit first gives back what the earlier
    /// moves of this job did.
    Moves {
        /// The hand.
        hand: HandRef,
        /// The moves.
        moves: Vec<Move>,
        /// A player's action: undo on refusal.
        undo_on_refusal: bool,
    },
    /// The game is over: record it, pay `fee` to `dealer`, check
    /// conservation (void the hand if it fails), end and close the journal.
    Settle {
        /// The hand.
        hand: HandRef,
        /// Commission and rake.
        fee: Chips,
        /// The dealer's account.
        dealer: AccountId,
    },
    /// Refund every chip the hand moved and close its journal.
    Void {
        /// The hand.
        hand: HandRef,
    },
}

impl Job {
    fn hand(&self) -> &HandRef {
        match self {
            Job::Open { hand, .. }
            | Job::Moves { hand, .. }
            | Job::Settle { hand, .. }
            | Job::Void { hand } => hand,
        }
    }
}

/// Why a move did not happen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MoveFailure {
    /// Refused for good: nothing moved.
    Refused(String),
    /// The provider or the journal failed: the outcome may be unknown and
    /// the hand must be voided.
    Unavailable(String),
}

/// How recovery finished an interrupted hand.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RecoveredAs {
    /// Its game was complete: its payouts (the dealer's fee) were finished.
    Settled,
    /// Every chip it moved went back.
    Refunded,
    /// The provider settles per hand and finished it (its own journal decides).
    ByProvider,
    /// It had ended before the crash; only its journal was closed.
    Ended,
}

impl std::fmt::Display for RecoveredAs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            RecoveredAs::Settled => "settled",
            RecoveredAs::Refunded => "refunded",
            RecoveredAs::ByProvider => "finished by the chip provider",
            RecoveredAs::Ended => "already ended; journal closed",
        })
    }
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

/// Why a hand could not be finished (its journal stays open for the next start).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LedgerError {
    /// The provider refused a call for good.
    #[error("chip provider: {0}")]
    Chip(ChipError),
    /// The journal could not be written.
    #[error("chip journal: {0}")]
    Journal(String),
    /// An idempotency key could not be formed.
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
    /// Some operation's outcome is still unknown (the provider did not answer).
    #[error("unsettled operations remain (provider unreachable); the journal stays open for recovery")]
    Unsettled,
    /// The journal has no `begin` line.
    #[error("chip journal without a begin line")]
    NoBegin,
}

/// A job's outcome.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// `Open`, `Settle` (a per-hand provider's close not confirmed is an
    /// error here; it is retried in the background), `Void`.
    Done(Result<(), String>),
    /// `Moves`: the balance after each move, or why they stopped (`undone`:
    /// the earlier moves of the job were given back).
    Moves(Result<Vec<Chips>, (MoveFailure, bool)>),
    /// `Settle`: the moves did not add up; the hand was voided instead.
    Unbalanced(String),
    /// A recovered hand.
    Recovered(Result<Recovered, LedgerError>),
}

/// The chip ledger of one room's hands (or of the hands recovery finishes).
#[derive(Debug)]
pub struct Ledger<T> {
    policy: Policy,
    mode: Settlement,
    hands: BTreeMap<HandRef, Hand<T>>,
    /// Jobs not started, in order.
    queued: VecDeque<(T, Job)>,
    /// The hand whose job runs now.
    current: Option<HandRef>,
    effects: VecDeque<LedgerEffect>,
    outcomes: VecDeque<(T, Outcome)>,
    next_id: u64,
}

impl<T: Clone> Ledger<T> {
    /// An empty ledger.
    pub fn new(policy: Policy, mode: Settlement) -> Ledger<T> {
        let policy = Policy { attempts: policy.attempts.max(1), ..policy };
        Ledger {
            policy,
            mode,
            hands: BTreeMap::new(),
            queued: VecDeque::new(),
            current: None,
            effects: VecDeque::new(),
            outcomes: VecDeque::new(),
            next_id: 0,
        }
    }

    /// The provider's capability this ledger runs with.
    pub fn settlement(&self) -> Settlement {
        self.mode
    }

    /// Queues `job`; its outcome comes back tagged with `tag`.
    pub fn submit(&mut self, now: Instant, tag: T, job: Job) {
        self.queued.push_back((tag, job));
        self.start_next(now);
    }

    /// Finishes an interrupted hand from its journal `lines` (a torn line
    /// already skipped): closed if it had ended; with a per-hand provider
    /// only marked as reconciled by it; settled (the dealer's fee paid to
    /// `dealer` if the crash came before) when its game was complete;
    /// otherwise refunded. Runs at once, beside the jobs.
    pub fn recover(&mut self, now: Instant, tag: T, lines: Vec<JournalLine>, dealer: AccountId) {
        match Hand::from_lines(lines, self.mode, tag.clone(), dealer) {
            Ok(h) => {
                let r = h.r.clone();
                if self.hands.contains_key(&r) {
                    self.outcomes.push_back((
                        tag,
                        Outcome::Recovered(Err(LedgerError::Journal(format!("hand {r} is running")))),
                    ));
                    return;
                }
                self.hands.insert(r.clone(), h);
                self.advance(now, &r);
            }
            Err(e) => self.outcomes.push_back((tag, Outcome::Recovered(Err(e)))),
        }
    }

    /// A completion.
    pub fn handle(&mut self, now: Instant, input: LedgerInput) {
        let r = input.hand().clone();
        let Some(h) = self.hands.get_mut(&r) else { return };
        h.complete(now, input, &self.policy, &mut self.next_id);
        self.advance(now, &r);
    }

    /// Deadlines due at `now`: call timeouts, retry pauses.
    pub fn handle_timeout(&mut self, now: Instant) {
        let due: Vec<HandRef> = self
            .hands
            .iter()
            .filter(|(_, h)| h.deadline().is_some_and(|d| d <= now))
            .map(|(r, _)| r.clone())
            .collect();
        for r in due {
            let Some(h) = self.hands.get_mut(&r) else { continue };
            h.timeout(now, &self.policy, &mut self.next_id);
            self.advance(now, &r);
        }
    }

    /// The next effect to run.
    pub fn poll_effect(&mut self) -> Option<LedgerEffect> {
        self.effects.pop_front()
    }

    /// The next job outcome.
    pub fn poll_outcome(&mut self) -> Option<(T, Outcome)> {
        self.outcomes.pop_front()
    }

    /// The earliest deadline, if any.
    pub fn poll_timeout(&self) -> Option<Instant> {
        self.hands.values().filter_map(Hand::deadline).min()
    }

    /// Whether nothing is left to do: no job queued or running, no hand
    /// with background work.
    pub fn is_idle(&self) -> bool {
        self.queued.is_empty() && self.current.is_none() && self.hands.values().all(Hand::is_parked)
    }

    /// Chips held per account by voided hands whose refund is pending.
    pub fn held(&self, account: &AccountId) -> Chips {
        Chips(
            self.hands
                .values()
                .filter(|h| h.refunding())
                .flat_map(|h| h.held_by())
                .filter(|(a, _)| a == account)
                .fold(0u64, |t, (_, n)| t.saturating_add(n)),
        )
    }

    /// Chips each account has out in this ledger's running hands (staked,
    /// or debited with the answer still out): a balance lookup does not
    /// see them, so a grant decided on the balance alone could rescue a
    /// player whose chips are only out on a table.
    pub fn at_stake(&self) -> BTreeMap<AccountId, u64> {
        let mut out: BTreeMap<AccountId, u64> = BTreeMap::new();
        for (a, n) in self.hands.values().flat_map(|h| h.at_stake()) {
            let e = out.entry(a).or_default();
            *e = e.saturating_add(n);
        }
        out
    }

    /// The operations of a hand so far (tests, logs).
    pub fn ops(&self, hand: &HandRef) -> Option<&[HandOp]> {
        self.hands.get(hand).map(|h| h.ops.as_slice())
    }

    /// Starts the next queued job when none runs.
    fn start_next(&mut self, now: Instant) {
        while self.current.is_none() {
            let Some((tag, job)) = self.queued.pop_front() else { return };
            let r = job.hand().clone();
            if let Job::Open { hand, hand_number, at_ms, stakers, cap } = job {
                if self.hands.contains_key(&hand) {
                    self.outcomes
                        .push_back((tag, Outcome::Done(Err(format!("hand {hand} is open already")))));
                    continue;
                }
                let h = Hand::open(hand, hand_number, at_ms, stakers, cap, self.mode, tag);
                self.hands.insert(r.clone(), h);
            } else {
                match self.hands.get_mut(&r) {
                    Some(h) if h.takes_jobs() => h.start(tag, job),
                    _ => {
                        let o = match job {
                            Job::Moves { .. } => Outcome::Moves(Err((
                                MoveFailure::Unavailable("no chip journal".into()),
                                false,
                            ))),
                            _ => Outcome::Done(Err("no chip journal".into())),
                        };
                        self.outcomes.push_back((tag, o));
                        continue;
                    }
                }
            }
            self.current = Some(r.clone());
            self.advance(now, &r);
        }
    }

    /// Runs `hand`'s steps until it waits; collects its effects and outcome.
    fn advance(&mut self, now: Instant, r: &HandRef) {
        let Some(h) = self.hands.get_mut(r) else { return };
        h.run(now, &self.policy, &mut self.next_id);
        self.effects.extend(h.fx.drain(..));
        self.outcomes.extend(h.out.drain(..));
        let (foreground_done, gone) = (!h.has_job(), h.is_gone());
        if gone {
            self.hands.remove(r);
        }
        if foreground_done && self.current.as_ref() == Some(r) {
            self.current = None;
            self.start_next(now);
        }
    }
}
