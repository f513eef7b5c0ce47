//! Sam Gong hands through the engine's runner: chip flow, reveals, public
//! state, bad input, auto actions, replay, settings, tutorial decks.

use std::collections::HashSet;
use std::sync::Arc;

use claw_games::sam_gong::eval::{parse_hand, HandValue};
use claw_games::sam_gong::{tutorial, SamGong, SamGongSettings};
use claw_games::{
    check_conservation, registry, replay, ChipMove, ChipOp, ChipParty, DynGame, GameError, GamePlugin,
    HandEvent, HandRunner, RecordedAction,
};
use claw_protocol::{Card, CardId, Chips, Seat};
use serde_json::{json, Value};

use crate::support::{pid, players, strings};

/// A deck whose first cards are these hands in seat order, then the rest.
fn deck(hands: &[&str]) -> Vec<CardId> {
    let top: Vec<Card> = hands.iter().flat_map(|h| parse_hand(h).unwrap()).collect();
    let mut d: Vec<CardId> = top.iter().map(|c| CardId::from(*c)).collect();
    d.extend(CardId::deck(1, false).into_iter().filter(|c| !top.contains(&c.card())));
    assert_eq!(d.len(), 52);
    d
}

fn game() -> Arc<dyn DynGame> {
    registry::get("sam-gong").unwrap()
}

fn start(settings: Value, balances: &[u64], hands: &[&str]) -> (HandRunner, Vec<HandEvent>) {
    HandRunner::start(game().as_ref(), &settings, &players(balances), &Value::Null, deck(hands)).unwrap()
}

/// No card of these hands appears anywhere in the public state.
fn assert_hidden(public: &Value, hands: &[&str]) {
    let mut seen = HashSet::new();
    strings(public, &mut seen);
    for h in hands {
        for c in parse_hand(h).unwrap() {
            assert!(!seen.contains(&c.to_string()), "{c} leaked in {public}");
        }
    }
}

fn debits_by_seat(events: &[HandEvent], n: usize) -> Vec<u64> {
    let mut d = vec![0u64; n];
    for e in events {
        if let HandEvent::Chip(ChipMove { op: ChipOp::Debit, party: ChipParty::Seat(s), amount, .. }) = e {
            d[s.index()] += amount.0;
        }
    }
    d
}

const HANDS: [&str; 4] = ["9h 9d 2s", "5s 2h Kd", "Kc Qd Js", "As 2c 3c"];

#[test]
fn a_full_hand() {
    // Seat 1 has the most chips: banker. Clockwise: seats 2, 3, 0.
    let balances = [1000, 5000, 1000, 1000];
    let (mut r, mut events) = start(json!({}), &balances, &HANDS);
    assert_eq!(events.len(), 1);
    let HandEvent::Dealt { cards, .. } = &events[0] else { panic!() };
    assert_eq!(cards.len(), 12);
    assert_eq!(r.hand().to_act(), Some(Seat(1)));
    // Nothing is visible yet.
    assert_hidden(&r.hand().public_state(), &HANDS);

    events.extend(r.act(Seat(1), &json!({"type": "bet", "amount": 100})).unwrap());
    assert_eq!(r.hand().public_state()["banker_bet"], json!(100));
    assert_eq!(r.hand().to_act(), Some(Seat(2)));
    events.extend(r.act(Seat(2), &json!({"type": "call"})).unwrap());
    assert_eq!(r.hand().public_state()["pot"], json!(100));
    events.extend(r.act(Seat(3), &json!({"type": "call"})).unwrap());
    assert_hidden(&r.hand().public_state(), &HANDS);
    let last = r.act(Seat(0), &json!({"type": "fold"})).unwrap();

    // Showdown: seat 0 folded, so only seats 1, 2, 3 are revealed.
    assert_eq!(last[0], HandEvent::Reveal { positions: (3..12).collect() });
    events.extend(last);
    assert!(r.hand().is_over());
    let result = r.hand().result().unwrap();
    // Seat 2 Sam Gong wins 3× (+300); seat 3 six loses to seven (−100); the
    // pot of 100 is raked 5; the banker pays 300 and collects 95.
    assert_eq!(result.net, vec![0, -205, 300, -100]);
    assert_eq!(result.rake, Chips(5));
    assert_eq!(result.winners, vec![Seat(2)]);
    check_conservation(&events, &result, 4).unwrap();
    let debits = debits_by_seat(&events, 4);
    assert!(debits.iter().zip(balances).all(|(d, b)| *d <= b));

    // The folded hand never shows; the revealed ones do, with their types.
    let public = r.hand().public_state();
    assert_hidden(&public, &HANDS[..1]);
    let s = &public["settlement"];
    assert_eq!(s["banker_hand"]["hand_type"], json!("7"));
    assert_eq!(s["entries"][0]["hand"]["hand_type"], json!("sam-gong"));
    assert_eq!(s["entries"][2]["result"], json!("fold"));
    assert_eq!(s["entries"][2]["hand"], Value::Null);
    assert!(result.summary.contains("sam-gong"), "{}", result.summary);
    assert!(!result.summary.contains("9h"), "{}", result.summary);

    // After the hand: no action is accepted.
    assert_eq!(r.act(Seat(0), &json!({"type": "fold"})), Err(GameError::HandOver));
}

