//! `claw-player`: join a game-claw room (JSON lines on stdin/stdout, or a
//! bot), audit saved hand transcripts and export them as hand histories.
//! See docs/player-cli.md.

mod audit;
mod cli;
mod export;
mod join;
#[cfg(feature = "solana")]
mod solana;

use std::process::ExitCode;

use clap::Parser;
use claw_cli_log::{json_requested, LogFormat, Stderr};

use crate::cli::{exit, Cli, Command};

/// The binary's own stderr lines (`claw-player: …`), in the `--log-format` chosen.
fn stderr() -> Stderr {
    Stderr::chosen("claw-player")
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        // A usage error under `--log-format json` is one JSON line too;
        // `--help`, `--version` and text-mode errors print as clap prints them.
        Err(e) if e.use_stderr() && json_requested(&std::env::args_os().collect::<Vec<_>>()) => {
            Stderr::new(LogFormat::Json, "claw-player").error(e.render().to_string().trim_end());
            return ExitCode::from(exit::UNREADABLE as u8);
        }
        Err(e) => e.exit(),
    };
    claw_cli_log::init(cli.log_format, "CLAW_LOG", "warn");
    let code = match cli.command {
        Command::Audit(a) => audit::run(a),
        Command::Export(e) => export::run(&e),
        #[cfg(feature = "solana")]
        Command::Approve(a) => chain_command(solana::approve(&a)),
        #[cfg(feature = "solana")]
        Command::Revoke(r) => chain_command(solana::revoke(&r)),
        #[cfg(not(feature = "solana"))]
        Command::Approve(_) => not_built("claw-player approve"),
        #[cfg(not(feature = "solana"))]
        Command::Revoke(_) => not_built("claw-player revoke"),
        Command::Join(j) => {
            let rt = match tokio::runtime::Runtime::new() {
                Ok(rt) => rt,
                Err(e) => {
                    stderr().error(format_args!("cannot start the runtime: {e}"));
                    return ExitCode::from(exit::UNREADABLE as u8);
                }
            };
            let code = match rt.block_on(join::run(j)) {
                Ok(c) => c,
                Err(e) => {
                    stderr().error(format_args!("{e:#}"));
                    exit::UNREADABLE
                }
            };
            // A blocking read of stdin may still be pending: do not wait for it.
            rt.shutdown_background();
            code
        }
    };
    ExitCode::from(code as u8)
}

/// A command this build lacks: the one line saying how to build it, and 2.
#[cfg(not(feature = "solana"))]
fn not_built(program: &'static str) -> i32 {
    Stderr::chosen(program).error(cli::SOLANA_NOT_BUILT);
    exit::UNREADABLE
}

/// Runs a chain command: its line on stdout and 0, or the error and 2.
#[cfg(feature = "solana")]
fn chain_command(f: impl std::future::Future<Output = anyhow::Result<String>>) -> i32 {
    let r = tokio::runtime::Runtime::new().map_err(anyhow::Error::from).and_then(|rt| rt.block_on(f));
    match r {
        Ok(line) => {
            println!("{line}");
            exit::OK
        }
        Err(e) => {
            stderr().error(format_args!("{e:#}"));
            exit::UNREADABLE
        }
    }
}
