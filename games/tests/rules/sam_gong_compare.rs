//! Sam Gong hand comparison vectors (the source rules ask for at least 200, with
//! Sam Gong vs Sam Gong, ties, 0 vs 0, same suit different ranks).
//! Notation: rank A23456789TJQK + suit cdhs; `W`/`L`/`T` is the player's
//! result against the banker. `Ten` is the product rules' Sam Gong (three of 10/J/Q/K),
//! `CardFace` the traditional one (three of J/Q/K).

use claw_games::sam_gong::eval::{parse_hand, point, HandValue};
use claw_games::sam_gong::{compare, Outcome, SamGongRule};
use claw_protocol::{Card, Rank, Suit};

use SamGongRule::FaceCards as CardFace;
use SamGongRule::TenValue as Ten;

type Rule = SamGongRule;

/// Hand-checked vectors: (player, banker, rule, expected, why).
const CHECKED: &[(&str, &str, Rule, char, &str)] = &[
    ("Kc Qd Js", "9h 9d 2s", Ten, 'W', "Sam Gong beats a plain 0 (the brief's example)"),
    ("Kc Qd Js", "4h 5d Ts", Ten, 'W', "Sam Gong beats nine"),
    ("9h 9d 2s", "Kc Qd Js", Ten, 'L', "plain 0 loses to Sam Gong"),
    ("Ks Qs Js", "Kh Qh Jh", Ten, 'W', "D10: Sam Gong vs Sam Gong, top suit spade > heart"),
    ("Kh Qd Jc", "Ts Tc Td", Ten, 'L', "D10: suit decides before rank (heart K loses to spade 10)"),
    ("Kh Tc Td", "Qh Jd Jc", Ten, 'W', "D10: same top suit (heart), K > Q"),
    ("Th Td Tc", "Ts Js Qs", Ten, 'L', "D10: all-ten Sam Gong vs spade Sam Gong"),
    ("5s 4c Tc", "4s 5d Qh", Ten, 'L', "nine vs nine, both spade-high, T < Q (same suit, different ranks)"),
    ("As 3d 4d", "6s 2h Tc", Ten, 'L', "eight vs eight, spade-high both; ace counts 1 so 4 < T"),
    ("As 3d 4d", "2s 3c 3h", Ten, 'W', "eight vs eight, spade-high both; 4 > 3"),
    ("As 2c 5d", "5s 2d Ah", Ten, 'T', "eight vs eight, spade-high, top rank 5 both: tie"),
    ("Ks 2d 4h", "Kh Qs 6d", Ten, 'T', "six vs six, spade-high, K-high both: tie, bet returned"),
    ("5c 5d Kh", "7s 3d Tc", Ten, 'L', "0 vs 0: heart-high loses to spade-high"),
    ("5c 5d Kh", "6h 4c Qd", Ten, 'W', "0 vs 0: heart-high both, K > Q"),
    ("5c 5d Kh", "6d 4c Qc", Ten, 'W', "0 vs 0: heart beats diamond"),
    ("5c 5d Kc", "6d 4c Qc", Ten, 'W', "0 vs 0: diamond-high both, K > Q"),
    ("Ah 8c Td", "Ks 4s 4h", Ten, 'W', "9 beats 8 regardless of suits"),
    ("Ac Tc Kd", "Jc Qd Kh", Ten, 'L', "1 loses to Sam Gong"),
    ("Tc Td Ts", "2h 3h 4h", Ten, 'W', "10-10-10 is Sam Gong under the product rule"),
    ("Tc Td Ts", "2h 3h 4h", CardFace, 'L', "10-10-10 is a plain 0 under the traditional rule"),
    ("Jc Qd Kh", "Ts Th Kd", CardFace, 'W', "traditional: J-Q-K Sam Gong beats 10-10-K (plain 0)"),
    ("Jc Qd Kh", "Ts Th Kd", Ten, 'L', "product rule: both Sam Gong, spade-high banker wins"),
    ("9s 9h 9d", "7c Td Jh", Ten, 'W', "seven vs seven: spade beats heart"),
    ("Ac 2c 3c", "Ad 2d 3d", Ten, 'L', "six vs six: club-high loses to diamond-high"),
    ("Ad 2d 3d", "Ac 2c 3c", Ten, 'W', "six vs six: diamond-high beats club-high"),
    ("Ac 2c 3c", "4c 5c 7c", Ten, 'L', "six vs six all clubs: 3 < 7"),
    ("Ac Ad 8h", "2s 8d Tc", Ten, 'L', "zero vs zero: heart < spade"),
    ("Ac 9d Ts", "Ks 9c Ah", Ten, 'L', "zero vs zero, spade-high both: T < K"),
    ("Ac 9d Ks", "Qs 9c Ah", Ten, 'W', "zero vs zero, spade-high both: K > Q"),
    ("Ac 9d Ks", "Kh 9c As", Ten, 'T', "zero vs zero, spade and K both: tie"),
    ("4s 5s Ts", "4h 5h Th", Ten, 'W', "nine vs nine: spade over heart"),
    ("2c 2d 5c", "Kd Jc 9c", Ten, 'L', "nine vs nine, diamond-high both: 5 < K"),
];

