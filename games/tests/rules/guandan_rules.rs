//! Guandan deal flow: CLEARED, 接风, finishing order and level-up, the
//! terminal states, tribute / return / resist in every variant, chips.

use crate::guandan_common;

use claw_games::guandan::cards::{Level, Wilds};
use claw_games::guandan::settle::{levels_up, settle_deal, MatchEnd};
use claw_games::guandan::tribute::{
    check_return, check_tribute, return_choices, tribute_choices, DoubleTribute, ResistRule,
};
use claw_games::guandan::{
    AceRule, EndRequest, GdAction, GdMemory, GdPhase, GdSettings, GdState, Guandan, GuandanError,
};
use claw_games::{
    CardFace, DealTo, DealtCard, GameError, GameMeta, GamePlugin, HandEvent, HandResult, HandRunner,
    PendingAction, PlayerInfo,
};
use claw_protocol::{CardId, Chips, Seat};
use guandan_common::*;

fn fresh() -> GdState {
    start(&GdSettings::default(), &GdMemory::default(), &deck_for(["", "", "", ""]))
}

#[test]
fn three_passes_clear_the_table() {
    let mut st = fresh();
    set_hands(&mut st, ["3c 4c 5c", "6c 7c", "8c 9c", "Tc Jc"]);
    assert_eq!(to_act(&st), Some(0));
    assert!(matches!(Guandan.validate(&st, Seat(0), &GdAction::Pass {}), Err(GameError::Illegal(_))));
    play(&mut st, 0, "3c");
    play(&mut st, 1, "6c");
    pass(&mut st, 2);
    pass(&mut st, 3);
    assert_eq!(to_act(&st), Some(0));
    assert!(st.lead.is_some(), "two passes do not clear");
    pass(&mut st, 0);
    assert!(st.lead.is_none(), "three passes clear the table");
    assert_eq!(to_act(&st), Some(1), "the last player to play leads freely");
    let last = st.history.last().unwrap();
    assert!(last.cleared && !last.catch_up && last.seat == 1);
    // Free lead: any pattern.
    play(&mut st, 1, "7c");
}

#[test]
fn catch_up_gives_the_lead_to_the_partner() {
    let mut st = fresh();
    set_hands(&mut st, ["3c", "6c 7c", "8c 9c", "Tc Jc"]);
    play(&mut st, 0, "3c");
    assert_eq!(st.finished, vec![0]);
    assert_eq!(to_act(&st), Some(1));
    pass(&mut st, 1);
    pass(&mut st, 2);
    assert_eq!(to_act(&st), Some(3), "every player still in must pass");
    pass(&mut st, 3);
    assert_eq!(to_act(&st), Some(2), "接风: the partner of the player who went out leads");
    assert!(st.history.last().unwrap().catch_up);
    assert!(st.lead.is_none());
    // A player who went out leaves the rotation.
    play(&mut st, 2, "8c");
    assert_eq!(to_act(&st), Some(3));
    play(&mut st, 3, "Tc");
    assert_eq!(to_act(&st), Some(1), "seat 0 is skipped");
}

#[test]
fn beating_the_last_card_of_a_player_who_went_out() {
    let mut st = fresh();
    set_hands(&mut st, ["3c", "6c 7c", "8c 9c", "Tc Jc"]);
    play(&mut st, 0, "3c");
    play(&mut st, 1, "6c");
    pass(&mut st, 2);
    pass(&mut st, 3);
    assert_eq!(to_act(&st), Some(1), "seat 1's play stood: seat 1 leads, no catch-up");
    assert!(!st.history.last().unwrap().catch_up);
}

#[test]
fn first_and_second_of_one_team_end_the_deal() {
    let mut st = fresh();
    set_hands(&mut st, ["3c", "6c", "8c 9c", "Tc Jc"]);
    play(&mut st, 0, "3c");
    play(&mut st, 1, "6c");
    play(&mut st, 2, "8c");
    assert_eq!(to_act(&st), Some(3), "1st and 2nd of different teams: play on");
    // Seat 2 out second: seat 1 played, seat 2 beat it and went out.
    let mut st = fresh();
    set_hands(&mut st, ["3c", "6c 7c", "8c", "Tc Jc"]);
    play(&mut st, 0, "3c");
    pass(&mut st, 1);
    play(&mut st, 2, "8c");
    assert!(Guandan.is_over(&st));
    let o = st.outcome.clone().unwrap();
    assert_eq!(o.levels_up, 3);
    assert_eq!(o.levels_after[0].rank(), 5);
    assert_eq!(o.order[..2], [0, 2]);
    let r = Guandan.result(&st).unwrap();
    assert_eq!(r.winners, vec![Seat(0), Seat(2)]);
    assert_eq!(r.net, vec![3, -3, 3, -3]);
    let m = Guandan.memory_after(&st);
    assert_eq!((m.deal, m.level_team, m.levels[0].rank(), m.levels[1].rank()), (1, 0, 5, 2));
    assert_eq!(m.last_order.len(), 4);
}

