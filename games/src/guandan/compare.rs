//! Which play beats which, the source rules' "比较大小" and "纯度降级": non-bombs
//! compare within one pattern and length; bombs, straight flushes and the four
//! jokers compare by a data-driven [`BombProfile`].

use serde::{Deserialize, Serialize};

use super::cards::{order, Level};
use super::patterns::{Kind, Reading};

/// A class of bomb-strength plays, lowest tier first in a profile.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", tag = "tier")]
pub enum BombTier {
    /// Bombs of `min..=max` cards.
    Bombs {
        /// Fewest cards in this tier.
        min: u8,
        /// Most cards in this tier.
        max: u8,
    },
    /// Straight flushes.
    StraightFlush,
    /// The four jokers.
    FourJokers,
}

/// What decides between two plays of one tier, in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Criterion {
    /// Pure (no wild standing for another card) beats mixed.
    Purity,
    /// Higher rank (level order for bombs, sequence top for straight flushes).
    Rank,
    /// More cards.
    Count,
}

/// How bomb-strength plays rank: tiers from lowest to highest, then the
/// criteria inside a tier.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BombProfile {
    /// Every bomb count 4..=10, the straight flush and the four jokers, each
    /// in exactly one tier.
    pub tiers: Vec<BombTier>,
    /// Tie-breaks inside a tier, first decisive first.
    pub within: Vec<Criterion>,
}

/// The source rules' `bomb_compare_priority`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum BombPriority {
    /// Rank before count (BOMB_BY_RANK).
    #[default]
    ByRank,
    /// Count before rank (BOMB_BY_COUNT).
    ByCount,
}

impl BombProfile {
    /// The common competition rule: four jokers > bombs of 6+ > straight
    /// flush > bomb of 5 > bomb of 4; more cards first, then rank; wilds do
    /// not weaken a bomb.
    pub fn competition() -> BombProfile {
        BombProfile {
            tiers: vec![
                BombTier::Bombs { min: 4, max: 5 },
                BombTier::StraightFlush,
                BombTier::Bombs { min: 6, max: 10 },
                BombTier::FourJokers,
            ],
            within: vec![Criterion::Count, Criterion::Rank],
        }
    }

    /// The source rules' reading ("纯度降级" and RuleConfig): type, then
    /// purity (pure > mixed), then rank and count in the order
    /// `bomb_compare_priority` gives; the straight flush above or below every
    /// bomb by `same_suit_straight_beats_bomb`; the four jokers on top.
    pub fn seed(same_suit_straight_beats_bomb: bool, priority: BombPriority) -> BombProfile {
        let bombs = BombTier::Bombs { min: 4, max: 10 };
        let tiers = if same_suit_straight_beats_bomb {
            vec![bombs, BombTier::StraightFlush, BombTier::FourJokers]
        } else {
            vec![BombTier::StraightFlush, bombs, BombTier::FourJokers]
        };
        let within = match priority {
            BombPriority::ByRank => vec![Criterion::Purity, Criterion::Rank, Criterion::Count],
            BombPriority::ByCount => vec![Criterion::Purity, Criterion::Count, Criterion::Rank],
        };
        BombProfile { tiers, within }
    }

    /// Checks that every bomb-strength play has exactly one tier and no
    /// criterion repeats.
    pub fn check(&self) -> Result<(), String> {
        let covers = |r: &Reading| self.tiers.iter().filter(|t| in_tier(t, r)).count();
        let probe = |kind, len| Reading { kind, rank: 2, len, pure: true, suit: None };
        for len in 4..=10 {
            if covers(&probe(Kind::Bomb, len)) != 1 {
                return Err(format!("bombs of {len} need exactly one tier"));
            }
        }
        for kind in [Kind::StraightFlush, Kind::FourJokers] {
            if covers(&probe(kind, if kind == Kind::FourJokers { 4 } else { 5 })) != 1 {
                return Err(format!("{kind:?} needs exactly one tier"));
            }
        }
        let mut seen = Vec::new();
        for c in &self.within {
            if seen.contains(c) {
                return Err(format!("criterion {c:?} repeats"));
            }
            seen.push(*c);
        }
        Ok(())
    }

    fn key(&self, r: &Reading, level: Level) -> Vec<u8> {
        let tier = self.tiers.iter().position(|t| in_tier(t, r)).unwrap_or(0) as u8;
        let mut k = vec![tier];
        for c in &self.within {
            k.push(match c {
                Criterion::Purity => u8::from(r.pure),
                Criterion::Count => r.len,
                Criterion::Rank if r.kind == Kind::StraightFlush => r.rank,
                Criterion::Rank => order(r.rank, level),
            });
        }
        k
    }
}

fn in_tier(t: &BombTier, r: &Reading) -> bool {
    match (t, r.kind) {
        (BombTier::Bombs { min, max }, Kind::Bomb) => (*min..=*max).contains(&r.len),
        (BombTier::StraightFlush, Kind::StraightFlush) => true,
        (BombTier::FourJokers, Kind::FourJokers) => true,
        _ => false,
    }
}

/// Whether `play` beats `table` at this level under this profile.
pub fn beats(play: &Reading, table: &Reading, level: Level, profile: &BombProfile) -> bool {
    match (play.kind.is_bomb(), table.kind.is_bomb()) {
        (true, false) => true,
        (false, true) => false,
        (true, true) => profile.key(play, level) > profile.key(table, level),
        (false, false) => {
            play.kind == table.kind
                && play.len == table.len
                && if play.kind.is_sequence() {
                    play.rank > table.rank
                } else {
                    order(play.rank, level) > order(table.rank, level)
                }
        }
    }
}
