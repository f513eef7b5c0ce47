//! No-limit Texas Hold'em, 2–10 players.
//!
//! Rules interpretations (rounding, odd chips, deal order, short stacks) are
//! written down in `docs/games/texas-holdem.md`; the short version:
//! - bets and raises name the player's *total* for the betting round
//!   (`{"type":"raise","to":60}`), a call or an all-in names nothing;
//! - the minimum raise is the last full bet or raise increment (at least the
//!   big blind); an all-in short of that does not reopen the betting to
//!   players who already acted;
//! - hole cards go one at a time, twice around, starting left of the button;
//!   a card is burned before the flop, the turn and the river;
//! - uncalled chips go back when the betting round ends; pots are paid at the
//!   end, the odd chips of a split to the winners nearest the button's left.

#![deny(missing_docs)]

pub mod eval;
pub mod pots;

use claw_protocol::{Card, CardId, Chips, PlayerId, Seat};
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::plugin::{
    ActionOption, BlindDeal, CardFace, ChipMove, ChipOp, ChipParty, DealSpec, DealTo, DealtCard, GameDetails,
    GameError, GameMeta, GamePlugin, HandResult, PendingAction, PlayerInfo, PokerVariant,
};

pub use eval::{evaluate, Category, HandValue};

/// The largest stack, blind or ante accepted: the protocol's one stake cap
/// (2^50, exact in a JSON double), so sums over ten players never overflow.
pub const MAX_CHIPS: u64 = claw_protocol::limits::MAX_STAKE;

/// Registry name.
pub const NAME: &str = "texas-holdem";

/// The `reason` of the Hold'em chip movements other than betting (SPEC.md,
/// Texas Hold'em): one spelling for the rules that write them and the
/// hand-history export that reads them back.
pub mod reason {
    /// An ante (dead money, not a bet).
    pub const ANTE: &str = "ante";
    /// The small blind.
    pub const SMALL_BLIND: &str = "small blind";
    /// The big blind.
    pub const BIG_BLIND: &str = "big blind";
    /// The unmatched part of a round's highest bet, given back.
    pub const UNCALLED_BET: &str = "uncalled bet returned";
    /// A pot layer only its owner put in, given back at the end.
    pub const UNCALLED_CHIPS: &str = "uncalled chips returned";
    /// The main pot.
    pub const MAIN_POT: &str = "main pot";
    /// Side pot `k` (from 1) is this followed by `k`.
    pub const SIDE_POT: &str = "side pot ";
}

/// The plugin.
#[derive(Debug, Clone, Copy, Default)]
pub struct TexasHoldem;

/// Room settings. Every field is optional in JSON (defaults 5/10/0).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Settings {
    /// Posted by the seat left of the button (the button itself heads-up).
    pub small_blind: Chips,
    /// Posted by the next seat; also the minimum bet and first raise increment.
    pub big_blind: Chips,
    /// Posted by every player before the deal; dead money, not a bet. 0 = none.
    pub ante: Chips,
    /// Places the button at this seat for every hand instead of moving it
    /// (set-ups, tests, replays). Absent: the button moves (table memory).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub button: Option<Seat>,
}

impl Default for Settings {
    fn default() -> Settings {
        Settings { small_blind: Chips(5), big_blind: Chips(10), ante: Chips(0), button: None }
    }
}

/// One pot of a finished hand in [`HoldemDetails`], in the order paid.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PotAward {
    /// `main`, `side` (numbered from 1 in `index`) or `uncalled` (chips
    /// returned to the only player who put them in).
    pub kind: PotKind,
    /// 0 for the main pot and returned chips, 1.. for side pots.
    pub index: u32,
    /// Chips in the pot.
    pub amount: Chips,
    /// Seats that could win it, ascending.
    pub eligible: Vec<Seat>,
    /// What each winner got, in the order credited (odd chips first, from
    /// the button's left).
    pub shares: Vec<(Seat, Chips)>,
}

/// What a pot in [`PotAward`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PotKind {
    /// The main pot.
    Main,
    /// A side pot.
    Side,
    /// Uncalled chips returned.
    Uncalled,
}

/// A finished Hold'em hand as typed data ([`GamePlugin::details`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HoldemDetails {
    /// The button's seat.
    pub button: Seat,
    /// Whether the hand went to a showdown (two or more players left).
    pub showdown: bool,
    /// Every pot, in the order paid.
    pub pots: Vec<PotAward>,
}

