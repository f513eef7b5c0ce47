//! Blackjack: 1–7 players against the house, dealt from a shoe of 1–8 packs.
//!
//! Flow: betting (each seat in order bets or sits out) → deal (one card to
//! each player face up, the house up card, a second card to each player, the
//! house hole card face down) → insurance when the house shows an ace → the
//! peek (the house checks for blackjack when its up card is an ace or worth
//! ten; on a blackjack the hole card is revealed and the hand settles at
//! once) → each player's hands in seat order (hit, stand, double, split) →
//! the hole card is revealed and the house draws to 17 → settlement.
//!
//! Chips: every stake (bet, double, split, insurance) is debited from the
//! player when it is made. At settlement each player is credited what the
//! hand pays back (stake included), and the house bank takes the difference:
//! one `Credit` to the house for what it won net, or one `Debit` from the
//! house for what it lost net. So total debits = total credits, and
//! `house_net = -(sum of player nets)`. Rules and rounding: docs/games/blackjack.md.

#![deny(missing_docs)]

pub mod rules;

use claw_protocol::{CardId, Chips, Rank, Seat};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::plugin::{
    ActionOption, BlindDeal, CardFace, ChipMove, ChipOp, ChipParty, DealSpec, DealTo, DealtCard, GameDetails,
    GameError, GameMeta, GamePlugin, HandResult, PendingAction, PlayerInfo,
};
use rules::{card_points, hand_total, house_draws, is_pair, is_two_card_21};

/// Registry name of the game.
pub const NAME: &str = "blackjack";
/// Most seats at a blackjack table.
pub const MAX_PLAYERS: u8 = 7;
/// Cards always left in the shoe for the house to finish its hand: the house
/// draws while its hard total is at most 16, and its first two cards are
/// worth at least 2, so it never needs more than 15 more cards. A player's
/// hit, double or split is only offered when the shoe still has this many
/// cards after it; with 6 packs that never binds in practice.
pub const HOUSE_RESERVE: usize = 15;
/// The largest `max_bet` a table may set (2^50 chips), so that no payout or
/// sum of payouts can overflow a `u64`.
pub const BET_LIMIT: u64 = claw_protocol::limits::MAX_STAKE;

/// The Blackjack plugin.
#[derive(Debug, Clone, Copy, Default)]
pub struct Blackjack;

/// Table settings for Blackjack.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct BlackjackSettings {
    /// Smallest bet (at least 1).
    pub min_bet: Chips,
    /// Largest bet (at least `min_bet`, at most [`BET_LIMIT`]).
    pub max_bet: Chips,
    /// Packs of 52 in the shoe, 1–8.
    pub decks: u8,
    /// Whether the house hits a soft 17 (default: stands on all 17s).
    pub hit_soft_17: bool,
    /// How many splits a seat may make in one hand, 0–3 (3 → up to 4 hands).
    pub max_splits: u8,
    /// Whether a hand made by a split may double down.
    pub double_after_split: bool,
}

impl Default for BlackjackSettings {
    fn default() -> Self {
        BlackjackSettings {
            min_bet: Chips(10),
            max_bet: Chips(1000),
            decks: 6,
            hit_soft_17: false,
            max_splits: 3,
            double_after_split: true,
        }
    }
}

/// Blackjack keeps nothing between hands.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct BlackjackMemory {}

/// A player's move. Wire form: `{"type": "bet", "amount": 50}`, `{"type": "hit"}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "kebab-case", deny_unknown_fields)]
pub enum BlackjackAction {
    /// Betting phase: stake `amount` (within [min_bet, max_bet] and the stack).
    Bet {
        /// Chips to stake.
        amount: Chips,
    },
    /// Betting phase: sit this hand out.
    Skip {},
    /// Insurance phase: insure for `amount`, 1 to half the bet (rounded down).
    Insurance {
        /// Chips to stake on insurance.
        amount: Chips,
    },
    /// Insurance phase: decline insurance.
    NoInsurance {},
    /// Take a card.
    Hit {},
    /// Take no more cards on this hand.
    Stand {},
    /// Double the stake on a two-card hand, take exactly one card, stand.
    Double {},
    /// Split a pair into two hands, staking the bet again.
    Split {},
}

impl BlackjackAction {
    fn name(&self) -> &'static str {
        match self {
            BlackjackAction::Bet { .. } => "bet",
            BlackjackAction::Skip {} => "skip",
            BlackjackAction::Insurance { .. } => "insurance",
            BlackjackAction::NoInsurance {} => "no-insurance",
            BlackjackAction::Hit {} => "hit",
            BlackjackAction::Stand {} => "stand",
            BlackjackAction::Double {} => "double",
            BlackjackAction::Split {} => "split",
        }
    }
}

