//! The sans-IO hand driver shared by the dealer's engine and the auditor's
//! replay: it executes a plugin's pending actions, taking deck positions
//! strictly in order, so both sides deal the same cards to the same places.
//!
//! Order of execution (SPEC.md §Games): pending actions run first to last;
//! the actions a `receive_cards` call returns run right after the deal that
//! produced them, before the rest of the list.

use std::collections::VecDeque;

use claw_protocol::{CardId, Seat};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::dynamic::{DynGame, DynHand};
use crate::plugin::{
    ChipOp, ChipParty, DealTo, DealtCard, GameError, HandEvent, HandResult, PendingAction, PlayerInfo,
};

/// A player action as the runner takes it: a JSON value (recorded and
/// replayed actions), or the JSON text a player signed (parsed once, into the
/// game's action type).
#[derive(Debug, Clone, Copy)]
pub enum ActionInput<'a> {
    /// A JSON value.
    Value(&'a Value),
    /// JSON text.
    Text(&'a str),
}

/// Why [`HandRunner::act_as`] failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ActError {
    /// The rules refused the action; the hand is as it was.
    #[error("{0}")]
    Refused(GameError),
    /// The action was applied but what it set off failed (a broken deal):
    /// the hand is part-way and must be rebuilt.
    #[error("{0}")]
    Broken(GameError),
}

impl ActError {
    /// The game's error.
    pub fn into_error(self) -> GameError {
        match self {
            ActError::Refused(e) | ActError::Broken(e) => e,
        }
    }
}

/// Drives one hand of one game over a fixed deck order.
pub struct HandRunner {
    hand: Box<dyn DynHand>,
    deck: Vec<CardId>,
    dealt: Vec<DealtCard>,
    /// Who holds each dealt position now (a transfer changes it).
    holders: Vec<DealTo>,
    players: usize,
}

impl Clone for HandRunner {
    fn clone(&self) -> HandRunner {
        HandRunner {
            hand: self.hand.clone_box(),
            deck: self.deck.clone(),
            dealt: self.dealt.clone(),
            holders: self.holders.clone(),
            players: self.players,
        }
    }
}

impl HandRunner {
    /// Creates the hand and runs its start actions (blinds, first deal).
    pub fn start(
        game: &dyn DynGame,
        settings: &Value,
        players: &[PlayerInfo],
        memory: &Value,
        deck: Vec<CardId>,
    ) -> Result<(HandRunner, Vec<HandEvent>), GameError> {
        let mut hand = game.new_hand(settings, players, memory)?;
        let pending = hand.start()?;
        let mut runner =
            HandRunner { hand, deck, dealt: Vec::new(), holders: Vec::new(), players: players.len() };
        let events = runner.run(pending)?;
        Ok((runner, events))
    }

    /// Applies `seat`'s action and runs what it sets off.
    pub fn act(&mut self, seat: Seat, action: &Value) -> Result<Vec<HandEvent>, GameError> {
        self.act_as(seat, ActionInput::Value(action)).map_err(ActError::into_error)
    }

    /// Applies `seat`'s action, given as JSON value or text, and runs what it
    /// sets off; says whether a failure left the hand untouched (the rules
    /// refused the action) or part-way through what it set off.
    pub fn act_as(&mut self, seat: Seat, action: ActionInput<'_>) -> Result<Vec<HandEvent>, ActError> {
        if self.hand.is_over() {
            return Err(ActError::Refused(GameError::HandOver));
        }
        let pending = match action {
            ActionInput::Value(v) => self.hand.apply(seat, v),
            ActionInput::Text(t) => self.hand.apply_text(seat, t),
        }
        .map_err(ActError::Refused)?;
        self.run(pending).map_err(ActError::Broken)
    }

    pub fn hand(&self) -> &dyn DynHand {
        self.hand.as_ref()
    }

    /// Every card dealt so far, in position order.
    pub fn dealt(&self) -> &[DealtCard] {
        &self.dealt
    }

    /// Who holds each dealt position now, in position order (transfers applied).
    pub fn holders(&self) -> &[DealTo] {
        &self.holders
    }

    /// The next deck position a deal will take.
    pub fn next_position(&self) -> u16 {
        // The deck length is bounded by the engine (at most u16::MAX cards).
        self.dealt.len() as u16
    }

