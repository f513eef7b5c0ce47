//! Wire messages of protocol v1 (SPEC.md §9).
//!
//! Every message is one JSON object in one WebSocket text frame, tagged by a
//! `"type"` field in kebab-case: `{"type": "action", ...}`. Player → dealer
//! messages are [`ClientMessage`]; dealer → player messages are
//! [`ServerMessage`]. The hand events of the signed transcript travel inside
//! [`ServerMessage::Event`] envelopes ([`crate::transcript::EventEnvelope`])
//! whose body is an [`EventBody`].
//!
//! Decoding is strict about size and shape: [`decode_client`] and
//! [`decode_server`] refuse a frame longer than [`MAX_FRAME_BYTES`] before
//! parsing it, and name what was wrong ([`DecodeError`]). Fields that are
//! signed as JSON (a player's action, game settings, an event body) are kept
//! as the exact bytes received ([`RawJson`]), never re-serialised, so that a
//! signature over their SHA-256 can be checked by anyone later.

use std::borrow::Cow;
use std::fmt;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

use crate::bytes::{sha256, Digest};

mod blind;
mod client;
mod events;
mod lobby;
mod server;

/// The hand vocabulary the messages use ([`crate::hand`]).
pub use crate::hand::{ActionOption, CardFace, ChipMove, ChipOp, ChipParty, DealTo, HandResult};
pub use blind::{
    blind_deck_digest, blind_key_signing_body, blind_pieces_signing_body, blind_shuffle_signing_body,
    deck_view_fill, BlindComplaint, BlindComplaintMsg, BlindKeyMsg, BlindKeys, BlindPieces, BlindPiecesMsg,
    BlindRecover, BlindRecovery, BlindRecoveryMsg, BlindRequest, BlindReveal, BlindShares, BlindSharesMsg,
    BlindShuffle, BlindShuffleMsg, BlindSkip, DealMode, PositionShare, RequestedPosition, SeatKey,
    SkipReason,
};
pub use client::{
    action_signing_body, player_seed_signing_body, ClientMessage, JoinRequest, PlayerSeed, Query, QueryType,
    SignedAction,
};
pub use events::{
    config_hash, expected_start_balance, ActionResult, AuditReveal, CardTransfer, ChipsMoved, DealEvent,
    DealtCardMsg, DeckMode, EntropyMode, EventBody, GameEnd, GameStart, HandPlayer, HandPrepare,
    PreviousHand, Reveal, RevealPolicy, SeatSeed, TimeoutAction, TimeoutReason, CONFIG_TAG, MAX_HAND_STAKE,
};
pub use lobby::{
    Matched, QuickMatch, ReadyCheck, Rematch, RematchVote, VoteState, Watch, Watching, MAX_MATCH_NAME_LEN,
};
pub use server::{
    Acting, ActionRejectCode, ActionRejected, BankerQueue, ErrorCode, ErrorMsg, HandAnswer, HandRecord,
    JoinRejectReason, JoinResponse, KickReason, Kicked, PlayerStatus, QueryData, QueryError, QueryErrorCode,
    QueryResult, RevealState, RoomConfig, RoomPhase, ServerMessage, TablePlayer, Turn, YourTurn,
};

/// The protocol name and version carried by the handshake and transcript
/// headers. A peer speaking another version is refused.
pub const PROTOCOL_VERSION: &str = "claw/1";

pub use crate::limits::{MAX_ACTION_BYTES, MAX_FRAME_BYTES, MAX_NONCE_LEN, MAX_TEXT_LEN};

/// Why a frame could not be decoded. The dealer answers a bad frame with an
/// `error` message and keeps the connection (SPEC.md §9.1).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    /// The frame is longer than [`MAX_FRAME_BYTES`]; it was not parsed.
    #[error("frame of {len} bytes exceeds the {max}-byte limit")]
    Oversize {
        /// Length of the frame in bytes.
        len: usize,
        /// The limit.
        max: usize,
    },
    /// Not JSON, not an object, no `type`, or a field of the wrong shape.
    #[error("malformed message: {reason}")]
    Malformed {
        /// What was wrong (serde's message, at most 200 bytes).
        reason: String,
    },
    /// An `action` whose signed JSON text is longer than [`MAX_ACTION_BYTES`]:
    /// the dealer refuses it to its sender (`action-rejected`) and the hand
    /// never sees it.
    #[error("action of {len} bytes exceeds the {max}-byte limit")]
    ActionTooLarge {
        /// The hand the action names.
        hand_id: crate::bytes::HandId,
        /// The action's `seq`.
        seq: u32,
        /// Length of the action's JSON text in bytes.
        len: usize,
        /// The limit.
        max: usize,
    },
    /// A well-formed object whose `type` this side does not know (or that
    /// travels only in the other direction).
    #[error("unknown message type {type_name:?}")]
    UnknownType {
        /// The `type` received (at most 64 bytes).
        type_name: String,
    },
}

impl DecodeError {
    pub(crate) fn malformed(reason: impl fmt::Display) -> DecodeError {
        DecodeError::Malformed { reason: truncate(&reason.to_string(), 200) }
    }
}

