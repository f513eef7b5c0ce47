//! Dou Di Zhu move lists and rule sets: the standard rules (RLCard/DouZero)
//! refuse what the permissive variant accepts, rejection messages name the
//! play on the table, duplicate cards are refused at the deal, and — the
//! property — a play validates if and only if `valid_actions` lists a play
//! with the same ranks, leading and following, under both rule sets.

use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;

use claw_games::dou_di_zhu::patterns::{
    beating_under, candidate_plays, classify, classify_under, sort_key, value, Combo, DdzRules, Pattern,
};
use claw_games::{registry, DynGame, GameError, HandRunner, PlayerInfo};
use claw_protocol::{Card, CardId, Chips, PlayerId, Seat};
use proptest::prelude::*;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha20Rng;
use serde_json::{json, Value};

fn faces(s: &str) -> Vec<Card> {
    s.split_whitespace().map(|c| c.parse().unwrap()).collect()
}

fn game() -> Arc<dyn DynGame> {
    registry::get("dou-di-zhu").unwrap()
}

fn players() -> Vec<PlayerInfo> {
    (0..3).map(|i| PlayerInfo { id: PlayerId::from_bytes([i as u8 + 1; 32]), balance: Chips(1000) }).collect()
}

#[test]
fn standard_rules_refuse_what_the_permissive_variant_accepts() {
    use Pattern::*;
    let table: &[(&str, Pattern, u8, u8, &str)] = &[
        ("3c 3d 3h 3s 4c 4d 4h 7s", AirplaneSingles, 4, 2, "a wing of the chain's own rank"),
        (
            "3c 3d 3h 4c 4d 4h 5c 5d 5h 6c 6d 6h 7c 7d 7h 9s",
            AirplaneSingles,
            7,
            4,
            "a trio next to the chain as wings",
        ),
        ("3c 3d 3h 4c 4d 4h 5c 5d 5h 6c 6d 6h 9c 9d 9h 9s", AirplaneSingles, 6, 4, "a bomb as wings"),
        ("3c 3d 3h 4c 4d 4h BJ RJ", AirplaneSingles, 4, 2, "the rocket as wings"),
        ("3c 3d 3h 3s BJ RJ", FourTwoSingles, 3, 1, "the rocket as a four's two cards"),
        ("3c 3d 3h 3s 5c 5d 5h 5s", FourTwoPairs, 5, 1, "two bombs as four with two pairs"),
        ("3c 3d 3h 4c 4d 4h 7c 7d 7h 7s", AirplanePairs, 4, 2, "pair wings of one rank"),
    ];
    for (cards, pattern, main, len, why) in table {
        let f = faces(cards);
        assert_eq!(classify(&f), None, "standard refuses {why}: {cards}");
        assert_eq!(classify_under(&f, DdzRules::Standard), None, "{why}");
        let got = classify_under(&f, DdzRules::Permissive);
        assert_eq!(got, Some(Combo { pattern: *pattern, main: *main, len: *len }), "permissive: {why}");
    }
    // The permissive reading of an ambiguous play beats where the standard cannot.
    let old = classify(&faces("3c 3d 3h 4c 4d 4h 5c 5d 5h 9s Ts Js")).unwrap();
    let new = faces("4c 4d 4h 5c 5d 5h 6c 6d 6h 7c 7d 7h");
    assert!(beating_under(&new, &old, DdzRules::Standard).is_none());
    assert!(beating_under(&new, &old, DdzRules::Permissive).is_some());
    // Both accept: a pair as two single wings, a joker, the 2's trio next to
    // an airplane ending at A, a pair as a four's two cards.
    for cards in [
        "3c 3d 3h 4c 4d 4h 7s 7d",
        "3c 3d 3h 4c 4d 4h 7s BJ",
        "Qc Qd Qh Kc Kd Kh Ac Ad Ah 2c 2d 2h",
        "5c 5d 5h 5s 3c 3d",
        "5c 5d 5h 5s 3c RJ",
    ] {
        for rules in [DdzRules::Standard, DdzRules::Permissive] {
            assert!(classify_under(&faces(cards), rules).is_some(), "{cards} under {rules:?}");
        }
    }
}

