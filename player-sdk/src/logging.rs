//! Log output of the `claw-player` and `claw-dealer` binaries: text or
//! JSON lines (`--log-format json`) on stderr, with ANSI colours only when
//! stderr is a terminal.

use std::io::IsTerminal;

use tracing_subscriber::EnvFilter;

/// How log lines are written.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum LogFormat {
    /// Human-readable lines.
    #[default]
    Text,
    /// One JSON object per line.
    Json,
}

/// Installs the global subscriber: the filter from the environment
/// variable `env_var` (`RUST_LOG` syntax), else `default_filter`. A second
/// call does nothing.
pub fn init(format: LogFormat, env_var: &str, default_filter: &str) {
    let filter = EnvFilter::try_from_env(env_var).unwrap_or_else(|_| EnvFilter::new(default_filter));
    let builder = tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr);
    let _ = match format {
        LogFormat::Text => builder.with_ansi(std::io::stderr().is_terminal()).try_init(),
        LogFormat::Json => builder.json().with_ansi(false).try_init(),
    };
}
