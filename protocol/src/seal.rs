//! Sealed cards: a private card encrypted to its owner with crypto_box
//! (X25519 + XSalsa20-Poly1305, NaCl-compatible), SPEC.md §6.
//!
//! The X25519 agreement is done once per peer per session
//! ([`crate::Identity::shared_key`]); each card then costs one
//! XSalsa20-Poly1305 encryption under a fresh random 24-byte nonce. The
//! plaintext is the 64-byte leaf preimage (`"claw/v1/card" || hand_id ||
//! position || card code || salt`), so the owner hashes the plaintext and
//! compares it with the committed leaf.

use std::fmt;

use crypto_box::aead::Aead as _;
use rand_core::CryptoRngCore;
use serde::{Deserialize, Serialize};

use crate::bytes::{BoxNonce, HandId, Salt};
use crate::card::CardId;
use crate::commit::{leaf_preimage, CardOpening, CARD_TAG};

/// Plaintext length of a sealed card (the leaf preimage).
pub const SEALED_PLAINTEXT_LEN: usize = 64;
/// Ciphertext length: 16-byte Poly1305 tag followed by the 64 encrypted bytes.
pub const SEALED_CIPHERTEXT_LEN: usize = SEALED_PLAINTEXT_LEN + 16;

/// Why a sealed card could not be opened (or a key not agreed).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SealError {
    /// The peer's X25519 key is of small order: the shared secret would be
    /// predictable, so no key is derived.
    #[error("peer encryption key is of small order")]
    WeakPeerKey,
    /// The ciphertext has the wrong length.
    #[error("sealed card ciphertext is {got} bytes, expected {expected}")]
    BadLength { expected: usize, got: usize },
    /// Authentication failed: wrong key, or nonce/ciphertext altered.
    #[error("sealed card does not authenticate (wrong key or tampered)")]
    Decrypt,
    /// The plaintext does not start with the card tag.
    #[error("sealed card plaintext has the wrong domain tag")]
    BadTag,
    /// The card was sealed for another hand.
    #[error("sealed card belongs to hand {got}, expected {expected}")]
    WrongHand { expected: HandId, got: HandId },
    /// The card code is out of range.
    #[error("sealed card carries invalid card code {0}")]
    BadCard(u16),
}

/// A crypto_box key precomputed for one peer (both directions: sealing to
/// the peer and opening what the peer sealed to us). Debug is redacted.
#[derive(Clone)]
pub struct SharedKey {
    inner: std::sync::Arc<crypto_box::SalsaBox>,
}

impl fmt::Debug for SharedKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("SharedKey(<redacted>)")
    }
}

/// A private card in transit: a 24-byte nonce and 80 bytes of ciphertext
/// (tag first, as NaCl's `crypto_box_easy`), both lowercase hex in JSON.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct SealedCard {
    /// The XSalsa20 nonce, drawn at random per card.
    pub nonce: BoxNonce,
    /// Poly1305 tag (16 bytes) || encrypted leaf preimage (64 bytes).
    #[serde(with = "crate::bytes::hex_vec")]
    pub ciphertext: Vec<u8>,
}

impl SharedKey {
    /// Wraps an already computed box (used by `Identity::shared_key`).
    pub(crate) fn from_box(inner: crypto_box::SalsaBox) -> SharedKey {
        SharedKey { inner: std::sync::Arc::new(inner) }
    }

    /// Seals `card` of hand `hand` under a fresh nonce from `rng`.
    pub fn seal<R: CryptoRngCore + ?Sized>(
        &self,
        rng: &mut R,
        hand: &HandId,
        card: &CardOpening,
    ) -> SealedCard {
        let nonce = BoxNonce::random(rng);
        let mut plaintext =
            zeroize::Zeroizing::new(leaf_preimage(hand, card.position, card.card, &card.salt));
        let ciphertext = self
            .inner
            .encrypt(crypto_box::Nonce::from_slice(&nonce.0), plaintext.as_slice())
            // XSalsa20-Poly1305 encryption only fails on a message longer
            // than 2^38 bytes; 64 bytes cannot.
            .unwrap_or_default();
        zeroize::Zeroize::zeroize(&mut *plaintext);
        SealedCard { nonce, ciphertext }
    }

