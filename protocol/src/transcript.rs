//! The signed, hash-chained transcript of a hand (SPEC.md §10).
//!
//! Every dealer → player hand event is an [`EventEnvelope`]: the hand id, a
//! sequence number from 0, the hash of the previous event, the body as exact
//! JSON text, and — on the last event of each burst — the dealer's signature
//! over
//!
//! ```text
//! "claw/v1/event" || 0x00 || hand_id (16) || seq (u64 BE) || prev (32) || SHA-256(body text)
//! ```
//!
//! The event's hash, which the next event carries as `prev`, is SHA-256 of
//! that whole signing byte string (signed or not); the first event's `prev`
//! is 32 zero bytes. So one signature authenticates the chain up to its
//! event. The dealer builds the chain with [`TranscriptBuilder`]; a player
//! checks each event as it arrives with [`TranscriptVerifier`] and verifies a
//! signature where it relies on the chain ([`TranscriptVerifier::confirm`]);
//! a whole hand is a [`Transcript`], stored as JSON lines.

use std::io::{BufRead, Write};

use serde::{Deserialize, Serialize};

use crate::audit::AuditCheck;
use crate::bytes::{sha256, Digest, HandId, Signature};
use crate::identity::Identity;
use crate::ids::PlayerId;
use crate::limits::MAX_UNSIGNED_RUN;
use crate::messages::{
    check_size, parse_as, peek_type, unknown, DecodeError, EncodeError, EventBody, RawJson, RevealState,
    ServerMessage, PROTOCOL_VERSION,
};
use crate::sign::{signed_message, verify, Purpose, SignatureError, SignerKey};

/// The `prev` of a hand's first event.
pub const GENESIS_PREV: Digest = Digest([0; 32]);

/// Length of the event signing body (after tag and separator):
/// hand id 16 + seq 8 + prev 32 + body hash 32.
pub const EVENT_SIGNING_BODY_LEN: usize = 88;

/// One chained hand event as it travels
/// (`{"type":"event","hand_id":…,"seq":…,"prev":…,"body":{…},"sig":…}`;
/// `sig` only on the last event of a burst).
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
    /// The dealer's signature (purpose `event`): present on the last event
    /// of each burst, absent (member omitted) on the others.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sig: Option<Signature>,
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
        let mut e = EventEnvelope::unsigned(hand_id, seq, prev, body);
        e.seal(dealer);
        e
    }

    /// `body` as event `seq` of `hand_id`, chained after `prev`, without a
    /// signature (inside a burst: a later event's signature covers it).
    pub fn unsigned(hand_id: HandId, seq: u64, prev: Digest, body: RawJson) -> EventEnvelope {
        EventEnvelope { hand_id, seq, prev, body, sig: None }
    }

    /// Adds the dealer's signature (the event ends a burst).
    pub fn seal(&mut self, dealer: &Identity) {
        self.sig = Some(dealer.sign(Purpose::Event, &self.signing_body()));
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

    /// Checks the dealer's signature; an unsigned event is refused
    /// ([`TranscriptError::Unsigned`]).
    pub fn verify_signature(&self, dealer: &PlayerId) -> Result<(), TranscriptError> {
        let sig = self.sig.as_ref().ok_or(TranscriptError::Unsigned { seq: self.seq })?;
        verify(dealer, Purpose::Event, &self.signing_body(), sig)
            .map_err(|source| TranscriptError::Signature { seq: self.seq, source })
    }

    /// Parses the body.
    pub fn decode_body(&self) -> Result<EventBody, DecodeError> {
        EventBody::decode(self.body.as_str())
    }

    /// The length in bytes of [`EventEnvelope::encode`]'s frame, counted
    /// without encoding it (the builder checks the frame limit with it, so
    /// that an event is serialised once, when it is sent).
    pub fn frame_len(&self) -> usize {
        // {"type":"event","hand_id":"<32 hex>","seq":<n>,"prev":"<64 hex>","body":<body>[,"sig":"<128 hex>"]}
        const FIXED: usize = r#"{"type":"event","hand_id":"","seq":,"prev":"","body":}"#.len() + 32 + 64;
        const SIG: usize = r#","sig":"""#.len() + 128;
        let digits = self.seq.checked_ilog10().map_or(1, |d| d as usize + 1);
        FIXED + digits + self.body.as_str().len() + if self.sig.is_some() { SIG } else { 0 }
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
    /// The event must carry the dealer's signature and does not: it is
    /// the last event of the transcript or of a burst the player relies on
    /// (a `your-turn`, the hand's end), or one more unsigned event would
    /// exceed `MAX_UNSIGNED_RUN`.
    #[error("event {seq}: not signed by the dealer where a signature is due")]
    Unsigned {
        /// The event's seq.
        seq: u64,
    },
    /// More than `MAX_UNSIGNED_RUN` events in a row without a signature.
    #[error("event {seq}: more than {MAX_UNSIGNED_RUN} events in a row without a dealer signature")]
    UnsignedRun {
        /// The seq of the first event past the limit.
        seq: u64,
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
            TranscriptError::Signature { .. }
            | TranscriptError::Unsigned { .. }
            | TranscriptError::UnsignedRun { .. } => AuditCheck::DealerSignatures,
            TranscriptError::WrongHand { .. }
            | TranscriptError::Sequence { .. }
            | TranscriptError::Chain { .. } => AuditCheck::HashChain,
            _ => AuditCheck::Structure,
        }
    }
}

