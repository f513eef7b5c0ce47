//! Chip providers: where the dealer moves chips. Every mutating call carries
//! an idempotency key, so a retry after a timeout never moves chips twice.

pub mod http;
pub mod local;
pub mod types;

pub use http::{HttpChips, HttpChipsConfig};
pub use local::LocalChips;
pub use types::{AccountId, ChipError, ChipOp, ChipOpKind, IdempotencyKey};

use async_trait::async_trait;
use claw_protocol::Chips;

/// A chip ledger. Implementations must be idempotent per key: repeating a
/// call with the same key and the same request returns the first answer and
/// moves nothing; the same key with a different request is `ChipError::KeyReused`.
#[async_trait]
pub trait ChipProvider: Send + Sync {
    /// A short name for logs and metrics (`local`, `http`, `evm`, `solana`).
    fn name(&self) -> &'static str;

    async fn balance(&self, account: &AccountId) -> Result<Chips, ChipError>;

    /// Takes `amount` from `account`; fails with `Insufficient` rather than
    /// going negative. Returns the new balance.
    async fn debit(
        &self,
        key: &IdempotencyKey,
        account: &AccountId,
        amount: Chips,
        memo: &str,
    ) -> Result<Chips, ChipError>;

    /// Gives `amount` to `account`. Returns the new balance.
    async fn credit(
        &self,
        key: &IdempotencyKey,
        account: &AccountId,
        amount: Chips,
        memo: &str,
    ) -> Result<Chips, ChipError>;

    /// Applies all operations atomically (all or none), in order.
    async fn settle(&self, key: &IdempotencyKey, ops: &[ChipOp]) -> Result<(), ChipError>;
}
