//! The GamePlugin contract: what a game must provide so that the engine can
//! deal it, the dealer can run it and an auditor can replay it.
//!
//! A plugin is pure: it never does I/O, never reads a clock and never draws
//! randomness. The engine drives a hand like this:
//!
//! 1. `create_game(settings, players, memory)` → state, then `start(state)`
//!    → pending actions (blinds/antes as debits, the first deal as a `Deal`).
//! 2. The engine executes pending actions in order. A `Deal` takes the next
//!    deck positions strictly in order and hands the cards back with
//!    `receive_cards` (this is also the post-deal hook, e.g. Blackjack's peek),
//!    which may return more pending actions.
//! 3. While `!is_over`, `to_act` names the seat whose turn it is; its action
//!    goes through `apply` (which validates first and leaves the state
//!    untouched on error) and returns more pending actions.
//! 4. When `is_over`, `result` gives winners, net changes and the rake, and
//!    `memory_after` what the next hand at this table needs to know (button,
//!    banker rotation).

pub use claw_protocol::hand::{
    ActionOption, CardFace, ChipMove, ChipOp, ChipParty, DealTo, DealtCard, HandEvent, HandResult,
};
use claw_protocol::messages::RevealPolicy;
use claw_protocol::{CardId, Chips, PlayerId, Seat};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use std::fmt::Debug;

/// Static facts about a game.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GameMeta {
    /// Registry name, e.g. `texas-holdem`.
    pub name: &'static str,
    pub display_name: &'static str,
    pub min_players: u8,
    pub max_players: u8,
    /// Rules version; part of the game-start config hash.
    pub version: &'static str,
    /// A house bank plays against the seats (Blackjack's dealer): its rooms
    /// are granted a house bankroll.
    #[serde(default)]
    pub house: bool,
    /// The reveal policy of a room that names none.
    #[serde(default = "full_reveal")]
    pub default_reveal: RevealPolicy,
    /// A table under its minimum player count for this long is dissolved by
    /// default (seconds; 0 = never).
    #[serde(default)]
    pub dissolve_after_secs: u64,
    /// The poker variant the game is, for the hand-history formats poker
    /// tracking tools import; `None`: only the readable text history.
    #[serde(default)]
    pub poker_variant: Option<PokerVariant>,
    /// The strength levels of the game's own AI (`ai_seats.level`, 1 to
    /// this); 0: the game has one AI and no level to choose.
    #[serde(default)]
    pub ai_levels: u8,
    /// Whether a room of the game may deal dealer-blind (`deal = "blind"`).
    #[serde(default)]
    pub blind: BlindDeal,
    /// A room's default ready check before a match starts and rematch vote
    /// at its end, in seconds (0: none), for games whose tables ask for
    /// them (Guandan's room: READY_CHECK, VOTE_PHASE).
    #[serde(default)]
    pub match_votes_secs: u64,
    /// How many player turns a live spectator trails the table by default
    /// (`watch_delay`).
    #[serde(default = "default_watch_delay")]
    pub watch_delay: u32,
}

fn default_watch_delay() -> u32 {
    5
}

/// Whether a game deals dealer-blind (docs/blind-deal.md §II.1), and what
/// stands in the way when it does not.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum BlindDeal {
    /// Every card goes face down to a player or the board and is shown only
    /// by a face-up deal or a reveal of positions the rules name.
    Offered,
    /// A house hand the dealer plays by rule (Blackjack).
    HouseHand,
    /// A play names cards whose positions only their owner knows.
    OwnerOpening,
    /// A private card moves to another owner (tribute and return).
    Transfer,
    /// Not offered (a game that says nothing).
    #[default]
    NotOffered,
}

/// A poker variant as the hand-history formats of tracking tools
/// (PokerStars text, Open Hand History JSON) name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PokerVariant {
    /// No-limit Texas Hold'em.
    NoLimitHoldem,
}

fn full_reveal() -> RevealPolicy {
    RevealPolicy::Full
}

impl GameMeta {
    /// A game without a house, revealing everything at hand end, never
    /// dissolving an under-filled table, not a poker variant.
    pub const fn new(
        name: &'static str,
        display_name: &'static str,
        min_players: u8,
        max_players: u8,
        version: &'static str,
    ) -> GameMeta {
        GameMeta {
            name,
            display_name,
            min_players,
            max_players,
            version,
            house: false,
            default_reveal: RevealPolicy::Full,
            dissolve_after_secs: 0,
            poker_variant: None,
            ai_levels: 0,
            blind: BlindDeal::NotOffered,
            match_votes_secs: 0,
            watch_delay: 5,
        }
    }
}

/// One player in a hand, in seat order (clockwise).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlayerInfo {
    pub id: PlayerId,
    /// Chips the player can put into this hand (their balance at hand start,
    /// after the dealer's fixed commission).
    pub balance: Chips,
}

/// One card the plugin asks the engine to deal.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct DealSpec {
    pub target: DealTo,
    pub face: CardFace,
}

