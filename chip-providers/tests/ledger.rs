//! The chip ledger's sequences under a virtual clock: the sans-IO
//! [`Ledger`] runs against an in-memory provider (idempotent per key, like
//! every real one) and an in-memory journal that can crash, refuse or
//! answer twice. No test sleeps: time moves only when a test says so.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::time::{Duration, Instant};

use claw_chips::ledger::{
    backoff, HandStep, Job, JournalLine, Ledger, LedgerEffect, LedgerError, LedgerInput, Move, MoveFailure,
    OpStatus, Outcome, Policy, RecoveredAs, Report, Settlement, FIRST_PAUSE,
};
use claw_chips::{AccountId, ChipError, ChipOp, HandRef, IdempotencyKey};
use claw_protocol::Chips;

fn acct(s: &str) -> AccountId {
    AccountId::new(s).unwrap()
}

fn dealer() -> AccountId {
    acct("dealer:x")
}

const TIMEOUT: Duration = Duration::from_secs(5);

/// What the provider does with the next call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fault {
    /// Applies it and answers once.
    None,
    /// Does not apply it; answers `Unreachable`.
    Down,
    /// Applies it; the answer is lost (`Unreachable`).
    Lost,
    /// Applies it and answers twice.
    Twice,
    /// Applies it; the answer comes only after the ledger gave up on it.
    Late,
    /// Refuses it for good.
    Refuse,
}

/// An in-memory provider: balances, answers per key, locked stakes.
#[derive(Default)]
struct Bank {
    balances: BTreeMap<AccountId, u64>,
    answers: HashMap<IdempotencyKey, Result<Chips, ChipError>>,
    /// Calls that moved chips (a key answered again moves nothing).
    applied: usize,
    locked: BTreeMap<HandRef, Vec<(AccountId, Chips)>>,
    steps: Vec<HandStep>,
}

impl Bank {
    fn with(accounts: &[(&str, u64)]) -> Bank {
        let mut b = Bank::default();
        for (a, n) in accounts {
            b.balances.insert(acct(a), *n);
        }
        b
    }

    fn balance(&self, a: &str) -> u64 {
        self.balances.get(&acct(a)).copied().unwrap_or(0)
    }

    fn total(&self) -> u64 {
        self.balances.values().sum()
    }

    fn call(
        &mut self,
        key: &IdempotencyKey,
        kind: ChipOp,
        a: &AccountId,
        amount: Chips,
    ) -> Result<Chips, ChipError> {
        if let Some(r) = self.answers.get(key) {
            return r.clone();
        }
        let b = self.balances.entry(a.clone()).or_default();
        let r = match kind {
            ChipOp::Debit if *b < amount.0 => {
                Err(ChipError::Insufficient { account: a.to_string(), balance: *b, needed: amount.0 })
            }
            ChipOp::Debit => {
                *b -= amount.0;
                Ok(Chips(*b))
            }
            ChipOp::Credit => {
                *b += amount.0;
                Ok(Chips(*b))
            }
        };
        if r.is_ok() {
            self.applied += 1;
        }
        self.answers.insert(key.clone(), r.clone());
        r
    }
}

/// The ledger, its provider, its journal and a virtual clock.
struct Harness {
    now: Instant,
    ledger: Ledger<u32>,
    bank: Bank,
    mode: Settlement,
    /// Open journals: lines on disk.
    open: BTreeMap<HandRef, Vec<JournalLine>>,
    /// Archived journals, in order.
    log: Vec<(HandRef, Vec<JournalLine>)>,
    /// Faults for the next provider calls (then `Fault::None`).
    faults: VecDeque<Fault>,
    /// Journal effects to refuse next.
    journal_errors: usize,
    /// Answers held back (`Fault::Late`).
    late: Vec<LedgerInput>,
    outcomes: Vec<(u32, Outcome)>,
    reports: Vec<Report>,
    /// Every provider call sent: (when, key or step).
    sent: Vec<(Instant, String)>,
    next_tag: u32,
}

impl Harness {
    fn new(mode: Settlement, bank: Bank) -> Harness {
        Harness {
            now: Instant::now(),
            ledger: Ledger::new(Policy { attempts: 3, call_timeout: TIMEOUT }, mode),
            bank,
            mode,
            open: BTreeMap::new(),
            log: Vec::new(),
            faults: VecDeque::new(),
            journal_errors: 0,
            late: Vec::new(),
            outcomes: Vec::new(),
            reports: Vec::new(),
            sent: Vec::new(),
            next_tag: 0,
        }
    }

    fn fault(&mut self) -> Fault {
        self.faults.pop_front().unwrap_or(Fault::None)
    }

