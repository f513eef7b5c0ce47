//! The signed, hash-chained transcript of a hand (SPEC.md §10).
//!
//! Every dealer → player hand event is an [`EventEnvelope`]: the hand id, a
//! sequence number from 0, the hash of the previous event, the body as exact
//! JSON text, and the dealer's signature over
//!
//! ```text
//! "claw/v1/event" || 0x00 || hand_id (16) || seq (u64 BE) || prev (32) || SHA-256(body text)
//! ```
//!
//! The event's hash, which the next event carries as `prev`, is SHA-256 of
//! that whole signed byte string; the first event's `prev` is 32 zero bytes.
//! The dealer builds the chain with [`TranscriptBuilder`]; a player checks
//! each event as it arrives with [`TranscriptVerifier`]; a whole hand is a
//! [`Transcript`], stored as JSON lines.

use std::io::{BufRead, Write};

use serde::{Deserialize, Serialize};

use crate::audit::AuditCheck;
use crate::bytes::{sha256, Digest, HandId, Signature};
use crate::identity::Identity;
use crate::ids::PlayerId;
use crate::messages::{
    check_size, parse_as, peek_type, unknown, DecodeError, EncodeError, EventBody, RawJson, RevealState,
    ServerMessage, PROTOCOL_VERSION,
};
use crate::sign::{signed_message, verify, Purpose, SignatureError};

/// The `prev` of a hand's first event.
pub const GENESIS_PREV: Digest = Digest([0; 32]);

/// Length of the event signing body (after tag and separator):
/// hand id 16 + seq 8 + prev 32 + body hash 32.
pub const EVENT_SIGNING_BODY_LEN: usize = 88;

/// One signed, chained hand event as it travels
/// (`{"type":"event","hand_id":…,"seq":…,"prev":…,"body":{…},"sig":…}`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EventEnvelope {
    /// The hand.
    pub hand_id: HandId,
    /// Position in the hand's chain, from 0.
    pub seq: u64,
    /// Hash of the previous event ([`GENESIS_PREV`] for seq 0).
    pub prev: Digest,
    /// The event body ([`EventBody`]) as exact JSON text.
    pub body: RawJson,
    /// The dealer's signature (purpose `event`).
    pub sig: Signature,
}

/// The fields the dealer signs for an event (after `"claw/v1/event" || 0x00`).
pub fn event_signing_body(
    hand_id: &HandId,
    seq: u64,
    prev: &Digest,
    body_hash: &Digest,
) -> [u8; EVENT_SIGNING_BODY_LEN] {
    let mut b = [0u8; EVENT_SIGNING_BODY_LEN];
    b[..16].copy_from_slice(&hand_id.0);
    b[16..24].copy_from_slice(&seq.to_be_bytes());
    b[24..56].copy_from_slice(&prev.0);
    b[56..].copy_from_slice(&body_hash.0);
    b
}

impl EventEnvelope {
    /// Signs `body` as event `seq` of `hand_id`, chained after `prev`.
    pub fn sign(dealer: &Identity, hand_id: HandId, seq: u64, prev: Digest, body: RawJson) -> EventEnvelope {
        let sig = dealer.sign(Purpose::Event, &event_signing_body(&hand_id, seq, &prev, &body.digest()));
        EventEnvelope { hand_id, seq, prev, body, sig }
    }

    /// The fields the signature covers (without tag).
    pub fn signing_body(&self) -> [u8; EVENT_SIGNING_BODY_LEN] {
        event_signing_body(&self.hand_id, self.seq, &self.prev, &self.body.digest())
    }

    /// This event's hash: SHA-256 of the whole signed byte string. The next
    /// event's `prev`.
    pub fn hash(&self) -> Digest {
        sha256(&[&signed_message(Purpose::Event, &self.signing_body())])
    }

    /// Checks the dealer's signature.
    pub fn verify_signature(&self, dealer: &PlayerId) -> Result<(), SignatureError> {
        verify(dealer, Purpose::Event, &self.signing_body(), &self.sig)
    }

    /// Parses the body.
    pub fn decode_body(&self) -> Result<EventBody, DecodeError> {
        EventBody::decode(self.body.as_str())
    }

    /// The envelope as a wire frame / transcript line.
    pub fn encode(&self) -> Result<String, EncodeError> {
        ServerMessage::Event(self.clone()).encode()
    }
}

