//! Wire protocol v1 of game-claw, sans-IO.
//!
//! Everything here is pure: no sockets, no clock, no ambient randomness.
//! Time and randomness are passed in by the caller, so every step can be
//! replayed byte for byte by an auditor. SPEC.md is the normative text.

pub mod card;
pub mod ids;

pub use card::{Card, CardId, CardParseError, Rank, Suit};
pub use ids::{Chips, IdError, PlayerId, Seat};
