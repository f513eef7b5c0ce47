//! A party's long-term keys: Ed25519 for signing, X25519 for sealed cards.
//!
//! The player id is the Ed25519 public key ([`PlayerId`]). Secrets never
//! appear in `Debug` output and are wiped from memory on drop. Key files are
//! JSON (SPEC.md §3.2), created with mode 0600, and refused when group or
//! others can read them.

use std::fmt;
use std::io::Write as _;
use std::path::{Path, PathBuf};

use ed25519_dalek::{Signer as _, SigningKey};
use rand_core::CryptoRngCore;
use serde::{Deserialize, Serialize};
use zeroize::{Zeroize, Zeroizing};

use crate::bytes::{sha256, EncryptionKey, Signature};
use crate::ids::PlayerId;
use crate::seal::{SealError, SharedKey};
use crate::sign::{signed_message, Purpose};

/// The public half of an [`Identity`]: what a peer needs to verify our
/// signatures and seal cards to us.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct PublicIdentity {
    /// The Ed25519 public key (the player id).
    pub signing: PlayerId,
    /// The X25519 public key cards are sealed to.
    pub encryption: EncryptionKey,
}

/// Ed25519 signing key plus X25519 secret. Debug prints only the player id;
/// both secrets are zeroized on drop.
#[derive(Clone)]
pub struct Identity {
    signing: SigningKey,
    encryption: crypto_box::SecretKey,
    encryption_public: EncryptionKey,
    // Kept to check a peer's X25519 key for small order (see `shared_key`).
    encryption_secret: Zeroizing<[u8; 32]>,
}

/// Why a key file could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum IdentityError {
    /// Reading or writing the file failed.
    #[error("key file {path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// The file is not a valid claw key file.
    #[error("key file {path}: {reason}")]
    Format { path: PathBuf, reason: String },
    /// Group or others may read the file: it must be mode 0600 (or 0400).
    #[error("key file {path} has mode {mode:o}: group/others must not have access (chmod 600)")]
    InsecurePermissions { path: PathBuf, mode: u32 },
    /// The public keys stored in the file do not match its secrets.
    #[error("key file {path}: stored public key does not match the secret key")]
    Mismatch { path: PathBuf },
}

/// The on-disk layout (SPEC.md §3.2).
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct KeyFile {
    format: String,
    player_id: PlayerId,
    encryption_key: EncryptionKey,
    signing_secret: String,
    encryption_secret: String,
}

impl Drop for KeyFile {
    fn drop(&mut self) {
        self.signing_secret.zeroize();
        self.encryption_secret.zeroize();
    }
}

/// The `format` field of a key file.
pub const KEY_FILE_FORMAT: &str = "claw-identity-v1";

impl Identity {
    /// A fresh identity: 32 bytes from `rng` fed to [`Identity::from_seed`].
    pub fn generate<R: CryptoRngCore + ?Sized>(rng: &mut R) -> Identity {
        let mut seed = Zeroizing::new([0u8; 32]);
        rng.fill_bytes(&mut *seed);
        Identity::from_seed(*seed)
    }

    /// A deterministic identity (tests, vectors): Ed25519 secret =
    /// SHA-256("claw/v1/identity/ed25519" || seed), X25519 secret =
    /// SHA-256("claw/v1/identity/x25519" || seed) (SPEC.md §3.1).
    pub fn from_seed(seed: [u8; 32]) -> Identity {
        let mut seed = Zeroizing::new(seed);
        let ed = Zeroizing::new(sha256(&[b"claw/v1/identity/ed25519", &*seed]).0);
        let x = Zeroizing::new(sha256(&[b"claw/v1/identity/x25519", &*seed]).0);
        seed.zeroize();
        Identity::from_secrets(*ed, *x)
    }

    /// An identity from its two raw 32-byte secrets (the Ed25519 secret key
    /// seed and the X25519 secret scalar, clamped when used).
    pub fn from_secrets(signing_secret: [u8; 32], encryption_secret: [u8; 32]) -> Identity {
        let signing = SigningKey::from_bytes(&signing_secret);
        let encryption = crypto_box::SecretKey::from_bytes(encryption_secret);
        let encryption_public = EncryptionKey(*encryption.public_key().as_bytes());
        Identity {
            signing,
            encryption,
            encryption_public,
            encryption_secret: Zeroizing::new(encryption_secret),
        }
    }

    /// The player id: the Ed25519 public key.
    pub fn id(&self) -> PlayerId {
        PlayerId::from_bytes(self.signing.verifying_key().to_bytes())
    }

    /// The Ed25519 secret key seed, for the one other signer of this key:
    /// a Solana wallet (the player id is their Solana address,
    /// docs/chips-solana.md). Solana messages start with a signature count
    /// or 0x80, never with a `claw/` tag, so the domains stay apart.
    pub fn signing_secret(&self) -> Zeroizing<[u8; 32]> {
        Zeroizing::new(self.signing.to_bytes())
    }

    /// Both public keys.
    pub fn public(&self) -> PublicIdentity {
        PublicIdentity { signing: self.id(), encryption: self.encryption_public }
    }