/// What the next hand at the table needs: where the button was.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Memory {
    /// The previous hand's button.
    pub button: Option<PlayerId>,
    /// The previous hand's players in seat order, to find the button's
    /// successor when the button player has left the table.
    pub seating: Vec<PlayerId>,
}

/// A player's move. Amounts are *totals for this betting round* ("raise to"):
/// `{"type":"bet","to":20}` when nobody has bet in the round yet,
/// `{"type":"raise","to":60}` over a bet (pre-flop the big blind is a bet).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "kebab-case", deny_unknown_fields)]
pub enum Action {
    /// Give up the hand; chips already in stay in the pots.
    Fold,
    /// Only when there is nothing to call.
    Check,
    /// Match the current bet, or put in the whole stack if it is smaller.
    Call,
    /// Open the betting of a round: the player's bet becomes `to`.
    Bet {
        /// The player's total bet for the round after this action.
        to: Chips,
    },
    /// Raise an existing bet: the player's bet for the round becomes `to`.
    Raise {
        /// The player's total bet for the round after this action.
        to: Chips,
    },
    /// Put the whole stack in: a call, a bet or a raise (full or short).
    AllIn,
}

/// The betting round a hand is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Street {
    /// Hole cards dealt, blinds posted, first betting round.
    Preflop,
    /// Three community cards.
    Flop,
    /// The fourth community card.
    Turn,
    /// The fifth community card, last betting round.
    River,
    /// The hand is over (showdown or everyone else folded).
    Complete,
}

impl Street {
    /// The `phase` of the street's deal (`hole` for the pre-flop deal).
    pub fn phase(self) -> &'static str {
        match self {
            Street::Preflop => "hole",
            Street::Flop => "flop",
            Street::Turn => "turn",
            Street::River => "river",
            Street::Complete => "complete",
        }
    }

    /// The street a deal's `phase` opens.
    pub fn of_phase(phase: &str) -> Option<Street> {
        [Street::Preflop, Street::Flop, Street::Turn, Street::River].into_iter().find(|s| s.phase() == phase)
    }
}

/// One seat's part of the hand.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlayerState {
    /// Who sits here.
    pub id: PlayerId,
    /// Balance at the start of the hand.
    pub start: Chips,
    /// Chips not yet put in.
    pub stack: Chips,
    /// Chips put in during the current betting round.
    pub bet: Chips,
    /// Chips put in during the whole hand (antes included, returns deducted).
    pub committed: Chips,
    /// Out of the hand; cannot win any pot.
    pub folded: bool,
    /// No chips left to bet (until uncalled chips come back).
    pub all_in: bool,
    /// Has acted in the current betting round (posting a blind is not acting).
    pub acted: bool,
    /// The round's bet level right after this player's last action.
    pub acted_at: Chips,
    /// The two hole cards, as dealt (positions are needed for the reveal).
    pub hole: Vec<DealtCard>,
}

/// A hand of Hold'em in progress. Holds the hole cards: never sent to players.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct State {
    /// The room settings, validated.
    pub settings: Settings,
    /// Every seat, in seat order.
    pub players: Vec<PlayerState>,
    /// The button's seat index.
    pub button: usize,
    /// The small blind's seat index (the button heads-up).
    pub small_blind: usize,
    /// The big blind's seat index.
    pub big_blind: usize,
    /// The betting round, or `Complete`.
    pub street: Street,
    /// Community cards, in deal order.
    pub board: Vec<DealtCard>,
    /// Burned cards (face down, never shown by the plugin).
    pub burned: Vec<DealtCard>,
    /// The bet to match in this round (pre-flop at least the big blind, even
    /// when the big blind could only post part of it).
    pub level: Chips,
    /// The last full bet or raise increment in this round (≥ big blind).
    pub min_raise: Chips,
    /// The seat index whose action the hand waits for.
    pub to_act: Option<usize>,
    /// The deal requested and not yet received.
    pub awaiting: Option<Street>,
    /// `start` has run (blinds posted, hole cards requested).
    pub started: bool,
    /// Showdown hands were revealed (at an all-in run-out or the showdown).
    pub revealed: bool,
    /// The result, once the hand is over.
    pub result: Option<HandResult>,
    /// The settlement as typed data, once the hand is over.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub details: Option<HoldemDetails>,
}

