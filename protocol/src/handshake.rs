//! The mutual handshake, sans-IO (SPEC.md §8).
//!
//! ```text
//! player                                   dealer
//!   hello      (keys, version, room, time, client nonce, sig)  →
//!          ←   challenge (32 random bytes, dealer keys, room, room config,
//!                         client nonce echoed, time, sig)
//!   response   (sig over challenge, client nonce, dealer key, room id,
//!               player key)                                    →
//!          ←   accepted (session id, reconnect token, seat?, sig)
//!              | rejected (reason code, sig)
//! ```
//!
//! Neither side does I/O or reads a clock: every step takes the current unix
//! time in milliseconds and, where it draws randomness, an rng. The server
//! refuses a hello whose timestamp is more than [`CLOCK_SKEW_MS`] away from
//! its clock, a handshake that takes longer than [`HANDSHAKE_DEADLINE_MS`]
//! from hello to response, a challenge answered twice ([`ChallengeBook`]),
//! a response made for another dealer or room, a bad signature, another
//! protocol version and a reference SDK of another release line
//! ([`check_sdk_version`]), each with its own [`RejectReason`]. The client refuses
//! a dealer whose key is not the one from the invite URL.

use std::collections::{HashSet, VecDeque};
use std::fmt;
use std::sync::Arc;

use rand_core::CryptoRngCore;
use serde::{Deserialize, Serialize};

use crate::bytes::{Digest, EncryptionKey, Nonce, Signature};
use crate::identity::{Identity, PublicIdentity};
use crate::ids::{PlayerId, Seat};
use crate::messages::{RawJson, PROTOCOL_VERSION};
use crate::seal::SharedKey;
use crate::sign::{verify, Purpose};

pub use crate::limits::{
    CLOCK_SKEW_MS, HANDSHAKE_DEADLINE_MS, MAX_ROOM_ID_LEN, MAX_SDK_VERSION_LEN, MAX_USED_CHALLENGES,
    USED_CHALLENGE_RETENTION_MS,
};
/// The reference SDK's name in `sdk_version` (`claw-player/0.1.0`): the one
/// SDK whose version a dealer can judge (SPEC.md §8.3, step 7).
pub const REFERENCE_SDK: &str = "claw-player";
/// The release this dealer was built from; a `claw-player` SDK must be on its
/// release line (same major, or same major.minor while the major is 0).
pub const RELEASE: &str = env!("CARGO_PKG_VERSION");

// ---------------------------------------------------------------------------
// Messages
// ---------------------------------------------------------------------------

/// Step 1, player → dealer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Hello {
    /// Protocol name and version, `claw/1`.
    pub protocol_version: String,
    /// `NAME/VERSION` of the SDK (at most 64 bytes); the reference SDK's
    /// version is checked ([`check_sdk_version`]), others are for logs.
    pub sdk_version: String,
    /// The room the player wants (at most 64 bytes).
    pub room_id: String,
    /// The player's Ed25519 key (its id).
    pub player: PlayerId,
    /// The player's X25519 key.
    pub encryption_key: EncryptionKey,
    /// The player's clock, unix milliseconds.
    pub timestamp_ms: u64,
    /// 32 fresh random bytes; echoed in the challenge.
    pub client_nonce: Nonce,
    /// The token of an earlier session to resume, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reconnect_token: Option<Nonce>,
    /// Signature by `player`, purpose `hello` (SPEC.md §8.2).
    pub sig: Signature,
}

/// Step 2, dealer → player.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Challenge {
    /// 32 fresh random bytes the player must sign.
    pub challenge: Nonce,
    /// The dealer's Ed25519 key.
    pub dealer: PlayerId,
    /// The dealer's X25519 key.
    pub dealer_encryption_key: EncryptionKey,
    /// The room id.
    pub room_id: String,
    /// The room configuration (JSON, exact bytes; its SHA-256 is signed).
    pub room_config: RawJson,
    /// The hello's client nonce, echoed.
    pub client_nonce: Nonce,
    /// The dealer's clock, unix milliseconds.
    pub timestamp_ms: u64,
    /// Signature by `dealer`, purpose `challenge`.
    pub sig: Signature,
}

/// Step 3, player → dealer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Response {
    /// The challenge being answered.
    pub challenge: Nonce,
    /// The dealer key the player believes it talks to.
    pub dealer: PlayerId,
    /// The room the player believes it joins.
    pub room_id: String,
    /// Signature by the player, purpose `response`.
    pub sig: Signature,
}

/// Step 4 on success, dealer → player.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Accepted {
    /// Random id of this session (logs, support).
    pub session_id: Nonce,
    /// Secret token that, in a later hello, asks to resume this session.
    pub reconnect_token: Nonce,
    /// The seat, when the player already has one (reconnect).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seat: Option<Seat>,
    /// The dealer's clock, unix milliseconds.
    pub timestamp_ms: u64,
    /// Signature by the dealer, purpose `accepted`.
    pub sig: Signature,
}

