//! Guandan card values: ranks on the natural scale, the level (级牌) that
//! ranks just below the jokers, and the heart level cards that are wild
//! (逢人配).

use claw_protocol::{Card, CardId, Suit};
use serde::{Deserialize, Serialize};

use super::GuandanError;

/// Packs in a Guandan deck: 2 × 54 = 108 physical cards.
pub const PACKS: u8 = 2;
/// Physical cards in the deck.
pub const DECK_SIZE: usize = 108;
/// Natural rank of the small (black) joker on the source rules' scale.
pub const SMALL_JOKER: u8 = 15;
/// Natural rank of the big (red) joker.
pub const BIG_JOKER: u8 = 16;
/// The ace, the highest level.
pub const ACE: u8 = 14;
/// Slots in a [`Tally`]: ranks 2..=14 at 0..=12, the small joker at 13 and
/// the big joker at 14.
pub const SLOTS: usize = 15;

/// The rank being played (级牌), 2..=14 (ace). Serialised as the number.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(try_from = "u8", into = "u8")]
pub struct Level(u8);

impl Level {
    /// Every match starts at 2.
    pub const TWO: Level = Level(2);
    /// The last level.
    pub const ACE: Level = Level(ACE);

    /// The level `rank` (2..=14), if it is one.
    pub fn new(rank: u8) -> Option<Level> {
        (2..=ACE).contains(&rank).then_some(Level(rank))
    }

    /// 2..=14.
    pub fn rank(self) -> u8 {
        self.0
    }

    /// This level raised by `steps`, stopping at the ace.
    pub fn up(self, steps: u8) -> Level {
        Level(self.0.saturating_add(steps).min(ACE))
    }
}

impl TryFrom<u8> for Level {
    type Error = String;
    fn try_from(v: u8) -> Result<Level, String> {
        Level::new(v).ok_or_else(|| format!("level {v} is not 2..=14"))
    }
}

impl From<Level> for u8 {
    fn from(l: Level) -> u8 {
        l.0
    }
}

/// The natural rank of a face: 2..=14, 15 small joker, 16 big joker.
pub fn natural(card: Card) -> u8 {
    match card.rank() {
        Some(r) => r.value(),
        None if card == Card::BLACK_JOKER => SMALL_JOKER,
        None => BIG_JOKER,
    }
}

/// Ordering value of a natural rank for singles, pairs, triples, triples
/// with a pair and bombs: the level rank sits above the ace and below the
/// jokers (2..=14 except the level, level = 15, small joker 16, big joker 17).
pub fn order(rank: u8, level: Level) -> u8 {
    if rank == level.rank() {
        15
    } else if rank >= SMALL_JOKER {
        rank + 1
    } else {
        rank
    }
}

/// The slot of a natural rank in a [`Tally`].
pub fn slot(rank: u8) -> usize {
    usize::from(rank - 2)
}

/// The natural rank of a [`Tally`] slot.
pub fn rank_of_slot(slot: usize) -> u8 {
    slot as u8 + 2
}

/// Which physical cards are wild: the heart level cards of the first
/// `wild_count` packs (`wild_count` is the source rules' RuleConfig field, default 2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Wilds {
    /// The level being played.
    pub level: Level,
    /// 0, 1 or 2.
    pub count: u8,
}

impl Wilds {
    /// Whether this physical card is wild.
    pub fn is_wild(self, id: CardId) -> bool {
        let c = id.card();
        c.suit() == Some(Suit::Hearts) && natural(c) == self.level.rank() && id.pack() < self.count
    }
}

/// Counts of a group of cards: natural cards by rank slot and by suit, and the
/// number of wilds, which are not counted as naturals.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Tally {
    /// Natural (non-wild) cards per slot.
    pub by_rank: [u8; SLOTS],
    /// Natural cards per rank slot (0..13) and suit.
    pub by_suit: [[u8; 4]; 13],
    /// Wild cards.
    pub wilds: u8,
    /// All cards.
    pub len: u8,
}

impl Tally {
    /// Counts faces; `wild` says which of them are wild.
    pub fn of(cards: impl IntoIterator<Item = (Card, bool)>) -> Tally {
        let mut t = Tally::default();
        for (c, wild) in cards {
            t.len = t.len.saturating_add(1);
            if wild {
                t.wilds += 1;
                continue;
            }
            let s = slot(natural(c));
            t.by_rank[s] = t.by_rank[s].saturating_add(1);
            if let Some(suit) = c.suit() {
                t.by_suit[s][usize::from(suit.index())] += 1;
            }
        }
        t
    }

    /// Counts physical cards under these wild rules.
    pub fn of_ids(cards: &[CardId], wilds: Wilds) -> Tally {
        Tally::of(cards.iter().map(|c| (c.card(), wilds.is_wild(*c))))
    }

    /// Natural cards of this natural rank.
    pub fn count(&self, rank: u8) -> u8 {
        self.by_rank[slot(rank)]
    }

    /// Natural cards in all.
    pub fn naturals(&self) -> u8 {
        self.len - self.wilds
    }
}

/// Checks a group of physical cards from one player: not empty, each card
/// named once, every id in the two packs. Returns the faces.
pub fn check_ids(cards: &[CardId]) -> Result<(), GuandanError> {
    if cards.is_empty() {
        return Err(GuandanError::EmptyPlay);
    }
    let mut seen = [false; DECK_SIZE];
    for c in cards {
        let code = usize::from(c.code());
        if c.pack() >= PACKS {
            return Err(GuandanError::OutOfRange(*c));
        }
        if seen[code] {
            return Err(GuandanError::DuplicateCard(*c));
        }
        seen[code] = true;
    }
    Ok(())
}

/// Checks a group of faces (the source rules' `card_value` view): no face more often
/// than the two packs hold it.
pub fn check_faces(faces: &[Card]) -> Result<(), GuandanError> {
    if faces.is_empty() {
        return Err(GuandanError::EmptyPlay);
    }
    let mut n = [0u8; Card::FACES as usize];
    for f in faces {
        let k = &mut n[usize::from(f.code())];
        *k = k.saturating_add(1);
        if *k > PACKS {
            let count = faces.iter().filter(|g| *g == f).count();
            return Err(GuandanError::TooManyCopies { face: *f, count, max: PACKS });
        }
    }
    Ok(())
}

/// Short name of a natural rank: `2`…`A`, `BJ`, `RJ`.
pub fn rank_name(rank: u8) -> &'static str {
    const NAMES: [&str; 15] = ["2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K", "A", "BJ", "RJ"];
    NAMES.get(usize::from(rank.saturating_sub(2))).copied().unwrap_or("?")
}
