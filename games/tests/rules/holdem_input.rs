//! Hold'em: bad input is refused with a reason and leaves the state alone;
//! settings and players are validated; the button moves through Memory;
//! public state never shows a hole card; timeouts check or fold.

use crate::holdem_common;

use claw_games::texas_holdem::{Action, Memory, Settings, TexasHoldem};
use claw_games::{GameError, GamePlugin, HandEvent, PlayerInfo};
use claw_protocol::{Chips, Seat};
use holdem_common::*;
use serde_json::{json, Value};

const BOARD: &str = "2c 7d 9h Js 4d";

fn table() -> Table {
    Table::simple(&[1000, 1000, 300], &["AsAh", "KsKh", "QsQh"], BOARD)
}

#[test]
fn out_of_turn_and_after_the_end() {
    let mut t = table();
    assert_eq!(t.to_act(), Some(0));
    assert_eq!(t.act(1, json!({"type":"call"})), Err(GameError::NotYourTurn));
    assert_eq!(t.act(2, json!({"type":"fold"})), Err(GameError::NotYourTurn));
    assert_eq!(t.act(9, json!({"type":"fold"})), Err(GameError::NotYourTurn));
    t.ok(0, json!({"type":"fold"}));
    t.ok(1, json!({"type":"fold"}));
    assert_eq!(t.act(2, json!({"type":"check"})), Err(GameError::HandOver));
}