/// Dealer side: appends bodies to a hand's chain, one burst at a time, and
/// signs the last event of each burst.
#[derive(Debug, Clone)]
pub struct TranscriptBuilder {
    transcript: Transcript,
    prev: Digest,
    /// Unsigned events at the end of the chain.
    unsigned_run: usize,
}

impl TranscriptBuilder {
    /// Starts the chain of hand `hand_id` (no header).
    pub fn new(hand_id: HandId) -> TranscriptBuilder {
        TranscriptBuilder {
            transcript: Transcript { header: None, hand_id, events: Vec::new() },
            prev: GENESIS_PREV,
            unsigned_run: 0,
        }
    }

    /// Starts the chain with a header naming the dealer and the room.
    pub fn with_header(hand_id: HandId, dealer: PlayerId, room_id: impl Into<String>) -> TranscriptBuilder {
        let mut b = TranscriptBuilder::new(hand_id);
        b.transcript.header = Some(TranscriptHeader::new(dealer, room_id, hand_id));
        b
    }

    /// Serialises, signs and appends `body` (a burst of one event); returns
    /// the envelope to send.
    pub fn append(&mut self, dealer: &Identity, body: &EventBody) -> Result<EventEnvelope, TranscriptError> {
        let seq = self.next_seq();
        let raw = body.to_raw().map_err(|source| TranscriptError::Encode { seq, source })?;
        self.append_raw(dealer, raw)
    }

    /// Serialises and appends `body` without signing it (a later event of
    /// the burst will be; see [`TranscriptBuilder::append_raw_unsigned`]).
    pub fn append_unsigned(
        &mut self,
        dealer: &Identity,
        body: &EventBody,
    ) -> Result<EventEnvelope, TranscriptError> {
        let seq = self.next_seq();
        let raw = body.to_raw().map_err(|source| TranscriptError::Encode { seq, source })?;
        self.append_raw_unsigned(dealer, raw)
    }

    /// Appends the events one input caused, as one burst: only the last is
    /// signed (and every event that would otherwise make the unsigned run
    /// longer than `MAX_UNSIGNED_RUN`). Returns the envelopes to send, in
    /// order. On error nothing was appended.
    pub fn append_burst(
        &mut self,
        dealer: &Identity,
        bodies: &[EventBody],
    ) -> Result<Vec<EventEnvelope>, TranscriptError> {
        let start = self.next_seq();
        let raws = bodies
            .iter()
            .enumerate()
            .map(|(i, b)| {
                b.to_raw().map_err(|source| TranscriptError::Encode { seq: start + i as u64, source })
            })
            .collect::<Result<Vec<_>, _>>()?;
        let (len, prev, run) = (self.transcript.events.len(), self.prev, self.unsigned_run);
        let last = raws.len().saturating_sub(1);
        let mut out = Vec::with_capacity(raws.len());
        for (i, raw) in raws.into_iter().enumerate() {
            match self.push(dealer, raw, i == last) {
                Ok(e) => out.push(e),
                Err(e) => {
                    self.transcript.events.truncate(len);
                    (self.prev, self.unsigned_run) = (prev, run);
                    return Err(e);
                }
            }
        }
        Ok(out)
    }

