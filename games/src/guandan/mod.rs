//! Guandan (掼蛋): four players in two fixed teams (seats 0+2 and 1+3), two
//! packs with jokers (108 cards), 27 cards each, the source rules of Guandan
//! (see docs/games/guandan.md).
//!
//! One plugin hand is one deal of a match. The table memory carries the
//! match across deals (team levels, the team whose level is played, the last
//! finishing order, the match score), so each deal audits on its own.
//!
//! Flow of a deal: 27 cards to each seat, sealed → from the second deal of a
//! match, tribute (进贡) unless resisted (抗贡), then the return (还贡); each
//! moves one committed card from one hand to another (`Transfer`) → play: the
//! leader plays any pattern, each next player still holding cards beats it or
//! passes; when everyone else passes the last player to play leads again
//! (CLEARED), or, if that player has gone out, their partner leads (接风) →
//! the deal ends when the finishing order is decided → levels go up, chips
//! move between the teams (a stake per level won). Details and every
//! RuleConfig field with its source: docs/games/guandan.md.

#![deny(missing_docs)]

pub mod ai;
pub mod cards;
pub mod compare;
pub mod moves;
pub mod patterns;
pub mod settle;
pub mod tribute;

use claw_protocol::{Card, CardId, Chips, Seat};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::plugin::{
    ActionOption, BlindDeal, CardFace, DealSpec, DealTo, DealtCard, GameDetails, GameError, GameMeta,
    GamePlugin, HandResult, MatchStop, PendingAction, PlayerInfo,
};
use cards::{check_ids, Level, Tally, Wilds, DECK_SIZE, PACKS};
use compare::{beats, BombPriority, BombProfile};
use moves::{legal_moves, Move};
use patterns::{by_priority, describe, readings, Declared, PatternRules, Purity, Reading};
use settle::{DealOutcome, MatchEnd};
use tribute::{DoubleTribute, ResistRule};

/// Registry name of the game.
pub const NAME: &str = "guandan";
/// Cards dealt to each player.
pub const HAND_SIZE: usize = 27;
/// Players at a table.
pub const PLAYERS: usize = 4;
/// The largest stake per level a table may set (2^40 chips).
pub const STAKE_LIMIT: u64 = claw_protocol::limits::MAX_MULTIPLIED_BASE;

/// The Guandan plugin.
#[derive(Debug, Clone, Copy, Default)]
pub struct Guandan;

/// Why a Guandan action or input was refused (source rules: "恶意输入").
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GuandanError {
    /// A play names no card.
    #[error("a play needs at least one card")]
    EmptyPlay,
    /// A card is named twice.
    #[error("card {0} named twice")]
    DuplicateCard(CardId),
    /// A card id outside the two packs.
    #[error("card {0} is not in the two packs")]
    OutOfRange(CardId),
    /// More copies of one face than the two packs hold.
    #[error("{count} copies of {face}: the two packs hold {max}")]
    TooManyCopies {
        /// The face.
        face: Card,
        /// How often it was named.
        count: usize,
        /// Copies in the deck.
        max: u8,
    },
    /// A card the player does not hold.
    #[error("{0}")]
    NotInHand(CardId),
    /// A deck position beyond the two packs.
    #[error("deck position {0} is not in the two packs (0–107)")]
    PositionOutOfRange(u16),
    /// A deck position the player does not hold now (another player's, or given away).
    #[error("deck position {0} is not in your hand")]
    PositionNotHeld(u16),
    /// The cards form no pattern.
    #[error("these cards form no pattern")]
    NoPattern,
    /// The named reading is not one of the cards' readings.
    #[error("the cards cannot be read as {0:?}")]
    NotThatReading(Declared),
    /// The play does not beat the table.
    #[error("{play} does not beat {table}")]
    DoesNotBeat {
        /// The play, in words.
        play: String,
        /// The play on the table, in words.
        table: String,
    },
    /// The leader passed.
    #[error("the leader must play")]
    MustLead,
    /// A wild given as tribute.
    #[error("{0} is wild and may not be given as tribute")]
    TributeOfWild(CardId),
    /// A level card given as tribute.
    #[error("{0} is a level card and may not be given as tribute")]
    TributeOfLevelCard(CardId),
    /// Not the highest card.
    #[error("{card} is not the highest card the tribute allows ({highest})")]
    NotHighest {
        /// The card given.
        card: CardId,
        /// A card that may be given.
        highest: String,
    },
    /// A heart where a non-heart of the same rank may be given.
    #[error("{0}: a card of the same rank that is not a heart must be given first")]
    PreferNonHeart(CardId),
    /// A wild returned.
    #[error("{0} is wild and may not be returned")]
    ReturnOfWild(CardId),
    /// A level card returned.
    #[error("{0} is a level card and may not be returned")]
    ReturnOfLevelCard(CardId),
    /// A return above the limit.
    #[error("{card} is above the return limit {max}")]
    ReturnTooHigh {
        /// The card.
        card: CardId,
        /// `tribute_return_max_rank`.
        max: u8,
    },
    /// The action does not fit the phase.
    #[error("not allowed now: {0}")]
    WrongPhase(String),
    /// Not this seat's turn.
    #[error("not your turn")]
    NotYourTurn,
    /// The deal is over.
    #[error("the deal is over")]
    Over,
}

impl From<GuandanError> for GameError {
    fn from(e: GuandanError) -> GameError {
        match e {
            GuandanError::NotInHand(c) => GameError::CardNotInHand(c.to_string()),
            GuandanError::PositionNotHeld(p) => GameError::CardNotInHand(format!("deck position {p}")),
            GuandanError::NotYourTurn => GameError::NotYourTurn,
            GuandanError::Over => GameError::HandOver,
            e @ (GuandanError::EmptyPlay
            | GuandanError::DuplicateCard(_)
            | GuandanError::OutOfRange(_)
            | GuandanError::PositionOutOfRange(_)
            | GuandanError::TooManyCopies { .. }) => GameError::Malformed(e.to_string()),
            e => GameError::Illegal(e.to_string()),
        }
    }
}

