//! The 7-card evaluator: ranking tables for every category and edge, the
//! exhaustive 5-card census, and a cross-check against a naive best-of-21.

use std::cmp::Ordering;
use std::collections::HashSet;

use claw_games::texas_holdem::{evaluate, Category, HandValue};
use claw_protocol::Card;
use rand::seq::SliceRandom;
use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;

fn cards(s: &str) -> Vec<Card> {
    s.split_whitespace().map(|c| c.parse().unwrap()).collect()
}

fn ev(s: &str) -> HandValue {
    evaluate(&cards(s))
}

#[test]
fn every_category_is_recognised() {
    let table = [
        ("As Kd 9c 7h 4s 3d 2c", Category::HighCard),
        ("As Ad 9c 7h 4s 3d 2c", Category::Pair),
        ("As Ad 9c 9h 4s 3d 2c", Category::TwoPair),
        ("As Ad 9c 9h 4s 4d 2c", Category::TwoPair),
        ("As Ad Ac 7h 4s 3d 2c", Category::ThreeOfAKind),
        ("Ts 9d 8c 7h 6s 3d 2c", Category::Straight),
        ("As 2d 3c 4h 5s Kd Qc", Category::Straight),
        ("Ah Kh 9h 7h 4h 3d 2c", Category::Flush),
        ("As Ad Ac 7h 7s 3d 2c", Category::FullHouse),
        ("As Ad Ac 7h 7s 7d 2c", Category::FullHouse),
        ("As Ad Ac Ah 7s 3d 2c", Category::FourOfAKind),
        ("9h 8h 7h 6h 5h Ad Ac", Category::StraightFlush),
        ("Ah 2h 3h 4h 5h Kd Qc", Category::StraightFlush),
        ("Ah Kh Qh Jh Th 9d 8c", Category::StraightFlush),
    ];
    for (hand, cat) in table {
        assert_eq!(ev(hand).category(), cat, "{hand}: {:?}", ev(hand));
    }
}

/// Each line is strictly better than the next.
#[test]
fn ordering_ladder() {
    let ladder = [
        "Ah Kh Qh Jh Th 2c 3d", // royal flush
        "Kh Qh Jh Th 9h 2c 3d", // king-high straight flush
        "5s 4s 3s 2s As Kd Kc", // steel wheel: lowest straight flush
        "As Ad Ac Ah Ks 2d 3c", // quad aces, king kicker
        "As Ad Ac Ah Qs 2d 3c", // quad aces, queen kicker
        "Ks Kd Kc Kh As 2d 3c", // quad kings
        "As Ad Ac Ks Kd 2d 3c", // aces full of kings
        "As Ad Ac Qs Qd 2d 3c", // aces full of queens
        "Ks Kd Kc As Ad 2d 3c", // kings full of aces: trips decide first
        "Ah Qh 9h 7h 4h 3d 2c", // ace-queen flush
        "Ah Jh Th 7h 4h 3d 2c", // ace-jack flush
        "Kh Qh Jh 9h 4h 3d 2c", // king-high flush
        "As Kd Qc Jh Ts 3d 2c", // broadway straight
        "Ts 9d 8c 7h 6s 3d 2c", // ten-high straight
        "6s 5d 4c 3h 2s Kd Qc", // six-high straight
        "As 2d 3c 4h 5s Kd 9c", // wheel: lowest straight
        "As Ad Ac Kh Qs 3d 2c", // trip aces, K Q
        "As Ad Ac Kh Js 3d 2c", // trip aces, K J
        "As Ad Ks Kd Qc 3h 2c", // aces and kings, queen kicker
        "As Ad Ks Kd Jc 3h 2c", // aces and kings, jack kicker
        "As Ad Qs Qd Kc 3h 2c", // aces and queens, king kicker
        "As Ad Kh Qs Jd 3c 2c", // pair of aces, K Q J
        "As Ad Kh Qs Td 3c 2c", // pair of aces, K Q T
        "Ks Kd Ah Qs Jd 3c 2c", // pair of kings
        "As Kd Qc Jh 9s 3d 2c", // ace-high, K Q J 9
        "As Kd Qc Jh 8s 3d 2c", // ace-high, K Q J 8
        "7s 5d 4c 3h 2s",       // the worst five-card hand
    ];
    for w in ladder.windows(2) {
        assert!(ev(w[0]) > ev(w[1]), "{} ({:?}) should beat {} ({:?})", w[0], ev(w[0]), w[1], ev(w[1]));
    }
}