#[test]
fn level_up_per_finishing_order() {
    assert_eq!(levels_up(&[0, 2, 1, 3], 3), 3);
    assert_eq!(levels_up(&[0, 2, 1, 3], 4), 4);
    assert_eq!(levels_up(&[0, 1, 2, 3], 3), 2);
    assert_eq!(levels_up(&[1, 0, 2, 3], 3), 1);
    assert_eq!(levels_up(&[3, 0, 1, 2], 3), 2);
    // Played out to the third finisher: 1st+4th.
    let mut st = fresh();
    set_hands(&mut st, ["3c", "6c", "7c 8c", "9c"]);
    play(&mut st, 0, "3c");
    play(&mut st, 1, "6c");
    play(&mut st, 2, "7c");
    play(&mut st, 3, "9c");
    assert!(Guandan.is_over(&st), "three out: the fourth is last");
    let o = st.outcome.clone().unwrap();
    assert_eq!((o.order.clone(), o.levels_up), (vec![0, 1, 3, 2], 1));
    assert_eq!(Guandan.result(&st).unwrap().winners, vec![Seat(0), Seat(2)]);
}

#[test]
fn level_cap_and_the_ace() {
    let s = GdSettings::default();
    let bal = vec![Chips(100); 4];
    // Team 0 at Q goes up 3: capped at A.
    let (o, _) = settle_deal(&s, &after([1, 0, 2, 3], [12, 9], 0), &bal, &[0, 2, 1, 3]);
    assert_eq!(o.levels_after[0], Level::ACE);
    assert!(o.match_end.is_none());
    // Team 0 at A wins a deal at its level: the match is over.
    let (o, _) = settle_deal(&s, &after([1, 0, 2, 3], [14, 9], 0), &bal, &[0, 1, 3, 2]);
    assert_eq!(o.match_end, Some(MatchEnd::Normal { winner: 0 }));
    assert_eq!(o.memory_after.matches_won, [1, 0]);
    assert_eq!(o.memory_after.match_no, 1);
    assert_eq!(o.memory_after.levels, [Level::TWO; 2]);
    assert!(o.memory_after.last_order.is_empty());
    // Competition reading: not with the partner last.
    let comp = GdSettings { ace_rule: AceRule::PartnerNotLast, ..s.clone() };
    let (o, _) = settle_deal(&comp, &after([1, 0, 2, 3], [14, 9], 0), &bal, &[0, 1, 3, 2]);
    assert!(o.match_end.is_none());
    // At A but the deal was at the other team's level: play on, now at A.
    let (o, _) = settle_deal(&s, &after([1, 0, 2, 3], [14, 9], 1), &bal, &[0, 2, 1, 3]);
    assert!(o.match_end.is_none());
    assert_eq!(o.memory_after.level_team, 0);
}

#[test]
fn ace_rule_reach_ends_the_match_on_reaching_a() {
    let reach = GdSettings { ace_rule: AceRule::Reach, ..GdSettings::default() };
    let bal = vec![Chips(100); 4];
    // Team 0 at Q goes up 3, capped at A: under `reach` that ends the match at once.
    let (o, _) = settle_deal(&reach, &after([1, 0, 2, 3], [12, 9], 0), &bal, &[0, 2, 1, 3]);
    assert_eq!(o.match_end, Some(MatchEnd::Normal { winner: 0 }));
    assert_eq!(o.levels_after[0], Level::ACE);
    assert_eq!((o.memory_after.match_no, o.memory_after.matches_won), (1, [1, 0]));
    assert_eq!(o.memory_after.levels, [Level::TWO; 2]);
    // Short of A: play on.
    let (o, _) = settle_deal(&reach, &after([1, 0, 2, 3], [9, 9], 0), &bal, &[0, 2, 1, 3]);
    assert!(o.match_end.is_none());
    // Reaching A at the other team's level ends it too; the default needs a deal played at A.
    let (o, _) = settle_deal(&reach, &after([1, 0, 2, 3], [13, 9], 1), &bal, &[0, 1, 3, 2]);
    assert_eq!(o.match_end, Some(MatchEnd::Normal { winner: 0 }));
    let (o, _) = settle_deal(&GdSettings::default(), &after([1, 0, 2, 3], [13, 9], 1), &bal, &[0, 1, 3, 2]);
    assert!(o.match_end.is_none());
    // Its partner last does not matter under `reach`.
    let (o, _) = settle_deal(&reach, &after([1, 0, 2, 3], [14, 9], 0), &bal, &[0, 1, 3, 2]);
    assert_eq!(o.match_end, Some(MatchEnd::Normal { winner: 0 }));
}

#[test]
fn new_readings_are_named_settings_in_the_normal_form() {
    let g = claw_games::registry::get("guandan").unwrap();
    // `purity` is left out at its default, so older settings keep their normal form.
    let default = g.normalize_settings(&serde_json::json!({})).unwrap();
    assert!(default.get("purity").is_none(), "{default}");
    assert_eq!(default["ace_rule"], "any-win");
    let literal =
        g.normalize_settings(&serde_json::json!({"purity": "any-wild", "ace_rule": "reach"})).unwrap();
    assert_eq!((literal["purity"].as_str(), literal["ace_rule"].as_str()), (Some("any-wild"), Some("reach")));
    assert!(g
        .normalize_settings(&serde_json::json!({"purity": "stand-in"}))
        .unwrap()
        .get("purity")
        .is_none());
    for bad in [serde_json::json!({"purity": "none"}), serde_json::json!({"ace_rule": "reach-a"})] {
        assert!(g.normalize_settings(&bad).is_err(), "{bad}");
    }
}

