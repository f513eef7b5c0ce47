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
//!
//! [`RoomCore`] is the composition of one part per concern, each owning
//! its state: `seats.rs` ([`Presence`], seats, sitting out, joins),
//! `watchers.rs` (unseated connections), `hand.rs` (the table and its
//! running hand), `forming.rs` and `settle.rs` (a hand's start and end),
//! `queries.rs` (answers and views) and `chips.rs` (the outbox of effects
//! and what each completion is for). This file routes inputs and timers
//! to them and closes the room.

mod ai;
mod chips;
pub mod config;
mod forming;
mod hand;
mod matches;
mod player;
mod queries;
mod ready;
mod removal;
mod rotation;
mod seats;
mod settle;
mod watchers;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use claw_protocol::handshake::RejectReason;
use claw_protocol::messages::{
    ClientMessage, ErrorCode, ErrorMsg, HandRecord, KickReason, RawJson, RoomPhase, ServerMessage,
    TablePlayer,
};
use claw_protocol::transcript::{EventEnvelope, Transcript};
use claw_protocol::{Chips, HandId, Identity, Nonce, PlayerId, Seat};
use rand_core::CryptoRngCore;

use crate::hand::GameSpec;
use crate::metrics::{dec, inc, Metrics};
use chips::{Outbox, Waiting};
use config::{Limits, RoomConfig};
use hand::Hands;
pub use hand::MAX_HAND_STAKE;
use player::Player;
pub use player::{Presence, TokenBucket};
use queries::Queries;
pub use removal::{Bar, BarKind};
use seats::Roster;
pub use settle::VoidCause;

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

impl std::fmt::Display for ChipFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ChipFailure::Refused(why) => write!(f, "refused: {why}"),
            ChipFailure::Unavailable(why) => write!(f, "unavailable: {why}"),
            ChipFailure::Timeout => f.write_str("no answer in time"),
        }
    }
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
    /// Start a house AI for a seat (room setting `ai_seats`): fund it from
    /// the house-AI account and connect it as a player; complete with
    /// [`Input::Ai`].
    Ai {
        /// Completion id.
        id: EffectId,
        /// What to start.
        start: AiStart,
    },
}

/// A house AI the room asks the driver for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AiStart {
    /// The room's game (the AI's strategy).
    pub game: String,
    /// The seat it is to ask for.
    pub seat: Seat,
    /// Its strength (Guandan), or the game's default AI.
    pub level: Option<config::AiLevel>,
    /// Chips it is to hold, transferred from the house-AI account.
    pub chips: Chips,
}

/// The completion of an [`Effect::Ai`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AiOutcome {
    /// Funded and connecting as this identity.
    Started(PlayerId),
    /// Not started (the house-AI budget is spent, no AI player is set up).
    Refused(String),
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
    /// A house AI's start completed.
    Ai {
        /// The effect.
        id: EffectId,
        /// Started, or why not.
        outcome: AiOutcome,
    },
    /// The operator banned or froze `player` (`Some`), or lifted it (`None`):
    /// applied once the player is out of the running hand (`removal.rs`).
    Bar {
        /// The identity.
        player: PlayerId,
        /// The bar, or none.
        bar: Option<Bar>,
    },
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

/// Whether the room takes new hands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Life {
    /// Open.
    Open,
    /// Shutting down: no new hands; the running one is voided at `deadline`.
    Closing {
        /// Void the running hand at this instant.
        deadline: Instant,
    },
    /// Closed: nothing more happens.
    Closed,
}

impl Life {
    fn is_open(self) -> bool {
        self == Life::Open
    }

    /// The shutdown grace's end, while closing.
    fn deadline(self) -> Option<Instant> {
        match self {
            Life::Closing { deadline } => Some(deadline),
            _ => None,
        }
    }
}

