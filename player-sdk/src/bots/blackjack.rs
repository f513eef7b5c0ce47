//! Blackjack: basic strategy (multi-deck, dealer stands on soft 17).

use claw_protocol::{Card, CardId, Rank};
use rand_core::RngCore;
use serde_json::Value;

use super::{action_type, find_option, playable, with_amount, BotError, RandomBot, Strategy, TurnView};

/// What basic strategy says for a hand against the dealer's up card.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Play {
    /// Take a card.
    Hit,
    /// Take no more cards.
    Stand,
    /// Double if allowed, otherwise hit.
    DoubleOrHit,
    /// Double if allowed, otherwise stand (soft 18 against 3–6).
    DoubleOrStand,
    /// Split the pair.
    Split,
    /// Surrender if allowed, otherwise hit.
    SurrenderOrHit,
}

/// Blackjack value of a card: 2–10 as printed, faces 10, ace 11 (softened
/// by [`hand_total`]); jokers are not used in Blackjack and count 0.
pub fn card_value(card: Card) -> u8 {
    match card.rank() {
        Some(Rank::Ace) => 11,
        Some(r) if r.value() >= 10 => 10,
        Some(r) => r.value(),
        None => 0,
    }
}

/// The best total of a hand and whether it is soft (an ace counted as 11).
pub fn hand_total(cards: &[Card]) -> (u8, bool) {
    let mut total: u32 = cards.iter().map(|c| u32::from(card_value(*c))).sum();
    let mut aces = cards.iter().filter(|c| c.rank() == Some(Rank::Ace)).count();
    while total > 21 && aces > 0 {
        total -= 10;
        aces -= 1;
    }
    (total.min(255) as u8, aces > 0)
}

/// Basic strategy for `cards` against the dealer's up card `up`. Doubling,
/// splitting and surrender fall back (see [`Play`]) when not offered.
pub fn basic_strategy(cards: &[Card], up: Card) -> Play {
    let d = card_value(up); // 2..=11
    let (total, soft) = hand_total(cards);
    if cards.len() == 2 && cards[0].rank() == cards[1].rank() {
        let v = card_value(cards[0]);
        let split = match v {
            11 | 8 => true,
            9 => matches!(d, 2..=6 | 8 | 9),
            7 | 2 | 3 => (2..=7).contains(&d),
            6 => (2..=6).contains(&d),
            4 => (5..=6).contains(&d),
            _ => false,
        };
        if split {
            return Play::Split;
        }
    }
    if soft && total <= 21 {
        return match total {
            13 | 14 if (5..=6).contains(&d) => Play::DoubleOrHit,
            15 | 16 if (4..=6).contains(&d) => Play::DoubleOrHit,
            17 if (3..=6).contains(&d) => Play::DoubleOrHit,
            18 if (3..=6).contains(&d) => Play::DoubleOrStand,
            18 if matches!(d, 2 | 7 | 8) => Play::Stand,
            18 => Play::Hit,
            t if t >= 19 => Play::Stand,
            _ => Play::Hit,
        };
    }
    match total {
        0..=8 => Play::Hit,
        9 if (3..=6).contains(&d) => Play::DoubleOrHit,
        10 if (2..=9).contains(&d) => Play::DoubleOrHit,
        11 if d <= 10 => Play::DoubleOrHit,
        9..=11 => Play::Hit,
        12 if (4..=6).contains(&d) => Play::Stand,
        12 => Play::Hit,
        16 if d >= 9 => Play::SurrenderOrHit,
        15 if d == 10 => Play::SurrenderOrHit,
        13..=16 if d <= 6 => Play::Stand,
        13..=16 => Play::Hit,
        _ => Play::Stand,
    }
}

/// Basic strategy; bets the table minimum, never takes insurance.
#[derive(Debug, Clone, Copy, Default)]
pub struct BasicStrategy;

