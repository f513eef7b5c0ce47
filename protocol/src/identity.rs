//! A party's long-term keys: Ed25519 for signing, X25519 for sealed cards.
//!
//! The player id is the Ed25519 public key ([`PlayerId`]). Secrets never
//! appear in `Debug` output and are wiped from memory on drop. Key files are
//! JSON (SPEC.md §3.2); the text format is here, and with feature
//! `key-files` (the crate's one piece of I/O, off by default) [`file`] reads
//! and writes them: mode 0600, refused when group or others can read them.

#[cfg(feature = "key-files")]
pub mod file;

use std::fmt;
#[cfg(feature = "key-files")]
use std::path::PathBuf;

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

/// Why a key file's text is not a valid identity.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KeyFileError {
    /// Not a claw key file (bad JSON, unknown format, bad hex).
    #[error("{0}")]
    Format(String),
    /// The public keys stored in the file do not match its secrets.
    #[error("stored public key does not match the secret key")]
    Mismatch,
}

/// Why a key file could not be read or written.
#[cfg(feature = "key-files")]
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

    /// The key file's text (SPEC.md §3.2): both secrets in hex, wiped on drop.
    pub fn to_key_file(&self) -> Result<Zeroizing<String>, KeyFileError> {
        let file = KeyFile {
            format: KEY_FILE_FORMAT.to_owned(),
            player_id: self.id(),
            encryption_key: self.encryption_public,
            signing_secret: hex::encode(self.signing.to_bytes()),
            encryption_secret: hex::encode(*self.encryption_secret),
        };
        // Sized for the whole file so that no secret-holding buffer is reallocated.
        let mut buf = Zeroizing::new(Vec::with_capacity(1024));
        serde_json::to_writer_pretty(&mut *buf, &file).map_err(|e| KeyFileError::Format(e.to_string()))?;
        buf.push(b'\n');
        let bytes = std::mem::take(&mut *buf);
        String::from_utf8(bytes).map(Zeroizing::new).map_err(|e| KeyFileError::Format(e.to_string()))
    }

    /// Parses a key file's text; refuses an unknown format and public keys
    /// that do not match the secrets.
    pub fn from_key_file(text: &str) -> Result<Identity, KeyFileError> {
        let format = |reason: String| KeyFileError::Format(reason);
        let file: KeyFile = serde_json::from_str(text).map_err(|e| format(e.to_string()))?;
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
            return Err(KeyFileError::Mismatch);
        }
        Ok(id)
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
