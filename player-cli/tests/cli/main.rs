//! The `claw-player` binary's tests in one binary (one link), each running
//! the real binary. `solana_approve` stays apart: it needs the feature
//! `solana-litesvm`. The hands and the TLS listener are the SDK tests' own
//! helpers, included from player-sdk/tests/sdk (one definition of each).

#[path = "../../../player-sdk/tests/sdk/support/mod.rs"]
mod support;
#[path = "../../../player-sdk/tests/sdk/tls_listener.rs"]
mod tls_listener;

mod audit;
mod export;
mod tls;

/// The `claw-player` binary this package builds.
fn player() -> std::process::Command {
    std::process::Command::new(env!("CARGO_BIN_EXE_claw-player"))
}
