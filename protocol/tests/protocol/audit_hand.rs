//! The auditor's checks on a complete synthetic hand: the honest hand passes
//! every check; each single tampering fails with the right check name.

use crate::audit_common;

use audit_common::{raw, Hand, Opts};
use claw_protocol::audit::*;
use claw_protocol::messages::*;
use claw_protocol::transcript::Transcript;
use claw_protocol::{CardId, Identity, Salt, Seat, Seed};
use rand_chacha::rand_core::SeedableRng;
use serde_json::{json, Value};

fn opts_for(h: &Hand) -> AuditOptions<'_> {
    AuditOptions { dealer: Some(h.dealer.id()), ..AuditOptions::default() }
}

fn fails(t: &Transcript, opts: &AuditOptions<'_>, check: AuditCheck) -> AuditError {
    match audit(t, opts) {
        Err(e) if e.check == check => e,
        other => panic!("expected {check} failure, got {other:?}"),
    }
}

/// Builds the honest hand, lets `tamper` change the bodies (the dealer
/// cheats and signs what it likes), audits as seat 0.
fn tampered(tamper: impl FnOnce(&mut Hand), check: AuditCheck) -> AuditError {
    let mut h = Hand::new(Opts::default());
    tamper(&mut h);
    let t = h.transcript();
    let viewer = &h.players[0];
    let opts = AuditOptions { viewer: Some(viewer), my_seed: Some(h.player_seeds[0]), ..opts_for(&h) };
    fails(&t, &opts, check)
}

pub(crate) struct Rules {
    pub deck: Vec<CardId>,
    pub replay_error: Option<String>,
    /// The deck the game scripts for the hand (`None`: it shuffles).
    pub script: Option<Vec<CardId>>,
}

impl Replayer for Rules {
    fn canonical_deck(&self, game: &str, _version: &str, settings: &Value) -> Result<Vec<CardId>, String> {
        assert_eq!(game, "toy");
        assert_eq!(settings, &json!({"ante": 1}));
        Ok(self.deck.clone())
    }

    fn scripted_deck(
        &self,
        _game: &str,
        _version: &str,
        _settings: &Value,
        _hand_number: u64,
    ) -> Result<Option<Vec<CardId>>, String> {
        Ok(self.script.clone())
    }

    fn replay(&self, hand: &VerifiedHand) -> Result<(), String> {
        assert!(hand.deck_order.is_some());
        match &self.replay_error {
            Some(e) => Err(e.clone()),
            None => Ok(()),
        }
    }
}

