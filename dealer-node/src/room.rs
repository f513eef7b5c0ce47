//! The room driver: one tokio task per room that feeds its sans-IO
//! [`RoomCore`] (in `claw-engine`) with commands from connections, timer
//! expiries and effect completions, and runs the effects the core returns.
//!
//! Effects run concurrently with the room: balance lookups (queries, joins)
//! each in their own task; a hand's chip moves, settlement and refunds in
//! order through the room's ledger worker (the chip journal and idempotency
//! keys live there); archive writes in order through the archive worker.
//! Completions come back as [`Input`]s in whatever order they finish, so a
//! slow chip provider never delays another player's query or a timer.
//!
//! Two effects are barriers: a finished hand's archive write
//! ([`ArchiveWrite::Hand`]) and its settlement ([`ChipCall::Settle`]). The
//! core queues the hand's end (`game-end`) after them, and the driver runs
//! no effect queued after a barrier until the barrier has completed (the
//! room keeps taking commands meanwhile; their effects wait in order). So
//! a hand every player saw end is on file and paid whenever the process
//! dies: a crash before then refunds it at the next start and sets its file
//! aside as voided (see [`crate::chips::recover`]).

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use claw_chips::ledger::welcome::{Decision, GrantLine};
use claw_chips::ledger::{Job, Ledger, MoveFailure, Outcome};
use claw_chips::{AccountId, ChipError, HandRef, IdempotencyKey};
use claw_engine::room::{
    Account, ArchiveWrite, Archived, ChipCall, ChipFailure, ChipOutcome, Effect, EffectId, Input, Now,
    RoomCore, MAX_HAND_STAKE,
};
use claw_engine::GameSpec;
use claw_protocol::handshake::VerifiedPlayer;
use claw_protocol::messages::{ClientMessage, RawJson, ServerMessage};
use claw_protocol::{HandId, Identity};
use rand::rngs::OsRng;
use tokio::sync::{broadcast, mpsc, oneshot, watch};
use tokio::time::Instant;
use tokio_tungstenite::tungstenite::Utf8Bytes;

use crate::archive::{Archive, HandKey};
use crate::chips::{ChipDesk, Grants, LedgerIo, WelcomeDesk};
use crate::config::{Limits, RoomConfig};
use crate::conn::{ConnId, ConnTx, Queued, TOO_SLOW};
use crate::metrics::{inc, Metrics};

pub use claw_engine::room::{Admit, Refusal, RoomEvent, RoomSnapshot};

/// Longest a balance lookup for a query may take: the protocol's answer time.
const QUERY_TIMEOUT: Duration = Duration::from_millis(claw_protocol::limits::QUERY_ANSWER_MS);

/// What the node shares with every room.
pub struct NodeContext {
    /// The dealer's identity (signs every event).
    pub dealer: Arc<Identity>,
    /// Chip calls with timeouts and retries.
    pub desk: ChipDesk,
    /// Operator grants (welcome chips, house bankroll) when the provider has them.
    pub grants: Option<Arc<dyn Grants>>,
    /// Welcome grants and their budgets, recorded in the data directory
    /// (none: the node grants no welcome chips).
    pub welcome: Option<WelcomeDesk>,
    /// Counters for `/metrics`.
    pub metrics: Arc<Metrics>,
    /// Chips held per account by voided hands awaiting their refund.
    pub held: Arc<crate::chips::HeldChips>,
    /// Chips per account out in running hands (grants add them to balances).
    pub staked: Arc<crate::chips::StakedChips>,
    /// Transcripts and journals go here.
    pub data_dir: PathBuf,
    /// Connection, rate and chip-call limits.
    pub limits: Limits,
    /// Finished and voided hands, for the demo summary and tests.
    pub events: broadcast::Sender<RoomEvent>,
    /// Bans and freezes of identities (checked at the handshake, applied
    /// by every room).
    pub sanctions: Arc<crate::sanctions::Sanctions>,
    /// House-AI seats: the integrator's AI players and the account that
    /// pays them (none: rooms asking for AIs are refused them).
    pub ai: Option<crate::ai::HouseAi>,
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
        reply: oneshot::Sender<Result<Admit, Refusal>>,
    },
    /// `accepted` was sent on `conn`.
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
    /// The ban or freeze that now applies to `player` (none: lifted).
    Bar {
        /// The identity.
        player: claw_protocol::PlayerId,
        /// What applies.
        bar: Option<claw_engine::room::Bar>,
    },
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

