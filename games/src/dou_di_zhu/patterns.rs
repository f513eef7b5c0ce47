//! Dou Di Zhu card patterns (牌型): recognising a set of cards as a pattern,
//! comparing patterns, and listing the plays a hand can make.
//!
//! Ranks run 3 < 4 < … < K < A < 2 < black joker < red joker; as numbers
//! ([`value`]) 3..=14 for 3..A, 15 for the 2, 16 and 17 for the jokers.
//! Chains (straights, consecutive pairs, airplanes) use 3..A only.

use claw_protocol::{Card, CardId, Rank};
use serde::{Deserialize, Serialize};

/// Value of the ace, the highest rank a chain may reach.
pub const ACE: u8 = 14;
/// Value of a 2.
pub const TWO: u8 = 15;
/// Value of the black (small) joker.
pub const BLACK_JOKER: u8 = 16;
/// Value of the red (big) joker.
pub const RED_JOKER: u8 = 17;

/// The Dou Di Zhu rank of a card: 3..=14 for 3..A, 15 for a 2, 16 and 17 for
/// the black and red jokers.
pub fn value(card: Card) -> u8 {
    match card.rank() {
        Some(Rank::Two) => TWO,
        Some(r) => r.value(),
        None if card == Card::BLACK_JOKER => BLACK_JOKER,
        None => RED_JOKER,
    }
}

/// Sort key for a hand: by Dou Di Zhu rank, then by suit.
pub fn sort_key(card: &CardId) -> (u8, u16) {
    (value(card.card()), card.code())
}

/// A pattern kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Pattern {
    /// 单张
    Single,
    /// 对子
    Pair,
    /// 三张
    Triple,
    /// 三带一
    TripleSingle,
    /// 三带二 (the two are a pair)
    TriplePair,
    /// 顺子: ≥5 consecutive singles, 3..A
    Straight,
    /// 连对: ≥3 consecutive pairs, 3..A
    PairStraight,
    /// 飞机: ≥2 consecutive triples, no wings
    Airplane,
    /// 飞机带单翅膀: ≥2 consecutive triples + one single card per triple
    AirplaneSingles,
    /// 飞机带对翅膀: ≥2 consecutive triples + one pair per triple
    AirplanePairs,
    /// 四带二: a four + two single cards
    FourTwoSingles,
    /// 四带两对: a four + two pairs
    FourTwoPairs,
    /// 炸弹: four of a rank
    Bomb,
    /// 王炸: both jokers
    Rocket,
}

impl Pattern {
    /// The order a leader's play is read in when its cards fit several
    /// patterns (first wins), then by the highest main rank.
    const PREFERENCE: [Pattern; 14] = [
        Pattern::Rocket,
        Pattern::Bomb,
        Pattern::Straight,
        Pattern::PairStraight,
        Pattern::Airplane,
        Pattern::AirplanePairs,
        Pattern::AirplaneSingles,
        Pattern::FourTwoPairs,
        Pattern::FourTwoSingles,
        Pattern::TriplePair,
        Pattern::TripleSingle,
        Pattern::Triple,
        Pattern::Pair,
        Pattern::Single,
    ];

    fn preference(self) -> usize {
        Self::PREFERENCE.iter().position(|p| *p == self).unwrap_or(usize::MAX)
    }
}

/// A recognised play: its pattern, its main rank (the rank of the single,
/// pair, triple or four, or the highest rank of a chain's main part) and its
/// length (number of links of a chain, 1 otherwise).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Combo {
    /// The pattern kind.
    pub pattern: Pattern,
    /// The main rank ([`value`] scale).
    pub main: u8,
    /// Links in a chain, 1 otherwise.
    pub len: u8,
}

impl Combo {
    /// A bomb or the rocket: doubles the score.
    pub fn is_bomb(&self) -> bool {
        matches!(self.pattern, Pattern::Bomb | Pattern::Rocket)
    }
}

fn combo(pattern: Pattern, main: u8, len: usize) -> Combo {
    Combo { pattern, main, len: u8::try_from(len).unwrap_or(u8::MAX) }
}

fn counts_of(cards: &[Card]) -> [u8; 18] {
    let mut c = [0u8; 18];
    for card in cards {
        let v = usize::from(value(*card));
        c[v] = c[v].saturating_add(1);
    }
    c
}

/// The tops of every run of `k` consecutive ranks (within 3..A) that each
/// hold at least `min` cards.
fn runs(c: &[u8; 18], min: u8, k: usize) -> Vec<u8> {
    let mut out = Vec::new();
    for start in 3..=ACE {
        let top = usize::from(start) + k - 1;
        if top > usize::from(ACE) {
            break;
        }
        if (usize::from(start)..=top).all(|v| c[v] >= min) {
            out.push(top as u8);
        }
    }
    out
}