#[test]
fn the_rules_setting_is_normalised_and_checked() {
    let g = game();
    assert_eq!(
        g.normalize_settings(&Value::Null).unwrap(),
        json!({"base": 1, "max_multiplier": null, "rules": "standard"})
    );
    assert_eq!(g.normalize_settings(&json!({"rules": "permissive"})).unwrap()["rules"], json!("permissive"));
    assert!(matches!(g.normalize_settings(&json!({"rules": "house"})), Err(GameError::BadSettings(_))));
}

/// The ranks of a play, as counts per [`value`].
fn shape(cards: &[Card]) -> BTreeMap<u8, u8> {
    let mut m = BTreeMap::new();
    for c in cards {
        *m.entry(value(*c)).or_insert(0) += 1;
    }
    m
}

fn legal(cards: &[Card], lead: Option<&Combo>, rules: DdzRules) -> bool {
    match lead {
        None => classify_under(cards, rules).is_some(),
        Some(old) => beating_under(cards, old, rules).is_some(),
    }
}

/// Every sub-multiset of the hand's ranks (as physical cards: the first of
/// each rank), or `samples` random subsets when there are too many.
fn sub_plays(hand: &[CardId], rng: &mut ChaCha20Rng, samples: usize) -> Vec<Vec<CardId>> {
    let mut by_rank: BTreeMap<u8, Vec<CardId>> = BTreeMap::new();
    for c in hand {
        by_rank.entry(value(c.card())).or_default().push(*c);
    }
    let groups: Vec<Vec<CardId>> = by_rank.into_values().collect();
    let total: usize = groups.iter().map(|g| g.len() + 1).product();
    if total <= 30_000 {
        let mut out = vec![Vec::new()];
        for g in &groups {
            let mut next = Vec::with_capacity(out.len() * (g.len() + 1));
            for p in &out {
                for k in 0..=g.len() {
                    let mut q: Vec<CardId> = p.clone();
                    q.extend(&g[..k]);
                    next.push(q);
                }
            }
            out = next;
        }
        out.retain(|p| !p.is_empty());
        out
    } else {
        (0..samples)
            .map(|_| {
                let mut p: Vec<CardId> = hand.iter().copied().filter(|_| rng.gen_bool(0.3)).collect();
                if p.is_empty() {
                    p.push(hand[0]);
                }
                p
            })
            .collect()
    }
}

/// The property on one hand and one play to beat: listed ⇔ legal.
fn check_hand(hand: &[CardId], lead: Option<&Combo>, rules: DdzRules, rng: &mut ChaCha20Rng) {
    let listed = candidate_plays(hand, lead, rules);
    let mut shapes = HashSet::new();
    for p in &listed {
        let f: Vec<Card> = p.iter().map(|c| c.card()).collect();
        assert!(legal(&f, lead, rules), "listed but illegal: {p:?} vs {lead:?}");
        assert!(p.iter().all(|c| hand.contains(c)));
        assert!(shapes.insert(shape(&f)), "listed twice: {p:?}");
    }
    for p in sub_plays(hand, rng, 3000) {
        let f: Vec<Card> = p.iter().map(|c| c.card()).collect();
        assert_eq!(
            legal(&f, lead, rules),
            shapes.contains(&shape(&f)),
            "{p:?} vs {lead:?} under {rules:?}: legal iff listed"
        );
    }
}

fn random_hand(rng: &mut ChaCha20Rng, n: usize) -> Vec<CardId> {
    let mut deck = CardId::deck(1, true);
    deck.shuffle(rng);
    let mut hand: Vec<CardId> = deck.into_iter().take(n).collect();
    hand.sort_by_key(sort_key);
    hand
}

