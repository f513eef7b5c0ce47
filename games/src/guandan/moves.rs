//! Legal-move generation (move_generator): every distinct play a
//! hand can make, optionally only those that beat the play on the table.
//!
//! Complete up to the source rules' equivalence pruning: plays that differ only in
//! which physical copy or which suit of a natural card they use (and so have
//! the same pattern, rank and use of wilds) are generated once. A straight
//! flush is never pruned into a plain straight: it is generated per suit.

use claw_protocol::{CardId, Suit};

use super::cards::{natural, rank_of_slot, slot, Wilds, BIG_JOKER, SMALL_JOKER};
use super::compare::{beats, BombProfile};
use super::patterns::{windows, Kind, PatternRules, Reading};

/// A play: the physical cards and the reading they are played as.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Move {
    /// The cards, in hand order.
    pub cards: Vec<CardId>,
    /// How they read.
    pub reading: Reading,
}

/// A hand sorted into natural cards by rank and suit, and wilds.
struct Sorted {
    by_slot: [Vec<CardId>; 15],
    by_suit: [[Vec<CardId>; 4]; 13],
    wilds: Vec<CardId>,
}

impl Sorted {
    fn new(hand: &[CardId], wilds: Wilds) -> Sorted {
        let mut s = Sorted { by_slot: Default::default(), by_suit: Default::default(), wilds: Vec::new() };
        for id in hand {
            if wilds.is_wild(*id) {
                s.wilds.push(*id);
                continue;
            }
            let sl = slot(natural(id.card()));
            s.by_slot[sl].push(*id);
            if let Some(suit) = id.card().suit() {
                s.by_suit[sl][usize::from(suit.index())].push(*id);
            }
        }
        s
    }

    fn count(&self, rank: u8) -> u8 {
        self.by_slot[slot(rank)].len() as u8
    }
}

