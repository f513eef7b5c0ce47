//! Guandan patterns: the table of every pattern with and without wilds, the
//! ambiguity cases, ordering under each bomb profile, bad input as typed
//! errors, and legal-move generation checked against brute force.

use crate::guandan_common;

use std::collections::BTreeSet;

use claw_games::guandan::cards::{check_faces, check_ids, natural, Level, Tally, Wilds};
use claw_games::guandan::compare::{beats, BombPriority, BombProfile};
use claw_games::guandan::moves::legal_moves;
use claw_games::guandan::patterns::{by_priority, readings, Declared, Kind, PatternRules, Purity, Reading};
use claw_games::guandan::{
    read_play, GdAction, GdMemory, GdPhase, GdSettings, GdState, Guandan, GuandanError, Lead,
    MAX_LISTED_PLAYS,
};
use claw_games::GamePlugin;
use claw_protocol::{Card, CardId, Seat};
use guandan_common::{after, cards, deck_for, start};
use proptest::prelude::*;

fn lv(r: u8) -> Level {
    Level::new(r).unwrap()
}

fn rules(level: u8) -> PatternRules {
    PatternRules { level: lv(level), ace_high: true, purity: Purity::StandIn }
}

fn tally(s: &str, level: u8) -> Tally {
    Tally::of_ids(&cards(s), Wilds { level: lv(level), count: 2 })
}

/// The default reading of a lead, as the plugin reads it.
fn read(s: &str, level: u8) -> Option<Reading> {
    read_play(&tally(s, level), rules(level), &BombProfile::competition(), None, None).ok()
}

fn kr(s: &str, level: u8) -> Option<(Kind, u8)> {
    read(s, level).map(|r| (r.kind, r.rank))
}

#[test]
fn every_pattern_without_wilds() {
    use Kind::*;
    let table: &[(&str, Option<(Kind, u8)>)] = &[
        ("3c", Some((Single, 3))),
        ("3c 3c#1", Some((Pair, 3))),
        ("3c 3d 3s", Some((Triple, 3))),
        ("3c 3d 3s 9c 9d", Some((TripleWithPair, 3))),
        ("3c 3d 3s BJ BJ#1", Some((TripleWithPair, 3))),
        ("Ac 2d 3s 4h 5c", Some((Straight, 5))),
        ("Tc Jd Qs Kh Ac", Some((Straight, 14))),
        ("Jc Qd Ks Ac 2c", None),
        ("3c 3d 4s 4h 5c 5d", Some((ConsecutivePairs, 5))),
        ("Ac Ad 2c 2d 3c 3d", Some((ConsecutivePairs, 3))),
        ("Qc Qd Kc Kd Ac Ad", Some((ConsecutivePairs, 14))),
        ("3c 3d 3s 4c 4d 4s", Some((SteelPlate, 4))),
        ("Ac Ad As 2c 2d 2s", Some((SteelPlate, 2))),
        ("Kc Kd Ks Ac Ad As", Some((SteelPlate, 14))),
        ("8s 9s Ts Js Qs", Some((StraightFlush, 12))),
        ("As 2s 3s 4s 5s", Some((StraightFlush, 5))),
        ("9c 9d 9s 9h", Some((Bomb, 9))),
        ("9c 9d 9s 9h 9c#1 9d#1 9s#1 9h#1", Some((Bomb, 9))),
        ("BJ BJ#1 RJ RJ#1", Some((FourJokers, 16))),
        ("BJ BJ#1", Some((Pair, 15))),
        ("RJ", Some((Single, 16))),
        ("BJ RJ", None),
        ("3c 4d", None),
        ("3c 3d 3s 3h 4c", None),
        ("3c 4d 5s 6h 8c", None),
        ("3c 3d 4s 4h", None),
        ("3c 3d 4s 4h 5c 5d 6c 6d", None),
        ("3c 4c 5c 6c 7c 8c", None),
        ("BJ BJ#1 RJ", None),
    ];
    for (c, want) in table {
        assert_eq!(kr(c, 7), *want, "{c} at level 7");
    }
    assert_eq!(read("9c 9d 9s 9h 9c#1 9d#1 9s#1 9h#1", 7).unwrap().len, 8);
    assert!(read("9c 9d 9s 9h", 7).unwrap().pure);
}

