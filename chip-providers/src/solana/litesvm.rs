//! The in-process backend: a `litesvm` bank running the real SPL Token,
//! Associated Token Account and Memo programs (the builds `litesvm` ships),
//! and a JSON-RPC responder over it so the [`RpcClient`](super::RpcClient)
//! path can be exercised without a validator (tests, `--solana-litesvm`).

use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard};

use async_trait::async_trait;
use base64::Engine as _;
use litesvm::LiteSVM;
use serde_json::{json, Value};
use solana_address::Address;
use solana_hash::Hash;
use solana_keypair::Keypair;
use solana_signature::Signature;
use solana_signer::Signer;
use solana_transaction::Transaction;
use solana_transaction_error::TransactionError;

use super::client::{decode_tx, RawAccount, SolanaClient, TxStatus};
use super::error::SolanaError;
use super::spl;

/// Cost of one transaction as the bank measured it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TxCost {
    pub compute_units: u64,
    pub lamports: u64,
}

/// A shared in-process bank.
#[derive(Clone)]
pub struct LiteSvmChain {
    svm: Arc<Mutex<LiteSVM>>,
}

impl std::fmt::Debug for LiteSvmChain {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("LiteSvmChain")
    }
}

impl Default for LiteSvmChain {
    fn default() -> Self {
        Self::new()
    }
}

fn failure(e: &TransactionError) -> SolanaError {
    match e {
        TransactionError::BlockhashNotFound => SolanaError::BlockhashExpired("BlockhashNotFound".into()),
        other => SolanaError::Failed(format!("{other:?}")),
    }
}

impl LiteSvmChain {
    /// A bank with mainnet features, signature and blockhash checks, the
    /// default programs and a transaction history (duplicates refused).
    pub fn new() -> LiteSvmChain {
        let svm = LiteSVM::new().with_transaction_history(1_000_000);
        LiteSvmChain { svm: Arc::new(Mutex::new(svm)) }
    }

    /// The bank, locked.
    pub fn svm(&self) -> MutexGuard<'_, LiteSVM> {
        self.svm.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Gives `to` lamports from the bank's faucet.
    pub fn airdrop(&self, to: &Address, lamports: u64) -> Result<(), SolanaError> {
        self.svm().airdrop(to, lamports).map(|_| ()).map_err(|e| failure(&e.err))
    }

    /// Signs and runs `ixs` paid by `payer`.
    pub fn run(
        &self,
        ixs: &[solana_instruction::Instruction],
        payer: &Keypair,
        others: &[&Keypair],
    ) -> Result<TxCost, SolanaError> {
        let mut signers: Vec<&Keypair> = vec![payer];
        signers.extend_from_slice(others);
        let mut svm = self.svm();
        let tx =
            Transaction::new_signed_with_payer(ixs, Some(&payer.pubkey()), &signers, svm.latest_blockhash());
        svm.send_transaction(tx)
            .map(|m| TxCost { compute_units: m.compute_units_consumed, lamports: m.fee })
            .map_err(|e| failure(&e.err))
    }

    /// Creates a chip mint (0 decimals) whose authority is `authority`.
    pub fn create_mint(&self, authority: &Keypair) -> Result<Address, SolanaError> {
        let mint = Keypair::new();
        let rent = self.svm().minimum_balance_for_rent_exemption(spl::MINT_LEN);
        let create = solana_system_interface::instruction::create_account(
            &authority.pubkey(),
            &mint.pubkey(),
            rent,
            spl::MINT_LEN as u64,
            &spl::TOKEN_PROGRAM,
        );
        let init = spl::initialize_mint(&mint.pubkey(), &authority.pubkey(), 0);
        self.run(&[create, init], authority, &[&mint])?;
        Ok(mint.pubkey())
    }

    /// Creates `owner`'s associated token account (paid by `payer`) and
    /// mints `amount` chips into it.
    pub fn fund(
        &self,
        authority: &Keypair,
        mint: &Address,
        owner: &Address,
        amount: u64,
    ) -> Result<Address, SolanaError> {
        let ata = spl::associated_account(owner, mint);
        let mut ixs = vec![spl::create_associated_account(&authority.pubkey(), owner, mint)];
        if amount > 0 {
            ixs.push(spl::mint_to(mint, &ata, &authority.pubkey(), amount));
        }
        self.run(&ixs, authority, &[])?;
        Ok(ata)
    }

    /// The bank's measure of a transaction it ran.
    pub fn cost(&self, signature: &Signature) -> Option<TxCost> {
        match self.svm().get_transaction(signature)? {
            Ok(m) => Some(TxCost { compute_units: m.compute_units_consumed, lamports: m.fee }),
            Err(f) => Some(TxCost { compute_units: f.meta.compute_units_consumed, lamports: f.meta.fee }),
        }
    }

    /// A token account's fields (None without one).
    pub fn token_account(&self, address: &Address) -> Option<spl::TokenAccount> {
        let a = self.svm().get_account(address)?;
        (a.owner == spl::TOKEN_PROGRAM).then(|| spl::TokenAccount::decode(&a.data)).flatten()
    }

    /// Serves the JSON-RPC calls of [`SolanaClient`] (the subset of the
    /// Solana RPC API the provider uses) over this bank on `listener`.
    pub async fn serve_rpc(self, listener: tokio::net::TcpListener) -> std::io::Result<()> {
        use axum::routing::post;
        let app = axum::Router::new().route(
            "/",
            post(move |axum::Json(req): axum::Json<Value>| {
                let chain = self.clone();
                async move { axum::Json(chain.answer(&req)) }
            }),
        );
        axum::serve(listener, app).await
    }

