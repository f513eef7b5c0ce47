//! Dealer-blind dealing (`claw_protocol::mental`): honest round trips and
//! attacks on every proof, decoding that never panics, and the known-answer
//! vectors of docs/blind-deal.md §9.

use claw_protocol::mental::{
    card_point, shuffle, shuffle_proof_len, verify_shuffle, CardTable, Ciphertext, Deck, DecryptionShare,
    JointKey, KeyShare, MentalError, SecretShare, ShuffleCheck, ShuffleProof,
};
use claw_protocol::{sha256, CardId, HandId, Seat};
use proptest::prelude::*;
use rand_chacha::rand_core::SeedableRng;
use rand_chacha::ChaCha20Rng;

fn rng(seed: u8) -> ChaCha20Rng {
    ChaCha20Rng::from_seed([seed; 32])
}

/// A table of `parties` seats: their secrets and the joint key.
struct Table {
    hand: HandId,
    secrets: Vec<SecretShare>,
    key: JointKey,
}

fn table(parties: u8, hand: HandId, rng: &mut ChaCha20Rng) -> Table {
    let secrets: Vec<SecretShare> = (0..parties).map(|_| SecretShare::generate(rng)).collect();
    let shares: Vec<(Seat, KeyShare)> = secrets
        .iter()
        .enumerate()
        .map(|(i, s)| (Seat(i as u8), s.key_share(&hand, Seat(i as u8), rng)))
        .collect();
    let key = JointKey::combine(&hand, &shares).expect("honest key shares");
    Table { hand, secrets, key }
}

impl Table {
    /// Every seat's decryption share of position `p`.
    fn shares(&self, p: u16, ct: &Ciphertext, rng: &mut ChaCha20Rng) -> Vec<(Seat, DecryptionShare)> {
        self.secrets
            .iter()
            .enumerate()
            .map(|(i, s)| (Seat(i as u8), s.decryption_share(&self.hand, Seat(i as u8), p, ct, rng)))
            .collect()
    }
}

fn round_trip(parties: u8, ids: Vec<CardId>) {
    let mut rng = rng(parties ^ ids.len() as u8);
    let t = table(parties, HandId([parties; 16]), &mut rng);
    let mut deck = Deck::initial(&ids).unwrap();
    for seat in 0..parties {
        let (next, proof) = shuffle(&t.hand, Seat(seat), &t.key, &deck, &mut rng);
        // Every party verifies every shuffle (the same computation each time).
        for _verifier in 0..parties {
            verify_shuffle(&t.hand, Seat(seat), &t.key, &deck, &next, &proof)
                .expect("honest shuffle verifies");
        }
        // Through the wire encoding too.
        let proof2 = ShuffleProof::from_bytes(ids.len(), &proof.to_bytes()).unwrap();
        let next2 = Deck::from_bytes(&next.to_bytes()).unwrap();
        assert_eq!(proof2, proof);
        verify_shuffle(&t.hand, Seat(seat), &t.key, &deck, &next2, &proof2).unwrap();
        deck = next;
    }
    let lookup = CardTable::new(&ids);
    let mut opened: Vec<CardId> = (0..ids.len() as u16)
        .map(|p| {
            let ct = deck.get(p).unwrap();
            t.key.open(&t.hand, p, ct, &t.shares(p, ct, &mut rng), &lookup).expect("opens")
        })
        .collect();
    assert_ne!(opened, ids, "the shuffled deck is not in the initial order");
    opened.sort();
    let mut sorted = ids.clone();
    sorted.sort();
    assert_eq!(opened, sorted, "the opened deck is a permutation of the cards");
}

#[test]
fn round_trip_3_parties_52_cards() {
    round_trip(3, CardId::deck(1, false));
}

#[test]
fn round_trip_6_parties_52_cards() {
    round_trip(6, CardId::deck(1, false));
}

#[test]
fn round_trip_3_parties_108_cards() {
    round_trip(3, CardId::deck(2, true));
}

