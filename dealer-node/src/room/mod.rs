//! A room: one task that owns the room and player state machines, the hand
//! in progress (through the sans-IO engine), its timers and its chips.
//!
//! Room phases (seed 002): idle → waiting → playing → settling →
//! between-hands → playing …; closed. Player statuses: joined → seated →
//! playing → seated; sit-out; disconnected (reconnect window) → left.
//!
//! Connections talk to the room through [`RoomCmd`]s; the room answers by
//! queueing frames on each connection's [`ConnTx`]. Every message is handled
//! as coming from the identity the connection proved in the handshake; no
//! field of a message can change who the sender is.

pub mod conn;
mod hand;
mod player;
mod queries;

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use claw_chips::AccountId;
use claw_protocol::handshake::{RejectReason, VerifiedPlayer};
use claw_protocol::messages::{
    ClientMessage, ErrorCode, ErrorMsg, JoinRejectReason, JoinRequest, JoinResponse, KickReason, Kicked,
    PlayerStatus, RawJson, RoomPhase, ServerMessage,
};
use claw_protocol::{Identity, Nonce, PlayerId, Seat};
use rand::rngs::OsRng;
use serde_json::Value;
use tokio::sync::{broadcast, mpsc, oneshot, watch, Mutex};
use tokio::time::Instant;
use tokio_tungstenite::tungstenite::Utf8Bytes;

use crate::archive::Archive;
use crate::chips::{ChipDesk, Grants};
use crate::config::{Limits, RoomConfig};
use crate::engine::GameSpec;
use crate::metrics::{dec, inc, Metrics};

pub use conn::{next_conn_id, ConnId, ConnTx, Outbound, TokenBucket};
use hand::{ActiveHand, DeferredHand};
use player::Player;

/// What the node shares with every room.
pub struct NodeContext {
    /// The dealer's identity (signs every event).
    pub dealer: Arc<Identity>,
    /// Chip calls with timeouts and retries.
    pub desk: ChipDesk,
    /// Operator grants (welcome chips, house bankroll) when the provider has them.
    pub grants: Option<Arc<dyn Grants>>,
    /// Chips granted once to a new account whose balance is below it.
    pub welcome_grant: claw_protocol::Chips,
    /// Accounts already welcomed by this node.
    pub welcomed: Mutex<std::collections::HashSet<AccountId>>,
    /// Counters for `/metrics`.
    pub metrics: Arc<Metrics>,
    /// Transcripts and journals go here.
    pub data_dir: PathBuf,
    /// Connection, rate and chip-call limits.
    pub limits: Limits,
    /// Finished and voided hands, for the demo summary and tests.
    pub events: broadcast::Sender<RoomEvent>,
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
        hand_id: claw_protocol::HandId,
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
        hand_id: claw_protocol::HandId,
        /// Why.
        reason: String,
    },
    /// The room closed.
    Closed {
        /// The room.
        room: String,
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

/// A request to a room task.
pub enum RoomCmd {
    /// A handshake verified: admit the player (or refuse with a reason).
    Connect {
        /// The proven identity and its session key.
        verified: Box<VerifiedPlayer>,
        /// The connection's outgoing queue.
        conn: ConnTx,
        /// The room's answer.
        reply: oneshot::Sender<Result<Admit, RejectReason>>,
    },
    /// `accepted` was sent on `conn`: a reconnecting player gets its cards
    /// and the transcript so far.
    Ready {
        /// The connection.
        conn: ConnId,
    },
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
    Closed {
        /// The connection.
        conn: ConnId,
    },
    /// Stop new hands, finish (or void after `grace`) the running one,
    /// publish deferred reveals, close every connection.
    Shutdown {
        /// Time given to the running hand.
        grace: Duration,
        /// Told when the room is closed.
        done: oneshot::Sender<()>,
    },
    /// The room's public state, for tests and the demo.
    Inspect {
        /// Where the snapshot goes.
        reply: oneshot::Sender<RoomSnapshot>,
    },
    /// Hold new hands (true) or allow them again (false); the demo holds
    /// the first hand until every bot is seated.
    Hold(bool),
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
    pub players: Vec<claw_protocol::messages::TablePlayer>,
}

/// How the server reaches a room.
#[derive(Clone)]
pub struct RoomHandle {
    /// The room id.
    pub id: String,
    /// The room's validated configuration.
    pub config: Arc<RoomConfig>,
    /// The public room config, exact JSON text, as signed in the challenge.
    pub public_config: RawJson,
    tx: mpsc::Sender<RoomCmd>,
    closed: watch::Receiver<bool>,
}

impl RoomHandle {
    /// Sends a command; false if the room task is gone.
    pub async fn send(&self, cmd: RoomCmd) -> bool {
        self.tx.send(cmd).await.is_ok()
    }

    /// Sends without waiting; false if the queue is full or the room is gone.
    pub fn try_send(&self, cmd: RoomCmd) -> bool {
        self.tx.try_send(cmd).is_ok()
    }

    /// The room's public state.
    pub async fn inspect(&self) -> Option<RoomSnapshot> {
        let (reply, rx) = oneshot::channel();
        if !self.send(RoomCmd::Inspect { reply }).await {
            return None;
        }
        rx.await.ok()
    }

    /// Holds new hands (true) or allows them again (false).
    pub async fn hold_hands(&self, hold: bool) -> bool {
        self.send(RoomCmd::Hold(hold)).await
    }

    /// Waits until the room is closed.
    pub async fn wait_closed(&self) {
        let mut c = self.closed.clone();
        while !*c.borrow() {
            if c.changed().await.is_err() {
                return;
            }
        }
    }

    /// Whether the room is closed.
    pub fn is_closed(&self) -> bool {
        *self.closed.borrow()
    }
}

/// Unix time in milliseconds (the wall clock for deadlines players see).
pub fn unix_ms() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_millis() as u64).unwrap_or(0)
}

