//! Blackjack card arithmetic: card points, soft and hard totals, naturals and
//! the house drawing rule. Pure functions, shared by the plugin and its tests.

use claw_protocol::{CardId, Rank};

/// The points a card counts for with aces as 1: 2–9 at face value, tens and
/// pictures 10, an ace 1 (a total upgrades one ace to 11 when it fits).
/// Jokers are not in a blackjack shoe and count 0.
pub fn card_points(card: CardId) -> u32 {
    match card.card().rank() {
        Some(Rank::Ace) => 1,
        Some(r) if r.value() >= 10 => 10,
        Some(r) => u32::from(r.value()),
        None => 0,
    }
}

/// The best total of a hand and whether it is soft (an ace counted as 11).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HandTotal {
    /// The highest total not above 21 if one exists, else the hard total.
    pub total: u32,
    /// True when an ace counts as 11 in `total`.
    pub soft: bool,
}

impl HandTotal {
    /// Above 21.
    pub fn is_bust(self) -> bool {
        self.total > 21
    }
}

/// The total of a hand: the hard total (aces as 1), plus 10 when the hand
/// holds an ace and that keeps it at 21 or below (a soft total).
pub fn hand_total(cards: &[CardId]) -> HandTotal {
    let hard: u32 = cards.iter().map(|c| card_points(*c)).sum();
    let has_ace = cards.iter().any(|c| c.card().rank() == Some(Rank::Ace));
    if has_ace && hard + 10 <= 21 {
        HandTotal { total: hard + 10, soft: true }
    } else {
        HandTotal { total: hard, soft: false }
    }
}

/// A natural (blackjack): exactly two cards worth 21. A hand made by a split
/// is never a natural; callers check that separately.
pub fn is_two_card_21(cards: &[CardId]) -> bool {
    cards.len() == 2 && hand_total(cards).total == 21
}

/// Whether two cards may be split: same point value (so any two ten-valued
/// cards, e.g. K and Q, split; an ace pairs only with an ace).
pub fn is_pair(cards: &[CardId]) -> bool {
    matches!(cards, [a, b] if card_points(*a) == card_points(*b))
}

/// Whether the house draws another card: below 17, or on a soft 17 when the
/// table hits soft 17.
pub fn house_draws(cards: &[CardId], hit_soft_17: bool) -> bool {
    let t = hand_total(cards);
    t.total < 17 || (hit_soft_17 && t.total == 17 && t.soft)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cards(s: &str) -> Vec<CardId> {
        s.split_whitespace().map(|c| c.parse().unwrap()).collect()
    }

    #[test]
    fn totals() {
        assert_eq!(hand_total(&cards("As 6d")), HandTotal { total: 17, soft: true });
        assert_eq!(hand_total(&cards("As 6d Kc")), HandTotal { total: 17, soft: false });
        assert_eq!(hand_total(&cards("As Ad")), HandTotal { total: 12, soft: true });
        assert_eq!(hand_total(&cards("Ks Qd 5c")), HandTotal { total: 25, soft: false });
        assert!(hand_total(&cards("Ks Qd 5c")).is_bust());
        assert!(is_two_card_21(&cards("As Jd")));
        assert!(!is_two_card_21(&cards("7s 7d 7c")));
        assert!(is_pair(&cards("Ks Qd")));
        assert!(!is_pair(&cards("As Kd")));
    }

    #[test]
    fn house_rule() {
        assert!(!house_draws(&cards("As 6d"), false));
        assert!(house_draws(&cards("As 6d"), true));
        assert!(!house_draws(&cards("Ts 7d"), true));
        assert!(house_draws(&cards("Ts 6d"), false));
    }
}
