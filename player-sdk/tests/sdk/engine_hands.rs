//! Hands dealt by the real engine, checked by the SDK: the live verifier on
//! every seat and the offline auditor on every hand of every game pass;
//! wrong keys, chain breaks and malformed files fail with the named check.

use crate::support;

use std::sync::Arc;

use claw_audit::{AuditFileError, Auditor};
use claw_engine::testing::Table;
use claw_games::audit::GamesReplayer;
use claw_player::bots::strategy;
use claw_player::node::NodeEvent;
use claw_player::verify::{SessionVerifier, Update};
use claw_protocol::audit::{AuditCheck, Replayer};
use claw_protocol::messages::{DealTo, EventBody};
use claw_protocol::{CardId, Seat};
use serde_json::{json, Value};

#[test]
fn every_seat_verifies_honest_hands_of_every_game_live() {
    for (game, n) in [("texas-holdem", 6), ("blackjack", 5), ("dou-di-zhu", 3), ("sam-gong", 6)] {
        let mut sim = Table::new(game, &Value::Null, n, 21).unwrap();
        // One verifier follows the session: balances carry over as in a room.
        sim.carry_balances = true;
        let bot = strategy(game, "simple").unwrap();
        let hands: Vec<_> = (0..6).map(|_| support::play(&mut sim, bot.as_ref())).collect();
        for seat in 0..n {
            let me = Arc::clone(&sim.players[seat]);
            let shared = me.shared_key(&sim.dealer.encryption_key()).unwrap();
            let mut v =
                SessionVerifier::new(sim.dealer.id(), "room", me, sim.dealer.encryption_key(), shared);
            for h in &hands {
                let t = h.sign(&sim.dealer, "room").unwrap();
                let mut ended = false;
                for e in &t.events {
                    match v.on_event(e).unwrap_or_else(|e| panic!("{game} seat {seat}: {e}")) {
                        Some(Update::Event(NodeEvent::HandPrepared { hand_id, seat: s, .. })) => {
                            assert_eq!(s, Some(Seat(seat as u8)));
                            v.set_my_seed(&hand_id, h.player_seeds[seat].unwrap());
                            for b in &h.bodies {
                                if let EventBody::ActionResult(a) = b {
                                    if a.seat.index() == seat {
                                        v.record_my_action(&hand_id, a.seq, a.action.as_str(), a.sig);
                                    }
                                }
                            }
                        }
                        Some(Update::Ended { audit, result, .. }) => {
                            assert!(audit.is_ok(), "{game}: {audit:?}");
                            assert_eq!(result.net, h.result.net);
                            ended = true;
                        }
                        _ => {}
                    }
                }
                assert!(ended);
                // The view holds exactly the cards dealt to this seat.
                let view = v.view(&h.hand_id).unwrap();
                let mine: Vec<CardId> = h
                    .bodies
                    .iter()
                    .filter_map(|b| match b {
                        EventBody::PhaseDeal(d) | EventBody::NewCard(d) => Some(d),
                        _ => None,
                    })
                    .flat_map(|d| d.cards.iter())
                    .filter(|c| c.target == DealTo::Player(Seat(seat as u8)))
                    .map(|c| {
                        let end = h.bodies.last().unwrap();
                        match end {
                            EventBody::GameEnd(g) => g.openings[usize::from(c.position)].card,
                            _ => unreachable!(),
                        }
                    })
                    .collect();
                assert_eq!(view.my_cards, mine, "{game} seat {seat}");
                assert_eq!(view.result.as_ref().map(|r| &r.net), Some(&h.result.net));
                assert_eq!(view.net, h.result.net[seat], "{game} seat {seat}: chips seen live");
                // Re-sent events (a reconnect) are skipped silently.
                assert_eq!(v.on_event(&t.events[2]).unwrap(), None);
                assert!(v.transcript(&h.hand_id).unwrap().events == t.events);
            }
        }
    }
}

