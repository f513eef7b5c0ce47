//! The `claw-player` command line: argument definitions, the JSON-lines
//! input format read on stdin, and the audit report lines. The binary
//! (`src/bin/claw-player.rs`) wires these to a [`crate::node::PlayerNode`]
//! and the [`crate::audit::Auditor`]. Formats: docs/player-cli.md.

use std::path::PathBuf;

use clap::{Parser, Subcommand};
use claw_protocol::messages::QueryType;
use serde::Deserialize;
use serde_json::Value;

use crate::audit::HandVerdict;
use crate::logging::LogFormat;

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
#[derive(Debug, clap::Args)]
pub struct NotBuilt {
    /// Whatever followed the command (not read).
    #[arg(trailing_var_arg = true, allow_hyphen_values = true, hide = true)]
    pub args: Vec<String>,
}

/// The one line `approve` / `revoke` answer in a build without `solana`.
pub const SOLANA_NOT_BUILT: &str = "this claw-player is built without Solana chips; build and run it with: \
     cargo run --release -p claw-player --features solana -- …";

/// Arguments of `claw-player join`.
#[derive(Debug, clap::Args)]
pub struct JoinArgs {
    /// The invite URL, with the dealer's key after `#`.
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
    #[arg(long)]
    pub hands: Option<u64>,
    /// Seed of the bot's random choices (default: from the OS).
    #[arg(long)]
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
    #[arg(long, value_name = "URL")]
    pub fetch: Option<String>,
    /// With --fetch: seconds allowed to connect and between two reads of an
    /// answer (a whole answer gets four times it); a larger answer than
    /// 64 MiB is refused.
    #[arg(long, value_name = "SECONDS", default_value_t = 30, value_parser = clap::value_parser!(u64).range(1..=3600))]
    pub fetch_timeout: u64,
    /// The room's commission per player per hand (`commission` of the room
    /// configuration the dealer signed; `claw-player join` prints it in its
    /// `joined` line): every seat's `game-start` commission must equal it.
    #[arg(long, value_name = "CHIPS")]
    pub commission: Option<u64>,
}

/// One line read on stdin by `claw-player join`.
#[derive(Debug, Clone, PartialEq)]
pub enum InputLine {
    /// Sign and send a game action.
    Act(Value),
    /// Ask the dealer; the answer is printed as `query-result`.
    Query(QueryType),
    /// Print the node's state (`state` line).
    State,
    /// Skip the coming hands, keeping the seat.
    SitOut,
    /// Play again from the next hand.
    SitIn,
    /// Leave the room and exit.
    Leave,
}

/// Why an input line was not understood.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InputError {
    /// Not a JSON object.
    #[error("not a JSON object: {0}")]
    NotJson(String),
    /// `cmd` is not one of the known commands.
    #[error("unknown cmd {0:?} (act, query, state, sit-out, sit-in, leave)")]
    UnknownCommand(String),
    /// A command without its field.
    #[error("{0}")]
    Missing(&'static str),
}

#[derive(Deserialize)]
struct RawLine {
    cmd: Option<String>,
    action: Option<Value>,
    query: Option<QueryType>,
}

/// Parses one stdin line: `{"cmd":"act","action":{…}}`, a bare action
/// object (`{"type":"call"}`), `{"cmd":"query","query":"my-balance"}`,
/// `{"cmd":"state"}`, `{"cmd":"sit-out"}`, `{"cmd":"sit-in"}`,
/// `{"cmd":"leave"}`. Blank lines give `Ok(None)`.
pub fn parse_input(line: &str) -> Result<Option<InputLine>, InputError> {
    let line = line.trim();
    if line.is_empty() {
        return Ok(None);
    }
    let v: Value = serde_json::from_str(line).map_err(|e| InputError::NotJson(e.to_string()))?;
    if !v.is_object() {
        return Err(InputError::NotJson("expected an object".into()));
    }
    if v.get("cmd").is_none() {
        return Ok(Some(InputLine::Act(v)));
    }
    let raw: RawLine = serde_json::from_value(v).map_err(|e| InputError::NotJson(e.to_string()))?;
    let cmd = raw.cmd.unwrap_or_default();
    Ok(Some(match cmd.as_str() {
        "act" => InputLine::Act(raw.action.ok_or(InputError::Missing("act needs \"action\""))?),
        "query" => InputLine::Query(raw.query.ok_or(InputError::Missing("query needs \"query\""))?),
        "state" => InputLine::State,
        "sit-out" => InputLine::SitOut,
        "sit-in" => InputLine::SitIn,
        "leave" => InputLine::Leave,
        _ => return Err(InputError::UnknownCommand(cmd)),
    }))
}

/// The text line `claw-player audit` prints for one hand.
pub fn verdict_line(file: &str, v: &HandVerdict) -> String {
    match &v.outcome {
        Ok(r) if r.complete() => {
            format!("OK   {file}: hand {} (line {}): {} checks passed", v.hand_id, v.line, r.passed.len())
        }
        Ok(r) => format!(
            "PENDING {file}: hand {} (line {}): {} checks passed, waiting for the reveal: {}",
            v.hand_id,
            v.line,
            r.passed.len(),
            r.skipped.iter().map(|c| c.name()).collect::<Vec<_>>().join(", ")
        ),
        Err(e) => format!(
            "FAIL {file}: hand {} (line {}): check {} failed: {}",
            v.hand_id, v.line, e.check, e.detail
        ),
    }
}

/// The JSON object `claw-player audit --json` prints for one hand.
pub fn verdict_json(file: &str, v: &HandVerdict) -> Value {
    match &v.outcome {
        Ok(r) => serde_json::json!({
            "file": file, "hand_id": v.hand_id, "line": v.line, "ok": r.complete(),
            "verdict": v.verdict(), "passed": r.passed, "skipped": r.skipped,
        }),
        Err(e) => serde_json::json!({
            "file": file, "hand_id": v.hand_id, "line": v.line, "ok": false, "verdict": v.verdict(),
            "check": e.check, "detail": e.detail,
        }),
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
    use serde_json::json;

    #[test]
    fn input_lines() {
        assert_eq!(parse_input("").unwrap(), None);
        assert_eq!(parse_input(r#"{"type":"call"}"#).unwrap(), Some(InputLine::Act(json!({"type":"call"}))));
        assert_eq!(
            parse_input(r#"{"cmd":"act","action":{"type":"raise","to":40}}"#).unwrap(),
            Some(InputLine::Act(json!({"type":"raise","to":40})))
        );
        assert_eq!(
            parse_input(r#"{"cmd":"query","query":"my-balance"}"#).unwrap(),
            Some(InputLine::Query(QueryType::MyBalance))
        );
        assert_eq!(parse_input(r#"{"cmd":"leave"}"#).unwrap(), Some(InputLine::Leave));
        assert_eq!(parse_input(r#"{"cmd":"state"}"#).unwrap(), Some(InputLine::State));
        assert!(matches!(parse_input("[1]"), Err(InputError::NotJson(_))));
        assert!(matches!(parse_input("nope"), Err(InputError::NotJson(_))));
        assert!(matches!(parse_input(r#"{"cmd":"dance"}"#), Err(InputError::UnknownCommand(_))));
        assert!(matches!(parse_input(r#"{"cmd":"query"}"#), Err(InputError::Missing(_))));
    }

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
