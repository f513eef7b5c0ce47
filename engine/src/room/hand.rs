//! The hand lifecycle inside a room: choosing players, commission, prepare,
//! seeds, dealing, actions and timeouts, chip steps, settlement, voiding
//! with refunds, and deferred reveals. Chip moves are effects: a step waits
//! in [`Stage::Chips`] for its completion while the room handles
//! everything else.

use std::collections::VecDeque;
use std::time::Instant;

use claw_games::ChipParty;
use claw_protocol::messages::{
    ActionRejectCode, ActionRejected, ErrorCode, ErrorMsg, KickReason, Kicked, PlayerSeed, RoomPhase,
    ServerMessage, SignedAction, TimeoutReason, YourTurn,
};
use claw_protocol::transcript::EventEnvelope;
use claw_protocol::{Chips, HandId, PlayerId, Seat};

use super::{
    encode, Account, ArchiveWrite, ChipCall, ChipFailure, ChipMove, ChipOutcome, EffectId, Now, Presence,
    RoomCore, RoomEvent, Waiting, RETRY_BACKOFF,
};
use crate::hand::{Hand, HandEnd, HandSeat, Step};
use crate::metrics::inc;

/// Why a hand was voided, as its players are told: a stable code and a
/// short text, never the chip service's address or an OS error.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VoidCause {
    /// The chip service failed, refused a move, or did not answer.
    ChipService,
    /// The game could not go on (an engine or rules error).
    Game,
    /// The dealer is shutting down.
    Shutdown,
    /// The hand's chip moves did not add up (conservation check).
    Conservation,
    /// A player the hand cannot go on without left before acting (Sam
    /// Gong's banker before its bet).
    Left,
}

impl VoidCause {
    /// The code players see (`[chip-service]`).
    pub fn code(self) -> &'static str {
        match self {
            VoidCause::ChipService => "chip-service",
            VoidCause::Game => "game-error",
            VoidCause::Shutdown => "shutdown",
            VoidCause::Conservation => "chip-conservation",
            VoidCause::Left => "player-left",
        }
    }

    /// The short text players see.
    pub fn text(self) -> &'static str {
        match self {
            VoidCause::ChipService => "the chip service failed or did not answer",
            VoidCause::Game => "the game could not continue",
            VoidCause::Shutdown => "the dealer is shutting down",
            VoidCause::Conservation => "the hand's chip movements did not add up",
            VoidCause::Left => "a player the hand cannot go on without left before acting",
        }
    }
}

/// The chip call that gives `p` its commission back (in the hand's journal).
fn commission_back(hand: HandId, p: PlayerId, commission: Chips) -> ChipCall {
    let mv = ChipMove::credit(Account::Player(p), commission, "commission returned");
    ChipCall::Moves { hand, moves: vec![mv], undo_on_refusal: false }
}

pub use claw_protocol::messages::MAX_HAND_STAKE;

/// The table: no hand, a hand being formed (chips collected), or a hand.
pub(super) enum Table {
    Idle,
    Forming(Box<Forming>),
    Playing(Box<ActiveHand>),
}

/// A hand being formed: its journal opened, then commission (or a balance
/// check) per ready player, one chip call at a time.
pub(super) struct Forming {
    hand_id: HandId,
    queue: VecDeque<PlayerId>,
    step: FormStep,
    awaiting: EffectId,
    seated: Vec<(PlayerId, Chips)>,
    commission_total: Chips,
    journal_open: bool,
}

/// The chip call a forming hand waits for.
#[derive(Clone, Copy)]
enum FormStep {
    Open,
    Commission(PlayerId),
    ReturnCommission(PlayerId, Chips),
    Balance(PlayerId),
    /// A charged player left, went away or sat out before the deal: its
    /// commission goes back and it is not dealt in.
    Refund(PlayerId),
}

/// The hand being played.
pub(super) struct ActiveHand {
    pub hand: Hand,
    /// Hand seat → player.
    pub players: Vec<PlayerId>,
    commission_total: Chips,
    stage: Stage,
}

/// What the running hand waits for.
enum Stage {
    /// Player seeds (entropy `joint`), until the deadline.
    Seeds { deadline: Instant },
    /// A player's action, until the deadline.
    Turn(Turn),
    /// The chip moves of a step (`players`: whose balance each move sets).
    Chips { id: EffectId, origin: Origin, players: Vec<Option<PlayerId>> },
}

/// The player the hand waits for.
#[derive(Clone, Copy)]
struct Turn {
    seat: Seat,
    deadline: Instant,
    deadline_ms: u64,
    /// When the low-time warning is due (`warn_time_left` before the
    /// deadline); none once sent, or when off.
    warn_at: Option<Instant>,
}

impl Turn {
    /// A turn of `seat` from `now` to `deadline`, warned `warn` before the
    /// deadline (zero: never). A deadline already that close is warned in
    /// its first `your-turn`.
    fn new(seat: Seat, now: Now, deadline: Now, warn: std::time::Duration) -> Turn {
        let warn_at =
            (!warn.is_zero()).then(|| deadline.at.checked_sub(warn)).flatten().filter(|w| *w > now.at);
        Turn { seat, deadline: deadline.at, deadline_ms: deadline.unix_ms, warn_at }
    }

