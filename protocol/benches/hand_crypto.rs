//! Crypto cost of one real 6-player check/call Texas Hold'em hand, dealer
//! side and one player's verification, next to the primitives it is made of
//! (figures with the load in README.md and docs/performance.md).
//!
//! Run: `cargo bench -p claw-protocol --bench hand_crypto -- --warm-up-time 1 --measurement-time 3`
//!
//! The hand is the one the engine deals (counted by
//! `player-sdk/tests/malicious/bursts.rs`): `EVENTS` chained events in
//! `BURSTS` bursts (hand-prepare; game-start with blinds and hole cards; one
//! per action, the street deals and the end riding with the last action of
//! their street); 24 player actions and 6 player seeds.
//!
//! Dealer, per hand: shuffle seed from the dealer seed and 6 player seeds,
//! Fisher–Yates over 52 cards, 52 fresh salts, 52 leaves, the Merkle root,
//! the seed commitment, the chain of `EVENTS` signing bodies, one signature
//! per burst (SPEC.md §10.1; `dealer_6p_holdem_every_event`: one per event,
//! as before bursts), 12 sealed hole cards with the per-session precomputed
//! keys, and the 30 player signatures (24 actions, 6 seeds) verified one by
//! one as they arrive, each seat's key parsed once for the hand.
//!
//! Player, per hand, live: the chain of `EVENTS` events hashed, one dealer
//! signature (the dealer's key parsed once) per reliance point (its 4 turns and the end: 5;
//! `player_live_6p_holdem_every_event`: all `EVENTS`, one by one, as before
//! bursts), then its end-of-hand audit: the 24 action signatures and 6 seed
//! signatures in one batch, its 2 hole cards opened and checked against
//! their leaves, the seed commitment, the shuffle recomputed from the
//! revealed seeds, the 52 leaves and the root. `offline_audit_6p_holdem`:
//! the same with every burst signature in the batch instead (a third party).
//!
//! Randomness: a ChaCha20 CSPRNG seeded once (as a dealer would seed one
//! from the OS), so the figures measure the protocol, not getrandom.

use claw_protocol::commit::{CardOpening, MerkleTree};
use claw_protocol::shuffle::{seed_commitment, shuffle, shuffle_seed};
use claw_protocol::sign::{verify_batch, BatchItem};
use claw_protocol::{
    sha256, verify, CardId, Digest, HandId, Identity, PlayerId, Purpose, Salt, SealedCard, Seed, SharedKey,
    Signature, SignerKey,
};
use criterion::{black_box, criterion_group, criterion_main, Criterion};
use rand_chacha::rand_core::SeedableRng;
use rand_chacha::ChaCha20Rng;

const PLAYERS: usize = 6;
/// Events of the hand (see the module doc).
const EVENTS: usize = 39;
/// The last event of each burst (the signed ones): hand-prepare; game-start,
/// blinds, hole cards; 24 actions (a call with its chips, a check alone; the
/// street's deal and the end with the street's last action).
const BURSTS: [usize; 26] =
    [0, 3, 5, 7, 9, 11, 13, 15, 16, 17, 18, 19, 20, 21, 23, 24, 25, 26, 27, 28, 30, 31, 32, 33, 34, 38];
/// A player's reliance points: the event before each of its 4 turns, and the end.
const RELIED: [usize; 5] = [9, 20, 27, 34, 38];
const ACTIONS: usize = 24;

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
    /// Signatures by event index (`None`: inside a burst).
    sigs: Vec<Option<Signature>>,
    sealed: Vec<SealedCard>,
}

/// Which events the dealer signs.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Signing {
    /// The last event of each burst (SPEC.md §10.1).
    PerBurst,
    /// Every event (the protocol before bursts).
    EveryEvent,
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
    /// The action signing bodies and signatures of the hand's 24 actions.
    actions: Vec<([u8; 52], Signature)>,
}

