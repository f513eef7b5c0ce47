//! `claw-player export`: audits the hands of transcript files and writes
//! them as hand histories ([`claw_audit::export`]). Formats:
//! docs/player-cli.md.

use std::io::Write as _;

use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
use claw_audit::export::{export, ExportOptions, Format};
use claw_protocol::PlayerId;

use crate::cli::exit;
use crate::stderr;

/// `--format`: the names of [`Format::ALL`], with their descriptions.
fn format_parser() -> impl TypedValueParser<Value = Format> {
    PossibleValuesParser::new(Format::ALL.map(|f| PossibleValue::new(f.name()).help(f.description())))
        .try_map(|s| s.parse::<Format>())
}

/// Arguments of `claw-player export`.
#[derive(Debug, clap::Args)]
pub struct ExportArgs {
    /// Transcript files (one or more hands each).
    #[arg(required = true)]
    pub files: Vec<std::path::PathBuf>,
    /// Output format.
    #[arg(long, value_parser = format_parser(), default_value = "pokerstars")]
    pub format: Format,
    /// The dealer key to trust (64 hex); default: the key in each file's header.
    #[arg(long, value_name = "KEY")]
    pub dealer: Option<String>,
    /// Write the history as this player's (their hole cards only); default: an observer's.
    #[arg(long, value_name = "PLAYER_ID")]
    pub hero: Option<String>,
    /// Table name; default: the room id in the transcript header.
    #[arg(long)]
    pub table: Option<String>,
    /// The room's seat count (`N-max`, OHH `table_size`) for hands whose
    /// `game-start` carries no room configuration (older transcripts); the
    /// signed one wins. Default: the game's maximum.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u8).range(1..))]
    pub seats: Option<u8>,
}

/// Runs `claw-player export`: audits each hand of each file, then prints it
/// in the chosen format on stdout (hands separated as the format expects).
/// Returns the exit code: 0 all written, 1 a hand failed its audit, 2 a file
/// is unreadable or a hand does not fit the format.
pub fn run(args: &ExportArgs) -> i32 {
    let parse = |s: &Option<String>, what: &str| match s.as_deref().map(str::parse::<PlayerId>).transpose() {
        Ok(k) => Ok(k),
        Err(e) => {
            stderr().error(format_args!("{what}: {e}"));
            Err(exit::UNREADABLE)
        }
    };
    let (dealer, hero) = match (parse(&args.dealer, "--dealer"), parse(&args.hero, "--hero")) {
        (Ok(d), Ok(h)) => (d, h),
        (Err(c), _) | (_, Err(c)) => return c,
    };
    let auditor = claw_audit::Auditor::new(dealer);
    let separator = match args.format {
        // Blank lines between hands: three in PokerStars files, none between JSON lines.
        Format::Pokerstars => "\n\n\n",
        Format::Ohh => "",
        Format::Text => "\n",
    };
    let mut code = exit::OK;
    let mut written = 0usize;
    for f in &args.files {
        let hands = std::fs::read_to_string(f)
            .map_err(|e| e.to_string())
            .and_then(|text| claw_audit::split_hands(&text).map_err(|e| e.to_string()));
        let hands = match hands {
            Ok(h) => h,
            Err(e) => {
                stderr().error(format_args!("{}: {e}", f.display()));
                code = exit::UNREADABLE;
                continue;
            }
        };
        let time_ms = std::fs::metadata(f)
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map_or(0, |d| d.as_millis() as u64);
        for (line, t) in hands {
            let report = match auditor.audit(&t, None) {
                Ok(r) => r,
                Err(e) => {
                    stderr().error(format_args!(
                        "{} line {line}: hand {} not exported: {e}",
                        f.display(),
                        t.hand_id
                    ));
                    code = code.max(exit::CHECK_FAILED);
                    continue;
                }
            };
            let table = args
                .table
                .clone()
                .or_else(|| t.header.as_ref().map(|h| h.room_id.clone()))
                .unwrap_or_else(|| "game-claw".into());
            let opts = ExportOptions { time_ms, table, hero, seats: args.seats };
            match export(&report.hand, args.format, &opts) {
                Ok(text) => {
                    let sep = if written > 0 { separator } else { "" };
                    // A closed stdout (`| head`) ends the export quietly.
                    if writeln!(std::io::stdout().lock(), "{sep}{text}").is_err() {
                        return code;
                    }
                    written += 1;
                }
                Err(e) => {
                    stderr().error(format_args!("{} line {line}: hand {}: {e}", f.display(), t.hand_id));
                    code = exit::UNREADABLE;
                }
            }
        }
    }
    stderr().info(format_args!("{written} hands exported"));
    code
}
