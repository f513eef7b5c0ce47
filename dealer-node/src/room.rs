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

use claw_chips::{AccountId, ChipError, HandRef, IdempotencyKey};
use claw_engine::room::{
    Account, ArchiveWrite, Archived, ChipCall, ChipFailure, ChipMove, ChipOutcome, Effect, EffectId, Input,
    Now, RoomCore, MAX_HAND_STAKE,
};
use claw_engine::GameSpec;
use claw_protocol::handshake::VerifiedPlayer;
use claw_protocol::messages::{ClientMessage, RawJson, ServerMessage};
use claw_protocol::{HandId, Identity};
use rand::rngs::OsRng;
use tokio::sync::{broadcast, mpsc, oneshot, watch, Mutex};
use tokio::time::Instant;
use tokio_tungstenite::tungstenite::Utf8Bytes;

use crate::archive::{Archive, HandKey};
use crate::chips::{ChipDesk, Grants, HandLedger, LedgerError, RoomJournal};
use crate::config::{Limits, RoomConfig};
use crate::conn::{ConnId, ConnTx, Queued, TOO_SLOW};
use crate::metrics::{dec, inc, Metrics};

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
    /// Chips granted once to a new account whose balance is below it.
    pub welcome_grant: claw_protocol::Chips,
    /// Accounts already welcomed by this node.
    pub welcomed: Mutex<HashSet<AccountId>>,
    /// Welcome chips this node may still grant in total (none = no cap).
    pub welcome_left: Mutex<Option<u64>>,
    /// Welcome chips per period (none = no such cap).
    pub welcome_window: Option<std::sync::Mutex<crate::chips::PeriodBudget>>,
    /// Counters for `/metrics`.
    pub metrics: Arc<Metrics>,
    /// Chips held per account by voided hands awaiting their refund.
    pub held: Arc<crate::chips::HeldChips>,
    /// Transcripts and journals go here.
    pub data_dir: PathBuf,
    /// Connection, rate and chip-call limits.
    pub limits: Limits,
    /// Finished and voided hands, for the demo summary and tests.
    pub events: broadcast::Sender<RoomEvent>,
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
            tracing::error!(room = %id, error = %e, "room task failed; the room is closed");
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
                Effect::Report(e) => {
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
/// balance is low and the node's total allows it; counted in `/metrics`.
async fn welcome(ctx: &NodeContext, account: &AccountId) {
    let (Some(g), amount) = (&ctx.grants, ctx.welcome_grant) else { return };
    if amount.0 == 0 || !ctx.welcomed.lock().await.insert(account.clone()) {
        return;
    }
    let Ok(key) = IdempotencyKey::new(format!("welcome/{account}")) else { return };
    match ctx.desk.balance(account).await {
        Ok(b) if b < amount => {
            {
                let mut left = ctx.welcome_left.lock().await;
                if left.is_some_and(|l| l < amount.0) {
                    inc(&ctx.metrics.welcome_refused);
                    tracing::warn!(account = %account, "welcome chips: the node's total is used up");
                    return;
                }
                let in_period = match &ctx.welcome_window {
                    Some(w) => w.lock().is_ok_and(|mut w| w.try_take(std::time::Instant::now(), amount.0)),
                    None => true,
                };
                if !in_period {
                    inc(&ctx.metrics.welcome_refused);
                    tracing::warn!(account = %account, "welcome chips: this period's limit is used up");
                    return;
                }
                if let Some(l) = left.as_mut() {
                    *l -= amount.0;
                }
            }
            match g.grant(&key, account, amount, "welcome chips").await {
                Ok(_) => {
                    inc(&ctx.metrics.welcome_grants);
                    ctx.metrics.welcome_chips.fetch_add(amount.0, std::sync::atomic::Ordering::Relaxed);
                    tracing::info!(account = %account, %amount, "welcome chips granted");
                }
                Err(e) => tracing::warn!(error = %e, "welcome grant failed"),
            }
        }
        _ => {}
    }
}

/// A chip call for the ledger worker; `hand_number` (with `OpenHand`) is
/// the number the hand will be dealt under, recorded in its journal.
struct LedgerJob {
    id: EffectId,
    call: ChipCall,
    hand_number: Option<u64>,
}

/// The room's hands' chip journals: their calls run in order.
async fn ledger_worker(
    room: String,
    ctx: Arc<NodeContext>,
    accounts: Accounts,
    mut rx: mpsc::UnboundedReceiver<LedgerJob>,
    done: mpsc::UnboundedSender<Input>,
) {
    let dir = ctx.data_dir.join("rooms").join(&room).join("journal");
    // Opened once, so that settling needs no new file descriptor; reopened
    // at the next hand if it could not be opened.
    let mut journal: Option<Arc<RoomJournal>> = None;
    let mut ledgers: HashMap<HandId, HandLedger> = HashMap::new();
    let desk = &ctx.desk;
    while let Some(LedgerJob { id, call, hand_number }) = rx.recv().await {
        let outcome = match call {
            ChipCall::OpenHand { hand, players } => {
                let bank = accounts.house_bank.then_some(&accounts.house);
                let opened = match journal.as_ref() {
                    Some(j) => Ok(Arc::clone(j)),
                    None => {
                        let d = dir.clone();
                        blocking(move || RoomJournal::open(&d)).await
                    }
                };
                ChipOutcome::Done(match opened {
                    Ok(j) => {
                        journal = Some(Arc::clone(&j));
                        let opening = Opening { room: &room, journal: j, hand, hand_number };
                        open_hand(opening, &ctx, &mut ledgers, &players, bank).await
                    }
                    Err(e) => Err(format!("chip journal: {e}")),
                })
            }
            ChipCall::Moves { hand, moves, undo_on_refusal } => match ledgers.get_mut(&hand) {
                Some(l) => ChipOutcome::Moves(run_moves(l, desk, &accounts, moves, undo_on_refusal).await),
                None => ChipOutcome::Moves(Err((ChipFailure::Unavailable("no chip journal".into()), false))),
            },
            ChipCall::Settle { hand, fee } => match ledgers.remove(&hand) {
                Some(l) => settle(&room, l, &ctx, &accounts, hand, fee).await,
                None => ChipOutcome::Done(Err("no chip journal".into())),
            },
            ChipCall::Void(hand) => match ledgers.remove(&hand) {
                Some(l) => ChipOutcome::Done(void(&room, l, &ctx, hand).await),
                None => ChipOutcome::Done(Err("no chip journal".into())),
            },
            other => lookup(&ctx, &accounts, &room, other).await,
        };
        if done.send(Input::Chips { id, outcome }).is_err() {
            break;
        }
    }
}

/// Runs blocking file I/O off the async workers.
async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, LedgerError> + Send + 'static,
) -> Result<T, LedgerError> {
    match tokio::task::spawn_blocking(f).await {
        Ok(r) => r,
        Err(e) => Err(LedgerError::Journal(std::io::Error::other(e.to_string()))),
    }
}