/// Encodes a message as a frame; `None` (logged) if it cannot be encoded.
pub fn encode(msg: &ServerMessage) -> Option<Utf8Bytes> {
    match msg.encode() {
        Ok(s) => Some(Utf8Bytes::from(s)),
        Err(e) => {
            tracing::error!(error = %e, kind = msg.type_name(), "cannot encode message");
            None
        }
    }
}

/// The room task's state.
pub(crate) struct Room {
    cfg: Arc<RoomConfig>,
    spec: Arc<GameSpec>,
    ctx: Arc<NodeContext>,
    phase: RoomPhase,
    players: HashMap<PlayerId, Player>,
    conns: HashMap<ConnId, PlayerId>,
    /// Table seats (room-level seat numbers).
    seats: Vec<Option<PlayerId>>,
    hand: Option<ActiveHand>,
    memory: Value,
    hands_played: u64,
    hands_voided: u64,
    /// The number of this session's first hand (continues the archive).
    first_hand_number: u64,
    /// No new hands while set.
    hold: bool,
    /// Credit scores, kept across sessions (lowered by leaving mid-hand).
    credit: HashMap<PlayerId, i32>,
    next_hand_at: Option<Instant>,
    deferred: Vec<DeferredHand>,
    archive: Option<Archive>,
    house: AccountId,
    /// Set by shutdown: no new hands; void the running one at this instant.
    closing: Option<(Instant, Vec<oneshot::Sender<()>>)>,
    closed_tx: watch::Sender<bool>,
    rng: OsRng,
}

