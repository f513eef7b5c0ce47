//! The verifiable shuffle: permutation and re-randomisation of a deck with
//! the Terelius–Wikström proof of a shuffle (docs/blind-deal.md §6).
//!
//! Construction: Wikström, "A commitment-consistent proof of a shuffle"
//! (ACISP 2009) and Terelius–Wikström, "Proofs of restricted shuffles"
//! (AFRICACRYPT 2010), in the non-interactive form of Haenni, Locher,
//! Koenig and Dubuis, "Pseudo-code algorithms for verifiable re-encryption
//! mix-nets" (FC 2017 Workshops), with Ristretto255 written additively.

use curve25519_dalek::constants::{RISTRETTO_BASEPOINT_POINT, RISTRETTO_BASEPOINT_TABLE};
use curve25519_dalek::ristretto::RistrettoPoint;
use curve25519_dalek::scalar::Scalar;
use curve25519_dalek::traits::{IsIdentity, MultiscalarMul, VartimeMultiscalarMul};
use rand_core::CryptoRngCore;
use zeroize::Zeroize;

use super::group::{decode_point, decode_scalar, generators, Ciphertext, Deck};
use super::transcript::Transcript;
use super::{JointKey, MentalError, ShuffleCheck, MAX_DECK};
use crate::{HandId, Seat};

/// Transcript domain of a shuffle proof.
pub const SHUFFLE_DOMAIN: &[u8] = b"claw/v1/mental/shuffle";

/// A proof that a deck is a permutation and re-randomisation of another;
/// `(5n + 9) × 32` bytes for a deck of `n` cards.
#[derive(Clone, PartialEq, Eq)]
pub struct ShuffleProof {
    /// Permutation commitments `c_j`.
    commitments: Vec<RistrettoPoint>,
    /// Commitment chain `ĉ_i`.
    chain: Vec<RistrettoPoint>,
    /// `t1, t2, t3, t4a, t4b`.
    t: [RistrettoPoint; 5],
    /// `t̂_i`.
    t_hat: Vec<RistrettoPoint>,
    /// `s1, s2, s3, s4`.
    s: [Scalar; 4],
    s_hat: Vec<Scalar>,
    s_prime: Vec<Scalar>,
    /// The canonical encoding, kept for the transcript.
    bytes: Vec<u8>,
}

impl std::fmt::Debug for ShuffleProof {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ShuffleProof(n = {}, {} bytes)", self.commitments.len(), self.bytes.len())
    }
}

/// Encoded length of a proof for `n` cards.
pub const fn shuffle_proof_len(n: usize) -> usize {
    (5 * n + 9) * 32
}

impl ShuffleProof {
    /// Number of cards the proof is for.
    pub fn len(&self) -> usize {
        self.commitments.len()
    }

    /// Never true: a proof covers at least one card.
    pub fn is_empty(&self) -> bool {
        self.commitments.is_empty()
    }

    /// `c_j (n) || ĉ_i (n) || t1 t2 t3 t4a t4b || t̂_i (n) || s1 s2 s3 s4 || ŝ_i (n) || s'_i (n)`.
    pub fn to_bytes(&self) -> Vec<u8> {
        self.bytes.clone()
    }

    /// The canonical encoding, borrowed.
    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// Decodes the proof of a deck of `n` cards: exact length, canonical
    /// points and scalars.
    pub fn from_bytes(n: usize, bytes: &[u8]) -> Result<ShuffleProof, MentalError> {
        if n == 0 || n > MAX_DECK {
            return Err(MentalError::DeckSize(n));
        }
        if bytes.len() != shuffle_proof_len(n) {
            return Err(MentalError::BadLength);
        }
        let mut chunks = bytes.chunks_exact(32);
        let mut points = |k: usize| -> Result<Vec<RistrettoPoint>, MentalError> {
            (&mut chunks).take(k).map(decode_point).collect()
        };
        let commitments = points(n)?;
        let chain = points(n)?;
        let t5 = points(5)?;
        let t_hat = points(n)?;
        let mut scalars = |k: usize| -> Result<Vec<Scalar>, MentalError> {
            (&mut chunks).take(k).map(decode_scalar).collect()
        };
        let s4 = scalars(4)?;
        let s_hat = scalars(n)?;
        let s_prime = scalars(n)?;
        let t = [t5[0], t5[1], t5[2], t5[3], t5[4]];
        let s = [s4[0], s4[1], s4[2], s4[3]];
        Ok(ShuffleProof { commitments, chain, t, t_hat, s, s_hat, s_prime, bytes: bytes.to_vec() })
    }