/// A hand whose journal is being opened.
struct Opening<'a> {
    room: &'a str,
    journal: Arc<RoomJournal>,
    hand: HandId,
    hand_number: Option<u64>,
}

/// Opens a hand's journal (first, so that a process out of file
/// descriptors locks nothing it could not journal); with a provider that
/// settles per hand, then locks each ready player's stake there: the
/// balance (capped at the most a hand takes), players without chips or
/// without an account left out.
async fn open_hand(
    opening: Opening<'_>,
    ctx: &NodeContext,
    ledgers: &mut HashMap<HandId, HandLedger>,
    players: &[claw_protocol::PlayerId],
    house_bank: Option<&AccountId>,
) -> Result<(), String> {
    let Opening { room, journal, hand, hand_number } = opening;
    let desk = &ctx.desk;
    let (r, h) = (room.to_owned(), hand.to_string());
    let mut l = blocking(move || HandLedger::open_in(&journal, &r, &h, hand_number, unix_ms()))
        .await
        .map_err(|e| e.to_string())?;
    if desk.settles_hands() {
        l = l.without_op_sync();
        if let Err(e) = lock_stakes(room, ctx, hand, players, house_bank).await {
            // Nothing was locked (or the attempt was released): close the
            // hand's journal, which moved nothing.
            if let Ok(t) = l.void_kept(desk).await {
                tracing::debug!(room, debits = t.debits, "hand not opened; its empty journal is closed");
            }
            close_journal(room, l).await;
            return Err(e);
        }
    }
    ledgers.insert(hand, l);
    Ok(())
}