#[test]
fn all_fold() {
    let (mut r, mut events) = start(json!({}), &[1000, 5000, 1000], &HANDS[..3]);
    events.extend(r.act(Seat(1), &json!({"type": "bet", "amount": 300})).unwrap());
    events.extend(r.act(Seat(2), &json!({"type": "fold"})).unwrap());
    events.extend(r.act(Seat(0), &json!({"type": "fold"})).unwrap());
    let result = r.hand().result().unwrap();
    assert_eq!(result.net, vec![0, 0, 0]);
    assert_eq!(result.rake, Chips(0));
    // No reveal at all: the banker's hand stays down too.
    assert!(!events.iter().any(|e| matches!(e, HandEvent::Reveal { .. })));
    assert_hidden(&r.hand().public_state(), &HANDS[..3]);
    assert_eq!(r.hand().public_state()["settlement"]["all_fold"], json!(true));
    check_conservation(&events, &result, 3).unwrap();
}

#[test]
fn insolvent_banker_through_the_runner() {
    // Banker seat 0 (150 chips, bet 100). Seat 1 nine (owed 200) takes the
    // banker's last 150; seat 2 wins unpaid; seat 3 loses unraked.
    let hands = ["Ac Tc Kd", "4h 5d Ts", "2c 2d Qh", "5c 5h Js"];
    let balances = [150, 100, 100, 100];
    let (mut r, mut events) = start(json!({}), &balances, &hands);
    assert_eq!(r.hand().to_act(), Some(Seat(0)));
    events.extend(r.act(Seat(0), &json!({"type": "bet", "amount": 100})).unwrap());
    for s in 1..4 {
        events.extend(r.act(Seat(s), &json!({"type": "call"})).unwrap());
    }
    let result = r.hand().result().unwrap();
    assert_eq!(result.net, vec![50, 150, -100, -100]);
    assert_eq!(result.rake, Chips(0));
    check_conservation(&events, &result, 4).unwrap();
    let debits = debits_by_seat(&events, 4);
    assert!(debits.iter().zip(balances).all(|(d, b)| *d <= b));
    let public = r.hand().public_state();
    assert_eq!(public["settlement"]["banker_insolvent"], json!(true));
    assert_eq!(public["settlement"]["entries"][1]["result"], json!("insolvent-win"));
}

#[test]
fn d8_tie_returns_the_call() {
    // Both six, both spade-high, both K-high: tie.
    let hands = ["Ks 2d 4h", "Kh Qs 6d"];
    let (mut r, mut events) = start(json!({}), &[1000, 900], &hands);
    events.extend(r.act(Seat(0), &json!({"type": "bet", "amount": 500})).unwrap());
    events.extend(r.act(Seat(1), &json!({"type": "call"})).unwrap());
    let result = r.hand().result().unwrap();
    assert_eq!((&result.net, result.rake), (&vec![0, 0], Chips(0)));
    check_conservation(&events, &result, 2).unwrap();
}

