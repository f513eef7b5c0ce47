//! Key shares with a Schnorr proof of knowledge, the joint key, and
//! decryption shares with a Chaum–Pedersen proof (docs/blind-deal.md §4–§5).

use curve25519_dalek::constants::RISTRETTO_BASEPOINT_TABLE;
use curve25519_dalek::ristretto::{RistrettoBasepointTable, RistrettoPoint};
use curve25519_dalek::scalar::Scalar;
use curve25519_dalek::traits::{Identity, IsIdentity, VartimeMultiscalarMul};
use rand_core::CryptoRngCore;
use zeroize::{Zeroize, ZeroizeOnDrop};

use super::group::{decode_point, decode_proven, decode_scalar, encode_proven, CardTable, Ciphertext};
use super::transcript::Transcript;
use super::MentalError;
use crate::{CardId, HandId, Seat};

/// Transcript domain of a key share's proof of knowledge.
pub const KEY_SHARE_DOMAIN: &[u8] = b"claw/v1/mental/key-share";
/// Transcript domain of a decryption share's DLEQ proof.
pub const DECRYPTION_SHARE_DOMAIN: &[u8] = b"claw/v1/mental/decryption-share";

/// One party's secret key share `x` (zeroized on drop, never printed).
#[derive(Clone, Zeroize, ZeroizeOnDrop)]
pub struct SecretShare {
    pub(super) x: Scalar,
    /// `x·G` compressed, kept to bind it into decryption-share proofs.
    pub(super) public: [u8; 32],
}

impl std::fmt::Debug for SecretShare {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SecretShare(<redacted>)")
    }
}

impl SecretShare {
    /// A fresh uniformly random secret (64 rng bytes reduced mod ℓ).
    pub fn generate<R: CryptoRngCore + ?Sized>(rng: &mut R) -> SecretShare {
        let x = Scalar::random(rng);
        SecretShare { public: (RISTRETTO_BASEPOINT_TABLE * &x).compress().to_bytes(), x }
    }

    /// The public share `X = x·G` with its proof of knowledge, bound to the
    /// hand and the seat that will use it.
    pub fn key_share<R: CryptoRngCore + ?Sized>(&self, hand: &HandId, seat: Seat, rng: &mut R) -> KeyShare {
        let public = RISTRETTO_BASEPOINT_TABLE * &self.x;
        let public_bytes = self.public;
        let k = Scalar::random(rng);
        let commit = (RISTRETTO_BASEPOINT_TABLE * &k).compress().to_bytes();
        let c = key_share_challenge(hand, seat, &public_bytes, &commit);
        KeyShare { public, public_bytes, commit, response: k + c * self.x }
    }

    /// This party's decryption share of the ciphertext at `position`, with
    /// its DLEQ proof, bound to the hand, the seat, the position and the ciphertext.
    pub fn decryption_share<R: CryptoRngCore + ?Sized>(
        &self,
        hand: &HandId,
        seat: Seat,
        position: u16,
        ct: &Ciphertext,
        rng: &mut R,
    ) -> DecryptionShare {
        let k = Scalar::random(rng);
        // D/2, A/2, B/2: one batched "double and encode" gives D, A and B.
        let (half_x, half_k) = (self.x * half(), k * half());
        let half_share = ct.c1 * half_x;
        let [share_bytes, a, b] =
            double_and_compress(&[half_share, RISTRETTO_BASEPOINT_TABLE * &half_k, ct.c1 * half_k]);
        let share = half_share + half_share;
        let c = dleq_challenge(hand, seat, position, ct, &self.public, &share_bytes, &a, &b);
        DecryptionShare { share, share_bytes, challenge: c, response: k + c * self.x }
    }
}

/// A public key share `X` with its Schnorr proof `(R, s)`; 96 bytes `X || R || s`.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct KeyShare {
    pub(super) public: RistrettoPoint,
    public_bytes: [u8; 32],
    commit: [u8; 32],
    response: Scalar,
}

impl std::fmt::Debug for KeyShare {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "KeyShare({})", hex::encode(self.to_bytes()))
    }
}

impl KeyShare {
    /// Length of the encoding.
    pub const LEN: usize = 96;

    /// `X || R || s`.
    pub fn to_bytes(&self) -> [u8; 96] {
        let mut out = [0u8; 96];
        out[..32].copy_from_slice(&self.public_bytes);
        out[32..64].copy_from_slice(&self.commit);
        out[64..].copy_from_slice(self.response.as_bytes());
        out
    }

    /// Decodes 96 bytes: `X` must be a canonical point, `s` a canonical
    /// scalar (`R` is checked by the proof).
    pub fn from_bytes(bytes: &[u8]) -> Result<KeyShare, MentalError> {
        if bytes.len() != Self::LEN {
            return Err(MentalError::BadLength);
        }
        let public = decode_point(&bytes[..32])?;
        let response = decode_scalar(&bytes[64..])?;
        let mut public_bytes = [0u8; 32];
        public_bytes.copy_from_slice(&bytes[..32]);
        let mut commit = [0u8; 32];
        commit.copy_from_slice(&bytes[32..64]);
        Ok(KeyShare { public, public_bytes, commit, response })
    }

