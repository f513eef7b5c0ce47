//! The table and its running hand: seeds, dealing, actions and timeouts,
//! chip steps, turns and their warnings, resends to resumed sessions. A
//! hand is formed in `forming.rs` and settled or voided in `settle.rs`.
//! Chip moves are effects: a step waits in [`Stage::Chips`] for its
//! completion while the room handles everything else.

use std::time::Instant;

use claw_games::ChipParty;
use claw_protocol::messages::{
    ActionRejectCode, ActionRejected, BlindComplaintMsg, BlindKeyMsg, BlindPiecesMsg, BlindRecoveryMsg,
    BlindSharesMsg, BlindShuffleMsg, ErrorCode, PlayerSeed, RoomPhase, ServerMessage, SignedAction,
    TimeoutReason, YourTurn,
};
use claw_protocol::transcript::EventEnvelope;
use claw_protocol::{Chips, HandId, PlayerId, Seat};

use super::forming::Forming;
use super::settle::{PendingReveal, VoidCause};
use super::{
    encode, Account, ChipCall, ChipFailure, ChipMove, ChipOutcome, EffectId, Now, Presence, RoomCore, Waiting,
};
use crate::hand::{BlindProgress, Carried, Hand, Step, Withheld};
use crate::metrics::inc;

pub use claw_protocol::messages::MAX_HAND_STAKE;

/// The table: no hand, a hand being formed (chips collected), or a hand.
/// The room phase players see is derived from it.
pub(super) enum Table {
    Idle(Rest),
    Forming(Box<Forming>),
    Playing(Box<ActiveHand>),
}

/// The table and the count of its hands.
#[derive(Default)]
pub(super) struct Hands {
    pub table: Table,
    /// The table memory and previous hand the next hand starts from.
    pub carried: Carried,
    /// Hands settled.
    pub played: u64,
    /// Hands voided.
    pub voided: u64,
    /// The number of this session's first hand (continues the archive).
    pub first_number: u64,
    /// No new hands while set (`Input::Hold`).
    pub hold: bool,
    /// The house bankroll grant is still out.
    pub funding: bool,
    /// Settled hands whose chips did not add up.
    pub conservation_failures: u32,
    /// When to try to start the next hand.
    pub next_at: Option<Instant>,
    /// Reveals owed for archived hands (the reveals themselves are in the
    /// archive's pending store, not here).
    pub deferred: Vec<PendingReveal>,
    /// The running match (its clock and who left it).
    pub matched: super::matches::MatchWatch,
}

impl Default for Table {
    fn default() -> Table {
        Table::Idle(Rest::Waiting)
    }
}

/// What an idle table rests after.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Rest {
    /// Waiting for players (or for a retry, or a hold to end).
    Waiting,
    /// A hand ended and no next one follows (the room closes or reached
    /// `max_hands`): its settlement or refund is out.
    Settling,
    /// The pause between two hands.
    BetweenHands,
}

impl Rest {
    /// The room phase this rest shows.
    pub fn phase(self) -> RoomPhase {
        match self {
            Rest::Waiting => RoomPhase::Waiting,
            Rest::Settling => RoomPhase::Settling,
            Rest::BetweenHands => RoomPhase::BetweenHands,
        }
    }
}

/// The hand being played.
pub(super) struct ActiveHand {
    pub hand: Hand,
    /// Hand seat → player.
    pub players: Vec<PlayerId>,
    /// The commission the hand's players paid (to the dealer at settlement).
    pub commission_total: Chips,
    stage: Stage,
}

impl ActiveHand {
    /// A prepared hand collecting seeds until `seeds_until` (or starting at
    /// once when its game needs none).
    pub fn new(
        hand: Hand,
        players: Vec<PlayerId>,
        commission_total: Chips,
        seeds_until: Instant,
    ) -> ActiveHand {
        ActiveHand { hand, players, commission_total, stage: Stage::Seeds { deadline: seeds_until } }
    }
}