/// Step 4 on failure, dealer → player; the connection is closed after it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Rejected {
    /// Why.
    pub reason: RejectReason,
    /// The hello's client nonce, when a hello was read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_nonce: Option<Nonce>,
    /// The dealer's clock, unix milliseconds.
    pub timestamp_ms: u64,
    /// Signature by the dealer, purpose `rejected`.
    pub sig: Signature,
    /// Why, in words (e.g. how long a seat stays held). Informational: not
    /// signed, at most `MAX_TEXT_LEN` bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

/// Why the dealer refused a handshake. Serialised in kebab-case.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RejectReason {
    /// `protocol_version` is not `claw/1`.
    VersionMismatch,
    /// A field is too long or otherwise unusable.
    Malformed,
    /// The hello names another room than this connection's.
    WrongRoom,
    /// The hello timestamp is more than 15 s from the dealer's clock
    /// (also what a replayed old hello gets).
    ClockSkew,
    /// The hello signature does not verify (or the key is invalid).
    BadHelloSignature,
    /// The response answers a challenge that was already answered.
    ChallengeReused,
    /// The response answers a challenge this connection did not issue.
    UnknownChallenge,
    /// More than 10 s passed between hello and response.
    DeadlineExceeded,
    /// The response was made for another dealer key (a relay).
    WrongDealer,
    /// The response signature does not verify.
    BadResponseSignature,
    /// The player's X25519 key is of small order.
    WeakEncryptionKey,
    /// A message arrived out of order.
    UnexpectedMessage,
    /// The dealer is at capacity (connections or challenge book).
    Busy,
    /// The dealer refuses this player (policy, ban, room full…).
    Refused,
    /// The hello's SDK is the reference SDK on another release line than
    /// the dealer's ([`check_sdk_version`]).
    SdkVersionMismatch,
    /// The operator banned this identity (reason and expiry in `message`).
    Banned,
}

impl RejectReason {
    /// The kebab-case code, as on the wire and in the signed body.
    pub fn code(self) -> &'static str {
        match self {
            RejectReason::VersionMismatch => "version-mismatch",
            RejectReason::Malformed => "malformed",
            RejectReason::WrongRoom => "wrong-room",
            RejectReason::ClockSkew => "clock-skew",
            RejectReason::BadHelloSignature => "bad-hello-signature",
            RejectReason::ChallengeReused => "challenge-reused",
            RejectReason::UnknownChallenge => "unknown-challenge",
            RejectReason::DeadlineExceeded => "deadline-exceeded",
            RejectReason::WrongDealer => "wrong-dealer",
            RejectReason::BadResponseSignature => "bad-response-signature",
            RejectReason::WeakEncryptionKey => "weak-encryption-key",
            RejectReason::UnexpectedMessage => "unexpected-message",
            RejectReason::Busy => "busy",
            RejectReason::Refused => "refused",
            RejectReason::SdkVersionMismatch => "sdk-version-mismatch",
            RejectReason::Banned => "banned",
        }
    }
}

impl fmt::Display for RejectReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.code())
    }
}

// ---------------------------------------------------------------------------
// Signed bodies (SPEC.md §8.2)
// ---------------------------------------------------------------------------

fn put_str(b: &mut Vec<u8>, s: &str) {
    // Callers bound lengths to 64 bytes; saturate rather than panic.
    let len = u16::try_from(s.len()).unwrap_or(u16::MAX);
    b.extend_from_slice(&len.to_be_bytes());
    b.extend_from_slice(&s.as_bytes()[..usize::from(len)]);
}

/// Signed body of a hello: `lp(protocol_version) || lp(sdk_version) ||
/// lp(room_id) || player || encryption_key || timestamp_ms u64 BE ||
/// client_nonce || 0x00 | 0x01 || reconnect_token`, where `lp(s)` is
/// `len u16 BE || s`.
pub fn hello_body(h: &Hello) -> Vec<u8> {
    let mut b = Vec::with_capacity(256);
    put_str(&mut b, &h.protocol_version);
    put_str(&mut b, &h.sdk_version);
    put_str(&mut b, &h.room_id);
    b.extend_from_slice(h.player.as_bytes());
    b.extend_from_slice(&h.encryption_key.0);
    b.extend_from_slice(&h.timestamp_ms.to_be_bytes());
    b.extend_from_slice(&h.client_nonce.0);
    match &h.reconnect_token {
        None => b.push(0),
        Some(t) => {
            b.push(1);
            b.extend_from_slice(&t.0);
        }
    }
    b
}

