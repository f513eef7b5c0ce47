//! Typed failures of the Solana provider and how they map to [`ChipError`].

use crate::ChipError;

/// Why a Solana chip operation failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SolanaError {
    /// A bad setting (URL policy, key file, addresses).
    #[error("Solana configuration: {0}")]
    Config(String),
    /// The RPC node could not be reached.
    #[error("Solana RPC unreachable: {0}")]
    Unreachable(String),
    /// The node answered with an error (not a failed transaction).
    #[error("Solana RPC error: {0}")]
    Rpc(String),
    /// The transaction's blockhash expired before it landed: it never will,
    /// and re-signing it with a new blockhash is safe.
    #[error("blockhash expired before transaction {0} landed")]
    BlockhashExpired(String),
    /// The player's token account for the chip mint does not exist.
    #[error("{account} has no token account for the chip mint (create it, then approve)")]
    MissingTokenAccount { account: String },
    /// The player has not approved the dealer, or revoked the approval.
    #[error("{account} has not approved the dealer (or revoked the approval)")]
    NotApproved { account: String },
    /// The approval is smaller than what the dealer must move.
    #[error("allowance of {account} is {allowed}, the dealer needs {needed} (approve again)")]
    InsufficientAllowance { account: String, allowed: u64, needed: u64 },
    /// The token balance is smaller than what the dealer must move.
    #[error("{account} holds {balance} chips, needs {needed}")]
    Insufficient { account: String, balance: u64, needed: u64 },
    /// The transaction ran and failed (it moved nothing).
    #[error("transaction failed on chain: {0}")]
    Failed(String),
    /// Sent but not confirmed in the time allowed: it may still land.
    #[error("transaction {0} not confirmed in time")]
    Unconfirmed(String),
    /// Reading or writing the provider's journal failed.
    #[error("Solana chip journal: {0}")]
    Journal(String),
}

impl From<SolanaError> for ChipError {
    fn from(e: SolanaError) -> ChipError {
        match e {
            SolanaError::Insufficient { account, balance, needed }
            | SolanaError::InsufficientAllowance { account, allowed: balance, needed } => {
                ChipError::Insufficient { account, balance, needed }
            }
            SolanaError::MissingTokenAccount { account } => ChipError::UnknownAccount(account),
            e @ SolanaError::NotApproved { .. } => ChipError::Unauthorized(e.to_string()),
            SolanaError::Unreachable(m) => ChipError::Unreachable(m),
            SolanaError::Unconfirmed(_) => ChipError::Timeout,
            e @ (SolanaError::Rpc(_) | SolanaError::BlockhashExpired(_) | SolanaError::Journal(_)) => {
                ChipError::Service(e.to_string())
            }
            e @ (SolanaError::Failed(_) | SolanaError::Config(_)) => ChipError::BadRequest(e.to_string()),
        }
    }
}
