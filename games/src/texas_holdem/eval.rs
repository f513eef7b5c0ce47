//! A fast poker hand evaluator: the best five-card hand out of any set of
//! cards (Hold'em's seven), as one integer that orders hands.
//!
//! The cards are folded into four 13-bit rank masks, one per suit; pairs,
//! trips and quads fall out of bitwise AND/OR across the suits, straights out
//! of a shift-and trick over the rank mask (with the ace also counted low),
//! so there are no tables and no sorting. Jokers are ignored; duplicated
//! faces count once. Any number of cards is accepted (fewer than five gives
//! a hand with fewer kickers), and it never panics.

use std::fmt;

use claw_protocol::{Card, Rank};
use serde::{Deserialize, Serialize};

/// A poker hand category, weakest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Category {
    /// Nothing: five unrelated cards.
    HighCard = 0,
    /// Two cards of one rank.
    Pair = 1,
    /// Two pairs.
    TwoPair = 2,
    /// Three cards of one rank (trips or a set).
    ThreeOfAKind = 3,
    /// Five ranks in a row (A-2-3-4-5 is the lowest, T-J-Q-K-A the highest).
    Straight = 4,
    /// Five cards of one suit.
    Flush = 5,
    /// Three of one rank and two of another.
    FullHouse = 6,
    /// Four cards of one rank.
    FourOfAKind = 7,
    /// A straight in one suit (the ace-high one is the royal flush).
    StraightFlush = 8,
}

impl Category {
    /// Every category, weakest first.
    pub const ALL: [Category; 9] = [
        Category::HighCard,
        Category::Pair,
        Category::TwoPair,
        Category::ThreeOfAKind,
        Category::Straight,
        Category::Flush,
        Category::FullHouse,
        Category::FourOfAKind,
        Category::StraightFlush,
    ];

    /// The English name, lower case ("two pair", "straight flush").
    pub fn name(self) -> &'static str {
        [
            "high card",
            "pair",
            "two pair",
            "three of a kind",
            "straight",
            "flush",
            "full house",
            "four of a kind",
            "straight flush",
        ][self as usize]
    }
}

/// The value of a best five-card hand. Greater is better, equal is a tie.
///
/// Layout (`u32`): the category in bits 20..24, then up to five rank values
/// (2..=14, 0 = absent) in nibbles 16..20, 12..16, … 0..4, most significant
/// first: the ranks that decide ties, in the order they are compared
/// (quads rank then kicker; trips then pair; pairs then kickers; a straight
/// only by its top card, 5 for the wheel).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct HandValue(u32);

impl HandValue {
    /// The raw ordering integer (see the type's documentation for the layout).
    pub fn raw(self) -> u32 {
        self.0
    }

    /// The hand's category.
    pub fn category(self) -> Category {
        // The category is built from a Category; the fallback is unreachable.
        Category::ALL.get((self.0 >> 20) as usize).copied().unwrap_or(Category::HighCard)
    }

    /// The tie-breaking ranks, most significant first (see the layout above).
    pub fn ranks(self) -> Vec<Rank> {
        (0..5).filter_map(|k| Rank::from_value(((self.0 >> (16 - 4 * k)) & 0xf) as u8)).collect()
    }

    fn rank_at(self, k: u32) -> &'static str {
        let v = ((self.0 >> (16 - 4 * k)) & 0xf) as usize;
        [
            "?", "?", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "jack",
            "queen", "king", "ace",
        ]
        .get(v)
        .copied()
        .unwrap_or("?")
    }

    fn plural_at(self, k: u32) -> String {
        match self.rank_at(k) {
            "six" => "sixes".to_owned(),
            r => format!("{r}s"),
        }
    }
}

impl fmt::Display for HandValue {
    /// A human description: "two pair, kings and sevens", "straight, five high".
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let h = *self;
        match h.category() {
            Category::HighCard => write!(f, "high card, {}", h.rank_at(0)),
            Category::Pair => write!(f, "pair of {}", h.plural_at(0)),
            Category::TwoPair => write!(f, "two pair, {} and {}", h.plural_at(0), h.plural_at(1)),
            Category::ThreeOfAKind => write!(f, "three of a kind, {}", h.plural_at(0)),
            Category::Straight => write!(f, "straight, {} high", h.rank_at(0)),
            Category::Flush => write!(f, "flush, {} high", h.rank_at(0)),
            Category::FullHouse => write!(f, "full house, {} full of {}", h.plural_at(0), h.plural_at(1)),
            Category::FourOfAKind => write!(f, "four of a kind, {}", h.plural_at(0)),
            Category::StraightFlush if h.rank_at(0) == "ace" => f.write_str("royal flush"),
            Category::StraightFlush => write!(f, "straight flush, {} high", h.rank_at(0)),
        }
    }
}

impl fmt::Debug for HandValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "HandValue({:#08x}: {self})", self.0)
    }
}

/// The best five-card hand that can be made from `cards` (usually seven).
#[inline]
pub fn evaluate(cards: &[Card]) -> HandValue {
    let mut suits = [0u16; 4];
    // One byte per suit counting its cards: with at most seven cards no byte
    // overflows, and "some suit has five" is a single add-and-mask.
    let mut counts = 0u32;
    for c in cards {
        let code = c.code();
        if code < 52 {
            suits[usize::from(code & 3)] |= 1 << (code >> 2);
            counts += 1 << ((code & 3) * 8);
        }
    }
    let maybe_flush = cards.len() > 7 || (counts + 0x0303_0303) & 0x0808_0808 != 0;
    eval_masks(suits, maybe_flush)
}