/// Signed body of a challenge: `challenge || dealer || dealer_encryption_key
/// || lp(room_id) || SHA-256(room_config) || client_nonce || player ||
/// timestamp_ms u64 BE` (`player` is the hello's key, not sent again).
pub fn challenge_body(c: &Challenge, player: &PlayerId) -> Vec<u8> {
    let mut b = Vec::with_capacity(256);
    b.extend_from_slice(&c.challenge.0);
    b.extend_from_slice(c.dealer.as_bytes());
    b.extend_from_slice(&c.dealer_encryption_key.0);
    put_str(&mut b, &c.room_id);
    b.extend_from_slice(&c.room_config.digest().0);
    b.extend_from_slice(&c.client_nonce.0);
    b.extend_from_slice(player.as_bytes());
    b.extend_from_slice(&c.timestamp_ms.to_be_bytes());
    b
}

/// Signed body of a response: `challenge || client_nonce || dealer ||
/// lp(room_id) || player`.
pub fn response_body(r: &Response, client_nonce: &Nonce, player: &PlayerId) -> Vec<u8> {
    let mut b = Vec::with_capacity(200);
    b.extend_from_slice(&r.challenge.0);
    b.extend_from_slice(&client_nonce.0);
    b.extend_from_slice(r.dealer.as_bytes());
    put_str(&mut b, &r.room_id);
    b.extend_from_slice(player.as_bytes());
    b
}

/// Signed body of an accepted: `challenge || player || session_id ||
/// reconnect_token || (0x00 | 0x01 || seat u8) || timestamp_ms u64 BE`.
pub fn accepted_body(a: &Accepted, challenge: &Nonce, player: &PlayerId) -> Vec<u8> {
    let mut b = Vec::with_capacity(200);
    b.extend_from_slice(&challenge.0);
    b.extend_from_slice(player.as_bytes());
    b.extend_from_slice(&a.session_id.0);
    b.extend_from_slice(&a.reconnect_token.0);
    match a.seat {
        None => b.push(0),
        Some(s) => b.extend_from_slice(&[1, s.0]),
    }
    b.extend_from_slice(&a.timestamp_ms.to_be_bytes());
    b
}

/// Signed body of a rejected: `(0x00 | 0x01 || client_nonce) ||
/// lp(reason code) || timestamp_ms u64 BE`.
pub fn rejected_body(r: &Rejected) -> Vec<u8> {
    let mut b = Vec::with_capacity(80);
    match &r.client_nonce {
        None => b.push(0),
        Some(n) => {
            b.push(1);
            b.extend_from_slice(&n.0);
        }
    }
    put_str(&mut b, r.reason.code());
    b.extend_from_slice(&r.timestamp_ms.to_be_bytes());
    b
}

// ---------------------------------------------------------------------------
// Challenge book (server-wide)
// ---------------------------------------------------------------------------

/// Remembers answered challenges for [`USED_CHALLENGE_RETENTION_MS`] so that
/// a response is accepted at most once, whichever connection it arrives on.
/// One per dealer, shared by all connections (behind a mutex).
#[derive(Debug, Default)]
pub struct ChallengeBook {
    used: HashSet<[u8; 32]>,
    order: VecDeque<(u64, [u8; 32])>,
}

impl ChallengeBook {
    /// An empty book.
    pub fn new() -> ChallengeBook {
        ChallengeBook::default()
    }

    /// True if `challenge` was answered and not yet forgotten.
    pub fn is_used(&self, challenge: &Nonce) -> bool {
        self.used.contains(&challenge.0)
    }

    /// Records `challenge` as answered at `now_ms`. Returns false if it was
    /// already recorded, or if the book is full.
    pub fn mark_used(&mut self, challenge: &Nonce, now_ms: u64) -> bool {
        self.purge(now_ms);
        if self.used.len() >= MAX_USED_CHALLENGES || !self.used.insert(challenge.0) {
            return false;
        }
        self.order.push_back((now_ms.saturating_add(USED_CHALLENGE_RETENTION_MS), challenge.0));
        true
    }

    /// Forgets challenges whose retention ended before `now_ms`.
    pub fn purge(&mut self, now_ms: u64) {
        while let Some(&(expiry, c)) = self.order.front() {
            if expiry > now_ms {
                break;
            }
            self.order.pop_front();
            self.used.remove(&c);
        }
    }

    /// Number of remembered challenges.
    pub fn len(&self) -> usize {
        self.used.len()
    }

    /// True when no challenge is remembered.
    pub fn is_empty(&self) -> bool {
        self.used.is_empty()
    }
}

// ---------------------------------------------------------------------------
// Server
// ---------------------------------------------------------------------------

/// What the server learned about a player whose response verified.
#[derive(Debug, Clone)]
pub struct VerifiedPlayer {
    /// The player's keys (proved by the hello and response signatures).
    pub player: PublicIdentity,
    /// The hello's SDK string.
    pub sdk_version: String,
    /// The session the player asks to resume, if any.
    pub reconnect_token: Option<Nonce>,
    /// The box key shared with this player for the session.
    pub shared_key: SharedKey,
}