/// Generated vectors (random single-deck deals by category; expected results
/// from an independent implementation of the product rules' text): (player, banker, rule, expected).
const GENERATED: &[(&str, &str, Rule, char)] = &[
    // sam gong vs sam gong
    ("Td Jc Qc", "Kd Jh Qs", Ten, 'L'),
    ("Th Js Jd", "Kh Ts Kd", Ten, 'L'),
    ("Ts Td Qs", "Jd Js Qh", Ten, 'T'),
    ("Jc Jh Td", "Th Kd Tc", Ten, 'L'),
    ("Jh Jd Kc", "Th Tc Ks", Ten, 'L'),
    ("Qc Qh Kh", "Th Kd Td", Ten, 'T'),
    ("Jd Qc Jc", "Qd Ks Qh", Ten, 'L'),
    ("Qc Td Jd", "Qh Ks Kc", Ten, 'L'),
    ("Kd Tc Kh", "Qc Qd Jc", Ten, 'W'),
    ("Tc Jd Kd", "Td Jc Qs", Ten, 'L'),
    ("Kc Js Th", "Kh Qc Ks", Ten, 'T'),
    ("Kh Th Qd", "Js Ks Kd", Ten, 'L'),
    ("Td Tc Kd", "Qh Jd Js", Ten, 'L'),
    ("Jd Kc Js", "Qc Tc Kd", Ten, 'W'),
    ("Ks Qh Jd", "Jh Td Qs", Ten, 'W'),
    ("Kd Js Th", "Kc Qd Jc", Ten, 'W'),
    ("Js Jd Kc", "Jh Qs Td", Ten, 'W'),
    ("Ks Jh Qc", "Td Qh Kd", Ten, 'W'),
    ("Tc Js Kc", "Qd Jc Qh", Ten, 'W'),
    ("Th Qs Jd", "Tc Ts Kc", Ten, 'L'),
    ("Th Jd Qc", "Td Ks Js", Ten, 'L'),
    ("Th Js Td", "Kc Jd Tc", Ten, 'W'),
    ("Th Kd Tc", "Qs Jc Qh", Ten, 'L'),
    ("Kd Jd Ts", "Jc Kc Ks", Ten, 'T'),
    // sam gong vs points
    ("Ts Kc Tc", "3d 2c Ah", Ten, 'W'),
    ("Ks Qd Qc", "Tc 4h 6s", Ten, 'W'),
    ("Js Kc Tc", "As Jc Qh", Ten, 'W'),
    ("Jc Td Jd", "Kd As 3h", Ten, 'W'),
    ("Kh Js Jd", "7h 6h Qh", Ten, 'W'),
    ("Kh Qc Ks", "Ah Kd Jh", Ten, 'W'),
    ("Qc Kc Ks", "3s Ts 2c", Ten, 'W'),
    ("Ts Qh Jh", "2c 9c 6c", Ten, 'W'),
    ("Qc Jh Tc", "3s Jd Th", Ten, 'W'),
    ("Jd Qc Ks", "7h Ah Js", Ten, 'W'),
    // points vs sam gong
    ("Ts 7c 4h", "Qh Qd Kc", Ten, 'L'),
    ("9c Qc Tc", "Td Js Th", Ten, 'L'),
    ("Qh 9h 3s", "Jc Ts Jh", Ten, 'L'),
    ("2c Qh 5h", "Tc Qc Jc", Ten, 'L'),
    ("2h Kh Qd", "Ks Qs Qh", Ten, 'L'),
    ("Jc 5s Qd", "Qc Qs Kd", Ten, 'L'),
    ("3h 4c 3s", "Td Jd Th", Ten, 'L'),
    ("Qh Kh 2d", "Qc Tc Jc", Ten, 'L'),
    ("3c Ks 4c", "Td Qs Qc", Ten, 'L'),
    ("2s Tc 9c", "Jc Kd Th", Ten, 'L'),
    // zero vs zero
    ("3d 7h Th", "Ah Ac 8c", Ten, 'W'),
    ("8s 3h 9d", "9s 9c 2c", Ten, 'T'),
    ("2d 8s Qc", "4s 5s As", Ten, 'W'),
    ("8d Ts 2d", "4d 6h Jd", Ten, 'W'),
    ("6c 4d Ks", "3d 5d 2d", Ten, 'W'),
    ("Ah Tc 9c", "6c 7s 7h", Ten, 'L'),
    ("As 9h Tc", "9d Ah Qh", Ten, 'W'),
    ("Kc 4s 6h", "9c Kd As", Ten, 'T'),
    ("3s Qs 7c", "2d 6h 2c", Ten, 'W'),
    ("7s 3c Qh", "8s Qd 2s", Ten, 'T'),
    ("6c 7d 7h", "5h 5c Qh", Ten, 'L'),
    ("8h 4d 8s", "7s 4c 9h", Ten, 'L'),
    ("2d Th 8d", "3c 8h 9c", Ten, 'W'),
    ("9c Qs Ad", "4s Kd 6s", Ten, 'L'),
    ("3d 4s 3s", "4d As 5d", Ten, 'L'),
    ("3c 8h 9s", "6c Qh 4d", Ten, 'W'),
    ("9d 8s 3c", "5c 8d 7d", Ten, 'W'),
    ("7c 3c Jd", "3d Qh 7s", Ten, 'L'),
    ("5c 7s 8h", "9s Td Ah", Ten, 'L'),
    ("4s 3s 3h", "5h 5s Kc", Ten, 'L'),
    ("4h 6c Kc", "9s 4d 7s", Ten, 'L'),
    ("3h Qs 7d", "5s Th 5c", Ten, 'W'),
    ("4c 5d Ac", "9c 4d 7h", Ten, 'L'),
    ("2c 8d Ts", "Js 4c 6s", Ten, 'L'),
    // nine vs nine
    ("8s 6h 5s", "7s Qd 2s", Ten, 'L'),
    ("9d Ks Tc", "Kc 4c 5h", Ten, 'W'),
    ("9s 7s 3d", "Ts 2c 7c", Ten, 'L'),
    ("9c 4h 6h", "Ks Ts 9d", Ten, 'L'),
    ("Ac 9c 9s", "9d 2h 8d", Ten, 'W'),
    ("Qd 7s 2d", "9c Qc Jh", Ten, 'W'),
    ("As 5d 3c", "Kd 8s Ac", Ten, 'L'),
    ("Qc 4d 5c", "Ad 8c Qh", Ten, 'L'),
    ("4h 7d 8h", "9s 8c 2h", Ten, 'L'),
    ("As Qh 8d", "Ts Kc 9c", Ten, 'L'),
    ("7s Kd 2d", "6s 3d Tc", Ten, 'W'),
    ("5h 3h As", "6d 8d 5d", Ten, 'W'),
    // same points
    ("6c 7d Qd", "3c 8h 2s", Ten, 'L'),
    ("8s Th 4d", "Kd 2c Jc", Ten, 'W'),
    ("4d Kc Js", "9s 7c 8c", Ten, 'W'),
    ("Kc 6d 9c", "Qh Kh 5h", Ten, 'L'),
    ("3d 4d 7c", "6h Qh 8d", Ten, 'L'),
    ("Jh 9c 8h", "3s Tc 4d", Ten, 'L'),
    ("5c 3h Jd", "8h Th Kh", Ten, 'L'),
    ("2d Qc Kc", "5c 7d Kd", Ten, 'T'),
    ("6h 7d 7s", "9h Td As", Ten, 'L'),
    ("2c 7h Ks", "9d 8c 2d", Ten, 'W'),
    ("5d Ts Jc", "9c 6h Th", Ten, 'W'),
    ("Jc Td 3s", "8h 3h 2h", Ten, 'W'),
    ("Qc Td Qd", "Jd Tc Js", Ten, 'L'),
    ("Ts 7h 5d", "7c 6h 9h", Ten, 'W'),
    ("5h As 3h", "Qs Qc 9c", Ten, 'L'),
    ("3h Js 8s", "Kd Tc Ah", Ten, 'W'),
    ("Ad 4h Jd", "9d 6d Qc", Ten, 'W'),
    ("4c 2c 7d", "3s Td Qd", Ten, 'L'),
    ("2h 3d 3h", "4c Ah 3c", Ten, 'L'),
    ("9d Qs 4d", "Ts Kd 3s", Ten, 'L'),
    ("8c 5d 9s", "Kc Jh 2c", Ten, 'W'),
    ("Ac 5d Jc", "8d 7c Ah", Ten, 'L'),
    ("6h 4s 5s", "2h 3c Kh", Ten, 'W'),
    ("Js 8d 8c", "4d 5h 7d", Ten, 'W'),
    ("6s Qs Kh", "Jh Qh 6c", Ten, 'W'),
    ("Qc 8d 4d", "Qd Td 2c", Ten, 'T'),
    ("8h 5s 5h", "7h 4c 7c", Ten, 'W'),
    ("7h As Js", "3s Ac 4d", Ten, 'W'),
    ("9s 2s Qs", "Jc 9d 2c", Ten, 'W'),
    ("Ac Jc 8h", "2h Kh 7d", Ten, 'L'),
    ("8c Ac Qd", "4s 7c 8s", Ten, 'L'),
    ("2h Ad Qc", "Th 7c 6c", Ten, 'W'),
    ("Ac 6h Td", "5s Jd 2c", Ten, 'L'),
    ("6d Ah 7d", "Td Qh 4h", Ten, 'L'),
    ("Ah 6c 5s", "9s 6h 7d", Ten, 'L'),
    ("Ks 4h Tc", "9c 4c As", Ten, 'W'),
    ("4c 3h Jh", "Qc 5h 2d", Ten, 'L'),
    ("7h Jd Qc", "6h 2c 9c", Ten, 'W'),
    ("Kc Ad 4h", "Qh 8d 7h", Ten, 'W'),
    ("3h 3d 3c", "6s 3s Qc", Ten, 'L'),
    // same points, same top suit
    ("7d 3d Qs", "6c 7h 7s", Ten, 'W'),
    ("Jh 4s 4c", "3d 2s 3s", Ten, 'W'),
    ("Kd 3h 2s", "8c 7s Qh", Ten, 'W'),
    ("Th 4h 6s", "7s 3c Kd", Ten, 'L'),
    ("6c Tc 5s", "8h 2s Ad", Ten, 'W'),
    ("Ah 8s 7c", "7d 4c 5s", Ten, 'W'),
    ("8c 5s 3h", "9d Qs 7c", Ten, 'L'),
    ("3h Qh 5s", "2h 2s 4h", Ten, 'W'),
    ("2h Qd 7s", "Js Kc 9d", Ten, 'L'),
    ("8c Kh Ac", "2c 5h 2d", Ten, 'W'),
    ("9h 2s Jh", "As Kc Tc", Ten, 'L'),
    ("Jh 8h Js", "9s 9c Qs", Ten, 'L'),
    ("Ad Qs 8d", "Kh 5c 4s", Ten, 'L'),
    ("Js Ah 9c", "Tc 9h As", Ten, 'W'),
    ("4c Qs 2s", "5s Ac Tc", Ten, 'W'),
    ("Js 3d 5c", "7s Ac Ts", Ten, 'W'),
    ("6h 7s Td", "2s Ac Kd", Ten, 'L'),
    ("Ac 2s 8d", "4h 6s Ad", Ten, 'W'),
    ("3d 2h Js", "6s Jd 9d", Ten, 'T'),
    ("3s Qs Kd", "5c 7s Ah", Ten, 'W'),
    ("6h 9h 7d", "4c 8h Kc", Ten, 'L'),
    ("7s Qh Qs", "6s 3d 8c", Ten, 'W'),
    ("Tc 7s Jh", "3s 4d Qc", Ten, 'L'),
    ("2s 3s 9s", "Qh 8s 6s", Ten, 'L'),
    // tie
    ("6h 7d 2d", "7h 3h 5d", Ten, 'T'),
    ("Jc 3s 5h", "Js 4c 4d", Ten, 'T'),
    ("3s 3d Kh", "5d As Ks", Ten, 'T'),
    ("Jd 8s 5c", "Js 9h 4h", Ten, 'T'),
    ("6s Ks Td", "7s Kc 9c", Ten, 'T'),
    ("Kh Qc Jh", "Jd Kd Qh", Ten, 'T'),
    ("5s Kh 5d", "4s Kc 6c", Ten, 'T'),
    ("9d Jc 7s", "2d Js 4c", Ten, 'T'),
    ("5d 6s Jc", "Jd 2h 9s", Ten, 'T'),
    ("Kd 3d As", "7s 7h Kh", Ten, 'T'),
    ("5c 6s Jh", "Jc 8h 3s", Ten, 'T'),
    ("2d 3s Ts", "Td Ac 4s", Ten, 'T'),
    ("Kh 6h Js", "6d Th Ks", Ten, 'T'),
    ("2c 3h 7s", "Ad 4s 7c", Ten, 'T'),
    ("7d 9h Js", "Jh 3c 3s", Ten, 'T'),
    ("8s 7c Jd", "Js 5s Td", Ten, 'T'),
    ("7d 7s 9s", "3s 9h Ah", Ten, 'T'),
    ("Qs 4c Kh", "6d Ks 8s", Ten, 'T'),
    ("9c Kc Qs", "Ts Kh 9s", Ten, 'T'),
    ("6h Tc 4s", "Th 3s 7s", Ten, 'T'),
    // different points
    ("Qh Kh 2h", "7h Ac Jh", Ten, 'L'),
    ("2h 7d 8c", "5d 9s 9d", Ten, 'W'),
    ("3c 2d 6d", "Qd 9s 6c", Ten, 'L'),
    ("4d 6d Kc", "Ks 7s 5d", Ten, 'L'),
    ("3c Kc Ad", "7s 6c 7d", Ten, 'W'),
    ("Js 7c 8c", "4h As 4d", Ten, 'L'),
    ("Js 9s Qs", "7h Td 3h", Ten, 'W'),
    ("6c 9c 6s", "5s 4d Qd", Ten, 'L'),
    ("Qh 3c 8s", "Ac 5c 6d", Ten, 'L'),
    ("7c 9h 6s", "2s 8s 6h", Ten, 'L'),
    ("4c 4d 8d", "5d 5c Ts", Ten, 'W'),
    ("Ks 9h 2d", "6h Th 7s", Ten, 'L'),
    ("9c Kc 2c", "Js 8s Td", Ten, 'L'),
    ("6s 3c Jh", "5d 9d 7d", Ten, 'W'),
    ("5c 5d 9d", "9s 7s 4h", Ten, 'W'),
    ("5h Jd 6h", "9h Jh Tc", Ten, 'L'),
    ("Ac Jc 7c", "4c 4d 5s", Ten, 'W'),
    ("4h 3h 9s", "4d 3d 2s", Ten, 'L'),
    ("5h Kd 7c", "9s Jc Td", Ten, 'L'),
    ("Js 6c 8s", "8c 2c Qh", Ten, 'W'),
    ("3d 5c 7s", "2h Ad 6s", Ten, 'L'),
    ("Js 8c 9h", "9c Ts 8h", Ten, 'W'),
    ("8s 6h 7s", "Qs Jd Jh", Ten, 'L'),
    ("5d Kh 3c", "Qc 4h 8h", Ten, 'W'),
    ("6s Kc Ad", "Ts Jd Qh", Ten, 'L'),
    ("4d 2s Ah", "5c Kh 3d", Ten, 'L'),
    ("2c Ah Kh", "9c 5s 3d", Ten, 'L'),
    ("Js 9d 7s", "3s Ad 6c", Ten, 'W'),
    ("8s 7s 9s", "2h Ah Td", Ten, 'W'),
    ("Ac 9c 3s", "Jd Jc 7c", Ten, 'L'),
    // face-cards rule
    ("Js Th Kd", "Tc Kh Qs", CardFace, 'T'),
    ("Ks Jh Kd", "Qs Qc Kc", CardFace, 'T'),
    ("Qs Td Tc", "Kc Ks Qc", CardFace, 'L'),
    ("Kh Kc Qh", "Ks Tc Jd", CardFace, 'W'),
    ("Jh Qh Jc", "Ks Qs Qd", CardFace, 'L'),
    ("Qc Kc Qh", "Jh Jd Kh", CardFace, 'T'),
    ("Jh Ks Jc", "Qd Th Qs", CardFace, 'W'),
    ("Ts Kd Kc", "Ks Qh Th", CardFace, 'T'),
    ("Js Jd Qs", "Jc Tc Td", CardFace, 'W'),
    ("Jc Qc Kd", "Ts Qh Qs", CardFace, 'W'),
    ("Ts Td Qc", "Jd Th Js", CardFace, 'W'),
    ("Kc Qs Qd", "Jd Kh Kd", CardFace, 'W'),
    ("Kh Qd Tc", "Jd Td Qh", CardFace, 'W'),
    ("Qh Kh Th", "Qd Kc Ts", CardFace, 'L'),
    ("Jh Qh Js", "Kd Qd Jc", CardFace, 'W'),
    ("Jc Qh Td", "Ts Kd Jd", CardFace, 'L'),
];

