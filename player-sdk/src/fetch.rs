//! `claw-player audit --fetch`: completes a saved hand whose deferred reveal
//! was not out yet from the dealer's archive, within deadlines and a size cap.

use std::time::Duration;

use claw_protocol::messages::HandRecord;
use claw_protocol::transcript::Transcript;
use claw_protocol::HandId;

/// The largest hand record [`fetch_completion`] reads: 1,024 events of the
/// protocol's largest frame ([`claw_protocol::messages::MAX_FRAME_BYTES`],
/// 64 MiB). An answer that says it is longer is refused before its body is
/// read; one that grows past it is dropped there.
pub const MAX_FETCH_BYTES: usize = 1024 * claw_protocol::messages::MAX_FRAME_BYTES;

/// Times a fetch answered `429` (rate-limited) is asked again.
pub const RATE_RETRIES: usize = 5;
/// The longest wait a `Retry-After` gets.
pub const RETRY_WAIT_CAP: Duration = Duration::from_secs(5);

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
        let tls = crate::transport::ClientTls::system().map_err(|e| FetchError::Client(e.to_string()))?;
        let client = reqwest::Client::builder()
            .tls_backend_preconfigured(tls.rustls_config())
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
        // A dealer rates archive reads per address (`429`, `Retry-After`):
        // wait as it asks (at most RETRY_WAIT_CAP each time) and ask again.
        for _ in 0..RATE_RETRIES {
            if resp.status() != reqwest::StatusCode::TOO_MANY_REQUESTS {
                break;
            }
            let wait = resp
                .headers()
                .get(reqwest::header::RETRY_AFTER)
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.trim().parse::<u64>().ok())
                .map_or(Duration::from_secs(1), Duration::from_secs)
                .min(RETRY_WAIT_CAP);
            tokio::time::sleep(wait).await;
            resp = self.client.get(url).send().await.map_err(failed)?;
        }
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

/// Fetches a finished hand of `room` whole from the dealer's archive
/// (`GET {base}/rooms/{room}/hands/{hand_id}`, see [`hand_url`]): the hand a
/// saved hand names as its previous one (SPEC.md §11.4) when the player
/// holds no copy, so that the chain check can compare the two. The
/// transcript's header names `dealer` (the key the naming hand verified
/// under) and `room`; it is audited like any transcript: nothing fetched is
/// trusted.
pub async fn fetch_hand(
    fetcher: &Fetcher,
    base: &str,
    room: &str,
    hand_id: HandId,
    dealer: claw_protocol::PlayerId,
) -> Result<Transcript, FetchError> {
    let url = hand_url(base, room, hand_id)?;
    let body = fetcher.get(&url).await?;
    let record: HandRecord = serde_json::from_slice(&body)
        .map_err(|e| FetchError::Http { url: url.clone(), reason: e.to_string() })?;
    if record.hand_id != hand_id || record.room_id != room || record.next_seq.is_some() {
        return Err(FetchError::Http {
            url,
            reason: format!("the answer is not hand {hand_id} of room {room:?} whole"),
        });
    }
    Ok(record.transcript(dealer))
}
