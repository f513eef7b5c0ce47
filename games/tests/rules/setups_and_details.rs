//! Set-up settings (the Hold'em button) and the typed settlement details of
//! Hold'em and Blackjack, checked against hands worked out by hand.

use claw_games::blackjack::{BlackjackDetails, HandOutcome};
use claw_games::texas_holdem::{HoldemDetails, PotKind};
use claw_games::{registry, GameDetails, GameError, HandRunner};
use claw_protocol::{CardId, Chips, PlayerId, Seat};
use serde_json::{json, Value};

use crate::support::players;

fn deck(game: &str, settings: &Value, top: &str) -> Vec<CardId> {
    let top: Vec<CardId> = top.split_whitespace().map(|c| c.parse().unwrap()).collect();
    let g = registry::get(game).unwrap();
    let mut d = top.clone();
    d.extend(g.create_deck(settings).unwrap().into_iter().filter(|c| !top.contains(c)));
    d
}

#[test]
fn the_button_setting_places_the_button() {
    let g = registry::get("texas-holdem").unwrap();
    // Memory says the button was seat 0's player, so it would move to seat 1;
    // the setting puts it on seat 2: small blind seat 0, big blind seat 1.
    let memory = json!({"button": PlayerId::from_bytes([1; 32]), "seating": []});
    let settings = json!({"button": 2});
    let h = g.new_hand(&settings, &players(&[100, 100, 100]), &memory).unwrap();
    let p = h.public_state();
    assert_eq!(
        (p["button"].clone(), p["small_blind_seat"].clone(), p["big_blind_seat"].clone()),
        (json!(2), json!(0), json!(1))
    );
    // Without the setting the memory moves it.
    let h = g.new_hand(&json!({}), &players(&[100, 100, 100]), &memory).unwrap();
    assert_eq!(h.public_state()["button"], json!(1));
    // Normalised only when set; a seat beyond the table is refused.
    assert!(g.normalize_settings(&json!({})).unwrap().get("button").is_none());
    assert_eq!(g.normalize_settings(&settings).unwrap()["button"], json!(2));
    let err = g.new_hand(&json!({"button": 3}), &players(&[100, 100, 100]), &Value::Null).err();
    assert!(matches!(err, Some(GameError::BadPlayers(_))), "{err:?}");
}

#[test]
fn holdem_details_list_every_pot_and_share() {
    // Button seat 1 (SB seat 2, BB seat 0). Seat 1 is all-in for 50 with
    // aces, seat 2 (kings) bets 100 more on the flop and seat 0 (seven high)
    // calls: main pot 150 to seat 1, side pot 200 to seat 2.
    let g = registry::get("texas-holdem").unwrap();
    let settings = json!({"button": 1});
    let d = deck("texas-holdem", &settings, "Ks 7c As Kd 2d Ad 5c 3h 8s 9c 6h Jd Tc 4s");
    let (mut r, _) =
        HandRunner::start(g.as_ref(), &settings, &players(&[1000, 50, 1000]), &Value::Null, d).unwrap();
    for (s, a) in [
        (1, json!({"type": "all-in"})),
        (2, json!({"type": "call"})),
        (0, json!({"type": "call"})),
        (2, json!({"type": "bet", "to": 100})),
        (0, json!({"type": "call"})),
        (2, json!({"type": "check"})),
        (0, json!({"type": "check"})),
        (2, json!({"type": "check"})),
        (0, json!({"type": "check"})),
    ] {
        r.act(Seat(s), &a).unwrap();
    }
    let Some(GameDetails::TexasHoldem(HoldemDetails { button, showdown, pots })) = r.hand().details() else {
        panic!("hold'em details")
    };
    assert_eq!((button, showdown), (Seat(1), true));
    let got: Vec<_> = pots.iter().map(|p| (p.kind, p.amount.0, p.shares.clone())).collect();
    assert_eq!(
        got,
        vec![
            (PotKind::Main, 150, vec![(Seat(1), Chips(150))]),
            (PotKind::Side, 200, vec![(Seat(2), Chips(200))])
        ]
    );
    assert_eq!(pots[0].eligible, vec![Seat(0), Seat(1), Seat(2)]);
    assert_eq!(r.hand().result().unwrap().net, vec![-150, 100, 50]);
}

