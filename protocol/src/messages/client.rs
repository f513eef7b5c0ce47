//! Player → dealer messages (SPEC.md §9.2).

use serde::{Deserialize, Serialize};

use super::{check_size, check_text, encode_frame, parse_as, peek_type, unknown, DecodeError, EncodeError};
use super::{RawJson, MAX_ACTION_BYTES, MAX_NONCE_LEN};
use crate::bytes::{HandId, Seed, Signature};
use crate::handshake::{Hello, Response};
use crate::identity::Identity;
use crate::ids::{Chips, PlayerId, Seat};
use crate::sign::{Purpose, SignatureError, SignerKey};

/// Every message a player sends. There is no sender field the dealer trusts:
/// the sender is the identity the connection proved in the handshake.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "type", rename_all = "kebab-case")]
pub enum ClientMessage {
    /// Handshake step 1.
    Hello(Hello),
    /// Handshake step 3.
    Response(Response),
    /// Ask for a seat once the handshake is accepted.
    JoinRequest(JoinRequest),
    /// The player's signed shuffle contribution for a hand.
    PlayerSeed(PlayerSeed),
    /// A signed game action.
    Action(SignedAction),
    /// A question about the room, the table or the player's own account.
    Query(Query),
    /// Skip the coming hands but keep the seat.
    SitOut,
    /// Play again from the next hand.
    SitIn,
    /// Leave the room (mid-hand: the hand plays on with auto actions).
    Leave,
    /// Blind tables (SPEC.md §9.7): the seat's signed key share.
    BlindKey(super::BlindKeyMsg),
    /// Blind tables: the seat's signed shuffle.
    BlindShuffle(super::BlindShuffleMsg),
    /// Blind tables: the decryption shares the seat owes.
    BlindShares(super::BlindSharesMsg),
    /// Blind tables: the seat's signed pieces of its secret.
    BlindPieces(super::BlindPiecesMsg),
    /// Blind tables: a complaint against a piece encrypted to the seat.
    BlindComplaint(super::BlindComplaintMsg),
    /// Blind tables: the seat's recovery shares for a withholder.
    BlindRecovery(super::BlindRecoveryMsg),
    /// Before the handshake, on the quick-match path: pick me a room.
    QuickMatch(super::QuickMatch),
    /// The answer to a `ready-check`.
    Ready,
    /// A vote on a `rematch`.
    RematchVote(super::RematchVote),
    /// Follow (or stop following) the running table, delayed.
    Watch(super::Watch),
}

