//! The room core: the room and player state machines, sans-IO.
//!
//! Room phases (SPEC.md §9.4, `room-state`): idle → waiting → playing → settling →
//! between-hands → playing …; closed. Players: [`Presence`] online / away
//! (reconnect window) / left, seated or not, sitting out or not.
//!
//! In the quinn-proto style, a [`RoomCore`] does no I/O and reads no clock:
//! the driver feeds it [`Input`]s with the current [`Now`] through
//! [`RoomCore::handle`], asks [`RoomCore::poll_timeout`] when to call
//! [`RoomCore::handle_timeout`], and drains [`RoomCore::poll_effect`]:
//! frames to send, connections to close, chip calls and archive writes
//! (each with an [`EffectId`]), reports. The driver runs effects
//! concurrently and feeds their completions back, in any order. No effect
//! blocks the core: while one player's chip call is out, every other
//! message, query and timer is handled.
//!
//! Every message is handled as coming from the identity its connection
//! proved in the handshake; no field of a message can change the sender.

pub mod config;
mod hand;
mod player;
mod queries;

use std::collections::{HashMap, VecDeque};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use claw_protocol::handshake::{RejectReason, VerifiedPlayer};
use claw_protocol::messages::{
    ClientMessage, ErrorCode, ErrorMsg, HandRecord, JoinRejectReason, JoinRequest, JoinResponse, KickReason,
    Kicked, PlayerStatus, Query, RawJson, RoomPhase, ServerMessage, TablePlayer,
};
use claw_protocol::transcript::{EventEnvelope, Transcript};
use claw_protocol::{Chips, HandId, Identity, Nonce, PlayerId, Seat};
use rand_core::CryptoRngCore;
use serde_json::Value;

use crate::hand::GameSpec;
use crate::metrics::{dec, inc, Metrics};
use config::{Limits, RoomConfig};
use hand::{PendingReveal, Table};
pub use hand::{VoidCause, MAX_HAND_STAKE};
use player::{ct_eq, Player};
pub use player::{Presence, TokenBucket};

/// A connection's id, unique in the node (chosen by the driver).
pub type ConnId = u64;

/// The id of an effect whose completion the core waits for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct EffectId(pub u64);

/// The time, as the driver's clocks tell it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Now {
    /// Monotonic time, for timers and rate limits.
    pub at: Instant,
    /// Unix time in milliseconds, for deadlines players see.
    pub unix_ms: u64,
}

impl Now {
    /// `d` later on both clocks.
    pub fn after(&self, d: Duration) -> Now {
        Now { at: self.at + d, unix_ms: self.unix_ms.saturating_add(millis(d)) }
    }
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

/// Whose chips a chip call moves.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Account {
    /// A player's account.
    Player(PlayerId),
    /// The room's house bank.
    House,
    /// The dealer's account (commission and rake).
    Dealer,
}

/// One debit or credit of a hand, on an account (the game's reason, or
/// `commission`).
pub type ChipMove = claw_protocol::hand::ChipMove<Account>;

/// A call to the chip service, run by the driver.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChipCall {
    /// A balance (queries, hand start without commission).
    Balance(PlayerId),
    /// A balance and the chips the node holds for the player in voided
    /// hands awaiting their refund (`my-status`).
    Status(PlayerId),
    /// A join: the welcome grant when the node grants one, then the balance.
    JoinBalance(PlayerId),
    /// Grant the house its bankroll (once, at room start).
    FundHouse(Chips),
    /// Open the hand's chip journal (idempotency keys `<room>/<hand>/<n>`);
    /// a provider that settles per hand locks the stakes of `players` (the
    /// ready seats, in seat order) for it.
    OpenHand {
        /// The hand.
        hand: HandId,
        /// Who may be dealt in.
        players: Vec<PlayerId>,
    },
    /// Run `moves` in order through the hand's journal, stopping at the
    /// first failure. With `undo_on_refusal`, a refused debit first gives
    /// back what the earlier moves of this call did.
    Moves {
        /// The hand.
        hand: HandId,
        /// Debits and credits, in order.
        moves: Vec<ChipMove>,
        /// A player's action: undo on refusal.
        undo_on_refusal: bool,
    },
    /// The game is over: pay `fee` (commission and rake) to the dealer,
    /// check conservation, close the journal.
    Settle {
        /// The hand.
        hand: HandId,
        /// Commission and rake.
        fee: Chips,
    },
    /// Refund every chip the hand moved and close its journal.
    Void(HandId),
}

/// Why a chip call did not succeed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChipFailure {
    /// Refused for good (e.g. insufficient balance): nothing moved.
    Refused(String),
    /// The provider failed or did not answer; for moves the outcome may be
    /// unknown and the hand must be voided.
    Unavailable(String),
    /// No answer in time (queries).
    Timeout,
}

/// The completion of a [`ChipCall`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChipOutcome {
    /// A balance (`Balance`, `JoinBalance`).
    Balance(Result<Chips, ChipFailure>),
    /// `Status`: the balance, and the chips held for refunds.
    Status {
        /// The balance.
        balance: Result<Chips, ChipFailure>,
        /// Chips taken by voided hands and not refunded yet.
        held: Chips,
    },
    /// `Moves`: the balance after each move, or why they stopped (`undone`:
    /// the earlier moves of the call were given back).
    Moves(Result<Vec<Chips>, (ChipFailure, bool)>),
    /// `FundHouse`, `OpenHand`, `Settle`, `Void`.
    Done(Result<(), String>),
    /// `Settle`: the hand's moves did not add up, so it was voided and its
    /// chips given back instead (the detail is for the operator's log).
    Unbalanced(String),
}

/// A write to the transcript archive, run by the driver.
#[derive(Debug, Clone)]
pub enum ArchiveWrite {
    /// A settled hand's transcript; under policy `deferred` also its signed
    /// `audit-reveal`, kept apart in the pending store (never in the hand's
    /// file, never served) until [`ArchiveWrite::Publish`]. The pending
    /// reveal is written first, so a hand on file always has its reveal.
    Hand {
        /// Hands dealt at the table before it.
        hand_number: u64,
        /// The transcript.
        transcript: Transcript,
        /// The withheld `audit-reveal`, signed at hand end.
        pending_reveal: Option<Box<EventEnvelope>>,
    },
    /// Publishes a pending `audit-reveal`: appended to its hand's file (once,
    /// even if asked again), then removed from the pending store. Completes
    /// with [`Archived::Reveal`].
    Publish {
        /// Hands dealt at the table before it.
        hand_number: u64,
        /// The hand.
        hand_id: HandId,
    },
    /// A voided hand's transcript.
    Voided {
        /// The transcript.
        transcript: Transcript,
    },
    /// A read, not a write: a finished hand's record (the `hand` query).
    /// Completes with [`Archived::Hand`].
    Fetch {
        /// The hand.
        hand_id: HandId,
    },
}

