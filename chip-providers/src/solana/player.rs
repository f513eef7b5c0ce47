//! What a player signs with their game key: the SPL `approve` that lets the
//! dealer's operator move at most their buy-in, and the `revoke` that ends it.

use std::time::{Duration, Instant};

use solana_address::Address;
use solana_keypair::Keypair;
use solana_signature::Signature;
use solana_signer::Signer;
use solana_transaction::Transaction;

use super::client::{SolanaClient, TxStatus};
use super::error::SolanaError;
use super::spl;

/// The player's Solana keypair: the Ed25519 game key's 32-byte secret.
pub fn game_keypair(secret: &[u8; 32]) -> Keypair {
    Keypair::new_from_array(*secret)
}

/// Creates the player's token account if needed and approves `operator`
/// for `amount` chips (replacing any earlier approval). Fee payer: the player.
pub fn approve_tx(
    player: &Keypair,
    mint: &Address,
    operator: &Address,
    amount: u64,
    blockhash: solana_hash::Hash,
) -> Transaction {
    let me = player.pubkey();
    let account = spl::associated_account(&me, mint);
    let ixs = [
        spl::create_associated_account(&me, &me, mint),
        spl::approve(&account, operator, &me, amount),
        spl::memo(&format!("claw:approve {amount}")),
    ];
    Transaction::new_signed_with_payer(&ixs, Some(&me), &[player], blockhash)
}

/// Ends the player's approval (further debits are refused).
pub fn revoke_tx(player: &Keypair, mint: &Address, blockhash: solana_hash::Hash) -> Transaction {
    let me = player.pubkey();
    let ixs = [spl::revoke(&spl::associated_account(&me, mint), &me)];
    Transaction::new_signed_with_payer(&ixs, Some(&me), &[player], blockhash)
}

/// Sends a player transaction and waits until it lands (or fails).
pub async fn send_and_confirm(
    client: &dyn SolanaClient,
    tx: &Transaction,
    timeout: Duration,
) -> Result<Signature, SolanaError> {
    let sig = tx.signatures[0];
    client.send(tx).await?;
    let start = Instant::now();
    loop {
        match client.status(&sig).await? {
            TxStatus::Landed => return Ok(sig),
            TxStatus::Failed(e) => return Err(SolanaError::Failed(e)),
            TxStatus::Unknown if start.elapsed() > timeout => {
                return Err(SolanaError::Unconfirmed(sig.to_string()))
            }
            TxStatus::Unknown => tokio::time::sleep(Duration::from_millis(300)).await,
        }
    }
}

/// Approves `operator` for `amount` chips of `mint` from the player's account.
pub async fn approve(
    client: &dyn SolanaClient,
    player: &Keypair,
    mint: &Address,
    operator: &Address,
    amount: u64,
) -> Result<Signature, SolanaError> {
    let tx = approve_tx(player, mint, operator, amount, client.latest_blockhash().await?);
    send_and_confirm(client, &tx, Duration::from_secs(90)).await
}

/// Revokes the player's approval.
pub async fn revoke(
    client: &dyn SolanaClient,
    player: &Keypair,
    mint: &Address,
) -> Result<Signature, SolanaError> {
    let tx = revoke_tx(player, mint, client.latest_blockhash().await?);
    send_and_confirm(client, &tx, Duration::from_secs(90)).await
}
