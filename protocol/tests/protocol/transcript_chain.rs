//! The signed hash chain: the builder's events verify one by one; any
//! change to a body, seq, prev or signature, and any dropped, repeated or
//! reordered event, is refused with the check it fails; JSON lines
//! round-trip. Bursts: one signature on the last event, the unsigned run
//! bounded, a player's signature verifications one per reliance point.

use crate::audit_common;

use audit_common::{raw, Hand, Opts, ROOM};
use claw_protocol::audit::AuditCheck;
use claw_protocol::limits::MAX_UNSIGNED_RUN;
use claw_protocol::messages::{DecodeError, EventBody, ServerMessage, MAX_FRAME_BYTES};
use claw_protocol::sign::{signed_message, Purpose};
use claw_protocol::transcript::*;
use claw_protocol::{sha256, Digest, HandId, Identity};
use proptest::prelude::*;

fn hand() -> (Hand, Transcript) {
    let h = Hand::new(Opts::default());
    let t = h.transcript();
    (h, t)
}

#[test]
fn builder_output_verifies_event_by_event() {
    let (h, t) = hand();
    assert_eq!(t.events.len(), h.bodies.len());
    let mut v = TranscriptVerifier::new(h.dealer.id());
    for (i, (e, b)) in t.events.iter().zip(&h.bodies).enumerate() {
        assert_eq!(e.seq, i as u64);
        assert_eq!(v.accept(e).unwrap(), *b);
        assert_eq!(v.last_hash(), e.hash());
    }
    assert_eq!(v.hand_id(), Some(h.hand_id));
    assert_eq!(v.next_seq(), t.events.len() as u64);
    assert_eq!(t.verify_chain(&h.dealer.id()).unwrap(), h.bodies);
}

#[test]
fn chain_links_and_hash_are_as_specified() {
    let (h, t) = hand();
    assert_eq!(t.events[0].prev, GENESIS_PREV);
    assert_eq!(GENESIS_PREV, Digest([0; 32]));
    for w in t.events.windows(2) {
        assert_eq!(w[1].prev, w[0].hash());
    }
    let e = &t.events[3];
    // signed bytes = "claw/v1/event" || 0x00 || hand_id || seq BE || prev || SHA-256(body text)
    let mut expected = b"claw/v1/event\0".to_vec();
    expected.extend_from_slice(&h.hand_id.0);
    expected.extend_from_slice(&3u64.to_be_bytes());
    expected.extend_from_slice(&e.prev.0);
    expected.extend_from_slice(&sha256(&[e.body.as_str().as_bytes()]).0);
    assert_eq!(signed_message(Purpose::Event, &e.signing_body()), expected);
    assert_eq!(e.hash(), sha256(&[&expected]));
    claw_protocol::verify(&h.dealer.id(), Purpose::Event, &e.signing_body(), e.sig.as_ref().unwrap())
        .unwrap();
}