#[test]
fn round_trip_6_parties_108_cards() {
    round_trip(6, CardId::deck(2, true));
}

#[test]
fn masked_cards_open_and_rerandomise() {
    let mut rng = rng(9);
    let t = table(2, HandId([9; 16]), &mut rng);
    let ids = CardId::deck(1, true);
    let lookup = CardTable::new(&ids);
    for (p, &id) in ids.iter().enumerate().take(6) {
        let ct = Ciphertext::mask(id, &t.key, &mut rng);
        let ct2 = ct.rerandomise(&t.key, &mut rng);
        assert_ne!(ct, ct2);
        assert_eq!(Ciphertext::from_bytes(&ct2.to_bytes()).unwrap(), ct2);
        let p = p as u16;
        assert_eq!(t.key.open(&t.hand, p, &ct2, &t.shares(p, &ct2, &mut rng), &lookup), Ok(id));
    }
    // An unmasked card (c1 is the identity) opens too.
    let open = Ciphertext::open_card(ids[7]);
    assert_eq!(t.key.open(&t.hand, 7, &open, &t.shares(7, &open, &mut rng), &lookup), Ok(ids[7]));
    // A point that is no card of this deck: a second pack's card.
    let other = CardId::deck(2, true)[60];
    let ct = Ciphertext::mask(other, &t.key, &mut rng);
    assert_eq!(t.key.open(&t.hand, 0, &ct, &t.shares(0, &ct, &mut rng), &lookup), Err(MentalError::NotACard));
}

#[test]
fn card_points_are_distinct_and_not_identity() {
    let ids = CardId::deck(4, true);
    let mut seen = std::collections::HashSet::new();
    for id in ids {
        let p = card_point(id).compress().to_bytes();
        assert_ne!(p, [0u8; 32]);
        assert!(seen.insert(p), "two cards share a point");
    }
}

/// A 3-party table and one honest shuffle of an 8-card masked deck.
struct ShuffleCase {
    t: Table,
    input: Deck,
    output: Deck,
    proof: ShuffleProof,
    rng: ChaCha20Rng,
}

fn shuffle_case() -> ShuffleCase {
    let mut rng = rng(7);
    let t = table(3, HandId([7; 16]), &mut rng);
    let ids: Vec<CardId> = CardId::deck(1, false).into_iter().take(8).collect();
    let (input, _) = shuffle(&t.hand, Seat(0), &t.key, &Deck::initial(&ids).unwrap(), &mut rng);
    let (output, proof) = shuffle(&t.hand, Seat(1), &t.key, &input, &mut rng);
    verify_shuffle(&t.hand, Seat(1), &t.key, &input, &output, &proof).unwrap();
    ShuffleCase { t, input, output, proof, rng }
}

fn reject(case: &ShuffleCase, output: &Deck) -> MentalError {
    verify_shuffle(&case.t.hand, Seat(1), &case.t.key, &case.input, output, &case.proof).unwrap_err()
}

fn with_card(deck: &Deck, at: usize, ct: Ciphertext) -> Deck {
    let mut cards = deck.cards().to_vec();
    cards[at] = ct;
    Deck::new(cards).unwrap()
}

#[test]
fn shuffle_that_drops_a_card_is_rejected() {
    let case = shuffle_case();
    let mut cards = case.output.cards().to_vec();
    cards.pop();
    let shorter = Deck::new(cards).unwrap();
    assert_eq!(reject(&case, &shorter), MentalError::Shuffle(ShuffleCheck::DeckLength));
    // A proof for another size.
    let mut c2 = shuffle_case();
    let (_, small_proof) = shuffle(&c2.t.hand, Seat(1), &c2.t.key, &shorter, &mut c2.rng);
    assert_eq!(
        verify_shuffle(&case.t.hand, Seat(1), &case.t.key, &case.input, &case.output, &small_proof),
        Err(MentalError::Shuffle(ShuffleCheck::ProofLength))
    );
}

