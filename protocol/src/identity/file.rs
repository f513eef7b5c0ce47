//! Key files on disk (feature `key-files`): the one place the protocol
//! crate does I/O. Written atomically with mode 0600; refused when group or
//! others can access them (unix).

use std::io::Write as _;
use std::path::{Path, PathBuf};

use rand_core::CryptoRngCore;

use super::{Identity, IdentityError, KeyFileError};

impl Identity {
    /// Reads a key file written by [`Identity::save`]. Refuses files that
    /// group or others can access (unix).
    pub fn load(path: impl AsRef<Path>) -> Result<Identity, IdentityError> {
        let path = path.as_ref();
        let io = |source| IdentityError::Io { path: path.to_owned(), source };
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt as _;
            let mode = std::fs::metadata(path).map_err(io)?.permissions().mode();
            if mode & 0o077 != 0 {
                return Err(IdentityError::InsecurePermissions {
                    path: path.to_owned(),
                    mode: mode & 0o7777,
                });
            }
        }
        let text = zeroize::Zeroizing::new(std::fs::read_to_string(path).map_err(io)?);
        Identity::from_key_file(&text).map_err(|e| match e {
            KeyFileError::Format(reason) => IdentityError::Format { path: path.to_owned(), reason },
            KeyFileError::Mismatch => IdentityError::Mismatch { path: path.to_owned() },
        })
    }

    /// Writes the key file atomically (temporary file + rename), mode 0600.
    pub fn save(&self, path: impl AsRef<Path>) -> Result<(), IdentityError> {
        let path = path.as_ref();
        let io = |source| IdentityError::Io { path: path.to_owned(), source };
        let text = self
            .to_key_file()
            .map_err(|e| IdentityError::Format { path: path.to_owned(), reason: e.to_string() })?;
        let dir = match path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d.to_owned(),
            _ => PathBuf::from("."),
        };
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let tmp = dir.join(format!(".{name}.tmp{}", std::process::id()));
        let mut opts = std::fs::OpenOptions::new();
        opts.write(true).create_new(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt as _;
            opts.mode(0o600);
        }
        let _ = std::fs::remove_file(&tmp);
        let result = (|| {
            let mut f = opts.open(&tmp)?;
            f.write_all(text.as_bytes())?;
            f.sync_all()?;
            std::fs::rename(&tmp, path)
        })();
        if result.is_err() {
            let _ = std::fs::remove_file(&tmp);
        }
        result.map_err(io)
    }

    /// Loads the key file at `path`, or creates one with a fresh identity if
    /// there is no file yet.
    pub fn load_or_create<R: CryptoRngCore + ?Sized>(
        path: impl AsRef<Path>,
        rng: &mut R,
    ) -> Result<Identity, IdentityError> {
        let path = path.as_ref();
        match std::fs::metadata(path) {
            Ok(_) => Identity::load(path),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                let id = Identity::generate(rng);
                id.save(path)?;
                Ok(id)
            }
            Err(source) => Err(IdentityError::Io { path: path.to_owned(), source }),
        }
    }
}

#[cfg(test)]
mod tests {
    use rand_chacha::rand_core::SeedableRng;
    use rand_chacha::ChaCha20Rng;

    use super::*;

    #[test]
    fn save_load_round_trip_with_0600() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("key.json");
        let a = Identity::from_seed([3; 32]);
        a.save(&path).unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt as _;
            assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o600);
        }
        let b = Identity::load(&path).unwrap();
        assert_eq!(a.public(), b.public());
        // Overwrite works too.
        a.save(&path).unwrap();
        let mut rng = ChaCha20Rng::from_seed([0; 32]);
        assert_eq!(Identity::load_or_create(&path, &mut rng).unwrap().id(), a.id());
        let fresh = dir.path().join("new.json");
        let c = Identity::load_or_create(&fresh, &mut rng).unwrap();
        assert_eq!(Identity::load(&fresh).unwrap().id(), c.id());
    }

    #[cfg(unix)]
    #[test]
    fn refuses_world_readable_and_tampered_files() {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("key.json");
        Identity::from_seed([3; 32]).save(&path).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        assert!(matches!(Identity::load(&path), Err(IdentityError::InsecurePermissions { .. })));
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        let other = Identity::from_seed([4; 32]).id().to_string();
        let bad = text.replace(&Identity::from_seed([3; 32]).id().to_string(), &other);
        std::fs::write(&path, bad).unwrap();
        assert!(matches!(Identity::load(&path), Err(IdentityError::Mismatch { .. })));
        std::fs::write(&path, "{}").unwrap();
        assert!(matches!(Identity::load(&path), Err(IdentityError::Format { .. })));
        assert!(matches!(Identity::load(dir.path().join("missing")), Err(IdentityError::Io { .. })));
    }
}