#[test]
fn every_pattern_with_wilds() {
    use Kind::*;
    // Level 7: 7h and 7h#1 are wild.
    type Row = (&'static str, Option<(Kind, u8)>, bool);
    let table: &[Row] = &[
        ("7h", Some((Single, 7)), true),
        ("7h 7h#1", Some((Pair, 7)), true),
        ("7h 3c", Some((Pair, 3)), false),
        ("7h 7c", Some((Pair, 7)), true),
        ("7h BJ", None, false),
        ("7h 7h#1 3c", Some((Triple, 3)), false),
        ("3c 3d 3s 7h", Some((Bomb, 3)), false),
        ("7c 7d 7s 7h", Some((Bomb, 7)), true),
        ("3c 3d 3s 3h 7h 7h#1", Some((Bomb, 3)), false),
        ("3c 4c 5c 6c 7h", Some((StraightFlush, 7)), false),
        ("3h 4h 5h 6h 7h", Some((StraightFlush, 7)), true),
        ("8s 9s Ts Js 7h", Some((StraightFlush, 12)), false),
        ("4c 5d 6s 7h 7h#1", Some((Straight, 8)), false),
        ("3c 3d 3s 4c 7h", Some((TripleWithPair, 3)), false),
        ("3c 3d 4c 7h 7h#1", Some((TripleWithPair, 4)), false),
        ("9c 9d 9s 9h 7h", Some((Bomb, 9)), false),
        ("9c 9d 9s 7h 7h#1", Some((Bomb, 9)), false),
        ("4c 4d 5c 5d 7h 7h#1", Some((SteelPlate, 5)), false),
        ("4c 4d 5c 6d 6s 7h", Some((ConsecutivePairs, 6)), false),
        ("Kc Kd Ac 7h 7h#1 As", Some((SteelPlate, 14)), false),
        ("BJ BJ#1 RJ 7h", None, false),
        ("RJ RJ#1 7h 7h#1", None, false),
        ("Qc Kd Ac 7h 7h#1", Some((Straight, 14)), false),
    ];
    for (c, want, pure) in table {
        let r = read(c, 7);
        assert_eq!(r.map(|r| (r.kind, r.rank)), *want, "{c} at level 7");
        if let Some(r) = r {
            if r.kind.is_bomb() {
                assert_eq!(r.pure, *pure, "{c} purity");
            }
        }
    }
    // 7h is not wild at level 8: it is a plain seven.
    assert_eq!(kr("7h 3c", 8), None);
    // wild_count 1: only the first pack's heart level card is wild.
    let one = Wilds { level: lv(7), count: 1 };
    assert!(one.is_wild(cards("7h")[0]) && !one.is_wild(cards("7h#1")[0]));
}

#[test]
fn ambiguous_groups_follow_the_priority_and_a_named_reading() {
    let t = tally("4c 5d 6s 7h 7h#1", 7);
    let mut all = readings(&t, rules(7));
    by_priority(&mut all, lv(7));
    let straights: Vec<u8> = all.iter().filter(|r| r.kind == Kind::Straight).map(|r| r.rank).collect();
    assert_eq!(straights, vec![8, 7, 6]);
    let p = BombProfile::competition();
    let named = |kind, rank| read_play(&t, rules(7), &p, None, Some(Declared { kind, rank }));
    assert_eq!(named(Kind::Straight, 6).unwrap().rank, 6);
    assert!(matches!(named(Kind::Straight, 9), Err(GuandanError::NotThatReading(_))));
    assert!(matches!(named(Kind::Pair, 4), Err(GuandanError::NotThatReading(_))));

    // 9 9 9 + two wilds: a bomb of five first (priority 2), or a triple with a pair.
    let t = tally("9c 9d 9s 7h 7h#1", 7);
    assert_eq!(read_play(&t, rules(7), &p, None, None).unwrap().kind, Kind::Bomb);
    let fh =
        read_play(&t, rules(7), &p, None, Some(Declared { kind: Kind::TripleWithPair, rank: 9 })).unwrap();
    assert_eq!(fh.kind, Kind::TripleWithPair);

    // Steel plate before consecutive pairs (source rules' priority 4 before 5).
    let t = tally("4c 4d 5c 5d 7h 7h#1", 7);
    let mut all = readings(&t, rules(7));
    by_priority(&mut all, lv(7));
    assert_eq!(all[0].kind, Kind::SteelPlate);
    assert!(all.iter().any(|r| r.kind == Kind::ConsecutivePairs && r.rank == 6));

    // Following: the first reading by priority that beats the table.
    let table = read("3c 4d 5s 6h 7c", 2).unwrap();
    let t = tally("4c 5d 6s 2h 2h#1", 2);
    let r = read_play(
        &t,
        PatternRules { level: lv(2), ace_high: true, purity: Purity::StandIn },
        &p,
        Some(&table),
        None,
    )
    .unwrap();
    assert_eq!((r.kind, r.rank), (Kind::Straight, 8));
    let low = Reading { kind: Kind::Straight, rank: 10, len: 5, pure: true, suit: None };
    assert!(matches!(
        read_play(
            &t,
            PatternRules { level: lv(2), ace_high: true, purity: Purity::StandIn },
            &p,
            Some(&low),
            None
        ),
        Err(GuandanError::DoesNotBeat { .. })
    ));
}

#[test]
fn ace_high_sequences_are_a_setting() {
    let off = PatternRules { level: lv(7), ace_high: false, purity: Purity::StandIn };
    let p = BombProfile::competition();
    for c in ["Tc Jd Qs Kh Ac", "Qc Qd Kc Kd Ac Ad", "Kc Kd Ks Ac Ad As"] {
        assert!(read_play(&tally(c, 7), off, &p, None, None).is_err(), "{c}");
    }
    assert_eq!(read_play(&tally("Ac 2d 3s 4h 5c", 7), off, &p, None, None).unwrap().rank, 5);
}

fn b(s: &str, level: u8) -> Reading {
    read(s, level).unwrap_or_else(|| panic!("{s} reads as nothing"))
}

#[test]
fn ordering_under_the_competition_profile() {
    let p = BombProfile::competition();
    let l = lv(7);
    let beat = |a: &str, c: &str| beats(&b(a, 7), &b(c, 7), l, &p);
    let jokers = "BJ BJ#1 RJ RJ#1";
    let ten = "9c 9d 9s 9h 9c#1 9d#1 9s#1 9h#1 7h 7h#1";
    let six3 = "3c 3d 3s 3h 3c#1 3d#1";
    let sf_a = "Ts Js Qs Ks As";
    let sf_6 = "2c 3c 4c 5c 6c";
    let five_a = "Ac Ad As Ah Ac#1";
    let five_3 = "3c 3d 3s 3h 3c#1";
    let four_a = "Ac Ad As Ah";
    let four_7 = "7c 7d 7s 7c#1";
    let four_9 = "9c 9d 9s 9h";
    let four_9_mixed = "9c#1 9d#1 9s#1 7h";
    let four_k_mixed = "Kc Kd Ks 7h";
    assert!(beat(jokers, ten));
    assert!(beat(ten, six3));
    assert!(beat(six3, sf_a));
    assert!(beat(sf_a, sf_6));
    assert!(beat(sf_6, five_a));
    assert!(beat(five_3, four_a));
    assert!(beat(four_7, four_a), "the level rank is above the ace");
    assert!(!beat(four_9_mixed, four_9) && !beat(four_9, four_9_mixed), "wilds do not weaken a bomb here");
    assert!(beat(four_k_mixed, four_9));
    assert!(!beat(five_a, sf_6) && !beat(sf_a, six3) && !beat(ten, jokers));
    // Bombs beat every other pattern; others compare within their pattern.
    assert!(beat(four_9, "RJ") && beat(four_9, "Tc Jd Qs Kh Ac") && beat(four_9, "Kc Kd Ks Ac Ad As"));
    assert!(beat("9c 9d", "8c 8d") && !beat("8c 8d", "9c 9d") && !beat("9c 9d", "8c"));
    assert!(beat("7c", "Ac") && beat("BJ", "7c") && beat("RJ", "BJ") && !beat("BJ", "BJ#1"));
    assert!(beat("4c 5d 6s 7c 8c", "3c 4d 5s 6h 7d") && !beat("4c 5d 6s 7c 8c", "9c 9d"));
    assert!(beat("8c 8d 8s 2c 2d", "6c 6d 6s Ac Ad") && !beat("8c 8d 8s 2c 2d", "8c#1 8d#1 8s#1 Ac Ad"));
    assert!(!beat("Ac Ad 2c 2d 3c 3d", "Kc Kd"));
}

#[test]
fn ordering_under_the_seed_profile() {
    let l = lv(7);
    let by_rank = BombProfile::seed(true, BombPriority::ByRank);
    let by_count = BombProfile::seed(true, BombPriority::ByCount);
    let sf_below = BombProfile::seed(false, BombPriority::ByRank);
    let beat = |p: &BombProfile, a: &str, c: &str| beats(&b(a, 7), &b(c, 7), l, p);
    let pure4_3 = "3c 3d 3s 3h";
    let mixed6_a = "Ac Ad As Ah Ac#1 7h";
    let pure4_a = "Ac Ad As Ah";
    let pure5_3 = "3c 3d 3s 3h 3c#1";
    let pure8_k = "Kc Kd Ks Kh Kc#1 Kd#1 Ks#1 Kh#1";
    let sf = "2c 3c 4c 5c 6c";
    let jokers = "BJ BJ#1 RJ RJ#1";
    assert!(beat(&by_rank, pure4_3, mixed6_a), "purity before rank and count");
    assert!(beat(&by_rank, pure4_a, pure5_3), "rank before count");
    assert!(beat(&by_count, pure5_3, pure4_a), "count before rank");
    assert!(beat(&by_rank, sf, pure8_k) && !beat(&sf_below, sf, pure8_k));
    assert!(beat(&sf_below, pure4_3, sf));
    for p in [&by_rank, &by_count, &sf_below] {
        assert!(beat(p, jokers, pure8_k) && beat(p, jokers, sf) && !beat(p, pure8_k, jokers));
        p.check().unwrap();
    }
    // Pure straight flush beats a mixed one of a higher rank under purity first.
    assert!(beat(&by_rank, "2h 3h 4h 5h 6h", "8s 9s Ts Js 7h"));
}

#[test]
fn purity_any_wild_is_the_literal_reading() {
    let literal = PatternRules { purity: Purity::AnyWild, ..rules(7) };
    let p = BombProfile::seed(true, BombPriority::ByRank);
    let read_as = |r: PatternRules, s: &str| read_play(&tally(s, 7), r, &p, None, None).unwrap();
    // Level-rank bomb with a heart 7 standing for itself; heart straight flush whose 7 is the wild.
    for c in ["7c 7d 7s 7h", "7c 7d 7s 7c#1 7h#1", "3h 4h 5h 6h 7h"] {
        assert!(read_as(rules(7), c).pure, "{c}: pure under stand-in");
        assert!(!read_as(literal, c).pure, "{c}: mixed under any-wild");
    }
    // No wild: pure under both; a wild standing for another card: mixed under both.
    assert!(read_as(literal, "9c 9d 9s 9h").pure && !read_as(rules(7), "9c 9d 9s 7h").pure);
    // It changes play under the seed profile: a pure bomb of four 3s beats
    // four 7s holding the heart 7 only under the literal reading.
    let (threes, sevens) = (read_as(literal, "3c 3d 3s 3h"), read_as(literal, "7c 7d 7s 7h"));
    assert!(beats(&threes, &sevens, lv(7), &p));
    assert!(!beats(&read_as(rules(7), "3c 3d 3s 3h"), &read_as(rules(7), "7c 7d 7s 7h"), lv(7), &p));
    // The AI's move list agrees with the reading of each move.
    let hand = cards("7c 7d 7s 7h 3c 3d 3s 3h 9c");
    for m in legal_moves(&hand, literal, 2, &p, None) {
        let wild = m.cards.iter().any(|c| Wilds { level: lv(7), count: 2 }.is_wild(*c));
        if m.reading.kind == Kind::Bomb {
            assert_eq!(m.reading.pure, !wild, "{:?}", m.cards);
        }
    }
    BombProfile::competition().check().unwrap();
    let broken = BombProfile { tiers: BombProfile::competition().tiers[1..].to_vec(), within: vec![] };
    assert!(broken.check().is_err());
}

#[test]
fn bad_input_is_a_typed_error() {
    assert_eq!(check_ids(&[]), Err(GuandanError::EmptyPlay));
    assert!(matches!(check_ids(&cards("3c 4c 3c")), Err(GuandanError::DuplicateCard(_))));
    assert!(matches!(check_ids(&cards("3c 4c#2")), Err(GuandanError::OutOfRange(_))));
    assert!(matches!(check_ids(&[CardId::from_code(13_000).unwrap()]), Err(GuandanError::OutOfRange(_))));
    let three: Vec<Card> = ["3c", "3c", "3c"].iter().map(|c| c.parse().unwrap()).collect();
    assert!(matches!(check_faces(&three), Err(GuandanError::TooManyCopies { count: 3, max: 2, .. })));
    let five: Vec<Card> = ["9s"; 5].iter().map(|c| c.parse().unwrap()).collect();
    assert!(matches!(check_faces(&five), Err(GuandanError::TooManyCopies { count: 5, .. })));
    assert_eq!(check_faces(&[]), Err(GuandanError::EmptyPlay));
    check_faces(&cards("9s 9s#1").iter().map(|c| c.card()).collect::<Vec<_>>()).unwrap();

    // Through a deal: seat 0 leads at level 2.
    let st = start(&GdSettings::default(), &GdMemory::default(), &deck_for(["3c 3d 4c", "5c", "", ""]));
    assert_eq!(st.check_play(0, &[], None), Err(GuandanError::EmptyPlay));
    assert!(matches!(st.check_play(0, &cards("3c 3c"), None), Err(GuandanError::DuplicateCard(_))));
    assert!(matches!(st.check_play(0, &cards("3c#2"), None), Err(GuandanError::OutOfRange(_))));
    assert!(matches!(st.check_play(0, &cards("5c"), None), Err(GuandanError::NotInHand(_))));
    assert!(matches!(st.check_play(0, &cards("3c 4c"), None), Err(GuandanError::NoPattern)));
    assert_eq!(st.check_play(0, &cards("3c 3d"), None).unwrap().kind, Kind::Pair);
    // The type-erased plugin refuses malformed JSON.
    let g = claw_games::registry::get("guandan").unwrap();
    let mut hand =
        g.new_hand(&serde_json::Value::Null, &guandan_common::players(10), &serde_json::Value::Null).unwrap();
    let _ = hand.start().unwrap();
    let bad = serde_json::json!({"type": "play", "cards": ["3c"], "extra": 1});
    assert!(matches!(hand.validate(claw_protocol::Seat(0), &bad), Err(claw_games::GameError::Malformed(_))));
}

/// A play's equivalence class: pattern, rank, suit of a straight flush,
/// natural cards per rank and wilds (the source rules' pruning keeps one per class).
fn class(cards: &[CardId], r: &Reading, w: Wilds) -> (Kind, u8, Option<u8>, [u8; 15], u8) {
    let t = Tally::of_ids(cards, w);
    (r.kind, r.rank, r.suit.map(|s| s.index()), t.by_rank, t.wilds)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, .. ProptestConfig::default() })]

    /// Move generation equals brute force over every subset of a small hand,
    /// and every generated move validates with its reading.
    #[test]
    fn legal_moves_are_complete_and_sound(
        hand in prop::sample::subsequence(CardId::deck(2, true), 6..=11),
        level in 2u8..=14,
        ace_high in any::<bool>(),
    ) {
        let r = PatternRules { level: lv(level), ace_high, purity: Purity::StandIn };
        let w = Wilds { level: lv(level), count: 2 };
        let p = BombProfile::competition();
        let moves = legal_moves(&hand, r, 2, &p, None);
        let mut generated = BTreeSet::new();
        for m in &moves {
            let t = Tally::of_ids(&m.cards, w);
            let d = Declared { kind: m.reading.kind, rank: m.reading.rank };
            let back = read_play(&t, r, &p, None, Some(d));
            prop_assert!(back.is_ok(), "{:?} does not read as {:?}", m.cards, d);
            prop_assert!(m.cards.iter().all(|c| hand.contains(c)));
            generated.insert(class(&m.cards, &m.reading, w));
        }
        let mut brute = BTreeSet::new();
        for mask in 1u32..(1 << hand.len()) {
            let sub: Vec<CardId> = (0..hand.len()).filter(|i| mask >> i & 1 == 1).map(|i| hand[i]).collect();
            for rd in readings(&Tally::of_ids(&sub, w), r) {
                brute.insert(class(&sub, &rd, w));
            }
        }
        prop_assert_eq!(generated, brute);
    }
}

