//! Sam Gong (三公), as its source rules specify it: the product rules (game
//! rules, tiers, tutorial) and the engineering specification (tiers, state
//! machine, HandEvaluator, SettlementEngine, BankerRotation,
//! TutorialScriptEngine). The rules, and every interpretation of them, are
//! in `docs/games/sam-gong.md`.
//!
//! A hand: every player is dealt three face-down cards (seat 0 positions 0–2,
//! seat 1 positions 3–5, …); the banker looks at its cards and bets within the
//! tier's range and its balance (escrowed at once; on timeout the minimum);
//! then each other player, clockwise from the banker's left, calls the
//! banker's amount (escrowed at once) or folds (nothing lost; on timeout
//! fold); then the hands that called, and the banker's, are revealed and each
//! caller is settled against the banker (see [`settle`]). Folded hands are
//! never revealed by the plugin (the engine's `deferred` reveal policy opens
//! them later for the audit).

#![deny(missing_docs)]

pub mod eval;
pub mod rotation;
pub mod settle;
pub mod tutorial;

use std::collections::HashSet;

use claw_protocol::messages::RevealPolicy;
use claw_protocol::{CardId, Chips, Seat};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

pub use eval::{compare, HandValue, Outcome, SamGongRule};
pub use rotation::SamGongMemory;
pub use settle::{Decision, Entry, EntryResult, Settlement, SettlementRule};

use crate::plugin::{
    ActionOption, BlindDeal, CardFace, ChipMove, ChipOp, ChipParty, DealSpec, DealTo, DealtCard, GameDetails,
    GameError, GameMeta, GamePlugin, HandResult, PendingAction, PlayerInfo,
};

/// Registry name.
pub const NAME: &str = "sam-gong";

/// The Sam Gong plugin (registry name [`NAME`]).
#[derive(Debug, Clone, Copy, Default)]
pub struct SamGong;

/// Cards dealt to each player.
pub const CARDS_PER_PLAYER: usize = 3;

/// The largest `max_bet` a table may set (2^50, about 10^15 chips), so that
/// every payout and net change fits in an `i64`.
pub const MAX_BET: Chips = Chips(claw_protocol::limits::MAX_STAKE);

/// The room tiers of the source rules (青銅廳 … 鑽石廳).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Tier {
    /// 青銅廳: entry 1,000, bets 100–500.
    #[default]
    #[serde(alias = "青銅廳", alias = "青銅")]
    Bronze,
    /// 白銀廳: entry 10,000, bets 1,000–5,000.
    #[serde(alias = "白銀廳", alias = "白銀")]
    Silver,
    /// 黃金廳: entry 100,000, bets 10,000–50,000.
    #[serde(alias = "黃金廳", alias = "黃金")]
    Gold,
    /// 鉑金廳: entry 1,000,000, bets 100,000–500,000.
    #[serde(alias = "鉑金廳", alias = "鉑金")]
    Platinum,
    /// 鑽石廳: entry 10,000,000, bets 1,000,000–5,000,000.
    #[serde(alias = "鑽石廳", alias = "鑽石")]
    Diamond,
}

impl Tier {
    /// (entry chips, minimum bet, maximum bet) from the source rules' TIER_CONFIGS.
    pub fn limits(self) -> (Chips, Chips, Chips) {
        let (e, lo, hi) = match self {
            Tier::Bronze => (1_000, 100, 500),
            Tier::Silver => (10_000, 1_000, 5_000),
            Tier::Gold => (100_000, 10_000, 50_000),
            Tier::Platinum => (1_000_000, 100_000, 500_000),
            Tier::Diamond => (10_000_000, 1_000_000, 5_000_000),
        };
        (Chips(e), Chips(lo), Chips(hi))
    }

    /// The quick-bet buttons of the source rules' tiers (a UI hint; bets are validated on range).
    pub fn quick_bets(self) -> [Chips; 4] {
        let (_, lo, _) = self.limits();
        [Chips(lo.0), Chips(lo.0 * 2), Chips(lo.0 * 3), Chips(lo.0 * 5)]
    }
}