/// One room's state machines. See the module doc.
pub struct RoomCore {
    cfg: Arc<RoomConfig>,
    spec: Arc<GameSpec>,
    dealer: Arc<Identity>,
    limits: Limits,
    metrics: Arc<Metrics>,
    rng: Box<dyn CryptoRngCore + Send>,
    /// Players, their connections and seats.
    roster: Roster,
    /// The table and its hands.
    hands: Hands,
    /// Open, closing or closed.
    life: Life,
    /// Effects for the driver and the completions waited for.
    out: Outbox,
    /// The query budget and the `hand` queries parked until their record.
    queries: Queries,
    /// The latest time the driver told (converts timers to the unix
    /// milliseconds players see).
    clock: Now,
    /// The game's entry threshold for these settings (Sam Gong's tier
    /// entry chips): a join below it is refused `below-entry`.
    entry: Chips,
    /// Operator bans and freezes (`removal.rs`).
    removals: removal::Removals,
    /// The banker queue last pushed (`rotation.rs`).
    rotation: rotation::Rotation,
    /// House-AI seats (`ai.rs`).
    ai: ai::AiTable,
    /// The live feed of watchers following the table (`watchers.rs`).
    feed: watchers::Feed,
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
        // Every hand carries the room's public configuration, the one the
        // handshake signs, and announces its seed timeout (SPEC.md §9.5).
        let spec = match GameSpec::clone(&spec).for_room(&cfg.public()) {
            Ok(s) => Arc::new(s),
            Err(e) => {
                tracing::error!(room = %cfg.id, error = %e, "hands cannot carry the room configuration");
                spec
            }
        };
        let entry = spec.game.entry_chips(&spec.settings).unwrap_or_else(|e| {
            tracing::warn!(room = %cfg.id, error = %e, "no entry threshold: the settings do not parse");
            Chips::ZERO
        });
        let mut core = RoomCore {
            clock: now,
            entry,
            roster: Roster::new(usize::from(cfg.max_players)),
            cfg,
            spec,
            dealer,
            limits,
            metrics,
            rng,
            hands: Hands::default(),
            life: Life::Open,
            out: Outbox::default(),
            queries: Queries::default(),
            removals: removal::Removals::default(),
            rotation: rotation::Rotation::default(),
            ai: ai::AiTable::default(),
            feed: watchers::Feed::default(),
        };
        inc(&core.metrics.rooms_open);
        // A room nobody sits in expires from its opening (`expire_after`).
        core.track_empty(now);
        if core.cfg.house_bankroll.0 > 0 && !config::has_house(&core.cfg.game) {
            tracing::warn!(room = %core.cfg.id, game = %core.cfg.game,
                "house_bankroll ignored: the game has no house");
        } else if core.cfg.house_bankroll.0 > 0 {
            core.hands.funding = true;
            let amount = core.cfg.house_bankroll;
            core.out.call(ChipCall::FundHouse(amount), Waiting::FundHouse);
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
        self.life == Life::Closed
    }

    /// The next effect to run.
    pub fn poll_effect(&mut self) -> Option<Effect> {
        self.out.pop()
    }

    /// When [`RoomCore::handle_timeout`] must be called next.
    pub fn poll_timeout(&self) -> Option<Instant> {
        let mut w: Option<Instant> = None;
        let mut at = |t: Option<Instant>| {
            if let Some(t) = t {
                w = Some(w.map_or(t, |x| x.min(t)));
            }
        };
        at(self.hands_deadline());
        at(self.seat_deadline());
        at(self.watcher_deadline());
        at(self.people_deadline());
        at(self.ai_deadline());
        // The shutdown grace matters only while a hand runs (it is voided then).
        at(self.life.deadline().filter(|_| self.hands.table.is_playing()));
        w
    }

    /// Numbers this session's hands from `n` on (the archive's next hand
    /// number, so that hand numbers and file names continue across restarts).
    pub fn continue_from(&mut self, n: u64) {
        self.hands.first_number = n;
    }