/// The level triple with a pair of both wilds (逢人配 as any pair) is offered.
#[test]
fn a_level_triple_with_a_pair_of_both_wilds_is_offered() {
    let r = rules(3);
    let p = BombProfile::competition();
    let hand = cards("3c 3d 3s 3h 3h#1");
    let moves = legal_moves(&hand, r, 2, &p, None);
    let twp: Vec<_> = moves.iter().filter(|m| m.reading.kind == Kind::TripleWithPair).collect();
    assert_eq!(twp.len(), 1, "{moves:?}");
    assert_eq!((twp[0].reading.rank, twp[0].cards.len()), (3, 5));
    let d = Declared { kind: Kind::TripleWithPair, rank: 3 };
    assert!(read_play(&tally("3c 3d 3s 3h 3h#1", 3), r, &p, None, Some(d)).is_ok());
}

/// A playing state at `level` where seat 0 holds `hand` and, when given,
/// `lead` is the play to beat (seat 1's).
fn playing(level: u8, hand: &[CardId], lead: Option<Reading>) -> GdState {
    let mut st =
        start(&GdSettings::default(), &after([0, 1, 2, 3], [level, 2], 0), &deck_for(["", "", "", ""]));
    st.phase = GdPhase::Playing;
    st.tribute = None;
    st.turn = 0;
    st.hands[0] = hand.to_vec();
    st.lead = lead.map(|reading| Lead { seat: 1, reading, cards: Vec::new() });
    st
}

