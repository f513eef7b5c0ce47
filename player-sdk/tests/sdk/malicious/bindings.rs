//! Every signed field is checked or bound (SPEC.md §9.5, §11): one field of
//! honest engine hands is changed, the dealer signs the result, and seat
//! 0's live verifier and the offline auditor (no flag) fail with the named
//! check, or, for a field SPEC declares informational, both accept it and
//! no verified outcome changes. The hands are consecutive hands of one
//! room, so each names the one before it.

use claw_audit::Auditor;
use claw_engine::testing::{PlayedHand, Table};
use claw_player::bots::strategy;
use claw_protocol::audit::{ActionSource, AuditCheck};
use claw_protocol::messages::{
    config_hash, DeckMode, EventBody, HandPrepare, PreviousHand, RawJson, TimeoutReason,
};
use claw_protocol::transcript::Transcript;
use claw_protocol::{HandId, Identity};
use serde_json::{json, Value};

use super::{game_start, support, LivePlayer};

/// `n` consecutive hands of `game` at a table of `players` whose accounts
/// carry over, every seat playing `bot`.
fn room_hands(game: &str, players: usize, bot: &str, n: usize) -> (Table, Vec<PlayedHand>) {
    let mut sim = Table::new(game, &Value::Null, players, 51).unwrap();
    sim.carry_balances = true;
    let bot = strategy(game, bot).unwrap();
    let hands = (0..n).map(|_| support::play(&mut sim, bot.as_ref())).collect();
    (sim, hands)
}

fn holdem(n: usize) -> (Table, Vec<PlayedHand>) {
    room_hands("texas-holdem", 3, "simple", n)
}

fn prepare(h: &mut PlayedHand) -> &mut HandPrepare {
    match h.bodies.first_mut() {
        Some(EventBody::HandPrepare(p)) => p,
        other => panic!("{other:?}"),
    }
}

fn sign_all(sim: &Table, hands: &[PlayedHand]) -> Vec<Transcript> {
    hands.iter().map(|h| h.sign(&sim.dealer, "room").unwrap()).collect()
}

/// Seat `seat`'s live verdict over the hands, in one connection.
fn live(sim: &Table, seat: usize, hands: &[PlayedHand], ts: &[Transcript]) -> Option<AuditCheck> {
    let mut p = LivePlayer::new(sim, seat);
    for (h, t) in hands.iter().zip(ts) {
        for e in &t.events {
            if let Err(e) = p.feed(h, e) {
                return Some(e.check);
            }
        }
    }
    None
}

/// The offline verdicts of one file holding the hands, audited by a third
/// party (`viewer` none) or by the player of seat `viewer` with its key
/// file: (hand index, failed check).
fn offline(sim: &Table, ts: &[Transcript], viewer: Option<usize>) -> Vec<(usize, AuditCheck)> {
    let text: String = ts.iter().map(|t| t.to_jsonl().unwrap() + "\n").collect();
    let mut a = Auditor::new(Some(sim.dealer.id()));
    if let Some(v) = viewer {
        a = a.with_viewer(&sim.players[v]);
    }
    a.audit_jsonl(&text)
        .unwrap()
        .iter()
        .enumerate()
        .filter_map(|(i, v)| v.outcome.as_ref().err().map(|e| (i, e.check)))
        .collect()
}

#[test]
fn honest_hands_name_their_previous_hand_and_pass() {
    let (sim, mut hands) = holdem(3);
    assert_eq!(game_start(&mut hands[0]).previous, None);
    for k in 1..3 {
        let prev = PreviousHand { hand_id: hands[k - 1].hand_id, hand_number: k as u64 - 1 };
        assert_eq!(game_start(&mut hands[k]).previous, Some(prev));
    }
    let ts = sign_all(&sim, &hands);
    assert_eq!(live(&sim, 0, &hands, &ts), None);
    assert_eq!(offline(&sim, &ts, None), vec![]);
    assert_eq!(offline(&sim, &ts, Some(1)), vec![]);
}