#[test]
fn chips_are_a_stake_per_level_and_conserved() {
    let s = GdSettings { stake_per_level: Chips(10), ..GdSettings::default() };
    let m = GdMemory::default();
    let (o, acts) = settle_deal(&s, &m, &[Chips(100); 4], &[1, 3, 0, 2]);
    assert_eq!(o.net, vec![-30, 30, -30, 30]);
    assert_eq!(acts.len(), 4);
    // A loser who cannot pay in full pays what he has; the odd chip goes to the first.
    let (o, _) = settle_deal(&s, &m, &[Chips(5), Chips(0), Chips(100), Chips(0)], &[1, 2, 0, 3]);
    assert_eq!(o.net, vec![-5, 8, -10, 7]);
    assert_eq!(o.net.iter().sum::<i64>(), 0);
}

#[test]
fn tribute_card_rules() {
    let s = GdSettings::default();
    let w = Wilds { level: Level::new(4).unwrap(), count: 2 };
    let hand = cards("3c 9d Ac Ah 4h 4c BJ");
    assert_eq!(tribute_choices(&hand, w, &s), cards("BJ"));
    let hand = cards("3c 9d Ac Ah 4h 4c");
    assert_eq!(check_tribute(&hand, cards("4h")[0], w, &s), Err(GuandanError::TributeOfWild(cards("4h")[0])));
    assert_eq!(
        check_tribute(&hand, cards("4c")[0], w, &s),
        Err(GuandanError::TributeOfLevelCard(cards("4c")[0]))
    );
    assert_eq!(
        check_tribute(&hand, cards("Ah")[0], w, &s),
        Err(GuandanError::PreferNonHeart(cards("Ah")[0]))
    );
    assert!(matches!(check_tribute(&hand, cards("9d")[0], w, &s), Err(GuandanError::NotHighest { .. })));
    assert!(matches!(check_tribute(&hand, cards("Kc")[0], w, &s), Err(GuandanError::NotInHand(_))));
    check_tribute(&hand, cards("Ac")[0], w, &s).unwrap();
    // Variants: a level card may be given; a wild may be given; hearts are not avoided.
    let lv = GdSettings { tribute_level_rank: true, ..s.clone() };
    assert_eq!(tribute_choices(&hand, w, &lv), cards("4c"));
    let wild = GdSettings { tribute_level_rank: true, can_tribute_wild: true, ..s.clone() };
    let mut c = tribute_choices(&hand, w, &wild);
    c.sort();
    assert_eq!(
        c,
        {
            let mut x = cards("4c");
            x.sort();
            x
        },
        "non-heart first among the level cards"
    );
    let any = GdSettings { tribute_prefer_non_heart: false, ..s.clone() };
    assert_eq!(tribute_choices(&hand, w, &any).len(), 2);
    // Same face from both packs: either physical card.
    let hand = cards("3c Ks Ks#1");
    assert_eq!(tribute_choices(&hand, w, &s).len(), 2);

    // Return: a single, not wild, not a level card, at most 10.
    let hand = cards("3c Tc Jc 4h 4c RJ");
    check_return(&hand, cards("Tc")[0], w, &s).unwrap();
    assert_eq!(check_return(&hand, cards("4h")[0], w, &s), Err(GuandanError::ReturnOfWild(cards("4h")[0])));
    assert_eq!(
        check_return(&hand, cards("4c")[0], w, &s),
        Err(GuandanError::ReturnOfLevelCard(cards("4c")[0]))
    );
    assert!(matches!(
        check_return(&hand, cards("Jc")[0], w, &s),
        Err(GuandanError::ReturnTooHigh { max: 10, .. })
    ));
    let open = GdSettings { tribute_return_max_rank: 0, ..s.clone() };
    check_return(&hand, cards("RJ")[0], w, &open).unwrap();
    // No card meets the rules: the lowest naturals do.
    let hand = cards("Jc Qd 4h");
    assert_eq!(return_choices(&hand, w, &s), cards("Jc"));
}

/// A deal after seat 0 won with this order, big jokers placed as given.
fn tribute_deal(order: [u8; 4], fixed: [&str; 4], settings: &GdSettings) -> GdState {
    start(settings, &after(order, [3, 2], team_of(order[0])), &deck_for(fixed))
}

fn team_of(s: u8) -> u8 {
    s % 2
}

/// Seat returns the first card it may return.
fn give_back(st: &mut GdState, seat: u8, s: &GdSettings) -> Vec<PendingAction> {
    let card = return_choices(&st.hands[usize::from(seat)], st.wilds(), s)[0];
    let position = st.position_of(card).unwrap();
    act(st, seat, GdAction::Return { position })
}

/// The tribute action that gives `card` (named by its deck position).
fn tribute_of(st: &GdState, card: CardId) -> GdAction {
    GdAction::Tribute { position: st.position_of(card).unwrap() }
}

fn transfer(p: &PendingAction) -> (u16, u8, u8, CardFace) {
    match p {
        PendingAction::Transfer { position, from, to, face } => (*position, from.0, to.0, *face),
        other => panic!("not a transfer: {other:?}"),
    }
}

