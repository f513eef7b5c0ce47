//! The driver's side of a connection: an outgoing frame queue drained by the
//! connection's writer task, with the send budget that bounds how far its
//! reader may fall behind.

use std::collections::HashMap;
use std::hash::Hash;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::sync::mpsc;
use tokio_tungstenite::tungstenite::Utf8Bytes;

pub use claw_engine::room::ConnId;

static NEXT_CONN: AtomicU64 = AtomicU64::new(1);

/// A fresh connection id.
pub fn next_conn_id() -> ConnId {
    NEXT_CONN.fetch_add(1, Ordering::Relaxed)
}

/// What the writer task of a connection is asked to do.
#[derive(Debug)]
pub enum Outbound {
    /// Send one text frame.
    Frame(Utf8Bytes),
    /// Send a WebSocket ping (the heartbeat).
    Ping,
    /// Send a close frame with this code and reason, then stop.
    Close {
        /// WebSocket close code.
        code: u16,
        /// Close reason.
        reason: String,
    },
}

/// Close reason (code 1008) of a connection whose reader stayed behind its
/// send budget past the grace (SPEC §12).
pub const TOO_SLOW: &str = "too slow";

/// How far a connection's reader may fall behind (SPEC §12): bytes queued
/// for it and not yet handed to its socket (a frame counts until the write
/// that carries it into the socket has returned), and for how long.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SendBudget {
    /// Queued bytes above which the connection is behind.
    pub bytes: usize,
    /// How long it may stay behind before it is closed; more than four
    /// times `bytes` queued closes it at once.
    pub grace: Duration,
}

impl SendBudget {
    /// Queued bytes that close the connection at once.
    pub fn hard_bytes(&self) -> usize {
        self.bytes.saturating_mul(4)
    }
}

/// Bytes queued for one connection and since when it has been behind.
#[derive(Debug)]
struct Backlog {
    bytes: AtomicUsize,
    /// Milliseconds since `start` plus one when the backlog went over the
    /// budget; 0 while it is within.
    behind_since: AtomicU64,
    start: Instant,
    budget: SendBudget,
    /// Set once the connection was found too slow.
    too_slow: AtomicBool,
}

impl Backlog {
    fn millis(&self, now: Instant) -> u64 {
        u64::try_from(now.saturating_duration_since(self.start).as_millis()).unwrap_or(u64::MAX - 1) + 1
    }

    /// The verdict on a backlog of `queued` bytes at `now`; `TooSlow` is
    /// given once, then the connection counts as gone.
    fn check(&self, queued: usize, now: Instant) -> Queued {
        if self.too_slow.load(Ordering::Relaxed) {
            return Queued::Gone;
        }
        let verdict = if queued > self.budget.hard_bytes() {
            Queued::TooSlow
        } else if queued <= self.budget.bytes {
            Queued::Sent
        } else {
            let at = self.millis(now);
            match self.behind_since.compare_exchange(0, at, Ordering::Relaxed, Ordering::Relaxed) {
                Ok(_) => Queued::FellBehind,
                Err(since) if Duration::from_millis(at.saturating_sub(since)) > self.budget.grace => {
                    Queued::TooSlow
                }
                Err(_) => Queued::Behind,
            }
        };
        if verdict == Queued::TooSlow && self.too_slow.swap(true, Ordering::Relaxed) {
            return Queued::Gone;
        }
        verdict
    }

    /// The writer handed `n` queued bytes to the socket.
    fn written(&self, n: usize) {
        let left = self.bytes.fetch_sub(n, Ordering::Relaxed).saturating_sub(n);
        if left <= self.budget.bytes {
            self.behind_since.store(0, Ordering::Relaxed);
        }
    }
}

