//! Playing cards: a face value ([`Card`]) and a physical card ([`CardId`]).
//!
//! A face value is one of the 52 standard cards or one of the two jokers,
//! coded in one byte. Games that use several packs (Guandan uses two) need to
//! tell the two `As` apart, so the deck, the commitments and the sealed boxes
//! all carry a [`CardId`]: the face code plus the pack it came from.
//!
//! Notation: rank `23456789TJQKA` followed by suit `cdhs` (`As`, `Td`); the
//! jokers are `BJ` (black, small) and `RJ` (red, big). A card from pack `p > 0`
//! is written with a `#p` suffix (`As#1`).

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A card suit. The order (clubs < diamonds < hearts < spades) is the
/// conventional bridge order, which Sam Gong's tiebreak also uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Suit {
    Clubs = 0,
    Diamonds = 1,
    Hearts = 2,
    Spades = 3,
}

impl Suit {
    pub const ALL: [Suit; 4] = [Suit::Clubs, Suit::Diamonds, Suit::Hearts, Suit::Spades];

    /// The one-letter notation: `c`, `d`, `h` or `s`.
    pub fn as_char(self) -> char {
        ['c', 'd', 'h', 's'][self as usize]
    }

    pub fn from_char(c: char) -> Option<Suit> {
        match c {
            'c' => Some(Suit::Clubs),
            'd' => Some(Suit::Diamonds),
            'h' => Some(Suit::Hearts),
            's' => Some(Suit::Spades),
            _ => None,
        }
    }

    /// 0 for clubs … 3 for spades.
    pub fn index(self) -> u8 {
        self as u8
    }
}

/// A card rank, `Two` (2) to `Ace` (14). Games that rank cards otherwise
/// (Dou Di Zhu's 2 above the ace, Sam Gong's ace as 1) map it themselves.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Rank {
    Two = 2,
    Three = 3,
    Four = 4,
    Five = 5,
    Six = 6,
    Seven = 7,
    Eight = 8,
    Nine = 9,
    Ten = 10,
    Jack = 11,
    Queen = 12,
    King = 13,
    Ace = 14,
}

impl Rank {
    pub const ALL: [Rank; 13] = [
        Rank::Two,
        Rank::Three,
        Rank::Four,
        Rank::Five,
        Rank::Six,
        Rank::Seven,
        Rank::Eight,
        Rank::Nine,
        Rank::Ten,
        Rank::Jack,
        Rank::Queen,
        Rank::King,
        Rank::Ace,
    ];

    /// 2 for a two … 14 for an ace.
    pub fn value(self) -> u8 {
        self as u8
    }

    pub fn from_value(v: u8) -> Option<Rank> {
        Rank::ALL.get(usize::from(v.checked_sub(2)?)).copied()
    }

    /// The one-letter notation: `2`–`9`, `T`, `J`, `Q`, `K`, `A`.
    pub fn as_char(self) -> char {
        b"23456789TJQKA"[usize::from(self.value() - 2)] as char
    }

    pub fn from_char(c: char) -> Option<Rank> {
        let i = "23456789TJQKA".find(c)?;
        Rank::ALL.get(i).copied()
    }
}

/// A face value: one of the 52 standard cards or a joker, in one byte.
///
/// Code layout: `(rank - 2) * 4 + suit` for standard cards (0..=51),
/// 52 for the black joker, 53 for the red joker.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Card(u8);

impl Card {
    /// Number of distinct face values (52 standard cards and two jokers).
    pub const FACES: u8 = 54;
    pub const BLACK_JOKER: Card = Card(52);
    pub const RED_JOKER: Card = Card(53);

    pub const fn new(rank: Rank, suit: Suit) -> Card {
        Card((rank as u8 - 2) * 4 + suit as u8)
    }

    /// The card with this code, if the code is in 0..=53.
    pub fn from_code(code: u8) -> Option<Card> {
        (code < Self::FACES).then_some(Card(code))
    }

    pub fn code(self) -> u8 {
        self.0
    }

    pub fn is_joker(self) -> bool {
        self.0 >= 52
    }

    /// The rank, or `None` for a joker.
    pub fn rank(self) -> Option<Rank> {
        if self.is_joker() {
            None
        } else {
            Rank::from_value(self.0 / 4 + 2)
        }
    }

    /// The suit, or `None` for a joker.
    pub fn suit(self) -> Option<Suit> {
        if self.is_joker() {
            None
        } else {
            Some(Suit::ALL[usize::from(self.0 % 4)])
        }
    }

    /// The 52 standard cards, 2c first, As last.
    pub fn standard_52() -> impl Iterator<Item = Card> {
        (0..52).map(Card)
    }
}

impl fmt::Display for Card {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.rank(), self.suit()) {
            (Some(r), Some(s)) => write!(f, "{}{}", r.as_char(), s.as_char()),
            _ if *self == Card::BLACK_JOKER => f.write_str("BJ"),
            _ => f.write_str("RJ"),
        }
    }
}

/// Why a card string did not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CardParseError {
    #[error("card {0:?}: expected rank 23456789TJQKA + suit cdhs, or BJ/RJ")]
    BadFace(String),
    #[error("card {0:?}: pack suffix must be #1..#255")]
    BadPack(String),
    #[error("card code {0} is out of range")]
    BadCode(u16),
}

impl FromStr for Card {
    type Err = CardParseError;