    /// The X25519 public key.
    pub fn encryption_key(&self) -> EncryptionKey {
        self.encryption_public
    }

    /// Signs `body` for `purpose`: Ed25519 over `tag || 0x00 || body`.
    pub fn sign(&self, purpose: Purpose, body: &[u8]) -> Signature {
        Signature(self.signing.sign(&signed_message(purpose, body)).to_bytes())
    }

    /// The precomputed box key shared with `peer` (one X25519 per peer per
    /// session). Refuses a peer key of small order, for which the shared
    /// secret would be predictable.
    pub fn shared_key(&self, peer: &EncryptionKey) -> Result<SharedKey, SealError> {
        let secret = x25519_dalek::StaticSecret::from(*self.encryption_secret);
        let shared = secret.diffie_hellman(&x25519_dalek::PublicKey::from(peer.0));
        if !shared.was_contributory() {
            return Err(SealError::WeakPeerKey);
        }
        Ok(SharedKey::from_box(crypto_box::SalsaBox::new(
            &crypto_box::PublicKey::from(peer.0),
            &self.encryption,
        )))
    }

    /// Reads a key file written by [`Identity::save`]. Refuses files that
    /// group or others can access (unix).
    pub fn load(path: impl AsRef<Path>) -> Result<Identity, IdentityError> {
        let path = path.as_ref();
        let io = |source| IdentityError::Io { path: path.to_owned(), source };
        let format = |reason: String| IdentityError::Format { path: path.to_owned(), reason };
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
        let text = Zeroizing::new(std::fs::read_to_string(path).map_err(io)?);
        let file: KeyFile = serde_json::from_str(&text).map_err(|e| format(e.to_string()))?;
        if file.format != KEY_FILE_FORMAT {
            return Err(format(format!("unknown format {:?}, expected {KEY_FILE_FORMAT:?}", file.format)));
        }
        let ed = Zeroizing::new(
            crate::bytes::decode_hex_array::<32>("signing_secret", &file.signing_secret)
                .map_err(|e| format(e.to_string()))?,
        );
        let x = Zeroizing::new(
            crate::bytes::decode_hex_array::<32>("encryption_secret", &file.encryption_secret)
                .map_err(|e| format(e.to_string()))?,
        );
        let id = Identity::from_secrets(*ed, *x);
        if id.id() != file.player_id || id.encryption_key() != file.encryption_key {
            return Err(IdentityError::Mismatch { path: path.to_owned() });
        }
        Ok(id)
    }

    /// Writes the key file atomically (temporary file + rename), mode 0600.
    pub fn save(&self, path: impl AsRef<Path>) -> Result<(), IdentityError> {
        let path = path.as_ref();
        let io = |source| IdentityError::Io { path: path.to_owned(), source };
        let file = KeyFile {
            format: KEY_FILE_FORMAT.to_owned(),
            player_id: self.id(),
            encryption_key: self.encryption_public,
            signing_secret: hex::encode(self.signing.to_bytes()),
            encryption_secret: hex::encode(*self.encryption_secret),
        };
        let text = Zeroizing::new(
            serde_json::to_string_pretty(&file)
                .map_err(|e| IdentityError::Format { path: path.to_owned(), reason: e.to_string() })?,
        );
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
            f.write_all(b"\n")?;
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

impl fmt::Debug for Identity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Identity")
            .field("id", &self.id())
            .field("encryption_key", &self.encryption_public)
            .field("secrets", &"<redacted>")
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand_chacha::rand_core::SeedableRng;
    use rand_chacha::ChaCha20Rng;

    #[test]
    fn deterministic_and_distinct() {
        let a = Identity::from_seed([1; 32]);
        assert_eq!(a.public(), Identity::from_seed([1; 32]).public());
        assert_ne!(a.id(), Identity::from_seed([2; 32]).id());
        let mut r1 = ChaCha20Rng::from_seed([9; 32]);
        let mut r2 = ChaCha20Rng::from_seed([9; 32]);
        assert_eq!(Identity::generate(&mut r1).id(), Identity::generate(&mut r2).id());
    }

    #[test]
    fn debug_never_prints_secrets() {
        let a = Identity::from_seed([1; 32]);
        let dbg = format!("{a:?}");
        let ed = hex::encode(a.signing.to_bytes());
        let x = hex::encode(*a.encryption_secret);
        assert!(!dbg.contains(&ed[..16]) && !dbg.contains(&x[..16]), "{dbg}");
        assert!(dbg.contains("redacted"));
    }

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

    #[test]
    fn shared_keys_agree_and_weak_keys_are_refused() {
        let a = Identity::from_seed([5; 32]);
        let b = Identity::from_seed([6; 32]);
        assert!(a.shared_key(&b.encryption_key()).is_ok());
        assert!(matches!(a.shared_key(&EncryptionKey([0; 32])), Err(SealError::WeakPeerKey)));
        let mut one = [0; 32];
        one[0] = 1;
        assert!(matches!(a.shared_key(&EncryptionKey(one)), Err(SealError::WeakPeerKey)));
    }
}