    /// The 32-byte compressed public share `X`.
    pub fn public_bytes(&self) -> [u8; 32] {
        self.public_bytes
    }

    /// Checks the proof of knowledge for this hand and seat, and that `X` is
    /// not the identity.
    pub fn verify(&self, hand: &HandId, seat: Seat) -> Result<(), MentalError> {
        if self.public.is_identity() {
            return Err(MentalError::IdentityKey { seat: seat.0 });
        }
        let c = key_share_challenge(hand, seat, &self.public_bytes, &self.commit);
        // R' = s·G − c·X must encode to R.
        let r = RistrettoPoint::vartime_double_scalar_mul_basepoint(&-c, &self.public, &self.response);
        if r.compress().to_bytes() != self.commit {
            return Err(MentalError::KeyProof { seat: seat.0 });
        }
        Ok(())
    }
}

/// `1/2 mod ℓ`, little-endian: `(ℓ + 1) / 2`.
const HALF: [u8; 32] = [
    247, 233, 122, 46, 141, 49, 9, 44, 107, 206, 123, 81, 239, 124, 111, 10, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 8,
];

fn half() -> Scalar {
    Scalar::from_bytes_mod_order(HALF)
}

/// The encodings of `2·P` for each point: with one batched inversion, or
/// one by one when a point is the identity (a batch cannot invert zero).
fn double_and_compress<const N: usize>(points: &[RistrettoPoint; N]) -> [[u8; 32]; N] {
    let mut out = [[0u8; 32]; N];
    if points.iter().any(|p| p.is_identity()) {
        for (o, p) in out.iter_mut().zip(points) {
            *o = (p + p).compress().to_bytes();
        }
    } else {
        for (o, c) in out.iter_mut().zip(RistrettoPoint::double_and_compress_batch(points)) {
            *o = c.to_bytes();
        }
    }
    out
}

fn key_share_challenge(hand: &HandId, seat: Seat, public: &[u8; 32], commit: &[u8; 32]) -> Scalar {
    let mut t = Transcript::new(KEY_SHARE_DOMAIN);
    t.append(b"hand", hand.as_ref());
    t.append(b"seat", &[seat.0]);
    t.append(b"key", public);
    t.append(b"commit", commit);
    t.challenge_scalar(b"challenge")
}

/// The joint public key `K = Σ X_i` of one hand's parties, each share proven.
#[derive(Clone, Debug)]
pub struct JointKey {
    point: RistrettoPoint,
    bytes: [u8; 32],
    parties: Vec<Party>,
}

/// One party's proven key share.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Party {
    seat: Seat,
    point: RistrettoPoint,
    bytes: [u8; 32],
}

impl JointKey {
    /// Verifies every party's share (its proof for this hand and its seat)
    /// and sums them; refuses an empty list, an identity share, a failed
    /// proof, a seat twice or the same share twice.
    pub fn combine(hand: &HandId, shares: &[(Seat, KeyShare)]) -> Result<JointKey, MentalError> {
        if shares.is_empty() {
            return Err(MentalError::NoParties);
        }
        let mut parties: Vec<Party> = Vec::with_capacity(shares.len());
        for (i, (seat, share)) in shares.iter().enumerate() {
            share.verify(hand, *seat)?;
            for (prev_seat, prev) in &shares[..i] {
                if prev_seat == seat {
                    return Err(MentalError::DuplicateSeat { seat: seat.0 });
                }
                if prev.public_bytes == share.public_bytes {
                    return Err(MentalError::DuplicateKey { seat: seat.0 });
                }
            }
            parties.push(Party { seat: *seat, point: share.public, bytes: share.public_bytes });
        }
        let point: RistrettoPoint = parties.iter().map(|p| p.point).sum();
        if point.is_identity() {
            return Err(MentalError::IdentityKey { seat: shares[shares.len() - 1].0 .0 });
        }
        Ok(JointKey { point, bytes: point.compress().to_bytes(), parties })
    }

    /// The 32-byte compressed joint key.
    pub fn to_bytes(&self) -> [u8; 32] {
        self.bytes
    }