/// Every legal play from `hand`; when `table` is given, only plays that beat it.
pub fn legal_moves(
    hand: &[CardId],
    rules: PatternRules,
    wild_count: u8,
    profile: &BombProfile,
    table: Option<&Reading>,
) -> Vec<Move> {
    let wilds = Wilds { level: rules.level, count: wild_count };
    let s = Sorted::new(hand, wilds);
    let level = rules.level.rank();
    let w = s.wilds.len() as u8;
    let mut out: Vec<Move> = Vec::new();
    let mut push = |cards: Vec<CardId>, reading: Reading| {
        let reading = rules.purity.apply(reading, cards.iter().filter(|c| wilds.is_wild(**c)).count());
        if table.is_none_or(|t| beats(&reading, t, rules.level, profile)) {
            out.push(Move { cards, reading });
        }
    };

    // Same rank: singles, pairs, triples, bombs.
    for sl in 0..13 {
        let r = rank_of_slot(sl);
        let c = s.count(r);
        for k in 1..=(c + w).min(10) {
            for u in k.saturating_sub(c)..=w.min(k) {
                if u == k && r != level {
                    continue;
                }
                let kind = match k {
                    1 => Kind::Single,
                    2 => Kind::Pair,
                    3 => Kind::Triple,
                    _ => Kind::Bomb,
                };
                let mut cards: Vec<CardId> = s.by_slot[sl][..usize::from(k - u)].to_vec();
                cards.extend(&s.wilds[..usize::from(u)]);
                let pure = u == 0 || r == level;
                push(cards, Reading { kind, rank: r, len: k, pure, suit: None });
            }
        }
    }
    for r in [SMALL_JOKER, BIG_JOKER] {
        let js = &s.by_slot[slot(r)];
        for k in 1..=js.len().min(2) {
            let kind = if k == 1 { Kind::Single } else { Kind::Pair };
            push(js[..k].to_vec(), Reading { kind, rank: r, len: k as u8, pure: true, suit: None });
        }
    }
    if s.count(SMALL_JOKER) == 2 && s.count(BIG_JOKER) == 2 {
        let mut cards = s.by_slot[13].clone();
        cards.extend(&s.by_slot[14]);
        push(cards, Reading { kind: Kind::FourJokers, rank: BIG_JOKER, len: 4, pure: true, suit: None });
    }

    // Triple with a pair.
    for ts in 0..13 {
        let t = rank_of_slot(ts);
        let ct = s.count(t);
        for ps in 0..15 {
            let p = rank_of_slot(ps);
            if ps == ts {
                continue;
            }
            let cp = s.count(p);
            let joker = p >= SMALL_JOKER;
            for ut in 3u8.saturating_sub(ct)..=w.min(3) {
                if ut == 3 && t != level {
                    continue;
                }
                let max_up = if joker { 0 } else { (w - ut).min(2) };
                for up in 2u8.saturating_sub(cp)..=max_up {
                    if up == 2 && p != level {
                        continue;
                    }
                    let mut cards: Vec<CardId> = s.by_slot[ts][..usize::from(3 - ut)].to_vec();
                    cards.extend(&s.by_slot[ps][..usize::from(2 - up)]);
                    cards.extend(&s.wilds[..usize::from(ut + up)]);
                    let pure = ut + up == 0;
                    push(cards, Reading { kind: Kind::TripleWithPair, rank: t, len: 5, pure, suit: None });
                }
            }
        }
    }
    // A pair of two wilds stands for any other rank: above it is the level
    // pair, which a level triple cannot take; here once for that triple.
    let ls = slot(level);
    if w >= 2 && s.by_slot[ls].len() >= 3 {
        let mut cards: Vec<CardId> = s.by_slot[ls][..3].to_vec();
        cards.extend(&s.wilds[..2]);
        push(cards, Reading { kind: Kind::TripleWithPair, rank: level, len: 5, pure: false, suit: None });
    }

    // Straights and straight flushes.
    for (ranks, top) in windows(5, rules.ace_high) {
        let ranks = &ranks[..5];
        for mask in 0u8..32 {
            let used = mask.count_ones() as u8;
            if used > w {
                continue;
            }
            let wild_at = |i: usize| mask >> i & 1 == 1;
            if ranks.iter().enumerate().all(|(i, r)| wild_at(i) || s.count(*r) > 0) {
                let mut cards: Vec<CardId> = ranks
                    .iter()
                    .enumerate()
                    .filter(|(i, _)| !wild_at(*i))
                    .map(|(_, r)| s.by_slot[slot(*r)][0])
                    .collect();
                cards.extend(&s.wilds[..usize::from(used)]);
                push(cards, Reading { kind: Kind::Straight, rank: top, len: 5, pure: used == 0, suit: None });
            }
            for suit in Suit::ALL {
                let si = usize::from(suit.index());
                if !ranks.iter().enumerate().all(|(i, r)| wild_at(i) || !s.by_suit[slot(*r)][si].is_empty()) {
                    continue;
                }
                let mut cards: Vec<CardId> = ranks
                    .iter()
                    .enumerate()
                    .filter(|(i, _)| !wild_at(*i))
                    .map(|(_, r)| s.by_suit[slot(*r)][si][0])
                    .collect();
                cards.extend(&s.wilds[..usize::from(used)]);
                let own = |i: usize| ranks[i] == level && suit == Suit::Hearts;
                let pure = (0..5).all(|i| !wild_at(i) || own(i));
                push(cards, Reading { kind: Kind::StraightFlush, rank: top, len: 5, pure, suit: Some(suit) });
            }
        }
    }

    // Consecutive pairs (3 × 2) and steel plates (2 × 3).
    for (kind, len, each) in [(Kind::ConsecutivePairs, 3u8, 2u8), (Kind::SteelPlate, 2, 3)] {
        for (ranks, top) in windows(len, rules.ace_high) {
            let ranks = &ranks[..usize::from(len)];
            let mut uses = vec![0u8; ranks.len()];
            loop {
                let total: u8 = uses.iter().sum();
                let fits = ranks.iter().zip(&uses).all(|(r, u)| s.count(*r) + u >= each);
                if total <= w && fits {
                    let mut cards = Vec::new();
                    for (r, u) in ranks.iter().zip(&uses) {
                        cards.extend(&s.by_slot[slot(*r)][..usize::from(each - u)]);
                    }
                    cards.extend(&s.wilds[..usize::from(total)]);
                    push(cards, Reading { kind, rank: top, len: len * each, pure: total == 0, suit: None });
                }
                // Next combination of wild uses per rank (each 0..=min(each, w)).
                let mut i = 0;
                loop {
                    if i == uses.len() {
                        break;
                    }
                    uses[i] += 1;
                    if uses[i] <= each.min(w) {
                        break;
                    }
                    uses[i] = 0;
                    i += 1;
                }
                if i == uses.len() {
                    break;
                }
            }
        }
    }
    out
}
