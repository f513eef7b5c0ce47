//! Tamper detection by property tests: changing any byte of any signed,
//! committed or sealed field is detected; malformed input never panics.

use std::sync::Arc;

use claw_protocol::commit::{leaf_preimage, CardOpening, MerkleProof, MerkleTree};
use claw_protocol::handshake::{ChallengeBook, ClientHandshake, ServerHandshake};
use claw_protocol::messages::RawJson;
use claw_protocol::{
    sha256, verify, CardId, Digest, HandId, Identity, PlayerId, Purpose, Salt, SealError, SealedCard,
    Signature,
};
use proptest::prelude::*;
use rand_chacha::rand_core::SeedableRng;
use rand_chacha::ChaCha20Rng;

fn purpose() -> impl Strategy<Value = Purpose> {
    proptest::sample::select(Purpose::ALL.to_vec())
}

fn card() -> impl Strategy<Value = CardId> {
    (0u16..=255 * 54 + 53).prop_map(|c| CardId::from_code(c).unwrap())
}

fn flip(bytes: &mut [u8], at: usize, bit: u8) {
    let i = at % bytes.len();
    bytes[i] ^= 1 << (bit % 8);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// Any bit of the body, the signature or the signer key, or the purpose.
    #[test]
    fn signature_tamper(seed in any::<[u8; 32]>(), p in purpose(), body in proptest::collection::vec(any::<u8>(), 0..200),
                        target in 0u8..4, at in any::<usize>(), bit in any::<u8>(), other in purpose()) {
        let id = Identity::from_seed(seed);
        let sig = id.sign(p, &body);
        prop_assert!(verify(&id.id(), p, &body, &sig).is_ok());
        let mut body2 = body.clone();
        let mut sig2 = sig;
        let mut key2 = *id.id().as_bytes();
        let mut p2 = p;
        match target {
            0 if !body.is_empty() => flip(&mut body2, at, bit),
            0 => body2.push(0),
            1 => flip(&mut sig2.0, at, bit),
            2 => flip(&mut key2, at, bit),
            _ => { prop_assume!(other != p); p2 = other; }
        }
        prop_assert!(verify(&PlayerId::from_bytes(key2), p2, &body2, &sig2).is_err());
    }

    /// Any byte of hand id, position, card code or salt changes the leaf, so
    /// the opening no longer matches the commitment.
    #[test]
    fn leaf_tamper(hand in any::<[u8; 16]>(), position in any::<u16>(), card in card(), salt in any::<[u8; 32]>(),
                   field in 0u8..4, at in any::<usize>(), bit in any::<u8>()) {
        let hand = HandId(hand);
        let o = CardOpening { position, card, salt: Salt(salt) };
        let committed = o.leaf(&hand);
        prop_assert_eq!(committed, sha256(&[&leaf_preimage(&hand, position, card, &Salt(salt))]));
        let mut o2 = o;
        let mut hand2 = hand;
        match field {
            0 => flip(&mut hand2.0, at, bit),
            1 => o2.position ^= 1 << (bit % 16),
            2 => {
                let c = o.card.code() ^ (1 << (bit % 14));
                prop_assume!(CardId::from_code(c).is_ok());
                o2.card = CardId::from_code(c).unwrap();
            }
            _ => flip(&mut o2.salt.0, at, bit),
        }
        prop_assert!(!o2.matches(&hand2, &committed));
    }

    /// Any bit of the leaf, a sibling or the root, or another index, fails
    /// the inclusion proof.
    #[test]
    fn merkle_tamper(n in 1usize..120, idx in any::<usize>(), seed in any::<u64>(),
                     target in 0u8..4, at in any::<usize>(), bit in any::<u8>()) {
        let leaves: Vec<Digest> = (0..n).map(|i| sha256(&[&seed.to_be_bytes(), &(i as u64).to_be_bytes()])).collect();
        let tree = MerkleTree::new(&leaves);
        let i = idx % n;
        let proof = tree.proof(i).unwrap();
        let root = tree.root();
        prop_assert!(proof.verify(&root, &leaves[i], i, n));
        let mut leaf = leaves[i];
        let mut root2 = root;
        let mut proof2 = proof.clone();
        let mut i2 = i;
        match target {
            0 => flip(&mut leaf.0, at, bit),
            1 => flip(&mut root2.0, at, bit),
            2 => {
                prop_assume!(!proof.siblings.is_empty());
                let k = at % proof.siblings.len();
                flip(&mut proof2.siblings[k].0, at / 7, bit);
            }
            _ => { prop_assume!(n > 1); i2 = (i + 1 + at % (n - 1)) % n; }
        }
        prop_assert!(!proof2.verify(&root2, &leaf, i2, n));
    }

    /// Any bit of the nonce or the ciphertext, or another hand id, fails to open.
    #[test]
    fn seal_tamper(rng_seed in any::<[u8; 32]>(), hand in any::<[u8; 16]>(), position in any::<u16>(), card in card(),
                   salt in any::<[u8; 32]>(), target in 0u8..3, at in any::<usize>(), bit in any::<u8>()) {
        let dealer = Identity::from_seed([1; 32]);
        let player = Identity::from_seed([2; 32]);
        let k_d = dealer.shared_key(&player.encryption_key()).unwrap();
        let k_p = player.shared_key(&dealer.encryption_key()).unwrap();
        let hand = HandId(hand);
        let o = CardOpening { position, card, salt: Salt(salt) };
        let sealed = k_d.seal(&mut ChaCha20Rng::from_seed(rng_seed), &hand, &o);
        prop_assert_eq!(k_p.open(&hand, &sealed).unwrap(), o);
        let mut s2 = sealed.clone();
        let mut hand2 = hand;
        match target {
            0 => flip(&mut s2.nonce.0, at, bit),
            1 => flip(&mut s2.ciphertext, at, bit),
            _ => flip(&mut hand2.0, at, bit),
        }
        let r = k_p.open(&hand2, &s2);
        prop_assert!(r.is_err(), "{:?}", r);
        if target == 2 {
            prop_assert!(matches!(r, Err(SealError::WrongHand { .. })), "{:?}", r);
        }
    }

    /// Any field of a hello, challenge, response or accepted, altered in
    /// transit, makes the receiving side refuse it.
    #[test]
    fn handshake_tamper(msg in 0u8..4, field in any::<u8>(), at in any::<usize>(), bit in any::<u8>()) {
        const T0: u64 = 1_750_000_000_000;
        let dealer = Arc::new(Identity::from_seed([0xd1; 32]));
        let player = Arc::new(Identity::from_seed([0xa1; 32]));
        let mut rng = ChaCha20Rng::from_seed([3; 32]);
        let mut book = ChallengeBook::new();
        let cfg = RawJson::from_string(r#"{"game":"blackjack"}"#.to_owned()).unwrap();
        let (mut client, mut hello) =
            ClientHandshake::start(player.clone(), dealer.id(), "room", "sdk", None, T0, &mut rng);
        let mut server = ServerHandshake::new(dealer.clone(), "room", cfg);
        fn flip_str(s: &mut String, at: usize) {
            // Stay ASCII: toggle the lowest bit of one character (or append one).
            let mut b = s.clone().into_bytes();
            if b.is_empty() { b.push(b'x') } else { let i = at % b.len(); b[i] ^= 1; }
            *s = String::from_utf8(b).unwrap();
        }
        if msg == 0 {
            match field % 8 {
                0 => flip_str(&mut hello.protocol_version, at),
                1 => flip_str(&mut hello.sdk_version, at),
                2 => flip_str(&mut hello.room_id, at),
                3 => { let mut k = *hello.player.as_bytes(); flip(&mut k, at, bit); hello.player = PlayerId::from_bytes(k); }
                4 => flip(&mut hello.encryption_key.0, at, bit),
                5 => hello.timestamp_ms ^= 1 << (bit % 14),
                6 => flip(&mut hello.client_nonce.0, at, bit),
                _ => flip(&mut hello.sig.0, at, bit),
            }
            prop_assert!(server.on_hello(&hello, T0, &mut rng).is_err());
            return Ok(());
        }
        let mut ch = server.on_hello(&hello, T0, &mut rng).unwrap();
        if msg == 1 {
            match field % 7 {
                0 => flip(&mut ch.challenge.0, at, bit),
                1 => { let mut k = *ch.dealer.as_bytes(); flip(&mut k, at, bit); ch.dealer = PlayerId::from_bytes(k); }
                2 => flip(&mut ch.dealer_encryption_key.0, at, bit),
                3 => flip_str(&mut ch.room_id, at),
                4 => flip(&mut ch.client_nonce.0, at, bit),
                5 => ch.timestamp_ms ^= 1 << (bit % 14),
                _ => flip(&mut ch.sig.0, at, bit),
            }
            prop_assert!(client.on_challenge(&ch, T0).is_err());
            return Ok(());
        }
        let mut resp = client.on_challenge(&ch, T0).unwrap();
        if msg == 2 {
            match field % 4 {
                0 => flip(&mut resp.challenge.0, at, bit),
                1 => { let mut k = *resp.dealer.as_bytes(); flip(&mut k, at, bit); resp.dealer = PlayerId::from_bytes(k); }
                2 => flip_str(&mut resp.room_id, at),
                _ => flip(&mut resp.sig.0, at, bit),
            }
            prop_assert!(server.on_response(&resp, T0, &mut book).is_err());
            return Ok(());
        }
        server.on_response(&resp, T0, &mut book).unwrap();
        let mut acc = server.accept(Some(claw_protocol::Seat(1)), None, T0, &mut rng).unwrap();
        match field % 5 {
            0 => flip(&mut acc.session_id.0, at, bit),
            1 => flip(&mut acc.reconnect_token.0, at, bit),
            2 => acc.seat = Some(claw_protocol::Seat(1 ^ (1 << (bit % 8)))),
            3 => acc.timestamp_ms ^= 1 << (bit % 14),
            _ => flip(&mut acc.sig.0, at, bit),
        }
        prop_assert!(client.on_accepted(&acc, T0).is_err());
    }

    /// Arbitrary proofs, indices and counts: `verify` returns, never panics.
    #[test]
    fn malformed_proofs_never_panic(sibs in proptest::collection::vec(any::<[u8; 32]>(), 0..80),
                                    index in any::<usize>(), count in any::<usize>(), leaf in any::<[u8; 32]>(),
                                    root in any::<[u8; 32]>()) {
        let p = MerkleProof { siblings: sibs.into_iter().map(Digest).collect() };
        let _ = p.verify(&Digest(root), &Digest(leaf), index, count);
        let _ = p.verify(&Digest(root), &Digest(leaf), index % 4096, count % 4096);
    }

    /// Arbitrary sealed boxes and JSON: typed errors, never a panic.
    #[test]
    fn malformed_sealed_cards_never_panic(nonce in any::<[u8; 24]>(), ct in proptest::collection::vec(any::<u8>(), 0..200),
                                          text in ".{0,200}") {
        let k = Identity::from_seed([1; 32]).shared_key(&Identity::from_seed([2; 32]).encryption_key()).unwrap();
        let s = SealedCard { nonce: claw_protocol::BoxNonce(nonce), ciphertext: ct };
        prop_assert!(k.open(&HandId([0; 16]), &s).is_err());
        let _ = serde_json::from_str::<SealedCard>(&text);
        let _ = serde_json::from_str::<MerkleProof>(&text);
        let _ = text.parse::<Digest>();
        let _ = text.parse::<Signature>();
    }
}
