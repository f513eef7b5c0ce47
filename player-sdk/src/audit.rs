//! The Auditor: checks a whole hand from its transcript.
//!
//! The cryptographic checks (dealer signatures, hash chain, structure,
//! reveal, seed commitment, player seeds, shuffle, leaves, Merkle root, deal
//! order, opened cards, action signatures) are the protocol crate's
//! [`claw_protocol::audit::audit`]; the game half is `claw-games`'
//! [`GamesReplayer`]: the canonical deck of the game and a replay of the
//! game plugin over the verified inputs, which must reproduce every deal,
//! chip movement and reveal in order, the timeout actions, the announced
//! result and the table memory. The first failed check is named
//! ([`AuditCheck`]).
//!
//! The same code runs live at each hand end inside [`crate::node`] and
//! offline on saved JSON-lines transcripts ([`Auditor::audit_jsonl`],
//! `claw-player audit`).

use std::path::Path;
use std::time::Duration;

pub use claw_games::audit::GamesReplayer;
use claw_protocol::audit::{audit, check_balances, AuditCheck, AuditError, AuditOptions, AuditReport};
use claw_protocol::messages::HandRecord;
use claw_protocol::transcript::{EventEnvelope, Transcript, TranscriptHeader};
use claw_protocol::{Chips, HandId, Identity, PlayerId, Seed};

/// Audits hands: the protocol checks plus the game replay, with the
/// dealer key the auditor trusts and, for a player auditing its own hands,
/// its identity (to open its sealed cards) and the seed it sent.
#[derive(Clone, Copy, Default)]
pub struct Auditor<'a> {
    /// The trusted dealer key (from the invite URL). Without it, a
    /// transcript's header names the key.
    pub dealer: Option<PlayerId>,
    /// The auditing player, whose sealed cards are opened and checked.
    pub viewer: Option<&'a Identity>,
    /// Accept a deferred-reveal hand whose secrets are not out yet (the
    /// checks that need them are reported as skipped).
    pub allow_pending_reveal: bool,
    /// The room's commission (from the room configuration the dealer
    /// signed): every seat's `game-start` commission must equal it.
    pub commission: Option<Chips>,
}

impl std::fmt::Debug for Auditor<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Auditor")
            .field("dealer", &self.dealer)
            .field("viewer", &self.viewer.map(|v| v.id()))
            .field("allow_pending_reveal", &self.allow_pending_reveal)
            .field("commission", &self.commission)
            .finish()
    }
}

/// What an audit outcome means: every check passed, every check that could
/// run passed but the hand's deferred reveal is not out yet, or cheating.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    /// Every check ran and passed.
    Ok,
    /// The reveal is not published yet: the checks that need it were
    /// skipped. Neither "audited OK" nor a failure; fetch the hand later.
    Pending,
    /// A check failed.
    Failed,
}

impl Verdict {
    /// The verdict of an audit outcome.
    pub fn of(r: &Result<AuditReport, AuditError>) -> Verdict {
        match r {
            Ok(rep) if rep.complete() => Verdict::Ok,
            Ok(_) => Verdict::Pending,
            Err(_) => Verdict::Failed,
        }
    }
}

/// The outcome of auditing one hand of a file.
#[derive(Debug, Clone)]
pub struct HandVerdict {
    /// The hand (from its header or first event).
    pub hand_id: HandId,
    /// Its room, from the transcript header (the cross-hand check groups by it).
    pub room: Option<String>,
    /// Where it starts in the file (1-based line number).
    pub line: usize,
    /// The report, or the first failed check.
    pub outcome: Result<AuditReport, AuditError>,
}

impl HandVerdict {
    /// OK, pending or failed.
    pub fn verdict(&self) -> Verdict {
        Verdict::of(&self.outcome)
    }
}

/// Why a transcript file could not be audited at all.
#[derive(Debug, thiserror::Error)]
pub enum AuditFileError {
    /// The file could not be read.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// A line is not a transcript line; names the failed check (`structure`).
    #[error("line {line}: audit check {check} failed: {detail}")]
    Parse {
        /// The line number (1-based).
        line: usize,
        /// The check that failed.
        check: AuditCheck,
        /// What failed.
        detail: String,
    },
    /// The file holds no hand.
    #[error("no hand in the file")]
    Empty,
}