#[test]
fn builder_state_and_raw_bodies() {
    let dealer = Identity::from_seed([1; 32]);
    let mut b = TranscriptBuilder::new(HandId([2; 16]));
    assert_eq!(b.next_seq(), 0);
    assert_eq!(b.last_hash(), GENESIS_PREV);
    let text = r#"{"type":"reveal",   "openings":[]}"#;
    let e = b.append_raw(&dealer, raw(text)).unwrap();
    assert_eq!(e.body.as_str(), text);
    assert_eq!(b.next_seq(), 1);
    assert_eq!(b.last_hash(), e.hash());
    assert_eq!(b.hand_id(), HandId([2; 16]));
    assert_eq!(b.transcript().events.len(), 1);
    // An event too large for a frame is refused and not appended.
    let huge = format!(r#"{{"type":"reveal","openings":[],"pad":"{}"}}"#, "p".repeat(MAX_FRAME_BYTES));
    assert!(matches!(b.append_raw(&dealer, raw(&huge)), Err(TranscriptError::Encode { seq: 1, .. })));
    assert_eq!(b.next_seq(), 1);
    // The builder checks the limit on the counted length: one byte over is
    // refused, the largest body that fits is accepted.
    let fits = |pad: usize| raw(&format!(r#"{{"type":"reveal","openings":[],"pad":"{}"}}"#, "p".repeat(pad)));
    let probe = EventEnvelope::sign(&dealer, HandId([2; 16]), 1, b.last_hash(), fits(0));
    let room = MAX_FRAME_BYTES - probe.frame_len();
    assert!(matches!(b.append_raw(&dealer, fits(room + 1)), Err(TranscriptError::Encode { seq: 1, .. })));
    let e = b.append_raw(&dealer, fits(room)).unwrap();
    assert_eq!(e.encode().unwrap().len(), MAX_FRAME_BYTES);
}

#[test]
fn the_counted_frame_length_is_the_encoded_one() {
    let dealer = Identity::from_seed([1; 32]);
    for seq in [0u64, 9, 10, 99, 100, 12_345, u64::MAX] {
        for body in [r#"{"type":"reveal","openings":[]}"#, r#"{"type":"reveal", "openings":[],"x":"é"}"#] {
            let mut e = EventEnvelope::unsigned(HandId([7; 16]), seq, Digest([3; 32]), raw(body));
            assert_eq!(e.frame_len(), e.encode().unwrap().len(), "unsigned, seq {seq}");
            e.seal(&dealer);
            assert_eq!(e.frame_len(), e.encode().unwrap().len(), "signed, seq {seq}");
        }
    }
}

#[test]
fn verifier_names_each_broken_link() {
    let (h, t) = hand();
    let d = h.dealer.id();
    let check = |events: &[EventEnvelope]| -> Result<(), TranscriptError> {
        let mut v = TranscriptVerifier::new(d);
        for e in events {
            v.accept(e)?;
        }
        Ok(())
    };
    let mut dropped = t.events.clone();
    dropped.remove(2);
    assert_eq!(check(&dropped), Err(TranscriptError::Sequence { expected: 2, got: 3 }));
    let mut dup = t.events.clone();
    dup.insert(2, dup[1].clone());
    assert_eq!(check(&dup), Err(TranscriptError::Sequence { expected: 2, got: 1 }));
    let mut swapped = t.events.clone();
    swapped.swap(2, 3);
    assert_eq!(check(&swapped), Err(TranscriptError::Sequence { expected: 2, got: 3 }));
    // Renumbered to hide a drop: the chain breaks.
    let mut renumbered = t.events.clone();
    renumbered.remove(2);
    renumbered[2].seq = 2;
    // (the seq is signed, so re-sign as the dealer would have to)
    let e = &renumbered[2];
    renumbered[2] = EventEnvelope::sign(&h.dealer, e.hand_id, 2, e.prev, e.body.clone());
    assert_eq!(check(&renumbered), Err(TranscriptError::Chain { seq: 2 }));
    for err in [TranscriptError::Sequence { expected: 0, got: 1 }, TranscriptError::Chain { seq: 2 }] {
        assert_eq!(err.check(), AuditCheck::HashChain);
    }
    // An event of another hand.
    let mut v = TranscriptVerifier::for_hand(d, HandId([0x99; 16]));
    assert!(matches!(v.accept(&t.events[0]), Err(TranscriptError::WrongHand { .. })));
    // Another dealer's key: the chain is fine, the signature fails where
    // the player relies on it.
    let mut v = TranscriptVerifier::new(Identity::from_seed([5; 32]).id());
    v.accept(&t.events[0]).unwrap();
    let err = v.confirm().unwrap_err();
    assert!(matches!(err, TranscriptError::Signature { seq: 0, .. }));
    assert_eq!(err.check(), AuditCheck::DealerSignatures);
    // A failed confirmation leaves the event unconfirmed.
    assert_eq!((v.unconfirmed(), v.signatures_verified()), (1, 0));
    // A refused event leaves the verifier as it was.
    let mut v = TranscriptVerifier::new(d);
    assert!(v.accept(&t.events[1]).is_err());
    assert_eq!(v.next_seq(), 0);
}

#[test]
fn a_signed_body_that_is_not_an_event_is_named() {
    let dealer = Identity::from_seed([1; 32]);
    let mut b = TranscriptBuilder::new(HandId([2; 16]));
    let e = b.append_raw(&dealer, raw(r#"{"type":"mystery"}"#)).unwrap();
    let err = TranscriptVerifier::new(dealer.id()).accept(&e).unwrap_err();
    assert!(matches!(err, TranscriptError::Body { seq: 0, source: DecodeError::UnknownType { .. } }));
    assert_eq!(err.check(), AuditCheck::Structure);
}

#[test]
fn jsonl_round_trip_with_header() {
    let (h, t) = hand();
    let text = t.to_jsonl().unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), t.events.len() + 1);
    assert!(lines[0].starts_with(r#"{"type":"transcript-header","#), "{}", lines[0]);
    assert!(lines[1].starts_with(r#"{"type":"event","#), "{}", lines[1]);
    // Every event line is exactly the wire frame.
    assert_eq!(lines[1], ServerMessage::Event(t.events[0].clone()).encode().unwrap());
    let back = Transcript::from_jsonl(&text).unwrap();
    assert_eq!(back, t);
    let header = back.header.as_ref().unwrap();
    assert_eq!(header.dealer, h.dealer.id());
    assert_eq!(header.room_id, ROOM);
    assert_eq!(header.version, "claw/1");
    back.verify_chain(&h.dealer.id()).unwrap();
    // Without header, and with blank lines and CRLF.
    let bare: String = lines[1..].iter().map(|l| format!("{l}\r\n\n")).collect();
    let back = Transcript::from_jsonl(&bare).unwrap();
    assert_eq!(back.header, None);
    assert_eq!(back.events, t.events);
    assert_eq!(back.hand_id, h.hand_id);
    // Through io::Write / BufRead.
    let mut buf = Vec::new();
    t.write_jsonl(&mut buf).unwrap();
    assert_eq!(Transcript::read_jsonl(&buf[..]).unwrap(), t);
}

#[test]
fn jsonl_refuses_bad_files() {
    let (_, t) = hand();
    let text = t.to_jsonl().unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(Transcript::from_jsonl(""), Err(TranscriptError::Empty));
    // Header not first.
    let moved = format!("{}\n{}\n", lines[1], lines[0]);
    assert!(matches!(Transcript::from_jsonl(&moved), Err(TranscriptError::Header(_))));
    // Unknown line type, malformed line, oversize line: named with the line number.
    let e = Transcript::from_jsonl(&format!("{}\n{{\"type\":\"your-turn\"}}\n", lines[0])).unwrap_err();
    assert!(matches!(e, TranscriptError::Line { line: 2, source: DecodeError::UnknownType { .. } }), "{e:?}");
    let e = Transcript::from_jsonl(&format!("{}\n{{\"type\":\"event\"\n", lines[0])).unwrap_err();
    assert!(matches!(e, TranscriptError::Line { line: 2, source: DecodeError::Malformed { .. } }), "{e:?}");
    let e = Transcript::from_jsonl(&"x".repeat(MAX_FRAME_BYTES + 1)).unwrap_err();
    assert!(matches!(e, TranscriptError::Line { line: 1, source: DecodeError::Oversize { .. } }), "{e:?}");
    // Another protocol version.
    let v2 = lines[0].replace("claw/1", "claw/2");
    assert!(matches!(Transcript::from_jsonl(&v2), Err(TranscriptError::Header(_))));
    // Events of two hands in one file.
    let other = {
        let mut h = Hand::new(Opts::default());
        h.hand_id = HandId([0x77; 16]);
        h.transcript()
    };
    let mixed = format!("{}\n{}\n", lines[1], other.events[1].encode().unwrap());
    assert!(matches!(Transcript::from_jsonl(&mixed), Err(TranscriptError::WrongHand { .. })));
}

#[derive(Debug, Clone)]
enum Tamper {
    /// Replace one character of the body text (kept only if still JSON).
    BodyChar(prop::sample::Index, char),
    /// Another sequence number.
    Seq(u64),
    /// Flip a bit of prev.
    Prev(prop::sample::Index, u8),
    /// Flip a bit of the signature.
    Sig(prop::sample::Index, u8),
    /// Flip a bit of the hand id.
    Hand(prop::sample::Index, u8),
}

fn tamper() -> impl Strategy<Value = Tamper> {
    prop_oneof![
        (any::<prop::sample::Index>(), prop::char::range(' ', '~')).prop_map(|(i, c)| Tamper::BodyChar(i, c)),
        (0u64..40).prop_map(Tamper::Seq),
        (any::<prop::sample::Index>(), 0u8..8).prop_map(|(i, b)| Tamper::Prev(i, b)),
        (any::<prop::sample::Index>(), 0u8..8).prop_map(|(i, b)| Tamper::Sig(i, b)),
        (any::<prop::sample::Index>(), 0u8..8).prop_map(|(i, b)| Tamper::Hand(i, b)),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// Any change to one event is refused, and the error names the check:
    /// body or signature → dealer-signatures (a body no longer an event:
    /// structure, live); seq, prev, hand → hash-chain.
    #[test]
    fn any_tampered_event_is_refused_with_its_check(which in any::<prop::sample::Index>(), t in tamper()) {
        let (h, tr) = hand();
        let i = which.index(tr.events.len());
        let mut e = tr.events[i].clone();
        let expected = match &t {
            Tamper::BodyChar(at, c) => {
                let mut s: Vec<char> = e.body.as_str().chars().collect();
                let k = at.index(s.len());
                prop_assume!(s[k] != *c);
                s[k] = *c;
                match claw_protocol::messages::RawJson::from_string(s.into_iter().collect()) {
                    // Live, the body is parsed on arrival and the signature
                    // checked on reliance: a body that is no longer an event
                    // fails its structure first.
                    Ok(r) if EventBody::decode(r.as_str()).is_err() => { e.body = r; AuditCheck::Structure }
                    Ok(r) => { e.body = r; AuditCheck::DealerSignatures }
                    // No longer JSON: the frame would not even decode.
                    Err(DecodeError::Malformed { .. }) => return Ok(()),
                    Err(other) => panic!("{other:?}"),
                }
            }
            Tamper::Seq(s) => {
                prop_assume!(*s != e.seq);
                e.seq = *s;
                AuditCheck::HashChain
            }
            Tamper::Prev(at, bit) => {
                e.prev.0[at.index(32)] ^= 1 << bit;
                AuditCheck::HashChain
            }
            Tamper::Sig(at, bit) => {
                e.sig.as_mut().unwrap().0[at.index(64)] ^= 1 << bit;
                AuditCheck::DealerSignatures
            }
            Tamper::Hand(at, bit) => {
                e.hand_id.0[at.index(16)] ^= 1 << bit;
                AuditCheck::HashChain
            }
        };
        // Live verification, event by event.
        let mut v = TranscriptVerifier::for_hand(h.dealer.id(), h.hand_id);
        for prior in &tr.events[..i] {
            v.accept(prior).unwrap();
        }
        // The player relies on the chain right after the tampered event.
        let err = v.accept(&e).and_then(|_| v.confirm()).unwrap_err();
        prop_assert_eq!(err.check(), expected, "{:?}", err);
        // The offline audit refuses it too (signatures are checked first
        // there, so a changed seq/prev/hand fails the signature).
        let mut bad = tr.clone();
        bad.events[i] = e;
        let opts = claw_protocol::audit::AuditOptions { dealer: Some(h.dealer.id()), ..Default::default() };
        let a = claw_protocol::audit::audit(&bad, &opts).unwrap_err();
        prop_assert!(matches!(a.check, AuditCheck::DealerSignatures | AuditCheck::HashChain), "{:?}", a);
    }

    /// Any byte changed in a transcript file is refused somewhere: parsing,
    /// signatures or chain (or it was in insignificant whitespace).
    #[test]
    fn any_changed_byte_of_the_file_is_detected(at in any::<prop::sample::Index>(), c in prop::char::range(' ', '~')) {
        let (h, tr) = hand();
        let text = tr.to_jsonl().unwrap();
        let mut chars: Vec<char> = text.chars().collect();
        let k = at.index(chars.len());
        prop_assume!(chars[k] != c && chars[k] != '\n');
        chars[k] = c;
        let changed: String = chars.into_iter().collect();
        let opts = claw_protocol::audit::AuditOptions { dealer: Some(h.dealer.id()), ..Default::default() };
        match claw_protocol::audit::audit_jsonl(&changed, &opts) {
            Err(_) => {}
            Ok(r) => {
                // Only possible if the change did not alter any signed value
                // (e.g. the unsigned room name of the header), or dropped a
                // signature a later one covers (a renamed `sig` member): the
                // signed events are the same, and the hand's last signature too.
                let unsigned = |events: &[EventEnvelope]| -> Vec<EventEnvelope> {
                    events.iter().map(|e| EventEnvelope { sig: None, ..e.clone() }).collect()
                };
                let got = Transcript::from_jsonl(&changed).unwrap().events;
                prop_assert_eq!(unsigned(&got), unsigned(&tr.events));
                prop_assert_eq!(got.last().map(|e| e.sig), tr.events.last().map(|e| e.sig));
                prop_assert_eq!(r.hand.hand_id, h.hand_id);
            }
        }
    }
}

#[test]
fn body_bytes_are_what_is_signed_not_their_meaning() {
    // Same meaning, different bytes: the signature no longer verifies.
    let (h, t) = hand();
    let mut e = t.events[0].clone();
    let respaced = e.body.as_str().replacen(':', ": ", 1);
    let reparsed = EventBody::decode(&respaced).unwrap();
    assert_eq!(reparsed, EventBody::decode(e.body.as_str()).unwrap());
    e.body = raw(&respaced);
    assert!(e.verify_signature(&h.dealer.id()).is_err());
}

fn reveal() -> EventBody {
    EventBody::decode(r#"{"type":"reveal","openings":[]}"#).unwrap()
}

#[test]
fn a_burst_is_signed_once_at_its_end() {
    let dealer = Identity::from_seed([1; 32]);
    let mut b = TranscriptBuilder::new(HandId([2; 16]));
    let burst = b.append_burst(&dealer, &[reveal(), reveal(), reveal()]).unwrap();
    let signed: Vec<bool> = burst.iter().map(|e| e.sig.is_some()).collect();
    assert_eq!(signed, [false, false, true]);
    // An unsigned event's frame has no `sig` member; its hash is the same
    // as if it were signed.
    let frame = burst[0].encode().unwrap();
    assert!(!frame.contains("\"sig\""), "{frame}");
    assert_eq!(ServerMessage::decode(&frame).unwrap(), ServerMessage::Event(burst[0].clone()));
    let mut signed0 = burst[0].clone();
    signed0.seal(&dealer);
    assert_eq!(signed0.hash(), burst[0].hash());
    assert!(matches!(burst[0].verify_signature(&dealer.id()), Err(TranscriptError::Unsigned { seq: 0 })));
    // The player checks the chain of all three, then one signature.
    let mut v = TranscriptVerifier::new(dealer.id());
    for e in &burst[..2] {
        v.accept(e).unwrap();
    }
    // Asked to act before the burst's end: the events are unconfirmed.
    assert_eq!(v.unconfirmed(), 2);
    assert_eq!(v.confirm(), Err(TranscriptError::Unsigned { seq: 1 }));
    assert_eq!(TranscriptError::Unsigned { seq: 1 }.check(), AuditCheck::DealerSignatures);
    v.accept(&burst[2]).unwrap();
    assert_eq!(v.signatures_verified(), 0, "not verified until relied on");
    v.confirm().unwrap();
    v.confirm().unwrap();
    assert_eq!((v.signatures_verified(), v.unconfirmed()), (1, 0), "verified once");
    b.transcript().verify_chain(&dealer.id()).unwrap();
}

#[test]
fn a_forged_burst_end_fails_on_reliance() {
    let dealer = Identity::from_seed([1; 32]);
    let mut b = TranscriptBuilder::new(HandId([2; 16]));
    let mut burst = b.append_burst(&dealer, &[reveal(), reveal()]).unwrap();
    burst[1].sig = Some(Identity::from_seed([9; 32]).sign(Purpose::Event, &burst[1].signing_body()));
    let mut v = TranscriptVerifier::new(dealer.id());
    v.accept(&burst[0]).unwrap();
    v.accept(&burst[1]).unwrap();
    assert!(matches!(v.confirm(), Err(TranscriptError::Signature { seq: 1, .. })));
}

#[test]
fn the_builder_bounds_the_unsigned_run() {
    let dealer = Identity::from_seed([1; 32]);
    let mut b = TranscriptBuilder::new(HandId([2; 16]));
    let long: Vec<EventBody> = (0..2 * MAX_UNSIGNED_RUN + 5).map(|_| reveal()).collect();
    let events = b.append_burst(&dealer, &long).unwrap();
    let signed: Vec<usize> = (0..events.len()).filter(|i| events[*i].sig.is_some()).collect();
    assert_eq!(signed, [MAX_UNSIGNED_RUN, 2 * MAX_UNSIGNED_RUN + 1, 2 * MAX_UNSIGNED_RUN + 4]);
    for e in (0..3).map(|_| b.append_unsigned(&dealer, &reveal()).unwrap()) {
        assert!(e.sig.is_none());
    }
    b.transcript().verify_chain(&dealer.id()).unwrap_err();
    // A burst that cannot be sent whole is not appended at all.
    let before = b.next_seq();
    let opening = claw_protocol::CardOpening {
        position: 0,
        card: "As".parse().unwrap(),
        salt: claw_protocol::Salt([0; 32]),
    };
    let huge = EventBody::Reveal(claw_protocol::messages::Reveal { openings: vec![opening; 1000] });
    let last = b.last_hash();
    assert!(
        matches!(b.append_burst(&dealer, &[reveal(), huge]), Err(TranscriptError::Encode { seq, .. }) if seq == before + 1)
    );
    assert_eq!((b.next_seq(), b.last_hash()), (before, last));
}

#[test]
fn a_player_refuses_a_run_over_the_limit_and_verifies_before_holding_too_many() {
    let dealer = Identity::from_seed([1; 32]);
    // Bursts of 5 events, never relied on: the player verifies a signature
    // whenever it would hold more than MAX_UNSIGNED_RUN unconfirmed events.
    let mut b = TranscriptBuilder::new(HandId([2; 16]));
    for _ in 0..20 {
        b.append_burst(&dealer, &[reveal(), reveal(), reveal(), reveal(), reveal()]).unwrap();
    }
    let mut v = TranscriptVerifier::new(dealer.id());
    for e in &b.transcript().events {
        v.accept(e).unwrap();
        assert!(v.unconfirmed() <= MAX_UNSIGNED_RUN as u64);
    }
    let at_end = v.signatures_verified();
    assert!(at_end > 0 && at_end < 20, "{at_end} of 20 burst signatures verified");
    // The dealer leaves out signatures: the event past the run is refused
    // (and not accepted).
    let mut events = b.transcript().events.clone();
    for e in &mut events {
        e.sig = None;
    }
    let mut v = TranscriptVerifier::new(dealer.id());
    let err = events.iter().find_map(|e| v.accept(e).err()).unwrap();
    assert_eq!(err, TranscriptError::UnsignedRun { seq: MAX_UNSIGNED_RUN as u64 });
    assert_eq!(err.check(), AuditCheck::DealerSignatures);
    assert_eq!(v.next_seq(), MAX_UNSIGNED_RUN as u64);
}