/// With a provider that settles per hand: locks the stakes of the hand's
/// players; a failed attempt is released.
async fn lock_stakes(
    room: &str,
    ctx: &NodeContext,
    hand: HandId,
    players: &[claw_protocol::PlayerId],
    house_bank: Option<&AccountId>,
) -> Result<(), String> {
    let desk = &ctx.desk;
    let accounts: Vec<AccountId> =
        players.iter().map(|p| AccountId::from(*p)).chain(house_bank.cloned()).collect();
    let balances = futures_util::future::join_all(accounts.iter().map(|a| desk.balance(a))).await;
    let mut stakes = Vec::with_capacity(accounts.len());
    for (account, balance) in accounts.into_iter().zip(balances) {
        match balance {
            Ok(b) if b.0 > 0 => stakes.push((account, claw_protocol::Chips(b.0.min(MAX_HAND_STAKE)))),
            Ok(_) => {}
            Err(e) if e.is_retryable() => return Err(format!("balance of {account}: {e}")),
            Err(e) => {
                tracing::warn!(room, %account, error = %e, "no stake: left out of the hand")
            }
        }
    }
    if stakes.is_empty() {
        return Err("no player has chips to stake".into());
    }
    let href = HandRef::new(room, hand.to_string());
    if let Err(e) = desk.open_hand(&href, &stakes).await {
        // The hand will not start: release what the attempt may have locked.
        let _ = finish_on_provider(room, ctx, hand, Finish::Abandon).await;
        return Err(format!("locking the stakes: {e}"));
    }
    Ok(())
}

/// Closes an ended hand's journal (off the async workers); if the file
/// system refuses, retries in the background with a growing pause until it
/// goes through: an ended journal is never abandoned.
async fn close_journal(room: &str, l: HandLedger) {
    let mut l = match try_close(l).await {
        None => return,
        Some(l) => l,
    };
    let room = room.to_owned();
    tokio::spawn(async move {
        let mut pause = crate::chips::FIRST_PAUSE;
        loop {
            tokio::time::sleep(pause).await;
            l = match try_close(l).await {
                None => {
                    tracing::info!(room, "chip journal closed after a retry");
                    return;
                }
                Some(l) => l,
            };
            pause = crate::chips::longer(pause);
        }
    });
}

/// One attempt: `None` when closed, else the ledger to try again.
async fn try_close(mut l: HandLedger) -> Option<HandLedger> {
    let r = tokio::task::spawn_blocking(move || {
        let r = l.close_journal();
        (l, r)
    })
    .await;
    match r {
        Ok((_, Ok(()))) => None,
        Ok((l, Err(e))) => {
            tracing::warn!(error = %e, "closing a chip journal failed; retrying");
            Some(l)
        }
        Err(e) => {
            tracing::error!(error = %e, "closing a chip journal failed; a restart closes it");
            None
        }
    }
}

/// What a provider that settles per hand finishes: a played hand, or one
/// whose opening failed.
#[derive(Clone, Copy, Debug)]
enum Finish {
    Close,
    Abandon,
}

impl Finish {
    async fn run(self, desk: &ChipDesk, hand: &HandRef) -> Result<(), claw_chips::ChipError> {
        match self {
            Finish::Close => desk.close_hand(hand).await,
            Finish::Abandon => desk.abandon_hand(hand).await,
        }
    }
}

/// With a provider that settles per hand: settles the hand there (after
/// the local journal closed); retried in the background while the provider
/// does not answer. Otherwise nothing to do.
async fn close_on_provider(room: &str, ctx: &NodeContext, hand: HandId) -> Result<(), String> {
    finish_on_provider(room, ctx, hand, Finish::Close).await
}

async fn finish_on_provider(room: &str, ctx: &NodeContext, hand: HandId, step: Finish) -> Result<(), String> {
    let desk = &ctx.desk;
    if !desk.settles_hands() {
        return Ok(());
    }
    let href = HandRef::new(room, hand.to_string());
    match step.run(desk, &href).await {
        Ok(()) => Ok(()),
        Err(e) if e.is_retryable() => {
            tracing::warn!(room, hand = %href, ?step, error = %e, "not confirmed by the chip provider; retrying in the background");
            let (desk, metrics) = (desk.clone(), Arc::clone(&ctx.metrics));
            tokio::spawn(async move {
                inc(&metrics.refunds_pending);
                let mut pause = crate::chips::FIRST_PAUSE;
                loop {
                    tokio::time::sleep(pause).await;
                    match step.run(&desk, &href).await {
                        Ok(()) => break,
                        Err(e) if e.is_retryable() => pause = crate::chips::longer(pause),
                        Err(e) => {
                            tracing::error!(hand = %href, ?step, error = %e, "refused by the chip provider; a restart reconciles it");
                            break;
                        }
                    }
                }
                dec(&metrics.refunds_pending);
            });
            Err(format!("finishing the hand with the chip provider: {e} (retrying)"))
        }
        Err(e) => Err(format!("finishing the hand with the chip provider: {e}")),
    }
}