impl<'a> Auditor<'a> {
    /// An auditor trusting `dealer` (no viewer).
    pub fn new(dealer: Option<PlayerId>) -> Auditor<'a> {
        Auditor { dealer, viewer: None, allow_pending_reveal: false, commission: None }
    }

    /// The same auditor, auditing as `viewer` (opens its sealed cards).
    pub fn with_viewer(self, viewer: &'a Identity) -> Auditor<'a> {
        Auditor { viewer: Some(viewer), ..self }
    }

    /// Runs every check on `t` in order; `my_seed` is the seed the viewer
    /// sent for the hand (it must be among the published seeds).
    pub fn audit(&self, t: &Transcript, my_seed: Option<Seed>) -> Result<AuditReport, AuditError> {
        let replayer = GamesReplayer::default();
        let opts = AuditOptions {
            dealer: self.dealer,
            viewer: self.viewer,
            my_seed,
            allow_pending_reveal: self.allow_pending_reveal,
            replayer: Some(&replayer),
            commission: self.commission,
        };
        audit(t, &opts)
    }

    /// Audits every hand of a JSON-lines text. Hands are separated by
    /// `transcript-header` lines or by a change of hand id, so one file may
    /// hold a single hand (as `--save-transcripts` writes) or a whole
    /// session. Lines that are not transcript lines fail the whole file.
    pub fn audit_jsonl(&self, text: &str) -> Result<Vec<HandVerdict>, AuditFileError> {
        let hands = split_hands(text)?;
        if hands.is_empty() {
            return Err(AuditFileError::Empty);
        }
        let mut verdicts: Vec<HandVerdict> = hands
            .into_iter()
            .map(|(line, t)| HandVerdict {
                hand_id: t.hand_id,
                room: t.header.as_ref().map(|h| h.room_id.clone()),
                line,
                outcome: self.audit(&t, None),
            })
            .collect();
        bind_balances(&mut verdicts);
        Ok(verdicts)
    }

    /// Reads and audits a JSON-lines transcript file.
    pub fn audit_file(&self, path: &Path) -> Result<Vec<HandVerdict>, AuditFileError> {
        let text = std::fs::read_to_string(path)
            .map_err(|source| AuditFileError::Io { path: path.display().to_string(), source })?;
        self.audit_jsonl(&text)
    }
}

/// The cross-hand check `balances` (SPEC.md §11.4) over a set of audited
/// hands: the hands that passed (or are pending) are grouped by dealer and
/// room and ordered by hand number; of two hands numbered `k` and `k + 1`,
/// the later must start each player of both where the earlier left it, less
/// its commission ([`check_balances`]). A failure becomes the later hand's
/// verdict. The same hand given twice counts once; two different hands with
/// one number in one room fail. Hands with a gap between them are not
/// compared (a hand not given may have moved the chips). Returns how many
/// pairs were compared.
pub fn bind_balances(verdicts: &mut [HandVerdict]) -> usize {
    use std::collections::BTreeMap;
    let mut rooms: BTreeMap<(PlayerId, Option<&str>), BTreeMap<u64, usize>> = BTreeMap::new();
    let mut failures: Vec<(usize, AuditError)> = Vec::new();
    for (i, v) in verdicts.iter().enumerate() {
        let Ok(r) = &v.outcome else { continue };
        let by_number = rooms.entry((r.hand.dealer, v.room.as_deref())).or_default();
        match by_number.get(&r.hand.hand_number) {
            Some(&j) if verdicts[j].hand_id == v.hand_id => {}
            Some(&j) => failures.push((
                i,
                AuditError {
                    check: AuditCheck::Balances,
                    detail: format!(
                        "hands {} and {} both carry hand number {}",
                        verdicts[j].hand_id, v.hand_id, r.hand.hand_number
                    ),
                },
            )),
            None => {
                by_number.insert(r.hand.hand_number, i);
            }
        }
    }
    let mut pairs = 0;
    for by_number in rooms.values() {
        let ordered: Vec<(u64, usize)> = by_number.iter().map(|(n, i)| (*n, *i)).collect();
        for w in ordered.windows(2) {
            let ((a, i), (b, j)) = (w[0], w[1]);
            if a.checked_add(1) != Some(b) {
                continue;
            }
            let (Ok(prev), Ok(next)) = (&verdicts[i].outcome, &verdicts[j].outcome) else { continue };
            pairs += 1;
            if let Err(e) = check_balances(&prev.hand, &next.hand) {
                failures.push((j, e));
            }
        }
    }
    for (i, e) in failures {
        if verdicts[i].outcome.is_ok() {
            verdicts[i].outcome = Err(e);
        }
    }
    pairs
}

/// The largest hand record [`fetch_completion`] reads: 1,024 events of the
/// protocol's largest frame ([`claw_protocol::messages::MAX_FRAME_BYTES`],
/// 64 MiB). An answer that says it is longer is refused before its body is
/// read; one that grows past it is dropped there.
pub const MAX_FETCH_BYTES: usize = 1024 * claw_protocol::messages::MAX_FRAME_BYTES;