/// The best hand from four 13-bit rank masks (bit `r` = rank `r + 2`), one
/// per suit (clubs, diamonds, hearts, spades). Bits above 12 are ignored.
pub fn evaluate_masks(suits: [u16; 4]) -> HandValue {
    eval_masks(suits, true)
}

/// `maybe_flush` false promises that no suit holds five cards.
#[inline(always)]
fn eval_masks(suits: [u16; 4], maybe_flush: bool) -> HandValue {
    const MASK: u16 = 0x1fff;
    let [c, d, h, s] = suits.map(|m| m & MASK);
    let any = c | d | h | s;

    // Flushes first. With at most seven cards a flush rules out quads and a
    // full house, so it can return at once; with more cards it waits.
    let mut flush = 0u32;
    for m in [c, d, h, s] {
        if maybe_flush && m.count_ones() >= 5 {
            let sf = straight_high(m);
            if sf != 0 {
                return HandValue(cat(Category::StraightFlush) | sf << 16);
            }
            flush = flush.max(top(m, 5));
        }
    }
    if flush != 0 && c.count_ones() + d.count_ones() + h.count_ones() + s.count_ones() <= 7 {
        return HandValue(cat(Category::Flush) | flush);
    }

    let four = c & d & h & s;
    if four != 0 {
        let q = high_bit(four);
        return HandValue(cat(Category::FourOfAKind) | (q + 2) << 16 | top(any & !(1 << q), 1) >> 4);
    }
    // At least three, and at least two, of the four suits hold the rank.
    let three = (c & d & (h | s)) | (h & s & (c | d));
    let two = (c & d) | (h & s) | ((c | d) & (h | s));
    if three != 0 {
        let t = high_bit(three);
        let rest = two & !(1 << t);
        if rest != 0 {
            return HandValue(cat(Category::FullHouse) | (t + 2) << 16 | (high_bit(rest) + 2) << 12);
        }
    }
    if flush != 0 {
        return HandValue(cat(Category::Flush) | flush);
    }
    let st = straight_high(any);
    if st != 0 {
        return HandValue(cat(Category::Straight) | st << 16);
    }
    if three != 0 {
        let t = high_bit(three);
        return HandValue(cat(Category::ThreeOfAKind) | (t + 2) << 16 | top(any & !(1 << t), 2) >> 4);
    }
    if two != 0 {
        let p1 = high_bit(two);
        let rest = two & !(1 << p1);
        if rest != 0 {
            let p2 = high_bit(rest);
            let kicker = top(any & !(1 << p1) & !(1 << p2), 1) >> 8;
            return HandValue(cat(Category::TwoPair) | (p1 + 2) << 16 | (p2 + 2) << 12 | kicker);
        }
        return HandValue(cat(Category::Pair) | (p1 + 2) << 16 | top(any & !(1 << p1), 3) >> 4);
    }
    HandValue(cat(Category::HighCard) | top(any, 5))
}

/// The category in bits 20..24.
#[inline]
fn cat(c: Category) -> u32 {
    (c as u32) << 20
}

/// Index of the highest set bit (mask must be non-zero).
#[inline]
fn high_bit(m: u16) -> u32 {
    15 - m.leading_zeros()
}

/// The top `n` (1..=5) ranks of `m` as rank values packed in nibbles, the
/// first at bits 16..20 (callers shift kickers right to place them after a
/// leading rank).
#[inline]
fn top(m: u16, n: u32) -> u32 {
    TOP5[usize::from(m & 0x1fff)] & !(0xfffff >> (4 * n))
}

/// The rank value of the top card of the best straight in `m` (5 for the
/// wheel A-2-3-4-5), or 0 when there is none.
#[inline]
fn straight_high(m: u16) -> u32 {
    u32::from(STRAIGHT[usize::from(m & 0x1fff)])
}

/// For every 13-bit rank mask: its five highest ranks packed as in `top`.
static TOP5: [u32; 8192] = {
    let mut t = [0u32; 8192];
    let mut m = 0;
    while m < 8192 {
        let mut out = 0u32;
        let mut shift = 16i32;
        let mut r = 12i32;
        while r >= 0 && shift >= 0 {
            if m & (1 << r) != 0 {
                out |= ((r + 2) as u32) << shift;
                shift -= 4;
            }
            r -= 1;
        }
        t[m] = out;
        m += 1;
    }
    t
};

/// For every 13-bit rank mask: the top rank value of its best straight, or 0.
static STRAIGHT: [u8; 8192] = {
    let mut t = [0u8; 8192];
    let mut m = 0u32;
    while m < 8192 {
        // Bit 0 is the ace played low, bit r + 1 is rank index r.
        let w = (m << 1) | (m >> 12 & 1);
        let run = w & (w >> 1) & (w >> 2) & (w >> 3) & (w >> 4);
        if run != 0 {
            t[m as usize] = (31 - run.leading_zeros() + 5) as u8;
        }
        m += 1;
    }
    t
};