fn now() -> Now {
    Now { at: std::time::Instant::now(), unix_ms: unix_ms() }
}

/// Encodes a message as a frame; `None` (logged) if it cannot be encoded.
pub fn encode(msg: &ServerMessage) -> Option<Utf8Bytes> {
    claw_engine::room::encode(msg).map(|f| Utf8Bytes::from(f.to_string()))
}

/// Why a room could not start.
#[derive(Debug, thiserror::Error)]
pub enum RoomStartError {
    /// The game spec could not be built.
    #[error(transparent)]
    Engine(#[from] claw_engine::EngineError),
    /// The public config could not be encoded.
    #[error("room config: {0}")]
    Encode(#[from] claw_protocol::messages::EncodeError),
    /// The house account id is not valid.
    #[error("house account: {0}")]
    Account(String),
}

/// Starts a room task; returns its handle.
pub fn spawn_room(
    cfg: RoomConfig,
    game: Arc<dyn claw_games::DynGame>,
    ctx: Arc<NodeContext>,
) -> Result<RoomHandle, RoomStartError> {
    let spec = Arc::new(GameSpec::new(
        cfg.id.clone(),
        game,
        cfg.settings.clone(),
        cfg.entropy,
        cfg.reveal,
        u64::try_from(cfg.seed_timeout.as_millis()).unwrap_or(u64::MAX),
    )?);
    let public_config = claw_engine::room::public_config(&cfg)?;
    let house =
        AccountId::new(format!("house:{}", cfg.id)).map_err(|e| RoomStartError::Account(e.to_string()))?;
    let cfg = Arc::new(cfg);
    let (tx, rx) = mpsc::channel(4096);
    let (closed_tx, closed) = watch::channel(false);
    let archive = match Archive::open(&ctx.data_dir, &cfg.id) {
        Ok(a) => Some(a),
        Err(e) => {
            tracing::error!(room = %cfg.id, error = %e, "transcript archive unavailable");
            None
        }
    };
    let first_hand_number = archive.as_ref().map_or(0, Archive::next_hand_number);
    let left_pending = archive.as_ref().map(Archive::pending).unwrap_or_default();
    let (done_tx, done_rx) = mpsc::unbounded_channel();
    tracing::info!(room = %cfg.id, first_hand_number, "room starts; hand numbers continue from the archive");
    let (ledger_tx, ledger_rx) = mpsc::unbounded_channel();
    let (archive_tx, archive_rx) = mpsc::unbounded_channel();
    let accounts = Accounts {
        house: house.clone(),
        house_bank: claw_engine::room::config::has_house(&cfg.game),
        dealer: ctx.desk.dealer_account.clone(),
    };
    tokio::spawn(ledger_worker(
        cfg.id.clone(),
        Arc::clone(&ctx),
        accounts.clone(),
        ledger_rx,
        done_tx.clone(),
    ));
    tokio::spawn(archive_worker(archive, archive_rx, done_tx.clone()));
    let mut core = RoomCore::new(
        now(),
        Arc::clone(&cfg),
        spec,
        Arc::clone(&ctx.dealer),
        ctx.limits.clone(),
        Arc::clone(&ctx.metrics),
        Box::new(OsRng),
    );
    core.continue_from(first_hand_number);
    core.publish_left_pending(left_pending);
    let at = now();
    for s in ctx.sanctions.list(at.unix_ms) {
        if let Some(bar) = ctx.sanctions.bar_of(&s.player, at.unix_ms) {
            core.handle(at, Input::Bar { player: s.player, bar: Some(bar) });
        }
    }
    let driver = Driver {
        core,
        ctx,
        accounts,
        conns: HashMap::new(),
        done_tx,
        ledger_tx,
        archive_tx,
        first_hand_number,
        barrier: None,
        waiters: Vec::new(),
        closed_tx,
    };
    let handle = RoomHandle { id: cfg.id.clone(), config: cfg, public_config, tx, closed };
    let task = tokio::spawn(driver.run(rx, done_rx));
    let id = handle.id.clone();
    tokio::spawn(async move {
        // A bug in a room ends that room only; say so loudly.
        if let Err(e) = task.await {
            tracing::error!(severity = crate::metrics::CRITICAL, room = %id, error = %e, "room task failed; the room is closed");
        }
    });
    Ok(handle)
}

/// The chip accounts behind the core's [`Account`]s.
#[derive(Clone)]
struct Accounts {
    house: AccountId,
    /// The game has a house bank (`house`) that stakes like a player in a
    /// provider that settles per hand.
    house_bank: bool,
    dealer: AccountId,
}

impl Accounts {
    fn of(&self, a: Account) -> AccountId {
        match a {
            Account::Player(p) => AccountId::from(p),
            Account::House => self.house.clone(),
            Account::Dealer => self.dealer.clone(),
        }
    }
}

/// A room task's state: the core and where its effects go.
struct Driver {
    core: RoomCore,
    ctx: Arc<NodeContext>,
    accounts: Accounts,
    conns: HashMap<ConnId, ConnTx>,
    done_tx: mpsc::UnboundedSender<Input>,
    ledger_tx: mpsc::UnboundedSender<LedgerJob>,
    archive_tx: mpsc::UnboundedSender<(EffectId, ArchiveWrite)>,
    /// The number of this run's first hand (the core numbers hands from it).
    first_hand_number: u64,
    /// A barrier effect in flight: no later effect runs until it completes.
    barrier: Option<EffectId>,
    waiters: Vec<oneshot::Sender<()>>,
    closed_tx: watch::Sender<bool>,
}

impl Driver {
    async fn run(mut self, mut rx: mpsc::Receiver<RoomCmd>, mut done: mpsc::UnboundedReceiver<Input>) {
        self.run_effects();
        while !self.core.is_closed() {
            let wake = self.core.poll_timeout();
            tokio::select! {
                cmd = rx.recv() => match cmd {
                    Some(c) => self.command(c),
                    // The node dropped the handle: shut down now.
                    None => self.core.handle(now(), Input::Shutdown { grace: Duration::ZERO }),
                },
                Some(input) = done.recv() => self.completed(input),
                _ = sleep_opt(wake) => self.core.handle_timeout(now()),
            }
            self.run_effects();
        }
        // Effects held behind a barrier still run (the last frames, closes).
        while self.barrier.is_some() {
            match done.recv().await {
                Some(input) => self.completed(input),
                None => break,
            }
            self.run_effects();
        }
        for w in self.waiters.drain(..) {
            let _ = w.send(());
        }
        let _ = self.closed_tx.send(true);
    }

    /// A completed effect: releases the barrier it was, feeds the core.
    fn completed(&mut self, input: Input) {
        let id = match &input {
            Input::Chips { id, .. } | Input::Archived { id, .. } => Some(*id),
            _ => None,
        };
        if id.is_some() && id == self.barrier {
            self.barrier = None;
        }
        self.core.handle(now(), input);
    }

    fn command(&mut self, cmd: RoomCmd) {
        match cmd {
            RoomCmd::Connect { verified, conn, reply } => {
                let r = self.core.connect(now(), conn.id, &verified);
                if r.is_ok() {
                    self.conns.insert(conn.id, conn);
                }
                let _ = reply.send(r);
            }
            RoomCmd::Ready { conn } => self.core.handle(now(), Input::Ready(conn)),
            RoomCmd::Message { conn, msg, at } => {
                self.core.handle(now(), Input::Message { conn, msg, at: at.into_std() })
            }
            RoomCmd::Closed { conn } => {
                self.conns.remove(&conn);
                self.core.handle(now(), Input::Disconnected(conn));
            }
            RoomCmd::Shutdown { grace, done } => {
                self.waiters.push(done);
                self.core.handle(now(), Input::Shutdown { grace });
            }
            RoomCmd::Inspect { reply } => {
                let _ = reply.send(self.core.snapshot());
            }
            RoomCmd::Hold(h) => self.core.handle(now(), Input::Hold(h)),
            RoomCmd::Bar { player, bar } => self.core.handle(now(), Input::Bar { player, bar }),
        }
    }

    /// Runs every queued effect up to a barrier; none of them waits.
    fn run_effects(&mut self) {
        while self.barrier.is_none() {
            let Some(e) = self.core.poll_effect() else { break };
            match e {
                Effect::Send { to, frame } => {
                    let f = Utf8Bytes::from(frame.to_string());
                    for conn in to {
                        let Some(c) = self.conns.get(&conn) else { continue };
                        let q = c.send(f.clone());
                        if q.kept() {
                            if q == Queued::FellBehind {
                                inc(&self.ctx.metrics.send_behind);
                            }
                            continue;
                        }
                        if q == Queued::TooSlow {
                            // Behind past the grace: only this connection goes.
                            inc(&self.ctx.metrics.send_too_slow);
                            tracing::warn!(room = %self.core.id(), conn, "reader behind its send budget past the grace: closing (too slow)");
                            c.close(1008, TOO_SLOW);
                        }
                        self.conns.remove(&conn);
                        self.core.handle(now(), Input::Disconnected(conn));
                    }
                }
                Effect::Close { conn, code, reason } => {
                    if let Some(c) = self.conns.remove(&conn) {
                        c.close(code, &reason);
                    }
                }
                Effect::Chips { id, call } => match call {
                    ChipCall::Balance(_)
                    | ChipCall::Status(_)
                    | ChipCall::JoinBalance(_)
                    | ChipCall::FundHouse(_) => {
                        let (ctx, done, accounts) =
                            (Arc::clone(&self.ctx), self.done_tx.clone(), self.accounts.clone());
                        let room = self.core.id().to_owned();
                        tokio::spawn(async move {
                            let outcome = lookup(&ctx, &accounts, &room, call).await;
                            let _ = done.send(Input::Chips { id, outcome });
                        });
                    }
                    call => {
                        let hand_number = match &call {
                            ChipCall::OpenHand { .. } => {
                                // The number the forming hand will be dealt under.
                                let s = self.core.snapshot();
                                Some(self.first_hand_number + s.hands_played + s.hands_voided)
                            }
                            ChipCall::Settle { .. } => {
                                self.barrier = Some(id);
                                None
                            }
                            _ => None,
                        };
                        let _ = self.ledger_tx.send(LedgerJob { id, call, hand_number });
                    }
                },
                Effect::Archive { id, write } => {
                    if let ArchiveWrite::Hand { .. } = &write {
                        self.barrier = Some(id);
                    }
                    let _ = self.archive_tx.send((id, write));
                }
                Effect::Ai { id, start } => {
                    let (ctx, done) = (Arc::clone(&self.ctx), self.done_tx.clone());
                    let room = self.core.id().to_owned();
                    tokio::spawn(async move {
                        let outcome = crate::ai::start_ai(&ctx, &room, start).await;
                        let _ = done.send(Input::Ai { id, outcome });
                    });
                }
                Effect::Report(e) => {
                    if let RoomEvent::HandFinished { players, net, .. } = &e {
                        self.ctx.metrics.conduct.settled(players, net);
                    }
                    let _ = self.ctx.events.send(e);
                }
            }
        }
    }
}

/// Balance lookups and grants: each in its own task.
async fn lookup(ctx: &NodeContext, accounts: &Accounts, room: &str, call: ChipCall) -> ChipOutcome {
    match call {
        ChipCall::Balance(p) => {
            let account = AccountId::from(p);
            match tokio::time::timeout(QUERY_TIMEOUT, ctx.desk.balance(&account)).await {
                Ok(r) => ChipOutcome::Balance(r.map_err(failure)),
                Err(_) => ChipOutcome::Balance(Err(ChipFailure::Timeout)),
            }
        }
        ChipCall::Status(p) => {
            let account = AccountId::from(p);
            let balance = match tokio::time::timeout(QUERY_TIMEOUT, ctx.desk.balance(&account)).await {
                Ok(r) => r.map_err(failure),
                Err(_) => Err(ChipFailure::Timeout),
            };
            ChipOutcome::Status { balance, held: ctx.held.of(&account) }
        }
        ChipCall::JoinBalance(p) => {
            let account = AccountId::from(p);
            welcome(ctx, &account).await;
            day_grants(ctx, &account).await;
            ChipOutcome::Balance(ctx.desk.balance(&account).await.map_err(failure))
        }
        // Once per room, whatever the amount: a new amount does not grant again.
        ChipCall::FundHouse(amount) => {
            let Some(g) = &ctx.grants else { return ChipOutcome::Done(Err("no operator grants".into())) };
            let key = match IdempotencyKey::new(format!("bankroll/{room}")) {
                Ok(k) => k,
                Err(e) => return ChipOutcome::Done(Err(e.to_string())),
            };
            ChipOutcome::Done(
                g.grant(&key, &accounts.house, amount, "house bankroll")
                    .await
                    .map(|_| ())
                    .map_err(|e| e.to_string()),
            )
        }
        _ => ChipOutcome::Done(Err("not a lookup".into())),
    }
}

fn failure(e: ChipError) -> ChipFailure {
    if e.is_retryable() {
        ChipFailure::Unavailable(e.to_string())
    } else {
        ChipFailure::Refused(e.to_string())
    }
}

/// The welcome grant, once per account (key `welcome/<account>`), when its
/// balance is low and the node's budgets allow it; the grant is recorded
/// before it is asked for, so the budgets hold across restarts. Counted in
/// `/metrics`.
async fn welcome(ctx: &NodeContext, account: &AccountId) {
    let (Some(g), Some(w)) = (&ctx.grants, &ctx.welcome) else { return };
    if !w.claim(account) {
        return;
    }
    let Ok(key) = IdempotencyKey::new(format!("welcome/{account}")) else { return };
    let Ok(balance) = ctx.desk.balance(account).await else { return };
    let line = match w.decide(account, balance, unix_ms()) {
        Decision::Grant(line) => line,
        Decision::TotalUsedUp => {
            inc(&ctx.metrics.welcome_refused);
            tracing::warn!(account = %account, "welcome chips: the node's total is used up");
            return;
        }
        Decision::PeriodUsedUp => {
            inc(&ctx.metrics.welcome_refused);
            tracing::warn!(account = %account, "welcome chips: this period's limit is used up");
            return;
        }
        Decision::Already | Decision::NotLow => return,
    };
    let claw_chips::ledger::welcome::GrantLine::Grant { amount, .. } = line else { return };
    if let Err(e) = w.record(line.clone()).await {
        tracing::error!(account = %account, error = %e, "welcome chips: the grant could not be recorded; not granted");
        return;
    }
    match g.grant(&key, account, amount, "welcome chips").await {
        Ok(_) => {
            inc(&ctx.metrics.welcome_grants);
            ctx.metrics.welcome_chips.fetch_add(amount.0, std::sync::atomic::Ordering::Relaxed);
            tracing::info!(account = %account, %amount, "welcome chips granted");
        }
        // Refused for good: not counted. An unknown outcome stays counted
        // (the key makes a later grant of it a no-op).
        Err(e) if !e.is_retryable() => {
            tracing::warn!(error = %e, "welcome grant refused");
            w.refused(line).await;
        }
        Err(e) => tracing::warn!(error = %e, "welcome grant failed"),
    }
}

/// The daily grant, then the rescue grant (REQ-020a), each when its caps
/// allow it at this join: recorded before it is asked for (as the welcome
/// grant), then paid from the operator account in one atomic transfer keyed
/// `<kind>/<account>/<at_ms>`. A transfer the operator account cannot cover
/// is refused and not counted: the grants never create chips.
async fn day_grants(ctx: &NodeContext, account: &AccountId) {
    use claw_chips::ledger::welcome::GrantKind;
    let Some(w) = &ctx.welcome else { return };
    let Some(from) = w.funder() else { return };
    for kind in [GrantKind::Daily, GrantKind::Rescue] {
        let Ok(free) = ctx.desk.balance(account).await else { return };
        // The true balance: chips out in running hands anywhere on the node,
        // and those held for a pending refund, are the player's too.
        let balance = claw_protocol::Chips(
            free.0.saturating_add(ctx.staked.of(account).0).saturating_add(ctx.held.of(account).0),
        );
        let line = match w.decide_day(kind, account, balance, unix_ms()) {
            Decision::Grant(line) => line,
            Decision::PeriodUsedUp | Decision::TotalUsedUp => {
                inc(&ctx.metrics.welcome_refused);
                tracing::warn!(account = %account, grant = kind.name(), "grant: the node's budget for today is used up");
                continue;
            }
            Decision::Already | Decision::NotLow => continue,
        };
        if let Err(e) = w.record(line.clone()).await {
            tracing::error!(account = %account, error = %e, "grant could not be recorded; not granted");
            return;
        }
        pay_day_grant(ctx, w, from, line).await;
    }
}

/// Pays a recorded daily or rescue grant from `from` in one transfer keyed
/// `<kind>/<account>/<at_ms>`, and records `paid`, or `refused` (not
/// counted) when `from` cannot cover it. One left unanswered stays open in
/// the record and is asked again, same key, at the next start: the
/// provider applies a key once, so a grant is never paid twice.
async fn pay_day_grant(ctx: &NodeContext, w: &WelcomeDesk, from: &AccountId, line: GrantLine) {
    let GrantLine::Grant { grant: kind, account, amount, at_ms } = &line else { return };
    let Ok(key) = IdempotencyKey::new(format!("{}/{account}/{at_ms}", kind.name())) else { return };
    match ctx.desk.transfer(&key, from, account, *amount, &format!("{} chips", kind.name())).await {
        Ok(()) => {
            inc(&ctx.metrics.welcome_grants);
            ctx.metrics.welcome_chips.fetch_add(amount.0, std::sync::atomic::Ordering::Relaxed);
            tracing::info!(account = %account, %amount, grant = kind.name(), "grant paid from the operator account");
            if let Err(e) = w.paid(line.clone()).await {
                tracing::warn!(error = %e, "grant paid but not recorded as paid (a restart asks again: a no-op)");
            }
        }
        Err(e) if !e.is_retryable() => {
            inc(&ctx.metrics.welcome_refused);
            tracing::warn!(error = %e, grant = kind.name(), "grant refused (operator account)");
            w.refused(line.clone()).await;
        }
        Err(e) => {
            tracing::warn!(error = %e, grant = kind.name(), "grant unanswered; asked again at the next start (same key)")
        }
    }
}

/// At start: the daily and rescue grants a crash left between their record
/// and their outcome are asked again with their keys (paid once, or refused
/// and not counted).
pub(crate) async fn recover_grants(ctx: &NodeContext) {
    let Some(w) = &ctx.welcome else { return };
    let Some(from) = w.funder() else { return };
    for line in w.unsettled() {
        if let GrantLine::Grant { grant, account, .. } = &line {
            tracing::warn!(account = %account, grant = grant.name(), "a grant decided before a crash: asked again");
        }
        pay_day_grant(ctx, w, from, line).await;
    }
}

/// A chip call for the ledger worker; `hand_number` (with `OpenHand`) is
/// the number the hand will be dealt under, recorded in its journal.
struct LedgerJob {
    id: EffectId,
    call: ChipCall,
    hand_number: Option<u64>,
}

/// The room's chip ledger ([`claw_chips::ledger::Ledger`], sans-IO): its
/// jobs run in order, its effects through [`LedgerIo`]; work left after a
/// job's answer (a refund the provider did not answer, a journal the file
/// system refused to close) goes on here in the background.
async fn ledger_worker(
    room: String,
    ctx: Arc<NodeContext>,
    accounts: Accounts,
    mut rx: mpsc::UnboundedReceiver<LedgerJob>,
    done: mpsc::UnboundedSender<Input>,
) {
    let desk = ctx.desk.clone();
    let (mut io, mut completions) = LedgerIo::new(
        desk.clone(),
        &ctx.data_dir,
        Some(Arc::clone(&ctx.metrics)),
        Some(Arc::clone(&ctx.held)),
    );
    let mut ledger: Ledger<EffectId> = Ledger::new(desk.policy(), desk.settlement());
    let mut open = true;
    loop {
        // Before the calls start: a debit is counted before it can land.
        ctx.staked.set(&room, ledger.at_stake());
        io.run(&mut ledger);
        while let Some((id, outcome)) = ledger.poll_outcome() {
            let _ = done.send(Input::Chips { id, outcome: chip_outcome(outcome) });
        }
        if !open && ledger.is_idle() {
            ctx.staked.set(&room, Default::default());
            break;
        }
        let wake = ledger.poll_timeout();
        tokio::select! {
            job = rx.recv(), if open => match job {
                Some(LedgerJob { id, call, hand_number }) => match ledger_job(&room, &accounts, call, hand_number) {
                    Ok(job) => ledger.submit(std::time::Instant::now(), id, job),
                    Err(call) => {
                        let (ctx, accounts, room, done) =
                            (Arc::clone(&ctx), accounts.clone(), room.clone(), done.clone());
                        tokio::spawn(async move {
                            let outcome = lookup(&ctx, &accounts, &room, call).await;
                            let _ = done.send(Input::Chips { id, outcome });
                        });
                    }
                },
                None => open = false,
            },
            Some(c) = completions.recv() => {
                let input = io.complete(c);
                ledger.handle(std::time::Instant::now(), input);
            }
            _ = crate::chips::sleep_until(wake) => ledger.handle_timeout(std::time::Instant::now()),
        }
    }
}

/// The ledger's job for a hand's chip call (other calls are lookups).
fn ledger_job(
    room: &str,
    accounts: &Accounts,
    call: ChipCall,
    hand_number: Option<u64>,
) -> Result<Job, ChipCall> {
    let r = |h: HandId| HandRef::new(room, h.to_string());
    Ok(match call {
        ChipCall::OpenHand { hand, players } => Job::Open {
            hand: r(hand),
            hand_number,
            at_ms: unix_ms(),
            stakers: players
                .iter()
                .map(|p| AccountId::from(*p))
                .chain(accounts.house_bank.then(|| accounts.house.clone()))
                .collect(),
            cap: claw_protocol::Chips(MAX_HAND_STAKE),
        },
        ChipCall::Moves { hand, moves, undo_on_refusal } => Job::Moves {
            hand: r(hand),
            moves: moves
                .into_iter()
                .map(|m| claw_chips::ledger::Move {
                    kind: m.op,
                    account: accounts.of(m.party),
                    amount: m.amount,
                    memo: m.reason,
                })
                .collect(),
            undo_on_refusal,
        },
        ChipCall::Settle { hand, fee } => Job::Settle { hand: r(hand), fee, dealer: accounts.dealer.clone() },
        ChipCall::Void(hand) => Job::Void { hand: r(hand) },
        other => return Err(other),
    })
}

/// The core's completion for a ledger outcome.
fn chip_outcome(o: Outcome) -> ChipOutcome {
    let failure = |f: MoveFailure| match f {
        MoveFailure::Refused(s) => ChipFailure::Refused(s),
        MoveFailure::Unavailable(s) => ChipFailure::Unavailable(s),
    };
    match o {
        Outcome::Done(r) => ChipOutcome::Done(r),
        Outcome::Moves(r) => ChipOutcome::Moves(r.map_err(|(f, undone)| (failure(f), undone))),
        Outcome::Unbalanced(d) => ChipOutcome::Unbalanced(d),
        Outcome::Recovered(r) => ChipOutcome::Done(r.map(|_| ()).map_err(|e| e.to_string())),
    }
}

/// How long an archive write waits for file descriptors to come back
/// before it gives up (logged; the next write of the hand tries again).
const ARCHIVE_FD_WAIT: Duration = Duration::from_secs(600);

/// The room's transcript archive: writes run in order, off the room task.
/// A finished hand is written twice: first staged, before its end is sent
/// and before its settlement ([`Archive::stage`]), then moved into the
/// archive once settled ([`Archive::write`]). A write refused for want of
/// file descriptors is retried, with a growing pause, until they come back
/// (at most [`ARCHIVE_FD_WAIT`]): a finished hand's end waits for its file.
async fn archive_worker(
    archive: Option<Archive>,
    mut rx: mpsc::UnboundedReceiver<(EffectId, ArchiveWrite)>,
    done: mpsc::UnboundedSender<Input>,
) {
    let mut staged: HashSet<HandId> = HashSet::new();
    while let Some((id, write)) = rx.recv().await {
        let (stage, hand) = match &write {
            ArchiveWrite::Hand { transcript, .. } => {
                (!staged.contains(&transcript.hand_id), Some(transcript.hand_id))
            }
            ArchiveWrite::Voided { transcript } => (false, Some(transcript.hand_id)),
            _ => (false, None),
        };
        let result = match &archive {
            None => Err("no archive".to_owned()),
            Some(a) => {
                let started = Instant::now();
                let mut pause = Duration::from_millis(50);
                loop {
                    let (a, w) = (a.clone(), write.clone());
                    let r = tokio::task::spawn_blocking(move || run_archive_write(&a, w, stage)).await;
                    match r {
                        Ok(Err(e)) if e.out_of_descriptors() && started.elapsed() < ARCHIVE_FD_WAIT => {
                            tracing::warn!(error = %e, "archive write waits for file descriptors");
                            tokio::time::sleep(pause).await;
                            pause = (pause * 2).min(Duration::from_secs(5));
                        }
                        Ok(r) => break r.map_err(|e| e.to_string()),
                        Err(e) => break Err(e.to_string()),
                    }
                }
            }
        };
        if let Some(h) = hand {
            if stage && result.is_ok() {
                staged.insert(h);
            } else {
                staged.remove(&h);
            }
        }
        if done.send(Input::Archived { id, result }).is_err() {
            break;
        }
    }
}

fn run_archive_write(
    a: &Archive,
    write: ArchiveWrite,
    stage: bool,
) -> Result<Archived, crate::archive::ArchiveError> {
    match write {
        ArchiveWrite::Hand { hand_number, transcript, pending_reveal } if stage => {
            a.stage(hand_number, &transcript, pending_reveal.as_deref()).map(Archived::File)
        }
        ArchiveWrite::Hand { hand_number, transcript, pending_reveal } => {
            a.write(hand_number, &transcript, pending_reveal.as_deref()).map(Archived::File)
        }
        ArchiveWrite::Publish { hand_number, hand_id } => {
            a.publish(hand_number, &hand_id).map(Archived::Reveal)
        }
        ArchiveWrite::Voided { transcript } => a.write_voided(&transcript).map(Archived::File),
        ArchiveWrite::Fetch { hand_id } => {
            a.record(HandKey::Id(hand_id)).map(|r| Archived::Hand(r.map(Box::new)))
        }
    }
}

async fn sleep_opt(at: Option<std::time::Instant>) {
    match at {
        Some(t) => tokio::time::sleep_until(Instant::from_std(t)).await,
        None => std::future::pending().await,
    }
}