/// Every play `validate` accepts is generated (and offered, when the hand's
/// plays fit the listing), and every offered play validates: every subset of
/// the hand, with each of its readings named.
fn accepted_plays_are_offered(
    hand: &[CardId],
    level: u8,
    lead_pick: Option<usize>,
) -> Result<(), TestCaseError> {
    let w = Wilds { level: lv(level), count: 2 };
    let r = PatternRules { level: lv(level), ace_high: true, purity: Purity::StandIn };
    let lead = lead_pick.and_then(|i| {
        let own = legal_moves(hand, r, 2, &BombProfile::competition(), None);
        own.get(i % own.len().max(1)).map(|m| m.reading)
    });
    let st = playing(level, hand, lead);
    let generated: BTreeSet<_> = st.legal_plays(0).iter().map(|m| class(&m.cards, &m.reading, w)).collect();
    let mut offered = BTreeSet::new();
    for o in Guandan.valid_actions(&st) {
        if let GdAction::Play { cards, reading } = &o.action {
            prop_assert!(Guandan.validate(&st, Seat(0), &o.action).is_ok(), "offered {:?} refused", o.action);
            let read = st.check_play(0, cards, *reading).map_err(|e| TestCaseError::fail(e.to_string()))?;
            offered.insert(class(cards, &read, w));
        }
    }
    prop_assert!(offered.is_subset(&generated));
    let complete = generated.len() <= MAX_LISTED_PLAYS;
    if complete {
        prop_assert_eq!(&offered, &generated);
    }
    for mask in 1u32..(1 << hand.len()) {
        if mask.count_ones() > 10 {
            continue;
        }
        let sub: Vec<CardId> = (0..hand.len()).filter(|i| mask >> i & 1 == 1).map(|i| hand[i]).collect();
        for rd in readings(&Tally::of_ids(&sub, w), r) {
            let a = GdAction::Play {
                cards: sub.clone(),
                reading: Some(Declared { kind: rd.kind, rank: rd.rank }),
            };
            if Guandan.validate(&st, Seat(0), &a).is_ok() {
                let c = class(&sub, &rd, w);
                prop_assert!(generated.contains(&c), "{sub:?} as {rd:?} validates but is not generated");
            }
        }
    }
    Ok(())
}