    /// Runs every effect and feeds every completion until the ledger waits.
    fn run(&mut self) {
        while let Some(e) = self.ledger.poll_effect() {
            let inputs = self.effect(e);
            for i in inputs {
                self.ledger.handle(self.now, i);
            }
        }
        while let Some(o) = self.ledger.poll_outcome() {
            self.outcomes.push(o);
        }
    }

    fn effect(&mut self, e: LedgerEffect) -> Vec<LedgerInput> {
        let journal_result = |h: &mut Harness| {
            if h.journal_errors > 0 {
                h.journal_errors -= 1;
                Err("no space left on device".to_owned())
            } else {
                Ok(())
            }
        };
        match e {
            LedgerEffect::Create { hand, first } => {
                let result = journal_result(self);
                if result.is_ok() {
                    self.open.insert(hand.clone(), vec![first]);
                }
                vec![LedgerInput::Journaled { hand, result }]
            }
            LedgerEffect::Append { hand, line, sync } => {
                assert!(sync || self.mode == Settlement::PerHand, "every line synced on a per-call provider");
                let result = journal_result(self);
                if result.is_ok() {
                    self.open.get_mut(&hand).expect("journal open").push(line);
                }
                vec![LedgerInput::Journaled { hand, result }]
            }
            LedgerEffect::Archive { hand } => {
                let result = journal_result(self);
                if result.is_ok() {
                    let lines = self.open.remove(&hand).expect("journal open");
                    self.log.push((hand.clone(), lines));
                }
                vec![LedgerInput::Journaled { hand, result }]
            }
            LedgerEffect::Drop { .. } => Vec::new(),
            LedgerEffect::Call { hand, id, op } => {
                self.sent.push((self.now, op.key.to_string()));
                let fault = self.fault();
                let result = match fault {
                    Fault::Down => Err(ChipError::Unreachable("down".into())),
                    _ => self.bank.call(&op.key, op.kind, &op.account, op.amount),
                };
                let result =
                    if fault == Fault::Lost { Err(ChipError::Unreachable("lost".into())) } else { result };
                let answer = LedgerInput::Answered { hand, id, result };
                match fault {
                    Fault::Twice => vec![answer.clone(), answer],
                    Fault::Late => {
                        self.late.push(answer);
                        Vec::new()
                    }
                    _ => vec![answer],
                }
            }
            LedgerEffect::Balances { hand, id, accounts } => {
                let results = accounts
                    .iter()
                    .map(|a| Ok(Chips(self.bank.balances.get(a).copied().unwrap_or(0))))
                    .collect();
                vec![LedgerInput::Balances { hand, id, results }]
            }
            LedgerEffect::Provider { hand, id, step } => {
                self.sent.push((self.now, format!("{step:?}")));
                self.bank.steps.push(step.clone());
                let result = match (self.fault(), &step) {
                    (Fault::Down, _) => Err(ChipError::Unreachable("down".into())),
                    (Fault::Refuse, _) => Err(ChipError::BadRequest("stake locked elsewhere".into())),
                    (_, HandStep::Open(stakes))
                        if stakes
                            .iter()
                            .any(|(a, s)| self.bank.balances.get(a).copied().unwrap_or(0) < s.0) =>
                    {
                        Err(ChipError::BadRequest("stake above the balance".into()))
                    }
                    (_, HandStep::Open(stakes)) => {
                        self.bank.locked.insert(hand.clone(), stakes.clone());
                        Ok(Chips::ZERO)
                    }
                    (_, HandStep::Close | HandStep::Abandon) => {
                        self.bank.locked.remove(&hand);
                        Ok(Chips::ZERO)
                    }
                };
                vec![LedgerInput::Answered { hand, id, result }]
            }
            LedgerEffect::Report(r) => {
                self.reports.push(r);
                Vec::new()
            }
        }
    }

    /// Moves the virtual clock by `d` (firing what falls due on the way).
    fn advance(&mut self, d: Duration) {
        let end = self.now + d;
        while let Some(t) = self.ledger.poll_timeout().filter(|t| *t <= end) {
            self.now = self.now.max(t);
            self.ledger.handle_timeout(self.now);
            self.run();
        }
        self.now = end;
        self.ledger.handle_timeout(self.now);
        self.run();
    }

    /// Delivers the answers held back.
    fn deliver_late(&mut self) {
        for i in std::mem::take(&mut self.late) {
            self.ledger.handle(self.now, i);
        }
        self.run();
    }

