//! The `claw-dealer` binary's library part: the bots demo, the defaults
//! that depend on where the dealer runs, the points-URL diagnosis, the
//! Solana demo bank (feature `solana-litesvm`), the rooms file's `[chips]`
//! table, the build's optional chip providers, and the operator's `admin`
//! commands, and the house AIs (`ai_seats`), shared with its tests.

pub mod admin_cli;
pub mod ai;
pub mod defaults;
pub mod demo;
pub mod features;
pub mod points_url;
pub mod rooms_chips;
#[cfg(feature = "solana-litesvm")]
pub mod solana_demo;