    fn encode(&mut self) {
        let n = self.commitments.len();
        let mut out = Vec::with_capacity(shuffle_proof_len(n));
        for p in self.commitments.iter().chain(&self.chain).chain(&self.t).chain(&self.t_hat) {
            out.extend_from_slice(p.compress().as_bytes());
        }
        for s in self.s.iter().chain(&self.s_hat).chain(&self.s_prime) {
            out.extend_from_slice(s.as_bytes());
        }
        self.bytes = out;
    }

    fn commitments_bytes(&self) -> &[u8] {
        let n = self.len();
        &self.bytes[..32 * n]
    }
    fn chain_bytes(&self) -> &[u8] {
        let n = self.len();
        &self.bytes[32 * n..64 * n]
    }
    /// `t1 … t4b || t̂_i`: the prover's first messages after the chain.
    fn t_bytes(&self) -> &[u8] {
        let n = self.len();
        &self.bytes[64 * n..96 * n + 160]
    }
    fn responses_bytes(&self) -> &[u8] {
        let n = self.len();
        &self.bytes[96 * n + 160..]
    }
}

/// The statement: hand, seat, joint key, deck size, input and output decks.
fn statement(hand: &HandId, seat: Seat, key: &JointKey, input: &Deck, output: &Deck) -> Transcript {
    let mut t = Transcript::new(SHUFFLE_DOMAIN);
    t.append(b"hand", hand.as_ref());
    t.append(b"seat", &[seat.0]);
    t.append(b"key", &key.to_bytes());
    // Deck sizes are ≤ MAX_DECK, so they fit a u16.
    t.append(b"n", &u16::try_from(input.len()).unwrap_or(u16::MAX).to_be_bytes());
    absorb_deck(&mut t, b"input", input);
    absorb_deck(&mut t, b"output", output);
    t
}

/// One message: the deck's `n × 64` bytes.
fn absorb_deck(t: &mut Transcript, label: &'static [u8], deck: &Deck) {
    t.begin(label, deck.len() * Ciphertext::LEN);
    for c in &deck.cards {
        t.feed(&c.bytes);
    }
}

/// `u_j`, one challenge per input position, after the commitments.
fn permutation_challenges(t: &mut Transcript, commitments: &[u8], n: usize) -> Vec<Scalar> {
    t.append(b"commitments", commitments);
    (0..n).map(|_| t.challenge_scalar(b"u")).collect()
}

/// Shuffles `input` with a fresh secret permutation and re-randomisation
/// under the joint key, and proves it, bound to the hand and the shuffler's seat.
pub fn shuffle<R: CryptoRngCore + ?Sized>(
    hand: &HandId,
    seat: Seat,
    key: &JointKey,
    input: &Deck,
    rng: &mut R,
) -> (Deck, ShuffleProof) {
    let n = input.len();
    // Output position i holds input position pi[i] (Durstenfeld, from the top).
    let mut pi: Vec<usize> = (0..n).collect();
    for i in (1..n).rev() {
        // i < MAX_DECK, so it fits a u32.
        let j = crate::shuffle::uniform_below(rng, (i + 1) as u32) as usize;
        pi.swap(i, j);
    }
    let out = prove_map(hand, seat, key, input, &pi, rng);
    pi.zeroize();
    out
}