/// What a validated action does.
enum Move {
    Fold,
    Check,
    /// Raise the player's round bet to this total.
    Put(u64, &'static str),
}

fn chips_i64(c: u64) -> i64 {
    // Stacks are capped at MAX_CHIPS = 2^50, so every amount fits.
    i64::try_from(c).unwrap_or(i64::MAX)
}

impl State {
    fn n(&self) -> usize {
        self.players.len()
    }

    fn live(&self, i: usize) -> bool {
        let p = &self.players[i];
        !p.folded && !p.all_in
    }

    fn contenders(&self) -> usize {
        self.players.iter().filter(|p| !p.folded).count()
    }

    /// Another player than `i` who can still put chips in.
    fn others_live(&self, i: usize) -> bool {
        (0..self.n()).any(|j| j != i && self.live(j))
    }

    /// The round bet `i` must reach to stay in: the level, except when no one
    /// else can still bet, where it is capped by the largest other bet of a
    /// player still in the hand.
    fn call_target(&self, i: usize) -> u64 {
        if self.others_live(i) {
            self.level.0
        } else {
            let top = (0..self.n())
                .filter(|j| *j != i && !self.players[*j].folded)
                .map(|j| self.players[j].bet.0)
                .max()
                .unwrap_or(0);
            top.min(self.level.0)
        }
    }

    fn needs_action(&self, i: usize) -> bool {
        if !self.live(i) {
            return false;
        }
        let p = &self.players[i];
        p.bet.0 < self.call_target(i) || (!p.acted && self.others_live(i))
    }

    /// Whether `i` may bet or raise: someone can answer, the stack covers more
    /// than a call, and the betting is open to them (they have not acted, or
    /// the bet rose by at least a full raise since they did).
    fn may_raise(&self, i: usize) -> bool {
        let p = &self.players[i];
        let to_call = self.call_target(i).saturating_sub(p.bet.0);
        self.others_live(i)
            && p.stack.0 > to_call
            && (!p.acted || self.level.0.saturating_sub(p.acted_at.0) >= self.min_raise.0)
    }

    /// Takes up to `amount` from seat `i` (all of it when short), as a debit.
    fn put(&mut self, i: usize, amount: u64, reason: &str, as_bet: bool, out: &mut Vec<PendingAction>) {
        let p = &mut self.players[i];
        let a = amount.min(p.stack.0);
        p.stack.0 -= a;
        p.committed.0 += a;
        if as_bet {
            p.bet.0 += a;
        }
        if p.stack.0 == 0 {
            p.all_in = true;
        }
        if a > 0 {
            out.push(PendingAction::Chip(ChipMove {
                op: ChipOp::Debit,
                party: ChipParty::Seat(seat(i)),
                amount: Chips(a),
                reason: reason.into(),
            }));
        }
    }

    fn resolve(&self, s: Seat, action: &Action) -> Result<Move, GameError> {
        if self.result.is_some() {
            return Err(GameError::HandOver);
        }
        let i = s.index();
        if self.to_act != Some(i) {
            return Err(GameError::NotYourTurn);
        }
        let p = &self.players[i];
        let target = self.call_target(i);
        let to_call = target.saturating_sub(p.bet.0);
        let max_to = p.bet.0 + p.stack.0;
        let raise_to = |to: u64, what: &'static str| -> Result<Move, GameError> {
            if !self.others_live(i) {
                return Err(GameError::Illegal("no opponent is left who could call a raise".into()));
            }
            if p.stack.0 <= to_call {
                return Err(GameError::Illegal(format!("your stack of {} only covers a call", p.stack)));
            }
            if !self.may_raise(i) {
                return Err(GameError::Illegal(
                    "the betting was not reopened: the bet rose by less than a full raise since you acted"
                        .into(),
                ));
            }
            if to > max_to {
                return Err(GameError::BadAmount(format!(
                    "{what} to {to} is more than your stack allows (at most {max_to})"
                )));
            }
            if to <= self.level.0 {
                return Err(GameError::BadAmount(format!(
                    "{what} to {to} does not exceed the current bet of {}",
                    self.level
                )));
            }
            let min_to = self.level.0 + self.min_raise.0;
            if to < min_to && to != max_to {
                return Err(GameError::BadAmount(format!(
                    "the minimum {what} is to {min_to} (or all-in to {max_to})"
                )));
            }
            Ok(Move::Put(to, what))
        };
        match action {
            Action::Fold => Ok(Move::Fold),
            Action::Check if to_call == 0 => Ok(Move::Check),
            Action::Check => Err(GameError::Illegal(format!("cannot check: {to_call} to call"))),
            Action::Call if to_call == 0 => Err(GameError::Illegal("nothing to call: check instead".into())),
            Action::Call => Ok(Move::Put(target.min(max_to), "call")),
            Action::Bet { .. } if self.level.0 > 0 => Err(GameError::Illegal(format!(
                "there is already a bet of {} this round: raise instead",
                self.level
            ))),
            Action::Bet { to } => raise_to(to.0, "bet"),
            Action::Raise { .. } if self.level.0 == 0 => {
                Err(GameError::Illegal("there is no bet to raise this round: bet instead".into()))
            }
            Action::Raise { to } => raise_to(to.0, "raise"),
            Action::AllIn if max_to <= target => Ok(Move::Put(max_to, "all-in")),
            Action::AllIn => {
                raise_to(max_to, "raise")?;
                Ok(Move::Put(max_to, "all-in"))
            }
        }
    }

