//! The player's Ed25519 statement binding an EVM address to their chip
//! account (SPEC.md §4.2 `evm-binding`): the registration transaction comes
//! from the address, the signature from the game key, so neither key alone
//! can claim someone else's account.

use alloy::primitives::Address;
use claw_protocol::{Identity, PlayerId, Purpose, Signature};

/// Length of the signed body.
pub const BINDING_BODY_LEN: usize = 80;

/// `chain_id u64 BE ‖ vault(20) ‖ owner(20) ‖ player(32)`.
pub fn binding_body(
    chain_id: u64,
    vault: Address,
    owner: Address,
    player: &PlayerId,
) -> [u8; BINDING_BODY_LEN] {
    let mut b = [0u8; BINDING_BODY_LEN];
    b[..8].copy_from_slice(&chain_id.to_be_bytes());
    b[8..28].copy_from_slice(vault.as_slice());
    b[28..48].copy_from_slice(owner.as_slice());
    b[48..].copy_from_slice(player.as_bytes());
    b
}

/// The player's signature binding `owner` (64 bytes, sent in `register`).
pub fn sign_binding(id: &Identity, chain_id: u64, vault: Address, owner: Address) -> Signature {
    id.sign(Purpose::EvmBinding, &binding_body(chain_id, vault, owner, &id.id()))
}

/// Whether `sig` (as found in a `Registered` event) is `player`'s binding of `owner`.
pub fn verify_binding(chain_id: u64, vault: Address, owner: Address, player: &PlayerId, sig: &[u8]) -> bool {
    let Ok(bytes) = <[u8; 64]>::try_from(sig) else { return false };
    claw_protocol::verify(
        player,
        Purpose::EvmBinding,
        &binding_body(chain_id, vault, owner, player),
        &Signature(bytes),
    )
    .is_ok()
}
