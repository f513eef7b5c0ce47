//! Per-hand settlement over any per-call ledger: at hand start each stake
//! moves into an escrow account in one atomic call, the hand's debits and
//! credits are booked locally (checked against the stakes, journaled), and
//! at hand end one atomic call pays every seat and the house out of escrow.
//! A table then makes two durable ledger writes per hand instead of one per
//! bet; a crash mid-hand refunds the stakes, a crash after the result is
//! journaled settles it, each exactly once (the calls carry fixed keys).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use claw_protocol::Chips;
use serde::{Deserialize, Serialize};

use crate::book::{apply_in_hand, bad, lock, HandBook, LiveHand, OpLine};
use crate::hand_journal::{file_name, read_lines, HandFile, Journal, JournalError};
use crate::{AccountId, AccountOp, ChipError, ChipOp, ChipProvider, HandRef, IdempotencyKey, Reconciled};

/// How an escrowed hand ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Outcome {
    /// The result was paid out of escrow.
    Settled,
    /// Every stake went back to its owner.
    Refunded,
    /// The stakes were never taken (the opening call was refused).
    NotOpened,
}

impl std::fmt::Display for Outcome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Outcome::Settled => "settled",
            Outcome::Refunded => "refunded",
            Outcome::NotOpened => "never opened",
        })
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", tag = "line")]
enum Line {
    /// Intent to move the stakes into escrow (before the call).
    Open { hand: HandRef, stakes: Vec<(AccountId, Chips)> },
    /// A debit or credit inside the hand (booked locally).
    Op(OpLine),
    /// Intent to pay out of escrow (before the call).
    Close { payouts: Vec<Chips>, fee: Chips },
    /// The hand is over at the ledger.
    End { outcome: Outcome },
}

/// What a journal file says about a hand.
struct Record {
    hand: HandRef,
    stakes: Vec<(AccountId, Chips)>,
    close: Option<(Vec<Chips>, Chips)>,
    ended: bool,
}

fn read_record(path: &Path) -> Result<Record, JournalError> {
    let mut rec: Option<Record> = None;
    for l in read_lines::<Line>(path)? {
        match (l, rec.as_mut()) {
            (Line::Open { hand, stakes }, None) => {
                rec = Some(Record { hand, stakes, close: None, ended: false })
            }
            (Line::Close { payouts, fee }, Some(r)) => r.close = Some((payouts, fee)),
            (Line::End { .. }, Some(r)) => r.ended = true,
            _ => {}
        }
    }
    rec.ok_or_else(|| JournalError(format!("{}: no open line", path.display())))
}

struct Live {
    /// The stakes the dealer asked for (a repeated opening must match).
    asked: Vec<(AccountId, Chips)>,
    /// The stakes taken into escrow.
    stakes: Vec<(AccountId, Chips)>,
    book: HandBook,
    /// The opening call's success is known.
    opened: bool,
    /// The result is journaled: no more operations.
    closing: bool,
    /// None while a call of the hand is in flight.
    file: Option<HandFile>,
}

impl LiveHand for Live {
    type Line = Line;