#[test]
fn single_tribute_and_return() {
    let s = GdSettings::default();
    // 0 first, 2 third, 3 last: seat 3 pays seat 0.
    let mut st = tribute_deal([0, 1, 2, 3], ["RJ", "RJ#1", "", ""], &s);
    assert_eq!(st.phase, GdPhase::Tribute);
    assert_eq!(to_act(&st), Some(3));
    let t = st.tribute.clone().unwrap();
    assert_eq!((t.payers.clone(), t.receivers.clone(), t.resisted), (vec![3], vec![0], false));
    let choices = tribute_choices(&st.hands[3], st.wilds(), &s);
    let low = *st.hands[3].iter().min_by_key(|c| claw_games::guandan::tribute::value(**c, st.level)).unwrap();
    assert!(Guandan.validate(&st, Seat(3), &tribute_of(&st, low)).is_err());
    assert!(Guandan.validate(&st, Seat(0), &tribute_of(&st, choices[0])).is_err(), "not seat 0's turn");
    assert!(Guandan.validate(&st, Seat(3), &GdAction::Pass {}).is_err());
    let card = choices[0];
    let pos = st.positions[usize::from(card.code())].unwrap();
    let give = tribute_of(&st, card);
    let out = act(&mut st, 3, give);
    assert_eq!(out.len(), 1);
    assert_eq!(transfer(&out[0]), (pos, 3, 0, CardFace::Down));
    assert!(st.hands[0].contains(&card) && !st.hands[3].contains(&card));
    assert_eq!(st.hands[0].len(), 28);
    assert_eq!(st.phase, GdPhase::Return);
    assert_eq!(to_act(&st), Some(0));
    let back = return_choices(&st.hands[0], st.wilds(), &s)[0];
    let position = st.position_of(back).unwrap();
    let out = act(&mut st, 0, GdAction::Return { position });
    assert_eq!(transfer(&out[0]).1, 0);
    assert_eq!(transfer(&out[0]).2, 3);
    assert_eq!(st.hands.iter().map(|h| h.len()).collect::<Vec<_>>(), vec![27; 4]);
    assert_eq!(st.phase, GdPhase::Playing);
    assert_eq!(to_act(&st), Some(3), "the tribute giver leads");
}

#[test]
fn tribute_and_return_name_positions_the_giver_holds() {
    let s = GdSettings::default();
    // Level 3: 3h is wild. Seat 3 pays seat 0 and holds the wild.
    let mut st = tribute_deal([0, 1, 2, 3], ["RJ", "RJ#1", "", "3h"], &s);
    let refused = |st: &GdState, seat: u8, a: GdAction, e: GuandanError| {
        assert_eq!(Guandan.validate(st, Seat(seat), &a), Err(GameError::from(e)), "{a:?}");
    };
    for p in [108, 500, u16::MAX] {
        refused(&st, 3, GdAction::Tribute { position: p }, GuandanError::PositionOutOfRange(p));
    }
    // Another player's position (seat 0's red joker).
    let theirs = st.position_of(cards("RJ")[0]).unwrap();
    refused(&st, 3, GdAction::Tribute { position: theirs }, GuandanError::PositionNotHeld(theirs));
    // The wild, though seat 3 holds it.
    let wild = cards("3h")[0];
    let at = st.position_of(wild).unwrap();
    refused(&st, 3, GdAction::Tribute { position: at }, GuandanError::TributeOfWild(wild));
    // The face form of v0 is no longer an action.
    let face = serde_json::json!({"type": "tribute", "card": "RJ#1"});
    assert!(serde_json::from_value::<GdAction>(face).is_err());
    let card = tribute_choices(&st.hands[3], st.wilds(), &s)[0];
    let given = st.position_of(card).unwrap();
    act(&mut st, 3, GdAction::Tribute { position: given });
    // Given away: seat 3 no longer holds it; seat 0 cannot return a seat-3 card.
    assert_eq!(st.held(3, given), Err(GuandanError::PositionNotHeld(given)));
    assert_eq!(st.held(0, given), Ok(card));
    let seat3 = st.position_of(st.hands[3][0]).unwrap();
    refused(&st, 0, GdAction::Return { position: seat3 }, GuandanError::PositionNotHeld(seat3));
    refused(&st, 0, GdAction::Return { position: 108 }, GuandanError::PositionOutOfRange(108));
    // Every offered return names a position seat 0 holds.
    for o in Guandan.valid_actions(&st) {
        let GdAction::Return { position } = o.action else { panic!("{:?}", o.action) };
        assert!(st.held(0, position).is_ok());
    }
}

/// Card moves as `(from, to)` seats.
type Moves = Vec<(u8, u8)>;

/// A double tribute after `order` with these hands, each payer giving its
/// first allowed card: the tribute moves `(from, to)`, the return moves and
/// who leads.
fn double_tribute(order: [u8; 4], fixed: [&str; 4], s: &GdSettings) -> (Moves, Moves, Option<u8>) {
    let mut st = tribute_deal(order, fixed, s);
    let t = st.tribute.clone().unwrap();
    assert_eq!((t.payers.len(), t.receivers.clone()), (2, vec![order[0], order[1]]));
    let first = t.payers[0];
    assert_eq!(to_act(&st), Some(first), "payers give clockwise from the first");
    let card = tribute_choices(&st.hands[usize::from(first)], st.wilds(), s)[0];
    let give = tribute_of(&st, card);
    assert!(act(&mut st, first, give).is_empty(), "the receiver is known after both gave");
    let second = t.payers[1];
    let card = tribute_choices(&st.hands[usize::from(second)], st.wilds(), s)[0];
    let give = tribute_of(&st, card);
    let out = act(&mut st, second, give);
    let gifts: Vec<_> = out.iter().map(transfer).map(|t| (t.1, t.2)).collect();
    let mut returns = Vec::new();
    for r in [order[0], order[1]] {
        assert_eq!(to_act(&st), Some(r), "the first returns, then the second");
        let out = give_back(&mut st, r, s);
        returns.push((transfer(&out[0]).1, transfer(&out[0]).2));
    }
    assert_eq!(st.phase, GdPhase::Playing);
    (gifts, returns, to_act(&st))
}

