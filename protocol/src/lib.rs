//! Wire protocol v1 of game-claw, sans-IO.
//!
//! Everything here is pure: no sockets, no files, no clock, no ambient
//! randomness. Time and randomness are passed in by the caller, so every
//! step can be replayed byte for byte by an auditor. The one exception is
//! opt-in: feature `key-files` reads and writes identity key files
//! ([`identity::file`]). SPEC.md is the normative text.

pub mod bytes;
pub mod card;
pub mod close;
pub mod commit;
pub mod hand;
pub mod handshake;
pub mod identity;
pub mod ids;
pub mod limits;
pub mod mental;
pub mod seal;
pub mod shuffle;
pub mod sign;

pub mod audit;
pub mod messages;
pub mod transcript;

pub use card::{Card, CardId, CardParseError, Rank, Suit};
pub use ids::{AccountId, Chips, IdError, IdempotencyKey, PlayerId, Seat};

pub use bytes::{sha256, BoxNonce, Digest, EncryptionKey, HandId, HexError, Nonce, Salt, Seed, Signature};
pub use commit::{leaf, merkle_root, CardOpening, MerkleProof, MerkleTree};
pub use handshake::{
    Accepted, Challenge, ChallengeBook, ClientHandshake, ClientSession, HandshakeError, Hello, RejectReason,
    Rejected, Response, ServerHandshake, VerifiedPlayer,
};
#[cfg(feature = "key-files")]
pub use identity::IdentityError;
pub use identity::{Identity, KeyFileError, PublicIdentity};
pub use seal::{SealError, SealedCard, SharedKey};
pub use shuffle::{seed_commitment, shuffle, shuffle_seed};
pub use sign::{verify, verify_batch, BatchItem, Purpose, SignatureError, SignerKey};