/// `size` random cards, plus `wilds` of the level's wild hearts and
/// `naturals` natural level cards.
fn hand_strategy(size: std::ops::RangeInclusive<usize>) -> impl Strategy<Value = (Vec<CardId>, u8)> {
    (prop::sample::subsequence(CardId::deck(2, true), size), 2u8..=14, 0usize..=2, 0usize..=4).prop_map(
        |(mut hand, level, wilds, naturals)| {
            let w = Wilds { level: lv(level), count: 2 };
            let deck = CardId::deck(2, true);
            let extra =
                deck.iter().filter(|c| w.is_wild(**c)).take(wilds).chain(
                    deck.iter().filter(|c| !w.is_wild(**c) && natural(c.card()) == level).take(naturals),
                );
            for c in extra {
                if !hand.contains(c) {
                    hand.push(*c);
                }
            }
            (hand, level)
        },
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 150, .. ProptestConfig::default() })]

    /// Random hands, leading and following.
    #[test]
    fn every_accepted_play_is_offered((hand, level) in hand_strategy(4..=8), lead in prop::option::of(any::<usize>())) {
        accepted_plays_are_offered(&hand, level, lead)?;
    }

    /// Hands with both wilds and some natural level cards.
    #[test]
    fn every_accepted_play_with_both_wilds_is_offered(
        (hand, level) in hand_strategy(3..=7).prop_map(|(h, l)| {
            let w = Wilds { level: lv(l), count: 2 };
            let mut h = h;
            for c in CardId::deck(2, true).into_iter().filter(|c| w.is_wild(*c)) {
                if !h.contains(&c) {
                    h.push(c);
                }
            }
            (h, l)
        }),
        lead in prop::option::of(any::<usize>()),
    ) {
        accepted_plays_are_offered(&hand, level, lead)?;
    }
}