#[test]
fn double_tribute_by_seat_is_the_default() {
    // The source rules: "双下进贡：末游向头游进贡、次末游向头游队友进贡".
    let s = GdSettings::default();
    assert_eq!(s.double_tribute, DoubleTribute::BySeat);
    // 0 and 2 first and second, 1 third, 3 last. The third holds the bigger
    // card (a big joker) and still pays the first's partner.
    let (gifts, returns, leader) = double_tribute([0, 2, 1, 3], ["RJ", "RJ#1", "", "BJ BJ#1"], &s);
    assert_eq!(gifts, vec![(3, 0), (1, 2)], "last pays the first, third pays the first's partner");
    assert_eq!(returns, vec![(0, 3), (2, 1)], "each receiver returns to its own payer");
    assert_eq!(leader, Some(1), "the payer of the bigger card leads");
    // The last holds the bigger card: the same receivers, the last leads.
    let (gifts, returns, leader) = double_tribute([0, 2, 1, 3], ["RJ", "BJ BJ#1", "", "RJ#1"], &s);
    assert_eq!((gifts, returns, leader), (vec![(3, 0), (1, 2)], vec![(0, 3), (2, 1)], Some(3)));
    // Team 1 won (3 first, 1 second), 2 third, 0 last; payers clockwise from 3: 0, 2.
    let (gifts, returns, leader) = double_tribute([3, 1, 2, 0], ["BJ", "", "RJ BJ#1", ""], &s);
    assert_eq!(gifts, vec![(0, 3), (2, 1)]);
    assert_eq!(returns, vec![(3, 0), (1, 2)]);
    assert_eq!(leader, Some(2));
    // Equal cards: the receivers by seat, the payer next clockwise from the first leads.
    let (gifts, returns, leader) = double_tribute([2, 0, 3, 1], ["RJ", "BJ", "RJ#1", "BJ#1"], &s);
    assert_eq!((gifts, returns, leader), (vec![(1, 2), (3, 0)], vec![(2, 1), (0, 3)], Some(3)));
}

#[test]
fn double_tribute_by_card_is_a_setting() {
    let s = GdSettings { double_tribute: DoubleTribute::ByCard, ..GdSettings::default() };
    // The third's big joker goes to the first, the last's small joker to the second.
    let (gifts, returns, leader) = double_tribute([0, 2, 1, 3], ["RJ", "RJ#1", "", "BJ BJ#1"], &s);
    assert_eq!(gifts, vec![(1, 0), (3, 2)], "the bigger card to the first");
    assert_eq!(returns, vec![(0, 1), (2, 3)]);
    assert_eq!(leader, Some(1), "the giver of the bigger card leads");
    let (gifts, returns, leader) = double_tribute([0, 2, 1, 3], ["RJ", "BJ BJ#1", "", "RJ#1"], &s);
    assert_eq!((gifts, returns, leader), (vec![(3, 0), (1, 2)], vec![(0, 3), (2, 1)], Some(3)));
    // Equal cards: the payer next clockwise from the first gives to the first.
    let (gifts, returns, leader) = double_tribute([2, 0, 3, 1], ["RJ", "BJ", "RJ#1", "BJ#1"], &s);
    assert_eq!((gifts, returns, leader), (vec![(3, 2), (1, 0)], vec![(2, 3), (0, 1)], Some(3)));
}

#[test]
fn double_tribute_setting_is_validated() {
    let g = claw_games::registry::get("guandan").unwrap();
    let by_default = g.normalize_settings(&serde_json::json!({})).unwrap();
    assert_eq!(by_default["double_tribute"], "by-seat");
    let by_card = g.normalize_settings(&serde_json::json!({"double_tribute": "by-card"})).unwrap();
    assert_eq!(by_card["double_tribute"], "by-card");
    for bad in [serde_json::json!("by-size"), serde_json::json!(1), serde_json::json!(null)] {
        let e = g.normalize_settings(&serde_json::json!({ "double_tribute": bad })).unwrap_err();
        assert!(matches!(e, GameError::BadSettings(_)), "{bad}: {e:?}");
    }
}

#[test]
fn double_tribute_cards_are_shown_once_both_gave() {
    let s = GdSettings { show_tribute: true, ..GdSettings::default() };
    let mut st = tribute_deal([0, 2, 1, 3], ["RJ", "BJ BJ#1", "", "RJ#1"], &s);
    let give = tribute_of(&st, cards("BJ")[0]);
    act(&mut st, 1, give);
    assert!(Guandan.public_state(&st)["tribute"]["given"][0]["card"].is_null(), "waits for the second");
    let give = tribute_of(&st, cards("RJ#1")[0]);
    let out = act(&mut st, 3, give);
    let moves: Vec<_> = out.iter().map(transfer).map(|t| (t.1, t.2, t.3)).collect();
    assert_eq!(moves, vec![(3, 0, CardFace::Up), (1, 2, CardFace::Up)]);
    let public = Guandan.public_state(&st);
    assert!(public["tribute"]["given"][0]["card"].is_string(), "shown when show_tribute");
    let hidden = tribute_deal([0, 2, 1, 3], ["RJ", "BJ BJ#1", "", "RJ#1"], &GdSettings::default());
    let mut st = hidden;
    let give = tribute_of(&st, cards("BJ")[0]);
    act(&mut st, 1, give);
    let give = tribute_of(&st, cards("RJ#1")[0]);
    let out = act(&mut st, 3, give);
    assert!(out.iter().map(transfer).all(|t| t.3 == CardFace::Down));
    assert!(Guandan.public_state(&st)["tribute"]["given"][0]["card"].is_null(), "hidden by default");
}