    fn run(&mut self, pending: Vec<PendingAction>) -> Result<Vec<HandEvent>, GameError> {
        let mut queue: VecDeque<PendingAction> = pending.into();
        let mut events = Vec::new();
        while let Some(p) = queue.pop_front() {
            match p {
                PendingAction::Deal { phase, cards } => {
                    let mut out = Vec::with_capacity(cards.len());
                    for spec in cards {
                        if let DealTo::Player(s) = spec.target {
                            if s.index() >= self.players {
                                return Err(GameError::BadDeal(format!("deal to missing {s}")));
                            }
                        }
                        let position = self.dealt.len();
                        let card = *self.deck.get(position).ok_or_else(|| {
                            GameError::BadDeal(format!("deck exhausted at position {position}"))
                        })?;
                        let position = u16::try_from(position)
                            .map_err(|_| GameError::BadDeal("deck longer than 65535 cards".into()))?;
                        let d = DealtCard { position, target: spec.target, face: spec.face, card };
                        self.dealt.push(d);
                        self.holders.push(spec.target);
                        out.push(d);
                    }
                    let follow = self.hand.receive_cards(&out)?;
                    for f in follow.into_iter().rev() {
                        queue.push_front(f);
                    }
                    events.push(HandEvent::Dealt { phase, cards: out });
                }
                PendingAction::Chip(m) => {
                    self.check_party(m.party)?;
                    events.push(HandEvent::Chip(m))
                }
                PendingAction::Reveal { positions } => {
                    if let Some(p) = positions.iter().find(|p| usize::from(**p) >= self.dealt.len()) {
                        return Err(GameError::BadDeal(format!("reveal of undealt position {p}")));
                    }
                    events.push(HandEvent::Reveal { positions })
                }
                PendingAction::Transfer { position, from, to, face } => {
                    let holder = self.holders.get_mut(usize::from(position)).ok_or_else(|| {
                        GameError::BadDeal(format!("transfer of undealt position {position}"))
                    })?;
                    if *holder != DealTo::Player(from) {
                        return Err(GameError::BadDeal(format!(
                            "transfer of position {position}: {from} does not hold it"
                        )));
                    }
                    if to.index() >= self.players || to == from {
                        return Err(GameError::BadDeal(format!("transfer of position {position} to {to}")));
                    }
                    *holder = DealTo::Player(to);
                    events.push(HandEvent::Transfer { position, from, to, face })
                }
            }
        }
        Ok(events)
    }

    fn check_party(&self, party: ChipParty) -> Result<(), GameError> {
        match party {
            ChipParty::Seat(s) if s.index() >= self.players => {
                Err(GameError::BadDeal(format!("chip movement for missing {s}")))
            }
            _ => Ok(()),
        }
    }
}

/// Why chip movements and a result do not add up.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConservationError {
    #[error("{party:?}: movements net {moved}, result says {announced}")]
    NetMismatch { party: ChipParty, moved: i128, announced: i64 },
    #[error("debits {debits} != credits {credits} + rake {rake}")]
    Unbalanced { debits: u128, credits: u128, rake: u64 },
    #[error("result lists {got} seats, the hand had {want}")]
    SeatCount { got: usize, want: usize },
}

/// Checks that the chip events of a hand match its result and that nothing
/// was created or lost: total debited = total credited + rake.
pub fn check_conservation(
    events: &[HandEvent],
    result: &HandResult,
    players: usize,
) -> Result<(), ConservationError> {
    if result.net.len() != players {
        return Err(ConservationError::SeatCount { got: result.net.len(), want: players });
    }
    let mut seat_net = vec![0i128; players];
    let mut house_net = 0i128;
    let (mut debits, mut credits) = (0u128, 0u128);
    for e in events {
        let HandEvent::Chip(m) = e else { continue };
        match m.op {
            ChipOp::Debit => debits += u128::from(m.amount.0),
            ChipOp::Credit => credits += u128::from(m.amount.0),
        }
        let delta = m.delta();
        match m.party {
            ChipParty::Seat(s) => {
                if let Some(n) = seat_net.get_mut(s.index()) {
                    *n += delta
                }
            }
            ChipParty::House => house_net += delta,
        }
    }
    for (i, (moved, announced)) in seat_net.iter().zip(&result.net).enumerate() {
        if *moved != i128::from(*announced) {
            let party = ChipParty::Seat(Seat(i as u8));
            return Err(ConservationError::NetMismatch { party, moved: *moved, announced: *announced });
        }
    }
    if house_net != i128::from(result.house_net) {
        return Err(ConservationError::NetMismatch {
            party: ChipParty::House,
            moved: house_net,
            announced: result.house_net,
        });
    }
    if debits != credits + u128::from(result.rake.0) {
        return Err(ConservationError::Unbalanced { debits, credits, rake: result.rake.0 });
    }
    Ok(())
}