fn table() -> Table {
    let dealer = Identity::from_seed([1; 32]);
    let players: Vec<Identity> = (0..PLAYERS as u8).map(|i| Identity::from_seed([10 + i; 32])).collect();
    let dealer_keys = players.iter().map(|p| dealer.shared_key(&p.encryption_key()).unwrap()).collect();
    let player_keys = players.iter().map(|p| p.shared_key(&dealer.encryption_key()).unwrap()).collect();
    let actions = (0..ACTIONS)
        .map(|i| {
            let mut b = [0u8; 52];
            b[16..20].copy_from_slice(&(i as u32 / 6).to_be_bytes());
            b[20..].copy_from_slice(&sha256(&[br#"{"type":"call"}"#]).0);
            (b, players[i % PLAYERS].sign(Purpose::Action, &b))
        })
        .collect();
    Table { dealer, players, dealer_keys, player_keys, seed_sigs: Vec::new(), actions }
}

/// The dealer's crypto for one hand.
fn dealer_hand(t: &Table, rng: &mut ChaCha20Rng, seeds: &[Option<Seed>], signing: Signing) -> HandOutput {
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
        let signed = signing == Signing::EveryEvent || BURSTS.contains(&(seq as usize));
        sigs.push(signed.then(|| t.dealer.sign(Purpose::Event, &b)));
        prev = sha256(&[b"claw/v1/event\0", &b]);
        bodies.push(b);
    }
    // Hole cards: positions 0..12, seat s gets positions s and s + 6.
    let sealed =
        (0..2 * PLAYERS).map(|i| t.dealer_keys[i % PLAYERS].seal(rng, &hand, &openings[i])).collect();
    // The players' signatures, checked one by one as they arrive (the
    // benchmark's fixed signatures are not over this hand's id: the work is
    // the same).
    // Each seat's key parsed once for the hand, as the engine does.
    let keys: Vec<SignerKey> = t.players.iter().map(|p| SignerKey::new(&p.id())).collect();
    let mut ok = 0usize;
    for (i, (b, s)) in t.actions.iter().enumerate() {
        ok += usize::from(keys[i % PLAYERS].verify(Purpose::Action, b, s).is_ok());
    }
    for (k, s) in keys.iter().zip(&t.seed_sigs) {
        let mut b = [0u8; 48];
        b[..16].copy_from_slice(&hand.0);
        ok += usize::from(k.verify(Purpose::PlayerSeed, &b, s).is_ok());
    }
    black_box(ok);
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

/// How a player checks the dealer's signatures.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Check {
    /// Live: the newest signature at each reliance point.
    Live,
    /// Live before bursts: every event's signature, one by one.
    LiveEveryEvent,
    /// A third party's offline audit: every signature, in the batch.
    Offline,
}

/// One player's verification of a hand: the chain, the dealer signatures
/// (per `check`), then its end-of-hand audit.
fn player_verify(t: &Table, seat: usize, h: &HandOutput, check: Check) -> bool {
    let dealer = t.dealer.id();
    // The chain: each event's `prev` is the hash of the one before.
    let mut prev = Digest([0; 32]);
    for b in &h.bodies {
        if b[24..56] != prev.0 {
            return false;
        }
        prev = sha256(&[b"claw/v1/event\0", b]);
    }
    // The dealer's key parsed once for the hand (`TranscriptVerifier`).
    let dealer_key = SignerKey::new(&dealer);
    let dealer_sig =
        |i: usize| h.sigs[i].as_ref().map(|s| dealer_key.verify(Purpose::Event, &h.bodies[i], s));
    match check {
        Check::Live => {
            if RELIED.iter().any(|i| !matches!(dealer_sig(*i), Some(Ok(())))) {
                return false;
            }
        }
        Check::LiveEveryEvent => {
            if (0..EVENTS).any(|i| !matches!(dealer_sig(i), Some(Ok(())))) {
                return false;
            }
        }
        Check::Offline => {}
    }
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
    let mut items: Vec<BatchItem> = t
        .actions
        .iter()
        .enumerate()
        .map(|(i, (b, s))| BatchItem {
            signer: &player_ids[i % PLAYERS],
            purpose: Purpose::Action,
            body: b,
            signature: s,
        })
        .collect();
    for i in 0..PLAYERS {
        items.push(BatchItem {
            signer: &player_ids[i],
            purpose: Purpose::PlayerSeed,
            body: &seed_bodies[i],
            signature: &t.seed_sigs[i],
        });
    }
    if check == Check::Offline {
        for (b, s) in h.bodies.iter().zip(&h.sigs) {
            if let Some(s) = s {
                items.push(BatchItem { signer: &dealer, purpose: Purpose::Event, body: b, signature: s });
            }
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

/// The players' seed signatures for `hand`.
fn seed_sigs(t: &Table, hand: &HandId, seeds: &[Option<Seed>]) -> Vec<Signature> {
    t.players
        .iter()
        .zip(seeds)
        .map(|(p, s)| {
            let mut b = [0u8; 48];
            b[..16].copy_from_slice(&hand.0);
            b[16..].copy_from_slice(&s.unwrap_or(Seed([0; 32])).0);
            p.sign(Purpose::PlayerSeed, &b)
        })
        .collect()
}

fn bench(c: &mut Criterion) {
    let mut t = table();
    let mut rng = ChaCha20Rng::from_seed([7; 32]);
    let seeds: Vec<Option<Seed>> = (0..PLAYERS).map(|_| Some(Seed::random(&mut rng))).collect();
    let sample = dealer_hand(&t, &mut rng, &seeds, Signing::PerBurst);
    let every = dealer_hand(&t, &mut rng, &seeds, Signing::EveryEvent);
    t.seed_sigs = seed_sigs(&t, &sample.hand, &seeds);
    assert_eq!(sample.sigs.iter().flatten().count(), BURSTS.len());
    assert!(RELIED.iter().all(|i| BURSTS.contains(i)), "a player relies on burst ends only");
    assert!(player_verify(&t, 2, &sample, Check::Live), "the benchmark hand must verify");
    assert!(player_verify(&t, 2, &sample, Check::Offline), "the benchmark hand must verify offline");
    assert!(!player_verify(&t, 2, &sample, Check::LiveEveryEvent), "events inside bursts are unsigned");
    let mut every_t = table();
    every_t.seed_sigs = seed_sigs(&every_t, &every.hand, &seeds);
    assert!(player_verify(&every_t, 2, &every, Check::LiveEveryEvent));

    let mut g = c.benchmark_group("hand");
    g.bench_function("dealer_6p_holdem", |b| {
        b.iter(|| dealer_hand(&t, &mut rng, black_box(&seeds), Signing::PerBurst))
    });
    g.bench_function("dealer_6p_holdem_every_event", |b| {
        b.iter(|| dealer_hand(&t, &mut rng, black_box(&seeds), Signing::EveryEvent))
    });
    g.bench_function("player_live_6p_holdem", |b| {
        b.iter(|| player_verify(&t, 2, black_box(&sample), Check::Live))
    });
    g.bench_function("player_live_6p_holdem_every_event", |b| {
        b.iter(|| player_verify(&every_t, 2, black_box(&every), Check::LiveEveryEvent))
    });
    g.bench_function("offline_audit_6p_holdem", |b| {
        b.iter(|| player_verify(&t, 2, black_box(&sample), Check::Offline))
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
    let dealer_key = SignerKey::new(&dealer_id);
    g.bench_function("ed25519_verify_88B_key_parsed", |b| {
        b.iter(|| dealer_key.verify(Purpose::Event, black_box(&body), black_box(&sig)))
    });
    g.bench_function("ed25519_parse_key", |b| b.iter(|| SignerKey::new(black_box(&dealer_id))));
    let items: Vec<BatchItem> = sample
        .bodies
        .iter()
        .zip(&sample.sigs)
        .filter_map(|(b, s)| s.as_ref().map(|s| (b, s)))
        .map(|(b, s)| BatchItem { signer: &dealer_id, purpose: Purpose::Event, body: b, signature: s })
        .collect();
    g.bench_function("ed25519_verify_batch_26", |b| b.iter(|| verify_batch(black_box(&items))));
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