/// Where a hand is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Phase {
    /// Waiting for bets, seat by seat.
    Betting,
    /// The house shows an ace: each eligible seat insures or declines.
    Insurance,
    /// Players play their hands (deals and the house's play happen in between).
    PlayerTurns,
    /// Settled.
    Done,
}

impl Phase {
    fn name(self) -> &'static str {
        match self {
            Phase::Betting => "betting",
            Phase::Insurance => "insurance",
            Phase::PlayerTurns => "player-turns",
            Phase::Done => "done",
        }
    }
}

/// A seat's part in this hand.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SeatStatus {
    /// Has not bet or skipped yet.
    Undecided,
    /// Sat this hand out.
    SatOut,
    /// Bet and plays.
    Playing,
}

/// The deal the plugin asked for and waits to receive.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", tag = "kind")]
pub enum Awaiting {
    /// The first deal: two cards per betting seat, up card and hole card.
    Initial,
    /// One card for a hit on `hand` of `seat`.
    Hit {
        /// Seat index.
        seat: u8,
        /// Index of the hand within the seat.
        hand: u8,
    },
    /// One card for a double on `hand` of `seat`.
    Double {
        /// Seat index.
        seat: u8,
        /// Index of the hand within the seat.
        hand: u8,
    },
    /// Two cards after a split: one for `hand`, one for the new hand after it.
    Split {
        /// Seat index.
        seat: u8,
        /// Index of the hand that was split.
        hand: u8,
    },
    /// One card for the house.
    House,
}

/// One of a player's hands (a seat has several after splits).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlayerHand {
    /// The cards, in the order dealt.
    pub cards: Vec<CardId>,
    /// Chips riding on this hand (the bet, twice it after a double).
    pub stake: Chips,
    /// Doubled down (took its one card).
    pub doubled: bool,
    /// Made by a split (so never a natural).
    pub from_split: bool,
    /// No more decisions on this hand.
    pub done: bool,
}

impl PlayerHand {
    /// A natural: two cards worth 21, not from a split.
    pub fn is_natural(&self) -> bool {
        !self.from_split && is_two_card_21(&self.cards)
    }

    fn is_split_aces(&self) -> bool {
        self.from_split && self.cards.first().and_then(|c| c.card().rank()) == Some(Rank::Ace)
    }
}

/// One seat's state in this hand.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SeatState {
    /// Chips left to stake this hand.
    pub stack: Chips,
    /// Betting, sat out, or not decided yet.
    pub status: SeatStatus,
    /// The initial bet.
    pub bet: Chips,
    /// Insurance staked (0 when declined or not offered).
    pub insurance: Chips,
    /// Whether this seat has answered the insurance offer.
    pub insurance_decided: bool,
    /// One hand, or more after splits, in playing order.
    pub hands: Vec<PlayerHand>,
    /// Total debited from this seat this hand.
    pub staked: Chips,
    /// Total credited to this seat this hand.
    pub paid: Chips,
}

/// Everything about a Blackjack hand in progress, the hole card included.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BlackjackState {
    /// The table settings.
    pub settings: BlackjackSettings,
    /// One entry per seat, in seat order.
    pub seats: Vec<SeatState>,
    /// The house's cards: up card, hole card, then draws.
    pub house: Vec<CardId>,
    /// Deck position of the hole card, once dealt.
    pub hole_position: Option<u16>,
    /// Whether the hole card has been revealed to everyone.
    pub hole_revealed: bool,
    /// Where the hand is.
    pub phase: Phase,
    /// The deal asked for and not yet received.
    pub awaiting: Option<Awaiting>,
    /// What the pending deal must look like.
    pub expected: Vec<DealSpec>,
    /// Cards in the shoe.
    pub shoe_size: usize,
    /// Cards dealt from the shoe so far.
    pub dealt: usize,
    /// Outcome in words, set at settlement.
    pub summary: String,
}

/// How one player hand ended against the house.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum HandOutcome {
    /// A natural against a house without one: pays 3:2.
    Blackjack,
    /// Beat the house (or the house bust): pays 1:1.
    Win,
    /// Equal totals, or naturals on both sides: the stake back.
    Push,
    /// Lower than the house, or any non-natural against a house blackjack.
    Lose,
    /// Above 21.
    Bust,
}

impl HandOutcome {
    /// The word used in the credit `reason` and the summary.
    pub fn word(self) -> &'static str {
        match self {
            HandOutcome::Blackjack => "blackjack",
            HandOutcome::Win => "win",
            HandOutcome::Push => "push",
            HandOutcome::Lose => "lose",
            HandOutcome::Bust => "bust",
        }
    }
}