    /// Handles one input.
    pub fn handle(&mut self, now: Now, input: Input) {
        self.clock = now;
        match input {
            Input::Ready(conn) => {
                self.ready(now, conn);
                self.banker_queue_to(conn);
            }
            Input::Message { conn, msg, at } => self.message(now, conn, *msg, at),
            Input::Disconnected(conn) => self.conn_closed(now, conn),
            Input::Chips { id, outcome } => self.chips_done(now, id, outcome),
            Input::Archived { id, result } => self.archived(id, result),
            Input::Shutdown { grace } => self.begin_close(now, grace),
            Input::Hold(h) => {
                self.hands.hold = h;
                if !h {
                    self.schedule_start(now);
                }
            }
            Input::Bar { player, bar } => self.set_bar(now, player, bar),
            Input::Ai { id, outcome } => self.ai_done(now, id, outcome),
        }
        self.after_input(now);
    }

    /// Runs the timers that are due at `now`.
    pub fn handle_timeout(&mut self, now: Now) {
        self.clock = now;
        let t = now.at;
        // Reconnect windows, idle watchers, seats that sat out too long.
        self.expire_away(now);
        self.kick_idle_watchers(now);
        self.people_timers(now);
        self.free_squatters(now);
        self.ai_timers(now);
        self.reveal_timers(now);
        self.hand_timers(now);
        // Shutdown grace.
        if self.life.deadline().is_some_and(|d| d <= t) && self.hands.table.is_playing() {
            self.void_hand(now, VoidCause::Shutdown, "the dealer is shutting down");
        }
        if self.hands.next_at.is_some_and(|n| n <= t) {
            self.hands.next_at = None;
            self.maybe_start_hand(now);
        }
        if self.dissolve_at().is_some_and(|d| d <= t) {
            self.dissolve();
            if self.cfg.expire_after.is_some_and(|d| !d.is_zero()) {
                self.expire(now, "the table was dissolved");
            }
        }
        if self.expire_at().is_some_and(|d| d <= t) {
            self.expire(now, "no seat taken for expire_after");
        }
        self.after_input(now);
    }

    /// Tracks the under-filled table and the empty room; closes the room once shutdown has
    /// nothing left to wait for.
    fn after_input(&mut self, now: Now) {
        self.apply_bars(now);
        self.track_underfilled(now);
        self.track_empty(now);
        self.ai_track(now);
        self.push_banker_queue();
        if matches!(self.life, Life::Closing { .. }) {
            let must_wait = self.hands.table.is_busy() || self.out.must_wait();
            if must_wait {
                return;
            }
            if self.hands.deferred.is_empty() {
                self.finish_close();
            } else {
                // Deferred reveals first; the room closes once their archive
                // writes are done (readers of a closed room's archive see them).
                for d in std::mem::take(&mut self.hands.deferred) {
                    self.publish_reveal(d);
                }
                if !self.out.must_wait() {
                    self.finish_close();
                }
            }
        }
    }

