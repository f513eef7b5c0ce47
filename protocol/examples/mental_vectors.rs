//! Writes the agreement corpus of the browser's mental-poker verifier
//! (web/src/mental.ts, tested by web/test/mental.test.mjs): honest and
//! tampered key shares, joint keys, decryption shares, openings and shuffles
//! of 4, 52, 54 and 108 cards, and the recovery primitives of
//! docs/blind-deal.md §II.7 (piece commitments, complaints, recovery shares,
//! openings with a recovered share), each with the verdict of
//! `claw_protocol::mental`. Deterministic (fixed ChaCha20 seeds): running it
//! again writes the same file.
//!
//! ```text
//! cargo run -p claw-protocol --example mental_vectors --release -- web/test/fixtures/mental-corpus.json
//! ```
//!
//! Format (`claw-mental-corpus-v1`), all bytes lowercase hex:
//! * `blobs`: named long byte strings (decks, proofs).
//! * a bytes field is either hex, or `{"blob": name}` optionally with
//!   `"len": n` (the blob truncated or zero-extended to `n` bytes) and
//!   `"set": [[offset, hex], …]` (bytes overwritten after that): a tampered
//!   copy of a blob without repeating it.
//! * `tables`: `{name, hand, shares: [[seat, key share]], key}`, the joint
//!   key `JointKey::combine(hand, shares)` that cases name by `table`.
//! * `cases`: `{kind, name, …, expect}`; `expect` is `{"ok": value}` or
//!   `{"error": §7 or §II.7 name, seat?, position?, step?, cards?, holder?,
//!   got?, expected?}`; a holder is a byte (`255` the dealer). Each kind is a
//!   fixed sequence of decoders and checks (see `check` below); a case with
//!   `flip: {field, bit}` is that case once per byte `i` of `field` with bit
//!   `bit` of byte `i` flipped, and `expect` is the list of verdicts.

use std::collections::BTreeMap;
use std::error::Error;

use claw_protocol::mental::{
    shuffle, verify_shuffle, CardTable, Ciphertext, Complaint, Deck, DecryptionShare, EncryptedPiece, Holder,
    JointKey, KeyShare, MentalError, PieceCommitments, RecoveredShare, RecoveryError, RecoveryShare,
    SecretShare, ShuffleCheck, ShuffleProof, DEALER_HOLDER,
};
use claw_protocol::{CardId, HandId, Seat};
use rand_chacha::rand_core::SeedableRng;
use rand_chacha::ChaCha20Rng;
use serde_json::{json, Value};

type Res<T> = Result<T, Box<dyn Error>>;

/// The hand that replayed proofs and shares were made for.
const OTHER_HAND: HandId = HandId([0xc3; 16]);

/// ℓ, little-endian: the smallest non-canonical scalar.
const ELL: [u8; 32] = [
    0xed, 0xd3, 0xf5, 0x5c, 0x1a, 0x63, 0x12, 0x58, 0xd6, 0x9c, 0xf7, 0xa2, 0xde, 0xf9, 0xde, 0x14, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x10,
];
/// p = 2^255 − 19, little-endian: a field element out of range.
const FIELD_P: [u8; 32] = [
    0xed, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
    0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f,
];

fn main() -> Res<()> {
    let out = std::env::args().nth(1).ok_or("usage: mental_vectors OUT.json")?;
    let corpus = build()?;
    let text = serde_json::to_string(&corpus.to_json())? + "\n";
    std::fs::write(&out, &text).map_err(|e| format!("writing {out}: {e}"))?;
    eprintln!("{out}: {} cases, {} bytes", corpus.count, text.len());
    Ok(())
}

/// One kind of case: its inputs as bytes and numbers, checked the same way
/// by `check` here and by the browser's test.
#[derive(Clone)]
enum Case {
    /// `KeyShare::from_bytes(share)`, then `verify(hand, seat)`.
    KeyShare { hand: HandId, seat: u8, share: Vec<u8> },
    /// Every share decoded in order, then `JointKey::combine`; ok: the key.
    JointKey { hand: HandId, shares: Vec<(u8, Vec<u8>)> },
    /// `Ciphertext`, then `DecryptionShare` decoded, then `verify_share`.
    DecryptionShare {
        table: usize,
        hand: HandId,
        seat: u8,
        position: u16,
        ciphertext: Vec<u8>,
        share: Vec<u8>,
    },
    /// The ciphertext, then every share decoded in order, then `open`; ok: the card id.
    Open {
        table: usize,
        hand: HandId,
        position: u16,
        ciphertext: Vec<u8>,
        shares: Vec<(u8, Vec<u8>)>,
        cards: Vec<u16>,
    },
    /// Input deck, output deck, then the proof for the input's size decoded; `verify_shuffle`.
    Shuffle { table: usize, hand: HandId, seat: u8, input: Vec<u8>, output: Vec<u8>, proof: Vec<u8> },
    /// The key share, then `PieceCommitments::from_bytes(holders, ..)`, then `check_sum(seat, key)`.
    PieceCommitments { seat: u8, holders: usize, key: Vec<u8>, commitments: Vec<u8> },
    /// The holder's key share, the piece, then the complaint decoded; `Complaint::verify`.
    Complaint {
        hand: HandId,
        accused: u8,
        holder: u8,
        key: Vec<u8>,
        piece: Vec<u8>,
        commitment: [u8; 32],
        complaint: Vec<u8>,
    },
    /// The commitments for `holders` holders, the ciphertext, then the share
    /// decoded; `RecoveryShare::verify` against commitment `k`.
    RecoveryShare {
        hand: HandId,
        seat: u8,
        holder: u8,
        k: usize,
        holders: usize,
        commitments: Vec<u8>,
        position: u16,
        ciphertext: Vec<u8>,
        share: Vec<u8>,
    },
    /// The withholder's commitments, the ciphertext, the recovery shares and
    /// the decryption shares decoded in order; `RecoveredShare::combine`, then
    /// `JointKey::open_recovered`; ok: the card id.
    RecoverOpen {
        table: usize,
        hand: HandId,
        seat: u8,
        seats: usize,
        commitments: Vec<u8>,
        position: u16,
        ciphertext: Vec<u8>,
        recovery: Vec<(u8, Vec<u8>)>,
        shares: Vec<(u8, Vec<u8>)>,
        cards: Vec<u16>,
    },
}

struct Table {
    name: String,
    hand: HandId,
    secrets: Vec<(u8, SecretShare)>,
    shares: Vec<(u8, KeyShare)>,
    key: JointKey,
}

#[derive(Default)]
struct Corpus {
    blobs: BTreeMap<String, Vec<u8>>,
    tables: Vec<Table>,
    cases: Vec<Value>,
    count: usize,
}

fn error_json(e: &MentalError) -> Value {
    let shuffle = |c: &ShuffleCheck| match c {
        ShuffleCheck::DeckLength => json!({"error": "shuffle: deck-length"}),
        ShuffleCheck::ProofLength => json!({"error": "shuffle: proof-length"}),
        ShuffleCheck::Unchanged => json!({"error": "shuffle: unchanged"}),
        ShuffleCheck::PermutationSum => json!({"error": "shuffle: permutation-sum"}),
        ShuffleCheck::ChainProduct => json!({"error": "shuffle: chain-product"}),
        ShuffleCheck::PermutationCommitment => json!({"error": "shuffle: permutation-commitment"}),
        ShuffleCheck::Reencryption => json!({"error": "shuffle: reencryption"}),
        ShuffleCheck::ChainStep(i) => json!({"error": "shuffle: chain-step", "step": i}),
        ShuffleCheck::Batch => json!({"error": "shuffle: batch"}),
    };
    match e {
        MentalError::BadLength => json!({"error": "bad-length"}),
        MentalError::BadPoint => json!({"error": "bad-point"}),
        MentalError::BadScalar => json!({"error": "bad-scalar"}),
        MentalError::DeckSize(n) => json!({"error": "deck-size", "cards": n}),
        MentalError::NoParties => json!({"error": "no-parties"}),
        MentalError::IdentityKey { seat } => json!({"error": "identity-key", "seat": seat}),
        MentalError::KeyProof { seat } => json!({"error": "key-proof", "seat": seat}),
        MentalError::DuplicateSeat { seat } => json!({"error": "duplicate-seat", "seat": seat}),
        MentalError::DuplicateKey { seat } => json!({"error": "duplicate-key", "seat": seat}),
        MentalError::UnknownSeat { seat } => json!({"error": "unknown-seat", "seat": seat}),
        MentalError::MissingShare { seat } => json!({"error": "missing-share", "seat": seat}),
        MentalError::DecryptionProof { seat, position } => {
            json!({"error": "decryption-proof", "seat": seat, "position": position})
        }
        MentalError::NotACard => json!({"error": "not-a-card"}),
        MentalError::Shuffle(c) => shuffle(c),
    }
}

