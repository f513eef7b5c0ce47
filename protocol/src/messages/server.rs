//! Dealer → player messages (SPEC.md §9.3). Only [`ServerMessage::Event`]
//! is part of the signed, chained transcript; the others are direct answers
//! to one player over its authenticated connection.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::blind::DealMode;
use super::events::{EntropyMode, RevealPolicy};
use super::{check_size, encode_frame, parse_as, peek_type, unknown, DecodeError, EncodeError};
use crate::bytes::HandId;
use crate::hand::ActionOption;
use crate::handshake::{Accepted, Challenge, Rejected};
use crate::ids::{Chips, PlayerId, Seat};
use crate::transcript::{EventEnvelope, Transcript, TranscriptHeader};

/// Every message the dealer sends.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "type", rename_all = "kebab-case")]
pub enum ServerMessage {
    /// Handshake step 2.
    Challenge(Challenge),
    /// Handshake step 4, success.
    Accepted(Accepted),
    /// Handshake step 4, failure.
    Rejected(Rejected),
    /// Answer to `join-request`.
    JoinResponse(JoinResponse),
    /// A signed, chained hand event (broadcast to the whole table).
    Event(EventEnvelope),
    /// It is this player's turn (to the actor only).
    YourTurn(YourTurn),
    /// Whose turn it is and until when (to the hand's other players).
    Turn(Turn),
    /// Who banks next at a table whose banker rotates (to the whole room).
    BankerQueue(BankerQueue),
    /// The player's action was refused (to the actor only).
    ActionRejected(ActionRejected),
    /// The player was removed from the room.
    Kicked(Kicked),
    /// Answer to a `query`.
    QueryResult(QueryResult),
    /// A `query` could not be answered.
    QueryError(QueryError),
    /// Answer to a `hand` query (its own message: the signed events it
    /// carries are kept as exact text, which a `query-result` cannot).
    HandRecord(HandAnswer),
    /// A frame or request was refused (bad frame, rate limit, bad seed…).
    Error(ErrorMsg),
    /// Answer to `quick-match`: the room this connection now belongs to.
    Matched(super::Matched),
    /// The ready check before a match (to the seated players).
    ReadyCheck(super::ReadyCheck),
    /// The rematch vote after a match (to its players).
    Rematch(super::Rematch),
    /// Answer to `watch`.
    Watching(super::Watching),
}

impl ServerMessage {
    /// The `type` of this message.
    pub fn type_name(&self) -> &'static str {
        match self {
            ServerMessage::Challenge(_) => "challenge",
            ServerMessage::Accepted(_) => "accepted",
            ServerMessage::Rejected(_) => "rejected",
            ServerMessage::JoinResponse(_) => "join-response",
            ServerMessage::Event(_) => "event",
            ServerMessage::YourTurn(_) => "your-turn",
            ServerMessage::Turn(_) => "turn",
            ServerMessage::BankerQueue(_) => "banker-queue",
            ServerMessage::ActionRejected(_) => "action-rejected",
            ServerMessage::Kicked(_) => "kicked",
            ServerMessage::QueryResult(_) => "query-result",
            ServerMessage::QueryError(_) => "query-error",
            ServerMessage::HandRecord(_) => "hand-record",
            ServerMessage::Error(_) => "error",
            ServerMessage::Matched(_) => "matched",
            ServerMessage::ReadyCheck(_) => "ready-check",
            ServerMessage::Rematch(_) => "rematch",
            ServerMessage::Watching(_) => "watching",
        }
    }

    /// Decodes one frame: size first, then `type`, then the fields.
    pub fn decode(frame: &str) -> Result<ServerMessage, DecodeError> {
        check_size(frame)?;
        let ty = peek_type(frame)?;
        Ok(match ty.as_str() {
            "challenge" => ServerMessage::Challenge(parse_as(frame)?),
            "accepted" => ServerMessage::Accepted(parse_as(frame)?),
            "rejected" => ServerMessage::Rejected(parse_as(frame)?),
            "join-response" => ServerMessage::JoinResponse(parse_as(frame)?),
            "event" => ServerMessage::Event(parse_as(frame)?),
            "your-turn" => ServerMessage::YourTurn(parse_as(frame)?),
            "turn" => ServerMessage::Turn(parse_as(frame)?),
            "banker-queue" => ServerMessage::BankerQueue(parse_as(frame)?),
            "action-rejected" => ServerMessage::ActionRejected(parse_as(frame)?),
            "kicked" => ServerMessage::Kicked(parse_as(frame)?),
            "query-result" => ServerMessage::QueryResult(parse_as(frame)?),
            "query-error" => ServerMessage::QueryError(parse_as(frame)?),
            "hand-record" => ServerMessage::HandRecord(parse_as(frame)?),
            "error" => ServerMessage::Error(parse_as(frame)?),
            "matched" => ServerMessage::Matched(parse_as(frame)?),
            "ready-check" => ServerMessage::ReadyCheck(parse_as(frame)?),
            "rematch" => ServerMessage::Rematch(parse_as(frame)?),
            "watching" => ServerMessage::Watching(parse_as(frame)?),
            other => return Err(unknown(other)),
        })
    }

    /// Encodes the message as one text frame.
    pub fn encode(&self) -> Result<String, EncodeError> {
        encode_frame(self)
    }
}

