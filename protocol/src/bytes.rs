//! Fixed-size byte strings with a canonical text form (lowercase hex).
//!
//! Every hash, key, salt, seed and nonce of the protocol is one of these
//! newtypes, so that a 16-byte hand id can never be passed where a 32-byte
//! salt is expected, and so that JSON always carries them the same way:
//! exactly `2 * N` lowercase hex characters (SPEC.md §1).

use std::fmt;
use std::str::FromStr;

use rand_core::CryptoRngCore;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use sha2::{Digest as _, Sha256};

/// Why a hex string did not parse into a fixed-size value.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HexError {
    /// The text has the wrong number of characters.
    #[error("{what}: expected {expected} hex characters, got {got}")]
    Length { what: &'static str, expected: usize, got: usize },
    /// A character is not one of `0-9a-f` (uppercase is not canonical).
    #[error("{what}: not lowercase hex")]
    NotHex { what: &'static str },
}

/// Writes `bytes` as lowercase hex into `buf` (at least twice as long) and
/// returns that text: ids, digests and signatures are written in every
/// event, and this costs no allocation (a char-by-char `String` did).
pub(crate) fn hex_in<'a>(bytes: &[u8], buf: &'a mut [u8]) -> &'a str {
    let n = bytes.len().min(buf.len() / 2);
    let out = &mut buf[..2 * n];
    // The lengths match by construction; only ASCII digits are written.
    if hex::encode_to_slice(&bytes[..n], out).is_err() {
        return "";
    }
    std::str::from_utf8(out).unwrap_or("")
}

/// Decodes exactly `N` bytes from `2 * N` lowercase hex characters.
pub fn decode_hex_array<const N: usize>(what: &'static str, s: &str) -> Result<[u8; N], HexError> {
    if s.len() != 2 * N {
        return Err(HexError::Length { what, expected: 2 * N, got: s.len() });
    }
    if !s.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)) {
        return Err(HexError::NotHex { what });
    }
    let mut out = [0u8; N];
    hex::decode_to_slice(s, &mut out).map_err(|_| HexError::NotHex { what })?;
    Ok(out)
}

/// Decodes a variable-length lowercase hex string.
pub fn decode_hex_vec(what: &'static str, s: &str) -> Result<Vec<u8>, HexError> {
    if !s.len().is_multiple_of(2) {
        return Err(HexError::Length { what, expected: s.len() + 1, got: s.len() });
    }
    if !s.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)) {
        return Err(HexError::NotHex { what });
    }
    hex::decode(s).map_err(|_| HexError::NotHex { what })
}

/// Serde helpers for a `Vec<u8>` carried as a lowercase hex string
/// (`#[serde(with = "claw_protocol::bytes::hex_vec")]`).
pub mod hex_vec {
    use serde::{Deserialize, Deserializer, Serializer};

    /// Serialises bytes as lowercase hex.
    pub fn serialize<S: Serializer>(v: &[u8], s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&hex::encode(v))
    }

    /// Parses lowercase hex into bytes.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<u8>, D::Error> {
        let s = <std::borrow::Cow<'de, str>>::deserialize(d)?;
        super::decode_hex_vec("bytes", &s).map_err(serde::de::Error::custom)
    }
}

macro_rules! fixed_bytes {
    ($(#[$doc:meta])* $name:ident, $n:expr, debug = $debug:ident) => {
        $(#[$doc])*
        #[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub struct $name(pub [u8; $n]);

        impl $name {
            /// Length in bytes.
            pub const LEN: usize = $n;

            /// Wraps raw bytes.
            pub const fn from_bytes(bytes: [u8; $n]) -> Self {
                $name(bytes)
            }

            /// The raw bytes.
            pub fn as_bytes(&self) -> &[u8; $n] {
                &self.0
            }

            /// A fresh value drawn from a cryptographic rng (the caller's; the
            /// protocol crate never draws randomness itself).
            pub fn random<R: CryptoRngCore + ?Sized>(rng: &mut R) -> Self {
                let mut b = [0u8; $n];
                rng.fill_bytes(&mut b);
                $name(b)
            }

            /// Builds the value from a slice of exactly the right length.
            pub fn from_slice(s: &[u8]) -> Option<Self> {
                <[u8; $n]>::try_from(s).ok().map($name)
            }
        }

        impl AsRef<[u8]> for $name {
            fn as_ref(&self) -> &[u8] {
                &self.0
            }
        }

        impl From<[u8; $n]> for $name {
            fn from(b: [u8; $n]) -> Self {
                $name(b)
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(hex_in(&self.0, &mut [0u8; 2 * $n]))
            }
        }

        fixed_bytes!(@debug $name, $debug);

        impl FromStr for $name {
            type Err = HexError;

            fn from_str(s: &str) -> Result<Self, HexError> {
                decode_hex_array::<$n>(stringify!($name), s).map($name)
            }
        }

        impl Serialize for $name {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(hex_in(&self.0, &mut [0u8; 2 * $n]))
            }
        }

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let s = <std::borrow::Cow<'de, str>>::deserialize(d)?;
                s.parse().map_err(serde::de::Error::custom)
            }
        }
    };
    (@debug $name:ident, full) => {
        impl fmt::Debug for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "{}({})", stringify!($name), self)
            }
        }
    };
    (@debug $name:ident, redacted) => {
        impl fmt::Debug for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "{}(<redacted>)", stringify!($name))
            }
        }
    };
}