/// Why an event or a transcript was refused. [`TranscriptError::check`]
/// names the audit check it belongs to.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TranscriptError {
    /// The event belongs to another hand.
    #[error("event {seq}: hand {got}, expected {expected}")]
    WrongHand {
        /// The event's seq.
        seq: u64,
        /// The hand being verified.
        expected: HandId,
        /// The event's hand.
        got: HandId,
    },
    /// Out of order, missing or repeated event.
    #[error("event sequence: expected seq {expected}, got {got}")]
    Sequence {
        /// The seq due next.
        expected: u64,
        /// The seq received.
        got: u64,
    },
    /// `prev` is not the hash of the previous event.
    #[error("event {seq}: prev does not match the previous event's hash")]
    Chain {
        /// The event's seq.
        seq: u64,
    },
    /// The dealer's signature does not verify.
    #[error("event {seq}: {source}")]
    Signature {
        /// The event's seq.
        seq: u64,
        /// Why.
        #[source]
        source: SignatureError,
    },
    /// The body is not a valid event.
    #[error("event {seq}: body: {source}")]
    Body {
        /// The event's seq.
        seq: u64,
        /// Why.
        #[source]
        source: DecodeError,
    },
    /// A line of a JSON-lines transcript could not be read.
    #[error("line {line}: {source}")]
    Line {
        /// 1-based line number.
        line: usize,
        /// Why.
        #[source]
        source: DecodeError,
    },
    /// The header is missing, misplaced or disagrees with the events.
    #[error("transcript header: {0}")]
    Header(String),
    /// The transcript has no events.
    #[error("empty transcript")]
    Empty,
    /// The event would not fit in a frame.
    #[error("event {seq}: {source}")]
    Encode {
        /// The event's seq.
        seq: u64,
        /// Why.
        #[source]
        source: EncodeError,
    },
    /// Reading or writing the file failed.
    #[error("i/o: {0}")]
    Io(String),
}

impl TranscriptError {
    /// The audit check this failure belongs to.
    pub fn check(&self) -> AuditCheck {
        match self {
            TranscriptError::Signature { .. } => AuditCheck::DealerSignatures,
            TranscriptError::WrongHand { .. }
            | TranscriptError::Sequence { .. }
            | TranscriptError::Chain { .. } => AuditCheck::HashChain,
            _ => AuditCheck::Structure,
        }
    }
}

/// Dealer side: appends bodies to a hand's chain and signs them.
#[derive(Debug, Clone)]
pub struct TranscriptBuilder {
    transcript: Transcript,
    prev: Digest,
}

impl TranscriptBuilder {
    /// Starts the chain of hand `hand_id` (no header).
    pub fn new(hand_id: HandId) -> TranscriptBuilder {
        TranscriptBuilder {
            transcript: Transcript { header: None, hand_id, events: Vec::new() },
            prev: GENESIS_PREV,
        }
    }

    /// Starts the chain with a header naming the dealer and the room.
    pub fn with_header(hand_id: HandId, dealer: PlayerId, room_id: impl Into<String>) -> TranscriptBuilder {
        let mut b = TranscriptBuilder::new(hand_id);
        b.transcript.header = Some(TranscriptHeader::new(dealer, room_id, hand_id));
        b
    }

    /// Serialises, signs and appends `body`; returns the envelope to send.
    pub fn append(&mut self, dealer: &Identity, body: &EventBody) -> Result<EventEnvelope, TranscriptError> {
        let seq = self.next_seq();
        let raw = body.to_raw().map_err(|source| TranscriptError::Encode { seq, source })?;
        self.append_raw(dealer, raw)
    }

    /// Signs and appends a body given as JSON text (kept byte for byte).
    pub fn append_raw(&mut self, dealer: &Identity, body: RawJson) -> Result<EventEnvelope, TranscriptError> {
        let seq = self.next_seq();
        let env = EventEnvelope::sign(dealer, self.transcript.hand_id, seq, self.prev, body);
        // Refuse an event no peer would accept (frame limit).
        env.encode().map_err(|source| TranscriptError::Encode { seq, source })?;
        self.prev = env.hash();
        self.transcript.events.push(env.clone());
        Ok(env)
    }

    /// The seq the next event will get.
    pub fn next_seq(&self) -> u64 {
        self.transcript.events.len() as u64
    }

    /// The hash the next event will carry as `prev`.
    pub fn last_hash(&self) -> Digest {
        self.prev
    }

    /// The hand.
    pub fn hand_id(&self) -> HandId {
        self.transcript.hand_id
    }

    /// The chain so far.
    pub fn transcript(&self) -> &Transcript {
        &self.transcript
    }

