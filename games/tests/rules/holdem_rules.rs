//! Hold'em rules through the erased plugin and the hand runner, with fixed
//! decks: blinds and order of play, min-raise, short all-ins, side pots,
//! splits and odd chips, uncontested pots, the button across hands.

use crate::holdem_common;

use claw_games::{CardFace, ChipMove, ChipOp, ChipParty, DealTo, HandEvent};
use claw_protocol::Seat;
use holdem_common::*;
use serde_json::{json, Value};

const BOARD: &str = "2c 7d 9h Js 4d"; // no straight or flush for the hole cards used here
const BOARD2: &str = "2c 4d 7h 8s 3d"; // pairs rank by their own rank: KK > QQ > JJ > 99

#[test]
fn heads_up_button_posts_small_blind_and_acts_first_preflop_last_after() {
    let mut t = Table::simple(&[1000, 1000], &["AsAh", "KsKh"], BOARD);
    assert_eq!(t.public()["button"], 0);
    assert_eq!(t.debits(), vec![(0, 5, "small blind".into()), (1, 10, "big blind".into())]);
    // Hole cards: one at a time from the button's left: seat 1 first.
    let HandEvent::Dealt { phase, cards } = &t.events[2] else { panic!("{:?}", t.events[2]) };
    assert_eq!(phase, "hole");
    let order: Vec<_> = cards.iter().map(|c| (c.position, c.target, c.face)).collect();
    let p = |s| DealTo::Player(Seat(s));
    assert_eq!(
        order,
        vec![
            (0, p(1), CardFace::Down),
            (1, p(0), CardFace::Down),
            (2, p(1), CardFace::Down),
            (3, p(0), CardFace::Down)
        ]
    );
    assert_eq!(t.to_act(), Some(0), "button acts first pre-flop");
    t.ok(0, json!({"type": "call"}));
    assert_eq!(t.to_act(), Some(1), "big blind has the option");
    assert!(t.offered().contains(&"raise".to_owned()));
    let ev = t.ok(1, json!({"type": "check"}));
    // Flop: a burn face down, three community cards face up.
    let HandEvent::Dealt { phase, cards } = &ev[0] else { panic!("{ev:?}") };
    assert_eq!(phase, "flop");
    let kinds: Vec<_> = cards.iter().map(|c| (c.position, c.target, c.face)).collect();
    assert_eq!(
        kinds,
        vec![
            (4, DealTo::Burn, CardFace::Down),
            (5, DealTo::Community, CardFace::Up),
            (6, DealTo::Community, CardFace::Up),
            (7, DealTo::Community, CardFace::Up)
        ]
    );
    assert_eq!(t.to_act(), Some(1), "big blind acts first after the flop");
    t.ok(1, json!({"type": "check"}));
    t.ok(0, json!({"type": "check"}));
    assert_eq!(t.public()["board"].as_array().unwrap().len(), 4);
    assert_eq!(t.to_act(), Some(1));
    t.check_down();
    let r = t.result();
    assert_eq!(r.net, vec![10, -10]);
    assert_eq!(r.winners, vec![Seat(0)]);
    assert!(r.summary.contains("seat 0 shows As Ah"), "{}", r.summary);
    // The showdown hands were revealed by position.
    let reveal: Vec<_> = t
        .events
        .iter()
        .filter_map(|e| match e {
            HandEvent::Reveal { positions } => Some(positions.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(reveal.len(), 1);
    let mut pos = reveal[0].clone();
    pos.sort();
    assert_eq!(pos, vec![0, 1, 2, 3]);
}

#[test]
fn three_handed_order_of_play() {
    let mut t = Table::simple(&[1000, 1000, 1000], &["AsAh", "KsKh", "QsQh"], BOARD);
    assert_eq!(t.debits(), vec![(1, 5, "small blind".into()), (2, 10, "big blind".into())]);
    assert_eq!(t.to_act(), Some(0), "left of the big blind acts first");
    t.ok(0, json!({"type": "call"}));
    t.ok(1, json!({"type": "call"}));
    t.ok(2, json!({"type": "check"}));
    assert_eq!(t.to_act(), Some(1), "small blind acts first after the flop");
    t.check_down();
    assert_eq!(t.result().net, vec![20, -10, -10]);
}

#[test]
fn minimum_raise_is_the_last_full_increment() {
    let mut t = Table::simple(&[1000, 1000, 1000], &["AsAh", "KsKh", "QsQh"], BOARD);
    // Pre-flop the big blind is the bet: raise to at least 20.
    assert!(matches!(t.act(0, json!({"type":"raise","to":19})), Err(claw_games::GameError::BadAmount(_))));
    assert!(matches!(t.act(0, json!({"type":"bet","to":30})), Err(claw_games::GameError::Illegal(_))));
    let va = t.runner.hand().valid_actions();
    let raise = va.iter().find(|o| o.action["type"] == "raise").unwrap();
    assert_eq!(raise.range, Some((claw_protocol::Chips(20), claw_protocol::Chips(1000))));
    assert_eq!(raise.cost.0, 20);
    t.ok(0, json!({"type":"raise","to":35})); // increment 25
    assert_eq!(t.public()["min_raise_to"], 60);
    assert!(t.act(1, json!({"type":"raise","to":59})).is_err());
    t.ok(1, json!({"type":"raise","to":60})); // increment 25
    t.ok(2, json!({"type":"raise","to":150})); // increment 90
    assert_eq!(t.public()["min_raise_to"], 240);
    assert!(t.act(0, json!({"type":"raise","to":239})).is_err());
    t.ok(0, json!({"type":"call"}));
    t.ok(1, json!({"type":"call"}));
    // Flop: a new round; the minimum bet is the big blind.
    assert_eq!(t.to_act(), Some(1));
    assert!(matches!(t.act(1, json!({"type":"raise","to":20})), Err(claw_games::GameError::Illegal(_))));
    assert!(matches!(t.act(1, json!({"type":"bet","to":9})), Err(claw_games::GameError::BadAmount(_))));
    assert!(matches!(t.act(1, json!({"type":"bet","to":0})), Err(claw_games::GameError::BadAmount(_))));
    t.ok(1, json!({"type":"bet","to":10}));
    assert!(t.act(2, json!({"type":"raise","to":19})).is_err());
    t.ok(2, json!({"type":"raise","to":20}));
    t.ok(0, json!({"type":"fold"}));
    t.ok(1, json!({"type":"call"}));
    t.check_down();
    let r = t.result();
    // Seat 0 folded its aces; seat 1's kings beat seat 2's queens.
    assert_eq!(r.net, vec![-150, 320, -170]);
}

#[test]
fn short_all_in_does_not_reopen_betting() {
    // Button 0, SB 1, BB 2 with 65 chips.
    let mut t = Table::simple(&[1000, 1000, 65], &["AsAh", "KsKh", "QsQh"], BOARD);
    t.ok(0, json!({"type":"raise","to":40})); // full raise, increment 30
    t.ok(1, json!({"type":"call"}));
    t.ok(2, json!({"type":"all-in"})); // to 65: +25, short of a full raise
    assert_eq!(t.public()["current_bet"], 65);
    assert_eq!(t.to_act(), Some(0));
    assert_eq!(t.offered(), vec!["fold", "call"], "no raise for a player who already acted");
    assert!(matches!(t.act(0, json!({"type":"raise","to":200})), Err(claw_games::GameError::Illegal(_))));
    assert!(matches!(t.act(0, json!({"type":"all-in"})), Err(claw_games::GameError::Illegal(_))));
    t.ok(0, json!({"type":"call"}));
    assert_eq!(t.offered(), vec!["fold", "call"]);
    t.ok(1, json!({"type":"call"}));
    assert_eq!(t.public()["street"], "flop");
    t.check_down();
    let r = t.result();
    assert_eq!(r.net, vec![130, -65, -65]);
}

#[test]
fn short_all_ins_adding_up_to_a_full_raise_reopen_betting() {
    // Button 0, SB 1, BB 2 (160), UTG 3 (230).
    let mut t = Table::simple(&[1000, 1000, 160, 230], &["AsAh", "KsKh", "QsQh", "JcJh"], "2c 7d 9h 4s 3d");
    t.ok(3, json!({"type":"call"}));
    t.ok(0, json!({"type":"call"}));
    t.ok(1, json!({"type":"call"}));
    t.ok(2, json!({"type":"check"}));
    assert_eq!(t.to_act(), Some(1));
    t.ok(1, json!({"type":"bet","to":100}));
    t.ok(2, json!({"type":"all-in"})); // 150: +50, short
    assert!(t.offered().contains(&"raise".to_owned()), "seat 3 has not acted since the bet");
    t.ok(3, json!({"type":"all-in"})); // 220: +70, short, but +120 since seat 1 bet
    t.ok(0, json!({"type":"call"}));
    assert_eq!(t.to_act(), Some(1));
    assert!(
        t.offered().contains(&"raise".to_owned()),
        "two short all-ins make a full raise: {:?}",
        t.offered()
    );
    t.ok(1, json!({"type":"raise","to":400}));
    t.ok(0, json!({"type":"fold"}));
    t.check_down();
    let r = t.result();
    // Seat 0 aces folded; seat 1 kings beat queens and jacks; gets 180 back uncalled.
    assert!(t.credits().contains(&(1, 180, "uncalled bet returned".into())));
    assert_eq!(r.net, vec![-230, 160 + 230 + 230, -160, -230]);
}

#[test]
fn side_pots_with_four_all_ins_of_different_sizes() {
    // Button 0 (400), SB 1 (50), BB 2 (100), UTG 3 (200); the shorter the stack, the better the hand.
    let holes = ["9c9d", "KsKh", "QcQh", "JcJd"];
    let mut t = Table::new(Value::Null, &[400, 50, 100, 200], Value::Null, deck(0, &holes, BOARD2));
    t.ok(3, json!({"type":"all-in"}));
    t.ok(0, json!({"type":"all-in"}));
    t.ok(1, json!({"type":"all-in"}));
    let ev = t.ok(2, json!({"type":"all-in"}));
    // No one can bet any more: uncalled chips back, hands tabled, board run out.
    assert!(
        matches!(&ev[0], HandEvent::Chip(ChipMove { op: ChipOp::Debit, party: ChipParty::Seat(Seat(2)), amount, .. }) if amount.0 == 90)
    );
    assert!(
        matches!(&ev[1], HandEvent::Chip(ChipMove { op: ChipOp::Credit, party: ChipParty::Seat(Seat(0)), amount, .. }) if amount.0 == 200)
    );
    assert!(matches!(&ev[2], HandEvent::Reveal { positions } if positions.len() == 8));
    let deals: Vec<_> = ev
        .iter()
        .filter_map(|e| match e {
            HandEvent::Dealt { phase, .. } => Some(phase.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(deals, vec!["flop", "turn", "river"]);
    let r = t.result();
    let credits = t.credits();
    assert_eq!(
        credits,
        vec![
            (0, 200, "uncalled bet returned".into()),
            (1, 200, "main pot".into()),
            (2, 150, "side pot 1".into()),
            (3, 200, "side pot 2".into()),
        ]
    );
    assert_eq!(r.net, vec![-200, 150, 50, 0]);
    assert_eq!(r.winners, vec![Seat(1), Seat(2), Seat(3)]);
    assert_eq!(t.events.iter().filter(|e| matches!(e, HandEvent::Reveal { .. })).count(), 1);
}

#[test]
fn side_pots_three_all_ins_biggest_stack_best_hand() {
    let holes = ["AsAh", "KsKh", "QcQh", "JcJd"];
    let mut t = Table::new(Value::Null, &[400, 50, 100, 200], Value::Null, deck(0, &holes, BOARD2));
    t.ok(3, json!({"type":"all-in"}));
    t.ok(0, json!({"type":"call"}));
    t.ok(1, json!({"type":"call"}));
    t.ok(2, json!({"type":"call"}));
    let r = t.result();
    assert_eq!(r.net, vec![350, -50, -100, -200]);
    assert_eq!(r.winners, vec![Seat(0)]);
    // One main pot and two side pots, all to seat 0.
    let c = t.credits();
    assert_eq!(c.iter().map(|x| x.1).sum::<u64>(), 550);
    assert_eq!(c.len(), 3);
}

#[test]
fn split_side_pot_and_main_pot_to_the_short_stack() {
    // Button 0 (1000), SB 1 (100), BB 2 (1000), UTG 3 (1000).
    let holes = ["AsJh", "KsKh", "AcJd", "Qc3h"];
    let mut t = Table::new(Value::Null, &[1000, 100, 1000, 1000], Value::Null, deck(0, &holes, BOARD));
    t.ok(3, json!({"type":"raise","to":300}));
    t.ok(0, json!({"type":"call"}));
    t.ok(1, json!({"type":"all-in"}));
    t.ok(2, json!({"type":"call"}));
    assert_eq!(t.to_act(), Some(2), "the all-in small blind is skipped");
    t.check_down();
    let r = t.result();
    assert_eq!(
        t.credits(),
        vec![(1, 400, "main pot".into()), (2, 300, "side pot 1".into()), (0, 300, "side pot 1".into())]
    );
    assert_eq!(r.net, vec![0, 300, 0, -300]);
    assert!(r.summary.contains("side pot 1 600: seat 2 300, seat 0 300 with pair of jacks"), "{}", r.summary);
}

#[test]
fn odd_chip_goes_to_the_first_winner_left_of_the_button() {
    // The board is a royal flush: everyone still in splits.
    let royal = "As Ks Qs Js Ts";
    let holes = ["2c3c", "4d5d", "6h7h"];
    let mut t = Table::new(Value::Null, &[1000, 1000, 1000], Value::Null, deck(0, &holes, royal));
    t.ok(0, json!({"type":"call"}));
    t.ok(1, json!({"type":"fold"})); // 5 dead chips: pot 25
    t.ok(2, json!({"type":"check"}));
    t.check_down();
    let r = t.result();
    // Seat 1 (left of the button) folded; seat 2 is the first winner after the button.
    assert_eq!(t.credits(), vec![(2, 13, "main pot".into()), (0, 12, "main pot".into())]);
    assert_eq!(r.net, vec![2, -5, 3]);

    // Four players, three-way split of 35: two odd chips, clockwise from the button's left.
    let holes = ["2c3c", "4d5d", "6h7h", "8c8d"];
    let mut t = Table::new(Value::Null, &[1000, 1000, 1000, 1000], Value::Null, deck(0, &holes, royal));
    t.ok(3, json!({"type":"call"}));
    t.ok(0, json!({"type":"call"}));
    t.ok(1, json!({"type":"fold"}));
    t.ok(2, json!({"type":"check"}));
    t.check_down();
    assert_eq!(
        t.credits(),
        vec![(2, 12, "main pot".into()), (3, 12, "main pot".into()), (0, 11, "main pot".into())]
    );
    t.result();

    // Button on seat 2 (memory: the last button was seat 1): seat 0 is left of it.
    let holes = ["2c3c", "4d5d", "6h7h"];
    let memory = json!({"button": pid(1)});
    let settings = json!({"small_blind": 5, "big_blind": 11});
    let mut t = Table::new(settings, &[1000, 1000, 1000], memory, deck(2, &holes, royal));
    assert_eq!(t.public()["button"], 2);
    assert_eq!(t.to_act(), Some(2));
    t.ok(2, json!({"type":"call"}));
    t.ok(0, json!({"type":"call"}));
    t.ok(1, json!({"type":"fold"})); // 11 dead: pot 33, split 17/16
    t.check_down();
    assert_eq!(t.credits(), vec![(0, 17, "main pot".into()), (2, 16, "main pot".into())]);
    t.result();
}

#[test]
fn uncontested_pot_returns_the_uncalled_part_without_showdown() {
    let mut t = Table::simple(&[1000, 1000, 1000], &["AsAh", "KsKh", "QsQh"], BOARD);
    t.ok(0, json!({"type":"fold"}));
    let ev = t.ok(1, json!({"type":"fold"}));
    assert!(t.runner.hand().is_over());
    assert!(!ev.iter().any(|e| matches!(e, HandEvent::Reveal { .. } | HandEvent::Dealt { .. })));
    assert_eq!(t.credits(), vec![(2, 5, "uncalled bet returned".into()), (2, 10, "main pot".into())]);
    let r = t.result();
    assert_eq!(r.net, vec![0, -5, 5]);
    assert_eq!(r.winners, vec![Seat(2)]);
    assert!(r.summary.contains("uncontested"));
    assert!(!r.summary.contains("shows"), "no hands shown: {}", r.summary);

    // Post-flop: a bet nobody calls.
    let mut t = Table::simple(&[1000, 1000], &["5c6h", "KsKh"], BOARD);
    t.ok(0, json!({"type":"call"}));
    t.ok(1, json!({"type":"check"}));
    t.ok(1, json!({"type":"bet","to":50}));
    t.ok(0, json!({"type":"fold"}));
    assert_eq!(t.credits(), vec![(1, 50, "uncalled bet returned".into()), (1, 20, "main pot".into())]);
    assert_eq!(t.result().net, vec![-10, 10]);
}

#[test]
fn short_stacked_blinds_post_all_in_for_less() {
    // Heads-up: the big blind has 3 chips. The button's 5 covers it: no betting at all.
    let t = Table::simple(&[1000, 3], &["5c6h", "KsKh"], BOARD);
    assert_eq!(t.debits(), vec![(0, 5, "small blind".into()), (1, 3, "big blind".into())]);
    assert!(t.runner.hand().is_over());
    assert_eq!(t.credits()[0], (0, 2, "uncalled bet returned".into()));
    assert_eq!(t.result().net, vec![-3, 3]);

    // Three-handed: the big blind is all-in for 3; the others still owe the full 10.
    let mut t = Table::simple(&[1000, 1000, 3], &["5c6h", "Tc3h", "KsKh"], BOARD);
    assert_eq!(t.public()["to_call"], 10);
    t.ok(0, json!({"type":"call"}));
    t.ok(1, json!({"type":"call"}));
    t.check_down();
    let r = t.result();
    // Kings win the 9-chip main pot; seat 1's ten beats seat 0 for the 14-chip side pot.
    assert_eq!(r.net, vec![-10, 4, 6]);
    assert_eq!(r.net.iter().sum::<i64>(), 0);

    // A stack smaller than the ante goes all-in on the ante.
    let mut t = Table::new(
        json!({"ante": 2}),
        &[1000, 1000, 1],
        Value::Null,
        deck(0, &["5c6h", "Tc3h", "KsKh"], BOARD),
    );
    assert_eq!(
        t.debits(),
        vec![
            (1, 2, "ante".into()),
            (2, 1, "ante".into()),
            (0, 2, "ante".into()),
            (1, 5, "small blind".into())
        ]
    );
    t.ok(0, json!({"type":"call"}));
    t.ok(1, json!({"type":"call"}));
    assert_eq!(t.to_act(), Some(1), "flop: the big blind is all-in");
    t.check_down();
    let r = t.result();
    assert_eq!(r.net.iter().sum::<i64>(), 0);
    assert_eq!(r.net[2], 2, "seat 2's kings win the 3-chip ante pot");
}

#[test]
fn all_in_call_for_less_keeps_the_bet_for_the_others() {
    // Button 0 (60), SB 1, BB 2, UTG 3.
    let holes = ["KsKh", "5c6h", "Tc3h", "8c8h"];
    let mut t = Table::new(Value::Null, &[60, 1000, 1000, 1000], Value::Null, deck(0, &holes, BOARD));
    t.ok(3, json!({"type":"raise","to":100}));
    assert_eq!(t.offered(), vec!["fold", "call", "all-in"], "60 chips only cover a call");
    t.ok(0, json!({"type":"call"}));
    assert_eq!(t.public()["current_bet"], 100);
    assert_eq!(t.public()["to_call"], 95);
    t.ok(1, json!({"type":"call"}));
    t.ok(2, json!({"type":"call"}));
    t.check_down();
    assert!(t.debits().contains(&(0, 60, "call".into())));
    let r = t.result();
    // Kings win the 240 main pot; the eights win the 120 side pot.
    assert_eq!(r.net, vec![180, -100, -100, 20]);
}
