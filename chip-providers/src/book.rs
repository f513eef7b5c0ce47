//! A hand's chips as a provider that settles per hand keeps them while the
//! hand runs: each seat's stake, its debits and credits, the house's take,
//! and the answers already given per idempotency key.

use std::collections::HashMap;

use claw_protocol::Chips;
use serde::{Deserialize, Serialize};

use crate::hand_journal::HandFile;
use crate::{AccountId, AccountOp, ChipError, ChipOp, HandRef, IdempotencyKey};

/// Locks a provider's state; a panic elsewhere does not poison it.
pub(crate) fn lock<T>(m: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

pub(crate) fn bad(m: impl Into<String>) -> ChipError {
    ChipError::BadRequest(m.into())
}

/// A seat's movements during the hand.
#[derive(Debug, Clone, Copy, Default)]
struct Flow {
    debited: u64,
    credited: u64,
}

/// The running totals of one hand.
#[derive(Debug, Clone)]
pub(crate) struct HandBook {
    stakes: Vec<(AccountId, Chips)>,
    flows: Vec<Flow>,
    fee: u64,
    /// Key → (request fingerprint, answer).
    done: HashMap<IdempotencyKey, (String, Result<Chips, ChipError>)>,
}

impl HandBook {
    pub(crate) fn new(stakes: Vec<(AccountId, Chips)>) -> HandBook {
        let flows = vec![Flow::default(); stakes.len()];
        HandBook { stakes, flows, fee: 0, done: HashMap::new() }
    }

    #[cfg(feature = "solana")]
    pub(crate) fn stakes(&self) -> &[(AccountId, Chips)] {
        &self.stakes
    }

    pub(crate) fn fee(&self) -> u64 {
        self.fee
    }

    pub(crate) fn seat(&self, account: &AccountId) -> Option<usize> {
        self.stakes.iter().position(|(a, _)| a == account)
    }

    /// Seat `i`'s chips in the hand: stake − debits + credits.
    pub(crate) fn in_hand(&self, i: usize) -> u64 {
        let f = self.flows[i];
        self.stakes[i].1 .0.saturating_add(f.credited).saturating_sub(f.debited)
    }

    /// The answer already given for `key`, if any (`KeyReused` when the
    /// request differs).
    pub(crate) fn replay(&self, key: &IdempotencyKey, ops: &[AccountOp]) -> Option<Result<Chips, ChipError>> {
        let (fp, answer) = self.done.get(key)?;
        Some(if *fp == format!("{ops:?}") {
            answer.clone()
        } else {
            Err(ChipError::KeyReused(key.to_string()))
        })
    }

    /// Applies `ops` all or none (a debit never takes a seat below zero)
    /// and remembers the answer for `key`: the last account's chips in the
    /// hand. `journal` runs before the totals change; its error is returned.
    pub(crate) fn apply(
        &mut self,
        hand: &HandRef,
        house: &AccountId,
        key: &IdempotencyKey,
        ops: &[AccountOp],
        journal: impl FnOnce() -> Result<(), ChipError>,
    ) -> Result<Chips, ChipError> {
        if ops.iter().any(|o| o.amount.0 == 0) {
            return Err(ChipError::BadRequest("amount must be positive".into()));
        }
        let (mut flows, mut fee) = (self.flows.clone(), self.fee);
        let mut answer = Ok(Chips::ZERO);
        for op in ops {
            let a = op.amount.0;
            answer = if op.account == *house {
                match op.kind {
                    ChipOp::Credit => fee.checked_add(a),
                    ChipOp::Debit => fee.checked_sub(a),
                }
                .map(|f| {
                    fee = f;
                    Chips(f)
                })
                .ok_or_else(|| ChipError::Insufficient {
                    account: op.account.to_string(),
                    balance: fee,
                    needed: a,
                })
            } else {
                let i = self.seat(&op.account).ok_or_else(|| {
                    ChipError::BadRequest(format!("{} is not seated in hand {hand}", op.account))
                })?;
                let f = &mut flows[i];
                let available = self.stakes[i].1 .0.saturating_add(f.credited).saturating_sub(f.debited);
                match op.kind {
                    ChipOp::Debit if a > available => Err(ChipError::Insufficient {
                        account: op.account.to_string(),
                        balance: available,
                        needed: a,
                    }),
                    ChipOp::Debit => {
                        f.debited += a;
                        Ok(Chips(available - a))
                    }
                    ChipOp::Credit => {
                        f.credited = f
                            .credited
                            .checked_add(a)
                            .ok_or_else(|| ChipError::BadRequest("overflow".into()))?;
                        Ok(Chips(available + a))
                    }
                }
            };
            if answer.is_err() {
                break;
            }
        }
        if answer.is_ok() {
            journal()?;
            self.flows = flows;
            self.fee = fee;
        }
        self.done.insert(key.clone(), (format!("{ops:?}"), answer.clone()));
        answer
    }

    /// Each seat's chips at the end and the house's take, checked to add up
    /// to the stakes (a hand creates and destroys nothing).
    pub(crate) fn result(&self, hand: &HandRef) -> Result<(Vec<Chips>, Chips), ChipError> {
        let payouts: Vec<Chips> = (0..self.flows.len()).map(|i| Chips(self.in_hand(i))).collect();
        let paid: u128 = payouts.iter().map(|c| u128::from(c.0)).sum::<u128>() + u128::from(self.fee);
        let staked: u128 = self.stakes.iter().map(|(_, s)| u128::from(s.0)).sum();
        if paid != staked {
            return Err(ChipError::BadRequest(format!(
                "hand {hand} does not net to zero: staked {staked}, paid {paid}"
            )));
        }
        Ok((payouts, Chips(self.fee)))
    }
}

/// One debit or credit inside a hand, as a journal's `op` line records it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct OpLine {
    pub key: IdempotencyKey,
    pub kind: ChipOp,
    pub account: AccountId,
    pub amount: Chips,
}