/// Room settings. Missing fields take their defaults; unknown fields are
/// ignored. `{}` is a bronze table with the product rules. Serialised (and so
/// normalised) with the limits resolved, so the signed settings state the
/// actual entry chips and bet range.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, into = "ResolvedSettings")]
pub struct SamGongSettings {
    /// The table tier; gives entry chips and the bet range.
    pub tier: Tier,
    /// Overrides the tier's entry chips (the dealer's join threshold; the
    /// plugin itself only reports it).
    pub entry_chips: Option<Chips>,
    /// Overrides the tier's minimum bet.
    pub min_bet: Option<Chips>,
    /// Overrides the tier's maximum bet.
    pub max_bet: Option<Chips>,
    /// Which hands count as Sam Gong: `ten-value` (product rules, default) or `face-cards`.
    pub sam_gong: SamGongRule,
    /// Rake on the losers' pot, in percent (product rules: 5).
    pub rake_percent: u8,
    /// Tutorial mode: scripted decks, a fixed NPC banker seat
    /// ([`TUTORIAL_BANKER`] unless `banker_seat` says otherwise), and no chips
    /// move (practice hands).
    pub tutorial: bool,
    /// Which reading of the settlement the table uses (default `banker-pays`).
    pub settlement: SettlementRule,
    /// Places the banker at this seat for every hand, instead of the rotation
    /// (set-ups, tests, replays; the tutorial's NPC seat).
    pub banker_seat: Option<Seat>,
}

/// The NPC banker's seat at a tutorial table when `banker_seat` is not set:
/// seat 1, since the learner opens the table and joins first (seat 0).
pub const TUTORIAL_BANKER: Seat = Seat(1);

impl Default for SamGongSettings {
    fn default() -> Self {
        SamGongSettings {
            tier: Tier::Bronze,
            entry_chips: None,
            min_bet: None,
            max_bet: None,
            sam_gong: SamGongRule::TenValue,
            rake_percent: 5,
            tutorial: false,
            settlement: SettlementRule::BankerPays,
            banker_seat: None,
        }
    }
}

/// The serialised form of [`SamGongSettings`]: every limit resolved.
#[derive(Debug, Clone, Serialize)]
struct ResolvedSettings {
    tier: Tier,
    entry_chips: Chips,
    min_bet: Chips,
    max_bet: Chips,
    sam_gong: SamGongRule,
    rake_percent: u8,
    tutorial: bool,
    settlement: SettlementRule,
    #[serde(skip_serializing_if = "Option::is_none")]
    banker_seat: Option<Seat>,
}

impl From<SamGongSettings> for ResolvedSettings {
    fn from(s: SamGongSettings) -> Self {
        let l = s.limits();
        ResolvedSettings {
            tier: s.tier,
            entry_chips: l.entry_chips,
            min_bet: l.min_bet,
            max_bet: l.max_bet,
            sam_gong: s.sam_gong,
            rake_percent: s.rake_percent,
            tutorial: s.tutorial,
            settlement: s.settlement,
            banker_seat: s.banker_seat,
        }
    }
}

/// The resolved table limits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct TableLimits {
    /// Chips a player needs to sit down (reported; the dealer enforces it).
    pub entry_chips: Chips,
    /// The smallest banker bet (also the timeout bet).
    pub min_bet: Chips,
    /// The largest banker bet.
    pub max_bet: Chips,
}

impl SamGongSettings {
    /// The tier's limits with the explicit overrides applied.
    pub fn limits(&self) -> TableLimits {
        let (e, lo, hi) = self.tier.limits();
        TableLimits {
            entry_chips: self.entry_chips.unwrap_or(e),
            min_bet: self.min_bet.unwrap_or(lo),
            max_bet: self.max_bet.unwrap_or(hi),
        }
    }

    /// The seat the settings place the banker at, if any: `banker_seat`, or
    /// [`TUTORIAL_BANKER`] at a tutorial table.
    pub fn fixed_banker(&self) -> Option<Seat> {
        self.banker_seat.or(self.tutorial.then_some(TUTORIAL_BANKER))
    }
}