/// A hand rich in trios and fours, where wings and kickers matter.
fn trio_hand(rng: &mut ChaCha20Rng) -> Vec<CardId> {
    let deck = CardId::deck(1, true);
    let mut hand = Vec::new();
    let start = rng.gen_range(3u8..=10);
    for v in start..start + rng.gen_range(2u8..=4) {
        let of_rank: Vec<CardId> = deck.iter().copied().filter(|c| value(c.card()) == v).collect();
        hand.extend(of_rank.into_iter().take(rng.gen_range(3..=4)));
    }
    let rest: Vec<CardId> = deck.into_iter().filter(|c| !hand.contains(c)).collect();
    let extra = rng.gen_range(2..=20usize.saturating_sub(hand.len()).max(2));
    hand.extend(rest.choose_multiple(rng, extra));
    hand.truncate(20);
    hand.sort_by_key(sort_key);
    hand
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn a_play_validates_iff_it_is_listed(seed in any::<u64>(), permissive in any::<bool>()) {
        let rules = if permissive { DdzRules::Permissive } else { DdzRules::Standard };
        let mut rng = ChaCha20Rng::seed_from_u64(seed);
        let hand = if rng.gen_bool(0.5) { trio_hand(&mut rng) } else {
            let n = rng.gen_range(1..=20);
            random_hand(&mut rng, n)
        };
        check_hand(&hand, None, rules, &mut rng);
        // Following: the play to beat is a random legal play from another hand.
        let other = trio_hand(&mut rng);
        let plays = candidate_plays(&other, None, rules);
        let old = plays.choose(&mut rng).unwrap();
        let f: Vec<Card> = old.iter().map(|c| c.card()).collect();
        let combo = classify_under(&f, rules).unwrap();
        check_hand(&hand, Some(&combo), rules, &mut rng);
    }
}

#[test]
fn valid_actions_and_validate_agree_in_real_hands() {
    // Through the plugin: at every turn of random hands (the landlord leads
    // with 20 cards, the others follow), each listed play validates, and a
    // random subset of the hand validates iff its ranks are listed.
    let g = game();
    for (seed, rules) in (0..12u64).zip([DdzRules::Standard, DdzRules::Permissive].into_iter().cycle()) {
        let mut rng = ChaCha20Rng::seed_from_u64(seed);
        let settings = json!({"rules": rules});
        let mut deck = CardId::deck(1, true);
        deck.shuffle(&mut rng);
        let (mut r, _) = HandRunner::start(g.as_ref(), &settings, &players(), &Value::Null, deck).unwrap();
        r.act(Seat(0), &json!({"type": "bid", "points": 3})).unwrap();
        for _turn in 0..12 {
            let Some(seat) = r.hand().to_act() else { break };
            let state = r.hand().state_json();
            let hand: Vec<CardId> = serde_json::from_value(state["hands"][seat.index()].clone()).unwrap();
            let options = r.hand().valid_actions();
            let mut shapes = HashSet::new();
            let mut plays = Vec::new();
            for o in &options {
                assert!(r.hand().validate(seat, &o.action).is_ok(), "{}", o.action);
                if o.action["type"] == "play" {
                    let cards: Vec<CardId> = serde_json::from_value(o.action["cards"].clone()).unwrap();
                    let f: Vec<Card> = cards.iter().map(|c| c.card()).collect();
                    shapes.insert(shape(&f));
                    plays.push(o.action.clone());
                }
            }
            for _ in 0..400 {
                let sub: Vec<CardId> = hand.iter().copied().filter(|_| rng.gen_bool(0.25)).collect();
                if sub.is_empty() {
                    continue;
                }
                let f: Vec<Card> = sub.iter().map(|c| c.card()).collect();
                let ok = r.hand().validate(seat, &json!({"type": "play", "cards": sub})).is_ok();
                assert_eq!(ok, shapes.contains(&shape(&f)), "{sub:?}");
            }
            let action = if plays.is_empty()
                || rng.gen_bool(0.2) && r.hand().validate(seat, &json!({"type": "pass"})).is_ok()
            {
                json!({"type": "pass"})
            } else {
                plays.choose(&mut rng).unwrap().clone()
            };
            r.act(seat, &action).unwrap();
        }
    }
}

