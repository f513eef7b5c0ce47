//! `PlayerNode`: a player's connection to a dealer.
//!
//! [`PlayerNode::connect`] dials the invite URL, runs the 4-step handshake
//! (refusing a dealer whose key is not the URL's), asks for a seat and
//! returns once seated. A background task then owns the WebSocket: it
//! verifies every event as it arrives ([`SessionVerifier`]), contributes a
//! fresh `OsRng` seed to every hand, runs the full audit at each hand end,
//! optionally saves each hand's transcript, matches query answers by nonce
//! (5 s timeout) and reconnects with the session's token and exponential
//! backoff when the connection drops. The application reads
//! [`NodeEvent`]s with [`PlayerNode::next_event`] and answers turns with
//! [`PlayerNode::act`], which signs the action with the hand's sequence
//! number.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use claw_audit::Verdict;
use claw_protocol::audit::{AuditCheck, AuditError, AuditReport};
use claw_protocol::handshake::{ClientHandshake, ClientSession, HandshakeError};
use claw_protocol::messages::{
    decode_server, ActionOption, ActionRejectCode, ChipMove, ClientMessage, ErrorCode, HandPlayer,
    HandRecord, HandResult, JoinRejectReason, JoinRequest, KickReason, PlayerSeed, Query, QueryData,
    QueryErrorCode, QueryType, QuickMatch, RawJson, ReadyCheck, Rematch, RematchVote, RoomConfig,
    ServerMessage, SignedAction, TablePlayer, YourTurn, MAX_FRAME_BYTES,
};
use claw_protocol::transcript::EventEnvelope;
use claw_protocol::{CardId, CardOpening, Chips, HandId, Identity, Nonce, PlayerId, Seat, Seed};
use futures_util::{SinkExt, StreamExt};
use rand::rngs::OsRng;
use serde::Serialize;
use serde_json::Value;
use tokio::sync::{mpsc, oneshot};
use tokio::time::{sleep_until, timeout_at, Instant};
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;
use tokio_tungstenite::tungstenite::Message;

use crate::invite::Invite;
use crate::transport::{self, ClientTls, Ws};
use crate::verify::{HandView, SeenCard, SessionVerifier, Update, VerifyError};

/// The SDK name and version sent in `hello` and `join-request`.
pub const SDK_VERSION: &str = concat!("claw-player/", env!("CARGO_PKG_VERSION"));

/// How long a query waits for its answer.
pub const QUERY_TIMEOUT: Duration = Duration::from_millis(claw_protocol::limits::QUERY_ANSWER_MS);

/// How the node retries after a dropped connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReconnectPolicy {
    /// The first wait.
    pub initial: Duration,
    /// The longest wait (the wait doubles up to this).
    pub max: Duration,
    /// Give up after this long without a connection (the dealer holds the
    /// seat for 60 s by default).
    pub give_up_after: Duration,
}

impl Default for ReconnectPolicy {
    fn default() -> Self {
        ReconnectPolicy {
            initial: Duration::from_millis(100),
            max: Duration::from_secs(5),
            give_up_after: Duration::from_secs(60),
        }
    }
}

impl ReconnectPolicy {
    /// The wait before attempt `n` (0-based): `initial · 2^n`, capped at `max`.
    pub fn delay(&self, attempt: u32) -> Duration {
        let factor = 1u32.checked_shl(attempt.min(20)).unwrap_or(u32::MAX);
        self.initial.saturating_mul(factor).min(self.max)
    }
}

/// Settings of a [`PlayerNode`].
#[derive(Debug, Clone)]
pub struct NodeConfig {
    /// Display name sent with the join request.
    pub name: Option<String>,
    /// Preferred seat.
    pub seat: Option<Seat>,
    /// Chips to bring (default: the room's buy-in).
    pub buy_in: Option<Chips>,
    /// Contribute a player seed to every hand (entropy `joint`).
    pub contribute_seed: bool,
    /// Save each finished hand's transcript as `<dir>/<hand_id>.jsonl`.
    pub save_transcripts: Option<PathBuf>,
    /// How long a query waits for its answer.
    pub query_timeout: Duration,
    /// Retry policy after a dropped connection.
    pub reconnect: ReconnectPolicy,
    /// Longest wait for the handshake and the join answer.
    pub connect_timeout: Duration,
    /// The CAs `wss://` trusts; none = the bundled and system roots.
    pub tls: Option<ClientTls>,
}

impl Default for NodeConfig {
    fn default() -> Self {
        NodeConfig {
            name: None,
            seat: None,
            buy_in: None,
            contribute_seed: true,
            save_transcripts: None,
            query_timeout: QUERY_TIMEOUT,
            reconnect: ReconnectPolicy::default(),
            connect_timeout: Duration::from_secs(10),
            tls: None,
        }
    }
}

/// Why the node failed.
#[derive(Debug, thiserror::Error)]
pub enum NodeError {
    /// The WebSocket could not be opened or broke during the handshake.
    #[error("connection: {0}")]
    Connect(String),
    /// The handshake failed (includes a dealer key that is not the invite's).
    /// Its text is part of this one (not a `source`: printed once in a chain).
    #[error("handshake: {0}")]
    Handshake(HandshakeError),
    /// The dealer refused the seat.
    #[error("the dealer refused the seat: {}", refusal_text(*reason, message))]
    JoinRefused {
        /// Why.
        reason: Option<JoinRejectReason>,
        /// Free text from the dealer.
        message: String,
    },
    /// No answer in time.
    #[error("{0} timed out")]
    Timeout(&'static str),
    /// The dealer answered a query with an error.
    #[error("the dealer did not answer the query: {}", query_error_text(*code, message))]
    Query {
        /// Why, as a code.
        code: QueryErrorCode,
        /// Free text from the dealer.
        message: String,
    },
    /// There is no hand to act in.
    #[error("no hand is running")]
    NoHand,
    /// An action that is not JSON the wire can carry.
    #[error("bad action: {0}")]
    BadAction(String),
    /// The connection is down (reconnecting) or the node is closed.
    #[error("not connected")]
    NotConnected,
    /// The node task is gone.
    #[error("the node is closed")]
    Closed,
    /// The dealer answered a query with a message of another kind.
    #[error("unexpected answer: {0}")]
    BadAnswer(String),
    /// The hand's events are not covered by a verified dealer signature, so
    /// the action was not signed (check `dealer-signatures`).
    #[error("not acting on unverified events: {0}")]
    Unverified(String),
    /// Saving a transcript failed.
    #[error("i/o: {0}")]
    Io(String),
    /// Quick match found no seat (the dealer's reason), or seated this
    /// player at a room that does not play the game and tier asked for.
    #[error("quick match: {0}")]
    QuickMatch(String),
}

impl From<HandshakeError> for NodeError {
    fn from(e: HandshakeError) -> NodeError {
        NodeError::Handshake(e)
    }
}

/// The dealer's own text when it gave one, else what `reason` means.
fn refusal_text(reason: Option<JoinRejectReason>, message: &str) -> String {
    if !message.is_empty() {
        return message.to_owned();
    }
    match reason {
        Some(JoinRejectReason::RoomFull) => "every seat is taken",
        Some(JoinRejectReason::InsufficientBalance) => "the balance does not cover the buy-in",
        Some(JoinRejectReason::BelowEntry) => "the balance is below the table's entry threshold",
        Some(JoinRejectReason::AlreadySeated) => "this identity already holds a seat (another connection)",
        Some(JoinRejectReason::RoomClosed) => "the room is closed",
        Some(JoinRejectReason::NotAuthenticated) => "the handshake did not complete on this connection",
        Some(JoinRejectReason::Frozen) => "the operator froze this identity: it may not sit down",
        Some(JoinRejectReason::Other) | None => "no reason given",
    }
    .to_owned()
}

/// The dealer's own text when it gave one, else what `code` means.
fn query_error_text(code: QueryErrorCode, message: &str) -> String {
    if !message.is_empty() {
        return message.to_owned();
    }
    match code {
        QueryErrorCode::UnknownQuery => "it does not know this query",
        QueryErrorCode::RateLimited => "too many messages: slow down",
        QueryErrorCode::NotSeated => "the query needs a seat",
        QueryErrorCode::Timeout => "its answer took too long",
        QueryErrorCode::Unavailable => "the data is not available now",
        QueryErrorCode::NotFound => "no finished hand of the room has that id",
    }
    .to_owned()
}

/// What a dealer `error` code means, for a message.
fn dealer_error_text(code: ErrorCode) -> &'static str {
    match code {
        ErrorCode::Oversize => "a frame over the size limit",
        ErrorCode::Malformed => "a frame that is not a valid message",
        ErrorCode::UnknownType => "a message type it does not know",
        ErrorCode::RateLimited => "too many messages",
        ErrorCode::NotAllowed => "a message that needs a completed handshake or a seat",
        ErrorCode::BadSeed => "a refused player seed",
        ErrorCode::BadShare => "a refused blind-table message",
        ErrorCode::Internal => "an internal failure (retry)",
    }
}