    /// Opens a sealed card: checks length, authenticity, tag, hand id and
    /// card code, and returns the opening (whose leaf the caller compares
    /// with the committed one).
    pub fn open(&self, hand: &HandId, sealed: &SealedCard) -> Result<CardOpening, SealError> {
        if sealed.ciphertext.len() != SEALED_CIPHERTEXT_LEN {
            return Err(SealError::BadLength {
                expected: SEALED_CIPHERTEXT_LEN,
                got: sealed.ciphertext.len(),
            });
        }
        let pt = zeroize::Zeroizing::new(
            self.inner
                .decrypt(crypto_box::Nonce::from_slice(&sealed.nonce.0), sealed.ciphertext.as_slice())
                .map_err(|_| SealError::Decrypt)?,
        );
        if pt.len() != SEALED_PLAINTEXT_LEN {
            return Err(SealError::BadLength {
                expected: SEALED_CIPHERTEXT_LEN,
                got: sealed.ciphertext.len(),
            });
        }
        if &pt[..12] != CARD_TAG {
            return Err(SealError::BadTag);
        }
        let got = HandId::from_slice(&pt[12..28]).unwrap_or(HandId([0; 16]));
        if got != *hand {
            return Err(SealError::WrongHand { expected: *hand, got });
        }
        let position = u16::from_be_bytes([pt[28], pt[29]]);
        let code = u16::from_be_bytes([pt[30], pt[31]]);
        let card = CardId::from_code(code).map_err(|_| SealError::BadCard(code))?;
        let salt = Salt::from_slice(&pt[32..64]).unwrap_or(Salt([0; 32]));
        Ok(CardOpening { position, card, salt })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::identity::Identity;
    use rand_chacha::rand_core::SeedableRng;
    use rand_chacha::ChaCha20Rng;

    fn setup() -> (SharedKey, SharedKey, CardOpening, HandId) {
        let dealer = Identity::from_seed([1; 32]);
        let player = Identity::from_seed([2; 32]);
        let d = dealer.shared_key(&player.encryption_key()).unwrap();
        let p = player.shared_key(&dealer.encryption_key()).unwrap();
        let card = CardOpening { position: 7, card: "Qh#1".parse().unwrap(), salt: Salt([9; 32]) };
        (d, p, card, HandId([3; 16]))
    }

    #[test]
    fn round_trip_both_directions() {
        let (d, p, card, hand) = setup();
        let mut rng = ChaCha20Rng::from_seed([0; 32]);
        let s = d.seal(&mut rng, &hand, &card);
        assert_eq!(s.ciphertext.len(), SEALED_CIPHERTEXT_LEN);
        assert_eq!(p.open(&hand, &s).unwrap(), card);
        assert_eq!(d.open(&hand, &p.seal(&mut rng, &hand, &card)).unwrap(), card);
        let j = serde_json::to_string(&s).unwrap();
        assert_eq!(serde_json::from_str::<SealedCard>(&j).unwrap(), s);
        // Fresh nonce each time.
        assert_ne!(d.seal(&mut rng, &hand, &card).nonce, s.nonce);
    }

    #[test]
    fn errors_are_typed() {
        let (d, p, card, hand) = setup();
        let mut rng = ChaCha20Rng::from_seed([0; 32]);
        let s = d.seal(&mut rng, &hand, &card);
        assert_eq!(
            p.open(&HandId([4; 16]), &s),
            Err(SealError::WrongHand { expected: HandId([4; 16]), got: hand })
        );
        let mut short = s.clone();
        short.ciphertext.pop();
        assert_eq!(p.open(&hand, &short), Err(SealError::BadLength { expected: 80, got: 79 }));
        let mut flipped = s.clone();
        flipped.ciphertext[20] ^= 1;
        assert_eq!(p.open(&hand, &flipped), Err(SealError::Decrypt));
        let mut renonced = s.clone();
        renonced.nonce.0[0] ^= 1;
        assert_eq!(p.open(&hand, &renonced), Err(SealError::Decrypt));
        let eve =
            Identity::from_seed([5; 32]).shared_key(&Identity::from_seed([1; 32]).encryption_key()).unwrap();
        assert_eq!(eve.open(&hand, &s), Err(SealError::Decrypt));
        assert!(!format!("{d:?}").contains('0'));
    }
}