/// Which bomb ordering a table uses.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ProfileChoice {
    /// [`BombProfile::competition`]: the default.
    #[default]
    Competition,
    /// [`BombProfile::seed`] with the source rules' two RuleConfig fields.
    Seed,
    /// Any other ordering.
    Custom(BombProfile),
}

/// How players are seated into teams (the source rules' `team_formation`):
/// seats 0+2 and 1+3, as the players joined (FIXED_1_3). The source rules'
/// RANDOM is not offered: a seating the dealer drew could not be audited
/// (the rules see seats, not how players came to them), so `random` is
/// refused as an unknown value rather than accepted and ignored.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TeamFormation {
    /// Seats as joined (the source rules' FIXED_1_3).
    #[default]
    Fixed13,
}

/// What a seat's timer plays when it runs out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TimeoutAction {
    /// The seed's rule ("超时自动过牌"): a pass where passing is legal,
    /// otherwise the smallest legal move by a fixed order (`ai::timer`).
    #[default]
    Pass,
    /// The L2 AI takes the seat's turn (a takeover, as a client's auto-play).
    Ai,
}

/// When a team at level A finishes the match.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum AceRule {
    /// It wins a deal played at its level A (source rules: "一方升至A并获胜").
    #[default]
    AnyWin,
    /// It wins a deal at A and its second player is not last (competition rule).
    PartnerNotLast,
    /// It reaches A: the deal that takes it to A (or keeps it there) ends the
    /// match (the other reading of "一方升至A并获胜").
    Reach,
}

/// Room settings: the source rules' RuleConfig plus the chip stake. Immutable for a
/// room (the source rules' "Immutable Match Config").
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct GdSettings {
    /// Chips each losing player pays per level the winners go up.
    pub stake_per_level: Chips,
    /// Bomb ordering.
    pub bomb_profile: ProfileChoice,
    /// Source rules' RuleConfig: straight flush above every bomb (`seed` profile only).
    pub same_suit_straight_beats_bomb: bool,
    /// Source rules' RuleConfig: rank or count first between bombs (`seed` profile only).
    pub bomb_compare_priority: BombPriority,
    /// Source rules' RuleConfig: levels for 1st and 2nd of one team.
    pub double_down_levels: u8,
    /// Source rules' RuleConfig: whether a wild may be given as tribute.
    pub can_tribute_wild: bool,
    /// Whether a non-wild level card may be given as tribute (seed: "不能进贡当前级牌").
    pub tribute_level_rank: bool,
    /// Among equally high tribute cards, a non-heart must be given (source rules: "次级判定" 1).
    pub tribute_prefer_non_heart: bool,
    /// Source rules' RuleConfig: highest natural rank of a return card (0 = any).
    pub tribute_return_max_rank: u8,
    /// Whether a level card may be returned (source rules: "不能还级牌").
    pub return_level_rank: bool,
    /// Who resists tribute with both big jokers.
    pub resist: ResistRule,
    /// Who receives which card of a double tribute.
    pub double_tribute: DoubleTribute,
    /// Source rules' RuleConfig: sequences may end at the ace.
    pub straight_extends_to_ace: bool,
    /// Source rules' RuleConfig: wild heart level cards (0, 1 or 2).
    pub wild_count: u8,
    /// Source rules' RuleConfig: team seating.
    pub team_formation: TeamFormation,
    /// When a team at A finishes the match.
    pub ace_rule: AceRule,
    /// Which wilds make a bomb or straight flush mixed; left out of the
    /// normal form when `stand-in` (the default), so older settings keep theirs.
    #[serde(skip_serializing_if = "Purity::is_stand_in")]
    pub purity: Purity,
    /// Tribute and return cards are shown to everyone (face up).
    pub show_tribute: bool,
    /// The source rules' MAX_GAME_DURATION_SEC (0 = none): the dealer's clock ends
    /// the match through the table memory's `end_request`.
    pub max_game_duration_sec: u64,
    /// What a seat's timer plays (default: a pass where legal).
    pub timeout_action: TimeoutAction,
}

impl Default for GdSettings {
    fn default() -> Self {
        GdSettings {
            stake_per_level: Chips(1),
            bomb_profile: ProfileChoice::Competition,
            same_suit_straight_beats_bomb: true,
            bomb_compare_priority: BombPriority::ByRank,
            double_down_levels: 3,
            can_tribute_wild: false,
            tribute_level_rank: false,
            tribute_prefer_non_heart: true,
            tribute_return_max_rank: 10,
            return_level_rank: false,
            resist: ResistRule::OneHolder,
            double_tribute: DoubleTribute::BySeat,
            straight_extends_to_ace: true,
            wild_count: 2,
            team_formation: TeamFormation::Fixed13,
            ace_rule: AceRule::AnyWin,
            purity: Purity::StandIn,
            show_tribute: false,
            max_game_duration_sec: 0,
            timeout_action: TimeoutAction::Pass,
        }
    }
}

impl GdSettings {
    /// The bomb ordering these settings select.
    pub fn profile(&self) -> BombProfile {
        match &self.bomb_profile {
            ProfileChoice::Competition => BombProfile::competition(),
            ProfileChoice::Seed => {
                BombProfile::seed(self.same_suit_straight_beats_bomb, self.bomb_compare_priority)
            }
            ProfileChoice::Custom(p) => p.clone(),
        }
    }

    fn check(&self) -> Result<(), GameError> {
        let bad = |m: &str| Err(GameError::BadSettings(m.into()));
        if self.stake_per_level.0 == 0 || self.stake_per_level.0 > STAKE_LIMIT {
            return bad("stake_per_level must be 1–2^40");
        }
        if !(1..=6).contains(&self.double_down_levels) {
            return bad("double_down_levels must be 1–6");
        }
        if self.wild_count > PACKS {
            return bad("wild_count must be 0–2");
        }
        if self.tribute_return_max_rank != 0 && !(2..=16).contains(&self.tribute_return_max_rank) {
            return bad("tribute_return_max_rank must be 0 or 2–16");
        }
        self.profile().check().map_err(GameError::BadSettings)
    }
}

