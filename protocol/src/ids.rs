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
    #[error("account id {0:?} must be 1–128 chars of [A-Za-z0-9-_.:/]")]
    BadAccount(String),
    #[error("idempotency key {0:?} must be 1–200 chars of [A-Za-z0-9-_.:/]")]
    BadKey(String),
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

fn valid_token(s: &str, max: usize) -> bool {
    !s.is_empty()
        && s.len() <= max
        && s.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b':' | b'/'))
}

/// A chip account: a player id (64 hex) or a named system account such as
/// `dealer:<pubkey>` or `house:<room>`. 1–128 characters of `[A-Za-z0-9-_.:/]`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct AccountId(String);

impl AccountId {
    pub const MAX_LEN: usize = 128;

    pub fn new(s: impl Into<String>) -> Result<AccountId, IdError> {
        let s = s.into();
        if valid_token(&s, Self::MAX_LEN) {
            Ok(AccountId(s))
        } else {
            Err(IdError::BadAccount(s))
        }
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl From<PlayerId> for AccountId {
    fn from(p: PlayerId) -> AccountId {
        AccountId(p.to_string())
    }
}

impl TryFrom<String> for AccountId {
    type Error = IdError;
    fn try_from(s: String) -> Result<Self, IdError> {
        AccountId::new(s)
    }
}

impl From<AccountId> for String {
    fn from(a: AccountId) -> String {
        a.0
    }
}

impl fmt::Display for AccountId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// An idempotency key: 1–200 characters of `[A-Za-z0-9-_.:/]`, e.g.
/// `room1/hand/<hand_id>/op/7`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct IdempotencyKey(String);

impl IdempotencyKey {
    pub const MAX_LEN: usize = 200;

    pub fn new(s: impl Into<String>) -> Result<IdempotencyKey, IdError> {
        let s = s.into();
        if valid_token(&s, Self::MAX_LEN) {
            Ok(IdempotencyKey(s))
        } else {
            Err(IdError::BadKey(s))
        }
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl TryFrom<String> for IdempotencyKey {
    type Error = IdError;
    fn try_from(s: String) -> Result<Self, IdError> {
        IdempotencyKey::new(s)
    }
}

impl From<IdempotencyKey> for String {
    fn from(k: IdempotencyKey) -> String {
        k.0
    }
}

impl fmt::Display for IdempotencyKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
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
