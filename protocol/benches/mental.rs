//! Cost of the dealer-blind deal's primitives (`claw_protocol::mental`,
//! docs/blind-deal.md): one shuffle with its proof and its verification for
//! 52 and 108 cards (also from the bytes as received: both decks and the
//! proof decoded, then verified), one decryption share with its proof and its check.
//!
//! Run: `cargo bench -p claw-protocol --bench mental -- --warm-up-time 1 --measurement-time 3`
//!
//! The joint key is 6 parties' (a full Hold'em table); the decks are masked
//! by one earlier shuffle. Randomness: a ChaCha20 CSPRNG seeded once.

use claw_protocol::mental::{shuffle, verify_shuffle, Deck, JointKey, KeyShare, SecretShare, ShuffleProof};
use claw_protocol::{CardId, HandId, Seat};
use criterion::{black_box, criterion_group, criterion_main, Criterion};
use rand_chacha::rand_core::SeedableRng;
use rand_chacha::ChaCha20Rng;

const PARTIES: u8 = 6;

fn bench(c: &mut Criterion) {
    let mut rng = ChaCha20Rng::from_seed([7; 32]);
    let hand = HandId([7; 16]);
    let secrets: Vec<SecretShare> = (0..PARTIES).map(|_| SecretShare::generate(&mut rng)).collect();
    let shares: Vec<(Seat, KeyShare)> = secrets
        .iter()
        .enumerate()
        .map(|(i, s)| (Seat(i as u8), s.key_share(&hand, Seat(i as u8), &mut rng)))
        .collect();
    let key = JointKey::combine(&hand, &shares).expect("honest shares");

    for (n, ids) in [(52, CardId::deck(1, false)), (108, CardId::deck(2, true))] {
        let (deck, _) = shuffle(&hand, Seat(0), &key, &Deck::initial(&ids).expect("deck"), &mut rng);
        c.bench_function(&format!("shuffle_and_prove_{n}"), |b| {
            b.iter(|| shuffle(&hand, Seat(1), &key, black_box(&deck), &mut rng))
        });
        let (out, proof) = shuffle(&hand, Seat(1), &key, &deck, &mut rng);
        c.bench_function(&format!("verify_shuffle_{n}"), |b| {
            b.iter(|| {
                verify_shuffle(&hand, Seat(1), &key, black_box(&deck), black_box(&out), black_box(&proof))
            })
        });
        // As received: both decks' and the proof's bytes decoded, then verified.
        let (deck_bytes, out_bytes, proof_bytes) = (deck.to_bytes(), out.to_bytes(), proof.to_bytes());
        c.bench_function(&format!("decode_and_verify_shuffle_{n}"), |b| {
            b.iter(|| {
                let input = Deck::from_bytes(black_box(&deck_bytes)).expect("deck");
                let output = Deck::from_bytes(black_box(&out_bytes)).expect("deck");
                let proof = ShuffleProof::from_bytes(n, black_box(&proof_bytes)).expect("proof");
                verify_shuffle(&hand, Seat(1), &key, &input, &output, &proof)
            })
        });
        if n == 52 {
            let ct = *out.get(3).expect("position 3");
            c.bench_function("decryption_share_and_prove", |b| {
                b.iter(|| secrets[2].decryption_share(&hand, Seat(2), 3, black_box(&ct), &mut rng))
            });
            let share = secrets[2].decryption_share(&hand, Seat(2), 3, &ct, &mut rng);
            c.bench_function("verify_decryption_share", |b| {
                b.iter(|| key.verify_share(&hand, Seat(2), 3, black_box(&ct), black_box(&share)))
            });
        }
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
