//! Crypto cost of one 6-player Texas Hold'em hand, dealer side and one
//! player's verification, next to the primitives it is made of (the target:
//! within 2× of the primitives' sum; figures in README.md).
//!
//! Run: `cargo bench -p claw-protocol --bench hand_crypto -- --warm-up-time 1 --measurement-time 3`
//!
//! Dealer, per hand: shuffle seed from the dealer seed and 6 player seeds,
//! Fisher–Yates over 52 cards, 52 fresh salts, 52 leaves, the Merkle root,
//! the seed commitment, 11 event signatures (game-start plus the ~10 other
//! events of a Hold'em hand: hand-prepare, hole-card deal, 3 streets, ~4
//! action results, game-end) over their 88-byte signing bodies, and 12
//! sealed hole cards with the per-session precomputed keys.
//!
//! Player, per hand: the 11 dealer signatures in one batch, its 2 hole cards
//! opened and checked against their leaves, the seed commitment, the shuffle
//! recomputed from the revealed seeds, the 52 leaves and the root.
//! `player_audit_with_seeds` adds the 6 players' seed signatures to the batch.
//!
//! Randomness: a ChaCha20 CSPRNG seeded once (as a dealer would seed one
//! from the OS), so the figures measure the protocol, not getrandom.

use claw_protocol::commit::{CardOpening, MerkleTree};
use claw_protocol::shuffle::{seed_commitment, shuffle, shuffle_seed};
use claw_protocol::sign::{verify_batch, BatchItem};
use claw_protocol::{
    sha256, verify, CardId, Digest, HandId, Identity, PlayerId, Purpose, Salt, SealedCard, Seed, SharedKey,
    Signature,
};
use criterion::{black_box, criterion_group, criterion_main, Criterion};
use rand_chacha::rand_core::SeedableRng;
use rand_chacha::ChaCha20Rng;

const PLAYERS: usize = 6;
const EVENTS: usize = 11;

/// What the dealer publishes for one hand (and the secrets revealed at the end).
struct HandOutput {
    hand: HandId,
    dealer_seed: Seed,
    commitment: Digest,
    seeds: Vec<Option<Seed>>,
    openings: Vec<CardOpening>,
    leaves: Vec<Digest>,
    root: Digest,
    bodies: Vec<[u8; 88]>,
    sigs: Vec<Signature>,
    sealed: Vec<SealedCard>,
}

/// An 88-byte event signing body (hand id, seq, prev, body hash), as §10.
fn event_body(hand: &HandId, seq: u64, prev: &Digest, body_hash: &Digest) -> [u8; 88] {
    let mut b = [0u8; 88];
    b[..16].copy_from_slice(&hand.0);
    b[16..24].copy_from_slice(&seq.to_be_bytes());
    b[24..56].copy_from_slice(&prev.0);
    b[56..].copy_from_slice(&body_hash.0);
    b
}

struct Table {
    dealer: Identity,
    players: Vec<Identity>,
    dealer_keys: Vec<SharedKey>,
    player_keys: Vec<SharedKey>,
    seed_sigs: Vec<Signature>,
}

fn table() -> Table {
    let dealer = Identity::from_seed([1; 32]);
    let players: Vec<Identity> = (0..PLAYERS as u8).map(|i| Identity::from_seed([10 + i; 32])).collect();
    let dealer_keys = players.iter().map(|p| dealer.shared_key(&p.encryption_key()).unwrap()).collect();
    let player_keys = players.iter().map(|p| p.shared_key(&dealer.encryption_key()).unwrap()).collect();
    Table { dealer, players, dealer_keys, player_keys, seed_sigs: Vec::new() }
}

/// The dealer's crypto for one hand.
fn dealer_hand(t: &Table, rng: &mut ChaCha20Rng, seeds: &[Option<Seed>]) -> HandOutput {
    let hand = HandId::random(rng);
    let dealer_seed = Seed::random(rng);
    let commitment = seed_commitment(&hand, &dealer_seed);
    let deck = shuffle(&CardId::deck(1, false), &shuffle_seed(&dealer_seed, seeds));
    let openings: Vec<CardOpening> = deck
        .iter()
        .enumerate()
        .map(|(i, c)| CardOpening { position: i as u16, card: *c, salt: Salt::random(rng) })
        .collect();
    let leaves: Vec<Digest> = openings.iter().map(|o| o.leaf(&hand)).collect();
    let root = MerkleTree::new(&leaves).root();
    let mut prev = Digest([0; 32]);
    let mut bodies = Vec::with_capacity(EVENTS);
    let mut sigs = Vec::with_capacity(EVENTS);
    for seq in 0..EVENTS as u64 {
        // The body hash stands for SHA-256 of the event JSON (game-start
        // binds the root); events are chained by the hash of the signed bytes.
        let body_hash = if seq == 1 { root } else { commitment };
        let b = event_body(&hand, seq, &prev, &body_hash);
        sigs.push(t.dealer.sign(Purpose::Event, &b));
        prev = sha256(&[b"claw/v1/event\0", &b]);
        bodies.push(b);
    }
    // Hole cards: positions 0..12, seat s gets positions s and s + 6.
    let sealed =
        (0..2 * PLAYERS).map(|i| t.dealer_keys[i % PLAYERS].seal(rng, &hand, &openings[i])).collect();
    HandOutput {
        hand,
        dealer_seed,
        commitment,
        seeds: seeds.to_vec(),
        openings,
        leaves,
        root,
        bodies,
        sigs,
        sealed,
    }
}