/// A finished player hand against the house's final cards: its outcome and
/// what it pays back, stake included (3:2 rounds down).
pub fn hand_outcome(h: &PlayerHand, house: &[CardId]) -> (HandOutcome, u64) {
    let t = hand_total(&h.cards);
    let ht = hand_total(house);
    let stake = h.stake.0;
    if is_two_card_21(house) {
        if h.is_natural() {
            (HandOutcome::Push, stake)
        } else {
            (HandOutcome::Lose, 0)
        }
    } else if t.is_bust() {
        (HandOutcome::Bust, 0)
    } else if h.is_natural() {
        (HandOutcome::Blackjack, stake + stake * 3 / 2)
    } else if ht.is_bust() || t.total > ht.total {
        (HandOutcome::Win, 2 * stake)
    } else if t.total == ht.total {
        (HandOutcome::Push, stake)
    } else {
        (HandOutcome::Lose, 0)
    }
}

/// One player hand in [`BlackjackDetails`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HandDetails {
    /// The hand's best total.
    pub total: u32,
    /// How it ended.
    pub outcome: HandOutcome,
    /// Chips riding on it (doubled included).
    pub stake: Chips,
    /// What it paid back, stake included.
    pub payout: Chips,
}

/// One betting seat in [`BlackjackDetails`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SeatDetails {
    /// The seat.
    pub seat: Seat,
    /// Its hands, in playing order (several after splits).
    pub hands: Vec<HandDetails>,
    /// Insurance staked (0 when none).
    pub insurance: Chips,
    /// What the insurance paid back (3 × stake on a house blackjack, else 0).
    pub insurance_payout: Chips,
    /// Credits minus debits over the hand.
    pub net: i64,
}

/// A finished Blackjack hand as typed data ([`GamePlugin::details`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BlackjackDetails {
    /// The house's final total.
    pub house_total: u32,
    /// The house had a natural.
    pub house_blackjack: bool,
    /// Every seat that bet, in seat order.
    pub seats: Vec<SeatDetails>,
    /// The house bank's net change.
    pub house_net: i64,
}

fn up(target: DealTo) -> DealSpec {
    DealSpec { target, face: CardFace::Up }
}

fn seat_u8(i: usize) -> u8 {
    // At most MAX_PLAYERS seats, checked in create_game.
    u8::try_from(i).unwrap_or(u8::MAX)
}

impl BlackjackState {
    fn next_bettor(&self) -> Option<usize> {
        self.seats.iter().position(|s| s.status == SeatStatus::Undecided)
    }

    fn max_insurance(s: &SeatState) -> Chips {
        Chips((s.bet.0 / 2).min(s.stack.0))
    }

    fn insurance_candidate(&self) -> Option<usize> {
        self.seats.iter().position(|s| {
            s.status == SeatStatus::Playing && !s.insurance_decided && Self::max_insurance(s).0 > 0
        })
    }

    /// The seat and hand index to play now.
    fn current_hand(&self) -> Option<(usize, usize)> {
        self.seats
            .iter()
            .enumerate()
            .filter(|(_, s)| s.status == SeatStatus::Playing)
            .find_map(|(i, s)| s.hands.iter().position(|h| !h.done).map(|h| (i, h)))
    }

    fn up_card(&self) -> Option<CardId> {
        self.house.first().copied()
    }

    fn can_draw(&self, n: usize) -> bool {
        self.shoe_size.saturating_sub(self.dealt) >= n + HOUSE_RESERVE
    }

    fn can_double(&self, seat: usize, hand: usize) -> bool {
        let (s, h) = (&self.seats[seat], &self.seats[seat].hands[hand]);
        h.cards.len() == 2
            && !h.doubled
            && (!h.from_split || self.settings.double_after_split)
            && s.stack >= h.stake
            && self.can_draw(1)
    }

    fn can_split(&self, seat: usize, hand: usize) -> bool {
        let (s, h) = (&self.seats[seat], &self.seats[seat].hands[hand]);
        is_pair(&h.cards)
            && s.hands.len() <= usize::from(self.settings.max_splits)
            && s.stack >= h.stake
            && self.can_draw(2)
    }

    fn can_hit(&self) -> bool {
        self.can_draw(1)
    }
}

impl Blackjack {
    fn begin_deal(&self, st: &mut BlackjackState) -> Vec<PendingAction> {
        let playing: Vec<usize> =
            (0..st.seats.len()).filter(|i| st.seats[*i].status == SeatStatus::Playing).collect();
        if playing.is_empty() {
            st.phase = Phase::Done;
            st.summary = "every seat sat out".into();
            return Vec::new();
        }
        for i in &playing {
            let s = &mut st.seats[*i];
            s.hands = vec![PlayerHand {
                cards: Vec::new(),
                stake: s.bet,
                doubled: false,
                from_split: false,
                done: false,
            }];
        }
        let mut specs = Vec::with_capacity(playing.len() * 2 + 2);
        for round in 0..2 {
            for i in &playing {
                specs.push(up(DealTo::Player(Seat(seat_u8(*i)))));
            }
            specs.push(DealSpec {
                target: DealTo::House,
                face: if round == 0 { CardFace::Up } else { CardFace::Down },
            });
        }
        st.awaiting = Some(Awaiting::Initial);
        st.expected = specs.clone();
        vec![PendingAction::Deal { phase: "initial".into(), cards: specs }]
    }