/// Whether the cards are exactly a chain: every present rank holds `each`
/// cards, the ranks are consecutive, within 3..A, and there are `min_links`
/// or more. Returns the top rank and the number of links.
fn exact_chain(c: &[u8; 18], each: u8, min_links: usize) -> Option<(u8, usize)> {
    let present: Vec<usize> = (3..18).filter(|v| c[*v] > 0).collect();
    let (&lo, &hi) = (present.first()?, present.last()?);
    let links = present.len();
    let ok = present.iter().all(|v| c[*v] == each)
        && hi - lo + 1 == links
        && hi <= usize::from(ACE)
        && links >= min_links;
    ok.then_some((hi as u8, links))
}

/// Every pattern these cards form (one physical card each; the caller
/// rejects duplicates). Empty when they form none.
pub fn interpretations(cards: &[Card]) -> Vec<Combo> {
    let n = cards.len();
    let mut out = Vec::new();
    if n == 0 {
        return out;
    }
    let c = counts_of(cards);
    let distinct: Vec<u8> = (3u8..18).filter(|v| c[usize::from(*v)] > 0).collect();
    if n == 2 && c[usize::from(BLACK_JOKER)] == 1 && c[usize::from(RED_JOKER)] == 1 {
        out.push(combo(Pattern::Rocket, RED_JOKER, 1));
    }
    if let [v] = distinct[..] {
        match n {
            1 => out.push(combo(Pattern::Single, v, 1)),
            2 => out.push(combo(Pattern::Pair, v, 1)),
            3 => out.push(combo(Pattern::Triple, v, 1)),
            4 => out.push(combo(Pattern::Bomb, v, 1)),
            _ => {}
        }
    }
    for &v in &distinct {
        let cv = c[usize::from(v)];
        match (n, cv) {
            (4, 3) => out.push(combo(Pattern::TripleSingle, v, 1)),
            (5, 3) if distinct.len() == 2 => out.push(combo(Pattern::TriplePair, v, 1)),
            (6, 4) => out.push(combo(Pattern::FourTwoSingles, v, 1)),
            (8, 4) => {
                let rest_even =
                    distinct.iter().filter(|w| **w != v).all(|w| c[usize::from(*w)].is_multiple_of(2));
                if rest_even {
                    out.push(combo(Pattern::FourTwoPairs, v, 1));
                }
            }
            _ => {}
        }
    }
    if n >= 5 {
        if let Some((top, links)) = exact_chain(&c, 1, 5) {
            out.push(combo(Pattern::Straight, top, links));
        }
    }
    if n >= 6 {
        if let Some((top, links)) = exact_chain(&c, 2, 3) {
            out.push(combo(Pattern::PairStraight, top, links));
        }
        if let Some((top, links)) = exact_chain(&c, 3, 2) {
            out.push(combo(Pattern::Airplane, top, links));
        }
    }
    if n.is_multiple_of(4) && n >= 8 {
        let k = n / 4;
        for top in runs(&c, 3, k) {
            out.push(combo(Pattern::AirplaneSingles, top, k));
        }
    }
    if n.is_multiple_of(5) && n >= 10 {
        let k = n / 5;
        for top in runs(&c, 3, k) {
            let mut rest = c;
            for r in &mut rest[usize::from(top) + 1 - k..=usize::from(top)] {
                *r -= 3;
            }
            if rest.iter().all(|r| r.is_multiple_of(2)) {
                out.push(combo(Pattern::AirplanePairs, top, k));
            }
        }
    }
    out
}

/// How a leader's play is read: the preferred pattern (see
/// [`Pattern::PREFERENCE`]), then the highest main rank.
pub fn classify(cards: &[Card]) -> Option<Combo> {
    interpretations(cards).into_iter().min_by_key(|c| (c.pattern.preference(), std::cmp::Reverse(c.main)))
}

/// Whether `new` beats `old`: the rocket beats everything; a bomb beats any
/// non-bomb and a lower bomb; otherwise the same pattern and length with a
/// higher main rank.
pub fn beats(new: &Combo, old: &Combo) -> bool {
    match (new.pattern, old.pattern) {
        (_, Pattern::Rocket) => false,
        (Pattern::Rocket, _) => true,
        (Pattern::Bomb, Pattern::Bomb) => new.main > old.main,
        (Pattern::Bomb, _) => true,
        (_, Pattern::Bomb) => false,
        (a, b) => a == b && new.len == old.len && new.main > old.main,
    }
}