#[test]
fn bad_input_is_refused_and_changes_nothing() {
    let (mut r, _) = start(json!({}), &[1000, 5000, 150], &HANDS[..3]);
    let before = r.hand().state_json();
    let bad = [
        (Seat(0), json!({"type": "bet", "amount": 100})), // out of turn
        (Seat(1), json!({"type": "call"})),               // banker must bet first
        (Seat(1), json!({"type": "fold"})),
        (Seat(1), json!({"type": "bet", "amount": 99})), // below the tier minimum
        (Seat(1), json!({"type": "bet", "amount": 501})), // above the tier maximum
        (Seat(1), json!({"type": "bet", "amount": -5})), // negative
        (Seat(1), json!({"type": "bet", "amount": 1.5})),
        (Seat(1), json!({"type": "bet", "amount": "100"})),
        (Seat(1), json!({"type": "bet"})),
        (Seat(1), json!({"type": "raise", "amount": 100})), // unknown type
        (Seat(1), json!({"amount": 100})),
        (Seat(1), json!("bet")),
        (Seat(9), json!({"type": "bet", "amount": 100})),
    ];
    for (seat, a) in &bad {
        assert!(r.act(*seat, a).is_err(), "{seat} {a}");
        assert_eq!(r.hand().state_json(), before, "{a}");
    }
    assert_eq!(r.act(Seat(0), &json!({"type": "call"})), Err(GameError::NotYourTurn));
    assert!(matches!(r.act(Seat(1), &json!({"type": "bet", "amount": 501})), Err(GameError::BadAmount(_))));
    assert!(matches!(r.act(Seat(1), &json!({"type": "raise"})), Err(GameError::Malformed(_))));
    assert!(matches!(r.act(Seat(1), &json!({"type": "bet", "amount": -1})), Err(GameError::Malformed(_))));

    r.act(Seat(1), &json!({"type": "bet", "amount": 200})).unwrap();
    // Seat 2 holds 150: cannot cover 200.
    let opts = r.hand().valid_actions();
    assert_eq!(opts[0].action, json!({"type": "call"}));
    assert_eq!((opts[0].cost, opts[0].affordable), (Chips(200), false));
    let before = r.hand().state_json();
    assert!(matches!(r.act(Seat(2), &json!({"type": "call"})), Err(GameError::BadAmount(_))));
    assert!(matches!(r.act(Seat(2), &json!({"type": "bet", "amount": 200})), Err(GameError::Illegal(_))));
    assert_eq!(r.act(Seat(1), &json!({"type": "fold"})), Err(GameError::NotYourTurn));
    assert_eq!(r.hand().state_json(), before);
    r.act(Seat(2), &json!({"type": "fold"})).unwrap();
    r.act(Seat(0), &json!({"type": "call"})).unwrap();
    assert!(r.hand().is_over());
}

#[test]
fn the_banker_cannot_bet_more_than_it_holds() {
    // Max bet 500 but the banker holds 300 (everyone else less).
    let (mut r, _) = start(json!({}), &[300, 200], &HANDS[..2]);
    let opts = r.hand().valid_actions();
    assert_eq!(opts.len(), 1);
    assert_eq!(opts[0].range, Some((Chips(100), Chips(300))));
    assert!(matches!(r.act(Seat(0), &json!({"type": "bet", "amount": 301})), Err(GameError::BadAmount(_))));
    r.act(Seat(0), &json!({"type": "bet", "amount": 300})).unwrap();
}

#[test]
fn auto_actions_are_min_bet_then_fold() {
    let (mut r, mut events) = start(json!({"tier": "silver"}), &[20000, 10000, 30000], &HANDS[..3]);
    let mut n = 0;
    while let Some(seat) = r.hand().to_act() {
        let a = r.hand().auto_action(seat).unwrap();
        if n == 0 {
            assert_eq!(a, json!({"type": "bet", "amount": 1000}));
        } else {
            assert_eq!(a, json!({"type": "fold"}));
        }
        // Only the seat to act has an auto action.
        for other in 0..3u8 {
            if Seat(other) != seat {
                assert_eq!(r.hand().auto_action(Seat(other)), None);
            }
        }
        r.hand().validate(seat, &a).unwrap();
        events.extend(r.act(seat, &a).unwrap());
        n += 1;
    }
    assert_eq!(n, 3);
    let result = r.hand().result().unwrap();
    assert_eq!(result.net, vec![0, 0, 0]);
    check_conservation(&events, &result, 3).unwrap();
}