/// What a completed [`ArchiveWrite`] produced.
#[derive(Debug, Clone)]
pub enum Archived {
    /// The file written (`Hand`, `Voided`).
    File(PathBuf),
    /// The published `audit-reveal` (`Publish`).
    Reveal(EventEnvelope),
    /// The hand's whole record, if the archive has it (`Fetch`).
    Hand(Option<Box<HandRecord>>),
}

/// Something a room reports to the node.
#[derive(Debug, Clone)]
pub enum RoomEvent {
    /// A hand was settled; its transcript is at `transcript` (if archived).
    HandFinished {
        /// The room.
        room: String,
        /// Hands dealt at the table before this one.
        hand_number: u64,
        /// The hand.
        hand_id: HandId,
        /// The game's summary.
        summary: String,
        /// The hand's players in seat order.
        players: Vec<PlayerId>,
        /// Net chip change per seat.
        net: Vec<i64>,
        /// Who won something.
        winners: Vec<PlayerId>,
        /// The archived transcript file.
        transcript: Option<PathBuf>,
    },
    /// A hand was voided and its chips refunded.
    HandVoided {
        /// The room.
        room: String,
        /// The hand.
        hand_id: HandId,
        /// Why.
        reason: String,
    },
    /// The room closed.
    Closed {
        /// The room.
        room: String,
    },
}

/// What the core asks the driver to do. Effects run concurrently, except
/// two barriers: an [`ArchiveWrite::Hand`] and a [`ChipCall::Settle`] must
/// complete before any effect queued after them runs (so a hand's
/// `game-end` reaches players only once the hand is on file and paid).
#[derive(Debug)]
pub enum Effect {
    /// Queue `frame` on each connection (in order per connection). A full
    /// or closed queue: close it and feed [`Input::Disconnected`].
    Send {
        /// The recipients.
        to: Vec<ConnId>,
        /// One encoded message.
        frame: Arc<str>,
    },
    /// Close a connection (the core already forgot it).
    Close {
        /// The connection.
        conn: ConnId,
        /// WebSocket close code.
        code: u16,
        /// Close reason.
        reason: String,
    },
    /// Call the chip service; complete with [`Input::Chips`].
    Chips {
        /// Completion id.
        id: EffectId,
        /// The call.
        call: ChipCall,
    },
    /// Write to the archive; complete with [`Input::Archived`].
    Archive {
        /// Completion id.
        id: EffectId,
        /// The write.
        write: ArchiveWrite,
    },
    /// Tell the node (demo summary, tests). `HandFinished.transcript` is
    /// already filled in.
    Report(RoomEvent),
}

/// Something that happened, fed to [`RoomCore::handle`].
#[derive(Debug)]
pub enum Input {
    /// `accepted` was sent on `conn`: a reconnecting player gets its cards
    /// and the transcript so far.
    Ready(ConnId),
    /// A decoded message from an admitted connection.
    Message {
        /// The connection it came on (its verified identity is the sender).
        conn: ConnId,
        /// The message.
        msg: Box<ClientMessage>,
        /// When it arrived (latency metrics, rate limits).
        at: Instant,
    },
    /// The connection closed.
    Disconnected(ConnId),
    /// A chip call completed.
    Chips {
        /// The effect.
        id: EffectId,
        /// Its outcome.
        outcome: ChipOutcome,
    },
    /// An archive write completed (what it produced, or why it failed).
    Archived {
        /// The effect.
        id: EffectId,
        /// What the write produced.
        result: Result<Archived, String>,
    },
    /// Stop new hands, finish (or void after `grace`) the running one,
    /// publish deferred reveals, close every connection.
    Shutdown {
        /// Time given to the running hand.
        grace: Duration,
    },
    /// Hold new hands (true) or allow them again (false).
    Hold(bool),
}

/// The room's answer to a verified handshake.
#[derive(Debug, Clone)]
pub struct Admit {
    /// The seat, when the player already holds one (reconnect).
    pub seat: Option<Seat>,
    /// The session's reconnect token (the resumed one, or a fresh one).
    pub token: Nonce,
}

/// The room's refusal of a verified handshake: the `rejected` reason and
/// why, in words (`rejected.message`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// The reason code.
    pub reason: RejectReason,
    /// Why, for the player.
    pub message: String,
}

impl Refusal {
    fn new(reason: RejectReason, message: impl Into<String>) -> Refusal {
        Refusal { reason, message: message.into() }
    }
}

/// A room's public state.
#[derive(Debug, Clone)]
pub struct RoomSnapshot {
    /// Room phase.
    pub phase: RoomPhase,
    /// Hands settled.
    pub hands_played: u64,
    /// Hands voided.
    pub hands_voided: u64,
    /// Players and their statuses.
    pub players: Vec<TablePlayer>,
    /// The player the running hand waits for.
    pub acting: Option<claw_protocol::messages::Acting>,
}