    fn submit(&mut self, job: Job) -> u32 {
        self.next_tag += 1;
        let tag = self.next_tag;
        self.ledger.submit(self.now, tag, job);
        self.run();
        tag
    }

    fn outcome(&mut self, tag: u32) -> Outcome {
        let i = self
            .outcomes
            .iter()
            .position(|(t, _)| *t == tag)
            .unwrap_or_else(|| panic!("no outcome for job {tag}"));
        self.outcomes.remove(i).1
    }

    fn has_outcome(&self, tag: u32) -> bool {
        self.outcomes.iter().any(|(t, _)| *t == tag)
    }

    /// A crash: the ledger is gone; what is on disk stays.
    fn crash(&mut self) {
        self.ledger = Ledger::new(Policy { attempts: 3, call_timeout: TIMEOUT }, self.mode);
        self.faults.clear();
        self.late.clear();
    }

    /// The next start: every open journal recovered.
    fn recover(&mut self) -> Vec<Outcome> {
        let files: Vec<(HandRef, Vec<JournalLine>)> =
            self.open.iter().map(|(h, l)| (h.clone(), l.clone())).collect();
        let mut tags = Vec::new();
        for (_, lines) in files {
            self.next_tag += 1;
            tags.push(self.next_tag);
            self.ledger.recover(self.now, self.next_tag, lines, dealer());
            self.run();
        }
        while !self.ledger.is_idle() {
            let t = self.ledger.poll_timeout().expect("a recovery waits for something");
            self.advance(t - self.now);
        }
        tags.into_iter().map(|t| self.outcome(t)).collect()
    }
}

fn hand(id: &str) -> HandRef {
    HandRef::new("r", id)
}

fn open(h: &mut Harness, id: &str, stakers: &[&str]) -> Outcome {
    let tag = h.submit(Job::Open {
        hand: hand(id),
        hand_number: Some(7),
        at_ms: 0,
        stakers: stakers.iter().map(|a| acct(a)).collect(),
        cap: Chips(1_000),
    });
    h.outcome(tag)
}

fn mv(kind: ChipOp, a: &str, n: u64) -> Move {
    Move { kind, account: acct(a), amount: Chips(n), memo: "bet".into() }
}

fn moves(h: &mut Harness, id: &str, m: Vec<Move>, undo: bool) -> Outcome {
    let tag = h.submit(Job::Moves { hand: hand(id), moves: m, undo_on_refusal: undo });
    h.outcome(tag)
}

fn settle(h: &mut Harness, id: &str, fee: u64) -> u32 {
    h.submit(Job::Settle { hand: hand(id), fee: Chips(fee), dealer: dealer() })
}

use ChipOp::{Credit, Debit};

fn ends(lines: &[JournalLine]) -> Vec<String> {
    lines
        .iter()
        .filter_map(|l| match l {
            JournalLine::End { outcome } => Some(outcome.clone()),
            _ => None,
        })
        .collect()
}

#[test]
fn a_hand_settles_its_moves_and_the_fee_and_conserves_chips() {
    let mut h = Harness::new(Settlement::PerCall, Bank::with(&[("a", 100), ("b", 100)]));
    assert_eq!(open(&mut h, "h1", &[]), Outcome::Done(Ok(())));
    let m = moves(&mut h, "h1", vec![mv(Debit, "a", 10), mv(Debit, "b", 10)], false);
    assert_eq!(m, Outcome::Moves(Ok(vec![Chips(90), Chips(90)])));
    assert_eq!(moves(&mut h, "h1", vec![mv(Credit, "a", 18)], false), Outcome::Moves(Ok(vec![Chips(108)])));
    let t = settle(&mut h, "h1", 2);
    assert_eq!(h.outcome(t), Outcome::Done(Ok(())));
    assert_eq!((h.bank.balance("a"), h.bank.balance("b"), h.bank.balance("dealer:x")), (108, 90, 2));
    assert_eq!(h.bank.total(), 200);
    assert!(h.open.is_empty(), "the journal is archived");
    let (_, lines) = &h.log[0];
    assert_eq!(ends(lines), vec!["settled"]);
    assert!(matches!(lines[0], JournalLine::Begin { hand_number: Some(7), .. }));
    assert!(h.ledger.is_idle());
    // The hand is gone: a late job for it is answered, not run.
    let t = h.submit(Job::Void { hand: hand("h1") });
    assert_eq!(h.outcome(t), Outcome::Done(Err("no chip journal".into())));
}