#[test]
fn a_renumbered_hand_is_still_compared_with_the_hand_it_continues() {
    // The mutant: a hand renumbered to leave a gap, with a balance
    // changed, in games whose replay does not see the balance.
    for (game, players, bot) in [("dou-di-zhu", 3, "simple"), ("guandan", 4, "guandan-l1")] {
        let (sim, mut hands) = room_hands(game, players, bot, 2);
        // Renumbered upward alone: hands voided in between take numbers, so
        // this is declared informational; the pair is compared all the same.
        prepare(&mut hands[1]).hand_number += 3;
        let ts = sign_all(&sim, &hands);
        assert_eq!(offline(&sim, &ts, None), vec![], "{game}: renumbered");
        assert_eq!(live(&sim, 0, &hands, &ts), None, "{game}: renumbered");
        // And seat 0 starts it one chip richer than its last hand left it.
        game_start(&mut hands[1]).players[0].balance.0 += 1;
        let ts = sign_all(&sim, &hands);
        assert_eq!(offline(&sim, &ts[1..], None), vec![], "{game}: alone, nothing binds it");
        assert_eq!(offline(&sim, &ts, None), vec![(1, AuditCheck::Balances)], "{game}");
        assert_eq!(live(&sim, 0, &hands, &ts), Some(AuditCheck::Balances), "{game}");
    }
}

#[test]
fn a_hand_numbered_at_or_below_its_previous_hand_fails() {
    let (sim, mut hands) = holdem(2);
    prepare(&mut hands[1]).hand_number = 0;
    let ts = sign_all(&sim, &hands);
    assert_eq!(live(&sim, 0, &hands, &ts), Some(AuditCheck::Structure));
    assert_eq!(offline(&sim, &ts, None), vec![(1, AuditCheck::Structure)]);
}

#[test]
fn a_hand_naming_another_previous_hand_fails_live() {
    // Seat 0 saw hand 0 end in this connection; hand 1 names a hand 0 it
    // never saw.
    let (sim, mut hands) = holdem(2);
    game_start(&mut hands[1]).previous = Some(PreviousHand { hand_id: HandId([7; 16]), hand_number: 0 });
    let ts = sign_all(&sim, &hands);
    assert_eq!(live(&sim, 0, &hands, &ts), Some(AuditCheck::PreviousHand));
    // Offline, hand 1 now continues a hand the auditor was not given: it is
    // compared with nothing (SPEC.md §11.4: the player fetches that hand).
    assert_eq!(offline(&sim, &ts, None), vec![]);
    // Naming none, as if the room had just opened, with table memory.
    let (sim, mut hands) = holdem(2);
    game_start(&mut hands[1]).previous = None;
    let ts = sign_all(&sim, &hands);
    assert_eq!(live(&sim, 0, &hands, &ts), Some(AuditCheck::Structure));
    assert_eq!(offline(&sim, &ts, None), vec![(1, AuditCheck::Structure)]);
}

#[test]
fn the_seed_timeout_is_the_room_configurations() {
    let (sim, mut hands) = holdem(1);
    prepare(&mut hands[0]).seed_timeout_ms = 60_000;
    let ts = sign_all(&sim, &hands);
    assert_eq!(live(&sim, 0, &hands, &ts), Some(AuditCheck::Structure));
    assert_eq!(offline(&sim, &ts, None), vec![(0, AuditCheck::Structure)]);
}

