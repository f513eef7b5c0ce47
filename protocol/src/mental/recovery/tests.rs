//! Pieces, complaints and recovery shares (docs/blind-deal.md §II.7): round
//! trips, the attacks on each check, and the known-answer vectors of §9.1.

use super::*;
use crate::mental::Deck;
use rand_chacha::rand_core::SeedableRng;
use rand_chacha::ChaCha20Rng;

const HAND: HandId = HandId([0x11; 16]);

fn card(code: u16) -> CardId {
    CardId::from_code(code).unwrap()
}

struct Table {
    secrets: Vec<SecretShare>,
    keys: Vec<KeyShare>,
    dealer: SecretShare,
    dealer_key: KeyShare,
    joint: JointKey,
}

fn table(n: u8, rng: &mut ChaCha20Rng) -> Table {
    let mut secrets = Vec::new();
    let mut keys = Vec::new();
    for s in 0..n {
        let x = SecretShare::generate(rng);
        keys.push(x.key_share(&HAND, Seat(s), rng));
        secrets.push(x);
    }
    let dealer = SecretShare::generate(rng);
    let dealer_key = dealer.key_share(&HAND, Seat(DEALER_HOLDER), rng);
    let list: Vec<_> = keys.iter().enumerate().map(|(i, k)| (Seat(i as u8), *k)).collect();
    let joint = JointKey::combine(&HAND, &list).unwrap();
    Table { secrets, keys, dealer, dealer_key, joint }
}

impl Table {
    fn key_of(&self, h: Holder) -> &KeyShare {
        match h {
            Holder::Seat(s) => &self.keys[s.index()],
            Holder::Dealer => &self.dealer_key,
        }
    }
    fn secret_of(&self, h: Holder) -> &SecretShare {
        match h {
            Holder::Seat(s) => &self.secrets[s.index()],
            Holder::Dealer => &self.dealer,
        }
    }
}

/// Seat `seat`'s pieces: commitments and each piece encrypted to its holder.
fn pieces(t: &Table, seat: Seat, rng: &mut ChaCha20Rng) -> (PieceCommitments, Vec<EncryptedPiece>) {
    let holders = Holder::of(seat, t.keys.len());
    let p = t.secrets[seat.index()].split(holders.len(), rng);
    let enc = holders.iter().zip(&p).map(|(h, a)| a.encrypt(&HAND, seat, *h, t.key_of(*h), rng)).collect();
    (PieceCommitments::of(&p), enc)
}

fn decrypt(t: &Table, seat: Seat, k: usize, c: &PieceCommitments, e: &[EncryptedPiece]) -> Option<Piece> {
    let h = Holder::of(seat, t.keys.len())[k];
    Piece::from_bytes_checked(&t.secret_of(h).decrypt_piece(&HAND, seat, h, &e[k]), c.get(k).unwrap())
}

#[test]
fn pieces_recover_a_withheld_share_and_open_the_card() {
    let mut rng = ChaCha20Rng::seed_from_u64(1);
    let t = table(4, &mut rng);
    let seat = Seat(2);
    let (c, enc) = pieces(&t, seat, &mut rng);
    c.check_sum(seat, &t.keys[2]).unwrap();
    let ct = Ciphertext::mask(card(51), &t.joint, &mut rng);
    let holders = Holder::of(seat, 4);
    let mut rec = Vec::new();
    for (k, h) in holders.iter().enumerate() {
        let piece = decrypt(&t, seat, k, &c, &enc).expect("every piece decrypts to its commitment");
        let s = piece.recovery_share(&HAND, seat, *h, 7, &ct, &mut rng);
        let s = RecoveryShare::from_bytes(&s.to_bytes()).unwrap();
        s.verify(&HAND, seat, *h, k, &c, 7, &ct).unwrap();
        rec.push((*h, s));
    }
    let r = RecoveredShare::combine(&HAND, seat, 4, &c, 7, &ct, &rec).unwrap();
    let shares: Vec<_> = [0u8, 1, 3]
        .iter()
        .map(|s| (Seat(*s), t.secrets[usize::from(*s)].decryption_share(&HAND, Seat(*s), 7, &ct, &mut rng)))
        .collect();
    let table = CardTable::new(&(0..52).map(card).collect::<Vec<_>>());
    assert_eq!(t.joint.open_recovered(&HAND, 7, &ct, &shares, &[r], &table), Ok(card(51)));
    // Without the recovered share the card does not open.
    assert_eq!(t.joint.open(&HAND, 7, &ct, &shares, &table), Err(MentalError::MissingShare { seat: 2 }));
    // A missing holder's share is named.
    assert_eq!(
        RecoveredShare::combine(&HAND, seat, 4, &c, 7, &ct, &rec[1..]),
        Err(RecoveryError::MissingRecovery { holder: 0 })
    );
}