/// The result of a hand's audit, as events and JSON lines report it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AuditSummary {
    /// Every check ran and passed: `verdict` is `ok` (as in `claw-player
    /// audit --json`; a pending hand is not OK, nor a failure).
    pub ok: bool,
    /// `ok`, `pending` (the deferred reveal is not out: never "audited
    /// OK", never a failure) or `failed`.
    pub verdict: Verdict,
    /// Checks that passed, in order.
    pub passed: Vec<AuditCheck>,
    /// Checks that could not run yet (deferred reveal).
    pub skipped: Vec<AuditCheck>,
    /// The first failed check.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failed: Option<AuditCheck>,
    /// What failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
}

impl AuditSummary {
    /// Summarises an audit outcome.
    pub fn of(r: &Result<AuditReport, AuditError>) -> AuditSummary {
        let verdict = Verdict::of(r);
        match r {
            Ok(rep) => AuditSummary {
                ok: verdict == Verdict::Ok,
                verdict,
                passed: rep.passed.clone(),
                skipped: rep.skipped.clone(),
                failed: None,
                detail: None,
            },
            Err(e) => AuditSummary {
                ok: false,
                verdict: Verdict::Failed,
                passed: Vec::new(),
                skipped: Vec::new(),
                failed: Some(e.check),
                detail: Some(e.detail.clone()),
            },
        }
    }
}

/// Everything the node reports, in order. Serialises as one JSON object
/// tagged by `event` (the `claw-player` line format, docs/player-cli.md).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "event", rename_all = "kebab-case")]
pub enum NodeEvent {
    /// Seated (or re-seated) in the room.
    Joined {
        /// This player's id.
        player: PlayerId,
        /// The seat concerned.
        seat: Option<Seat>,
        /// The room configuration.
        room: Option<RoomConfig>,
        /// The players, in seat order.
        players: Vec<TablePlayer>,
        /// Free text from the dealer (e.g. "you play from the next hand").
        #[serde(skip_serializing_if = "Option::is_none")]
        message: Option<String>,
    },
    /// A hand is being prepared (the node sent its seed).
    HandPrepared {
        /// The hand.
        hand_id: HandId,
        /// Hands dealt at the table before this one.
        hand_number: u64,
        /// The seat concerned.
        seat: Option<Seat>,
        /// The players, in seat order.
        players: Vec<PlayerId>,
    },
    /// The deck is committed and the hand starts.
    HandStarted {
        /// The hand.
        hand_id: HandId,
        /// Registry name of the game.
        game: String,
        /// The seat concerned.
        seat: Option<Seat>,
        /// The players, in seat order.
        players: Vec<HandPlayer>,
        /// The game's settings.
        settings: Value,
    },
    /// Cards were dealt; `my_cards` are the ones opened for this player.
    Dealt {
        /// The hand.
        hand_id: HandId,
        /// The game's phase name.
        phase: String,
        /// The cards.
        cards: Vec<SeenCard>,
        /// The cards opened for this player.
        my_cards: Vec<CardId>,
    },
    /// Face-down cards were opened to everyone.
    Revealed {
        /// The hand.
        hand_id: HandId,
        /// The cards.
        cards: Vec<CardOpening>,
    },
    /// A dealt card moved from one player to another (tribute, return).
    Transferred {
        /// The hand.
        hand_id: HandId,
        /// The deck position.
        position: u16,
        /// The giver.
        from: Seat,
        /// The receiver.
        to: Seat,
        /// The card, when this player can see it.
        card: Option<CardId>,
    },
    /// Chips moved.
    Chips {
        /// The hand.
        hand_id: HandId,
        /// The chip movements, in order.
        moves: Vec<ChipMove>,
    },
    /// It is this player's turn. `hand` is its cards in hand, `public_state`
    /// the game's last public state.
    YourTurn {
        /// The hand.
        hand_id: HandId,
        /// The seat concerned.
        seat: Seat,
        /// The sequence number.
        seq: u32,
        /// The options, with cost, affordability and amount range.
        actions: Vec<ActionOption>,
        /// This player's chips left in the hand.
        balance: Chips,
        /// When the dealer takes the timeout action (unix ms).
        deadline_ms: u64,
        /// The game's phase name.
        #[serde(skip_serializing_if = "Option::is_none")]
        phase: Option<String>,
        /// This player's cards in hand.
        hand: Vec<CardId>,
        /// The game's public state (shared with the hand's view).
        public_state: Arc<Value>,
    },
    /// An action was applied (by its player, or by the dealer on a timeout).
    ActionApplied {
        /// The hand.
        hand_id: HandId,
        /// The seat concerned.
        seat: Seat,
        /// The game action.
        action: Value,
        /// The game's public state (shared with the hand's view).
        public_state: Arc<Value>,
        /// Why the dealer acted for the seat (`timeout`, `left`), when it did.
        #[serde(skip_serializing_if = "Option::is_none")]
        timeout: Option<String>,
    },
    /// The dealer refused this player's action.
    ActionRejected {
        /// The hand.
        hand_id: HandId,
        /// The sequence number.
        seq: u32,
        /// Why, as a code.
        code: ActionRejectCode,
        /// Why.
        reason: String,
    },
    /// The hand is over and was audited.
    HandEnded {
        /// The hand.
        hand_id: HandId,
        /// This player's seat in the hand (`None`: not in it).
        seat: Option<Seat>,
        /// The announced result.
        result: HandResult,
        /// The audit outcome.
        audit: AuditSummary,
        /// Where the transcript was saved (`--save-transcripts`).
        #[serde(skip_serializing_if = "Option::is_none")]
        transcript: Option<PathBuf>,
    },
    /// A hand this player was dealt into ended without this player seeing
    /// its end (the connection was down, or the dealer voided the hand): it
    /// could not be audited here.
    HandIncomplete {
        /// The hand.
        hand_id: HandId,
        /// Why.
        reason: String,
    },
    /// Deferred secrets arrived and the audit ran again.
    AuditCompleted {
        /// The hand.
        hand_id: HandId,
        /// The audit outcome.
        audit: AuditSummary,
    },
    /// A live check failed: the dealer cannot be trusted for this hand.
    VerificationFailed {
        /// The hand.
        hand_id: HandId,
        /// The event that failed a live check; absent when the end-of-hand
        /// audit failed.
        #[serde(skip_serializing_if = "Option::is_none")]
        seq: Option<u64>,
        /// The check that failed.
        check: AuditCheck,
        /// What failed.
        detail: String,
    },
    /// The room's ready check before a match (SPEC.md §9.8), as it stands:
    /// `open` with this player in `waiting` asks for [`NodeHandle::ready`]
    /// before `deadline_ms`, or the seat is freed.
    ReadyCheck(ReadyCheck),
    /// The vote on a rematch after a match (SPEC.md §9.8), as it stands:
    /// `open` with this player in `waiting` asks for
    /// [`NodeHandle::rematch_vote`] before `deadline_ms`; no vote frees the seat.
    Rematch(Rematch),
    /// The dealer removed this player.
    Kicked {
        /// Why, as a code.
        code: KickReason,
        /// Why.
        reason: String,
    },
    /// The dealer reported an error about a message of ours.
    DealerError {
        /// Why, as a code.
        code: ErrorCode,
        /// Free text from the dealer.
        message: String,
    },
    /// The connection dropped; the node is reconnecting.
    Disconnected {
        /// Why.
        reason: String,
    },
    /// The connection is back (same session).
    Reconnected {
        /// Connection attempts it took.
        attempts: u32,
    },
    /// The node stopped (no more events).
    Closed {
        /// Why.
        reason: String,
    },
}