/// A hand a per-hand provider is running: its book and its journal file.
pub(crate) trait LiveHand {
    /// The provider's journal line.
    type Line: Serialize;
    /// Why the hand takes no new operation now (being settled, not yet
    /// locked), if it does not.
    fn refusal(&self, hand: &HandRef) -> Option<String>;
    /// The book and, unless a transaction of the hand is in flight, the file.
    fn parts(&mut self) -> (&mut HandBook, Option<&mut HandFile>);
    /// The journal line of one operation.
    fn op_line(op: OpLine) -> Self::Line;
}

/// Applies `ops` (all of one hand, named by `key`) to the open hand that
/// `key` belongs to, all or none, journaling one `op` line per operation
/// first; a key already answered gets its first answer again. Answers the
/// last account's chips in the hand.
pub(crate) fn apply_in_hand<H: LiveHand>(
    live: &mut HashMap<HandRef, H>,
    provider: &str,
    house: &AccountId,
    key: &IdempotencyKey,
    ops: &[AccountOp],
) -> Result<Chips, ChipError> {
    let (hand, h) = live.iter_mut().find(|(hand, _)| hand.contains(key)).ok_or_else(|| {
        bad(format!("{key}: {provider} chips move only inside an open hand (open_hand first)"))
    })?;
    if let Some(answer) = h.parts().0.replay(key, ops) {
        return answer;
    }
    if let Some(why) = h.refusal(hand) {
        return Err(bad(why));
    }
    let (book, file) = h.parts();
    book.apply(hand, house, key, ops, || {
        if let Some(file) = file {
            for op in ops {
                let line = H::op_line(OpLine {
                    key: key.clone(),
                    kind: op.kind,
                    account: op.account.clone(),
                    amount: op.amount,
                });
                file.append(&line, false)?;
            }
        }
        Ok(())
    })
}
