//! The Fiat–Shamir transcript of every mental-poker proof: SHA-512 over a
//! growing, unambiguous byte string (docs/blind-deal.md §3).
//!
//! Chosen over merlin (STROBE-128) so that a second implementation, the
//! browser audit included, needs nothing but SHA-512 and Ristretto255.

use curve25519_dalek::scalar::Scalar;
use sha2::{Digest as _, Sha512};

/// Record kinds: a labelled message or a challenge request.
const APPEND: u8 = 0x01;
const CHALLENGE: u8 = 0x02;

/// A running Fiat–Shamir transcript: `SHA-512` of every record absorbed so far.
#[derive(Clone)]
pub(crate) struct Transcript {
    state: Sha512,
}

impl Transcript {
    /// Starts a transcript with its domain tag: `lp(domain)`.
    pub(crate) fn new(domain: &'static [u8]) -> Transcript {
        let mut state = Sha512::new();
        absorb_lp(&mut state, domain);
        Transcript { state }
    }

    /// Absorbs `0x01 || lp(label) || u32 BE len(data) || data`.
    pub(crate) fn append(&mut self, label: &'static [u8], data: &[u8]) {
        self.state.update([APPEND]);
        absorb_lp(&mut self.state, label);
        // Every message is far below 4 GiB (decks are bounded by MAX_DECK).
        let len = u32::try_from(data.len()).unwrap_or(u32::MAX);
        self.state.update(len.to_be_bytes());
        self.state.update(data);
    }

    /// Starts a multi-part message of `len` bytes under `label`; the caller
    /// then feeds exactly `len` bytes with [`Transcript::feed`].
    pub(crate) fn begin(&mut self, label: &'static [u8], len: usize) {
        self.state.update([APPEND]);
        absorb_lp(&mut self.state, label);
        let len = u32::try_from(len).unwrap_or(u32::MAX);
        self.state.update(len.to_be_bytes());
    }

    /// Feeds part of a message started with [`Transcript::begin`].
    pub(crate) fn feed(&mut self, data: &[u8]) {
        self.state.update(data);
    }

    /// Absorbs `0x02 || lp(label)`, outputs the 64-byte SHA-512 of everything
    /// absorbed so far, then absorbs those 64 bytes (chaining challenges).
    pub(crate) fn challenge_bytes(&mut self, label: &'static [u8]) -> [u8; 64] {
        self.state.update([CHALLENGE]);
        absorb_lp(&mut self.state, label);
        let out: [u8; 64] = self.state.clone().finalize().into();
        self.state.update(out);
        out
    }

    /// A challenge scalar: the 64 challenge bytes as a little-endian integer mod ℓ.
    pub(crate) fn challenge_scalar(&mut self, label: &'static [u8]) -> Scalar {
        Scalar::from_bytes_mod_order_wide(&self.challenge_bytes(label))
    }
}

/// Absorbs `u16 BE len(s) || s` (labels are short ASCII constants).
fn absorb_lp(state: &mut Sha512, s: &[u8]) {
    let len = u16::try_from(s.len()).unwrap_or(u16::MAX);
    state.update(len.to_be_bytes());
    state.update(s);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transcript_is_sha512_of_the_records() {
        let mut t = Transcript::new(b"d");
        t.append(b"ab", &[7, 8]);
        let c = t.challenge_bytes(b"c");
        let mut flat = Vec::new();
        flat.extend_from_slice(&[0, 1, b'd', 1, 0, 2, b'a', b'b', 0, 0, 0, 2, 7, 8, 2, 0, 1, b'c']);
        let expect: [u8; 64] = Sha512::digest(&flat).into();
        assert_eq!(c, expect);
        // The next challenge covers the first one's output.
        let c2 = t.challenge_bytes(b"c");
        flat.extend_from_slice(&c);
        flat.extend_from_slice(&[2, 0, 1, b'c']);
        let expect2: [u8; 64] = Sha512::digest(&flat).into();
        assert_eq!(c2, expect2);
    }

    #[test]
    fn begin_feed_equals_append() {
        let mut a = Transcript::new(b"d");
        a.append(b"x", b"hello");
        let mut b = Transcript::new(b"d");
        b.begin(b"x", 5);
        b.feed(b"hel");
        b.feed(b"lo");
        assert_eq!(a.challenge_bytes(b"c"), b.challenge_bytes(b"c"));
    }
}
