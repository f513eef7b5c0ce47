//! The `claw-dealer` binary's library part: the bots demo, shared with its tests.

pub mod demo;