/// The prover for output `i` ← input `pi[i]`; `pi` is a permutation except
/// in this module's tests, where a cheating map shows the proof fails.
fn prove_map<R: CryptoRngCore + ?Sized>(
    hand: &HandId,
    seat: Seat,
    key: &JointKey,
    input: &Deck,
    pi: &[usize],
    rng: &mut R,
) -> (Deck, ShuffleProof) {
    let n = input.len();
    let g = RISTRETTO_BASEPOINT_TABLE;
    let gens = generators();
    let h0 = gens[0];
    let h = &gens[1..=n];

    let mut rho: Vec<Scalar> = (0..n).map(|_| Scalar::random(rng)).collect();
    let table = key.table();
    let output = Deck {
        cards: pi.iter().zip(&rho).map(|(&j, r)| input.cards[j].rerandomise_with(r, &table)).collect(),
    };

    // Permutation commitments: c_{pi[i]} = r_{pi[i]}·G + H_{i+1} (the
    // columns of the permutation matrix).
    let mut r: Vec<Scalar> = (0..n).map(|_| Scalar::random(rng)).collect();
    let mut commitments: Vec<RistrettoPoint> = r.iter().map(|r| g * r).collect();
    for (i, &j) in pi.iter().enumerate() {
        commitments[j] += h[i];
    }
    let commitments_bytes: Vec<u8> = commitments.iter().flat_map(|c| c.compress().to_bytes()).collect();

    let mut t = statement(hand, seat, key, input, &output);
    let u = permutation_challenges(&mut t, &commitments_bytes, n);
    let mut u_prime: Vec<Scalar> = pi.iter().map(|&j| u[j]).collect();

    // Chain: ĉ_i = r̂_i·G + u'_i·ĉ_{i−1}, ĉ_{−1} = H_0.
    let mut r_hat: Vec<Scalar> = (0..n).map(|_| Scalar::random(rng)).collect();
    let mut chain = Vec::with_capacity(n);
    let mut prev = h0;
    for i in 0..n {
        prev = g * &r_hat[i] + prev * u_prime[i];
        chain.push(prev);
    }

    // Aggregated witnesses.
    let r_bar: Scalar = r.iter().sum();
    let mut v = Scalar::ONE;
    let mut r_hat_sum = Scalar::ZERO;
    for i in (0..n).rev() {
        r_hat_sum += r_hat[i] * v;
        v *= u_prime[i];
    }
    let r_tilde: Scalar = r.iter().zip(&u).map(|(a, b)| a * b).sum();
    let r_prime: Scalar = rho.iter().zip(&u_prime).map(|(a, b)| a * b).sum();

    let mut w = [Scalar::random(rng), Scalar::random(rng), Scalar::random(rng), Scalar::random(rng)];
    let mut w_hat: Vec<Scalar> = (0..n).map(|_| Scalar::random(rng)).collect();
    let mut w_prime: Vec<Scalar> = (0..n).map(|_| Scalar::random(rng)).collect();

    let t1 = g * &w[0];
    let t2 = g * &w[1];
    let t3 = g * &w[2] + RistrettoPoint::multiscalar_mul(&w_prime, h);
    let t4a = RistrettoPoint::multiscalar_mul(&w_prime, output.cards.iter().map(|c| c.c1)) - g * &w[3];
    let t4b = RistrettoPoint::multiscalar_mul(&w_prime, output.cards.iter().map(|c| c.c2)) - &table * &w[3];
    let mut t_hat = Vec::with_capacity(n);
    let mut prev = h0;
    for i in 0..n {
        t_hat.push(g * &w_hat[i] + prev * w_prime[i]);
        prev = chain[i];
    }

    let mut proof = ShuffleProof {
        commitments,
        chain,
        t: [t1, t2, t3, t4a, t4b],
        t_hat,
        s: [Scalar::ZERO; 4],
        s_hat: Vec::new(),
        s_prime: Vec::new(),
        bytes: Vec::new(),
    };
    proof.encode();
    t.append(b"chain", proof.chain_bytes());
    t.append(b"t", proof.t_bytes());
    let c = t.challenge_scalar(b"challenge");

    proof.s = [w[0] + c * r_bar, w[1] + c * r_hat_sum, w[2] + c * r_tilde, w[3] + c * r_prime];
    proof.s_hat = w_hat.iter().zip(&r_hat).map(|(w, r)| w + c * r).collect();
    proof.s_prime = w_prime.iter().zip(&u_prime).map(|(w, u)| w + c * u).collect();
    proof.encode();

    rho.zeroize();
    r.zeroize();
    r_hat.zeroize();
    u_prime.zeroize();
    w.zeroize();
    w_hat.zeroize();
    w_prime.zeroize();
    (output, proof)
}

