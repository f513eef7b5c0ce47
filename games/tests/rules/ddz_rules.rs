//! Dou Di Zhu: pattern and comparison tables (with the near misses), full
//! hands through the HandRunner over fixed deck orders (spring, anti-spring,
//! bombs, caps, nobody bids), bad input, and a few thousand random hands
//! checking conservation, replay and auto actions.

use std::collections::HashSet;
use std::sync::Arc;

use claw_games::dou_di_zhu::patterns::{beating, classify, interpretations, Combo, Pattern};
use claw_games::{
    check_conservation, registry, replay, ChipMove, ChipOp, ChipParty, DynGame, GameError, HandEvent,
    HandResult, HandRunner, PlayerInfo, RecordedAction,
};
use claw_protocol::{Card, CardId, Chips, Seat};
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha20Rng;
use serde_json::{json, Value};

use crate::support::{cards as ids, players};

fn game() -> Arc<dyn DynGame> {
    registry::get("dou-di-zhu").unwrap()
}

fn faces(s: &str) -> Vec<Card> {
    s.split_whitespace().map(|c| c.parse().unwrap()).collect()
}

// ---------------------------------------------------------------------------
// Patterns.

#[test]
fn every_pattern_is_recognised() {
    use Pattern::*;
    let table: &[(&str, Pattern, u8, u8)] = &[
        ("3c", Single, 3, 1),
        ("2s", Single, 15, 1),
        ("RJ", Single, 17, 1),
        ("3c 3d", Pair, 3, 1),
        ("2c 2d", Pair, 15, 1),
        ("BJ RJ", Rocket, 17, 1),
        ("3c 3d 3h", Triple, 3, 1),
        ("3c 3d 3h 5s", TripleSingle, 3, 1),
        ("5s 3c 3d 3h", TripleSingle, 3, 1),
        ("3c 3d 3h BJ", TripleSingle, 3, 1),
        ("3c 3d 3h 5s 5d", TriplePair, 3, 1),
        ("2c 2d 2h As Ad", TriplePair, 15, 1),
        ("3c 4d 5h 6s 7c", Straight, 7, 5),
        ("Tc Jd Qh Ks Ac", Straight, 14, 5),
        ("3c 4c 5c 6c 7c 8c 9c Tc Jc Qc Kc Ac", Straight, 14, 12),
        ("3c 3d 4c 4d 5c 5d", PairStraight, 5, 3),
        ("Qc Qd Kc Kd Ac Ad", PairStraight, 14, 3),
        ("3c 3d 4c 4d 5c 5d 6c 6d 7c 7d", PairStraight, 7, 5),
        ("3c 3d 3h 4c 4d 4h", Airplane, 4, 2),
        ("Kc Kd Kh Ac Ad Ah", Airplane, 14, 2),
        ("3c 3d 3h 4c 4d 4h 5c 5d 5h 6c 6d 6h", Airplane, 6, 4),
        ("3c 3d 3h 4c 4d 4h 7s 9s", AirplaneSingles, 4, 2),
        ("3c 3d 3h 4c 4d 4h 7s 7d", AirplaneSingles, 4, 2),
        ("3c 3d 3h 4c 4d 4h 5c 5d 5h 7s 9s BJ", AirplaneSingles, 5, 3),
        ("3c 3d 3h 4c 4d 4h 7s 7d 9s 9d", AirplanePairs, 4, 2),
        ("3c 3d 3h 4c 4d 4h 5c 5d 5h 7s 7d 9s 9d Js Jd", AirplanePairs, 5, 3),
        ("3c 3d 3h 3s 5c 7d", FourTwoSingles, 3, 1),
        ("3c 3d 3h 3s 5c 5d", FourTwoSingles, 3, 1),
        ("3c 3d 3h 3s 5c 5d 7c 7d", FourTwoPairs, 3, 1),
        ("3c 3d 3h 4c 4d 4h 5c 5d 5h 9c 9d 9h", AirplaneSingles, 5, 3),
        ("Jc Jd Jh Qc Qd Qh Kc Kd Kh Ac Ad Ah 2c 2d 2h 3s", AirplaneSingles, 14, 4),
        ("3c 3d 3h 3s", Bomb, 3, 1),
        ("2c 2d 2h 2s", Bomb, 15, 1),
    ];
    for (cards, pattern, main, len) in table {
        let got = classify(&faces(cards));
        assert_eq!(got, Some(Combo { pattern: *pattern, main: *main, len: *len }), "{cards}");
    }
}

