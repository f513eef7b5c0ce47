//! The `claw-player` command line: its arguments and exit codes.
//! Formats: docs/player-cli.md.

use std::path::PathBuf;

use clap::{Parser, Subcommand};
use claw_cli_log::LogFormat;

/// `claw-player`: play on a game-claw dealer, or audit saved hands.
#[derive(Debug, Parser)]
#[command(name = "claw-player", version, about)]
pub struct Cli {
    /// The command.
    #[command(subcommand)]
    pub command: Command,
    /// Log lines on stderr: text or json (filter: CLAW_LOG, default warn).
    #[arg(long, global = true, value_enum, default_value = "text")]
    pub log_format: LogFormat,
}

/// The sub-commands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Join a room by invite URL (`ws://host:port/ROOM#DEALER_KEY`). Events
    /// go to stdout as JSON lines; actions and queries are read from stdin
    /// as JSON lines, unless `--bot` plays.
    Join(JoinArgs),
    /// Audit saved transcripts (JSON lines). Exit 0 when every check of
    /// every hand passes; 1 when a check fails (the first failed check and
    /// hand are printed); 2 when a file cannot be read; 3 when nothing
    /// failed but a hand's deferred reveal is not out yet (pending: fetch
    /// it later with --fetch).
    Audit(AuditArgs),
    /// Write audited hands as hand histories: PokerStars text or Open Hand
    /// History JSON (Texas Hold'em), or readable text (every game).
    Export(crate::export::ExportArgs),
    /// Solana chips: approve a dealer's operator to move at most AMOUNT
    /// chips from your token account (signed with your game key; creates
    /// the token account if needed). Prints one JSON line.
    #[cfg(feature = "solana")]
    Approve(crate::solana::ApproveArgs),
    /// Solana chips: revoke your approval (the dealer can move nothing more).
    #[cfg(feature = "solana")]
    Revoke(crate::solana::ChainArgs),
    /// Solana chips: approve a dealer's operator (needs a build with
    /// `--features solana`).
    #[cfg(not(feature = "solana"))]
    #[command(disable_help_flag = true)]
    Approve(NotBuilt),
    /// Solana chips: revoke your approval (needs a build with `--features solana`).
    #[cfg(not(feature = "solana"))]
    #[command(disable_help_flag = true)]
    Revoke(NotBuilt),
}

/// The arguments of a command this build lacks, taken as they come so that
/// the command answers with how to build it.
#[cfg(not(feature = "solana"))]
#[derive(Debug, clap::Args)]
pub struct NotBuilt {
    /// Whatever followed the command (not read).
    #[arg(trailing_var_arg = true, allow_hyphen_values = true, hide = true)]
    pub args: Vec<String>,
}

/// The one line `approve` / `revoke` answer in a build without `solana`.
#[cfg(not(feature = "solana"))]
pub const SOLANA_NOT_BUILT: &str = "this claw-player is built without Solana chips; build and run it with: \
     cargo run --release -p claw-player-cli --features solana -- …";

/// Arguments of `claw-player join`.
#[derive(Debug, clap::Args)]
pub struct JoinArgs {
    /// The invite URL, with the dealer's key after `#`; with
    /// `--quick-match`, any invite of the dealer or
    /// `ws://HOST:PORT/quick-match#DEALER_KEY`.
    pub url: String,
    /// Key file (created with mode 0600 if missing); without it a fresh
    /// identity is used for this session only.
    #[arg(long, value_name = "FILE")]
    pub key: Option<PathBuf>,
    /// Let a bot play: `random`, `simple`, or `guandan-l1`/`-l2`/`-l3`.
    #[arg(long, value_name = "STRATEGY")]
    pub bot: Option<String>,
    /// Save every finished hand's transcript as DIR/<hand_id>.jsonl.
    #[arg(long, value_name = "DIR")]
    pub save_transcripts: Option<PathBuf>,
    /// Display name.
    #[arg(long)]
    pub name: Option<String>,
    /// Leave after this many hands.
    #[arg(long, allow_negative_numbers = true, value_parser = whole_number)]
    pub hands: Option<u64>,
    /// Seed of the bot's random choices (default: from the OS).
    #[arg(long, allow_negative_numbers = true, value_parser = whole_number)]
    pub bot_seed: Option<u64>,
    /// Allow plain ws:// to a non-loopback host (trusted LAN only).
    #[arg(long)]
    pub insecure: bool,
    /// Also trust the CA certificates in this PEM file for wss:// (a
    /// dealer with its own CA); the bundled and system roots stay trusted.
    #[arg(long, value_name = "FILE")]
    pub ca: Option<PathBuf>,
    /// Print only hand results and failures (with `--bot`).
    #[arg(long)]
    pub quiet: bool,
    /// Quick match: instead of the URL's room, a seat at a room of this
    /// game (`sam-gong`) with a free seat, picked by the dealer (the URL
    /// gives only the dealer's address and key).
    #[arg(long, value_name = "GAME")]
    pub quick_match: Option<String>,
    /// With `--quick-match`: the room tier (a room's settings `tier`);
    /// without it, the game's room with the lowest entry threshold.
    #[arg(long, value_name = "TIER", requires = "quick_match")]
    pub tier: Option<String>,
}