/// Why a message could not be encoded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EncodeError {
    /// The encoded frame would exceed [`MAX_FRAME_BYTES`]; peers would refuse it.
    #[error("encoded frame of {len} bytes exceeds the {max}-byte limit")]
    Oversize {
        /// Length the frame would have.
        len: usize,
        /// The limit.
        max: usize,
    },
    /// serde_json refused the value (cannot happen for the types of this
    /// module; kept so no code path panics).
    #[error("cannot encode: {0}")]
    Json(String),
}

/// A JSON value kept as the exact text received or produced. Signatures over
/// JSON documents (actions, event bodies, settings) cover the SHA-256 of these
/// bytes, so they are never re-serialised. Equality compares the text.
#[derive(Clone, Serialize, Deserialize)]
#[serde(transparent)]
pub struct RawJson(Box<RawValue>);

impl RawJson {
    /// Wraps JSON text after checking it is one valid JSON value (leading and
    /// trailing whitespace are dropped).
    pub fn from_string(text: String) -> Result<RawJson, DecodeError> {
        RawValue::from_string(text).map(RawJson).map_err(DecodeError::malformed)
    }

    /// Serialises `value` compactly (no whitespace) and keeps the text.
    pub fn from_value<T: Serialize + ?Sized>(value: &T) -> Result<RawJson, EncodeError> {
        serde_json::value::to_raw_value(value).map(RawJson).map_err(|e| EncodeError::Json(e.to_string()))
    }

    /// The JSON text, byte for byte.
    pub fn as_str(&self) -> &str {
        self.0.get()
    }

    /// SHA-256 of the JSON text: what signatures over this document cover.
    pub fn digest(&self) -> Digest {
        sha256(&[self.as_str().as_bytes()])
    }

    /// Parses the text into `T`.
    pub fn parse<T: DeserializeOwned>(&self) -> Result<T, DecodeError> {
        serde_json::from_str(self.as_str()).map_err(DecodeError::malformed)
    }

    /// Parses the text into a generic JSON value.
    pub fn to_value(&self) -> Result<serde_json::Value, DecodeError> {
        self.parse()
    }
}

impl PartialEq for RawJson {
    fn eq(&self, other: &RawJson) -> bool {
        self.as_str() == other.as_str()
    }
}

impl Eq for RawJson {}

impl fmt::Debug for RawJson {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "RawJson({})", truncate(self.as_str(), 120))
    }
}

impl fmt::Display for RawJson {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Cuts `s` to at most `max` bytes on a character boundary.
pub(crate) fn truncate(s: &str, max: usize) -> String {
    if s.len() <= max {
        return s.to_owned();
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &s[..end])
}

/// Refuses a frame longer than [`MAX_FRAME_BYTES`].
pub(crate) fn check_size(frame: &str) -> Result<(), DecodeError> {
    if frame.len() > MAX_FRAME_BYTES {
        return Err(DecodeError::Oversize { len: frame.len(), max: MAX_FRAME_BYTES });
    }
    Ok(())
}

/// The `type` of a JSON object, read without building the rest.
pub fn peek_type(frame: &str) -> Result<String, DecodeError> {
    #[derive(Deserialize)]
    struct Peek<'a> {
        #[serde(rename = "type", borrow)]
        ty: Cow<'a, str>,
    }
    let p: Peek<'_> = serde_json::from_str(frame).map_err(DecodeError::malformed)?;
    Ok(p.ty.into_owned())
}

/// Parses a whole frame as `T` (the `type` field is ignored by `T`).
pub(crate) fn parse_as<T: DeserializeOwned>(frame: &str) -> Result<T, DecodeError> {
    serde_json::from_str(frame).map_err(DecodeError::malformed)
}

pub(crate) fn unknown(type_name: &str) -> DecodeError {
    DecodeError::UnknownType { type_name: truncate(type_name, 64) }
}

/// Checks a free-text field's length.
pub(crate) fn check_text(what: &str, s: &str) -> Result<(), DecodeError> {
    if s.len() > MAX_TEXT_LEN {
        return Err(DecodeError::malformed(format!("{what} longer than {MAX_TEXT_LEN} bytes")));
    }
    Ok(())
}

/// Serialises a message and refuses a frame peers would reject.
pub(crate) fn encode_frame<T: Serialize>(msg: &T) -> Result<String, EncodeError> {
    let s = serde_json::to_string(msg).map_err(|e| EncodeError::Json(e.to_string()))?;
    if s.len() > MAX_FRAME_BYTES {
        return Err(EncodeError::Oversize { len: s.len(), max: MAX_FRAME_BYTES });
    }
    Ok(s)
}

/// Decodes one player → dealer frame (see [`ClientMessage::decode`]).
pub fn decode_client(frame: &str) -> Result<ClientMessage, DecodeError> {
    ClientMessage::decode(frame)
}

/// Decodes one dealer → player frame (see [`ServerMessage::decode`]).
pub fn decode_server(frame: &str) -> Result<ServerMessage, DecodeError> {
    ServerMessage::decode(frame)
}
