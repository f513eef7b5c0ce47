//! Blackjack: hand-built deals through the HandRunner (totals, naturals, the
//! peek, insurance, soft 17, doubles, splits, 3:2 rounding), bad input, and
//! a few thousand random hands checking conservation, replay and auto actions.

use std::collections::HashSet;
use std::sync::Arc;

use claw_games::blackjack::rules::{hand_total, HandTotal};
use claw_games::{
    check_conservation, registry, replay, ChipMove, ChipOp, ChipParty, DynGame, GameError, HandEvent,
    HandResult, HandRunner, PlayerInfo, RecordedAction,
};
use claw_protocol::{CardId, Chips, Seat};
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha20Rng;
use serde_json::{json, Value};

use crate::support::{cards, players};

fn game() -> Arc<dyn DynGame> {
    registry::get("blackjack").unwrap()
}

/// The shoe with `top` first (in deal order), then the rest of the packs.
fn shoe(top: &str, decks: u8) -> Vec<CardId> {
    let top = cards(top);
    let mut rest = CardId::deck(decks, false);
    for c in &top {
        let i = rest.iter().position(|x| x == c).expect("card in shoe");
        rest.remove(i);
    }
    top.into_iter().chain(rest).collect()
}

struct Table {
    game: Arc<dyn DynGame>,
    settings: Value,
    players: Vec<PlayerInfo>,
    deck: Vec<CardId>,
    runner: HandRunner,
    events: Vec<HandEvent>,
    actions: Vec<RecordedAction>,
}

impl Table {
    fn new(settings: Value, balances: &[u64], top: &str) -> Table {
        let decks = settings.get("decks").and_then(|d| d.as_u64()).unwrap_or(6) as u8;
        let game = game();
        let players = players(balances);
        let deck = shoe(top, decks);
        let (runner, events) =
            HandRunner::start(game.as_ref(), &settings, &players, &Value::Null, deck.clone()).unwrap();
        Table { game, settings, players, deck, runner, events, actions: Vec::new() }
    }

    fn act(&mut self, seat: u8, action: Value) -> Result<Vec<HandEvent>, GameError> {
        let ev = self.runner.act(Seat(seat), &action)?;
        self.actions.push(RecordedAction { seat: Seat(seat), action });
        self.events.extend(ev.clone());
        Ok(ev)
    }

    fn ok(&mut self, seat: u8, action: Value) -> Vec<HandEvent> {
        let a = action.clone();
        self.act(seat, action).unwrap_or_else(|e| panic!("seat {seat} {a}: {e}"))
    }

    fn to_act(&self) -> Option<u8> {
        self.runner.hand().to_act().map(|s| s.0)
    }

    fn public(&self) -> Value {
        self.runner.hand().public_state()
    }

    /// Checks the finished hand: conservation and an identical replay.
    fn finish(&self) -> HandResult {
        let hand = self.runner.hand();
        assert!(hand.is_over(), "hand not over: {}", hand.public_state());
        let result = hand.result().unwrap();
        check_conservation(&self.events, &result, self.players.len()).unwrap();
        let re = replay(
            self.game.as_ref(),
            &self.settings,
            &self.players,
            &Value::Null,
            self.deck.clone(),
            &self.actions,
        )
        .unwrap();
        assert_eq!(re.events, self.events);
        assert_eq!(re.result, result);
        result
    }
}

fn bet(n: u64) -> Value {
    json!({"type": "bet", "amount": n})
}

fn hit() -> Value {
    json!({"type": "hit"})
}

fn stand() -> Value {
    json!({"type": "stand"})
}

fn credits(events: &[HandEvent], party: ChipParty) -> Vec<u64> {
    events
        .iter()
        .filter_map(|e| match e {
            HandEvent::Chip(ChipMove { op: ChipOp::Credit, party: p, amount, .. }) if *p == party => {
                Some(amount.0)
            }
            _ => None,
        })
        .collect()
}

fn reveals(events: &[HandEvent]) -> Vec<u16> {
    events
        .iter()
        .flat_map(|e| match e {
            HandEvent::Reveal { positions } => positions.clone(),
            _ => vec![],
        })
        .collect()
}

