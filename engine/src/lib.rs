#![warn(missing_docs)]
//! The game-claw GameEngine: everything a dealer decides, with no I/O.
//!
//! - [`hand`]: one hand of any registered game: dealer seed commitment,
//!   joint shuffle, deck commitment, sealed deals, action checks, the signed
//!   transcript and the reveal.
//! - [`room`]: the [`RoomCore`](room::RoomCore) state machine: players,
//!   seats, timers, queries, hands; chip calls and archive writes as effects.
//! - [`metrics`]: the node's counters (plain atomics).
//! - [`conduct`]: abuse signals per identity and the rule that bans on them.
//!
//! The crate never reads a clock, never draws randomness of its own and does
//! no I/O: time, randomness and the results of I/O are inputs (the sans-IO
//! split of quinn-proto and rustls). `dealer-node` is the tokio driver.

pub mod conduct;
pub mod hand;
pub mod metrics;
pub mod room;
#[cfg(feature = "test-game")]
pub mod testgame;
#[cfg(feature = "test-game")]
pub mod testing;

pub use hand::{
    ActionReject, Carried, Committed, EngineError, GameSpec, Hand, HandEnd, HandPhase, HandSeat, SeedError,
    Step,
};