#[test]
fn commitments_that_do_not_sum_to_the_key_share_are_refused() {
    let mut rng = ChaCha20Rng::seed_from_u64(2);
    let t = table(3, &mut rng);
    let (c, _) = pieces(&t, Seat(0), &mut rng);
    assert_eq!(c.check_sum(Seat(1), &t.keys[1]), Err(RecoveryError::PieceSum { seat: 1 }));
    let mut bytes = c.to_bytes();
    bytes[..32].copy_from_slice(&(RISTRETTO_BASEPOINT_TABLE * &Scalar::ONE).compress().to_bytes());
    let bad = PieceCommitments::from_bytes(3, &bytes).unwrap();
    assert_eq!(bad.check_sum(Seat(0), &t.keys[0]), Err(RecoveryError::PieceSum { seat: 0 }));
    assert_eq!(
        PieceCommitments::from_bytes(2, &c.to_bytes()),
        Err(RecoveryError::PieceCount { got: 3, expected: 2 })
    );
    assert_eq!(PieceCommitments::from_bytes(3, &c.to_bytes()[1..]), Err(MentalError::BadLength.into()));
}

#[test]
fn a_bad_piece_is_proven_by_a_complaint_and_a_false_complaint_is_refused() {
    let mut rng = ChaCha20Rng::seed_from_u64(3);
    let t = table(3, &mut rng);
    let seat = Seat(0);
    let (c, mut enc) = pieces(&t, seat, &mut rng);
    let holder = Holder::Seat(Seat(1));
    // A false complaint (the piece is good): refused.
    let false_complaint = t.secrets[1].complain(&HAND, seat, holder, &enc[0], &mut rng);
    assert_eq!(
        false_complaint.verify(&HAND, seat, holder, &t.keys[1], &enc[0], c.get(0).unwrap()),
        Err(RecoveryError::GoodPiece { seat: 0, holder: 1 })
    );
    // The piece changed after its commitment: the holder's complaint stands.
    let mut b = enc[0].to_bytes();
    b[40] ^= 1;
    enc[0] = EncryptedPiece::from_bytes(&b).unwrap();
    assert!(decrypt(&t, seat, 0, &c, &enc).is_none(), "the holder sees a bad piece");
    let complaint = t.secrets[1].complain(&HAND, seat, holder, &enc[0], &mut rng);
    let complaint = Complaint::from_bytes(&complaint.to_bytes()).unwrap();
    complaint.verify(&HAND, seat, holder, &t.keys[1], &enc[0], c.get(0).unwrap()).unwrap();
    // Made by another secret, for another holder, seat or hand, or any byte changed: refused.
    let forged = t.secrets[2].complain(&HAND, seat, holder, &enc[0], &mut rng);
    assert!(forged.verify(&HAND, seat, holder, &t.keys[1], &enc[0], c.get(0).unwrap()).is_err());
    assert!(complaint.verify(&HAND, Seat(2), holder, &t.keys[1], &enc[0], c.get(0).unwrap()).is_err());
    assert!(complaint
        .verify(&HandId([1; 16]), seat, holder, &t.keys[1], &enc[0], c.get(0).unwrap())
        .is_err());
    let bytes = complaint.to_bytes();
    for i in 0..96 {
        let mut b = bytes;
        b[i] ^= 1;
        if let Ok(x) = Complaint::from_bytes(&b) {
            assert!(
                x.verify(&HAND, seat, holder, &t.keys[1], &enc[0], c.get(0).unwrap()).is_err(),
                "byte {i}"
            );
        }
    }
}