    /// After insurance (or when none was offered): the peek, then play.
    fn after_insurance(&self, st: &mut BlackjackState) -> Vec<PendingAction> {
        st.phase = Phase::PlayerTurns;
        let peeks = st.up_card().map(|c| card_points(c) == 1 || card_points(c) == 10).unwrap_or(false);
        if peeks && is_two_card_21(&st.house) {
            let mut out = Vec::new();
            if let Some(p) = st.hole_position {
                st.hole_revealed = true;
                out.push(PendingAction::Reveal { positions: vec![p] });
            }
            out.extend(self.settle(st));
            return out;
        }
        self.advance(st)
    }

    /// Waits for the next player decision, or plays the house and settles.
    fn advance(&self, st: &mut BlackjackState) -> Vec<PendingAction> {
        if st.current_hand().is_some() {
            return Vec::new();
        }
        let mut out = Vec::new();
        if !st.hole_revealed {
            if let Some(p) = st.hole_position {
                st.hole_revealed = true;
                out.push(PendingAction::Reveal { positions: vec![p] });
            }
        }
        out.extend(self.house_play(st));
        out
    }

    fn house_play(&self, st: &mut BlackjackState) -> Vec<PendingAction> {
        let live = st
            .seats
            .iter()
            .filter(|s| s.status == SeatStatus::Playing)
            .flat_map(|s| &s.hands)
            .any(|h| !h.is_natural() && !hand_total(&h.cards).is_bust());
        if live && house_draws(&st.house, st.settings.hit_soft_17) && st.can_draw(1) {
            let specs = vec![up(DealTo::House)];
            st.awaiting = Some(Awaiting::House);
            st.expected = specs.clone();
            return vec![PendingAction::Deal { phase: "house".into(), cards: specs }];
        }
        self.settle(st)
    }

    fn settle(&self, st: &mut BlackjackState) -> Vec<PendingAction> {
        st.phase = Phase::Done;
        st.awaiting = None;
        let house = hand_total(&st.house);
        let house_bj = is_two_card_21(&st.house);
        let mut credits = Vec::new();
        let mut lines = vec![format!(
            "house {}{}",
            if house_bj { "blackjack".to_string() } else { house.total.to_string() },
            if house.is_bust() { " bust" } else { "" }
        )];
        for (i, s) in st.seats.iter_mut().enumerate() {
            if s.status != SeatStatus::Playing {
                continue;
            }
            let party = ChipParty::Seat(Seat(seat_u8(i)));
            let mut words = Vec::new();
            for (k, h) in s.hands.iter().enumerate() {
                let t = hand_total(&h.cards);
                let (outcome, payout) = hand_outcome(h, &st.house);
                let word = outcome.word();
                words.push(format!("{} {word}", t.total));
                if payout > 0 {
                    s.paid.0 += payout;
                    credits.push(PendingAction::Chip(ChipMove {
                        op: ChipOp::Credit,
                        party,
                        amount: Chips(payout),
                        reason: format!("hand {}: {word}", k + 1),
                    }));
                }
            }
            if s.insurance.0 > 0 {
                if house_bj {
                    let payout = 3 * s.insurance.0;
                    s.paid.0 += payout;
                    credits.push(PendingAction::Chip(ChipMove {
                        op: ChipOp::Credit,
                        party,
                        amount: Chips(payout),
                        reason: "insurance pays 2:1".into(),
                    }));
                    words.push("insurance won".into());
                } else {
                    words.push("insurance lost".into());
                }
            }
            let net = i128::from(s.paid.0) - i128::from(s.staked.0);
            lines.push(format!("seat {i}: {} ({net:+})", words.join(", ")));
        }
        let staked: u64 = st.seats.iter().map(|s| s.staked.0).sum();
        let paid: u64 = st.seats.iter().map(|s| s.paid.0).sum();
        let mut out = Vec::new();
        if paid > staked {
            out.push(PendingAction::Chip(ChipMove {
                op: ChipOp::Debit,
                party: ChipParty::House,
                amount: Chips(paid - staked),
                reason: "house pays out".into(),
            }));
        }
        out.extend(credits);
        if staked > paid {
            out.push(PendingAction::Chip(ChipMove {
                op: ChipOp::Credit,
                party: ChipParty::House,
                amount: Chips(staked - paid),
                reason: "house wins".into(),
            }));
        }
        st.summary = lines.join("; ");
        out
    }