/// Set by the dealer in the table memory before a deal to end the match
/// from outside the rules (one of the source rules' terminal states).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", tag = "kind")]
pub enum EndRequest {
    /// MAX_GAME_DURATION_SEC passed (GAME_END_TIMEOUT, or DRAW on equal levels).
    Timeout,
    /// A player stayed away past the reconnect window (GAME_END_DISCONNECT).
    Disconnect {
        /// The seat that left.
        seat: u8,
    },
}

/// What carries over between deals: the match so far.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct GdMemory {
    /// Matches started at this table before the current one.
    pub match_no: u32,
    /// Deals finished in the current match (0: the next deal is its first).
    pub deal: u32,
    /// Level of team 0 (seats 0, 2) and team 1 (seats 1, 3).
    pub levels: [Level; 2],
    /// The team whose level the next deal is played at.
    pub level_team: u8,
    /// Finishing order of the last deal, first to last (empty before the first).
    pub last_order: Vec<u8>,
    /// Matches won per team.
    pub matches_won: [u32; 2],
    /// Matches drawn.
    pub draws: u32,
    /// How the last match ended.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_match_end: Option<MatchEnd>,
    /// Set by the dealer: end the match instead of dealing.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub end_request: Option<EndRequest>,
}

impl Default for GdMemory {
    fn default() -> Self {
        GdMemory {
            match_no: 0,
            deal: 0,
            levels: [Level::TWO; 2],
            level_team: 0,
            last_order: Vec::new(),
            matches_won: [0; 2],
            draws: 0,
            last_match_end: None,
            end_request: None,
        }
    }
}

impl GdMemory {
    /// The level the next deal is played at: the level of `level_team`.
    pub fn level(&self) -> Level {
        self.levels[usize::from(self.level_team.min(1))]
    }

    fn check(&self) -> Result<(), GameError> {
        if self.level_team > 1 {
            return Err(GameError::Malformed("table memory: level_team must be 0 or 1".into()));
        }
        let mut o = self.last_order.clone();
        o.sort_unstable();
        if !(o.is_empty() || o == [0, 1, 2, 3]) || (self.deal > 0) == o.is_empty() {
            return Err(GameError::Malformed(
                "table memory: last_order must be the 4 seats after a deal".into(),
            ));
        }
        if let Some(EndRequest::Disconnect { seat }) = self.end_request {
            if seat > 3 {
                return Err(GameError::Malformed("table memory: disconnect of a missing seat".into()));
            }
        }
        Ok(())
    }
}

/// A player's move: `{"type": "play", "cards": ["3c", "3d"]}`, with an
/// optional `"reading": {"kind": "straight", "rank": 8}`; `{"type": "pass"}`;
/// `{"type": "tribute", "position": 41}`; `{"type": "return", "position": 7}`;
/// `{"type": "surrender"}`; `{"type": "vote", "accept": true}`. Tribute and
/// return name the deck position the giver holds, never the face, so the
/// signed action tells the other players nothing about the card.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "kebab-case", deny_unknown_fields)]
pub enum GdAction {
    /// Play these physical cards.
    Play {
        /// The cards, each named once, all in the player's hand.
        cards: Vec<CardId>,
        /// The reading meant, for an ambiguous group (default: the source rules' priority).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reading: Option<Declared>,
    },
    /// Do not beat the table (not when leading).
    Pass {},
    /// Give the card at this deck position as tribute.
    Tribute {
        /// A deck position the giver holds.
        position: u16,
    },
    /// Give the card at this deck position back.
    Return {
        /// A deck position the giver holds.
        position: u16,
    },
    /// Propose that this team gives up the match (once per team and deal).
    Surrender {},
    /// Answer a surrender proposal.
    Vote {
        /// Agree to it.
        accept: bool,
    },
}

/// Where a deal is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum GdPhase {
    /// Waiting for the deal.
    Dealing,
    /// Payers give tribute.
    Tribute,
    /// Receivers return a card.
    Return,
    /// Cards are played.
    Playing,
    /// A surrender proposal is voted on.
    Vote,
    /// Over.
    Done,
}

impl GdPhase {
    /// The name it is serialised as.
    fn name(self) -> &'static str {
        match self {
            GdPhase::Dealing => "dealing",
            GdPhase::Tribute => "tribute",
            GdPhase::Return => "return",
            GdPhase::Playing => "playing",
            GdPhase::Vote => "vote",
            GdPhase::Done => "done",
        }
    }
}

/// One tribute card and where it went.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Gift {
    /// The giver.
    pub from: u8,
    /// The receiver, once known (after every payer has given).
    pub to: Option<u8>,
    /// The card.
    pub card: CardId,
}

/// The tribute of a deal.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TributeState {
    /// Paying seats, in the order they give.
    pub payers: Vec<u8>,
    /// Receiving seats: the last deal's first (and second, after a double-down).
    pub receivers: Vec<u8>,
    /// Both big jokers held where the rule wants them: no tribute, no return.
    pub resisted: bool,
    /// Tribute cards given.
    pub given: Vec<Gift>,
    /// Cards returned.
    pub returned: Vec<Gift>,
}

/// The play to beat.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Lead {
    /// Who played it.
    pub seat: u8,
    /// How it reads.
    pub reading: Reading,
    /// The cards.
    pub cards: Vec<CardId>,
}

/// One turn of play: a play or a pass (`cards` None), or a CLEARED marker.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Turn {
    /// Who acted (for a marker: who leads next).
    pub seat: u8,
    /// The cards, for a play.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cards: Option<Vec<CardId>>,
    /// Their reading, for a play.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reading: Option<Reading>,
    /// The table was cleared after this turn; `seat` leads freely.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub cleared: bool,
    /// The lead passed to the partner of a player who went out (接风).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub catch_up: bool,
}

/// A surrender vote in progress.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Vote {
    /// Who proposed it.
    pub proposer: u8,
    /// Seats still to ask, in order: partner, then the opponents.
    pub ask: Vec<u8>,
    /// The partner agreed.
    pub partner_agreed: bool,
}

