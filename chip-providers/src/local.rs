//! An in-memory chip ledger: for tests, demos and single-process setups.

use std::collections::{HashMap, VecDeque};

use async_trait::async_trait;
use claw_protocol::Chips;
use tokio::sync::Mutex;

use crate::{AccountId, AccountOp, ChipError, ChipOp, ChipProvider, IdempotencyKey};

/// Idempotency keys an in-memory ledger remembers by default: a retry must
/// come within this many later operations (the dealer retries within
/// seconds), and memory stays bounded however long the node runs.
pub const DEFAULT_KEY_MEMORY: usize = 1 << 16;

#[derive(Default)]
struct Ledger {
    balances: HashMap<AccountId, Chips>,
    /// Key → (request fingerprint, answer).
    done: HashMap<IdempotencyKey, (String, Result<Chips, ChipError>)>,
    /// The keys of `done`, oldest first.
    order: VecDeque<IdempotencyKey>,
}

/// In-memory provider. Unknown accounts have a zero balance; `grant` funds them.
pub struct LocalChips {
    ledger: Mutex<Ledger>,
    key_memory: usize,
}

impl Default for LocalChips {
    fn default() -> LocalChips {
        LocalChips::with_key_memory(DEFAULT_KEY_MEMORY)
    }
}

impl LocalChips {
    pub fn new() -> LocalChips {
        LocalChips::default()
    }

    /// A ledger that remembers the last `keys` idempotency keys (at least 1).
    pub fn with_key_memory(keys: usize) -> LocalChips {
        LocalChips { ledger: Mutex::new(Ledger::default()), key_memory: keys.max(1) }
    }

    /// Operator grant: adds chips outside of any hand.
    pub async fn grant(&self, account: &AccountId, amount: Chips) -> Result<Chips, ChipError> {
        let mut l = self.ledger.lock().await;
        let b = l.balances.entry(account.clone()).or_default();
        *b = b.checked_add(amount).ok_or_else(|| ChipError::BadRequest("balance overflow".into()))?;
        Ok(*b)
    }

    /// Sum of all balances, for conservation checks in tests.
    pub async fn total(&self) -> u128 {
        self.ledger.lock().await.balances.values().map(|c| u128::from(c.0)).sum()
    }
}

/// The balance `b` after `op`.
fn apply(b: Chips, op: &AccountOp) -> Result<Chips, ChipError> {
    match op.kind {
        ChipOp::Debit => b.checked_sub(op.amount).ok_or_else(|| ChipError::Insufficient {
            account: op.account.to_string(),
            balance: b.0,
            needed: op.amount.0,
        }),
        ChipOp::Credit => {
            b.checked_add(op.amount).ok_or_else(|| ChipError::BadRequest("balance overflow".into()))
        }
    }
}

impl LocalChips {
    async fn once(
        &self,
        key: &IdempotencyKey,
        fingerprint: String,
        f: impl FnOnce(&mut HashMap<AccountId, Chips>) -> Result<Chips, ChipError>,
    ) -> Result<Chips, ChipError> {
        let mut l = self.ledger.lock().await;
        if let Some((fp, answer)) = l.done.get(key) {
            return if *fp == fingerprint {
                answer.clone()
            } else {
                Err(ChipError::KeyReused(key.to_string()))
            };
        }
        let answer = f(&mut l.balances);
        l.done.insert(key.clone(), (fingerprint, answer.clone()));
        l.order.push_back(key.clone());
        while l.order.len() > self.key_memory {
            if let Some(old) = l.order.pop_front() {
                l.done.remove(&old);
            }
        }
        answer
    }

    async fn single(&self, key: &IdempotencyKey, op: AccountOp) -> Result<Chips, ChipError> {
        if op.amount.0 == 0 {
            return Err(ChipError::BadRequest("amount must be positive".into()));
        }
        let fp = format!("{op:?}");
        self.once(key, fp, |balances| {
            let nb = apply(balances.get(&op.account).copied().unwrap_or_default(), &op)?;
            balances.insert(op.account.clone(), nb);
            Ok(nb)
        })
        .await
    }
}