    /// Whether the low-time warning is due or was sent (a `your-turn` sent
    /// now carries it).
    fn low_time(&self, warn: std::time::Duration) -> bool {
        self.warn_at.is_none() && !warn.is_zero()
    }
}

/// Who set off a step.
#[derive(Clone, Copy)]
enum Origin {
    Start,
    Player { id: PlayerId, hand_id: HandId, seq: u32, at: Instant },
    Auto,
}

/// An archived hand whose `audit-reveal` is still owed (policy `deferred`).
/// The signed reveal itself waits in the archive's pending store.
pub(super) struct PendingReveal {
    pub hand_number: u64,
    pub hand_id: HandId,
    /// Who is sent the reveal when it is published.
    pub players: Vec<PlayerId>,
    /// When to publish; none = when the room closes.
    pub at: Option<Instant>,
}

impl Table {
    /// The hand, once prepared.
    pub fn hand(&self) -> Option<&Hand> {
        match self {
            Table::Playing(h) => Some(&h.hand),
            _ => None,
        }
    }

    pub fn is_playing(&self) -> bool {
        matches!(self, Table::Playing(_))
    }

    /// A hand is forming or playing (shutdown waits for it).
    pub fn is_busy(&self) -> bool {
        !matches!(self, Table::Idle)
    }

    /// The seed or action deadline.
    pub fn deadline(&self) -> Option<Instant> {
        match self {
            Table::Playing(h) => match &h.stage {
                Stage::Seeds { deadline } => Some(*deadline),
                Stage::Turn(t) => Some(t.warn_at.map_or(t.deadline, |w| w.min(t.deadline))),
                Stage::Chips { .. } => None,
            },
            _ => None,
        }
    }

    /// Who the hand waits for (`your-turn` sent), its hand seat and deadline
    /// (unix ms).
    pub fn acting(&self) -> Option<(PlayerId, Seat, u64)> {
        match self {
            Table::Playing(h) => match &h.stage {
                Stage::Turn(t) => h.players.get(t.seat.index()).map(|p| (*p, t.seat, t.deadline_ms)),
                _ => None,
            },
            _ => None,
        }
    }

    /// The seat whose action the hand waits for, when it is `id`'s.
    pub fn turn_of(&self, id: &PlayerId) -> Option<Seat> {
        match self {
            Table::Playing(h) => match &h.stage {
                Stage::Turn(t) if h.players.get(t.seat.index()) == Some(id) => Some(t.seat),
                _ => None,
            },
            _ => None,
        }
    }

    /// Whether an action of `id` for `hand` is what the hand waits for.
    pub fn expects_action(&self, id: &PlayerId, hand: &HandId) -> bool {
        self.turn_of(id).is_some() && self.hand().is_some_and(|h| h.hand_id() == *hand)
    }

    /// Whether a seed of `id` for `hand` is being collected.
    pub fn expects_seed(&self, id: &PlayerId, hand: &HandId) -> bool {
        self.hand().is_some_and(|h| h.collecting_seeds() && h.hand_id() == *hand && h.seat_of(id).is_some())
    }
}

impl RoomCore {
    /// Asks for a hand start as soon as possible (auto-start at min players).
    pub(super) fn schedule_start(&mut self, now: Now) {
        if !self.table.is_busy()
            && self.closing.is_none()
            && self.phase == RoomPhase::Waiting
            && self.next_hand_at.is_none()
        {
            self.next_hand_at = Some(now.at);
        }
    }

    fn max_hands_reached(&self) -> bool {
        self.cfg.max_hands.is_some_and(|m| self.hands_played >= m)
    }

    /// Starts forming a hand if enough players are ready.
    pub(super) fn maybe_start_hand(&mut self, now: Now) {
        if self.table.is_busy() || self.closing.is_some() || self.phase == RoomPhase::Closed {
            return;
        }
        if self.hold || self.funding {
            self.phase = RoomPhase::Waiting;
            return;
        }
        if self.max_hands_reached() {
            self.begin_close(now, std::time::Duration::ZERO);
            return;
        }
        let ready: VecDeque<PlayerId> =
            self.seats.iter().flatten().filter(|id| self.dealable(id)).copied().collect();
        if ready.len() < usize::from(self.cfg.min_players) {
            self.phase = RoomPhase::Waiting;
            return;
        }
        let hand_id = HandId::random(&mut *self.rng);
        let players = ready.iter().copied().collect();
        let awaiting = self.call(ChipCall::OpenHand { hand: hand_id, players }, Waiting::Table);
        self.phase = RoomPhase::Playing;
        self.table = Table::Forming(Box::new(Forming {
            hand_id,
            queue: ready,
            step: FormStep::Open,
            awaiting,
            seated: Vec::new(),
            commission_total: Chips::ZERO,
            journal_open: false,
        }));
    }