/// What a pending effect's completion is for.
enum Waiting {
    /// The house bankroll grant.
    FundHouse,
    /// A join request (balance and welcome grant).
    Join(PlayerId, JoinRequest),
    /// A `my-balance` or `my-status` query.
    Query(PlayerId, Query),
    /// A `hand` query's archive read.
    Fetch(PlayerId, Query),
    /// A chip step of the table's hand (see `hand.rs`).
    Table,
    /// The settlement of a finished hand; then its archive write.
    Settle(Box<(ArchiveWrite, RoomEvent, Option<PendingReveal>)>),
    /// The archive write of a settled hand; then its report, and its
    /// reveal is owed.
    ArchiveHand(Box<(RoomEvent, Option<PendingReveal>)>),
    /// A reveal being published; then it is sent to these players.
    Publish(Vec<PlayerId>),
    /// A refund; then its report.
    Void(Box<RoomEvent>),
    /// A write nothing waits for (logged).
    Log(&'static str),
}

/// Shutdown in progress.
struct Closing {
    /// Void the running hand at this instant.
    deadline: Instant,
}

/// One room's state machines. See the module doc.
pub struct RoomCore {
    cfg: Arc<RoomConfig>,
    spec: Arc<GameSpec>,
    dealer: Arc<Identity>,
    limits: Limits,
    metrics: Arc<Metrics>,
    rng: Box<dyn CryptoRngCore + Send>,
    phase: RoomPhase,
    players: HashMap<PlayerId, Player>,
    conns: HashMap<ConnId, PlayerId>,
    /// Table seats (room-level seat numbers).
    seats: Vec<Option<PlayerId>>,
    table: Table,
    memory: Value,
    hands_played: u64,
    hands_voided: u64,
    /// The number of this session's first hand (continues the archive).
    first_hand_number: u64,
    /// No new hands while set.
    hold: bool,
    /// The house bankroll grant is still out.
    funding: bool,
    /// Settled hands whose chips did not add up.
    conservation_failures: u32,
    /// Credit scores, kept across sessions (lowered by leaving mid-hand).
    credit: HashMap<PlayerId, i32>,
    next_hand_at: Option<Instant>,
    /// Reveals owed for archived hands (the reveals themselves are in the
    /// archive's pending store, not here).
    deferred: Vec<PendingReveal>,
    closing: Option<Closing>,
    next_effect: u64,
    waiting: HashMap<EffectId, Waiting>,
    effects: VecDeque<Effect>,
    /// The room's query budget (`Limits::room_queries_per_sec`), from the first query on.
    query_budget: Option<TokenBucket>,
    /// Since when the table has been under-filled (seats taken, fewer than
    /// `min_players`, no hand): it is dissolved `dissolve_after` later.
    underfilled_since: Option<Instant>,
    /// The latest time the driver told (converts timers to the unix
    /// milliseconds players see).
    clock: Now,
    /// The game's entry threshold for these settings (Sam Gong's tier
    /// entry chips): a join below it is refused `below-entry`.
    entry: Chips,
    /// Finished hands whose archive write waits for their settlement, with
    /// the `hand` queries asked meanwhile (answered once the write is queued,
    /// so that a query never overtakes its hand's record).
    unarchived: HashMap<HandId, Vec<(PlayerId, Query)>>,
}

/// Smallest pause before trying again after a hand could not start.
const RETRY_BACKOFF: Duration = Duration::from_secs(1);

impl RoomCore {
    /// A room of `cfg` (validated) playing `spec`, signing as `dealer`,
    /// drawing from `rng` (a CSPRNG). It opens at `now`.
    pub fn new(
        now: Now,
        cfg: Arc<RoomConfig>,
        spec: Arc<GameSpec>,
        dealer: Arc<Identity>,
        limits: Limits,
        metrics: Arc<Metrics>,
        rng: Box<dyn CryptoRngCore + Send>,
    ) -> RoomCore {
        let entry = spec.game.entry_chips(&spec.settings).unwrap_or_else(|e| {
            tracing::warn!(room = %cfg.id, error = %e, "no entry threshold: the settings do not parse");
            Chips::ZERO
        });
        let mut core = RoomCore {
            clock: now,
            underfilled_since: None,
            entry,
            seats: vec![None; usize::from(cfg.max_players)],
            cfg,
            spec,
            dealer,
            limits,
            metrics,
            rng,
            phase: RoomPhase::Waiting,
            players: HashMap::new(),
            conns: HashMap::new(),
            table: Table::Idle,
            memory: Value::Null,
            hands_played: 0,
            hands_voided: 0,
            first_hand_number: 0,
            hold: false,
            funding: false,
            conservation_failures: 0,
            credit: HashMap::new(),
            next_hand_at: None,
            deferred: Vec::new(),
            unarchived: HashMap::new(),
            closing: None,
            next_effect: 0,
            waiting: HashMap::new(),
            effects: VecDeque::new(),
            query_budget: None,
        };
        inc(&core.metrics.rooms_open);
        if core.cfg.house_bankroll.0 > 0 && !config::has_house(&core.cfg.game) {
            tracing::warn!(room = %core.cfg.id, game = %core.cfg.game,
                "house_bankroll ignored: the game has no house");
        } else if core.cfg.house_bankroll.0 > 0 {
            core.funding = true;
            let amount = core.cfg.house_bankroll;
            core.call(ChipCall::FundHouse(amount), Waiting::FundHouse);
        }
        tracing::info!(room = %core.cfg.id, game = %core.cfg.game, "room open");
        core
    }

    /// The room's id.
    pub fn id(&self) -> &str {
        &self.cfg.id
    }

    /// The room's configuration.
    pub fn config(&self) -> &Arc<RoomConfig> {
        &self.cfg
    }

    /// Whether the room is closed (nothing more will happen).
    pub fn is_closed(&self) -> bool {
        self.phase == RoomPhase::Closed
    }

    /// The next effect to run.
    pub fn poll_effect(&mut self) -> Option<Effect> {
        self.effects.pop_front()
    }

    /// When [`RoomCore::handle_timeout`] must be called next.
    pub fn poll_timeout(&self) -> Option<Instant> {
        let mut w: Option<Instant> = None;
        let mut at = |t: Option<Instant>| {
            if let Some(t) = t {
                w = Some(w.map_or(t, |x| x.min(t)));
            }
        };
        at(self.table.deadline());
        at(self.next_hand_at);
        for p in self.players.values() {
            if let Presence::Away { since } = p.presence {
                at(Some(since + self.cfg.reconnect_window));
            }
            if p.watching() && !p.joining {
                at(Some(p.last_active + self.limits.idle_timeout));
            }
            if let (Some(since), Some(_)) = (p.sit_out, p.seat) {
                at(Some(since + self.cfg.sit_out_limit));
            }
        }
        for d in &self.deferred {
            at(d.at);
        }
        at(self.dissolve_at());
        // The shutdown grace matters only while a hand runs (it is voided then).
        at(self.closing.as_ref().filter(|_| self.table.is_playing()).map(|c| c.deadline));
        w
    }

    /// The room's public state.
    pub fn snapshot(&self) -> RoomSnapshot {
        RoomSnapshot {
            phase: self.public_phase(),
            hands_played: self.hands_played,
            hands_voided: self.hands_voided,
            players: self.table_players(),
            acting: self.acting(),
        }
    }

    fn effect_id(&mut self) -> EffectId {
        self.next_effect += 1;
        EffectId(self.next_effect)
    }

    fn call(&mut self, call: ChipCall, w: Waiting) -> EffectId {
        let id = self.effect_id();
        self.waiting.insert(id, w);
        self.effects.push_back(Effect::Chips { id, call });
        id
    }

    fn archive(&mut self, write: ArchiveWrite, w: Waiting) {
        let id = self.effect_id();
        self.waiting.insert(id, w);
        self.effects.push_back(Effect::Archive { id, write });
    }

    fn report(&mut self, e: RoomEvent) {
        self.effects.push_back(Effect::Report(e));
    }

    /// Numbers this session's hands from `n` on (the archive's next hand
    /// number, so that hand numbers and file names continue across restarts).
    pub fn continue_from(&mut self, n: u64) {
        self.first_hand_number = n;
    }

    /// Handles one input.
    pub fn handle(&mut self, now: Now, input: Input) {
        self.clock = now;
        match input {
            Input::Ready(conn) => self.ready(now, conn),
            Input::Message { conn, msg, at } => self.message(now, conn, *msg, at),
            Input::Disconnected(conn) => self.conn_closed(now, conn),
            Input::Chips { id, outcome } => self.chips_done(now, id, outcome),
            Input::Archived { id, result } => self.archived(id, result),
            Input::Shutdown { grace } => self.begin_close(now, grace),
            Input::Hold(h) => {
                self.hold = h;
                if !h {
                    self.schedule_start(now);
                }
            }
        }
        self.after_input(now);
    }