/// Starts a room task; returns its handle.
pub fn spawn_room(
    cfg: RoomConfig,
    game: Arc<dyn claw_games::DynGame>,
    ctx: Arc<NodeContext>,
) -> Result<RoomHandle, crate::engine::EngineError> {
    let spec = Arc::new(GameSpec::new(
        cfg.id.clone(),
        game,
        cfg.settings.clone(),
        cfg.entropy,
        cfg.reveal,
        u64::try_from(cfg.seed_timeout.as_millis()).unwrap_or(u64::MAX),
    )?);
    let public_config = RawJson::from_value(&cfg.public())?;
    let (tx, rx) = mpsc::channel(4096);
    let (closed_tx, closed) = watch::channel(false);
    let cfg = Arc::new(cfg);
    let archive = match Archive::open(&ctx.data_dir, &cfg.id) {
        Ok(a) => Some(a),
        Err(e) => {
            tracing::error!(room = %cfg.id, error = %e, "transcript archive unavailable");
            None
        }
    };
    let house = AccountId::new(format!("house:{}", cfg.id))
        .map_err(|e| crate::engine::EngineError::State(e.to_string()))?;
    let room = Room {
        seats: vec![None; usize::from(cfg.max_players)],
        cfg: Arc::clone(&cfg),
        spec,
        ctx,
        phase: RoomPhase::Idle,
        players: HashMap::new(),
        conns: HashMap::new(),
        hand: None,
        memory: Value::Null,
        hands_played: 0,
        hands_voided: 0,
        first_hand_number: archive.as_ref().map_or(0, Archive::next_hand_number),
        credit: HashMap::new(),
        hold: false,
        next_hand_at: None,
        deferred: Vec::new(),
        archive,
        house,
        closing: None,
        closed_tx,
        rng: OsRng,
    };
    let handle = RoomHandle { id: cfg.id.clone(), config: cfg, public_config, tx, closed };
    let task = tokio::spawn(room.run(rx));
    let id = handle.id.clone();
    tokio::spawn(async move {
        // A bug in a room ends that room only; say so loudly.
        if let Err(e) = task.await {
            tracing::error!(room = %id, error = %e, "room task failed; the room is closed");
        }
    });
    Ok(handle)
}

impl Room {
    async fn run(mut self, mut rx: mpsc::Receiver<RoomCmd>) {
        inc(&self.ctx.metrics.rooms_open);
        self.fund_house().await;
        self.phase = RoomPhase::Waiting;
        tracing::info!(room = %self.cfg.id, game = %self.cfg.game, "room open");
        loop {
            let wake = self.next_wake();
            tokio::select! {
                cmd = rx.recv() => match cmd {
                    Some(c) => self.handle(c).await,
                    None => {
                        // The node dropped the handle: shut down now.
                        self.begin_close(Duration::ZERO, None);
                    }
                },
                _ = sleep_opt(wake) => {}
            }
            self.on_timers().await;
            if self.phase == RoomPhase::Closed {
                break;
            }
        }
        dec(&self.ctx.metrics.rooms_open);
        let _ = self.closed_tx.send(true);
        let _ = self.ctx.events.send(RoomEvent::Closed { room: self.cfg.id.clone() });
        tracing::info!(room = %self.cfg.id, hands = self.hands_played, "room closed");
    }

    async fn fund_house(&mut self) {
        if self.cfg.house_bankroll.0 == 0 {
            return;
        }
        if let Some(g) = &self.ctx.grants {
            let Ok(key) = claw_chips::IdempotencyKey::new(format!(
                "bankroll/{}/{}",
                self.cfg.id, self.cfg.house_bankroll
            )) else {
                return;
            };
            match g.grant(&key, &self.house, self.cfg.house_bankroll, "house bankroll").await {
                Ok(b) => tracing::info!(room = %self.cfg.id, balance = %b, "house bankroll granted"),
                Err(e) => tracing::error!(room = %self.cfg.id, error = %e, "house bankroll grant failed"),
            }
        }
    }

    fn next_wake(&self) -> Option<Instant> {
        let mut w: Option<Instant> = None;
        let mut at = |t: Option<Instant>| {
            if let Some(t) = t {
                w = Some(w.map_or(t, |x| x.min(t)));
            }
        };
        if let Some(h) = &self.hand {
            at(h.seed_deadline);
            at(h.action.as_ref().map(|a| a.deadline));
        }
        at(self.next_hand_at);
        for p in self.players.values() {
            at(p.disconnected_at.map(|t| t + self.cfg.reconnect_window));
        }
        for d in &self.deferred {
            at(d.at);
        }
        at(self.closing.as_ref().map(|c| c.0));
        w
    }

