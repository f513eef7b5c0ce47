//! Cards as Ristretto255 points, ElGamal ciphertexts and decks, and the
//! hash-to-group generators of the shuffle's commitments (docs/blind-deal.md §2).

use std::collections::HashMap;
use std::sync::OnceLock;

use curve25519_dalek::constants::RISTRETTO_BASEPOINT_TABLE;
use curve25519_dalek::ristretto::{CompressedRistretto, RistrettoBasepointTable, RistrettoPoint};
use curve25519_dalek::scalar::Scalar;
use curve25519_dalek::traits::Identity;
use rand_core::CryptoRngCore;
use sha2::{Digest as _, Sha512};

use super::{JointKey, MentalError, MAX_DECK};
use crate::CardId;

/// Hash-to-group input prefix of a card's point.
pub const CARD_TAG: &[u8] = b"claw/v1/mental/card";
/// Hash-to-group input prefix of the shuffle's commitment generators.
pub const GENERATOR_TAG: &[u8] = b"claw/v1/mental/generator";

/// `from_uniform_bytes(SHA-512(tag || u16 BE index))` (RFC 9496 §4.3.4): a
/// point whose discrete log nobody knows.
pub(crate) fn hash_to_group(tag: &[u8], index: u16) -> RistrettoPoint {
    let mut h = Sha512::new();
    h.update(tag);
    h.update(index.to_be_bytes());
    RistrettoPoint::from_uniform_bytes(&h.finalize().into())
}

/// The fixed, nothing-up-my-sleeve point of a card id.
pub fn card_point(card: CardId) -> RistrettoPoint {
    hash_to_group(CARD_TAG, card.code())
}

/// The commitment generators `H_0 ..= H_MAX_DECK`, computed once per process.
pub(crate) fn generators() -> &'static [RistrettoPoint] {
    static GENS: OnceLock<Vec<RistrettoPoint>> = OnceLock::new();
    GENS.get_or_init(|| (0..=MAX_DECK as u16).map(|j| hash_to_group(GENERATOR_TAG, j)).collect())
}

/// Decodes a canonical compressed Ristretto point.
pub(crate) fn decode_point(bytes: &[u8]) -> Result<RistrettoPoint, MentalError> {
    CompressedRistretto::from_slice(bytes).ok().and_then(|c| c.decompress()).ok_or(MentalError::BadPoint)
}

/// Decodes a canonical scalar (`< ℓ`).
pub(crate) fn decode_scalar(bytes: &[u8]) -> Result<Scalar, MentalError> {
    let arr: [u8; 32] = bytes.try_into().map_err(|_| MentalError::BadLength)?;
    Option::from(Scalar::from_canonical_bytes(arr)).ok_or(MentalError::BadScalar)
}

/// `P || c || s`: a point with its proof's challenge and response (a
/// decryption share, a complaint, a recovery share).
pub(crate) fn encode_proven(point: &[u8; 32], challenge: &Scalar, response: &Scalar) -> [u8; 96] {
    let mut out = [0u8; 96];
    out[..32].copy_from_slice(point);
    out[32..64].copy_from_slice(challenge.as_bytes());
    out[64..].copy_from_slice(response.as_bytes());
    out
}

/// Decodes [`encode_proven`]'s 96 bytes: a canonical point (and its bytes)
/// and two canonical scalars.
pub(crate) fn decode_proven(bytes: &[u8]) -> Result<(RistrettoPoint, [u8; 32], Scalar, Scalar), MentalError> {
    if bytes.len() != 96 {
        return Err(MentalError::BadLength);
    }
    let point = decode_point(&bytes[..32])?;
    let challenge = decode_scalar(&bytes[32..64])?;
    let response = decode_scalar(&bytes[64..])?;
    let mut b = [0u8; 32];
    b.copy_from_slice(&bytes[..32]);
    Ok((point, b, challenge, response))
}

/// An ElGamal ciphertext `(c1, c2) = (r·G, M + r·K)` under a joint key `K`;
/// its encoding is `c1 || c2`, 64 bytes of compressed points.
#[derive(Clone, Copy)]
pub struct Ciphertext {
    pub(crate) c1: RistrettoPoint,
    pub(crate) c2: RistrettoPoint,
    pub(crate) bytes: [u8; 64],
}

impl Ciphertext {
    /// Length of the canonical encoding.
    pub const LEN: usize = 64;

    pub(crate) fn from_points(c1: RistrettoPoint, c2: RistrettoPoint) -> Ciphertext {
        let mut bytes = [0u8; 64];
        bytes[..32].copy_from_slice(c1.compress().as_bytes());
        bytes[32..].copy_from_slice(c2.compress().as_bytes());
        Ciphertext { c1, c2, bytes }
    }

    /// The public, unmasked encryption `(identity, card point)` of a card: the
    /// initial deck, before the first shuffle re-randomises it.
    pub fn open_card(card: CardId) -> Ciphertext {
        Ciphertext::from_points(RistrettoPoint::identity(), card_point(card))
    }