    fn perform(&mut self, i: usize, mv: Move, out: &mut Vec<PendingAction>) {
        match mv {
            Move::Fold => {
                self.players[i].folded = true;
            }
            Move::Check => {}
            Move::Put(to, reason) => {
                let add = to.saturating_sub(self.players[i].bet.0);
                self.put(i, add, reason, true, out);
                let bet = self.players[i].bet.0;
                if bet > self.level.0 {
                    let increment = bet - self.level.0;
                    if increment >= self.min_raise.0 {
                        self.min_raise = Chips(increment);
                    }
                    self.level = Chips(bet);
                }
            }
        }
        let level = self.level;
        let p = &mut self.players[i];
        p.acted = true;
        p.acted_at = level;
        self.advance(i, out);
    }

    /// After seat `from` acted: the next seat to act, or the end of the round.
    fn advance(&mut self, from: usize, out: &mut Vec<PendingAction>) {
        if self.contenders() <= 1 {
            self.to_act = None;
            self.return_uncalled(out);
            self.finish(out);
            return;
        }
        let n = self.n();
        match (1..=n).map(|k| (from + k) % n).find(|j| self.needs_action(*j)) {
            Some(j) => self.to_act = Some(j),
            None => self.end_round(out),
        }
    }

    /// Starts the betting of the current street, from `first` clockwise.
    fn start_round(&mut self, first: usize, out: &mut Vec<PendingAction>) {
        let n = self.n();
        match (0..n).map(|k| (first + k) % n).find(|j| self.needs_action(*j)) {
            Some(j) => self.to_act = Some(j),
            None => self.end_round(out),
        }
    }

    /// Chips above what anyone else bet this round go back to their owner.
    fn return_uncalled(&mut self, out: &mut Vec<PendingAction>) {
        let Some((top, _)) =
            self.players.iter().enumerate().max_by_key(|(i, p)| (p.bet, std::cmp::Reverse(*i)))
        else {
            return;
        };
        let second = self.players.iter().enumerate().filter(|(j, _)| *j != top).map(|(_, p)| p.bet.0).max();
        let excess = self.players[top].bet.0.saturating_sub(second.unwrap_or(0));
        if excess > 0 {
            let p = &mut self.players[top];
            p.bet.0 -= excess;
            p.committed.0 -= excess;
            p.stack.0 += excess;
            if p.stack.0 > 0 {
                p.all_in = false;
            }
            out.push(PendingAction::Chip(ChipMove {
                op: ChipOp::Credit,
                party: ChipParty::Seat(seat(top)),
                amount: Chips(excess),
                reason: reason::UNCALLED_BET.into(),
            }));
        }
    }

    fn end_round(&mut self, out: &mut Vec<PendingAction>) {
        self.to_act = None;
        self.return_uncalled(out);
        for p in &mut self.players {
            p.bet = Chips::ZERO;
            p.acted = false;
            p.acted_at = Chips::ZERO;
        }
        self.level = Chips::ZERO;
        self.min_raise = self.settings.big_blind;
        let next = match self.street {
            Street::Preflop => Street::Flop,
            Street::Flop => Street::Turn,
            Street::Turn => Street::River,
            Street::River | Street::Complete => {
                self.finish(out);
                return;
            }
        };
        // No more betting possible with cards still to come: table the hands now.
        if !self.revealed && (0..self.n()).filter(|i| self.live(*i)).count() <= 1 {
            self.reveal(out);
        }
        self.awaiting = Some(next);
        out.push(PendingAction::Deal { phase: next.phase().into(), cards: self.deal_specs(next) });
    }