fn recovery_error_json(e: &RecoveryError) -> Value {
    match e {
        RecoveryError::Mental(m) => error_json(m),
        RecoveryError::PieceCount { got, expected } => {
            json!({"error": "piece-count", "got": got, "expected": expected})
        }
        RecoveryError::PieceSum { seat } => json!({"error": "piece-sum", "seat": seat}),
        RecoveryError::ComplaintProof { seat, holder } => {
            json!({"error": "complaint-proof", "seat": seat, "holder": holder})
        }
        RecoveryError::GoodPiece { seat, holder } => {
            json!({"error": "good-piece", "seat": seat, "holder": holder})
        }
        RecoveryError::BadPiece { seat, holder } => {
            json!({"error": "bad-piece", "seat": seat, "holder": holder})
        }
        RecoveryError::RecoveryProof { seat, holder, position } => {
            json!({"error": "recovery-proof", "seat": seat, "holder": holder, "position": position})
        }
        RecoveryError::MissingRecovery { holder } => json!({"error": "missing-recovery", "holder": holder}),
    }
}

fn recovery_verdict<T>(r: Result<T, RecoveryError>, ok: impl FnOnce(T) -> Value) -> Value {
    match r {
        Ok(v) => json!({ "ok": ok(v) }),
        Err(e) => recovery_error_json(&e),
    }
}

/// The holder a byte names.
fn holder_of(b: u8) -> Holder {
    if b == DEALER_HOLDER {
        Holder::Dealer
    } else {
        Holder::Seat(Seat(b))
    }
}

fn verdict<T>(r: Result<T, MentalError>, ok: impl FnOnce(T) -> Value) -> Value {
    match r {
        Ok(v) => json!({ "ok": ok(v) }),
        Err(e) => error_json(&e),
    }
}

impl Corpus {
    /// Runs a case through the Rust verifier.
    fn check(&self, case: &Case) -> Value {
        match case {
            Case::KeyShare { hand, seat, share } => {
                verdict(KeyShare::from_bytes(share).and_then(|k| k.verify(hand, Seat(*seat))), |()| {
                    Value::Null
                })
            }
            Case::JointKey { hand, shares } => {
                let r = shares
                    .iter()
                    .map(|(s, b)| KeyShare::from_bytes(b).map(|k| (Seat(*s), k)))
                    .collect::<Result<Vec<_>, _>>()
                    .and_then(|list| JointKey::combine(hand, &list));
                verdict(r, |k| json!(hex::encode(k.to_bytes())))
            }
            Case::DecryptionShare { table, hand, seat, position, ciphertext, share } => {
                let key = &self.tables[*table].key;
                let r = Ciphertext::from_bytes(ciphertext).and_then(|ct| {
                    let s = DecryptionShare::from_bytes(share)?;
                    key.verify_share(hand, Seat(*seat), *position, &ct, &s)
                });
                verdict(r, |()| Value::Null)
            }
            Case::Open { table, hand, position, ciphertext, shares, cards } => {
                let key = &self.tables[*table].key;
                let ids: Vec<CardId> = cards.iter().filter_map(|&c| CardId::from_code(c).ok()).collect();
                let r = Ciphertext::from_bytes(ciphertext).and_then(|ct| {
                    let list = shares
                        .iter()
                        .map(|(s, b)| DecryptionShare::from_bytes(b).map(|d| (Seat(*s), d)))
                        .collect::<Result<Vec<_>, _>>()?;
                    key.open(hand, *position, &ct, &list, &CardTable::new(&ids))
                });
                verdict(r, |c| json!(c.code()))
            }
            Case::Shuffle { table, hand, seat, input, output, proof } => {
                let key = &self.tables[*table].key;
                let r = Deck::from_bytes(input).and_then(|i| {
                    let o = Deck::from_bytes(output)?;
                    let p = ShuffleProof::from_bytes(i.len(), proof)?;
                    verify_shuffle(hand, Seat(*seat), key, &i, &o, &p)
                });
                verdict(r, |()| Value::Null)
            }
            Case::PieceCommitments { seat, holders, key, commitments } => {
                let r = KeyShare::from_bytes(key).map_err(RecoveryError::from).and_then(|k| {
                    PieceCommitments::from_bytes(*holders, commitments)?.check_sum(Seat(*seat), &k)
                });
                recovery_verdict(r, |()| Value::Null)
            }
            Case::Complaint { hand, accused, holder, key, piece, commitment, complaint } => {
                let r = KeyShare::from_bytes(key).map_err(RecoveryError::from).and_then(|k| {
                    let p = EncryptedPiece::from_bytes(piece)?;
                    let c = Complaint::from_bytes(complaint)?;
                    c.verify(hand, Seat(*accused), holder_of(*holder), &k, &p, commitment)
                });
                recovery_verdict(r, |()| Value::Null)
            }
            Case::RecoveryShare {
                hand,
                seat,
                holder,
                k,
                holders,
                commitments,
                position,
                ciphertext,
                share,
            } => {
                let r = PieceCommitments::from_bytes(*holders, commitments).and_then(|c| {
                    let ct = Ciphertext::from_bytes(ciphertext)?;
                    let s = RecoveryShare::from_bytes(share)?;
                    s.verify(hand, Seat(*seat), holder_of(*holder), *k, &c, *position, &ct)
                });
                recovery_verdict(r, |()| Value::Null)
            }
            Case::RecoverOpen {
                table,
                hand,
                seat,
                seats,
                commitments,
                position,
                ciphertext,
                recovery,
                shares,
                cards,
            } => {
                let key = &self.tables[*table].key;
                let ids: Vec<CardId> = cards.iter().filter_map(|&c| CardId::from_code(c).ok()).collect();
                let holders = Holder::of(Seat(*seat), *seats).len();
                let r = PieceCommitments::from_bytes(holders, commitments).and_then(|c| {
                    let ct = Ciphertext::from_bytes(ciphertext)?;
                    let rec = recovery
                        .iter()
                        .map(|(h, b)| RecoveryShare::from_bytes(b).map(|s| (holder_of(*h), s)))
                        .collect::<Result<Vec<_>, _>>()?;
                    let list = shares
                        .iter()
                        .map(|(s, b)| DecryptionShare::from_bytes(b).map(|d| (Seat(*s), d)))
                        .collect::<Result<Vec<_>, _>>()?;
                    let rebuilt =
                        RecoveredShare::combine(hand, Seat(*seat), *seats, &c, *position, &ct, &rec)?;
                    Ok(key.open_recovered(hand, *position, &ct, &list, &[rebuilt], &CardTable::new(&ids))?)
                });
                recovery_verdict(r, |c| json!(c.code()))
            }
        }
    }

    fn blob(&mut self, name: &str, bytes: &[u8]) {
        self.blobs.insert(name.to_string(), bytes.to_vec());
    }

    /// `bytes` as hex when short, else as the closest blob plus its differences.
    fn field(&self, bytes: &[u8]) -> Value {
        if bytes.len() <= 128 {
            return json!(hex::encode(bytes));
        }
        let best = self
            .blobs
            .iter()
            .min_by_key(|(_, b)| {
                let common = b.len().min(bytes.len());
                let diff = (0..common).filter(|&i| b[i] != bytes[i]).count();
                diff + bytes.len() - common
            })
            .map(|(name, b)| (name.clone(), b.clone()));
        let Some((name, base)) = best else { return json!(hex::encode(bytes)) };
        let mut v = json!({ "blob": name });
        if base.len() != bytes.len() {
            v["len"] = json!(bytes.len());
        }
        let mut runs = Vec::new();
        let mut i = 0;
        while i < bytes.len() {
            if base.get(i) == Some(&bytes[i]) {
                i += 1;
                continue;
            }
            let start = i;
            while i < bytes.len() && base.get(i) != Some(&bytes[i]) {
                i += 1;
            }
            runs.push(json!([start, hex::encode(&bytes[start..i])]));
        }
        if !runs.is_empty() {
            v["set"] = json!(runs);
        }
        v
    }

    fn hand(h: &HandId) -> Value {
        json!(hex::encode(h.as_ref()))
    }

    fn shares_json(&self, shares: &[(u8, Vec<u8>)]) -> Value {
        json!(shares.iter().map(|(s, b)| json!([s, self.field(b)])).collect::<Vec<_>>())
    }