/// Everything about a deal in progress, hidden cards included.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GdState {
    /// The room settings.
    pub settings: GdSettings,
    /// The bomb ordering in force.
    pub profile: BombProfile,
    /// The match so far.
    pub memory: GdMemory,
    /// The level being played.
    pub level: Level,
    /// Balance of each seat at deal start: the most it can lose.
    pub balances: Vec<Chips>,
    /// Each seat's cards.
    pub hands: Vec<Vec<CardId>>,
    /// Deck position of each physical card (by card code), once dealt.
    pub positions: Vec<Option<u16>>,
    /// Where the deal is.
    pub phase: GdPhase,
    /// The tribute, from the second deal of a match.
    pub tribute: Option<TributeState>,
    /// Seat to act.
    pub turn: u8,
    /// The play to beat; None when the player to act leads.
    pub lead: Option<Lead>,
    /// Passes since the last play.
    pub passes: u8,
    /// Seats that have gone out, in order.
    pub finished: Vec<u8>,
    /// Every play and pass, in order.
    pub history: Vec<Turn>,
    /// Teams that have proposed a surrender this deal.
    pub surrendered: [bool; 2],
    /// A vote in progress.
    pub vote: Option<Vote>,
    /// The result, once over.
    pub outcome: Option<DealOutcome>,
    /// Outcome in words.
    pub summary: String,
}

/// A finished Guandan deal as typed data ([`GamePlugin::details`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GdDetails {
    /// The level rank the deal was played at.
    pub level: Level,
    /// The team whose level it was.
    pub level_team: u8,
    /// Chips per level won.
    pub stake_per_level: Chips,
    /// The tribute of this deal (none on a match's first deal).
    pub tribute: Option<GdTributeDetails>,
    /// Finishing order, first to last (after a double-down the two losers in
    /// seat order); empty when the deal ended without play.
    pub order: Vec<u8>,
    /// The team that won the deal (or the match, without play); none for a draw.
    pub winner_team: Option<u8>,
    /// Levels the winners went up, before the A cap.
    pub levels_up: u8,
    /// Both teams' levels after the deal.
    pub levels_after: [Level; 2],
    /// How the match ended, when it ended with this deal.
    pub match_end: Option<MatchEnd>,
    /// Chips per seat (credits minus debits).
    pub net: Vec<i64>,
}

/// Who paid tribute to whom in a deal (the cards are in the signed actions).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GdTributeDetails {
    /// Paying seats, in the order they gave.
    pub payers: Vec<u8>,
    /// Receiving seats.
    pub receivers: Vec<u8>,
    /// Resisted with both big jokers: nothing given or returned.
    pub resisted: bool,
}

/// The team of a seat: 0 for seats 0 and 2, 1 for seats 1 and 3.
pub fn team(seat: u8) -> u8 {
    seat % 2
}

/// The partner of a seat.
pub fn partner(seat: u8) -> u8 {
    (seat + 2) % 4
}

impl GdState {
    /// Wild rules of this deal.
    pub fn wilds(&self) -> Wilds {
        Wilds { level: self.level, count: self.settings.wild_count }
    }

    /// Pattern rules of this deal.
    pub fn rules(&self) -> PatternRules {
        PatternRules {
            level: self.level,
            ace_high: self.settings.straight_extends_to_ace,
            purity: self.settings.purity,
        }
    }

    /// The deck position a dealt card lies at.
    pub fn position_of(&self, card: CardId) -> Option<u16> {
        self.positions.get(usize::from(card.code())).copied().flatten()
    }

    /// The card at deck `position`, if `seat` holds it now.
    pub fn held(&self, seat: u8, position: u16) -> Result<CardId, GuandanError> {
        if usize::from(position) >= DECK_SIZE {
            return Err(GuandanError::PositionOutOfRange(position));
        }
        self.hands[usize::from(seat)]
            .iter()
            .copied()
            .find(|c| self.position_of(*c) == Some(position))
            .ok_or(GuandanError::PositionNotHeld(position))
    }

    /// Whether the seat still holds cards.
    pub fn active(&self, seat: u8) -> bool {
        !self.hands[usize::from(seat)].is_empty()
    }

    fn next_active(&self, seat: u8) -> u8 {
        let mut s = (seat + 1) % 4;
        while !self.active(s) && s != seat {
            s = (s + 1) % 4;
        }
        s
    }

    /// Every legal play for `seat` now (beating the table unless leading).
    pub fn legal_plays(&self, seat: u8) -> Vec<Move> {
        let table = self.lead.as_ref().map(|l| &l.reading);
        legal_moves(
            &self.hands[usize::from(seat)],
            self.rules(),
            self.settings.wild_count,
            &self.profile,
            table,
        )
    }

    /// Checks a play and returns the reading it is played as.
    pub fn check_play(
        &self,
        seat: u8,
        cards: &[CardId],
        declared: Option<Declared>,
    ) -> Result<Reading, GuandanError> {
        check_ids(cards)?;
        let hand = &self.hands[usize::from(seat)];
        if let Some(c) = cards.iter().find(|c| !hand.contains(c)) {
            return Err(GuandanError::NotInHand(*c));
        }
        let t = Tally::of_ids(cards, self.wilds());
        read_play(&t, self.rules(), &self.profile, self.lead.as_ref().map(|l| &l.reading), declared)
    }
}

/// The most plays `valid_actions` lists, so that a `your-turn` fits one
/// frame (a 27-card hand with wilds has thousands of plays). Any legal play
/// is accepted whether listed or not.
pub const MAX_LISTED_PLAYS: usize = 120;