/// A finished hand's settlement as typed data ([`GamePlugin::details`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SamGongDetails {
    /// The settlement reading the table used.
    pub rule: SettlementRule,
    /// A tutorial hand: `settlement` shows what it would have paid; no chips moved.
    pub practice: bool,
    /// Every non-banker seat's entry, the pot, the rake and the banker's result.
    pub settlement: Settlement,
}

/// A player's move.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "kebab-case")]
pub enum SamGongAction {
    /// The banker's bet (底注), within the tier's range and its balance.
    #[serde(alias = "banker-bet")]
    Bet {
        /// The bet; every caller must match it.
        amount: Chips,
    },
    /// Match the banker's bet.
    Call,
    /// Drop out; nothing lost, the hand stays face down.
    Fold,
}

/// Where the hand is (the source rules' phase names).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Phase {
    /// Waiting for the engine to deal.
    Dealing,
    /// The banker is to bet.
    BankerBet,
    /// Players call or fold in turn.
    PlayerBet,
    /// Showdown done, chips settled.
    Settled,
}

impl Phase {
    /// The name it is serialised as.
    fn name(self) -> &'static str {
        match self {
            Phase::Dealing => "dealing",
            Phase::BankerBet => "banker-bet",
            Phase::PlayerBet => "player-bet",
            Phase::Settled => "settled",
        }
    }
}

/// A seat's part in the hand.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SeatStatus {
    /// This hand's banker.
    Banker,
    /// Has not decided yet.
    Waiting,
    /// Matched the banker's bet (escrowed).
    Called,
    /// Dropped out; its cards stay face down.
    Folded,
}

/// The full state of a hand, hidden cards included (never sent to players).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SamGongState {
    /// The room settings the hand runs under.
    pub settings: SamGongSettings,
    /// The resolved entry chips and bet range.
    pub limits: TableLimits,
    /// The hand's players in seat order, with their balances at hand start.
    pub players: Vec<PlayerInfo>,
    /// The table memory this hand started from.
    pub memory: SamGongMemory,
    /// This hand's banker.
    pub banker: Seat,
    /// Where the hand is.
    pub phase: Phase,
    /// Each seat's three cards, once dealt.
    pub hands: Vec<[DealtCard; 3]>,
    /// The banker's bet (0 until it bets); also each call.
    pub banker_bet: Chips,
    /// Each seat's part in the hand, by seat.
    pub status: Vec<SeatStatus>,
    /// The seat the hand waits for.
    pub to_act: Option<Seat>,
    /// Each seat's hand value, filled at showdown for non-folded seats.
    pub values: Vec<Option<HandValue>>,
    /// The settlement, once the hand is over.
    pub settlement: Option<Settlement>,
}

impl SamGongState {
    fn n(&self) -> usize {
        self.players.len()
    }

    /// Non-banker seats, clockwise from the banker's left.
    pub fn clockwise(&self) -> Vec<Seat> {
        let n = self.n();
        (1..n).map(|k| Seat(((self.banker.index() + k) % n) as u8)).collect()
    }

    /// What `seat` has escrowed so far.
    fn escrowed(&self, seat: Seat) -> Chips {
        match self.status.get(seat.index()) {
            Some(SeatStatus::Called) => self.banker_bet,
            Some(SeatStatus::Banker) => self.banker_bet,
            _ => Chips::ZERO,
        }
    }

    fn balance(&self, seat: Seat) -> Chips {
        self.players.get(seat.index()).map_or(Chips::ZERO, |p| p.balance)
    }

    /// The sum of the players' calls so far (the source rules' `current_pot`;
    /// the banker's bet is escrow, not pot).
    pub fn pot(&self) -> Chips {
        Chips(self.status.iter().filter(|s| **s == SeatStatus::Called).map(|_| self.banker_bet.0).sum())
    }

    fn cards_of(&self, seat: Seat) -> Option<[CardId; 3]> {
        self.hands.get(seat.index()).map(|h| [h[0].card, h[1].card, h[2].card])
    }

    fn value_of(&self, seat: Seat) -> Option<HandValue> {
        self.cards_of(seat).map(|c| HandValue::of(&eval::faces(&c), self.settings.sam_gong))
    }
}

fn illegal(s: &str) -> GameError {
    GameError::Illegal(s.to_owned())
}

