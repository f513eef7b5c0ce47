//! Archive reads on the HTTP port (hand lists, transcripts, hand histories,
//! hand records): anyone may ask, so none may cost the rooms anything.
//!
//! - A room's hands are **indexed** once and kept: the folder is read again
//!   only when it changed, at most once a second ([`REFRESH`]), and a list
//!   is a page of the index (`before`, `limit`).
//! - An archived hand never changes but for its published reveal, which
//!   makes it longer: a hand history is audited once per file length and
//!   cached ([`CACHE_ENTRIES`], [`CACHE_BYTES`]).
//! - Every read runs on a **bounded** blocking pool ([`WORKERS`] at once),
//!   never on an async worker, behind a **per-address rate**
//!   (`http_archive_reads_per_sec`, `http_archive_burst`; `429` beyond it).

use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant, SystemTime};

use axum::extract::{ConnectInfo, Request, State};
use axum::http::{header, HeaderValue, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use claw_engine::metrics::{inc, Metrics};
use tokio::sync::Semaphore;

use super::guard::HttpConn;
use crate::Limits;

/// A room's folder is read again at most this often (a spectator is
/// `spectator_delay`, 30 s by default, behind the table anyway).
pub const REFRESH: Duration = Duration::from_secs(1);
/// Archive reads running at once, node-wide; more wait their turn.
pub const WORKERS: usize = 2;
/// Hand histories kept, at most.
pub const CACHE_ENTRIES: usize = 1024;
/// Bytes of hand histories kept, at most.
pub const CACHE_BYTES: usize = 32 << 20;
/// Hands in one page of a list, at most (and by default).
pub const MAX_PAGE: usize = 200;
/// Source addresses with a rate bucket of their own; beyond it newcomers
/// share one bucket (so that many addresses cannot grow the table).
const TRACKED_ADDRS: usize = 4096;

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// An archive file name: `<8+ digits>-<32 hex>.jsonl`; its hand number.
pub fn file_hand_number(name: &str) -> Option<u64> {
    let (num, rest) = name.split_once('-')?;
    let id = rest.strip_suffix(".jsonl")?;
    let ok = num.len() >= 8
        && num.bytes().all(|c| c.is_ascii_digit())
        && id.len() == 32
        && id.bytes().all(|c| matches!(c, b'0'..=b'9' | b'a'..=b'f'));
    if ok {
        num.parse().ok()
    } else {
        None
    }
}

/// One archived hand in the index.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Listed {
    /// Hands dealt in the room before it.
    pub hand_number: u64,
    /// Its file name (`<hand_number>-<hand_id>.jsonl`).
    pub file: String,
    /// When its file was first seen written.
    pub archived: SystemTime,
}

/// One page of a room's hands, newest first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Page {
    /// Public hands (archived at least the spectator delay ago).
    pub hands: Vec<Listed>,
    /// Hands in the page's range not public yet.
    pub not_yet_public: usize,
    /// The `before` of the next page, if there are older hands.
    pub next_before: Option<u64>,
}

#[derive(Default)]
struct RoomIndex {
    /// By (hand number, file name).
    hands: BTreeMap<(u64, String), SystemTime>,
    /// The folder's modification time at the last read.
    dir_mtime: Option<SystemTime>,
    checked: Option<Instant>,
}

impl RoomIndex {
    /// Reads the folder again if it may have changed.
    fn refresh(&mut self, dir: &Path, metrics: &Metrics) {
        let now = Instant::now();
        if self.checked.is_some_and(|t| now.duration_since(t) < REFRESH) {
            return;
        }
        self.checked = Some(now);
        // Taken before the read: a file added during it changes it again.
        let mtime = std::fs::metadata(dir).and_then(|m| m.modified()).ok();
        if mtime.is_some() && mtime == self.dir_mtime {
            return;
        }
        let Ok(entries) = std::fs::read_dir(dir) else { return };
        inc(&metrics.archive_scans);
        let mut present = HashSet::new();
        for e in entries.flatten() {
            let Ok(name) = e.file_name().into_string() else { continue };
            let Some(n) = file_hand_number(&name) else { continue };
            let key = (n, name);
            if !self.hands.contains_key(&key) {
                let Some(at) = e.metadata().and_then(|m| m.modified()).ok() else { continue };
                self.hands.insert(key.clone(), at);
            }
            present.insert(key);
        }
        self.hands.retain(|k, _| present.contains(k));
        self.dir_mtime = mtime;
    }

