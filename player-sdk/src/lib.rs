#![warn(missing_docs)]
//! The game-claw player SDK: connect to a dealer ([`node::PlayerNode`]),
//! verify every event as it arrives ([`verify`]; whole hands are audited at
//! their end), and let bots play ([`bots`]). The offline audit of saved hands
//! and their hand-history export are `claw-audit`'s ([`claw_audit::Auditor`]);
//! [`fetch`] completes a saved pending hand from the dealer's archive. The
//! `claw-player` binary is the `claw-player-cli` package (player-cli/).

mod blind;
pub mod bots;
pub mod fetch;
pub mod invite;
pub mod node;
pub mod play;
pub mod transport;
pub mod verify;

pub use invite::{Invite, InviteError};