#[async_trait]
impl ChipProvider for LocalChips {
    fn name(&self) -> &'static str {
        "local"
    }

    async fn balance(&self, account: &AccountId) -> Result<Chips, ChipError> {
        Ok(self.ledger.lock().await.balances.get(account).copied().unwrap_or_default())
    }

    async fn debit(
        &self,
        key: &IdempotencyKey,
        account: &AccountId,
        amount: Chips,
        memo: &str,
    ) -> Result<Chips, ChipError> {
        let op = AccountOp::new(ChipOp::Debit, account, amount, memo);
        self.single(key, op).await
    }

    async fn credit(
        &self,
        key: &IdempotencyKey,
        account: &AccountId,
        amount: Chips,
        memo: &str,
    ) -> Result<Chips, ChipError> {
        let op = AccountOp::new(ChipOp::Credit, account, amount, memo);
        self.single(key, op).await
    }

    async fn settle(&self, key: &IdempotencyKey, ops: &[AccountOp]) -> Result<(), ChipError> {
        if ops.iter().any(|o| o.amount.0 == 0) {
            return Err(ChipError::BadRequest("amount must be positive".into()));
        }
        let fp = format!("{ops:?}");
        self.once(key, fp, |balances| {
            // All or nothing: the touched accounts are computed apart, then
            // written together.
            let mut next: HashMap<&AccountId, Chips> = HashMap::new();
            for op in ops {
                let b = next
                    .get(&op.account)
                    .copied()
                    .unwrap_or_else(|| balances.get(&op.account).copied().unwrap_or_default());
                next.insert(&op.account, apply(b, op)?);
            }
            for (account, b) in next {
                balances.insert(account.clone(), b);
            }
            Ok(Chips::ZERO)
        })
        .await
        .map(|_| ())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn acct(s: &str) -> AccountId {
        AccountId::new(s).unwrap()
    }
    fn key(s: &str) -> IdempotencyKey {
        IdempotencyKey::new(s).unwrap()
    }

    #[tokio::test]
    async fn idempotent_and_never_negative() {
        let c = LocalChips::new();
        c.grant(&acct("a"), Chips(100)).await.unwrap();
        assert_eq!(c.debit(&key("k1"), &acct("a"), Chips(60), "bet").await.unwrap(), Chips(40));
        // Retry: same answer, nothing moves.
        assert_eq!(c.debit(&key("k1"), &acct("a"), Chips(60), "bet").await.unwrap(), Chips(40));
        assert_eq!(c.balance(&acct("a")).await.unwrap(), Chips(40));
        // Same key, other request.
        assert!(matches!(
            c.debit(&key("k1"), &acct("a"), Chips(1), "bet").await,
            Err(ChipError::KeyReused(_))
        ));
        assert!(matches!(
            c.debit(&key("k2"), &acct("a"), Chips(41), "bet").await,
            Err(ChipError::Insufficient { .. })
        ));
        assert_eq!(c.balance(&acct("a")).await.unwrap(), Chips(40));
    }

    #[tokio::test]
    async fn settle_is_all_or_nothing() {
        let c = LocalChips::new();
        c.grant(&acct("a"), Chips(10)).await.unwrap();
        let ops = vec![
            AccountOp { kind: ChipOp::Credit, account: acct("b"), amount: Chips(5), memo: "win".into() },
            AccountOp { kind: ChipOp::Debit, account: acct("a"), amount: Chips(11), memo: "loss".into() },
        ];
        assert!(c.settle(&key("s"), &ops).await.is_err());
        assert_eq!(c.balance(&acct("b")).await.unwrap(), Chips(0));
        assert_eq!(c.total().await, 10);
    }

    #[tokio::test]
    async fn key_memory_is_bounded_and_recent_retries_still_replay() {
        let chips = LocalChips::with_key_memory(3);
        chips.grant(&acct("a"), Chips(100)).await.unwrap();
        for i in 0..10 {
            chips.debit(&key(&format!("k{i}")), &acct("a"), Chips(1), "m").await.unwrap();
        }
        assert_eq!(chips.ledger.lock().await.done.len(), 3);
        // The last three keys replay their answer and move nothing.
        assert_eq!(chips.debit(&key("k9"), &acct("a"), Chips(1), "m").await.unwrap(), Chips(90));
        assert_eq!(chips.balance(&acct("a")).await.unwrap(), Chips(90));
        assert!(matches!(
            chips.credit(&key("k8"), &acct("a"), Chips(1), "m").await,
            Err(ChipError::KeyReused(_))
        ));
    }
}