/// What the running hand waits for.
enum Stage {
    /// Player seeds (entropy `joint`), until the deadline.
    Seeds { deadline: Instant },
    /// A player's action, until the deadline.
    Turn(Turn),
    /// The chip moves of a step (`players`: whose balance each move sets).
    Chips { id: EffectId, origin: Origin, players: Vec<Option<PlayerId>> },
    /// Blind tables: every seat's pieces of its secret, until the deadline.
    Pieces { deadline: Instant },
    /// Blind tables (SPEC.md §9.7): a seat's shuffle, until the deadline.
    Shuffle { seat: Seat, deadline: Instant },
    /// Blind tables: decryption shares, until the deadline; `origin` of the
    /// step that waits for them (none: hole cards just dealt).
    Shares { deadline: Instant, origin: Option<Origin> },
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
        !matches!(self, Table::Idle(_))
    }

    /// The seed or action deadline.
    pub fn deadline(&self) -> Option<Instant> {
        match self {
            Table::Playing(h) => match &h.stage {
                Stage::Seeds { deadline } | Stage::Pieces { deadline } => Some(*deadline),
                Stage::Turn(t) => Some(t.warn_at.map_or(t.deadline, |w| w.min(t.deadline))),
                Stage::Chips { .. } => None,
                Stage::Shuffle { deadline, .. } | Stage::Shares { deadline, .. } => Some(*deadline),
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
    /// A chip call of the table's hand completed.
    pub(super) fn table_chips_done(&mut self, now: Now, id: EffectId, outcome: ChipOutcome) {
        match &self.hands.table {
            Table::Forming(f) if f.awaits(id) => self.forming_done(now, outcome),
            Table::Playing(h) if matches!(h.stage, Stage::Chips { id: x, .. } if x == id) => {
                self.step_done(now, outcome)
            }
            // A hand voided meanwhile.
            _ => {}
        }
    }

    /// A seat's shuffle seed.
    pub(super) fn player_seed(&mut self, now: Now, id: &PlayerId, s: PlayerSeed) {
        let Table::Playing(h) = &mut self.hands.table else {
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
        let Table::Playing(h) = &self.hands.table else { return };
        match &h.stage {
            Stage::Seeds { deadline } if *deadline <= now.at => self.start_dealing(now),
            Stage::Turn(t) if t.deadline <= now.at => {
                let seat = t.seat;
                self.timeout_action(now, seat)
            }
            Stage::Turn(t) if t.warn_at.is_some_and(|w| w <= now.at) => self.warn_turn(),
            Stage::Pieces { deadline } if *deadline <= now.at => self.blind_pieces_timeout(now),
            Stage::Shuffle { deadline, .. } if *deadline <= now.at => self.blind_shuffle_timeout(now),
            Stage::Shares { deadline, .. } if *deadline <= now.at => self.blind_shares_timeout(now),
            _ => {}
        }
    }

    /// Shuffle, commit, start actions, first deals.
    pub(super) fn start_dealing(&mut self, now: Now) {
        let Table::Playing(h) = &mut self.hands.table else { return };
        if h.hand.started() {
            return;
        }
        if h.hand.is_blind() && !self.blind_ready_to_start(now) {
            return;
        }
        let Table::Playing(h) = &mut self.hands.table else { return };
        match h.hand.start(&mut *self.rng) {
            Ok(step) => self.drive(now, step, Origin::Start),
            Err(e) => self.void_hand(now, VoidCause::Game, &format!("the game could not start: {e}")),
        }
    }

    /// A player's signed action.
    pub(super) fn player_action(&mut self, now: Now, id: &PlayerId, signed: SignedAction, at: Instant) {
        let (hand_id, seq) = (signed.hand_id, signed.seq);
        let Table::Playing(h) = &mut self.hands.table else {
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
        let Table::Playing(h) = &mut self.hands.table else { return };
        let reason = match h.players.get(seat.index()).and_then(|id| self.roster.get(id)).map(|p| p.presence)
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
            self.metrics.conduct.flag(&id, crate::conduct::Flag::Timeout);
            self.count_timeout(now, &id);
        }
    }

    /// A seated player's turn was taken by the timer: after
    /// `timeouts_to_sit_out` in a row it sits out from the next hand.
    fn count_timeout(&mut self, now: Now, id: &PlayerId) {
        let limit = self.cfg.timeouts_to_sit_out;
        let Some(p) = self.roster.get_mut(id) else { return };
        p.timeouts_in_a_row = p.timeouts_in_a_row.saturating_add(1);
        if limit == 0 || p.timeouts_in_a_row < limit || p.sit_out.is_some() || p.seat.is_none() {
            return;
        }
        tracing::info!(room = %self.cfg.id, player = %id.short(), timeouts = limit, "never acts: sat out");
        inc(&self.metrics.sat_out_idle);
        self.sit_out(now, id, true);
        self.hurry_and_announce(now);
    }

    /// Runs a step and what follows it (see [`RoomCore::left_to_act`]).
    fn drive(&mut self, now: Now, step: Step, origin: Origin) {
        let next = self.run_step(now, step, origin);
        self.left_to_act(now, next);
    }

    /// While the seat to act (`next`) is a player who left the room (or a
    /// blind table's withholder, docs/blind-deal.md §II.6): the game's auto
    /// action at once, or, when the game cannot go on without a player who
    /// left (Sam Gong's banker before its bet), the hand is voided and
    /// refunded.
    fn left_to_act(&mut self, now: Now, mut next: Option<Seat>) {
        while let Some(seat) = next.take() {
            let Table::Playing(h) = &mut self.hands.table else { return };
            // A withholder still in the room plays on by its timeout action.
            let left = h.players.get(seat.index()).and_then(|p| self.roster.get(p)).is_none_or(|p| p.left());
            if left && h.hand.leave_voids(seat) {
                if let Some(id) = h.players.get(seat.index()) {
                    self.metrics.conduct.flag(id, crate::conduct::Flag::Voided);
                }
                return self.void_hand(now, VoidCause::Left, &format!("the player of {seat} left"));
            }
            inc(&self.metrics.timeouts);
            // A blind table's withholder plays its timeout action at once.
            let reason =
                if h.hand.is_blind_withholder(seat) { TimeoutReason::Timeout } else { TimeoutReason::Left };
            match h.hand.auto_act(seat, reason) {
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
        let Table::Playing(h) = &mut self.hands.table else { return None };
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
        let id = self.out.call(ChipCall::Moves { hand, moves, undo_on_refusal }, Waiting::Table);
        if let Table::Playing(h) = &mut self.hands.table {
            h.stage = Stage::Chips { id, origin, players };
        }
        None
    }

    /// The chip moves of the waiting step completed.
    fn step_done(&mut self, now: Now, outcome: ChipOutcome) {
        let Table::Playing(h) = &mut self.hands.table else { return };
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
                    if let Some(p) = account.and_then(|a| self.roster.get_mut(&a)) {
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
                self.void_hand(now, VoidCause::ChipService, &format!("chip service failure: {e}"))
            }
        }
    }

    /// Publishes the waiting step; names the next player or ends the hand.
    fn commit_step(&mut self, now: Now, origin: Origin) -> Option<Seat> {
        let timeout = self.cfg.action_timeout;
        let later = now.after(timeout);
        let Table::Playing(h) = &mut self.hands.table else { return None };
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
            if let Some(p) = self.roster.get_mut(&id) {
                p.timeouts_in_a_row = 0;
            }
            inc(&self.metrics.actions_accepted);
            self.metrics.observe_action(now.at.saturating_duration_since(at));
        }
        if let Some(end) = c.end {
            self.finish_hand(now, end, &c.events);
            return None;
        }
        if c.awaits_shares {
            // Blind: decryption shares first (the step, or the next turn, waits).
            let Table::Playing(h) = &mut self.hands.table else { return None };
            let origin = h.hand.has_pending_step().then_some(origin);
            h.stage = Stage::Shares { deadline: later.at, origin };
            return None;
        }
        let Some(turn) = c.your_turn else {
            self.void_hand(now, VoidCause::Game, "the game waits for nobody");
            return None;
        };
        let seat = turn.seat;
        let Table::Playing(h) = &mut self.hands.table else { return None };
        let t = Turn::new(seat, now, later, self.cfg.warn_time_left);
        let low_time = t.low_time(self.cfg.warn_time_left).then_some(timeout);
        h.stage = Stage::Turn(t);
        let actor = *h.players.get(seat.index())?;
        if self.roster.get(&actor).is_none_or(|p| p.left()) || h.hand.is_blind_withholder(seat) {
            return Some(seat);
        }
        self.hurry_away_turn(now);
        let turn = self.with_warnings(turn, low_time);
        self.send(&actor, &ServerMessage::YourTurn(turn));
        self.announce_turn();
        None
    }

    /// Tells the hand's other players whom it waits for and until when
    /// (`turn`, SPEC.md §9.4): when a turn starts and when its deadline moves.
    pub(super) fn announce_turn(&mut self) {
        let Table::Playing(h) = &self.hands.table else { return };
        let Stage::Turn(t) = &h.stage else { return };
        let Some(actor) = h.players.get(t.seat.index()).copied() else { return };
        let acting =
            claw_protocol::messages::Acting { player: actor, seat: t.seat, deadline_ms: t.deadline_ms };
        let msg = ServerMessage::Turn(claw_protocol::messages::Turn { hand_id: h.hand.hand_id(), acting });
        let others: Vec<PlayerId> = h.players.iter().filter(|p| **p != actor).copied().collect();
        if let Some(f) = encode(&msg) {
            self.send_frame(&others, f);
        }
    }

    /// [`RoomCore::hurry_away_turn`], and the other players are told when
    /// the deadline moved.
    pub(super) fn hurry_and_announce(&mut self, now: Now) {
        if self.hurry_away_turn(now) {
            self.announce_turn();
        }
    }

    /// When the player to act is away, its turn ends `away_timeout` from
    /// now if that is sooner than its deadline (an away player does not
    /// cost the table the full action timeout).
    /// Returns whether the deadline moved.
    pub(super) fn hurry_away_turn(&mut self, now: Now) -> bool {
        let Table::Playing(h) = &mut self.hands.table else { return false };
        let Stage::Turn(t) = &mut h.stage else { return false };
        let away = h
            .players
            .get(t.seat.index())
            .and_then(|id| self.roster.get(id))
            .is_some_and(|p| matches!(p.presence, Presence::Away { .. }) || p.sit_out.is_some());
        let soon = now.after(self.cfg.away_timeout);
        if away && soon.at < t.deadline {
            t.deadline = soon.at;
            t.deadline_ms = soon.unix_ms;
            t.warn_at = None; // nobody reads it
            return true;
        }
        false
    }

    /// The player to act gets (again) a fresh turn.
    fn set_turn(&mut self, now: Now) {
        let later = now.after(self.cfg.action_timeout);
        let Table::Playing(h) = &mut self.hands.table else { return };
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
        self.announce_turn();
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
        let Table::Playing(h) = &mut self.hands.table else { return };
        let Stage::Turn(t) = &mut h.stage else { return };
        t.warn_at = None;
        let (seat, deadline_ms) = (t.seat, t.deadline_ms);
        let turn = h.hand.your_turn(seat, deadline_ms);
        if let Some(id) = h.players.get(seat.index()).copied() {
            let turn = self.with_warnings(turn, Some(self.cfg.warn_time_left));
            self.send(&id, &ServerMessage::YourTurn(turn));
        }
    }

    /// Sends signed events to every player of the running hand.
    pub(super) fn broadcast(&mut self, events: &[EventEnvelope]) {
        let Table::Playing(h) = &self.hands.table else { return };
        let players = h.players.clone();
        for e in events {
            if let Some(f) = encode(&ServerMessage::Event(e.clone())) {
                self.send_frame(&players, f);
            }
        }
        self.feed_events(events);
    }

    /// A resumed session: the hand so far (its sealed cards included) and,
    /// if it is the player's turn, the turn.
    pub(super) fn resend_hand(&mut self, id: &PlayerId) {
        let Table::Playing(h) = &self.hands.table else { return };
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

    /// When the next seed or action deadline, hand start or deferred reveal
    /// is due.
    pub(super) fn hands_deadline(&self) -> Option<Instant> {
        let reveals = self.hands.deferred.iter().filter_map(|d| d.at);
        [self.hands.table.deadline(), self.hands.next_at].into_iter().flatten().chain(reveals).min()
    }
}

/// Blind tables (SPEC.md §9.7, docs/blind-deal.md §II.6): the key phase
/// (within the seed window), the shuffles in seat order, the share requests.
impl RoomCore {
    /// Whether a blind message of `id` is one the running hand may wait
    /// for (it then costs no rate-limit token when accepted).
    pub(super) fn expects_blind(&self, id: &PlayerId) -> bool {
        self.hands.table.hand().is_some_and(|h| h.is_blind() && h.seat_of(id).is_some())
    }

    /// The seat of `id` in the running blind hand, or an error to it.
    fn blind_seat(&mut self, id: &PlayerId) -> Option<Seat> {
        let seat = self.hands.table.hand().filter(|h| h.is_blind()).and_then(|h| h.seat_of(id));
        if seat.is_none() {
            self.error_to(id, ErrorCode::BadShare, "you are not in a blind hand");
        }
        seat
    }

    /// A refused blind message: an error to the sender, a rate-limit token.
    fn blind_refused(&mut self, now: Now, id: &PlayerId, why: String) {
        let _ = self.take_token(id, now.at);
        self.error_to(id, ErrorCode::BadShare, why);
    }

    /// Before the blind hand's start: closes the key phase (or voids the
    /// hand when a key share is missing), waits for every seat's pieces,
    /// then for the shuffles. True once every seat has shuffled or been
    /// skipped.
    fn blind_ready_to_start(&mut self, now: Now) -> bool {
        let Table::Playing(h) = &mut self.hands.table else { return false };
        if !h.hand.blind_keys_closed() {
            match h.hand.close_blind_keys() {
                Ok(env) => self.broadcast(&[env]),
                Err(e) => {
                    self.void_hand(now, VoidCause::Game, &e.to_string());
                    return false;
                }
            }
        }
        let Table::Playing(h) = &mut self.hands.table else { return false };
        if !h.hand.blind_pieces_complete() {
            if !matches!(h.stage, Stage::Pieces { .. }) {
                h.stage = Stage::Pieces { deadline: now.after(self.cfg.action_timeout).at };
            }
            return false;
        }
        match h.hand.blind_shuffler() {
            Some(seat) => {
                let deadline = now.after(self.cfg.action_timeout).at;
                if !matches!(h.stage, Stage::Shuffle { seat: s, .. } if s == seat) {
                    h.stage = Stage::Shuffle { seat, deadline };
                }
                false
            }
            None => true,
        }
    }

    /// A seat's key share.
    pub(super) fn player_blind_key(&mut self, now: Now, id: &PlayerId, msg: BlindKeyMsg) {
        let Some(seat) = self.blind_seat(id) else { return };
        let Table::Playing(h) = &mut self.hands.table else { return };
        if let Err(e) = h.hand.add_blind_key(seat, &msg) {
            return self.blind_refused(now, id, e.to_string());
        }
        if h.hand.blind_keys_complete() {
            self.start_dealing(now);
        }
    }

    /// A seat's shuffle: accepted, or refused and the seat skipped.
    pub(super) fn player_blind_shuffle(&mut self, now: Now, id: &PlayerId, msg: BlindShuffleMsg) {
        let Some(seat) = self.blind_seat(id) else { return };
        let Table::Playing(h) = &mut self.hands.table else { return };
        match h.hand.add_blind_shuffle(seat, &msg) {
            Ok((env, why)) => {
                self.broadcast(&[env]);
                if let Some(why) = why {
                    tracing::info!(room = %self.cfg.id, player = %id.short(), %why, "blind shuffle refused: skipped");
                    self.blind_refused(now, id, why.to_string());
                }
                self.start_dealing(now);
            }
            Err(e) => self.blind_refused(now, id, e.to_string()),
        }
    }

    /// A seat's pieces of its secret.
    pub(super) fn player_blind_pieces(&mut self, now: Now, id: &PlayerId, msg: BlindPiecesMsg) {
        let Some(seat) = self.blind_seat(id) else { return };
        let Table::Playing(h) = &mut self.hands.table else { return };
        match h.hand.add_blind_pieces(seat, &msg) {
            Ok(env) => {
                self.broadcast(&[env]);
                let Table::Playing(h) = &self.hands.table else { return };
                if h.hand.blind_pieces_complete() {
                    self.start_dealing(now);
                }
            }
            Err(e) => self.blind_refused(now, id, e.to_string()),
        }
    }

    /// The pieces' deadline passed with pieces missing: the hand cannot
    /// recover a withheld share of those seats, so it is voided before
    /// anything is staked (docs/blind-deal.md §II.7); each is counted as
    /// timed out.
    fn blind_pieces_timeout(&mut self, now: Now) {
        let Table::Playing(h) = &self.hands.table else { return };
        let missing = h.hand.blind_missing_pieces();
        let ids: Vec<PlayerId> = missing.iter().filter_map(|s| h.players.get(s.index()).copied()).collect();
        let seats: Vec<String> = missing.iter().map(ToString::to_string).collect();
        inc(&self.metrics.timeouts);
        self.void_hand(now, VoidCause::Game, &format!("blind: no pieces from {}", seats.join(", ")));
        for id in ids {
            self.count_timeout(now, &id);
        }
    }

    /// A holder's complaint against a piece: upheld, the accused is the
    /// hand's withholder (counted as timed out).
    pub(super) fn player_blind_complaint(&mut self, now: Now, id: &PlayerId, msg: BlindComplaintMsg) {
        let Some(seat) = self.blind_seat(id) else { return };
        let Table::Playing(h) = &mut self.hands.table else { return };
        match h.hand.add_blind_complaint(seat, &msg) {
            Ok((env, accused)) => {
                let accused_id = h.players.get(accused.index()).copied();
                self.broadcast(&[env]);
                tracing::info!(room = %self.cfg.id, seat = %accused, "blind: bad piece, the seat withholds");
                inc(&self.metrics.timeouts);
                if let Some(a) = accused_id {
                    self.count_timeout(now, &a);
                }
            }
            Err(e) => self.blind_refused(now, id, e.to_string()),
        }
    }

    /// A holder's recovery shares.
    pub(super) fn player_blind_recovery(&mut self, now: Now, id: &PlayerId, msg: BlindRecoveryMsg) {
        let Some(seat) = self.blind_seat(id) else { return };
        let later = now.after(self.cfg.action_timeout);
        let Table::Playing(h) = &mut self.hands.table else { return };
        let origin = match &h.stage {
            Stage::Shares { origin, .. } => *origin,
            _ => return self.blind_refused(now, id, "no recovery shares are asked for now".into()),
        };
        match h.hand.add_blind_recovery(seat, &msg, later.unix_ms) {
            Err(e) => self.blind_refused(now, id, e.to_string()),
            Ok(p) => self.blind_progressed(now, origin, p),
        }
    }

    /// The shuffler's time ran out: skipped.
    fn blind_shuffle_timeout(&mut self, now: Now) {
        let Table::Playing(h) = &mut self.hands.table else { return };
        match h.hand.skip_blind_shuffle() {
            Ok(env) => {
                self.broadcast(&[env]);
                self.start_dealing(now);
            }
            Err(e) => self.void_hand(now, VoidCause::Game, &e.to_string()),
        }
    }

    /// A seat's decryption shares.
    pub(super) fn player_blind_shares(&mut self, now: Now, id: &PlayerId, msg: BlindSharesMsg) {
        let Some(seat) = self.blind_seat(id) else { return };
        let later = now.after(self.cfg.action_timeout);
        let Table::Playing(h) = &mut self.hands.table else { return };
        let origin = match &h.stage {
            Stage::Shares { origin, .. } => *origin,
            _ => return self.blind_refused(now, id, "no decryption shares are asked for now".into()),
        };
        match h.hand.add_blind_shares(seat, &msg, later.unix_ms) {
            Err(e) => self.blind_refused(now, id, e.to_string()),
            Ok(p) => self.blind_progressed(now, origin, p),
        }
    }

    /// What accepted shares (or recovery shares) let the hand do.
    fn blind_progressed(&mut self, now: Now, origin: Option<Origin>, progress: BlindProgress) {
        match progress {
            BlindProgress::Waiting(env) => self.broadcast(&[env]),
            BlindProgress::Step(env, step) => {
                self.broadcast(&[env]);
                self.drive(now, step, origin.unwrap_or(Origin::Auto));
            }
            BlindProgress::Turn(env, _) => {
                self.broadcast(&[env]);
                self.set_turn(now);
                let Table::Playing(h) = &self.hands.table else { return };
                let next = h.hand.to_act();
                let auto = next.is_some_and(|s| h.hand.is_blind_withholder(s))
                    || next
                        .and_then(|s| h.players.get(s.index()))
                        .and_then(|p| self.roster.get(p))
                        .is_none_or(|p| p.left());
                if auto {
                    self.left_to_act(now, next);
                }
            }
            BlindProgress::Broken(e) => self.void_hand(now, VoidCause::Game, &format!("engine: {e}")),
        }
    }

    /// A share request's deadline passed with shares still owed
    /// (docs/blind-deal.md §II.6): one withholder whose secret can be
    /// recovered is counted as timed out and its shares are recovered from
    /// its pieces (§II.7), the request's deadline renewed; otherwise (a
    /// second withholder, a holder withholding a recovery share) the hand
    /// is voided and every stake refunded exactly, each withholder counted
    /// as timed out.
    fn blind_shares_timeout(&mut self, now: Now) {
        let later = now.after(self.cfg.action_timeout).at;
        let Table::Playing(h) = &mut self.hands.table else { return };
        let owing = match h.hand.blind_withheld(&mut *self.rng) {
            Withheld::Recover(seat, env) => {
                if let Stage::Shares { deadline, .. } = &mut h.stage {
                    *deadline = later;
                }
                let id = h.players.get(seat.index()).copied();
                self.broadcast(&[env]);
                tracing::info!(room = %self.cfg.id, %seat, "blind: withheld shares, recovering");
                inc(&self.metrics.timeouts);
                if let Some(id) = id {
                    self.count_timeout(now, &id);
                }
                return;
            }
            Withheld::Cancel(owing) => owing,
        };
        let ids: Vec<PlayerId> = owing.iter().filter_map(|s| h.players.get(s.index()).copied()).collect();
        let seats: Vec<String> = owing.iter().map(ToString::to_string).collect();
        inc(&self.metrics.timeouts);
        self.void_hand(
            now,
            VoidCause::Game,
            &format!("blind: {} withheld decryption shares", seats.join(", ")),
        );
        for id in ids {
            self.count_timeout(now, &id);
        }
    }
}