    fn check_deal(st: &BlackjackState, cards: &[DealtCard]) -> Result<Awaiting, GameError> {
        let awaiting = st.awaiting.ok_or_else(|| GameError::BadDeal("no deal was requested".into()))?;
        if cards.len() != st.expected.len() {
            return Err(GameError::BadDeal(format!(
                "expected {} cards, got {}",
                st.expected.len(),
                cards.len()
            )));
        }
        for (c, spec) in cards.iter().zip(&st.expected) {
            if c.target != spec.target || c.face != spec.face {
                return Err(GameError::BadDeal(format!(
                    "card at position {} went to the wrong place",
                    c.position
                )));
            }
            if c.card.card().is_joker() {
                return Err(GameError::BadDeal(format!("a joker ({}) is not in a blackjack shoe", c.card)));
            }
        }
        Ok(awaiting)
    }

    fn finish_if_final(h: &mut PlayerHand) {
        let t = hand_total(&h.cards);
        if t.total >= 21 || h.doubled || (h.is_split_aces() && h.cards.len() >= 2) {
            h.done = true;
        }
    }
}

impl GamePlugin for Blackjack {
    type State = BlackjackState;
    type Action = BlackjackAction;
    type Settings = BlackjackSettings;
    type Memory = BlackjackMemory;

    fn meta(&self) -> GameMeta {
        GameMeta {
            house: true,
            blind: BlindDeal::HouseHand,
            ..GameMeta::new(NAME, "Blackjack", 1, MAX_PLAYERS, "1")
        }
    }

    fn validate_settings(&self, s: &BlackjackSettings) -> Result<(), GameError> {
        let bad = |m: &str| Err(GameError::BadSettings(m.to_string()));
        if s.min_bet.0 == 0 {
            return bad("min_bet must be at least 1");
        }
        if s.max_bet < s.min_bet {
            return bad("max_bet must be at least min_bet");
        }
        if s.max_bet.0 > BET_LIMIT {
            return bad("max_bet must be at most 2^50");
        }
        if !(1..=8).contains(&s.decks) {
            return bad("decks must be 1–8");
        }
        if s.max_splits > 3 {
            return bad("max_splits must be 0–3");
        }
        Ok(())
    }

    fn create_deck(&self, s: &BlackjackSettings) -> Vec<CardId> {
        CardId::deck(s.decks, false)
    }

    fn create_game(
        &self,
        settings: &BlackjackSettings,
        players: &[PlayerInfo],
        _memory: &BlackjackMemory,
    ) -> Result<BlackjackState, GameError> {
        self.validate_settings(settings)?;
        if players.is_empty() || players.len() > usize::from(MAX_PLAYERS) {
            return Err(GameError::BadPlayers(format!("blackjack seats 1–7 players, got {}", players.len())));
        }
        Ok(BlackjackState {
            settings: settings.clone(),
            seats: players
                .iter()
                .map(|p| SeatState {
                    stack: p.balance,
                    status: SeatStatus::Undecided,
                    bet: Chips::ZERO,
                    insurance: Chips::ZERO,
                    insurance_decided: false,
                    hands: Vec::new(),
                    staked: Chips::ZERO,
                    paid: Chips::ZERO,
                })
                .collect(),
            house: Vec::new(),
            hole_position: None,
            hole_revealed: false,
            phase: Phase::Betting,
            awaiting: None,
            expected: Vec::new(),
            shoe_size: usize::from(settings.decks) * 52,
            dealt: 0,
            summary: String::new(),
        })
    }

    fn start(&self, _state: &mut BlackjackState) -> Result<Vec<PendingAction>, GameError> {
        // Nothing is staked or dealt before the bets.
        Ok(Vec::new())
    }

    fn receive_cards(
        &self,
        st: &mut BlackjackState,
        cards: &[DealtCard],
    ) -> Result<Vec<PendingAction>, GameError> {
        let awaiting = Self::check_deal(st, cards)?;
        st.awaiting = None;
        st.expected.clear();
        st.dealt += cards.len();
        match awaiting {
            Awaiting::Initial => {
                for c in cards {
                    match c.target {
                        DealTo::Player(s) => {
                            if let Some(h) = st.seats.get_mut(s.index()).and_then(|x| x.hands.first_mut()) {
                                h.cards.push(c.card);
                            }
                        }
                        _ => {
                            if c.face == CardFace::Down {
                                st.hole_position = Some(c.position);
                            }
                            st.house.push(c.card);
                        }
                    }
                }
                for s in st.seats.iter_mut().filter(|s| s.status == SeatStatus::Playing) {
                    for h in &mut s.hands {
                        if h.is_natural() {
                            h.done = true;
                        }
                    }
                }
                let ace_up = st.up_card().map(|c| card_points(c) == 1).unwrap_or(false);
                if ace_up && st.insurance_candidate().is_some() {
                    st.phase = Phase::Insurance;
                    return Ok(Vec::new());
                }
                Ok(self.after_insurance(st))
            }
            Awaiting::Hit { seat, hand } | Awaiting::Double { seat, hand } => {
                if let Some(h) =
                    st.seats.get_mut(usize::from(seat)).and_then(|s| s.hands.get_mut(usize::from(hand)))
                {
                    h.cards.push(cards[0].card);
                    Self::finish_if_final(h);
                }
                Ok(self.advance(st))
            }
            Awaiting::Split { seat, hand } => {
                if let Some(s) = st.seats.get_mut(usize::from(seat)) {
                    let k = usize::from(hand);
                    for (j, c) in cards.iter().enumerate() {
                        if let Some(h) = s.hands.get_mut(k + j) {
                            h.cards.push(c.card);
                            Self::finish_if_final(h);
                        }
                    }
                }
                Ok(self.advance(st))
            }
            Awaiting::House => {
                st.house.push(cards[0].card);
                Ok(self.house_play(st))
            }
        }
    }

