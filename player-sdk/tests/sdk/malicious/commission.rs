//! The commission in the transcript and balances bound across hands
//! (SPEC.md §9.5, §11.2 check 14, §11.4): a dealer that takes more than the
//! room's configured commission, charges one seat more than the others, or
//! hides the commission it took fails a named check, live and offline.

use claw_audit::Auditor;
use claw_engine::testing::{PlayedHand, Table};
use claw_player::bots::strategy;
use claw_protocol::audit::AuditCheck;
use claw_protocol::messages::{EventBody, RawJson};
use claw_protocol::transcript::Transcript;
use claw_protocol::Chips;
use serde_json::Value;

use super::{game_start, live_failure_over, support};

/// `n` consecutive Hold'em hands of a room whose accounts carry over, with
/// `commission` taken before each.
fn room_hands(commission: u64, n: usize) -> (Table, Vec<PlayedHand>) {
    let mut sim = Table::new("texas-holdem", &Value::Null, 3, 41).unwrap();
    sim.commission = Chips(commission);
    sim.carry_balances = true;
    let bot = strategy("texas-holdem", "simple").unwrap();
    let hands = (0..n).map(|_| support::play(&mut sim, bot.as_ref())).collect();
    (sim, hands)
}

fn sign_all(sim: &Table, hands: &[PlayedHand]) -> Vec<Transcript> {
    hands.iter().map(|h| h.sign(&sim.dealer, "room").unwrap()).collect()
}

/// Seat 0's live verdict over the hands, its room configuration stating `room`.
fn live(sim: &Table, hands: &[PlayedHand], ts: &[Transcript], room: u64) -> Option<AuditCheck> {
    let pairs: Vec<_> = hands.iter().zip(ts).map(|(h, t)| (h, t.events.as_slice())).collect();
    live_failure_over(sim, &pairs, Some(Chips(room)))
}

/// The offline verdicts of one file holding the hands (`room`: the
/// commission the auditor was told), as (hand index, failed check).
fn offline(sim: &Table, ts: &[Transcript], room: Option<u64>) -> Vec<(usize, AuditCheck)> {
    let text: String = ts.iter().map(|t| t.to_jsonl().unwrap() + "\n").collect();
    let mut a = Auditor::new(Some(sim.dealer.id()));
    a.commission = room.map(Chips);
    a.audit_jsonl(&text)
        .unwrap()
        .iter()
        .enumerate()
        .filter_map(|(i, v)| v.outcome.as_ref().err().map(|e| (i, e.check)))
        .collect()
}

#[test]
fn honest_commissions_and_carried_balances_pass_live_and_offline() {
    let (sim, mut hands) = room_hands(5, 3);
    for h in &mut hands {
        assert!(game_start(h).players.iter().all(|p| p.commission == Chips(5)));
    }
    // Each hand starts where the previous one left each player, less 5.
    let starts: Vec<Vec<Chips>> =
        hands.iter_mut().map(|h| game_start(h).players.iter().map(|p| p.balance).collect()).collect();
    assert_eq!(starts[0], vec![Chips(9_995); 3]);
    for k in 1..3 {
        for (s, (prev, net)) in starts[k - 1].iter().zip(&hands[k - 1].result.net).enumerate() {
            assert_eq!(starts[k][s].0 as i64, prev.0 as i64 + net - 5, "hand {k} seat {s}");
        }
    }
    let ts = sign_all(&sim, &hands);
    assert_eq!(live(&sim, &hands, &ts, 5), None);
    assert_eq!(offline(&sim, &ts, Some(5)), vec![]);
    assert_eq!(offline(&sim, &ts, None), vec![]);
}

#[test]
fn a_commission_above_the_rooms_fails_live_and_offline() {
    // The room's configuration says 5 (the one the handshake signed and the
    // hand carries); the dealer takes 6 from every seat and says so.
    let (sim, mut hands) = room_hands(5, 1);
    for p in &mut game_start(&mut hands[0]).players {
        p.commission = Chips(6);
    }
    let ts = sign_all(&sim, &hands);
    assert_eq!(live(&sim, &hands, &ts, 5), Some(AuditCheck::Commission));
    // Offline, no flag is needed: the hand carries its room configuration.
    assert_eq!(offline(&sim, &ts, None), vec![(0, AuditCheck::Commission)]);
    assert_eq!(offline(&sim, &ts, Some(5)), vec![(0, AuditCheck::Commission)]);
    // Told nothing, the auditor still refuses one seat charged more than the others.
    let (sim, mut hands) = room_hands(5, 1);
    let g = game_start(&mut hands[0]);
    g.players[2].commission = Chips(9);
    let ts = sign_all(&sim, &hands);
    assert_eq!(offline(&sim, &ts, None), vec![(0, AuditCheck::Commission)]);
}

#[test]
fn a_room_configuration_rewritten_to_match_a_higher_commission_fails_live_and_beside_the_previous_hand() {
    // The dealer also rewrites the room configuration its second hand
    // carries to say 6, as its seats do.
    let (sim, mut hands) = room_hands(5, 2);
    let mut room = sim.room_config();
    room.commission = Chips(6);
    let g = game_start(&mut hands[1]);
    g.room_config = Some(RawJson::from_value(&room).unwrap());
    for p in &mut g.players {
        p.commission = Chips(6);
    }
    let ts = sign_all(&sim, &hands);
    // Live: not the configuration the handshake signed.
    assert_eq!(live(&sim, &hands, &ts, 5), Some(AuditCheck::Structure));
    // Offline: alone it is consistent; beside the hand it continues, it
    // changed the room's configuration.
    assert_eq!(offline(&sim, &ts[1..], None), vec![]);
    assert_eq!(offline(&sim, &ts, None), vec![(1, AuditCheck::PreviousHand)]);
}

#[test]
fn a_hidden_commission_fails_the_balance_binding_live_and_offline() {
    // The room charges nothing; the dealer takes 5 before the second hand
    // and announces commission 0 (its room configuration still says 0).
    let mut sim = Table::new("texas-holdem", &Value::Null, 3, 42).unwrap();
    sim.carry_balances = true;
    let bot = strategy("texas-holdem", "simple").unwrap();
    let room = RawJson::from_value(&sim.room_config()).unwrap();
    let first = support::play(&mut sim, bot.as_ref());
    sim.commission = Chips(5);
    let mut second = support::play(&mut sim, bot.as_ref());
    let g = game_start(&mut second);
    g.room_config = Some(room);
    for p in &mut g.players {
        p.commission = Chips::ZERO;
    }
    let hands = [first, second];
    let ts = sign_all(&sim, &hands);
    assert_eq!(live(&sim, &hands, &ts, 0), Some(AuditCheck::Balances));
    // Each hand passes on its own; together, the second fails.
    assert_eq!(offline(&sim, &ts[1..], Some(0)), vec![]);
    assert_eq!(offline(&sim, &ts, Some(0)), vec![(1, AuditCheck::Balances)]);
    assert_eq!(offline(&sim, &ts, None), vec![(1, AuditCheck::Balances)]);
    // Renumbered to leave a gap, it is compared all the same: it names the
    // hand it continues (SPEC.md §11.4).
    let mut gap = hands[1].clone();
    if let Some(EventBody::HandPrepare(p)) = gap.bodies.first_mut() {
        p.hand_number += 1;
    }
    let ts_gap = [ts[0].clone(), gap.sign(&sim.dealer, "room").unwrap()];
    assert_eq!(offline(&sim, &ts_gap, None), vec![(1, AuditCheck::Balances)]);
}