/// A per-hand provider refuses the stakes: the hand does not start, the
/// attempt is released, nothing moved, and its journal (begin, void, end)
/// is closed with no operation in it.
#[test]
fn a_refused_lock_leaves_no_trace_in_the_hand() {
    let mut h = Harness::new(Settlement::PerHand, Bank::with(&[("a", 100), ("b", 2_000)]));
    // Stakes are the balances, capped; an account without chips is left out.
    assert_eq!(open(&mut h, "h1", &["a", "b", "nobody"]), Outcome::Done(Ok(())));
    assert_eq!(h.bank.locked[&hand("h1")], vec![(acct("a"), Chips(100)), (acct("b"), Chips(1_000))]);

    h.faults.push_back(Fault::Refuse);
    let o = open(&mut h, "h2", &["a"]);
    assert_eq!(o, Outcome::Done(Err("locking the stakes: bad request: stake locked elsewhere".into())));
    assert_eq!(
        h.bank.steps[1..],
        [HandStep::Open(vec![(acct("a"), Chips(100))]), HandStep::Abandon],
        "the attempt is released"
    );
    let (r, lines) = h.log.last().unwrap();
    assert_eq!(r, &hand("h2"));
    assert!(lines.iter().all(|l| !matches!(l, JournalLine::Intent { .. } | JournalLine::Status { .. })));
    assert!(lines.contains(&JournalLine::Void));
    assert_eq!(ends(lines), vec!["voided"]);
    assert_eq!(h.bank.balance("a"), 100);
    assert_eq!(h.ledger.ops(&hand("h2")), None);
    // Nothing moves in a hand that never opened.
    assert_eq!(
        moves(&mut h, "h2", vec![mv(Debit, "a", 1)], false),
        Outcome::Moves(Err((MoveFailure::Unavailable("no chip journal".into()), false)))
    );
    // No stake at all: refused before the provider is asked.
    let o = open(&mut h, "h3", &["nobody"]);
    assert_eq!(o, Outcome::Done(Err("no player has chips to stake".into())));
}

/// A crash after the stakes were taken and before the settlement: the
/// restart refunds every chip from the journal, once.
#[test]
fn a_crash_between_lock_and_settle_refunds_at_the_next_start() {
    let mut h = Harness::new(Settlement::PerCall, Bank::with(&[("a", 100), ("b", 100)]));
    open(&mut h, "h1", &[]);
    moves(&mut h, "h1", vec![mv(Debit, "a", 25), mv(Debit, "b", 25)], false);
    // The next debit's answer is lost, and the process dies mid-call.
    h.faults.push_back(Fault::Late);
    h.submit(Job::Moves { hand: hand("h1"), moves: vec![mv(Debit, "a", 7)], undo_on_refusal: false });
    assert_eq!(h.bank.balance("a"), 68, "applied at the provider");
    h.crash();
    let r = h.recover();
    let Outcome::Recovered(Ok(rec)) = &r[0] else { panic!("{r:?}") };
    assert_eq!((rec.outcome, rec.hand_number), (RecoveredAs::Refunded, Some(7)));
    assert_eq!(rec.totals.debits, rec.totals.credits);
    assert_eq!((h.bank.balance("a"), h.bank.balance("b")), (100, 100));
    assert_eq!(h.bank.total(), 200);
    assert!(h.open.is_empty());
    assert_eq!(ends(&h.log[0].1), vec!["voided-after-restart"]);
    // A second start finds nothing open; nothing moves.
    let applied = h.bank.applied;
    assert!(h.recover().is_empty());
    assert_eq!(h.bank.applied, applied);
}

/// A crash after `complete` and before the dealer's fee was asked for:
/// the restart settles the hand, fee included; a crash after `void` refunds it.
#[test]
fn a_crash_after_complete_settles_and_one_after_void_refunds() {
    let mut h = Harness::new(Settlement::PerCall, Bank::with(&[("a", 100), ("b", 100)]));
    open(&mut h, "h1", &[]);
    moves(&mut h, "h1", vec![mv(Debit, "a", 10), mv(Debit, "b", 10), mv(Credit, "a", 17)], false);
    h.faults.push_back(Fault::Late);
    settle(&mut h, "h1", 3);
    let on_disk = h.open[&hand("h1")].clone();
    assert!(on_disk.contains(&JournalLine::Complete { fee: Some(Chips(3)) }));
    h.crash();
    let r = h.recover();
    let Outcome::Recovered(Ok(rec)) = &r[0] else { panic!("{r:?}") };
    assert_eq!(rec.outcome, RecoveredAs::Settled);
    assert_eq!(h.bank.balance("dealer:x"), 3, "the fee is paid once (its key asked again)");
    assert_eq!(h.bank.total(), 200);

    let mut h = Harness::new(Settlement::PerCall, Bank::with(&[("a", 100)]));
    open(&mut h, "h2", &[]);
    moves(&mut h, "h2", vec![mv(Debit, "a", 10)], false);
    h.faults.extend([Fault::Late]);
    h.submit(Job::Void { hand: hand("h2") });
    h.crash();
    let r = h.recover();
    assert!(matches!(&r[0], Outcome::Recovered(Ok(rec)) if rec.outcome == RecoveredAs::Refunded), "{r:?}");
    assert_eq!(h.bank.balance("a"), 100);
}