    fn case_json(&self, name: &str, case: &Case) -> Value {
        match case {
            Case::KeyShare { hand, seat, share } => {
                json!({"kind": "key-share", "name": name, "hand": Self::hand(hand), "seat": seat, "share": self.field(share)})
            }
            Case::JointKey { hand, shares } => {
                json!({"kind": "joint-key", "name": name, "hand": Self::hand(hand), "shares": self.shares_json(shares)})
            }
            Case::DecryptionShare { table, hand, seat, position, ciphertext, share } => json!({
                "kind": "decryption-share", "name": name, "table": self.tables[*table].name, "hand": Self::hand(hand),
                "seat": seat, "position": position, "ciphertext": self.field(ciphertext), "share": self.field(share),
            }),
            Case::Open { table, hand, position, ciphertext, shares, cards } => json!({
                "kind": "open", "name": name, "table": self.tables[*table].name, "hand": Self::hand(hand),
                "position": position, "ciphertext": self.field(ciphertext), "shares": self.shares_json(shares),
                "cards": cards,
            }),
            Case::Shuffle { table, hand, seat, input, output, proof } => json!({
                "kind": "shuffle", "name": name, "table": self.tables[*table].name, "hand": Self::hand(hand),
                "seat": seat, "input": self.field(input), "output": self.field(output), "proof": self.field(proof),
            }),
            Case::PieceCommitments { seat, holders, key, commitments } => json!({
                "kind": "piece-commitments", "name": name, "seat": seat, "holders": holders,
                "key": self.field(key), "commitments": self.field(commitments),
            }),
            Case::Complaint { hand, accused, holder, key, piece, commitment, complaint } => json!({
                "kind": "complaint", "name": name, "hand": Self::hand(hand), "accused": accused, "holder": holder,
                "key": self.field(key), "piece": self.field(piece), "commitment": self.field(commitment),
                "complaint": self.field(complaint),
            }),
            Case::RecoveryShare {
                hand,
                seat,
                holder,
                k,
                holders,
                commitments,
                position,
                ciphertext,
                share,
            } => json!({
                "kind": "recovery-share", "name": name, "hand": Self::hand(hand), "seat": seat, "holder": holder,
                "k": k, "holders": holders, "commitments": self.field(commitments), "position": position,
                "ciphertext": self.field(ciphertext), "share": self.field(share),
            }),
            Case::RecoverOpen {
                table,
                hand,
                seat,
                seats,
                commitments,
                position,
                ciphertext,
                recovery,
                shares,
                cards,
            } => json!({
                "kind": "recover-open", "name": name, "table": self.tables[*table].name, "hand": Self::hand(hand),
                "seat": seat, "seats": seats, "commitments": self.field(commitments), "position": position,
                "ciphertext": self.field(ciphertext), "recovery": self.shares_json(recovery),
                "shares": self.shares_json(shares), "cards": cards,
            }),
        }
    }

    /// Adds a case; `ok` says whether the Rust verifier must accept it (a
    /// corpus whose honest case fails, or whose tampering passes, is a bug here).
    fn add(&mut self, name: &str, case: Case, ok: bool) -> Res<Value> {
        let expect = self.check(&case);
        if expect.get("ok").is_some() != ok {
            return Err(format!(
                "case {name}: expected {}, Rust says {expect}",
                if ok { "ok" } else { "an error" }
            )
            .into());
        }
        let mut v = self.case_json(name, &case);
        v["expect"] = expect.clone();
        self.cases.push(v);
        self.count += 1;
        Ok(expect)
    }

    /// The case once per byte of `field` with bit `bit` flipped; every one must fail.
    fn add_flips(&mut self, name: &str, case: Case, field: &str, bit: u8) -> Res<()> {
        let len = field_mut(&mut case.clone(), field)?.len();
        let mut expect = Vec::with_capacity(len);
        for i in 0..len {
            let mut c = case.clone();
            field_mut(&mut c, field)?[i] ^= 1 << bit;
            let v = self.check(&c);
            if v.get("ok").is_some() {
                return Err(
                    format!("case {name}: byte {i} bit {bit} of {field} flipped, still accepted").into()
                );
            }
            expect.push(v);
        }
        let mut v = self.case_json(name, &case);
        v["flip"] = json!({"field": field, "bit": bit});
        v["expect"] = json!(expect);
        self.cases.push(v);
        self.count += len;
        Ok(())
    }

    fn table(&mut self, name: &str, hand: HandId, seats: &[u8], rng: &mut ChaCha20Rng) -> Res<usize> {
        let secrets: Vec<(u8, SecretShare)> =
            seats.iter().map(|&s| (s, SecretShare::generate(rng))).collect();
        let shares: Vec<(u8, KeyShare)> =
            secrets.iter().map(|(s, x)| (*s, x.key_share(&hand, Seat(*s), rng))).collect();
        let list: Vec<(Seat, KeyShare)> = shares.iter().map(|(s, k)| (Seat(*s), *k)).collect();
        let key = JointKey::combine(&hand, &list)?;
        self.tables.push(Table { name: name.to_string(), hand, secrets, shares, key });
        Ok(self.tables.len() - 1)
    }

    /// Every key holder's share of `ct` at `position`, in the key's order.
    fn shares(&self, t: usize, position: u16, ct: &Ciphertext, rng: &mut ChaCha20Rng) -> Vec<(u8, Vec<u8>)> {
        let t = &self.tables[t];
        t.secrets
            .iter()
            .map(|(s, x)| (*s, x.decryption_share(&t.hand, Seat(*s), position, ct, rng).to_bytes().to_vec()))
            .collect()
    }

    fn to_json(&self) -> Value {
        json!({
            "format": "claw-mental-corpus-v1",
            "generator": "cargo run -p claw-protocol --example mental_vectors --release -- web/test/fixtures/mental-corpus.json",
            "blobs": self.blobs.iter().map(|(k, v)| (k.clone(), json!(hex::encode(v)))).collect::<serde_json::Map<_, _>>(),
            "tables": self.tables.iter().map(|t| json!({
                "name": t.name,
                "hand": Self::hand(&t.hand),
                "shares": t.shares.iter().map(|(s, k)| json!([s, hex::encode(k.to_bytes())])).collect::<Vec<_>>(),
                "key": hex::encode(t.key.to_bytes()),
            })).collect::<Vec<_>>(),
            "cases": self.cases,
        })
    }
}

fn field_mut<'a>(case: &'a mut Case, field: &str) -> Res<&'a mut Vec<u8>> {
    Ok(match (case, field) {
        (Case::KeyShare { share, .. }, "share") => share,
        (Case::DecryptionShare { share, .. }, "share") => share,
        (Case::DecryptionShare { ciphertext, .. }, "ciphertext") => ciphertext,
        (Case::Shuffle { proof, .. }, "proof") => proof,
        (Case::Shuffle { output, .. }, "output") => output,
        (Case::Shuffle { input, .. }, "input") => input,
        (Case::PieceCommitments { commitments, .. }, "commitments") => commitments,
        (Case::Complaint { complaint, .. }, "complaint") => complaint,
        (Case::Complaint { piece, .. }, "piece") => piece,
        (Case::RecoveryShare { share, .. }, "share") => share,
        (Case::RecoveryShare { commitments, .. }, "commitments") => commitments,
        (Case::RecoveryShare { ciphertext, .. }, "ciphertext") => ciphertext,
        _ => return Err(format!("no bytes field {field} in this case").into()),
    })
}

fn codes(ids: &[CardId]) -> Vec<u16> {
    ids.iter().map(|c| c.code()).collect()
}

fn with_card(deck: &[u8], at: usize, ct: &[u8]) -> Vec<u8> {
    let mut d = deck.to_vec();
    d[64 * at..64 * at + 64].copy_from_slice(ct);
    d
}