/// Work the plugin hands back to the engine (deals) or the dealer (chips).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", tag = "type")]
pub enum PendingAction {
    /// Deal cards now, in this order, taking the next deck positions. `phase`
    /// names the deal for the players (`hole`, `flop`, `turn`, `hit`, `kitty`).
    Deal { phase: String, cards: Vec<DealSpec> },
    /// Take chips from a party (a bet, a blind, a call) or give chips to it
    /// (a pot won, a bet returned).
    Chip(ChipMove),
    /// Reveal cards that were dealt face down, now, to everyone (Dou Di Zhu's
    /// kitty when the landlord takes it, Blackjack's hole card). The engine
    /// publishes their openings.
    Reveal { positions: Vec<u16> },
    /// Move a dealt card from one player's hand to another's (Guandan's
    /// tribute and return). `from` must hold `position` now; `face` says
    /// whether the card is shown to everyone (`up`) or only to `to`.
    Transfer { position: u16, from: Seat, to: Seat, face: CardFace },
}

impl PendingAction {
    /// Take `amount` from `party`.
    pub fn debit(party: ChipParty, amount: Chips, reason: impl Into<String>) -> PendingAction {
        PendingAction::Chip(ChipMove::debit(party, amount, reason))
    }

    /// Give `amount` to `party`.
    pub fn credit(party: ChipParty, amount: Chips, reason: impl Into<String>) -> PendingAction {
        PendingAction::Chip(ChipMove::credit(party, amount, reason))
    }
}

/// A finished hand's settlement as typed data, per game: what an auditor
/// compares field by field instead of the free-text `summary` and `reason`s.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", tag = "game")]
pub enum GameDetails {
    /// Sam Gong: the full settlement (multipliers, losers' total, rake base).
    SamGong(crate::sam_gong::SamGongDetails),
    /// Blackjack: every hand's outcome and payout, insurance.
    Blackjack(crate::blackjack::BlackjackDetails),
    /// Texas Hold'em: every pot and who won what of it.
    TexasHoldem(crate::texas_holdem::HoldemDetails),
    /// Dou Di Zhu: bid, bombs, spring, multiplier.
    DouDiZhu(crate::dou_di_zhu::DdzDetails),
    /// Guandan: level played, tribute, finishing order, levels won, match end.
    Guandan(crate::guandan::GdDetails),
}

/// Why the plugin refused something.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", tag = "code", content = "reason")]
pub enum GameError {
    #[error("not your turn")]
    NotYourTurn,
    #[error("the hand is over")]
    HandOver,
    #[error("illegal action: {0}")]
    Illegal(String),
    #[error("bad amount: {0}")]
    BadAmount(String),
    #[error("card not in hand: {0}")]
    CardNotInHand(String),
    #[error("malformed action: {0}")]
    Malformed(String),
    #[error("bad settings: {0}")]
    BadSettings(String),
    #[error("bad players: {0}")]
    BadPlayers(String),
    #[error("unexpected cards from the engine: {0}")]
    BadDeal(String),
    #[error("unknown game: {0}")]
    UnknownGame(String),
}

/// Why the dealer ends a game's match from outside its rules (the rules
/// never read a clock nor see a connection): the next hand carries the
/// request in its table memory ([`GamePlugin::end_match`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MatchStop {
    /// The match ran longer than the game's time limit ([`GamePlugin::match_time_limit`]).
    Timeout,
    /// The player of `seat` (its seat in the match's last hand) left the
    /// room past its reconnect window, or said leave.
    Left {
        /// The seat that left.
        seat: Seat,
    },
}

