//! The operator's connection to the node: views, and sending transactions
//! with simulation first (a revert is a typed error and nothing is sent),
//! one nonce sequence shared by every hand of every room, and confirmation
//! polling that tells a dropped transaction from a slow one.

use std::path::Path;
use std::time::{Duration, Instant};

use alloy::eips::eip2718::Encodable2718;
use alloy::network::{EthereumWallet, NetworkTransactionBuilder, TransactionBuilder};
use alloy::primitives::{Address, Bytes, TxHash, B256};
use alloy::providers::{DynProvider, Provider, ProviderBuilder};
use alloy::rpc::types::{TransactionReceipt, TransactionRequest};
use alloy::signers::local::PrivateKeySigner;
use alloy::sol_types::SolCall;
use tokio::sync::Mutex;

use super::contract::{ChipVault, OnChainHand};
use super::error::EvmError;
use crate::http::{check_url, guarded_client};

/// How to reach the node and how long to wait.
#[derive(Debug, Clone)]
pub struct ChainSettings {
    pub rpc_url: String,
    pub chain_id: u64,
    pub allow_private: bool,
    /// Blocks on top of the including one (0: included is enough).
    pub confirmations: u64,
    /// How long a sent transaction may take to be confirmed.
    pub tx_timeout: Duration,
    /// Time limit of one RPC request.
    pub request_timeout: Duration,
    /// Pause between receipt polls.
    pub poll: Duration,
}

/// A connection to the node with one key (the operator's, or a player's in
/// `claw-evm`), bound to one vault.
pub struct Chain {
    provider: DynProvider,
    wallet: EthereumWallet,
    vault: Address,
    sender: Address,
    settings: ChainSettings,
    /// Next nonce to use; `None` = ask the node (start, or after a failure).
    nonce: Mutex<Option<u64>>,
}

/// Reads an operator key file: one hex secp256k1 secret key (with or
/// without `0x`), readable by the owner only (mode 0600 or 0400).
pub fn load_key_file(path: &Path) -> Result<PrivateKeySigner, EvmError> {
    let text = crate::key_file::read_private(path).map_err(EvmError::Config)?;
    text.trim()
        .parse::<PrivateKeySigner>()
        .map_err(|_| EvmError::Config(format!("key file {}: not a hex secp256k1 secret key", path.display())))
}

impl Chain {
    /// Connects under the URL policy and checks the node's chain id.
    pub async fn connect(
        settings: ChainSettings,
        vault: Address,
        signer: PrivateKeySigner,
    ) -> Result<Chain, EvmError> {
        let url = check_url(&settings.rpc_url, settings.allow_private)
            .map_err(|e| EvmError::Config(format!("RPC URL: {e}")))?;
        let client = guarded_client(&url, settings.allow_private)
            .timeout(settings.request_timeout)
            .connect_timeout(settings.request_timeout)
            .build()
            .map_err(|e| EvmError::Config(format!("HTTP client: {e}")))?;
        let sender = signer.address();
        let wallet = EthereumWallet::from(signer);
        let provider = ProviderBuilder::new().connect_reqwest(client, url).erased();
        let node = provider.get_chain_id().await.map_err(EvmError::from_rpc)?;
        if node != settings.chain_id {
            return Err(EvmError::ChainMismatch { node, configured: settings.chain_id });
        }
        Ok(Chain { provider, wallet, vault, sender, settings, nonce: Mutex::new(None) })
    }

    /// The key's address (for the operator: its fee account in the vault).
    pub fn address(&self) -> Address {
        self.sender
    }

    pub async fn block_number(&self) -> Result<u64, EvmError> {
        self.provider.get_block_number().await.map_err(EvmError::from_rpc)
    }

    pub fn vault(&self) -> Address {
        self.vault
    }

    pub fn chain_id(&self) -> u64 {
        self.settings.chain_id
    }

    /// The node connection, for views and log queries.
    pub fn provider(&self) -> &DynProvider {
        &self.provider
    }

    /// The vault bound to this connection (views).
    pub fn contract(&self) -> ChipVault::ChipVaultInstance<&DynProvider> {
        ChipVault::new(self.vault, &self.provider)
    }

    /// Timestamp of the latest block: the clock deadlines are measured by.
    pub async fn now(&self) -> Result<u64, EvmError> {
        let b = self
            .provider
            .get_block_by_number(alloy::eips::BlockNumberOrTag::Latest)
            .await
            .map_err(EvmError::from_rpc)?
            .ok_or_else(|| EvmError::Rpc("no latest block".into()))?;
        Ok(b.header.timestamp)
    }

    /// Free balance of `owner` (a lapsed lock counts as free).
    pub async fn free_balance(&self, owner: Address) -> Result<u128, EvmError> {
        let b = self.contract().balanceOf(owner).call().await.map_err(contract_error)?;
        Ok(b.free.saturating_to())
    }

    /// The vault's status of hand `key`.
    pub async fn hand(&self, key: B256) -> Result<OnChainHand, EvmError> {
        let h = self.contract().hands(key).call().await.map_err(contract_error)?;
        Ok(match h.status {
            0 => OnChainHand::None,
            1 => OnChainHand::Open { deadline: h.deadline },
            _ => OnChainHand::Settled,
        })
    }

    /// Sends a vault call from the operator and waits for its confirmation.
    pub async fn send_vault<C: SolCall>(&self, call: &C) -> Result<TransactionReceipt, EvmError> {
        self.send_to(self.vault, call).await
    }