#[test]
fn replay_reproduces_the_hand() {
    let settings = json!({"tier": "bronze", "rake_percent": 5});
    let p = players(&[1000, 5000, 1000, 1000]);
    let actions = vec![
        RecordedAction { seat: Seat(1), action: json!({"type": "bet", "amount": 250}) },
        RecordedAction { seat: Seat(2), action: json!({"type": "call"}) },
        RecordedAction { seat: Seat(3), action: json!({"type": "call"}) },
        RecordedAction { seat: Seat(0), action: json!({"type": "call"}) },
    ];
    let out = replay(game().as_ref(), &settings, &p, &Value::Null, deck(&HANDS), &actions).unwrap();
    // Seat 2 Sam Gong +750; seat 3 six −250; seat 0 zero −250. Pot 500, rake
    // 25; the banker pays 750 and keeps 475.
    assert_eq!(out.result.net, vec![-250, -275, 750, -250]);
    assert_eq!(out.result.rake, Chips(25));
    assert_eq!(out.memory_after["last_banker"], json!(pid(1)));
    // A wrong seat in the record is caught.
    let mut wrong = actions.clone();
    wrong[1].seat = Seat(3);
    assert!(replay(game().as_ref(), &settings, &p, &Value::Null, deck(&HANDS), &wrong).is_err());
}

#[test]
fn settings_tiers_and_overrides() {
    let g = game();
    let n = g.normalize_settings(&Value::Null).unwrap();
    assert_eq!(n["tier"], json!("bronze"));
    assert_eq!(n["rake_percent"], json!(5));
    assert_eq!(n["sam_gong"], json!("ten-value"));
    // Normalised settings state the resolved limits and normalise to themselves.
    assert_eq!((&n["entry_chips"], &n["min_bet"], &n["max_bet"]), (&json!(1000), &json!(100), &json!(500)));
    assert_eq!(g.normalize_settings(&n).unwrap(), n);
    let o = g.normalize_settings(&json!({"tier": "gold", "max_bet": 20000})).unwrap();
    assert_eq!((&o["min_bet"], &o["max_bet"]), (&json!(10000), &json!(20000)));
    assert_eq!(g.normalize_settings(&o).unwrap(), o);
    // The dealer's way to pass its room bets: as settings fields.
    let d = g.normalize_settings(&json!({"min_bet": 10, "max_bet": 50})).unwrap();
    assert_eq!((&d["tier"], &d["min_bet"], &d["max_bet"]), (&json!("bronze"), &json!(10), &json!(50)));
    assert_eq!(g.normalize_settings(&json!({"tier": "鑽石廳"})).unwrap()["tier"], json!("diamond"));
    let limits = |v: Value| {
        let s: SamGongSettings = serde_json::from_value(v).unwrap();
        let l = s.limits();
        (l.entry_chips.0, l.min_bet.0, l.max_bet.0)
    };
    assert_eq!(limits(json!({})), (1_000, 100, 500));
    assert_eq!(limits(json!({"tier": "silver"})), (10_000, 1_000, 5_000));
    assert_eq!(limits(json!({"tier": "gold"})), (100_000, 10_000, 50_000));
    assert_eq!(limits(json!({"tier": "platinum"})), (1_000_000, 100_000, 500_000));
    assert_eq!(limits(json!({"tier": "diamond"})), (10_000_000, 1_000_000, 5_000_000));
    assert_eq!(limits(json!({"tier": "gold", "min_bet": 5, "max_bet": 50})), (100_000, 5, 50));
    for bad in [
        json!({"tier": "tin"}),
        json!({"min_bet": 0}),
        json!({"min_bet": 600}),
        json!({"min_bet": 10, "max_bet": 9}),
        json!({"rake_percent": 101}),
        json!({"max_bet": (1u64 << 50) + 1}),
        json!({"sam_gong": "jokers"}),
        json!({"tutorial": "yes"}),
    ] {
        assert!(matches!(g.normalize_settings(&bad), Err(GameError::BadSettings(_))), "{bad}");
    }
    assert_eq!(g.meta().name, "sam-gong");
    assert_eq!((g.meta().min_players, g.meta().max_players), (2, 6));
    assert_eq!(g.create_deck(&Value::Null).unwrap().len(), 52);
    assert_eq!(g.scripted_deck(&Value::Null, 0).unwrap(), None);
}