/// What queuing a frame (or a ping) found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Queued {
    /// Queued; the connection is within its budget.
    Sent,
    /// Queued; the connection just went over its budget (the grace starts).
    FellBehind,
    /// Queued; the connection is over its budget, within the grace.
    Behind,
    /// Over the budget for longer than the grace, or over the hard limit:
    /// the caller closes the connection (1008 `too slow`).
    TooSlow,
    /// The connection is gone.
    Gone,
}

impl Queued {
    /// Whether the connection stays.
    pub fn kept(self) -> bool {
        matches!(self, Queued::Sent | Queued::FellBehind | Queued::Behind)
    }
}

/// The sending half of a connection, held by the room driver.
#[derive(Debug, Clone)]
pub struct ConnTx {
    /// The connection's id.
    pub id: ConnId,
    tx: mpsc::UnboundedSender<Outbound>,
    backlog: Arc<Backlog>,
}

/// The writer's half of a connection's queue. What it takes off still
/// counts against the budget until it reports the bytes [`written`](Self::written).
#[derive(Debug)]
pub struct ConnRx {
    rx: mpsc::UnboundedReceiver<Outbound>,
    backlog: Arc<Backlog>,
}

impl ConnRx {
    /// The next queued item; None once every sender is gone.
    pub async fn recv(&mut self) -> Option<Outbound> {
        self.rx.recv().await
    }

    /// The next queued item if one is there.
    pub fn try_recv(&mut self) -> Option<Outbound> {
        self.rx.try_recv().ok()
    }

    /// The socket took `n` bytes of frames taken off this queue (the write
    /// and flush carrying them returned).
    pub fn written(&self, n: usize) {
        self.backlog.written(n);
    }
}

impl ConnTx {
    /// The queue of connection `id`: the room's half and the writer's half.
    pub fn channel(id: ConnId, budget: SendBudget) -> (ConnTx, ConnRx) {
        let (tx, rx) = mpsc::unbounded_channel();
        let backlog = Arc::new(Backlog {
            bytes: AtomicUsize::new(0),
            behind_since: AtomicU64::new(0),
            start: Instant::now(),
            budget,
            too_slow: AtomicBool::new(false),
        });
        (ConnTx { id, tx, backlog: Arc::clone(&backlog) }, ConnRx { rx, backlog })
    }

    /// Queues a frame and says whether the reader keeps up (see [`Queued`]).
    /// Never waits: a slow reader delays nobody.
    pub fn send(&self, frame: Utf8Bytes) -> Queued {
        let n = frame.len();
        let queued = self.backlog.bytes.fetch_add(n, Ordering::Relaxed) + n;
        if self.tx.send(Outbound::Frame(frame)).is_err() {
            self.backlog.bytes.fetch_sub(n, Ordering::Relaxed);
            return Queued::Gone;
        }
        self.backlog.check(queued, Instant::now())
    }

    /// Queues a heartbeat ping; the verdict is that of the frames queued.
    pub fn ping(&self) -> Queued {
        if self.tx.send(Outbound::Ping).is_err() {
            return Queued::Gone;
        }
        self.backlog.check(self.backlog.bytes.load(Ordering::Relaxed), Instant::now())
    }

    /// Asks the writer to close the connection.
    pub fn close(&self, code: u16, reason: &str) {
        let _ = self.tx.send(Outbound::Close { code, reason: reason.to_owned() });
    }

    /// Whether the writer is gone.
    pub fn is_closed(&self) -> bool {
        self.tx.is_closed()
    }
}

/// Open slots per key (a source address, an identity), each at most a
/// ceiling; a slot is given back when its [`Slot`] drops.
#[derive(Debug)]
pub struct Counter<K: Hash + Eq + Clone> {
    counts: Mutex<HashMap<K, usize>>,
}

impl<K: Hash + Eq + Clone> Default for Counter<K> {
    fn default() -> Counter<K> {
        Counter { counts: Mutex::new(HashMap::new()) }
    }
}

