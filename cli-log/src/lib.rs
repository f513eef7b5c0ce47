#![warn(missing_docs)]
//! Stderr of the `claw-dealer`, `claw-player` and `claw-points` binaries:
//! the tracing logs ([`init`]) and the program's own lines ([`Stderr`]:
//! errors, start-up facts, summaries), both as text or, with
//! `--log-format json`, as one JSON object per line in the same shape, so
//! that every stderr line is JSON when JSON is chosen. For binaries only:
//! the libraries log through `tracing` and choose no output.

use std::ffi::OsStr;
use std::fmt::Display;
use std::io::{IsTerminal, Write};
use std::sync::OnceLock;

use tracing_subscriber::filter::{LevelFilter, Targets};
use tracing_subscriber::fmt::format::Writer;
use tracing_subscriber::fmt::time::{FormatTime, SystemTime};
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;

/// How stderr lines are written (`--log-format`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum LogFormat {
    /// Human-readable lines, coloured only when stderr is a terminal.
    #[default]
    Text,
    /// One JSON object per line, never coloured.
    Json,
}

/// The format given to [`init`], for [`Stderr::chosen`].
static CHOSEN: OnceLock<LogFormat> = OnceLock::new();

/// Installs the global tracing subscriber on stderr: the filter from the
/// environment variable `env_var`, else `default_filter`; `format` is also
/// [`Stderr::chosen`]'s. A second call does nothing. Filters are
/// comma-separated `LEVEL` and `target=LEVEL` directives (`RUST_LOG`'s
/// syntax without span and field filters; tracing-subscriber's `Targets`,
/// which needs no regex engine in the build).
pub fn init(format: LogFormat, env_var: &str, default_filter: &str) {
    let _ = CHOSEN.set(format);
    let filter = filter(std::env::var(env_var).ok().as_deref(), default_filter);
    let builder = tracing_subscriber::fmt().with_max_level(LevelFilter::TRACE).with_writer(std::io::stderr);
    let _ = match format {
        LogFormat::Text => {
            builder.with_ansi(std::io::stderr().is_terminal()).finish().with(filter).try_init()
        }
        LogFormat::Json => builder.json().with_ansi(false).finish().with(filter).try_init(),
    };
}

/// `from_env` when it parses, else `default_filter`, else `info`.
fn filter(from_env: Option<&str>, default_filter: &str) -> Targets {
    from_env
        .and_then(|v| v.parse().ok())
        .or_else(|| default_filter.parse().ok())
        .unwrap_or_else(|| Targets::new().with_default(LevelFilter::INFO))
}

/// Whether the command line `args` asks for `--log-format json` (read
/// before it is parsed, so that a usage error is reported as JSON too).
pub fn json_requested<S: AsRef<OsStr>>(args: &[S]) -> bool {
    let args: Vec<&OsStr> = args.iter().map(AsRef::as_ref).collect();
    args.iter().enumerate().any(|(i, a)| {
        *a == "--log-format=json" || (*a == "--log-format" && args.get(i + 1).is_some_and(|v| *v == "json"))
    })
}

/// How serious one of the program's own lines is (the JSON `level`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    /// Why the command or the program stops.
    Error,
    /// Something the user should look at; the program goes on.
    Warn,
    /// A fact or a report (where the data is, the session's summary).
    Info,
}

impl Level {
    fn json_name(self) -> &'static str {
        match self {
            Level::Error => "ERROR",
            Level::Warn => "WARN",
            Level::Info => "INFO",
        }
    }
}

/// A program's own lines on stderr, never filtered out by the log filter:
/// `PROGRAM: TEXT` in text (with `error: ` / `warning: ` before the text
/// when [`Stderr::labelled`]), in JSON the object a tracing log line is
/// (`timestamp`, `level`, `fields.message`, `target`, in that order).
#[derive(Debug, Clone, Copy)]
pub struct Stderr {
    format: LogFormat,
    program: &'static str,
    labelled: bool,
}

impl Stderr {
    /// Lines of `program` (e.g. `claw-player`, or `claw-player approve`:
    /// the text prefix; the JSON `target` is its first word, `-` as `_`).
    pub fn new(format: LogFormat, program: &'static str) -> Stderr {
        Stderr { format, program, labelled: false }
    }

    /// Lines of `program` in the format given to [`init`] (text before it).
    pub fn chosen(program: &'static str) -> Stderr {
        Stderr::new(CHOSEN.get().copied().unwrap_or_default(), program)
    }

    /// The same, with text errors and warnings labelled as such
    /// (`PROGRAM: error: TEXT`); JSON lines carry the level anyway.
    pub fn labelled(self) -> Stderr {
        Stderr { labelled: true, ..self }
    }

    /// The chosen format.
    pub fn format(&self) -> LogFormat {
        self.format
    }