/// One player's verification of a finished hand.
fn player_verify(t: &Table, seat: usize, h: &HandOutput, with_seeds: bool) -> bool {
    let dealer = t.dealer.id();
    let player_ids: Vec<PlayerId> = t.players.iter().map(Identity::id).collect();
    let seed_bodies: Vec<[u8; 48]> = h
        .seeds
        .iter()
        .map(|s| {
            let mut b = [0u8; 48];
            b[..16].copy_from_slice(&h.hand.0);
            b[16..].copy_from_slice(&s.unwrap_or(Seed([0; 32])).0);
            b
        })
        .collect();
    let mut items: Vec<BatchItem> = h
        .bodies
        .iter()
        .zip(&h.sigs)
        .map(|(b, s)| BatchItem { signer: &dealer, purpose: Purpose::Event, body: b, signature: s })
        .collect();
    if with_seeds {
        for i in 0..PLAYERS {
            items.push(BatchItem {
                signer: &player_ids[i],
                purpose: Purpose::PlayerSeed,
                body: &seed_bodies[i],
                signature: &t.seed_sigs[i],
            });
        }
    }
    if verify_batch(&items).is_err() {
        return false;
    }
    for pos in [seat, seat + PLAYERS] {
        match t.player_keys[seat].open(&h.hand, &h.sealed[pos]) {
            Ok(o) if usize::from(o.position) == pos && o.matches(&h.hand, &h.leaves[pos]) => {}
            _ => return false,
        }
    }
    if seed_commitment(&h.hand, &h.dealer_seed) != h.commitment {
        return false;
    }
    let deck = shuffle(&CardId::deck(1, false), &shuffle_seed(&h.dealer_seed, &h.seeds));
    let leaves: Vec<Digest> = deck
        .iter()
        .zip(&h.openings)
        .enumerate()
        .map(|(i, (c, o))| claw_protocol::leaf(&h.hand, i as u16, *c, &o.salt))
        .collect();
    leaves == h.leaves && MerkleTree::new(&leaves).root() == h.root
}

fn bench(c: &mut Criterion) {
    let mut t = table();
    let mut rng = ChaCha20Rng::from_seed([7; 32]);
    let seeds: Vec<Option<Seed>> = (0..PLAYERS).map(|_| Some(Seed::random(&mut rng))).collect();
    let sample = dealer_hand(&t, &mut rng, &seeds);
    t.seed_sigs = t
        .players
        .iter()
        .zip(&seeds)
        .map(|(p, s)| {
            let mut b = [0u8; 48];
            b[..16].copy_from_slice(&sample.hand.0);
            b[16..].copy_from_slice(&s.unwrap().0);
            p.sign(Purpose::PlayerSeed, &b)
        })
        .collect();
    assert!(player_verify(&t, 2, &sample, true), "the benchmark hand must verify");

    let mut g = c.benchmark_group("hand");
    g.bench_function("dealer_6p_holdem", |b| b.iter(|| dealer_hand(&t, &mut rng, black_box(&seeds))));
    g.bench_function("player_verify_6p_holdem", |b| {
        b.iter(|| player_verify(&t, 2, black_box(&sample), false))
    });
    g.bench_function("player_audit_with_seeds", |b| {
        b.iter(|| player_verify(&t, 2, black_box(&sample), true))
    });
    g.finish();

    let mut g = c.benchmark_group("primitives");
    let body = sample.bodies[3];
    let sig = t.dealer.sign(Purpose::Event, &body);
    let dealer_id = t.dealer.id();
    g.bench_function("ed25519_sign_88B", |b| b.iter(|| t.dealer.sign(Purpose::Event, black_box(&body))));
    g.bench_function("ed25519_verify_88B", |b| {
        b.iter(|| verify(&dealer_id, Purpose::Event, black_box(&body), black_box(&sig)))
    });
    let items: Vec<BatchItem> = sample
        .bodies
        .iter()
        .zip(&sample.sigs)
        .map(|(b, s)| BatchItem { signer: &dealer_id, purpose: Purpose::Event, body: b, signature: s })
        .collect();
    g.bench_function("ed25519_verify_batch_11", |b| b.iter(|| verify_batch(black_box(&items))));
    let secret = x25519_dalek::StaticSecret::from([3u8; 32]);
    let peer = x25519_dalek::PublicKey::from(t.players[0].encryption_key().0);
    g.bench_function("x25519", |b| b.iter(|| secret.diffie_hellman(black_box(&peer))));
    g.bench_function("shared_key_per_session", |b| {
        b.iter(|| t.dealer.shared_key(black_box(&t.players[0].encryption_key())))
    });
    let opening = sample.openings[0];
    g.bench_function("seal", |b| {
        b.iter(|| t.dealer_keys[0].seal(&mut rng, &sample.hand, black_box(&opening)))
    });
    g.bench_function("open", |b| {
        b.iter(|| t.player_keys[0].open(&sample.hand, black_box(&sample.sealed[0])))
    });
    let eighty = [0x5au8; 80];
    g.bench_function("sha256_80B", |b| b.iter(|| sha256(&[black_box(&eighty)])));
    g.bench_function("leaf", |b| b.iter(|| black_box(&opening).leaf(&sample.hand)));
    g.bench_function("shuffle_52", |b| b.iter(|| shuffle(&CardId::deck(1, false), black_box(&[9u8; 32]))));
    g.bench_function("merkle_root_52", |b| b.iter(|| MerkleTree::new(black_box(&sample.leaves)).root()));
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