#[test]
fn an_unknown_hand_must_start_at_seq_0() {
    let mut sim = Table::new("sam-gong", &Value::Null, 2, 22).unwrap();
    let h = support::play(&mut sim, strategy("sam-gong", "random").unwrap().as_ref());
    let t = h.sign(&sim.dealer, "room").unwrap();
    let me = Arc::clone(&sim.players[0]);
    let shared = me.shared_key(&sim.dealer.encryption_key()).unwrap();
    let mut v = SessionVerifier::new(sim.dealer.id(), "room", me, sim.dealer.encryption_key(), shared);
    let e = v.on_event(&t.events[3]).unwrap_err();
    assert_eq!(e.check, AuditCheck::HashChain);
    // A failed hand reports once, then its events are skipped.
    let mut v2 = {
        let me = Arc::clone(&sim.players[0]);
        let shared = me.shared_key(&sim.dealer.encryption_key()).unwrap();
        SessionVerifier::new(sim.players[1].id(), "room", me, sim.dealer.encryption_key(), shared)
    };
    // (Another dealer key: the chain is fine; the signature fails where the
    // player relies on it.)
    v2.on_event(&t.events[0]).unwrap();
    let hand = t.events[0].hand_id;
    assert_eq!(v2.before_acting(&hand).unwrap_err().check, AuditCheck::DealerSignatures);
    assert_eq!(v2.on_event(&t.events[1]).unwrap(), None);
}

fn games() -> Vec<(&'static str, usize)> {
    vec![("texas-holdem", 6), ("blackjack", 6), ("dou-di-zhu", 3), ("sam-gong", 6)]
}

#[test]
fn honest_hands_of_every_game_pass_every_check() {
    for (game, n) in games() {
        let mut sim = Table::new(game, &Value::Null, n, 11).unwrap();
        let bot = strategy(game, "random").unwrap();
        for _ in 0..15 {
            let hand = support::play(&mut sim, bot.as_ref());
            let t = hand.sign(&sim.dealer, "room").unwrap();
            // As an outsider (no viewer) and as each seated player.
            let report = Auditor::new(Some(sim.dealer.id())).audit(&t, None).unwrap();
            assert!(report.complete(), "{game}: skipped {:?}", report.skipped);
            assert_eq!(report.passed, AuditCheck::ALL.to_vec());
            assert!(report.deck_checked);
            for (i, p) in sim.players.iter().enumerate() {
                let r = Auditor::new(Some(sim.dealer.id())).with_viewer(p).audit(&t, hand.player_seeds[i]);
                let r = r.unwrap_or_else(|e| panic!("{game}: seat {i}: {e}"));
                let dealt_to_me = hand
                    .bodies
                    .iter()
                    .filter_map(|b| match b {
                        claw_protocol::messages::EventBody::PhaseDeal(d)
                        | claw_protocol::messages::EventBody::NewCard(d) => Some(d),
                        _ => None,
                    })
                    .flat_map(|d| d.cards.iter())
                    .filter(|c| {
                        c.sealed.is_some()
                            && c.target
                                == claw_protocol::messages::DealTo::Player(claw_protocol::Seat(i as u8))
                    })
                    .count();
                assert_eq!(r.hand.my_cards.len(), dealt_to_me);
            }
        }
    }
}

#[test]
fn timeout_actions_are_replayed_as_auto_actions() {
    // Guandan's auto action is the dealer's L2 takeover (games/src/guandan/ai).
    for (game, n) in games().into_iter().chain([("guandan", 4)]) {
        let mut sim = Table::new(game, &json!({}), n, 12).unwrap();
        sim.timeout_every = Some(3);
        let bot = strategy(game, "simple").unwrap();
        for _ in 0..5 {
            let hand = support::play(&mut sim, bot.as_ref());
            let t = hand.sign(&sim.dealer, "room").unwrap();
            Auditor::new(Some(sim.dealer.id())).audit(&t, None).unwrap_or_else(|e| panic!("{game}: {e}"));
        }
    }
}

#[test]
fn a_wrong_dealer_key_fails_the_signature_check() {
    let mut sim = Table::new("texas-holdem", &Value::Null, 3, 13).unwrap();
    let hand = support::play(&mut sim, strategy("texas-holdem", "random").unwrap().as_ref());
    let t = hand.sign(&sim.dealer, "room").unwrap();
    let other = sim.players[0].id();
    let e = Auditor::new(Some(other)).audit(&t, None).unwrap_err();
    assert_eq!(e.check, AuditCheck::DealerSignatures);
    // Without a trusted key the header's key is used.
    assert!(Auditor::new(None).audit(&t, None).is_ok());
}