#[derive(Debug, Clone)]
enum ServerState {
    AwaitingHello,
    AwaitingResponse { hello: Box<Hello>, challenge: Nonce, hello_at_ms: u64 },
    Verified { player: PlayerId, challenge: Nonce },
    Done,
}

/// The dealer's side of one connection's handshake.
#[derive(Debug)]
pub struct ServerHandshake {
    dealer: Arc<Identity>,
    room_id: String,
    room_config: RawJson,
    state: ServerState,
}

impl ServerHandshake {
    /// A handshake for a connection to room `room_id`, whose configuration
    /// `room_config` is sent (and signed) in the challenge.
    pub fn new(dealer: Arc<Identity>, room_id: impl Into<String>, room_config: RawJson) -> ServerHandshake {
        ServerHandshake { dealer, room_id: room_id.into(), room_config, state: ServerState::AwaitingHello }
    }

    /// When the handshake expires (unix ms), once a hello was read: the
    /// caller's timer should then call [`ServerHandshake::reject`] with
    /// [`RejectReason::DeadlineExceeded`].
    pub fn deadline_ms(&self) -> Option<u64> {
        match &self.state {
            ServerState::AwaitingResponse { hello_at_ms, .. } => {
                Some(hello_at_ms.saturating_add(HANDSHAKE_DEADLINE_MS))
            }
            _ => None,
        }
    }

    fn client_nonce(&self) -> Option<Nonce> {
        match &self.state {
            ServerState::AwaitingResponse { hello, .. } => Some(hello.client_nonce),
            _ => None,
        }
    }

    /// Builds a signed rejection and ends the handshake. Also for the
    /// caller's own reasons (`Busy`, `Refused`, a deadline timer).
    pub fn reject(&mut self, reason: RejectReason, now_ms: u64) -> Rejected {
        let client_nonce = self.client_nonce();
        self.reject_with(reason, client_nonce, now_ms)
    }

    fn reject_with(&mut self, reason: RejectReason, client_nonce: Option<Nonce>, now_ms: u64) -> Rejected {
        self.state = ServerState::Done;
        let mut r =
            Rejected { reason, client_nonce, timestamp_ms: now_ms, sig: Signature([0; 64]), message: None };
        r.sig = self.dealer.sign(Purpose::Rejected, &rejected_body(&r));
        r
    }

    /// Step 1 → 2: checks the hello (in the order of SPEC.md §8.3) and
    /// answers with a signed challenge.
    // The refusal is the signed frame the dealer sends, once per failed handshake.
    #[allow(clippy::result_large_err)]
    pub fn on_hello<R: CryptoRngCore + ?Sized>(
        &mut self,
        hello: &Hello,
        now_ms: u64,
        rng: &mut R,
    ) -> Result<Challenge, Rejected> {
        if !matches!(self.state, ServerState::AwaitingHello) {
            return Err(self.reject(RejectReason::UnexpectedMessage, now_ms));
        }
        // From here on a rejection echoes the client nonce.
        let fail = |s: &mut Self, reason| s.reject_with(reason, Some(hello.client_nonce), now_ms);
        if hello.protocol_version != PROTOCOL_VERSION {
            return Err(fail(self, RejectReason::VersionMismatch));
        }
        if hello.sdk_version.len() > MAX_SDK_VERSION_LEN || hello.room_id.len() > MAX_ROOM_ID_LEN {
            return Err(fail(self, RejectReason::Malformed));
        }
        if hello.room_id != self.room_id {
            return Err(fail(self, RejectReason::WrongRoom));
        }
        if hello.timestamp_ms.abs_diff(now_ms) > CLOCK_SKEW_MS {
            return Err(fail(self, RejectReason::ClockSkew));
        }
        if verify(&hello.player, Purpose::Hello, &hello_body(hello), &hello.sig).is_err() {
            return Err(fail(self, RejectReason::BadHelloSignature));
        }
        if let Err(why) = check_sdk_version(&hello.sdk_version, RELEASE) {
            let mut r = fail(self, RejectReason::SdkVersionMismatch);
            r.message = Some(why.to_string());
            return Err(r);
        }
        let dealer = self.dealer.public();
        let mut c = Challenge {
            challenge: Nonce::random(rng),
            dealer: dealer.signing,
            dealer_encryption_key: dealer.encryption,
            room_id: self.room_id.clone(),
            room_config: self.room_config.clone(),
            client_nonce: hello.client_nonce,
            timestamp_ms: now_ms,
            sig: Signature([0; 64]),
        };
        c.sig = self.dealer.sign(Purpose::Challenge, &challenge_body(&c, &hello.player));
        self.state = ServerState::AwaitingResponse {
            hello: Box::new(hello.clone()),
            challenge: c.challenge,
            hello_at_ms: now_ms,
        };
        Ok(c)
    }