/// Arguments of `claw-player audit`.
#[derive(Debug, clap::Args)]
pub struct AuditArgs {
    /// Transcript files (one or more hands each).
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// The dealer key to trust (64 hex); default: the key in each file's header.
    #[arg(long, value_name = "KEY")]
    pub dealer: Option<String>,
    /// Print one JSON object per hand instead of text.
    #[arg(long)]
    pub json: bool,
    /// The player's key file: also open and check the cards sealed to
    /// this player (never created; it must exist).
    #[arg(long, value_name = "KEYFILE")]
    pub key: Option<PathBuf>,
    /// The dealer's HTTP address (`http://host:port`): a pending hand is
    /// fetched from `URL/rooms/ROOM/hands/HAND` and, when its reveal is
    /// out, audited complete. The fetched events must extend the saved ones;
    /// a completion that audits OK is written back into the file (atomically).
    /// A hand the files name as a previous hand but do not hold is fetched
    /// too, so that the chain check compares every hand with the one it
    /// continues.
    #[arg(long, value_name = "URL")]
    pub fetch: Option<String>,
    /// With --fetch: seconds allowed to connect and between two reads of an
    /// answer (a whole answer gets four times it); a larger answer than
    /// 64 MiB is refused.
    #[arg(long, value_name = "SECONDS", default_value_t = 30, allow_negative_numbers = true, value_parser = fetch_seconds)]
    pub fetch_timeout: u64,
    /// With --fetch: a hand the dealer's archive still has pending this many
    /// seconds after its reveal was due (its room's `reveal_delay_ms` after
    /// the file was last written) fails `reveal-complete`: the dealer
    /// withholds it (SPEC.md §9.5).
    #[arg(long, value_name = "SECONDS", default_value_t = 60, allow_negative_numbers = true, value_parser = whole_number)]
    pub reveal_grace: u64,
    /// The room's commission per player per hand (`commission` of the room
    /// configuration the dealer signed; `claw-player join` prints it in its
    /// `joined` line): every seat's `game-start` commission must equal it.
    #[arg(long, value_name = "CHIPS", allow_negative_numbers = true, value_parser = whole_number)]
    pub commission: Option<u64>,
}

pub use claw_cli_log::whole_number;

/// `--fetch-timeout`: 1 to 3600 seconds.
fn fetch_seconds(s: &str) -> Result<u64, String> {
    match whole_number(s)? {
        n @ 1..=3600 => Ok(n),
        n => Err(format!("{n} is out of range: give 1 to 3600 seconds")),
    }
}

/// Exit codes of `claw-player`.
pub mod exit {
    /// Every check passed / the session ended normally.
    pub const OK: i32 = 0;
    /// An audit check failed (offline), or live verification failed.
    pub const CHECK_FAILED: i32 = 1;
    /// A file could not be read or parsed, or a usage error.
    pub const UNREADABLE: i32 = 2;
    /// No check failed, but a hand's deferred reveal is not out yet.
    pub const PENDING: i32 = 3;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cli_parses() {
        let c = Cli::try_parse_from([
            "claw-player",
            "join",
            "ws://127.0.0.1:1/r#ab",
            "--bot",
            "simple",
            "--hands",
            "3",
        ])
        .unwrap();
        match c.command {
            Command::Join(j) => {
                assert_eq!(j.bot.as_deref(), Some("simple"));
                assert_eq!(j.hands, Some(3));
            }
            _ => panic!(),
        }
        assert!(Cli::try_parse_from(["claw-player", "audit"]).is_err());
        assert!(Cli::try_parse_from(["claw-player", "audit", "a.jsonl", "b.jsonl", "--json"]).is_ok());
        let c = Cli::try_parse_from([
            "claw-player",
            "audit",
            "a.jsonl",
            "--key",
            "me.key",
            "--log-format",
            "json",
        ])
        .unwrap();
        assert_eq!(c.log_format, LogFormat::Json);
        assert!(
            matches!(c.command, Command::Audit(a) if a.key.as_deref() == Some(std::path::Path::new("me.key")))
        );
    }
}