    async fn on_timers(&mut self) {
        let now = Instant::now();
        // Reconnect windows.
        let expired: Vec<PlayerId> = self
            .players
            .values()
            .filter(|p| p.disconnected_at.is_some_and(|t| t + self.cfg.reconnect_window <= now))
            .map(|p| p.id)
            .collect();
        for id in expired {
            tracing::info!(room = %self.cfg.id, player = %id.short(), "reconnect window over: player left");
            self.remove_player(&id, false);
        }
        // Deferred reveals.
        let due: Vec<usize> =
            (0..self.deferred.len()).filter(|i| self.deferred[*i].at.is_some_and(|t| t <= now)).collect();
        for i in due.into_iter().rev() {
            let d = self.deferred.remove(i);
            self.publish_reveal(d);
        }
        // Hand timers.
        if self.hand.as_ref().is_some_and(|h| h.seed_deadline.is_some_and(|t| t <= now)) {
            self.start_dealing().await;
        }
        let timeout =
            self.hand.as_ref().and_then(|h| h.action.as_ref()).filter(|a| a.deadline <= now).map(|a| a.seat);
        if let Some(seat) = timeout {
            self.timeout_action(seat).await;
        }
        // Shutdown grace.
        if self.closing.as_ref().is_some_and(|c| c.0 <= now) {
            if self.hand.is_some() {
                self.void_hand("the dealer is shutting down").await;
            }
            self.finish_close();
            return;
        }
        if self.closing.is_some() && self.hand.is_none() {
            self.finish_close();
            return;
        }
        if self.next_hand_at.is_some_and(|t| t <= now) {
            self.next_hand_at = None;
            self.maybe_start_hand().await;
        }
    }

    async fn handle(&mut self, cmd: RoomCmd) {
        match cmd {
            RoomCmd::Connect { verified, conn, reply } => {
                let r = self.connect(*verified, conn);
                let _ = reply.send(r);
            }
            RoomCmd::Ready { conn } => self.ready(conn),
            RoomCmd::Message { conn, msg, at } => self.message(conn, *msg, at).await,
            RoomCmd::Closed { conn } => self.conn_closed(conn),
            RoomCmd::Shutdown { grace, done } => self.begin_close(grace, Some(done)),
            RoomCmd::Inspect { reply } => {
                let _ = reply.send(self.snapshot());
            }
            RoomCmd::Hold(h) => {
                self.hold = h;
                if !h {
                    self.schedule_start();
                }
            }
        }
    }

    fn snapshot(&self) -> RoomSnapshot {
        RoomSnapshot {
            phase: self.phase,
            hands_played: self.hands_played,
            hands_voided: self.hands_voided,
            players: self.table_players(),
        }
    }

    // ----- connections ---------------------------------------------------

    fn connect(&mut self, v: VerifiedPlayer, conn: ConnTx) -> Result<Admit, RejectReason> {
        if self.closing.is_some() || self.phase == RoomPhase::Closed {
            return Err(RejectReason::Refused);
        }
        let id = v.player.signing;
        let now = Instant::now();
        if let Some(p) = self.players.get_mut(&id) {
            let token_ok = v.reconnect_token.is_some_and(|t| player::ct_eq(&t, &p.token));
            if !token_ok || p.left {
                // The seat is held for the session that owns the token.
                tracing::warn!(room = %self.cfg.id, player = %id.short(), "connection without the session's reconnect token refused");
                return Err(RejectReason::Refused);
            }
            if p.encryption_key != v.player.encryption {
                return Err(RejectReason::Refused);
            }
            // Resume: the new connection replaces the old one.
            if let Some(old) = p.conn.take() {
                self.conns.remove(&old.id);
                if let Some(f) = encode(&ServerMessage::Kicked(Kicked {
                    code: KickReason::Replaced,
                    reason: "another connection resumed this session".into(),
                })) {
                    old.send(f);
                }
                old.close(1000, "replaced");
            } else {
                inc(&self.ctx.metrics.players_connected);
            }
            p.key = v.shared_key;
            p.disconnected_at = None;
            p.conn = Some(conn.clone());
            p.resend_pending = true;
            p.bucket = TokenBucket::new(self.ctx.limits.rate_per_sec, self.ctx.limits.rate_burst, now);
            self.conns.insert(conn.id, id);
            tracing::info!(room = %self.cfg.id, player = %id.short(), seat = ?p.seat, "player reconnected");
            return Ok(Admit { seat: p.seat, token: p.token });
        }
        if self.players.len()
            >= self.ctx.limits.max_connections.min(usize::from(self.cfg.max_players) * 8 + 64)
        {
            return Err(RejectReason::Busy);
        }
        let token = Nonce::random(&mut self.rng);
        let mut p = Player::new(&v, conn.clone(), token, &self.ctx.limits, now);
        p.credit_score = self.credit.get(&id).copied().unwrap_or(p.credit_score);
        self.players.insert(id, p);
        self.conns.insert(conn.id, id);
        inc(&self.ctx.metrics.players_connected);
        tracing::info!(room = %self.cfg.id, player = %id.short(), sdk = %v.sdk_version, "player connected");
        Ok(Admit { seat: None, token })
    }