    /// Runs the timers that are due at `now`.
    pub fn handle_timeout(&mut self, now: Now) {
        self.clock = now;
        let t = now.at;
        // Reconnect windows.
        let window = self.cfg.reconnect_window;
        let expired: Vec<PlayerId> = self
            .players
            .values()
            .filter(|p| matches!(p.presence, Presence::Away { since } if since + window <= t))
            .map(|p| p.id)
            .collect();
        for id in expired {
            tracing::info!(room = %self.cfg.id, player = %id.short(), "reconnect window over: player left");
            self.remove_player(&id, false);
        }
        // Idle watchers and seats that sat out too long.
        let idle = self.limits.idle_timeout;
        let idle: Vec<PlayerId> = self
            .players
            .values()
            .filter(|p| p.watching() && !p.joining && p.last_active + idle <= t)
            .map(|p| p.id)
            .collect();
        for id in idle {
            inc(&self.metrics.kicked_idle);
            let why = format!("idle: no join request or query for {} s", self.limits.idle_timeout.as_secs());
            self.kick_conn(now, &id, KickReason::Idle, 1000, &why);
        }
        let limit = self.cfg.sit_out_limit;
        let squatting: Vec<PlayerId> = self
            .players
            .values()
            .filter(|p| p.seat.is_some() && p.sit_out.is_some_and(|since| since + limit <= t))
            .map(|p| p.id)
            .collect();
        for id in squatting {
            let why = format!("sat out longer than {} s: the seat is freed", limit.as_secs());
            self.free_seat(now, &id, &why);
        }
        // Deferred reveals.
        let due: Vec<usize> =
            (0..self.deferred.len()).filter(|i| self.deferred[*i].at.is_some_and(|d| d <= t)).collect();
        for i in due.into_iter().rev() {
            let d = self.deferred.remove(i);
            self.publish_reveal(d);
        }
        self.hand_timers(now);
        // Shutdown grace.
        if self.closing.as_ref().is_some_and(|c| c.deadline <= t) && self.table.is_playing() {
            self.void_hand(now, VoidCause::Shutdown, "the dealer is shutting down");
        }
        if self.next_hand_at.is_some_and(|n| n <= t) {
            self.next_hand_at = None;
            self.maybe_start_hand(now);
        }
        if self.dissolve_at().is_some_and(|d| d <= t) {
            self.dissolve();
        }
        self.after_input(now);
    }

    /// When the under-filled table is dissolved, if it is and the room
    /// dissolves tables.
    fn dissolve_at(&self) -> Option<Instant> {
        let after = self.cfg.dissolve_after.filter(|d| !d.is_zero())?;
        Some(self.underfilled_since? + after)
    }

    /// Starts, keeps or stops the under-filled timer.
    fn track_underfilled(&mut self, now: Now) {
        let seated = self.seats.iter().flatten().count();
        let under = (1..usize::from(self.cfg.min_players)).contains(&seated)
            && !self.table.is_busy()
            && self.closing.is_none();
        if !under {
            self.underfilled_since = None;
        } else if self.underfilled_since.is_none() {
            self.underfilled_since = Some(now.at);
        }
    }

    /// The table stayed under-filled for `dissolve_after`: every seated
    /// player is told (`kicked` `dissolved`) and leaves; the room stays
    /// open for new players.
    fn dissolve(&mut self) {
        self.underfilled_since = None;
        let after = self.cfg.dissolve_after.unwrap_or_default().as_secs();
        let why = format!(
            "the room was dissolved: fewer than {} players for {after} s; join again to be matched",
            self.cfg.min_players
        );
        let seated: Vec<PlayerId> = self.seats.iter().flatten().copied().collect();
        tracing::info!(room = %self.cfg.id, players = seated.len(), "under-filled table dissolved");
        for id in seated {
            self.send(
                &id,
                &ServerMessage::Kicked(Kicked { code: KickReason::Dissolved, reason: why.clone() }),
            );
            self.remove_player(&id, true);
        }
    }

    /// Tracks the under-filled table; closes the room once shutdown has
    /// nothing left to wait for.
    fn after_input(&mut self, now: Now) {
        self.track_underfilled(now);
        if self.closing.is_some() && self.phase != RoomPhase::Closed {
            let must_wait = self.table.is_busy() || self.waiting.values().any(Waiting::must_finish);
            if must_wait {
                return;
            }
            if self.deferred.is_empty() {
                self.finish_close();
            } else {
                // Deferred reveals first; the room closes once their archive
                // writes are done (readers of a closed room's archive see them).
                for d in std::mem::take(&mut self.deferred) {
                    self.publish_reveal(d);
                }
                if !self.waiting.values().any(Waiting::must_finish) {
                    self.finish_close();
                }
            }
        }
    }

    fn chips_done(&mut self, now: Now, id: EffectId, outcome: ChipOutcome) {
        let Some(w) = self.waiting.remove(&id) else { return };
        match w {
            Waiting::FundHouse => {
                self.funding = false;
                match outcome {
                    ChipOutcome::Done(Ok(())) => {
                        tracing::info!(room = %self.cfg.id, "house bankroll granted")
                    }
                    other => {
                        tracing::error!(room = %self.cfg.id, outcome = ?other, "house bankroll grant failed")
                    }
                }
                self.schedule_start(now);
            }
            Waiting::Join(player, req) => {
                let balance = match outcome {
                    ChipOutcome::Balance(b) => b,
                    _ => Err(ChipFailure::Unavailable("unexpected completion".into())),
                };
                self.join_done(now, &player, req, balance);
            }
            Waiting::Query(player, q) => {
                let (balance, held) = match outcome {
                    ChipOutcome::Balance(b) => (b, Chips::ZERO),
                    ChipOutcome::Status { balance, held } => (balance, held),
                    _ => (Err(ChipFailure::Unavailable("unexpected completion".into())), Chips::ZERO),
                };
                self.query_done(&player, q, balance, held);
            }
            Waiting::Table => self.table_chips_done(now, id, outcome),
            Waiting::Settle(next) => {
                let (write, report, owed) = *next;
                let parked = match &write {
                    ArchiveWrite::Hand { transcript, .. } => self.unarchived.remove(&transcript.hand_id),
                    _ => None,
                };
                self.settled_write(now, outcome, write, report, owed);
                for (player, q) in parked.into_iter().flatten() {
                    self.fetch_hand(player, q);
                }
            }
            Waiting::Void(report) => {
                match &outcome {
                    ChipOutcome::Done(Ok(())) => tracing::info!(room = %self.cfg.id, "hand refunded"),
                    other => tracing::error!(room = %self.cfg.id, outcome = ?other,
                        "refund incomplete; the chip journal stays open and a restart finishes it"),
                }
                self.report(*report);
            }
            Waiting::Log(what) => {
                if let ChipOutcome::Done(Err(e)) = &outcome {
                    tracing::error!(room = %self.cfg.id, error = %e, "{what} failed");
                }
            }
            Waiting::ArchiveHand(_) | Waiting::Publish(_) | Waiting::Fetch(..) => {}
        }
    }