    /// The seats holding a share, in the order given to [`JointKey::combine`].
    pub fn seats(&self) -> impl Iterator<Item = Seat> + '_ {
        self.parties.iter().map(|p| p.seat)
    }

    pub(crate) fn point(&self) -> &RistrettoPoint {
        &self.point
    }

    /// A precomputed table for many multiplications of the joint key.
    pub(crate) fn table(&self) -> RistrettoBasepointTable {
        RistrettoBasepointTable::create(&self.point)
    }

    fn party(&self, seat: Seat) -> Result<&Party, MentalError> {
        self.parties.iter().find(|p| p.seat == seat).ok_or(MentalError::UnknownSeat { seat: seat.0 })
    }

    /// Checks one decryption share of the ciphertext at `position` of this
    /// hand against the seat's key share.
    pub fn verify_share(
        &self,
        hand: &HandId,
        seat: Seat,
        position: u16,
        ct: &Ciphertext,
        share: &DecryptionShare,
    ) -> Result<(), MentalError> {
        let party = self.party(seat)?;
        let c = share.challenge;
        let s = share.response;
        // A' = s·G − c·X, B' = s·c1 − c·D; the challenge must recompute.
        // A'/2 and B'/2, doubled and encoded in one batch.
        let (half_s, neg_half_c) = (s * half(), -(c * half()));
        let half_a = RistrettoPoint::vartime_double_scalar_mul_basepoint(&neg_half_c, &party.point, &half_s);
        let half_b = RistrettoPoint::vartime_multiscalar_mul([half_s, neg_half_c], [ct.c1, share.share]);
        let [a, b] = double_and_compress(&[half_a, half_b]);
        let expect = dleq_challenge(hand, seat, position, ct, &party.bytes, &share.share_bytes, &a, &b);
        if expect != c {
            return Err(MentalError::DecryptionProof { seat: seat.0, position });
        }
        Ok(())
    }

    /// Opens a card: verifies one share from every party (no more, no
    /// less), then maps `c2 − Σ D_i` back to a card id of `table`.
    pub fn open(
        &self,
        hand: &HandId,
        position: u16,
        ct: &Ciphertext,
        shares: &[(Seat, DecryptionShare)],
        table: &CardTable,
    ) -> Result<CardId, MentalError> {
        for (i, (seat, _)) in shares.iter().enumerate() {
            if shares[..i].iter().any(|(s, _)| s == seat) {
                return Err(MentalError::DuplicateSeat { seat: seat.0 });
            }
        }
        let mut sum = RistrettoPoint::identity();
        if let Some((seat, _)) = shares.iter().find(|(s, _)| self.party(*s).is_err()) {
            return Err(MentalError::UnknownSeat { seat: seat.0 });
        }
        for party in &self.parties {
            let seat = party.seat;
            let (_, share) =
                shares.iter().find(|(s, _)| *s == seat).ok_or(MentalError::MissingShare { seat: seat.0 })?;
            self.verify_share(hand, seat, position, ct, share)?;
            sum += share.share;
        }
        table.lookup(&(ct.c2 - sum))
    }
}

impl PartialEq for JointKey {
    fn eq(&self, other: &Self) -> bool {
        self.bytes == other.bytes && self.parties == other.parties
    }
}
impl Eq for JointKey {}

/// A decryption share `D = x·c1` with its DLEQ proof `(c, s)`; 96 bytes `D || c || s`.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct DecryptionShare {
    pub(super) share: RistrettoPoint,
    share_bytes: [u8; 32],
    challenge: Scalar,
    response: Scalar,
}

impl std::fmt::Debug for DecryptionShare {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "DecryptionShare({})", hex::encode(self.to_bytes()))
    }
}

impl DecryptionShare {
    /// Length of the encoding.
    pub const LEN: usize = 96;

    /// `D || c || s`.
    pub fn to_bytes(&self) -> [u8; 96] {
        encode_proven(&self.share_bytes, &self.challenge, &self.response)
    }

    /// Decodes 96 bytes: a canonical point and two canonical scalars.
    pub fn from_bytes(bytes: &[u8]) -> Result<DecryptionShare, MentalError> {
        let (share, share_bytes, challenge, response) = decode_proven(bytes)?;
        Ok(DecryptionShare { share, share_bytes, challenge, response })
    }
}

#[allow(clippy::too_many_arguments)]
fn dleq_challenge(
    hand: &HandId,
    seat: Seat,
    position: u16,
    ct: &Ciphertext,
    public: &[u8; 32],
    share: &[u8; 32],
    a: &[u8; 32],
    b: &[u8; 32],
) -> Scalar {
    let mut t = Transcript::new(DECRYPTION_SHARE_DOMAIN);
    t.append(b"hand", hand.as_ref());
    t.append(b"seat", &[seat.0]);
    t.append(b"position", &position.to_be_bytes());
    t.append(b"ciphertext", &ct.bytes);
    t.append(b"key", public);
    t.append(b"share", share);
    t.append(b"commit-g", a);
    t.append(b"commit-c1", b);
    t.challenge_scalar(b"challenge")
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand_chacha::rand_core::SeedableRng;
    use rand_chacha::ChaCha20Rng;

    #[test]
    fn half_is_one_half() {
        assert_eq!(half() + half(), Scalar::ONE);
    }

    #[test]
    fn batched_encoding_of_doubles_matches_one_by_one() {
        let mut rng = ChaCha20Rng::from_seed([5; 32]);
        let p = RistrettoPoint::random(&mut rng);
        let q = RistrettoPoint::random(&mut rng);
        let one_by_one =
            |v: &[RistrettoPoint]| v.iter().map(|p| (p + p).compress().to_bytes()).collect::<Vec<_>>();
        assert_eq!(double_and_compress(&[p, q]).to_vec(), one_by_one(&[p, q]));
        let zero = RistrettoPoint::identity();
        assert_eq!(double_and_compress(&[p, zero, q]).to_vec(), one_by_one(&[p, zero, q]));
    }
}
