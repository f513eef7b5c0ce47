//! One dealer signature per burst (SPEC.md §10.1, §10.3, §11.2 check 1):
//! the engine signs only the last event of each burst; seat 0 checks the
//! chain on every event and verifies one signature where it relies on it
//! (before it acts, at the hand's end). A burst end left unsigned, a forged
//! or bad signature, an unsigned run over `MAX_UNSIGNED_RUN`, a `your-turn`
//! with unconfirmed events and a body changed inside a burst are each
//! caught by their named check, live and (where the transcript shows it)
//! offline.

use claw_audit::Auditor;
use claw_engine::testing::{PlayedHand, Table};
use claw_protocol::audit::AuditCheck;
use claw_protocol::limits::MAX_UNSIGNED_RUN;
use claw_protocol::messages::{EventBody, RawJson};
use claw_protocol::sign::Purpose;
use claw_protocol::transcript::Transcript;
use claw_protocol::{Identity, Seat};
use serde_json::Value;

use super::{expect, holdem_hand, live_failure, offline_failure, signed, LivePlayer};

/// The index of the event after which seat 0 is first asked to act: the
/// end of a burst.
pub(super) fn before_my_turn(h: &PlayedHand) -> usize {
    h.turns.iter().find(|(_, s, _)| *s == Seat(0)).map(|(i, _, _)| i - 1).expect("seat 0 acts")
}

/// The indices of seat 0's reliance points: the event before each of its
/// turns, and `game-end`.
fn reliance_points(h: &PlayedHand) -> Vec<usize> {
    let mut r: Vec<usize> = h.turns.iter().filter(|(_, s, _)| *s == Seat(0)).map(|(i, _, _)| i - 1).collect();
    r.push(h.bodies.len() - 1);
    r
}

fn strip(t: &mut Transcript, i: usize) {
    t.events[i].sig = None;
}

#[test]
fn the_engine_signs_the_last_event_of_each_burst_and_nothing_else() {
    let (sim, h) = holdem_hand(20);
    let t = &h.transcript;
    let signed_at: Vec<usize> = (0..t.events.len()).filter(|i| t.events[*i].sig.is_some()).collect();
    assert!(signed_at.len() < t.events.len(), "some events ride in a burst: {signed_at:?}");
    // Before every turn and at the end, the newest event is signed.
    for (i, seat, _) in &h.turns {
        assert!(t.events[i - 1].sig.is_some(), "event {} before seat {}'s turn is signed", i - 1, seat.0);
    }
    assert!(t.events.last().unwrap().sig.is_some(), "game-end is signed");
    // Re-signing the bodies reproduces the engine's bursts byte for byte.
    assert_eq!(signed(&sim, &h).events, t.events);
    assert_eq!(live_failure(&sim, &h, t), None);
    assert_eq!(offline_failure(&sim, &h, t), None);
}

#[test]
fn a_burst_end_left_unsigned_before_my_turn() {
    // The dealer asks seat 0 to act on events no signature covers: the
    // player refuses before acting. The transcript itself is still covered
    // by the later signatures, so the offline audit passes it.
    let (sim, h) = holdem_hand(21);
    let mut t = signed(&sim, &h);
    strip(&mut t, before_my_turn(&h));
    assert_eq!(live_failure(&sim, &h, &t), Some(AuditCheck::DealerSignatures), "live, before acting");
    assert_eq!(offline_failure(&sim, &h, &t), None, "offline: every event is covered by a later signature");
}

#[test]
fn the_hands_end_left_unsigned() {
    let (sim, h) = holdem_hand(22);
    let mut t = signed(&sim, &h);
    let last = t.events.len() - 1;
    strip(&mut t, last);
    expect("unsigned game-end", &sim, &h, &t, AuditCheck::DealerSignatures, AuditCheck::DealerSignatures);
}