#[test]
fn player_count_and_identity_checks() {
    let g = game();
    for n in [0usize, 1, 7] {
        let p = players(&vec![1000; n]);
        assert!(matches!(g.new_hand(&Value::Null, &p, &Value::Null), Err(GameError::BadPlayers(_))));
    }
    let mut p = players(&[1000, 1000]);
    p[1].id = p[0].id;
    assert!(matches!(g.new_hand(&Value::Null, &p, &Value::Null), Err(GameError::BadPlayers(_))));
    // Nobody can cover the minimum bet: no hand.
    let p = players(&[99, 50, 0]);
    assert!(matches!(g.new_hand(&Value::Null, &p, &Value::Null), Err(GameError::BadPlayers(_))));
    // Every player size from 2 to 6 deals 3 cards each.
    for n in 2..=6 {
        let p = players(&vec![1000; n]);
        let (r, ev) =
            HandRunner::start(g.as_ref(), &Value::Null, &p, &Value::Null, CardId::deck(1, false)).unwrap();
        let HandEvent::Dealt { cards, .. } = &ev[0] else { panic!() };
        assert_eq!(cards.len(), 3 * n);
        assert_eq!(r.hand().to_act(), Some(Seat(0)));
    }
}

#[test]
fn a_bad_deal_is_refused() {
    // A deck with a joker or a duplicated card cannot be a Sam Gong deal.
    let p = players(&[1000, 1000]);
    let mut d = CardId::deck(1, true);
    d.swap(2, 52);
    assert!(matches!(
        HandRunner::start(game().as_ref(), &Value::Null, &p, &Value::Null, d).err(),
        Some(GameError::BadDeal(_))
    ));
    let mut d = CardId::deck(1, false);
    d[4] = d[0];
    assert!(HandRunner::start(game().as_ref(), &Value::Null, &p, &Value::Null, d).is_err());
}

/// Plays one tutorial hand: the NPC banker (at `banker`) bets its timeout
/// bet, everyone else calls. Returns the settlement in the public state.
fn tutorial_hand(settings: &Value, n: usize, hand_number: u64, banker: Seat) -> Value {
    let g = game();
    let d = g.scripted_deck(settings, hand_number).unwrap().unwrap();
    let mut sorted = d.clone();
    sorted.sort();
    assert_eq!(sorted, CardId::deck(1, false), "a permutation of the 52 cards");
    assert_eq!(d, tutorial::deck(hand_number, banker));
    // Practice players with no chips.
    let p = players(&vec![0; n]);
    let (mut r, mut events) = HandRunner::start(g.as_ref(), settings, &p, &Value::Null, d).unwrap();
    assert_eq!(r.hand().to_act(), Some(banker));
    let bet = r.hand().auto_action(banker).unwrap();
    events.extend(r.act(banker, &bet).unwrap());
    while let Some(s) = r.hand().to_act() {
        events.extend(r.act(s, &json!({"type": "call"})).unwrap());
    }
    let result = r.hand().result().unwrap();
    // Practice: no chips move.
    assert_eq!(result.net, vec![0; n]);
    assert!(events.iter().all(|e| matches!(e, HandEvent::Dealt { .. } | HandEvent::Reveal { .. })));
    check_conservation(&events, &result, n).unwrap();
    r.hand().public_state()["settlement"].clone()
}

#[test]
fn tutorial_rounds_meet_the_acceptance_criteria() {
    // The product rules' tutorial: round 1 the learner holds Sam Gong against the NPC
    // banker's 7 and wins (3×); round 2 wins 5 against 3 (1×); round 3 ties
    // 6–6 with both D8 steps equal (call returned). The NPC banks at seat 1;
    // the learner, who joined first, is seat 0.
    let settings = json!({"tutorial": true});
    let want = [("7", "sam-gong", "win", 3u64, 300i64), ("3", "5", "win", 1, 100), ("6", "6", "tie", 1, 0)];
    for hand_number in 0..6u64 {
        let s = tutorial_hand(&settings, 2, hand_number, Seat(1));
        let (banker, learner, result, mult, net) = want[(hand_number % 3) as usize];
        assert_eq!(s["banker"], json!(1));
        assert_eq!(s["banker_hand"]["hand_type"], json!(banker));
        let e = &s["entries"][0];
        assert_eq!(e["seat"], json!(0));
        assert_eq!(e["hand"]["hand_type"], json!(learner));
        assert_eq!(e["result"], json!(result));
        assert_eq!(e["multiplier"], json!(mult));
        assert_eq!(e["net"], json!(net), "the bronze minimum bet is 100");
        assert_eq!(s["practice"], json!(true));
    }
    // An explicit NPC seat moves the script with it.
    let settings = json!({"tutorial": true, "banker_seat": 0});
    let s = tutorial_hand(&settings, 3, 0, Seat(0));
    assert_eq!(s["entries"][0]["seat"], json!(1));
    assert_eq!(s["entries"][0]["hand"]["hand_type"], json!("sam-gong"));
    let settings = json!({"tutorial": true, "banker_seat": 2});
    let s = tutorial_hand(&settings, 3, 1, Seat(2));
    let learner = s["entries"].as_array().unwrap().iter().find(|e| e["seat"] == json!(0)).unwrap();
    assert_eq!((learner["hand"]["hand_type"].clone(), learner["result"].clone()), (json!("5"), json!("win")));
    // Round 3's tie is a true D8 tie.
    let r3 = tutorial::SCRIPT[2];
    let b = HandValue::of(&parse_hand(r3.banker).unwrap(), Default::default());
    let l = HandValue::of(&parse_hand(r3.learner).unwrap(), Default::default());
    assert_eq!(b, l);
    // Normal tables shuffle.
    assert_eq!(SamGong.scripted_deck(&SamGongSettings::default(), 0), None);
}