    /// Binds `addr` and serves in the background; returns the bound address.
    pub async fn spawn_rpc(&self, addr: SocketAddr) -> std::io::Result<SocketAddr> {
        let listener = tokio::net::TcpListener::bind(addr).await?;
        let bound = listener.local_addr()?;
        let chain = self.clone();
        tokio::spawn(async move {
            if let Err(e) = chain.serve_rpc(listener).await {
                tracing::error!(error = %e, "litesvm RPC stopped");
            }
        });
        Ok(bound)
    }

    fn answer(&self, req: &Value) -> Value {
        let id = req.get("id").cloned().unwrap_or(Value::Null);
        let method = req.get("method").and_then(Value::as_str).unwrap_or_default();
        let params = req.get("params").cloned().unwrap_or(Value::Null);
        match self.dispatch(method, &params) {
            Ok(result) => json!({"jsonrpc": "2.0", "id": id, "result": result}),
            Err(error) => json!({"jsonrpc": "2.0", "id": id, "error": error}),
        }
    }

    fn dispatch(&self, method: &str, params: &Value) -> Result<Value, Value> {
        let arg = |i: usize| params.get(i).and_then(Value::as_str).unwrap_or_default().to_owned();
        let invalid = |what: &str| json!({"code": -32602, "message": format!("invalid {what}")});
        let slot = self.svm().get_sysvar::<solana_clock::Clock>().slot;
        let ctx = json!({"slot": slot});
        match method {
            "getLatestBlockhash" => {
                let h = self.svm().latest_blockhash();
                Ok(
                    json!({"context": ctx, "value": {"blockhash": h.to_string(), "lastValidBlockHeight": slot + 150}}),
                )
            }
            "isBlockhashValid" => {
                let h: Hash = arg(0).parse().map_err(|_| invalid("blockhash"))?;
                Ok(json!({"context": ctx, "value": h == self.svm().latest_blockhash()}))
            }
            "getAccountInfo" => {
                let a: Address = arg(0).parse().map_err(|_| invalid("address"))?;
                let value = self.svm().get_account(&a).map(|acc| {
                    json!({
                        "data": [base64::engine::general_purpose::STANDARD.encode(&acc.data), "base64"],
                        "owner": acc.owner.to_string(),
                        "lamports": acc.lamports,
                        "executable": acc.executable,
                        "rentEpoch": acc.rent_epoch,
                        "space": acc.data.len(),
                    })
                });
                Ok(json!({"context": ctx, "value": value}))
            }
            "sendTransaction" => {
                let tx = decode_tx(&arg(0)).map_err(|_| invalid("transaction"))?;
                let sig = tx.signatures.first().copied().unwrap_or_default();
                match self.svm().send_transaction(tx) {
                    Ok(_) => Ok(json!(sig.to_string())),
                    Err(f) => {
                        let err = match f.err {
                            TransactionError::BlockhashNotFound => json!("BlockhashNotFound"),
                            TransactionError::AlreadyProcessed => json!("AlreadyProcessed"),
                            other => json!(format!("{other:?}")),
                        };
                        Err(json!({
                            "code": -32002,
                            "message": "Transaction simulation failed",
                            "data": {"err": err, "logs": f.meta.logs},
                        }))
                    }
                }
            }
            "getSignatureStatuses" => {
                let sigs = params.get(0).and_then(Value::as_array).cloned().unwrap_or_default();
                let svm = self.svm();
                let value: Vec<Value> = sigs
                    .iter()
                    .map(|s| {
                        let Some(sig) = s.as_str().and_then(|s| s.parse::<Signature>().ok()) else {
                            return Value::Null;
                        };
                        match svm.get_transaction(&sig) {
                            None => Value::Null,
                            Some(r) => json!({
                                "slot": slot,
                                "confirmations": null,
                                "err": r.as_ref().err().map(|f| format!("{:?}", f.err)),
                                "confirmationStatus": "finalized",
                            }),
                        }
                    })
                    .collect();
                Ok(json!({"context": ctx, "value": value}))
            }
            other => Err(
                json!({"code": -32601, "message": format!("method {other} not served by the litesvm responder")}),
            ),
        }
    }
}

#[async_trait]
impl SolanaClient for LiteSvmChain {
    async fn latest_blockhash(&self) -> Result<Hash, SolanaError> {
        Ok(self.svm().latest_blockhash())
    }

    async fn is_blockhash_valid(&self, hash: &Hash) -> Result<bool, SolanaError> {
        Ok(*hash == self.svm().latest_blockhash())
    }

    async fn account(&self, address: &Address) -> Result<Option<RawAccount>, SolanaError> {
        Ok(self.svm().get_account(address).map(|a| RawAccount { owner: a.owner, data: a.data }))
    }

    async fn send(&self, tx: &Transaction) -> Result<(), SolanaError> {
        match self.svm().send_transaction(tx.clone()) {
            Ok(_) => Ok(()),
            Err(f) if f.err == TransactionError::AlreadyProcessed => Ok(()),
            Err(f) => Err(failure(&f.err)),
        }
    }

    async fn status(&self, signature: &Signature) -> Result<TxStatus, SolanaError> {
        Ok(match self.svm().get_transaction(signature) {
            None => TxStatus::Unknown,
            Some(Ok(_)) => TxStatus::Landed,
            Some(Err(f)) => TxStatus::Failed(format!("{:?}", f.err)),
        })
    }
}