impl SamGong {
    fn settle_hand(&self, state: &mut SamGongState) -> Result<Vec<PendingAction>, GameError> {
        let banker = state.banker;
        let bv = state.value_of(banker).ok_or_else(|| GameError::BadDeal("banker has no cards".into()))?;
        let mut seats = Vec::new();
        let mut values = vec![None; state.n()];
        for seat in state.clockwise() {
            let d = match state.status[seat.index()] {
                SeatStatus::Called => {
                    let pv = state.value_of(seat).ok_or_else(|| GameError::BadDeal("no cards".into()))?;
                    values[seat.index()] = Some(pv);
                    let outcome = match pv.cmp(&bv) {
                        std::cmp::Ordering::Greater => Outcome::Win,
                        std::cmp::Ordering::Less => Outcome::Lose,
                        std::cmp::Ordering::Equal => Outcome::Tie,
                    };
                    Decision::Called { bet: state.banker_bet, outcome, multiplier: pv.multiplier() }
                }
                _ => Decision::Folded,
            };
            seats.push((seat, d));
        }
        let any_call = seats.iter().any(|(_, d)| *d != Decision::Folded);
        if any_call {
            values[banker.index()] = Some(bv);
        }
        // Practice hands settle against a banker that can always pay.
        let banker_start = if state.settings.tutorial {
            let owed = state.banker_bet.0.saturating_mul(4).saturating_mul(seats.len() as u64);
            Chips(state.balance(banker).0.max(state.banker_bet.0).saturating_add(owed))
        } else {
            state.balance(banker)
        };
        let s = settle::settle(
            state.settings.settlement,
            banker,
            banker_start,
            state.banker_bet,
            state.settings.rake_percent,
            &seats,
        )?;
        let mut out = Vec::new();
        if any_call {
            let mut positions: Vec<u16> = Vec::new();
            for (i, v) in values.iter().enumerate() {
                if v.is_some() {
                    positions.extend(state.hands[i].iter().map(|d| d.position));
                }
            }
            positions.sort_unstable();
            out.push(PendingAction::Reveal { positions });
        }
        if !state.settings.tutorial {
            out.extend(s.pending(banker_start));
        }
        state.values = values;
        state.settlement = Some(s);
        state.phase = Phase::Settled;
        state.to_act = None;
        Ok(out)
    }

    /// Applies an action `validate` accepted.
    fn apply_valid(
        &self,
        state: &mut SamGongState,
        seat: Seat,
        action: &SamGongAction,
    ) -> Result<Vec<PendingAction>, GameError> {
        let practice = state.settings.tutorial;
        let mut out = Vec::new();
        match action {
            SamGongAction::Bet { amount } => {
                state.banker_bet = *amount;
                if !practice {
                    out.push(PendingAction::Chip(ChipMove {
                        op: ChipOp::Debit,
                        party: ChipParty::Seat(seat),
                        amount: *amount,
                        reason: "banker bet (escrow)".into(),
                    }));
                }
                state.phase = Phase::PlayerBet;
                state.to_act = state.clockwise().first().copied();
                return Ok(out);
            }
            SamGongAction::Call => {
                state.status[seat.index()] = SeatStatus::Called;
                if !practice {
                    out.push(PendingAction::Chip(ChipMove {
                        op: ChipOp::Debit,
                        party: ChipParty::Seat(seat),
                        amount: state.banker_bet,
                        reason: "call (escrow)".into(),
                    }));
                }
            }
            SamGongAction::Fold => state.status[seat.index()] = SeatStatus::Folded,
        }
        match self.next_after(state, seat) {
            Some(next) => state.to_act = Some(next),
            None => out.extend(self.settle_hand(state)?),
        }
        Ok(out)
    }

    fn next_after(&self, state: &SamGongState, seat: Seat) -> Option<Seat> {
        let order = state.clockwise();
        let i = order.iter().position(|s| *s == seat)?;
        order.get(i + 1).copied()
    }
}

impl GamePlugin for SamGong {
    type State = SamGongState;
    type Action = SamGongAction;
    type Settings = SamGongSettings;
    type Memory = SamGongMemory;