    fn reveal(&mut self, out: &mut Vec<PendingAction>) {
        self.revealed = true;
        let positions: Vec<u16> = self
            .players
            .iter()
            .filter(|p| !p.folded)
            .flat_map(|p| p.hole.iter().map(|c| c.position))
            .collect();
        if !positions.is_empty() {
            out.push(PendingAction::Reveal { positions });
        }
    }

    /// The deal specs for `street` (hole cards: one at a time, twice
    /// around, starting left of the button).
    fn deal_specs(&self, street: Street) -> Vec<DealSpec> {
        let n = self.n();
        match street {
            Street::Preflop => (0..2 * n)
                .map(|k| DealSpec {
                    target: DealTo::Player(seat((self.button + 1 + k) % n)),
                    face: CardFace::Down,
                })
                .collect(),
            Street::Flop | Street::Turn | Street::River => {
                let mut v = vec![DealSpec { target: DealTo::Burn, face: CardFace::Down }];
                let count = if street == Street::Flop { 3 } else { 1 };
                v.extend((0..count).map(|_| DealSpec { target: DealTo::Community, face: CardFace::Up }));
                v
            }
            Street::Complete => Vec::new(),
        }
    }

    /// Ends the hand: pays every pot (showdown when two or more are left).
    fn finish(&mut self, out: &mut Vec<PendingAction>) {
        self.to_act = None;
        self.awaiting = None;
        self.street = Street::Complete;
        let n = self.n();
        let showdown = self.contenders() >= 2;
        let board: Vec<Card> = self.board.iter().map(|c| c.card.card()).collect();
        let mut values: Vec<Option<HandValue>> = vec![None; n];
        let mut summary = Vec::new();
        if showdown {
            if !self.revealed {
                self.reveal(out);
            }
            let b: Vec<String> = self.board.iter().map(|c| c.card.to_string()).collect();
            summary.push(format!("board {}", b.join(" ")));
            for (i, p) in self.players.iter().enumerate().filter(|(_, p)| !p.folded) {
                let mut cards = board.clone();
                cards.extend(p.hole.iter().map(|c| c.card.card()));
                let v = evaluate(&cards);
                values[i] = Some(v);
                let h: Vec<String> = p.hole.iter().map(|c| c.card.to_string()).collect();
                summary.push(format!("seat {i} shows {} ({v})", h.join(" ")));
            }
        }
        let committed: Vec<u64> = self.players.iter().map(|p| p.committed.0).collect();
        let folded: Vec<bool> = self.players.iter().map(|p| p.folded).collect();
        let mut winners = vec![false; n];
        let mut side = 0;
        let mut awards = Vec::new();
        for pot in pots::build(&committed, &folded) {
            let (name, kind, index) = if pot.uncalled {
                (reason::UNCALLED_CHIPS.to_owned(), PotKind::Uncalled, 0)
            } else if side == 0 {
                side += 1;
                (reason::MAIN_POT.to_owned(), PotKind::Main, 0)
            } else {
                side += 1;
                (format!("{}{}", reason::SIDE_POT, side - 1), PotKind::Side, side - 1)
            };
            let best = pot.eligible.iter().filter_map(|i| values[*i]).max();
            let pot_winners: Vec<usize> = match best {
                Some(best) if pot.eligible.len() > 1 => {
                    pot.eligible.iter().copied().filter(|i| values[*i] == Some(best)).collect()
                }
                _ => pot.eligible.clone(),
            };
            let shares = pots::split(pot.amount, &pot_winners, self.button, n);
            let who: Vec<String> = shares.iter().map(|(w, a)| format!("seat {w} {a}")).collect();
            if !pot.uncalled {
                let how = match best {
                    Some(v) if pot.eligible.len() > 1 => format!(" with {v}"),
                    _ => " uncontested".to_owned(),
                };
                summary.push(format!("{name} {}: {}{how}", pot.amount, who.join(", ")));
            }
            awards.push(PotAward {
                kind,
                index,
                amount: Chips(pot.amount),
                eligible: pot.eligible.iter().map(|i| seat(*i)).collect(),
                shares: shares.iter().filter(|(_, a)| *a > 0).map(|(w, a)| (seat(*w), Chips(*a))).collect(),
            });
            for (w, amount) in shares {
                if amount == 0 {
                    continue;
                }
                if !pot.uncalled {
                    winners[w] = true;
                }
                self.players[w].stack.0 += amount;
                out.push(PendingAction::Chip(ChipMove {
                    op: ChipOp::Credit,
                    party: ChipParty::Seat(seat(w)),
                    amount: Chips(amount),
                    reason: name.clone(),
                }));
            }
        }
        self.details = Some(HoldemDetails { button: seat(self.button), showdown, pots: awards });
        self.result = Some(HandResult {
            winners: (0..n).filter(|i| winners[*i]).map(seat).collect(),
            net: self.players.iter().map(|p| chips_i64(p.stack.0) - chips_i64(p.start.0)).collect(),
            house_net: 0,
            rake: Chips::ZERO,
            summary: summary.join("; "),
        });
    }