/// The dealer's fee credit fails: it is retried with the same key after
/// 20 ms, then 40 ms (deadlines, no sleep), and when the provider is still
/// down the settlement fails with the journal left open; the next start
/// settles the hand (the fee asked again) and chips are conserved.
#[test]
fn a_settle_that_fails_retries_with_backoff_then_recovery_settles_it() {
    let mut h = Harness::new(Settlement::PerCall, Bank::with(&[("a", 100), ("b", 100)]));
    open(&mut h, "h1", &[]);
    moves(&mut h, "h1", vec![mv(Debit, "a", 10), mv(Debit, "b", 10), mv(Credit, "b", 15)], false);
    h.faults.extend([Fault::Down, Fault::Down, Fault::Down]);
    let t = settle(&mut h, "h1", 5);
    assert!(!h.has_outcome(t), "waiting for a retry");
    let first = h.now;
    assert_eq!(h.ledger.poll_timeout(), Some(first + backoff(0)));
    h.advance(backoff(0) - Duration::from_millis(1));
    assert_eq!(h.sent.iter().filter(|(_, k)| k == "r/h1/3").count(), 1, "no retry before its deadline");
    h.advance(Duration::from_millis(1));
    h.advance(backoff(1));
    let fee_calls: Vec<Instant> = h.sent.iter().filter(|(_, k)| k == "r/h1/3").map(|(t, _)| *t).collect();
    assert_eq!(
        fee_calls,
        vec![first, first + backoff(0), first + backoff(0) + backoff(1)],
        "same key each time"
    );
    assert_eq!(
        h.outcome(t),
        Outcome::Done(Err("dealer credit failed: chip provider: chip service unreachable: down".into()))
    );
    assert_eq!(h.bank.balance("dealer:x"), 0);
    let lines = &h.open[&hand("h1")];
    assert!(lines.contains(&JournalLine::Status {
        n: 3,
        status: OpStatus::Uncertain,
        error: Some("chip service unreachable: down".into())
    }));
    // The provider is back; the next start settles the hand.
    h.crash();
    let r = h.recover();
    assert!(matches!(&r[0], Outcome::Recovered(Ok(rec)) if rec.outcome == RecoveredAs::Settled), "{r:?}");
    assert_eq!((h.bank.balance("a"), h.bank.balance("b"), h.bank.balance("dealer:x")), (90, 105, 5));
    assert_eq!(h.bank.total(), 200);
}

/// Moves that do not add up: the settlement voids the hand instead and
/// gives every chip back (debit the gainers first, then credit).
#[test]
fn an_unbalanced_settlement_voids_and_refunds() {
    let mut h = Harness::new(Settlement::PerCall, Bank::with(&[("a", 100), ("b", 100)]));
    open(&mut h, "h1", &[]);
    moves(&mut h, "h1", vec![mv(Debit, "a", 10), mv(Credit, "b", 4)], false);
    let t = settle(&mut h, "h1", 0);
    assert_eq!(h.outcome(t), Outcome::Unbalanced("conservation broken: debited 10, credited 4".into()));
    assert_eq!((h.bank.balance("a"), h.bank.balance("b")), (100, 100));
    assert_eq!(ends(&h.log[0].1), vec!["voided"]);
    let keys: Vec<&str> = h.sent.iter().map(|(_, k)| k.as_str()).collect();
    assert_eq!(keys[2..], ["r/h1/refund-2", "r/h1/refund-3"]);
}