    fn meta(&self) -> GameMeta {
        // Folded hands stay face down until the room's delay; a table
        // nobody else joins for 60 s is dissolved (the product rules:
        // "60 秒內無新玩家加入則自動解散房間").
        GameMeta {
            default_reveal: RevealPolicy::Deferred,
            dissolve_after_secs: 60,
            blind: BlindDeal::Offered,
            ..GameMeta::new(NAME, "Sam Gong (三公)", 2, 6, "3")
        }
    }

    fn validate_settings(&self, s: &SamGongSettings) -> Result<(), GameError> {
        let l = s.limits();
        if l.min_bet.0 == 0 {
            return Err(GameError::BadSettings("min_bet must be at least 1".into()));
        }
        if l.max_bet < l.min_bet {
            return Err(GameError::BadSettings(format!(
                "max_bet {} is below min_bet {}",
                l.max_bet, l.min_bet
            )));
        }
        if l.max_bet > MAX_BET {
            return Err(GameError::BadSettings(format!("max_bet is above {MAX_BET}")));
        }
        if s.rake_percent > 100 {
            return Err(GameError::BadSettings("rake_percent must be 0–100".into()));
        }
        Ok(())
    }

    fn create_deck(&self, _settings: &SamGongSettings) -> Vec<CardId> {
        CardId::deck(1, false)
    }

    fn scripted_deck(&self, settings: &SamGongSettings, hand_number: u64) -> Option<Vec<CardId>> {
        let banker = settings.fixed_banker()?;
        settings.tutorial.then(|| tutorial::deck(hand_number, banker))
    }

    /// The banker queue: the fixed banker alone, else the rotation's order
    /// ([`rotation::queue`]).
    fn rotation(
        &self,
        settings: &SamGongSettings,
        memory: &SamGongMemory,
        players: &[PlayerInfo],
    ) -> Option<Vec<Seat>> {
        Some(match settings.fixed_banker() {
            Some(seat) => players.get(seat.index()).map(|_| seat).into_iter().collect(),
            None => rotation::queue(players, memory, settings.limits().min_bet),
        })
    }

    fn create_game(
        &self,
        settings: &SamGongSettings,
        players: &[PlayerInfo],
        memory: &SamGongMemory,
    ) -> Result<SamGongState, GameError> {
        self.validate_settings(settings)?;
        let meta = self.meta();
        if players.len() < usize::from(meta.min_players) || players.len() > usize::from(meta.max_players) {
            return Err(GameError::BadPlayers(format!("sam-gong needs 2–6 players, got {}", players.len())));
        }
        let mut ids = HashSet::new();
        if !players.iter().all(|p| ids.insert(p.id)) {
            return Err(GameError::BadPlayers("a player is listed twice".into()));
        }
        let total: u128 = players.iter().map(|p| u128::from(p.balance.0)).sum();
        if total > i64::MAX as u128 / 4 {
            return Err(GameError::BadPlayers("balances too large".into()));
        }
        let limits = settings.limits();
        let banker = match settings.fixed_banker() {
            Some(seat) => {
                let p = players.get(seat.index()).ok_or_else(|| {
                    GameError::BadPlayers(format!("the banker seat {} is not at the table", seat.0))
                })?;
                if !settings.tutorial && p.balance < limits.min_bet {
                    return Err(GameError::BadPlayers(format!(
                        "the banker at seat {} cannot cover the minimum bet of {} (D9)",
                        seat.0, limits.min_bet
                    )));
                }
                seat
            }
            None => rotation::choose_banker(players, memory, limits.min_bet)?,
        };
        let mut status = vec![SeatStatus::Waiting; players.len()];
        status[banker.index()] = SeatStatus::Banker;
        Ok(SamGongState {
            settings: settings.clone(),
            limits,
            players: players.to_vec(),
            memory: memory.clone(),
            banker,
            phase: Phase::Dealing,
            hands: Vec::new(),
            banker_bet: Chips::ZERO,
            status,
            to_act: None,
            values: vec![None; players.len()],
            settlement: None,
        })
    }