#[test]
fn honest_hand_passes_every_check() {
    let h = Hand::new(Opts::default());
    let t = h.transcript();
    let rules = Rules { deck: CardId::deck(1, false), replay_error: None, script: None };
    let viewer = &h.players[0];
    let opts = AuditOptions {
        viewer: Some(viewer),
        my_seed: Some(h.player_seeds[0]),
        replayer: Some(&rules),
        ..opts_for(&h)
    };
    let r = audit(&t, &opts).unwrap();
    assert_eq!(r.passed, AuditCheck::ALL.to_vec());
    assert!(r.complete());
    assert!(r.deck_checked);
    let v = &r.hand;
    assert_eq!(v.hand_id, h.hand_id);
    assert_eq!(v.dealer, h.dealer.id());
    assert_eq!(v.hand_number, 7);
    assert_eq!(v.game, "toy");
    assert_eq!(v.settings, json!({"ante": 1}));
    assert_eq!(v.players.len(), 3);
    assert_eq!(v.memory, json!({"button": 0}));
    assert_eq!(v.deck_order.as_deref(), Some(&h.order[..]));
    assert_eq!(v.dealer_seed, Some(h.dealer_seed));
    assert_eq!(v.player_seeds, vec![Some(h.player_seeds[0]), Some(h.player_seeds[1]), None]);
    // Seat 0's own cards: hole cards at 0 and 3, the hit at 11.
    let mine: Vec<u16> = v.my_cards.iter().map(|o| o.position).collect();
    assert_eq!(mine, [0, 3, 11]);
    assert!(v.my_cards.iter().all(|o| o.card == h.order[usize::from(o.position)]));
    // Actions in order, with their sources and the events before each.
    let seats: Vec<u8> = v.actions.iter().map(|a| a.seat.0).collect();
    assert_eq!(seats, [0, 1, 2, 0, 1]);
    assert_eq!(v.actions[1].action, json!({"type": "check"}));
    assert_eq!(v.actions[3].source, ActionSource::Player { seq: 1 });
    assert_eq!(
        v.actions[4].source,
        ActionSource::Timeout { reason: claw_protocol::messages::TimeoutReason::Timeout }
    );
    let before: Vec<usize> = v.actions.iter().map(|a| a.events_before).collect();
    // 3 antes + hole deal = 4; + flop = 5; + bet, hit, kitty, reveal = 9.
    assert_eq!(before, [4, 4, 5, 9, 9]);
    assert_eq!(v.announced.len(), 11);
    assert_eq!(
        v.announced[0],
        AnnouncedEvent::Chip(ChipMove::debit(ChipParty::Seat(Seat(0)), claw_protocol::Chips(1), "ante"))
    );
    match &v.announced[3] {
        AnnouncedEvent::Dealt { phase, cards } => {
            assert_eq!(phase, "hole");
            assert_eq!(cards.len(), 6);
            assert!(cards.iter().all(|c| c.card == Some(h.order[usize::from(c.position)])));
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(v.announced[8], AnnouncedEvent::Reveal { positions: vec![12] });
    assert_eq!(v.result.net, vec![4, -1, -3]);
    assert_eq!(v.memory_after, json!({"button": 1}));
}

#[test]
fn without_replayer_the_replay_is_reported_skipped() {
    let h = Hand::new(Opts::default());
    let r = audit(&h.transcript(), &opts_for(&h)).unwrap();
    assert_eq!(r.skipped, vec![AuditCheck::Replay]);
    assert!(!r.complete());
    assert!(!r.deck_checked);
    assert!(r.hand.my_cards.is_empty());
}

#[test]
fn the_header_key_is_used_when_no_dealer_is_given_and_must_agree_otherwise() {
    let h = Hand::new(Opts::default());
    let t = h.transcript();
    audit(&t, &AuditOptions::default()).unwrap();
    let other = Identity::from_seed([9; 32]);
    let e = fails(
        &t,
        &AuditOptions { dealer: Some(other.id()), ..AuditOptions::default() },
        AuditCheck::DealerSignatures,
    );
    assert!(e.detail.contains("header"), "{e}");
    let bare = Transcript { header: None, ..t };
    fails(&bare, &AuditOptions::default(), AuditCheck::DealerSignatures);
    // Without a header the given key is used, and a wrong one fails.
    audit(&bare, &opts_for(&h)).unwrap();
    fails(
        &bare,
        &AuditOptions { dealer: Some(other.id()), ..AuditOptions::default() },
        AuditCheck::DealerSignatures,
    );
}

#[test]
fn the_live_hand_audit_checks_each_event_as_it_arrives() {
    let h = Hand::new(Opts::default());
    let t = h.transcript();
    let live = |events: &[claw_protocol::transcript::EventEnvelope]| {
        let mut a = HandAudit::live(h.dealer.id(), h.hand_id);
        for (i, e) in events.iter().enumerate() {
            a.accept(e).map_err(|err| (i, err.check))?;
        }
        a.finish(None, false).map_err(|err| (events.len(), err.check))
    };
    let r = live(&t.events).unwrap();
    let offline = audit(&t, &opts_for(&h)).unwrap();
    assert_eq!(r.passed, offline.passed);
    assert_eq!(r.hand, offline.hand);
    // A bad signature the player relies on (asked to act right after it) is
    // caught there, before any later event is fed; one it does not rely on
    // is left to the offline audit (a later signature covers the chain).
    let mut bad = t.events.clone();
    bad[3].sig.as_mut().unwrap().0[0] ^= 1;
    let relying = |events: &[claw_protocol::transcript::EventEnvelope]| {
        let mut a = HandAudit::live(h.dealer.id(), h.hand_id);
        for (i, e) in events.iter().enumerate() {
            a.accept(e).and_then(|_| a.confirm()).map_err(|err| (i, err.check))?;
        }
        Ok::<_, (usize, AuditCheck)>(a.signatures_verified())
    };
    assert_eq!(relying(&bad).unwrap_err(), (3, AuditCheck::DealerSignatures));
    assert_eq!(relying(&t.events).unwrap(), t.events.len() as u64);
    live(&bad).unwrap();
    assert_eq!(
        audit(&Transcript { events: bad, ..t.clone() }, &opts_for(&h)).unwrap_err().check,
        AuditCheck::DealerSignatures
    );
    let mut swapped = t.events.clone();
    swapped.swap(3, 4);
    assert_eq!(live(&swapped).unwrap_err(), (3, AuditCheck::HashChain));
    // After a failure the audit stays failed.
    let mut a = HandAudit::live(h.dealer.id(), h.hand_id);
    a.accept(&t.events[0]).unwrap();
    assert_eq!(a.accept(&t.events[2]).unwrap_err().check, AuditCheck::HashChain);
    assert_eq!(a.accept(&t.events[1]).unwrap_err().check, AuditCheck::HashChain);
    assert_eq!(a.finish(None, false).unwrap_err().check, AuditCheck::HashChain);
}

#[test]
fn a_forged_event_signature_fails_dealer_signatures() {
    let h = Hand::new(Opts::default());
    let mut t = h.transcript();
    t.events[5].sig.as_mut().unwrap().0[0] ^= 1;
    let e = fails(&t, &opts_for(&h), AuditCheck::DealerSignatures);
    assert!(e.detail.contains("seq 5"), "{e}");
    // Another dealer re-signing everything is caught by the key.
    let mut h2 = Hand::new(Opts::default());
    h2.dealer = Identity::from_seed([7; 32]);
    let t2 = h2.transcript();
    let e = fails(&Transcript { header: None, ..t2 }, &opts_for(&h), AuditCheck::DealerSignatures);
    assert!(e.detail.contains("seq 0"), "{e}");
}

#[test]
fn dropped_duplicated_and_reordered_events_fail_the_hash_chain() {
    let h = Hand::new(Opts::default());
    let t = h.transcript();
    let o = opts_for(&h);
    let mut dropped = t.clone();
    dropped.events.remove(4);
    fails(&dropped, &o, AuditCheck::HashChain);
    let mut dup = t.clone();
    dup.events.insert(4, dup.events[4].clone());
    fails(&dup, &o, AuditCheck::HashChain);
    let mut swapped = t.clone();
    swapped.events.swap(4, 5);
    fails(&swapped, &o, AuditCheck::HashChain);
    let mut truncated = t.clone();
    truncated.events.pop();
    // Dropping the last event keeps the chain intact but the hand unfinished.
    fails(&truncated, &o, AuditCheck::Structure);
}

#[test]
fn an_event_of_another_hand_fails_the_hash_chain() {
    let h = Hand::new(Opts::default());
    let mut other = Hand::new(Opts::default());
    other.hand_id = claw_protocol::HandId([0x99; 16]);
    let t = h.transcript();
    let t2 = other.transcript();
    let mut mixed = t.clone();
    mixed.events[3] = t2.events[3].clone();
    fails(&mixed, &opts_for(&h), AuditCheck::HashChain);
}

#[test]
fn structure_failures() {
    tampered(|h| h.start_mut().config_hash.0[0] ^= 1, AuditCheck::Structure);
    tampered(|h| h.start_mut().settings = raw(r#"{"ante":2}"#), AuditCheck::Structure);
    tampered(|h| h.prepare_mut().players.swap(0, 1), AuditCheck::Structure);
    tampered(|h| h.prepare_mut().entropy = EntropyMode::Dealer, AuditCheck::Structure);
    tampered(
        |h| {
            h.start_mut().leaves.pop();
        },
        AuditCheck::Structure,
    );
    tampered(|h| h.start_mut().players[1].seat = Seat(2), AuditCheck::Structure);
    tampered(
        |h| {
            h.end_mut().result.net.pop();
        },
        AuditCheck::Structure,
    );
    tampered(|h| h.bodies.swap(0, 1), AuditCheck::Structure);
    tampered(
        |h| {
            h.bodies.pop();
        },
        AuditCheck::Structure,
    );
    tampered(
        |h| {
            let b = h.bodies[2].clone();
            h.bodies.push(b)
        },
        AuditCheck::Structure,
    );
    tampered(|h| h.deal_mut(0).cards[0].target = DealTo::Player(Seat(3)), AuditCheck::Structure);
    // A face-up card without its opening; a face-down player card without a box.
    tampered(|h| h.deal_mut(1).cards[1].opening = None, AuditCheck::Structure);
    tampered(|h| h.deal_mut(0).cards[0].sealed = None, AuditCheck::Structure);
    tampered(|h| h.action_mut(0).seat = Seat(9), AuditCheck::Structure);
    // A body that does not parse.
    let h = Hand::new(Opts::default());
    let mut b = claw_protocol::transcript::TranscriptBuilder::new(h.hand_id);
    b.append_raw(&h.dealer, raw(r#"{"type":"hand-prepare"}"#)).unwrap();
    let e = fails(&b.into_transcript(), &opts_for(&h), AuditCheck::Structure);
    assert!(e.detail.contains("event 0"), "{e}");
}

#[test]
fn withheld_secrets_under_policy_full_fail_reveal_complete() {
    tampered(|h| h.end_mut().dealer_seed = None, AuditCheck::RevealComplete);
    tampered(
        |h| {
            h.end_mut().openings.pop();
        },
        AuditCheck::RevealComplete,
    );
    tampered(|h| h.end_mut().openings[4].position = 60, AuditCheck::RevealComplete);
    tampered(
        |h| {
            let mut dup = h.end_mut().openings[4];
            dup.salt = Salt([0; 32]);
            h.end_mut().openings.push(dup);
        },
        AuditCheck::RevealComplete,
    );
}

#[test]
fn a_wrong_dealer_seed_fails_seed_commitment() {
    tampered(|h| h.end_mut().dealer_seed = Some(Seed([0x23; 32])), AuditCheck::SeedCommitment);
    tampered(|h| h.prepare_mut().seed_commitment.0[31] ^= 1, AuditCheck::SeedCommitment);
}

#[test]
fn forged_or_dropped_player_seeds_fail_player_seeds() {
    tampered(|h| h.start_mut().player_seeds[1].seed = Seed([0x55; 32]), AuditCheck::PlayerSeeds);
    tampered(|h| h.start_mut().player_seeds[0].sig.0[3] ^= 1, AuditCheck::PlayerSeeds);
    // Seat 1's seed claimed as seat 2's.
    tampered(|h| h.start_mut().player_seeds[1].seat = Seat(2), AuditCheck::PlayerSeeds);
    // The viewer's (seat 0) seed dropped: its signature is valid for the
    // others, only the viewer can tell.
    let e = tampered(
        |h| {
            h.start_mut().player_seeds.remove(0);
        },
        AuditCheck::PlayerSeeds,
    );
    assert!(e.detail.contains("viewer"), "{e}");
}

#[test]
fn a_stacked_deck_fails_the_shuffle() {
    let honest = Hand::new(Opts::default());
    let mut order = honest.order.clone();
    order.swap(0, 20);
    let h = Hand::with_order(Opts::default(), Some(order));
    let e = fails(&h.transcript(), &opts_for(&h), AuditCheck::Shuffle);
    assert!(e.detail.contains("position 0"), "{e}");
}

#[test]
fn a_declared_deck_that_is_not_the_games_fails_the_shuffle() {
    // The dealer declares a deck without the aces of spades, consistently:
    // the shuffle recomputes, only the game's canonical deck tells.
    let h = Hand::new(Opts::default());
    let t = h.transcript();
    let mut game_deck = CardId::deck(1, false);
    game_deck.swap(0, 1);
    let rules = Rules { deck: game_deck, replay_error: None, script: None };
    let e = fails(&t, &AuditOptions { replayer: Some(&rules), ..opts_for(&h) }, AuditCheck::Shuffle);
    assert!(e.detail.contains("canonical"), "{e}");
}

#[test]
fn a_changed_salt_or_leaf_fails_leaves() {
    tampered(|h| h.end_mut().openings[17].salt.0[0] ^= 1, AuditCheck::Leaves);
    // A changed leaf no longer has the announced root: caught at game-start.
    tampered(|h| h.start_mut().leaves[30].0[0] ^= 1, AuditCheck::MerkleRoot);
    // A different card with the seed still consistent is caught by the shuffle first.
    tampered(|h| h.end_mut().openings[40].card = CardId::from_code(0).unwrap(), AuditCheck::Shuffle);
}

#[test]
fn a_changed_root_fails_merkle_root() {
    tampered(|h| h.start_mut().root.0[0] ^= 1, AuditCheck::MerkleRoot);
}

#[test]
fn dealing_out_of_order_fails_deal_order() {
    tampered(
        |h| {
            let d = h.deal_mut(0);
            d.cards.swap(0, 1);
        },
        AuditCheck::DealOrder,
    );
    // A position skipped.
    tampered(|h| h.deal_mut(2).cards[0].position = 12, AuditCheck::DealOrder);
    // Revealing a card that was dealt face up, or never dealt.
    tampered(|h| h.reveal_mut().openings[0] = h.opening(8), AuditCheck::DealOrder);
    tampered(|h| h.reveal_mut().openings[0] = h.opening(30), AuditCheck::DealOrder);
}

#[test]
fn a_wrong_opened_card_fails_opened_cards() {
    // A revealed card that is not the committed one.
    tampered(
        |h| {
            let o = &mut h.reveal_mut().openings[0];
            o.card = CardId::from_code((o.card.code() + 1) % 52).unwrap();
        },
        AuditCheck::OpenedCards,
    );
    // A face-up card with a wrong salt.
    tampered(|h| h.deal_mut(1).cards[2].opening.as_mut().unwrap().salt.0[5] ^= 1, AuditCheck::OpenedCards);
    // A face-up card opening another position.
    tampered(
        |h| {
            let o = h.opening(9);
            h.deal_mut(1).cards[2].opening = Some(o);
        },
        AuditCheck::OpenedCards,
    );
}

#[test]
fn a_lying_sealed_card_is_caught_by_its_owner_only() {
    // The dealer seals the wrong card to seat 0 at position 3 (the committed
    // card stays in the leaves and in game-end).
    let mut h = Hand::new(Opts::default());
    let key = h.dealer.shared_key(&h.players[0].encryption_key()).unwrap();
    let mut lie = h.opening(3);
    lie.card = h.order[40];
    let mut rng = rand_chacha::ChaCha20Rng::from_seed([5; 32]);
    let sealed = key.seal(&mut rng, &h.hand_id, &lie);
    h.deal_mut(0).cards[3].sealed = Some(sealed);
    let t = h.transcript();
    // Seat 1 cannot open it: the audit passes for them.
    let viewer1 = &h.players[1];
    audit(&t, &AuditOptions { viewer: Some(viewer1), ..opts_for(&h) }).unwrap();
    let viewer0 = &h.players[0];
    let e = fails(&t, &AuditOptions { viewer: Some(viewer0), ..opts_for(&h) }, AuditCheck::OpenedCards);
    assert!(e.detail.contains("sealed"), "{e}");
    // A box that does not open at all (garbled) fails for its owner too.
    let mut h = Hand::new(Opts::default());
    h.deal_mut(0).cards[0].sealed.as_mut().unwrap().ciphertext[0] ^= 1;
    let t = h.transcript();
    let viewer0 = &h.players[0];
    fails(&t, &AuditOptions { viewer: Some(viewer0), ..opts_for(&h) }, AuditCheck::OpenedCards);
}

#[test]
fn a_forged_action_fails_action_signatures() {
    tampered(|h| h.action_mut(2).sig.0[10] ^= 1, AuditCheck::ActionSignatures);
    // The action bytes changed, even only in whitespace.
    tampered(|h| h.action_mut(0).action = raw(r#"{"type": "check"}"#), AuditCheck::ActionSignatures);
    tampered(|h| h.action_mut(0).action = raw(r#"{"type":"fold"}"#), AuditCheck::ActionSignatures);
    // Attributed to another seat.
    tampered(|h| h.action_mut(0).seat = Seat(1), AuditCheck::ActionSignatures);
    // A replayed action (same seq twice for seat 0).
    tampered(
        |h| {
            let a = h.action_mut(0).clone();
            *h.action_mut(3) = a;
        },
        AuditCheck::ActionSignatures,
    );
    // An action signed by someone else entirely.
    tampered(
        |h| {
            let stranger = Identity::from_seed([77; 32]);
            let s = SignedAction::sign(&stranger, h.hand_id, 5, raw(r#"{"type":"check"}"#));
            h.action_mut(1).sig = s.sig;
            h.action_mut(1).seq = 5;
        },
        AuditCheck::ActionSignatures,
    );
}

#[test]
fn the_replayer_failure_is_named_replay() {
    let h = Hand::new(Opts::default());
    let rules = Rules {
        deck: CardId::deck(1, false),
        replay_error: Some("net differs for seat 1".into()),
        script: None,
    };
    let e =
        fails(&h.transcript(), &AuditOptions { replayer: Some(&rules), ..opts_for(&h) }, AuditCheck::Replay);
    assert_eq!(e.detail, "net differs for seat 1");
    assert_eq!(e.to_string(), "audit check replay failed: net differs for seat 1");
}

#[test]
fn scripted_decks_skip_the_shuffle_but_run_everything_else() {
    let opts = Opts { deck_mode: DeckMode::Scripted, ..Opts::default() };
    let h = Hand::new(opts);
    let r = audit(&h.transcript(), &opts_for(&h)).unwrap();
    assert!(r.passed.contains(&AuditCheck::Shuffle));
    assert_eq!(r.hand.deck_mode, DeckMode::Scripted);
    assert_eq!(r.hand.deck_order.as_deref(), Some(&h.order[..]));
    // A scripted deck must still be made of the declared cards.
    let mut order = h.order.clone();
    order[5] = order[6];
    let bad = Hand::with_order(opts, Some(order));
    fails(&bad.transcript(), &opts_for(&bad), AuditCheck::Shuffle);
    // And the other checks still run (a salt changed).
    let mut h = Hand::new(opts);
    h.end_mut().openings[2].salt.0[0] ^= 1;
    fails(&h.transcript(), &opts_for(&h), AuditCheck::Leaves);
    // With the game's rules, a hand is scripted exactly when its game scripts
    // it, and dealt in the script's order: a dealer cannot stack a shuffled
    // game's deck by calling it scripted.
    let with_script = |h: &Hand, script: Option<Vec<CardId>>| {
        let rules = Rules { deck: CardId::deck(1, false), replay_error: None, script };
        audit(&h.transcript(), &AuditOptions { replayer: Some(&rules), ..opts_for(h) })
            .map_err(|e| (e.check, e.detail))
    };
    let h = Hand::new(opts);
    with_script(&h, Some(h.order.clone())).unwrap();
    let mut other = h.order.clone();
    other.swap(0, 1);
    let (check, detail) = with_script(&h, Some(other)).unwrap_err();
    assert_eq!(check, AuditCheck::Shuffle);
    assert!(detail.contains("scripted order"), "{detail}");
    let (check, detail) = with_script(&h, None).unwrap_err();
    assert_eq!(check, AuditCheck::Shuffle);
    assert!(detail.contains("shuffles"), "{detail}");
    let shuffled = Hand::new(Opts::default());
    let (check, detail) = with_script(&shuffled, Some(shuffled.order.clone())).unwrap_err();
    assert_eq!(check, AuditCheck::Shuffle);
    assert!(detail.contains("scripts"), "{detail}");
}

#[test]
fn dealer_only_entropy_has_no_player_seeds() {
    let opts = Opts { entropy: EntropyMode::Dealer, ..Opts::default() };
    let h = Hand::new(opts);
    let r = audit(&h.transcript(), &opts_for(&h)).unwrap();
    assert_eq!(r.hand.player_seeds, vec![None, None, None]);
    let mut h = Hand::new(opts);
    let joint = Hand::new(Opts::default());
    let seeds = joint.bodies.iter().find_map(|b| match b {
        EventBody::GameStart(g) => Some(g.player_seeds.clone()),
        _ => None,
    });
    h.start_mut().player_seeds = seeds.unwrap();
    fails(&h.transcript(), &opts_for(&h), AuditCheck::Structure);
}

#[test]
fn deferred_reveal_audits_partially_then_completely() {
    let opts = Opts { reveal: RevealPolicy::Deferred, ..Opts::default() };
    let h = Hand::new(opts);
    let early = h.transcript_with(false);
    // Not allowed to be pending: named failure.
    let e = fails(&early, &opts_for(&h), AuditCheck::RevealComplete);
    assert!(e.detail.contains("deferred"), "{e}");
    // Allowed: the checks that need no secrets run.
    let viewer = &h.players[0];
    let partial = AuditOptions { allow_pending_reveal: true, viewer: Some(viewer), ..opts_for(&h) };
    let r = audit(&early, &partial).unwrap();
    assert_eq!(
        r.skipped,
        vec![
            AuditCheck::RevealComplete,
            AuditCheck::SeedCommitment,
            AuditCheck::Shuffle,
            AuditCheck::Leaves,
            AuditCheck::Replay
        ]
    );
    assert!(r.passed.contains(&AuditCheck::OpenedCards));
    assert_eq!(r.hand.deck_order, None);
    assert_eq!(r.hand.dealer_seed, None);
    assert_eq!(r.hand.my_cards.len(), 3);
    // The showdown openings are checked even before the full reveal.
    let mut bad = Hand::new(opts);
    bad.end_mut().openings[0].salt.0[0] ^= 1;
    fails(&bad.transcript_with(false), &partial, AuditCheck::OpenedCards);
    // Later, the audit-reveal completes it.
    let full = h.transcript();
    let rules = Rules { deck: CardId::deck(1, false), replay_error: None, script: None };
    let r = audit(&full, &AuditOptions { replayer: Some(&rules), ..opts_for(&h) }).unwrap();
    assert!(r.complete());
    assert_eq!(r.hand.deck_order.as_deref(), Some(&h.order[..]));
    // A late reveal with a wrong seed or salt fails like a full one.
    let mut bad = Hand::new(opts);
    if let EventBody::AuditReveal(a) = &mut bad.late[0] {
        a.dealer_seed = Seed([1; 32]);
    }
    fails(&bad.transcript(), &opts_for(&bad), AuditCheck::SeedCommitment);
    let mut bad = Hand::new(opts);
    if let EventBody::AuditReveal(a) = &mut bad.late[0] {
        a.openings[20].salt.0[0] ^= 1;
    }
    fails(&bad.transcript(), &opts_for(&bad), AuditCheck::Leaves);
}

#[test]
fn audit_reads_json_lines() {
    let h = Hand::new(Opts::default());
    let text = h.transcript().to_jsonl().unwrap();
    let r = audit_jsonl(&text, &AuditOptions::default()).unwrap();
    assert_eq!(r.hand.hand_id, h.hand_id);
    let e = audit_jsonl("{\"type\":\"nope\"}\n", &AuditOptions::default()).unwrap_err();
    assert_eq!(e.check, AuditCheck::Structure);
    // A line changed in transit.
    let bad = text.replacen("\"hole\"", "\"hold\"", 1);
    assert_eq!(audit_jsonl(&bad, &AuditOptions::default()).unwrap_err().check, AuditCheck::DealerSignatures);
}

#[test]
fn check_names_and_order_are_stable() {
    let names: Vec<&str> = AuditCheck::ALL.iter().map(|c| c.name()).collect();
    assert_eq!(
        names,
        [
            "dealer-signatures",
            "hash-chain",
            "structure",
            "reveal-complete",
            "seed-commitment",
            "player-seeds",
            "shuffle",
            "leaves",
            "merkle-root",
            "deal-order",
            "opened-cards",
            "action-signatures",
            "replay",
            "commission"
        ]
    );
    for c in AuditCheck::ALL {
        assert_eq!(serde_json::to_value(c).unwrap(), json!(c.name()));
    }
    let mut sorted = AuditCheck::ALL.to_vec();
    sorted.sort();
    assert_eq!(sorted, AuditCheck::ALL.to_vec());
}

use proptest::prelude::*;

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// Any bit of any committed value changed by the dealer (and re-signed)
    /// fails the audit with the check that covers it.
    #[test]
    fn any_committed_bit_changed_is_caught(pos in 0usize..52, byte in 0usize..32, bit in 0u8..8, what in 0u8..4) {
        let mut h = Hand::new(Opts::default());
        let expected = match what {
            0 => {
                h.end_mut().openings[pos].salt.0[byte] ^= 1 << bit;
                AuditCheck::Leaves
            }
            1 => {
                // The root no longer commits to the leaves: caught at game-start.
                h.start_mut().leaves[pos].0[byte] ^= 1 << bit;
                AuditCheck::MerkleRoot
            }
            2 => {
                h.start_mut().root.0[byte] ^= 1 << bit;
                AuditCheck::MerkleRoot
            }
            _ => {
                h.end_mut().dealer_seed.as_mut().unwrap().0[byte] ^= 1 << bit;
                AuditCheck::SeedCommitment
            }
        };
        let t = h.transcript();
        let e = audit(&t, &opts_for(&h)).unwrap_err();
        prop_assert_eq!(e.check, expected, "{}", e);
    }

    /// Any two dealt cards of a deal swapped is caught by the deal order.
    #[test]
    fn any_swap_of_dealt_positions_is_caught(deal in 0usize..2, a in 0usize..5, b in 0usize..5) {
        prop_assume!(a != b);
        let mut h = Hand::new(Opts::default());
        let d = h.deal_mut(deal);
        let n = d.cards.len();
        d.cards.swap(a % n, b % n);
        prop_assume!(a % n != b % n);
        let t = h.transcript();
        prop_assert_eq!(audit(&t, &opts_for(&h)).unwrap_err().check, AuditCheck::DealOrder);
    }
}

#[test]
fn another_encryption_key_for_the_viewer_fails_for_its_owner_offline() {
    // The dealer announces a key of its own for seat 0 (and signs it). The
    // owner, auditing with its key file, refuses the hand; others cannot tell.
    let mut h = Hand::new(Opts::default());
    let other = Identity::from_seed([77; 32]).encryption_key();
    h.start_mut().players[0].encryption_key = other;
    let t = h.transcript();
    let e = fails(&t, &AuditOptions { viewer: Some(&h.players[0]), ..opts_for(&h) }, AuditCheck::Structure);
    assert!(e.detail.contains("encryption key"), "{e}");
    audit(&t, &AuditOptions { viewer: Some(&h.players[1]), ..opts_for(&h) }).unwrap();
}