/// A room's configuration as players see it (`join-response`,
/// `room-config` query).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RoomConfig {
    /// The room's id (the path of the invite URL).
    pub room_id: String,
    /// Registry name of the game.
    pub game: String,
    /// The game's settings (normalised).
    pub settings: Value,
    /// Chips a player brings to the table.
    pub buy_in: Chips,
    /// Smallest bet (game-specific meaning; 0 when the game has none).
    pub min_bet: Chips,
    /// Largest bet (0 = no limit).
    pub max_bet: Chips,
    /// Fixed commission per player per hand.
    pub commission: Chips,
    /// Fewest players to start a hand.
    pub min_players: u8,
    /// Most seats.
    pub max_players: u8,
    /// Seed entropy mode of the hands.
    pub entropy: EntropyMode,
    /// Reveal policy of the hands.
    pub reveal: RevealPolicy,
    /// Time to act, milliseconds.
    pub action_timeout_ms: u64,
    /// Pause between hands, milliseconds.
    pub between_hands_ms: u64,
    /// How long the dealer waits for player seeds after `hand-prepare`,
    /// milliseconds: every hand's `seed_timeout_ms` (SPEC.md §9.5).
    pub seed_timeout_ms: u64,
    /// Policy `deferred`: how long after a hand's end the dealer publishes
    /// its `audit-reveal`, milliseconds; absent: when the room closes
    /// (SPEC.md §11.2 check 4).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reveal_delay_ms: Option<u64>,
    /// Who sees the cards: the dealer (default, omitted) or nobody but
    /// their owners (`blind`, SPEC.md §9.7).
    #[serde(default, skip_serializing_if = "DealMode::is_dealer")]
    pub deal: DealMode,
}

/// Why a join was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum JoinRejectReason {
    /// Every seat is taken.
    RoomFull,
    /// The player cannot cover the buy-in.
    InsufficientBalance,
    /// The balance is below the table's entry threshold (Sam Gong's tier
    /// entry chips), though it would cover a hand.
    BelowEntry,
    /// This identity already holds a seat (another connection).
    AlreadySeated,
    /// The room is closed.
    RoomClosed,
    /// The handshake did not complete on this connection.
    NotAuthenticated,
    /// The operator froze this identity: it may connect and see its
    /// balance, not sit down.
    Frozen,
    /// Anything else (see `message`).
    Other,
}

/// Status of a player in the room.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PlayerStatus {
    /// Connected, not seated yet.
    Joined,
    /// Seated, waiting for the next hand.
    Seated,
    /// In the current hand.
    Playing,
    /// Keeps the seat, skips hands.
    SitOut,
    /// Connection lost, within the reconnect window.
    Disconnected,
    /// Gone.
    Left,
}

/// A player as the room shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TablePlayer {
    /// The player's id.
    pub id: PlayerId,
    /// Display name, if given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Seat number in the room, if seated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seat: Option<Seat>,
    /// Status.
    pub status: PlayerStatus,
    /// Chips at the table.
    pub chips: Chips,
    /// Unix ms when the seat is freed unless the player acts on it:
    /// `disconnected`, the end of the reconnect window; `sit-out`, the end
    /// of the sit-out limit. Informational.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub until_ms: Option<u64>,
    /// The dealer's own AI plays this seat (a house-AI seat); absent = false.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub house_ai: bool,
}