/// The rules of one game.
pub trait GamePlugin: Send + Sync + 'static {
    /// Everything the rules know about a hand in progress, hidden cards
    /// included. Never sent to players; `public_state` is.
    type State: Clone + Debug + Serialize + DeserializeOwned + Send + Sync;
    /// A player's move, as it travels on the wire:
    /// `{"type": "raise", "amount": 40}` (serde tag `type`, kebab-case).
    type Action: Clone + Debug + PartialEq + Serialize + DeserializeOwned + Send + Sync;
    /// Room settings for this game (blinds, variants, tiers). `Default` is a
    /// playable table.
    type Settings: Clone + Debug + Default + Serialize + DeserializeOwned + Send + Sync;
    /// What carries over from one hand to the next at a table (button,
    /// banker rotation). Part of the signed game-start so replays see it.
    type Memory: Clone + Debug + Default + Serialize + DeserializeOwned + Send + Sync;

    fn meta(&self) -> GameMeta;

    /// Checks settings before a room is created.
    fn validate_settings(&self, settings: &Self::Settings) -> Result<(), GameError>;

    /// The full deck for this game, in a canonical order (before shuffle).
    fn create_deck(&self, settings: &Self::Settings) -> Vec<CardId>;

    /// A scripted deck order for hand number `hand_number` (0-based), when
    /// the settings ask for one (Sam Gong's tutorial). The engine then skips
    /// the shuffle and the transcript says the deck was fixed.
    fn scripted_deck(&self, _settings: &Self::Settings, _hand_number: u64) -> Option<Vec<CardId>> {
        None
    }

    /// The initial state of a hand. `players` are in seat order.
    fn create_game(
        &self,
        settings: &Self::Settings,
        players: &[PlayerInfo],
        memory: &Self::Memory,
    ) -> Result<Self::State, GameError>;

    /// Start actions: blinds and antes (debits), then the first deal.
    fn start(&self, state: &mut Self::State) -> Result<Vec<PendingAction>, GameError>;

    /// The engine dealt these cards for the last `Deal`, in order. Also the
    /// post-deal hook (Blackjack's peek); may return more pending actions.
    fn receive_cards(
        &self,
        state: &mut Self::State,
        cards: &[DealtCard],
    ) -> Result<Vec<PendingAction>, GameError>;

    /// The seat whose action the hand waits for, if any.
    fn to_act(&self, state: &Self::State) -> Option<Seat>;

    /// Whether `seat` may take `action` now. Never mutates.
    fn validate(&self, state: &Self::State, seat: Seat, action: &Self::Action) -> Result<(), GameError>;

    /// Validates, then applies. On error the state is unchanged.
    fn apply(
        &self,
        state: &mut Self::State,
        seat: Seat,
        action: &Self::Action,
    ) -> Result<Vec<PendingAction>, GameError>;

    fn is_over(&self, state: &Self::State) -> bool;

    /// The result, once `is_over`.
    fn result(&self, state: &Self::State) -> Option<HandResult>;

    /// What the player to act may do, with costs.
    fn valid_actions(&self, state: &Self::State) -> Vec<ActionOption<Self::Action>>;

    /// What everyone at the table may see. Never a hidden card.
    fn public_state(&self, state: &Self::State) -> serde_json::Value;

    /// The phase name `public_state` puts under its `"phase"` key, exactly
    /// (`your-turn` carries it), or None when it has no such key. Typed so
    /// that the engine need not build the public state to read it.
    fn phase(&self, state: &Self::State) -> Option<&'static str>;

    /// Every card `public_state` names (played cards, shown hands, face-up
    /// cards): exactly the card codes found among its strings, in any order.
    /// Under the deferred reveal policy the engine publishes, at hand end,
    /// the openings of the face-down dealt cards among them (showdown
    /// hands, played cards); the face-up and revealed ones are open already.
    fn shown_cards(&self, state: &Self::State) -> Vec<CardId>;

    /// The cards `action` plays out of its player's hand (Dou Di Zhu's and
    /// Guandan's plays), for a client to drop from the cards it holds.
    /// Default: none.
    fn cards_played(&self, _action: &Self::Action) -> Vec<CardId> {
        Vec::new()
    }

    /// The action taken for `seat` when its timer runs out. It must validate
    /// in every state where `to_act` is `seat`.
    fn auto_action(&self, state: &Self::State, seat: Seat) -> Option<Self::Action>;

    /// Table memory for the next hand.
    fn memory_after(&self, state: &Self::State) -> Self::Memory;

    /// Whether the hand cannot go on once `seat`'s player has left the room
    /// and `seat` is to act (Sam Gong: the banker before its bet): the
    /// dealer then voids the hand and refunds it instead of taking the auto
    /// action. Default: never (the auto action is taken).
    fn leave_voids(&self, _state: &Self::State, _seat: Seat) -> bool {
        false
    }

    /// The least chip balance a player needs to sit down at a table with
    /// these settings (Sam Gong's tier entry chips); the dealer refuses a
    /// join below it. Default: none.
    fn entry_chips(&self, _settings: &Self::Settings) -> Chips {
        Chips::ZERO
    }

    /// A game whose hands are deals of a longer match (Guandan): how long,
    /// in seconds, a match may run under these settings. Default: no limit.
    fn match_time_limit(&self, _settings: &Self::Settings) -> Option<u64> {
        None
    }

    /// Whether a hand from `memory` is the first of a match (the dealer's
    /// match clock starts). Default: every hand is a match of its own.
    fn match_begins(&self, _memory: &Self::Memory) -> bool {
        true
    }

    /// The table memory that makes the next hand end the running match for
    /// `stop`, or None when the game has no match to end (default). Called
    /// only when `match_begins` is false.
    fn end_match(&self, _memory: &Self::Memory, _stop: MatchStop) -> Option<Self::Memory> {
        None
    }

    /// The order in which `players` (seat order, with their balances) hold
    /// a role that rotates between hands (Sam Gong's banker), from a hand
    /// started from `memory` on; None for games without one (default).
    /// Informational (the dealer's `banker-queue`): `create_game` decides.
    fn rotation(
        &self,
        _settings: &Self::Settings,
        _memory: &Self::Memory,
        _players: &[PlayerInfo],
    ) -> Option<Vec<Seat>> {
        None
    }

    /// The settlement as typed data, once `is_over` (None for games that do
    /// not provide it).
    fn details(&self, _state: &Self::State) -> Option<GameDetails> {
        None
    }

    /// Face-up cards that belong to `seat`'s hand though they were never
    /// dealt or transferred to it, read from a public state this game
    /// produced (Dou Di Zhu: the revealed kitty joins the landlord's hand).
    /// A client adds them to the cards it holds. Default: none.
    fn public_cards_held(&self, _public_state: &serde_json::Value, _seat: Seat) -> Vec<CardId> {
        Vec::new()
    }
}