#[test]
fn ties_and_kickers() {
    // The board plays: both players have the board's straight.
    let board = "Ts 9d 8c 7h 6s";
    assert_eq!(ev(&format!("{board} 2c 3d")), ev(&format!("{board} 2h 3s")));
    // A higher card extends the straight.
    assert!(ev(&format!("{board} Jc 2d")) > ev(&format!("{board} 2h 3s")));
    // Only five cards count: a sixth-best kicker does not break a tie.
    assert_eq!(ev("As Ad Kc Qh Jd 4c 3c"), ev("Ah Ac Ks Qd Js 5h 2d"));
    // Quads on board: the best fifth card plays.
    assert_eq!(ev("7s 7d 7c 7h Ks 2c 3d"), ev("7s 7d 7c 7h Kd 4c 5d"));
    assert!(ev("7s 7d 7c 7h Ks 2c 3d") < ev("7s 7d 7c 7h As 2c 3d"));
    // Two trips make a full house of the higher trips over the lower pair.
    let v = ev("9s 9d 9c 5h 5s 5d 2c");
    assert_eq!(v.category(), Category::FullHouse);
    assert_eq!(v.to_string(), "full house, nines full of fives");
    // Trips plus two pairs: the higher pair fills.
    assert_eq!(ev("9s 9d 9c 5h 5s Kd Kc").to_string(), "full house, nines full of kings");
    // Flushes compare all five cards.
    assert!(ev("Ah Kh 9h 7h 5h") > ev("As Ks 9s 7s 4s"));
    assert_eq!(ev("Ah Kh 9h 7h 5h 2h 3h"), ev("Ah Kh 9h 7h 5h"));
    // Six-card flush: the best five of that suit.
    assert_eq!(ev("Ah Kh 9h 7h 5h 2h 2c").to_string(), "flush, ace high");
}

#[test]
fn counterfeited_two_pair() {
    // 7-7 on a board of K K Q Q 5: the board's two pair beats the sevens;
    // the player plays K K Q Q with their best kicker.
    let board = "Ks Kd Qc Qh 5s";
    let sevens = ev(&format!("{board} 7c 7d"));
    assert_eq!(sevens.to_string(), "two pair, kings and queens");
    // A player holding an ace kicker wins: the sevens were counterfeited.
    let ace = ev(&format!("{board} Ac 2d"));
    assert!(ace > sevens);
    // And two players with only small cards split.
    assert_eq!(ev(&format!("{board} 3c 2d")), ev(&format!("{board} 4c 2h")));
}

#[test]
fn wheel_and_steel_wheel() {
    let wheel = ev("As 2d 3c 4h 5s 9d Jc");
    assert_eq!(wheel.to_string(), "straight, five high");
    assert!(ev("2d 3c 4h 5s 6d 9d Jc") > wheel, "six-high straight beats the wheel");
    // A-K-Q-J-T and 5-4-3-2-A are straights; K-A-2-3-4 is not.
    assert_eq!(ev("Ks As 2d 3c 4h 8d 9c").category(), Category::HighCard);
    let steel = ev("Ah 2h 3h 4h 5h Kd Qc");
    assert_eq!(steel.to_string(), "straight flush, five high");
    assert!(steel > ev("As Ad Ac Ah Ks 2d 3c"), "steel wheel beats quads");
    assert_eq!(ev("Ah Kh Qh Jh Th").to_string(), "royal flush");
    // Straight flush beats a higher plain straight in the same seven cards.
    let v = ev("5h 6h 7h 8h 9h Ts Jd");
    assert_eq!(v.to_string(), "straight flush, nine high");
}

#[test]
fn flush_beats_straight_and_full_house_beats_flush() {
    assert!(ev("2h 5h 7h 9h Jh 3c 4d") > ev("Ts Jd Qc Kh As 2c 3d"));
    // Straight and flush in the same seven cards (not a straight flush).
    let v = ev("5h 6h 7h 8c 9h Kh 2d");
    assert_eq!(v.category(), Category::Flush);
    assert!(ev("2s 2d 2c 3h 3s 7d 9c") > ev("Ah Kh Qh Jh 9h 3c 4d"));
}

#[test]
fn odd_inputs_never_panic() {
    assert_eq!(evaluate(&[]).category(), Category::HighCard);
    assert_eq!(ev("As").category(), Category::HighCard);
    assert_eq!(ev("As Ad").category(), Category::Pair);
    // Jokers are ignored, duplicates count once.
    assert_eq!(evaluate(&[Card::RED_JOKER, Card::BLACK_JOKER]), evaluate(&[]));
    assert_eq!(ev("As As As As Ks"), ev("As Ks"));
    // More than seven cards: the best five still win.
    assert_eq!(ev("As Ad Ac Ah 2h 3h 4h 6h 8h").category(), Category::FourOfAKind);
    assert_eq!(ev("As Ad Ac 2h 3h 4h 8h 9h Kh 5d").category(), Category::Flush);
    assert_eq!(ev("As Ad Ac Kh Kd 4h 8h 9h 2h Th").category(), Category::FullHouse);
    let all: Vec<Card> = Card::standard_52().collect();
    assert_eq!(evaluate(&all).to_string(), "royal flush");
}