impl NodeEvent {
    /// The hand a hand event is about (`None` for room and session events).
    pub fn hand_id(&self) -> Option<HandId> {
        match self {
            NodeEvent::HandPrepared { hand_id, .. }
            | NodeEvent::HandStarted { hand_id, .. }
            | NodeEvent::Dealt { hand_id, .. }
            | NodeEvent::Revealed { hand_id, .. }
            | NodeEvent::Transferred { hand_id, .. }
            | NodeEvent::Chips { hand_id, .. }
            | NodeEvent::ActionApplied { hand_id, .. } => Some(*hand_id),
            _ => None,
        }
    }
}

/// What the node knows now, for [`PlayerNode::state`].
#[derive(Debug, Clone, Default, Serialize)]
pub struct NodeState {
    /// The seat in the room, once seated.
    pub seat: Option<Seat>,
    /// The room configuration from the join answer.
    pub room: Option<RoomConfig>,
    /// Whether the WebSocket is up.
    pub connected: bool,
    /// The current (or last) hand.
    pub hand: Option<HandView>,
    /// The pending turn, if it is this player's turn.
    pub turn: Option<YourTurn>,
    /// Whose turn it is at the table and until when, as the last `turn`
    /// (another player's) or `your-turn` (this player's) said.
    pub acting: Option<(HandId, claw_protocol::messages::Acting)>,
    /// Who banks next at a table whose banker rotates (Sam Gong), as the
    /// last `banker-queue` said.
    pub banker_queue: Option<claw_protocol::messages::BankerQueue>,
}

enum Command {
    Act { action: Value, reply: oneshot::Sender<Result<(HandId, u32), NodeError>> },
    Query { kind: QueryType, reply: oneshot::Sender<Result<QueryData, NodeError>> },
    FetchHand { hand_id: HandId, reply: oneshot::Sender<Result<HandRecord, NodeError>> },
    Send(Box<ClientMessage>),
    DropConnection,
    Close,
}

/// A player connected to a dealer. Dropping it closes the connection.
pub struct PlayerNode {
    handle: NodeHandle,
    invite: Invite,
    events: mpsc::UnboundedReceiver<NodeEvent>,
    task: Option<tokio::task::JoinHandle<()>>,
}

/// A cloneable handle to a [`PlayerNode`]'s commands and state, for tasks
/// that act or query while another reads the events.
#[derive(Clone)]
pub struct NodeHandle {
    id: PlayerId,
    cmd: mpsc::Sender<Command>,
    state: Arc<Mutex<NodeState>>,
}

fn unix_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// Bytes read from the socket at a time. tungstenite's default (128 KiB, and
/// as much again for writes) is held for the connection's life: 10,000 bots
/// in one load generator held gigabytes. The dealer's frames are small; a
/// larger one is read in several steps.
const READ_BUFFER_BYTES: usize = 8 * 1024;

/// Frame bytes gathered before they go to the socket (a player sends one
/// frame at a time).
const WRITE_BUFFER_BYTES: usize = 4 * 1024;

/// The path of a dealer's quick match (SPEC.md §9.8), in place of a room.
pub const QUICK_MATCH_PATH: &str = "quick-match";

/// Opens the WebSocket to `url`.
async fn dial(url: &str, tls: Option<&ClientTls>, deadline: Instant) -> Result<Ws, NodeError> {
    let config = WebSocketConfig::default()
        .read_buffer_size(READ_BUFFER_BYTES)
        .write_buffer_size(WRITE_BUFFER_BYTES)
        .max_message_size(Some(MAX_FRAME_BYTES))
        .max_frame_size(Some(MAX_FRAME_BYTES));
    timeout_at(deadline, transport::connect(url, tls, config))
        .await
        .map_err(|_| NodeError::Timeout("connect"))?
        .map_err(|e| NodeError::Connect(e.to_string()))
}

/// Dials and runs the handshake; returns the socket and the session.
async fn open(
    invite: &Invite,
    tls: Option<&ClientTls>,
    me: &Arc<Identity>,
    token: Option<Nonce>,
    deadline: Instant,
) -> Result<(Ws, ClientSession), NodeError> {
    let mut ws = dial(invite.ws_url.as_str(), tls, deadline).await?;
    let session = handshake(&mut ws, invite, me, token, deadline).await?;
    Ok((ws, session))
}

/// Asks for a room on the quick-match path (SPEC.md §9.8) and returns
/// the socket, now the matched room's, with that room's invite.
async fn quick_match(
    dealer: &Invite,
    request: &QuickMatch,
    tls: Option<&ClientTls>,
    deadline: Instant,
) -> Result<(Ws, Invite), NodeError> {
    request.check().map_err(|e| NodeError::QuickMatch(e.to_string()))?;
    let path = dealer.for_room(QUICK_MATCH_PATH).map_err(|e| NodeError::QuickMatch(e.to_string()))?;
    let mut ws = dial(path.ws_url.as_str(), tls, deadline).await?;
    send(&mut ws, &ClientMessage::QuickMatch(request.clone())).await?;
    match next_message(&mut ws, deadline).await? {
        ServerMessage::Matched(m) => {
            let invite = dealer.for_room(&m.room_id).map_err(|e| {
                NodeError::QuickMatch(format!("the dealer matched an unusable room id {:?}: {e}", m.room_id))
            })?;
            Ok((ws, invite))
        }
        ServerMessage::Rejected(r) => {
            let body = claw_protocol::handshake::rejected_body(&r);
            if claw_protocol::verify(&dealer.dealer, claw_protocol::Purpose::Rejected, &body, &r.sig).is_err()
            {
                return Err(NodeError::Handshake(HandshakeError::UnsignedRejection(r.reason)));
            }
            let why = r.message.unwrap_or_else(|| r.reason.code().to_owned());
            Err(NodeError::QuickMatch(why))
        }
        _ => Err(NodeError::Handshake(HandshakeError::UnexpectedMessage)),
    }
}

/// Whether the room configuration the dealer signed in the challenge plays
/// the game and tier quick match asked for (`matched` itself is unsigned).
fn check_matched(request: &QuickMatch, signed: &RawJson) -> Result<(), NodeError> {
    let cfg: RoomConfig = serde_json::from_str(signed.as_str())
        .map_err(|e| NodeError::QuickMatch(format!("the signed room configuration does not parse: {e}")))?;
    let tier = cfg.settings.get("tier").and_then(Value::as_str);
    if cfg.game != request.game {
        return Err(NodeError::QuickMatch(format!(
            "asked for {}, seated at a {} room",
            request.game, cfg.game
        )));
    }
    if let Some(want) = request.tier.as_deref().filter(|t| Some(*t) != tier) {
        return Err(NodeError::QuickMatch(format!(
            "asked for tier {want}, seated at tier {}",
            tier.unwrap_or("none")
        )));
    }
    Ok(())
}

/// The handshake (SPEC.md §8) on an open socket, for `invite`'s room.
async fn handshake(
    ws: &mut Ws,
    invite: &Invite,
    me: &Arc<Identity>,
    token: Option<Nonce>,
    deadline: Instant,
) -> Result<ClientSession, NodeError> {
    let (mut hs, hello) = ClientHandshake::start(
        Arc::clone(me),
        invite.dealer,
        invite.room.clone(),
        SDK_VERSION,
        token,
        unix_ms(),
        &mut OsRng,
    );
    send(ws, &ClientMessage::Hello(hello)).await?;
    loop {
        let msg = next_message(ws, deadline).await?;
        match msg {
            ServerMessage::Challenge(c) => {
                let r = hs.on_challenge(&c, unix_ms())?;
                send(ws, &ClientMessage::Response(r)).await?;
            }
            ServerMessage::Accepted(a) => return hs.on_accepted(&a, unix_ms()).map_err(NodeError::from),
            ServerMessage::Rejected(r) => {
                if let Some(why) = &r.message {
                    tracing::warn!(reason = %r.reason, why = %why, "the dealer refused the handshake");
                }
                return Err(NodeError::Handshake(hs.on_rejected(&r)));
            }
            ServerMessage::Error(e) => {
                let why = if e.message.is_empty() { dealer_error_text(e.code) } else { e.message.as_str() };
                return Err(NodeError::Connect(format!("the dealer reported an error: {why}")));
            }
            _ => return Err(NodeError::Handshake(HandshakeError::UnexpectedMessage)),
        }
    }
}