    /// A settled hand's chips did not add up: the ledger refunded it, so it
    /// is counted, archived and reported as voided; a second time in this
    /// room stops the room (something is wrong with the chips).
    /// A finished hand's settlement completed: archive it (as voided when
    /// its chips did not add up).
    fn settled_write(
        &mut self,
        now: Now,
        outcome: ChipOutcome,
        write: ArchiveWrite,
        report: RoomEvent,
        owed: Option<PendingReveal>,
    ) {
        if let ChipOutcome::Unbalanced(detail) = &outcome {
            // Refunded: the hand is archived as voided, its owed reveal with it.
            return self.unbalanced(now, write, report, detail);
        }
        if let ChipOutcome::Done(Err(e)) = &outcome {
            inc(&self.metrics.chip_errors);
            tracing::error!(room = %self.cfg.id, error = %e,
                "settlement incomplete; the chip journal stays open and a restart completes it");
        }
        self.archive(write, Waiting::ArchiveHand(Box::new((report, owed))));
    }

    fn unbalanced(&mut self, now: Now, write: ArchiveWrite, report: RoomEvent, detail: &str) {
        inc(&self.metrics.chip_conservation_failures);
        self.conservation_failures += 1;
        tracing::error!(room = %self.cfg.id, detail, failures = self.conservation_failures,
            "chip conservation failed: hand voided and refunded");
        let players = match &report {
            RoomEvent::HandFinished { players, .. } => players.clone(),
            _ => Vec::new(),
        };
        if let ArchiveWrite::Hand { mut transcript, pending_reveal, .. } = write {
            // A deferred reveal is owed whatever became of the chips: nothing
            // is at stake any more, so it goes out now, before the void notice,
            // and into the voided file, so the hand still audits.
            if let Some(env) = pending_reveal {
                transcript.events.push((*env).clone());
                if let Some(f) = encode(&ServerMessage::Event(*env)) {
                    self.send_frame(&players, f);
                }
            }
            self.archive(ArchiveWrite::Voided { transcript }, Waiting::Log("voided"));
        }
        self.hands_played = self.hands_played.saturating_sub(1);
        self.hands_voided += 1;
        dec(&self.metrics.hands_finished);
        inc(&self.metrics.hands_voided);
        if let RoomEvent::HandFinished { room, hand_id, players, .. } = report {
            self.tell_voided(&players, hand_id, VoidCause::Conservation);
            let reason = format!("chip conservation failed: {detail}");
            self.report(RoomEvent::HandVoided { room, hand_id, reason });
        }
        if self.conservation_failures >= 2 && self.closing.is_none() {
            tracing::error!(room = %self.cfg.id, "chip conservation failed again: closing the room");
            self.begin_close(now, Duration::ZERO);
        }
    }

    fn archived(&mut self, id: EffectId, result: Result<Archived, String>) {
        let Some(w) = self.waiting.remove(&id) else { return };
        if let Err(e) = &result {
            let what = match &w {
                Waiting::Log(what) => what,
                Waiting::Publish(_) => "audit-reveal",
                Waiting::Fetch(..) => "hand query",
                _ => "hand",
            };
            tracing::error!(room = %self.cfg.id, error = %e, "archive write ({what}) failed");
        }
        match (w, result) {
            (Waiting::ArchiveHand(next), result) => {
                let (mut report, owed) = *next;
                if let RoomEvent::HandFinished { transcript, .. } = &mut report {
                    *transcript = match result {
                        Ok(Archived::File(p)) => Some(p),
                        _ => None,
                    };
                }
                self.report(report);
                self.deferred.extend(owed);
            }
            (Waiting::Fetch(player, q), result) => self.fetch_done(&player, q, result),
            (Waiting::Publish(players), Ok(Archived::Reveal(env))) => {
                if let Some(f) = encode(&ServerMessage::Event(env)) {
                    self.send_frame(&players, f);
                }
            }
            _ => {}
        }
    }

    /// Publishes, at once, the reveals a previous run of this room left
    /// pending (`(hand_number, hand_id)` from the archive's pending store):
    /// the room that dealt those hands has closed, so they are due.
    pub fn publish_left_pending(&mut self, hands: Vec<(u64, HandId)>) {
        for (hand_number, hand_id) in hands {
            tracing::info!(room = %self.cfg.id, hand = %hand_id, hand_number, "publishing a reveal left pending by the previous run");
            self.archive(ArchiveWrite::Publish { hand_number, hand_id }, Waiting::Publish(Vec::new()));
        }
    }

    // ----- connections ---------------------------------------------------

