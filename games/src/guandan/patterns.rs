//! Pattern recognition (牌型识别): every reading of a group of
//! cards, wilds included, and the source rules' priority list that picks the reading
//! a play means when the player does not name one.

use claw_protocol::Suit;
use serde::{Deserialize, Serialize};

use super::cards::{rank_of_slot, Level, Tally, ACE, BIG_JOKER, SMALL_JOKER};

/// A pattern (牌型).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Kind {
    /// One card.
    Single,
    /// Two cards of a rank (or two equal jokers).
    Pair,
    /// Three cards of a rank.
    Triple,
    /// Three of a rank and a pair of another (三带二).
    TripleWithPair,
    /// Five consecutive ranks (顺子).
    Straight,
    /// Three consecutive pairs (连对).
    ConsecutivePairs,
    /// Two consecutive triples (钢板).
    SteelPlate,
    /// Five consecutive ranks of one suit (同花顺).
    StraightFlush,
    /// Four to ten cards of a rank (炸弹).
    Bomb,
    /// Both small and both big jokers (天王炸 / 火箭).
    FourJokers,
}

impl Kind {
    /// Whether this pattern beats every non-bomb pattern.
    pub fn is_bomb(self) -> bool {
        matches!(self, Kind::Bomb | Kind::StraightFlush | Kind::FourJokers)
    }

    /// Whether the rank of this pattern is a sequence top on the natural
    /// scale (level card in its natural place) rather than a level-ordered rank.
    pub fn is_sequence(self) -> bool {
        matches!(self, Kind::Straight | Kind::ConsecutivePairs | Kind::SteelPlate | Kind::StraightFlush)
    }

    /// The source rules' recommended-reading priority (1 = first choice), their
    /// "牌型推荐优先级".
    pub fn priority(self) -> u8 {
        match self {
            Kind::FourJokers => 1,
            Kind::Bomb => 2,
            Kind::StraightFlush => 3,
            Kind::SteelPlate => 4,
            Kind::ConsecutivePairs => 5,
            Kind::Straight => 6,
            Kind::TripleWithPair => 7,
            Kind::Triple => 8,
            Kind::Pair => 9,
            Kind::Single => 10,
        }
    }
}

/// One way to read a group of cards.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Reading {
    /// The pattern.
    pub kind: Kind,
    /// Natural rank of the main part (2..=16): the rank of a single, pair,
    /// triple (the triple of a triple with a pair) or bomb; the top rank of a
    /// sequence (5 for A-2-3-4-5).
    pub rank: u8,
    /// Cards in the play.
    pub len: u8,
    /// No wild stands for a card other than itself (purity, as the source rules define it).
    pub pure: bool,
    /// The suit of a straight flush (`c`, `d`, `h`, `s`).
    #[serde(default, skip_serializing_if = "Option::is_none", with = "suit_letter")]
    pub suit: Option<Suit>,
}

/// A suit as its one-letter notation.
mod suit_letter {
    use claw_protocol::Suit;
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(s: &Option<Suit>, ser: S) -> Result<S::Ok, S::Error> {
        match s {
            Some(s) => ser.serialize_char(s.as_char()),
            None => ser.serialize_none(),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Suit>, D::Error> {
        match Option::<char>::deserialize(d)? {
            None => Ok(None),
            Some(c) => {
                Suit::from_char(c).map(Some).ok_or_else(|| serde::de::Error::custom(format!("suit {c:?}")))
            }
        }
    }
}

/// A reading a player names for an ambiguous play.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Declared {
    /// The pattern meant.
    pub kind: Kind,
    /// Its rank, as in [`Reading::rank`].
    pub rank: u8,
}

/// Rule inputs of pattern recognition.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PatternRules {
    /// The level being played.
    pub level: Level,
    /// Whether sequences may end at the ace (10-J-Q-K-A), the source rules'
    /// `straight_extends_to_ace`. A low sequences (A-2-3-4-5) are always allowed.
    pub ace_high: bool,
    /// Which wilds make a play mixed (setting `purity`).
    pub purity: Purity,
}

/// Which wilds make a play mixed, the two readings of the source rules'
/// "纯炸（无逢人配参与）" (docs/games/guandan.md "Purity"; setting `purity`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Purity {
    /// A wild standing for another card; as its own face it is a real card.
    #[default]
    StandIn,
    /// Any wild in the play, whatever it stands for (the literal reading).
    AnyWild,
}

impl Purity {
    /// Whether this is the default (left out of the settings' normal form).
    pub fn is_stand_in(&self) -> bool {
        *self == Purity::StandIn
    }

    /// `reading` as played with `wilds` wild cards among its cards.
    pub fn apply(self, reading: Reading, wilds: usize) -> Reading {
        match self {
            Purity::AnyWild if wilds > 0 => Reading { pure: false, ..reading },
            _ => reading,
        }
    }
}

/// The rank windows of sequences of `len` ranks: `(ranks, top)`, lowest first.
/// The ace is low in the first window and high in the last (when allowed).
pub fn windows(len: u8, ace_high: bool) -> impl Iterator<Item = ([u8; 5], u8)> {
    let last_start = ACE + 1 - len;
    let lows = std::iter::once(1u8);
    lows.chain(2..=last_start).filter(move |s| ace_high || s + len - 1 < ACE).map(move |s| {
        let mut r = [0u8; 5];
        for (i, x) in r.iter_mut().enumerate().take(usize::from(len)) {
            let v = s + i as u8;
            *x = if v == 1 { ACE } else { v };
        }
        (r, s + len - 1)
    })
}

