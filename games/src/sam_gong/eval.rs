//! Sam Gong hand values and the player-versus-banker comparison
//! (the source rules' HandEvaluator, decisions D8 and D10; see
//! docs/games/sam-gong.md §5).
//!
//! Value: the three cards' points summed mod 10, with A = 1, 2–9 at face value
//! and 10/J/Q/K = 0. Sam Gong (三公) beats every point hand. Equal hands go to
//! the D8 tiebreak: first the highest suit held (♠ > ♥ > ♦ > ♣), then the
//! highest rank held (K > Q > J > 10 > … > 2 > A); equal on both is a tie.
//! D10: Sam Gong against Sam Gong uses the same tiebreak. All integer.

use std::cmp::Ordering;
use std::fmt;

use claw_protocol::{Card, CardId, Rank, Suit};
use serde::{Deserialize, Serialize};

/// Which three-card hands count as Sam Gong (三公).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SamGongRule {
    /// The product rules: three 10-point cards (any of 10, J, Q, K). The default.
    #[default]
    TenValue,
    /// Traditional tables: three face cards (J, Q, K) only; 10-10-K is a plain 0.
    FaceCards,
}

/// A card's point value for the sum: A = 1, 2–9 face value, 10/J/Q/K = 0.
pub fn point(card: Card) -> u8 {
    match card.rank() {
        Some(Rank::Ace) => 1,
        Some(r) if r.value() <= 9 => r.value(),
        _ => 0,
    }
}

/// A card's rank for the D8 tiebreak: A = 1 (lowest), 2–10 face value,
/// J = 11, Q = 12, K = 13. Independent of [`point`] (the source rules' VALUE_RANK).
pub fn tiebreak_rank(card: Card) -> u8 {
    match card.rank() {
        Some(Rank::Ace) => 1,
        Some(r) => r.value(),
        None => 0,
    }
}

/// The suit rank for the D8 tiebreak: clubs 1 < diamonds 2 < hearts 3 < spades 4.
pub fn tiebreak_suit(card: Card) -> u8 {
    card.suit().map_or(0, |s| s.index() + 1)
}

fn is_ten_value(card: Card) -> bool {
    matches!(card.rank(), Some(Rank::Ten | Rank::Jack | Rank::Queen | Rank::King))
}

fn is_face(card: Card) -> bool {
    matches!(card.rank(), Some(Rank::Jack | Rank::Queen | Rank::King))
}

/// What three cards are worth, with the tiebreak keys precomputed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct HandValue {
    /// Sum of points mod 10 (0 for a Sam Gong).
    pub points: u8,
    /// Whether the hand is a Sam Gong under the table's rule.
    pub sam_gong: bool,
    /// D8 step 1: the highest suit among the cards (1 = ♣ … 4 = ♠).
    pub top_suit: u8,
    /// D8 step 2: the highest tiebreak rank among the cards (1 = A … 13 = K).
    pub top_rank: u8,
}

impl HandValue {
    /// Evaluates three cards under `rule`.
    pub fn of(cards: &[Card; 3], rule: SamGongRule) -> HandValue {
        let sum: u32 = cards.iter().map(|c| u32::from(point(*c))).sum();
        let sam_gong = match rule {
            SamGongRule::TenValue => cards.iter().all(|c| is_ten_value(*c)),
            SamGongRule::FaceCards => cards.iter().all(|c| is_face(*c)),
        };
        HandValue {
            points: (sum % 10) as u8,
            sam_gong,
            top_suit: cards.iter().map(|c| tiebreak_suit(*c)).max().unwrap_or(0),
            top_rank: cards.iter().map(|c| tiebreak_rank(*c)).max().unwrap_or(0),
        }
    }

    /// The hand type as the source rules name it: `sam-gong`, or the points `0`–`9`.
    pub fn hand_type(&self) -> String {
        if self.sam_gong {
            "sam-gong".to_owned()
        } else {
            self.points.to_string()
        }
    }