#[test]
fn soft_and_hard_totals() {
    let t = |s: &str| hand_total(&cards(s));
    assert_eq!(t("As 6d"), HandTotal { total: 17, soft: true });
    assert_eq!(t("As 6d 9c"), HandTotal { total: 16, soft: false });
    assert_eq!(t("As Ad 9c"), HandTotal { total: 21, soft: true });
    assert_eq!(t("As Ad Ac Ah"), HandTotal { total: 14, soft: true });
    assert_eq!(t("Ks Qd"), HandTotal { total: 20, soft: false });
    assert_eq!(t("Ks Qd 2c"), HandTotal { total: 22, soft: false });
    assert_eq!(t("5s 5d As"), HandTotal { total: 21, soft: true });
    assert_eq!(t("Js As"), HandTotal { total: 21, soft: true });
}

#[test]
fn plain_win_moves_chips_through_the_house() {
    // Deal order: seat 0, house up, seat 0, house hole.
    let mut t = Table::new(Value::Null, &[1000], "Ts 8h 9s Td");
    assert_eq!(t.to_act(), Some(0));
    let ev = t.ok(0, bet(10));
    assert!(matches!(
        &ev[0],
        HandEvent::Chip(ChipMove {
            op: ChipOp::Debit,
            party: ChipParty::Seat(Seat(0)),
            amount: Chips(10),
            ..
        })
    ));
    assert_eq!(t.to_act(), Some(0));
    // The hole card (position 3) is hidden in the public state.
    let public = t.public().to_string();
    assert!(public.contains("hidden") && !public.contains("\"Td\""), "{public}");
    let ev = t.ok(0, stand());
    assert_eq!(reveals(&ev), vec![3]);
    let r = t.finish();
    assert_eq!(r.net, vec![10]);
    assert_eq!(r.house_net, -10);
    assert_eq!(r.winners, vec![Seat(0)]);
    assert_eq!(credits(&t.events, ChipParty::Seat(Seat(0))), vec![20]);
    assert!(t.public().to_string().contains("\"Td\""));
}

#[test]
fn blackjack_pays_three_to_two_rounded_down() {
    // Odd bet 15: 1.5 × 15 = 22.5 → 22, the half chip stays with the house.
    let mut t = Table::new(Value::Null, &[1000], "As 9h Kd 7c");
    let ev = t.ok(0, bet(15));
    assert!(t.runner.hand().is_over(), "a natural needs no decision");
    assert_eq!(credits(&ev, ChipParty::Seat(Seat(0))), vec![37]);
    let r = t.finish();
    assert_eq!(r.net, vec![22]);
    assert_eq!(r.house_net, -22);
    // Even bet 10 → 25.
    let mut t = Table::new(Value::Null, &[1000], "As 9h Kd 7c");
    t.ok(0, bet(10));
    assert_eq!(t.finish().net, vec![15]);
}

#[test]
fn natural_beats_a_drawn_21() {
    // Seat 0 natural, seat 1 17 stands, house 6+5 draws a ten to 21.
    let mut t = Table::new(Value::Null, &[100, 100], "As Ts 6h Kd 7s 5c Td");
    t.ok(0, bet(10));
    t.ok(1, bet(10));
    assert_eq!(t.to_act(), Some(1));
    t.ok(1, stand());
    let r = t.finish();
    assert_eq!(r.net, vec![15, -10]);
    assert_eq!(r.house_net, -5);
}

#[test]
fn peek_settles_at_once_on_house_blackjack() {
    // House up K, hole A. Seat 0 has 20 (loses), seat 1 a natural (push).
    let mut t = Table::new(Value::Null, &[100, 100], "Qs Ac Kh Js Kc As");
    t.ok(0, bet(10));
    let ev = t.ok(1, bet(20));
    assert_eq!(reveals(&ev), vec![5], "hole card revealed at the peek");
    assert!(t.runner.hand().is_over());
    let r = t.finish();
    assert_eq!(r.net, vec![-10, 0]);
    assert_eq!(r.house_net, 10);
    assert_eq!(credits(&t.events, ChipParty::Seat(Seat(1))), vec![20]);
}