    /// The finished chain.
    pub fn into_transcript(self) -> Transcript {
        self.transcript
    }
}

/// Player side: checks each event of one hand as it arrives: hand id, seq,
/// `prev`, dealer signature, body. A reconnecting player starts a new
/// verifier; the dealer re-sends the hand's events from seq 0.
#[derive(Debug, Clone)]
pub struct TranscriptVerifier {
    dealer: PlayerId,
    hand_id: Option<HandId>,
    next_seq: u64,
    prev: Digest,
}

impl TranscriptVerifier {
    /// Verifies events signed by `dealer`; the hand id is taken from the
    /// first event (seq 0).
    pub fn new(dealer: PlayerId) -> TranscriptVerifier {
        TranscriptVerifier { dealer, hand_id: None, next_seq: 0, prev: GENESIS_PREV }
    }

    /// Verifies the events of a known hand.
    pub fn for_hand(dealer: PlayerId, hand_id: HandId) -> TranscriptVerifier {
        TranscriptVerifier { hand_id: Some(hand_id), ..TranscriptVerifier::new(dealer) }
    }

    /// Checks `env` as the next event and returns its parsed body. Checks,
    /// in order: hand id, seq, prev, signature, body. On error the verifier
    /// is unchanged.
    pub fn accept(&mut self, env: &EventEnvelope) -> Result<EventBody, TranscriptError> {
        self.accept_checked(env, true)
    }

    /// [`TranscriptVerifier::accept`] for an event whose signature the
    /// caller batch-verified already (the offline audit).
    pub(crate) fn accept_presigned(&mut self, env: &EventEnvelope) -> Result<EventBody, TranscriptError> {
        self.accept_checked(env, false)
    }

    fn accept_checked(&mut self, env: &EventEnvelope, verify: bool) -> Result<EventBody, TranscriptError> {
        if let Some(h) = self.hand_id {
            if env.hand_id != h {
                return Err(TranscriptError::WrongHand { seq: env.seq, expected: h, got: env.hand_id });
            }
        }
        if env.seq != self.next_seq {
            return Err(TranscriptError::Sequence { expected: self.next_seq, got: env.seq });
        }
        if env.prev != self.prev {
            return Err(TranscriptError::Chain { seq: env.seq });
        }
        if verify {
            env.verify_signature(&self.dealer)
                .map_err(|source| TranscriptError::Signature { seq: env.seq, source })?;
        }
        let body = env.decode_body().map_err(|source| TranscriptError::Body { seq: env.seq, source })?;
        self.hand_id = Some(env.hand_id);
        self.next_seq += 1;
        self.prev = env.hash();
        Ok(body)
    }

    /// The dealer key events must be signed with.
    pub fn dealer(&self) -> PlayerId {
        self.dealer
    }

    /// The hand, once known.
    pub fn hand_id(&self) -> Option<HandId> {
        self.hand_id
    }

    /// The seq expected next.
    pub fn next_seq(&self) -> u64 {
        self.next_seq
    }

    /// Hash of the last accepted event ([`GENESIS_PREV`] before the first).
    pub fn last_hash(&self) -> Digest {
        self.prev
    }
}

/// Optional first line of a transcript file: who signed it and where.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TranscriptHeader {
    /// [`PROTOCOL_VERSION`].
    pub version: String,
    /// The dealer's signing key. Self-asserted: an auditor compares it with
    /// the key of the invite URL.
    pub dealer: PlayerId,
    /// The room.
    pub room_id: String,
    /// The hand.
    pub hand_id: HandId,
}

impl TranscriptHeader {
    /// A header for the current protocol version.
    pub fn new(dealer: PlayerId, room_id: impl Into<String>, hand_id: HandId) -> TranscriptHeader {
        TranscriptHeader { version: PROTOCOL_VERSION.to_owned(), dealer, room_id: room_id.into(), hand_id }
    }
}

#[derive(Serialize)]
#[serde(tag = "type", rename = "transcript-header")]
struct HeaderLine<'a> {
    #[serde(flatten)]
    header: &'a TranscriptHeader,
}

/// The events of one hand, in order, with an optional header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Transcript {
    /// Dealer and room, when known.
    pub header: Option<TranscriptHeader>,
    /// The hand.
    pub hand_id: HandId,
    /// The envelopes, seq 0 first.
    pub events: Vec<EventEnvelope>,
}