    fn to_act(&self, st: &BlackjackState) -> Option<Seat> {
        if st.awaiting.is_some() {
            return None;
        }
        let i = match st.phase {
            Phase::Betting => st.next_bettor(),
            Phase::Insurance => st.insurance_candidate(),
            Phase::PlayerTurns => st.current_hand().map(|(s, _)| s),
            Phase::Done => None,
        }?;
        Some(Seat(seat_u8(i)))
    }

    fn validate(&self, st: &BlackjackState, seat: Seat, action: &BlackjackAction) -> Result<(), GameError> {
        if st.phase == Phase::Done {
            return Err(GameError::HandOver);
        }
        if self.to_act(st) != Some(seat) {
            return Err(GameError::NotYourTurn);
        }
        let s = &st.seats[seat.index()];
        let wrong_phase = || {
            Err(GameError::Illegal(format!(
                "{} is not allowed in the {} phase",
                action.name(),
                st.phase.name()
            )))
        };
        match (st.phase, action) {
            (Phase::Betting, BlackjackAction::Bet { amount }) => {
                let (min, max) = (st.settings.min_bet, st.settings.max_bet);
                if *amount < min || *amount > max {
                    return Err(GameError::BadAmount(format!("bet {amount} is outside [{min}, {max}]")));
                }
                if *amount > s.stack {
                    return Err(GameError::BadAmount(format!("bet {amount} is above the stack {}", s.stack)));
                }
                Ok(())
            }
            (Phase::Betting, BlackjackAction::Skip {}) => Ok(()),
            (Phase::Insurance, BlackjackAction::Insurance { amount }) => {
                let max = BlackjackState::max_insurance(s);
                if amount.0 == 0 || *amount > max {
                    return Err(GameError::BadAmount(format!(
                        "insurance {amount} is outside [1, {max}] (half the bet, within the stack)"
                    )));
                }
                Ok(())
            }
            (Phase::Insurance, BlackjackAction::NoInsurance {}) => Ok(()),
            (Phase::PlayerTurns, a) => {
                let Some((si, hi)) = st.current_hand() else {
                    return Err(GameError::NotYourTurn);
                };
                match a {
                    BlackjackAction::Stand {} => Ok(()),
                    BlackjackAction::Hit {} if st.can_hit() => Ok(()),
                    BlackjackAction::Hit {} => Err(GameError::Illegal("the shoe is too low to hit".into())),
                    BlackjackAction::Double {} if st.can_double(si, hi) => Ok(()),
                    BlackjackAction::Double {} => Err(GameError::Illegal(
                        "double needs a two-card hand (after a split only if allowed) and a stack covering \
                         the stake"
                            .into(),
                    )),
                    BlackjackAction::Split {} if st.can_split(si, hi) => Ok(()),
                    BlackjackAction::Split {} => Err(GameError::Illegal(
                        "split needs two cards of the same value, a split left and a stack covering the bet"
                            .into(),
                    )),
                    _ => wrong_phase(),
                }
            }
            _ => wrong_phase(),
        }
    }