#[test]
fn no_peek_without_ace_or_ten_up() {
    let mut t = Table::new(Value::Null, &[100], "Ts 9h 9s 8c");
    let ev = t.ok(0, bet(10));
    assert!(reveals(&ev).is_empty());
    assert_eq!(t.to_act(), Some(0));
}

#[test]
fn insurance_pays_two_to_one_on_house_blackjack() {
    let mut t = Table::new(Value::Null, &[100, 100], "Ts 9s Ah 8s Td Kd");
    t.ok(0, bet(10));
    t.ok(1, bet(11));
    assert_eq!(t.to_act(), Some(0));
    // At most half the bet: 5.
    for bad in [0, 6] {
        let e = t.act(0, json!({"type": "insurance", "amount": bad})).unwrap_err();
        assert!(matches!(e, GameError::BadAmount(_)), "{bad}: {e:?}");
    }
    t.ok(0, json!({"type": "insurance", "amount": 5}));
    assert_eq!(t.to_act(), Some(1));
    let ev = t.ok(1, json!({"type": "no-insurance"}));
    assert_eq!(reveals(&ev), vec![5]);
    let r = t.finish();
    assert_eq!(r.net, vec![0, -11]);
    assert_eq!(r.house_net, 11);
    assert_eq!(credits(&t.events, ChipParty::Seat(Seat(0))), vec![15]);
}

#[test]
fn insurance_lost_when_no_blackjack_and_play_goes_on() {
    let mut t = Table::new(Value::Null, &[100], "Ts Ah 8s 9d");
    t.ok(0, bet(10));
    let ev = t.ok(0, json!({"type": "insurance", "amount": 5}));
    assert!(reveals(&ev).is_empty(), "peek shows nothing when the house has no blackjack");
    assert_eq!(t.to_act(), Some(0));
    t.ok(0, stand());
    let r = t.finish();
    assert_eq!(r.net, vec![-15], "18 loses to 20, insurance lost");
}

#[test]
fn insurance_not_offered_when_bet_too_small() {
    let mut t = Table::new(json!({"min_bet": 1}), &[100], "Ts Ah 8s 9d");
    t.ok(0, bet(1));
    let acts = t.runner.hand().valid_actions();
    assert!(acts.iter().all(|a| a.action["type"] != "insurance"), "{acts:?}");
    assert_eq!(t.to_act(), Some(0));
}

#[test]
fn soft_17_rule_both_ways() {
    // Player 18; house 6 + A = soft 17; next card 4.
    let top = "Ts 6h 8s Ac 4c";
    let mut t = Table::new(Value::Null, &[100], top);
    t.ok(0, bet(10));
    t.ok(0, stand());
    assert_eq!(t.finish().net, vec![10], "stands on soft 17: 18 wins");
    let mut t = Table::new(json!({"hit_soft_17": true}), &[100], top);
    t.ok(0, bet(10));
    t.ok(0, stand());
    assert_eq!(t.finish().net, vec![-10], "hits soft 17 to 21");
    // Hard 17 stands under both settings.
    let mut t = Table::new(json!({"hit_soft_17": true}), &[100], "Ts 7h 8s Tc 4c");
    t.ok(0, bet(10));
    t.ok(0, stand());
    assert_eq!(t.finish().net, vec![10]);
}

#[test]
fn double_takes_one_card_and_doubles_the_stake() {
    let mut t = Table::new(Value::Null, &[100], "5s 6h 6s Tc Ts 9d");
    t.ok(0, bet(10));
    let ev = t.ok(0, json!({"type": "double"}));
    assert!(
        matches!(&ev[0], HandEvent::Chip(ChipMove { op: ChipOp::Debit, amount: Chips(10), reason, .. }) if reason == "double")
    );
    assert!(t.runner.hand().is_over(), "one card then stand; house busts");
    let r = t.finish();
    assert_eq!(r.net, vec![20]);
}