async fn send(ws: &mut Ws, msg: &ClientMessage) -> Result<(), NodeError> {
    let text = msg.encode().map_err(|e| NodeError::BadAction(e.to_string()))?;
    ws.send(Message::text(text)).await.map_err(|e| NodeError::Connect(e.to_string()))
}

async fn next_message(ws: &mut Ws, deadline: Instant) -> Result<ServerMessage, NodeError> {
    loop {
        let frame = timeout_at(deadline, ws.next()).await.map_err(|_| NodeError::Timeout("handshake"))?;
        match frame {
            Some(Ok(Message::Text(t))) => {
                return decode_server(t.as_str()).map_err(|e| NodeError::Connect(format!("bad frame: {e}")))
            }
            Some(Ok(Message::Close(f))) => {
                return Err(NodeError::Connect(format!(
                    "closed by the dealer{}",
                    f.map(|f| format!(": {}", f.reason)).unwrap_or_default()
                )))
            }
            Some(Ok(_)) => continue,
            Some(Err(e)) => return Err(NodeError::Connect(e.to_string())),
            None => return Err(NodeError::Connect("connection closed".into())),
        }
    }
}

impl PlayerNode {
    /// Connects to the dealer of `invite` as `me`, runs the handshake and
    /// takes a seat. Fails when the dealer's key is not the invite's
    /// ([`HandshakeError::DealerKeyMismatch`]), the handshake is refused,
    /// or the seat is refused.
    pub async fn connect(
        invite: &Invite,
        me: Arc<Identity>,
        config: NodeConfig,
    ) -> Result<PlayerNode, NodeError> {
        let deadline = Instant::now() + config.connect_timeout;
        let (ws, session) = open(invite, config.tls.as_ref(), &me, None, deadline).await?;
        Self::seated(invite, me, config, ws, session, deadline).await
    }

    /// Quick match (SPEC.md §9.8): asks `dealer`'s node (any invite URL of
    /// it; only its address and key are used) for a seat at a room of
    /// `request`'s game and tier, runs the handshake with the room it
    /// names, checks that the room configuration the dealer signed plays
    /// that game and tier, and takes the seat. Reconnects go to that room.
    pub async fn quick_match(
        dealer: &Invite,
        request: QuickMatch,
        me: Arc<Identity>,
        config: NodeConfig,
    ) -> Result<PlayerNode, NodeError> {
        let deadline = Instant::now() + config.connect_timeout;
        let (mut ws, invite) = quick_match(dealer, &request, config.tls.as_ref(), deadline).await?;
        let session = handshake(&mut ws, &invite, &me, None, deadline).await?;
        check_matched(&request, &session.room_config)?;
        Self::seated(&invite, me, config, ws, session, deadline).await
    }

    /// After the handshake: starts the node's task and asks for the seat.
    async fn seated(
        invite: &Invite,
        me: Arc<Identity>,
        config: NodeConfig,
        ws: Ws,
        session: ClientSession,
        deadline: Instant,
    ) -> Result<PlayerNode, NodeError> {
        let verifier = SessionVerifier::new(
            invite.dealer,
            invite.room.clone(),
            Arc::clone(&me),
            session.dealer.encryption,
            session.shared_key.clone(),
        );
        // Every hand must carry the room configuration the dealer signed in
        // the challenge, which binds its commission (SPEC.md §10.3).
        let verifier = verifier.with_room_config(session.room_config.clone());
        let (cmd_tx, cmd_rx) = mpsc::channel(64);
        let (ev_tx, events) = mpsc::unbounded_channel();
        let state = Arc::new(Mutex::new(NodeState { connected: true, ..NodeState::default() }));
        let (joined_tx, joined_rx) = oneshot::channel();
        let actor = Actor {
            invite: invite.clone(),
            me: Arc::clone(&me),
            config,
            token: session.reconnect_token,
            verifier,
            events: ev_tx,
            state: Arc::clone(&state),
            queries: HashMap::new(),
            next_seq: HashMap::new(),
            open_hand: None,
            joined: Some(joined_tx),
            closing: false,
            last_turn: None,
            resuming: false,
            blind: crate::blind::BlindSeat::for_room(session.room_config.as_str()),
        };
        let task = tokio::spawn(actor.run(ws, cmd_rx));
        let handle = NodeHandle { id: me.id(), cmd: cmd_tx, state };
        let node = PlayerNode { handle, invite: invite.clone(), events, task: Some(task) };
        match timeout_at(deadline, joined_rx).await {
            Ok(Ok(Ok(()))) => Ok(node),
            Ok(Ok(Err(e))) => Err(e),
            Ok(Err(_)) => Err(NodeError::Closed),
            Err(_) => Err(NodeError::Timeout("join")),
        }
    }

    /// This player's id.
    pub fn id(&self) -> PlayerId {
        self.handle.id
    }

    /// The invite this node connected with.
    pub fn invite(&self) -> &Invite {
        &self.invite
    }

    /// A cloneable handle for acting and querying from other tasks.
    pub fn handle(&self) -> NodeHandle {
        self.handle.clone()
    }

    /// The next event; `None` once the node has stopped.
    pub async fn next_event(&mut self) -> Option<NodeEvent> {
        self.events.recv().await
    }

    /// A snapshot of seat, room, connection, hand and pending turn.
    pub fn state(&self) -> NodeState {
        self.handle.state()
    }

    /// The current (or last) hand as this player sees it.
    pub fn hand(&self) -> Option<HandView> {
        self.handle.state().hand
    }

    /// See [`NodeHandle::act`].
    pub async fn act(&self, action: Value) -> Result<(HandId, u32), NodeError> {
        self.handle.act(action).await
    }

    /// See [`NodeHandle::query`].
    pub async fn query(&self, kind: QueryType) -> Result<QueryData, NodeError> {
        self.handle.query(kind).await
    }

    /// See [`NodeHandle::fetch_hand`].
    pub async fn fetch_hand(&self, hand_id: HandId) -> Result<HandRecord, NodeError> {
        self.handle.fetch_hand(hand_id).await
    }

    /// Skips the coming hands but keeps the seat.
    pub async fn sit_out(&self) -> Result<(), NodeError> {
        self.handle.sit_out().await
    }

    /// Plays again from the next hand.
    pub async fn sit_in(&self) -> Result<(), NodeError> {
        self.handle.sit_in().await
    }

    /// Drops the WebSocket without leaving, as a network failure would; the
    /// node then reconnects with its token (for tests and demos).
    pub async fn drop_connection(&self) -> Result<(), NodeError> {
        self.handle.command(Command::DropConnection).await
    }

    /// Leaves the room and closes the connection. Takes the node (call it
    /// last); [`NodeHandle::leave`] leaves while the node is still read.
    pub async fn leave(mut self) -> Result<(), NodeError> {
        self.handle.command(Command::Send(Box::new(ClientMessage::Leave))).await?;
        self.handle.command(Command::Close).await?;
        if let Some(t) = self.task.take() {
            let _ = t.await;
        }
        Ok(())
    }

    /// Closes the connection (the seat stays for the reconnect window).
    pub async fn close(mut self) {
        let _ = self.handle.command(Command::Close).await;
        if let Some(t) = self.task.take() {
            let _ = t.await;
        }
    }
}

impl NodeHandle {
    /// This player's id.
    pub fn id(&self) -> PlayerId {
        self.id
    }

    /// A snapshot of seat, room, connection, hand and pending turn.
    pub fn state(&self) -> NodeState {
        self.state.lock().map(|s| s.clone()).unwrap_or_default()
    }

    async fn command(&self, c: Command) -> Result<(), NodeError> {
        self.cmd.send(c).await.map_err(|_| NodeError::Closed)
    }

