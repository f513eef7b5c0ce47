#![warn(missing_docs)]
//! Offline audit of game-claw hands and their hand-history export.
//!
//! [`Auditor`] checks whole hands from saved transcripts: the protocol's
//! checks (`claw_protocol::audit`) plus the replay of the game's rules
//! (`claw_games::audit::GamesReplayer`), and across the hands of a room the
//! chip chain ([`bind_balances`]). [`export`] writes audited hands as
//! PokerStars, Open Hand History or text histories. Pure: no runtime, no
//! network, no command line; the SDK, the dealer's web app and the CLIs
//! share it.

mod auditor;
pub mod export;

pub use auditor::{
    bind_balances, reveal_overdue, split_hands, AuditFileError, Auditor, HandVerdict, Verdict,
};