fn build() -> Res<Corpus> {
    let mut c = Corpus::default();
    let mut rng = ChaCha20Rng::from_seed([0x35; 32]);
    let hand_a = HandId([0xa1; 16]);
    let hand_b = HandId([0xb2; 16]);
    // Three seats; six seats, not contiguous (the key's order is the list's).
    let ta = c.table("three-seats", hand_a, &[0, 1, 2], &mut rng)?;
    let tb = c.table("six-seats", hand_b, &[5, 0, 2, 3, 7, 8], &mut rng)?;
    let tc = c.table("one-seat", hand_a, &[4], &mut rng)?;
    key_share_cases(&mut c, ta, &mut rng)?;
    let pack52 = CardId::deck(1, false);
    let pack54 = CardId::deck(1, true);
    let packs108 = CardId::deck(2, true);

    // Honest shuffle chains; every later case reuses these decks and proofs.
    let mut chains: Vec<Vec<(Vec<u8>, Vec<u8>)>> = Vec::new();
    for (t, ids, shufflers, name) in [
        (ta, &pack52, &[0u8, 1, 2][..], "52"),
        (tb, &pack54, &[5, 0][..], "54"),
        (ta, &packs108, &[1, 2][..], "108"),
        (tc, &pack52[..4].to_vec(), &[4][..], "4"),
    ] {
        let mut deck = Deck::initial(ids)?;
        c.blob(&format!("deck{name}-0"), &deck.to_bytes());
        let mut chain = Vec::new();
        for (k, &seat) in shufflers.iter().enumerate() {
            let hand = c.tables[t].hand;
            let (next, proof) = shuffle(&hand, Seat(seat), &c.tables[t].key, &deck, &mut rng);
            c.blob(&format!("deck{name}-{}", k + 1), &next.to_bytes());
            c.blob(&format!("proof{name}-{}", k + 1), proof.as_bytes());
            let case = Case::Shuffle {
                table: t,
                hand,
                seat,
                input: deck.to_bytes(),
                output: next.to_bytes(),
                proof: proof.to_bytes(),
            };
            c.add(&format!("{name} cards: honest shuffle {} by seat {seat}", k + 1), case, true)?;
            chain.push((next.to_bytes(), proof.to_bytes()));
            deck = next;
        }
        chains.push(chain);
        c.cases.push(json!({"kind": "initial-deck", "name": format!("initial deck of {name}"), "cards": codes(ids), "expect": {"blob": format!("deck{name}-0")}}));
    }
    shuffle_attacks(&mut c, ta, tb, &chains, &pack52, &mut rng)?;
    shuffle_flips(&mut c, tc, &chains)?;
    share_cases(&mut c, ta, tb, &chains, &pack52, &pack54, &packs108, &mut rng)?;
    let all = CardId::deck(4, true);
    c.cases.push(json!({
        "kind": "card-points", "name": "card points of four packs with jokers",
        "cards": codes(&all),
        "expect": all.iter().map(|&id| hex::encode(claw_protocol::mental::card_point(id).compress().to_bytes())).collect::<Vec<_>>(),
    }));
    recovery_cases(&mut c, &pack52, &mut rng)?;
    Ok(c)
}

fn key_share_cases(c: &mut Corpus, ta: usize, rng: &mut ChaCha20Rng) -> Res<()> {
    let hand = c.tables[ta].hand;
    let ks: Vec<(u8, Vec<u8>)> =
        c.tables[ta].shares.iter().map(|(s, k)| (*s, k.to_bytes().to_vec())).collect();
    for (s, b) in &ks {
        c.add(&format!("key share of seat {s}"), Case::KeyShare { hand, seat: *s, share: b.clone() }, true)?;
    }
    let (k0, k1) = (ks[0].1.clone(), ks[1].1.clone());
    let bad = |c: &mut Corpus, name: &str, seat: u8, share: Vec<u8>| -> Res<Value> {
        c.add(name, Case::KeyShare { hand, seat, share }, false)
    };
    bad(c, "key share presented as another seat's", 2, k1.clone())?;
    bad(c, "key share replayed in another hand", 0, {
        let x = SecretShare::generate(rng);
        x.key_share(&OTHER_HAND, Seat(0), rng).to_bytes().to_vec()
    })?;
    let mut ident = k0.clone();
    ident[..32].fill(0);
    bad(c, "identity key", 0, ident)?;
    let mut rogue = k1.clone();
    // X_1 − X_0, encoded by dalek from the decoded points.
    let x0 = curve_point(&k0[..32])?;
    let x1 = curve_point(&k1[..32])?;
    rogue[..32].copy_from_slice((x1 - x0).compress().as_bytes());
    bad(c, "rogue key X1 - X0 with seat 1's proof", 1, rogue)?;
    let mut odd = k0.clone();
    odd[0] ^= 1;
    bad(c, "non-canonical key: negative field element (low bit set)", 0, odd)?;
    let mut big = k0.clone();
    big[..32].copy_from_slice(&FIELD_P);
    bad(c, "non-canonical key: field element p", 0, big)?;
    let mut top = k0.clone();
    top[31] |= 0x80;
    bad(c, "non-canonical key: top bit set", 0, top)?;
    let mut s_ell = k0.clone();
    s_ell[64..].copy_from_slice(&ELL);
    bad(c, "response s = ℓ", 0, s_ell)?;
    let mut r_bad = k0.clone();
    r_bad[32..64].copy_from_slice(&FIELD_P);
    bad(c, "commitment R not a point (only compared as bytes)", 0, r_bad)?;
    bad(c, "key share of 95 bytes", 0, k0[..95].to_vec())?;
    bad(c, "key share of 97 bytes", 0, [k0.clone(), vec![0]].concat())?;
    c.add_flips(
        "key share, one bit 0 flipped",
        Case::KeyShare { hand, seat: 0, share: k0.clone() },
        "share",
        0,
    )?;
    c.add_flips(
        "key share, one bit 7 flipped",
        Case::KeyShare { hand, seat: 0, share: k0.clone() },
        "share",
        7,
    )?;

    // Joint keys.
    let jk = |c: &mut Corpus, name: &str, shares: Vec<(u8, Vec<u8>)>, ok: bool| -> Res<Value> {
        c.add(name, Case::JointKey { hand, shares }, ok)
    };
    jk(c, "joint key of three seats", ks.clone(), true)?;
    jk(c, "joint key, shares in another order", vec![ks[2].clone(), ks[0].clone(), ks[1].clone()], true)?;
    jk(c, "joint key of no shares", vec![], false)?;
    let again = c.tables[ta].secrets[2].1.key_share(&hand, Seat(0), rng).to_bytes().to_vec();
    jk(c, "joint key, seat 0 twice (both proven)", vec![ks[0].clone(), ks[1].clone(), (0, again)], false)?;
    let a = SecretShare::generate(rng);
    let a0 = a.key_share(&hand, Seat(0), rng).to_bytes().to_vec();
    let a1 = a.key_share(&hand, Seat(1), rng).to_bytes().to_vec();
    jk(c, "joint key, one key proven for two seats", vec![(0, a0), (1, a1)], false)?;
    let mut ident = k1.clone();
    ident[..32].fill(0);
    jk(c, "joint key, an identity share", vec![ks[0].clone(), (1, ident)], false)?;
    jk(c, "joint key, a share proven for another seat", vec![ks[0].clone(), (2, k1.clone())], false)?;
    let mut odd = k1.clone();
    odd[0] ^= 1;
    jk(c, "joint key, a non-canonical share", vec![ks[0].clone(), (1, odd)], false)?;
    Ok(())
}

/// A dalek point from a canonical encoding this program made.
fn curve_point(b: &[u8]) -> Res<curve25519_dalek::ristretto::RistrettoPoint> {
    curve25519_dalek::ristretto::CompressedRistretto::from_slice(b)?
        .decompress()
        .ok_or_else(|| "not a point".into())
}