/// The player the running hand waits for, as everyone at the table may see
/// it (`room-state`): whose timer runs, and until when.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Acting {
    /// Who is to act.
    pub player: PlayerId,
    /// Its seat in the hand.
    pub seat: Seat,
    /// Unix ms when the timeout action is taken (as in its `your-turn`).
    pub deadline_ms: u64,
}

/// `turn`: the hand waits for `acting` until its deadline, pushed to the
/// hand's other players when a turn starts and when its deadline moves
/// (the actor gets `your-turn`). Unsigned and informational, as
/// `room-state`'s `acting`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Turn {
    /// The hand.
    pub hand_id: HandId,
    /// Who is to act, its seat and its deadline.
    #[serde(flatten)]
    pub acting: Acting,
}

/// `banker-queue`: the order in which the seated players bank at a table
/// whose banker rotates (Sam Gong), pushed to the room when it changes,
/// at hand start, and to a connection when it is admitted. Unsigned and
/// informational: each hand's rules pick its banker.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BankerQueue {
    /// The running hand, whose banker is the first of `players`; absent
    /// between hands, when the first is the next hand's banker.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hand_id: Option<HandId>,
    /// Who banks, in order (players who cannot cover the minimum bet are
    /// left out; empty when no one can bank).
    pub players: Vec<PlayerId>,
}

/// `join-response`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct JoinResponse {
    /// Whether the player is seated.
    pub accepted: bool,
    /// Why not, when refused.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<JoinRejectReason>,
    /// Free text for people.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// The seat taken.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seat: Option<Seat>,
    /// The room's configuration (when accepted).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub room: Option<RoomConfig>,
    /// Who is in the room (when accepted).
    #[serde(default)]
    pub players: Vec<TablePlayer>,
}

/// `your-turn`: sent to the actor only, not chained (its options may
/// depend on the actor's hidden cards; its deadline is wall-clock time).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct YourTurn {
    /// The hand.
    pub hand_id: HandId,
    /// The actor's seat.
    pub seat: Seat,
    /// The `seq` the next signed action must carry (at least this).
    pub seq: u32,
    /// What the player may do.
    pub actions: Vec<ActionOption>,
    /// The player's chips left for this hand.
    pub balance: Chips,
    /// Unix time in milliseconds when the timeout action is taken.
    pub deadline_ms: u64,
    /// The game's phase name, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phase: Option<String>,
    /// A warning for people ("10 seconds left").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warning: Option<String>,
}

/// Why an action was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ActionRejectCode {
    /// Not this player's turn.
    NotYourTurn,
    /// The hand is over.
    HandOver,
    /// Not a legal move now.
    Illegal,
    /// A bet amount out of range.
    BadAmount,
    /// A card the player does not hold.
    CardNotInHand,
    /// Not an action of this game.
    Malformed,
    /// The signature does not verify.
    BadSignature,
    /// `seq` not greater than the last accepted one.
    BadSeq,
    /// `hand_id` is not the current hand.
    WrongHand,
    /// Too many messages.
    RateLimited,
    /// The player is not in this hand.
    NotInHand,
}

/// `action-rejected`: to the actor only; not part of the transcript.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ActionRejected {
    /// The hand named by the action.
    pub hand_id: HandId,
    /// The refused action's `seq`.
    pub seq: u32,
    /// Why, as a code.
    pub code: ActionRejectCode,
    /// Why, for people.
    pub reason: String,
}

/// Why a player was removed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum KickReason {
    /// Not enough chips for the next hand.
    InsufficientBalance,
    /// Too many protocol violations or floods.
    ProtocolViolation,
    /// Sat out or disconnected too long.
    Idle,
    /// Another connection authenticated with the same identity.
    Replaced,
    /// The room closed.
    RoomClosed,
    /// The table was dissolved: too few players for the room's
    /// `dissolve_after` (Sam Gong's 60 s rule); join again, or quick-match.
    Dissolved,
    /// The operator banned this identity (after its running hand settled).
    Banned,
    /// The operator froze this identity: its seat is freed after its
    /// running hand settled; it may reconnect to see its balance.
    Frozen,
}