#[test]
fn a_forged_signature_on_a_burst_end_is_caught_before_acting_and_offline() {
    let (sim, h) = holdem_hand(23);
    let mut t = signed(&sim, &h);
    let i = before_my_turn(&h);
    let mallory = Identity::from_seed([0x66; 32]);
    t.events[i].sig = Some(mallory.sign(Purpose::Event, &t.events[i].signing_body()));
    // Live: seat 0 fails exactly at that reliance point, before acting.
    let mut p = LivePlayer::new(&sim, 0);
    for e in &t.events[..i] {
        p.feed(&h, e).unwrap();
    }
    p.v.on_event(&t.events[i]).expect("the chain is intact; the signature is checked on reliance");
    let e = p.v.before_acting(&h.hand_id).unwrap_err();
    assert_eq!((e.check, e.seq), (AuditCheck::DealerSignatures, i as u64), "{e}");
    // Offline: the batch fails and names the event.
    let err = Auditor::new(Some(sim.dealer.id())).audit(&t, None).unwrap_err();
    assert_eq!(err.check, AuditCheck::DealerSignatures);
    assert!(err.detail.contains(&format!("seq {i}:")), "{}", err.detail);
}

#[test]
fn a_bad_intermediate_signature_is_left_to_the_offline_audit() {
    // A signed burst end that seat 0 never relies on (another seat acts
    // next, and a later signature covers it before seat 0's next reliance
    // point): the live player does not verify it; the offline audit does,
    // and names its seq.
    let (sim, h) = holdem_hand(24);
    let mut t = signed(&sim, &h);
    let relied = reliance_points(&h);
    let i = (1..t.events.len())
        .filter(|i| t.events[*i].sig.is_some() && !relied.contains(i))
        .find(|i| {
            let next_signed = (i + 1..t.events.len()).find(|j| t.events[*j].sig.is_some());
            let next_relied = relied.iter().copied().find(|r| r > i);
            matches!((next_signed, next_relied), (Some(s), Some(r)) if s <= r)
        })
        .expect("an intermediate burst end");
    t.events[i].sig.as_mut().unwrap().0[5] ^= 0x20;
    assert_eq!(live_failure(&sim, &h, &t), None, "live: not relied on, not verified");
    let err = Auditor::new(Some(sim.dealer.id())).audit(&t, None).unwrap_err();
    assert_eq!(err.check, AuditCheck::DealerSignatures);
    assert!(err.detail.contains(&format!("seq {i}:")), "{}", err.detail);
}

#[test]
fn an_unsigned_run_over_the_limit() {
    // Every signature but the end's removed: the chain is intact and the
    // end is signed, but more than MAX_UNSIGNED_RUN events go unsigned.
    let (sim, h) = (0..40)
        .map(holdem_hand)
        .find(|(_, h)| h.bodies.len() > MAX_UNSIGNED_RUN + 2)
        .expect("a hand longer than the run limit");
    let mut t = signed(&sim, &h);
    for i in 0..t.events.len() - 1 {
        strip(&mut t, i);
    }
    expect("unsigned run", &sim, &h, &t, AuditCheck::DealerSignatures, AuditCheck::DealerSignatures);
    let err = Auditor::new(Some(sim.dealer.id())).audit(&t, None).unwrap_err();
    assert!(err.detail.contains(&format!("event {}:", MAX_UNSIGNED_RUN)), "{}", err.detail);
    // Live, without a turn in between: refused at the same event.
    let quiet = PlayedHand { turns: Vec::new(), ..h.clone() };
    let mut p = LivePlayer::new(&sim, 0);
    let e = t.events.iter().find_map(|e| p.feed(&quiet, e).err()).unwrap();
    assert_eq!((e.check, e.seq), (AuditCheck::DealerSignatures, MAX_UNSIGNED_RUN as u64), "{e}");
}