/// Every reading of these cards.
pub fn readings(t: &Tally, rules: PatternRules) -> Vec<Reading> {
    let mut out = Vec::new();
    let n = t.len;
    let w = t.wilds;
    let level = rules.level.rank();
    let jokers = t.by_rank[13] + t.by_rank[14];
    let mut distinct = 0;
    let mut only = 0;
    for (s, n) in t.by_rank.iter().enumerate() {
        if *n > 0 {
            distinct += 1;
            only = s;
        }
    }

    // Same rank: single, pair, triple, bomb.
    let same = match distinct {
        0 => Some(level),
        1 => Some(rank_of_slot(only)),
        _ => None,
    };
    if let Some(r) = same {
        let joker = r >= SMALL_JOKER;
        let kind = match n {
            1 => Some(Kind::Single),
            2 if !joker || w == 0 => Some(Kind::Pair),
            3 if !joker => Some(Kind::Triple),
            4..=10 if !joker => Some(Kind::Bomb),
            _ => None,
        };
        if let Some(kind) = kind {
            out.push(Reading { kind, rank: r, len: n, pure: w == 0 || r == level, suit: None });
        }
    }
    if n == 4 && w == 0 && t.by_rank[13] == 2 && t.by_rank[14] == 2 {
        out.push(Reading { kind: Kind::FourJokers, rank: BIG_JOKER, len: 4, pure: true, suit: None });
    }
    if n == 5 {
        full_houses(t, &mut out);
        if jokers == 0 {
            for (ranks, top) in windows(5, rules.ace_high) {
                if let Some(missing) = fill(t, &ranks[..5], 1) {
                    out.push(Reading { kind: Kind::Straight, rank: top, len: 5, pure: w == 0, suit: None });
                    if let Some(suit) = one_suit(t) {
                        let pure = w == 0 || (w == 1 && suit == Suit::Hearts && missing == Some(level));
                        out.push(Reading {
                            kind: Kind::StraightFlush,
                            rank: top,
                            len: 5,
                            pure,
                            suit: Some(suit),
                        });
                    }
                }
            }
        }
    }
    if n == 6 && jokers == 0 {
        for (ranks, top) in windows(3, rules.ace_high) {
            if fill(t, &ranks[..3], 2).is_some() {
                out.push(Reading {
                    kind: Kind::ConsecutivePairs,
                    rank: top,
                    len: 6,
                    pure: w == 0,
                    suit: None,
                });
            }
        }
        for (ranks, top) in windows(2, rules.ace_high) {
            if fill(t, &ranks[..2], 3).is_some() {
                out.push(Reading { kind: Kind::SteelPlate, rank: top, len: 6, pure: w == 0, suit: None });
            }
        }
    }
    out.into_iter().map(|r| rules.purity.apply(r, usize::from(w))).collect()
}

/// Whether the naturals fit `each` cards of every rank in `ranks` with the
/// wilds filling exactly the gaps; returns the rank the wilds fill when they
/// fill a single card (None inside the Some otherwise).
fn fill(t: &Tally, ranks: &[u8], each: u8) -> Option<Option<u8>> {
    let mut inside = 0u8;
    let mut need = 0u8;
    let mut missing = None;
    for r in ranks {
        let c = t.count(*r);
        if c > each {
            return None;
        }
        inside += c;
        need += each - c;
        if c < each {
            missing = Some(*r);
        }
    }
    (inside == t.naturals() && need == t.wilds).then_some(if need == 1 { missing } else { None })
}

/// The suit shared by every natural card, if there is one.
fn one_suit(t: &Tally) -> Option<Suit> {
    Suit::ALL.into_iter().find(|s| {
        let i = usize::from(s.index());
        let n: u8 = t.by_suit.iter().map(|x| x[i]).sum();
        n == t.naturals()
    })
}

fn full_houses(t: &Tally, out: &mut Vec<Reading>) {
    for ts in 0..13 {
        let ct = t.by_rank[ts];
        if ct > 3 || (ct == 0 && t.wilds < 3) {
            continue;
        }
        for ps in 0..15 {
            let cp = t.by_rank[ps];
            if ps == ts || cp > 2 || (ps >= 13 && cp != 2) {
                continue;
            }
            if ct + cp == t.naturals() && (3 - ct) + (2 - cp) == t.wilds {
                out.push(Reading {
                    kind: Kind::TripleWithPair,
                    rank: rank_of_slot(ts),
                    len: 5,
                    pure: t.wilds == 0,
                    suit: None,
                });
                // One reading per triple rank: the pair rank does not compare.
                break;
            }
        }
    }
}

/// Sorts readings by the source rules' priority, then by strength, best first.
pub fn by_priority(readings: &mut [Reading], level: Level) {
    readings.sort_by_key(|r| {
        let strength = if r.kind.is_sequence() { r.rank } else { super::cards::order(r.rank, level) };
        (r.kind.priority(), std::cmp::Reverse(r.len), std::cmp::Reverse(strength), std::cmp::Reverse(r.pure))
    });
}

/// Short text of a reading, e.g. `bomb of 6 × 9`, `straight to K`.
pub fn describe(r: &Reading) -> String {
    let name = super::cards::rank_name(r.rank);
    match r.kind {
        Kind::Single => format!("single {name}"),
        Kind::Pair => format!("pair of {name}"),
        Kind::Triple => format!("triple {name}"),
        Kind::TripleWithPair => format!("triple {name} with a pair"),
        Kind::Straight => format!("straight to {name}"),
        Kind::ConsecutivePairs => format!("consecutive pairs to {name}"),
        Kind::SteelPlate => format!("steel plate to {name}"),
        Kind::StraightFlush => format!("straight flush to {name}"),
        Kind::Bomb => format!("{} bomb of {} × {name}", if r.pure { "pure" } else { "mixed" }, r.len),
        Kind::FourJokers => "four jokers".into(),
    }
}