#[test]
fn resisting_tribute() {
    let seed = GdSettings::default();
    let comp = GdSettings { resist: ResistRule::PayingSide, ..GdSettings::default() };
    // Single tribute, the payer holds both big jokers: resisted under both rules.
    for s in [&seed, &comp] {
        let st = tribute_deal([0, 1, 2, 3], ["", "", "", "RJ RJ#1"], s);
        assert!(st.tribute.as_ref().unwrap().resisted);
        assert_eq!(st.phase, GdPhase::Playing);
        assert_eq!(to_act(&st), Some(0), "the last deal's first leads");
    }
    // Double-down, one big joker each with the losers: only the paying-side rule resists.
    let st = tribute_deal([0, 2, 1, 3], ["", "RJ", "", "RJ#1"], &seed);
    assert!(!st.tribute.as_ref().unwrap().resisted);
    let st = tribute_deal([0, 2, 1, 3], ["", "RJ", "", "RJ#1"], &comp);
    assert!(st.tribute.as_ref().unwrap().resisted);
    // Double-down, both with one loser: resisted under both.
    for s in [&seed, &comp] {
        assert!(tribute_deal([0, 2, 1, 3], ["", "RJ RJ#1", "", ""], s).tribute.unwrap().resisted);
    }
    // Split between the paying side and the winners, or with the winners: no resistance.
    for s in [&seed, &comp] {
        assert!(!tribute_deal([0, 1, 2, 3], ["", "", "RJ", "RJ#1"], s).tribute.unwrap().resisted);
        assert!(!tribute_deal([0, 1, 2, 3], ["RJ RJ#1", "", "", ""], s).tribute.unwrap().resisted);
    }
}

#[test]
fn the_first_deal_has_no_tribute() {
    let st = fresh();
    assert!(st.tribute.is_none());
    assert_eq!(st.phase, GdPhase::Playing);
    let st = start(
        &GdSettings::default(),
        &GdMemory { match_no: 2, ..GdMemory::default() },
        &deck_for(["", "", "", ""]),
    );
    assert_eq!(to_act(&st), Some(2), "the first lead of a match rotates with the match number");
}

#[test]
fn terminal_states_requested_by_the_dealer() {
    let deck = deck_for(["", "", "", ""]);
    let draw = GdMemory { end_request: Some(EndRequest::Timeout), ..after([0, 1, 2, 3], [6, 6], 0) };
    let st = start(&GdSettings::default(), &draw, &deck);
    assert!(Guandan.is_over(&st) && st.hands.iter().all(|h| h.is_empty()));
    assert_eq!(st.outcome.as_ref().unwrap().match_end, Some(MatchEnd::Draw));
    let m = Guandan.memory_after(&st);
    assert_eq!((m.draws, m.match_no, m.deal), (1, 1, 0));
    assert!(Guandan.result(&st).unwrap().winners.is_empty());
    let timeout = GdMemory { end_request: Some(EndRequest::Timeout), ..after([0, 1, 2, 3], [6, 9], 0) };
    let st = start(&GdSettings::default(), &timeout, &deck);
    assert_eq!(st.outcome.unwrap().match_end, Some(MatchEnd::Timeout { winner: 1 }));
    let gone = GdMemory { end_request: Some(EndRequest::Disconnect { seat: 1 }), ..GdMemory::default() };
    let st = start(&GdSettings::default(), &gone, &deck);
    assert_eq!(Guandan.result(&st).unwrap().winners, vec![Seat(0), Seat(2)]);
    assert_eq!(Guandan.memory_after(&st).matches_won, [1, 0]);
    let bad = GdMemory { end_request: Some(EndRequest::Disconnect { seat: 7 }), ..GdMemory::default() };
    assert!(Guandan.create_game(&GdSettings::default(), &players(10), &bad).is_err());
    let bad = GdMemory { last_order: vec![0, 0, 1, 2], deal: 1, ..GdMemory::default() };
    assert!(Guandan.create_game(&GdSettings::default(), &players(10), &bad).is_err());
}

#[test]
fn surrender_needs_the_partner_and_an_opponent() {
    let mut st = fresh();
    act(&mut st, 0, GdAction::Surrender {});
    assert_eq!((st.phase, to_act(&st)), (GdPhase::Vote, Some(2)));
    act(&mut st, 2, GdAction::Vote { accept: false });
    assert_eq!((st.phase, to_act(&st)), (GdPhase::Playing, Some(0)), "partner refused: play on");
    assert!(Guandan.validate(&st, Seat(0), &GdAction::Surrender {}).is_err(), "once per team and deal");

    let mut st = fresh();
    act(&mut st, 0, GdAction::Surrender {});
    act(&mut st, 2, GdAction::Vote { accept: true });
    assert_eq!(to_act(&st), Some(1));
    act(&mut st, 1, GdAction::Vote { accept: false });
    assert_eq!(to_act(&st), Some(3));
    act(&mut st, 3, GdAction::Vote { accept: true });
    assert!(Guandan.is_over(&st));
    let r = Guandan.result(&st).unwrap();
    assert_eq!(r.winners, vec![Seat(1), Seat(3)]);
    assert_eq!(r.net, vec![-3, 3, -3, 3]);
    assert_eq!(Guandan.memory_after(&st).last_match_end, Some(MatchEnd::Surrender { winner: 1 }));

    let mut st = fresh();
    act(&mut st, 0, GdAction::Surrender {});
    act(&mut st, 2, GdAction::Vote { accept: true });
    act(&mut st, 1, GdAction::Vote { accept: false });
    act(&mut st, 3, GdAction::Vote { accept: false });
    assert_eq!((st.phase, to_act(&st)), (GdPhase::Playing, Some(0)), "both opponents refused");
}