/// Deadlines and size cap of a fetch from the dealer's archive.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FetchLimits {
    /// Time to open the connection (TCP and TLS).
    pub connect_timeout: Duration,
    /// Silence allowed while waiting for the answer or between two reads of
    /// its body.
    pub read_timeout: Duration,
    /// Time for the whole request, body included (a server that drips its
    /// answer hits it).
    pub total_timeout: Duration,
    /// The largest answer read, in bytes.
    pub max_bytes: usize,
}

impl FetchLimits {
    /// Limits where `timeout` is the connect and read deadline and four
    /// times it the deadline of the whole request (`claw-player audit
    /// --fetch-timeout`).
    pub fn with_timeout(timeout: Duration) -> FetchLimits {
        FetchLimits {
            connect_timeout: timeout,
            read_timeout: timeout,
            total_timeout: timeout.saturating_mul(4),
            ..FetchLimits::default()
        }
    }
}

impl Default for FetchLimits {
    /// Connect 10 s, read 30 s, whole request 120 s, [`MAX_FETCH_BYTES`].
    fn default() -> FetchLimits {
        FetchLimits {
            connect_timeout: Duration::from_secs(10),
            read_timeout: Duration::from_secs(30),
            total_timeout: Duration::from_secs(120),
            max_bytes: MAX_FETCH_BYTES,
        }
    }
}

/// An HTTP client for the dealer's archive, within [`FetchLimits`].
#[derive(Debug, Clone)]
pub struct Fetcher {
    client: reqwest::Client,
    limits: FetchLimits,
}

impl Fetcher {
    /// A client with `limits`.
    pub fn new(limits: FetchLimits) -> Result<Fetcher, FetchError> {
        let client = reqwest::Client::builder()
            .connect_timeout(limits.connect_timeout)
            .read_timeout(limits.read_timeout)
            .timeout(limits.total_timeout)
            .build()
            .map_err(|e| FetchError::Client(e.to_string()))?;
        Ok(Fetcher { client, limits })
    }

    /// Its limits.
    pub fn limits(&self) -> FetchLimits {
        self.limits
    }

    /// `GET url`: the body, within the limits.
    async fn get(&self, url: &str) -> Result<Vec<u8>, FetchError> {
        let failed = |e: reqwest::Error| {
            if e.is_timeout() {
                FetchError::Timeout { url: url.to_owned() }
            } else {
                FetchError::Http { url: url.to_owned(), reason: e.to_string() }
            }
        };
        let mut resp = self.client.get(url).send().await.map_err(failed)?;
        if !resp.status().is_success() {
            return Err(FetchError::Http {
                url: url.to_owned(),
                reason: format!("status {}", resp.status()),
            });
        }
        let limit = self.limits.max_bytes;
        let too_large = || FetchError::TooLarge { url: url.to_owned(), limit };
        if resp.content_length().is_some_and(|n| n > limit as u64) {
            return Err(too_large());
        }
        let mut body = Vec::new();
        while let Some(chunk) = resp.chunk().await.map_err(failed)? {
            if body.len() + chunk.len() > limit {
                return Err(too_large());
            }
            body.extend_from_slice(&chunk);
        }
        Ok(body)
    }
}

/// Why a pending hand could not be completed from the dealer's archive.
#[derive(Debug, thiserror::Error)]
pub enum FetchError {
    /// The saved transcript has no header naming its room.
    #[error("the transcript has no header naming its room")]
    NoRoom,
    /// The room id cannot be a URL path segment (`.` or `..`, which a URL
    /// resolves away, or empty).
    #[error("room id {0:?} cannot be a URL path segment")]
    BadRoom(String),
    /// The HTTP client could not be built.
    #[error("cannot start the HTTP client: {0}")]
    Client(String),
    /// No connection, answer or body within the deadlines.
    #[error("GET {url}: timed out")]
    Timeout {
        /// The URL asked.
        url: String,
    },
    /// The answer is longer than the size cap ([`FetchLimits::max_bytes`]).
    #[error("GET {url}: the answer is larger than {limit} bytes")]
    TooLarge {
        /// The URL asked.
        url: String,
        /// The cap.
        limit: usize,
    },
    /// The request failed or the answer is not a hand record.
    #[error("GET {url}: {reason}")]
    Http {
        /// The URL asked.
        url: String,
        /// What went wrong.
        reason: String,
    },
    /// The dealer's copy is not the saved hand followed by more events: the
    /// dealer signed two different chains for one hand (a failed audit).
    #[error("the dealer's archived copy of hand {0} does not extend the saved transcript")]
    Diverged(HandId),
}