#[test]
fn jsonl_files_with_several_hands_are_split_and_audited() {
    let mut sim = Table::new("blackjack", &Value::Null, 2, 14).unwrap();
    sim.carry_balances = true;
    let bot = strategy("blackjack", "simple").unwrap();
    let mut text = String::new();
    for i in 0..3 {
        let hand = support::play(&mut sim, bot.as_ref());
        let mut t = hand.sign(&sim.dealer, "room").unwrap();
        if i == 1 {
            t.header = None; // a headerless hand in the middle
        }
        text.push_str(&t.to_jsonl().unwrap());
        text.push('\n');
    }
    let verdicts = Auditor::new(Some(sim.dealer.id())).audit_jsonl(&text).unwrap();
    assert_eq!(verdicts.len(), 3);
    assert!(verdicts.iter().all(|v| v.outcome.is_ok()));
    assert_eq!(verdicts[0].line, 1);
    assert!(matches!(Auditor::new(None).audit_jsonl(""), Err(AuditFileError::Empty)));
    let bad = Auditor::new(None).audit_jsonl("{\"type\":\"nope\"}").unwrap_err();
    assert!(matches!(bad, AuditFileError::Parse { line: 1, check: AuditCheck::Structure, .. }), "{bad}");
    let bad = Auditor::new(None).audit_jsonl("not json").unwrap_err();
    assert!(matches!(bad, AuditFileError::Parse { line: 1, .. }));
}

#[test]
fn a_replay_refuses_an_unknown_game_version() {
    let e = GamesReplayer::default().canonical_deck("texas-holdem", "0.0.0-nope", &Value::Null).unwrap_err();
    assert!(e.contains("version"), "{e}");
    assert!(GamesReplayer::default().canonical_deck("no-such-game", "1", &Value::Null).is_err());
}

#[test]
fn the_landlords_view_holds_the_kitty() {
    let mut sim = Table::new("dou-di-zhu", &Value::Null, 3, 31).unwrap();
    let bot = strategy("dou-di-zhu", "simple").unwrap();
    let mut landlords = 0;
    for _ in 0..4 {
        let h = support::play(&mut sim, bot.as_ref());
        let t = h.sign(&sim.dealer, "room").unwrap();
        for seat in 0..3 {
            let me = Arc::clone(&sim.players[seat]);
            let shared = me.shared_key(&sim.dealer.encryption_key()).unwrap();
            let mut v =
                SessionVerifier::new(sim.dealer.id(), "room", me, sim.dealer.encryption_key(), shared);
            let mut at_first_play = None;
            for e in &t.events {
                let u = v.on_event(e).unwrap_or_else(|e| panic!("seat {seat}: {e}"));
                if let Some(Update::Event(NodeEvent::HandPrepared { hand_id, .. })) = u {
                    v.set_my_seed(&hand_id, h.player_seeds[seat].unwrap());
                    for b in &h.bodies {
                        if let EventBody::ActionResult(a) = b {
                            if a.seat.index() == seat {
                                v.record_my_action(&hand_id, a.seq, a.action.as_str(), a.sig);
                            }
                        }
                    }
                }
                let view = v.view(&h.hand_id).unwrap();
                if at_first_play.is_none() && view.public_state["phase"] == "playing" {
                    at_first_play = Some((view.hand.len(), view.public_state.clone()));
                }
            }
            let view = v.view(&h.hand_id).unwrap();
            // What the player holds is what the table says it holds, kitty included.
            let left = view.public_state["cards_left"][seat].as_u64().unwrap() as usize;
            assert_eq!(view.hand.len(), left, "seat {seat}: {:?}", view.public_state);
            // (A hand where every seat passed the bidding is never played.)
            let Some((held, state)) = at_first_play else { continue };
            let landlord = state["landlord"].as_u64() == Some(seat as u64);
            assert_eq!(held, if landlord { 20 } else { 17 }, "seat {seat} when play starts");
            if landlord {
                landlords += 1;
                // The kitty was dealt to the table, not sealed to the landlord.
                let kitty: Vec<CardId> = serde_json::from_value(state["kitty"].clone()).unwrap();
                assert_eq!(kitty.len(), 3);
                assert!(kitty.iter().all(|c| !view.my_cards.contains(c)));
            }
        }
    }
    assert!(landlords > 0, "some hand had a landlord");
}