#[test]
fn shuffle_that_duplicates_a_card_is_rejected() {
    let mut case = shuffle_case();
    let copy = with_card(&case.output, 1, case.output.cards()[0]);
    assert_eq!(reject(&case, &copy), MentalError::Shuffle(ShuffleCheck::PermutationSum));
    // The same card twice, the copy re-randomised so the two look different.
    let rerand = case.output.cards()[0].rerandomise(&case.t.key, &mut case.rng);
    let copy = with_card(&case.output, 1, rerand);
    assert_eq!(reject(&case, &copy), MentalError::Shuffle(ShuffleCheck::PermutationSum));
}

#[test]
fn shuffle_that_replaces_a_card_is_rejected() {
    let mut case = shuffle_case();
    let ace = CardId::deck(1, false)[51];
    let forged = Ciphertext::mask(ace, &case.t.key, &mut case.rng);
    for at in [0, 3, 7] {
        let replaced = with_card(&case.output, at, forged);
        // Every challenge depends on the decks, so the first equation fails.
        assert_eq!(reject(&case, &replaced), MentalError::Shuffle(ShuffleCheck::PermutationSum));
    }
    // Swapping two output cards: still the same cards, but not what was proven.
    let mut cards = case.output.cards().to_vec();
    cards.swap(2, 5);
    assert!(matches!(reject(&case, &Deck::new(cards).unwrap()), MentalError::Shuffle(_)));
}

#[test]
fn shuffle_that_returns_the_previous_deck_is_rejected() {
    let mut case = shuffle_case();
    // The input unchanged, with the proof made for the honest output.
    assert_eq!(reject(&case, &case.input.clone()), MentalError::Shuffle(ShuffleCheck::Unchanged));
    // The previous deck (the input of the seat before), with a proof made
    // for another deck: the honest output of this shuffle.
    let (other_out, other_proof) = shuffle(&case.t.hand, Seat(1), &case.t.key, &case.input, &mut case.rng);
    assert!(verify_shuffle(&case.t.hand, Seat(1), &case.t.key, &case.input, &other_out, &case.proof).is_err());
    assert!(
        verify_shuffle(&case.t.hand, Seat(1), &case.t.key, &case.input, &case.output, &other_proof).is_err()
    );
    // A proof for this shuffle, replayed by another seat or in another hand.
    assert!(
        verify_shuffle(&case.t.hand, Seat(2), &case.t.key, &case.input, &case.output, &case.proof).is_err()
    );
    assert!(verify_shuffle(&HandId([8; 16]), Seat(1), &case.t.key, &case.input, &case.output, &case.proof)
        .is_err());
    // Under another joint key.
    let other = table(3, case.t.hand, &mut case.rng);
    assert!(
        verify_shuffle(&case.t.hand, Seat(1), &other.key, &case.input, &case.output, &case.proof).is_err()
    );
}

#[test]
fn any_changed_byte_of_a_shuffle_proof_is_rejected() {
    let mut rng = rng(4);
    let t = table(2, HandId([4; 16]), &mut rng);
    let ids: Vec<CardId> = CardId::deck(1, false).into_iter().take(4).collect();
    let input = Deck::initial(&ids).unwrap();
    let (output, proof) = shuffle(&t.hand, Seat(0), &t.key, &input, &mut rng);
    let bytes = proof.to_bytes();
    assert_eq!(bytes.len(), shuffle_proof_len(4));
    for i in 0..bytes.len() {
        for bit in [0u8, 7] {
            let mut b = bytes.clone();
            b[i] ^= 1 << bit;
            let ok = ShuffleProof::from_bytes(4, &b)
                .and_then(|p| verify_shuffle(&t.hand, Seat(0), &t.key, &input, &output, &p));
            assert!(ok.is_err(), "byte {i} bit {bit} changed, proof still accepted");
        }
    }
    // Any changed byte of the output deck, too.
    let deck_bytes = output.to_bytes();
    for i in 0..deck_bytes.len() {
        let mut b = deck_bytes.clone();
        b[i] ^= 1;
        let ok =
            Deck::from_bytes(&b).and_then(|d| verify_shuffle(&t.hand, Seat(0), &t.key, &input, &d, &proof));
        assert!(ok.is_err(), "output byte {i} changed, shuffle still accepted");
    }
}