    /// Step 3: checks the response (SPEC.md §8.3). On success the caller
    /// decides (seat, reconnect, capacity) and then calls
    /// [`ServerHandshake::accept`] or [`ServerHandshake::reject`].
    // The refusal is the signed frame the dealer sends, once per failed handshake.
    #[allow(clippy::result_large_err)]
    pub fn on_response(
        &mut self,
        response: &Response,
        now_ms: u64,
        book: &mut ChallengeBook,
    ) -> Result<VerifiedPlayer, Rejected> {
        if book.is_used(&response.challenge) {
            return Err(self.reject(RejectReason::ChallengeReused, now_ms));
        }
        let (hello, challenge, hello_at_ms) = match &self.state {
            ServerState::AwaitingResponse { hello, challenge, hello_at_ms } => {
                (hello.clone(), *challenge, *hello_at_ms)
            }
            _ => return Err(self.reject(RejectReason::UnexpectedMessage, now_ms)),
        };
        if now_ms.saturating_sub(hello_at_ms) > HANDSHAKE_DEADLINE_MS {
            return Err(self.reject(RejectReason::DeadlineExceeded, now_ms));
        }
        if response.challenge != challenge {
            return Err(self.reject(RejectReason::UnknownChallenge, now_ms));
        }
        if !book.mark_used(&challenge, now_ms) {
            return Err(self.reject(RejectReason::Busy, now_ms));
        }
        if response.dealer != self.dealer.id() {
            return Err(self.reject(RejectReason::WrongDealer, now_ms));
        }
        if response.room_id != self.room_id {
            return Err(self.reject(RejectReason::WrongRoom, now_ms));
        }
        let body = response_body(response, &hello.client_nonce, &hello.player);
        if verify(&hello.player, Purpose::Response, &body, &response.sig).is_err() {
            return Err(self.reject(RejectReason::BadResponseSignature, now_ms));
        }
        let Ok(shared_key) = self.dealer.shared_key(&hello.encryption_key) else {
            return Err(self.reject(RejectReason::WeakEncryptionKey, now_ms));
        };
        self.state = ServerState::Verified { player: hello.player, challenge };
        Ok(VerifiedPlayer {
            player: PublicIdentity { signing: hello.player, encryption: hello.encryption_key },
            sdk_version: hello.sdk_version,
            reconnect_token: hello.reconnect_token,
            shared_key,
        })
    }

    /// Step 4: the signed acceptance with a fresh session id from `rng`.
    /// `reconnect_token` is the resumed session's token, or `None` for a
    /// fresh one. `None` if no response has been verified.
    pub fn accept<R: CryptoRngCore + ?Sized>(
        &mut self,
        seat: Option<Seat>,
        reconnect_token: Option<Nonce>,
        now_ms: u64,
        rng: &mut R,
    ) -> Option<Accepted> {
        let ServerState::Verified { player, challenge } = self.state.clone() else { return None };
        let session_id = Nonce::random(rng);
        let reconnect_token = reconnect_token.unwrap_or_else(|| Nonce::random(rng));
        let mut a =
            Accepted { session_id, reconnect_token, seat, timestamp_ms: now_ms, sig: Signature([0; 64]) };
        a.sig = self.dealer.sign(Purpose::Accepted, &accepted_body(&a, &challenge, &player));
        self.state = ServerState::Done;
        Some(a)
    }
}

// ---------------------------------------------------------------------------
// Client
// ---------------------------------------------------------------------------

/// Why the player side abandoned a handshake.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HandshakeError {
    /// The dealer's key differs from the one in the invite URL.
    #[error(
        "the dealer's key is {got}, not the invite's {expected}: a man in the middle, or an invite \
         that is not this dealer's"
    )]
    DealerKeyMismatch { expected: PlayerId, got: PlayerId },
    /// The challenge names another room.
    #[error("challenge is for room {got:?}, expected {expected:?}")]
    RoomMismatch { expected: String, got: String },
    /// The challenge does not echo our client nonce.
    #[error("challenge does not echo our client nonce")]
    NonceMismatch,
    /// The dealer's clock is more than 15 s from ours.
    #[error("dealer timestamp {got} is more than {CLOCK_SKEW_MS} ms from our clock {now}")]
    ClockSkew { got: u64, now: u64 },
    /// The challenge signature does not verify.
    #[error("challenge signature does not verify")]
    BadChallengeSignature,
    /// The accepted signature does not verify.
    #[error("accepted signature does not verify")]
    BadAcceptedSignature,
    /// The rejected message's signature does not verify (reason untrusted).
    #[error("dealer rejected us ({0}) but the rejection is not signed by the dealer")]
    UnsignedRejection(RejectReason),
    /// The dealer's X25519 key is of small order.
    #[error("dealer encryption key is of small order")]
    WeakDealerKey,
    /// More than 10 s since our hello.
    #[error("handshake took longer than {HANDSHAKE_DEADLINE_MS} ms")]
    DeadlineExceeded,
    /// A message arrived out of order.
    #[error("unexpected handshake message")]
    UnexpectedMessage,
    /// The dealer refused the handshake (signed rejection).
    #[error("dealer rejected the handshake: {0}")]
    Rejected(RejectReason),
}

