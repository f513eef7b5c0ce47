//! Dou Di Zhu card patterns (牌型): recognising a set of cards as a pattern,
//! comparing patterns, and listing the plays a hand can make.
//!
//! Ranks run 3 < 4 < … < K < A < 2 < black joker < red joker; as numbers
//! ([`value`]) 3..=14 for 3..A, 15 for the 2, 16 and 17 for the jokers.
//! Chains (straights, consecutive pairs, airplanes) use 3..A only.
//!
//! Two rule sets ([`DdzRules`]) differ only in which attachments (wings of an
//! airplane, the two cards or pairs of a four) are allowed; every rule is in
//! docs/games/dou-di-zhu.md.

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

/// Which attachments a table accepts (room setting `rules`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum DdzRules {
    /// The rule set of the widely used reinforcement-learning engines
    /// (RLCard, DouZero): single wings never use the chain's own rank, never
    /// hold a bomb, never a trio of a rank next to the chain (the 2 excepted),
    /// never both jokers; pair wings and a four's two pairs are pairs of
    /// different ranks; a four's two single cards are never both jokers.
    #[default]
    Standard,
    /// The earlier reading: any cards outside the main part are wings (a
    /// four counts as two pairs).
    Permissive,
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

/// The name of a rank on the [`value`] scale: `3`…`10`, `J`, `Q`, `K`, `A`,
/// `2`, `black joker`, `red joker`.
pub fn rank_name(v: u8) -> String {
    match v {
        11 => "J".into(),
        12 => "Q".into(),
        13 => "K".into(),
        ACE => "A".into(),
        TWO => "2".into(),
        BLACK_JOKER => "black joker".into(),
        RED_JOKER => "red joker".into(),
        v => v.to_string(),
    }
}

