//! The room announces what it took before each hand: every `game-start`
//! player carries the room's commission, and each hand starts a player
//! where its previous hand left it, less that commission (SPEC.md §9.5,
//! §11.4), as the auditor checks.

use std::time::Duration;

use claw_protocol::audit::{audit, check_balances, AuditCheck, AuditOptions};
use claw_protocol::messages::EventBody;
use claw_protocol::transcript::Transcript;
use claw_protocol::Chips;

use super::{play_hand, Harness};

fn game_start_players(t: &Transcript) -> Vec<claw_protocol::messages::HandPlayer> {
    t.events
        .iter()
        .find_map(|e| match e.decode_body() {
            Ok(EventBody::GameStart(g)) => Some(g.players),
            _ => None,
        })
        .expect("a game-start")
}

#[test]
fn game_start_carries_the_commission_and_balances_chain_from_hand_to_hand() {
    let mut h = Harness::new(3, |c| c.commission = Chips(3));
    h.seat_everyone();
    play_hand(&mut h);
    h.settle_chips();
    h.advance(Duration::from_secs(2));
    h.settle_chips();
    h.tick();
    h.settle_chips();
    play_hand(&mut h);
    h.settle_chips();
    let mut hands: Vec<Transcript> = h.files.values().cloned().collect();
    assert_eq!(hands.len(), 2, "two hands archived");
    let opts =
        AuditOptions { dealer: Some(h.dealer.id()), commission: Some(Chips(3)), ..AuditOptions::default() };
    let mut reports: Vec<_> = hands.iter().map(|t| audit(t, &opts).unwrap()).collect();
    reports.sort_by_key(|r| r.hand.hand_number);
    hands.sort_by_key(|t| reports.iter().position(|r| r.hand.hand_id == t.hand_id));
    for (t, r) in hands.iter().zip(&reports) {
        assert!(r.passed.contains(&AuditCheck::Commission));
        assert!(game_start_players(t).iter().all(|p| p.commission == Chips(3)));
    }
    // The first hand starts from the provider's 1000 less the commission.
    assert!(reports[0].hand.players.iter().all(|p| p.balance == Chips(997)));
    check_balances(&reports[0].hand, &reports[1].hand).unwrap();
    // Told another commission, the auditor refuses the room's hands.
    let other = AuditOptions { commission: Some(Chips(2)), ..opts };
    assert_eq!(audit(&hands[0], &other).unwrap_err().check, AuditCheck::Commission);
}

/// Plays the running hand out: each seat takes the first action it is
/// offered, until the room reports the hand finished.
fn play_out(h: &mut Harness) {
    let finished = |h: &Harness| h.log.iter().filter(|l| *l == "report hand-finished").count();
    let before = finished(h);
    let mut done = std::collections::HashSet::new();
    for _ in 0..200 {
        if finished(h) > before {
            return;
        }
        let next = (0..h.players.len()).find_map(|i| {
            let t = h.last_turn(i)?;
            (!done.contains(&(t.hand_id, t.seq, i)))
                .then(|| (i, t.hand_id, t.seq, t.actions[0].action.clone()))
        });
        let Some((i, hand, seq, action)) = next else { panic!("nobody to act: {:#?}", h.log) };
        done.insert((hand, seq, i));
        h.act(i, action);
        h.settle_chips();
    }
    panic!("the hand did not end");
}

fn join_at(h: &mut Harness, i: usize, seat: u8) {
    h.connect(i);
    h.send(
        i,
        claw_protocol::messages::ClientMessage::JoinRequest(claw_protocol::messages::JoinRequest {
            sdk_version: String::new(),
            name: None,
            seat: Some(claw_protocol::Seat(seat)),
            buy_in: None,
        }),
    );
    h.settle_chips();
}

/// The next hand: the pause between hands, then its chip calls.
fn next_hand(h: &mut Harness) {
    h.settle_chips();
    h.advance(Duration::from_secs(2));
    h.settle_chips();
    h.tick();
    h.settle_chips();
}