#[test]
fn play_neutral_settings_are_bound_to_the_room_configuration_and_the_games_form() {
    // A member the rules ignore, with the config hash recomputed.
    let (sim, mut hands) = holdem(1);
    let g = game_start(&mut hands[0]);
    let mut settings: Value = g.settings.to_value().unwrap();
    settings["note"] = json!("play-neutral");
    g.settings = RawJson::from_value(&settings).unwrap();
    g.config_hash = config_hash(&g.game, &g.game_version, &g.settings);
    let ts = sign_all(&sim, &hands);
    assert_eq!(live(&sim, 0, &hands, &ts), Some(AuditCheck::Structure));
    assert_eq!(offline(&sim, &ts, None), vec![(0, AuditCheck::Structure)]);
    // The room configuration the hand carries rewritten to match: not the
    // one the handshake signed; offline, settings the rules do not take
    // (Hold'em refuses a member it does not know: no canonical deck; a game
    // that ignored it would fail the replay, whose settings must be the
    // game's own form).
    let mut room = sim.room_config();
    room.settings = settings;
    game_start(&mut hands[0]).room_config = Some(RawJson::from_value(&room).unwrap());
    let ts = sign_all(&sim, &hands);
    assert_eq!(live(&sim, 0, &hands, &ts), Some(AuditCheck::Structure));
    assert_eq!(offline(&sim, &ts, None), vec![(0, AuditCheck::Shuffle)]);
}

#[test]
fn table_memory_is_bound_to_the_previous_hand_and_the_games_form() {
    // An extra member in the table memory the second hand starts from.
    let (sim, mut hands) = holdem(2);
    let memory = &mut game_start(&mut hands[1]).memory;
    assert!(memory.is_object(), "{memory}");
    memory["extra"] = json!(1);
    let ts = sign_all(&sim, &hands);
    assert_eq!(live(&sim, 0, &hands, &ts), Some(AuditCheck::PreviousHand));
    assert_eq!(offline(&sim, &ts, None), vec![(1, AuditCheck::Replay)]);
    assert_eq!(offline(&sim, &ts[1..], None), vec![(0, AuditCheck::Replay)]);
}

#[test]
fn a_players_encryption_key_is_bound_by_its_owner() {
    // The dealer announces another key for seat 1 (its cards still sealed
    // to the real one): a third party cannot tell, seat 1 refuses the hand.
    let (sim, mut hands) = holdem(1);
    game_start(&mut hands[0]).players[1].encryption_key = Identity::from_seed([9; 32]).encryption_key();
    let ts = sign_all(&sim, &hands);
    assert_eq!(offline(&sim, &ts, None), vec![]);
    assert_eq!(live(&sim, 0, &hands, &ts), None, "seat 0 cannot tell either");
    assert_eq!(live(&sim, 1, &hands, &ts), Some(AuditCheck::Structure));
    assert_eq!(offline(&sim, &ts, Some(1)), vec![(0, AuditCheck::Structure)]);
}

#[test]
fn the_dealer_encryption_key_is_bound_to_the_handshake_and_the_previous_hand() {
    let (sim, mut hands) = holdem(2);
    game_start(&mut hands[1]).dealer_encryption_key = Identity::from_seed([9; 32]).encryption_key();
    let ts = sign_all(&sim, &hands);
    assert_eq!(live(&sim, 0, &hands, &ts), Some(AuditCheck::Structure));
    // Seat 0's sealed cards no longer open with the announced key.
    assert_eq!(offline(&sim, &ts[1..], Some(0)), vec![(0, AuditCheck::OpenedCards)]);
    // A third party: alone it cannot tell; beside the hand it continues, the
    // dealer's key changed.
    assert_eq!(offline(&sim, &ts[1..], None), vec![]);
    assert_eq!(offline(&sim, &ts, None), vec![(1, AuditCheck::PreviousHand)]);
}

#[test]
fn a_shuffled_hand_called_scripted_fails_the_shuffle() {
    // A scripted deck is only checked to be a permutation: claiming it for a
    // game that shuffles would let the dealer stack the deck.
    let (sim, mut hands) = holdem(1);
    game_start(&mut hands[0]).deck_mode = DeckMode::Scripted;
    let ts = sign_all(&sim, &hands);
    assert_eq!(live(&sim, 0, &hands, &ts), Some(AuditCheck::Shuffle));
    assert_eq!(offline(&sim, &ts, None), vec![(0, AuditCheck::Shuffle)]);
}

