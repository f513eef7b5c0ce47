//! The driver's side of a connection: an outgoing frame queue drained by the
//! connection's writer task.

use std::collections::HashMap;
use std::hash::Hash;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

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

/// The sending half of a connection, held by the room driver.
#[derive(Debug, Clone)]
pub struct ConnTx {
    /// The connection's id.
    pub id: ConnId,
    tx: mpsc::Sender<Outbound>,
}

impl ConnTx {
    /// Wraps the queue of connection `id`.
    pub fn new(id: ConnId, tx: mpsc::Sender<Outbound>) -> ConnTx {
        ConnTx { id, tx }
    }

    /// Queues a frame. False when the queue is full (a peer too slow to
    /// read) or the connection is gone; the room then drops the connection.
    pub fn send(&self, frame: Utf8Bytes) -> bool {
        self.tx.try_send(Outbound::Frame(frame)).is_ok()
    }

    /// Queues a heartbeat ping. False when the queue is full or gone.
    pub fn ping(&self) -> bool {
        self.tx.try_send(Outbound::Ping).is_ok()
    }

    /// Asks the writer to close the connection.
    pub fn close(&self, code: u16, reason: &str) {
        let _ = self.tx.try_send(Outbound::Close { code, reason: reason.to_owned() });
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