/// `kicked`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Kicked {
    /// Why, as a code.
    pub code: KickReason,
    /// Why, for people.
    pub reason: String,
}

/// Phase of a room.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RoomPhase {
    /// Created, not listening.
    Idle,
    /// Accepting players.
    Waiting,
    /// A hand is running.
    Playing,
    /// Chips are being settled.
    Settling,
    /// Pause before the next hand.
    BetweenHands,
    /// Closed.
    Closed,
}

/// The data of a `query-result`, tagged by `query_type`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "query_type", rename_all = "kebab-case")]
pub enum QueryData {
    /// `my-balance`.
    MyBalance {
        /// The player's balance with the chip provider.
        balance: Chips,
    },
    /// `room-state`.
    RoomState {
        /// Room phase.
        phase: RoomPhase,
        /// Hands completed.
        hands_played: u64,
        /// Every player's status and chips.
        players: Vec<TablePlayer>,
        /// The player the running hand waits for, if any.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        acting: Option<Acting>,
    },
    /// `table-state`.
    TableState {
        /// The current hand, if one is running.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        hand_id: Option<HandId>,
        /// Its public state as of the last committed event (never a hidden
        /// card, never a step still waiting for its chip moves).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        public_state: Option<std::sync::Arc<Value>>,
    },
    /// `room-config`.
    RoomConfig {
        /// The configuration.
        config: RoomConfig,
    },
    /// `my-status`.
    MyStatus {
        /// Seat, if seated.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        seat: Option<Seat>,
        /// Status.
        status: PlayerStatus,
        /// Balance.
        balance: Chips,
        /// Credit score (lowered by leaving mid-hand).
        credit_score: i32,
        /// Chips the dealer holds for the player: taken by voided hands
        /// whose refund the chip service has not answered yet (retried).
        #[serde(default)]
        held: Chips,
    },
}

/// Whether a finished hand's secrets are all out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RevealState {
    /// Every secret is published (policy `full`, or the `audit-reveal` is out).
    Complete,
    /// Policy `deferred` and the `audit-reveal` is not published yet: the
    /// audit can only be *pending*.
    Pending,
}

/// A finished hand as the dealer's archive holds it (the `hand` query's
/// answer, one page at a time, and `GET /rooms/{room}/hands/{hand}`, whole).
/// Never holds a secret before its time: a pending `audit-reveal` is not in
/// the archive's hand file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HandRecord {
    /// The room.
    pub room_id: String,
    /// Hands dealt in the room before it (its archive file number).
    pub hand_number: u64,
    /// The hand.
    pub hand_id: HandId,
    /// Whether its reveal is out.
    pub reveal: RevealState,
    /// Signed events, in order, from the first one asked for; each written
    /// as its §10.1 frame, `"type":"event"` included ([`framed_events`]).
    #[serde(with = "framed_events")]
    pub events: Vec<EventEnvelope>,
    /// When the events stop short of the hand's last one (a frame holds
    /// 64 KiB): the `from_seq` to ask for next.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_seq: Option<u64>,
}

/// A [`HandRecord`]'s events as SPEC.md §10.1 frames: each with its
/// `"type":"event"` member, so that every event reads as a transcript line
/// does. Read with or without the member (dealers before it omitted it).
mod framed_events {
    use serde::ser::SerializeSeq;
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    use crate::transcript::EventEnvelope;

    #[derive(Serialize)]
    #[serde(tag = "type", rename_all = "kebab-case")]
    enum Frame<'a> {
        Event(&'a EventEnvelope),
    }

    pub fn serialize<S: Serializer>(events: &[EventEnvelope], s: S) -> Result<S::Ok, S::Error> {
        let mut seq = s.serialize_seq(Some(events.len()))?;
        for e in events {
            seq.serialize_element(&Frame::Event(e))?;
        }
        seq.end()
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<EventEnvelope>, D::Error> {
        Vec::<EventEnvelope>::deserialize(d)
    }
}

/// `hand-record`: `{"type":"hand-record","nonce":…,"record":HandRecord}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HandAnswer {
    /// The query's nonce.
    pub nonce: String,
    /// One page of the hand.
    pub record: HandRecord,
}