    fn apply(
        &self,
        st: &mut BlackjackState,
        seat: Seat,
        action: &BlackjackAction,
    ) -> Result<Vec<PendingAction>, GameError> {
        self.validate(st, seat, action)?;
        let i = seat.index();
        let party = ChipParty::Seat(seat);
        let mut out = Vec::new();
        match action {
            BlackjackAction::Bet { amount } => {
                let s = &mut st.seats[i];
                s.stack.0 -= amount.0;
                s.staked.0 += amount.0;
                s.bet = *amount;
                s.status = SeatStatus::Playing;
                out.push(PendingAction::Chip(ChipMove {
                    op: ChipOp::Debit,
                    party,
                    amount: *amount,
                    reason: "bet".into(),
                }));
                if st.next_bettor().is_none() {
                    out.extend(self.begin_deal(st));
                }
            }
            BlackjackAction::Skip {} => {
                st.seats[i].status = SeatStatus::SatOut;
                if st.next_bettor().is_none() {
                    out.extend(self.begin_deal(st));
                }
            }
            BlackjackAction::Insurance { amount } => {
                let s = &mut st.seats[i];
                s.stack.0 -= amount.0;
                s.staked.0 += amount.0;
                s.insurance = *amount;
                s.insurance_decided = true;
                out.push(PendingAction::Chip(ChipMove {
                    op: ChipOp::Debit,
                    party,
                    amount: *amount,
                    reason: "insurance".into(),
                }));
                if st.insurance_candidate().is_none() {
                    out.extend(self.after_insurance(st));
                }
            }
            BlackjackAction::NoInsurance {} => {
                st.seats[i].insurance_decided = true;
                if st.insurance_candidate().is_none() {
                    out.extend(self.after_insurance(st));
                }
            }
            BlackjackAction::Stand {} => {
                if let Some((si, hi)) = st.current_hand() {
                    st.seats[si].hands[hi].done = true;
                }
                out.extend(self.advance(st));
            }
            BlackjackAction::Hit {} | BlackjackAction::Double {} | BlackjackAction::Split {} => {
                let Some((si, hi)) = st.current_hand() else {
                    return Err(GameError::NotYourTurn);
                };
                let (seat_b, hand_b) = (seat_u8(si), u8::try_from(hi).unwrap_or(u8::MAX));
                let target = up(DealTo::Player(seat));
                let (phase, specs, awaiting) = match action {
                    BlackjackAction::Hit {} => {
                        ("hit", vec![target], Awaiting::Hit { seat: seat_b, hand: hand_b })
                    }
                    BlackjackAction::Double {} => {
                        let s = &mut st.seats[si];
                        let stake = s.hands[hi].stake;
                        s.stack.0 -= stake.0;
                        s.staked.0 += stake.0;
                        s.hands[hi].stake.0 += stake.0;
                        s.hands[hi].doubled = true;
                        out.push(PendingAction::Chip(ChipMove {
                            op: ChipOp::Debit,
                            party,
                            amount: stake,
                            reason: "double".into(),
                        }));
                        ("double", vec![target], Awaiting::Double { seat: seat_b, hand: hand_b })
                    }
                    _ => {
                        let s = &mut st.seats[si];
                        let stake = s.hands[hi].stake;
                        s.stack.0 -= stake.0;
                        s.staked.0 += stake.0;
                        let second = s.hands[hi].cards.pop();
                        s.hands[hi].from_split = true;
                        let new_hand = PlayerHand {
                            cards: second.into_iter().collect(),
                            stake,
                            doubled: false,
                            from_split: true,
                            done: false,
                        };
                        s.hands.insert(hi + 1, new_hand);
                        out.push(PendingAction::Chip(ChipMove {
                            op: ChipOp::Debit,
                            party,
                            amount: stake,
                            reason: "split".into(),
                        }));
                        ("split", vec![target, target], Awaiting::Split { seat: seat_b, hand: hand_b })
                    }
                };
                st.awaiting = Some(awaiting);
                st.expected = specs.clone();
                out.push(PendingAction::Deal { phase: phase.into(), cards: specs });
            }
        }
        Ok(out)
    }

    fn is_over(&self, st: &BlackjackState) -> bool {
        st.phase == Phase::Done
    }

    fn result(&self, st: &BlackjackState) -> Option<HandResult> {
        if st.phase != Phase::Done {
            return None;
        }
        let net: Vec<i64> = st.seats.iter().map(|s| s.paid.0 as i64 - s.staked.0 as i64).collect();
        let winners =
            net.iter().enumerate().filter(|(_, n)| **n > 0).map(|(i, _)| Seat(seat_u8(i))).collect();
        Some(HandResult {
            winners,
            house_net: -net.iter().sum::<i64>(),
            net,
            rake: Chips::ZERO,
            summary: st.summary.clone(),
        })
    }

    fn valid_actions(&self, st: &BlackjackState) -> Vec<ActionOption<BlackjackAction>> {
        let Some(seat) = self.to_act(st) else {
            return Vec::new();
        };
        let s = &st.seats[seat.index()];
        let free = |action| ActionOption { action, cost: Chips::ZERO, affordable: true, range: None };
        let mut out = Vec::new();
        match st.phase {
            Phase::Betting => {
                let (min, max) = (st.settings.min_bet, st.settings.max_bet.min(s.stack));
                if s.stack >= min {
                    out.push(ActionOption {
                        action: BlackjackAction::Bet { amount: min },
                        cost: min,
                        affordable: true,
                        range: Some((min, max)),
                    });
                }
                out.push(free(BlackjackAction::Skip {}));
            }
            Phase::Insurance => {
                let max = BlackjackState::max_insurance(s);
                out.push(ActionOption {
                    action: BlackjackAction::Insurance { amount: Chips(1) },
                    cost: Chips(1),
                    affordable: true,
                    range: Some((Chips(1), max)),
                });
                out.push(free(BlackjackAction::NoInsurance {}));
            }
            Phase::PlayerTurns => {
                if let Some((si, hi)) = st.current_hand() {
                    let stake = st.seats[si].hands[hi].stake;
                    if st.can_hit() {
                        out.push(free(BlackjackAction::Hit {}));
                    }
                    out.push(free(BlackjackAction::Stand {}));
                    for (ok, action) in [
                        (st.can_double(si, hi), BlackjackAction::Double {}),
                        (st.can_split(si, hi), BlackjackAction::Split {}),
                    ] {
                        if ok {
                            out.push(ActionOption { action, cost: stake, affordable: true, range: None });
                        }
                    }
                }
            }
            Phase::Done => {}
        }
        out
    }