fn expect(c: char) -> Outcome {
    match c {
        'W' => Outcome::Win,
        'L' => Outcome::Lose,
        'T' => Outcome::Tie,
        _ => panic!("bad expectation {c}"),
    }
}

fn hand(s: &str) -> [Card; 3] {
    parse_hand(s).unwrap_or_else(|| panic!("bad hand {s:?}"))
}

fn check(player: &str, banker: &str, rule: Rule, want: char) {
    let (p, b) = (hand(player), hand(banker));
    let all: std::collections::HashSet<Card> = p.iter().chain(&b).copied().collect();
    assert_eq!(all.len(), 6, "{player} / {banker}: one deck has no duplicate cards");
    let got = compare(&p, &b, rule);
    assert_eq!(got, expect(want), "{player} vs banker {banker} ({rule:?})");
    // The same pair seen from the other side.
    let back = compare(&b, &p, rule);
    let mirrored = match got {
        Outcome::Win => Outcome::Lose,
        Outcome::Lose => Outcome::Win,
        Outcome::Tie => Outcome::Tie,
    };
    assert_eq!(back, mirrored, "{banker} vs banker {player} ({rule:?})");
}

#[test]
fn at_least_200_vectors_covering_the_required_cases() {
    let total = CHECKED.len() + GENERATED.len();
    assert!(total >= 200, "{total} vectors");
    let all: Vec<(&str, &str, Rule, char)> =
        CHECKED.iter().map(|v| (v.0, v.1, v.2, v.3)).chain(GENERATED.iter().copied()).collect();
    let v = |h: &str, r: Rule| HandValue::of(&hand(h), r);
    let count = |f: &dyn Fn(HandValue, HandValue, char) -> bool| {
        all.iter().filter(|(p, b, r, e)| f(v(p, *r), v(b, *r), *e)).count()
    };
    assert!(count(&|p, b, _| p.sam_gong && b.sam_gong) >= 20, "Sam Gong vs Sam Gong");
    assert!(count(&|_, _, e| e == 'T') >= 20, "ties");
    assert!(count(&|p, b, _| !p.sam_gong && !b.sam_gong && p.points == 0 && b.points == 0) >= 20, "0 vs 0");
    assert!(
        count(&|p, b, _| p.points == b.points
            && p.sam_gong == b.sam_gong
            && p.top_suit == b.top_suit
            && p.top_rank != b.top_rank)
            >= 20,
        "same suit, different ranks"
    );
    assert!(count(&|_, _, e| e == 'W') >= 50 && count(&|_, _, e| e == 'L') >= 50);
}

