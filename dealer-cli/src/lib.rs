//! The `claw-dealer` binary's library part: the bots demo, the Solana demo
//! bank and the rooms file's `[chips]` table, shared with its tests.

pub mod demo;
pub mod rooms_chips;
pub mod solana_demo;