/// The reading of `cards` that beats `old`, if any (the preferred one when
/// several do).
pub fn beating(cards: &[Card], old: &Combo) -> Option<Combo> {
    interpretations(cards)
        .into_iter()
        .filter(|c| beats(c, old))
        .min_by_key(|c| (c.pattern.preference(), std::cmp::Reverse(c.main)))
}

/// Plays a hand can make, for bots and the `your-turn` list: every single,
/// pair, triple, bomb and the rocket; triple + each single rank and each
/// pair rank; every straight, pair straight and airplane of every length;
/// airplanes with wings and fours with two, each with its lowest wings. With
/// `to_beat`, only the plays that beat it. `hand` must be sorted by
/// [`sort_key`].
pub fn candidate_plays(hand: &[CardId], to_beat: Option<&Combo>) -> Vec<Vec<CardId>> {
    let mut by_value: Vec<Vec<CardId>> = vec![Vec::new(); 18];
    for id in hand {
        by_value[usize::from(value(id.card()))].push(*id);
    }
    let take =
        |v: u8, n: usize| -> Vec<CardId> { by_value[usize::from(v)].iter().take(n).copied().collect() };
    let count = |v: u8| by_value[usize::from(v)].len();
    let ranks: Vec<u8> = (3u8..18).filter(|v| count(*v) > 0).collect();
    let mut out: Vec<Vec<CardId>> = Vec::new();
    for &v in &ranks {
        out.push(take(v, 1));
        if count(v) >= 2 {
            out.push(take(v, 2));
        }
        if count(v) >= 3 {
            out.push(take(v, 3));
            for &w in ranks.iter().filter(|w| **w != v) {
                let mut p = take(v, 3);
                p.extend(take(w, 1));
                out.push(p);
                if count(w) >= 2 {
                    let mut p = take(v, 3);
                    p.extend(take(w, 2));
                    out.push(p);
                }
            }
        }
        if count(v) == 4 {
            out.push(take(v, 4));
            let others: Vec<CardId> = hand.iter().filter(|id| value(id.card()) != v).copied().collect();
            if others.len() >= 2 {
                let mut p = take(v, 4);
                p.extend(&others[..2]);
                out.push(p);
            }
            let pairs: Vec<u8> =
                ranks.iter().copied().filter(|w| *w != v && count(*w) >= 2).take(2).collect();
            if pairs.len() == 2 {
                let mut p = take(v, 4);
                for w in pairs {
                    p.extend(take(w, 2));
                }
                out.push(p);
            }
        }
    }
    if count(BLACK_JOKER) == 1 && count(RED_JOKER) == 1 {
        out.push(vec![by_value[usize::from(BLACK_JOKER)][0], by_value[usize::from(RED_JOKER)][0]]);
    }
    // Chains: (cards per link, minimum links).
    for (each, min_links) in [(1usize, 5usize), (2, 3), (3, 2)] {
        for start in 3..=ACE {
            let mut top = start;
            while top <= ACE && count(top) >= each {
                let links = usize::from(top - start) + 1;
                if links >= min_links {
                    let mut main: Vec<CardId> = Vec::new();
                    for v in start..=top {
                        main.extend(take(v, each));
                    }
                    if each == 3 {
                        let in_run = |id: &CardId| (start..=top).contains(&value(id.card()));
                        let others: Vec<CardId> = hand.iter().filter(|id| !in_run(id)).copied().collect();
                        if others.len() >= links {
                            let mut p = main.clone();
                            p.extend(&others[..links]);
                            out.push(p);
                        }
                        let pairs: Vec<u8> = ranks
                            .iter()
                            .copied()
                            .filter(|w| !(start..=top).contains(w) && count(*w) >= 2)
                            .take(links)
                            .collect();
                        if pairs.len() == links {
                            let mut p = main.clone();
                            for w in pairs {
                                p.extend(take(w, 2));
                            }
                            out.push(p);
                        }
                    }
                    out.push(main);
                }
                top += 1;
            }
        }
    }
    out.retain(|p| {
        let faces: Vec<Card> = p.iter().map(|id| id.card()).collect();
        match to_beat {
            None => classify(&faces).is_some(),
            Some(old) => beating(&faces, old).is_some(),
        }
    });
    let mut seen = std::collections::HashSet::new();
    out.retain(|p| {
        let mut k = p.clone();
        k.sort();
        seen.insert(k)
    });
    out
}