fn shuffle_attacks(
    c: &mut Corpus,
    ta: usize,
    tb: usize,
    chains: &[Vec<(Vec<u8>, Vec<u8>)>],
    pack52: &[CardId],
    rng: &mut ChaCha20Rng,
) -> Res<()> {
    let hand = c.tables[ta].hand;
    let d0 = c.blobs["deck52-0"].clone();
    let (d1, _) = chains[0][0].clone();
    let (d2, p2) = chains[0][1].clone();
    // The attacked shuffle: seat 1, deck52-1 → deck52-2.
    let sh = |input: &[u8], output: &[u8], proof: &[u8]| Case::Shuffle {
        table: ta,
        hand,
        seat: 1,
        input: input.to_vec(),
        output: output.to_vec(),
        proof: proof.to_vec(),
    };
    c.add("52: output drops the last card", sh(&d1, &d2[..d2.len() - 64], &p2), false)?;
    c.add("52: output drops the first card", sh(&d1, &d2[64..], &p2), false)?;
    c.add("52: output adds a card", sh(&d1, &[d2.clone(), d2[..64].to_vec()].concat(), &p2), false)?;
    c.add("52: output duplicates card 0 at 1", sh(&d1, &with_card(&d2, 1, &d2[..64]), &p2), false)?;
    let key = c.tables[ta].key.clone();
    let first = Ciphertext::from_bytes(&d2[..64])?;
    let rerand = first.rerandomise(&key, rng).to_bytes();
    c.add(
        "52: output duplicates card 0, re-randomised, at 51",
        sh(&d1, &with_card(&d2, 51, &rerand), &p2),
        false,
    )?;
    let forged = Ciphertext::mask(pack52[51], &key, rng).to_bytes();
    for at in [0, 25, 51] {
        c.add(
            &format!("52: output replaces card {at} with a fresh As"),
            sh(&d1, &with_card(&d2, at, &forged), &p2),
            false,
        )?;
    }
    let joker = Ciphertext::mask(CardId::deck(1, true)[52], &key, rng).to_bytes();
    c.add("52: output replaces card 7 with a joker", sh(&d1, &with_card(&d2, 7, &joker), &p2), false)?;
    let mut swapped = d2.clone();
    for k in 0..64 {
        swapped.swap(2 * 64 + k, 5 * 64 + k);
    }
    c.add("52: output swaps cards 2 and 5", sh(&d1, &swapped, &p2), false)?;
    c.add("52: output is the input (the previous deck reused)", sh(&d1, &d1, &p2), false)?;
    c.add("52: output is the deck before the input", sh(&d1, &d0, &p2), false)?;
    c.add("52: input and output are the deck before", sh(&d0, &d0, &p2), false)?;
    let (other_out, other_proof) = shuffle(&hand, Seat(1), &key, &Deck::from_bytes(&d1)?, rng);
    c.add("52: another honest shuffle's output with this proof", sh(&d1, &other_out.to_bytes(), &p2), false)?;
    c.add(
        "52: this output with another honest shuffle's proof",
        sh(&d1, &d2, other_proof.as_bytes()),
        false,
    )?;
    let mut replay = sh(&d1, &d2, &p2);
    if let Case::Shuffle { seat, .. } = &mut replay {
        *seat = 2;
    }
    c.add("52: proof replayed as another seat's", replay, false)?;
    let mut replay = sh(&d1, &d2, &p2);
    if let Case::Shuffle { hand, .. } = &mut replay {
        *hand = OTHER_HAND;
    }
    c.add("52: proof replayed in another hand", replay, false)?;
    let mut other_key = sh(&d1, &d2, &p2);
    if let Case::Shuffle { table, .. } = &mut other_key {
        *table = tb;
    }
    c.add("52: proof checked under another joint key", other_key, false)?;
    let (_, p4) = chains[3][0].clone();
    c.add("52: a proof for 4 cards", sh(&d1, &d2, &p4), false)?;
    c.add("52: proof truncated by one byte", sh(&d1, &d2, &p2[..p2.len() - 1]), false)?;
    c.add("52: proof with one byte more", sh(&d1, &d2, &[p2.clone(), vec![0]].concat()), false)?;
    let mut bad_in = d1.clone();
    bad_in[64 * 3 + 32..64 * 4].copy_from_slice(&FIELD_P);
    c.add("52: input card 3 c2 non-canonical", sh(&bad_in, &d2, &p2), false)?;
    let mut bad_out = d2.clone();
    bad_out[64 * 9] ^= 1;
    c.add("52: output card 9 c1 negative (non-canonical)", sh(&d1, &bad_out, &p2), false)?;
    c.add("52: output of 63 bytes too few", sh(&d1, &d2[..d2.len() - 1], &p2), false)?;
    c.add("52: empty output", sh(&d1, &[], &p2), false)?;
    c.add("empty input", sh(&[], &d2, &p2), false)?;
    let n = 52usize;
    let mut p_ident = p2.clone();
    p_ident[..32].fill(0);
    c.add("52: commitment c_0 replaced by the identity", sh(&d1, &d2, &p_ident), false)?;
    // One proof byte flipped in every region: first and last element, first
    // and last byte, bits 0 and 7.
    let regions: Vec<(String, usize, usize)> = vec![
        ("c".into(), 0, n),
        ("chain".into(), n, n),
        ("t1".into(), 2 * n, 1),
        ("t2".into(), 2 * n + 1, 1),
        ("t3".into(), 2 * n + 2, 1),
        ("t4a".into(), 2 * n + 3, 1),
        ("t4b".into(), 2 * n + 4, 1),
        ("t-hat".into(), 2 * n + 5, n),
        ("s1".into(), 3 * n + 5, 1),
        ("s2".into(), 3 * n + 6, 1),
        ("s3".into(), 3 * n + 7, 1),
        ("s4".into(), 3 * n + 8, 1),
        ("s-hat".into(), 3 * n + 9, n),
        ("s-prime".into(), 4 * n + 9, n),
    ];
    for (name, start, len) in regions {
        let mut elems = vec![0];
        if len > 1 {
            elems.push(len - 1);
        }
        for e in elems {
            for byte in [0usize, 31] {
                for bit in [0u8, 7] {
                    let mut p = p2.clone();
                    p[32 * (start + e) + byte] ^= 1 << bit;
                    c.add(
                        &format!("52: proof {name}[{e}] byte {byte} bit {bit} flipped"),
                        sh(&d1, &d2, &p),
                        false,
                    )?;
                }
            }
        }
    }
    Ok(())
}

fn shuffle_flips(c: &mut Corpus, t: usize, chains: &[Vec<(Vec<u8>, Vec<u8>)>]) -> Res<()> {
    let hand = c.tables[t].hand;
    let d0 = c.blobs["deck4-0"].clone();
    let (d1, p1) = chains[3][0].clone();
    let case = Case::Shuffle { table: t, hand, seat: 4, input: d0, output: d1, proof: p1 };
    c.add_flips("4: every proof byte, bit 0 flipped", case.clone(), "proof", 0)?;
    c.add_flips("4: every output byte, bit 0 flipped", case.clone(), "output", 0)?;
    c.add_flips("4: every input byte, bit 0 flipped", case, "input", 0)?;
    Ok(())
}

