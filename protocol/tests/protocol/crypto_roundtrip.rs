//! Round trips of the cryptographic types: text and JSON forms, key files,
//! sign/verify, seal/open, commit/prove/verify over a whole dealt deck.

use std::sync::Arc;

use claw_protocol::commit::{CardOpening, MerkleProof, MerkleTree};
use claw_protocol::handshake::{
    Accepted, Challenge, ChallengeBook, ClientHandshake, Hello, Rejected, ServerHandshake,
};
use claw_protocol::messages::RawJson;
use claw_protocol::shuffle::{seed_commitment, shuffle, shuffle_seed};
use claw_protocol::{
    verify, verify_batch, BatchItem, BoxNonce, CardId, Digest, EncryptionKey, HandId, Identity, Nonce,
    Purpose, Salt, SealedCard, Seed, Signature,
};
use proptest::prelude::*;
use rand_chacha::rand_core::SeedableRng;
use rand_chacha::ChaCha20Rng;
use serde::de::DeserializeOwned;
use serde::Serialize;

fn json_round_trip<T: Serialize + DeserializeOwned + PartialEq + std::fmt::Debug>(v: &T) {
    let j = serde_json::to_string(v).unwrap();
    assert_eq!(&serde_json::from_str::<T>(&j).unwrap(), v, "{j}");
}

proptest! {
    #[test]
    fn fixed_bytes_text_and_json(a in any::<[u8; 32]>(), b in any::<[u8; 16]>(), c in any::<[u8; 24]>(),
                                 s in proptest::collection::vec(any::<u8>(), 64)) {
        let sig = Signature(s.try_into().unwrap());
        prop_assert_eq!(Digest(a).to_string().parse::<Digest>().unwrap(), Digest(a));
        prop_assert_eq!(sig.to_string().parse::<Signature>().unwrap(), sig);
        prop_assert_eq!(HandId(b).to_string().parse::<HandId>().unwrap(), HandId(b));
        prop_assert_eq!(BoxNonce(c).to_string().parse::<BoxNonce>().unwrap(), BoxNonce(c));
        json_round_trip(&Salt(a));
        json_round_trip(&Seed(a));
        json_round_trip(&Nonce(a));
        json_round_trip(&EncryptionKey(a));
        json_round_trip(&sig);
    }

    #[test]
    fn sign_verify(seed in any::<[u8; 32]>(), body in proptest::collection::vec(any::<u8>(), 0..300)) {
        let id = Identity::from_seed(seed);
        for p in Purpose::ALL {
            prop_assert!(verify(&id.id(), p, &body, &id.sign(p, &body)).is_ok());
        }
    }
}