#[test]
fn double_only_on_two_cards_and_when_affordable() {
    let mut t = Table::new(Value::Null, &[100], "2s 6h 3s Tc 2d");
    t.ok(0, bet(10));
    t.ok(0, hit());
    let e = t.act(0, json!({"type": "double"})).unwrap_err();
    assert!(matches!(e, GameError::Illegal(_)), "{e:?}");
    // Stack 15 after a bet of 10 leaves 5: no double.
    let mut t = Table::new(Value::Null, &[15], "5s 6h 6s Tc");
    t.ok(0, bet(10));
    assert!(t.act(0, json!({"type": "double"})).is_err());
    assert!(t.runner.hand().valid_actions().iter().all(|a| a.action["type"] != "double"));
}

#[test]
fn split_then_double_after_split() {
    // 8 8 vs house 6 + T (16). Split: 3c to hand 1, Kd to hand 2.
    let mut t = Table::new(Value::Null, &[100], "8s 6h 8d Tc 3c Kd 9h 7c");
    t.ok(0, bet(10));
    let ev = t.ok(0, json!({"type": "split"}));
    assert!(
        matches!(&ev[0], HandEvent::Chip(ChipMove { op: ChipOp::Debit, amount: Chips(10), reason, .. }) if reason == "split")
    );
    assert_eq!(t.public()["current_hand"], 0);
    t.ok(0, json!({"type": "double"})); // 8 3 9 = 20
    assert_eq!(t.public()["current_hand"], 1);
    t.ok(0, stand()); // 8 K = 18; house draws 7 → 23
    let r = t.finish();
    assert_eq!(r.net, vec![30], "staked 30, paid 40 + 20");
}

#[test]
fn double_after_split_can_be_disabled() {
    let mut t = Table::new(json!({"double_after_split": false}), &[100], "8s 6h 8d Tc 3c Kd 9h 7c");
    t.ok(0, bet(10));
    t.ok(0, json!({"type": "split"}));
    assert!(t.act(0, json!({"type": "double"})).is_err());
}

#[test]
fn resplit_limit() {
    let top = "8s 6h 8d Tc 8h 8c 2c 3c 4c 5c 9c 9d";
    let mut t = Table::new(json!({"max_splits": 1}), &[100], top);
    t.ok(0, bet(10));
    t.ok(0, json!({"type": "split"}));
    let e = t.act(0, json!({"type": "split"})).unwrap_err();
    assert!(matches!(e, GameError::Illegal(_)));
    let mut t = Table::new(Value::Null, &[100], top);
    t.ok(0, bet(10));
    t.ok(0, json!({"type": "split"}));
    t.ok(0, json!({"type": "split"}));
    let p = t.public();
    assert_eq!(p["seats"][0]["hands"].as_array().unwrap().len(), 3);
}

#[test]
fn split_aces_get_one_card_and_21_is_not_blackjack() {
    // A A vs house 9 + 9. Split: K to hand 1 (21, pays 1:1), 9 to hand 2 (20).
    let mut t = Table::new(Value::Null, &[100], "As 9h Ad 9c Kc 9d");
    t.ok(0, bet(10));
    t.ok(0, json!({"type": "split"}));
    assert!(t.runner.hand().is_over(), "split aces stand automatically");
    let r = t.finish();
    assert_eq!(r.net, vec![20], "two wins at 1:1, no 3:2");
    // No resplit of aces: an ace on a split ace ends that hand too.
    let mut t = Table::new(Value::Null, &[100], "As 9h Ad 9c Ac 5d");
    t.ok(0, bet(10));
    t.ok(0, json!({"type": "split"}));
    assert!(t.runner.hand().is_over());
    t.finish();
}

#[test]
fn bust_loses_even_if_house_busts() {
    let mut t = Table::new(Value::Null, &[100, 100], "Ts 9s 6h 5s 9d Tc Kd 8d");
    t.ok(0, bet(10));
    t.ok(1, bet(10));
    t.ok(0, hit()); // 15 + K = 25 bust
    assert_eq!(t.to_act(), Some(1));
    t.ok(1, stand()); // 18; house 16 draws 8 → 24
    let r = t.finish();
    assert_eq!(r.net, vec![-10, 10]);
    assert_eq!(r.house_net, 0);
}