#[test]
fn a_refusal_names_the_play_on_the_table() {
    // Seat 0 holds a pair of fives and leads it; seat 1 answers with a pair
    // of threes, which does not beat it.
    let g = game();
    let mut found = false;
    for seed in 0..500u64 {
        let mut deck = CardId::deck(1, true);
        deck.shuffle(&mut ChaCha20Rng::seed_from_u64(seed));
        let (mut r, _) = HandRunner::start(g.as_ref(), &Value::Null, &players(), &Value::Null, deck).unwrap();
        r.act(Seat(0), &json!({"type": "bid", "points": 3})).unwrap();
        let state = r.hand().state_json();
        let of = |seat: usize, v: u8| -> Vec<CardId> {
            let hand: Vec<CardId> = serde_json::from_value(state["hands"][seat].clone()).unwrap();
            hand.into_iter().filter(|c| value(c.card()) == v).take(2).collect()
        };
        let (fives, threes) = (of(0, 5), of(1, 3));
        if fives.len() < 2 || threes.len() < 2 {
            continue;
        }
        r.act(Seat(0), &json!({"type": "play", "cards": fives})).unwrap();
        let err = r.hand().validate(Seat(1), &json!({"type": "play", "cards": threes})).unwrap_err();
        assert_eq!(err, GameError::Illegal("does not beat the pair of 5 on the table".into()));
        found = true;
        break;
    }
    assert!(found, "some deck deals a pair of 5s to seat 0 and of 3s to seat 1");
    let straight = Combo { pattern: Pattern::Straight, main: 14, len: 5 };
    assert_eq!(straight.to_string(), "straight 10 to A");
    assert_eq!(Combo { pattern: Pattern::Rocket, main: 17, len: 1 }.to_string(), "rocket");
}

#[test]
fn duplicate_physical_cards_are_refused_at_the_deal() {
    let g = game();
    // 54 copies of one card.
    let deck = vec![CardId::deck(1, true)[0]; 54];
    let err = HandRunner::start(g.as_ref(), &Value::Null, &players(), &Value::Null, deck).err();
    assert!(matches!(err, Some(GameError::BadDeal(_))), "{err:?}");
    // A kitty card that repeats a hole card.
    let mut deck = CardId::deck(1, true);
    deck[53] = deck[0];
    let err = HandRunner::start(g.as_ref(), &Value::Null, &players(), &Value::Null, deck).err();
    assert!(matches!(err, Some(GameError::BadDeal(_))), "{err:?}");
}

#[test]
fn the_full_move_list_fits_a_frame() {
    // The dealer sends the list in `your-turn`, one frame of at most 65,536
    // bytes (SPEC §12). The largest lists come from 20-card hands full of
    // trios and fours; these stay near 50,000 bytes of options.
    for h in [
        "3c 3d 3h 4c 4d 4h 5c 5d 5h 6c 6d 6h 7c 7d 7h 9s Ts Js Qs Ks",
        "3d 5d 6s 7c 7d 7h 8c 8d 8h 9c 9d 9h Tc Td Th Jc Jd Jh Qh BJ",
        "8c 8d 8h 8s 9c 9d 9h 9s Tc Td Th Ts Jc Jd Jh Js Qc Qd Qh Kc",
        "3c 3d 3h 3s 4c 4d 4h 4s 5c 5d 5h 5s 6c 6d 6h 7c 7d 7h BJ RJ",
    ] {
        let mut hand: Vec<CardId> = h.split_whitespace().map(|c| c.parse().unwrap()).collect();
        hand.sort_by_key(sort_key);
        for rules in [DdzRules::Standard, DdzRules::Permissive] {
            let options: Vec<Value> = candidate_plays(&hand, None, rules)
                .into_iter()
                .map(|p| json!({"action": {"type": "play", "cards": p}, "cost": 0, "affordable": true}))
                .collect();
            let bytes = serde_json::to_string(&options).unwrap().len();
            assert!(bytes < 56_000, "{h} under {rules:?}: {} plays, {bytes} bytes", options.len());
        }
    }
}