#[test]
fn malformed_actions_are_refused() {
    let mut t = table();
    for bad in [
        json!({"type":"dance"}),
        json!({"type":"RAISE","to":40}),
        json!({"kind":"call"}),
        json!("call"),
        json!(null),
        json!({"type":"raise"}),
        json!({"type":"raise","to":-5}),
        json!({"type":"raise","to":40.5}),
        json!({"type":"raise","to":"40"}),
        json!({"type":"raise","amount":40}),
        json!({"type":"raise","to":40,"extra":1}),
        j(r#"{"type":"raise","to":18446744073709551616}"#),
        j(r#"{"type":"raise","to":1e30}"#),
    ] {
        let r = t.act(0, bad.clone());
        assert!(matches!(r, Err(GameError::Malformed(_))), "{bad}: {r:?}");
    }
    assert_eq!(t.to_act(), Some(0));
}

#[test]
fn illegal_amounts_and_moves_are_refused_with_a_reason() {
    let mut t = table();
    let cases = [
        (json!({"type":"check"}), "cannot check"),
        (json!({"type":"bet","to":40}), "already a bet"),
        (json!({"type":"raise","to":1001}), "more than your stack"),
        (json!({"type":"raise","to":u64::MAX}), "more than your stack"),
        (json!({"type":"raise","to":15}), "minimum raise is to 20"),
        (json!({"type":"raise","to":10}), "does not exceed"),
        (json!({"type":"raise","to":0}), "does not exceed"),
    ];
    for (a, why) in cases {
        let e = t.act(0, a.clone()).unwrap_err();
        assert!(e.to_string().contains(why), "{a}: {e}");
    }
    t.ok(0, json!({"type":"call"}));
    t.ok(1, json!({"type":"call"}));
    let e = t.act(2, json!({"type":"call"})).unwrap_err();
    assert!(e.to_string().contains("nothing to call"), "{e}");
    t.ok(2, json!({"type":"check"}));
    // Flop: no bet yet.
    let e = t.act(1, json!({"type":"raise","to":20})).unwrap_err();
    assert!(e.to_string().contains("no bet to raise"), "{e}");
    t.ok(1, json!({"type":"bet","to":200}));
    // Seat 2 has 290 left: a raise above that is refused, all-in is fine.
    let e = t.act(2, json!({"type":"raise","to":400})).unwrap_err();
    assert!(matches!(e, GameError::BadAmount(_)), "{e}");
    // All-in to 290 is short of the minimum (400) but allowed as an all-in.
    t.ok(2, json!({"type":"raise","to":290}));
    assert_eq!(t.public()["current_bet"], 290);
}

#[test]
fn bad_settings_and_players() {
    let g = game();
    for bad in [
        json!({"small_blind": 0}),
        json!({"small_blind": 20, "big_blind": 10}),
        json!({"ante": 11}),
        json!({"big_blind": 9007199254740992u64, "small_blind": 1}),
        json!({"big_blind": (1u64 << 50) + 1, "small_blind": 1}),
        json!({"small_blind": -1}),
        json!({"blinds": 5}),
        json!("cheap"),
    ] {
        assert!(matches!(g.normalize_settings(&bad), Err(GameError::BadSettings(_))), "{bad}");
    }
    assert_eq!(
        g.normalize_settings(&json!({"big_blind": 20})).unwrap(),
        json!({"small_blind": 5, "big_blind": 20, "ante": 0})
    );
    assert_eq!(
        g.normalize_settings(&Value::Null).unwrap(),
        json!({"small_blind": 5, "big_blind": 10, "ante": 0})
    );
    let deck = deck(0, &["AsAh", "KsKh"], BOARD);
    // The protocol's one stake cap, 2^50, is the largest blind and stack.
    assert!(g.normalize_settings(&json!({"big_blind": 1u64 << 50, "small_blind": 1})).is_ok());
    assert!(Table::try_new(Value::Null, &[1000, 1 << 50], Value::Null, deck.clone()).is_ok());
    for balances in
        [&[1000][..], &[1000; 11][..], &[1000, 0][..], &[1000, (1 << 50) + 1][..], &[1000, 1 << 53][..]]
    {
        let r = Table::try_new(Value::Null, balances, Value::Null, deck.clone());
        assert!(matches!(r, Err(GameError::BadPlayers(_))), "{balances:?}");
    }
    // The same player seated twice.
    let p = PlayerInfo { id: pid(0), balance: Chips(100) };
    let e = TexasHoldem.create_game(&Settings::default(), &[p.clone(), p], &Memory::default()).unwrap_err();
    assert!(matches!(e, GameError::BadPlayers(_)));
    // Memory that does not parse.
    let r = Table::try_new(Value::Null, &[100, 100], json!({"button": "zz"}), deck);
    assert!(matches!(r, Err(GameError::Malformed(_))));
}

#[test]
fn engine_misuse_is_a_typed_error() {
    let g = TexasHoldem;
    let players: Vec<PlayerInfo> = players(&[100, 100]);
    let mut s = g.create_game(&Settings::default(), &players, &Memory::default()).unwrap();
    assert!(g.receive_cards(&mut s, &[]).is_err(), "cards before any deal");
    g.start(&mut s).unwrap();
    assert!(g.start(&mut s).is_err(), "started twice");
    assert!(matches!(g.receive_cards(&mut s, &[]), Err(GameError::BadDeal(_))), "wrong count");
    assert_eq!(g.apply(&mut s, Seat(0), &Action::Call), Err(GameError::NotYourTurn), "before the cards");
}

#[test]
fn a_deck_with_jokers_or_repeats_is_refused() {
    let mut d = deck(0, &["AsAh", "KsKh"], BOARD);
    d[1] = "RJ".parse().unwrap();
    assert!(matches!(Table::try_new(Value::Null, &[100, 100], Value::Null, d), Err(GameError::BadDeal(_))));
    let mut d = deck(0, &["AsAh", "KsKh"], BOARD);
    d[1] = d[0];
    assert!(matches!(Table::try_new(Value::Null, &[100, 100], Value::Null, d), Err(GameError::BadDeal(_))));
}

#[test]
fn button_moves_clockwise_through_memory() {
    let mut memory = Value::Null;
    let mut buttons = Vec::new();
    for _ in 0..5 {
        let t = Table::new(
            Value::Null,
            &[100, 100, 100],
            memory.clone(),
            deck(0, &["AsAh", "KsKh", "QsQh"], BOARD),
        );
        buttons.push(t.public()["button"].as_u64().unwrap());
        memory = t.runner.hand().memory_after();
    }
    assert_eq!(buttons, vec![0, 1, 2, 0, 1]);
    assert_eq!(memory["button"], json!(pid(1)));

    let g = TexasHoldem;
    let info = |ids: &[usize]| -> Vec<PlayerInfo> {
        ids.iter().map(|i| PlayerInfo { id: pid(*i), balance: Chips(100) }).collect()
    };
    let seating: Vec<_> = (0..4).map(pid).collect();
    let memory = |b: usize| Memory { button: Some(pid(b)), seating: seating.clone() };
    let button_of =
        |ids: &[usize], m: &Memory| g.create_game(&Settings::default(), &info(ids), m).unwrap().button;
    // Previous button (player 1) still here: the next player after them.
    assert_eq!(button_of(&[0, 1, 2, 3], &memory(1)), 2);
    assert_eq!(button_of(&[0, 1, 2, 3], &memory(3)), 0);
    // A new player sat down right after the button: they get it.
    assert_eq!(button_of(&[0, 1, 9, 2, 3], &memory(1)), 2);
    // The button player left: the next player of the old seating still here.
    assert_eq!(button_of(&[0, 2, 3], &memory(1)), 1);
    assert_eq!(button_of(&[0, 3], &memory(1)), 1);
    assert_eq!(button_of(&[0, 3], &memory(2)), 1);
    assert_eq!(button_of(&[3, 0], &memory(3)), 1);
    // Nobody known: seat 0.
    assert_eq!(button_of(&[7, 8], &memory(1)), 0);
    assert_eq!(button_of(&[0, 1], &Memory::default()), 0);
}

fn strings(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::String(s) => out.push(s.clone()),
        Value::Array(a) => a.iter().for_each(|x| strings(x, out)),
        Value::Object(o) => o.iter().for_each(|(k, x)| {
            out.push(k.clone());
            strings(x, out)
        }),
        _ => {}
    }
}

#[test]
fn public_state_never_shows_hole_cards_and_timeouts_check_or_fold() {
    let holes = ["AsAh", "KsKh", "QsQh"];
    let mut t = table();
    let hidden = ["As", "Ah", "Ks", "Kh", "Qs", "Qh"];
    let check = |t: &Table| {
        let mut s = Vec::new();
        strings(&t.public(), &mut s);
        for h in hidden {
            assert!(!s.iter().any(|x| x == h), "{h} in {}", t.public());
        }
    };
    check(&t);
    let auto = |t: &Table| t.runner.hand().auto_action(Seat(t.to_act().unwrap())).unwrap();
    assert_eq!(auto(&t), json!({"type":"fold"}));
    assert_eq!(t.runner.hand().auto_action(Seat(1)), None, "only for the player to act");
    t.ok(0, json!({"type":"call"}));
    check(&t);
    t.ok(1, json!({"type":"call"}));
    assert_eq!(auto(&t), json!({"type":"check"}), "the big blind's option is free");
    t.ok(2, json!({"type":"check"}));
    check(&t);
    assert_eq!(auto(&t), json!({"type":"check"}));
    t.ok(1, json!({"type":"bet","to":50}));
    assert_eq!(auto(&t), json!({"type":"fold"}));
    let a = auto(&t);
    t.ok(2, a);
    t.check_down();
    check(&t);
    let p = t.public();
    assert_eq!(p["over"], true);
    assert_eq!(p["board"].as_array().unwrap().len(), 5);
    // The showdown hands appear only through the reveal and the summary.
    let r = t.result();
    assert!(r.summary.contains("seat 0 shows As Ah"), "{}", r.summary);
    assert!(!r.summary.contains("Qs Qh"), "a folded hand is not shown: {}", r.summary);
    let revealed: Vec<u16> = t
        .events
        .iter()
        .filter_map(|e| match e {
            HandEvent::Reveal { positions } => Some(positions.clone()),
            _ => None,
        })
        .flatten()
        .collect();
    let dealt = t.runner.dealt();
    let mut shown: Vec<String> = revealed.iter().map(|p| dealt[*p as usize].card.to_string()).collect();
    shown.sort();
    assert_eq!(shown, vec!["Ah", "As", "Kh", "Ks"]);
    let _ = holes;
}

#[test]
fn actions_serialise_as_documented() {
    let cases = [
        (Action::Fold, json!({"type":"fold"})),
        (Action::Check, json!({"type":"check"})),
        (Action::Call, json!({"type":"call"})),
        (Action::Bet { to: Chips(20) }, json!({"type":"bet","to":20})),
        (Action::Raise { to: Chips(60) }, json!({"type":"raise","to":60})),
        (Action::AllIn, json!({"type":"all-in"})),
    ];
    for (a, v) in cases {
        assert_eq!(serde_json::to_value(&a).unwrap(), v);
        assert_eq!(serde_json::from_value::<Action>(v).unwrap(), a);
    }
}
