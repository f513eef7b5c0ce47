//! The SDK's integration tests in one binary (one link instead of one per
//! file); each former test file is the module of the same name. The tests
//! of the `claw-player` binary are player-cli's.

mod engine_hands;
mod fetch;
mod house_ai;
mod malicious;
mod support;
mod tls;
mod tls_listener;
