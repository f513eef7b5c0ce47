//! The hand vocabulary: deal targets, faces, chip parties and moves, hand
//! events, results and action options. Defined once here and used as they
//! are by the games' rules, the engine, the SDK and the auditor, so what the
//! rules produce and what the transcript announces compare as typed values.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::card::CardId;
use crate::ids::{Chips, Seat};

/// Where a dealt card goes: `{"to": "player", "seat": 2}`, `{"to": "community"}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", tag = "to", content = "seat")]
pub enum DealTo {
    /// One player; sealed to them when face down.
    Player(Seat),
    /// The table (Hold'em board, Dou Di Zhu kitty).
    Community,
    /// Burned: committed, never shown before the reveal.
    Burn,
    /// The house hand (Blackjack dealer).
    House,
}

/// Whether a card is shown to everyone at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CardFace {
    /// Shown to everyone: the opening is published.
    Up,
    /// Hidden: sealed to its player, or only committed.
    Down,
}

/// A chip account of a hand: `{"kind": "seat", "seat": 1}`, `{"kind": "house"}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", tag = "kind", content = "seat")]
pub enum ChipParty {
    /// A player.
    Seat(Seat),
    /// The house bank (Blackjack's dealer), run by the dealer node.
    House,
}

/// Debit or credit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ChipOp {
    /// Chips taken from the party.
    Debit,
    /// Chips given to the party.
    Credit,
}

/// One chip movement: what a game asks for, what the engine has the chip
/// service run and what a `chips` event carries. `P` is whose chips: a
/// [`ChipParty`] of the hand, or an account once the dealer resolved it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChipMove<P = ChipParty> {
    /// Debit or credit.
    pub op: ChipOp,
    /// Whose chips.
    pub party: P,
    /// How many.
    pub amount: Chips,
    /// The game's reason (`small-blind`, `call`, `pot`).
    pub reason: String,
}

impl<P> ChipMove<P> {
    /// Takes `amount` from `party`.
    pub fn debit(party: P, amount: Chips, reason: impl Into<String>) -> ChipMove<P> {
        ChipMove { op: ChipOp::Debit, party, amount, reason: reason.into() }
    }

    /// Gives `amount` to `party`.
    pub fn credit(party: P, amount: Chips, reason: impl Into<String>) -> ChipMove<P> {
        ChipMove { op: ChipOp::Credit, party, amount, reason: reason.into() }
    }

    /// The change to the party's chips: `-amount` for a debit, `+amount` for a credit.
    pub fn delta(&self) -> i128 {
        match self.op {
            ChipOp::Debit => -i128::from(self.amount.0),
            ChipOp::Credit => i128::from(self.amount.0),
        }
    }
}

/// One dealt card: the deck position it took, where it went, its face and
/// the card. `C` is [`CardId`] for the rules (they know every card) and
/// `Option<CardId>` for a viewer of the transcript (cards it cannot see yet
/// are `None`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct DealtCard<C = CardId> {
    /// The deck position (strictly increasing over the hand, from 0).
    pub position: u16,
    /// Who gets it.
    pub target: DealTo,
    /// Up or down.
    pub face: CardFace,
    /// The card.
    pub card: C,
}

/// Something a hand did that the dealer carries out and publishes, in the
/// rules' order: the replay of the rules gives `HandEvent<CardId>`, the
/// transcript announces `HandEvent<Option<CardId>>`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", tag = "type")]
pub enum HandEvent<C = CardId> {
    /// Cards dealt, positions in increasing order. `phase` is the game's
    /// name for the deal (`hole`, `flop`, `hit`, `kitty`).
    Dealt {
        /// The game's phase name.
        phase: String,
        /// The cards, in position order.
        cards: Vec<DealtCard<C>>,
    },
    /// One chip movement.
    Chip(ChipMove),
    /// Face-down cards opened to everyone now.
    Reveal {
        /// Positions opened, in the order the game asked.
        positions: Vec<u16>,
    },
    /// A dealt card moved from `from`'s hand to `to`'s: its opening sealed to
    /// `to`, or shown to everyone when `face` is up.
    Transfer {
        /// The deck position.
        position: u16,
        /// The giver.
        from: Seat,
        /// The receiver.
        to: Seat,
        /// Up: shown to everyone; down: only to `to`.
        face: CardFace,
    },
}

impl<C> HandEvent<C> {
    /// What kind of event this is, for people (`deal`, `chip movement`).
    pub fn kind(&self) -> &'static str {
        match self {
            HandEvent::Dealt { .. } => "deal",
            HandEvent::Chip(_) => "chip movement",
            HandEvent::Reveal { .. } => "reveal",
            HandEvent::Transfer { .. } => "card transfer",
        }
    }
}

impl HandEvent {
    /// Whether the transcript's announcement `a` says what this event of the
    /// rules says, card for card (a card the announcement leaves unknown
    /// does not match).
    pub fn announced_as(&self, a: &HandEvent<Option<CardId>>) -> bool {
        match (self, a) {
            (HandEvent::Dealt { phase, cards }, HandEvent::Dealt { phase: p, cards: c }) => {
                phase == p
                    && cards.len() == c.len()
                    && cards.iter().zip(c).all(|(r, a)| {
                        r.position == a.position
                            && r.target == a.target
                            && r.face == a.face
                            && a.card == Some(r.card)
                    })
            }
            (HandEvent::Chip(r), HandEvent::Chip(a)) => r == a,
            (HandEvent::Reveal { positions }, HandEvent::Reveal { positions: p }) => positions == p,
            (
                HandEvent::Transfer { position, from, to, face },
                HandEvent::Transfer { position: p, from: f, to: t, face: fc },
            ) => position == p && from == f && to == t && face == fc,
            _ => false,
        }
    }
}

/// What a finished hand produced (`game-end`'s `result`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HandResult {
    /// Seats that won something, in seat order.
    pub winners: Vec<Seat>,
    /// Net change per seat (indexed by seat): credits minus debits over the hand.
    pub net: Vec<i64>,
    /// Net change of the house bank (0 when the game has no house).
    pub house_net: i64,
    /// Chips kept by the game as rake, paid to the dealer's account.
    /// `sum(net) + house_net + rake == 0`.
    pub rake: Chips,
    /// A short human-readable summary (hand names, scores).
    pub summary: String,
}

/// An action the player to act may take (`your-turn`'s `actions`). `A` is
/// the game's typed action for the rules, JSON on the wire.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ActionOption<A = Value> {
    /// A representative action. For amount ranges this carries the minimum.
    pub action: A,
    /// Chips this action moves from the player now (for ranges: at minimum).
    pub cost: Chips,
    /// Whether the player's remaining chips cover `cost`.
    pub affordable: bool,
    /// Inclusive amount range for bet/raise-style actions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub range: Option<(Chips, Chips)>,
}