/// The deck a blind table's rules run over (defined once, in the protocol:
/// the dealer's engine and the auditor's replay build it alike).
pub use claw_protocol::messages::deck_view_fill;

/// A recorded action: which seat did what (timeouts included).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RecordedAction {
    pub seat: Seat,
    pub action: Value,
}

/// What a replay reproduced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReplayOutcome {
    pub events: Vec<HandEvent>,
    pub result: HandResult,
    pub memory_after: Value,
}

/// Why a replay failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReplayError {
    #[error("hand start: {0}")]
    Start(GameError),
    #[error("action {index} by {seat}: it was {expected:?}'s turn")]
    WrongSeat { index: usize, seat: Seat, expected: Option<Seat> },
    #[error("action {index} ({action}): {error}")]
    Action { index: usize, action: Value, error: GameError },
    #[error("the hand is not over after {0} actions")]
    NotOver(usize),
    #[error("the rules give no result")]
    NoResult,
    #[error("chip conservation: {0}")]
    Conservation(#[from] ConservationError),
    /// A [`ReplayCheck`] refused.
    #[error("{0}")]
    Check(String),
}

/// What a replay checks between the rules' steps, beyond the rules
/// themselves: the auditor compares the dealer's announcements here
/// (`crate::audit::GamesReplayer`). Every step defaults to no check; `()`
/// checks nothing.
pub trait ReplayCheck {
    /// Before action `index` is applied (it is its seat's turn); `events` are
    /// every event the rules gave so far.
    fn before_action(
        &mut self,
        _index: usize,
        _runner: &HandRunner,
        _events: &[HandEvent],
    ) -> Result<(), String> {
        Ok(())
    }

    /// After action `index` and what it set off.
    fn after_action(&mut self, _index: usize, _runner: &HandRunner) -> Result<(), String> {
        Ok(())
    }

    /// After the last action, before the hand must be over.
    fn before_end(&mut self, _runner: &HandRunner, _events: &[HandEvent]) -> Result<(), String> {
        Ok(())
    }
}

impl ReplayCheck for () {}

/// The one replay of a hand: re-runs it from its inputs and the full deck
/// order, each action in turn (it must be its seat's turn), with `check`'s
/// checks between the steps; the hand must then be over, and its chip
/// movements conserved. Gives every event, the result and the table memory.
pub fn replay_checked<'a>(
    game: &dyn DynGame,
    settings: &Value,
    players: &[PlayerInfo],
    memory: &Value,
    deck: Vec<CardId>,
    actions: impl IntoIterator<Item = (Seat, &'a Value)>,
    check: &mut dyn ReplayCheck,
) -> Result<ReplayOutcome, ReplayError> {
    let (mut runner, mut events) =
        HandRunner::start(game, settings, players, memory, deck).map_err(ReplayError::Start)?;
    let mut count = 0;
    for (index, (seat, action)) in actions.into_iter().enumerate() {
        let expected = runner.hand().to_act();
        if expected != Some(seat) {
            return Err(ReplayError::WrongSeat { index, seat, expected });
        }
        check.before_action(index, &runner, &events).map_err(ReplayError::Check)?;
        let more = runner.act(seat, action).map_err(|error| ReplayError::Action {
            index,
            action: action.clone(),
            error,
        })?;
        events.extend(more);
        check.after_action(index, &runner).map_err(ReplayError::Check)?;
        count = index + 1;
    }
    check.before_end(&runner, &events).map_err(ReplayError::Check)?;
    if !runner.hand().is_over() {
        return Err(ReplayError::NotOver(count));
    }
    let result = runner.hand().result().ok_or(ReplayError::NoResult)?;
    check_conservation(&events, &result, players.len())?;
    Ok(ReplayOutcome { events, memory_after: runner.hand().memory_after(), result })
}

/// [`replay_checked`] of recorded actions, with no checks beyond the rules
/// (the games' tests and benchmarks).
pub fn replay(
    game: &dyn DynGame,
    settings: &Value,
    players: &[PlayerInfo],
    memory: &Value,
    deck: Vec<CardId>,
    actions: &[RecordedAction],
) -> Result<ReplayOutcome, ReplayError> {
    replay_checked(
        game,
        settings,
        players,
        memory,
        deck,
        actions.iter().map(|a| (a.seat, &a.action)),
        &mut (),
    )
}