#[test]
fn wrong_recovery_shares_are_refused() {
    let mut rng = ChaCha20Rng::seed_from_u64(4);
    let t = table(3, &mut rng);
    let seat = Seat(1);
    let (c, enc) = pieces(&t, seat, &mut rng);
    let deck = Deck::new((0..3).map(|i| Ciphertext::mask(card(i), &t.joint, &mut rng)).collect()).unwrap();
    let (ct, other) = (deck.get(0).unwrap(), deck.get(1).unwrap());
    let holder = Holder::Seat(Seat(0));
    let piece = decrypt(&t, seat, 0, &c, &enc).unwrap();
    let good = piece.recovery_share(&HAND, seat, holder, 0, ct, &mut rng);
    good.verify(&HAND, seat, holder, 0, &c, 0, ct).unwrap();
    let bad = RecoveryError::RecoveryProof { seat: 1, holder: 0, position: 0 };
    // For another ciphertext, position, withholder, holder slot or hand.
    let wrong_ct = piece.recovery_share(&HAND, seat, holder, 0, other, &mut rng);
    assert_eq!(wrong_ct.verify(&HAND, seat, holder, 0, &c, 0, ct), Err(bad));
    assert!(good.verify(&HAND, seat, holder, 0, &c, 1, ct).is_err());
    assert!(good.verify(&HAND, Seat(2), holder, 0, &c, 0, ct).is_err());
    assert!(good.verify(&HAND, seat, holder, 1, &c, 0, ct).is_err());
    assert!(good.verify(&HandId([9; 16]), seat, holder, 0, &c, 0, ct).is_err());
    // Another holder's piece.
    let piece2 = decrypt(&t, seat, 1, &c, &enc).unwrap();
    let stolen = piece2.recovery_share(&HAND, seat, holder, 0, ct, &mut rng);
    assert_eq!(stolen.verify(&HAND, seat, holder, 0, &c, 0, ct), Err(bad));
    let bytes = good.to_bytes();
    for i in 0..96 {
        let mut b = bytes;
        b[i] ^= 0x80;
        if let Ok(x) = RecoveryShare::from_bytes(&b) {
            assert!(x.verify(&HAND, seat, holder, 0, &c, 0, ct).is_err(), "byte {i}");
        }
    }
}

#[test]
fn decoding_arbitrary_bytes_never_panics() {
    for len in [0usize, 31, 32, 63, 64, 65, 95, 96, 97] {
        let b = vec![0xffu8; len];
        let _ = EncryptedPiece::from_bytes(&b);
        let _ = Complaint::from_bytes(&b);
        let _ = RecoveryShare::from_bytes(&b);
        let _ = PieceCommitments::from_bytes(3, &b);
    }
}

/// docs/blind-deal.md §9.1: `CLAW_PRINT_VECTORS=1` prints them.
#[test]
fn known_answer_vectors() {
    let mut rng = ChaCha20Rng::from_seed([42; 32]);
    let t = table(3, &mut rng);
    let seat = Seat(0);
    let (c, mut enc) = pieces(&t, seat, &mut rng);
    let ct = Ciphertext::mask(card(51), &t.joint, &mut rng);
    let holders = Holder::of(seat, 3);
    let rec: Vec<(Holder, RecoveryShare)> = holders
        .iter()
        .enumerate()
        .map(|(k, h)| {
            (*h, decrypt(&t, seat, k, &c, &enc).unwrap().recovery_share(&HAND, seat, *h, 5, &ct, &mut rng))
        })
        .collect();
    let r = RecoveredShare::combine(&HAND, seat, 3, &c, 5, &ct, &rec).unwrap();
    let mut b = enc[1].to_bytes();
    b[63] ^= 1;
    enc[1] = EncryptedPiece::from_bytes(&b).unwrap();
    let complaint = t.secrets[2].complain(&HAND, seat, Holder::Seat(Seat(2)), &enc[1], &mut rng);
    complaint.verify(&HAND, seat, Holder::Seat(Seat(2)), &t.keys[2], &enc[1], c.get(1).unwrap()).unwrap();
    let vectors = [
        ("dealer piece key", hex::encode(t.dealer_key.to_bytes())),
        ("piece commitments seat 0", hex::encode(c.to_bytes())),
        ("encrypted piece seat 0 to seat 1", hex::encode(enc[0].to_bytes())),
        ("encrypted piece seat 0 to the dealer", hex::encode(enc[2].to_bytes())),
        ("recovery share seat 0 holder seat 1 position 5", hex::encode(rec[0].1.to_bytes())),
        ("recovery share seat 0 holder dealer position 5", hex::encode(rec[2].1.to_bytes())),
        ("recovered share seat 0 position 5", hex::encode(r.point.compress().to_bytes())),
        ("complaint seat 2 against seat 0", hex::encode(complaint.to_bytes())),
    ];
    if std::env::var_os("CLAW_PRINT_VECTORS").is_some() {
        for (k, v) in &vectors {
            println!("{k}: {v}");
        }
    }
    // The recovered share is seat 0's decryption share.
    let d = t.secrets[0].decryption_share(&HAND, seat, 5, &ct, &mut rng);
    assert_eq!(r.point, d.share);
    let doc = include_str!("../../../../docs/blind-deal.md");
    for (k, v) in &vectors {
        let found = doc.lines().any(|l| l.trim() == format!("{k}: {v}"));
        assert!(
            found || std::env::var_os("CLAW_PRINT_VECTORS").is_some(),
            "vector `{k}` differs from docs/blind-deal.md §9.1"
        );
    }
}