    /// A chip call of the table's hand completed.
    pub(super) fn table_chips_done(&mut self, now: Now, id: EffectId, outcome: ChipOutcome) {
        match &self.table {
            Table::Forming(f) if f.awaiting == id => self.forming_done(now, outcome),
            Table::Playing(h) if matches!(h.stage, Stage::Chips { id: x, .. } if x == id) => {
                self.step_done(now, outcome)
            }
            // A hand voided meanwhile.
            _ => {}
        }
    }

    fn forming_done(&mut self, now: Now, outcome: ChipOutcome) {
        let Table::Forming(f) = &mut self.table else { return };
        let commission = self.cfg.commission;
        let min_stake = Chips(self.cfg.min_bet.0.max(1));
        // A player under the table's entry chips after a hand leaves before
        // the next one (a Sam Gong rule), as a join would be refused.
        let entry = self.entry;
        let mut kick: Option<(PlayerId, Chips)> = None;
        match (f.step, outcome) {
            (FormStep::Open, ChipOutcome::Done(Ok(()))) => f.journal_open = true,
            (FormStep::Open, other) => {
                tracing::error!(room = %self.cfg.id, outcome = ?other, "cannot open the chip journal; no hand");
                self.table = Table::Idle;
                self.phase = RoomPhase::Waiting;
                self.next_hand_at = Some(now.at + RETRY_BACKOFF);
                return;
            }
            (FormStep::Commission(p), ChipOutcome::Moves(Ok(b))) => {
                f.commission_total = Chips(f.commission_total.0 + commission.0);
                let balance = b.first().copied().unwrap_or_default();
                if balance < min_stake || Chips(balance.0.saturating_add(commission.0)) < entry {
                    // Cannot play after paying: give it back, kick.
                    let call = commission_back(f.hand_id, p, commission);
                    let id = self.call(call, Waiting::Table);
                    if let Table::Forming(f) = &mut self.table {
                        f.step = FormStep::ReturnCommission(p, balance);
                        f.awaiting = id;
                    }
                    return;
                }
                f.seated.push((p, balance));
            }
            (FormStep::Commission(p), ChipOutcome::Moves(Err((ChipFailure::Refused(_), _)))) => {
                kick = Some((p, Chips::ZERO))
            }
            (FormStep::Commission(_), other) => {
                inc(&self.metrics.chip_errors);
                tracing::error!(room = %self.cfg.id, outcome = ?other, "commission debit failed; hand not started");
                return self.abandon_start(now);
            }
            (FormStep::ReturnCommission(p, b), outcome) => {
                if let ChipOutcome::Moves(Ok(_)) = outcome {
                    f.commission_total = Chips(f.commission_total.0 - commission.0);
                }
                kick = Some((p, b));
            }
            (FormStep::Balance(p), ChipOutcome::Balance(Ok(b))) if b < min_stake || b < entry => {
                kick = Some((p, b))
            }
            (FormStep::Balance(p), ChipOutcome::Balance(Ok(b))) => f.seated.push((p, b)),
            (FormStep::Balance(_), other) => {
                inc(&self.metrics.chip_errors);
                tracing::warn!(room = %self.cfg.id, outcome = ?other, "balance check failed; player skips this hand");
            }
            (FormStep::Refund(_), ChipOutcome::Moves(Ok(_))) => {
                f.commission_total = Chips(f.commission_total.0 - commission.0)
            }
            (FormStep::Refund(p), other) => {
                inc(&self.metrics.chip_errors);
                tracing::error!(room = %self.cfg.id, player = %p.short(), outcome = ?other,
                    "returning the commission of a player who left before the deal failed");
            }
        }
        if let Some((p, b)) = kick {
            self.kick_broke(&p, b);
        }
        if self.closing.is_some() {
            return self.abandon_start(now);
        }
        self.next_form(now);
    }

    /// Whether `id` is to be dealt into the next hand: seated, online and
    /// not sitting out. A player who said leave, went away or sat out while
    /// the hand was forming is not.
    pub(super) fn dealable(&self, id: &PlayerId) -> bool {
        self.players.get(id).is_some_and(|p| {
            p.seat.is_some() && matches!(p.presence, Presence::Online(_)) && p.sit_out.is_none()
        })
    }

    /// Charges the next ready player, gives back the commission of a charged
    /// player who is no longer dealable, or prepares the hand.
    fn next_form(&mut self, now: Now) {
        let commission = self.cfg.commission;
        loop {
            let Table::Forming(f) = &mut self.table else { return };
            let Some(p) = f.queue.pop_front() else { break };
            let hand = f.hand_id;
            if !self.dealable(&p) {
                continue;
            }
            let (step, call) = if commission.0 > 0 {
                let mv = ChipMove::debit(Account::Player(p), commission, "commission");
                (FormStep::Commission(p), ChipCall::Moves { hand, moves: vec![mv], undo_on_refusal: false })
            } else {
                (FormStep::Balance(p), ChipCall::Balance(p))
            };
            let id = self.call(call, Waiting::Table);
            if let Table::Forming(f) = &mut self.table {
                f.step = step;
                f.awaiting = id;
            }
            return;
        }
        let Table::Forming(f) = &self.table else { return };
        if let Some(i) = f.seated.iter().position(|(p, _)| !self.dealable(p)) {
            let Table::Forming(f) = &mut self.table else { return };
            let (p, _) = f.seated.remove(i);
            let hand = f.hand_id;
            if commission.0 > 0 {
                tracing::info!(room = %self.cfg.id, player = %p.short(), "not dealt in: commission returned");
                let id = self.call(commission_back(hand, p, commission), Waiting::Table);
                if let Table::Forming(f) = &mut self.table {
                    f.step = FormStep::Refund(p);
                    f.awaiting = id;
                }
                return;
            }
            return self.next_form(now);
        }
        self.prepare(now);
    }