#[test]
fn everyone_sits_out() {
    let mut t = Table::new(Value::Null, &[100, 5], "");
    assert!(t.act(1, bet(10)).is_err(), "out of turn");
    t.ok(0, json!({"type": "skip"}));
    assert_eq!(t.runner.hand().auto_action(Seat(1)), Some(json!({"type": "skip"})), "5 < min bet");
    t.ok(1, json!({"type": "skip"}));
    let r = t.finish();
    assert_eq!(r.net, vec![0, 0]);
    assert!(t.events.is_empty());
    assert_eq!(t.act(0, bet(10)).unwrap_err(), GameError::HandOver);
}

#[test]
fn bad_input_is_rejected_with_a_reason() {
    let mut t = Table::new(Value::Null, &[100, 100], "Ts 9s 6h 5s 9d Tc");
    type Check = fn(&GameError) -> bool;
    let cases: Vec<(u8, Value, Check)> = vec![
        (1, bet(10), |e| *e == GameError::NotYourTurn),
        (0, json!({"type": "fly"}), |e| matches!(e, GameError::Malformed(_))),
        (0, json!({"type": "bet", "amount": -5}), |e| matches!(e, GameError::Malformed(_))),
        (0, json!({"type": "bet", "amount": 1.5}), |e| matches!(e, GameError::Malformed(_))),
        (0, json!({"type": "bet", "amount": "10"}), |e| matches!(e, GameError::Malformed(_))),
        (0, serde_json::from_str(r#"{"type":"bet","amount":18446744073709551616}"#).unwrap(), |e| {
            matches!(e, GameError::Malformed(_))
        }),
        (0, json!({"type": "bet", "amount": 5000}), |e| matches!(e, GameError::BadAmount(_))),
        (0, json!({"type": "bet", "amount": 5}), |e| matches!(e, GameError::BadAmount(_))),
        (0, json!({"type": "bet", "amount": 101}), |e| matches!(e, GameError::BadAmount(_))),
        (0, json!({"type": "hit"}), |e| matches!(e, GameError::Illegal(_))),
        (0, json!({"type": "hit", "card": "As"}), |e| matches!(e, GameError::Malformed(_))),
        (0, json!({"type": "bet", "amount": 10, "card": "As"}), |e| matches!(e, GameError::Malformed(_))),
        (0, json!({}), |e| matches!(e, GameError::Malformed(_))),
        (9, bet(10), |e| *e == GameError::NotYourTurn),
    ];
    for (seat, action, ok) in cases {
        let e = t.act(seat, action.clone()).unwrap_err();
        assert!(ok(&e), "{action}: {e:?}");
    }
    // Amounts above the stack: balance 100.
    let mut t = Table::new(json!({"max_bet": 500}), &[100], "");
    let e = t.act(0, bet(200)).unwrap_err();
    assert!(matches!(e, GameError::BadAmount(ref m) if m.contains("stack")), "{e:?}");
}

#[test]
fn bad_settings_are_rejected() {
    let g = game();
    for s in [
        json!({"min_bet": 0}),
        json!({"min_bet": 10, "max_bet": 5}),
        json!({"decks": 0}),
        json!({"decks": 9}),
        json!({"max_splits": 4}),
        json!({"max_bet": 1u64 << 51}),
        json!({"bankerIndex": 0}),
    ] {
        assert!(matches!(g.normalize_settings(&s), Err(GameError::BadSettings(_))), "{s}");
    }
    let n = g.normalize_settings(&Value::Null).unwrap();
    assert_eq!(n["decks"], 6);
    assert_eq!(n["hit_soft_17"], false);
    assert_eq!(g.create_deck(&json!({"decks": 2})).unwrap().len(), 104);
    assert!(g.new_hand(&Value::Null, &players(&[1; 8]), &Value::Null).is_err());
}