    fn page(&self, before: Option<u64>, limit: usize, delay: Duration, now: SystemTime) -> Page {
        let mut page = Page { hands: Vec::new(), not_yet_public: 0, next_before: None };
        let upper = before.unwrap_or(u64::MAX);
        for ((n, file), at) in self.hands.range(..(upper, String::new())).rev() {
            if page.hands.len() == limit {
                page.next_before = page.hands.last().map(|h| h.hand_number);
                break;
            }
            if now.duration_since(*at).unwrap_or_default() >= delay {
                page.hands.push(Listed { hand_number: *n, file: file.clone(), archived: *at });
            } else {
                page.not_yet_public += 1;
            }
        }
        page
    }
}

/// What a hand-history request answered: the text, or the error's code and reason.
pub type Rendered = Result<Arc<str>, (StatusCode, String)>;

#[derive(Default)]
struct Cache {
    map: HashMap<(String, String, u64, &'static str), Rendered>,
    order: VecDeque<(String, String, u64, &'static str)>,
    bytes: usize,
}

impl Cache {
    fn size(r: &Rendered) -> usize {
        match r {
            Ok(t) => t.len(),
            Err((_, e)) => e.len(),
        }
    }

    fn insert(&mut self, key: (String, String, u64, &'static str), value: Rendered) {
        let size = Cache::size(&value);
        if size > CACHE_BYTES {
            return;
        }
        while self.map.len() >= CACHE_ENTRIES || self.bytes + size > CACHE_BYTES {
            let Some(old) = self.order.pop_front() else { break };
            if let Some(v) = self.map.remove(&old) {
                self.bytes -= Cache::size(&v);
            }
        }
        if let Some(v) = self.map.insert(key.clone(), value) {
            self.bytes -= Cache::size(&v);
        } else {
            self.order.push_back(key);
        }
        self.bytes += size;
    }
}

/// Token buckets per source address (`None`: the newcomers' shared one).
struct Rate {
    per_sec: f64,
    burst: f64,
    book: Mutex<Book>,
}

#[derive(Default)]
struct Book {
    buckets: HashMap<Option<IpAddr>, (f64, Instant)>,
    swept: Option<Instant>,
}

impl Rate {
    /// Whether `ip` may read now (takes one token). Past [`TRACKED_ADDRS`]
    /// addresses, full buckets are forgotten (at most once a second), and
    /// newcomers share one bucket until there is room.
    fn admit(&self, ip: IpAddr, now: Instant) -> bool {
        let mut book = lock(&self.book);
        let refill = |(tokens, at): (f64, Instant)| {
            (self.burst).min(tokens + now.saturating_duration_since(at).as_secs_f64() * self.per_sec)
        };
        let known = book.buckets.contains_key(&Some(ip));
        if !known
            && book.buckets.len() >= TRACKED_ADDRS
            && book.swept.is_none_or(|t| now.saturating_duration_since(t) >= Duration::from_secs(1))
        {
            book.buckets.retain(|_, b| refill(*b) < self.burst);
            book.swept = Some(now);
        }
        let key = if known || book.buckets.len() < TRACKED_ADDRS { Some(ip) } else { None };
        let b = book.buckets.entry(key).or_insert((self.burst, now));
        let tokens = refill(*b);
        let ok = tokens >= 1.0;
        *b = (if ok { tokens - 1.0 } else { tokens }, now);
        ok
    }
}

/// The node's archive reads: the index, the cache, the pool and the rate.
pub struct ArchiveReads {
    data_dir: PathBuf,
    delay: Duration,
    metrics: Arc<Metrics>,
    workers: Arc<Semaphore>,
    rooms: Mutex<HashMap<String, Arc<Mutex<RoomIndex>>>>,
    cache: Mutex<Cache>,
    rate: Rate,
}

/// Why a read could not run.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    /// The blocking task failed (it panicked or the runtime is stopping).
    #[error("archive read failed: {0}")]
    Task(#[from] tokio::task::JoinError),
    /// The pool is closed (the node is stopping).
    #[error("the node is stopping")]
    Closed,
}

impl ArchiveReads {
    /// Reads of the archives under `data_dir`, hands served `delay` after
    /// they were archived, within `limits`' archive rate.
    pub fn new(data_dir: &Path, delay: Duration, limits: &Limits, metrics: Arc<Metrics>) -> ArchiveReads {
        ArchiveReads {
            data_dir: data_dir.to_owned(),
            delay,
            metrics,
            workers: Arc::new(Semaphore::new(WORKERS)),
            rooms: Mutex::default(),
            cache: Mutex::default(),
            rate: Rate {
                per_sec: f64::from(limits.http_archive_reads_per_sec),
                burst: f64::from(limits.http_archive_burst),
                book: Mutex::default(),
            },
        }
    }

    /// The spectator delay.
    pub fn delay(&self) -> Duration {
        self.delay
    }

    /// The data directory.
    pub fn data_dir(&self) -> &Path {
        &self.data_dir
    }

    /// The transcript folder of `room` (not checked against the rooms).
    pub fn transcripts(&self, room: &str) -> PathBuf {
        self.data_dir.join("rooms").join(room).join("transcripts")
    }

    /// Runs `f` on the blocking pool, at most [`WORKERS`] at once.
    pub async fn run<T: Send + 'static>(
        &self,
        f: impl FnOnce() -> T + Send + 'static,
    ) -> Result<T, ReadError> {
        let _permit = Arc::clone(&self.workers).acquire_owned().await.map_err(|_| ReadError::Closed)?;
        Ok(tokio::task::spawn_blocking(f).await?)
    }

    /// A page of `room`'s hands, newest first, from its index (read again
    /// first if the folder changed). Blocking: call it inside [`ArchiveReads::run`].
    pub fn page(&self, room: &str, before: Option<u64>, limit: usize) -> Page {
        let index = Arc::clone(lock(&self.rooms).entry(room.to_owned()).or_default());
        let mut index = lock(&index);
        index.refresh(&self.transcripts(room), &self.metrics);
        index.page(before, limit.clamp(1, MAX_PAGE), self.delay, SystemTime::now())
    }

    /// The cached rendering of `(room, file, len, format)`, or `render`'s
    /// (counted as an audit), kept. Blocking.
    pub fn rendered(
        &self,
        key: (String, String, u64, &'static str),
        render: impl FnOnce() -> Rendered,
    ) -> Rendered {
        if let Some(r) = lock(&self.cache).map.get(&key) {
            return r.clone();
        }
        inc(&self.metrics.archive_audits);
        let r = render();
        lock(&self.cache).insert(key, r.clone());
        r
    }
}

/// Middleware for the archive routes: `429` (with `Retry-After: 1`) to a
/// source address past its rate. A request without a connection (a router
/// used in-process) is not limited.
pub async fn limit(State(reads): State<Arc<ArchiveReads>>, req: Request, next: Next) -> Response {
    if let Some(ConnectInfo(conn)) = req.extensions().get::<ConnectInfo<HttpConn>>() {
        if !reads.rate.admit(conn.ip(), Instant::now()) {
            inc(&reads.metrics.archive_rate_limited);
            let mut r =
                (StatusCode::TOO_MANY_REQUESTS, "too many archive reads from this address; retry later")
                    .into_response();
            r.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
            return r;
        }
    }
    next.run(req).await
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rate(per_sec: u32, burst: u32) -> Rate {
        Rate { per_sec: f64::from(per_sec), burst: f64::from(burst), book: Mutex::default() }
    }

    #[test]
    fn an_address_gets_its_burst_then_its_rate_and_others_theirs() {
        let r = rate(10, 3);
        let t = Instant::now();
        let a: IpAddr = [10, 0, 0, 1].into();
        let b: IpAddr = [10, 0, 0, 2].into();
        assert!((0..3).all(|_| r.admit(a, t)));
        assert!(!r.admit(a, t), "past the burst");
        assert!(r.admit(b, t), "another address is not charged");
        assert!(r.admit(a, t + Duration::from_millis(100)), "one token a tenth of a second later");
        assert!(!r.admit(a, t + Duration::from_millis(100)));
    }

    #[test]
    fn many_addresses_never_grow_the_table_past_its_bound() {
        let r = rate(1, 1);
        let t = Instant::now();
        for i in 0..(TRACKED_ADDRS as u32 + 500) {
            r.admit(IpAddr::from(i.to_be_bytes()), t);
        }
        assert!(lock(&r.book).buckets.len() <= TRACKED_ADDRS + 1);
        // Newcomers past the bound share one bucket: its one token is spent.
        assert!(!r.admit(IpAddr::from([250, 0, 0, 1]), t));
        // Once the tracked buckets are full again they are forgotten.
        assert!(r.admit(IpAddr::from([250, 0, 0, 2]), t + Duration::from_secs(2)));
    }

    #[test]
    fn file_names_and_their_numbers() {
        assert_eq!(file_hand_number("00000003-0123456789abcdef0123456789abcdef.jsonl"), Some(3));
        assert_eq!(file_hand_number("123456789-0123456789abcdef0123456789abcdef.jsonl"), Some(123_456_789));
        for bad in [
            "00000003-0123456789abcdef0123456789abcdef.jsonl.staged",
            "0000003-0123456789abcdef0123456789abcdef.jsonl",
            "00000003-0123456789ABCDEF0123456789abcdef.jsonl",
            "../00000003-0123456789abcdef0123456789abcdef.jsonl",
        ] {
            assert_eq!(file_hand_number(bad), None, "{bad}");
        }
    }

    #[test]
    fn the_cache_keeps_its_bounds() {
        let mut c = Cache::default();
        for i in 0..(CACHE_ENTRIES + 10) {
            c.insert((String::new(), i.to_string(), 0, "text"), Ok(Arc::from("x")));
        }
        assert_eq!(c.map.len(), CACHE_ENTRIES);
        assert!(!c.map.contains_key(&(String::new(), "0".into(), 0, "text")), "the oldest went first");
        c.insert((String::new(), "big".into(), 0, "text"), Ok(Arc::from("y".repeat(CACHE_BYTES - 100))));
        assert!(c.bytes <= CACHE_BYTES);
    }

    #[test]
    fn pages_walk_every_public_hand_once_newest_first() {
        let mut ix = RoomIndex::default();
        let now = SystemTime::now();
        for n in 0..450u64 {
            let at = if n >= 445 { now } else { now - Duration::from_secs(60) };
            ix.hands.insert((n, format!("{n:08}-{}.jsonl", "0".repeat(32))), at);
        }
        let (mut seen, mut before, mut hidden) = (Vec::new(), None, 0);
        loop {
            let p = ix.page(before, MAX_PAGE, Duration::from_secs(30), now);
            hidden += p.not_yet_public;
            seen.extend(p.hands.iter().map(|h| h.hand_number));
            match p.next_before {
                Some(b) => before = Some(b),
                None => break,
            }
        }
        assert_eq!(hidden, 5);
        assert_eq!(seen, (0..445).rev().collect::<Vec<_>>());
    }
}