/// Every play when there are at most [`MAX_LISTED_PLAYS`]; else that many,
/// taken in turn from each pattern kind (each kind's plays in generation
/// order), so every kind that can be played is offered.
fn listed(moves: Vec<Move>) -> Vec<Move> {
    if moves.len() <= MAX_LISTED_PLAYS {
        return moves;
    }
    let mut kinds: Vec<(patterns::Kind, std::collections::VecDeque<Move>)> = Vec::new();
    for m in moves {
        match kinds.iter_mut().find(|(k, _)| *k == m.reading.kind) {
            Some((_, q)) => q.push_back(m),
            None => kinds.push((m.reading.kind, std::collections::VecDeque::from([m]))),
        }
    }
    let mut out = Vec::with_capacity(MAX_LISTED_PLAYS);
    while out.len() < MAX_LISTED_PLAYS {
        let before = out.len();
        for (_, q) in kinds.iter_mut() {
            if out.len() == MAX_LISTED_PLAYS {
                break;
            }
            if let Some(m) = q.pop_front() {
                out.push(m);
            }
        }
        if out.len() == before {
            break;
        }
    }
    out
}

/// The reading a play is played as: the named one, or the first by the
/// seed's priority that is legal now (beats the table when following).
pub fn read_play(
    t: &Tally,
    rules: PatternRules,
    profile: &BombProfile,
    table: Option<&Reading>,
    declared: Option<Declared>,
) -> Result<Reading, GuandanError> {
    let mut all = readings(t, rules);
    if all.is_empty() {
        return Err(GuandanError::NoPattern);
    }
    by_priority(&mut all, rules.level);
    if let Some(d) = declared {
        all.retain(|r| r.kind == d.kind && r.rank == d.rank);
        if all.is_empty() {
            return Err(GuandanError::NotThatReading(d));
        }
    }
    let Some(table) = table else {
        return Ok(all[0]);
    };
    all.iter()
        .find(|r| beats(r, table, rules.level, profile))
        .copied()
        .ok_or_else(|| GuandanError::DoesNotBeat { play: describe(&all[0]), table: describe(table) })
}

impl Guandan {
    /// Starts a deal and deals it from `deck` without an engine (match
    /// simulations, benchmarks, tests): position i gets `deck[i]`.
    pub fn deal_offline(&self, st: &mut GdState, deck: &[CardId]) -> Result<(), GameError> {
        for p in self.start(st)? {
            if let PendingAction::Deal { cards, .. } = p {
                let dealt: Vec<DealtCard> = cards
                    .iter()
                    .zip(deck)
                    .enumerate()
                    .map(|(i, (s, c))| DealtCard {
                        position: i as u16,
                        target: s.target,
                        face: s.face,
                        card: *c,
                    })
                    .collect();
                self.receive_cards(st, &dealt)?;
            }
        }
        Ok(())
    }

    fn expected_deal() -> Vec<DealSpec> {
        (0..HAND_SIZE * PLAYERS)
            .map(|i| DealSpec { target: DealTo::Player(Seat((i % PLAYERS) as u8)), face: CardFace::Down })
            .collect()
    }

    fn face(st: &GdState) -> CardFace {
        if st.settings.show_tribute {
            CardFace::Up
        } else {
            CardFace::Down
        }
    }

    fn transfer(st: &mut GdState, from: u8, to: u8, card: CardId) -> Result<PendingAction, GuandanError> {
        let hand = &mut st.hands[usize::from(from)];
        let i = hand.iter().position(|c| *c == card).ok_or(GuandanError::NotInHand(card))?;
        hand.remove(i);
        st.hands[usize::from(to)].push(card);
        let position = st.positions[usize::from(card.code())].ok_or(GuandanError::NotInHand(card))?;
        Ok(PendingAction::Transfer { position, from: Seat(from), to: Seat(to), face: Self::face(st) })
    }

    /// Sets up the tribute (or play) after the deal.
    fn after_deal(&self, st: &mut GdState) {
        let first_lead = (st.memory.match_no % 4) as u8;
        if st.memory.last_order.len() != 4 {
            st.phase = GdPhase::Playing;
            st.turn = first_lead;
            return;
        }
        let (payers, receivers) = tribute::parties(&st.memory.last_order);
        let resisted = tribute::resisted(&st.hands, &payers, st.settings.resist);
        st.turn = if resisted { receivers[0] } else { payers[0] };
        st.phase = if resisted { GdPhase::Playing } else { GdPhase::Tribute };
        st.tribute =
            Some(TributeState { payers, receivers, resisted, given: Vec::new(), returned: Vec::new() });
    }

    fn give(&self, st: &mut GdState, seat: u8, card: CardId) -> Result<Vec<PendingAction>, GuandanError> {
        let level = st.level;
        let Some(tr) = st.tribute.as_mut() else {
            return Err(GuandanError::WrongPhase("no tribute this deal".into()));
        };
        tr.given.push(Gift { from: seat, to: None, card });
        if tr.given.len() < tr.payers.len() {
            st.turn = tr.payers[tr.given.len()];
            return Ok(Vec::new());
        }
        // Every payer has given: gifts ordered as their receivers (a double
        // tribute by `double_tribute`).
        let mut gifts = tr.given.clone();
        if let ([a, b], Some(last)) = (gifts.as_slice(), st.memory.last_order.last()) {
            let rule = st.settings.double_tribute;
            if tribute::double_targets([(a.from, a.card), (b.from, b.card)], *last, level, rule) == [1, 0] {
                gifts.swap(0, 1);
            }
        }
        for (g, r) in gifts.iter_mut().zip(tr.receivers.clone()) {
            g.to = Some(r);
        }
        tr.given = gifts.clone();
        st.phase = GdPhase::Return;
        st.turn = tr.receivers[0];
        gifts.iter().map(|g| Self::transfer(st, g.from, g.to.unwrap_or(g.from), g.card)).collect()
    }

