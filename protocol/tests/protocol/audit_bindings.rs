//! Every signed field of a hand is checked or bound (SPEC.md §9.5, §11):
//! the room configuration `game-start` carries binds the hand's game,
//! settings, policies, seed timeout and commission; the previous hand it
//! names binds its number, table memory, room configuration and dealer key
//! across hands; a field no check can bind changes no verified outcome. A
//! cheating dealer changes one field of an honest hand and signs the result.

use crate::audit_common::{raw, Hand, Opts, ROOM};
use crate::audit_hand::Rules;

use claw_protocol::audit::*;
use claw_protocol::messages::*;
use claw_protocol::transcript::{EventEnvelope, Transcript};
use claw_protocol::{CardId, Chips, HandId, Identity};
use serde_json::json;

/// The synthetic hand as a current dealer writes it: its `game-start`
/// carries the room configuration and names hand 6 as its previous hand.
fn room_hand() -> Hand {
    let h = Hand::new(Opts::default());
    let room = h.room();
    h.in_room(&room)
}

fn rules() -> Rules {
    Rules { deck: CardId::deck(1, false), replay_error: None, script: None }
}

fn audited(h: &Hand) -> Result<AuditReport, AuditError> {
    let r = rules();
    audit(
        &h.transcript(),
        &AuditOptions { dealer: Some(h.dealer.id()), replayer: Some(&r), ..Default::default() },
    )
}

/// The check the audit of `h` fails, after `tamper` changed it.
fn tampered(tamper: impl FnOnce(&mut Hand)) -> AuditError {
    let mut h = room_hand();
    tamper(&mut h);
    audited(&h).expect_err("the tampered hand must fail")
}

/// The room configuration's text with `change` applied.
fn room_text(h: &Hand, change: impl FnOnce(&mut RoomConfig)) -> RawJson {
    let mut room = h.room();
    change(&mut room);
    RawJson::from_value(&room).unwrap()
}

#[test]
fn a_hand_carrying_its_room_configuration_passes_and_reports_it() {
    let h = room_hand();
    let r = audited(&h).unwrap();
    assert!(r.complete(), "skipped {:?}", r.skipped);
    assert_eq!(r.hand.room, Some(h.room()));
    assert_eq!(r.hand.previous, Some(PreviousHand { hand_id: HandId([0x10; 16]), hand_number: 6 }));
    assert_eq!(r.hand.dealer_encryption_key, h.dealer.encryption_key());
}

#[test]
fn a_commission_raised_on_every_seat_fails_without_being_told_the_rooms() {
    let e = tampered(|h| {
        for p in &mut h.start_mut().players {
            p.commission = Chips(1);
        }
    });
    assert_eq!(e.check, AuditCheck::Commission, "{e}");
    assert!(e.detail.contains("the room's is 0"), "{e}");
    // Told another commission than the one the hand's room configuration states.
    let h = room_hand();
    let opts = AuditOptions { dealer: Some(h.dealer.id()), commission: Some(Chips(2)), ..Default::default() };
    let e = audit(&h.transcript(), &opts).unwrap_err();
    assert_eq!(e.check, AuditCheck::Commission, "{e}");
    assert!(e.detail.contains("states commission 0"), "{e}");
}

