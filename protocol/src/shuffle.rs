//! Joint-entropy shuffle (SPEC.md §7).
//!
//! The dealer commits to its seed before the players send theirs;
//! `shuffle_seed = SHA-256(dealer_seed || player seeds in seat order)`
//! (a silent player is omitted); the deck is then permuted by Fisher–Yates
//! driven by ChaCha20 keyed with the shuffle seed. Anyone holding the seeds
//! recomputes the same order.

use rand_chacha::rand_core::SeedableRng as _;
use rand_chacha::ChaCha20Rng;

use crate::bytes::{sha256, Digest, HandId, Seed};
use crate::card::CardId;

/// Domain tag of a seed commitment.
pub const SEED_COMMITMENT_TAG: &[u8] = b"claw/v1/seed-commitment";

/// The dealer's commitment to its seed, published in `hand-prepare`:
/// `SHA-256("claw/v1/seed-commitment" || hand_id || seed)`. Binding the hand
/// id keeps a commitment from being reused in another hand.
pub fn seed_commitment(hand: &HandId, seed: &Seed) -> Digest {
    sha256(&[SEED_COMMITMENT_TAG, &hand.0, &seed.0])
}

/// `SHA-256(dealer_seed || s_0 || s_1 || …)` over the seeds of the players
/// in seat order; `None` (a player who sent no seed in time, or a room with
/// `entropy = dealer`) contributes no bytes.
pub fn shuffle_seed(dealer: &Seed, players: &[Option<Seed>]) -> [u8; 32] {
    let mut parts: Vec<&[u8]> = Vec::with_capacity(players.len() + 1);
    parts.push(&dealer.0);
    parts.extend(players.iter().flatten().map(|s| s.0.as_slice()));
    sha256(&parts).0
}

/// An integer uniform in `0..bound` (bound ≥ 1) by rejection sampling over
/// the rng's 32-bit outputs: draw `x = next_u32()`; reject while
/// `x < (2^32 - bound) mod bound`; return `x mod bound`.
pub fn uniform_below<R: rand_chacha::rand_core::RngCore + ?Sized>(rng: &mut R, bound: u32) -> u32 {
    if bound <= 1 {
        return 0;
    }
    let threshold = bound.wrapping_neg() % bound;
    loop {
        let x = rng.next_u32();
        if x >= threshold {
            return x % bound;
        }
    }
}

/// Permutes `items` in place: for `i` from `n-1` down to 1, `j =
/// uniform_below(i + 1)`, swap `items[i]` and `items[j]`; ChaCha20 (20
/// rounds, key = `seed`, nonce 0, block counter from 0).
pub fn shuffle_in_place<T>(items: &mut [T], seed: &[u8; 32]) {
    let mut rng = ChaCha20Rng::from_seed(*seed);
    for i in (1..items.len()).rev() {
        let bound = u32::try_from(i + 1).unwrap_or(u32::MAX);
        let j = uniform_below(&mut rng, bound) as usize;
        items.swap(i, j);
    }
}

/// The shuffled deck: position `k` of the result is the card dealt `k`-th.
pub fn shuffle(deck: &[CardId], seed: &[u8; 32]) -> Vec<CardId> {
    let mut out = deck.to_vec();
    shuffle_in_place(&mut out, seed);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand_chacha::rand_core::RngCore as _;

    #[test]
    fn chacha20_is_the_djb_keystream() {
        // RFC 7539 A.1 test vector #1: key 0, nonce 0, block 0.
        let mut rng = ChaCha20Rng::from_seed([0; 32]);
        let mut b = [0u8; 64];
        rng.fill_bytes(&mut b);
        assert_eq!(
            hex::encode(b),
            "76b8e0ada0f13d90405d6ae55386bd28bdd219b8a08ded1aa836efcc8b770dc7\
             da41597c5157488d7724e03fb8d84a376a43b8f41518a11cc387b669b2ee6586"
        );
        let mut rng = ChaCha20Rng::from_seed([0; 32]);
        assert_eq!(rng.next_u32(), u32::from_le_bytes([0x76, 0xb8, 0xe0, 0xad]));
    }

    #[test]
    fn deterministic_permutation() {
        let deck = CardId::deck(2, true);
        let a = shuffle(&deck, &[7; 32]);
        assert_eq!(a, shuffle(&deck, &[7; 32]));
        assert_ne!(a, shuffle(&deck, &[8; 32]));
        assert_ne!(a, deck);
        let mut sorted = a.clone();
        sorted.sort();
        assert_eq!(sorted, deck);
        assert!(shuffle(&[], &[0; 32]).is_empty());
    }

    #[test]
    fn seeds() {
        let d = Seed([1; 32]);
        let p = Seed([2; 32]);
        assert_eq!(shuffle_seed(&d, &[]), sha256(&[&d.0]).0);
        assert_eq!(shuffle_seed(&d, &[None, Some(p), None]), sha256(&[&d.0, &p.0]).0);
        assert_ne!(shuffle_seed(&d, &[Some(p)]), shuffle_seed(&d, &[]));
        assert_ne!(seed_commitment(&HandId([0; 16]), &d), seed_commitment(&HandId([1; 16]), &d));
    }

    #[test]
    fn uniform_below_rejects_the_biased_zone() {
        // bound 3: threshold = 2^32 mod 3 = 1, so x = 0 is rejected.
        assert_eq!(3u32.wrapping_neg() % 3, 1);
        let mut rng = ChaCha20Rng::from_seed([0; 32]);
        for bound in 1..200 {
            assert!(uniform_below(&mut rng, bound) < bound.max(1));
        }
    }
}
