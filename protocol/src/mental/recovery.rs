//! Recovery of a withheld decryption share (docs/blind-deal.md §II.7):
//! each seat splits its per-hand secret `x_i` additively among the other
//! seats and the dealer, commits to every piece, and sends each piece
//! encrypted to its holder (hashed ElGamal). When the seat withholds a
//! share, the holders publish `a_ij·c1` with a DLEQ proof against the
//! piece's commitment; the sum is the missing share. A holder whose piece
//! does not match its commitment complains with a DLEQ-proven key.

use curve25519_dalek::constants::RISTRETTO_BASEPOINT_TABLE;
use curve25519_dalek::ristretto::RistrettoPoint;
use curve25519_dalek::scalar::Scalar;
use curve25519_dalek::traits::{Identity, VartimeMultiscalarMul};
use rand_core::CryptoRngCore;
use sha2::{Digest as _, Sha512};
use zeroize::{Zeroize, ZeroizeOnDrop};

use super::group::{decode_point, decode_proven, encode_proven, CardTable, Ciphertext};
use super::keys::{DecryptionShare, JointKey, KeyShare, SecretShare};
use super::transcript::Transcript;
use super::MentalError;
use crate::{CardId, HandId, Seat};

/// Key-derivation tag of an encrypted piece.
pub const PIECE_TAG: &[u8] = b"claw/v1/blind-piece";
/// Transcript domain of a complaint's DLEQ proof.
pub const COMPLAINT_DOMAIN: &[u8] = b"claw/v1/mental/piece-complaint";
/// Transcript domain of a recovery share's DLEQ proof.
pub const RECOVERY_SHARE_DOMAIN: &[u8] = b"claw/v1/mental/recovery-share";
/// The seat byte the dealer's piece key is proven for, and the holder byte
/// that names the dealer (no seat has this index).
pub const DEALER_HOLDER: u8 = 0xFF;

/// Why a piece, a complaint or a recovery share was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum RecoveryError {
    /// A malformed encoding (length, point, scalar).
    #[error("{0}")]
    Mental(#[from] MentalError),
    /// Piece commitments for another number of holders.
    #[error("piece-count: {got} piece commitments, expected {expected}")]
    PieceCount {
        /// Commitments received.
        got: usize,
        /// Holders of the seat's pieces.
        expected: usize,
    },
    /// The commitments of a seat's pieces do not sum to its key share.
    #[error("piece-sum: the piece commitments of seat {seat} do not sum to its key share")]
    PieceSum {
        /// The seat.
        seat: u8,
    },
    /// A complaint whose DLEQ proof fails.
    #[error("complaint-proof: complaint of holder {holder} against seat {seat} is invalid")]
    ComplaintProof {
        /// The accused seat.
        seat: u8,
        /// The complaining holder.
        holder: u8,
    },
    /// A complaint against a piece that decrypts to its commitment.
    #[error("good-piece: the piece of seat {seat} for holder {holder} matches its commitment")]
    GoodPiece {
        /// The accused seat.
        seat: u8,
        /// The complaining holder.
        holder: u8,
    },
    /// A decrypted piece that does not match its commitment (or is no scalar).
    #[error("bad-piece: the piece of seat {seat} for holder {holder} does not match its commitment")]
    BadPiece {
        /// The seat that made the piece.
        seat: u8,
        /// Its holder.
        holder: u8,
    },
    /// A recovery share whose DLEQ proof fails.
    #[error(
        "recovery-proof: recovery share of holder {holder} for seat {seat} at position {position} is invalid"
    )]
    RecoveryProof {
        /// The withholding seat.
        seat: u8,
        /// The holder.
        holder: u8,
        /// The position.
        position: u16,
    },
    /// A holder's recovery share is missing.
    #[error("missing-recovery: no recovery share from holder {holder}")]
    MissingRecovery {
        /// The holder.
        holder: u8,
    },
}

/// Who holds a piece: another seat, or the dealer (byte `0xFF`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Holder {
    /// A seat of the hand.
    Seat(Seat),
    /// The dealer.
    Dealer,
}

impl Holder {
    /// The byte that names the holder in transcripts and key derivation.
    pub fn byte(self) -> u8 {
        match self {
            Holder::Seat(s) => s.0,
            Holder::Dealer => DEALER_HOLDER,
        }
    }

    /// The holders of seat `seat`'s pieces in a hand of `seats` seats: every
    /// other seat in increasing order, then the dealer.
    pub fn of(seat: Seat, seats: usize) -> Vec<Holder> {
        (0..seats)
            .filter(|j| *j != seat.index())
            .map(|j| Holder::Seat(Seat(j as u8)))
            .chain(std::iter::once(Holder::Dealer))
            .collect()
    }
}