/// Verifies that `output` is a shuffle of `input` by `seat` in this hand
/// under the joint key; every failure names its check.
pub fn verify_shuffle(
    hand: &HandId,
    seat: Seat,
    key: &JointKey,
    input: &Deck,
    output: &Deck,
    proof: &ShuffleProof,
) -> Result<(), MentalError> {
    let n = input.len();
    if output.len() != n {
        return Err(MentalError::Shuffle(ShuffleCheck::DeckLength));
    }
    if proof.len() != n {
        return Err(MentalError::Shuffle(ShuffleCheck::ProofLength));
    }
    if output == input {
        return Err(MentalError::Shuffle(ShuffleCheck::Unchanged));
    }
    let mut t = statement(hand, seat, key, input, output);
    let u = permutation_challenges(&mut t, proof.commitments_bytes(), n);
    t.append(b"chain", proof.chain_bytes());
    t.append(b"t", proof.t_bytes());
    let c = t.challenge_scalar(b"challenge");
    let eq = Equations { n, c, u: &u, key, input, output, proof };

    // Verifier-side batching weights (128 bits each), derived after the whole
    // proof; they do not change which proofs are valid (docs/blind-deal.md §6.4).
    t.append(b"responses", proof.responses_bytes());
    let weights: Vec<Scalar> = (0..n + 5)
        .map(|_| {
            let mut b = [0u8; 32];
            b[..16].copy_from_slice(&t.challenge_bytes(b"weight")[..16]);
            Scalar::from_bytes_mod_order(b)
        })
        .collect();
    if eq.batch(&weights).is_identity() {
        return Ok(());
    }
    // The batch failed: name the first failing equation.
    Err(MentalError::Shuffle(eq.first_failure()))
}

/// The verification equations of one proof, each `… = identity`.
struct Equations<'a> {
    n: usize,
    c: Scalar,
    u: &'a [Scalar],
    key: &'a JointKey,
    input: &'a Deck,
    output: &'a Deck,
    proof: &'a ShuffleProof,
}