    /// Every player charged: signs `hand-prepare`.
    fn prepare(&mut self, now: Now) {
        let Table::Forming(f) = &mut self.table else { return };
        let seated: Vec<(PlayerId, Chips)> = f.seated.drain(..).collect();
        let (hand_id, commission_total) = (f.hand_id, f.commission_total);
        for (id, b) in &seated {
            if let Some(p) = self.players.get_mut(id) {
                p.balance = *b;
            }
        }
        // Games bound the stacks they accept (exact arithmetic below 2^53).
        let seats: Vec<HandSeat> = seated
            .iter()
            .filter_map(|(id, b)| {
                self.players.get(id).map(|p| HandSeat {
                    id: *id,
                    encryption_key: p.encryption_key,
                    balance: Chips(b.0.min(MAX_HAND_STAKE)),
                    commission: self.cfg.commission,
                    key: p.key.clone(),
                })
            })
            .collect();
        if seats.len() < usize::from(self.cfg.min_players) {
            return self.abandon_start(now);
        }
        let hand_number = self.first_hand_number + self.hands_played + self.hands_voided;
        let prepared = Hand::prepare(
            self.spec.clone(),
            self.dealer.clone(),
            seats,
            self.memory.clone(),
            hand_number,
            hand_id,
            &mut *self.rng,
        );
        let (hand, env) = match prepared {
            Ok(x) => x,
            Err(e) => {
                tracing::error!(room = %self.cfg.id, error = %e, "cannot prepare a hand");
                return self.abandon_start(now);
            }
        };
        inc(&self.metrics.hands_started);
        let seeds = hand.collecting_seeds();
        let players: Vec<PlayerId> = hand.seats().iter().map(|s| s.id).collect();
        tracing::debug!(room = %self.cfg.id, hand = %hand_id, hand_number, players = players.len(), "hand prepared");
        // Until the seeds arrive (or the hand starts at once below).
        let stage = Stage::Seeds { deadline: now.at + self.cfg.seed_timeout };
        self.table = Table::Playing(Box::new(ActiveHand { hand, players, commission_total, stage }));
        self.broadcast(&[env]);
        self.count_sat_out_hand(now);
        if !seeds {
            self.start_dealing(now);
        }
    }

    /// A hand is dealt: each seat sitting out it has sat out one more; after
    /// `sit_out_hands` the seat is freed.
    fn count_sat_out_hand(&mut self, now: Now) {
        let limit = self.cfg.sit_out_hands;
        let mut free = Vec::new();
        for p in self.players.values_mut().filter(|p| p.seat.is_some() && p.sit_out.is_some()) {
            p.sat_out_hands = p.sat_out_hands.saturating_add(1);
            if limit > 0 && p.sat_out_hands >= limit {
                free.push(p.id);
            }
        }
        for id in free {
            self.free_seat(now, &id, &format!("sat out {limit} hands: the seat is freed"));
        }
    }

    fn kick_broke(&mut self, id: &PlayerId, balance: Chips) {
        tracing::info!(room = %self.cfg.id, player = %id.short(), %balance, "cannot cover the minimum: kicked");
        let reason = if self.entry > self.min_balance() {
            format!("balance {balance} is below this table's entry threshold of {}", self.entry)
        } else {
            format!("balance {balance} cannot cover this room's minimum {}", self.min_balance())
        };
        self.send(id, &ServerMessage::Kicked(Kicked { code: KickReason::InsufficientBalance, reason }));
        self.remove_player(id, true);
    }

    /// A hand that could not start: refund what was taken, try later.
    pub(super) fn abandon_start(&mut self, now: Now) {
        let Table::Forming(f) = std::mem::replace(&mut self.table, Table::Idle) else { return };
        if f.journal_open {
            self.call(ChipCall::Void(f.hand_id), Waiting::Log("refund of an unstarted hand"));
        }
        self.phase = RoomPhase::Waiting;
        if self.closing.is_none() {
            self.next_hand_at = Some(now.at + self.cfg.between_hands.max(RETRY_BACKOFF));
        }
    }

    /// A seat's shuffle seed.
    pub(super) fn player_seed(&mut self, now: Now, id: &PlayerId, s: PlayerSeed) {
        let Table::Playing(h) = &mut self.table else {
            return self.error_to(id, ErrorCode::BadSeed, "no hand is being prepared");
        };
        let Some(seat) = h.hand.seat_of(id) else {
            return self.error_to(id, ErrorCode::BadSeed, "you are not in this hand");
        };
        if let Err(e) = h.hand.add_seed(seat, &s) {
            // Refused seeds draw on the rate limit.
            let _ = self.take_token(id, now.at);
            return self.error_to(id, ErrorCode::BadSeed, e.to_string());
        }
        if h.hand.seeds_complete() {
            self.start_dealing(now);
        }
    }