impl std::fmt::Display for Holder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Holder::Seat(s) => write!(f, "seat {}", s.0),
            Holder::Dealer => f.write_str("the dealer"),
        }
    }
}

/// One additive piece `a_ij` of a seat's secret (zeroized on drop).
#[derive(Clone, Zeroize, ZeroizeOnDrop)]
pub struct Piece(Scalar);

impl std::fmt::Debug for Piece {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Piece(<redacted>)")
    }
}

impl SecretShare {
    /// Splits `x` into `holders` pieces summing to it: `holders − 1` fresh
    /// random scalars, then `x` minus their sum.
    pub fn split<R: CryptoRngCore + ?Sized>(&self, holders: usize, rng: &mut R) -> Vec<Piece> {
        let mut pieces: Vec<Piece> = (1..holders.max(1)).map(|_| Piece(Scalar::random(rng))).collect();
        let sum: Scalar = pieces.iter().map(|p| p.0).sum();
        pieces.push(Piece(self.x - sum));
        pieces
    }

    /// A complaint against the piece `piece` that seat `accused` encrypted
    /// to this holder (whose key this secret is): `S = x·R` with a DLEQ
    /// proof that `log_G X = log_R S`.
    pub fn complain<R: CryptoRngCore + ?Sized>(
        &self,
        hand: &HandId,
        accused: Seat,
        holder: Holder,
        piece: &EncryptedPiece,
        rng: &mut R,
    ) -> Complaint {
        let shared = piece.r * self.x;
        let shared_bytes = shared.compress().to_bytes();
        let k = Scalar::random(rng);
        let a = (RISTRETTO_BASEPOINT_TABLE * &k).compress().to_bytes();
        let b = (piece.r * k).compress().to_bytes();
        let c = complaint_challenge(hand, accused, holder, piece, &self.public, &shared_bytes, &a, &b);
        Complaint { shared, shared_bytes, challenge: c, response: k + c * self.x }
    }

    /// Decrypts a piece encrypted to this holder's key.
    pub fn decrypt_piece(
        &self,
        hand: &HandId,
        from: Seat,
        holder: Holder,
        piece: &EncryptedPiece,
    ) -> [u8; 32] {
        let shared = (piece.r * self.x).compress().to_bytes();
        let pad = piece_pad(hand, from, holder, &piece.r_bytes, &shared);
        xor32(&piece.masked, &pad)
    }
}

impl Piece {
    /// `A = a·G`, the piece's public commitment.
    pub fn commitment(&self) -> [u8; 32] {
        (RISTRETTO_BASEPOINT_TABLE * &self.0).compress().to_bytes()
    }

    /// The piece from 32 decrypted bytes, checked against its commitment.
    pub fn from_bytes_checked(bytes: &[u8; 32], commitment: &[u8; 32]) -> Option<Piece> {
        let a: Scalar = Option::from(Scalar::from_canonical_bytes(*bytes))?;
        let p = Piece(a);
        (p.commitment() == *commitment).then_some(p)
    }

    /// Hashed ElGamal of the piece to a holder's Ristretto255 key `Y`:
    /// `R = r·G`, `a XOR SHA-512(tag || 0x00 || hand || from || holder || R || r·Y)[..32]`.
    pub fn encrypt<R: CryptoRngCore + ?Sized>(
        &self,
        hand: &HandId,
        from: Seat,
        holder: Holder,
        holder_key: &KeyShare,
        rng: &mut R,
    ) -> EncryptedPiece {
        let r = Scalar::random(rng);
        let big_r = RISTRETTO_BASEPOINT_TABLE * &r;
        let r_bytes = big_r.compress().to_bytes();
        let shared = (holder_key.public * r).compress().to_bytes();
        let pad = piece_pad(hand, from, holder, &r_bytes, &shared);
        EncryptedPiece { r: big_r, r_bytes, masked: xor32(self.0.as_bytes(), &pad) }
    }