#[test]
fn auto_actions_cover_every_phase() {
    let mut t = Table::new(Value::Null, &[100, 100], "Ts 9s Ah 8s 9c 7d");
    let h = t.runner.hand();
    assert_eq!(h.auto_action(Seat(0)), Some(bet(10)));
    assert_eq!(h.auto_action(Seat(1)), None, "not seat 1's turn");
    t.ok(0, bet(10));
    t.ok(1, bet(10));
    assert_eq!(t.runner.hand().auto_action(Seat(0)), Some(json!({"type": "no-insurance"})));
    t.ok(0, json!({"type": "no-insurance"}));
    t.ok(1, json!({"type": "no-insurance"}));
    assert_eq!(t.runner.hand().auto_action(Seat(0)), Some(stand()));
}

// ---------------------------------------------------------------------------
// Random hands.

fn random_settings(rng: &mut ChaCha20Rng) -> Value {
    let min = rng.gen_range(1..=20u64);
    json!({
        "min_bet": min,
        "max_bet": min + rng.gen_range(0..=300u64),
        "decks": rng.gen_range(1..=8u8),
        "hit_soft_17": rng.gen_bool(0.5),
        "max_splits": rng.gen_range(0..=3u8),
        "double_after_split": rng.gen_bool(0.5),
    })
}

/// What the random hands reached, so the test proves it covers the rules.
#[derive(Default, Debug)]
struct Coverage {
    actions: usize,
    splits: usize,
    doubles: usize,
    insurance: usize,
    house_blackjack: usize,
    house_bust: usize,
    naturals: usize,
    shoe_low: usize,
}

/// Plays one random hand, adding what it reached to `cov`.
fn random_hand(rng: &mut ChaCha20Rng, cov: &mut Coverage) {
    let g = game();
    let settings = random_settings(rng);
    let n = rng.gen_range(1..=7usize);
    let balances: Vec<u64> = (0..n).map(|_| rng.gen_range(0..=400u64)).collect();
    let players = players(&balances);
    let mut deck = g.create_deck(&settings).unwrap();
    // Now and then stack the shoe with small cards and pairs (long hands, splits).
    deck.shuffle(rng);
    if rng.gen_bool(0.2) {
        // Stable: shuffled within each key.
        deck.sort_by_key(|c| c.card().rank().map(|r| r.value() % 9).unwrap_or(0));
    }
    let (mut runner, mut events) =
        HandRunner::start(g.as_ref(), &settings, &players, &Value::Null, deck.clone()).unwrap();
    let mut actions = Vec::new();
    while !runner.hand().is_over() {
        let seat = runner.hand().to_act().expect("a seat to act while not over");
        let auto = runner.hand().auto_action(seat).expect("auto action");
        runner.hand().validate(seat, &auto).unwrap_or_else(|e| panic!("auto {auto}: {e}"));
        let options = runner.hand().valid_actions();
        assert!(!options.is_empty());
        if runner.hand().public_state()["phase"] == "player-turns"
            && options.iter().all(|o| o.action["type"] != "hit")
        {
            cov.shoe_low += 1;
        }
        for o in &options {
            runner.hand().validate(seat, &o.action).unwrap_or_else(|e| panic!("option {}: {e}", o.action));
        }
        let action = if rng.gen_bool(0.1) {
            auto
        } else {
            let o = options.choose(rng).unwrap();
            let mut a = o.action.clone();
            if let Some((lo, hi)) = o.range {
                a["amount"] = json!(rng.gen_range(lo.0..=hi.0));
            }
            a
        };
        // Hidden hole card stays hidden until revealed.
        let public = runner.hand().public_state();
        if public["house"]["hole_revealed"] == false {
            if let Some(hole) = runner.dealt().iter().find(|d| d.face == claw_games::CardFace::Down) {
                assert!(!public.to_string().contains(&format!("\"{}\"", hole.card)), "{public}");
            }
        }
        events.extend(runner.act(seat, &action).unwrap_or_else(|e| panic!("{action}: {e}")));
        actions.push(RecordedAction { seat, action });
        assert!(actions.len() < 500, "hand does not end");
    }
    let result = runner.hand().result().unwrap();
    check_conservation(&events, &result, n).unwrap();
    // No physical card twice; debits never exceed a balance.
    let ids: HashSet<CardId> = runner.dealt().iter().map(|d| d.card).collect();
    assert_eq!(ids.len(), runner.dealt().len());
    let mut left: Vec<i128> = balances.iter().map(|b| i128::from(*b)).collect();
    for e in &events {
        if let HandEvent::Chip(ChipMove { op: ChipOp::Debit, party: ChipParty::Seat(s), amount, .. }) = e {
            left[s.index()] -= i128::from(amount.0);
            assert!(left[s.index()] >= 0, "seat {s} overdrawn");
        }
    }
    let re = replay(g.as_ref(), &settings, &players, &Value::Null, deck, &actions).unwrap();
    assert_eq!(re.events, events);
    assert_eq!(re.result, result);
    assert_eq!(result.house_net, -result.net.iter().sum::<i64>());
    cov.actions += actions.len();
    for e in &events {
        match e {
            HandEvent::Chip(ChipMove { op: ChipOp::Debit, reason, .. }) if reason == "split" => {
                cov.splits += 1
            }
            HandEvent::Chip(ChipMove { op: ChipOp::Debit, reason, .. }) if reason == "double" => {
                cov.doubles += 1
            }
            HandEvent::Chip(ChipMove { op: ChipOp::Debit, reason, .. }) if reason == "insurance" => {
                cov.insurance += 1
            }
            HandEvent::Chip(ChipMove { op: ChipOp::Credit, reason, .. }) if reason.contains("blackjack") => {
                cov.naturals += 1
            }
            _ => {}
        }
    }
    cov.house_blackjack += usize::from(result.summary.starts_with("house blackjack"));
    cov.house_bust += usize::from(result.summary.contains(" bust;"));
}