/// What the player holds once the dealer accepted.
#[derive(Debug, Clone)]
pub struct ClientSession {
    /// The dealer's keys (the signing key equals the invite URL's).
    pub dealer: PublicIdentity,
    /// The room id.
    pub room_id: String,
    /// The room configuration the dealer signed in its challenge.
    pub room_config: RawJson,
    /// The session id.
    pub session_id: Nonce,
    /// The token to resume this session after a disconnect (secret).
    pub reconnect_token: Nonce,
    /// The seat, when the dealer assigned one already.
    pub seat: Option<Seat>,
    /// The box key shared with the dealer (cards sealed to us).
    pub shared_key: SharedKey,
}

#[derive(Debug, Clone)]
enum ClientState {
    AwaitingChallenge,
    AwaitingResult { challenge: Box<Challenge>, shared_key: SharedKey },
    Done,
}

/// The player's side of the handshake.
#[derive(Debug)]
pub struct ClientHandshake {
    me: Arc<Identity>,
    expected_dealer: PlayerId,
    room_id: String,
    client_nonce: Nonce,
    started_ms: u64,
    state: ClientState,
}

impl ClientHandshake {
    /// Starts a handshake with the dealer whose key the invite URL carries,
    /// for room `room_id`; returns the state machine and the hello to send.
    pub fn start<R: CryptoRngCore + ?Sized>(
        me: Arc<Identity>,
        expected_dealer: PlayerId,
        room_id: impl Into<String>,
        sdk_version: impl Into<String>,
        reconnect_token: Option<Nonce>,
        now_ms: u64,
        rng: &mut R,
    ) -> (ClientHandshake, Hello) {
        let room_id = room_id.into();
        let public = me.public();
        let mut hello = Hello {
            protocol_version: PROTOCOL_VERSION.to_owned(),
            sdk_version: sdk_version.into(),
            room_id: room_id.clone(),
            player: public.signing,
            encryption_key: public.encryption,
            timestamp_ms: now_ms,
            client_nonce: Nonce::random(rng),
            reconnect_token,
            sig: Signature([0; 64]),
        };
        hello.sig = me.sign(Purpose::Hello, &hello_body(&hello));
        let client_nonce = hello.client_nonce;
        let hs = ClientHandshake {
            me,
            expected_dealer,
            room_id,
            client_nonce,
            started_ms: now_ms,
            state: ClientState::AwaitingChallenge,
        };
        (hs, hello)
    }

    /// When the handshake expires (unix ms) while not finished.
    pub fn deadline_ms(&self) -> Option<u64> {
        match self.state {
            ClientState::Done => None,
            _ => Some(self.started_ms.saturating_add(HANDSHAKE_DEADLINE_MS)),
        }
    }

    fn fail(&mut self, e: HandshakeError) -> HandshakeError {
        self.state = ClientState::Done;
        e
    }

    /// Step 2 → 3: checks the challenge (dealer key first) and signs the
    /// response.
    pub fn on_challenge(&mut self, c: &Challenge, now_ms: u64) -> Result<Response, HandshakeError> {
        if !matches!(self.state, ClientState::AwaitingChallenge) {
            return Err(self.fail(HandshakeError::UnexpectedMessage));
        }
        if now_ms.saturating_sub(self.started_ms) > HANDSHAKE_DEADLINE_MS {
            return Err(self.fail(HandshakeError::DeadlineExceeded));
        }
        if c.dealer != self.expected_dealer {
            let e = HandshakeError::DealerKeyMismatch { expected: self.expected_dealer, got: c.dealer };
            return Err(self.fail(e));
        }
        if verify(&c.dealer, Purpose::Challenge, &challenge_body(c, &self.me.id()), &c.sig).is_err() {
            return Err(self.fail(HandshakeError::BadChallengeSignature));
        }
        if c.client_nonce != self.client_nonce {
            return Err(self.fail(HandshakeError::NonceMismatch));
        }
        if c.room_id != self.room_id {
            let e = HandshakeError::RoomMismatch { expected: self.room_id.clone(), got: c.room_id.clone() };
            return Err(self.fail(e));
        }
        if c.timestamp_ms.abs_diff(now_ms) > CLOCK_SKEW_MS {
            return Err(self.fail(HandshakeError::ClockSkew { got: c.timestamp_ms, now: now_ms }));
        }
        let Ok(shared_key) = self.me.shared_key(&c.dealer_encryption_key) else {
            return Err(self.fail(HandshakeError::WeakDealerKey));
        };
        let mut r = Response {
            challenge: c.challenge,
            dealer: c.dealer,
            room_id: c.room_id.clone(),
            sig: Signature([0; 64]),
        };
        r.sig = self.me.sign(Purpose::Response, &response_body(&r, &self.client_nonce, &self.me.id()));
        self.state = ClientState::AwaitingResult { challenge: Box::new(c.clone()), shared_key };
        Ok(r)
    }