#[test]
fn near_misses_are_not_patterns() {
    for cards in [
        "",
        "3c 5d",
        "BJ 3c",
        "3c 3d 5c",
        "Jc Qd Kh Ac 2s",                   // a straight may not hold a 2
        "Qc Kd Ah 2s 3c",                   // no wrap-around
        "Tc Jd Qh Ks Ac BJ",                // nor a joker
        "3c 4d 5h 6s",                      // four cards are not a straight
        "3c 4d 5h 6s 8c",                   // gap
        "3c 3d 4c 4d",                      // two consecutive pairs are not enough
        "3c 3d 4c 4d 6c 6d",                // gap in the pairs
        "Kc Kd Ac Ad 2c 2d",                // pairs up to the 2
        "3c 3d 4c 4d 5c 5d 6c",             // odd card
        "Ac Ad Ah 2c 2d 2h",                // airplane with the 2
        "3c 3d 3h 5c 5d 5h",                // triples not consecutive
        "3c 3d 3h 4c 4d 4h 7s",             // airplane with one wing for two triples
        "3c 3d 3h 4c 4d 4h 7s 8s 9s",       // three wings for two triples
        "3c 3d 3h 4c 4d 4h 7s 7d 9s",       // mixed wings
        "3c 3d 3h 4c 4d 4h 7s 7d 9s 8d",    // pair wings that are not pairs
        "3c 3d 3h 4c 4d 4h 7s 7d 9s 9d 5c", // eleven cards
        "3c 3d 3h 3s 5c",                   // four with one
        "3c 3d 3h 3s 5c 6d 6h",             // four with a single and a pair (mixed wings)
        "3c 3d 3h 3s 5c 5d 7c 8d",          // four with a pair and two singles
        "3c 3d 3h 3s 5c 5d 7c 7d 9c",       // four with two pairs and one more
        "3c 3d 3h 5c 6d",                   // triple with two singles
        "3c 3d 3h 5c 5d 7s",                // triple, pair and a single
        "3c 3d 3h 3s 4c 4d 4h 4s 5c 5d",    // ten cards of bombs
    ] {
        assert_eq!(classify(&faces(cards)), None, "{cards:?} {:?}", interpretations(&faces(cards)));
    }
}