    /// Signs and appends a body given as JSON text (kept byte for byte), as
    /// a burst of one event.
    pub fn append_raw(&mut self, dealer: &Identity, body: RawJson) -> Result<EventEnvelope, TranscriptError> {
        self.push(dealer, body, true)
    }

    /// Appends a body given as JSON text without signing it (a later event
    /// of the burst will be); it is signed anyway when the unsigned run
    /// would exceed `MAX_UNSIGNED_RUN`. The burst's last event must come
    /// through [`TranscriptBuilder::append_raw`].
    pub fn append_raw_unsigned(
        &mut self,
        dealer: &Identity,
        body: RawJson,
    ) -> Result<EventEnvelope, TranscriptError> {
        self.push(dealer, body, false)
    }

    fn push(
        &mut self,
        dealer: &Identity,
        body: RawJson,
        sign: bool,
    ) -> Result<EventEnvelope, TranscriptError> {
        let seq = self.next_seq();
        let mut env = EventEnvelope::unsigned(self.transcript.hand_id, seq, self.prev, body);
        // One body digest per event: signed bytes for the signature and the hash.
        let signed = env.signing_body();
        if sign || self.unsigned_run >= MAX_UNSIGNED_RUN {
            env.sig = Some(dealer.sign(Purpose::Event, &signed));
        }
        // Refuse an event no peer would accept (frame limit).
        let len = env.frame_len();
        if len > crate::messages::MAX_FRAME_BYTES {
            let source = EncodeError::Oversize { len, max: crate::messages::MAX_FRAME_BYTES };
            return Err(TranscriptError::Encode { seq, source });
        }
        self.unsigned_run = if env.sig.is_some() { 0 } else { self.unsigned_run + 1 };
        self.prev = sha256(&[&signed_message(Purpose::Event, &signed)]);
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

/// Player side: checks each event of one hand as it arrives (hand id, seq,
/// `prev`, unsigned run, body) and verifies a dealer signature only where
/// the player relies on the chain: [`TranscriptVerifier::confirm`] (before
/// it acts, at the hand's end) and when more than `MAX_UNSIGNED_RUN`
/// events would be held unconfirmed. One verified signature authenticates
/// every event before it, so no event's signature is verified twice. A
/// reconnecting player starts a new verifier; the dealer re-sends the
/// hand's events from seq 0.
#[derive(Debug, Clone)]
pub struct TranscriptVerifier {
    /// Parsed once for the hand's signatures.
    dealer: SignerKey,
    hand_id: Option<HandId>,
    next_seq: u64,
    prev: Digest,
    /// Offline: the caller checked every signature and the runs already.
    presigned: bool,
    /// Unsigned events at the end of the chain.
    unsigned_run: usize,
    /// The newest signed event, while its signature is not verified yet.
    newest_signed: Option<PendingSignature>,
    /// Events `0..confirmed` are covered by a verified signature.
    confirmed: u64,
    /// Dealer signatures verified so far.
    verified: u64,
}

/// A signed event whose signature the verifier has not checked yet.
#[derive(Debug, Clone)]
struct PendingSignature {
    seq: u64,
    body: [u8; EVENT_SIGNING_BODY_LEN],
    sig: Signature,
}

impl TranscriptVerifier {
    /// Verifies events signed by `dealer`; the hand id is taken from the
    /// first event (seq 0).
    pub fn new(dealer: PlayerId) -> TranscriptVerifier {
        TranscriptVerifier {
            dealer: SignerKey::new(&dealer),
            hand_id: None,
            next_seq: 0,
            prev: GENESIS_PREV,
            presigned: false,
            unsigned_run: 0,
            newest_signed: None,
            confirmed: 0,
            verified: 0,
        }
    }

    /// Verifies the events of a known hand.
    pub fn for_hand(dealer: PlayerId, hand_id: HandId) -> TranscriptVerifier {
        TranscriptVerifier { hand_id: Some(hand_id), ..TranscriptVerifier::new(dealer) }
    }

    /// For events whose signatures the caller batch-verified already (the
    /// offline audit): no signature is verified again; the unsigned runs and
    /// the signed end ([`TranscriptVerifier::confirm`]) are still checked.
    pub(crate) fn presigned(dealer: PlayerId, hand_id: HandId) -> TranscriptVerifier {
        TranscriptVerifier { presigned: true, ..TranscriptVerifier::for_hand(dealer, hand_id) }
    }

    /// Checks `env` as the next event and returns its parsed body. Checks,
    /// in order: hand id, seq, prev, unsigned run, body; then, if more than
    /// `MAX_UNSIGNED_RUN` events would be unconfirmed, the newest signature.
    /// On error the verifier is unchanged.
    pub fn accept(&mut self, env: &EventEnvelope) -> Result<EventBody, TranscriptError> {
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
        if env.sig.is_none() && self.unsigned_run >= MAX_UNSIGNED_RUN {
            return Err(TranscriptError::UnsignedRun { seq: env.seq });
        }
        let body = env.decode_body().map_err(|source| TranscriptError::Body { seq: env.seq, source })?;
        let signing_body = env.signing_body();
        let newest = match env.sig {
            Some(sig) => Some(PendingSignature { seq: env.seq, body: signing_body, sig }),
            None => self.newest_signed.clone(),
        };
        let mut confirmed = self.confirmed;
        let mut verified = self.verified;
        let held = (env.seq + 1).saturating_sub(confirmed);
        let mut newest_pending = newest;
        if !self.presigned && held > MAX_UNSIGNED_RUN as u64 {
            let p = newest_pending.take().ok_or(TranscriptError::Unsigned { seq: env.seq })?;
            self.check(&p)?;
            verified += 1;
            confirmed = p.seq + 1;
        }
        self.hand_id = Some(env.hand_id);
        self.next_seq += 1;
        self.prev = sha256(&[&signed_message(Purpose::Event, &signing_body)]);
        self.unsigned_run = if env.sig.is_some() { 0 } else { self.unsigned_run + 1 };
        self.newest_signed = newest_pending;
        self.confirmed = confirmed;
        self.verified = verified;
        Ok(body)
    }

    fn check(&self, p: &PendingSignature) -> Result<(), TranscriptError> {
        self.dealer
            .verify(Purpose::Event, &p.body, &p.sig)
            .map_err(|source| TranscriptError::Signature { seq: p.seq, source })
    }

    /// A reliance point (the player is about to act, or the hand ended):
    /// every accepted event must be covered by a dealer signature. Fails
    /// with [`TranscriptError::Unsigned`] if the newest event is unsigned
    /// (events after the newest signature are unconfirmed), else verifies
    /// the newest signature unless it was verified already (offline:
    /// presigned, only the signed end is checked).
    pub fn confirm(&mut self) -> Result<(), TranscriptError> {
        if self.confirmed == self.next_seq {
            return Ok(());
        }
        if self.unsigned_run > 0 {
            return Err(TranscriptError::Unsigned { seq: self.next_seq - 1 });
        }
        if self.presigned {
            self.confirmed = self.next_seq;
            return Ok(());
        }
        let p = self.newest_signed.take().ok_or(TranscriptError::Unsigned { seq: self.next_seq - 1 })?;
        if let Err(e) = self.check(&p) {
            self.newest_signed = Some(p);
            return Err(e);
        }
        self.verified += 1;
        self.confirmed = p.seq + 1;
        Ok(())
    }

    /// How many events are not yet covered by a verified signature.
    pub fn unconfirmed(&self) -> u64 {
        self.next_seq - self.confirmed
    }

    /// Dealer signatures this verifier has verified.
    pub fn signatures_verified(&self) -> u64 {
        self.verified
    }

    /// The dealer key events must be signed with.
    pub fn dealer(&self) -> PlayerId {
        *self.dealer.id()
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

    /// Checks the whole chain as a player would event by event, relying on
    /// it at the end (the last event must be signed), and returns the
    /// parsed bodies.
    pub fn verify_chain(&self, dealer: &PlayerId) -> Result<Vec<EventBody>, TranscriptError> {
        let mut v = TranscriptVerifier::for_hand(*dealer, self.hand_id);
        let bodies = self.events.iter().map(|e| v.accept(e)).collect::<Result<Vec<_>, _>>()?;
        v.confirm()?;
        Ok(bodies)
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