    /// Signs `action` (a game action JSON, e.g. `{"type":"call"}`) with the
    /// current hand's next sequence number and sends it. Returns the hand and
    /// seq used; a refusal arrives as [`NodeEvent::ActionRejected`].
    pub async fn act(&self, action: Value) -> Result<(HandId, u32), NodeError> {
        let (reply, rx) = oneshot::channel();
        self.command(Command::Act { action, reply }).await?;
        rx.await.map_err(|_| NodeError::Closed)?
    }

    /// Asks the dealer a question; the answer is matched by nonce and must
    /// come within the configured timeout (5 s by default).
    pub async fn query(&self, kind: QueryType) -> Result<QueryData, NodeError> {
        let (reply, rx) = oneshot::channel();
        self.command(Command::Query { kind, reply }).await?;
        rx.await.map_err(|_| NodeError::Closed)?
    }

    /// Asks the dealer for a finished hand of the room (the `hand` query,
    /// every page of it) and runs its events through live verification: a
    /// hand still pending here whose `audit-reveal` is out completes
    /// ([`NodeEvent::AuditCompleted`], and its saved transcript is
    /// rewritten); a record that contradicts what this node saw raises
    /// [`NodeEvent::VerificationFailed`]. A hand this node does not hold is
    /// returned unchecked (audit it with [`claw_audit::Auditor`]).
    pub async fn fetch_hand(&self, hand_id: HandId) -> Result<HandRecord, NodeError> {
        let (reply, rx) = oneshot::channel();
        self.command(Command::FetchHand { hand_id, reply }).await?;
        rx.await.map_err(|_| NodeError::Closed)?
    }

    /// Skips the coming hands but keeps the seat.
    pub async fn sit_out(&self) -> Result<(), NodeError> {
        self.command(Command::Send(Box::new(ClientMessage::SitOut))).await
    }

    /// Plays again from the next hand.
    pub async fn sit_in(&self) -> Result<(), NodeError> {
        self.command(Command::Send(Box::new(ClientMessage::SitIn))).await
    }

    /// Answers the open ready check ([`NodeEvent::ReadyCheck`]); sent
    /// before any check, it readies the seat for the next one.
    pub async fn ready(&self) -> Result<(), NodeError> {
        self.command(Command::Send(Box::new(ClientMessage::Ready))).await
    }

    /// Votes on the open rematch ([`NodeEvent::Rematch`]): `false` ends the
    /// match for everyone and frees this seat.
    pub async fn rematch_vote(&self, accept: bool) -> Result<(), NodeError> {
        self.command(Command::Send(Box::new(ClientMessage::RematchVote(RematchVote { accept })))).await
    }

    /// Drops the WebSocket without leaving, as a network failure would; the
    /// node then reconnects with its token (for tests and demos).
    pub async fn drop_connection(&self) -> Result<(), NodeError> {
        self.command(Command::DropConnection).await
    }

    /// Leaves the room (the node then closes).
    pub async fn leave(&self) -> Result<(), NodeError> {
        self.command(Command::Send(Box::new(ClientMessage::Leave))).await?;
        self.command(Command::Close).await
    }
}

impl Drop for PlayerNode {
    fn drop(&mut self) {
        if let Some(t) = self.task.take() {
            t.abort();
        }
    }
}

struct PendingQuery {
    reply: Reply,
    deadline: Instant,
}

/// Who waits for a query's answer.
enum Reply {
    /// A `query-result`.
    Data(oneshot::Sender<Result<QueryData, NodeError>>),
    /// `hand-record` pages: the events so far (the first page's record).
    Hand { record: Option<HandRecord>, reply: oneshot::Sender<Result<HandRecord, NodeError>> },
}

impl Reply {
    fn fail(self, e: NodeError) {
        match self {
            Reply::Data(r) => {
                let _ = r.send(Err(e));
            }
            Reply::Hand { reply, .. } => {
                let _ = reply.send(Err(e));
            }
        }
    }
}

/// Checks one event. The event that ends a hand (`game-end`, or the
/// deferred `audit-reveal`) runs the hand's audit — batch verification and
/// the rules' replay, milliseconds of CPU — so on a multi-thread runtime it
/// runs with this worker handed over to the blocking pool
/// (`block_in_place`): the node's other tasks keep their workers, and this
/// node's events stay in order.
fn check_event(verifier: &mut SessionVerifier, env: &EventEnvelope) -> Result<Option<Update>, VerifyError> {
    let audits = ends_hand(env.body.as_str());
    let multi_thread = tokio::runtime::Handle::try_current()
        .is_ok_and(|h| h.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread);
    if audits && multi_thread {
        tokio::task::block_in_place(|| verifier.on_event(env))
    } else {
        verifier.on_event(env)
    }
}