    /// This holder's recovery share for a position of the withholding seat
    /// `seat`: `S = a·c1` with a DLEQ proof that `log_G A = log_c1 S`.
    #[allow(clippy::too_many_arguments)]
    pub fn recovery_share<R: CryptoRngCore + ?Sized>(
        &self,
        hand: &HandId,
        seat: Seat,
        holder: Holder,
        position: u16,
        ct: &Ciphertext,
        rng: &mut R,
    ) -> RecoveryShare {
        let share = ct.c1 * self.0;
        let share_bytes = share.compress().to_bytes();
        let k = Scalar::random(rng);
        let a = (RISTRETTO_BASEPOINT_TABLE * &k).compress().to_bytes();
        let b = (ct.c1 * k).compress().to_bytes();
        let commitment = self.commitment();
        let c = recovery_challenge(hand, seat, holder, position, ct, &commitment, &share_bytes, &a, &b);
        RecoveryShare { share, share_bytes, challenge: c, response: k + c * self.0 }
    }
}

/// A piece encrypted to its holder: `R || masked`, 64 bytes.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct EncryptedPiece {
    r: RistrettoPoint,
    r_bytes: [u8; 32],
    masked: [u8; 32],
}

impl std::fmt::Debug for EncryptedPiece {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "EncryptedPiece({})", hex::encode(self.to_bytes()))
    }
}

impl EncryptedPiece {
    /// Length of the encoding.
    pub const LEN: usize = 64;

    /// `R || masked`.
    pub fn to_bytes(&self) -> [u8; 64] {
        let mut out = [0u8; 64];
        out[..32].copy_from_slice(&self.r_bytes);
        out[32..].copy_from_slice(&self.masked);
        out
    }

    /// Decodes 64 bytes: `R` a canonical point; `masked` any 32 bytes.
    pub fn from_bytes(bytes: &[u8]) -> Result<EncryptedPiece, MentalError> {
        if bytes.len() != Self::LEN {
            return Err(MentalError::BadLength);
        }
        let r = decode_point(&bytes[..32])?;
        let mut r_bytes = [0u8; 32];
        r_bytes.copy_from_slice(&bytes[..32]);
        let mut masked = [0u8; 32];
        masked.copy_from_slice(&bytes[32..]);
        Ok(EncryptedPiece { r, r_bytes, masked })
    }
}

/// The public commitments `A_ij` of one seat's pieces, in holder order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PieceCommitments {
    points: Vec<(RistrettoPoint, [u8; 32])>,
}

impl PieceCommitments {
    /// The commitments of `pieces`, in order.
    pub fn of(pieces: &[Piece]) -> PieceCommitments {
        PieceCommitments {
            points: pieces
                .iter()
                .map(|p| {
                    let point = RISTRETTO_BASEPOINT_TABLE * &p.0;
                    (point, point.compress().to_bytes())
                })
                .collect(),
        }
    }

    /// `A_0 || A_1 || …`.
    pub fn to_bytes(&self) -> Vec<u8> {
        self.points.iter().flat_map(|(_, b)| *b).collect()
    }

    /// Decodes the commitments of a seat's pieces for `holders` holders
    /// (each a canonical point).
    pub fn from_bytes(holders: usize, bytes: &[u8]) -> Result<PieceCommitments, RecoveryError> {
        if !bytes.len().is_multiple_of(32) {
            return Err(MentalError::BadLength.into());
        }
        if bytes.len() / 32 != holders {
            return Err(RecoveryError::PieceCount { got: bytes.len() / 32, expected: holders });
        }
        let points = bytes
            .chunks_exact(32)
            .map(|c| {
                let mut b = [0u8; 32];
                b.copy_from_slice(c);
                decode_point(c).map(|p| (p, b))
            })
            .collect::<Result<_, _>>()?;
        Ok(PieceCommitments { points })
    }

    /// Checks `Σ A_ij = X_i` for seat `seat`'s key share.
    pub fn check_sum(&self, seat: Seat, key: &KeyShare) -> Result<(), RecoveryError> {
        let sum: RistrettoPoint = self.points.iter().map(|(p, _)| *p).sum();
        if sum.compress().to_bytes() != key.public_bytes() {
            return Err(RecoveryError::PieceSum { seat: seat.0 });
        }
        Ok(())
    }

    /// The `k`-th commitment's encoding.
    pub fn get(&self, k: usize) -> Option<&[u8; 32]> {
        self.points.get(k).map(|(_, b)| b)
    }

    fn point(&self, k: usize) -> Option<&(RistrettoPoint, [u8; 32])> {
        self.points.get(k)
    }

    /// How many.
    pub fn len(&self) -> usize {
        self.points.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.points.is_empty()
    }
}

/// A complaint: `S = x_j·R` with its DLEQ proof `(e, s)`; 96 bytes `S || e || s`.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Complaint {
    shared: RistrettoPoint,
    shared_bytes: [u8; 32],
    challenge: Scalar,
    response: Scalar,
}

