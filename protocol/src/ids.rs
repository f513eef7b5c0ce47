//! Identifiers and amounts shared by every crate.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A player's identity: the 32-byte Ed25519 public key, written as 64
/// lowercase hex characters. The bytes are not checked to be a valid curve
/// point here; signature verification does that.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct PlayerId([u8; 32]);

impl PlayerId {
    pub fn from_bytes(bytes: [u8; 32]) -> PlayerId {
        PlayerId(bytes)
    }

    pub fn as_bytes(&self) -> &[u8; 32] {
        &self.0
    }

    /// The first 8 hex characters, for logs and summaries.
    pub fn short(&self) -> String {
        hex::encode(&self.0[..4])
    }
}

impl fmt::Display for PlayerId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(crate::bytes::hex_in(&self.0, &mut [0u8; 64]))
    }
}

impl fmt::Debug for PlayerId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "PlayerId({})", self.short())
    }
}

/// Why an id did not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum IdError {
    #[error("player id must be 64 lowercase hex characters")]
    BadPlayerId,
}

impl FromStr for PlayerId {
    type Err = IdError;

    fn from_str(s: &str) -> Result<PlayerId, IdError> {
        if s.len() != 64 || s.bytes().any(|b| b.is_ascii_uppercase()) {
            return Err(IdError::BadPlayerId);
        }
        let mut out = [0u8; 32];
        hex::decode_to_slice(s, &mut out).map_err(|_| IdError::BadPlayerId)?;
        Ok(PlayerId(out))
    }
}

impl Serialize for PlayerId {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(crate::bytes::hex_in(&self.0, &mut [0u8; 64]))
    }
}

impl<'de> Deserialize<'de> for PlayerId {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = <std::borrow::Cow<'de, str>>::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

/// A seat index within one hand: the position of the player in the hand's
/// player list, clockwise from seat 0.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Seat(pub u8);

impl Seat {
    pub fn index(self) -> usize {
        usize::from(self.0)
    }
}

impl fmt::Display for Seat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "seat {}", self.0)
    }
}

/// An amount of chips. Never negative; arithmetic is checked by the caller
/// (`checked_add`/`checked_sub`), signed net changes use `i64`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Chips(pub u64);

impl Chips {
    pub const ZERO: Chips = Chips(0);

    pub fn is_zero(&self) -> bool {
        self.0 == 0
    }

    pub fn checked_add(self, o: Chips) -> Option<Chips> {
        self.0.checked_add(o.0).map(Chips)
    }

    pub fn checked_sub(self, o: Chips) -> Option<Chips> {
        self.0.checked_sub(o.0).map(Chips)
    }

    pub fn saturating_sub(self, o: Chips) -> Chips {
        Chips(self.0.saturating_sub(o.0))
    }
}

impl fmt::Display for Chips {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl std::iter::Sum for Chips {
    fn sum<I: Iterator<Item = Chips>>(iter: I) -> Chips {
        Chips(iter.map(|c| c.0).sum())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn player_id_hex() {
        let id = PlayerId::from_bytes([0xab; 32]);
        let s = id.to_string();
        assert_eq!(s.len(), 64);
        assert_eq!(s.parse::<PlayerId>().unwrap(), id);
        assert!(s.to_uppercase().parse::<PlayerId>().is_err());
        assert!(s[..62].parse::<PlayerId>().is_err());
        assert!("zz".repeat(32).parse::<PlayerId>().is_err());
    }
}