/// Whether an event body ends a hand, from its first member alone (the
/// dealer encodes `type` first): no second parse of every body. Only a
/// scheduling hint; a body written otherwise is checked just the same.
fn ends_hand(body: &str) -> bool {
    body.starts_with(r#"{"type":"game-end""#) || body.starts_with(r#"{"type":"audit-reveal""#)
}

struct Actor {
    invite: Invite,
    me: Arc<Identity>,
    config: NodeConfig,
    token: Nonce,
    verifier: SessionVerifier,
    events: mpsc::UnboundedSender<NodeEvent>,
    state: Arc<Mutex<NodeState>>,
    queries: HashMap<String, PendingQuery>,
    next_seq: HashMap<HandId, u32>,
    /// The hand this player is dealt into whose end has not arrived yet.
    open_hand: Option<HandId>,
    joined: Option<oneshot::Sender<Result<(), NodeError>>>,
    closing: bool,
    /// `(hand, seq, deadline_ms)` of the last `your-turn` on this connection:
    /// the same again is the dealer's low-time warning, not a new turn.
    last_turn: Option<(HandId, u32, u64)>,
    /// Reconnected, and the join not answered yet: frames now are the
    /// dealer's resend of the running hand.
    resuming: bool,
    /// A blind table's seat (SPEC.md §9.7): keys, shuffles, shares.
    blind: Option<crate::blind::BlindSeat>,
}

enum Exit {
    /// The connection dropped: reconnect.
    Dropped(String),
    /// Stop for good.
    Stop(String),
}

impl Actor {
    fn emit(&self, e: NodeEvent) {
        let _ = self.events.send(e);
    }

    fn update_state(&self, f: impl FnOnce(&mut NodeState)) {
        if let Ok(mut s) = self.state.lock() {
            f(&mut s);
        }
    }

    async fn run(mut self, ws: Ws, mut cmds: mpsc::Receiver<Command>) {
        let mut ws = Some(ws);
        let reason = loop {
            self.last_turn = None; // a resumed session is sent its turn again
            let exit = match ws.take() {
                Some(mut w) => {
                    if let Err(e) = self.join(&mut w).await {
                        Exit::Dropped(e.to_string())
                    } else {
                        let exit = self.session(&mut w, &mut cmds).await;
                        let _ = tokio::time::timeout(Duration::from_secs(1), w.close(None)).await;
                        exit
                    }
                }
                None => Exit::Dropped("not connected".into()),
            };
            self.update_state(|s| {
                s.connected = false;
                s.turn = None;
            });
            self.fail_queries(|| NodeError::NotConnected);
            match exit {
                Exit::Stop(r) => break r,
                Exit::Dropped(r) if self.closing => break r,
                Exit::Dropped(r) => {
                    if let Some(j) = self.joined.take() {
                        let _ = j.send(Err(NodeError::Connect(r.clone())));
                        break r;
                    }
                    self.emit(NodeEvent::Disconnected { reason: r.clone() });
                    self.verifier.seeds_uncertain();
                    match self.reconnect(&mut cmds).await {
                        Some((w, attempts)) => {
                            // The dealer resends the running hand before it
                            // answers the join.
                            self.resuming = true;
                            self.emit(NodeEvent::Reconnected { attempts });
                            ws = Some(w);
                        }
                        None => break format!("gave up reconnecting after: {r}"),
                    }
                }
            }
        };
        self.emit(NodeEvent::Closed { reason });
    }

    async fn join(&mut self, ws: &mut Ws) -> Result<(), NodeError> {
        let j = JoinRequest {
            sdk_version: SDK_VERSION.to_owned(),
            name: self.config.name.clone(),
            seat: self.config.seat,
            buy_in: self.config.buy_in,
        };
        send(ws, &ClientMessage::JoinRequest(j)).await?;
        self.update_state(|s| s.connected = true);
        Ok(())
    }

    async fn reconnect(&mut self, cmds: &mut mpsc::Receiver<Command>) -> Option<(Ws, u32)> {
        let started = Instant::now();
        let policy = self.config.reconnect;
        let mut attempt = 0u32;
        loop {
            let wait = Instant::now() + policy.delay(attempt);
            // Keep answering commands while waiting (they fail: not connected).
            loop {
                tokio::select! {
                    _ = sleep_until(wait) => break,
                    c = cmds.recv() => match c {
                        None | Some(Command::Close) => { self.closing = true; return None }
                        Some(c) => self.refuse(c),
                    },
                }
            }
            attempt += 1;
            let deadline = Instant::now() + self.config.connect_timeout;
            match open(&self.invite, self.config.tls.as_ref(), &self.me, Some(self.token), deadline).await {
                Ok((ws, session)) => {
                    self.token = session.reconnect_token;
                    self.verifier.rekey(session.dealer.encryption, session.shared_key.clone());
                    return Some((ws, attempt));
                }
                Err(NodeError::Handshake(
                    e @ (HandshakeError::DealerKeyMismatch { .. } | HandshakeError::Rejected(_)),
                )) => {
                    tracing::warn!(error = %e, "reconnect refused");
                    return None;
                }
                Err(e) => tracing::debug!(error = %e, attempt, "reconnect failed"),
            }
            if started.elapsed() >= policy.give_up_after {
                return None;
            }
        }
    }

    fn refuse(&self, c: Command) {
        match c {
            Command::Act { reply, .. } => {
                let _ = reply.send(Err(NodeError::NotConnected));
            }
            Command::Query { reply, .. } => {
                let _ = reply.send(Err(NodeError::NotConnected));
            }
            Command::FetchHand { reply, .. } => {
                let _ = reply.send(Err(NodeError::NotConnected));
            }
            _ => {}
        }
    }

    fn fail_queries(&mut self, e: impl Fn() -> NodeError) {
        for (_, q) in self.queries.drain() {
            q.reply.fail(e());
        }
    }

    async fn session(&mut self, ws: &mut Ws, cmds: &mut mpsc::Receiver<Command>) -> Exit {
        loop {
            let next_deadline = self.queries.values().map(|q| q.deadline).min();
            tokio::select! {
                frame = ws.next() => {
                    let text = match frame {
                        Some(Ok(Message::Text(t))) => t,
                        Some(Ok(Message::Close(f))) => {
                            return Exit::Dropped(format!("closed by the dealer{}", f.map(|f| format!(": {}", f.reason)).unwrap_or_default()))
                        }
                        Some(Ok(_)) => continue,
                        Some(Err(e)) => return Exit::Dropped(e.to_string()),
                        None => return Exit::Dropped("connection closed".into()),
                    };
                    match decode_server(text.as_str()) {
                        Ok(msg) => {
                            if let Err(e) = self.on_message(ws, msg).await {
                                return Exit::Dropped(e.to_string());
                            }
                            if self.closing {
                                return Exit::Stop("kicked".into());
                            }
                        }
                        Err(e) => tracing::warn!(error = %e, "undecodable frame from the dealer"),
                    }
                }
                c = cmds.recv() => match c {
                    None | Some(Command::Close) => {
                        self.closing = true;
                        return Exit::Stop("closed".into());
                    }
                    Some(Command::DropConnection) => return Exit::Dropped("connection dropped on request".into()),
                    Some(c) => {
                        if let Err(e) = self.on_command(ws, c).await {
                            return Exit::Dropped(e.to_string());
                        }
                    }
                },
                _ = async { match next_deadline { Some(d) => sleep_until(d).await, None => std::future::pending().await } } => {
                    let now = Instant::now();
                    let expired: Vec<String> = self.queries.iter().filter(|(_, q)| q.deadline <= now).map(|(n, _)| n.clone()).collect();
                    for n in expired {
                        if let Some(q) = self.queries.remove(&n) {
                            q.reply.fail(NodeError::Timeout("query"));
                        }
                    }
                }
            }
        }
    }

    async fn on_command(&mut self, ws: &mut Ws, c: Command) -> Result<(), NodeError> {
        match c {
            Command::Act { action, reply } => {
                let r = self.sign_action(action);
                match r {
                    Ok((msg, hand, seq)) => {
                        send(ws, &msg).await?;
                        self.update_state(|s| s.turn = None);
                        let _ = reply.send(Ok((hand, seq)));
                    }
                    Err(e) => {
                        let _ = reply.send(Err(e));
                    }
                }
            }
            Command::Query { kind, reply } => {
                self.ask(ws, Query::new(kind, query_nonce()), Reply::Data(reply)).await?;
            }
            Command::FetchHand { hand_id, reply } => {
                let reply = Reply::Hand { record: None, reply };
                self.ask(ws, Query::hand(hand_id, 0, query_nonce()), reply).await?;
            }
            Command::Send(m) => send(ws, &m).await?,
            Command::DropConnection | Command::Close => {}
        }
        Ok(())
    }

    /// Sends a query; its answer goes to `reply` (or a timeout does).
    async fn ask(&mut self, ws: &mut Ws, q: Query, reply: Reply) -> Result<(), NodeError> {
        let nonce = q.nonce.clone();
        send(ws, &ClientMessage::Query(q)).await?;
        let deadline = Instant::now() + self.config.query_timeout;
        self.queries.insert(nonce, PendingQuery { reply, deadline });
        Ok(())
    }

    /// A `hand-record` page: asks for the next one, or verifies the whole
    /// record's events (identical ones already seen are skipped) and answers.
    async fn on_hand_page(&mut self, ws: &mut Ws, nonce: &str, page: HandRecord) -> Result<(), NodeError> {
        let (record, reply) = match self.queries.remove(nonce).map(|q| q.reply) {
            Some(Reply::Hand { record, reply }) => (record, reply),
            Some(other) => {
                other.fail(NodeError::BadAnswer("a hand-record to another query".into()));
                return Ok(());
            }
            None => {
                tracing::debug!("unasked hand-record; ignored");
                return Ok(());
            }
        };
        let next = page.next_seq;
        let record = match record {
            None => page,
            Some(mut r) if r.hand_id == page.hand_id => {
                r.events.extend(page.events);
                r.reveal = page.reveal;
                r
            }
            Some(_) => {
                let _ = reply.send(Err(NodeError::BadAnswer("a hand-record page of another hand".into())));
                return Ok(());
            }
        };
        if let Some(from) = next {
            // Each page must move on, and a hand has at most u16::MAX events:
            // a dealer cannot keep the node paging forever.
            let last = record.events.last().map(|e| e.seq);
            if last.is_none_or(|l| from <= l) || record.events.len() > usize::from(u16::MAX) {
                let _ = reply.send(Err(NodeError::BadAnswer("hand-record pages that do not advance".into())));
                return Ok(());
            }
            let q = Query::hand(record.hand_id, from, query_nonce());
            return self.ask(ws, q, Reply::Hand { record: Some(record), reply }).await;
        }
        // Only a hand this session holds is checked against it: the events
        // of another one would replay as a live hand (and draw a seed).
        let known = self.verifier.view(&record.hand_id).is_some();
        for e in record.events.iter().filter(|e| known && e.hand_id == record.hand_id) {
            match check_event(&mut self.verifier, e) {
                Ok(Some(u)) => self.on_update(ws, u).await?,
                Ok(None) => {}
                Err(e) => self.on_failure(e),
            }
        }
        let _ = reply.send(Ok(HandRecord { next_seq: None, ..record }));
        Ok(())
    }

    fn sign_action(&mut self, action: Value) -> Result<(ClientMessage, HandId, u32), NodeError> {
        let (hand, turn_seq) = {
            let s = self.state.lock().map_err(|_| NodeError::Closed)?;
            match (&s.turn, &s.hand) {
                (Some(t), _) => (t.hand_id, t.seq),
                (None, Some(h)) if h.result.is_none() => (h.hand_id, 0),
                _ => return Err(NodeError::NoHand),
            }
        };
        if let Err(e) = self.verifier.before_acting(&hand) {
            self.on_failure(e.clone());
            return Err(NodeError::Unverified(e.to_string()));
        }
        let raw = RawJson::from_value(&action).map_err(|e| NodeError::BadAction(e.to_string()))?;
        let seq = self.next_seq.get(&hand).copied().unwrap_or(0).max(turn_seq);
        self.next_seq.insert(hand, seq.saturating_add(1));
        let signed = SignedAction::sign(&self.me, hand, seq, raw);
        self.verifier.record_my_action(&hand, seq, signed.action.as_str(), signed.sig);
        Ok((ClientMessage::Action(signed), hand, seq))
    }

    async fn on_message(&mut self, ws: &mut Ws, msg: ServerMessage) -> Result<(), NodeError> {
        match msg {
            ServerMessage::JoinResponse(j) => {
                self.resuming = false;
                if j.accepted {
                    self.update_state(|s| {
                        s.seat = j.seat;
                        if j.room.is_some() {
                            s.room = j.room.clone();
                        }
                    });
                    if let Some(tx) = self.joined.take() {
                        let _ = tx.send(Ok(()));
                    }
                    self.emit(NodeEvent::Joined {
                        player: self.me.id(),
                        seat: j.seat,
                        room: j.room,
                        players: j.players,
                        message: j.message,
                    });
                } else {
                    let e =
                        NodeError::JoinRefused { reason: j.reason, message: j.message.unwrap_or_default() };
                    match self.joined.take() {
                        Some(tx) => {
                            let _ = tx.send(Err(e));
                        }
                        None => self.emit(NodeEvent::DealerError {
                            code: ErrorCode::NotAllowed,
                            message: e.to_string(),
                        }),
                    }
                    self.closing = true;
                }
            }
            ServerMessage::Event(env) => match check_event(&mut self.verifier, &env) {
                Ok(u) => {
                    // Blind tables: answer what the event asks (verified first).
                    let asks = match self.blind.as_mut() {
                        Some(b) => {
                            for (position, card) in b.opened(&env) {
                                self.verifier.receive_blind_card(&env.hand_id, position, card);
                            }
                            b.on_event(&self.me, &env, &mut OsRng)
                        }
                        None => Vec::new(),
                    };
                    for m in asks {
                        send(ws, &m).await?;
                    }
                    if let Some(u) = u {
                        self.on_update(ws, u).await?;
                    }
                }
                Err(e) => self.on_failure(e),
            },
            ServerMessage::Turn(t) => self.update_state(|s| s.acting = Some((t.hand_id, t.acting))),
            ServerMessage::BankerQueue(q) => self.update_state(|s| s.banker_queue = Some(q)),
            ServerMessage::YourTurn(t) => {
                let acting = claw_protocol::messages::Acting {
                    player: self.me.id(),
                    seat: t.seat,
                    deadline_ms: t.deadline_ms,
                };
                self.update_state(|s| s.acting = Some((t.hand_id, acting)));
                let key = (t.hand_id, t.seq, t.deadline_ms);
                if self.last_turn.replace(key) == Some(key) {
                    // The same turn with a warning: shown in the state (if
                    // the turn is still pending), not a second turn.
                    self.update_state(|s| {
                        if let Some(p) = s.turn.as_mut().filter(|p| (p.hand_id, p.seq) == (t.hand_id, t.seq))
                        {
                            p.warning = t.warning;
                        }
                    });
                    return Ok(());
                }
                if let Err(e) = self.verifier.before_acting(&t.hand_id) {
                    // Not covered by a dealer signature: not acted on.
                    self.on_failure(e);
                    return Ok(());
                }
                let (hand, public_state) = match self.verifier.view(&t.hand_id) {
                    Some(v) => (v.hand.clone(), v.public_state.clone()),
                    None => (Vec::new(), Arc::new(Value::Null)),
                };
                let e = NodeEvent::YourTurn {
                    hand_id: t.hand_id,
                    seat: t.seat,
                    seq: t.seq,
                    actions: t.actions.clone(),
                    balance: t.balance,
                    deadline_ms: t.deadline_ms,
                    phase: t.phase.clone(),
                    hand,
                    public_state,
                };
                self.update_state(|s| s.turn = Some(t));
                self.emit(e);
            }
            ServerMessage::ActionRejected(r) => self.emit(NodeEvent::ActionRejected {
                hand_id: r.hand_id,
                seq: r.seq,
                code: r.code,
                reason: r.reason,
            }),
            ServerMessage::Kicked(k) => {
                // A replaced session is not ours to resume; every other kick ends the node.
                self.closing = true;
                self.emit(NodeEvent::Kicked { code: k.code, reason: k.reason });
            }
            ServerMessage::QueryResult(r) => match self.queries.remove(&r.nonce).map(|q| q.reply) {
                Some(Reply::Data(reply)) => {
                    let _ = reply.send(Ok(r.data));
                }
                Some(other) => other.fail(NodeError::BadAnswer("a query-result to a hand query".into())),
                None => {}
            },
            ServerMessage::QueryError(e) => {
                if let Some(q) = self.queries.remove(&e.nonce) {
                    q.reply.fail(NodeError::Query { code: e.error, message: e.message });
                }
            }
            ServerMessage::Error(e) => {
                // A hand voided after its end (SPEC.md §9.5: "hand <id> voided
                // [...]") binds nothing that follows it.
                if let Some(hand) = voided_hand(&e.message) {
                    self.verifier.hand_voided(&hand);
                }
                self.emit(NodeEvent::DealerError { code: e.code, message: e.message })
            }
            ServerMessage::HandRecord(a) => self.on_hand_page(ws, &a.nonce, a.record).await?,
            ServerMessage::Challenge(_) | ServerMessage::Accepted(_) | ServerMessage::Rejected(_) => {
                tracing::warn!("handshake message after the handshake; ignored");
            }
            ServerMessage::ReadyCheck(c) => self.emit(NodeEvent::ReadyCheck(c)),
            ServerMessage::Rematch(r) => self.emit(NodeEvent::Rematch(r)),
            // `matched` comes only before a handshake; `watching` only to a
            // connection without a seat.
            ServerMessage::Matched(_) | ServerMessage::Watching(_) => {
                tracing::debug!("a quick-match or live-feed message to a seated player; ignored");
            }
        }
        Ok(())
    }

    fn on_failure(&mut self, e: VerifyError) {
        tracing::warn!(error = %e, "live verification failed");
        self.emit(NodeEvent::VerificationFailed {
            hand_id: e.hand_id,
            seq: Some(e.seq),
            check: e.check,
            detail: e.detail,
        });
    }

    fn sync_hand(&self, hand: &HandId) {
        let view = self.verifier.view(hand).cloned();
        self.update_state(|s| s.hand = view);
    }

    /// A hand is being prepared: report an earlier hand of this player's
    /// that never reached its end here, and send this hand's seed.
    async fn on_prepared(
        &mut self,
        ws: &mut Ws,
        hand_id: HandId,
        seat: Option<Seat>,
    ) -> Result<(), NodeError> {
        // A hand this player was in that never reached its end here
        // (its end came while the connection was down, or the dealer
        // voided it): report it, it cannot be audited.
        if let Some(old) = self.open_hand.take().filter(|h| *h != hand_id) {
            self.emit(NodeEvent::HandIncomplete {
                hand_id: old,
                reason: "the hand's end was not received (disconnected, or the hand was voided)".into(),
            });
        }
        if seat.is_some() {
            self.open_hand = Some(hand_id);
        }
        // One seed per hand: a hand-prepare resent after a reconnect
        // gets the seed already sent, or a first one (it may be late:
        // the dealer's seed window may have closed while away).
        if let (Some(_), true) = (seat, self.config.contribute_seed) {
            let seed = self.verifier.my_seed(&hand_id).unwrap_or_else(|| Seed::random(&mut OsRng));
            send(ws, &ClientMessage::PlayerSeed(PlayerSeed::sign(&self.me, hand_id, seed))).await?;
            self.verifier.set_my_seed(&hand_id, seed);
            if self.resuming {
                self.verifier.seeds_uncertain();
            }
        }
        self.next_seq.retain(|h, _| *h == hand_id);
        self.update_state(|s| s.turn = None);
        Ok(())
    }

    async fn on_update(&mut self, ws: &mut Ws, u: Update) -> Result<(), NodeError> {
        match u {
            Update::Event(ev) => {
                if let NodeEvent::HandPrepared { hand_id, seat, .. } = &ev {
                    self.on_prepared(ws, *hand_id, *seat).await?;
                }
                if let Some(hand_id) = ev.hand_id() {
                    self.sync_hand(&hand_id);
                }
                if let NodeEvent::ActionApplied { seat, .. } = &ev {
                    self.update_state(|s| {
                        if s.turn.as_ref().is_some_and(|t| t.seat == *seat) {
                            s.turn = None;
                        }
                    });
                }
                self.emit(ev);
            }
            Update::Ended { hand_id, result, audit } => {
                if self.open_hand == Some(hand_id) {
                    self.open_hand = None;
                }
                self.sync_hand(&hand_id);
                self.update_state(|s| s.turn = None);
                let summary = AuditSummary::of(&audit);
                if let Err(e) = audit.as_ref() {
                    self.emit(NodeEvent::VerificationFailed {
                        hand_id,
                        seq: None,
                        check: e.check,
                        detail: e.detail.clone(),
                    });
                }
                let transcript = self.save(&hand_id);
                let seat = self.verifier.view(&hand_id).and_then(|v| v.seat);
                self.emit(NodeEvent::HandEnded { hand_id, seat, result, audit: summary, transcript });
            }
            Update::AuditCompleted { hand_id, audit } => {
                let summary = AuditSummary::of(&audit);
                if let Err(e) = audit.as_ref() {
                    self.emit(NodeEvent::VerificationFailed {
                        hand_id,
                        seq: None,
                        check: e.check,
                        detail: e.detail.clone(),
                    });
                }
                self.save(&hand_id);
                self.emit(NodeEvent::AuditCompleted { hand_id, audit: summary });
            }
        }
        Ok(())
    }

    fn save(&self, hand: &HandId) -> Option<PathBuf> {
        let dir = self.config.save_transcripts.as_ref()?;
        let t = self.verifier.transcript(hand)?;
        let path = dir.join(format!("{hand}.jsonl"));
        let r = std::fs::create_dir_all(dir)
            .map_err(|e| e.to_string())
            .and_then(|_| t.to_jsonl().map_err(|e| e.to_string()))
            .and_then(|text| std::fs::write(&path, text).map_err(|e| e.to_string()));
        match r {
            Ok(()) => Some(path),
            Err(e) => {
                tracing::warn!(error = %e, path = %path.display(), "could not save the transcript");
                None
            }
        }
    }
}

/// A fresh query nonce (32 hex characters).
fn query_nonce() -> String {
    Nonce::random(&mut OsRng).to_string()[..32].to_owned()
}

/// The hand a dealer's void notice names (`hand <32 hex> voided [`).
fn voided_hand(message: &str) -> Option<HandId> {
    let rest = message.strip_prefix("hand ")?;
    let (id, tail) = rest.split_at_checked(32)?;
    tail.starts_with(" voided [").then(|| id.parse().ok()).flatten()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_matched_room_must_play_the_game_and_tier_asked_for() {
        let room = |game: &str, settings: Value| {
            let c = serde_json::json!({
                "room_id": "r", "game": game, "settings": settings, "buy_in": 1000, "min_bet": 10,
                "max_bet": 0, "commission": 0, "min_players": 2, "max_players": 6, "entropy": "joint",
                "reveal": "full", "action_timeout_ms": 1, "between_hands_ms": 0, "seed_timeout_ms": 1
            });
            RawJson::from_string(c.to_string()).unwrap()
        };
        let ask =
            |game: &str, tier: Option<&str>| QuickMatch { game: game.into(), tier: tier.map(Into::into) };
        let silver = room("sam-gong", serde_json::json!({"tier": "silver"}));
        assert!(check_matched(&ask("sam-gong", Some("silver")), &silver).is_ok());
        assert!(check_matched(&ask("sam-gong", None), &silver).is_ok(), "any tier when none is asked");
        let e = check_matched(&ask("sam-gong", Some("gold")), &silver).unwrap_err();
        assert_eq!(e.to_string(), "quick match: asked for tier gold, seated at tier silver");
        let e = check_matched(&ask("blackjack", None), &silver).unwrap_err();
        assert_eq!(e.to_string(), "quick match: asked for blackjack, seated at a sam-gong room");
        let untiered = room("sam-gong", Value::Null);
        assert!(check_matched(&ask("sam-gong", Some("gold")), &untiered).is_err());
    }

    #[test]
    fn backoff_doubles_up_to_the_cap() {
        let p = ReconnectPolicy::default();
        assert_eq!(p.delay(0), Duration::from_millis(100));
        assert_eq!(p.delay(1), Duration::from_millis(200));
        assert_eq!(p.delay(5), Duration::from_millis(3200));
        assert_eq!(p.delay(6), Duration::from_secs(5));
        assert_eq!(p.delay(1000), Duration::from_secs(5));
    }

    #[test]
    fn the_dealers_encoding_of_a_hand_end_is_recognised_from_its_first_member() {
        let reveal = claw_protocol::messages::EventBody::AuditReveal(claw_protocol::messages::AuditReveal {
            dealer_seed: Seed::random(&mut OsRng),
            openings: Vec::new(),
        });
        assert!(ends_hand(reveal.to_raw().unwrap().as_str()));
        let other = claw_protocol::messages::EventBody::Reveal(claw_protocol::messages::Reveal {
            openings: Vec::new(),
        });
        assert!(!ends_hand(other.to_raw().unwrap().as_str()));
        // Written otherwise, it is only checked on this worker.
        assert!(!ends_hand(r#"{"openings":[],"type":"audit-reveal"}"#));
    }

    #[test]
    fn a_void_notice_names_its_hand() {
        let id = "00112233445566778899aabbccddeeff";
        let hand: HandId = id.parse().unwrap();
        assert_eq!(voided_hand(&format!("hand {id} voided [chips]: x; its chips are refunded")), Some(hand));
        for other in ["hand 0011 voided [", &format!("hand {id} settled"), "hand ", "héllo"] {
            assert_eq!(voided_hand(other), None, "{other}");
        }
    }

    #[test]
    fn refusals_are_said_in_words() {
        let e = NodeError::JoinRefused { reason: Some(JoinRejectReason::RoomFull), message: String::new() };
        assert_eq!(e.to_string(), "the dealer refused the seat: every seat is taken");
        let e = NodeError::JoinRefused {
            reason: Some(JoinRejectReason::InsufficientBalance),
            message: "balance 3 is below the buy-in 500".into(),
        };
        assert_eq!(e.to_string(), "the dealer refused the seat: balance 3 is below the buy-in 500");
        let e = NodeError::JoinRefused { reason: None, message: String::new() };
        assert_eq!(e.to_string(), "the dealer refused the seat: no reason given");
        let e = NodeError::Query { code: QueryErrorCode::NotSeated, message: String::new() };
        assert_eq!(e.to_string(), "the dealer did not answer the query: the query needs a seat");
    }

    /// The handshake error is part of the text, not a `source`: an error
    /// chain (`anyhow`'s `{:#}`) prints it once.
    #[test]
    fn a_wrong_dealer_key_is_said_once_with_both_keys() {
        let (expected, got) = (Identity::from_seed([1; 32]).id(), Identity::from_seed([2; 32]).id());
        let e = NodeError::from(HandshakeError::DealerKeyMismatch { expected, got });
        assert!(std::error::Error::source(&e).is_none());
        let chain = format!("{:#}", anyhow::Error::new(e).context("joining"));
        assert_eq!(chain.matches("the dealer's key is").count(), 1, "{chain}");
        assert!(chain.contains(&format!("is {got}, not the invite's {expected}")), "{chain}");
        assert!(!chain.contains("PlayerId("), "{chain}");
    }

    #[test]
    fn events_serialise_with_an_event_tag() {
        let e = NodeEvent::Closed { reason: "bye".into() };
        assert_eq!(
            serde_json::to_value(&e).unwrap(),
            serde_json::json!({"event": "closed", "reason": "bye"})
        );
    }
}