    /// A handshake verified on `conn`: admits the player (a new session, or
    /// the resumption of the one whose reconnect token it presents) or
    /// refuses with a reason.
    pub fn connect(&mut self, now: Now, conn: ConnId, v: &VerifiedPlayer) -> Result<Admit, Refusal> {
        self.clock = now;
        if self.closing.is_some() || self.phase == RoomPhase::Closed {
            return Err(Refusal::new(RejectReason::Refused, "the room is closing"));
        }
        let id = v.player.signing;
        let bucket = TokenBucket::new(self.limits.rate_per_sec, self.limits.rate_burst, now.at);
        if let Some(p) = self.players.get_mut(&id) {
            let token_ok = v.reconnect_token.is_some_and(|t| ct_eq(&t, &p.token));
            if !token_ok || p.left() {
                // The seat is held for the session that owns the token.
                tracing::warn!(room = %self.cfg.id, player = %id.short(), "connection without the session's reconnect token refused");
                let why = match p.presence {
                    Presence::Away { since } => {
                        let left = (since + self.cfg.reconnect_window).saturating_duration_since(now.at);
                        format!(
                            "the seat is held for {} s more for the session of this key: resume it with its reconnect token",
                            left.as_secs().max(1)
                        )
                    }
                    Presence::Online(_) => {
                        "this key is connected on another connection: resume its session with its reconnect token"
                            .to_owned()
                    }
                    Presence::Left => "this key left the room; its hand is still running".to_owned(),
                };
                return Err(Refusal::new(RejectReason::Refused, why));
            }
            if p.encryption_key != v.player.encryption {
                return Err(Refusal::new(
                    RejectReason::Refused,
                    "the session was opened with another encryption key",
                ));
            }
            // Resume: the new connection replaces the old one.
            let old = p.conn();
            p.key = v.shared_key.clone();
            p.presence = Presence::Online(conn);
            p.resend_pending = true;
            p.bucket = bucket;
            let admit = Admit { seat: p.seat, token: p.token };
            match old {
                Some(old) => {
                    self.conns.remove(&old);
                    if let Some(f) = encode(&ServerMessage::Kicked(Kicked {
                        code: KickReason::Replaced,
                        reason: "another connection resumed this session".into(),
                    })) {
                        self.effects.push_back(Effect::Send { to: vec![old], frame: f });
                    }
                    self.effects.push_back(Effect::Close {
                        conn: old,
                        code: 1000,
                        reason: "replaced".into(),
                    });
                }
                None => inc(&self.metrics.players_connected),
            }
            self.conns.insert(conn, id);
            tracing::info!(room = %self.cfg.id, player = %id.short(), seat = ?admit.seat, "player reconnected");
            return Ok(admit);
        }
        // Seats are a budget of their own (a seated player resumes above);
        // a newcomer beyond the watchers' budget makes the longest-idle
        // watcher leave, so idle connections cannot lock the room.
        let watchers: Vec<(Instant, PlayerId)> = self
            .players
            .values()
            .filter(|p| p.watching() && !p.joining)
            .map(|p| (p.last_active, p.id))
            .collect();
        if watchers.len() >= self.limits.max_watchers {
            let Some((_, oldest)) = watchers.iter().min().copied() else {
                return Err(Refusal::new(RejectReason::Busy, "the room is full"));
            };
            inc(&self.metrics.kicked_idle);
            self.kick_conn(
                now,
                &oldest,
                KickReason::Idle,
                1000,
                "idle: the room needs the place for a newcomer",
            );
        }
        if self.players.len() >= self.limits.max_watchers + self.seats.len() * 2 {
            return Err(Refusal::new(RejectReason::Busy, "the room is full"));
        }
        let token = Nonce::random(&mut *self.rng);
        let mut p = Player::new(v, conn, token, bucket, now.at);
        p.credit_score = self.credit.get(&id).copied().unwrap_or(p.credit_score);
        self.players.insert(id, p);
        self.conns.insert(conn, id);
        inc(&self.metrics.players_connected);
        tracing::info!(room = %self.cfg.id, player = %id.short(), sdk = %v.sdk_version, "player connected");
        Ok(Admit { seat: None, token })
    }

    fn ready(&mut self, now: Now, conn: ConnId) {
        let Some(id) = self.conns.get(&conn).copied() else { return };
        let resend =
            self.players.get_mut(&id).map(|p| std::mem::take(&mut p.resend_pending)).unwrap_or(false);
        if resend {
            self.resend_hand(&id);
            // A seat back online may complete a table waiting for players.
            self.schedule_start(now);
        }
    }

    fn conn_closed(&mut self, now: Now, conn: ConnId) {
        let Some(id) = self.conns.remove(&conn) else { return };
        let in_hand = self.in_hand(&id);
        let Some(p) = self.players.get_mut(&id) else { return };
        if p.conn() != Some(conn) {
            return;
        }
        dec(&self.metrics.players_connected);
        if p.seat.is_none() && !in_hand {
            self.players.remove(&id);
            tracing::info!(room = %self.cfg.id, player = %id.short(), "player disconnected (not seated)");
            return;
        }
        p.presence = Presence::Away { since: now.at };
        tracing::info!(room = %self.cfg.id, player = %id.short(), "player disconnected; seat held for the reconnect window");
        self.hurry_away_turn(now);
    }

    /// Sends `msg` to a player's current connection.
    fn send(&mut self, id: &PlayerId, msg: &ServerMessage) {
        if let Some(f) = encode(msg) {
            self.send_frame(&[*id], f);
        }
    }

    /// Queues `frame` for each of `ids` that is online. A resumed session
    /// whose connection is not ready yet gets nothing: at ready it is sent
    /// the hand so far whole, and a live event before that history would
    /// reach it out of order.
    fn send_frame(&mut self, ids: &[PlayerId], frame: Arc<str>) {
        let to: Vec<ConnId> = ids
            .iter()
            .filter_map(|id| self.players.get(id).filter(|p| !p.resend_pending).and_then(Player::conn))
            .collect();
        if !to.is_empty() {
            self.effects.push_back(Effect::Send { to, frame });
        }
    }

    fn error_to(&mut self, id: &PlayerId, code: ErrorCode, message: impl Into<String>) {
        self.send(id, &ServerMessage::Error(ErrorMsg { code, message: message.into() }));
    }

    // ----- messages ------------------------------------------------------

    fn message(&mut self, now: Now, conn: ConnId, msg: ClientMessage, at: Instant) {
        let Some(id) = self.conns.get(&conn).copied() else { return };
        if self.players.get(&id).and_then(Player::conn) != Some(conn) {
            return; // a stale connection of a resumed session
        }
        // Actions on the player's turn and seeds asked for are paced by the
        // dealer and cost no token when accepted (a refusal costs one, so a
        // player spamming bad signatures on its turn runs dry); everything
        // else draws on the rate limit.
        let expected = match &msg {
            ClientMessage::Action(a) => self.table.expects_action(&id, &a.hand_id),
            ClientMessage::PlayerSeed(s) => self.table.expects_seed(&id, &s.hand_id),
            _ => false,
        };
        let allowed = if expected { self.has_token(&id, at) } else { self.take_token(&id, at) };
        if !allowed {
            self.rate_limited(now, &id, &msg);
            return;
        }
        if let Some(p) = self.players.get_mut(&id) {
            p.limited_in_a_row = 0;
            p.last_active = now.at;
        }
        match msg {
            ClientMessage::JoinRequest(j) => self.join(now, &id, j),
            ClientMessage::PlayerSeed(s) => self.player_seed(now, &id, s),
            ClientMessage::Action(a) => self.player_action(now, &id, a, at),
            ClientMessage::Query(q) => self.query(&id, q, at),
            ClientMessage::SitOut => self.sit_out(now, &id, true),
            ClientMessage::SitIn => {
                self.sit_out(now, &id, false);
                self.schedule_start(now);
            }
            ClientMessage::Leave => self.leave(now, &id),
            ClientMessage::Hello(_) | ClientMessage::Response(_) => {
                self.error_to(&id, ErrorCode::NotAllowed, "the handshake is already done")
            }
        }
    }

    fn has_token(&mut self, id: &PlayerId, at: Instant) -> bool {
        self.players.get_mut(id).is_some_and(|p| p.bucket.has_token(at))
    }

    fn take_token(&mut self, id: &PlayerId, at: Instant) -> bool {
        self.players.get_mut(id).is_some_and(|p| p.bucket.try_take(at))
    }