#[allow(clippy::too_many_arguments)]
fn share_cases(
    c: &mut Corpus,
    ta: usize,
    tb: usize,
    chains: &[Vec<(Vec<u8>, Vec<u8>)>],
    pack52: &[CardId],
    pack54: &[CardId],
    packs108: &[CardId],
    rng: &mut ChaCha20Rng,
) -> Res<()> {
    let hand = c.tables[ta].hand;
    let final52 = Deck::from_bytes(&chains[0][2].0)?;
    let ct =
        |d: &Deck, p: u16| -> Res<Ciphertext> { d.get(p).copied().ok_or_else(|| "no such position".into()) };
    let (ct0, ct1) = (ct(&final52, 0)?, ct(&final52, 1)?);
    let good = c.shares(ta, 0, &ct0, rng);
    let ds = |seat: u8, position: u16, ciphertext: &Ciphertext, share: &[u8]| Case::DecryptionShare {
        table: ta,
        hand,
        seat,
        position,
        ciphertext: ciphertext.to_bytes().to_vec(),
        share: share.to_vec(),
    };
    for (s, b) in &good {
        c.add(&format!("decryption share of seat {s}, position 0"), ds(*s, 0, &ct0, b), true)?;
    }
    let intruder = SecretShare::generate(rng);
    let lie = intruder.decryption_share(&hand, Seat(1), 0, &ct0, rng).to_bytes();
    c.add("decryption share made with another secret", ds(1, 0, &ct0, &lie), false)?;
    let secrets = &c.tables[ta].secrets;
    let for_ct1 = secrets[2].1.decryption_share(&hand, Seat(2), 0, &ct1, rng).to_bytes();
    let at1 = secrets[0].1.decryption_share(&hand, Seat(0), 1, &ct0, rng).to_bytes();
    let replayed = secrets[1].1.decryption_share(&OTHER_HAND, Seat(1), 0, &ct0, rng).to_bytes();
    c.add("decryption share for another card (position 1's ciphertext)", ds(2, 0, &ct0, &for_ct1), false)?;
    c.add("decryption share for the same ciphertext at another position", ds(0, 0, &ct0, &at1), false)?;
    c.add("decryption share replayed from another hand", ds(1, 0, &ct0, &replayed), false)?;
    c.add("seat 1's decryption share presented as seat 2's", ds(2, 0, &ct0, &good[1].1), false)?;
    let mut moved = good[0].1.clone();
    moved[..32].copy_from_slice(&good[1].1[..32]);
    c.add("decryption share point replaced, proof kept", ds(0, 0, &ct0, &moved), false)?;
    c.add("decryption share from a seat with no key share", ds(9, 0, &ct0, &good[0].1), false)?;
    let mut e_big = good[0].1.clone();
    e_big[32..64].copy_from_slice(&ELL);
    c.add("decryption share challenge e = ℓ", ds(0, 0, &ct0, &e_big), false)?;
    let mut s_big = good[0].1.clone();
    s_big[64..].fill(0xff);
    c.add("decryption share response s = 2^256 - 1", ds(0, 0, &ct0, &s_big), false)?;
    let mut d_bad = good[0].1.clone();
    d_bad[..32].copy_from_slice(&FIELD_P);
    c.add("decryption share point non-canonical", ds(0, 0, &ct0, &d_bad), false)?;
    c.add("decryption share of 95 bytes", ds(0, 0, &ct0, &good[0].1[..95]), false)?;
    let mut bad_ct = Case::DecryptionShare {
        table: ta,
        hand,
        seat: 0,
        position: 0,
        ciphertext: ct0.to_bytes().to_vec(),
        share: good[0].1.clone(),
    };
    if let Case::DecryptionShare { ciphertext, .. } = &mut bad_ct {
        ciphertext[31] |= 0x80;
    }
    c.add("ciphertext non-canonical", bad_ct, false)?;
    c.add_flips("decryption share, one bit 0 flipped", ds(1, 0, &ct0, &good[1].1), "share", 0)?;
    c.add_flips("decryption share, ciphertext bit 0 flipped", ds(1, 0, &ct0, &good[1].1), "ciphertext", 0)?;

    // Openings: every card of the final 52-card deck.
    let ids52 = codes(pack52);
    let open = |table: usize,
                hand: HandId,
                position: u16,
                ct: &Ciphertext,
                shares: Vec<(u8, Vec<u8>)>,
                cards: &[u16]| {
        Case::Open {
            table,
            hand,
            position,
            ciphertext: ct.to_bytes().to_vec(),
            shares,
            cards: cards.to_vec(),
        }
    };
    let mut opened = Vec::new();
    for p in 0..52u16 {
        let ctp = ct(&final52, p)?;
        let shares = if p == 0 { good.clone() } else { c.shares(ta, p, &ctp, rng) };
        opened.push(c.add(
            &format!("52: open position {p}"),
            open(ta, hand, p, &ctp, shares, &ids52),
            true,
        )?);
    }
    let mut got: Vec<u64> = opened.iter().filter_map(|v| v["ok"].as_u64()).collect();
    got.sort_unstable();
    if got != (0..52).collect::<Vec<u64>>() {
        return Err("the final 52-card deck does not open to the 52 cards".into());
    }
    let reordered = vec![good[2].clone(), good[0].clone(), good[1].clone()];
    c.add("52: open with the shares in another order", open(ta, hand, 0, &ct0, reordered, &ids52), true)?;
    c.add("52: open with a share missing", open(ta, hand, 0, &ct0, good[..2].to_vec(), &ids52), false)?;
    let dup = [good.clone(), vec![good[0].clone()]].concat();
    c.add("52: open with a seat twice", open(ta, hand, 0, &ct0, dup, &ids52), false)?;
    let unknown = [good.clone(), vec![(9, good[0].1.clone())]].concat();
    c.add("52: open with a share from an unknown seat", open(ta, hand, 0, &ct0, unknown, &ids52), false)?;
    let mut one_bad = good.clone();
    one_bad[1].1 = lie.to_vec();
    c.add("52: open with one lying share", open(ta, hand, 0, &ct0, one_bad, &ids52), false)?;
    let mut one_replayed = good.clone();
    one_replayed[1].1 = replayed.to_vec();
    c.add(
        "52: open with a share replayed from another hand",
        open(ta, hand, 0, &ct0, one_replayed, &ids52),
        false,
    )?;
    c.add("52: open in another hand", open(ta, OTHER_HAND, 0, &ct0, good.clone(), &ids52), false)?;
    c.add("52: open at another position", open(ta, hand, 1, &ct0, good.clone(), &ids52), false)?;
    let v0 = opened[0]["ok"].as_u64().ok_or("position 0 did not open")?;
    let without: Vec<u16> = ids52.iter().copied().filter(|&id| u64::from(id) != v0).collect();
    c.add(
        "52: open a card missing from the card table",
        open(ta, hand, 0, &ct0, good.clone(), &without),
        false,
    )?;
    // An unmasked card (c1 = identity) opens with everyone's shares.
    let initial = Deck::initial(pack52)?;
    let unmasked = ct(&initial, 7)?;
    let shares = c.shares(ta, 7, &unmasked, rng);
    c.add("52: open an unmasked card", open(ta, hand, 7, &unmasked, shares, &ids52), true)?;

    // Six non-contiguous seats, 54 cards; 108 cards.
    let hand_b = c.tables[tb].hand;
    let final54 = Deck::from_bytes(&chains[1][1].0)?;
    let ids54 = codes(pack54);
    for p in [0u16, 17, 53] {
        let ctp = ct(&final54, p)?;
        let shares = c.shares(tb, p, &ctp, rng);
        c.add(&format!("54: open position {p}, six seats"), open(tb, hand_b, p, &ctp, shares, &ids54), true)?;
    }
    let ctp = ct(&final54, 3)?;
    let mut shares = c.shares(tb, 3, &ctp, rng);
    shares.remove(4);
    c.add("54: open with seat 7's share missing", open(tb, hand_b, 3, &ctp, shares, &ids54), false)?;
    let final108 = Deck::from_bytes(&chains[2][1].0)?;
    let ids108 = codes(packs108);
    let mut second_pack = None;
    for p in [0u16, 54, 107, 1, 2, 3, 4, 5, 6] {
        let ctp = ct(&final108, p)?;
        let shares = c.shares(ta, p, &ctp, rng);
        let card = c.add(
            &format!("108: open position {p}"),
            open(ta, hand, p, &ctp, shares.clone(), &ids108),
            true,
        )?;
        if second_pack.is_none() && card["ok"].as_u64().is_some_and(|id| id >= 54) {
            second_pack = Some((p, ctp, shares));
        }
    }
    // A card of the second pack is no card of a one-pack table.
    let (p, ctp, shares) = second_pack.ok_or("no second-pack card among the opened positions")?;
    c.add(
        &format!("108: open position {p} (second pack) with a one-pack table"),
        open(ta, hand, p, &ctp, shares, &ids54),
        false,
    )?;
    Ok(())
}

/// The hand of the recovery cases.
const RECOVERY_HAND: HandId = HandId([0xd4; 16]);

/// One seat's pieces, their commitments and their encryptions, in holder order.
struct Split {
    pieces: Vec<claw_protocol::mental::Piece>,
    commitments: Vec<u8>,
    encrypted: Vec<Vec<u8>>,
}

/// `a·G` of 32 bytes that are a canonical scalar.
fn scalar_commitment(bytes: [u8; 32]) -> Res<[u8; 32]> {
    let a: Option<curve25519_dalek::scalar::Scalar> =
        curve25519_dalek::scalar::Scalar::from_canonical_bytes(bytes).into();
    let a = a.ok_or("not a canonical scalar")?;
    Ok((curve25519_dalek::constants::RISTRETTO_BASEPOINT_TABLE * &a).compress().to_bytes())
}

