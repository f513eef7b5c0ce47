//! Dealer-blind dealing (issue 35): a mental-poker deck under a key the
//! players hold jointly, sans-IO. docs/blind-deal.md is the normative text.
//!
//! - [`SecretShare`] / [`KeyShare`]: each party's ElGamal key share with a
//!   Schnorr proof of knowledge; [`JointKey::combine`] sums proven shares.
//! - [`Ciphertext`] / [`Deck`]: cards as Ristretto255 points, encrypted.
//! - [`shuffle()`] / [`verify_shuffle`]: a permutation and re-randomisation
//!   with a Terelius–Wikström proof of a shuffle.
//! - [`DecryptionShare`] / [`JointKey::open`]: Chaum–Pedersen-proven
//!   decryption shares; all of them open a card.
//!
//! Every proof is Fiat–Shamir over a SHA-512 transcript bound to the hand,
//! the seat and the exact data it speaks about; randomness is the caller's.

mod group;
mod keys;
mod recovery;
mod shuffle;
mod transcript;

pub use group::{card_point, CardTable, Ciphertext, Deck, CARD_TAG, GENERATOR_TAG};
pub use keys::{DecryptionShare, JointKey, KeyShare, SecretShare, DECRYPTION_SHARE_DOMAIN, KEY_SHARE_DOMAIN};
pub use recovery::{
    Complaint, EncryptedPiece, Holder, Piece, PieceCommitments, RecoveredShare, RecoveryError, RecoveryShare,
    COMPLAINT_DOMAIN, DEALER_HOLDER, PIECE_TAG, RECOVERY_SHARE_DOMAIN,
};
pub use shuffle::{shuffle, shuffle_proof_len, verify_shuffle, ShuffleProof, SHUFFLE_DOMAIN};

/// The largest deck this module shuffles (four packs with jokers is 216).
pub const MAX_DECK: usize = 512;

/// Why a mental-poker value or proof was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum MentalError {
    /// An encoding has the wrong number of bytes.
    #[error("bad-length: encoding has the wrong length")]
    BadLength,
    /// 32 bytes that are not a canonical Ristretto255 encoding.
    #[error("bad-point: not a canonical Ristretto255 point")]
    BadPoint,
    /// 32 bytes that are not a canonical scalar (`< ℓ`).
    #[error("bad-scalar: not a canonical scalar")]
    BadScalar,
    /// A deck (or proof) size outside `1 ..= MAX_DECK`.
    #[error("deck-size: {0} cards is outside 1..={MAX_DECK}")]
    DeckSize(usize),
    /// No key share at all.
    #[error("no-parties: a joint key needs at least one key share")]
    NoParties,
    /// A key share that is the identity point (or shares summing to it).
    #[error("identity-key: key share of seat {seat} is the identity")]
    IdentityKey { seat: u8 },
    /// A key share whose proof of knowledge fails for this hand and seat.
    #[error("key-proof: key share of seat {seat} has no valid proof of knowledge")]
    KeyProof { seat: u8 },
    /// The same seat twice in a list of shares.
    #[error("duplicate-seat: seat {seat} appears twice")]
    DuplicateSeat { seat: u8 },
    /// A key share equal to another party's.
    #[error("duplicate-key: key share of seat {seat} repeats another seat's")]
    DuplicateKey { seat: u8 },
    /// A share from a seat that holds no part of the joint key.
    #[error("unknown-seat: seat {seat} holds no key share")]
    UnknownSeat { seat: u8 },
    /// A key holder's decryption share is missing.
    #[error("missing-share: no decryption share from seat {seat}")]
    MissingShare { seat: u8 },
    /// A decryption share whose DLEQ proof fails for this hand, position and ciphertext.
    #[error("decryption-proof: decryption share of seat {seat} for position {position} is invalid")]
    DecryptionProof { seat: u8, position: u16 },
    /// The opened point is no card of the table.
    #[error("not-a-card: the opened point is no card of this deck")]
    NotACard,
    /// A shuffle refused by the named check.
    #[error("shuffle: {0}")]
    Shuffle(ShuffleCheck),
}

/// The check of [`verify_shuffle`] that refused a shuffle.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum ShuffleCheck {
    /// The output deck has another number of cards than the input.
    #[error("deck-length: output and input decks differ in length")]
    DeckLength,
    /// The proof is for another number of cards.
    #[error("proof-length: the proof is for another deck size")]
    ProofLength,
    /// The output is the input, unchanged.
    #[error("unchanged: the output deck is the input deck")]
    Unchanged,
    /// `t1`: the permutation commitments do not sum to the generators'.
    #[error("permutation-sum: t1 fails")]
    PermutationSum,
    /// `t2`: the commitment chain does not end at the product of the challenges.
    #[error("chain-product: t2 fails")]
    ChainProduct,
    /// `t3`: the challenges' commitment does not open to the permuted challenges.
    #[error("permutation-commitment: t3 fails")]
    PermutationCommitment,
    /// `t4`: the output is not a re-randomisation of the permuted input.
    #[error("reencryption: t4 fails")]
    Reencryption,
    /// `t̂_i`: link `i` of the commitment chain fails.
    #[error("chain-step: t-hat {0} fails")]
    ChainStep(u16),
    /// The batched equation fails although each equation alone holds
    /// (never expected; reported rather than accepted).
    #[error("batch: the batched equation fails")]
    Batch,
}