#[test]
fn wrong_decryption_shares_are_rejected() {
    let mut rng = rng(5);
    let t = table(3, HandId([5; 16]), &mut rng);
    let ids = CardId::deck(1, false);
    let lookup = CardTable::new(&ids);
    let (deck, _) = shuffle(&t.hand, Seat(0), &t.key, &Deck::initial(&ids).unwrap(), &mut rng);
    let (ct0, ct1) = (*deck.get(0).unwrap(), *deck.get(1).unwrap());
    let good = t.shares(0, &ct0, &mut rng);
    assert!(t.key.open(&t.hand, 0, &ct0, &good, &lookup).is_ok());
    let proof_fails = |seat: u8| Err(MentalError::DecryptionProof { seat, position: 0 });

    // A share made with another secret (a party lying about its share).
    let intruder = SecretShare::generate(&mut rng);
    let mut bad = good.clone();
    bad[1].1 = intruder.decryption_share(&t.hand, Seat(1), 0, &ct0, &mut rng);
    assert_eq!(t.key.open(&t.hand, 0, &ct0, &bad, &lookup), proof_fails(1));

    // A share for another card (position 1's ciphertext) offered for position 0.
    let mut bad = good.clone();
    bad[2].1 = t.secrets[2].decryption_share(&t.hand, Seat(2), 0, &ct1, &mut rng);
    assert_eq!(t.key.open(&t.hand, 0, &ct0, &bad, &lookup), proof_fails(2));

    // A share for the same ciphertext at another position.
    let mut bad = good.clone();
    bad[0].1 = t.secrets[0].decryption_share(&t.hand, Seat(0), 1, &ct0, &mut rng);
    assert_eq!(t.key.open(&t.hand, 0, &ct0, &bad, &lookup), proof_fails(0));

    // A share replayed from another hand (same secret, same ciphertext).
    let mut bad = good.clone();
    bad[1].1 = t.secrets[1].decryption_share(&HandId([6; 16]), Seat(1), 0, &ct0, &mut rng);
    assert_eq!(t.key.open(&t.hand, 0, &ct0, &bad, &lookup), proof_fails(1));

    // Seat 1's honest share presented as seat 2's.
    let mut bad = good.clone();
    bad[2].1 = good[1].1;
    assert_eq!(t.key.open(&t.hand, 0, &ct0, &bad, &lookup), proof_fails(2));

    // The share point changed (the proof kept).
    let mut b = good[0].1.to_bytes();
    b[..32].copy_from_slice(&good[1].1.to_bytes()[..32]);
    let mut bad = good.clone();
    bad[0].1 = DecryptionShare::from_bytes(&b).unwrap();
    assert_eq!(t.key.open(&t.hand, 0, &ct0, &bad, &lookup), proof_fails(0));

    // Missing, duplicated and unknown seats.
    assert_eq!(t.key.open(&t.hand, 0, &ct0, &good[..2], &lookup), Err(MentalError::MissingShare { seat: 2 }));
    let mut dup = good.clone();
    dup.push(good[0]);
    assert_eq!(t.key.open(&t.hand, 0, &ct0, &dup, &lookup), Err(MentalError::DuplicateSeat { seat: 0 }));
    let mut unknown = good.clone();
    unknown.push((Seat(9), good[0].1));
    assert_eq!(t.key.open(&t.hand, 0, &ct0, &unknown, &lookup), Err(MentalError::UnknownSeat { seat: 9 }));

    // Any changed byte of a share.
    let bytes = good[1].1.to_bytes();
    for i in 0..bytes.len() {
        let mut b = bytes;
        b[i] ^= 1;
        let ok =
            DecryptionShare::from_bytes(&b).and_then(|s| t.key.verify_share(&t.hand, Seat(1), 0, &ct0, &s));
        assert!(ok.is_err(), "byte {i} of a decryption share changed, still accepted");
    }
}