impl std::fmt::Display for Combo {
    /// E.g. `pair of 5`, `straight 3 to 7`, `airplane with pair wings 3 to 4`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let main = rank_name(self.main);
        let low = || rank_name(self.main + 1 - self.len);
        match self.pattern {
            Pattern::Single => write!(f, "single {main}"),
            Pattern::Pair => write!(f, "pair of {main}"),
            Pattern::Triple => write!(f, "triple of {main}"),
            Pattern::TripleSingle => write!(f, "triple of {main} with a single"),
            Pattern::TriplePair => write!(f, "triple of {main} with a pair"),
            Pattern::Straight => write!(f, "straight {} to {main}", low()),
            Pattern::PairStraight => write!(f, "consecutive pairs {} to {main}", low()),
            Pattern::Airplane => write!(f, "airplane {} to {main}", low()),
            Pattern::AirplaneSingles => write!(f, "airplane with single wings {} to {main}", low()),
            Pattern::AirplanePairs => write!(f, "airplane with pair wings {} to {main}", low()),
            Pattern::FourTwoSingles => write!(f, "four of {main} with two singles"),
            Pattern::FourTwoPairs => write!(f, "four of {main} with two pairs"),
            Pattern::Bomb => write!(f, "bomb of {main}"),
            Pattern::Rocket => write!(f, "rocket"),
        }
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

/// Whether `rest` (the cards besides a main part spanning `lo..=hi`) are
/// allowed as single attachments under the standard rules: no bomb, no trio
/// next to the chain (the 2 excepted), not both jokers.
fn standard_singles(rest: &[u8; 18], lo: usize, hi: usize) -> bool {
    let adjacent = |v: usize| (v + 1 == lo || v == hi + 1) && v != usize::from(TWO);
    let rocket = rest[usize::from(BLACK_JOKER)] > 0 && rest[usize::from(RED_JOKER)] > 0;
    !rocket && (3..18).all(|v| rest[v] < 4 && !(rest[v] == 3 && adjacent(v)))
}

/// Whether `rest` is exactly `k` pairs: of `k` different ranks (standard) or
/// any even counts (permissive, a four being two pairs).
fn pairs_ok(rest: &[u8; 18], k: usize, rules: DdzRules) -> bool {
    match rules {
        DdzRules::Standard => {
            rest.iter().all(|r| *r == 0 || *r == 2) && rest.iter().filter(|r| **r == 2).count() == k
        }
        DdzRules::Permissive => rest.iter().all(|r| r.is_multiple_of(2)),
    }
}

/// Every pattern these cards form under the standard rules; see
/// [`interpretations_under`].
pub fn interpretations(cards: &[Card]) -> Vec<Combo> {
    interpretations_under(cards, DdzRules::Standard)
}

/// Every pattern these cards form under `rules` (one physical card each;
/// the caller rejects duplicates). Empty when they form none.
pub fn interpretations_under(cards: &[Card], rules: DdzRules) -> Vec<Combo> {
    let standard = rules == DdzRules::Standard;
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
            (6, 4) | (8, 4) => {
                let mut rest = c;
                rest[usize::from(v)] = 0;
                let ok = if n == 6 {
                    !standard || standard_singles(&rest, usize::from(v), usize::from(v))
                } else {
                    pairs_ok(&rest, 2, rules)
                };
                if ok {
                    let p = if n == 6 { Pattern::FourTwoSingles } else { Pattern::FourTwoPairs };
                    out.push(combo(p, v, 1));
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
    for (per_link, pattern) in [(4, Pattern::AirplaneSingles), (5, Pattern::AirplanePairs)] {
        if !n.is_multiple_of(per_link) || n < 2 * per_link {
            continue;
        }
        let k = n / per_link;
        for top in runs(&c, 3, k) {
            let (lo, hi) = (usize::from(top) + 1 - k, usize::from(top));
            let mut rest = c;
            for r in &mut rest[lo..=hi] {
                *r -= 3;
            }
            // Standard: the chain's own ranks give no wing card.
            let own_rank_wing = rest[lo..=hi].iter().any(|r| *r > 0);
            let ok = match pattern {
                Pattern::AirplaneSingles => !standard || (!own_rank_wing && standard_singles(&rest, lo, hi)),
                _ => pairs_ok(&rest, k, rules),
            };
            if ok {
                out.push(combo(pattern, top, k));
            }
        }
    }
    out
}

/// How a leader's play is read under the standard rules.
pub fn classify(cards: &[Card]) -> Option<Combo> {
    classify_under(cards, DdzRules::Standard)
}

/// How a leader's play is read under `rules`: the preferred pattern (see
/// [`Pattern::PREFERENCE`]), then the highest main rank.
pub fn classify_under(cards: &[Card], rules: DdzRules) -> Option<Combo> {
    interpretations_under(cards, rules)
        .into_iter()
        .min_by_key(|c| (c.pattern.preference(), std::cmp::Reverse(c.main)))
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

/// The reading of `cards` that beats `old` under the standard rules.
pub fn beating(cards: &[Card], old: &Combo) -> Option<Combo> {
    beating_under(cards, old, DdzRules::Standard)
}

/// The reading of `cards` that beats `old` under `rules`, if any (the
/// preferred one when several do).
pub fn beating_under(cards: &[Card], old: &Combo, rules: DdzRules) -> Option<Combo> {
    interpretations_under(cards, rules)
        .into_iter()
        .filter(|c| beats(c, old))
        .min_by_key(|c| (c.pattern.preference(), std::cmp::Reverse(c.main)))
}

/// Every way to take `k` units from `avail` (units per rank), as per-rank
/// unit counts; ranks in ascending order.
fn choose(avail: &[(u8, u8)], k: usize, out: &mut Vec<Vec<(u8, u8)>>, cur: &mut Vec<(u8, u8)>) {
    if k == 0 {
        out.push(cur.clone());
        return;
    }
    let Some((&(v, n), rest)) = avail.split_first() else { return };
    let left: usize = rest.iter().map(|(_, n)| usize::from(*n)).sum();
    for take in (0..=usize::from(n).min(k)).rev() {
        if k - take > left {
            break;
        }
        if take > 0 {
            cur.push((v, take as u8));
        }
        choose(rest, k - take, out, cur);
        if take > 0 {
            cur.pop();
        }
    }
}

/// Every legal play a hand can make under `rules` (with `to_beat`: every play
/// that beats it), one per distinct choice of ranks: a play is listed with
/// the hand's first cards of each rank in [`sort_key`] order, and any play
/// with the same number of cards of each rank is the same play for the rules
/// (suits never matter). A play validates if and only if its ranks match a
/// listed play. `hand` must be sorted by [`sort_key`].
pub fn candidate_plays(hand: &[CardId], to_beat: Option<&Combo>, rules: DdzRules) -> Vec<Vec<CardId>> {
    let mut by_value: Vec<Vec<CardId>> = vec![Vec::new(); 18];
    for id in hand {
        by_value[usize::from(value(id.card()))].push(*id);
    }
    let count = |v: u8| by_value[usize::from(v)].len() as u8;
    let ranks: Vec<u8> = (3u8..18).filter(|v| count(*v) > 0).collect();
    // Candidate plays as per-rank counts; filtered by the rules below.
    let mut shapes: Vec<[u8; 18]> = Vec::new();
    let shape = |parts: &[(u8, u8)]| {
        let mut c = [0u8; 18];
        for (v, n) in parts {
            c[usize::from(*v)] += *n;
        }
        c
    };
    // Attachments: `k` single cards or `k` pairs from the ranks outside `main`.
    let attach = |main: &[(u8, u8)], k: usize, pairs: bool, shapes: &mut Vec<[u8; 18]>| {
        let avail: Vec<(u8, u8)> = ranks
            .iter()
            .map(|v| {
                let used = main.iter().filter(|(w, _)| w == v).map(|(_, n)| *n).sum::<u8>();
                let left = count(*v) - used;
                (*v, if pairs { left / 2 } else { left })
            })
            .filter(|(_, n)| *n > 0)
            .collect();
        let mut picks = Vec::new();
        choose(&avail, k, &mut picks, &mut Vec::new());
        for pick in picks {
            let mut parts = main.to_vec();
            parts.extend(pick.iter().map(|(v, n)| (*v, if pairs { n * 2 } else { *n })));
            shapes.push(shape(&parts));
        }
    };
    for &v in &ranks {
        for n in 1..=count(v) {
            shapes.push(shape(&[(v, n)]));
        }
        if count(v) >= 3 {
            attach(&[(v, 3)], 1, false, &mut shapes);
            attach(&[(v, 3)], 1, true, &mut shapes);
        }
        if count(v) == 4 {
            attach(&[(v, 4)], 2, false, &mut shapes);
            attach(&[(v, 4)], 2, true, &mut shapes);
        }
    }
    if count(BLACK_JOKER) == 1 && count(RED_JOKER) == 1 {
        shapes.push(shape(&[(BLACK_JOKER, 1), (RED_JOKER, 1)]));
    }
    // Chains: (cards per link, minimum links).
    for (each, min_links) in [(1u8, 5usize), (2, 3), (3, 2)] {
        for start in 3..=ACE {
            let mut top = start;
            while top <= ACE && count(top) >= each {
                let links = usize::from(top - start) + 1;
                if links >= min_links {
                    let main: Vec<(u8, u8)> = (start..=top).map(|v| (v, each)).collect();
                    shapes.push(shape(&main));
                    if each == 3 {
                        attach(&main, links, false, &mut shapes);
                        attach(&main, links, true, &mut shapes);
                    }
                }
                top += 1;
            }
        }
    }
    let mut seen = std::collections::HashSet::new();
    shapes.retain(|c| seen.insert(*c));
    shapes
        .into_iter()
        .map(|c| {
            (3u8..18)
                .flat_map(|v| by_value[usize::from(v)].iter().take(usize::from(c[usize::from(v)])).copied())
                .collect::<Vec<CardId>>()
        })
        .filter(|p| {
            let faces: Vec<Card> = p.iter().map(|id| id.card()).collect();
            match to_beat {
                None => classify_under(&faces, rules).is_some(),
                Some(old) => beating_under(&faces, old, rules).is_some(),
            }
        })
        .collect()
}