/// `s` as one URL path segment: every byte but `A-Z a-z 0-9 - . _ ~`
/// percent-encoded, so that `/`, `?`, `#` and `%` stay inside the segment.
fn path_segment(s: &str) -> Result<String, FetchError> {
    // A URL resolves `.` and `..` (also written `%2E`) away: never a segment.
    if s.is_empty() || s == "." || s == ".." {
        return Err(FetchError::BadRoom(s.to_owned()));
    }
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    Ok(out)
}

/// The archive URL of a hand: `{base}/rooms/{room}/hands/{hand_id}`, the
/// room id percent-encoded as one path segment.
pub fn hand_url(base: &str, room: &str, hand_id: HandId) -> Result<String, FetchError> {
    let room = path_segment(room)?;
    let hand = path_segment(&hand_id.to_string())?;
    Ok(format!("{}/rooms/{room}/hands/{hand}", base.trim_end_matches('/')))
}

/// Completes a saved hand from the dealer's archive
/// (`GET {base}/rooms/{room}/hands/{hand_id}`, see [`hand_url`]), within
/// the fetcher's deadlines and size cap: the fetched events must begin with
/// the saved ones; returns the saved transcript with the events that follow
/// (its `audit-reveal`, once published). The result is audited like any
/// transcript: nothing fetched is trusted.
pub async fn fetch_completion(
    fetcher: &Fetcher,
    base: &str,
    t: &Transcript,
) -> Result<Transcript, FetchError> {
    let room = t.header.as_ref().map(|h| h.room_id.clone()).ok_or(FetchError::NoRoom)?;
    let url = hand_url(base, &room, t.hand_id)?;
    let body = fetcher.get(&url).await?;
    let record: HandRecord = serde_json::from_slice(&body)
        .map_err(|e| FetchError::Http { url: url.clone(), reason: e.to_string() })?;
    if record.hand_id != t.hand_id || !record.events.starts_with(&t.events) {
        return Err(FetchError::Diverged(t.hand_id));
    }
    Ok(Transcript { events: record.events, ..t.clone() })
}

/// Splits JSON lines into hands (see [`Auditor::audit_jsonl`]); each with
/// the line number it starts on.
pub fn split_hands(text: &str) -> Result<Vec<(usize, Transcript)>, AuditFileError> {
    #[derive(serde::Deserialize)]
    struct Peek {
        #[serde(rename = "type")]
        ty: String,
    }
    let mut out: Vec<(usize, Transcript)> = Vec::new();
    let mut cur: Option<(usize, Option<TranscriptHeader>, Vec<EventEnvelope>)> = None;
    let structure =
        |line: usize, detail: String| AuditFileError::Parse { line, check: AuditCheck::Structure, detail };
    let finish = |cur: Option<(usize, Option<TranscriptHeader>, Vec<EventEnvelope>)>,
                  out: &mut Vec<(usize, Transcript)>|
     -> Result<(), AuditFileError> {
        if let Some((line, header, events)) = cur {
            let t = Transcript::from_events(header, events).map_err(|e| structure(line, e.to_string()))?;
            out.push((line, t));
        }
        Ok(())
    };
    for (i, raw) in text.lines().enumerate() {
        let n = i + 1;
        let line = raw.trim();
        if line.is_empty() {
            continue;
        }
        if line.len() > claw_protocol::messages::MAX_FRAME_BYTES {
            return Err(structure(n, format!("line of {} bytes exceeds the frame limit", line.len())));
        }
        let peek: Peek =
            serde_json::from_str(line).map_err(|e| structure(n, format!("not a transcript line: {e}")))?;
        match peek.ty.as_str() {
            "transcript-header" => {
                let h: TranscriptHeader =
                    serde_json::from_str(line).map_err(|e| structure(n, format!("header: {e}")))?;
                if h.version != claw_protocol::messages::PROTOCOL_VERSION {
                    return Err(structure(n, format!("unsupported transcript version {:?}", h.version)));
                }
                finish(cur.take(), &mut out)?;
                cur = Some((n, Some(h), Vec::new()));
            }
            "event" => {
                let e: EventEnvelope =
                    serde_json::from_str(line).map_err(|e| structure(n, format!("event: {e}")))?;
                let new_hand = match &cur {
                    Some((_, h, evs)) => {
                        let id = h.as_ref().map(|h| h.hand_id).or_else(|| evs.first().map(|e| e.hand_id));
                        id.is_some_and(|id| id != e.hand_id) && !(h.is_some() && evs.is_empty())
                    }
                    None => true,
                };
                if new_hand {
                    finish(cur.take(), &mut out)?;
                    cur = Some((n, None, Vec::new()));
                }
                if let Some((_, _, evs)) = cur.as_mut() {
                    evs.push(e);
                }
            }
            other => return Err(structure(n, format!("unexpected line type {other:?}"))),
        }
    }
    finish(cur.take(), &mut out)?;
    Ok(out)
}