impl HandRecord {
    /// The whole record of an archived hand.
    pub fn new(room_id: impl Into<String>, hand_number: u64, t: &Transcript) -> HandRecord {
        HandRecord {
            room_id: room_id.into(),
            hand_number,
            hand_id: t.hand_id,
            reveal: t.reveal_state(),
            events: t.events.clone(),
            next_seq: None,
        }
    }

    /// The events from `from_seq` on that fit one `query-result` frame
    /// (at least one, when any is left); `next_seq` says where the rest
    /// starts.
    pub fn page(&self, from_seq: u64) -> HandRecord {
        // Room for the other fields and the nonce (≤ 64 bytes).
        let budget = super::MAX_FRAME_BYTES.saturating_sub(1024 + self.room_id.len());
        let rest = self.events.iter().filter(|e| e.seq >= from_seq);
        let mut events = Vec::new();
        let mut used = 0usize;
        let mut next_seq = None;
        for e in rest {
            // The event as the record writes it (its frame) and a comma.
            let len = e.frame_len() + 1;
            if !events.is_empty() && used.saturating_add(len) > budget {
                next_seq = Some(e.seq);
                break;
            }
            used = used.saturating_add(len);
            events.push(e.clone());
        }
        HandRecord { events, next_seq, room_id: self.room_id.clone(), ..*self }
    }

    /// The record as a transcript file holds it (header naming `dealer`).
    pub fn transcript(&self, dealer: PlayerId) -> Transcript {
        Transcript {
            header: Some(TranscriptHeader::new(dealer, self.room_id.clone(), self.hand_id)),
            hand_id: self.hand_id,
            events: self.events.clone(),
        }
    }
}

/// `query-result`: `{"type":"query-result","nonce":…,"query_type":…, data…}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct QueryResult {
    /// The query's nonce.
    pub nonce: String,
    /// The answer.
    #[serde(flatten)]
    pub data: QueryData,
}

/// Why a query failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum QueryErrorCode {
    /// `query_type` not known.
    UnknownQuery,
    /// Over the rate limit shared with actions.
    RateLimited,
    /// The query needs a seat.
    NotSeated,
    /// The answer (e.g. from the chip provider) took longer than 5 s.
    Timeout,
    /// The data is not available now.
    Unavailable,
    /// `hand`: no finished hand of the room has that id (or none was named).
    NotFound,
}

/// `query-error`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct QueryError {
    /// The query's nonce.
    pub nonce: String,
    /// Why, as a code.
    pub error: QueryErrorCode,
    /// Why, for people.
    #[serde(default)]
    pub message: String,
}

/// Codes of the generic `error` message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ErrorCode {
    /// The frame was over the size limit.
    Oversize,
    /// The frame was not a valid message.
    Malformed,
    /// The `type` is not known.
    UnknownType,
    /// Too many messages; the message was dropped.
    RateLimited,
    /// The message needs a completed handshake or a seat.
    NotAllowed,
    /// A `player-seed` was refused (wrong hand, late, bad signature,
    /// `from` not the session identity).
    BadSeed,
    /// Blind tables: a `blind-key`, `blind-shuffle` or `blind-shares` was
    /// refused (SPEC.md §9.7).
    BadShare,
    /// The dealer failed; the request may be retried.
    Internal,
}

/// `error`: a refused frame or request that has no more specific answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorMsg {
    /// Why, as a code.
    pub code: ErrorCode,
    /// Why, for people.
    #[serde(default)]
    pub message: String,
}

impl ErrorMsg {
    /// The answer to a frame that failed to decode.
    pub fn from_decode(e: &DecodeError) -> ErrorMsg {
        let code = match e {
            DecodeError::Oversize { .. } | DecodeError::ActionTooLarge { .. } => ErrorCode::Oversize,
            DecodeError::Malformed { .. } => ErrorCode::Malformed,
            DecodeError::UnknownType { .. } => ErrorCode::UnknownType,
        };
        ErrorMsg { code, message: e.to_string() }
    }
}