impl ClientMessage {
    /// The `type` of this message.
    pub fn type_name(&self) -> &'static str {
        match self {
            ClientMessage::Hello(_) => "hello",
            ClientMessage::Response(_) => "response",
            ClientMessage::JoinRequest(_) => "join-request",
            ClientMessage::PlayerSeed(_) => "player-seed",
            ClientMessage::Action(_) => "action",
            ClientMessage::Query(_) => "query",
            ClientMessage::SitOut => "sit-out",
            ClientMessage::SitIn => "sit-in",
            ClientMessage::Leave => "leave",
            ClientMessage::BlindKey(_) => "blind-key",
            ClientMessage::BlindShuffle(_) => "blind-shuffle",
            ClientMessage::BlindShares(_) => "blind-shares",
            ClientMessage::BlindPieces(_) => "blind-pieces",
            ClientMessage::BlindComplaint(_) => "blind-complaint",
            ClientMessage::BlindRecovery(_) => "blind-recovery",
            ClientMessage::QuickMatch(_) => "quick-match",
            ClientMessage::Ready => "ready",
            ClientMessage::RematchVote(_) => "rematch-vote",
            ClientMessage::Watch(_) => "watch",
        }
    }

    /// Decodes one frame: size first (no parsing of an oversize frame), then
    /// the `type`, then the fields of that type; unknown fields are ignored.
    pub fn decode(frame: &str) -> Result<ClientMessage, DecodeError> {
        check_size(frame)?;
        let ty = peek_type(frame)?;
        let msg = match ty.as_str() {
            "hello" => ClientMessage::Hello(parse_as(frame)?),
            "response" => ClientMessage::Response(parse_as(frame)?),
            "join-request" => ClientMessage::JoinRequest(parse_as(frame)?),
            "player-seed" => ClientMessage::PlayerSeed(parse_as(frame)?),
            "action" => ClientMessage::Action(parse_as(frame)?),
            "query" => ClientMessage::Query(parse_as(frame)?),
            "sit-out" => ClientMessage::SitOut,
            "sit-in" => ClientMessage::SitIn,
            "leave" => ClientMessage::Leave,
            "blind-key" => ClientMessage::BlindKey(parse_as(frame)?),
            "blind-shuffle" => ClientMessage::BlindShuffle(parse_as(frame)?),
            "blind-shares" => ClientMessage::BlindShares(parse_as(frame)?),
            "blind-pieces" => ClientMessage::BlindPieces(parse_as(frame)?),
            "blind-complaint" => ClientMessage::BlindComplaint(parse_as(frame)?),
            "blind-recovery" => ClientMessage::BlindRecovery(parse_as(frame)?),
            "quick-match" => ClientMessage::QuickMatch(parse_as(frame)?),
            "ready" => ClientMessage::Ready,
            "rematch-vote" => ClientMessage::RematchVote(parse_as(frame)?),
            "watch" => ClientMessage::Watch(parse_as(frame)?),
            other => return Err(unknown(other)),
        };
        msg.validate()?;
        Ok(msg)
    }

    /// Encodes the message as one text frame.
    pub fn encode(&self) -> Result<String, EncodeError> {
        encode_frame(self)
    }

    fn validate(&self) -> Result<(), DecodeError> {
        match self {
            ClientMessage::JoinRequest(j) => {
                check_text("sdk_version", &j.sdk_version)?;
                if let Some(n) = &j.name {
                    check_text("name", n)?;
                }
            }
            ClientMessage::Action(a) => a.check_size()?,
            ClientMessage::QuickMatch(q) => q.validate()?,
            ClientMessage::Query(q) if q.nonce.is_empty() || q.nonce.len() > MAX_NONCE_LEN => {
                return Err(DecodeError::malformed(format!("query nonce must be 1..={MAX_NONCE_LEN} bytes")));
            }
            _ => {}
        }
        Ok(())
    }
}

/// `join-request`: take a seat in the room the handshake named.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct JoinRequest {
    /// The player SDK's name and version, e.g. `claw-player/0.1.0` (for logs;
    /// `hello` already carried it and the protocol version). May be omitted.
    #[serde(default)]
    pub sdk_version: String,
    /// Display name (≤ 256 bytes); the id stays the key.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Preferred seat, if free.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seat: Option<Seat>,
    /// Chips to bring to the table (default: the room's buy-in).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub buy_in: Option<Chips>,
}

/// The bytes a player signs for a shuffle seed (after the tag
/// `"claw/v1/player-seed" || 0x00`): `hand_id (16) || seed (32)`.
pub fn player_seed_signing_body(hand_id: &HandId, seed: &Seed) -> [u8; 48] {
    let mut b = [0u8; 48];
    b[..16].copy_from_slice(&hand_id.0);
    b[16..].copy_from_slice(&seed.0);
    b
}

/// `player-seed`: a player's 32-byte contribution to the shuffle of hand
/// `hand_id`, signed so that the dealer can publish it and anyone can check
/// the seat really sent it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlayerSeed {
    /// The hand announced by `hand-prepare`.
    pub hand_id: HandId,
    /// 32 random bytes.
    pub seed: Seed,
    /// Signature (purpose `player-seed`) over [`player_seed_signing_body`].
    pub sig: Signature,
    /// Optional, for compatibility with clients that send a `from` field. The dealer
    /// never trusts it: it compares it with the session identity and refuses
    /// the message when they differ.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from: Option<PlayerId>,
}

impl PlayerSeed {
    /// Signs `seed` for `hand_id` as `player`.
    pub fn sign(player: &Identity, hand_id: HandId, seed: Seed) -> PlayerSeed {
        let sig = player.sign(Purpose::PlayerSeed, &player_seed_signing_body(&hand_id, &seed));
        PlayerSeed { hand_id, seed, sig, from: None }
    }

    /// Checks the signature as `player`'s, and that a `from` field, if any,
    /// names the same player.
    pub fn verify(&self, player: &PlayerId) -> Result<(), SignatureError> {
        self.verify_by(&SignerKey::new(player))
    }