#[test]
fn tribute_through_the_hand_runner() {
    let g = claw_games::registry::get("guandan").unwrap();
    let memory = serde_json::to_value(after([0, 1, 2, 3], [2, 2], 0)).unwrap();
    let deck = deck_for(["RJ", "RJ#1", "", ""]);
    let (mut runner, _) =
        HandRunner::start(g.as_ref(), &serde_json::Value::Null, &players(50), &memory, deck).unwrap();
    let seat = runner.hand().to_act().unwrap();
    assert_eq!(seat, Seat(3));
    let tribute = runner.hand().auto_action(seat).unwrap();
    let events = runner.act(seat, &tribute).unwrap();
    let HandEvent::Transfer { position, from, to, face } = events[0].clone() else { panic!("{events:?}") };
    assert_eq!((from, to, face), (Seat(3), Seat(0), CardFace::Down));
    assert_eq!(runner.holders()[usize::from(position)], DealTo::Player(Seat(0)));
    assert_eq!(
        runner.dealt()[usize::from(position)].target,
        DealTo::Player(Seat(3)),
        "the deal record stays"
    );
}

/// A plugin that transfers a card from a seat that does not hold it.
#[derive(Clone, Copy)]
struct BadTransfer;

impl GamePlugin for BadTransfer {
    type State = u8;
    type Action = GdAction;
    type Settings = GdSettings;
    type Memory = GdMemory;
    fn meta(&self) -> GameMeta {
        GameMeta::new("bad-transfer", "x", 2, 2, "0")
    }
    fn validate_settings(&self, _: &GdSettings) -> Result<(), GameError> {
        Ok(())
    }
    fn create_deck(&self, _: &GdSettings) -> Vec<CardId> {
        CardId::deck(1, false)
    }
    fn create_game(&self, _: &GdSettings, _: &[PlayerInfo], _: &GdMemory) -> Result<u8, GameError> {
        Ok(0)
    }
    fn start(&self, _: &mut u8) -> Result<Vec<PendingAction>, GameError> {
        let spec = claw_games::DealSpec { target: DealTo::Player(Seat(0)), face: CardFace::Down };
        Ok(vec![PendingAction::Deal { phase: "hole".into(), cards: vec![spec] }])
    }
    fn receive_cards(&self, _: &mut u8, _: &[DealtCard]) -> Result<Vec<PendingAction>, GameError> {
        Ok(Vec::new())
    }
    fn to_act(&self, _: &u8) -> Option<Seat> {
        Some(Seat(0))
    }
    fn validate(&self, _: &u8, _: Seat, _: &GdAction) -> Result<(), GameError> {
        Ok(())
    }
    fn apply(&self, st: &mut u8, _: Seat, _: &GdAction) -> Result<Vec<PendingAction>, GameError> {
        *st += 1;
        let (position, from, to) = match *st {
            1 => (0, 1, 0),
            2 => (5, 0, 1),
            3 => (0, 0, 7),
            _ => (0, 0, 1),
        };
        Ok(vec![PendingAction::Transfer { position, from: Seat(from), to: Seat(to), face: CardFace::Down }])
    }
    fn is_over(&self, _: &u8) -> bool {
        false
    }
    fn result(&self, _: &u8) -> Option<HandResult> {
        None
    }
    fn valid_actions(&self, _: &u8) -> Vec<claw_games::ActionOption<GdAction>> {
        Vec::new()
    }
    fn public_state(&self, _: &u8) -> serde_json::Value {
        serde_json::Value::Null
    }
    fn phase(&self, _: &u8) -> Option<&'static str> {
        None
    }
    fn shown_cards(&self, _: &u8) -> Vec<CardId> {
        Vec::new()
    }
    fn auto_action(&self, _: &u8, _: Seat) -> Option<GdAction> {
        None
    }
    fn memory_after(&self, _: &u8) -> GdMemory {
        GdMemory::default()
    }
}

#[test]
fn the_runner_refuses_a_transfer_from_a_seat_that_does_not_hold_the_card() {
    let g = claw_games::dynamic::Erased(std::sync::Arc::new(BadTransfer));
    let players: Vec<PlayerInfo> = players(1).into_iter().take(2).collect();
    let (mut r, _) = HandRunner::start(
        &g,
        &serde_json::Value::Null,
        &players,
        &serde_json::Value::Null,
        CardId::deck(1, false),
    )
    .unwrap();
    let pass = serde_json::json!({"type": "pass"});
    for why in ["seat 1 does not hold position 0", "position 5 was never dealt", "seat 7 is not at the table"]
    {
        let e = r.act(Seat(0), &pass).unwrap_err();
        assert!(matches!(e, GameError::BadDeal(_)), "{why}: {e}");
    }
    let ok = r.act(Seat(0), &pass).unwrap();
    assert!(matches!(ok[0], HandEvent::Transfer { .. }));
    assert!(r.act(Seat(0), &pass).is_err(), "seat 0 no longer holds position 0");
}