    fn start(&self, state: &mut SamGongState) -> Result<Vec<PendingAction>, GameError> {
        if state.phase != Phase::Dealing || !state.hands.is_empty() {
            return Err(illegal("the hand has already started"));
        }
        let cards = (0..state.n())
            .flat_map(|i| {
                std::iter::repeat_n(
                    DealSpec { target: DealTo::Player(Seat(i as u8)), face: CardFace::Down },
                    3,
                )
            })
            .collect();
        Ok(vec![PendingAction::Deal { phase: "hole".into(), cards }])
    }

    fn receive_cards(
        &self,
        state: &mut SamGongState,
        cards: &[DealtCard],
    ) -> Result<Vec<PendingAction>, GameError> {
        if state.phase != Phase::Dealing || !state.hands.is_empty() {
            return Err(GameError::BadDeal("no deal was pending".into()));
        }
        let n = state.n();
        if cards.len() != n * CARDS_PER_PLAYER {
            return Err(GameError::BadDeal(format!("expected {} cards, got {}", n * 3, cards.len())));
        }
        let mut seen = HashSet::new();
        for (i, c) in cards.iter().enumerate() {
            if c.target != DealTo::Player(Seat((i / 3) as u8)) || c.face != CardFace::Down {
                return Err(GameError::BadDeal(format!("card {i} went to {:?}", c.target)));
            }
            if c.card.card().is_joker() || !seen.insert(c.card.card()) {
                return Err(GameError::BadDeal(format!("card {} cannot be in a Sam Gong deal", c.card)));
            }
        }
        state.hands = cards.chunks_exact(3).map(|h| [h[0], h[1], h[2]]).collect();
        state.phase = Phase::BankerBet;
        state.to_act = Some(state.banker);
        Ok(Vec::new())
    }

    fn to_act(&self, state: &SamGongState) -> Option<Seat> {
        state.to_act
    }

    fn validate(&self, state: &SamGongState, seat: Seat, action: &SamGongAction) -> Result<(), GameError> {
        match state.phase {
            Phase::Settled => return Err(GameError::HandOver),
            Phase::Dealing => return Err(illegal("invalid_phase: the cards are not dealt yet")),
            _ => {}
        }
        if state.to_act != Some(seat) {
            return Err(GameError::NotYourTurn);
        }
        let practice = state.settings.tutorial;
        let balance = state.balance(seat);
        match (state.phase, action) {
            (Phase::BankerBet, SamGongAction::Bet { amount }) => {
                let l = state.limits;
                if *amount < l.min_bet || *amount > l.max_bet {
                    return Err(GameError::BadAmount(format!(
                        "bet_out_of_range: {amount} is outside {}–{}",
                        l.min_bet, l.max_bet
                    )));
                }
                if !practice && *amount > balance {
                    return Err(GameError::BadAmount(format!(
                        "insufficient_chips: bet {amount} exceeds balance {balance}"
                    )));
                }
                Ok(())
            }
            (Phase::BankerBet, _) => Err(illegal("invalid_phase: the banker must bet first")),
            (Phase::PlayerBet, SamGongAction::Bet { .. }) => {
                Err(illegal("invalid_phase: only the banker bets; call or fold"))
            }
            (Phase::PlayerBet, SamGongAction::Call) => {
                if !practice && state.banker_bet > balance {
                    return Err(GameError::BadAmount(format!(
                        "insufficient_chips: calling {} exceeds balance {balance}",
                        state.banker_bet
                    )));
                }
                Ok(())
            }
            (Phase::PlayerBet, SamGongAction::Fold) => Ok(()),
            _ => Err(illegal("invalid_phase")),
        }
    }

    fn apply(
        &self,
        state: &mut SamGongState,
        seat: Seat,
        action: &SamGongAction,
    ) -> Result<Vec<PendingAction>, GameError> {
        self.validate(state, seat, action)?;
        // Work on a copy so that an error (an overflow in the settlement)
        // leaves the state untouched.
        let mut next = state.clone();
        let out = self.apply_valid(&mut next, seat, action)?;
        *state = next;
        Ok(out)
    }

    fn is_over(&self, state: &SamGongState) -> bool {
        state.phase == Phase::Settled
    }