    /// Step 4 (success): checks the dealer's signature over the acceptance.
    pub fn on_accepted(&mut self, a: &Accepted, now_ms: u64) -> Result<ClientSession, HandshakeError> {
        let ClientState::AwaitingResult { challenge, shared_key } = self.state.clone() else {
            return Err(self.fail(HandshakeError::UnexpectedMessage));
        };
        if now_ms.saturating_sub(self.started_ms) > HANDSHAKE_DEADLINE_MS {
            return Err(self.fail(HandshakeError::DeadlineExceeded));
        }
        let body = accepted_body(a, &challenge.challenge, &self.me.id());
        if verify(&challenge.dealer, Purpose::Accepted, &body, &a.sig).is_err() {
            return Err(self.fail(HandshakeError::BadAcceptedSignature));
        }
        self.state = ClientState::Done;
        Ok(ClientSession {
            dealer: PublicIdentity { signing: challenge.dealer, encryption: challenge.dealer_encryption_key },
            room_id: challenge.room_id,
            room_config: challenge.room_config,
            session_id: a.session_id,
            reconnect_token: a.reconnect_token,
            seat: a.seat,
            shared_key,
        })
    }

    /// Step 4 (failure): the dealer's reason, if the rejection is signed by
    /// the expected dealer key (else [`HandshakeError::UnsignedRejection`]).
    pub fn on_rejected(&mut self, r: &Rejected) -> HandshakeError {
        self.state = ClientState::Done;
        let signed = verify(&self.expected_dealer, Purpose::Rejected, &rejected_body(r), &r.sig).is_ok();
        if signed && r.client_nonce.is_none_or(|n| n == self.client_nonce) {
            HandshakeError::Rejected(r.reason)
        } else {
            HandshakeError::UnsignedRejection(r.reason)
        }
    }

    /// The nonce this handshake's hello carried.
    pub fn client_nonce(&self) -> Nonce {
        self.client_nonce
    }
}

/// Why an SDK cannot play with a dealer of release `dealer`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SdkVersionError {
    /// `claw-player/…` whose version is not `MAJOR.MINOR.PATCH`.
    #[error("SDK {0:?}: the version is not MAJOR.MINOR.PATCH")]
    Unparsable(String),
    /// The reference SDK on another release line.
    #[error("SDK {sdk:?} is not compatible with this dealer (release {dealer}): use {REFERENCE_SDK} {line}")]
    Incompatible {
        /// The hello's `sdk_version`.
        sdk: String,
        /// The dealer's release.
        dealer: String,
        /// The compatible release line (`1.x`, `0.3.x`).
        line: String,
    },
}

/// A version's release line: `(major, None)` from 1.0 on, `(0, Some(minor))`
/// before (Cargo's compatibility rule); `None` if not `MAJOR.MINOR.PATCH`
/// (a `-pre` or `+build` suffix allowed).
fn release_line(version: &str) -> Option<(u64, Option<u64>)> {
    let core = version.split(['-', '+']).next()?;
    let mut parts = core.split('.');
    let mut num = || {
        parts.next().filter(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))?.parse::<u64>().ok()
    };
    let (major, minor, _patch) = (num()?, num()?, num()?);
    if parts.next().is_some() {
        return None;
    }
    Some((major, (major == 0).then_some(minor)))
}

/// Whether an SDK announcing `sdk_version` (SPEC.md §8.3, step 7) can play
/// with a dealer of release `dealer`. Every SDK speaks the hello's
/// `protocol_version` (checked first); the reference SDK `claw-player/V` must
/// also be on the dealer's release line, the protocol revision the two
/// implement (same major; same major.minor while the major is 0). Other SDK
/// names are informational: the dealer cannot know their numbering.
pub fn check_sdk_version(sdk_version: &str, dealer: &str) -> Result<(), SdkVersionError> {
    let Some(version) = sdk_version.strip_prefix(REFERENCE_SDK).and_then(|v| v.strip_prefix('/')) else {
        return Ok(());
    };
    let Some(sdk) = release_line(version) else {
        return Err(SdkVersionError::Unparsable(sdk_version.to_owned()));
    };
    let ours = release_line(dealer);
    if ours == Some(sdk) {
        return Ok(());
    }
    let line = match ours {
        Some((major, None)) => format!("{major}.x"),
        Some((major, Some(minor))) => format!("{major}.{minor}.x"),
        None => dealer.to_owned(),
    };
    Err(SdkVersionError::Incompatible { sdk: sdk_version.to_owned(), dealer: dealer.to_owned(), line })
}