    fn ready(&mut self, conn: ConnId) {
        let Some(id) = self.conns.get(&conn).copied() else { return };
        let resend =
            self.players.get_mut(&id).map(|p| std::mem::take(&mut p.resend_pending)).unwrap_or(false);
        if !resend {
            return;
        }
        // Re-send the hand so far (its sealed cards included) and, if it is
        // the player's turn, the turn.
        let Some(h) = &self.hand else { return };
        let Some(seat) = h.hand.seat_of(&id) else { return };
        let frames: Vec<Utf8Bytes> = h
            .hand
            .transcript()
            .events
            .iter()
            .filter_map(|e| encode(&ServerMessage::Event(e.clone())))
            .collect();
        let turn = h
            .action
            .as_ref()
            .filter(|a| a.seat == seat)
            .map(|a| ServerMessage::YourTurn(h.hand.your_turn(seat, a.deadline_ms)));
        for f in frames {
            self.send_frame(&id, f);
        }
        if let Some(t) = turn {
            self.send(&id, &t);
        }
    }

    fn conn_closed(&mut self, conn: ConnId) {
        let Some(id) = self.conns.remove(&conn) else { return };
        let in_hand = self.in_hand(&id);
        let Some(p) = self.players.get_mut(&id) else { return };
        if p.conn.as_ref().map(|c| c.id) != Some(conn) {
            return;
        }
        p.conn = None;
        dec(&self.ctx.metrics.players_connected);
        if p.seat.is_none() && !in_hand {
            self.players.remove(&id);
            tracing::info!(room = %self.cfg.id, player = %id.short(), "player disconnected (not seated)");
            return;
        }
        p.disconnected_at = Some(Instant::now());
        tracing::info!(room = %self.cfg.id, player = %id.short(), "player disconnected; seat held for the reconnect window");
    }

    /// Sends `msg` to a player's current connection.
    fn send(&mut self, id: &PlayerId, msg: &ServerMessage) {
        if let Some(f) = encode(msg) {
            self.send_frame(id, f);
        }
    }

    fn send_frame(&mut self, id: &PlayerId, f: Utf8Bytes) {
        let failed = match self.players.get(id).and_then(|p| p.conn.as_ref()) {
            Some(c) => !c.send(f),
            None => false,
        };
        if failed {
            // Queue full (a peer that does not read) or gone: drop the connection.
            if let Some(c) = self.players.get(id).and_then(|p| p.conn.clone()) {
                tracing::warn!(room = %self.cfg.id, player = %id.short(), "send queue full or closed: dropping connection");
                c.close(1008, "too slow");
                self.conn_closed(c.id);
            }
        }
    }

    fn error_to(&mut self, id: &PlayerId, code: ErrorCode, message: impl Into<String>) {
        self.send(id, &ServerMessage::Error(ErrorMsg { code, message: message.into() }));
    }