    fn from_str(s: &str) -> Result<Card, CardParseError> {
        match s {
            "BJ" => return Ok(Card::BLACK_JOKER),
            "RJ" => return Ok(Card::RED_JOKER),
            _ => {}
        }
        let mut chars = s.chars();
        match (chars.next(), chars.next(), chars.next()) {
            (Some(r), Some(su), None) => match (Rank::from_char(r), Suit::from_char(su)) {
                (Some(r), Some(su)) => Ok(Card::new(r, su)),
                _ => Err(CardParseError::BadFace(s.to_owned())),
            },
            _ => Err(CardParseError::BadFace(s.to_owned())),
        }
    }
}

/// A physical card: a face value and the pack it belongs to.
///
/// Encoded in two bytes as `pack * 54 + face code`; this is the `card_code`
/// that commitments and sealed boxes bind (SPEC.md §Cards).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct CardId(u16);

impl CardId {
    /// The largest pack index a `CardId` can hold.
    pub const MAX_PACK: u8 = 255;

    pub fn new(card: Card, pack: u8) -> CardId {
        CardId(u16::from(pack) * u16::from(Card::FACES) + u16::from(card.code()))
    }

    /// The card with this two-byte code; every code up to 255 * 54 + 53 is valid.
    pub fn from_code(code: u16) -> Result<CardId, CardParseError> {
        if code / u16::from(Card::FACES) <= u16::from(Self::MAX_PACK) {
            Ok(CardId(code))
        } else {
            Err(CardParseError::BadCode(code))
        }
    }

    pub fn code(self) -> u16 {
        self.0
    }

    pub fn card(self) -> Card {
        // The remainder is below 54, so it is a valid face code.
        Card((self.0 % u16::from(Card::FACES)) as u8)
    }

    pub fn pack(self) -> u8 {
        (self.0 / u16::from(Card::FACES)) as u8
    }

    /// A deck of `packs` packs, each the 52 standard cards plus, when
    /// `jokers`, the two jokers; pack by pack, in code order.
    pub fn deck(packs: u8, jokers: bool) -> Vec<CardId> {
        let faces = if jokers { Card::FACES } else { 52 };
        (0..packs).flat_map(|p| (0..faces).map(move |c| CardId::new(Card(c), p))).collect()
    }
}

impl From<Card> for CardId {
    /// The card from the first pack.
    fn from(card: Card) -> CardId {
        CardId::new(card, 0)
    }
}

impl fmt::Display for CardId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.pack() {
            0 => write!(f, "{}", self.card()),
            p => write!(f, "{}#{}", self.card(), p),
        }
    }
}

impl FromStr for CardId {
    type Err = CardParseError;

    fn from_str(s: &str) -> Result<CardId, CardParseError> {
        match s.split_once('#') {
            None => Ok(CardId::from(s.parse::<Card>()?)),
            Some((face, pack)) => {
                let card = face.parse::<Card>()?;
                let pack = pack
                    .parse::<u8>()
                    .ok()
                    .filter(|p| *p > 0 && pack.bytes().all(|b| b.is_ascii_digit()) && !pack.starts_with('0'))
                    .ok_or_else(|| CardParseError::BadPack(s.to_owned()))?;
                Ok(CardId::new(card, pack))
            }
        }
    }
}

macro_rules! serde_via_str {
    ($t:ty) => {
        impl Serialize for $t {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.collect_str(self)
            }
        }

        impl<'de> Deserialize<'de> for $t {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let s = <std::borrow::Cow<'de, str>>::deserialize(d)?;
                s.parse().map_err(serde::de::Error::custom)
            }
        }
    };
}

serde_via_str!(Card);
serde_via_str!(CardId);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_face_round_trips() {
        for code in 0..Card::FACES {
            let c = Card::from_code(code).unwrap();
            assert_eq!(c.to_string().parse::<Card>().unwrap(), c);
        }
        assert_eq!(Card::from_code(54), None);
    }

    #[test]
    fn notation() {
        assert_eq!(Card::new(Rank::Ace, Suit::Spades).to_string(), "As");
        assert_eq!(Card::new(Rank::Ten, Suit::Diamonds).to_string(), "Td");
        assert_eq!("2c".parse::<Card>().unwrap().code(), 0);
        assert_eq!("As".parse::<Card>().unwrap().code(), 51);
        assert_eq!("BJ".parse::<Card>().unwrap(), Card::BLACK_JOKER);
        assert_eq!("RJ".parse::<Card>().unwrap(), Card::RED_JOKER);
        for bad in ["", "A", "Asx", "1s", "Ax", "as", "bj", "10s"] {
            assert!(bad.parse::<Card>().is_err(), "{bad}");
        }
    }

    #[test]
    fn physical_cards() {
        let deck = CardId::deck(2, true);
        assert_eq!(deck.len(), 108);
        let mut seen = std::collections::HashSet::new();
        for id in &deck {
            assert!(seen.insert(*id));
            assert_eq!(id.to_string().parse::<CardId>().unwrap(), *id);
            assert_eq!(CardId::from_code(id.code()).unwrap(), *id);
        }
        assert_eq!("As#1".parse::<CardId>().unwrap().pack(), 1);
        for bad in ["As#0", "As#", "As#01", "As#256", "As#-1", "As#+1"] {
            assert!(bad.parse::<CardId>().is_err(), "{bad}");
        }
        assert!(CardId::from_code(u16::MAX).is_err());
        assert_eq!(CardId::deck(1, false).len(), 52);
    }

    #[test]
    fn serde_as_strings() {
        let id: CardId = "Kh#1".parse().unwrap();
        assert_eq!(serde_json::to_string(&id).unwrap(), "\"Kh#1\"");
        assert_eq!(serde_json::from_str::<CardId>("\"Kh#1\"").unwrap(), id);
        assert!(serde_json::from_str::<CardId>("\"Zz\"").is_err());
    }
}