#[test]
fn bad_key_shares_are_rejected() {
    let mut rng = rng(6);
    let hand = HandId([6; 16]);
    let a = SecretShare::generate(&mut rng);
    let b = SecretShare::generate(&mut rng);
    let ka = a.key_share(&hand, Seat(0), &mut rng);
    let kb = b.key_share(&hand, Seat(1), &mut rng);
    assert!(JointKey::combine(&hand, &[(Seat(0), ka), (Seat(1), kb)]).is_ok());
    assert_eq!(JointKey::combine(&hand, &[]), Err(MentalError::NoParties));

    // A proof made for another seat or another hand.
    assert_eq!(
        JointKey::combine(&hand, &[(Seat(0), ka), (Seat(2), kb)]),
        Err(MentalError::KeyProof { seat: 2 })
    );
    let other_hand = b.key_share(&HandId([7; 16]), Seat(1), &mut rng);
    assert_eq!(
        JointKey::combine(&hand, &[(Seat(0), ka), (Seat(1), other_hand)]),
        Err(MentalError::KeyProof { seat: 1 })
    );

    // A rogue key X_b' = X_b − X_a (cancelling a's share), with no valid proof.
    let xa = curve25519_dalek_point(&ka.public_bytes());
    let xb = curve25519_dalek_point(&kb.public_bytes());
    let mut rogue = kb.to_bytes();
    rogue[..32].copy_from_slice(&(xb - xa).compress().to_bytes());
    let rogue = KeyShare::from_bytes(&rogue).unwrap();
    assert_eq!(
        JointKey::combine(&hand, &[(Seat(0), ka), (Seat(1), rogue)]),
        Err(MentalError::KeyProof { seat: 1 })
    );

    // The identity point, with any proof.
    let mut ident = kb.to_bytes();
    ident[..32].copy_from_slice(&[0u8; 32]);
    let ident = KeyShare::from_bytes(&ident).unwrap();
    assert_eq!(
        JointKey::combine(&hand, &[(Seat(0), ka), (Seat(1), ident)]),
        Err(MentalError::IdentityKey { seat: 1 })
    );

    // The same key twice (proven for both seats by its owner), the same seat twice.
    let ka1 = a.key_share(&hand, Seat(1), &mut rng);
    assert_eq!(
        JointKey::combine(&hand, &[(Seat(0), ka), (Seat(1), ka1)]),
        Err(MentalError::DuplicateKey { seat: 1 })
    );
    let kb0 = b.key_share(&hand, Seat(0), &mut rng);
    assert_eq!(
        JointKey::combine(&hand, &[(Seat(0), ka), (Seat(0), kb0)]),
        Err(MentalError::DuplicateSeat { seat: 0 })
    );

    // Any changed byte of a key share.
    let bytes = ka.to_bytes();
    for i in 0..bytes.len() {
        let mut x = bytes;
        x[i] ^= 1;
        let ok = KeyShare::from_bytes(&x).and_then(|k| k.verify(&hand, Seat(0)));
        assert!(ok.is_err(), "byte {i} of a key share changed, still accepted");
    }
}

/// Decodes a point the test built (through the public ciphertext decoder).
fn curve25519_dalek_point(bytes: &[u8; 32]) -> curve25519_dalek::ristretto::RistrettoPoint {
    curve25519_dalek::ristretto::CompressedRistretto(*bytes).decompress().unwrap()
}

