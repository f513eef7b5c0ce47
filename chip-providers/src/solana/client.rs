//! What the provider needs from a Solana cluster, and the JSON-RPC backend
//! that reaches one over HTTP (the `litesvm` backend runs the programs in
//! process: [`super::litesvm`]).

use std::time::Duration;

use async_trait::async_trait;
use base64::Engine as _;
use serde_json::{json, Value};
use solana_address::Address;
use solana_hash::Hash;
use solana_signature::Signature;
use solana_transaction::Transaction;

use super::error::SolanaError;
use crate::http::{check_url, guarded_client};

/// An account as the cluster returns it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RawAccount {
    /// The program that owns the account.
    pub owner: Address,
    pub data: Vec<u8>,
}

/// Where a sent transaction stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TxStatus {
    /// The cluster does not know it (not landed, or not yet).
    Unknown,
    /// Landed and succeeded.
    Landed,
    /// Landed and failed: it moved nothing but its fee.
    Failed(String),
}

/// The calls of a Solana cluster the provider uses.
#[async_trait]
pub trait SolanaClient: Send + Sync {
    async fn latest_blockhash(&self) -> Result<Hash, SolanaError>;
    /// Whether a transaction signed over `hash` can still land.
    async fn is_blockhash_valid(&self, hash: &Hash) -> Result<bool, SolanaError>;
    async fn account(&self, address: &Address) -> Result<Option<RawAccount>, SolanaError>;
    /// Submits a signed transaction. `Failed` when it was refused or ran and
    /// failed (nothing moved); `Ok` when the cluster accepted it.
    async fn send(&self, tx: &Transaction) -> Result<(), SolanaError>;
    async fn status(&self, signature: &Signature) -> Result<TxStatus, SolanaError>;
}

/// The wire form of a transaction (what `sendTransaction` takes, base64).
pub fn encode_tx(tx: &Transaction) -> Result<String, SolanaError> {
    let bytes =
        wincode::serialize(tx).map_err(|e| SolanaError::Config(format!("encoding a transaction: {e}")))?;
    Ok(base64::engine::general_purpose::STANDARD.encode(bytes))
}

/// Decodes [`encode_tx`]'s output.
pub fn decode_tx(b64: &str) -> Result<Transaction, SolanaError> {
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(b64)
        .map_err(|e| SolanaError::Rpc(format!("transaction base64: {e}")))?;
    wincode::deserialize(&bytes).map_err(|e| SolanaError::Rpc(format!("transaction bytes: {e}")))
}

/// JSON-RPC over HTTP under the chip URL policy (TLS off loopback, no
/// credentials in the URL, private hosts only when allowed).
#[derive(Debug, Clone)]
pub struct RpcClient {
    http: reqwest::Client,
    url: url::Url,
    commitment: &'static str,
}

impl RpcClient {
    pub fn new(rpc_url: &str, allow_private: bool, timeout: Duration) -> Result<RpcClient, SolanaError> {
        let url =
            check_url(rpc_url, allow_private).map_err(|e| SolanaError::Config(format!("RPC URL: {e}")))?;
        let http = guarded_client(&url, allow_private)
            .timeout(timeout)
            .connect_timeout(timeout)
            .build()
            .map_err(|e| SolanaError::Config(format!("HTTP client: {e}")))?;
        Ok(RpcClient { http, url, commitment: "confirmed" })
    }

    async fn call(&self, method: &str, params: Value) -> Result<Value, SolanaError> {
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
        let resp = self
            .http
            .post(self.url.clone())
            .json(&body)
            .send()
            .await
            .map_err(|e| SolanaError::Unreachable(format!("{method}: {e}")))?;
        let status = resp.status();
        let v: Value = resp
            .json()
            .await
            .map_err(|e| SolanaError::Rpc(format!("{method}: HTTP {status}, not JSON-RPC: {e}")))?;
        if let Some(err) = v.get("error") {
            return Err(rpc_error(method, err));
        }
        v.get("result").cloned().ok_or_else(|| SolanaError::Rpc(format!("{method}: no result")))
    }
}