    fn rate_limited(&mut self, now: Now, id: &PlayerId, msg: &ClientMessage) {
        use claw_protocol::messages::{ActionRejectCode, ActionRejected, QueryError, QueryErrorCode};
        inc(&self.metrics.rate_limited);
        let reply = match msg {
            ClientMessage::Query(q) => ServerMessage::QueryError(QueryError {
                nonce: q.nonce.clone(),
                error: QueryErrorCode::RateLimited,
                message: "too many messages".into(),
            }),
            ClientMessage::Action(a) => ServerMessage::ActionRejected(ActionRejected {
                hand_id: a.hand_id,
                seq: a.seq,
                code: ActionRejectCode::RateLimited,
                reason: "too many messages".into(),
            }),
            _ => ServerMessage::Error(ErrorMsg {
                code: ErrorCode::RateLimited,
                message: "too many messages".into(),
            }),
        };
        self.send(id, &reply);
        let close_after = self.limits.flood_close_after;
        let flood = self.players.get_mut(id).is_some_and(|p| {
            p.limited_in_a_row += 1;
            p.limited_in_a_row > close_after
        });
        if flood {
            tracing::warn!(room = %self.cfg.id, player = %id.short(), "flood: closing the connection");
            self.kick_conn(now, id, KickReason::ProtocolViolation, 1008, "too many messages");
        }
    }

    /// Sends `kicked` and closes the player's connection (the seat follows
    /// the disconnect rules).
    fn kick_conn(&mut self, now: Now, id: &PlayerId, code: KickReason, close: u16, reason: &str) {
        self.send(id, &ServerMessage::Kicked(Kicked { code, reason: reason.to_owned() }));
        if let Some(c) = self.players.get(id).and_then(Player::conn) {
            self.effects.push_back(Effect::Close { conn: c, code: close, reason: reason.to_owned() });
            self.conn_closed(now, c);
        }
    }

    /// A seat that sat out too long (or one too many) is freed: `kicked`
    /// `idle`, then the player leaves the room.
    fn free_seat(&mut self, now: Now, id: &PlayerId, why: &str) {
        tracing::info!(room = %self.cfg.id, player = %id.short(), why, "sit-out seat freed");
        inc(&self.metrics.kicked_idle);
        self.send(id, &ServerMessage::Kicked(Kicked { code: KickReason::Idle, reason: why.to_owned() }));
        self.leave(now, id);
    }

    fn join(&mut self, now: Now, id: &PlayerId, j: JoinRequest) {
        if let Some(n) = &j.name {
            if let Some(p) = self.players.get_mut(id) {
                p.name = Some(n.clone());
            }
        }
        let already = self.players.get(id).and_then(|p| p.seat);
        if already.is_some() {
            return self.join_accepted(now, id);
        }
        if self.closing.is_some() {
            return self.send(id, &join_refused(JoinRejectReason::RoomClosed, "the room is closing"));
        }
        if self.seats.iter().all(Option::is_some) {
            return self.send(id, &join_refused(JoinRejectReason::RoomFull, "every seat is taken"));
        }
        let Some(p) = self.players.get_mut(id) else { return };
        if std::mem::replace(&mut p.joining, true) {
            return; // the first request is still being answered
        }
        self.call(ChipCall::JoinBalance(*id), Waiting::Join(*id, j));
    }

    fn join_done(&mut self, now: Now, id: &PlayerId, j: JoinRequest, balance: Result<Chips, ChipFailure>) {
        let Some(p) = self.players.get_mut(id) else { return };
        p.joining = false;
        if p.left() || p.seat.is_some() {
            return;
        }
        let balance = match balance {
            Ok(b) => b,
            Err(e) => {
                inc(&self.metrics.chip_errors);
                tracing::warn!(room = %self.cfg.id, error = ?e, "balance check failed");
                return self
                    .send(id, &join_refused(JoinRejectReason::Other, "the chip service is unavailable"));
            }
        };
        if self.closing.is_some() {
            return self.send(id, &join_refused(JoinRejectReason::RoomClosed, "the room is closing"));
        }
        let free: Vec<usize> = (0..self.seats.len()).filter(|i| self.seats[*i].is_none()).collect();
        let Some(first) = free.first().copied() else {
            return self.send(id, &join_refused(JoinRejectReason::RoomFull, "every seat is taken"));
        };
        let need = self.cfg.buy_in.max(j.buy_in.unwrap_or_default()).max(self.min_balance());
        if balance < need {
            let m = format!("balance {balance} is below the {need} this room needs");
            return self.send(id, &join_refused(JoinRejectReason::InsufficientBalance, &m));
        }
        if balance < self.entry {
            let m = format!("balance {balance} is below this table's entry threshold of {}", self.entry);
            return self.send(id, &join_refused(JoinRejectReason::BelowEntry, &m));
        }
        let seat = j.seat.map(|s| s.index()).filter(|s| free.contains(s)).unwrap_or(first);
        self.seats[seat] = Some(*id);
        self.underfilled_since = None; // a newcomer: the wait starts again
        if let Some(p) = self.players.get_mut(id) {
            p.seat = Some(Seat(seat as u8));
            p.balance = balance;
        }
        inc(&self.metrics.players_seated);
        tracing::info!(room = %self.cfg.id, player = %id.short(), seat, "player seated");
        self.join_accepted(now, id);
    }

    fn join_accepted(&mut self, now: Now, id: &PlayerId) {
        let seat = self.players.get(id).and_then(|p| p.seat);
        let waits = self.table.is_playing() && !self.in_hand(id);
        let resp = ServerMessage::JoinResponse(JoinResponse {
            accepted: true,
            reason: None,
            message: waits.then(|| "a hand is running: you play from the next one".to_owned()),
            seat,
            room: Some(self.cfg.public()),
            players: self.table_players(),
        });
        self.send(id, &resp);
        self.schedule_start(now);
    }

    /// Chips a player needs for a hand: commission plus the minimum bet (at
    /// least one chip).
    fn min_balance(&self) -> Chips {
        Chips(self.cfg.commission.0.saturating_add(self.cfg.min_bet.0.max(1)))
    }

    fn sit_out(&mut self, now: Now, id: &PlayerId, out: bool) {
        let Some(p) = self.players.get_mut(id) else { return };
        if !out {
            p.sit_out = None;
            p.sat_out_hands = 0;
            p.timeouts_in_a_row = 0;
            return;
        }
        if p.sit_out.is_some() || p.seat.is_none() {
            return;
        }
        p.sit_out = Some(now.at);
        // Too many seats sitting out: the one out longest is freed.
        let mut out: Vec<(Instant, PlayerId)> = self
            .players
            .values()
            .filter(|p| p.seat.is_some())
            .filter_map(|p| p.sit_out.map(|since| (since, p.id)))
            .collect();
        if out.len() > usize::from(self.cfg.sit_out_seats) {
            out.sort();
            let why =
                format!("more than {} seats sit out: the seat out longest is freed", self.cfg.sit_out_seats);
            self.free_seat(now, &out[0].1, &why);
        }
    }