    fn result(&self, state: &SamGongState) -> Option<HandResult> {
        let s = state.settlement.as_ref()?;
        let virtual_nets = s.nets(state.n());
        let net = if state.settings.tutorial { vec![0; state.n()] } else { virtual_nets.clone() };
        let winners = (0..state.n()).filter(|i| virtual_nets[*i] > 0).map(|i| Seat(i as u8)).collect();
        Some(HandResult {
            winners,
            net,
            house_net: 0,
            rake: if state.settings.tutorial { Chips::ZERO } else { s.rake },
            summary: summary(state, s),
        })
    }

    fn valid_actions(&self, state: &SamGongState) -> Vec<ActionOption<SamGongAction>> {
        let Some(seat) = state.to_act else { return Vec::new() };
        let practice = state.settings.tutorial;
        let balance = state.balance(seat);
        match state.phase {
            Phase::BankerBet => {
                let l = state.limits;
                let hi = if practice { l.max_bet } else { l.max_bet.min(balance) };
                vec![ActionOption {
                    action: SamGongAction::Bet { amount: l.min_bet },
                    cost: l.min_bet,
                    affordable: practice || balance >= l.min_bet,
                    range: Some((l.min_bet, hi.max(l.min_bet))),
                }]
            }
            Phase::PlayerBet => vec![
                ActionOption {
                    action: SamGongAction::Call,
                    cost: state.banker_bet,
                    affordable: practice || balance >= state.banker_bet,
                    range: None,
                },
                ActionOption {
                    action: SamGongAction::Fold,
                    cost: Chips::ZERO,
                    affordable: true,
                    range: None,
                },
            ],
            _ => Vec::new(),
        }
    }

    fn public_state(&self, state: &SamGongState) -> Value {
        let players: Vec<Value> = state
            .players
            .iter()
            .enumerate()
            .map(|(i, p)| {
                let seat = Seat(i as u8);
                let escrow = if state.settings.tutorial { Chips::ZERO } else { state.escrowed(seat) };
                json!({
                    "seat": seat,
                    "id": p.id,
                    "status": state.status[i],
                    "bet": state.escrowed(seat),
                    "balance": p.balance.saturating_sub(escrow),
                })
            })
            .collect();
        let settlement = state.settlement.as_ref().map(|s| public_settlement(state, s));
        json!({
            "phase": state.phase,
            "tier": state.settings.tier,
            "entry_chips": state.limits.entry_chips,
            "min_bet": state.limits.min_bet,
            "max_bet": state.limits.max_bet,
            "quick_bets": state.settings.tier.quick_bets(),
            "sam_gong_rule": state.settings.sam_gong,
            "rake_percent": state.settings.rake_percent,
            "settlement_rule": state.settings.settlement,
            "tutorial": state.settings.tutorial,
            "banker": state.banker,
            "banker_bet": (state.phase != Phase::Dealing && state.phase != Phase::BankerBet)
                .then_some(state.banker_bet),
            "pot": state.pot(),
            "to_act": state.to_act,
            "players": players,
            "settlement": settlement,
        })
    }