    /// The seed and action timers.
    pub(super) fn hand_timers(&mut self, now: Now) {
        let Table::Playing(h) = &self.table else { return };
        match &h.stage {
            Stage::Seeds { deadline } if *deadline <= now.at => self.start_dealing(now),
            Stage::Turn(t) if t.deadline <= now.at => {
                let seat = t.seat;
                self.timeout_action(now, seat)
            }
            Stage::Turn(t) if t.warn_at.is_some_and(|w| w <= now.at) => self.warn_turn(),
            _ => {}
        }
    }

    /// Shuffle, commit, start actions, first deals.
    fn start_dealing(&mut self, now: Now) {
        let Table::Playing(h) = &mut self.table else { return };
        if h.hand.started() {
            return;
        }
        match h.hand.start(&mut *self.rng) {
            Ok(step) => self.drive(now, step, Origin::Start),
            Err(e) => self.void_hand(now, VoidCause::Game, &format!("the game could not start: {e}")),
        }
    }

    /// A player's signed action.
    pub(super) fn player_action(&mut self, now: Now, id: &PlayerId, signed: SignedAction, at: Instant) {
        let (hand_id, seq) = (signed.hand_id, signed.seq);
        let Table::Playing(h) = &mut self.table else {
            let r = ActionRejected {
                hand_id,
                seq,
                code: ActionRejectCode::NotInHand,
                reason: "no hand is running".into(),
            };
            return self.send(id, &ServerMessage::ActionRejected(r));
        };
        match h.hand.act(id, signed) {
            Ok(step) => self.drive(now, step, Origin::Player { id: *id, hand_id, seq, at }),
            Err(r) => {
                inc(&self.metrics.actions_rejected);
                // Refused actions draw on the rate limit.
                let _ = self.take_token(id, at);
                let msg = ActionRejected { hand_id, seq, code: r.code, reason: r.reason };
                self.send(id, &ServerMessage::ActionRejected(msg));
            }
        }
    }

    /// The seat's timer ran out (or it left): the game's auto action.
    pub(super) fn timeout_action(&mut self, now: Now, seat: Seat) {
        let Table::Playing(h) = &mut self.table else { return };
        let reason = match h.players.get(seat.index()).and_then(|id| self.players.get(id)).map(|p| p.presence)
        {
            Some(Presence::Online(_)) => TimeoutReason::Timeout,
            Some(Presence::Away { .. }) => TimeoutReason::Disconnected,
            Some(Presence::Left) | None => return self.left_to_act(now, Some(seat)),
        };
        inc(&self.metrics.timeouts);
        let actor = h.players.get(seat.index()).copied();
        match h.hand.auto_act(seat, reason) {
            Ok(step) => self.drive(now, step, Origin::Auto),
            Err(e) => return self.void_hand(now, VoidCause::Game, &format!("auto action failed: {e}")),
        }
        if let (Some(id), TimeoutReason::Timeout) = (actor, reason) {
            self.count_timeout(now, &id);
        }
    }

    /// A seated player's turn was taken by the timer: after
    /// `timeouts_to_sit_out` in a row it sits out from the next hand.
    fn count_timeout(&mut self, now: Now, id: &PlayerId) {
        let limit = self.cfg.timeouts_to_sit_out;
        let Some(p) = self.players.get_mut(id) else { return };
        p.timeouts_in_a_row = p.timeouts_in_a_row.saturating_add(1);
        if limit == 0 || p.timeouts_in_a_row < limit || p.sit_out.is_some() || p.seat.is_none() {
            return;
        }
        tracing::info!(room = %self.cfg.id, player = %id.short(), timeouts = limit, "never acts: sat out");
        inc(&self.metrics.sat_out_idle);
        self.sit_out(now, id, true);
        self.hurry_away_turn(now);
    }

    /// Runs a step and what follows it (see [`RoomCore::left_to_act`]).
    fn drive(&mut self, now: Now, step: Step, origin: Origin) {
        let next = self.run_step(now, step, origin);
        self.left_to_act(now, next);
    }

    /// While the seat to act (`next`) is a player who left the room: the
    /// game's auto action at once, or, when the game cannot go on without
    /// that player (Sam Gong's banker before its bet), the hand is voided
    /// and refunded.
    fn left_to_act(&mut self, now: Now, mut next: Option<Seat>) {
        while let Some(seat) = next.take() {
            let Table::Playing(h) = &mut self.table else { return };
            if h.hand.leave_voids(seat) {
                return self.void_hand(now, VoidCause::Left, &format!("the player of {seat} left"));
            }
            inc(&self.metrics.timeouts);
            match h.hand.auto_act(seat, TimeoutReason::Left) {
                Ok(step) => next = self.run_step(now, step, Origin::Auto),
                Err(e) => return self.void_hand(now, VoidCause::Game, &format!("auto action failed: {e}")),
            }
        }
    }