#[test]
fn the_room_configuration_binds_game_settings_policies_seed_timeout_and_room() {
    type Tamper = Box<dyn Fn(&mut Hand)>;
    let cases: Vec<(&str, Tamper)> = vec![
        (
            "play-neutral settings, config hash recomputed",
            Box::new(|h| {
                let g = h.start_mut();
                g.settings = raw(r#"{"ante":1,"note":"x"}"#);
                g.config_hash = config_hash(&g.game, &g.game_version, &g.settings);
            }),
        ),
        ("seed timeout", Box::new(|h| h.prepare_mut().seed_timeout_ms = 100)),
        (
            "room's game",
            Box::new(|h| h.start_mut().room_config = Some(room_text(h, |r| r.game = "other".into()))),
        ),
        (
            "room's reveal policy",
            Box::new(|h| {
                h.start_mut().room_config = Some(room_text(h, |r| r.reveal = RevealPolicy::Deferred))
            }),
        ),
        (
            "room's entropy",
            Box::new(|h| h.start_mut().room_config = Some(room_text(h, |r| r.entropy = EntropyMode::Dealer))),
        ),
        (
            "another room than the header's",
            Box::new(|h| h.start_mut().room_config = Some(room_text(h, |r| r.room_id = "elsewhere".into()))),
        ),
        (
            "not a room configuration",
            Box::new(|h| h.start_mut().room_config = Some(raw(r#"{"game":"toy"}"#))),
        ),
        (
            "a previous hand numbered above this one",
            Box::new(|h| h.start_mut().previous.as_mut().unwrap().hand_number = 7),
        ),
        ("table memory without a previous hand", Box::new(|h| h.start_mut().previous = None)),
    ];
    for (what, tamper) in cases {
        let e = tampered(|h| tamper(h));
        assert_eq!(e.check, AuditCheck::Structure, "{what}: {e}");
    }
    // A room's first hand (no previous hand) starts from no memory, and passes.
    let mut h = room_hand();
    h.start_mut().previous = None;
    h.start_mut().memory = serde_json::Value::Null;
    audited(&h).unwrap();
}

/// `events` fed to a live verifier holding the room configuration the
/// dealer signed in the handshake (`signed`); the first failure.
fn live(h: &Hand, signed: RawJson, events: &[EventEnvelope]) -> Result<AuditReport, AuditError> {
    let mut a = HandAudit::live(h.dealer.id(), h.hand_id).with_room_config(signed).with_room_id(ROOM);
    for e in events {
        a.accept(e)?;
    }
    a.finish(None, false)
}

#[test]
fn live_the_room_configuration_is_the_handshakes_byte_for_byte() {
    let h = room_hand();
    let t = h.transcript();
    let signed = h.start().room_config.clone().unwrap();
    live(&h, signed.clone(), &t.events).unwrap();
    // The same configuration, other bytes (spaces): not what was signed.
    let spaced = RawJson::from_string(signed.as_str().replacen(',', ", ", 1)).unwrap();
    assert_eq!(live(&h, spaced, &t.events).unwrap_err().check, AuditCheck::Structure);
    // Another commission in the handshake: the hand's room configuration is not it.
    let other = room_text(&h, |r| r.commission = Chips(1));
    let e = live(&h, other, &t.events).unwrap_err();
    assert_eq!(e.check, AuditCheck::Structure, "{e}");
    assert!(e.detail.contains("handshake"), "{e}");
    // A hand without its room configuration.
    let bare = Hand::new(Opts::default()).transcript();
    assert_eq!(live(&h, signed, &bare.events).unwrap_err().check, AuditCheck::Structure);
}

/// Hand 6 of the room, the one the synthetic hand continues: it left the
/// table memory hand 7 starts from.
fn hand_six(next: &VerifiedHand) -> VerifiedHand {
    let mut prev = next.clone();
    prev.hand_id = HandId([0x10; 16]);
    prev.hand_number = 6;
    prev.memory_after = next.memory.clone();
    prev
}

#[test]
fn a_hand_continues_the_previous_hand_it_names() {
    let next = audited(&room_hand()).unwrap().hand;
    let prev = hand_six(&next);
    check_previous(&prev, &next).unwrap();
    // Renumbered upward (hands voided in between take numbers): still continued.
    let mut h = room_hand();
    h.prepare_mut().hand_number = 9;
    check_previous(&prev, &audited(&h).unwrap().hand).unwrap();
    type Tamper = Box<dyn Fn(&mut Hand)>;
    let cases: Vec<(&str, Tamper)> = vec![
        ("another table memory", Box::new(|h| h.start_mut().memory = json!({"button": 2}))),
        ("another number for it", Box::new(|h| h.start_mut().previous.as_mut().unwrap().hand_number = 5)),
        (
            "another room configuration",
            Box::new(|h| h.start_mut().room_config = Some(room_text(h, |r| r.buy_in = Chips(11)))),
        ),
        (
            "another dealer encryption key",
            Box::new(|h| h.start_mut().dealer_encryption_key = Identity::from_seed([9; 32]).encryption_key()),
        ),
        (
            "no previous hand",
            Box::new(|h| {
                h.start_mut().previous = None;
                h.start_mut().memory = serde_json::Value::Null;
            }),
        ),
    ];
    for (what, tamper) in cases {
        let mut h = room_hand();
        tamper(&mut h);
        let next = audited(&h).unwrap_or_else(|e| panic!("{what}: each hand passes alone: {e}")).hand;
        let e = check_previous(&prev, &next).unwrap_err();
        assert_eq!(e.check, AuditCheck::PreviousHand, "{what}: {e}");
    }
    // Its number not above the previous hand's.
    let mut later = prev.clone();
    later.hand_number = 7;
    assert_eq!(check_previous(&later, &next).unwrap_err().check, AuditCheck::PreviousHand);
}

#[test]
fn live_a_hand_continues_the_last_hand_this_connection_saw_end() {
    let h = room_hand();
    let t: Transcript = h.transcript();
    let next = audited(&h).unwrap().hand;
    let signed = h.start().room_config.clone().unwrap();
    let run = |prev: HandLink| {
        let mut a =
            HandAudit::live(h.dealer.id(), h.hand_id).with_room_config(signed.clone()).with_previous(prev);
        t.events.iter().try_for_each(|e| a.accept(e).map(|_| ()))
    };
    run(hand_six(&next).link()).unwrap();
    // The connection saw hand 4 end, then sat out hand 5 and 6: the hand
    // names hand 6, after 4.
    let mut four = hand_six(&next).link();
    (four.hand_id, four.hand_number, four.memory_after) = (HandId([4; 16]), 4, json!({"button": 9}));
    run(four.clone()).unwrap();
    // It saw hand 6 end with another table memory than this hand starts from.
    let mut six = hand_six(&next).link();
    six.memory_after = json!({"button": 5});
    assert_eq!(run(six).unwrap_err().check, AuditCheck::PreviousHand);
    // It saw hand 8 end: this hand (7, after 6) cannot come after it.
    let mut eight = four;
    (eight.hand_id, eight.hand_number) = (HandId([8; 16]), 8);
    assert_eq!(run(eight).unwrap_err().check, AuditCheck::PreviousHand);
}

#[test]
fn the_timeout_reason_changes_no_verified_outcome() {
    // Informational (SPEC.md §9.5): the replay checks the action, not why
    // the dealer took it.
    let honest = audited(&room_hand()).unwrap();
    let mut h = room_hand();
    for b in &mut h.bodies {
        if let EventBody::TimeoutAction(t) = b {
            t.reason = TimeoutReason::Left;
        }
    }
    let r = audited(&h).unwrap();
    assert_eq!(r.passed, honest.passed);
    let mut hand = r.hand;
    let timeout = hand.actions.iter_mut().find(|a| matches!(a.source, ActionSource::Timeout { .. })).unwrap();
    assert_eq!(timeout.source, ActionSource::Timeout { reason: TimeoutReason::Left });
    timeout.source = ActionSource::Timeout { reason: TimeoutReason::Timeout };
    assert_eq!(hand, honest.hand, "only the reason differs");
}