    fn phase(&self, state: &SamGongState) -> Option<&'static str> {
        Some(state.phase.name())
    }

    /// Once settled, the hands the settlement shows: the banker's and each
    /// entry's that has a value (not folded).
    fn shown_cards(&self, state: &SamGongState) -> Vec<CardId> {
        let Some(s) = &state.settlement else { return Vec::new() };
        let shown =
            |seat: Seat| match (state.values.get(seat.index()).copied().flatten(), state.cards_of(seat)) {
                (Some(_), Some(c)) => c.to_vec(),
                _ => Vec::new(),
            };
        std::iter::once(s.banker).chain(s.entries.iter().map(|e| e.seat)).flat_map(shown).collect()
    }

    fn auto_action(&self, state: &SamGongState, seat: Seat) -> Option<SamGongAction> {
        if state.to_act != Some(seat) {
            return None;
        }
        match state.phase {
            // D12: the banker's timer bets the table minimum.
            Phase::BankerBet => Some(SamGongAction::Bet { amount: state.limits.min_bet }),
            // D11: a player's timer folds.
            Phase::PlayerBet => Some(SamGongAction::Fold),
            _ => None,
        }
    }

    /// Source rules: a banker who leaves before its bet voids the hand (refund); any
    /// other leaver is folded when its turn comes, without a timer.
    fn leave_voids(&self, state: &SamGongState, seat: Seat) -> bool {
        seat == state.banker && matches!(state.phase, Phase::Dealing | Phase::BankerBet)
    }

    /// The tier's entry chips; none at a tutorial table (practice: guests
    /// may have no chips).
    fn entry_chips(&self, settings: &SamGongSettings) -> Chips {
        if settings.tutorial {
            Chips::ZERO
        } else {
            settings.limits().entry_chips
        }
    }

    fn details(&self, state: &SamGongState) -> Option<GameDetails> {
        let settlement = state.settlement.clone()?;
        Some(GameDetails::SamGong(SamGongDetails {
            rule: state.settings.settlement,
            practice: state.settings.tutorial,
            settlement,
        }))
    }

    fn memory_after(&self, state: &SamGongState) -> SamGongMemory {
        SamGongMemory {
            last_banker: state.players.get(state.banker.index()).map(|p| p.id),
            last_order: state.players.iter().map(|p| p.id).collect(),
            hands_played: state.memory.hands_played.saturating_add(1),
        }
    }
}

fn cards_text(cards: &[CardId; 3]) -> String {
    cards.iter().map(|c| c.to_string()).collect::<Vec<_>>().join(" ")
}

/// The settlement as the table sees it: only revealed hands carry cards.
fn public_settlement(state: &SamGongState, s: &Settlement) -> Value {
    let hand = |seat: Seat| -> Value {
        match (state.values.get(seat.index()).copied().flatten(), state.cards_of(seat)) {
            (Some(v), Some(c)) => json!({ "cards": c, "hand_type": v.hand_type() }),
            _ => Value::Null,
        }
    };
    let entries: Vec<Value> = s
        .entries
        .iter()
        .map(|e| {
            json!({
                "seat": e.seat,
                "result": e.result,
                "bet": e.bet,
                "multiplier": e.multiplier,
                "payout": e.payout,
                "net": e.net,
                "shortfall": e.shortfall,
                "hand": hand(e.seat),
            })
        })
        .collect();
    json!({
        "practice": state.settings.tutorial,
        "all_fold": s.all_fold,
        "banker": s.banker,
        "banker_bet": s.banker_bet,
        "banker_hand": hand(s.banker),
        "banker_net": s.banker_net,
        "banker_remaining": s.banker_remaining,
        "banker_insolvent": s.banker_insolvent,
        "losers_total": s.losers_total,
        "pot": s.pot,
        "rake": s.rake,
        "forfeited": s.forfeited,
        "entries": entries,
    })
}

fn summary(state: &SamGongState, s: &Settlement) -> String {
    let mut parts = Vec::new();
    let practice = if state.settings.tutorial { "practice: " } else { "" };
    if s.all_fold {
        return format!("{practice}all players folded; banker {} bet {} returned", s.banker.0, s.banker_bet);
    }
    let describe = |seat: Seat| match (state.values[seat.index()], state.cards_of(seat)) {
        (Some(v), Some(c)) => format!("[{}] {}", cards_text(&c), v.hand_type()),
        _ => String::new(),
    };
    parts.push(format!("banker {} {} bet {}", s.banker.0, describe(s.banker), s.banker_bet));
    for e in &s.entries {
        let text = match e.result {
            EntryResult::Fold => format!("seat {} folds", e.seat.0),
            r => format!("seat {} {} {} {:+}", e.seat.0, describe(e.seat), serde_label(r), e.net),
        };
        parts.push(text);
    }
    if s.banker_insolvent {
        parts.push("banker insolvent (D13)".into());
    }
    parts.push(format!("banker {:+}, rake {}", s.banker_net, s.rake));
    format!("{practice}{}", parts.join("; "))
}

fn serde_label(r: EntryResult) -> &'static str {
    match r {
        EntryResult::Win => "wins",
        EntryResult::Lose => "loses",
        EntryResult::Tie => "ties",
        EntryResult::Fold => "folds",
        EntryResult::InsolventWin => "wins unpaid",
    }
}