    /// Commits a step without chip moves at once; otherwise asks for its
    /// moves and waits. Returns the next seat to act when that player has
    /// left the room.
    fn run_step(&mut self, now: Now, step: Step, origin: Origin) -> Option<Seat> {
        if step.moves.is_empty() {
            return self.commit_step(now, origin);
        }
        let Table::Playing(h) = &mut self.table else { return None };
        let mut moves = Vec::with_capacity(step.moves.len());
        for m in step.moves {
            let account = match m.party {
                ChipParty::Seat(s) => match h.players.get(s.index()) {
                    Some(p) => Account::Player(*p),
                    None => {
                        self.void_hand(now, VoidCause::Game, &format!("chip move for missing {s}"));
                        return None;
                    }
                },
                ChipParty::House => Account::House,
            };
            moves.push(ChipMove { op: m.op, party: account, amount: m.amount, reason: m.reason });
        }
        let hand = h.hand.hand_id();
        let undo_on_refusal = matches!(origin, Origin::Player { .. });
        let players = moves
            .iter()
            .map(|m| match m.party {
                Account::Player(p) => Some(p),
                _ => None,
            })
            .collect();
        let id = self.call(ChipCall::Moves { hand, moves, undo_on_refusal }, Waiting::Table);
        if let Table::Playing(h) = &mut self.table {
            h.stage = Stage::Chips { id, origin, players };
        }
        None
    }

    /// The chip moves of the waiting step completed.
    fn step_done(&mut self, now: Now, outcome: ChipOutcome) {
        let Table::Playing(h) = &mut self.table else { return };
        let Stage::Chips { origin, players, .. } = &h.stage else { return };
        let (origin, accounts) = (*origin, players.clone());
        let result = match outcome {
            ChipOutcome::Moves(r) => r,
            _ => Err((ChipFailure::Unavailable("unexpected completion".into()), false)),
        };
        match result {
            Ok(balances) => {
                // The balance after each move: the latest per player.
                for (account, b) in accounts.into_iter().zip(balances) {
                    if let Some(p) = account.and_then(|a| self.players.get_mut(&a)) {
                        p.balance = b;
                    }
                }
                let next = self.commit_step(now, origin);
                self.left_to_act(now, next);
            }
            Err((ChipFailure::Refused(reason), undone)) => {
                inc(&self.metrics.chip_errors);
                let Origin::Player { id, hand_id, seq, .. } = origin else {
                    return self.void_hand(
                        now,
                        VoidCause::ChipService,
                        &format!("a chip debit was refused: {reason}"),
                    );
                };
                if !undone || h.hand.rollback().is_err() {
                    return self.void_hand(now, VoidCause::ChipService, "could not undo a refused action");
                }
                inc(&self.metrics.actions_rejected);
                tracing::info!(room = %self.cfg.id, player = %id.short(), reason, "debit refused: action rolled back");
                let r = ActionRejected {
                    hand_id,
                    seq,
                    code: ActionRejectCode::BadAmount,
                    // The player's own shortfall, never the service's text.
                    reason: if reason.starts_with("insufficient balance") {
                        "the chip service refused the debit: insufficient balance".into()
                    } else {
                        "the chip service refused the debit".into()
                    },
                };
                self.send(&id, &ServerMessage::ActionRejected(r));
                // Still this player's turn, with a fresh timer.
                self.set_turn(now);
            }
            Err((e, _)) => {
                inc(&self.metrics.chip_errors);
                self.void_hand(now, VoidCause::ChipService, &format!("chip service failure: {e:?}"))
            }
        }
    }

    /// Publishes the waiting step; names the next player or ends the hand.
    fn commit_step(&mut self, now: Now, origin: Origin) -> Option<Seat> {
        let timeout = self.cfg.action_timeout;
        let later = now.after(timeout);
        let Table::Playing(h) = &mut self.table else { return None };
        let c = match h.hand.commit(&mut *self.rng, later.unix_ms) {
            Ok(c) => c,
            Err(e) => {
                self.void_hand(now, VoidCause::Game, &format!("engine: {e}"));
                return None;
            }
        };
        // The final burst (`game-end`) is sent by `finish_hand`, after the
        // hand's archive write and settlement.
        if c.end.is_none() {
            self.broadcast(&c.events);
        }
        if let Origin::Player { at, id, .. } = origin {
            if let Some(p) = self.players.get_mut(&id) {
                p.timeouts_in_a_row = 0;
            }
            inc(&self.metrics.actions_accepted);
            self.metrics.observe_action(now.at.saturating_duration_since(at));
        }
        if let Some(end) = c.end {
            self.finish_hand(now, end, &c.events);
            return None;
        }
        let Some(turn) = c.your_turn else {
            self.void_hand(now, VoidCause::Game, "the game waits for nobody");
            return None;
        };
        let seat = turn.seat;
        let Table::Playing(h) = &mut self.table else { return None };
        let t = Turn::new(seat, now, later, self.cfg.warn_time_left);
        let low_time = t.low_time(self.cfg.warn_time_left).then_some(timeout);
        h.stage = Stage::Turn(t);
        let actor = *h.players.get(seat.index())?;
        if self.players.get(&actor).is_none_or(|p| p.left()) {
            return Some(seat);
        }
        self.hurry_away_turn(now);
        let turn = self.with_warnings(turn, low_time);
        self.send(&actor, &ServerMessage::YourTurn(turn));
        None
    }