    fn leave(&mut self, now: Now, id: &PlayerId) {
        let in_hand = self.table.hand().is_some_and(|h| h.seat_of(id).is_some() && !h.is_over());
        tracing::info!(room = %self.cfg.id, player = %id.short(), in_hand, "player leaves");
        self.remove_player(id, true);
        // If the hand waits for this player, act for it now.
        if let Some(seat) = self.table.turn_of(id) {
            self.timeout_action(now, seat);
        }
    }

    /// The player leaves the room: seat freed, connection closed. A player
    /// still in the hand stays in it (auto actions) until it ends.
    fn remove_player(&mut self, id: &PlayerId, close_conn: bool) {
        let in_hand = self.in_hand(id);
        let Some(p) = self.players.get_mut(id) else { return };
        if in_hand {
            p.credit_score -= 10;
            self.credit.insert(*id, p.credit_score);
        }
        if let Some(s) = p.seat.take() {
            if let Some(slot) = self.seats.get_mut(s.index()) {
                *slot = None;
            }
            dec(&self.metrics.players_seated);
        }
        let conn = p.conn();
        p.presence = Presence::Left;
        if let Some(c) = conn {
            self.conns.remove(&c);
            dec(&self.metrics.players_connected);
            if close_conn {
                self.effects.push_back(Effect::Close { conn: c, code: 1000, reason: "left".into() });
            }
        }
        if !in_hand {
            self.players.remove(id);
        }
    }

    fn in_hand(&self, id: &PlayerId) -> bool {
        self.table.hand().is_some_and(|h| h.seat_of(id).is_some())
    }

    fn status_of(&self, p: &Player) -> PlayerStatus {
        match p.presence {
            Presence::Left => PlayerStatus::Left,
            Presence::Away { .. } => PlayerStatus::Disconnected,
            Presence::Online(_) => {
                if self.in_hand(&p.id) && !self.table.hand().is_some_and(|h| h.is_over()) {
                    PlayerStatus::Playing
                } else if p.seat.is_none() {
                    PlayerStatus::Joined
                } else if p.sit_out.is_some() {
                    PlayerStatus::SitOut
                } else {
                    PlayerStatus::Seated
                }
            }
        }
    }

    /// Everyone in the room, seat order first: a player who left is shown
    /// `left` until the hand it is still in ends; `until_ms` says when an
    /// away or sitting-out seat is freed.
    fn table_players(&self) -> Vec<TablePlayer> {
        let mut v: Vec<_> = self
            .players
            .values()
            .map(|p| TablePlayer {
                id: p.id,
                name: p.name.clone(),
                seat: p.seat,
                status: self.status_of(p),
                chips: p.balance,
                until_ms: match (p.presence, p.sit_out) {
                    (Presence::Away { since }, _) => Some(self.unix_ms(since + self.cfg.reconnect_window)),
                    (Presence::Online(_), Some(since)) => Some(self.unix_ms(since + self.cfg.sit_out_limit)),
                    _ => None,
                },
            })
            .collect();
        v.sort_by_key(|p| (p.seat.map_or(u16::MAX, |s| u16::from(s.0)), p.id));
        v
    }

    /// The room phase players see: `idle` while no seat is taken and no
    /// hand runs, else the phase itself.
    fn public_phase(&self) -> RoomPhase {
        let empty = self.seats.iter().all(Option::is_none);
        if self.phase == RoomPhase::Waiting && empty && !self.table.is_busy() {
            RoomPhase::Idle
        } else {
            self.phase
        }
    }

    /// Who the running hand waits for, as `room-state` shows it.
    fn acting(&self) -> Option<claw_protocol::messages::Acting> {
        let (player, seat, deadline_ms) = self.table.acting()?;
        Some(claw_protocol::messages::Acting { player, seat, deadline_ms })
    }

    /// `t` in unix milliseconds, by the latest time the driver told.
    fn unix_ms(&self, t: Instant) -> u64 {
        match t.checked_duration_since(self.clock.at) {
            Some(ahead) => self.clock.unix_ms.saturating_add(millis(ahead)),
            None => self.clock.unix_ms.saturating_sub(millis(self.clock.at.saturating_duration_since(t))),
        }
    }

    // ----- shutdown --------------------------------------------------------

    fn begin_close(&mut self, now: Now, grace: Duration) {
        let deadline = now.at + grace;
        match &mut self.closing {
            Some(c) => c.deadline = c.deadline.min(deadline),
            None => {
                tracing::info!(room = %self.cfg.id, "room closing: no new hands");
                self.closing = Some(Closing { deadline });
                self.next_hand_at = None;
            }
        }
    }

    fn finish_close(&mut self) {
        let ids: Vec<PlayerId> = self.players.keys().copied().collect();
        let kicked = encode(&ServerMessage::Kicked(Kicked {
            code: KickReason::RoomClosed,
            reason: "the room closed".into(),
        }));
        if let Some(f) = kicked {
            self.send_frame(&ids, f);
        }
        for p in self.players.values() {
            if let Some(c) = p.conn() {
                self.effects.push_back(Effect::Close { conn: c, code: 1001, reason: "room closed".into() });
                dec(&self.metrics.players_connected);
            }
            if p.seat.is_some() {
                dec(&self.metrics.players_seated);
            }
        }
        self.players.clear();
        self.conns.clear();
        self.phase = RoomPhase::Closed;
        dec(&self.metrics.rooms_open);
        self.report(RoomEvent::Closed { room: self.cfg.id.clone() });
        tracing::info!(room = %self.cfg.id, hands = self.hands_played, "room closed");
    }
}

impl Waiting {
    /// Whether the room may not close before this completes (chips moved,
    /// transcripts archived).
    fn must_finish(&self) -> bool {
        !matches!(self, Waiting::Join(..) | Waiting::Query(..) | Waiting::Fetch(..) | Waiting::FundHouse)
    }
}

fn join_refused(reason: JoinRejectReason, message: &str) -> ServerMessage {
    ServerMessage::JoinResponse(JoinResponse {
        accepted: false,
        reason: Some(reason),
        message: Some(message.to_owned()),
        seat: None,
        room: None,
        players: Vec::new(),
    })
}

/// Encodes a message as a frame; `None` (logged) if it cannot be encoded.
pub fn encode(msg: &ServerMessage) -> Option<Arc<str>> {
    match msg.encode() {
        Ok(s) => Some(Arc::from(s)),
        Err(e) => {
            tracing::error!(error = %e, kind = msg.type_name(), "cannot encode message");
            None
        }
    }
}

/// The public room config, exact JSON text, as signed in the challenge.
pub fn public_config(cfg: &RoomConfig) -> Result<RawJson, claw_protocol::messages::EncodeError> {
    RawJson::from_value(&cfg.public())
}