#[test]
fn hand_checked_vectors() {
    for (p, b, r, e, why) in CHECKED {
        let _ = why;
        check(p, b, *r, *e);
    }
}

#[test]
fn generated_vectors() {
    for (p, b, r, e) in GENERATED {
        check(p, b, *r, *e);
    }
}

#[test]
fn card_points() {
    let want = [(Rank::Ace, 1), (Rank::Two, 2), (Rank::Five, 5), (Rank::Nine, 9)];
    for (r, p) in want {
        assert_eq!(point(Card::new(r, Suit::Hearts)), p, "{r:?}");
    }
    for r in [Rank::Ten, Rank::Jack, Rank::Queen, Rank::King] {
        assert_eq!(point(Card::new(r, Suit::Spades)), 0, "{r:?}");
    }
}

#[test]
fn hand_types_and_multipliers() {
    let cases = [
        ("Kc Qd Js", Ten, "sam-gong", 3),
        ("Tc Td Ts", Ten, "sam-gong", 3),
        ("Tc Td Ts", CardFace, "0", 1),
        ("Tc Jd Qs", CardFace, "0", 1),
        ("Jc Jd Qs", CardFace, "sam-gong", 3),
        ("4h 5d Ts", Ten, "9", 2),
        ("Ac Ad 7s", Ten, "9", 2),
        ("9c 9d 9s", Ten, "7", 1),
        ("As Ad Ac", Ten, "3", 1),
        ("5c 5d Kh", Ten, "0", 1),
        ("8c 8d 3s", Ten, "9", 2),
        ("2c 3d 3s", Ten, "8", 1),
    ];
    for (h, rule, kind, n) in cases {
        let v = HandValue::of(&hand(h), rule);
        assert_eq!(v.hand_type(), kind, "{h}");
        assert_eq!(v.multiplier(), n, "{h}");
    }
}

