//! The SDK's integration tests in one binary (one link instead of one per
//! file); each former test file is the module of the same name.
//! `solana_approve` stays apart: it needs the feature `solana-litesvm`.

mod cli;
mod engine_hands;
mod fetch;
mod malicious;
mod support;