/// A provider that answers twice, and one whose answer comes after the
/// ledger timed out and asked again: the second answer is ignored, the
/// retry's key is the same, so nothing is credited twice.
#[test]
fn a_provider_that_answers_twice_credits_once() {
    let mut h = Harness::new(Settlement::PerCall, Bank::with(&[("a", 100)]));
    open(&mut h, "h1", &[]);
    h.faults.push_back(Fault::Twice);
    assert_eq!(moves(&mut h, "h1", vec![mv(Debit, "a", 10)], false), Outcome::Moves(Ok(vec![Chips(90)])));
    // Late: no answer within the call timeout; the retry (same key) gets
    // the first answer; then the late one arrives.
    h.faults.push_back(Fault::Late);
    let t =
        h.submit(Job::Moves { hand: hand("h1"), moves: vec![mv(Credit, "a", 10)], undo_on_refusal: false });
    assert!(!h.has_outcome(t));
    h.advance(TIMEOUT + backoff(0));
    assert_eq!(h.outcome(t), Outcome::Moves(Ok(vec![Chips(100)])));
    h.deliver_late();
    assert!(h.outcomes.is_empty());
    assert_eq!(h.bank.balance("a"), 100, "credited once");
    assert_eq!(h.bank.applied, 2);
    let statuses = h.open[&hand("h1")].iter().filter(|l| matches!(l, JournalLine::Status { .. })).count();
    assert_eq!(statuses, 2, "one answer recorded per operation");
    let t = settle(&mut h, "h1", 0);
    assert_eq!(h.outcome(t), Outcome::Done(Ok(())));
}

/// A refused debit in a player's action: the earlier moves of the action
/// are given back (keys `undo-<n>`), the hand goes on.
#[test]
fn a_refused_debit_undoes_the_action() {
    let mut h = Harness::new(Settlement::PerCall, Bank::with(&[("a", 10)]));
    open(&mut h, "h1", &[]);
    moves(&mut h, "h1", vec![mv(Debit, "a", 4)], false);
    let o = moves(&mut h, "h1", vec![mv(Debit, "a", 3), mv(Debit, "a", 30)], true);
    let Outcome::Moves(Err((MoveFailure::Refused(why), true))) = o else { panic!("{o:?}") };
    assert!(why.contains("insufficient"), "{why}");
    assert_eq!(h.bank.balance("a"), 6);
    assert!(h.sent.iter().any(|(_, k)| k == "r/h1/undo-3"));
    let t = h.submit(Job::Void { hand: hand("h1") });
    assert_eq!(h.outcome(t), Outcome::Done(Ok(())));
    assert_eq!(h.bank.balance("a"), 10);
}

/// A void whose refund the provider does not answer: the job fails at
/// once, the chips are reported held, and the refund is retried in the
/// background on deadlines (250 ms, then doubling) until the provider
/// answers; then they are released and the journal closed.
#[test]
fn a_refund_the_provider_does_not_answer_goes_on_in_the_background() {
    let mut h = Harness::new(Settlement::PerCall, Bank::with(&[("a", 100)]));
    open(&mut h, "h1", &[]);
    moves(&mut h, "h1", vec![mv(Debit, "a", 40)], false);
    h.faults.extend([Fault::Down; 6]);
    let t = h.submit(Job::Void { hand: hand("h1") });
    h.advance(backoff(0) + backoff(1));
    assert_eq!(
        h.outcome(t),
        Outcome::Done(Err("the chip service did not answer; the refund is retried in the background".into()))
    );
    assert_eq!(h.reports, vec![Report::Holding { hand: hand("h1"), held: vec![(acct("a"), 40)] }]);
    assert_eq!(h.ledger.held(&acct("a")), Chips(40));
    assert!(!h.ledger.is_idle());
    // The other jobs go on meanwhile.
    assert_eq!(open(&mut h, "h2", &[]), Outcome::Done(Ok(())));
    h.advance(FIRST_PAUSE + backoff(0) + backoff(1));
    assert_eq!(h.bank.balance("a"), 60, "still down");
    h.advance(FIRST_PAUSE * 2);
    assert_eq!(h.bank.balance("a"), 100);
    assert_eq!(h.ledger.held(&acct("a")), Chips(0));
    assert!(matches!(h.reports.last(), Some(Report::Released { .. })));
    assert_eq!(ends(&h.log[0].1), vec!["voided"]);
}

/// Closing a settled hand's journal fails (no space): the outcome is
/// given, and the close is retried in the background until it goes through.
#[test]
fn an_ended_journal_the_file_system_refuses_is_closed_later() {
    let mut h = Harness::new(Settlement::PerCall, Bank::with(&[("a", 100)]));
    open(&mut h, "h1", &[]);
    moves(&mut h, "h1", vec![mv(Debit, "a", 5), mv(Credit, "a", 5)], false);
    // Complete, End, then the archive: refuse the archive twice.
    let t = h.next_tag + 1;
    h.next_tag = t;
    h.ledger.submit(h.now, t, Job::Settle { hand: hand("h1"), fee: Chips(0), dealer: dealer() });
    while let Some(e) = h.ledger.poll_effect() {
        if matches!(e, LedgerEffect::Archive { .. }) {
            h.journal_errors = 2;
        }
        for i in h.effect(e) {
            h.ledger.handle(h.now, i);
        }
    }
    h.run();
    assert_eq!(h.outcome(t), Outcome::Done(Ok(())));
    assert!(h.open.contains_key(&hand("h1")));
    h.advance(FIRST_PAUSE * 3);
    assert!(h.open.is_empty() && h.ledger.is_idle());
    assert!(matches!(h.reports[0], Report::ArchiveRetry { .. }));
}