impl<K: Hash + Eq + Clone> Counter<K> {
    /// A slot for `key` if fewer than `max` are held.
    pub fn try_take(self: &Arc<Self>, key: K, max: usize) -> Option<Slot<K>> {
        let mut m = self.counts.lock().unwrap_or_else(|p| p.into_inner());
        let n = m.entry(key.clone()).or_insert(0);
        if *n >= max {
            return None;
        }
        *n += 1;
        Some(Slot { counter: Arc::clone(self), key })
    }

    /// Slots held for `key`.
    pub fn held(&self, key: &K) -> usize {
        self.counts.lock().unwrap_or_else(|p| p.into_inner()).get(key).copied().unwrap_or(0)
    }
}

/// One held slot of a [`Counter`].
#[derive(Debug)]
pub struct Slot<K: Hash + Eq + Clone> {
    counter: Arc<Counter<K>>,
    key: K,
}

impl<K: Hash + Eq + Clone> Drop for Slot<K> {
    fn drop(&mut self) {
        let mut m = self.counter.counts.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(n) = m.get_mut(&self.key) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                m.remove(&self.key);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn backlog(bytes: usize, grace_ms: u64) -> Backlog {
        Backlog {
            bytes: AtomicUsize::new(0),
            behind_since: AtomicU64::new(0),
            start: Instant::now(),
            budget: SendBudget { bytes, grace: Duration::from_millis(grace_ms) },
            too_slow: AtomicBool::new(false),
        }
    }

    #[test]
    fn behind_past_the_grace_is_too_slow_once() {
        let b = backlog(100, 1000);
        let t0 = b.start;
        assert_eq!(b.check(100, t0), Queued::Sent);
        assert_eq!(b.check(101, t0), Queued::FellBehind);
        assert_eq!(b.check(150, t0 + Duration::from_millis(1000)), Queued::Behind);
        assert_eq!(b.check(150, t0 + Duration::from_millis(1001)), Queued::TooSlow);
        assert_eq!(b.check(10, t0 + Duration::from_millis(1002)), Queued::Gone, "the verdict is given once");
    }

    #[test]
    fn catching_up_restarts_the_grace_and_the_hard_limit_is_immediate() {
        let b = backlog(100, 1000);
        let t0 = b.start;
        b.bytes.store(150, Ordering::Relaxed);
        assert_eq!(b.check(150, t0), Queued::FellBehind);
        // The socket takes frames: back within the budget.
        b.written(60);
        assert_eq!(b.bytes.load(Ordering::Relaxed), 90);
        let later = t0 + Duration::from_millis(5000);
        assert_eq!(b.check(90, later), Queued::Sent);
        assert_eq!(b.check(120, later), Queued::FellBehind, "a new grace starts");
        assert_eq!(b.check(120, later + Duration::from_millis(999)), Queued::Behind);
        let hard = backlog(100, 60_000);
        assert_eq!(hard.check(400, hard.start), Queued::FellBehind);
        assert_eq!(hard.check(401, hard.start), Queued::TooSlow, "over 4 × the budget closes at once");
    }

    #[test]
    fn a_queue_counts_its_bytes_and_the_writer_takes_them() {
        let (tx, mut rx) = ConnTx::channel(1, SendBudget { bytes: 10, grace: Duration::from_secs(60) });
        assert_eq!(tx.send(Utf8Bytes::from_static("12345")), Queued::Sent);
        assert_eq!(tx.send(Utf8Bytes::from_static("123456")), Queued::FellBehind);
        assert_eq!(tx.ping(), Queued::Behind);
        let Some(Outbound::Frame(f)) = rx.try_recv() else { panic!("the first frame") };
        assert_eq!(tx.ping(), Queued::Behind, "taken off the queue, not yet written: still pending");
        rx.written(f.len());
        assert_eq!(tx.ping(), Queued::Sent, "6 bytes left");
        drop(rx);
        assert_eq!(tx.send(Utf8Bytes::from_static("x")), Queued::Gone);
    }
}
