//! Typed failures of the EVM provider and how they map to [`ChipError`].

use alloy::primitives::{Address, TxHash};
use alloy::sol_types::SolInterface;
use alloy::transports::{RpcError, TransportError};

use super::contract::ChipVault::ChipVaultErrors;
use crate::ChipError;

/// Why a vault call failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EvmError {
    /// A bad setting (URL policy, key file, addresses).
    #[error("EVM configuration: {0}")]
    Config(String),
    /// The node could not be reached (connection refused, timed out, TLS).
    #[error("EVM node unreachable: {0}")]
    Unreachable(String),
    /// The node answered with an error that is not a revert.
    #[error("EVM node error: {0}")]
    Rpc(String),
    /// The contract refused the call (found by simulation before sending, or
    /// in a mined receipt): nothing moved.
    #[error("vault reverted: {0}")]
    Reverted(Revert),
    /// A free balance is too small (the vault's `Insufficient` revert).
    #[error("insufficient free balance of {owner}: has {free}, needs {needed}")]
    Insufficient { owner: Address, free: u128, needed: u128 },
    /// The node forgot a sent transaction (evicted, or lost on a restart):
    /// it did not happen; sending the same call again is safe.
    #[error("transaction {0} was dropped by the node")]
    Dropped(TxHash),
    /// Sent but not confirmed within the time allowed: it may still happen.
    #[error("transaction {0} not confirmed in time")]
    Unconfirmed(TxHash),
    /// The node refused the transaction's nonce (another sender used the
    /// operator key, or a dropped transaction left a gap).
    #[error("nonce refused: {0}")]
    Nonce(String),
    /// No contract at the configured vault address.
    #[error("no contract at {0}: wrong --evm-vault address, or it is not deployed on this chain")]
    NoContract(Address),
    /// The operator key is not one of the vault's operators.
    #[error(
        "operator {0} is not an operator of the vault (the vault admin appoints it: claw-evm set-operator)"
    )]
    NotAppointed(Address),
    /// The operator key holds no native coin to pay gas with.
    #[error("operator {0} has no native coin for gas: fund it before starting")]
    Unfunded(Address),
    /// The node serves another chain than configured.
    #[error("the node serves chain {node}, configured {configured}")]
    ChainMismatch { node: u64, configured: u64 },
    /// A player has no binding (registration with a valid signature) in the vault.
    #[error("player {0} has no valid binding in the vault (register first)")]
    NotBound(String),
    /// Reading or writing the provider's journal failed.
    #[error("EVM chip journal: {0}")]
    Journal(String),
}

/// A decoded revert of the vault, or the raw reason when it is not one of its errors.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Revert {
    Vault(ChipVaultErrors),
    /// Mined with status 0 (state changed between simulation and inclusion).
    Mined(TxHash),
    Other(String),
}

impl std::fmt::Display for Revert {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Revert::Vault(e) => write!(f, "{e:?}"),
            Revert::Mined(h) => write!(f, "transaction {h} mined with status 0"),
            Revert::Other(s) => f.write_str(s),
        }
    }
}

impl EvmError {
    /// Whether the same call may succeed later (the outcome is unknown or the node was away).
    pub fn is_retryable(&self) -> bool {
        matches!(
            self,
            EvmError::Unreachable(_)
                | EvmError::Rpc(_)
                | EvmError::Dropped(_)
                | EvmError::Unconfirmed(_)
                | EvmError::Nonce(_)
                | EvmError::Journal(_)
        )
    }

    /// Classifies a node error: a revert (decoded), a nonce conflict, the node
    /// away, or another node error.
    pub(crate) fn from_rpc(e: TransportError) -> EvmError {
        if let Some(data) = e.as_error_resp().and_then(|p| p.as_revert_data()) {
            return match ChipVaultErrors::abi_decode(&data) {
                Ok(ChipVaultErrors::Insufficient(i)) => EvmError::Insufficient {
                    owner: i.owner,
                    free: i.free.saturating_to(),
                    needed: i.needed.saturating_to(),
                },
                Ok(v) => EvmError::Reverted(Revert::Vault(v)),
                Err(_) => EvmError::Reverted(Revert::Other(format!("revert data 0x{}", hex::encode(&data)))),
            };
        }
        match &e {
            RpcError::ErrorResp(p) => {
                let m = p.message.to_ascii_lowercase();
                if m.contains("nonce") || m.contains("already known") || m.contains("replacement transaction")
                {
                    EvmError::Nonce(p.message.to_string())
                } else if m.contains("revert") {
                    EvmError::Reverted(Revert::Other(p.message.to_string()))
                } else {
                    EvmError::Rpc(p.message.to_string())
                }
            }
            RpcError::Transport(k) => EvmError::Unreachable(k.to_string()),
            other => EvmError::Rpc(other.to_string()),
        }
    }
}

impl From<EvmError> for ChipError {
    fn from(e: EvmError) -> ChipError {
        match e {
            EvmError::Insufficient { owner, free, needed } => ChipError::Insufficient {
                account: owner.to_string(),
                balance: u64::try_from(free).unwrap_or(u64::MAX),
                needed: u64::try_from(needed).unwrap_or(u64::MAX),
            },
            EvmError::Reverted(Revert::Vault(
                v @ (ChipVaultErrors::NotOperator(_)
                | ChipVaultErrors::RoomTaken(_)
                | ChipVaultErrors::NotHandOperator(_)),
            )) => ChipError::Unauthorized(format!("vault: {v:?}")),
            EvmError::Reverted(Revert::Vault(ChipVaultErrors::KeyReused(k))) => {
                ChipError::KeyReused(format!("hand {}", k.key))
            }
            EvmError::NotBound(p) => ChipError::UnknownAccount(p),
            EvmError::Unreachable(m) => ChipError::Unreachable(m),
            EvmError::Unconfirmed(_) => ChipError::Timeout,
            e @ (EvmError::Rpc(_) | EvmError::Dropped(_) | EvmError::Nonce(_) | EvmError::Journal(_)) => {
                ChipError::Service(e.to_string())
            }
            e @ (EvmError::Reverted(_)
            | EvmError::Config(_)
            | EvmError::ChainMismatch { .. }
            | EvmError::NoContract(_)
            | EvmError::NotAppointed(_)
            | EvmError::Unfunded(_)) => ChipError::BadRequest(e.to_string()),
        }
    }
}