#[test]
fn comparisons() {
    // (new, old, new beats old)
    let table: &[(&str, &str, bool)] = &[
        ("4c", "3c", true),
        ("3c", "4c", false),
        ("3d", "3c", false),
        ("2s", "As", true),
        ("BJ", "2s", true),
        ("RJ", "BJ", true),
        ("BJ", "RJ", false),
        ("4c 4d", "3c 3d", true),
        ("4c 4d", "3c", false),
        ("4c", "3c 3d", false),
        ("2c 2d", "Ac Ad", true),
        ("4c 4d 4h 3s", "3c 3d 3h As", true),
        ("3c 3d 3h 2s", "4c 4d 4h 3s", false),
        ("4c 4d 4h 3s 3d", "3c 3d 3h 5s 5d", true),
        ("4c 4d 4h 3s", "3c 3d 3h 5s 5d", false),
        ("4c 5d 6h 7s 8c", "3c 4d 5h 6s 7c", true),
        ("4c 5d 6h 7s 8c 9c", "3c 4d 5h 6s 7c", false),
        ("Tc Jd Qh Ks Ac", "9c Td Jh Qs Kc", true),
        ("4c 4d 5c 5d 6c 6d", "3c 3d 4c 4d 5c 5d", true),
        ("4c 4d 5c 5d 6c 6d 7c 7d", "3c 3d 4c 4d 5c 5d", false),
        ("4c 4d 4h 5c 5d 5h", "3c 3d 3h 4c 4d 4h", true),
        ("4c 4d 4h 5c 5d 5h 3s 3d", "3c 3d 3h 4c 4d 4h 9s Ts", true),
        ("4c 4d 4h 5c 5d 5h 3s 3d", "3c 3d 3h 4c 4d 4h 9s 9d Ts Td", false),
        ("4c 4d 4h 4s 3c 5d", "3c 3d 3h 3s 9c Td", true),
        ("4c 4d 4h 4s 3c 3d 5c 5d", "3c 3d 3h 3s 9c 9d Tc Td", true),
        ("4c 4d 4h 4s 3c 5d", "3c 3d 3h 3s 9c 9d Tc Td", false),
        // Bombs and the rocket.
        ("3c 3d 3h 3s", "2c 2d", true),
        ("3c 3d 3h 3s", "3c 4d 5h 6s 7c 8c 9c Tc Jc Qc Kc Ac", true),
        ("3c 3d 3h 3s", "Ac Ad Ah 2c 2d", true),
        ("4c 4d 4h 4s", "3c 3d 3h 3s", true),
        ("3c 3d 3h 3s", "4c 4d 4h 4s", false),
        ("2c 2d 2h 2s", "Ac Ad Ah As", true),
        ("2c 2d 2h 2s", "3c 3d 3h 3s 5c 7d", true),
        ("3c 3d 3h 3s 5c 7d", "4c 4d 4h 4s", false),
        ("BJ RJ", "2c 2d 2h 2s", true),
        ("BJ RJ", "3c", true),
        ("2c 2d 2h 2s", "BJ RJ", false),
        ("RJ", "BJ RJ", false),
        // Standard rules: an adjacent trio is never wings, so this is only an
        // airplane of four (the permissive reading beats: see ddz_moves.rs).
        ("4c 4d 4h 5c 5d 5h 6c 6d 6h 7c 7d 7h", "3c 3d 3h 4c 4d 4h 5c 5d 5h 9s Ts Js", false),
    ];
    for (new, old, want) in table {
        let old_combo = classify(&faces(old)).unwrap_or_else(|| panic!("old {old} is no pattern"));
        assert_eq!(beating(&faces(new), &old_combo).is_some(), *want, "{new} vs {old}");
    }
}

// ---------------------------------------------------------------------------
// Full hands over fixed decks.

/// A deck dealing `h0` and `h1` (17 each) to seats 0 and 1, the other 17
/// cards to seat 2, and `kitty` last. Deal order is round-robin from seat 0.
fn deck_for(h0: &str, h1: &str, kitty: &str) -> Vec<CardId> {
    let (h0, h1, kitty) = (ids(h0), ids(h1), ids(kitty));
    assert_eq!((h0.len(), h1.len(), kitty.len()), (17, 17, 3));
    let used: HashSet<CardId> = h0.iter().chain(&h1).chain(&kitty).copied().collect();
    assert_eq!(used.len(), 37);
    let h2: Vec<CardId> = CardId::deck(1, true).into_iter().filter(|c| !used.contains(c)).collect();
    let mut deck = Vec::new();
    for j in 0..17 {
        deck.extend([h0[j], h1[j], h2[j]]);
    }
    deck.extend(kitty);
    deck
}

const SPRING_H0: &str = "3c 4c 5c 6c 7c 8c 9c Tc Jc Qc Kc Ac 2c 2d 2h 2s BJ";
const SPRING_H1: &str = "3s 4d 4h 4s 5d 5h 5s 6d 6h 6s 7d 7h 7s 8d 8h 8s 9d";
const SPRING_KITTY: &str = "RJ 3d 3h";

struct Table {
    game: Arc<dyn DynGame>,
    settings: Value,
    players: Vec<PlayerInfo>,
    memory: Value,
    deck: Vec<CardId>,
    runner: HandRunner,
    events: Vec<HandEvent>,
    actions: Vec<RecordedAction>,
}