    /// When the player to act is away, its turn ends `away_timeout` from
    /// now if that is sooner than its deadline (an away player does not
    /// cost the table the full action timeout).
    pub(super) fn hurry_away_turn(&mut self, now: Now) {
        let Table::Playing(h) = &mut self.table else { return };
        let Stage::Turn(t) = &mut h.stage else { return };
        let away = h
            .players
            .get(t.seat.index())
            .and_then(|id| self.players.get(id))
            .is_some_and(|p| matches!(p.presence, Presence::Away { .. }) || p.sit_out.is_some());
        let soon = now.after(self.cfg.away_timeout);
        if away && soon.at < t.deadline {
            t.deadline = soon.at;
            t.deadline_ms = soon.unix_ms;
            t.warn_at = None; // nobody reads it
        }
    }

    /// The player to act gets (again) a fresh turn.
    fn set_turn(&mut self, now: Now) {
        let later = now.after(self.cfg.action_timeout);
        let Table::Playing(h) = &mut self.table else { return };
        let Some(seat) = h.hand.to_act() else { return };
        let t = Turn::new(seat, now, later, self.cfg.warn_time_left);
        let low_time = t.low_time(self.cfg.warn_time_left).then_some(self.cfg.action_timeout);
        h.stage = Stage::Turn(t);
        let turn = h.hand.your_turn(seat, later.unix_ms);
        if let Some(id) = h.players.get(seat.index()).copied() {
            let turn = self.with_warnings(turn, low_time);
            self.send(&id, &ServerMessage::YourTurn(turn));
        }
        self.hurry_away_turn(now);
    }

    /// `turn` with its `warning` (informational, unsigned): the time left
    /// once within `warn_time_left` of the deadline, and a balance below the
    /// room's low-balance level.
    fn with_warnings(&self, mut turn: YourTurn, time_left: Option<std::time::Duration>) -> YourTurn {
        let mut w = Vec::new();
        if let Some(left) = time_left {
            let left = left.min(self.cfg.warn_time_left);
            w.push(format!("{} s left", left.as_millis().div_ceil(1000)));
        }
        let low = self.low_balance();
        if turn.balance < low {
            w.push(format!("low balance: {} chips left (below {low})", turn.balance));
        }
        turn.warning = (!w.is_empty()).then(|| w.join("; "));
        turn
    }

    /// The balance under which `your-turn` warns: the room's
    /// `low_balance_warning`, or (0) ten times what a hand needs.
    fn low_balance(&self) -> Chips {
        match self.cfg.low_balance_warning {
            Chips(0) => Chips(self.min_balance().0.saturating_mul(10)),
            set => set,
        }
    }

    /// The acting player's low-time warning is due: `your-turn` again, same
    /// deadline, with `warning`.
    fn warn_turn(&mut self) {
        let Table::Playing(h) = &mut self.table else { return };
        let Stage::Turn(t) = &mut h.stage else { return };
        t.warn_at = None;
        let (seat, deadline_ms) = (t.seat, t.deadline_ms);
        let turn = h.hand.your_turn(seat, deadline_ms);
        if let Some(id) = h.players.get(seat.index()).copied() {
            let turn = self.with_warnings(turn, Some(self.cfg.warn_time_left));
            self.send(&id, &ServerMessage::YourTurn(turn));
        }
    }

    /// Settles a finished hand: commission and rake to the dealer (with the
    /// conservation check), then the archive, then the report; the pause
    /// between hands starts now. `last` is the hand's final burst (its
    /// `game-end`): it is queued after the hand's archive write and its
    /// settlement, and the driver runs the effects queued after those two
    /// only once they have completed, so no player sees the end of a hand
    /// that is not on file and paid (a crash before then refunds the hand
    /// at restart and sets its file aside as voided).
    fn finish_hand(&mut self, now: Now, end: HandEnd, last: &[EventEnvelope]) {
        let Table::Playing(h) = std::mem::replace(&mut self.table, Table::Idle) else { return };
        let h = *h;
        self.phase = RoomPhase::Settling;
        let hand_id = h.hand.hand_id();
        let hand_number = h.hand.hand_number();
        let fee = Chips(h.commission_total.0.saturating_add(end.result.rake.0));
        inc(&self.metrics.hands_finished);
        self.hands_played += 1;
        self.memory = end.memory_after.clone();
        let winners = end.result.winners.iter().filter_map(|s| h.players.get(s.index()).copied()).collect();
        tracing::info!(room = %self.cfg.id, hand = %hand_id, hand_number, summary = %end.result.summary, "hand finished");
        let report = RoomEvent::HandFinished {
            room: self.cfg.id.clone(),
            hand_number,
            hand_id,
            summary: end.result.summary.clone(),
            players: h.players.clone(),
            net: end.result.net.clone(),
            winners,
            transcript: None,
        };
        // The reveal is signed now (the hand's state is dropped with it) and
        // stored pending by the archive write, never in memory.
        let mut hand = h.hand;
        // The file's copy first: signing the reveal appends it to the chain.
        let transcript = hand.transcript().clone();
        let pending_reveal = if end.reveal_pending {
            hand.audit_reveal().unwrap_or_else(|e| {
                tracing::error!(room = %self.cfg.id, hand = %hand_id, error = %e, "audit-reveal failed");
                None
            })
        } else {
            None
        };
        let players = h.players;
        let owed = pending_reveal.is_some().then(|| PendingReveal {
            hand_number,
            hand_id,
            players: players.clone(),
            at: self.cfg.reveal_delay.map(|d| now.at + d),
        });
        let pending_reveal = pending_reveal.map(Box::new);
        let write = ArchiveWrite::Hand { hand_number, transcript, pending_reveal };
        self.archive(write.clone(), Waiting::Log("hand"));
        let next = Box::new((write, report, owed));
        self.unarchived.insert(hand_id, Vec::new());
        self.call(ChipCall::Settle { hand: hand_id, fee }, Waiting::Settle(next));
        for e in last {
            if let Some(f) = encode(&ServerMessage::Event(e.clone())) {
                self.send_frame(&players, f);
            }
        }
        self.after_hand(now);
    }

