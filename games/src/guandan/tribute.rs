//! Tribute (进贡), return (还贡) and resisting tribute (抗贡), the source rules'
//! "进贡/还贡具体边界校验", "大王抗贡的唯一性校验" and "同点数次级判定".

use claw_protocol::{CardId, Suit};
use serde::{Deserialize, Serialize};

use super::cards::{natural, order, Level, Wilds, BIG_JOKER};
use super::{GdSettings, GuandanError};

/// Who may resist tribute with both big jokers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ResistRule {
    /// One paying player holds both big jokers (source rules: "同一个人同时抓到 2 张大王").
    #[default]
    OneHolder,
    /// The paying side holds both between them (the common competition rule).
    PayingSide,
}

/// Who receives which card of a double tribute (双下进贡).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum DoubleTribute {
    /// The source rules: "末游向头游进贡、次末游向头游队友进贡" (last pays first,
    /// third pays first's partner).
    #[default]
    BySeat,
    /// The bigger card to the first, the other to the second (equal: the payer
    /// next clockwise from the first gives to the first).
    ByCard,
}

/// The receivers of a double tribute's gifts (given in the payers' order):
/// gift i goes to `receivers[out[i]]`. `last` is the last deal's last seat.
pub fn double_targets(gifts: [(u8, CardId); 2], last: u8, level: Level, rule: DoubleTribute) -> [usize; 2] {
    let swap = match rule {
        DoubleTribute::BySeat => gifts[0].0 != last,
        DoubleTribute::ByCard => value(gifts[1].1, level) > value(gifts[0].1, level),
    };
    if swap {
        [1, 0]
    } else {
        [0, 1]
    }
}

/// Who leads after the return: the payer of the biggest tribute card; equal
/// cards, the first of `payers` (clockwise from the first) that gave one.
pub fn leader(payers: &[u8], gifts: &[(u8, CardId)], level: Level) -> Option<u8> {
    let top = gifts.iter().map(|g| value(g.1, level)).max()?;
    payers.iter().copied().find(|p| gifts.iter().any(|g| g.0 == *p && value(g.1, level) == top))
}

/// Who pays and who receives after a deal with this finishing order
/// (first to last); `(payers, receivers)`, payers clockwise from the winner.
pub fn parties(order: &[u8]) -> (Vec<u8>, Vec<u8>) {
    let team = |s: u8| s % 2;
    let first = order[0];
    if team(order[1]) == team(first) {
        let mut payers = vec![order[2], order[3]];
        payers.sort_by_key(|s| (s + 4 - first) % 4);
        (payers, vec![order[0], order[1]])
    } else {
        (vec![order[3]], vec![first])
    }
}

/// Whether the payers resist: both big jokers where the rule wants them.
pub fn resisted(hands: &[Vec<CardId>], payers: &[u8], rule: ResistRule) -> bool {
    let big = |s: &u8| hands[usize::from(*s)].iter().filter(|c| natural(c.card()) == BIG_JOKER).count();
    match rule {
        ResistRule::OneHolder => payers.iter().any(|s| big(s) >= 2),
        ResistRule::PayingSide => payers.iter().map(big).sum::<usize>() >= 2,
    }
}

/// Whether `card` may be given at all (before "the highest" is checked).
fn may_give(card: CardId, wilds: Wilds, s: &GdSettings) -> Result<(), GuandanError> {
    if wilds.is_wild(card) {
        if !s.can_tribute_wild {
            return Err(GuandanError::TributeOfWild(card));
        }
    } else if natural(card.card()) == wilds.level.rank() && !s.tribute_level_rank {
        return Err(GuandanError::TributeOfLevelCard(card));
    }
    Ok(())
}

/// The cards `hand` may give as tribute: the highest allowed value; among
/// those, non-hearts first when `tribute_prefer_non_heart`.
pub fn tribute_choices(hand: &[CardId], wilds: Wilds, s: &GdSettings) -> Vec<CardId> {
    let level = wilds.level;
    let allowed: Vec<CardId> = hand.iter().copied().filter(|c| may_give(*c, wilds, s).is_ok()).collect();
    let Some(top) = allowed.iter().map(|c| value(*c, level)).max() else {
        return Vec::new();
    };
    let best: Vec<CardId> = allowed.into_iter().filter(|c| value(*c, level) == top).collect();
    let non_heart: Vec<CardId> =
        best.iter().copied().filter(|c| c.card().suit() != Some(Suit::Hearts)).collect();
    if s.tribute_prefer_non_heart && !non_heart.is_empty() {
        non_heart
    } else {
        best
    }
}

/// Checks a tribute card.
pub fn check_tribute(
    hand: &[CardId],
    card: CardId,
    wilds: Wilds,
    s: &GdSettings,
) -> Result<(), GuandanError> {
    if !hand.contains(&card) {
        return Err(GuandanError::NotInHand(card));
    }
    may_give(card, wilds, s)?;
    let choices = tribute_choices(hand, wilds, s);
    if choices.contains(&card) {
        return Ok(());
    }
    match choices.first() {
        Some(c) if value(*c, wilds.level) == value(card, wilds.level) => {
            Err(GuandanError::PreferNonHeart(card))
        }
        Some(c) => Err(GuandanError::NotHighest { card, highest: c.card().to_string() }),
        None => Err(GuandanError::NotHighest { card, highest: "none".into() }),
    }
}

/// Checks a return card: a single, never wild, never a level card (unless
/// `return_level_rank`), natural rank at most `tribute_return_max_rank`.
pub fn check_return(hand: &[CardId], card: CardId, wilds: Wilds, s: &GdSettings) -> Result<(), GuandanError> {
    if !hand.contains(&card) {
        return Err(GuandanError::NotInHand(card));
    }
    if wilds.is_wild(card) {
        return Err(GuandanError::ReturnOfWild(card));
    }
    let r = natural(card.card());
    if r == wilds.level.rank() && !s.return_level_rank {
        return Err(GuandanError::ReturnOfLevelCard(card));
    }
    if s.tribute_return_max_rank != 0 && r > s.tribute_return_max_rank {
        return Err(GuandanError::ReturnTooHigh { card, max: s.tribute_return_max_rank });
    }
    Ok(())
}

/// The cards `hand` may return. When no card meets the rules, the lowest
/// natural cards do (so that a return always exists).
pub fn return_choices(hand: &[CardId], wilds: Wilds, s: &GdSettings) -> Vec<CardId> {
    let strict: Vec<CardId> =
        hand.iter().copied().filter(|c| check_return(hand, *c, wilds, s).is_ok()).collect();
    if !strict.is_empty() {
        return strict;
    }
    let naturals = hand.iter().copied().filter(|c| !wilds.is_wild(*c));
    let low = naturals.clone().map(|c| value(c, wilds.level)).min();
    naturals.filter(|c| Some(value(*c, wilds.level)) == low).collect()
}

/// The value a tribute card is compared by (level order).
pub fn value(card: CardId, level: Level) -> u8 {
    order(natural(card.card()), level)
}