    /// Chips already gathered into pots (this round's bets excluded).
    fn public_pots(&self) -> Vec<pots::Pot> {
        let gathered: Vec<u64> = self.players.iter().map(|p| p.committed.0 - p.bet.0).collect();
        let folded: Vec<bool> = self.players.iter().map(|p| p.folded).collect();
        pots::build(&gathered, &folded)
    }
}

fn seat(i: usize) -> Seat {
    // At most 10 players.
    Seat(i as u8)
}

/// The first hand's button is seat 0; after that, the player after the
/// previous button (in the previous seating when the button has left).
fn choose_button(memory: &Memory, players: &[PlayerInfo]) -> usize {
    let n = players.len();
    let Some(prev) = memory.button else { return 0 };
    if let Some(i) = players.iter().position(|p| p.id == prev) {
        return (i + 1) % n;
    }
    let Some(k) = memory.seating.iter().position(|id| *id == prev) else { return 0 };
    let len = memory.seating.len();
    (1..len)
        .map(|d| memory.seating[(k + d) % len])
        .find_map(|id| players.iter().position(|p| p.id == id))
        .unwrap_or(0)
}

impl GamePlugin for TexasHoldem {
    type State = State;
    type Action = Action;
    type Settings = Settings;
    type Memory = Memory;

    fn meta(&self) -> GameMeta {
        GameMeta {
            poker_variant: Some(PokerVariant::NoLimitHoldem),
            blind: BlindDeal::Offered,
            ..GameMeta::new(NAME, "Texas Hold'em (no-limit)", 2, 10, "1")
        }
    }

    fn validate_settings(&self, s: &Settings) -> Result<(), GameError> {
        if s.small_blind.0 == 0 {
            return Err(GameError::BadSettings("small_blind must be at least 1".into()));
        }
        if s.small_blind > s.big_blind {
            return Err(GameError::BadSettings("small_blind must not exceed big_blind".into()));
        }
        if s.big_blind.0 > MAX_CHIPS {
            return Err(GameError::BadSettings(format!("big_blind must be at most {MAX_CHIPS}")));
        }
        if s.ante > s.big_blind {
            return Err(GameError::BadSettings("ante must not exceed big_blind".into()));
        }
        Ok(())
    }

    fn create_deck(&self, _settings: &Settings) -> Vec<CardId> {
        CardId::deck(1, false)
    }