/// SHA-256 of a room configuration's exact JSON bytes (the value the
/// challenge signature covers).
pub fn room_config_digest(room_config: &RawJson) -> Digest {
    room_config.digest()
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand_chacha::rand_core::SeedableRng;
    use rand_chacha::ChaCha20Rng;

    const T0: u64 = 1_700_000_000_000;

    struct Fixture {
        dealer: Arc<Identity>,
        player: Arc<Identity>,
        rng: ChaCha20Rng,
        book: ChallengeBook,
    }

    fn fixture() -> Fixture {
        Fixture {
            dealer: Arc::new(Identity::from_seed([1; 32])),
            player: Arc::new(Identity::from_seed([2; 32])),
            rng: ChaCha20Rng::from_seed([3; 32]),
            book: ChallengeBook::new(),
        }
    }

    fn config() -> RawJson {
        RawJson::from_string(r#"{"game":"texas-holdem","seats":6}"#.to_owned()).unwrap()
    }

    #[test]
    fn happy_path() {
        let mut f = fixture();
        let (mut client, hello) =
            ClientHandshake::start(f.player.clone(), f.dealer.id(), "r1", "sdk/0.1", None, T0, &mut f.rng);
        let mut server = ServerHandshake::new(f.dealer.clone(), "r1", config());
        let challenge = server.on_hello(&hello, T0 + 5, &mut f.rng).unwrap();
        let response = client.on_challenge(&challenge, T0 + 10).unwrap();
        let v = server.on_response(&response, T0 + 15, &mut f.book).unwrap();
        assert_eq!(v.player, f.player.public());
        let token = Nonce::random(&mut f.rng);
        let accepted = server.accept(Some(Seat(2)), Some(token), T0 + 16, &mut f.rng).unwrap();
        let session = client.on_accepted(&accepted, T0 + 20).unwrap();
        assert_eq!(session.dealer, f.dealer.public());
        assert_eq!(session.reconnect_token, token);
        assert_eq!(session.seat, Some(Seat(2)));
        assert_eq!(session.room_config, config());
        // Both sides derived the same box key.
        let mut rng = ChaCha20Rng::from_seed([0; 32]);
        let hand = crate::bytes::HandId([5; 16]);
        let card = crate::commit::CardOpening {
            position: 0,
            card: "As".parse().unwrap(),
            salt: crate::bytes::Salt([1; 32]),
        };
        let sealed = v.shared_key.seal(&mut rng, &hand, &card);
        assert_eq!(session.shared_key.open(&hand, &sealed).unwrap(), card);
        // Wire form round-trips.
        let j = serde_json::to_string(&hello).unwrap();
        assert_eq!(serde_json::from_str::<Hello>(&j).unwrap(), hello);
        let j = serde_json::to_string(&challenge).unwrap();
        assert_eq!(serde_json::from_str::<Challenge>(&j).unwrap(), challenge);
    }

    #[test]
    fn rejection_codes_are_kebab_case() {
        assert_eq!(serde_json::to_string(&RejectReason::ChallengeReused).unwrap(), "\"challenge-reused\"");
        for r in [
            RejectReason::VersionMismatch,
            RejectReason::BadResponseSignature,
            RejectReason::Busy,
            RejectReason::SdkVersionMismatch,
            RejectReason::Banned,
        ] {
            assert_eq!(serde_json::to_string(&r).unwrap(), format!("\"{}\"", r.code()));
        }
    }

    #[test]
    fn the_reference_sdk_must_be_on_the_dealers_release_line() {
        let ok = |sdk: &str, dealer: &str| check_sdk_version(sdk, dealer).is_ok();
        assert!(ok("claw-player/0.1.0", "0.1.0"));
        assert!(ok("claw-player/0.1.7-rc.1+abc", "0.1.2"), "patch, pre-release and build do not matter");
        assert!(!ok("claw-player/0.2.0", "0.1.0"), "0.x: the minor is the line");
        assert!(!ok("claw-player/1.1.0", "0.1.0"));
        assert!(ok("claw-player/1.4.0", "1.0.3"), "from 1.0: the major is the line");
        assert!(!ok("claw-player/2.0.0", "1.9.9"));
        for bad in [
            "claw-player/1.2",
            "claw-player/x.y.z",
            "claw-player/",
            "claw-player/1.2.3.4",
            "claw-player/01a.1.1",
        ] {
            assert_eq!(
                check_sdk_version(bad, "0.1.0"),
                Err(SdkVersionError::Unparsable(bad.into())),
                "{bad}"
            );
        }
        // Other SDKs are informational.
        for other in ["test-sdk/1", "claw-playerx/9.9.9", "", "bench", "claw-sdk/0.1.0"] {
            assert!(ok(other, "0.1.0"), "{other}");
        }
        let e = check_sdk_version("claw-player/0.2.0", "0.1.4").unwrap_err().to_string();
        assert!(e.contains("claw-player 0.1.x") && e.contains("0.1.4"), "{e}");
        // This build's SDK name and release pass its own dealer.
        assert!(ok(&format!("{REFERENCE_SDK}/{RELEASE}"), RELEASE));
    }
}