    /// [`PlayerSeed::verify`] with the player's key parsed already.
    pub fn verify_by(&self, player: &SignerKey) -> Result<(), SignatureError> {
        if self.from.is_some_and(|f| f != *player.id()) {
            return Err(SignatureError::Invalid { signer: *player.id(), purpose: Purpose::PlayerSeed });
        }
        player.verify(Purpose::PlayerSeed, &player_seed_signing_body(&self.hand_id, &self.seed), &self.sig)
    }
}

/// The bytes a player signs for an action (after the tag `"claw/v1/action"
/// || 0x00`): `hand_id (16) || seq (u32 BE) || SHA-256(action JSON text)`.
pub fn action_signing_body(hand_id: &HandId, seq: u32, action: &RawJson) -> [u8; 52] {
    let mut b = [0u8; 52];
    b[..16].copy_from_slice(&hand_id.0);
    b[16..20].copy_from_slice(&seq.to_be_bytes());
    b[20..].copy_from_slice(&action.digest().0);
    b
}

/// `action`: a game move signed by the player. `action` is the game's action
/// JSON (`{"type": "raise", "amount": 40}`) exactly as signed; the dealer
/// copies these bytes and the signature into `action-result`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SignedAction {
    /// The hand the action belongs to.
    pub hand_id: HandId,
    /// The player's action counter in this hand: strictly increasing, from 0
    /// (`your-turn` says which value the dealer expects next).
    pub seq: u32,
    /// The game action, as signed.
    pub action: RawJson,
    /// Signature (purpose `action`) over [`action_signing_body`].
    pub sig: Signature,
}

impl SignedAction {
    /// Signs `action` (JSON text) as action number `seq` of `hand_id`.
    pub fn sign(player: &Identity, hand_id: HandId, seq: u32, action: RawJson) -> SignedAction {
        let sig = player.sign(Purpose::Action, &action_signing_body(&hand_id, seq, &action));
        SignedAction { hand_id, seq, action, sig }
    }

    /// Checks the signature as `player`'s.
    pub fn verify(&self, player: &PlayerId) -> Result<(), SignatureError> {
        self.verify_by(&SignerKey::new(player))
    }

    /// Refuses an action whose JSON text is longer than [`MAX_ACTION_BYTES`]
    /// (checked when the frame is decoded, and again by the engine).
    pub fn check_size(&self) -> Result<(), DecodeError> {
        let len = self.action.as_str().len();
        if len > MAX_ACTION_BYTES {
            return Err(DecodeError::ActionTooLarge {
                hand_id: self.hand_id,
                seq: self.seq,
                len,
                max: MAX_ACTION_BYTES,
            });
        }
        Ok(())
    }

    /// [`SignedAction::verify`] with the player's key parsed already.
    pub fn verify_by(&self, player: &SignerKey) -> Result<(), SignatureError> {
        player.verify(Purpose::Action, &action_signing_body(&self.hand_id, self.seq, &self.action), &self.sig)
    }
}

/// What a query asks for (SPEC.md §9.3 `query`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum QueryType {
    /// The player's own chip balance.
    MyBalance,
    /// Room phase, hands played, every player's status and chips.
    RoomState,
    /// The current hand's public state (pot, bets, board).
    TableState,
    /// The room configuration.
    RoomConfig,
    /// The player's own seat, status, balance and credit score.
    MyStatus,
    /// A finished hand of the room (`hand_id`): its signed events from
    /// `from_seq` on, its `audit-reveal` only once published.
    Hand,
    /// Any other name: the dealer answers `query-error` `unknown-query`.
    #[serde(other)]
    Unknown,
}

/// `query`: answered by `query-result` or `query-error` carrying the same
/// nonce, within 5 s. Queries share the sender's rate limit with actions.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Query {
    /// What is asked.
    pub query_type: QueryType,
    /// Chosen by the player (1..=64 bytes), echoed in the answer.
    pub nonce: String,
    /// `hand`: the hand asked for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hand_id: Option<HandId>,
    /// `hand`: the first event wanted (0 when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from_seq: Option<u64>,
}

impl Query {
    /// A query without arguments.
    pub fn new(query_type: QueryType, nonce: impl Into<String>) -> Query {
        Query { query_type, nonce: nonce.into(), hand_id: None, from_seq: None }
    }

    /// A `hand` query for `hand_id`'s events from `from_seq` on.
    pub fn hand(hand_id: HandId, from_seq: u64, nonce: impl Into<String>) -> Query {
        Query { hand_id: Some(hand_id), from_seq: Some(from_seq), ..Query::new(QueryType::Hand, nonce) }
    }
}
