#![warn(missing_docs)]
//! The game-claw player SDK: connect to a dealer ([`node::PlayerNode`]),
//! verify every event as it arrives ([`verify`]), audit whole hands live and
//! offline ([`audit::Auditor`]), and let bots play ([`bots`]).

pub mod audit;
pub mod bots;
pub mod cli;
pub mod export;
pub mod invite;
pub mod logging;
pub mod node;
pub mod play;
#[cfg(feature = "solana")]
pub mod solana;
pub mod transport;
pub mod verify;

pub use audit::{Auditor, GamesReplayer, HandVerdict};
pub use invite::{Invite, InviteError};