/// A per-hand provider: after a crash its own journal decides; the
/// dealer's journal is only closed. A journal without its first line is refused.
#[test]
fn recovery_with_a_per_hand_provider_moves_nothing_itself() {
    let mut h = Harness::new(Settlement::PerHand, Bank::with(&[("a", 100)]));
    assert_eq!(open(&mut h, "h1", &["a"]), Outcome::Done(Ok(())));
    moves(&mut h, "h1", vec![mv(Debit, "a", 5)], false);
    h.crash();
    let sent = h.sent.len();
    let r = h.recover();
    assert!(matches!(&r[0], Outcome::Recovered(Ok(rec)) if rec.outcome == RecoveredAs::ByProvider), "{r:?}");
    assert_eq!(h.sent.len(), sent);
    assert_eq!(ends(&h.log[0].1), vec!["reconciled-by-provider"]);
    h.ledger.recover(h.now, 99, vec![JournalLine::Void], dealer());
    h.run();
    assert_eq!(h.outcome(99), Outcome::Recovered(Err(LedgerError::NoBegin)));
}

/// Journals written before issue #28 (no hand number, no fee with
/// `complete`) still read; today's lines keep their shape.
#[test]
fn older_journal_lines_still_read() {
    let begin: JournalLine =
        serde_json::from_str(r#"{"kind":"begin","room":"r","hand_id":"h","at_ms":1}"#).unwrap();
    assert!(matches!(begin, JournalLine::Begin { hand_number: None, .. }));
    let complete: JournalLine = serde_json::from_str(r#"{"kind":"complete"}"#).unwrap();
    assert!(matches!(complete, JournalLine::Complete { fee: None }));
    let line = serde_json::to_string(&JournalLine::Complete { fee: Some(Chips(3)) }).unwrap();
    assert_eq!(line, r#"{"kind":"complete","fee":3}"#);
    let status = r#"{"kind":"status","n":2,"status":"uncertain","error":"x"}"#;
    assert_eq!(serde_json::to_string(&serde_json::from_str::<JournalLine>(status).unwrap()).unwrap(), status);
}

// ----- daily and rescue grants (REQ-020a) ------------------------------------

mod day_grants {
    use claw_chips::ledger::welcome::{
        day_of, DayCaps, Decision, GrantKind, GrantLine, WelcomeBook, WelcomeCaps,
    };
    use claw_protocol::Chips;

    use super::acct;

    const DAY_MS: u64 = 86_400_000;
    /// 2026-12-05 00:00 UTC+8, in unix ms (a day boundary of the grants).
    const MIDNIGHT: u64 = 1_796_400_000_000;

    fn off() -> WelcomeCaps {
        WelcomeCaps { amount: Chips::ZERO, total: None, per_period: None }
    }

    fn days() -> Vec<(GrantKind, DayCaps)> {
        vec![
            (
                GrantKind::Daily,
                DayCaps { amount: Chips(5_000), below: None, per_account: 1, budget_per_day: Some(12_000) },
            ),
            (
                GrantKind::Rescue,
                DayCaps {
                    amount: Chips(1_000),
                    below: Some(Chips(500)),
                    per_account: 1,
                    budget_per_day: None,
                },
            ),
        ]
    }

    /// Decides and keeps the record, as the node does (line first).
    fn claim(
        b: &mut WelcomeBook,
        rec: &mut Vec<GrantLine>,
        k: GrantKind,
        who: &str,
        bal: u64,
        at: u64,
    ) -> Decision {
        let d = b.decide_day(k, &acct(who), Chips(bal), at);
        if let Decision::Grant(l) = &d {
            rec.push(l.clone());
        }
        d
    }

    #[test]
    fn days_are_utc_plus_8_calendar_days() {
        assert_eq!(MIDNIGHT % 1000, 0);
        assert_eq!(day_of(MIDNIGHT), day_of(MIDNIGHT + DAY_MS - 1));
        assert_eq!(day_of(MIDNIGHT - 1) + 1, day_of(MIDNIGHT));
    }

    #[test]
    fn the_daily_grant_is_once_a_day_per_account_within_the_node_budget_across_restarts() {
        let mut rec = Vec::new();
        let mut b = WelcomeBook::replay_all(off(), days(), []);
        let t = MIDNIGHT + 3_600_000;
        assert!(matches!(claim(&mut b, &mut rec, GrantKind::Daily, "a", 0, t), Decision::Grant(_)));
        assert_eq!(claim(&mut b, &mut rec, GrantKind::Daily, "a", 0, t + 1), Decision::Already);
        assert!(matches!(claim(&mut b, &mut rec, GrantKind::Daily, "b", 10_000_000, t), Decision::Grant(_)));
        // Restart: the record restores the per-account limit and the budget.
        let mut b = WelcomeBook::replay_all(off(), days(), rec.clone());
        assert_eq!(claim(&mut b, &mut rec, GrantKind::Daily, "a", 0, t + 60_000), Decision::Already);
        assert_eq!(b.granted_on(GrantKind::Daily, t), 10_000);
        // A sybil: the node's 12 000 a day leaves no room for a third 5 000.
        assert_eq!(claim(&mut b, &mut rec, GrantKind::Daily, "sybil", 0, t), Decision::PeriodUsedUp);
        // Just before midnight still today; at midnight a new day.
        assert_eq!(
            claim(&mut b, &mut rec, GrantKind::Daily, "a", 0, MIDNIGHT + DAY_MS - 1),
            Decision::Already
        );
        assert!(matches!(
            claim(&mut b, &mut rec, GrantKind::Daily, "a", 0, MIDNIGHT + DAY_MS),
            Decision::Grant(_)
        ));
        assert!(matches!(
            claim(&mut b, &mut rec, GrantKind::Daily, "sybil", 0, MIDNIGHT + DAY_MS),
            Decision::Grant(_)
        ));
        let b = WelcomeBook::replay_all(off(), days(), rec);
        assert_eq!(b.granted_on(GrantKind::Daily, MIDNIGHT + DAY_MS), 10_000);
        assert_eq!(b.granted(), 0, "welcome chips are counted apart");
    }

    #[test]
    fn the_rescue_comes_only_below_its_level_once_a_day_and_a_refusal_gives_it_back() {
        let mut rec = Vec::new();
        let mut b = WelcomeBook::replay_all(off(), days(), []);
        let t = MIDNIGHT + 1;
        assert_eq!(claim(&mut b, &mut rec, GrantKind::Rescue, "a", 500, t), Decision::NotLow);
        let Decision::Grant(GrantLine::Grant { grant, account, amount, at_ms }) =
            claim(&mut b, &mut rec, GrantKind::Rescue, "a", 499, t)
        else {
            panic!("a rescue below 500")
        };
        assert_eq!((grant, amount), (GrantKind::Rescue, Chips(1_000)));
        assert_eq!(claim(&mut b, &mut rec, GrantKind::Rescue, "a", 0, t + 5), Decision::Already);
        // The operator account could not pay: refused, not counted.
        let refused = GrantLine::Refused { grant, account, amount, at_ms };
        b.apply(&refused);
        rec.push(refused);
        let mut b = WelcomeBook::replay_all(off(), days(), rec.clone());
        assert!(matches!(claim(&mut b, &mut rec, GrantKind::Rescue, "a", 0, t + 9), Decision::Grant(_)));
        assert_eq!(claim(&mut b, &mut rec, GrantKind::Rescue, "a", 0, t + 10), Decision::Already);
        // Off: a book without the setting grants nothing.
        let mut none = WelcomeBook::replay_all(off(), [], []);
        assert_eq!(none.decide_day(GrantKind::Daily, &acct("z"), Chips::ZERO, t), Decision::NotLow);
    }

    #[test]
    fn day_lines_are_told_apart_and_welcome_lines_read_as_before() {
        let old = r#"{"kind":"grant","account":"a","amount":10,"at_ms":1}"#;
        let l: GrantLine = serde_json::from_str(old).unwrap();
        assert!(matches!(l, GrantLine::Grant { grant: GrantKind::Welcome, .. }));
        assert_eq!(serde_json::to_string(&l).unwrap(), old, "welcome lines are written unchanged");
        let day =
            GrantLine::Grant { grant: GrantKind::Daily, account: acct("a"), amount: Chips(5), at_ms: 2 };
        let text = serde_json::to_string(&day).unwrap();
        assert!(text.contains(r#""grant":"daily""#), "{text}");
        // A daily grant does not welcome the account.
        let caps = WelcomeCaps { amount: Chips(10), total: None, per_period: None };
        let mut b = WelcomeBook::replay_all(caps, days(), [day]);
        assert!(b.claim(&acct("a")));
    }
}