    fn refusal(&self, hand: &HandRef) -> Option<String> {
        if self.closing {
            Some(format!("hand {hand} is being settled"))
        } else if !self.opened {
            Some(format!("hand {hand}: the stakes are not in escrow yet"))
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

/// A [`ChipProvider`] that settles per hand through escrow on `inner`.
/// Calls outside an open hand (grants, transfers) go straight to `inner`.
pub struct EscrowChips {
    inner: Arc<dyn ChipProvider>,
    /// Holds the stakes of the hands in play.
    escrow: AccountId,
    /// The dealer's account: chips credited to it in a hand are its take.
    house: AccountId,
    journal: Journal,
    live: Mutex<HashMap<HandRef, Live>>,
}

fn key(hand: &HandRef, what: &str) -> Result<IdempotencyKey, ChipError> {
    Ok(IdempotencyKey::new(format!("{}/escrow/{what}", hand.key_prefix()))?)
}

/// Debit every stake, credit their sum to escrow.
fn open_ops(stakes: &[(AccountId, Chips)], escrow: &AccountId) -> Result<Vec<AccountOp>, ChipError> {
    let mut ops: Vec<AccountOp> =
        stakes.iter().map(|(a, s)| AccountOp::new(ChipOp::Debit, a, *s, "stake into escrow")).collect();
    let total =
        stakes.iter().try_fold(0u64, |t, (_, s)| t.checked_add(s.0)).ok_or_else(|| bad("stakes overflow"))?;
    ops.push(AccountOp::new(ChipOp::Credit, escrow, Chips(total), "stakes of the hand"));
    Ok(ops)
}

/// Debit escrow by the stakes, credit each (account, amount) that is positive.
fn payout_ops(
    stakes: &[(AccountId, Chips)],
    escrow: &AccountId,
    pay: impl IntoIterator<Item = (AccountId, Chips)>,
    memo: &str,
) -> Vec<AccountOp> {
    let total: u64 = stakes.iter().map(|(_, s)| s.0).sum();
    let mut ops = vec![AccountOp::new(ChipOp::Debit, escrow, Chips(total), memo)];
    ops.extend(
        pay.into_iter().filter(|(_, c)| c.0 > 0).map(|(a, c)| AccountOp::new(ChipOp::Credit, &a, c, memo)),
    );
    ops
}

impl EscrowChips {
    /// Wraps `inner`; `escrow` holds stakes, `house` is the dealer's
    /// account, and the journal lives in `journal_dir`.
    pub fn new(
        inner: Arc<dyn ChipProvider>,
        escrow: AccountId,
        house: AccountId,
        journal_dir: &Path,
    ) -> Result<EscrowChips, ChipError> {
        if escrow == house {
            return Err(bad("the escrow account must not be the dealer's account"));
        }
        Ok(EscrowChips {
            inner,
            escrow,
            house,
            journal: Journal::new(journal_dir)?,
            live: Mutex::new(HashMap::new()),
        })
    }

    /// The account holding the stakes.
    pub fn escrow_account(&self) -> &AccountId {
        &self.escrow
    }

    fn close_ops(&self, stakes: &[(AccountId, Chips)], payouts: &[Chips], fee: Chips) -> Vec<AccountOp> {
        let pay = stakes.iter().zip(payouts).map(|((a, _), p)| (a.clone(), *p));
        payout_ops(stakes, &self.escrow, pay.chain([(self.house.clone(), fee)]), "hand result")
    }

    /// Sends the opening call of a pending hand (its file taken out of `live`).
    async fn lock_stakes(
        &self,
        hand: &HandRef,
        stakes: &[(AccountId, Chips)],
        file: HandFile,
    ) -> Result<(), ChipError> {
        let result = match key(hand, "open") {
            Ok(k) => match open_ops(stakes, &self.escrow) {
                Ok(ops) => self.inner.settle(&k, &ops).await,
                Err(e) => Err(e),
            },
            Err(e) => Err(e),
        };
        let mut live = lock(&self.live);
        match result {
            Err(e) if !e.is_retryable() => {
                live.remove(hand);
                drop(live);
                self.end(file, Outcome::NotOpened)?;
                Err(e)
            }
            other => {
                if let Some(h) = live.get_mut(hand) {
                    h.opened |= other.is_ok();
                    h.file = Some(file);
                }
                other
            }
        }
    }

    /// Returns every stake: the opening call is re-issued first (same key:
    /// a no-op if it was applied), so escrow never pays back what it never got.
    async fn refund(&self, hand: &HandRef, stakes: &[(AccountId, Chips)]) -> Result<Outcome, ChipError> {
        match self.inner.settle(&key(hand, "open")?, &open_ops(stakes, &self.escrow)?).await {
            Ok(()) => {}
            Err(e) if e.is_retryable() => return Err(e),
            Err(_) => return Ok(Outcome::NotOpened),
        }
        let ops = payout_ops(stakes, &self.escrow, stakes.iter().cloned(), "stake back");
        self.inner.settle(&key(hand, "refund")?, &ops).await?;
        Ok(Outcome::Refunded)
    }

    fn end(&self, mut file: HandFile, outcome: Outcome) -> Result<(), ChipError> {
        file.append(&Line::End { outcome }, true)?;
        Ok(self.journal.archive(file)?)
    }

    /// Finishes every journaled hand this process is not running: paid out
    /// when its result was journaled, else refunded; each exactly once. A
    /// hand that cannot be finished now (an unreadable file, the ledger
    /// down) does not hold up the others: its file stays open for the next
    /// start, each is logged by name, and the error counts them.
    pub async fn reconcile_journal(&self) -> Result<Reconciled, ChipError> {
        let mut report = Reconciled::default();
        let running: Vec<HandRef> = lock(&self.live).keys().cloned().collect();
        let mut failed: Vec<(PathBuf, ChipError)> = Vec::new();
        for path in self.journal.open_files()? {
            match self.reconcile_file(&path, &running).await {
                Ok(Some((hand, Outcome::Settled))) => report.settled.push(hand),
                Ok(Some((hand, Outcome::Refunded | Outcome::NotOpened))) => report.refunded.push(hand),
                Ok(None) => {}
                Err(e) => {
                    tracing::error!(file = %path.display(), error = %e, "an interrupted escrowed hand could not be reconciled; the next start retries it");
                    failed.push((path, e));
                }
            }
        }
        let Some((first, first_error)) = failed.first() else { return Ok(report) };
        let done = report.settled.len() + report.refunded.len();
        let detail = format!(
            "{} interrupted escrowed hand(s) not reconciled ({done} reconciled); first {}: {first_error}",
            failed.len(),
            first.display(),
        );
        // Retryable if any of them may succeed on a retry (re-running is idempotent).
        if failed.iter().any(|(_, e)| e.is_retryable()) {
            Err(ChipError::Service(detail))
        } else {
            Err(ChipError::BadRequest(detail))
        }
    }

    /// Finishes one journaled hand; `None` if it is running or had ended.
    async fn reconcile_file(
        &self,
        path: &Path,
        running: &[HandRef],
    ) -> Result<Option<(HandRef, Outcome)>, ChipError> {
        let rec = read_record(path)?;
        if running.contains(&rec.hand) {
            return Ok(None);
        }
        let file = self.journal.reopen(path)?;
        if rec.ended {
            self.journal.archive(file)?;
            return Ok(None);
        }
        let outcome = match &rec.close {
            Some((payouts, fee)) => {
                let ops = self.close_ops(&rec.stakes, payouts, *fee);
                self.inner.settle(&key(&rec.hand, "close")?, &ops).await?;
                Outcome::Settled
            }
            None => self.refund(&rec.hand, &rec.stakes).await?,
        };
        tracing::info!(hand = %rec.hand, %outcome, "reconciled an interrupted escrowed hand");
        self.end(file, outcome)?;
        Ok(Some((rec.hand, outcome)))
    }

    fn apply(&self, key: &IdempotencyKey, ops: &[AccountOp]) -> Option<Result<Chips, ChipError>> {
        let mut live = lock(&self.live);
        if !live.keys().any(|h| h.contains(key)) {
            return None;
        }
        Some(apply_in_hand(&mut live, "escrowed", &self.house, key, ops))
    }

    /// Chips `account` holds in this process's open hands.
    fn in_hands(&self, account: &AccountId) -> u64 {
        lock(&self.live)
            .values()
            .map(|h| {
                if *account == self.house {
                    h.book.fee()
                } else {
                    h.book.seat(account).map_or(0, |i| h.book.in_hand(i))
                }
            })
            .sum()
    }
}

#[async_trait]
impl ChipProvider for EscrowChips {
    fn name(&self) -> &'static str {
        self.inner.name()
    }

    /// The ledger's balance plus what the account holds in open hands.
    async fn balance(&self, account: &AccountId) -> Result<Chips, ChipError> {
        let free = self.inner.balance(account).await?;
        Ok(Chips(free.0.saturating_add(self.in_hands(account))))
    }

    async fn debit(
        &self,
        key: &IdempotencyKey,
        account: &AccountId,
        amount: Chips,
        memo: &str,
    ) -> Result<Chips, ChipError> {
        match self.apply(key, &[AccountOp::new(ChipOp::Debit, account, amount, memo)]) {
            Some(answer) => answer,
            None => self.inner.debit(key, account, amount, memo).await,
        }
    }

    async fn credit(
        &self,
        key: &IdempotencyKey,
        account: &AccountId,
        amount: Chips,
        memo: &str,
    ) -> Result<Chips, ChipError> {
        match self.apply(key, &[AccountOp::new(ChipOp::Credit, account, amount, memo)]) {
            Some(answer) => answer,
            None => self.inner.credit(key, account, amount, memo).await,
        }
    }

    async fn settle(&self, key: &IdempotencyKey, ops: &[AccountOp]) -> Result<(), ChipError> {
        match self.apply(key, ops) {
            Some(answer) => answer.map(|_| ()),
            None => self.inner.settle(key, ops).await,
        }
    }

    fn settles_hands(&self) -> bool {
        true
    }

    /// Journals the stakes, then moves them into escrow in one call. A
    /// refused call ends the hand (nothing was taken); after an unanswered
    /// one the hand stays pending: calling again re-issues the same call,
    /// and [`abandon_hand`](ChipProvider::abandon_hand) refunds it.
    async fn open_hand(&self, hand: &HandRef, stakes: &[(AccountId, Chips)]) -> Result<(), ChipError> {
        let existing = lock(&self.live).get_mut(hand).map(|h| {
            (h.asked == stakes, h.opened, h.stakes.clone(), if h.opened { None } else { h.file.take() })
        });
        match existing {
            Some((false, ..)) => return Err(bad(format!("hand {hand} is open with other stakes"))),
            Some((true, true, ..)) => return Ok(()),
            Some((true, false, taken, Some(file))) => return self.lock_stakes(hand, &taken, file).await,
            Some((true, false, _, None)) => {
                return Err(ChipError::Service(format!("hand {hand}: the opening call is in flight")))
            }
            None => {}
        }
        let mut seen = std::collections::HashSet::new();
        for (account, stake) in stakes {
            if *account == self.house || *account == self.escrow || !seen.insert(account) || stake.0 == 0 {
                return Err(bad(format!(
                    "stake of {account}: each player once, positive, not the dealer or escrow"
                )));
            }
        }
        // Chips an account holds in another open hand here are in escrow
        // already (the balance the dealer staked from counts them).
        let taken: Vec<(AccountId, Chips)> = stakes
            .iter()
            .map(|(a, s)| (a.clone(), Chips(s.0.saturating_sub(self.in_hands(a)))))
            .filter(|(_, s)| s.0 > 0)
            .collect();
        if taken.is_empty() {
            return Err(bad(format!("hand {hand}: no stake left to lock")));
        }
        open_ops(&taken, &self.escrow)?;
        let file = self
            .journal
            .create(&file_name(hand), &Line::Open { hand: hand.clone(), stakes: taken.clone() })?;
        let live = Live {
            asked: stakes.to_vec(),
            stakes: taken.clone(),
            book: HandBook::new(taken.clone()),
            opened: false,
            closing: false,
            file: None,
        };
        lock(&self.live).insert(hand.clone(), live);
        self.lock_stakes(hand, &taken, file).await
    }

    /// Refunds a hand whose opening did not complete (the dealer will not
    /// start it); an opened one is closed with what it booked. Retry after
    /// an error.
    async fn abandon_hand(&self, hand: &HandRef) -> Result<(), ChipError> {
        let pending = {
            let mut live = lock(&self.live);
            match live.get_mut(hand) {
                None => return Ok(()),
                Some(h) if h.opened => None,
                Some(h) => Some((
                    h.stakes.clone(),
                    h.file
                        .take()
                        .ok_or_else(|| ChipError::Service(format!("hand {hand}: a call is in flight")))?,
                )),
            }
        };
        let Some((stakes, file)) = pending else { return self.close_hand(hand).await };
        match self.refund(hand, &stakes).await {
            Ok(outcome) => {
                lock(&self.live).remove(hand);
                self.end(file, outcome)
            }
            Err(e) => {
                if let Some(h) = lock(&self.live).get_mut(hand) {
                    h.file = Some(file);
                }
                Err(e)
            }
        }
    }

    /// Journals the result, then pays every seat and the dealer out of
    /// escrow in one call. Retry after an error.
    async fn close_hand(&self, hand: &HandRef) -> Result<(), ChipError> {
        if lock(&self.live).get(hand).is_some_and(|h| !h.opened) {
            return self.abandon_hand(hand).await;
        }
        let (ops, file) = {
            let mut live = lock(&self.live);
            let h = live.get_mut(hand).ok_or_else(|| bad(format!("hand {hand} is not open here")))?;
            let mut file = h
                .file
                .take()
                .ok_or_else(|| ChipError::Service(format!("hand {hand}: settlement in flight")))?;
            let (payouts, fee) = h.book.result(hand)?;
            if !h.closing {
                if let Err(e) = file.append(&Line::Close { payouts: payouts.clone(), fee }, true) {
                    h.file = Some(file);
                    return Err(e.into());
                }
                h.closing = true;
            }
            (self.close_ops(&h.stakes, &payouts, fee), file)
        };
        match self.inner.settle(&key(hand, "close")?, &ops).await {
            Ok(()) => {
                lock(&self.live).remove(hand);
                self.end(file, Outcome::Settled)
            }
            Err(e) => {
                if let Some(h) = lock(&self.live).get_mut(hand) {
                    h.file = Some(file);
                }
                Err(e)
            }
        }
    }

    async fn reconcile(&self) -> Result<Reconciled, ChipError> {
        self.reconcile_journal().await
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

    use super::*;
    use crate::LocalChips;

    /// The in-memory ledger, whose answers can be lost after it applied a
    /// call (`lose`), or that can be down (`down`): what a network does.
    struct Flaky {
        inner: LocalChips,
        lose: AtomicBool,
        down: AtomicBool,
        settles: AtomicUsize,
    }

    impl Flaky {
        fn new() -> Arc<Flaky> {
            Arc::new(Flaky {
                inner: LocalChips::new(),
                lose: AtomicBool::new(false),
                down: AtomicBool::new(false),
                settles: AtomicUsize::new(0),
            })
        }
        fn gate(&self) -> Result<(), ChipError> {
            if self.down.load(Ordering::SeqCst) {
                return Err(ChipError::Service("down".into()));
            }
            Ok(())
        }
    }

    #[async_trait]
    impl ChipProvider for Flaky {
        fn name(&self) -> &'static str {
            "flaky"
        }
        async fn balance(&self, a: &AccountId) -> Result<Chips, ChipError> {
            self.gate()?;
            self.inner.balance(a).await
        }
        async fn debit(
            &self,
            k: &IdempotencyKey,
            a: &AccountId,
            c: Chips,
            m: &str,
        ) -> Result<Chips, ChipError> {
            self.gate()?;
            self.inner.debit(k, a, c, m).await
        }
        async fn credit(
            &self,
            k: &IdempotencyKey,
            a: &AccountId,
            c: Chips,
            m: &str,
        ) -> Result<Chips, ChipError> {
            self.gate()?;
            self.inner.credit(k, a, c, m).await
        }
        async fn settle(&self, k: &IdempotencyKey, ops: &[AccountOp]) -> Result<(), ChipError> {
            self.gate()?;
            self.settles.fetch_add(1, Ordering::SeqCst);
            self.inner.settle(k, ops).await?;
            if self.lose.swap(false, Ordering::SeqCst) {
                return Err(ChipError::Service("answer lost".into()));
            }
            Ok(())
        }
    }

    fn acc(s: &str) -> AccountId {
        AccountId::new(s).unwrap()
    }

    fn k(hand: &HandRef, s: &str) -> IdempotencyKey {
        IdempotencyKey::new(format!("{}/{s}", hand.key_prefix())).unwrap()
    }

    async fn setup(dir: &Path) -> (Arc<Flaky>, EscrowChips) {
        let ledger = Flaky::new();
        for (a, n) in [("alice", 100), ("bob", 50)] {
            ledger
                .inner
                .credit(&IdempotencyKey::new(format!("grant/{a}")).unwrap(), &acc(a), Chips(n), "grant")
                .await
                .unwrap();
        }
        let e = EscrowChips::new(ledger.clone(), acc("escrow:d"), acc("dealer:d"), dir).unwrap();
        (ledger, e)
    }

    async fn bal(l: &Flaky, a: &str) -> u64 {
        l.inner.balance(&acc(a)).await.unwrap().0
    }

    #[tokio::test]
    async fn a_hand_is_two_ledger_calls_and_pays_the_result() {
        let dir = tempfile::tempdir().unwrap();
        let (ledger, e) = setup(dir.path()).await;
        let hand = HandRef::new("r", "h1");
        e.open_hand(&hand, &[(acc("alice"), Chips(100)), (acc("bob"), Chips(50))]).await.unwrap();
        assert_eq!((bal(&ledger, "alice").await, bal(&ledger, "escrow:d").await), (0, 150));
        // The provider still reports what each holds, in the hand included.
        assert_eq!(e.balance(&acc("alice")).await.unwrap(), Chips(100));
        e.debit(&k(&hand, "bet-1"), &acc("alice"), Chips(30), "bet").await.unwrap();
        e.debit(&k(&hand, "bet-2"), &acc("bob"), Chips(30), "call").await.unwrap();
        // A replayed key answers again and moves nothing.
        assert_eq!(e.debit(&k(&hand, "bet-2"), &acc("bob"), Chips(30), "call").await.unwrap(), Chips(20));
        let pot = [
            AccountOp::new(ChipOp::Credit, &acc("bob"), Chips(57), "pot"),
            AccountOp::new(ChipOp::Credit, &acc("dealer:d"), Chips(3), "rake"),
        ];
        e.settle(&k(&hand, "pot"), &pot).await.unwrap();
        // A debit beyond the stake is refused and changes nothing.
        let over = e.debit(&k(&hand, "bet-3"), &acc("bob"), Chips(78), "raise").await;
        assert!(matches!(over, Err(ChipError::Insufficient { .. })), "{over:?}");
        e.close_hand(&hand).await.unwrap();
        assert_eq!(ledger.settles.load(Ordering::SeqCst), 2, "one call to open, one to close");
        assert_eq!(
            (bal(&ledger, "alice").await, bal(&ledger, "bob").await, bal(&ledger, "dealer:d").await),
            (70, 77, 3)
        );
        assert_eq!(bal(&ledger, "escrow:d").await, 0);
        // Outside a hand, calls go straight to the ledger.
        e.credit(&IdempotencyKey::new("grant/late").unwrap(), &acc("carol"), Chips(5), "grant")
            .await
            .unwrap();
        assert_eq!(bal(&ledger, "carol").await, 5);
    }

    #[tokio::test]
    async fn a_crash_mid_hand_refunds_and_after_the_result_pays_each_once() {
        let dir = tempfile::tempdir().unwrap();
        let (ledger, e) = setup(dir.path()).await;
        let (h1, h2) = (HandRef::new("r", "h1"), HandRef::new("r", "h2"));
        let stakes = [(acc("alice"), Chips(40)), (acc("bob"), Chips(50))];
        e.open_hand(&h1, &stakes).await.unwrap();
        e.debit(&k(&h1, "bet"), &acc("alice"), Chips(40), "bet").await.unwrap();
        drop(e); // crash: h1 mid-hand
        let e = EscrowChips::new(ledger.clone(), acc("escrow:d"), acc("dealer:d"), dir.path()).unwrap();
        let r = e.reconcile().await.unwrap();
        assert_eq!(r.refunded, vec![h1.clone()]);
        assert_eq!(
            (bal(&ledger, "alice").await, bal(&ledger, "bob").await, bal(&ledger, "escrow:d").await),
            (100, 50, 0)
        );
        // h2: the result is journaled, the closing call's answer is lost, then a crash.
        e.open_hand(&h2, &stakes).await.unwrap();
        e.debit(&k(&h2, "bet"), &acc("alice"), Chips(40), "bet").await.unwrap();
        e.credit(&k(&h2, "pot"), &acc("bob"), Chips(40), "pot").await.unwrap();
        ledger.lose.store(true, Ordering::SeqCst);
        assert!(e.close_hand(&h2).await.is_err());
        drop(e);
        let e = EscrowChips::new(ledger.clone(), acc("escrow:d"), acc("dealer:d"), dir.path()).unwrap();
        let r = e.reconcile().await.unwrap();
        assert_eq!(r.settled, vec![h2]);
        assert_eq!(
            (bal(&ledger, "alice").await, bal(&ledger, "bob").await, bal(&ledger, "escrow:d").await),
            (60, 90, 0)
        );
        // Reconciling again moves nothing.
        assert_eq!(e.reconcile().await.unwrap(), Reconciled::default());
        assert_eq!((bal(&ledger, "alice").await, bal(&ledger, "bob").await), (60, 90));
    }

    #[tokio::test]
    async fn an_unreadable_journal_file_does_not_hold_up_the_other_hands() {
        let dir = tempfile::tempdir().unwrap();
        let (ledger, e) = setup(dir.path()).await;
        let (h1, h2) = (HandRef::new("r", "h1"), HandRef::new("r", "h2"));
        e.open_hand(&h1, &[(acc("alice"), Chips(40))]).await.unwrap();
        e.open_hand(&h2, &[(acc("bob"), Chips(50))]).await.unwrap();
        // A crash with both mid-hand, then h1's file damaged past reading
        // (a disk fault, a hand edit).
        drop(e);
        let open = e_files(dir.path());
        assert_eq!(open.len(), 2, "{open:?}");
        let h1_file =
            open.iter().find(|p| std::fs::read_to_string(p).unwrap().contains("h1")).unwrap().clone();
        std::fs::write(&h1_file, "not a journal\n").unwrap();
        let e = EscrowChips::new(ledger.clone(), acc("escrow:d"), acc("dealer:d"), dir.path()).unwrap();
        let err = e.reconcile().await.unwrap_err();
        let text = err.to_string();
        assert!(text.contains("1 interrupted escrowed hand(s) not reconciled (1 reconciled)"), "{text}");
        assert!(text.contains(&h1_file.display().to_string()), "{text}");
        // h2 was refunded all the same; h1's stake stays in escrow, its file open.
        assert_eq!((bal(&ledger, "bob").await, bal(&ledger, "alice").await), (50, 60));
        assert_eq!(bal(&ledger, "escrow:d").await, 40);
        assert_eq!(e_files(dir.path()), vec![h1_file.clone()]);
        // Again: h2 is not refunded twice; h1 still fails, by name.
        assert!(e.reconcile().await.unwrap_err().to_string().contains("(0 reconciled)"));
        assert_eq!((bal(&ledger, "bob").await, bal(&ledger, "escrow:d").await), (50, 40));
    }

    /// The escrow journal's open files under `dir`.
    fn e_files(dir: &Path) -> Vec<PathBuf> {
        Journal::new(dir).unwrap().open_files().unwrap()
    }

    #[tokio::test]
    async fn an_opening_whose_answer_is_lost_is_refunded_and_a_refused_one_takes_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let (ledger, e) = setup(dir.path()).await;
        let h1 = HandRef::new("r", "h1");
        ledger.lose.store(true, Ordering::SeqCst);
        assert!(e.open_hand(&h1, &[(acc("alice"), Chips(100))]).await.is_err());
        // The call applied; the hand is pending and takes no bet.
        assert_eq!((bal(&ledger, "alice").await, bal(&ledger, "escrow:d").await), (0, 100));
        assert!(e.debit(&k(&h1, "bet"), &acc("alice"), Chips(1), "bet").await.is_err());
        // The dealer's retry re-issues the same call: nothing is taken twice.
        e.open_hand(&h1, &[(acc("alice"), Chips(100))]).await.unwrap();
        assert_eq!((bal(&ledger, "alice").await, bal(&ledger, "escrow:d").await), (0, 100));
        e.abandon_hand(&h1).await.unwrap();
        assert_eq!((bal(&ledger, "alice").await, bal(&ledger, "escrow:d").await), (100, 0));
        // Down during the opening, abandoned while down, then back.
        let h7 = HandRef::new("r", "h7");
        ledger.down.store(true, Ordering::SeqCst);
        assert!(e.open_hand(&h7, &[(acc("alice"), Chips(10))]).await.is_err());
        assert!(e.abandon_hand(&h7).await.is_err());
        ledger.down.store(false, Ordering::SeqCst);
        e.abandon_hand(&h7).await.unwrap();
        assert_eq!((bal(&ledger, "alice").await, bal(&ledger, "escrow:d").await), (100, 0));
        // More than alice has: the ledger refuses, nothing moves, no file stays open.
        let h2 = HandRef::new("r", "h2");
        assert!(e.open_hand(&h2, &[(acc("alice"), Chips(101))]).await.is_err());
        assert_eq!(bal(&ledger, "alice").await, 100);
        // The ledger down during an opening: nothing moved; the next start reconciles.
        let h3 = HandRef::new("r", "h3");
        ledger.down.store(true, Ordering::SeqCst);
        assert!(e.open_hand(&h3, &[(acc("alice"), Chips(10))]).await.is_err());
        ledger.down.store(false, Ordering::SeqCst);
        drop(e);
        let e = EscrowChips::new(ledger.clone(), acc("escrow:d"), acc("dealer:d"), dir.path()).unwrap();
        let r = e.reconcile().await.unwrap();
        assert_eq!(r.refunded, vec![h3]);
        assert_eq!((bal(&ledger, "alice").await, bal(&ledger, "escrow:d").await), (100, 0));
        // A player in two hands at once: the second stakes only what is not
        // in escrow already.
        let (h5, h6) = (HandRef::new("r", "h5"), HandRef::new("s", "h6"));
        e.open_hand(&h5, &[(acc("alice"), Chips(60))]).await.unwrap();
        e.open_hand(&h6, &[(acc("alice"), Chips(100)), (acc("bob"), Chips(50))]).await.unwrap();
        assert_eq!((bal(&ledger, "alice").await, bal(&ledger, "escrow:d").await), (0, 150));
        e.close_hand(&h5).await.unwrap();
        e.close_hand(&h6).await.unwrap();
        assert_eq!(
            (bal(&ledger, "alice").await, bal(&ledger, "bob").await, bal(&ledger, "escrow:d").await),
            (100, 50, 0)
        );
        // Stakes naming the dealer, escrow, twice or zero are refused.
        for bad_stakes in [
            vec![(acc("dealer:d"), Chips(1))],
            vec![(acc("escrow:d"), Chips(1))],
            vec![(acc("alice"), Chips(1)), (acc("alice"), Chips(1))],
            vec![(acc("alice"), Chips(0))],
        ] {
            assert!(e.open_hand(&HandRef::new("r", "h4"), &bad_stakes).await.is_err());
        }
    }
}