    fn give_back(
        &self,
        st: &mut GdState,
        seat: u8,
        card: CardId,
    ) -> Result<Vec<PendingAction>, GuandanError> {
        let Some(tr) = st.tribute.as_mut() else {
            return Err(GuandanError::WrongPhase("no tribute this deal".into()));
        };
        let giver = tr.given.iter().find(|g| g.to == Some(seat)).map(|g| g.from).unwrap_or(seat);
        tr.returned.push(Gift { from: seat, to: Some(giver), card });
        let done = tr.returned.len() == tr.receivers.len();
        let next = tr.receivers.get(tr.returned.len()).copied();
        let gifts: Vec<(u8, CardId)> = tr.given.iter().map(|g| (g.from, g.card)).collect();
        let leader = tribute::leader(&tr.payers, &gifts, st.level);
        let t = Self::transfer(st, seat, giver, card)?;
        if done {
            st.phase = GdPhase::Playing;
            st.turn = leader.unwrap_or(seat);
        } else {
            st.turn = next.unwrap_or(seat);
        }
        Ok(vec![t])
    }

    fn play(&self, st: &mut GdState, seat: u8, cards: &[CardId], reading: Reading) -> Vec<PendingAction> {
        st.hands[usize::from(seat)].retain(|c| !cards.contains(c));
        st.history.push(Turn {
            seat,
            cards: Some(cards.to_vec()),
            reading: Some(reading),
            cleared: false,
            catch_up: false,
        });
        st.lead = Some(Lead { seat, reading, cards: cards.to_vec() });
        st.passes = 0;
        if st.hands[usize::from(seat)].is_empty() {
            st.finished.push(seat);
            let f = &st.finished;
            if (f.len() >= 2 && team(f[0]) == team(f[1])) || f.len() == 3 {
                return self.finish(st);
            }
        }
        st.turn = st.next_active(seat);
        Vec::new()
    }

    fn pass(&self, st: &mut GdState, seat: u8) {
        st.history.push(Turn { seat, cards: None, reading: None, cleared: false, catch_up: false });
        st.passes += 1;
        let Some(lead) = st.lead.clone() else { return };
        let others = (0..4u8).filter(|s| *s != lead.seat && st.active(*s)).count() as u8;
        if st.passes < others {
            st.turn = st.next_active(seat);
            return;
        }
        // CLEARED: the last player to play leads freely; if out, the partner (接风).
        st.lead = None;
        st.passes = 0;
        let catch_up = !st.active(lead.seat);
        let leader = if catch_up { partner(lead.seat) } else { lead.seat };
        let leader = if st.active(leader) { leader } else { st.next_active(leader) };
        st.turn = leader;
        st.history.push(Turn { seat: leader, cards: None, reading: None, cleared: true, catch_up });
    }

    fn finish(&self, st: &mut GdState) -> Vec<PendingAction> {
        let mut order = st.finished.clone();
        for s in 0..4u8 {
            if !order.contains(&s) {
                order.push(s);
            }
        }
        let (outcome, actions) = settle::settle_deal(&st.settings, &st.memory, &st.balances, &order);
        st.summary = outcome.summary.clone();
        st.outcome = Some(outcome);
        st.phase = GdPhase::Done;
        st.vote = None;
        actions
    }

    fn vote(&self, st: &mut GdState, seat: u8, accept: bool) -> Vec<PendingAction> {
        let Some(mut v) = st.vote.take() else { return Vec::new() };
        v.ask.retain(|s| *s != seat);
        let is_partner = seat == partner(v.proposer);
        if is_partner {
            v.partner_agreed = accept;
            if !accept {
                v.ask.clear();
            }
        } else if accept && v.partner_agreed {
            let (outcome, actions) =
                settle::settle_surrender(&st.settings, &st.memory, &st.balances, team(v.proposer));
            st.summary = outcome.summary.clone();
            st.outcome = Some(outcome);
            st.phase = GdPhase::Done;
            return actions;
        }
        match v.ask.first() {
            Some(next) if v.partner_agreed => {
                st.turn = *next;
                st.vote = Some(v);
            }
            _ => {
                st.phase = GdPhase::Playing;
                st.turn = v.proposer;
            }
        }
        Vec::new()
    }

    fn check(&self, st: &GdState, seat: Seat, action: &GdAction) -> Result<Option<Reading>, GuandanError> {
        if st.phase == GdPhase::Done {
            return Err(GuandanError::Over);
        }
        if self.to_act(st) != Some(seat) {
            return Err(GuandanError::NotYourTurn);
        }
        let s = seat.0;
        let hand = &st.hands[seat.index()];
        let phase = |what: &str| Err(GuandanError::WrongPhase(format!("{what} during {:?}", st.phase)));
        match (st.phase, action) {
            (GdPhase::Tribute, GdAction::Tribute { position }) => {
                let card = st.held(s, *position)?;
                tribute::check_tribute(hand, card, st.wilds(), &st.settings).map(|_| None)
            }
            (GdPhase::Return, GdAction::Return { position }) => {
                let card = st.held(s, *position)?;
                if tribute::return_choices(hand, st.wilds(), &st.settings).contains(&card) {
                    Ok(None)
                } else {
                    tribute::check_return(hand, card, st.wilds(), &st.settings)?;
                    Err(GuandanError::WrongPhase("return".into()))
                }
            }
            (GdPhase::Playing, GdAction::Play { cards, reading }) => {
                st.check_play(s, cards, *reading).map(Some)
            }
            (GdPhase::Playing, GdAction::Pass {}) if st.lead.is_none() => Err(GuandanError::MustLead),
            (GdPhase::Playing, GdAction::Pass {}) => Ok(None),
            (GdPhase::Playing, GdAction::Surrender {}) if st.surrendered[usize::from(team(s))] => {
                Err(GuandanError::WrongPhase("this team has already proposed a surrender this deal".into()))
            }
            (GdPhase::Playing, GdAction::Surrender {}) => Ok(None),
            (GdPhase::Vote, GdAction::Vote { .. }) => Ok(None),
            (_, GdAction::Play { .. }) => phase("a play"),
            (_, GdAction::Pass {}) => phase("a pass"),
            (_, GdAction::Tribute { .. }) => phase("a tribute"),
            (_, GdAction::Return { .. }) => phase("a return"),
            (_, GdAction::Surrender {}) => phase("a surrender"),
            (_, GdAction::Vote { .. }) => phase("a vote"),
        }
    }
}