#[test]
fn the_timeout_reason_changes_no_verified_outcome() {
    // Informational (SPEC.md §9.5): another valid reason passes live and
    // offline, and the audited hand differs in that reason only.
    let mut sim = Table::new("texas-holdem", &Value::Null, 3, 52).unwrap();
    sim.timeout_every = Some(2);
    let bot = strategy("texas-holdem", "simple").unwrap();
    let honest = (0..50)
        .map(|_| support::play(&mut sim, bot.as_ref()))
        .find(|h| h.bodies.iter().any(|b| matches!(b, EventBody::TimeoutAction(_))))
        .expect("a hand with a timeout");
    let mut h = honest.clone();
    for b in &mut h.bodies {
        if let EventBody::TimeoutAction(t) = b {
            t.reason = TimeoutReason::Disconnected;
        }
    }
    let (t0, t1) = (honest.sign(&sim.dealer, "room").unwrap(), h.sign(&sim.dealer, "room").unwrap());
    let mut p = LivePlayer::new(&sim, 0);
    for e in &t1.events {
        p.feed(&h, e).unwrap();
    }
    let a = Auditor::new(Some(sim.dealer.id()));
    let (r0, r1) = (a.audit(&t0, None).unwrap(), a.audit(&t1, None).unwrap());
    assert!(r1.complete());
    let mut hand = r1.hand;
    for x in &mut hand.actions {
        if let ActionSource::Timeout { reason } = &mut x.source {
            assert_eq!(*reason, TimeoutReason::Disconnected);
            *reason = TimeoutReason::Timeout;
        }
    }
    assert_eq!(hand, r0.hand);
}

#[test]
fn the_result_summary_is_informational_and_the_result_data_bound() {
    // SPEC.md §9.5, §14.1: `summary` is human text no auditor compares; a
    // dealer rewriting it changes no verdict. The result's data is bound.
    let (sim, mut hands) = holdem(1);
    fn end(h: &mut PlayedHand) -> &mut claw_protocol::messages::GameEnd {
        match h.bodies.iter_mut().find(|b| matches!(b, EventBody::GameEnd(_))) {
            Some(EventBody::GameEnd(g)) => g,
            _ => panic!("game-end"),
        }
    }
    let mut told = hands.clone();
    end(&mut told[0]).result.summary = "seat 2 wins everything".into();
    let ts = sign_all(&sim, &told);
    assert_eq!(live(&sim, 0, &told, &ts), None);
    assert_eq!(offline(&sim, &ts, None), vec![]);
    end(&mut hands[0]).result.rake.0 += 1;
    let ts = sign_all(&sim, &hands);
    assert_eq!(live(&sim, 0, &hands, &ts), Some(AuditCheck::Replay));
    assert_eq!(offline(&sim, &ts, None), vec![(0, AuditCheck::Replay)]);
}

#[test]
fn a_hand_voided_after_its_end_is_not_continued() {
    // The dealer voids hand 1 after its end (its settlement failed): it is
    // refunded, and hand 2 continues hand 0 (SPEC.md §9.5). Blackjack's
    // table memory is the same after every hand, so only the link changes.
    let (sim, mut hands) = room_hands("blackjack", 2, "simple", 3);
    assert_eq!(game_start(&mut hands[2]).memory, json!({}));
    let zero = PreviousHand { hand_id: hands[0].hand_id, hand_number: 0 };
    game_start(&mut hands[2]).previous = Some(zero);
    let ts = sign_all(&sim, &hands);
    let run = |told: bool| {
        let mut p = LivePlayer::new(&sim, 0);
        for (k, (h, t)) in hands.iter().zip(&ts).enumerate() {
            if k == 2 && told {
                p.v.hand_voided(&hands[1].hand_id);
            }
            for e in &t.events {
                p.feed(h, e).map_err(|e| e.check)?;
            }
        }
        Ok::<(), AuditCheck>(())
    };
    run(true).unwrap();
    // Not told of the void, the player holds hand 2 to continue hand 1.
    assert_eq!(run(false), Err(AuditCheck::PreviousHand));
}