#[test]
fn the_learner_is_never_the_npc_banker() {
    // The learner joins first (seat 0) and may have more chips or have banked
    // last: the NPC at seat 1 banks all the same.
    let g = game();
    let settings = json!({"tutorial": true});
    let memory = json!({"last_banker": pid(1), "last_order": [pid(0), pid(1)]});
    for balances in [[100000, 0], [0, 0], [0, 100000]] {
        let h = g.new_hand(&settings, &players(&balances), &memory).unwrap();
        assert_eq!(h.public_state()["banker"], json!(1));
    }
    // A banker seat that is not at the table is refused.
    let bad = json!({"tutorial": true, "banker_seat": 2});
    assert!(matches!(g.new_hand(&bad, &players(&[0, 0]), &Value::Null), Err(GameError::BadPlayers(_))));
}

#[test]
fn a_banker_seat_setting_places_the_banker() {
    // Normal tables: the rotation would pick seat 0 (most chips); the setting
    // puts the banker at seat 2 on every hand, whatever the memory says.
    let g = game();
    let settings = json!({"banker_seat": 2});
    let p = players(&[5000, 1000, 1000]);
    for memory in [Value::Null, json!({"last_banker": pid(1), "last_order": [pid(0), pid(1), pid(2)]})] {
        let h = g.new_hand(&settings, &p, &memory).unwrap();
        assert_eq!(h.public_state()["banker"], json!(2));
        assert_eq!(h.to_act(), None, "dealing first");
    }
    // A banker that cannot cover the minimum bet is refused (D9).
    let p = players(&[5000, 1000, 99]);
    assert!(matches!(g.new_hand(&settings, &p, &Value::Null), Err(GameError::BadPlayers(_))));
    // The normalised settings state the setting (and leave it out when unset).
    let n = g.normalize_settings(&settings).unwrap();
    assert_eq!((n["banker_seat"].clone(), n["settlement"].clone()), (json!(2), json!("banker-pays")));
    assert!(g.normalize_settings(&json!({})).unwrap().get("banker_seat").is_none());
    let n = g.normalize_settings(&json!({"settlement": "one-pass"})).unwrap();
    assert_eq!(n["settlement"], json!("one-pass"));
    assert!(g.normalize_settings(&json!({"settlement": "pro-rata"})).is_err());
}

#[test]
fn the_largest_bets_do_not_overflow() {
    // Five callers all winning 3× on a 2^50 bet, at a practice table (no
    // balance limits) and at a real one.
    let big = 1u64 << 50;
    for tutorial in [true, false] {
        let settings = json!({"tutorial": tutorial, "min_bet": big, "max_bet": big, "banker_seat": 0});
        let hands = ["2c 3c 4c", "Ks Qs Js", "Kh Qh Jh", "Kd Qd Jd", "Kc Qc Jc", "Ts Th Td"];
        let balances = if tutorial { vec![0; 6] } else { vec![big * 16, big, big, big, big, big] };
        let (mut r, mut events) = start(settings, &balances, &hands);
        events.extend(r.act(Seat(0), &json!({"type": "bet", "amount": big})).unwrap());
        for s in 1..6 {
            events.extend(r.act(Seat(s), &json!({"type": "call"})).unwrap());
        }
        let result = r.hand().result().unwrap();
        check_conservation(&events, &result, 6).unwrap();
        if !tutorial {
            assert_eq!(
                result.net,
                vec![
                    -15 * big as i64,
                    3 * big as i64,
                    3 * big as i64,
                    3 * big as i64,
                    3 * big as i64,
                    3 * big as i64
                ]
            );
        }
    }
}