    // ----- messages ------------------------------------------------------

    async fn message(&mut self, conn: ConnId, msg: ClientMessage, at: Instant) {
        let Some(id) = self.conns.get(&conn).copied() else { return };
        if self.players.get(&id).and_then(|p| p.conn.as_ref()).map(|c| c.id) != Some(conn) {
            return; // a stale connection of a resumed session
        }
        // Actions on the player's turn and seeds asked for are paced by the
        // dealer and cost no token when accepted (a refusal costs one, so a
        // player spamming bad signatures on its turn runs dry); everything
        // else draws on the rate limit.
        let expected = match &msg {
            ClientMessage::Action(a) => self.hand.as_ref().is_some_and(|h| {
                h.action.as_ref().is_some_and(|t| h.players.get(t.seat.index()) == Some(&id))
                    && a.hand_id == h.hand.hand_id()
            }),
            ClientMessage::PlayerSeed(s) => self.hand.as_ref().is_some_and(|h| {
                h.hand.collecting_seeds() && h.hand.hand_id() == s.hand_id && h.hand.seat_of(&id).is_some()
            }),
            _ => false,
        };
        let allowed = if expected { self.has_token(&id, at) } else { self.take_token(&id, at) };
        if !allowed {
            self.rate_limited(&id, &msg);
            return;
        }
        if let Some(p) = self.players.get_mut(&id) {
            p.limited_in_a_row = 0;
        }
        match msg {
            ClientMessage::JoinRequest(j) => self.join(&id, j).await,
            ClientMessage::PlayerSeed(s) => self.player_seed(&id, s).await,
            ClientMessage::Action(a) => self.player_action(&id, a, at).await,
            ClientMessage::Query(q) => self.query(&id, q).await,
            ClientMessage::SitOut => self.sit_out(&id, true),
            ClientMessage::SitIn => {
                self.sit_out(&id, false);
                self.schedule_start();
            }
            ClientMessage::Leave => self.leave(&id).await,
            ClientMessage::Hello(_) | ClientMessage::Response(_) => {
                self.error_to(&id, ErrorCode::NotAllowed, "the handshake is already done")
            }
        }
    }

    fn has_token(&mut self, id: &PlayerId, at: Instant) -> bool {
        self.players.get_mut(id).is_some_and(|p| p.bucket.has_token(at))
    }

    pub(super) fn take_token(&mut self, id: &PlayerId, at: Instant) -> bool {
        self.players.get_mut(id).is_some_and(|p| p.bucket.try_take(at))
    }

    fn rate_limited(&mut self, id: &PlayerId, msg: &ClientMessage) {
        inc(&self.ctx.metrics.rate_limited);
        let reply = match msg {
            ClientMessage::Query(q) => ServerMessage::QueryError(claw_protocol::messages::QueryError {
                nonce: q.nonce.clone(),
                error: claw_protocol::messages::QueryErrorCode::RateLimited,
                message: "too many messages".into(),
            }),
            ClientMessage::Action(a) => {
                ServerMessage::ActionRejected(claw_protocol::messages::ActionRejected {
                    hand_id: a.hand_id,
                    seq: a.seq,
                    code: claw_protocol::messages::ActionRejectCode::RateLimited,
                    reason: "too many messages".into(),
                })
            }
            _ => ServerMessage::Error(ErrorMsg {
                code: ErrorCode::RateLimited,
                message: "too many messages".into(),
            }),
        };
        self.send(id, &reply);
        let close_after = self.ctx.limits.flood_close_after;
        let flood = self.players.get_mut(id).is_some_and(|p| {
            p.limited_in_a_row += 1;
            p.limited_in_a_row > close_after
        });
        if flood {
            tracing::warn!(room = %self.cfg.id, player = %id.short(), "flood: closing the connection");
            self.kick_conn(id, KickReason::ProtocolViolation, "too many messages");
        }
    }