#[test]
fn blackjack_details_give_each_hand_outcome_and_payout() {
    // Seat 0: 5 6, doubles for 20 more, draws T (21). Seat 1: A K natural.
    // House 9 7 draws 8: bust. Seat 0 paid 80 on a stake of 40 (+40); seat 1
    // paid 20 + 30 (+30); the house −70.
    let g = registry::get("blackjack").unwrap();
    let settings = json!({"decks": 1});
    let d = deck("blackjack", &settings, "5c Ah 9d 6h Kc 7s Td 8c");
    let (mut r, _) =
        HandRunner::start(g.as_ref(), &settings, &players(&[100, 100]), &Value::Null, d).unwrap();
    r.act(Seat(0), &json!({"type": "bet", "amount": 20})).unwrap();
    r.act(Seat(1), &json!({"type": "bet", "amount": 20})).unwrap();
    r.act(Seat(0), &json!({"type": "double"})).unwrap();
    assert!(r.hand().is_over());
    let Some(GameDetails::Blackjack(BlackjackDetails { house_total, house_blackjack, seats, house_net })) =
        r.hand().details()
    else {
        panic!("blackjack details")
    };
    assert_eq!((house_total, house_blackjack, house_net), (24, false, -70));
    let hands: Vec<_> = seats
        .iter()
        .map(|s| {
            (
                s.seat,
                s.hands.iter().map(|h| (h.total, h.outcome, h.stake.0, h.payout.0)).collect::<Vec<_>>(),
                s.net,
            )
        })
        .collect();
    assert_eq!(
        hands,
        vec![
            (Seat(0), vec![(21, HandOutcome::Win, 40, 80)], 40),
            (Seat(1), vec![(21, HandOutcome::Blackjack, 20, 50)], 30)
        ]
    );
    // The same figures as the result.
    assert_eq!(r.hand().result().unwrap().net, vec![40, 30]);
}

#[test]
fn guandan_details_name_the_level_tribute_and_match_end() {
    // The double tribute of SPEC §13.1 (`guandan.double-tribute-sealed`):
    // team 0 went 1st and 2nd at level 5; seats 1 and 3 pay, 0 and 2 receive,
    // then team 1 surrenders and the match ends.
    use claw_games::guandan::{settle::MatchEnd, GdDetails, GdTributeDetails};
    let g = registry::get("guandan").unwrap();
    let memory = json!({"deal": 1, "last_order": [0, 2, 1, 3], "level_team": 0, "levels": [5, 2]});
    let settings = json!({});
    let d = g.create_deck(&settings).unwrap();
    let (mut r, _) =
        HandRunner::start(g.as_ref(), &settings, &players(&[100, 100, 100, 100]), &memory, d).unwrap();
    for (s, a) in [
        // Unshuffled deck: RJ at 53, RJ#1 at 107, 2c at 0, 2h at 2.
        (1, json!({"type": "tribute", "position": 53})),
        (3, json!({"type": "tribute", "position": 107})),
        (0, json!({"type": "return", "position": 0})),
        (2, json!({"type": "return", "position": 2})),
        (1, json!({"type": "surrender"})),
        (3, json!({"type": "vote", "accept": true})),
        (2, json!({"type": "vote", "accept": true})),
    ] {
        r.act(Seat(s), &a).unwrap_or_else(|e| panic!("seat {s} {a}: {e}"));
    }
    let Some(GameDetails::Guandan(d)) = r.hand().details() else { panic!("guandan details") };
    let GdDetails { level, level_team, stake_per_level, tribute, order, winner_team, match_end, net, .. } = d;
    assert_eq!((u8::from(level), level_team, stake_per_level), (5, 0, Chips(1)));
    assert_eq!(
        tribute,
        Some(GdTributeDetails { payers: vec![1, 3], receivers: vec![0, 2], resisted: false })
    );
    assert!(order.is_empty(), "the deal ended without play");
    assert_eq!(winner_team, Some(0));
    assert_eq!(match_end, Some(MatchEnd::Surrender { winner: 0 }));
    assert_eq!(net, vec![3, -3, 3, -3]);
    assert_eq!(net, r.hand().result().unwrap().net, "details and result agree");
}