/// A naive ranking: (category, ranks ordered by count then rank).
type Naive = (u8, Vec<u8>);

/// A deliberately naive 5-card ranking.
fn naive5(c: &[Card]) -> Naive {
    let mut ranks: Vec<u8> = c.iter().map(|c| c.rank().unwrap().value()).collect();
    ranks.sort_unstable_by(|a, b| b.cmp(a));
    let flush = c.iter().all(|x| x.suit() == c[0].suit());
    let mut uniq = ranks.clone();
    uniq.dedup();
    let straight_high = if uniq.len() == 5 && uniq[0] - uniq[4] == 4 {
        Some(uniq[0])
    } else if uniq == [14, 5, 4, 3, 2] {
        Some(5)
    } else {
        None
    };
    let mut groups: Vec<(usize, u8)> =
        uniq.iter().map(|r| (ranks.iter().filter(|x| *x == r).count(), *r)).collect();
    groups.sort_unstable_by(|a, b| b.cmp(a));
    let by_group: Vec<u8> = groups.iter().map(|g| g.1).collect();
    let shape: Vec<usize> = groups.iter().map(|g| g.0).collect();
    match (straight_high, flush, shape.as_slice()) {
        (Some(h), true, _) => (8, vec![h]),
        (_, _, [4, 1]) => (7, by_group),
        (_, _, [3, 2]) => (6, by_group),
        (_, true, _) => (5, ranks),
        (Some(h), false, _) => (4, vec![h]),
        (_, _, [3, 1, 1]) => (3, by_group),
        (_, _, [2, 2, 1]) => (2, by_group),
        (_, _, [2, 1, 1, 1]) => (1, by_group),
        _ => (0, ranks),
    }
}

fn naive7(c: &[Card]) -> Naive {
    let mut best = (0, vec![]);
    for skip1 in 0..7 {
        for skip2 in skip1 + 1..7 {
            let five: Vec<Card> =
                c.iter().enumerate().filter(|(i, _)| *i != skip1 && *i != skip2).map(|(_, c)| *c).collect();
            best = best.max(naive5(&five));
        }
    }
    best
}

#[test]
fn agrees_with_naive_best_of_21() {
    let mut rng = ChaCha20Rng::seed_from_u64(7);
    let mut deck: Vec<Card> = Card::standard_52().collect();
    let mut prev: Option<(Vec<Card>, HandValue, Naive)> = None;
    for _ in 0..20_000 {
        deck.shuffle(&mut rng);
        let hand = deck[..7].to_vec();
        let fast = evaluate(&hand);
        let slow = naive7(&hand);
        assert_eq!(fast.category() as u8, slow.0, "{hand:?}");
        if let Some((ph, pf, ps)) = &prev {
            let a = fast.cmp(pf);
            let b = slow.cmp(ps);
            assert_eq!(a, b, "{hand:?} vs {ph:?}");
        }
        prev = Some((hand, fast, slow));
    }
}

#[test]
fn exhaustive_five_card_census() {
    // Known frequencies of the 2,598,960 five-card hands, and 7,462 distinct values.
    let want = [1_302_540u32, 1_098_240, 123_552, 54_912, 10_200, 5_108, 3_744, 624, 40];
    let mut got = [0u32; 9];
    let mut distinct = HashSet::new();
    let all: Vec<Card> = Card::standard_52().collect();
    for a in 0..52 {
        for b in a + 1..52 {
            for c in b + 1..52 {
                for d in c + 1..52 {
                    for e in d + 1..52 {
                        let v = evaluate(&[all[a], all[b], all[c], all[d], all[e]]);
                        got[v.category() as usize] += 1;
                        distinct.insert(v);
                    }
                }
            }
        }
    }
    assert_eq!(got, want);
    assert_eq!(distinct.len(), 7462);
}

#[test]
fn same_value_means_same_ranks() {
    let a = ev("As Ad Kc Qh Jd 4c 3c");
    assert_eq!(a.ranks().iter().map(|r| r.value()).collect::<Vec<_>>(), vec![14, 13, 12, 11]);
    assert_eq!(a.cmp(&a), Ordering::Equal);
    assert_eq!(serde_json::to_string(&a.category()).unwrap(), "\"pair\"");
}