impl Strategy for BasicStrategy {
    fn name(&self) -> &'static str {
        "simple"
    }

    fn choose(&self, turn: &TurnView<'_>, rng: &mut dyn RngCore) -> Result<Value, BotError> {
        let options = playable(turn.actions);
        if options.is_empty() {
            return Err(BotError::NoActions);
        }
        // Betting round: the minimum bet.
        if let Some(bet) = find_option(turn.actions, &["bet"]) {
            return Ok(match bet.range {
                Some((lo, _)) => with_amount(bet, lo),
                None => bet.action.clone(),
            });
        }
        // Insurance: always decline.
        if let Some(o) = find_option(turn.actions, &["no-insurance"]) {
            return Ok(o.action.clone());
        }
        let (cards, up) = match current_hand(turn) {
            Some(x) => x,
            None => return RandomBot.choose(turn, rng),
        };
        let wanted: &[&str] = match basic_strategy(&cards, up) {
            Play::Hit => &["hit", "stand"],
            Play::Stand => &["stand", "hit"],
            Play::DoubleOrHit => &["double", "hit", "stand"],
            Play::DoubleOrStand => &["double", "stand", "hit"],
            Play::Split => {
                // Split pairs; when splitting is not offered play the total.
                let (total, _) = hand_total(&cards);
                if total >= 17 {
                    &["split", "stand", "hit"]
                } else {
                    &["split", "hit", "stand"]
                }
            }
            Play::SurrenderOrHit => &["surrender", "hit", "stand"],
        };
        match find_option(turn.actions, wanted) {
            Some(o) => Ok(o.action.clone()),
            None => {
                // Anything else offered (even money, …): take the first
                // non-insurance option deterministically.
                let o = options
                    .iter()
                    .find(|o| action_type(&o.action) != Some("insurance"))
                    .unwrap_or(&options[0]);
                Ok(o.action.clone())
            }
        }
    }
}

/// The cards of the hand being played and the dealer's up card, read from
/// the public state (player hands are dealt face up in Blackjack).
fn current_hand(turn: &TurnView<'_>) -> Option<(Vec<Card>, Card)> {
    let ps = turn.public_state;
    let hand = ps.get("current_hand")?.as_u64()?;
    let cards = ps.pointer(&format!("/seats/{}/hands/{hand}/cards", turn.seat.0))?.as_array()?;
    let cards: Vec<Card> = cards.iter().map(parse_card).collect::<Option<_>>()?;
    let up = parse_card(ps.pointer("/house/cards/0")?)?;
    Some((cards, up))
}

fn parse_card(v: &Value) -> Option<Card> {
    v.as_str()?.parse::<CardId>().ok().map(|c| c.card())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(s: &str) -> Card {
        s.parse().unwrap()
    }

    fn h(s: &[&str]) -> Vec<Card> {
        s.iter().map(|x| c(x)).collect()
    }

    #[test]
    fn totals() {
        assert_eq!(hand_total(&h(&["As", "6d"])), (17, true));
        assert_eq!(hand_total(&h(&["As", "6d", "Tc"])), (17, false));
        assert_eq!(hand_total(&h(&["As", "Ad"])), (12, true));
        assert_eq!(hand_total(&h(&["Ks", "Qd", "2c"])), (22, false));
    }

    #[test]
    fn basic_strategy_table() {
        assert_eq!(basic_strategy(&h(&["8s", "8d"]), c("Tc")), Play::Split);
        assert_eq!(basic_strategy(&h(&["As", "Ad"]), c("6c")), Play::Split);
        assert_eq!(basic_strategy(&h(&["Ts", "Kd"]), c("6c")), Play::Stand);
        assert_eq!(basic_strategy(&h(&["6s", "5d"]), c("6c")), Play::DoubleOrHit);
        assert_eq!(basic_strategy(&h(&["Ts", "6d"]), c("Ac")), Play::SurrenderOrHit);
        assert_eq!(basic_strategy(&h(&["Ts", "6d"]), c("5c")), Play::Stand);
        assert_eq!(basic_strategy(&h(&["Ts", "2d"]), c("3c")), Play::Hit);
        assert_eq!(basic_strategy(&h(&["As", "7d"]), c("9c")), Play::Hit);
        assert_eq!(basic_strategy(&h(&["As", "7d"]), c("4c")), Play::DoubleOrStand);
        assert_eq!(basic_strategy(&h(&["As", "7d"]), c("7c")), Play::Stand);
        assert_eq!(basic_strategy(&h(&["2s", "3d"]), c("7c")), Play::Hit);
        assert_eq!(basic_strategy(&h(&["Ts", "7d", "2c"]), c("Ac")), Play::Stand);
    }
}