    /// The line for `message`, without its newline.
    pub fn line(&self, level: Level, message: impl Display) -> String {
        match self.format {
            LogFormat::Text => {
                let label = match (self.labelled, level) {
                    (true, Level::Error) => "error: ",
                    (true, Level::Warn) => "warning: ",
                    _ => "",
                };
                format!("{}: {label}{message}", self.program)
            }
            LogFormat::Json => {
                let mut timestamp = String::new();
                let _ = SystemTime.format_time(&mut Writer::new(&mut timestamp));
                let target = self.program.split(' ').next().unwrap_or_default().replace('-', "_");
                let quoted = |v: &str| serde_json::Value::from(v).to_string();
                format!(
                    r#"{{"timestamp":{},"level":{},"fields":{{"message":{}}},"target":{}}}"#,
                    quoted(&timestamp),
                    quoted(level.json_name()),
                    quoted(&message.to_string()),
                    quoted(&target)
                )
            }
        }
    }

    /// Writes `message` at `level`: one write of the whole line, so that
    /// other threads' lines never interleave with it.
    pub fn say(&self, level: Level, message: impl Display) {
        let mut line = self.line(level, message);
        line.push('\n');
        let _ = std::io::stderr().lock().write_all(line.as_bytes());
    }

    /// Writes an error.
    pub fn error(&self, message: impl Display) {
        self.say(Level::Error, message);
    }

    /// Writes a warning.
    pub fn warn(&self, message: impl Display) {
        self.say(Level::Warn, message);
    }

    /// Writes a fact or a report.
    pub fn info(&self, message: impl Display) {
        self.say(Level::Info, message);
    }
}

/// Parses a whole-number argument, naming a negative one as such (clap
/// alone takes `-5` for an unknown option: "unexpected argument"). Use
/// with `allow_negative_numbers = true`.
pub fn whole_number(s: &str) -> Result<u64, String> {
    s.parse::<u64>().map_err(|_| {
        if s.trim_start().starts_with('-') {
            "negative numbers are not allowed: give a whole number from 0".to_owned()
        } else {
            format!("not a whole number: give digits only, from 0 to {}", u64::MAX)
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filters_take_rust_log_directives_and_fall_back_on_bad_text() {
        let f = filter(Some("claw_dealer=debug,warn"), "info");
        assert!(f.would_enable("claw_dealer::room", &tracing::Level::DEBUG));
        assert!(!f.would_enable("sqlx", &tracing::Level::INFO));
        assert!(f.would_enable("sqlx", &tracing::Level::WARN));
        // Unparsable text in the variable: the default.
        let f = filter(Some("claw_dealer=loud"), "info");
        assert!(f.would_enable("anything", &tracing::Level::INFO));
        assert!(!f.would_enable("anything", &tracing::Level::DEBUG));
        assert!(filter(None, "warn").would_enable("x", &tracing::Level::WARN));
        assert!(!filter(None, "warn").would_enable("x", &tracing::Level::INFO));
    }

    #[test]
    fn text_lines_name_the_program_and_labelled_ones_the_level() {
        let plain = Stderr::new(LogFormat::Text, "claw-player");
        assert_eq!(plain.line(Level::Error, "no such file"), "claw-player: no such file");
        assert_eq!(plain.line(Level::Warn, "one-time identity"), "claw-player: one-time identity");
        let labelled = Stderr::new(LogFormat::Text, "claw-dealer").labelled();
        assert_eq!(labelled.line(Level::Info, "chips: local"), "claw-dealer: chips: local");
        assert_eq!(labelled.line(Level::Warn, "slow"), "claw-dealer: warning: slow");
        assert_eq!(labelled.line(Level::Error, "no room"), "claw-dealer: error: no room");
    }

    #[test]
    fn json_lines_are_one_log_object_in_the_subscribers_field_order() {
        for s in [
            Stderr::new(LogFormat::Json, "claw-player approve"),
            Stderr::new(LogFormat::Json, "claw-player").labelled(),
        ] {
            let line = s.line(Level::Warn, "a \"quoted\"\nsecond line");
            assert!(!line.contains('\n'), "{line}");
            let v: serde_json::Value = serde_json::from_str(&line).unwrap();
            assert_eq!(v["level"], "WARN");
            assert_eq!(v["fields"]["message"], "a \"quoted\"\nsecond line", "no label in JSON");
            assert_eq!(v["target"], "claw_player");
            assert!(v["timestamp"].as_str().is_some_and(|t| t.len() >= 20 && t.ends_with('Z')), "{v}");
            let order =
                ["\"timestamp\"", "\"level\"", "\"fields\"", "\"target\""].map(|k| line.find(k).unwrap());
            assert!(order.windows(2).all(|w| w[0] < w[1]), "{line}");
        }
    }

    #[test]
    fn json_is_requested_in_both_spellings_only() {
        assert!(json_requested(&["claw-dealer", "--game", "x", "--log-format", "json"]));
        assert!(json_requested(&["claw-dealer", "--log-format=json"]));
        assert!(!json_requested(&["claw-dealer", "--log-format", "text"]));
        assert!(!json_requested(&["claw-dealer", "--log-format"]));
        assert!(!json_requested(&["claw-dealer", "--room", "json"]));
    }
}