    /// Sends `kicked` and closes the player's connection (the seat follows
    /// the disconnect rules).
    fn kick_conn(&mut self, id: &PlayerId, code: KickReason, reason: &str) {
        self.send(id, &ServerMessage::Kicked(Kicked { code, reason: reason.to_owned() }));
        if let Some(c) = self.players.get(id).and_then(|p| p.conn.clone()) {
            c.close(1008, reason);
            self.conn_closed(c.id);
        }
    }

    async fn join(&mut self, id: &PlayerId, j: JoinRequest) {
        let refuse = |reason: JoinRejectReason, message: &str| {
            ServerMessage::JoinResponse(JoinResponse {
                accepted: false,
                reason: Some(reason),
                message: Some(message.to_owned()),
                seat: None,
                room: None,
                players: Vec::new(),
            })
        };
        if let Some(n) = &j.name {
            if let Some(p) = self.players.get_mut(id) {
                p.name = Some(n.clone());
            }
        }
        let already = self.players.get(id).and_then(|p| p.seat);
        if already.is_none() {
            if self.closing.is_some() {
                return self.send(id, &refuse(JoinRejectReason::RoomClosed, "the room is closing"));
            }
            let free: Vec<usize> = (0..self.seats.len()).filter(|i| self.seats[*i].is_none()).collect();
            if free.is_empty() {
                return self.send(id, &refuse(JoinRejectReason::RoomFull, "every seat is taken"));
            }
            let account = AccountId::from(*id);
            self.welcome(&account).await;
            let balance = match self.ctx.desk.balance(&account).await {
                Ok(b) => b,
                Err(e) => {
                    inc(&self.ctx.metrics.chip_errors);
                    tracing::warn!(room = %self.cfg.id, error = %e, "balance check failed");
                    return self
                        .send(id, &refuse(JoinRejectReason::Other, "the chip service is unavailable"));
                }
            };
            let need = self.cfg.buy_in.max(j.buy_in.unwrap_or_default()).max(self.min_balance());
            if balance < need {
                let m = format!("balance {balance} is below the {need} this room needs");
                return self.send(id, &refuse(JoinRejectReason::InsufficientBalance, &m));
            }
            let want = j.seat.map(|s| s.index()).filter(|s| free.contains(s));
            let seat = want.unwrap_or(free[0]);
            self.seats[seat] = Some(*id);
            if let Some(p) = self.players.get_mut(id) {
                p.seat = Some(Seat(seat as u8));
                p.balance = balance;
            }
            inc(&self.ctx.metrics.players_seated);
            tracing::info!(room = %self.cfg.id, player = %id.short(), seat, "player seated");
        }
        let seat = self.players.get(id).and_then(|p| p.seat);
        let resp = ServerMessage::JoinResponse(JoinResponse {
            accepted: true,
            reason: None,
            message: self
                .hand
                .as_ref()
                .filter(|h| h.hand.seat_of(id).is_none())
                .map(|_| "a hand is running: you play from the next one".to_owned()),
            seat,
            room: Some(self.cfg.public()),
            players: self.table_players(),
        });
        self.send(id, &resp);
        self.schedule_start();
    }

    async fn welcome(&self, account: &AccountId) {
        let (Some(g), amount) = (&self.ctx.grants, self.ctx.welcome_grant) else { return };
        if amount.0 == 0 || !self.ctx.welcomed.lock().await.insert(account.clone()) {
            return;
        }
        let Ok(key) = claw_chips::IdempotencyKey::new(format!("welcome/{account}")) else { return };
        match self.ctx.desk.balance(account).await {
            Ok(b) if b < amount => {
                if let Err(e) = g.grant(&key, account, amount, "welcome chips").await {
                    tracing::warn!(error = %e, "welcome grant failed");
                }
            }
            _ => {}
        }
    }

    /// Chips a player needs for a hand: commission plus the minimum bet (at
    /// least one chip).
    fn min_balance(&self) -> Chips {
        Chips(self.cfg.commission.0.saturating_add(self.cfg.min_bet.0.max(1)))
    }

    fn sit_out(&mut self, id: &PlayerId, out: bool) {
        if let Some(p) = self.players.get_mut(id) {
            p.sit_out = out;
        }
    }