    fn create_game(
        &self,
        settings: &Settings,
        players: &[PlayerInfo],
        memory: &Memory,
    ) -> Result<State, GameError> {
        self.validate_settings(settings)?;
        let n = players.len();
        if !(2..=10).contains(&n) {
            return Err(GameError::BadPlayers(format!("Texas Hold'em needs 2–10 players, got {n}")));
        }
        for (i, p) in players.iter().enumerate() {
            if p.balance.0 == 0 || p.balance.0 > MAX_CHIPS {
                return Err(GameError::BadPlayers(format!(
                    "seat {i}: balance {} must be between 1 and {MAX_CHIPS}",
                    p.balance
                )));
            }
            if players[..i].iter().any(|q| q.id == p.id) {
                return Err(GameError::BadPlayers(format!(
                    "seat {i}: player {} is seated twice",
                    p.id.short()
                )));
            }
        }
        let button = match settings.button {
            Some(b) if b.index() < n => b.index(),
            Some(b) => {
                return Err(GameError::BadPlayers(format!("the button seat {} is not at the table", b.0)))
            }
            None => choose_button(memory, players),
        };
        let (small_blind, big_blind) =
            if n == 2 { (button, (button + 1) % n) } else { ((button + 1) % n, (button + 2) % n) };
        Ok(State {
            settings: settings.clone(),
            players: players
                .iter()
                .map(|p| PlayerState {
                    id: p.id,
                    start: p.balance,
                    stack: p.balance,
                    bet: Chips::ZERO,
                    committed: Chips::ZERO,
                    folded: false,
                    all_in: false,
                    acted: false,
                    acted_at: Chips::ZERO,
                    hole: Vec::new(),
                })
                .collect(),
            button,
            small_blind,
            big_blind,
            street: Street::Preflop,
            board: Vec::new(),
            burned: Vec::new(),
            level: Chips::ZERO,
            min_raise: settings.big_blind,
            to_act: None,
            awaiting: None,
            started: false,
            revealed: false,
            result: None,
            details: None,
        })
    }

    fn start(&self, state: &mut State) -> Result<Vec<PendingAction>, GameError> {
        if state.started {
            return Err(GameError::Illegal("the hand has already started".into()));
        }
        state.started = true;
        let mut out = Vec::new();
        let n = state.n();
        let ante = state.settings.ante.0;
        if ante > 0 {
            for k in 1..=n {
                state.put((state.button + k) % n, ante, reason::ANTE, false, &mut out);
            }
        }
        let (sb, bb) = (state.small_blind, state.big_blind);
        state.put(sb, state.settings.small_blind.0, reason::SMALL_BLIND, true, &mut out);
        state.put(bb, state.settings.big_blind.0, reason::BIG_BLIND, true, &mut out);
        state.level = state.settings.big_blind;
        state.min_raise = state.settings.big_blind;
        state.awaiting = Some(Street::Preflop);
        out.push(PendingAction::Deal {
            phase: Street::Preflop.phase().into(),
            cards: state.deal_specs(Street::Preflop),
        });
        Ok(out)
    }

    fn receive_cards(&self, state: &mut State, cards: &[DealtCard]) -> Result<Vec<PendingAction>, GameError> {
        let Some(street) = state.awaiting else {
            return Err(GameError::BadDeal("no deal was requested".into()));
        };
        let specs = state.deal_specs(street);
        if cards.len() != specs.len() {
            return Err(GameError::BadDeal(format!("expected {} cards, got {}", specs.len(), cards.len())));
        }
        let mut seen: u64 = 0;
        let earlier =
            state.players.iter().flat_map(|p| p.hole.iter()).chain(&state.board).chain(&state.burned);
        for c in earlier {
            seen |= 1 << c.card.card().code();
        }
        for (c, spec) in cards.iter().zip(&specs) {
            if c.target != spec.target || c.face != spec.face {
                return Err(GameError::BadDeal(format!(
                    "card at position {} dealt to the wrong place",
                    c.position
                )));
            }
            let code = c.card.card().code();
            if code >= 52 || c.card.pack() != 0 {
                return Err(GameError::BadDeal(format!("{} is not in a Hold'em deck", c.card)));
            }
            if seen & (1 << code) != 0 {
                return Err(GameError::BadDeal(format!("{} dealt twice", c.card)));
            }
            seen |= 1 << code;
        }
        for c in cards {
            match c.target {
                DealTo::Player(s) => state.players[s.index()].hole.push(*c),
                DealTo::Community => state.board.push(*c),
                _ => state.burned.push(*c),
            }
        }
        state.awaiting = None;
        state.street = street;
        let mut out = Vec::new();
        let n = state.n();
        let first = if street == Street::Preflop { state.big_blind + 1 } else { state.button + 1 };
        state.start_round(first % n, &mut out);
        Ok(out)
    }

    fn to_act(&self, state: &State) -> Option<Seat> {
        state.to_act.map(seat)
    }

    fn validate(&self, state: &State, s: Seat, action: &Action) -> Result<(), GameError> {
        state.resolve(s, action).map(|_| ())
    }