#[test]
fn decoders_refuse_bad_sizes() {
    assert_eq!(Deck::from_bytes(&[]), Err(MentalError::DeckSize(0)));
    assert_eq!(Deck::from_bytes(&[0u8; 65]), Err(MentalError::BadLength));
    assert_eq!(Deck::initial(&[]), Err(MentalError::DeckSize(0)));
    assert!(matches!(ShuffleProof::from_bytes(0, &[]), Err(MentalError::DeckSize(0))));
    assert!(matches!(ShuffleProof::from_bytes(3, &[0u8; 32]), Err(MentalError::BadLength)));
    // Non-canonical encodings: a field element ≥ p and a scalar ≥ ℓ.
    assert_eq!(Ciphertext::from_bytes(&[0xff; 64]), Err(MentalError::BadPoint));
    let mut share = [0u8; 96];
    share[32..64].copy_from_slice(&[0xff; 32]);
    assert!(matches!(DecryptionShare::from_bytes(&share), Err(MentalError::BadScalar)));
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn decoding_arbitrary_bytes_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..1200), n in 0usize..12) {
        let _ = Ciphertext::from_bytes(&bytes);
        let _ = Deck::from_bytes(&bytes);
        let _ = KeyShare::from_bytes(&bytes);
        let _ = DecryptionShare::from_bytes(&bytes);
        let _ = ShuffleProof::from_bytes(n, &bytes);
    }

    #[test]
    fn decoding_right_sized_random_bytes_never_panics(seed in any::<[u8; 32]>()) {
        let mut rng = ChaCha20Rng::from_seed(seed);
        let mut buf = vec![0u8; shuffle_proof_len(2)];
        rand_chacha::rand_core::RngCore::fill_bytes(&mut rng, &mut buf);
        let _ = ShuffleProof::from_bytes(2, &buf);
        let _ = KeyShare::from_bytes(&buf[..96]);
        let _ = DecryptionShare::from_bytes(&buf[..96]);
        let _ = Deck::from_bytes(&buf[..128]);
    }
}

/// The known-answer vectors of docs/blind-deal.md §9 (`CLAW_PRINT_VECTORS=1` prints them).
#[test]
fn known_answer_vectors() {
    let mut rng = ChaCha20Rng::from_seed([42; 32]);
    let hand = HandId([0x11; 16]);
    let x0 = SecretShare::generate(&mut rng);
    let k0 = x0.key_share(&hand, Seat(0), &mut rng);
    let x1 = SecretShare::generate(&mut rng);
    let k1 = x1.key_share(&hand, Seat(1), &mut rng);
    let key = JointKey::combine(&hand, &[(Seat(0), k0), (Seat(1), k1)]).unwrap();
    let ace = CardId::deck(1, false)[51];
    let masked = Ciphertext::mask(ace, &key, &mut rng);
    let d0 = x0.decryption_share(&hand, Seat(0), 5, &masked, &mut rng);
    let d1 = x1.decryption_share(&hand, Seat(1), 5, &masked, &mut rng);
    let ids: Vec<CardId> = CardId::deck(1, false).into_iter().take(4).collect();
    let input = Deck::initial(&ids).unwrap();
    let (output, proof) = shuffle(&hand, Seat(0), &key, &input, &mut rng);

    let card0 = hex::encode(card_point(ids[0]).compress().to_bytes());
    let card_ace = hex::encode(card_point(ace).compress().to_bytes());
    let got = [
        ("card point 2c (id 0)", card0),
        ("card point As (id 51)", card_ace),
        ("key share seat 0", hex::encode(k0.to_bytes())),
        ("key share seat 1", hex::encode(k1.to_bytes())),
        ("joint key", hex::encode(key.to_bytes())),
        ("masked As", hex::encode(masked.to_bytes())),
        ("decryption share seat 0 position 5", hex::encode(d0.to_bytes())),
        ("decryption share seat 1 position 5", hex::encode(d1.to_bytes())),
        ("shuffle output", hex::encode(output.to_bytes())),
        ("shuffle proof SHA-256", sha256(&[&proof.to_bytes()]).to_string()),
    ];
    if std::env::var_os("CLAW_PRINT_VECTORS").is_some() {
        for (name, v) in &got {
            println!("{name}: {v}");
        }
        println!("shuffle proof: {}", hex::encode(proof.to_bytes()));
    }
    let expected: [(&str, &str); 10] = EXPECTED;
    for ((name, v), (ename, e)) in got.iter().zip(expected.iter()) {
        assert_eq!(name, ename);
        assert_eq!(v, e, "vector {name}");
    }
    // The vectors verify and open.
    verify_shuffle(&hand, Seat(0), &key, &input, &output, &proof).unwrap();
    let lookup = CardTable::new(&CardId::deck(1, false));
    assert_eq!(key.open(&hand, 5, &masked, &[(Seat(0), d0), (Seat(1), d1)], &lookup), Ok(ace));
}