impl Transcript {
    /// A transcript from received envelopes (the hand id of the first).
    pub fn from_events(
        header: Option<TranscriptHeader>,
        events: Vec<EventEnvelope>,
    ) -> Result<Transcript, TranscriptError> {
        let hand_id = match (&header, events.first()) {
            (Some(h), _) => h.hand_id,
            (None, Some(e)) => e.hand_id,
            (None, None) => return Err(TranscriptError::Empty),
        };
        Ok(Transcript { header, hand_id, events })
    }

    /// Checks the whole chain as a player would event by event, and returns
    /// the parsed bodies.
    pub fn verify_chain(&self, dealer: &PlayerId) -> Result<Vec<EventBody>, TranscriptError> {
        let mut v = TranscriptVerifier::for_hand(*dealer, self.hand_id);
        self.events.iter().map(|e| v.accept(e)).collect()
    }

    /// JSON lines: the header (if any), then one `event` frame per line.
    pub fn to_jsonl(&self) -> Result<String, TranscriptError> {
        let mut out = Vec::new();
        self.write_jsonl(&mut out)?;
        String::from_utf8(out).map_err(|e| TranscriptError::Io(e.to_string()))
    }

    /// Writes the JSON lines to `w`.
    pub fn write_jsonl<W: Write>(&self, mut w: W) -> Result<(), TranscriptError> {
        let io = |e: std::io::Error| TranscriptError::Io(e.to_string());
        if let Some(h) = &self.header {
            let line = serde_json::to_string(&HeaderLine { header: h })
                .map_err(|e| TranscriptError::Io(e.to_string()))?;
            writeln!(w, "{line}").map_err(io)?;
        }
        for e in &self.events {
            let line = e.encode().map_err(|source| TranscriptError::Encode { seq: e.seq, source })?;
            writeln!(w, "{line}").map_err(io)?;
        }
        Ok(())
    }

    /// Parses JSON lines: an optional `transcript-header` first, then `event`
    /// lines; blank lines are skipped. Each line is size-checked like a frame.
    /// The chain itself is not verified here (see [`Transcript::verify_chain`]
    /// and [`crate::audit::audit`]).
    pub fn from_jsonl(text: &str) -> Result<Transcript, TranscriptError> {
        Transcript::read_jsonl(text.as_bytes())
    }

    /// Reads JSON lines from `r` (see [`Transcript::from_jsonl`]).
    pub fn read_jsonl<R: BufRead>(r: R) -> Result<Transcript, TranscriptError> {
        let mut header = None;
        let mut events = Vec::new();
        for (i, line) in r.lines().enumerate() {
            let n = i + 1;
            let line = line.map_err(|e| TranscriptError::Io(e.to_string()))?;
            let line = line.trim();
            if line.is_empty() {
                continue;
            }
            let err = |source| TranscriptError::Line { line: n, source };
            check_size(line).map_err(err)?;
            match peek_type(line).map_err(err)?.as_str() {
                "transcript-header" => {
                    if header.is_some() || !events.is_empty() {
                        return Err(TranscriptError::Header(format!(
                            "line {n}: header must be the first line"
                        )));
                    }
                    let h: TranscriptHeader = parse_as(line).map_err(err)?;
                    if h.version != PROTOCOL_VERSION {
                        return Err(TranscriptError::Header(format!("unsupported version {:?}", h.version)));
                    }
                    header = Some(h);
                }
                "event" => events.push(parse_as::<EventEnvelope>(line).map_err(err)?),
                other => return Err(err(unknown(other))),
            }
        }
        let t = Transcript::from_events(header, events)?;
        if let Some(e) = t.events.iter().find(|e| e.hand_id != t.hand_id) {
            return Err(TranscriptError::WrongHand { seq: e.seq, expected: t.hand_id, got: e.hand_id });
        }
        Ok(t)
    }

    /// Whether every secret of the hand is out: the dealer seed in
    /// `game-end` (policy `full`) or in a later `audit-reveal`. A hand
    /// without either is [`RevealState::Pending`].
    pub fn reveal_state(&self) -> RevealState {
        let out = self.events.iter().any(|e| match e.decode_body() {
            Ok(EventBody::GameEnd(g)) => g.dealer_seed.is_some(),
            Ok(EventBody::AuditReveal(_)) => true,
            _ => false,
        });
        if out {
            RevealState::Complete
        } else {
            RevealState::Pending
        }
    }

    /// The dealer key of the header, if any.
    pub fn dealer(&self) -> Option<PlayerId> {
        self.header.as_ref().map(|h| h.dealer)
    }
}