    /// Simulates (gas estimate: a revert is decoded and nothing is sent),
    /// signs with the next nonce, sends, and waits for confirmation. Once
    /// signed, a failure to hear back is `Unconfirmed` (it may still happen).
    pub async fn submit(&self, tx: TransactionRequest) -> Result<TransactionReceipt, EvmError> {
        let tx = tx.with_from(self.sender).with_chain_id(self.settings.chain_id);
        let gas = self.provider.estimate_gas(tx.clone()).await.map_err(EvmError::from_rpc)?;
        let fees = self.provider.estimate_eip1559_fees().await.map_err(EvmError::from_rpc)?;
        let tx = tx
            .with_gas_limit(gas.saturating_add(gas / 5))
            .with_max_fee_per_gas(fees.max_fee_per_gas)
            .with_max_priority_fee_per_gas(fees.max_priority_fee_per_gas);
        let mut attempts = 0;
        let hash = loop {
            attempts += 1;
            match self.send_with_nonce(tx.clone()).await {
                Ok(h) => break h,
                Err(EvmError::Nonce(m)) if attempts < 3 => {
                    tracing::warn!(error = %m, "nonce refused; re-reading it from the node");
                }
                Err(e) => return Err(e),
            }
        };
        self.wait(hash).await
    }

    /// Deploys `init_code` (bytecode followed by the constructor arguments);
    /// returns the contract's address.
    pub async fn deploy(&self, init_code: Vec<u8>) -> Result<Address, EvmError> {
        let tx = TransactionRequest::default().with_deploy_code(Bytes::from(init_code));
        let r = self.submit(tx).await?;
        r.contract_address.ok_or_else(|| EvmError::Rpc("deployment receipt without an address".into()))
    }

    /// Sends a call to any contract (the token's `approve`, say) from this key.
    pub async fn send_to<C: SolCall>(&self, to: Address, call: &C) -> Result<TransactionReceipt, EvmError> {
        let tx = TransactionRequest::default().with_to(to).with_input(Bytes::from(call.abi_encode()));
        self.submit(tx).await
    }

    async fn send_with_nonce(&self, tx: TransactionRequest) -> Result<TxHash, EvmError> {
        let mut next = self.nonce.lock().await;
        let n = match *next {
            Some(n) => n,
            None => self
                .provider
                .get_transaction_count(self.sender)
                .pending()
                .await
                .map_err(EvmError::from_rpc)?,
        };
        let envelope = tx
            .with_nonce(n)
            .build(&self.wallet)
            .await
            .map_err(|e| EvmError::Config(format!("signing: {e}")))?;
        let hash = *envelope.tx_hash();
        match self.provider.send_raw_transaction(&envelope.encoded_2718()).await {
            Ok(_) => {
                *next = Some(n + 1);
                Ok(hash)
            }
            Err(e) => {
                // Whether the node took the nonce is unknown: ask again next time.
                *next = None;
                match EvmError::from_rpc(e) {
                    e @ (EvmError::Nonce(_) | EvmError::Reverted(_) | EvmError::Insufficient { .. }) => {
                        Err(e)
                    }
                    // Signed and maybe received: it may still be mined.
                    _ => Err(EvmError::Unconfirmed(hash)),
                }
            }
        }
    }

    /// Polls for the receipt until it has the configured confirmations.
    /// `Dropped` when the node no longer knows the transaction (the nonce
    /// sequence is then re-read), `Unconfirmed` when time runs out.
    pub async fn wait(&self, hash: TxHash) -> Result<TransactionReceipt, EvmError> {
        let until = Instant::now() + self.settings.tx_timeout;
        loop {
            match self.poll_once(hash).await {
                Ok(Some(r)) => return Ok(r),
                Ok(None) => {}
                // The node is away or answers badly: the transaction may still land.
                Err(EvmError::Unreachable(_) | EvmError::Rpc(_)) => {}
                Err(e) => return Err(e),
            }
            if Instant::now() >= until {
                return Err(EvmError::Unconfirmed(hash));
            }
            tokio::time::sleep(self.settings.poll).await;
        }
    }

    /// One look at a sent transaction: its receipt once confirmed enough.
    async fn poll_once(&self, hash: TxHash) -> Result<Option<TransactionReceipt>, EvmError> {
        let receipt = self.provider.get_transaction_receipt(hash).await.map_err(EvmError::from_rpc)?;
        match receipt {
            Some(r) => {
                let at = r.block_number.unwrap_or_default();
                let head = self.provider.get_block_number().await.map_err(EvmError::from_rpc)?;
                if head.saturating_sub(at) < self.settings.confirmations {
                    return Ok(None);
                }
                if !r.status() {
                    return Err(EvmError::Reverted(super::error::Revert::Mined(hash)));
                }
                Ok(Some(r))
            }
            None => {
                let known = self.provider.get_transaction_by_hash(hash).await.map_err(EvmError::from_rpc)?;
                if known.is_none() {
                    *self.nonce.lock().await = None;
                    return Err(EvmError::Dropped(hash));
                }
                Ok(None)
            }
        }
    }
}

/// A contract-call (view) error as an [`EvmError`].
pub(crate) fn contract_error(e: alloy::contract::Error) -> EvmError {
    match e {
        alloy::contract::Error::TransportError(t) => EvmError::from_rpc(t),
        other => EvmError::Rpc(other.to_string()),
    }
}