    /// Voids the running hand: every chip it moved goes back, the players
    /// are told `cause` (code and short text; `detail` goes to the log and
    /// the node's report only), the next hand is scheduled.
    pub(super) fn void_hand(&mut self, now: Now, cause: VoidCause, detail: &str) {
        let Table::Playing(h) = std::mem::replace(&mut self.table, Table::Idle) else {
            return self.abandon_start(now);
        };
        let hand_id = h.hand.hand_id();
        tracing::warn!(room = %self.cfg.id, hand = %hand_id, cause = cause.code(), detail, "voiding the hand");
        let report = RoomEvent::HandVoided { room: self.cfg.id.clone(), hand_id, reason: detail.to_owned() };
        self.call(ChipCall::Void(hand_id), Waiting::Void(Box::new(report)));
        self.archive(
            ArchiveWrite::Voided { transcript: h.hand.transcript().clone() },
            Waiting::Log("voided"),
        );
        inc(&self.metrics.hands_voided);
        self.hands_voided += 1;
        self.tell_voided(&h.players, hand_id, cause);
        self.after_hand(now);
        self.next_hand_at = self.next_hand_at.map(|t| t.max(now.at + RETRY_BACKOFF));
    }

    /// Tells `players` that `hand_id` was voided, with `cause`'s code and text.
    pub(super) fn tell_voided(&mut self, players: &[PlayerId], hand_id: HandId, cause: VoidCause) {
        let msg =
            format!("hand {hand_id} voided [{}]: {}; its chips are refunded", cause.code(), cause.text());
        if let Some(f) = encode(&ServerMessage::Error(ErrorMsg { code: ErrorCode::Internal, message: msg })) {
            self.send_frame(players, f);
        }
    }

    fn after_hand(&mut self, now: Now) {
        // Players who left during the hand are gone now.
        self.players.retain(|_, p| !p.left());
        if self.closing.is_some() {
            return;
        }
        if self.max_hands_reached() {
            self.begin_close(now, std::time::Duration::ZERO);
            return;
        }
        self.phase = RoomPhase::BetweenHands;
        self.next_hand_at = Some(now.at + self.cfg.between_hands);
    }

    /// Publishes an owed `audit-reveal`: the archive moves it from the
    /// pending store into the hand's file, then it goes to the hand's players.
    pub(super) fn publish_reveal(&mut self, d: PendingReveal) {
        let write = ArchiveWrite::Publish { hand_number: d.hand_number, hand_id: d.hand_id };
        self.archive(write, Waiting::Publish(d.players));
    }

    /// Sends signed events to every player of the running hand.
    pub(super) fn broadcast(&mut self, events: &[EventEnvelope]) {
        let Table::Playing(h) = &self.table else { return };
        let players = h.players.clone();
        for e in events {
            if let Some(f) = encode(&ServerMessage::Event(e.clone())) {
                self.send_frame(&players, f);
            }
        }
    }

    /// A resumed session: the hand so far (its sealed cards included) and,
    /// if it is the player's turn, the turn.
    pub(super) fn resend_hand(&mut self, id: &PlayerId) {
        let Table::Playing(h) = &self.table else { return };
        let Some(seat) = h.hand.seat_of(id) else { return };
        let frames: Vec<_> = h
            .hand
            .transcript()
            .events
            .iter()
            .filter_map(|e| encode(&ServerMessage::Event(e.clone())))
            .collect();
        let turn = match &h.stage {
            Stage::Turn(t) if t.seat == seat => {
                let low_time = t.low_time(self.cfg.warn_time_left).then_some(self.cfg.warn_time_left);
                Some(self.with_warnings(h.hand.your_turn(seat, t.deadline_ms), low_time))
            }
            _ => None,
        };
        for f in frames {
            self.send_frame(&[*id], f);
        }
        if let Some(t) = turn {
            self.send(id, &ServerMessage::YourTurn(t));
        }
    }
}