fixed_bytes!(
    /// A SHA-256 output: leaves, Merkle nodes, commitments, event hashes.
    Digest, 32, debug = full
);
fixed_bytes!(
    /// An Ed25519 signature (R || s, 64 bytes) over a domain-separated byte
    /// string (SPEC.md §4).
    Signature, 64, debug = full
);
fixed_bytes!(
    /// An X25519 public key, the key cards are sealed to (SPEC.md §6).
    EncryptionKey, 32, debug = full
);
fixed_bytes!(
    /// A hand's identifier: 16 random bytes drawn by the dealer, bound into
    /// every leaf, sealed card and event of the hand.
    HandId, 16, debug = full
);
fixed_bytes!(
    /// A per-position 32-byte commitment salt (secret until revealed).
    Salt, 32, debug = full
);
fixed_bytes!(
    /// A 32-byte shuffle seed contribution (dealer or player). Debug never
    /// prints it: a dealer seed is secret until the hand ends.
    Seed, 32, debug = redacted
);
fixed_bytes!(
    /// A 32-byte random nonce (handshake client nonce, challenge, query nonce).
    Nonce, 32, debug = full
);
fixed_bytes!(
    /// The 24-byte XSalsa20 nonce of a sealed card (SPEC.md §6).
    BoxNonce, 24, debug = full
);

/// SHA-256 of the concatenation of `parts` (no separators: callers use
/// fixed-size fields or explicit lengths, SPEC.md §1).
pub fn sha256(parts: &[&[u8]]) -> Digest {
    let mut h = Sha256::new();
    for p in parts {
        h.update(p);
    }
    Digest(h.finalize().into())
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand_chacha::rand_core::SeedableRng;
    use rand_chacha::ChaCha20Rng;

    #[test]
    fn hex_round_trip_and_canonical_form() {
        let d = Digest([0xab; 32]);
        let s = d.to_string();
        assert_eq!(s, "ab".repeat(32));
        assert_eq!(s.parse::<Digest>().unwrap(), d);
        assert_eq!(serde_json::to_string(&d).unwrap(), format!("\"{s}\""));
        assert_eq!(serde_json::from_str::<Digest>(&format!("\"{s}\"")).unwrap(), d);
        assert!(s.to_uppercase().parse::<Digest>().is_err());
        assert!(s[..62].parse::<Digest>().is_err());
        assert!(format!("{s}00").parse::<Digest>().is_err());
        assert!("zz".repeat(32).parse::<Digest>().is_err());
        assert!(serde_json::from_str::<HandId>("\"00\"").is_err());
        let h = HandId([7; 16]);
        assert_eq!(h.to_string().len(), 32);
    }

    #[test]
    fn hex_in_matches_the_hex_crate_for_every_byte() {
        let all: Vec<u8> = (0..=255u8).collect();
        let mut buf = [0u8; 512];
        assert_eq!(hex_in(&all, &mut buf), hex::encode(&all));
        let sig = Signature([0x5a; 64]);
        assert_eq!(sig.to_string(), hex::encode([0x5a; 64]));
        let id = crate::PlayerId::from_bytes([0xf0; 32]);
        assert_eq!(serde_json::to_string(&id).unwrap(), format!("\"{}\"", hex::encode([0xf0; 32])));
        // A short buffer writes what fits, never more.
        assert_eq!(hex_in(&[1, 2, 3], &mut [0u8; 4]), "0102");
    }

    #[test]
    fn seed_debug_is_redacted() {
        let s = Seed([0x42; 32]);
        assert!(!format!("{s:?}").contains("42"));
    }

    #[test]
    fn random_uses_the_rng() {
        let mut a = ChaCha20Rng::from_seed([1; 32]);
        let mut b = ChaCha20Rng::from_seed([1; 32]);
        assert_eq!(HandId::random(&mut a), HandId::random(&mut b));
        assert_ne!(HandId::random(&mut a), HandId::random(&mut ChaCha20Rng::from_seed([2; 32])));
    }

    #[test]
    fn sha256_known_answer() {
        // FIPS 180-2 "abc", split in parts to check concatenation.
        assert_eq!(
            sha256(&[b"a", b"bc"]).to_string(),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }

    #[test]
    fn hex_vec_serde() {
        #[derive(serde::Serialize, serde::Deserialize, PartialEq, Debug)]
        struct T {
            #[serde(with = "hex_vec")]
            b: Vec<u8>,
        }
        let t = T { b: vec![1, 2, 0xff] };
        let j = serde_json::to_string(&t).unwrap();
        assert_eq!(j, r#"{"b":"0102ff"}"#);
        assert_eq!(serde_json::from_str::<T>(&j).unwrap(), t);
        assert!(serde_json::from_str::<T>(r#"{"b":"012"}"#).is_err());
        assert!(serde_json::from_str::<T>(r#"{"b":"0A"}"#).is_err());
    }
}