#[test]
fn a_your_turn_while_events_are_unconfirmed() {
    // The dealer sends `your-turn` before the last (signed) event of the
    // burst: seat 0 holds an unsigned event and refuses to act on it.
    let (sim, h) = (0..40)
        .map(holdem_hand)
        .find(|(_, h)| {
            h.turns
                .iter()
                .any(|(i, s, _)| *s == Seat(0) && *i >= 2 && h.transcript.events[i - 2].sig.is_none())
        })
        .expect("a burst of two or more events before seat 0's turn");
    let t = &h.transcript;
    let (i, _, _) =
        h.turns.iter().find(|(i, s, _)| *s == Seat(0) && *i >= 2 && t.events[i - 2].sig.is_none()).unwrap();
    let mut p = LivePlayer::new(&sim, 0);
    for e in &t.events[..i - 1] {
        p.feed(&h, e).unwrap();
    }
    let e = p.v.before_acting(&h.hand_id).unwrap_err();
    assert_eq!((e.check, e.seq), (AuditCheck::DealerSignatures, (i - 2) as u64), "{e}");
}

#[test]
fn a_body_changed_inside_a_burst() {
    // An unsigned event's body altered in transit: no signature is on it,
    // but the next event's `prev` (covered by the burst's signature) no
    // longer matches.
    let (sim, h) = holdem_hand(25);
    let mut t = signed(&sim, &h);
    let i = (0..t.events.len() - 1)
        .find(|i| t.events[*i].sig.is_none() && matches!(h.bodies[*i], EventBody::Chips(_)))
        .expect("an unsigned chips event");
    let mut body: Value = serde_json::from_str(t.events[i].body.as_str()).unwrap();
    body["moves"][0]["amount"] = Value::from(body["moves"][0]["amount"].as_u64().unwrap() + 1);
    t.events[i].body = RawJson::from_value(&body).unwrap();
    expect("body in a burst", &sim, &h, &t, AuditCheck::HashChain, AuditCheck::HashChain);
}

#[test]
fn a_player_verifies_one_signature_per_reliance_point() {
    // Counted on the engine's transcript: the dealer's signatures are one
    // per burst, seat 0's verifications one per turn and one at the end
    // (no event is verified twice).
    for seed in 0..5 {
        let (sim, h) = holdem_hand(seed);
        let t = &h.transcript;
        let mut p = LivePlayer::new(&sim, 0);
        for e in &t.events {
            p.feed(&h, e).unwrap();
        }
        assert_eq!(p.v.signatures_verified(), reliance_points(&h).len() as u64, "seed {seed}");
        let bursts = t.events.iter().filter(|e| e.sig.is_some()).count();
        assert!(bursts < t.events.len());
    }
}

#[test]
fn signatures_per_six_player_check_call_holdem_hand() {
    // The hand of the issue: six players who check or call to the end.
    // Before bursts every event was signed and every player verified each;
    // now the dealer signs once per burst and each player once per
    // reliance point. Printed for docs/performance.md.
    let mut sim = Table::new("texas-holdem", &Value::Null, 6, 7).unwrap();
    let mut choose = |turn: &claw_engine::testing::TurnInfo<'_>, _: &mut rand_chacha::ChaCha20Rng| {
        let kind = |a: &Value, k: &str| a.get("type").and_then(Value::as_str) == Some(k);
        let pick = turn
            .actions
            .iter()
            .find(|c| kind(&c.action, "check"))
            .or_else(|| turn.actions.iter().find(|c| kind(&c.action, "call")));
        pick.map(|c| c.action.clone()).ok_or_else(|| "no check or call".to_owned())
    };
    let h = sim.play_hand(&mut choose).unwrap();
    let events = h.transcript.events.len();
    let dealer_signs = h.transcript.events.iter().filter(|e| e.sig.is_some()).count();
    let mut per_player = Vec::new();
    for seat in 0..6 {
        let mut p = LivePlayer::new(&sim, seat);
        for e in &h.transcript.events {
            p.feed(&h, e).unwrap();
        }
        let turns = h.turns.iter().filter(|(_, s, _)| s.index() == seat).count() as u64;
        assert_eq!(p.v.signatures_verified(), turns + 1, "seat {seat}: one per turn, one at the end");
        per_player.push(p.v.signatures_verified());
    }
    println!(
        "six-player check/call Hold'em hand: {events} events; dealer signatures {events} -> {dealer_signs}; \
         signatures verified per player {events} -> {per_player:?}"
    );
    assert!(dealer_signs < events);
}