/// A JSON-RPC error; a refused transaction (preflight) is `Failed`.
fn rpc_error(method: &str, err: &Value) -> SolanaError {
    let msg = err.get("message").and_then(Value::as_str).unwrap_or("?").to_owned();
    let tx_err = err.get("data").and_then(|d| d.get("err")).filter(|e| !e.is_null());
    match tx_err {
        Some(e) if e.as_str() == Some("BlockhashNotFound") => SolanaError::BlockhashExpired(msg),
        Some(e) => SolanaError::Failed(format!("{e}: {msg}")),
        None => SolanaError::Rpc(format!("{method}: {msg}")),
    }
}

fn field<'a>(v: &'a Value, path: &[&str]) -> Result<&'a Value, SolanaError> {
    path.iter()
        .try_fold(v, |v, k| v.get(k))
        .ok_or_else(|| SolanaError::Rpc(format!("no {} in answer", path.join("."))))
}

#[async_trait]
impl SolanaClient for RpcClient {
    async fn latest_blockhash(&self) -> Result<Hash, SolanaError> {
        let r = self.call("getLatestBlockhash", json!([{"commitment": self.commitment}])).await?;
        let s = field(&r, &["value", "blockhash"])?.as_str().unwrap_or_default();
        s.parse().map_err(|_| SolanaError::Rpc(format!("blockhash {s:?}")))
    }

    async fn is_blockhash_valid(&self, hash: &Hash) -> Result<bool, SolanaError> {
        let r =
            self.call("isBlockhashValid", json!([hash.to_string(), {"commitment": self.commitment}])).await?;
        field(&r, &["value"])?
            .as_bool()
            .ok_or_else(|| SolanaError::Rpc("isBlockhashValid: not a bool".into()))
    }

    async fn account(&self, address: &Address) -> Result<Option<RawAccount>, SolanaError> {
        let r = self
            .call(
                "getAccountInfo",
                json!([address.to_string(), {"encoding": "base64", "commitment": self.commitment}]),
            )
            .await?;
        let v = field(&r, &["value"])?;
        if v.is_null() {
            return Ok(None);
        }
        let owner = field(v, &["owner"])?.as_str().unwrap_or_default();
        let owner = owner.parse().map_err(|_| SolanaError::Rpc(format!("account owner {owner:?}")))?;
        let data = v.get("data").and_then(|d| d.get(0)).and_then(Value::as_str).unwrap_or_default();
        let data = base64::engine::general_purpose::STANDARD
            .decode(data)
            .map_err(|e| SolanaError::Rpc(format!("account data: {e}")))?;
        Ok(Some(RawAccount { owner, data }))
    }

    async fn send(&self, tx: &Transaction) -> Result<(), SolanaError> {
        let wire = encode_tx(tx)?;
        let params =
            json!([wire, {"encoding": "base64", "preflightCommitment": self.commitment, "maxRetries": 0}]);
        let sig = self.call("sendTransaction", params).await?;
        match (sig.as_str(), tx.signatures.first()) {
            (Some(s), Some(mine)) if s == mine.to_string() => Ok(()),
            _ => Err(SolanaError::Rpc(format!("sendTransaction answered {sig}, not the signature sent"))),
        }
    }

    async fn status(&self, signature: &Signature) -> Result<TxStatus, SolanaError> {
        let r = self
            .call(
                "getSignatureStatuses",
                json!([[signature.to_string()], {"searchTransactionHistory": true}]),
            )
            .await?;
        let s = r.get("value").and_then(|v| v.get(0)).filter(|s| !s.is_null());
        let Some(s) = s else { return Ok(TxStatus::Unknown) };
        let level = s.get("confirmationStatus").and_then(Value::as_str).unwrap_or("processed");
        match s.get("err").filter(|e| !e.is_null()) {
            Some(e) => Ok(TxStatus::Failed(e.to_string())),
            None if level == "processed" => Ok(TxStatus::Unknown),
            None => Ok(TxStatus::Landed),
        }
    }
}