#[test]
fn the_takeover_plays_l2_within_its_node_budget_and_l1_beyond() {
    use claw_games::guandan::ai::{decide, takeover, AiLevel, Ties, View, TAKEOVER_NODES};
    // A whole deal played by the timeout action `ai` alone: every step is
    // the takeover's L2 choice (the replay recomputes the same, it is a
    // pure function of the state), legal, and the deal ends.
    let ai = GdSettings { timeout_action: claw_games::guandan::TimeoutAction::Ai, ..GdSettings::default() };
    let mut st = start(&ai, &GdMemory::default(), &deck_for(["", "", "", ""]));
    let mut steps = 0;
    let mut differs_from_l1 = false;
    while let Some(seat) = to_act(&st) {
        let v = View::of(&st, seat);
        let auto = Guandan.auto_action(&st, Seat(seat)).unwrap();
        assert_eq!(auto, takeover(&v, TAKEOVER_NODES));
        assert_eq!(auto, Guandan.auto_action(&st, Seat(seat)).unwrap(), "deterministic");
        let l1 = decide(AiLevel::L1, &v, &mut Ties::new(0));
        // With no budget the takeover is L1.
        assert_eq!(takeover(&v, 0), l1, "step {steps}");
        differs_from_l1 |= v.plays().len() <= TAKEOVER_NODES && auto != l1;
        Guandan.validate(&st, Seat(seat), &auto).unwrap_or_else(|e| panic!("step {steps}: {e}"));
        act(&mut st, seat, auto);
        steps += 1;
        assert!(steps < 500, "the deal ends");
    }
    assert!(st.outcome.is_some());
    assert!(differs_from_l1, "the takeover is not L1 within its budget");
}

#[test]
fn the_default_timer_passes_where_legal_and_otherwise_plays_the_fixed_smallest_move() {
    use claw_games::guandan::ai::{timer, View};
    // A whole deal played by the default timer alone: a pass whenever a
    // play is on the table, the fixed smallest lead otherwise; legal, and
    // the deal ends.
    let mut st = fresh();
    let (mut steps, mut passes, mut leads) = (0, 0, 0);
    while let Some(seat) = to_act(&st) {
        let auto = Guandan.auto_action(&st, Seat(seat)).unwrap();
        assert_eq!(auto, timer(&View::of(&st, seat)));
        if st.lead.is_some() {
            assert_eq!(auto, GdAction::Pass {}, "step {steps}: passing is legal, the timer passes");
            passes += 1;
        } else {
            assert!(matches!(auto, GdAction::Play { .. }), "step {steps}: leading, it plays: {auto:?}");
            leads += 1;
        }
        Guandan.validate(&st, Seat(seat), &auto).unwrap_or_else(|e| panic!("step {steps}: {e}"));
        act(&mut st, seat, auto);
        steps += 1;
        assert!(steps < 500, "the deal ends");
    }
    assert!(st.outcome.is_some() && passes > 0 && leads > 0);
    // Leading, it plays one card: the lowest in level order, the lowest
    // card id among equals.
    let mut st = fresh();
    set_hands(&mut st, ["9c 3d 3c Ks Kh", "6c 7c", "8c 9c", "Tc Jc"]);
    let auto = Guandan.auto_action(&st, Seat(0)).unwrap();
    let GdAction::Play { cards, .. } = auto else { panic!("{auto:?}") };
    assert_eq!(cards.len(), 1);
    assert_eq!(
        cards[0],
        *guandan_common::cards("3c 3d").iter().min().unwrap(),
        "of two threes, the lower card id"
    );
}

/// Issue 31: `team_formation: random` was accepted and did nothing. It is
/// refused now (teams are the seats as joined, the only auditable seating),
/// and the dealer's end requests are the plugin's `end_match` hook.
#[test]
fn random_team_formation_is_refused_and_end_match_sets_the_request_only_mid_match() {
    use claw_games::MatchStop;
    let g = claw_games::registry::get("guandan").expect("guandan");
    let e = g.normalize_settings(&serde_json::json!({"team_formation": "random"})).unwrap_err();
    assert!(e.to_string().contains("random"), "{e}");
    let ok = g.normalize_settings(&serde_json::json!({"team_formation": "fixed13"})).unwrap();
    assert_eq!(ok["team_formation"], "fixed13");
    // No match running (a fresh table, or deal 0): nothing to end.
    assert!(g.end_match(&serde_json::Value::Null, MatchStop::Timeout).is_none());
    assert!(g.match_begins(&serde_json::Value::Null));
    let mid = serde_json::to_value(GdMemory { deal: 3, ..GdMemory::default() }).unwrap();
    assert!(!g.match_begins(&mid));
    let ended = g.end_match(&mid, MatchStop::Left { seat: Seat(2) }).expect("a request");
    assert_eq!(ended["end_request"], serde_json::json!({"kind": "disconnect", "seat": 2}));
    assert!(g.end_match(&mid, MatchStop::Left { seat: Seat(4) }).is_none(), "no such seat");
    assert_eq!(g.match_time_limit(&serde_json::json!({"max_game_duration_sec": 90})), Some(90));
    assert_eq!(g.match_time_limit(&serde_json::Value::Null), None);
}