    fn apply(&self, state: &mut State, s: Seat, action: &Action) -> Result<Vec<PendingAction>, GameError> {
        let mv = state.resolve(s, action)?;
        let mut out = Vec::new();
        state.perform(s.index(), mv, &mut out);
        Ok(out)
    }

    fn is_over(&self, state: &State) -> bool {
        state.result.is_some()
    }

    fn result(&self, state: &State) -> Option<HandResult> {
        state.result.clone()
    }

    fn details(&self, state: &State) -> Option<GameDetails> {
        state.details.clone().map(GameDetails::TexasHoldem)
    }

    fn valid_actions(&self, state: &State) -> Vec<ActionOption<Action>> {
        let Some(i) = state.to_act.filter(|_| state.result.is_none()) else { return Vec::new() };
        let p = &state.players[i];
        let target = state.call_target(i);
        let to_call = target.saturating_sub(p.bet.0);
        let max_to = p.bet.0 + p.stack.0;
        let opt =
            |action, cost: u64, range| ActionOption { action, cost: Chips(cost), affordable: true, range };
        let mut v = vec![opt(Action::Fold, 0, None)];
        if to_call == 0 {
            v.push(opt(Action::Check, 0, None));
        } else {
            v.push(opt(Action::Call, to_call.min(p.stack.0), None));
        }
        if state.may_raise(i) {
            let min_to = (state.level.0 + state.min_raise.0).min(max_to);
            let range = Some((Chips(min_to), Chips(max_to)));
            let action = if state.level.0 == 0 {
                Action::Bet { to: Chips(min_to) }
            } else {
                Action::Raise { to: Chips(min_to) }
            };
            v.push(opt(action, min_to - p.bet.0, range));
        }
        if p.stack.0 > 0 && (max_to <= target || state.may_raise(i)) {
            v.push(opt(Action::AllIn, p.stack.0, None));
        }
        v
    }

    fn public_state(&self, state: &State) -> serde_json::Value {
        let players: Vec<_> = state
            .players
            .iter()
            .enumerate()
            .map(|(i, p)| {
                json!({
                    "seat": i,
                    "id": p.id,
                    "stack": p.stack,
                    "bet": p.bet,
                    "committed": p.committed,
                    "folded": p.folded,
                    "all_in": p.all_in,
                })
            })
            .collect();
        let pots: Vec<_> = state
            .public_pots()
            .into_iter()
            .map(|p| json!({"amount": p.amount, "eligible": p.eligible}))
            .collect();
        let (min_raise_to, to_call) = match state.to_act {
            Some(i) if state.may_raise(i) => (
                Some(
                    (state.level.0 + state.min_raise.0)
                        .min(state.players[i].bet.0 + state.players[i].stack.0),
                ),
                state.call_target(i).saturating_sub(state.players[i].bet.0),
            ),
            Some(i) => (None, state.call_target(i).saturating_sub(state.players[i].bet.0)),
            None => (None, 0),
        };
        json!({
            "street": state.street,
            "button": state.button,
            "small_blind_seat": state.small_blind,
            "big_blind_seat": state.big_blind,
            "blinds": {"small": state.settings.small_blind, "big": state.settings.big_blind, "ante": state.settings.ante},
            "board": state.board.iter().map(|c| c.card).collect::<Vec<_>>(),
            "pots": pots,
            "players": players,
            "to_act": state.to_act,
            "current_bet": state.level,
            "to_call": to_call,
            "min_raise_to": min_raise_to,
            "over": state.result.is_some(),
        })
    }

    /// No `"phase"` key: the public state names the `street`.
    fn phase(&self, _state: &State) -> Option<&'static str> {
        None
    }

    /// The board: the public state shows no other card (showdown hands are
    /// revealed by a `Reveal`).
    fn shown_cards(&self, state: &State) -> Vec<CardId> {
        state.board.iter().map(|c| c.card).collect()
    }

    fn auto_action(&self, state: &State, s: Seat) -> Option<Action> {
        let i = state.to_act.filter(|i| *i == s.index() && state.result.is_none())?;
        let p = &state.players[i];
        if state.call_target(i) <= p.bet.0 {
            Some(Action::Check)
        } else {
            Some(Action::Fold)
        }
    }

    fn memory_after(&self, state: &State) -> Memory {
        Memory {
            button: state.players.get(state.button).map(|p| p.id),
            seating: state.players.iter().map(|p| p.id).collect(),
        }
    }
}