    async fn leave(&mut self, id: &PlayerId) {
        let in_hand = self.hand.as_ref().is_some_and(|h| h.hand.seat_of(id).is_some() && !h.hand.is_over());
        tracing::info!(room = %self.cfg.id, player = %id.short(), in_hand, "player leaves");
        self.remove_player(id, true);
        // If the hand waits for this player, act for it now.
        let seat = self.hand.as_ref().and_then(|h| {
            h.action.as_ref().filter(|a| h.players.get(a.seat.index()) == Some(id)).map(|a| a.seat)
        });
        if let Some(seat) = seat {
            self.timeout_action(seat).await;
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
            dec(&self.ctx.metrics.players_seated);
        }
        p.disconnected_at = None;
        p.left = true;
        if close_conn {
            if let Some(c) = p.conn.take() {
                self.conns.remove(&c.id);
                dec(&self.ctx.metrics.players_connected);
                c.close(1000, "left");
            }
        }
        if !in_hand && p.conn.is_none() {
            self.players.remove(id);
        }
    }

    fn in_hand(&self, id: &PlayerId) -> bool {
        self.hand.as_ref().is_some_and(|h| h.hand.seat_of(id).is_some())
    }

    fn status_of(&self, p: &Player) -> PlayerStatus {
        if p.left {
            PlayerStatus::Left
        } else if p.conn.is_none() {
            PlayerStatus::Disconnected
        } else if self.in_hand(&p.id) && !self.hand.as_ref().is_some_and(|h| h.hand.is_over()) {
            PlayerStatus::Playing
        } else if p.seat.is_none() {
            PlayerStatus::Joined
        } else if p.sit_out {
            PlayerStatus::SitOut
        } else {
            PlayerStatus::Seated
        }
    }

    fn table_players(&self) -> Vec<claw_protocol::messages::TablePlayer> {
        let mut v: Vec<_> = self
            .players
            .values()
            .filter(|p| !p.left)
            .map(|p| claw_protocol::messages::TablePlayer {
                id: p.id,
                name: p.name.clone(),
                seat: p.seat,
                status: self.status_of(p),
                chips: p.balance,
            })
            .collect();
        v.sort_by_key(|p| (p.seat.map_or(u16::MAX, |s| u16::from(s.0)), p.id));
        v
    }

    // ----- shutdown --------------------------------------------------------

    fn begin_close(&mut self, grace: Duration, done: Option<oneshot::Sender<()>>) {
        let deadline = Instant::now() + grace;
        match &mut self.closing {
            Some((at, waiters)) => {
                *at = (*at).min(deadline);
                waiters.extend(done);
            }
            None => {
                tracing::info!(room = %self.cfg.id, "room closing: no new hands");
                self.closing = Some((deadline, done.into_iter().collect()));
                self.next_hand_at = None;
            }
        }
    }

    fn finish_close(&mut self) {
        for d in std::mem::take(&mut self.deferred) {
            self.publish_reveal(d);
        }
        let ids: Vec<PlayerId> = self.players.keys().copied().collect();
        for id in ids {
            self.send(
                &id,
                &ServerMessage::Kicked(Kicked {
                    code: KickReason::RoomClosed,
                    reason: "the room closed".into(),
                }),
            );
            if let Some(p) = self.players.get_mut(&id) {
                if let Some(c) = p.conn.take() {
                    c.close(1001, "room closed");
                    dec(&self.ctx.metrics.players_connected);
                }
                if p.seat.take().is_some() {
                    dec(&self.ctx.metrics.players_seated);
                }
            }
        }
        self.players.clear();
        self.conns.clear();
        self.phase = RoomPhase::Closed;
        if let Some((_, waiters)) = self.closing.take() {
            for w in waiters {
                let _ = w.send(());
            }
        }
    }
}

use claw_protocol::Chips;

async fn sleep_opt(at: Option<Instant>) {
    match at {
        Some(t) => tokio::time::sleep_until(t).await,
        None => std::future::pending().await,
    }
}