/// docs/blind-deal.md §II.7 on a four-seat table: the dealer's piece key,
/// piece commitments, complaints, recovery shares and openings with a
/// recovered share, honest and attacked.
fn recovery_cases(c: &mut Corpus, pack52: &[CardId], rng: &mut ChaCha20Rng) -> Res<()> {
    let hand = RECOVERY_HAND;
    let n = 4usize;
    let t = c.table("four-seats", hand, &[0, 1, 2, 3], rng)?;
    let keys: Vec<KeyShare> = c.tables[t].shares.iter().map(|(_, k)| *k).collect();
    let kb: Vec<Vec<u8>> = keys.iter().map(|k| k.to_bytes().to_vec()).collect();
    let dealer = SecretShare::generate(rng);
    let dealer_key = dealer.key_share(&hand, Seat(DEALER_HOLDER), rng);
    let dk = dealer_key.to_bytes().to_vec();
    c.add(
        "the dealer's piece key, proven for seat byte 0xff",
        Case::KeyShare { hand, seat: DEALER_HOLDER, share: dk.clone() },
        true,
    )?;
    c.add(
        "the dealer's piece key presented as seat 0's",
        Case::KeyShare { hand, seat: 0, share: dk.clone() },
        false,
    )?;
    let mut splits = Vec::new();
    for i in 0..n {
        let seat = Seat(i as u8);
        let holders = Holder::of(seat, n);
        let pieces = c.tables[t].secrets[i].1.split(holders.len(), rng);
        let commitments = PieceCommitments::of(&pieces).to_bytes();
        let mut encrypted = Vec::new();
        for (h, p) in holders.iter().zip(&pieces) {
            let hk = match h {
                Holder::Seat(s) => &keys[s.index()],
                Holder::Dealer => &dealer_key,
            };
            encrypted.push(p.encrypt(&hand, seat, *h, hk, rng).to_bytes().to_vec());
        }
        splits.push(Split { pieces, commitments, encrypted });
    }

    // Piece commitments: Σ A_ik = X_i.
    let pc = |seat: u8, holders: usize, key: &[u8], commitments: &[u8]| Case::PieceCommitments {
        seat,
        holders,
        key: key.to_vec(),
        commitments: commitments.to_vec(),
    };
    for i in 0..n {
        c.add(
            &format!("piece commitments of seat {i}"),
            pc(i as u8, n, &kb[i], &splits[i].commitments),
            true,
        )?;
    }
    let c1 = splits[1].commitments.clone();
    c.add("piece commitments, one holder fewer", pc(1, n, &kb[1], &c1[..32 * (n - 1)]), false)?;
    c.add("piece commitments read for one holder more", pc(1, n + 1, &kb[1], &c1), false)?;
    c.add(
        "piece commitments with 31 bytes more",
        pc(1, n, &kb[1], &[c1.clone(), vec![0; 31]].concat()),
        false,
    )?;
    let mut odd = c1.clone();
    odd[32..64].copy_from_slice(&FIELD_P);
    c.add("piece commitments, one non-canonical", pc(1, n, &kb[1], &odd), false)?;
    let mut swapped = c1.clone();
    for b in 0..32 {
        swapped.swap(b, 64 + b);
    }
    c.add("piece commitments, two swapped (the sum is the same)", pc(1, n, &kb[1], &swapped), true)?;
    let mut replaced = c1.clone();
    replaced[..32].copy_from_slice(&splits[2].commitments[..32]);
    c.add("piece commitments, one replaced by another seat's", pc(1, n, &kb[1], &replaced), false)?;
    c.add("piece commitments checked against another seat's key", pc(1, n, &kb[2], &c1), false)?;
    c.add("another seat's piece commitments", pc(1, n, &kb[1], &splits[3].commitments), false)?;
    let mut odd_key = kb[1].clone();
    odd_key[..32].copy_from_slice(&FIELD_P);
    c.add("piece commitments with a non-canonical key", pc(1, n, &odd_key, &c1), false)?;
    c.add_flips("piece commitments, one bit 0 flipped", pc(1, n, &kb[1], &c1), "commitments", 0)?;

    // Complaints: seat 2 (holder 1 of seat 0's pieces) against seat 0.
    let k = 1;
    let commitment: [u8; 32] = splits[0].commitments[32 * k..32 * k + 32].try_into()?;
    let good = splits[0].encrypted[k].clone();
    let mut bad = good.clone();
    bad[63] ^= 1;
    let x2 = c.tables[t].secrets[2].1.clone();
    let h2 = Holder::Seat(Seat(2));
    let complain = |piece: &[u8], rng: &mut ChaCha20Rng| -> Res<Vec<u8>> {
        Ok(x2.complain(&hand, Seat(0), h2, &EncryptedPiece::from_bytes(piece)?, rng).to_bytes().to_vec())
    };
    let cm = |accused: u8, holder: u8, key: &[u8], piece: &[u8], commitment: [u8; 32], complaint: &[u8]| {
        Case::Complaint {
            hand,
            accused,
            holder,
            key: key.to_vec(),
            piece: piece.to_vec(),
            commitment,
            complaint: complaint.to_vec(),
        }
    };
    let cb = complain(&bad, rng)?;
    c.add(
        "complaint of seat 2 against a bad piece of seat 0",
        cm(0, 2, &kb[2], &bad, commitment, &cb),
        true,
    )?;
    let cg = complain(&good, rng)?;
    c.add("complaint against a good piece (false)", cm(0, 2, &kb[2], &good, commitment, &cg), false)?;
    let plain = x2.decrypt_piece(&hand, Seat(0), h2, &EncryptedPiece::from_bytes(&good)?);
    let with_plain = |target: &[u8; 32]| {
        let mut p = good.clone();
        for i in 0..32 {
            p[32 + i] ^= plain[i] ^ target[i];
        }
        p
    };
    let over = with_plain(&ELL);
    let co = complain(&over, rng)?;
    c.add(
        "complaint against a piece that decrypts to ℓ (no scalar)",
        cm(0, 2, &kb[2], &over, commitment, &co),
        true,
    )?;
    let mut one = [0u8; 32];
    one[0] = 1;
    let other = with_plain(&one);
    let c_one = complain(&other, rng)?;
    c.add(
        "complaint against a piece that decrypts to another scalar",
        cm(0, 2, &kb[2], &other, commitment, &c_one),
        true,
    )?;
    let bad_plain = x2.decrypt_piece(&hand, Seat(0), h2, &EncryptedPiece::from_bytes(&bad)?);
    c.add(
        "complaint whose piece matches the commitment presented",
        cm(0, 2, &kb[2], &bad, scalar_commitment(bad_plain)?, &cb),
        false,
    )?;
    c.add("complaint presented as seat 3's", cm(0, 3, &kb[3], &bad, commitment, &cb), false)?;
    c.add("complaint checked under another seat's key", cm(0, 2, &kb[3], &bad, commitment, &cb), false)?;
    c.add("complaint against another accused seat", cm(1, 2, &kb[2], &bad, commitment, &cb), false)?;
    let mut replay = cm(0, 2, &kb[2], &bad, commitment, &cb);
    if let Case::Complaint { hand, .. } = &mut replay {
        *hand = OTHER_HAND;
    }
    c.add("complaint replayed in another hand", replay, false)?;
    let mut elsewhere = splits[1].encrypted[1].clone();
    elsewhere[63] ^= 1;
    c.add("complaint presented for another piece", cm(0, 2, &kb[2], &elsewhere, commitment, &cb), false)?;
    let mut moved = cb.clone();
    let s = curve_point(&cb[..32])?;
    moved[..32]
        .copy_from_slice((s + curve25519_dalek::constants::RISTRETTO_BASEPOINT_POINT).compress().as_bytes());
    c.add("complaint point S + G, proof kept", cm(0, 2, &kb[2], &bad, commitment, &moved), false)?;
    let mut e_big = cb.clone();
    e_big[32..64].copy_from_slice(&ELL);
    c.add("complaint challenge e = ℓ", cm(0, 2, &kb[2], &bad, commitment, &e_big), false)?;
    let mut s_big = cb.clone();
    s_big[64..].fill(0xff);
    c.add("complaint response s = 2^256 - 1", cm(0, 2, &kb[2], &bad, commitment, &s_big), false)?;
    let mut s_odd = cb.clone();
    s_odd[..32].copy_from_slice(&FIELD_P);
    c.add("complaint point non-canonical", cm(0, 2, &kb[2], &bad, commitment, &s_odd), false)?;
    c.add("complaint of 95 bytes", cm(0, 2, &kb[2], &bad, commitment, &cb[..95]), false)?;
    let mut r_odd = bad.clone();
    r_odd[..32].copy_from_slice(&FIELD_P);
    c.add(
        "complaint against a piece whose R is non-canonical",
        cm(0, 2, &kb[2], &r_odd, commitment, &cb),
        false,
    )?;
    c.add("complaint against a piece of 63 bytes", cm(0, 2, &kb[2], &bad[..63], commitment, &cb), false)?;
    let mut dealer_bad = splits[0].encrypted[n - 1].clone();
    dealer_bad[40] ^= 0x80;
    let dc = dealer
        .complain(&hand, Seat(0), Holder::Dealer, &EncryptedPiece::from_bytes(&dealer_bad)?, rng)
        .to_bytes()
        .to_vec();
    let dealer_commitment: [u8; 32] = splits[0].commitments[32 * (n - 1)..].try_into()?;
    c.add(
        "complaint of the dealer (holder 0xff) against a bad piece",
        cm(0, DEALER_HOLDER, &dk, &dealer_bad, dealer_commitment, &dc),
        true,
    )?;
    c.add_flips("complaint, one bit 0 flipped", cm(0, 2, &kb[2], &bad, commitment, &cb), "complaint", 0)?;
    c.add_flips("complaint, piece bit 0 flipped", cm(0, 2, &kb[2], &bad, commitment, &cb), "piece", 0)?;

    // Recovery shares: seat 1 withholds position 7; holders seats 0, 2, 3, the dealer.
    let key = c.tables[t].key.clone();
    let card = pack52[38];
    let position = 7u16;
    let ct = Ciphertext::mask(card, &key, rng);
    let ct2 = Ciphertext::mask(card, &key, rng);
    let w = Seat(1);
    let holders = Holder::of(w, n);
    let rec: Vec<(u8, Vec<u8>)> = holders
        .iter()
        .zip(&splits[1].pieces)
        .map(|(h, p)| (h.byte(), p.recovery_share(&hand, w, *h, position, &ct, rng).to_bytes().to_vec()))
        .collect();
    let wc = splits[1].commitments.clone();
    let rs = |holder: u8, k: usize, position: u16, ct: &Ciphertext, share: &[u8]| Case::RecoveryShare {
        hand,
        seat: 1,
        holder,
        k,
        holders: n,
        commitments: wc.clone(),
        position,
        ciphertext: ct.to_bytes().to_vec(),
        share: share.to_vec(),
    };
    for (k, (h, s)) in rec.iter().enumerate() {
        c.add(&format!("recovery share of holder {h} for withholder 1"), rs(*h, k, position, &ct, s), true)?;
    }
    let r0 = rec[0].1.clone();
    c.add("recovery share checked against another holder's commitment", rs(0, 1, position, &ct, &r0), false)?;
    c.add("recovery share presented as another holder's", rs(2, 0, position, &ct, &r0), false)?;
    c.add("recovery share for another position", rs(0, 0, position + 1, &ct, &r0), false)?;
    c.add("recovery share for another ciphertext", rs(0, 0, position, &ct2, &r0), false)?;
    let for_ct2 = splits[1].pieces[0].recovery_share(&hand, w, holders[0], position, &ct2, rng).to_bytes();
    c.add(
        "recovery share made for another card at the same position",
        rs(0, 0, position, &ct, &for_ct2),
        false,
    )?;
    let mut replay = rs(0, 0, position, &ct, &r0);
    if let Case::RecoveryShare { hand, .. } = &mut replay {
        *hand = OTHER_HAND;
    }
    c.add("recovery share replayed in another hand", replay, false)?;
    let mut as_other = rs(0, 0, position, &ct, &r0);
    if let Case::RecoveryShare { seat, .. } = &mut as_other {
        *seat = 2;
    }
    c.add("recovery share presented for another withholder", as_other, false)?;
    c.add(
        "recovery share checked against a commitment beyond the last",
        rs(0, n, position, &ct, &r0),
        false,
    )?;
    let mut moved = r0.clone();
    moved[..32].copy_from_slice(&rec[1].1[..32]);
    c.add("recovery share point replaced, proof kept", rs(0, 0, position, &ct, &moved), false)?;
    let mut e_big = r0.clone();
    e_big[32..64].copy_from_slice(&ELL);
    c.add("recovery share challenge e = ℓ", rs(0, 0, position, &ct, &e_big), false)?;
    let mut p_odd = r0.clone();
    p_odd[..32].copy_from_slice(&FIELD_P);
    c.add("recovery share point non-canonical", rs(0, 0, position, &ct, &p_odd), false)?;
    c.add("recovery share of 97 bytes", rs(0, 0, position, &ct, &[r0.clone(), vec![0]].concat()), false)?;
    let mut other_commitments = rs(0, 0, position, &ct, &r0);
    if let Case::RecoveryShare { commitments, .. } = &mut other_commitments {
        *commitments = splits[2].commitments.clone();
    }
    c.add("recovery share against another seat's commitments", other_commitments, false)?;
    let mut more = rs(0, 0, position, &ct, &r0);
    if let Case::RecoveryShare { holders, .. } = &mut more {
        *holders = n + 1;
    }
    c.add("recovery share, commitments read for one holder more", more, false)?;
    c.add_flips("recovery share, one bit 0 flipped", rs(0, 0, position, &ct, &r0), "share", 0)?;
    // Only the holder's own commitment is checked: each of its bytes flipped.
    for byte in 0..32 {
        let mut case = rs(2, 1, position, &ct, &rec[1].1);
        if let Case::RecoveryShare { commitments, .. } = &mut case {
            commitments[32 + byte] ^= 1;
        }
        c.add(&format!("recovery share, its commitment's byte {byte} bit 0 flipped"), case, false)?;
    }
    c.add_flips(
        "recovery share, ciphertext bit 0 flipped",
        rs(255, 3, position, &ct, &rec[3].1),
        "ciphertext",
        0,
    )?;

    // Openings with the recovered share.
    let all = c.shares(t, position, &ct, rng);
    let dec: Vec<(u8, Vec<u8>)> = all.iter().filter(|(s, _)| *s != 1).cloned().collect();
    let ids = codes(pack52);
    let ro =
        |seat: u8, position: u16, ct: &Ciphertext, recovery: &[(u8, Vec<u8>)], shares: &[(u8, Vec<u8>)]| {
            Case::RecoverOpen {
                table: t,
                hand,
                seat,
                seats: n,
                commitments: wc.clone(),
                position,
                ciphertext: ct.to_bytes().to_vec(),
                recovery: recovery.to_vec(),
                shares: shares.to_vec(),
                cards: ids.clone(),
            }
        };
    let opened = c.add("open with seat 1's share recovered", ro(1, position, &ct, &rec, &dec), true)?;
    if opened["ok"].as_u64() != Some(u64::from(card.code())) {
        return Err("the recovered share does not open the masked card".into());
    }
    let reordered = vec![rec[3].clone(), rec[1].clone(), rec[0].clone(), rec[2].clone()];
    c.add("open with the recovery shares in another order", ro(1, position, &ct, &reordered, &dec), true)?;
    c.add("open with the withholder's own share given too", ro(1, position, &ct, &rec, &all), true)?;
    let without = |h: u8| rec.iter().filter(|(x, _)| *x != h).cloned().collect::<Vec<_>>();
    c.add("open with seat 2's recovery share missing", ro(1, position, &ct, &without(2), &dec), false)?;
    c.add("open with the dealer's recovery share missing", ro(1, position, &ct, &without(255), &dec), false)?;
    let mut swapped = rec.clone();
    let tmp = swapped[0].1.clone();
    swapped[0].1 = swapped[1].1.clone();
    swapped[1].1 = tmp;
    c.add("open with two holders' recovery shares swapped", ro(1, position, &ct, &swapped, &dec), false)?;
    let mut wrong = rec.clone();
    wrong[2].1 =
        splits[1].pieces[2].recovery_share(&hand, w, holders[2], position + 1, &ct, rng).to_bytes().to_vec();
    c.add("open with a recovery share made for another position", ro(1, position, &ct, &wrong, &dec), false)?;
    let no3: Vec<(u8, Vec<u8>)> = dec.iter().filter(|(s, _)| *s != 3).cloned().collect();
    c.add("open with seat 3's decryption share missing", ro(1, position, &ct, &rec, &no3), false)?;
    let mut lying = dec.clone();
    lying[0].1 =
        SecretShare::generate(rng).decryption_share(&hand, Seat(0), position, &ct, rng).to_bytes().to_vec();
    c.add("open with a lying decryption share", ro(1, position, &ct, &rec, &lying), false)?;
    c.add("open recovering seat 2 with seat 1's recovery shares", ro(2, position, &ct, &rec, &dec), false)?;
    c.add(
        "open recovering a seat beyond the table (one holder more)",
        ro(9, position, &ct, &rec, &dec),
        false,
    )?;
    let mut other_commitments = ro(1, position, &ct, &rec, &dec);
    if let Case::RecoverOpen { commitments, .. } = &mut other_commitments {
        *commitments = splits[2].commitments.clone();
    }
    c.add("open against another seat's piece commitments", other_commitments, false)?;
    let mut replay = ro(1, position, &ct, &rec, &dec);
    if let Case::RecoverOpen { hand, .. } = &mut replay {
        *hand = OTHER_HAND;
    }
    c.add("open with the recovery replayed in another hand", replay, false)?;
    c.add("open with the recovery at another position", ro(1, position + 1, &ct, &rec, &dec), false)?;
    let mut missing_card = ro(1, position, &ct, &rec, &dec);
    if let Case::RecoverOpen { cards, .. } = &mut missing_card {
        cards.retain(|&id| id != card.code());
    }
    c.add("open a recovered card missing from the card table", missing_card, false)?;
    Ok(())
}
