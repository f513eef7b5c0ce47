//! The data directory lock: one dealer per `--data-dir`. An exclusive
//! advisory lock on `DATA_DIR/lock`, held while the node runs and released
//! by the OS when the node stops or the process dies (no stale locks).

use std::fs::{File, OpenOptions, TryLockError};
use std::io::Write;
use std::path::{Path, PathBuf};

/// Why the data directory could not be locked.
#[derive(Debug, thiserror::Error)]
pub enum LockError {
    /// Another dealer holds it.
    #[error("data directory {dir} is in use by another claw-dealer (lock file {file}{holder})")]
    Held {
        /// The data directory.
        dir: PathBuf,
        /// The lock file.
        file: PathBuf,
        /// `, pid N` when the holder wrote its pid.
        holder: String,
    },
    /// The lock file cannot be opened or locked.
    #[error("lock file {file}: {source}")]
    Io {
        /// The lock file.
        file: PathBuf,
        /// Why.
        source: std::io::Error,
    },
}

/// Holds the data directory until dropped.
#[derive(Debug)]
pub struct DataDirLock {
    _file: File,
}

impl DataDirLock {
    /// Takes the lock on `dir` (which must exist) without waiting.
    pub fn acquire(dir: &Path) -> Result<DataDirLock, LockError> {
        let path = dir.join("lock");
        let io = |source| LockError::Io { file: path.clone(), source };
        let mut file =
            OpenOptions::new().read(true).write(true).create(true).truncate(false).open(&path).map_err(io)?;
        match file.try_lock() {
            Ok(()) => {}
            Err(TryLockError::WouldBlock) => {
                let pid = std::fs::read_to_string(&path).unwrap_or_default();
                let pid = pid.trim();
                return Err(LockError::Held {
                    dir: dir.to_owned(),
                    file: path.clone(),
                    holder: if pid.is_empty() { String::new() } else { format!(", pid {pid}") },
                });
            }
            Err(TryLockError::Error(e)) => return Err(io(e)),
        }
        // The pid is informational (shown to a second dealer); the lock is the truth.
        file.set_len(0).map_err(io)?;
        writeln!(file, "{}", std::process::id()).map_err(io)?;
        Ok(DataDirLock { _file: file })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn second_lock_is_refused_until_the_first_is_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let first = DataDirLock::acquire(dir.path()).unwrap();
        let e = DataDirLock::acquire(dir.path()).unwrap_err();
        assert!(matches!(e, LockError::Held { .. }), "{e}");
        let text = e.to_string();
        assert!(text.contains("in use by another claw-dealer"), "{text}");
        assert!(text.contains(&format!("pid {}", std::process::id())), "{text}");
        drop(first);
        assert!(DataDirLock::acquire(dir.path()).is_ok());
    }
}