    /// Masks a card under the joint key with fresh randomness.
    pub fn mask<R: CryptoRngCore + ?Sized>(card: CardId, key: &JointKey, rng: &mut R) -> Ciphertext {
        Ciphertext::open_card(card).rerandomise(key, rng)
    }

    /// Adds a fresh encryption of zero: same card, unlinkable ciphertext.
    pub fn rerandomise<R: CryptoRngCore + ?Sized>(&self, key: &JointKey, rng: &mut R) -> Ciphertext {
        let r = Scalar::random(rng);
        Ciphertext::from_points(self.c1 + RISTRETTO_BASEPOINT_TABLE * &r, self.c2 + key.point() * r)
    }

    /// Re-randomisation with a precomputed table of the joint key (worth
    /// building only for a whole deck).
    pub(crate) fn rerandomise_with(&self, r: &Scalar, key: &RistrettoBasepointTable) -> Ciphertext {
        Ciphertext::from_points(self.c1 + RISTRETTO_BASEPOINT_TABLE * r, self.c2 + key * r)
    }

    /// The 64-byte encoding `c1 || c2`.
    pub fn to_bytes(&self) -> [u8; 64] {
        self.bytes
    }

    /// Decodes 64 bytes of two canonical compressed points.
    pub fn from_bytes(bytes: &[u8]) -> Result<Ciphertext, MentalError> {
        if bytes.len() != Self::LEN {
            return Err(MentalError::BadLength);
        }
        let c1 = decode_point(&bytes[..32])?;
        let c2 = decode_point(&bytes[32..])?;
        let mut b = [0u8; 64];
        b.copy_from_slice(bytes);
        Ok(Ciphertext { c1, c2, bytes: b })
    }
}

impl PartialEq for Ciphertext {
    fn eq(&self, other: &Self) -> bool {
        self.bytes == other.bytes
    }
}
impl Eq for Ciphertext {}

impl std::fmt::Debug for Ciphertext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Ciphertext({})", hex::encode(self.bytes))
    }
}

/// A deck of 1 ..= [`MAX_DECK`] ciphertexts, position 0 first; encoded as
/// the concatenation of its ciphertexts.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Deck {
    pub(crate) cards: Vec<Ciphertext>,
}

impl Deck {
    /// The public initial deck: each card's open encryption, in the given
    /// (unshuffled, SPEC.md §2) order.
    pub fn initial(cards: &[CardId]) -> Result<Deck, MentalError> {
        check_len(cards.len())?;
        Ok(Deck { cards: cards.iter().map(|&c| Ciphertext::open_card(c)).collect() })
    }

    /// A deck of the given ciphertexts (1 ..= [`MAX_DECK`] of them).
    pub fn new(cards: Vec<Ciphertext>) -> Result<Deck, MentalError> {
        check_len(cards.len())?;
        Ok(Deck { cards })
    }

    /// Number of positions.
    pub fn len(&self) -> usize {
        self.cards.len()
    }

    /// Always false: a deck holds at least one card.
    pub fn is_empty(&self) -> bool {
        self.cards.is_empty()
    }

    /// The ciphertext at `position`, if any.
    pub fn get(&self, position: u16) -> Option<&Ciphertext> {
        self.cards.get(usize::from(position))
    }

    /// The ciphertexts, position 0 first.
    pub fn cards(&self) -> &[Ciphertext] {
        &self.cards
    }

    /// `n × 64` bytes: every ciphertext in position order.
    pub fn to_bytes(&self) -> Vec<u8> {
        self.cards.iter().flat_map(|c| c.bytes).collect()
    }

    /// Decodes `n × 64` bytes, 1 ≤ n ≤ [`MAX_DECK`].
    pub fn from_bytes(bytes: &[u8]) -> Result<Deck, MentalError> {
        if !bytes.len().is_multiple_of(Ciphertext::LEN) {
            return Err(MentalError::BadLength);
        }
        check_len(bytes.len() / Ciphertext::LEN)?;
        let cards =
            bytes.chunks_exact(Ciphertext::LEN).map(Ciphertext::from_bytes).collect::<Result<_, _>>()?;
        Ok(Deck { cards })
    }
}

fn check_len(n: usize) -> Result<(), MentalError> {
    if n == 0 || n > MAX_DECK {
        return Err(MentalError::DeckSize(n));
    }
    Ok(())
}

/// Lookup from an opened point back to its card id, for one game's deck.
#[derive(Clone, Debug)]
pub struct CardTable {
    by_point: HashMap<[u8; 32], CardId>,
}

impl CardTable {
    /// The table of the given card ids (a game's whole deck).
    pub fn new(cards: &[CardId]) -> CardTable {
        CardTable { by_point: cards.iter().map(|&c| (card_point(c).compress().to_bytes(), c)).collect() }
    }

    /// The card whose point this is; `NotACard` for any other point.
    pub fn lookup(&self, point: &RistrettoPoint) -> Result<CardId, MentalError> {
        self.by_point.get(point.compress().as_bytes()).copied().ok_or(MentalError::NotACard)
    }
}