/// A step's moves through the journal; on a refused debit, optionally gives
/// back what the earlier moves of the step did.
async fn run_moves(
    l: &mut HandLedger,
    desk: &ChipDesk,
    accounts: &Accounts,
    moves: Vec<ChipMove>,
    undo_on_refusal: bool,
) -> Result<Vec<claw_protocol::Chips>, (ChipFailure, bool)> {
    let mark = l.mark();
    let mut balances = Vec::with_capacity(moves.len());
    for m in moves {
        match l.run(desk, m.op, &accounts.of(m.party), m.amount, &m.reason).await {
            Ok(b) => balances.push(b),
            Err(LedgerError::Chip(e)) if !e.is_retryable() => {
                let undone = undo_on_refusal && l.undo_since(desk, mark).await.is_ok();
                return Err((ChipFailure::Refused(e.to_string()), undone));
            }
            Err(e) => return Err((ChipFailure::Unavailable(e.to_string()), false)),
        }
    }
    Ok(balances)
}

/// Commission and rake to the dealer (recorded with the `complete` line
/// first, so that a restart pays it), the conservation check, the journal's
/// end, the hand closed on a provider that settles per hand, then the
/// journal closed (retried until it is: never abandoned). An outcome still
/// unknown leaves the journal open for a restart. Moves that do not add up
/// void and refund the hand instead (`Unbalanced`).
async fn settle(
    room: &str,
    mut l: HandLedger,
    ctx: &NodeContext,
    accounts: &Accounts,
    hand: HandId,
    fee: claw_protocol::Chips,
) -> ChipOutcome {
    let desk = &ctx.desk;
    if let Err(e) = l.mark_complete(fee) {
        return ChipOutcome::Done(Err(e.to_string()));
    }
    if fee.0 > 0 {
        let dealer = accounts.of(Account::Dealer);
        if let Err(e) = l.run(desk, claw_chips::ChipOpKind::Credit, &dealer, fee, "commission and rake").await
        {
            return ChipOutcome::Done(Err(format!("dealer credit failed: {e}")));
        }
    }
    if l.has_uncertain() {
        return ChipOutcome::Done(Err("unsettled operations remain".into()));
    }
    if let Err(e @ LedgerError::Conservation { .. }) = l.check_conservation() {
        let detail = e.to_string();
        if let Err(e) = void(room, l, ctx, hand).await {
            tracing::error!(room, error = %e, "refund of an unbalanced hand incomplete");
        }
        return ChipOutcome::Unbalanced(detail);
    }
    let ended = l.end_settled();
    if let Ok(t) = &ended {
        tracing::debug!(room, debits = t.debits, credits = t.credits, "hand settled, chips conserved");
    }
    // The provider settles whatever became of the local journal's last
    // line (for such a provider the journal is a log; its own decides).
    let provider = close_on_provider(room, ctx, hand).await;
    match ended {
        Ok(_) => {
            close_journal(room, l).await;
            ChipOutcome::Done(provider)
        }
        Err(e) => ChipOutcome::Done(Err(e.to_string())),
    }
}

/// Refunds a voided hand. If the chip service does not answer, the refund
/// goes on in the background (from the journal) until it does.
async fn void(room: &str, mut l: HandLedger, ctx: &NodeContext, hand: HandId) -> Result<(), String> {
    let (path, held) = (l.journal_path().map(std::path::Path::to_path_buf), l.held_by());
    match l.void_kept(&ctx.desk).await {
        Ok(_) => {
            let provider = close_on_provider(room, ctx, hand).await;
            close_journal(room, l).await;
            provider
        }
        Err(LedgerError::Unsettled) => {
            drop(l);
            if let Some(path) = path {
                let (desk, metrics, registry) =
                    (ctx.desk.clone(), Arc::clone(&ctx.metrics), Arc::clone(&ctx.held));
                tokio::spawn(crate::chips::refund_in_background(path, desk, metrics, registry, held));
            }
            Err("the chip service did not answer; the refund is retried in the background".into())
        }
        Err(e) => Err(e.to_string()),
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