impl GamePlugin for Guandan {
    type State = GdState;
    type Action = GdAction;
    type Settings = GdSettings;
    type Memory = GdMemory;

    fn meta(&self) -> GameMeta {
        // The seed's room: READY_CHECK before a match, VOTE_PHASE after it.
        GameMeta {
            ai_levels: 3,
            blind: BlindDeal::Transfer,
            match_votes_secs: 30,
            // "延迟 N 回合（默认 3 回合）": a 回合 is a player's turn, as in
            // "每回合显示倒计时（默认 30s），超时自动过牌".
            watch_delay: 3,
            ..GameMeta::new(NAME, "Guandan", 4, 4, "3")
        }
    }

    fn validate_settings(&self, s: &GdSettings) -> Result<(), GameError> {
        s.check()
    }

    fn create_deck(&self, _s: &GdSettings) -> Vec<CardId> {
        CardId::deck(PACKS, true)
    }

    fn create_game(
        &self,
        settings: &GdSettings,
        players: &[PlayerInfo],
        memory: &GdMemory,
    ) -> Result<GdState, GameError> {
        settings.check()?;
        memory.check()?;
        if players.len() != PLAYERS {
            return Err(GameError::BadPlayers(format!(
                "guandan needs exactly 4 players, got {}",
                players.len()
            )));
        }
        let level = memory.level();
        let mut st = GdState {
            settings: settings.clone(),
            profile: settings.profile(),
            memory: memory.clone(),
            level,
            balances: players.iter().map(|p| p.balance).collect(),
            hands: vec![Vec::new(); PLAYERS],
            positions: vec![None; DECK_SIZE],
            phase: GdPhase::Dealing,
            tribute: None,
            turn: 0,
            lead: None,
            passes: 0,
            finished: Vec::new(),
            history: Vec::new(),
            surrendered: [false; 2],
            vote: None,
            outcome: None,
            summary: String::new(),
        };
        if let Some(req) = memory.end_request {
            let outcome = settle::settle_request(memory, req);
            st.summary = outcome.summary.clone();
            st.outcome = Some(outcome);
            st.phase = GdPhase::Done;
        }
        Ok(st)
    }

    fn start(&self, st: &mut GdState) -> Result<Vec<PendingAction>, GameError> {
        if st.phase == GdPhase::Done {
            return Ok(Vec::new());
        }
        Ok(vec![PendingAction::Deal { phase: "hole".into(), cards: Self::expected_deal() }])
    }

    fn receive_cards(&self, st: &mut GdState, cards: &[DealtCard]) -> Result<Vec<PendingAction>, GameError> {
        if st.phase != GdPhase::Dealing {
            return Err(GameError::BadDeal("no deal was requested".into()));
        }
        let expected = Self::expected_deal();
        if cards.len() != expected.len() {
            return Err(GameError::BadDeal(format!(
                "expected {} cards, got {}",
                expected.len(),
                cards.len()
            )));
        }
        for (c, spec) in cards.iter().zip(&expected) {
            if c.target != spec.target || c.face != spec.face {
                return Err(GameError::BadDeal(format!(
                    "card at position {} went to the wrong place",
                    c.position
                )));
            }
            let code = usize::from(c.card.code());
            if c.card.pack() >= PACKS || st.positions[code].is_some() {
                return Err(GameError::BadDeal(format!(
                    "{} is not a card of the two packs dealt once",
                    c.card
                )));
            }
            st.positions[code] = Some(c.position);
            if let DealTo::Player(s) = c.target {
                st.hands[s.index()].push(c.card);
            }
        }
        self.after_deal(st);
        Ok(Vec::new())
    }

    fn to_act(&self, st: &GdState) -> Option<Seat> {
        matches!(st.phase, GdPhase::Tribute | GdPhase::Return | GdPhase::Playing | GdPhase::Vote)
            .then_some(Seat(st.turn))
    }

    fn validate(&self, st: &GdState, seat: Seat, action: &GdAction) -> Result<(), GameError> {
        self.check(st, seat, action).map(|_| ()).map_err(GameError::from)
    }

    fn apply(
        &self,
        st: &mut GdState,
        seat: Seat,
        action: &GdAction,
    ) -> Result<Vec<PendingAction>, GameError> {
        let reading = self.check(st, seat, action)?;
        let s = seat.0;
        let out = match action {
            GdAction::Tribute { position } => {
                let card = st.held(s, *position)?;
                self.give(st, s, card)?
            }
            GdAction::Return { position } => {
                let card = st.held(s, *position)?;
                self.give_back(st, s, card)?
            }
            GdAction::Play { cards, .. } => match reading {
                Some(r) => self.play(st, s, cards, r),
                None => return Err(GameError::Illegal("no reading".into())),
            },
            GdAction::Pass {} => {
                self.pass(st, s);
                Vec::new()
            }
            GdAction::Surrender {} => {
                st.surrendered[usize::from(team(s))] = true;
                st.vote = Some(Vote {
                    proposer: s,
                    ask: vec![partner(s), (s + 1) % 4, (s + 3) % 4],
                    partner_agreed: false,
                });
                st.phase = GdPhase::Vote;
                st.turn = partner(s);
                Vec::new()
            }
            GdAction::Vote { accept } => self.vote(st, s, *accept),
        };
        Ok(out)
    }

    fn is_over(&self, st: &GdState) -> bool {
        st.phase == GdPhase::Done
    }

    fn result(&self, st: &GdState) -> Option<HandResult> {
        let o = st.outcome.as_ref()?;
        let winners = match o.winner_team {
            Some(t) => (0..4u8).filter(|s| team(*s) == t).map(Seat).collect(),
            None => Vec::new(),
        };
        Some(HandResult {
            winners,
            net: o.net.clone(),
            house_net: 0,
            rake: Chips::ZERO,
            summary: o.summary.clone(),
        })
    }

