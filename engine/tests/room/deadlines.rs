//! Turn deadlines are pushed (issue 31): the actor gets `your-turn` with
//! its deadline, every other player of the hand a `turn` naming the actor
//! and the same deadline, again whenever that deadline moves.

use std::time::Duration;

use claw_engine::room::Input;
use claw_protocol::messages::{ServerMessage, Turn};
use serde_json::json;

use super::Harness;

fn turns(h: &Harness, i: usize) -> Vec<Turn> {
    h.inbox[i]
        .iter()
        .filter_map(|m| match m {
            ServerMessage::Turn(t) => Some(*t),
            _ => None,
        })
        .collect()
}

#[test]
fn the_other_players_are_told_whose_turn_it_is_and_its_deadline_when_it_starts_and_moves() {
    let mut h = Harness::new(3, |c| c.away_timeout = Duration::from_secs(5));
    h.seat_everyone();
    let first = h.last_turn(0).expect("seat 0 to act").clone();
    assert!(turns(&h, 0).is_empty(), "the actor gets your-turn, not turn");
    for i in [1, 2] {
        let t = *turns(&h, i).last().expect("a turn notice");
        assert_eq!(
            (t.hand_id, t.acting.seat, t.acting.deadline_ms),
            (first.hand_id, first.seat, first.deadline_ms)
        );
        assert_eq!(t.acting.player, h.players[0].id());
    }
    // The notice follows the burst that started the turn.
    let ev =
        h.log.iter().rposition(|l| l == "1 <- event action-result" || l == "1 <- event game-start").unwrap();
    let notice = h.log.iter().rposition(|l| l == "1 <- turn").unwrap();
    assert!(ev < notice, "{:#?}", h.log);
    // Seat 0 acts: seat 1's turn is announced to 0 and 2.
    h.act(0, json!({"type": "bet"}));
    h.settle_chips();
    let second = h.last_turn(1).expect("seat 1 to act").clone();
    for i in [0, 2] {
        let t = *turns(&h, i).last().unwrap();
        assert_eq!((t.acting.seat, t.acting.deadline_ms), (second.seat, second.deadline_ms));
    }
    // Seat 1 drops: its deadline moves to away_timeout from now; 0 and 2 are told.
    h.advance(Duration::from_secs(1));
    let before = turns(&h, 2).len();
    h.input(Input::Disconnected(Harness::conn(1)));
    let moved = turns(&h, 2);
    assert_eq!(moved.len(), before + 1, "one notice for the moved deadline");
    let t = moved.last().unwrap();
    assert_eq!(t.acting.seat, second.seat);
    assert_eq!(t.acting.deadline_ms, h.now.unix_ms + 5_000);
    assert!(t.acting.deadline_ms < second.deadline_ms);
    assert_eq!(turns(&h, 0).last().map(|t| t.acting.deadline_ms), Some(t.acting.deadline_ms));
}