#[test]
fn a_whole_hand_commits_deals_and_opens() {
    let mut rng = ChaCha20Rng::from_seed([42; 32]);
    let dealer = Identity::generate(&mut rng);
    let players: Vec<Identity> = (0..6).map(|_| Identity::generate(&mut rng)).collect();
    let hand = HandId::random(&mut rng);
    let dealer_seed = Seed::random(&mut rng);
    let commitment = seed_commitment(&hand, &dealer_seed);
    let seeds: Vec<Option<Seed>> = (0..6).map(|i| (i != 3).then(|| Seed::random(&mut rng))).collect();
    let deck = shuffle(&CardId::deck(1, false), &shuffle_seed(&dealer_seed, &seeds));
    let openings: Vec<CardOpening> = deck
        .iter()
        .enumerate()
        .map(|(i, c)| CardOpening { position: i as u16, card: *c, salt: Salt::random(&mut rng) })
        .collect();
    let leaves: Vec<Digest> = openings.iter().map(|o| o.leaf(&hand)).collect();
    let tree = MerkleTree::new(&leaves);
    let root = tree.root();
    let keys: Vec<_> = players.iter().map(|p| dealer.shared_key(&p.encryption_key()).unwrap()).collect();
    // Hole cards: positions 0..12, two per player.
    let sealed: Vec<SealedCard> = (0..12).map(|i| keys[i % 6].seal(&mut rng, &hand, &openings[i])).collect();
    let start_sig = dealer.sign(Purpose::Event, &root.0);

    // Each player: verify the signature, open its cards, check the leaves.
    for (s, p) in players.iter().enumerate() {
        verify(&dealer.id(), Purpose::Event, &root.0, &start_sig).unwrap();
        let k = p.shared_key(&dealer.encryption_key()).unwrap();
        for i in [s, s + 6] {
            let o = k.open(&hand, &sealed[i]).unwrap();
            assert_eq!(o, openings[i]);
            assert!(o.matches(&hand, &leaves[usize::from(o.position)]));
            let proof = tree.proof(i).unwrap();
            assert!(proof.verify(&root, &o.leaf(&hand), i, leaves.len()));
            json_round_trip(&proof);
            json_round_trip(&sealed[i]);
        }
        // Another player's card does not open.
        assert!(k.open(&hand, &sealed[(s + 1) % 6]).is_err());
    }
    // At hand end: the auditor recomputes everything from the seeds.
    assert_eq!(seed_commitment(&hand, &dealer_seed), commitment);
    let again = shuffle(&CardId::deck(1, false), &shuffle_seed(&dealer_seed, &seeds));
    assert_eq!(again, deck);
    let leaves2: Vec<Digest> = openings.iter().map(|o| o.leaf(&hand)).collect();
    assert_eq!(MerkleTree::new(&leaves2).root(), root);
    json_round_trip(&openings[0]);
    let m: MerkleProof =
        serde_json::from_str(&serde_json::to_string(&tree.proof(5).unwrap()).unwrap()).unwrap();
    assert!(m.verify(&root, &leaves[5], 5, 52));

    // Batch verification of the event signatures of a hand.
    let bodies: Vec<Vec<u8>> = (0..10u8).map(|i| vec![i; 40]).collect();
    let sigs: Vec<Signature> = bodies.iter().map(|b| dealer.sign(Purpose::Event, b)).collect();
    let did = dealer.id();
    let items: Vec<BatchItem> = bodies
        .iter()
        .zip(&sigs)
        .map(|(b, s)| BatchItem { signer: &did, purpose: Purpose::Event, body: b, signature: s })
        .collect();
    verify_batch(&items).unwrap();
}

#[test]
fn key_file_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("dealer.key");
    let mut rng = ChaCha20Rng::from_seed([1; 32]);
    let a = Identity::load_or_create(&path, &mut rng).unwrap();
    let b = Identity::load_or_create(&path, &mut rng).unwrap();
    assert_eq!(a.public(), b.public());
    // Same secrets: the same (deterministic) signature.
    assert_eq!(a.sign(Purpose::Event, b"x"), b.sign(Purpose::Event, b"x"));
    let text = std::fs::read_to_string(&path).unwrap();
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["format"], "claw-identity-v1");
    assert_eq!(v["player_id"], a.id().to_string());
}

#[test]
fn handshake_messages_json_round_trip() {
    let dealer = Arc::new(Identity::from_seed([1; 32]));
    let player = Arc::new(Identity::from_seed([2; 32]));
    let mut rng = ChaCha20Rng::from_seed([3; 32]);
    let t = 1_750_000_000_000;
    let (mut c, hello) =
        ClientHandshake::start(player, dealer.id(), "r", "sdk", Some(Nonce([5; 32])), t, &mut rng);
    let cfg = RawJson::from_string(r#"{ "game" : "dou-di-zhu" }"#.to_owned()).unwrap();
    let mut s = ServerHandshake::new(dealer, "r", cfg);
    let ch = s.on_hello(&hello, t, &mut rng).unwrap();
    let r = c.on_challenge(&ch, t).unwrap();
    s.on_response(&r, t, &mut ChallengeBook::new()).unwrap();
    let a = s.accept(None, None, t, &mut rng).unwrap();
    json_round_trip::<Hello>(&hello);
    json_round_trip::<Challenge>(&ch);
    json_round_trip(&r);
    json_round_trip::<Accepted>(&a);
    let rej = s.reject(claw_protocol::RejectReason::Busy, t);
    json_round_trip::<Rejected>(&rej);
    // The room config keeps its exact bytes through JSON (its hash is signed).
    let j = serde_json::to_string(&ch).unwrap();
    assert!(j.contains(r#"{ "game" : "dou-di-zhu" }"#), "{j}");
    assert!(c.on_accepted(&a, t).is_ok());
}