    fn valid_actions(&self, st: &GdState) -> Vec<ActionOption<GdAction>> {
        let free = |action| ActionOption { action, cost: Chips::ZERO, affordable: true, range: None };
        let seat = st.turn;
        let hand = &st.hands[usize::from(seat)];
        match st.phase {
            GdPhase::Tribute => tribute::tribute_choices(hand, st.wilds(), &st.settings)
                .into_iter()
                .filter_map(|card| st.position_of(card))
                .map(|position| free(GdAction::Tribute { position }))
                .collect(),
            GdPhase::Return => tribute::return_choices(hand, st.wilds(), &st.settings)
                .into_iter()
                .filter_map(|card| st.position_of(card))
                .map(|position| free(GdAction::Return { position }))
                .collect(),
            GdPhase::Playing => {
                let mut out: Vec<_> = st.lead.as_ref().map(|_| free(GdAction::Pass {})).into_iter().collect();
                out.extend(listed(st.legal_plays(seat)).into_iter().map(|m| {
                    free(GdAction::Play {
                        cards: m.cards,
                        reading: Some(Declared { kind: m.reading.kind, rank: m.reading.rank }),
                    })
                }));
                if !st.surrendered[usize::from(team(seat))] {
                    out.push(free(GdAction::Surrender {}));
                }
                out
            }
            GdPhase::Vote => {
                vec![free(GdAction::Vote { accept: true }), free(GdAction::Vote { accept: false })]
            }
            _ => Vec::new(),
        }
    }

    fn public_state(&self, st: &GdState) -> Value {
        let tribute = st.tribute.as_ref().map(|t| {
            let gift = |g: &Gift| {
                // Shown once its face-up transfer publishes the opening: the
                // first card of a double tribute waits for the second.
                let shown = st.settings.show_tribute && g.to.is_some();
                json!({"from": g.from, "to": g.to, "card": if shown { json!(g.card) } else { Value::Null }})
            };
            json!({
                "payers": t.payers,
                "receivers": t.receivers,
                "resisted": t.resisted,
                "given": t.given.iter().map(gift).collect::<Vec<_>>(),
                "returned": t.returned.iter().map(gift).collect::<Vec<_>>(),
            })
        });
        json!({
            "phase": st.phase,
            "to_act": self.to_act(st),
            "level": st.level,
            "levels": st.memory.levels,
            "level_team": st.memory.level_team,
            "match_no": st.memory.match_no,
            "deal": st.memory.deal,
            "matches_won": st.memory.matches_won,
            "last_order": st.memory.last_order,
            "cards_left": st.hands.iter().map(|h| h.len()).collect::<Vec<_>>(),
            "tribute": tribute,
            "lead": st.lead,
            "passes": st.passes,
            "finished": st.finished,
            "history": st.history,
            "vote": st.vote,
            "outcome": st.outcome,
            "summary": st.summary,
        })
    }

    fn phase(&self, st: &GdState) -> Option<&'static str> {
        Some(st.phase.name())
    }

    /// The tribute and return cards when the table shows them, the play to
    /// beat and every card played.
    fn shown_cards(&self, st: &GdState) -> Vec<CardId> {
        let gifts = st
            .tribute
            .iter()
            .filter(|_| st.settings.show_tribute)
            .flat_map(|t| t.given.iter().chain(&t.returned))
            .filter(|g| g.to.is_some())
            .map(|g| g.card);
        let lead = st.lead.iter().flat_map(|l| l.cards.iter().copied());
        let turns = st.history.iter().filter_map(|t| t.cards.as_ref()).flatten().copied();
        gifts.chain(lead).chain(turns).collect()
    }

    /// A play's cards; tribute and return name a deck position, not a card.
    fn cards_played(&self, action: &GdAction) -> Vec<CardId> {
        match action {
            GdAction::Play { cards, .. } => cards.clone(),
            GdAction::Pass {}
            | GdAction::Tribute { .. }
            | GdAction::Return { .. }
            | GdAction::Surrender {}
            | GdAction::Vote { .. } => Vec::new(),
        }
    }

    fn auto_action(&self, st: &GdState, seat: Seat) -> Option<GdAction> {
        if self.to_act(st) != Some(seat) {
            return None;
        }
        let v = ai::View::of(st, seat.0);
        Some(match st.settings.timeout_action {
            TimeoutAction::Pass => ai::timer(&v),
            TimeoutAction::Ai => ai::takeover(&v, ai::TAKEOVER_NODES),
        })
    }

    fn details(&self, st: &GdState) -> Option<GameDetails> {
        let o = st.outcome.as_ref()?;
        Some(GameDetails::Guandan(GdDetails {
            level: st.level,
            level_team: st.memory.level_team,
            stake_per_level: st.settings.stake_per_level,
            tribute: st.tribute.as_ref().map(|t| GdTributeDetails {
                payers: t.payers.clone(),
                receivers: t.receivers.clone(),
                resisted: t.resisted,
            }),
            order: o.order.clone(),
            winner_team: o.winner_team,
            levels_up: o.levels_up,
            levels_after: o.levels_after,
            match_end: o.match_end,
            net: o.net.clone(),
        }))
    }

    fn memory_after(&self, st: &GdState) -> GdMemory {
        match &st.outcome {
            Some(o) => o.memory_after.clone(),
            None => st.memory.clone(),
        }
    }

    fn match_time_limit(&self, s: &GdSettings) -> Option<u64> {
        (s.max_game_duration_sec > 0).then_some(s.max_game_duration_sec)
    }

    /// A match begins at its first deal (`deal` 0).
    fn match_begins(&self, m: &GdMemory) -> bool {
        m.deal == 0
    }

    /// The dealer's `end_request`: the next deal deals nothing, moves no
    /// chips and ends the match ([`settle::settle_request`]).
    fn end_match(&self, m: &GdMemory, stop: MatchStop) -> Option<GdMemory> {
        let req = match stop {
            MatchStop::Timeout => EndRequest::Timeout,
            MatchStop::Left { seat } if usize::from(seat.0) < PLAYERS => {
                EndRequest::Disconnect { seat: seat.0 }
            }
            MatchStop::Left { .. } => return None,
        };
        (m.deal > 0).then(|| GdMemory { end_request: Some(req), ..m.clone() })
    }
}