impl std::fmt::Debug for Complaint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Complaint({})", hex::encode(self.to_bytes()))
    }
}

impl Complaint {
    /// Length of the encoding.
    pub const LEN: usize = 96;

    /// `S || e || s`.
    pub fn to_bytes(&self) -> [u8; 96] {
        encode_proven(&self.shared_bytes, &self.challenge, &self.response)
    }

    /// Decodes 96 bytes: a canonical point and two canonical scalars.
    pub fn from_bytes(bytes: &[u8]) -> Result<Complaint, MentalError> {
        let (shared, shared_bytes, challenge, response) = decode_proven(bytes)?;
        Ok(Complaint { shared, shared_bytes, challenge, response })
    }

    /// Checks the complaint of `holder` (key `holder_key`) against seat
    /// `accused`'s piece `piece` with commitment `commitment`: the proof
    /// verifies, and the piece it decrypts is no scalar or does not match
    /// the commitment (else `good-piece`).
    pub fn verify(
        &self,
        hand: &HandId,
        accused: Seat,
        holder: Holder,
        holder_key: &KeyShare,
        piece: &EncryptedPiece,
        commitment: &[u8; 32],
    ) -> Result<(), RecoveryError> {
        let (c, s) = (self.challenge, self.response);
        let a = RistrettoPoint::vartime_double_scalar_mul_basepoint(&-c, &holder_key.public, &s);
        let b = RistrettoPoint::vartime_multiscalar_mul([s, -c], [piece.r, self.shared]);
        let (a, b) = (a.compress().to_bytes(), b.compress().to_bytes());
        let key = holder_key.public_bytes();
        if complaint_challenge(hand, accused, holder, piece, &key, &self.shared_bytes, &a, &b) != c {
            return Err(RecoveryError::ComplaintProof { seat: accused.0, holder: holder.byte() });
        }
        let pad = piece_pad(hand, accused, holder, &piece.r_bytes, &self.shared_bytes);
        if Piece::from_bytes_checked(&xor32(&piece.masked, &pad), commitment).is_some() {
            return Err(RecoveryError::GoodPiece { seat: accused.0, holder: holder.byte() });
        }
        Ok(())
    }
}

/// A recovery share `S = a_ij·c1` with its DLEQ proof; 96 bytes `S || e || s`.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct RecoveryShare {
    share: RistrettoPoint,
    share_bytes: [u8; 32],
    challenge: Scalar,
    response: Scalar,
}

impl std::fmt::Debug for RecoveryShare {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "RecoveryShare({})", hex::encode(self.to_bytes()))
    }
}

impl RecoveryShare {
    /// Length of the encoding.
    pub const LEN: usize = 96;

    /// `S || e || s`.
    pub fn to_bytes(&self) -> [u8; 96] {
        encode_proven(&self.share_bytes, &self.challenge, &self.response)
    }

    /// Decodes 96 bytes: a canonical point and two canonical scalars.
    pub fn from_bytes(bytes: &[u8]) -> Result<RecoveryShare, MentalError> {
        let (share, share_bytes, challenge, response) = decode_proven(bytes)?;
        Ok(RecoveryShare { share, share_bytes, challenge, response })
    }

    /// Checks the share of holder `holders[k]` for withholder `seat` at
    /// `position` (ciphertext `ct`) against the `k`-th commitment.
    #[allow(clippy::too_many_arguments)]
    pub fn verify(
        &self,
        hand: &HandId,
        seat: Seat,
        holder: Holder,
        k: usize,
        commitments: &PieceCommitments,
        position: u16,
        ct: &Ciphertext,
    ) -> Result<(), RecoveryError> {
        let bad = RecoveryError::RecoveryProof { seat: seat.0, holder: holder.byte(), position };
        let (point, bytes) = commitments.point(k).ok_or(bad)?;
        let (c, s) = (self.challenge, self.response);
        let a = RistrettoPoint::vartime_double_scalar_mul_basepoint(&-c, point, &s);
        let b = RistrettoPoint::vartime_multiscalar_mul([s, -c], [ct.c1, self.share]);
        let (a, b) = (a.compress().to_bytes(), b.compress().to_bytes());
        if recovery_challenge(hand, seat, holder, position, ct, bytes, &self.share_bytes, &a, &b) != c {
            return Err(bad);
        }
        Ok(())
    }
}

/// A withheld decryption share `x_i·c1`, rebuilt from every holder's
/// verified recovery share.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RecoveredShare {
    seat: Seat,
    point: RistrettoPoint,
}

