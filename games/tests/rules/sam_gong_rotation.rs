//! Sam Gong banker rotation across hands (BankerRotation, D9; see
//! docs/games/sam-gong.md §6).

use claw_games::sam_gong::rotation::{choose_banker, first_banker, SamGongMemory};
use claw_games::{registry, GameError, HandRunner, PlayerInfo};
use claw_protocol::{CardId, Chips, Seat};
use serde_json::{json, Value};

use crate::support::pid;

fn info(i: usize, balance: u64) -> PlayerInfo {
    PlayerInfo { id: pid(i), balance: Chips(balance) }
}

fn table(balances: &[u64]) -> Vec<PlayerInfo> {
    balances.iter().enumerate().map(|(i, b)| info(i, *b)).collect()
}

fn memory(last: usize, order: &[usize]) -> SamGongMemory {
    SamGongMemory {
        last_banker: Some(pid(last)),
        last_order: order.iter().map(|i| pid(*i)).collect(),
        hands_played: 1,
    }
}

const MIN: Chips = Chips(100);

#[test]
fn first_hand_most_chips_ties_to_first_joined() {
    assert_eq!(first_banker(&table(&[500, 900, 300]), MIN), Some(Seat(1)));
    assert_eq!(first_banker(&table(&[900, 500, 900]), MIN), Some(Seat(0)));
    assert_eq!(first_banker(&table(&[100, 100]), MIN), Some(Seat(0)));
    assert_eq!(first_banker(&table(&[99, 0]), MIN), None);
    let none = SamGongMemory::default();
    assert_eq!(choose_banker(&table(&[500, 900, 900]), &none, MIN), Ok(Seat(1)));
}

#[test]
fn rotates_clockwise() {
    let t = table(&[500, 900, 300, 200]);
    assert_eq!(choose_banker(&t, &memory(1, &[0, 1, 2, 3]), MIN), Ok(Seat(2)));
    assert_eq!(choose_banker(&t, &memory(3, &[0, 1, 2, 3]), MIN), Ok(Seat(0)));
}

#[test]
fn d9_skips_a_banker_who_cannot_cover_the_minimum() {
    // Seat 2 holds 99 < 100: skipped; seat 3 banks.
    let t = table(&[500, 900, 99, 200]);
    assert_eq!(choose_banker(&t, &memory(1, &[0, 1, 2, 3]), MIN), Ok(Seat(3)));
    // Seats 2 and 3 both short: round to seat 0.
    let t = table(&[500, 900, 99, 0]);
    assert_eq!(choose_banker(&t, &memory(1, &[0, 1, 2, 3]), MIN), Ok(Seat(0)));
    // Only the last banker can cover it: it banks again.
    let t = table(&[5, 900, 99, 0]);
    assert_eq!(choose_banker(&t, &memory(1, &[0, 1, 2, 3]), MIN), Ok(Seat(1)));
    // No one can: no hand.
    let t = table(&[5, 50, 99, 0]);
    assert!(matches!(choose_banker(&t, &memory(1, &[0, 1, 2, 3]), MIN), Err(GameError::BadPlayers(_))));
}

#[test]
fn players_who_left_and_newcomers() {
    // Last hand: players 0, 1, 2, 3; player 1 banked. Player 2 has left;
    // player 9 joined between hands (seated after player 1).
    let now = vec![info(0, 500), info(1, 500), info(9, 5000), info(3, 500)];
    // Next after 1 in the old order is 2 (gone), then 3: seat 3 here. The
    // newcomer does not take the banker's seat on its first hand.
    assert_eq!(choose_banker(&now, &memory(1, &[0, 1, 2, 3]), MIN), Ok(Seat(3)));
    // The last banker left: its clockwise successor still banks.
    let now = vec![info(0, 500), info(2, 500), info(3, 500)];
    assert_eq!(choose_banker(&now, &memory(1, &[0, 1, 2, 3]), MIN), Ok(Seat(1)));
    // No one from the last hand can bank: the first-hand rule among everyone.
    let now = vec![info(0, 50), info(7, 800), info(8, 900)];
    assert_eq!(choose_banker(&now, &memory(0, &[0, 1]), MIN), Ok(Seat(2)));
    // Memory naming a banker outside its order: first-hand rule.
    let now = table(&[100, 300]);
    assert_eq!(choose_banker(&now, &memory(5, &[0, 1]), MIN), Ok(Seat(1)));
}

/// Plays hands at one table, carrying the memory, and returns each banker.
fn play(balances: &mut [u64], hands: usize, act: impl Fn(usize, Seat, &Value) -> Value) -> Vec<Seat> {
    let g = registry::get("sam-gong").unwrap();
    let mut mem = Value::Null;
    let mut bankers = Vec::new();
    for h in 0..hands {
        let p = table(balances);
        let (mut r, _) =
            HandRunner::start(g.as_ref(), &Value::Null, &p, &mem, CardId::deck(1, false)).unwrap();
        let banker = r.hand().to_act().unwrap();
        bankers.push(banker);
        while let Some(seat) = r.hand().to_act() {
            let a = act(h, seat, &r.hand().public_state());
            r.act(seat, &a).unwrap();
        }
        let result = r.hand().result().unwrap();
        for (b, n) in balances.iter_mut().zip(&result.net) {
            *b = (*b as i64 + n) as u64;
        }
        mem = r.hand().memory_after();
    }
    bankers
}

#[test]
fn rotation_across_hands_folded_players_included() {
    // Seat 2 has the most chips: it banks first, then 3, 0, 1, 2, … Everyone
    // folds every hand, and folding does not take a player out of the rotation.
    let mut balances = [1000, 1000, 3000, 1000];
    let bankers = play(&mut balances, 6, |_, seat, ps| {
        if ps["phase"] == json!("banker-bet") {
            json!({"type": "bet", "amount": 100})
        } else {
            let _ = seat;
            json!({"type": "fold"})
        }
    });
    assert_eq!(bankers, vec![Seat(2), Seat(3), Seat(0), Seat(1), Seat(2), Seat(3)]);
    assert_eq!(balances, [1000, 1000, 3000, 1000]);
}

#[test]
fn rotation_skips_a_player_who_went_broke() {
    // The canonical deck deals seat 0 "2c 2d 2h" (6), seat 1 "2s 3c 3d" (8),
    // seat 2 "3h 3s 4c" (0). Seat 1 (most chips) banks 500; seat 2 calls with
    // all its 500 and loses, so it is skipped when its turn to bank comes (D9).
    let mut balances = [1000, 2000, 500];
    let bankers = play(&mut balances, 3, |h, seat, ps| {
        if ps["phase"] == json!("banker-bet") {
            json!({"type": "bet", "amount": if h == 0 { 500 } else { 100 }})
        } else if h == 0 && seat == Seat(2) {
            json!({"type": "call"})
        } else {
            json!({"type": "fold"})
        }
    });
    assert_eq!(balances[2], 0);
    assert_eq!(bankers, vec![Seat(1), Seat(0), Seat(1)]);
}