    fn chips_done(&mut self, now: Now, id: EffectId, outcome: ChipOutcome) {
        let Some(w) = self.out.complete(id) else { return };
        match w {
            Waiting::FundHouse => {
                self.hands.funding = false;
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
                    ArchiveWrite::Hand { transcript, .. } => self.queries.parked.remove(&transcript.hand_id),
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
                    other => tracing::error!(severity = crate::metrics::CRITICAL, room = %self.cfg.id,
                        outcome = ?other, "refund incomplete; the chip journal stays open and a restart finishes it"),
                }
                self.out.report(*report);
            }
            Waiting::Log(what) => {
                if let ChipOutcome::Done(Err(e)) = &outcome {
                    tracing::error!(room = %self.cfg.id, error = %e, "{what} failed");
                }
            }
            Waiting::ArchiveHand(_) | Waiting::Publish(_) | Waiting::Fetch(..) | Waiting::Ai => {}
        }
    }

    fn archived(&mut self, id: EffectId, result: Result<Archived, String>) {
        let Some(w) = self.out.complete(id) else { return };
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
                self.out.report(report);
                self.hands.deferred.extend(owed);
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

    // ----- sending ---------------------------------------------------------

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
        let to: Vec<ConnId> =
            ids.iter().filter_map(|id| self.roster.get(id).and_then(Player::live_conn)).collect();
        self.out.send(to, frame);
    }

    fn error_to(&mut self, id: &PlayerId, code: ErrorCode, message: impl Into<String>) {
        self.send(id, &ServerMessage::Error(ErrorMsg { code, message: message.into() }));
    }

    // ----- messages ------------------------------------------------------

    fn message(&mut self, now: Now, conn: ConnId, msg: ClientMessage, at: Instant) {
        // None also for a stale connection of a resumed session.
        let Some(id) = self.roster.on_conn(conn) else { return };
        // Actions on the player's turn and seeds asked for are paced by the
        // dealer and cost no token when accepted (a refusal costs one, so a
        // player spamming bad signatures on its turn runs dry); everything
        // else draws on the rate limit.
        let expected = match &msg {
            ClientMessage::Action(a) => self.hands.table.expects_action(&id, &a.hand_id),
            ClientMessage::PlayerSeed(s) => self.hands.table.expects_seed(&id, &s.hand_id),
            ClientMessage::BlindKey(_)
            | ClientMessage::BlindShuffle(_)
            | ClientMessage::BlindShares(_)
            | ClientMessage::BlindPieces(_)
            | ClientMessage::BlindComplaint(_)
            | ClientMessage::BlindRecovery(_) => self.expects_blind(&id),
            _ => false,
        };
        let allowed = if expected { self.has_token(&id, at) } else { self.take_token(&id, at) };
        if !allowed {
            self.rate_limited(now, &id, &msg);
            return;
        }
        if let Some(p) = self.roster.get_mut(&id) {
            p.limited_in_a_row = 0;
            p.last_active = now.at;
        }
        match msg {
            ClientMessage::JoinRequest(_) if self.refuse_barred_join(&id) => {}
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
            ClientMessage::BlindKey(k) => self.player_blind_key(now, &id, k),
            ClientMessage::BlindShuffle(s) => self.player_blind_shuffle(now, &id, s),
            ClientMessage::BlindShares(s) => self.player_blind_shares(now, &id, s),
            ClientMessage::BlindPieces(p) => self.player_blind_pieces(now, &id, p),
            ClientMessage::BlindComplaint(c) => self.player_blind_complaint(now, &id, c),
            ClientMessage::BlindRecovery(r) => self.player_blind_recovery(now, &id, r),
            ClientMessage::Ready => self.vote_answer(now, &id, ready::VoteKind::Ready, true),
            ClientMessage::RematchVote(v) => self.vote_answer(now, &id, ready::VoteKind::Rematch, v.accept),
            ClientMessage::Watch(w) => self.watch(&id, w.on),
            ClientMessage::Hello(_) | ClientMessage::Response(_) | ClientMessage::QuickMatch(_) => {
                self.error_to(&id, ErrorCode::NotAllowed, "the handshake is already done")
            }
        }
    }

    fn has_token(&mut self, id: &PlayerId, at: Instant) -> bool {
        self.roster.get_mut(id).is_some_and(|p| p.bucket.has_token(at))
    }

    fn take_token(&mut self, id: &PlayerId, at: Instant) -> bool {
        self.roster.get_mut(id).is_some_and(|p| p.bucket.try_take(at))
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
        let flood = self.roster.get_mut(id).is_some_and(|p| {
            p.limited_in_a_row += 1;
            p.limited_in_a_row > close_after
        });
        if flood {
            tracing::warn!(room = %self.cfg.id, player = %id.short(), "flood: closing the connection");
            self.kick_conn(now, id, KickReason::ProtocolViolation, 1008, "too many messages");
        }
    }

    // ----- shutdown --------------------------------------------------------

    fn begin_close(&mut self, now: Now, grace: Duration) {
        let deadline = now.at + grace;
        match &mut self.life {
            Life::Closing { deadline: d } => *d = (*d).min(deadline),
            Life::Open => {
                tracing::info!(room = %self.cfg.id, "room closing: no new hands");
                self.life = Life::Closing { deadline };
                self.hands.next_at = None;
            }
            Life::Closed => {}
        }
    }

    fn finish_close(&mut self) {
        self.close_everyone();
        self.life = Life::Closed;
        dec(&self.metrics.rooms_open);
        self.out.report(RoomEvent::Closed { room: self.cfg.id.clone() });
        tracing::info!(room = %self.cfg.id, hands = self.hands.played, "room closed");
    }
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
