//! Chip providers: where the dealer moves chips. Every mutating call carries
//! an idempotency key, so a retry after a timeout never moves chips twice.

mod book;
pub mod escrow;
#[cfg(feature = "evm")]
pub mod evm;
pub mod hand_journal;
pub mod http;
#[cfg(any(feature = "evm", feature = "solana"))]
mod key_file;
pub mod ledger;
pub mod local;
#[cfg(feature = "solana")]
pub mod solana;
pub mod types;

pub use escrow::EscrowChips;
#[cfg(feature = "evm")]
pub use evm::{EvmChips, EvmChipsConfig};
pub use http::{HttpChips, HttpChipsConfig};
pub use local::LocalChips;
#[cfg(feature = "solana")]
pub use solana::{SolanaChips, SolanaChipsConfig};
pub use types::{AccountId, AccountOp, ChipError, ChipOp, HandRef, IdempotencyKey, Reconciled};

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
    async fn settle(&self, key: &IdempotencyKey, ops: &[AccountOp]) -> Result<(), ChipError>;

    /// Whether chips move per hand rather than per call: the dealer calls
    /// [`open_hand`](Self::open_hand) before a hand's first debit and
    /// [`close_hand`](Self::close_hand) after its last credit; debits and
    /// credits in between (keys `<room>/<hand_id>/…`) are checked against the
    /// stakes and journaled by the provider, which settles the hand in one
    /// step at close. After a crash the dealer calls
    /// [`reconcile`](Self::reconcile) instead of refunding operations itself.
    /// False (the default): hooks are no-ops and every call moves chips.
    fn settles_hands(&self) -> bool {
        false
    }

    /// Locks each account's stake (the most it can lose in the hand,
    /// commission included) for the hand. Default: nothing to do.
    async fn open_hand(&self, hand: &HandRef, stakes: &[(AccountId, Chips)]) -> Result<(), ChipError> {
        let _ = (hand, stakes);
        Ok(())
    }

    /// Releases what a failed [`open_hand`](Self::open_hand) may have
    /// locked: the dealer will not start the hand. Retrying after an error
    /// is safe. Default: nothing to do.
    async fn abandon_hand(&self, hand: &HandRef) -> Result<(), ChipError> {
        let _ = hand;
        Ok(())
    }

    /// Settles the hand: the net of its debits and credits moves and the
    /// locks end. Retrying after an error is safe. Default: nothing to do.
    async fn close_hand(&self, hand: &HandRef) -> Result<(), ChipError> {
        let _ = hand;
        Ok(())
    }

    /// Brings the provider's record of interrupted hands in line with where
    /// chips are held (after a crash): every hand is settled or refunded
    /// exactly once. Default: nothing to reconcile.
    async fn reconcile(&self) -> Result<Reconciled, ChipError> {
        Ok(Reconciled::default())
    }
}