#[test]
fn sam_gong_seats_with_gaps_rotate_the_banker_in_seat_order() {
    // Players at room seats 0, 2 and 5 of six; a fourth joins seat 1 later.
    let mut h = Harness::new(4, |c| {
        c.game = "sam-gong".into();
        c.settings = serde_json::Value::Null;
        c.min_players = 3;
        c.max_players = 6;
    });
    h.balances = vec![10_000; 4]; // far above the bronze entry, whatever the hands pay
    for (i, seat) in [(0, 0), (1, 2), (2, 5)] {
        join_at(&mut h, i, seat);
    }
    h.tick();
    h.settle_chips();
    let room_seat = |id: &claw_protocol::PlayerId, h: &Harness| [0u8, 2, 5, 1][h.player_seat(id)];
    let mut bankers = Vec::new();
    let mut orders = Vec::new();
    for hand in 0..5 {
        if hand == 3 {
            join_at(&mut h, 3, 1);
        }
        if hand > 0 {
            next_hand(&mut h);
        }
        play_out(&mut h);
        let t = h
            .files
            .values()
            .max_by_key(|t| match t.events[0].decode_body() {
                Ok(EventBody::HandPrepare(p)) => p.hand_number,
                _ => 0,
            })
            .unwrap()
            .clone();
        orders.push(game_start_players(&t).iter().map(|p| room_seat(&p.id, &h)).collect::<Vec<_>>());
        let end = t
            .events
            .iter()
            .find_map(|e| match e.decode_body() {
                Ok(EventBody::GameEnd(g)) => Some(g),
                _ => None,
            })
            .unwrap();
        let banker: claw_protocol::PlayerId =
            serde_json::from_value(end.memory_after["last_banker"].clone()).unwrap();
        bankers.push(room_seat(&banker, &h));
    }
    // Hand seats follow the room's seat numbers, gaps closed up.
    assert_eq!(orders[..3], [vec![0, 2, 5], vec![0, 2, 5], vec![0, 2, 5]]);
    assert_eq!(orders[3..], [vec![0, 1, 2, 5], vec![0, 1, 2, 5]]);
    // First hand: equal chips, the lowest seat banks; then clockwise by seat
    // number. The newcomer at seat 1 does not bank its first hand (Sam Gong's
    // resetForNextRound rule), then its turn comes after seat 0.
    assert_eq!(bankers, vec![0, 2, 5, 0, 1]);
}

/// Sam Gong rule: a player whose balance fell below the
/// table's entry chips is moved out after the hand's settlement, before the
/// next hand, and the others play on.
#[test]
fn a_sam_gong_player_below_the_entry_chips_after_a_hand_leaves_before_the_next() {
    use claw_protocol::messages::{KickReason, ServerMessage};
    let mut h = Harness::new(4, |c| {
        c.game = "sam-gong".into();
        c.settings = serde_json::Value::Null; // bronze: entry 1 000, bets 100–500
        c.min_players = 2;
        c.max_players = 6;
    });
    h.balances = vec![5000, 5000, 1000, 5000];
    h.seat_everyone();
    play_out(&mut h);
    h.settle_chips();
    assert_eq!(h.files.len(), 1, "the first hand finished");
    // Whatever that hand paid seat 2, it is now one chip under the entry
    // (a loss, or a debit elsewhere); the others stay far above it.
    h.balances[2] = 999;
    let under: Vec<usize> = (0..4).filter(|i| h.balances[*i] < 1000).collect();
    assert_eq!(under, vec![2]);
    next_hand(&mut h);
    let kicked = h.inbox[2].iter().find_map(|m| match m {
        ServerMessage::Kicked(k) => Some(k.clone()),
        _ => None,
    });
    let kicked = kicked
        .unwrap_or_else(|| panic!("seat 2 is moved out: {:#?}", &h.log[h.log.len().saturating_sub(40)..]));
    assert_eq!(kicked.code, KickReason::InsufficientBalance);
    assert!(kicked.reason.contains("entry threshold of 1000"), "{}", kicked.reason);
    for i in [0, 1, 3] {
        assert!(!h.inbox[i].iter().any(|m| matches!(m, ServerMessage::Kicked(_))), "seat {i} stays");
    }
    // The second hand deals the three who stayed, not seat 2.
    let starts: Vec<_> = h.inbox[0]
        .iter()
        .filter_map(|m| match m {
            ServerMessage::Event(e) => match e.decode_body() {
                Ok(EventBody::GameStart(g)) => Some(g.players.iter().map(|p| p.id).collect::<Vec<_>>()),
                _ => None,
            },
            _ => None,
        })
        .collect();
    assert_eq!(starts.len(), 2, "two game-starts seen by seat 0");
    let ids: Vec<_> = [0, 1, 3].iter().map(|i| h.players[*i].id()).collect();
    assert_eq!(starts[1].len(), 3);
    assert!(ids.iter().all(|id| starts[1].contains(id)));
    assert!(!starts[1].contains(&h.players[2].id()));
}