impl RecoveredShare {
    /// Verifies one recovery share per holder of `seat`'s pieces (in holder
    /// order, [`Holder::of`]) and sums them.
    pub fn combine(
        hand: &HandId,
        seat: Seat,
        seats: usize,
        commitments: &PieceCommitments,
        position: u16,
        ct: &Ciphertext,
        shares: &[(Holder, RecoveryShare)],
    ) -> Result<RecoveredShare, RecoveryError> {
        let mut point = RistrettoPoint::identity();
        for (k, holder) in Holder::of(seat, seats).into_iter().enumerate() {
            let (_, s) = shares
                .iter()
                .find(|(h, _)| *h == holder)
                .ok_or(RecoveryError::MissingRecovery { holder: holder.byte() })?;
            s.verify(hand, seat, holder, k, commitments, position, ct)?;
            point += s.share;
        }
        Ok(RecoveredShare { seat, point })
    }

    /// The withholding seat.
    pub fn seat(&self) -> Seat {
        self.seat
    }
}

impl JointKey {
    /// Opens a card with one verified share from every key holder except
    /// those whose share was recovered, and the recovered shares.
    pub fn open_recovered(
        &self,
        hand: &HandId,
        position: u16,
        ct: &Ciphertext,
        shares: &[(Seat, DecryptionShare)],
        recovered: &[RecoveredShare],
        table: &CardTable,
    ) -> Result<CardId, MentalError> {
        let mut sum = RistrettoPoint::identity();
        for seat in self.seats() {
            if let Some(r) = recovered.iter().find(|r| r.seat == seat) {
                sum += r.point;
                continue;
            }
            let (_, share) =
                shares.iter().find(|(s, _)| *s == seat).ok_or(MentalError::MissingShare { seat: seat.0 })?;
            self.verify_share(hand, seat, position, ct, share)?;
            sum += share.share;
        }
        table.lookup(&(ct.c2 - sum))
    }
}

fn xor32(a: &[u8; 32], b: &[u8; 32]) -> [u8; 32] {
    let mut out = [0u8; 32];
    for (o, (x, y)) in out.iter_mut().zip(a.iter().zip(b)) {
        *o = x ^ y;
    }
    out
}

/// `SHA-512(PIECE_TAG || 0x00 || hand || from || holder || R || S)[..32]`.
fn piece_pad(hand: &HandId, from: Seat, holder: Holder, r: &[u8; 32], shared: &[u8; 32]) -> [u8; 32] {
    let mut h = Sha512::new();
    h.update(PIECE_TAG);
    h.update([0u8]);
    h.update(hand.as_ref());
    h.update([from.0, holder.byte()]);
    h.update(r);
    h.update(shared);
    let out = h.finalize();
    let mut pad = [0u8; 32];
    pad.copy_from_slice(&out[..32]);
    pad
}

#[allow(clippy::too_many_arguments)]
fn complaint_challenge(
    hand: &HandId,
    accused: Seat,
    holder: Holder,
    piece: &EncryptedPiece,
    key: &[u8; 32],
    shared: &[u8; 32],
    a: &[u8; 32],
    b: &[u8; 32],
) -> Scalar {
    let mut t = Transcript::new(COMPLAINT_DOMAIN);
    t.append(b"hand", hand.as_ref());
    t.append(b"seat", &[accused.0]);
    t.append(b"holder", &[holder.byte()]);
    t.append(b"piece", &piece.to_bytes());
    t.append(b"key", key);
    t.append(b"shared", shared);
    t.append(b"commit-g", a);
    t.append(b"commit-r", b);
    t.challenge_scalar(b"challenge")
}

#[allow(clippy::too_many_arguments)]
fn recovery_challenge(
    hand: &HandId,
    seat: Seat,
    holder: Holder,
    position: u16,
    ct: &Ciphertext,
    commitment: &[u8; 32],
    share: &[u8; 32],
    a: &[u8; 32],
    b: &[u8; 32],
) -> Scalar {
    let mut t = Transcript::new(RECOVERY_SHARE_DOMAIN);
    t.append(b"hand", hand.as_ref());
    t.append(b"seat", &[seat.0]);
    t.append(b"holder", &[holder.byte()]);
    t.append(b"position", &position.to_be_bytes());
    t.append(b"ciphertext", &ct.bytes);
    t.append(b"commitment", commitment);
    t.append(b"share", share);
    t.append(b"commit-g", a);
    t.append(b"commit-c1", b);
    t.challenge_scalar(b"challenge")
}

#[cfg(test)]
mod tests;