    /// The payout multiple N when this hand beats the banker (the source
    /// rules' payout table): Sam Gong 3, nine 2, anything else (0–8) 1.
    pub fn multiplier(&self) -> u64 {
        if self.sam_gong {
            3
        } else if self.points == 9 {
            2
        } else {
            1
        }
    }

    fn key(&self) -> (bool, u8, u8, u8) {
        (self.sam_gong, self.points, self.top_suit, self.top_rank)
    }
}

impl Ord for HandValue {
    /// Sam Gong first, then points, then D8: top suit, then top rank.
    fn cmp(&self, other: &Self) -> Ordering {
        self.key().cmp(&other.key())
    }
}

impl PartialOrd for HandValue {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// A player's result against the banker.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Outcome {
    /// The player's hand is higher.
    Win,
    /// The banker's hand is higher.
    Lose,
    /// Equal after the D8 tiebreak: the call is returned.
    Tie,
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Outcome::Win => "win",
            Outcome::Lose => "lose",
            Outcome::Tie => "tie",
        })
    }
}

/// Compares a player's hand with the banker's (the source rules'
/// HandEvaluator.compare).
pub fn compare(player: &[Card; 3], banker: &[Card; 3], rule: SamGongRule) -> Outcome {
    match HandValue::of(player, rule).cmp(&HandValue::of(banker, rule)) {
        Ordering::Greater => Outcome::Win,
        Ordering::Less => Outcome::Lose,
        Ordering::Equal => Outcome::Tie,
    }
}

/// Parses a hand written as three cards, e.g. `"Kc Qd Js"` (also accepts
/// `10` for ten and the suit symbols ♠♥♦♣). For tests, docs and tools.
pub fn parse_hand(s: &str) -> Option<[Card; 3]> {
    let cards: Vec<Card> = s.split_whitespace().map(parse_card).collect::<Option<_>>()?;
    let hand: [Card; 3] = cards.try_into().ok()?;
    let distinct = hand[0] != hand[1] && hand[0] != hand[2] && hand[1] != hand[2];
    distinct.then_some(hand)
}

fn parse_card(s: &str) -> Option<Card> {
    let s = s.replace("10", "T");
    let mut chars = s.chars();
    let rank = Rank::from_char(chars.next()?.to_ascii_uppercase())?;
    let suit = match chars.next()? {
        '♠' => Suit::Spades,
        '♥' => Suit::Hearts,
        '♦' => Suit::Diamonds,
        '♣' => Suit::Clubs,
        c => Suit::from_char(c.to_ascii_lowercase())?,
    };
    chars.next().is_none().then_some(Card::new(rank, suit))
}

/// The three faces of three dealt cards.
pub fn faces(cards: &[CardId; 3]) -> [Card; 3] {
    [cards[0].card(), cards[1].card(), cards[2].card()]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn h(s: &str) -> [Card; 3] {
        parse_hand(s).unwrap()
    }

    #[test]
    fn points_and_sam_gong() {
        let v = HandValue::of(&h("Kc Qd Js"), SamGongRule::TenValue);
        assert!(v.sam_gong && v.points == 0);
        let v = HandValue::of(&h("Tc Td Ks"), SamGongRule::TenValue);
        assert!(v.sam_gong);
        let v = HandValue::of(&h("Tc Td Ks"), SamGongRule::FaceCards);
        assert!(!v.sam_gong && v.points == 0);
        assert_eq!(HandValue::of(&h("Ac 2d 8s"), SamGongRule::TenValue).points, 1);
        assert_eq!(HandValue::of(&h("9c 9d 9s"), SamGongRule::TenValue).points, 7);
        assert_eq!(HandValue::of(&h("As 4h 4d"), SamGongRule::TenValue).points, 9);
    }

    #[test]
    fn parse() {
        assert_eq!(parse_hand("10♠ J♥ Q♦"), parse_hand("Ts Jh Qd"));
        assert!(parse_hand("Ks Ks Qd").is_none());
        assert!(parse_hand("Ks Qd").is_none());
        assert!(parse_hand("Ks Qd Zz").is_none());
    }
}