#[test]
fn random_hands_conserve_chips_and_replay() {
    let mut rng = ChaCha20Rng::seed_from_u64(0xb1ac);
    let mut cov = Coverage::default();
    for _ in 0..3000 {
        random_hand(&mut rng, &mut cov);
    }
    assert!(cov.actions > 3000, "{cov:?}");
    for (what, n) in [
        ("splits", cov.splits),
        ("doubles", cov.doubles),
        ("insurance", cov.insurance),
        ("house blackjack", cov.house_blackjack),
        ("house bust", cov.house_bust),
        ("naturals", cov.naturals),
    ] {
        assert!(n >= 10, "only {n} {what}: {cov:?}");
    }
    eprintln!("{cov:?}");
}

#[test]
fn single_deck_shoe_never_runs_dry() {
    // Seven greedy players on one pack: always split, else hit. The reserve
    // rule refuses draws that could leave the house short; no hand errors.
    let g = game();
    let settings = json!({"decks": 1, "min_bet": 1, "max_bet": 1});
    let players = players(&[1000; 7]);
    let mut rng = ChaCha20Rng::seed_from_u64(7);
    let mut refused = 0;
    for _ in 0..200 {
        let mut deck = g.create_deck(&settings).unwrap();
        deck.shuffle(&mut rng);
        deck.sort_by_key(|c| c.card().rank().map(|r| r.value() / 3).unwrap_or(0));
        let (mut runner, mut events) =
            HandRunner::start(g.as_ref(), &settings, &players, &Value::Null, deck.clone()).unwrap();
        let mut actions = Vec::new();
        while !runner.hand().is_over() {
            let seat = runner.hand().to_act().unwrap();
            let options: Vec<Value> = runner.hand().valid_actions().into_iter().map(|o| o.action).collect();
            let pick = ["split", "bet", "no-insurance", "hit", "stand"]
                .iter()
                .find_map(|t| options.iter().find(|a| a["type"] == *t))
                .unwrap()
                .clone();
            if pick["type"] == "stand" {
                refused += 1;
            }
            events.extend(runner.act(seat, &pick).unwrap());
            actions.push(RecordedAction { seat, action: pick });
        }
        assert!(runner.dealt().len() <= 52);
        let result = runner.hand().result().unwrap();
        check_conservation(&events, &result, 7).unwrap();
        assert_eq!(
            replay(g.as_ref(), &settings, &players, &Value::Null, deck, &actions).unwrap().result,
            result
        );
    }
    assert!(refused > 0, "the reserve rule never bound");
}