impl Equations<'_> {
    /// `Σ weights · equations` as one multiscalar multiplication.
    fn batch(&self, weights: &[Scalar]) -> RistrettoPoint {
        let (n, c, u, p) = (self.n, self.c, self.u, self.proof);
        let gens = generators();
        let (b1, b2, b3, b4a, b4b) = (weights[0], weights[1], weights[2], weights[3], weights[4]);
        let gamma = &weights[5..];
        let u_prod: Scalar = u.iter().product();
        let [s1, s2, s3, s4] = p.s;

        let mut scalars = Vec::with_capacity(8 * n + 7);
        let mut points = Vec::with_capacity(8 * n + 7);
        let g_coeff = b1 * s1 + b2 * s2 + b3 * s3 - b4a * s4
            + gamma.iter().zip(&p.s_hat).map(|(gm, s)| gm * s).sum::<Scalar>();
        scalars.push(g_coeff);
        points.push(RISTRETTO_BASEPOINT_POINT);
        scalars.push(-(b4b * s4));
        points.push(*self.key.point());
        scalars.push(b2 * c * u_prod + gamma[0] * p.s_prime[0]);
        points.push(gens[0]);
        for j in 0..n {
            scalars.push(-(c * (b1 + b3 * u[j])));
            points.push(p.commitments[j]);
            scalars.push(b1 * c + b3 * p.s_prime[j]);
            points.push(gens[j + 1]);
            let last = j + 1 == n;
            let next = if last { -(b2 * c) } else { gamma[j + 1] * p.s_prime[j + 1] };
            scalars.push(next - gamma[j] * c);
            points.push(p.chain[j]);
            scalars.push(-(b4a * c * u[j]));
            points.push(self.input.cards[j].c1);
            scalars.push(-(b4b * c * u[j]));
            points.push(self.input.cards[j].c2);
            scalars.push(b4a * p.s_prime[j]);
            points.push(self.output.cards[j].c1);
            scalars.push(b4b * p.s_prime[j]);
            points.push(self.output.cards[j].c2);
            scalars.push(-gamma[j]);
            points.push(p.t_hat[j]);
        }
        for (b, t) in [b1, b2, b3, b4a, b4b].iter().zip(&p.t) {
            scalars.push(-b);
            points.push(*t);
        }
        RistrettoPoint::vartime_multiscalar_mul(scalars, points)
    }

    /// Each equation alone, in order; the first that fails.
    fn first_failure(&self) -> ShuffleCheck {
        let (n, c, u, p) = (self.n, self.c, self.u, self.proof);
        let gens = generators();
        let h = &gens[1..=n];
        let g = RISTRETTO_BASEPOINT_POINT;
        let [s1, s2, s3, s4] = p.s;
        let neg_c = -c;
        let sum = |pts: &[RistrettoPoint]| pts.iter().sum::<RistrettoPoint>();

        // t1 = s1·G − c·(Σ c_j − Σ H_j)
        let c_bar = sum(&p.commitments) - sum(h);
        if RistrettoPoint::vartime_multiscalar_mul([s1, neg_c], [g, c_bar]) != p.t[0] {
            return ShuffleCheck::PermutationSum;
        }
        // t2 = s2·G − c·(ĉ_{n−1} − Π u_j · H_0)
        let u_prod: Scalar = u.iter().product();
        let c_hat =
            RistrettoPoint::vartime_multiscalar_mul([s2, neg_c, c * u_prod], [g, p.chain[n - 1], gens[0]]);
        if c_hat != p.t[1] {
            return ShuffleCheck::ChainProduct;
        }
        // t3 = s3·G + Σ s'_i·H_i − c·Σ u_j·c_j
        let t3 = RistrettoPoint::vartime_multiscalar_mul(
            std::iter::once(s3).chain(p.s_prime.iter().copied()).chain(u.iter().map(|u| neg_c * u)),
            std::iter::once(g).chain(h.iter().copied()).chain(p.commitments.iter().copied()),
        );
        if t3 != p.t[2] {
            return ShuffleCheck::PermutationCommitment;
        }
        // t4 = −s4·(G, K) + Σ s'_i·e'_i − c·Σ u_j·e_j, on each half.
        type Half = fn(&Ciphertext) -> RistrettoPoint;
        let halves: [(RistrettoPoint, Half); 2] = [(g, |e| e.c1), (*self.key.point(), |e| e.c2)];
        for (k, (base, half)) in halves.iter().enumerate() {
            let t4 = RistrettoPoint::vartime_multiscalar_mul(
                std::iter::once(-s4).chain(p.s_prime.iter().copied()).chain(u.iter().map(|u| neg_c * u)),
                std::iter::once(*base)
                    .chain(self.output.cards.iter().map(half))
                    .chain(self.input.cards.iter().map(half)),
            );
            if t4 != p.t[3 + k] {
                return ShuffleCheck::Reencryption;
            }
        }
        // t̂_i = ŝ_i·G + s'_i·ĉ_{i−1} − c·ĉ_i
        let mut prev = gens[0];
        for i in 0..n {
            let t = RistrettoPoint::vartime_multiscalar_mul(
                [p.s_hat[i], p.s_prime[i], neg_c],
                [g, prev, p.chain[i]],
            );
            if t != p.t_hat[i] {
                return ShuffleCheck::ChainStep(u16::try_from(i).unwrap_or(u16::MAX));
            }
            prev = p.chain[i];
        }
        ShuffleCheck::Batch
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mental::{KeyShare, SecretShare};
    use crate::CardId;
    use rand_chacha::rand_core::SeedableRng;
    use rand_chacha::ChaCha20Rng;

    fn setup(rng: &mut ChaCha20Rng) -> (HandId, JointKey, Deck) {
        let hand = HandId([3; 16]);
        let x = SecretShare::generate(rng);
        let share: KeyShare = x.key_share(&hand, Seat(0), rng);
        let key = JointKey::combine(&hand, &[(Seat(0), share)]).unwrap();
        let ids: Vec<CardId> = CardId::deck(1, false).into_iter().take(6).collect();
        (hand, key, Deck::initial(&ids).unwrap())
    }

    #[test]
    fn an_honest_map_proves() {
        let mut rng = ChaCha20Rng::from_seed([1; 32]);
        let (hand, key, input) = setup(&mut rng);
        let (out, proof) = prove_map(&hand, Seat(0), &key, &input, &[5, 3, 1, 0, 2, 4], &mut rng);
        assert_eq!(verify_shuffle(&hand, Seat(0), &key, &input, &out, &proof), Ok(()));
    }

    /// A cheating prover that knows its map is no permutation (a card
    /// duplicated, another dropped) runs the honest algorithm on it: every
    /// equation holds except the product of the chain.
    #[test]
    fn a_map_that_duplicates_a_card_cannot_be_proven() {
        let mut rng = ChaCha20Rng::from_seed([2; 32]);
        let (hand, key, input) = setup(&mut rng);
        for pi in [[0, 0, 2, 3, 4, 5], [1, 2, 3, 4, 5, 5], [3, 3, 3, 3, 3, 3]] {
            let (out, proof) = prove_map(&hand, Seat(0), &key, &input, &pi, &mut rng);
            assert_eq!(
                verify_shuffle(&hand, Seat(0), &key, &input, &out, &proof),
                Err(MentalError::Shuffle(ShuffleCheck::ChainProduct))
            );
        }
    }
}