impl Table {
    fn new(settings: Value, balances: &[u64], memory: Value, deck: Vec<CardId>) -> Table {
        let game = game();
        let players = players(balances);
        let (runner, events) =
            HandRunner::start(game.as_ref(), &settings, &players, &memory, deck.clone()).unwrap();
        Table { game, settings, players, memory, deck, runner, events, actions: Vec::new() }
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

    fn play(&mut self, seat: u8, cards: &str) -> Vec<HandEvent> {
        self.ok(seat, json!({"type": "play", "cards": cards.split_whitespace().collect::<Vec<_>>()}))
    }

    fn pass(&mut self, seat: u8) {
        self.ok(seat, json!({"type": "pass"}));
    }

    fn finish(&self) -> HandResult {
        let hand = self.runner.hand();
        assert!(hand.is_over());
        let result = hand.result().unwrap();
        check_conservation(&self.events, &result, 3).unwrap();
        let re = replay(
            self.game.as_ref(),
            &self.settings,
            &self.players,
            &self.memory,
            self.deck.clone(),
            &self.actions,
        )
        .unwrap();
        assert_eq!(re.events, self.events);
        assert_eq!(re.result, result);
        result
    }
}

fn bid(points: u8) -> Value {
    json!({"type": "bid", "points": points})
}

#[test]
fn deal_seals_seventeen_each_and_kitty_face_down() {
    let t = Table::new(Value::Null, &[100; 3], Value::Null, deck_for(SPRING_H0, SPRING_H1, SPRING_KITTY));
    let dealt = t.runner.dealt();
    assert_eq!(dealt.len(), 54);
    assert!(dealt.iter().all(|d| d.face == claw_games::CardFace::Down));
    for s in 0..3u8 {
        let n = dealt.iter().filter(|d| d.target == claw_games::DealTo::Player(Seat(s))).count();
        assert_eq!(n, 17);
    }
    assert!(dealt[51..].iter().all(|d| d.target == claw_games::DealTo::Community));
    let public = t.runner.hand().public_state();
    assert_eq!(public["kitty"], 3, "kitty hidden during bidding");
    assert_eq!(public["cards_left"], json!([17, 17, 17]));
    // No seat's cards leak into the public state.
    let text = public.to_string();
    for d in dealt {
        assert!(!text.contains(&format!("\"{}\"", d.card)), "{} leaked", d.card);
    }
}

#[test]
fn spring_doubles_and_farmers_pay_at_most_their_balance() {
    let mut t =
        Table::new(Value::Null, &[1000, 1000, 10], Value::Null, deck_for(SPRING_H0, SPRING_H1, SPRING_KITTY));
    assert_eq!(t.runner.hand().to_act(), Some(Seat(0)));
    let ev = t.ok(0, bid(3));
    assert_eq!(ev, vec![HandEvent::Reveal { positions: vec![51, 52, 53] }], "bid 3 ends the bidding");
    let public = t.runner.hand().public_state();
    assert_eq!(public["landlord"], 0);
    assert_eq!(public["kitty"], json!(["RJ", "3d", "3h"]));
    assert_eq!(public["cards_left"], json!([20, 17, 17]));
    t.play(0, "3c 4c 5c 6c 7c 8c 9c Tc Jc Qc Kc Ac");
    t.pass(1);
    t.pass(2);
    t.play(0, "3d 3h");
    t.pass(1);
    t.pass(2);
    t.play(0, "2c 2d 2h 2s");
    t.pass(1);
    t.pass(2);
    let ev = t.play(0, "BJ RJ");
    // Debits first, then the credit.
    let moves: Vec<_> = ev[..3]
        .iter()
        .map(|e| match e {
            HandEvent::Chip(m) => (m.op, m.party, m.amount),
            other => panic!("not a chip move: {other:?}"),
        })
        .collect();
    assert_eq!(
        moves,
        [
            (ChipOp::Debit, ChipParty::Seat(Seat(1)), Chips(24)),
            (ChipOp::Debit, ChipParty::Seat(Seat(2)), Chips(10)),
            (ChipOp::Credit, ChipParty::Seat(Seat(0)), Chips(34)),
        ]
    );
    let r = t.finish();
    // 3 (bid) × 2 × 2 (bomb, rocket) × 2 (spring) = 24.
    assert_eq!(r.net, vec![34, -24, -10]);
    assert_eq!(r.winners, vec![Seat(0)]);
    assert!(r.summary.contains("spring"), "{}", r.summary);
    let outcome = &t.runner.hand().public_state()["outcome"];
    assert_eq!(outcome["multiplier"], 24);
    assert_eq!(outcome["spring"], true);
}

#[test]
fn landlord_win_without_spring() {
    let mut t =
        Table::new(Value::Null, &[1000; 3], Value::Null, deck_for(SPRING_H0, SPRING_H1, SPRING_KITTY));
    t.ok(0, bid(3));
    t.play(0, "3c 4c 5c 6c 7c 8c 9c Tc Jc Qc Kc Ac");
    t.pass(1);
    t.pass(2);
    t.play(0, "3d 3h");
    // Seat 1 must beat a pair of 3s with a pair (or pass).
    let opts = t.runner.hand().valid_actions();
    assert_eq!(opts[0].action, json!({"type": "pass"}));
    for o in &opts {
        t.runner.hand().validate(Seat(1), &o.action).unwrap();
        assert_eq!(o.cost, Chips(0));
    }
    assert!(opts.iter().any(|o| o.action == json!({"type": "play", "cards": ["4d", "4h"]})));
    assert!(t.act(1, json!({"type": "play", "cards": ["3s"]})).is_err(), "a single does not beat a pair");
    t.play(1, "4d 4h");
    t.pass(2);
    t.play(0, "2c 2d 2h 2s");
    t.pass(1);
    t.pass(2);
    t.play(0, "BJ RJ");
    let r = t.finish();
    // 3 × 2 × 2 = 12, no spring: a farmer played.
    assert_eq!(r.net, vec![24, -12, -12]);
}

const ANTI_H0: &str = "3c 3d 4c 4h 4s 5c 5h 5s 6c 6h 6s 7c 7h 7s 8c 8h 8s";
const ANTI_H1: &str = "BJ RJ 2c 2d 2h 2s 4d 5d 6d 7d 8d 9d Td Jd Qd Kd Ad";
const ANTI_KITTY: &str = "9c 9h 9s";

fn anti_spring(settings: Value, balances: &[u64]) -> Table {
    let mut t = Table::new(settings, balances, Value::Null, deck_for(ANTI_H0, ANTI_H1, ANTI_KITTY));
    t.ok(0, bid(1));
    t.pass(1);
    let ev = t.ok(2, json!({"type": "pass"}));
    assert_eq!(ev, vec![HandEvent::Reveal { positions: vec![51, 52, 53] }]);
    t.play(0, "3c");
    // Seat 1 may beat the single with the rocket or the bomb.
    let opts = t.runner.hand().valid_actions();
    for want in [json!(["BJ", "RJ"]), json!(["2c", "2d", "2h", "2s"]), json!(["2c"])] {
        assert!(opts.iter().any(|o| o.action["cards"] == want), "{want} missing");
    }
    t.play(1, "BJ RJ");
    t.pass(2);
    t.pass(0);
    t.play(1, "2c 2d 2h 2s");
    t.pass(2);
    t.pass(0);
    t.play(1, "4d 5d 6d 7d 8d 9d Td Jd Qd Kd Ad");
    t
}

#[test]
fn anti_spring_doubles() {
    let t = anti_spring(json!({"base": 5}), &[1000, 1000, 1000]);
    let r = t.finish();
    // base 5 × bid 1 × 2 × 2 (rocket, bomb) × 2 (anti-spring) = 40 per farmer.
    assert_eq!(r.net, vec![-80, 40, 40]);
    assert_eq!(r.winners, vec![Seat(1), Seat(2)]);
    assert!(r.summary.contains("anti-spring"), "{}", r.summary);
}

#[test]
fn landlord_loss_is_capped_by_balance_and_split_evenly() {
    let r = anti_spring(json!({"base": 5}), &[51, 1000, 1000]).finish();
    assert_eq!(r.net, vec![-50, 25, 25], "odd chip stays with the landlord");
    let r = anti_spring(json!({"base": 5}), &[0, 1000, 1000]).finish();
    assert_eq!(r.net, vec![0, 0, 0]);
}

#[test]
fn multiplier_cap() {
    let r = anti_spring(json!({"base": 5, "max_multiplier": 4}), &[1000, 1000, 1000]).finish();
    assert_eq!(r.net, vec![-40, 20, 20]);
}

#[test]
fn nobody_bids_ends_the_hand_and_moves_the_first_bidder() {
    let mut t = Table::new(
        Value::Null,
        &[100; 3],
        json!({"first_bidder": 2}),
        deck_for(SPRING_H0, SPRING_H1, SPRING_KITTY),
    );
    assert_eq!(t.runner.hand().to_act(), Some(Seat(2)));
    assert_eq!(t.runner.hand().auto_action(Seat(2)), Some(json!({"type": "pass"})));
    t.pass(2);
    t.pass(0);
    t.pass(1);
    let r = t.finish();
    assert_eq!(r.net, vec![0, 0, 0]);
    assert!(r.winners.is_empty());
    assert!(t.events.iter().all(|e| matches!(e, HandEvent::Dealt { .. })));
    assert_eq!(t.runner.hand().memory_after(), json!({"first_bidder": 0}));
}

#[test]
fn highest_bid_wins_the_landlord() {
    let mut t = Table::new(
        Value::Null,
        &[100; 3],
        json!({"first_bidder": 1}),
        deck_for(SPRING_H0, SPRING_H1, SPRING_KITTY),
    );
    t.ok(1, bid(1));
    assert!(matches!(t.act(2, bid(1)).unwrap_err(), GameError::BadAmount(_)), "must bid higher");
    let opts: Vec<Value> = t.runner.hand().valid_actions().into_iter().map(|o| o.action).collect();
    assert_eq!(opts, vec![json!({"type": "pass"}), bid(2), bid(3)]);
    t.ok(2, bid(2));
    t.pass(0);
    let public = t.runner.hand().public_state();
    assert_eq!(public["landlord"], 2);
    assert_eq!(public["bid"], 2);
    assert_eq!(t.runner.hand().to_act(), Some(Seat(2)), "the landlord leads");
    assert_eq!(t.runner.hand().memory_after(), json!({"first_bidder": 2}));
}

#[test]
fn bad_input_is_rejected_with_a_reason() {
    let mut t = Table::new(Value::Null, &[100; 3], Value::Null, deck_for(SPRING_H0, SPRING_H1, SPRING_KITTY));
    type Check = fn(&GameError) -> bool;
    let bidding: Vec<(u8, Value, Check)> = vec![
        (1, bid(1), |e| *e == GameError::NotYourTurn),
        (0, bid(0), |e| matches!(e, GameError::BadAmount(_))),
        (0, bid(4), |e| matches!(e, GameError::BadAmount(_))),
        (0, json!({"type": "bid", "points": -1}), |e| matches!(e, GameError::Malformed(_))),
        (0, json!({"type": "bid", "points": 256}), |e| matches!(e, GameError::Malformed(_))),
        (0, json!({"type": "play", "cards": ["3c"]}), |e| matches!(e, GameError::Illegal(_))),
        (0, json!({"type": "fly"}), |e| matches!(e, GameError::Malformed(_))),
    ];
    for (seat, action, ok) in bidding {
        let e = t.act(seat, action.clone()).unwrap_err();
        assert!(ok(&e), "{action}: {e:?}");
    }
    t.ok(0, bid(3));
    let play = |c: &[&str]| json!({"type": "play", "cards": c});
    let playing: Vec<(u8, Value, Check)> = vec![
        (1, play(&["3s"]), |e| *e == GameError::NotYourTurn),
        (0, json!({"type": "pass"}), |e| matches!(e, GameError::Illegal(_))),
        (0, play(&[]), |e| matches!(e, GameError::Illegal(_))),
        (0, play(&["3s"]), |e| matches!(e, GameError::CardNotInHand(_))),
        (0, play(&["3c#1"]), |e| matches!(e, GameError::CardNotInHand(_))),
        (0, play(&["Zz"]), |e| matches!(e, GameError::Malformed(_))),
        (0, play(&["3c", "3c"]), |e| matches!(e, GameError::Illegal(m) if m.contains("twice"))),
        (0, play(&["2c", "2c", "2c", "2c"]), |e| matches!(e, GameError::Illegal(m) if m.contains("twice"))),
        (0, play(&["3c", "5c"]), |e| matches!(e, GameError::Illegal(_))),
        (0, json!({"type": "play", "cards": "3c"}), |e| matches!(e, GameError::Malformed(_))),
        (0, json!({"type": "play", "cards": ["3c"], "seat": 1}), |e| matches!(e, GameError::Malformed(_))),
        (0, bid(3), |e| matches!(e, GameError::Illegal(_))),
    ];
    for (seat, action, ok) in playing {
        let e = t.act(seat, action.clone()).unwrap_err();
        assert!(ok(&e), "{action}: {e:?}");
    }
    // More cards than the hand holds.
    let many: Vec<String> = CardId::deck(1, true).iter().map(|c| c.to_string()).collect();
    assert!(t.act(0, json!({"type": "play", "cards": many})).is_err());
    // Nothing above was applied.
    assert_eq!(t.runner.hand().public_state()["cards_left"], json!([20, 17, 17]));
    t.play(0, "3c 4c 5c 6c 7c 8c 9c Tc Jc Qc Kc Ac");
    assert!(t.act(1, play(&["9d"])).is_err(), "a single does not beat a straight");
}

#[test]
fn settings_and_players_are_checked() {
    let g = game();
    for s in
        [json!({"base": 0}), json!({"max_multiplier": 0}), json!({"bse": 2}), json!({"base": 1u64 << 41})]
    {
        assert!(matches!(g.normalize_settings(&s), Err(GameError::BadSettings(_))), "{s}");
    }
    assert_eq!(
        g.normalize_settings(&Value::Null).unwrap(),
        json!({"base": 1, "max_multiplier": null, "rules": "standard"})
    );
    assert_eq!(g.create_deck(&Value::Null).unwrap().len(), 54);
    assert!(g.new_hand(&Value::Null, &players(&[1, 1]), &Value::Null).is_err());
    assert!(g.new_hand(&Value::Null, &players(&[1; 4]), &Value::Null).is_err());
}

#[test]
fn auto_action_plays_the_lowest_card_when_leading() {
    let mut t = Table::new(Value::Null, &[100; 3], Value::Null, deck_for(SPRING_H0, SPRING_H1, SPRING_KITTY));
    t.ok(0, bid(3));
    assert_eq!(t.runner.hand().auto_action(Seat(0)), Some(json!({"type": "play", "cards": ["3c"]})));
    assert_eq!(t.runner.hand().auto_action(Seat(1)), None);
    t.play(0, "3c");
    assert_eq!(t.runner.hand().auto_action(Seat(1)), Some(json!({"type": "pass"})));
}

// ---------------------------------------------------------------------------
// Random hands.

/// What the random hands reached, so the test proves it covers the rules.
#[derive(Default, Debug)]
struct Coverage {
    actions: usize,
    no_bid: usize,
    landlord_wins: usize,
    farmer_wins: usize,
    bombs: usize,
    springs: usize,
}

fn random_hand(rng: &mut ChaCha20Rng, check_all_options: bool, cov: &mut Coverage) {
    let g = game();
    let settings = json!({
        "base": rng.gen_range(1..=5u64),
        "max_multiplier": if rng.gen_bool(0.3) { json!(rng.gen_range(1..=64u64)) } else { Value::Null },
    });
    let balances: Vec<u64> = (0..3).map(|_| rng.gen_range(0..=200u64)).collect();
    let players = players(&balances);
    let memory = json!({"first_bidder": rng.gen_range(0..3u8)});
    let mut deck = g.create_deck(&settings).unwrap();
    deck.shuffle(rng);
    let (mut runner, mut events) =
        HandRunner::start(g.as_ref(), &settings, &players, &memory, deck.clone()).unwrap();
    let mut actions = Vec::new();
    while !runner.hand().is_over() {
        let seat = runner.hand().to_act().expect("a seat to act");
        let auto = runner.hand().auto_action(seat).expect("auto action");
        runner.hand().validate(seat, &auto).unwrap_or_else(|e| panic!("auto {auto}: {e}"));
        let options = runner.hand().valid_actions();
        assert!(!options.is_empty());
        if check_all_options {
            for o in &options {
                runner
                    .hand()
                    .validate(seat, &o.action)
                    .unwrap_or_else(|e| panic!("option {}: {e}", o.action));
            }
        }
        let action = if rng.gen_bool(0.15) { auto } else { options.choose(rng).unwrap().action.clone() };
        events.extend(runner.act(seat, &action).unwrap_or_else(|e| panic!("{action}: {e}")));
        actions.push(RecordedAction { seat, action });
        assert!(actions.len() < 1000, "hand does not end");
    }
    let result = runner.hand().result().unwrap();
    check_conservation(&events, &result, 3).unwrap();
    let mut left: Vec<i128> = balances.iter().map(|b| i128::from(*b)).collect();
    for e in &events {
        if let HandEvent::Chip(ChipMove { op: ChipOp::Debit, party: ChipParty::Seat(s), amount, .. }) = e {
            left[s.index()] -= i128::from(amount.0);
            assert!(left[s.index()] >= 0, "seat {s} overdrawn");
        }
    }
    let dealt: HashSet<CardId> = runner.dealt().iter().map(|d| d.card).collect();
    assert_eq!(dealt.len(), 54);
    let public = runner.hand().public_state();
    if !public["landlord"].is_null() {
        let played: usize = public["plays"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|p| p["cards"].as_array().map(|c| c.len()))
            .sum();
        let left: u64 = public["cards_left"].as_array().unwrap().iter().map(|n| n.as_u64().unwrap()).sum();
        assert_eq!(played as u64 + left, 54);
        assert!(public["cards_left"].as_array().unwrap().iter().any(|n| n == 0));
    }
    let re = replay(g.as_ref(), &settings, &players, &memory, deck, &actions).unwrap();
    assert_eq!(re.events, events);
    assert_eq!(re.result, result);
    assert_eq!(re.memory_after, runner.hand().memory_after());
    cov.actions += actions.len();
    let o = &public["outcome"];
    if o.is_null() {
        cov.no_bid += 1;
    } else {
        cov.landlord_wins += usize::from(o["landlord_won"] == true);
        cov.farmer_wins += usize::from(o["landlord_won"] == false);
        cov.springs += usize::from(o["spring"] == true || o["anti_spring"] == true);
    }
    cov.bombs += public["bombs"].as_u64().unwrap() as usize;
}

#[test]
fn random_hands_conserve_chips_and_replay() {
    let mut rng = ChaCha20Rng::seed_from_u64(0xdd2);
    let mut cov = Coverage::default();
    for i in 0..3000 {
        random_hand(&mut rng, i % 20 == 0, &mut cov);
    }
    assert!(cov.actions > 3000 * 3, "{cov:?}");
    for (what, n) in [
        ("hands nobody bid", cov.no_bid),
        ("landlord wins", cov.landlord_wins),
        ("farmer wins", cov.farmer_wins),
        ("bombs", cov.bombs),
    ] {
        assert!(n >= 10, "only {n} {what}: {cov:?}");
    }
    eprintln!("{cov:?}");
}