/// Every pair of hands from a sample: the comparison is a total order
/// (antisymmetric, transitive) and ties are exactly equal D8 keys.
#[test]
fn comparison_is_a_total_order() {
    let deck: Vec<Card> = Card::standard_52().collect();
    let mut hands = Vec::new();
    // A deterministic spread of hands: every 7th triple of the 22,100.
    let mut k = 0u32;
    for a in 0..52 {
        for b in a + 1..52 {
            for c in b + 1..52 {
                k += 1;
                if k.is_multiple_of(7) {
                    hands.push([deck[a], deck[b], deck[c]]);
                }
            }
        }
    }
    for rule in [Ten, CardFace] {
        let mut values: Vec<HandValue> = hands.iter().map(|h| HandValue::of(h, rule)).collect();
        values.sort();
        for w in values.windows(2) {
            assert!(w[0] <= w[1]);
            if w[0] == w[1] {
                assert_eq!(
                    (w[0].sam_gong, w[0].points, w[0].top_suit, w[0].top_rank),
                    (w[1].sam_gong, w[1].points, w[1].top_suit, w[1].top_rank)
                );
            }
        }
        // Sam Gong beats every point hand; nine beats every other point hand.
        let first_sg = values.iter().position(|v| v.sam_gong).unwrap();
        assert!(values[first_sg..].iter().all(|v| v.sam_gong));
        assert!(values[..first_sg].iter().all(|v| !v.sam_gong));
    }
}