const EXPECTED: [(&str, &str); 10] = [
    (
        "card point 2c (id 0)",
        "92ba6f063fc602ca590ffeeab147fa0977b30aeccfdea36168a33c2a74a30701",
    ),
    (
        "card point As (id 51)",
        "a05ac40c79f11388c1eece5561b8e1d022e3860559ee5ef34d2a3f87b2aca451",
    ),
    (
        "key share seat 0",
        "32882cee86f8597f5dc361291610eba6b051a02003e7f0d72710bc5e42884110ea32c9c47b7016b6033d2fefd07f3958154f527659547f870f3b338cc0c34e09364cf6d10ac0a96717e3f3b4a67ac9a9d68e83e1ffd78611b786c55b4bdd4007",
    ),
    (
        "key share seat 1",
        "f828faba47f148914bbcea9b82efa331284fdfaed9d275c1dde54a03b494b5066a4a5d7057decc5d2728618503db984352811d7b315dca0ed51e5d1e437258609bc73a51a7c6b22c23c77734a6b4474a82577052491463de06e21e1d961fd90e",
    ),
    (
        "joint key",
        "e0f3247b913da9a82cae40024229ff972f167f77d86cd43b857a8ca223e0ac39",
    ),
    (
        "masked As",
        "5c585ba41fa6d80c2260611f52f99c3ec79723b3b24d220ddbb2845ac9f13b5524c7a7d02628b85b088ec19b9ce66943ccbf7c86b36c6ba1001ab18c85f34d27",
    ),
    (
        "decryption share seat 0 position 5",
        "36c59c30628157912e245d3cabd620c9a7c7e59de41412c1851b82558f47922bb03ef37dbb0b31f59c8959ec1d27575f7bfa60be65922312dcb5e50b8f59cf00da51a6212ee9297abe9c90c76850e83d62825771d790bcebbe8ef6a96f9cdf0b",
    ),
    (
        "decryption share seat 1 position 5",
        "86a23e4043658adbf4264e3802f0b6844d5585e7a981892cb5a4637bd2a92b4184da24bd95ad8555019c4b760e6a9b17cf673272fde767ab7f7e43007309200dfb8f156282bfdeded7e088f5c554052467acff6e9f9389abf3c87f7bd5b2b20f",
    ),
    (
        "shuffle output",
        "9c661b0319edc0ec39644594722cdadb0dd1517f7a9489efc4574173ef67111f7ee3fbf5b56bd9ee51f1c2fa9cc5117f391f1abfbc1265c49f12c744fb1caa58881d92e87fe6fb30197865ad5582f99566c08b080d2cf3063ec4df353dce73535477ecd66dd23807b654761e33a7bafdd89c5e664d0d4b56d06728f86d8eed1576ee8b4a7b4ec7c711235d1333706f856afa9630e4bf1f1a7ead7f501f1d197c24b7e20f95457d2908f8460a911a6f12aa8be01e35bc6f6fb71054e268b82659ea34ad77b179ad6f9e906f9e23ef622daef6241bc356ec081d3cf034b55d4f24a050e9136754f5520841d87f6ff5056e4084d3e42ef38f084bc26e944f015f2e",
    ),
    (
        "shuffle proof SHA-256",
        "96c807a361a85c4c1ca4f5471b4570421f22299f7f48f47903eb14e00b0e7865",
    ),
];
