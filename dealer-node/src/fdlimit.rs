//! The process's open-file limit (`RLIMIT_NOFILE`). Every socket, the
//! chip journal, the archive and the points database take a file
//! descriptor; the usual default soft limit (1 024) is far below what a
//! public node holds, and the hard limit is there for the asking. The node
//! raises its soft limit to the hard limit at start and logs both
//! ([`raise_open_file_limit`]).

/// The open-file limit after [`raise_open_file_limit`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileLimit {
    /// The soft limit before (none: unlimited).
    pub before: Option<u64>,
    /// The soft limit now (none: unlimited).
    pub soft: Option<u64>,
    /// The hard limit (none: unlimited).
    pub hard: Option<u64>,
}

/// Why the limit could not be read or raised.
#[derive(Debug, thiserror::Error)]
pub enum FileLimitError {
    /// `setrlimit` refused every value tried.
    #[error("raising the open-file limit from {} to {}: {source}", show(*from), show(*to))]
    Raise {
        /// The soft limit.
        from: Option<u64>,
        /// The value asked for.
        to: Option<u64>,
        /// The system's answer.
        source: std::io::Error,
    },
    /// Not supported on this platform.
    #[error("the open-file limit is not adjustable on this platform")]
    Unsupported,
}

/// Raises the soft open-file limit to the hard limit (an unlimited hard
/// limit: to 1 048 576, the usual kernel ceiling, then to whatever the
/// system accepts of 65 536 and 10 240), and returns the limits.
#[cfg(unix)]
pub fn raise_open_file_limit() -> Result<FileLimit, FileLimitError> {
    use rustix::process::{getrlimit, setrlimit, Resource, Rlimit};
    let now = getrlimit(Resource::Nofile);
    let (before, hard) = (now.current, now.maximum);
    let mut tries: Vec<Option<u64>> = vec![hard];
    for cap in [1_048_576u64, 65_536, 10_240] {
        if hard.is_none_or(|h| h > cap) {
            tries.push(Some(cap));
        }
    }
    let mut last = None;
    for to in tries {
        if let (Some(b), Some(t)) = (before, to) {
            if b >= t {
                return Ok(FileLimit { before, soft: before, hard });
            }
        }
        match setrlimit(Resource::Nofile, Rlimit { current: to, maximum: hard }) {
            Ok(()) => return Ok(FileLimit { before, soft: getrlimit(Resource::Nofile).current, hard }),
            Err(e) => last = Some((to, std::io::Error::from(e))),
        }
    }
    match last {
        Some((to, source)) => Err(FileLimitError::Raise { from: before, to, source }),
        None => Ok(FileLimit { before, soft: before, hard }),
    }
}

/// Not supported: the limit stays as it is.
#[cfg(not(unix))]
pub fn raise_open_file_limit() -> Result<FileLimit, FileLimitError> {
    Err(FileLimitError::Unsupported)
}

/// A limit in words: its number, or `unlimited`.
fn show(v: Option<u64>) -> String {
    v.map_or_else(|| "unlimited".to_owned(), |n| n.to_string())
}

/// Raises the limit and logs the outcome (the node does this at start).
pub fn raise_and_log() {
    match raise_open_file_limit() {
        Ok(l) => {
            tracing::info!(
                soft = %show(l.soft),
                hard = %show(l.hard),
                was = %show(l.before),
                "open-file limit (RLIMIT_NOFILE)"
            );
            if l.soft.is_some_and(|s| s < 4096) {
                tracing::warn!(soft = %show(l.soft), "the open-file limit is low for a public node: raise LimitNOFILE (systemd) or ulimit -Hn");
            }
        }
        Err(e) => tracing::warn!(error = %e, "open-file limit left as it is"),
    }
}