    fn public_state(&self, st: &BlackjackState) -> Value {
        let house_visible: Vec<Value> = st
            .house
            .iter()
            .enumerate()
            .map(|(k, c)| if k == 1 && !st.hole_revealed { json!("hidden") } else { json!(c) })
            .collect();
        let house_total = if st.hole_revealed {
            Some(hand_total(&st.house).total)
        } else {
            st.up_card().map(|c| hand_total(&[c]).total)
        };
        let seats: Vec<Value> = st
            .seats
            .iter()
            .map(|s| {
                json!({
                    "status": s.status,
                    "stack": s.stack,
                    "bet": s.bet,
                    "insurance": s.insurance,
                    "hands": s.hands.iter().map(|h| {
                        let t = hand_total(&h.cards);
                        json!({
                            "cards": h.cards,
                            "total": t.total,
                            "soft": t.soft,
                            "stake": h.stake,
                            "doubled": h.doubled,
                            "blackjack": h.is_natural(),
                            "bust": t.is_bust(),
                            "done": h.done,
                        })
                    }).collect::<Vec<_>>(),
                })
            })
            .collect();
        json!({
            "phase": st.phase,
            "to_act": self.to_act(st),
            "current_hand": st.current_hand().map(|(_, h)| h),
            "house": { "cards": house_visible, "total": house_total, "hole_revealed": st.hole_revealed },
            "seats": seats,
            "shoe_left": st.shoe_size.saturating_sub(st.dealt),
            "summary": st.summary,
        })
    }

    fn phase(&self, st: &BlackjackState) -> Option<&'static str> {
        Some(st.phase.name())
    }

    /// The house's cards (the hole card once revealed) and every seat's hands.
    fn shown_cards(&self, st: &BlackjackState) -> Vec<CardId> {
        let house = st.house.iter().enumerate().filter(|(k, _)| *k != 1 || st.hole_revealed).map(|(_, c)| *c);
        let hands = st.seats.iter().flat_map(|s| &s.hands).flat_map(|h| h.cards.iter().copied());
        house.chain(hands).collect()
    }

    fn auto_action(&self, st: &BlackjackState, seat: Seat) -> Option<BlackjackAction> {
        if self.to_act(st) != Some(seat) {
            return None;
        }
        Some(match st.phase {
            Phase::Betting => {
                let min = st.settings.min_bet;
                if st.seats[seat.index()].stack >= min {
                    BlackjackAction::Bet { amount: min }
                } else {
                    BlackjackAction::Skip {}
                }
            }
            Phase::Insurance => BlackjackAction::NoInsurance {},
            Phase::PlayerTurns => BlackjackAction::Stand {},
            Phase::Done => return None,
        })
    }

    fn details(&self, st: &BlackjackState) -> Option<GameDetails> {
        if st.phase != Phase::Done {
            return None;
        }
        let house_blackjack = is_two_card_21(&st.house);
        let seats: Vec<SeatDetails> = st
            .seats
            .iter()
            .enumerate()
            .filter(|(_, s)| s.status == SeatStatus::Playing)
            .map(|(i, s)| SeatDetails {
                seat: Seat(seat_u8(i)),
                hands: s
                    .hands
                    .iter()
                    .map(|h| {
                        let (outcome, payout) = hand_outcome(h, &st.house);
                        HandDetails {
                            total: hand_total(&h.cards).total,
                            outcome,
                            stake: h.stake,
                            payout: Chips(payout),
                        }
                    })
                    .collect(),
                insurance: s.insurance,
                insurance_payout: Chips(if house_blackjack { 3 * s.insurance.0 } else { 0 }),
                net: s.paid.0 as i64 - s.staked.0 as i64,
            })
            .collect();
        let house_net = -st.seats.iter().map(|s| s.paid.0 as i64 - s.staked.0 as i64).sum::<i64>();
        Some(GameDetails::Blackjack(BlackjackDetails {
            house_total: hand_total(&st.house).total,
            house_blackjack,
            seats,
            house_net,
        }))
    }

    fn memory_after(&self, _st: &BlackjackState) -> BlackjackMemory {
        BlackjackMemory {}
    }
}
