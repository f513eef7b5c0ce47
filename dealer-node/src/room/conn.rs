//! The room's side of a connection: an outgoing frame queue drained by the
//! connection's writer task, and a token bucket for rate limits.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use tokio::sync::mpsc;
use tokio::time::Instant;
use tokio_tungstenite::tungstenite::Utf8Bytes;

/// A connection's id, unique in the node.
pub type ConnId = u64;

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
    /// Send a close frame with this code and reason, then stop.
    Close {
        /// WebSocket close code.
        code: u16,
        /// Close reason.
        reason: String,
    },
}

/// The sending half of a connection, held by the room.
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

    /// Asks the writer to close the connection.
    pub fn close(&self, code: u16, reason: &str) {
        let _ = self.tx.try_send(Outbound::Close { code, reason: reason.to_owned() });
    }

    /// Whether the writer is gone.
    pub fn is_closed(&self) -> bool {
        self.tx.is_closed()
    }
}

/// A token bucket: `rate` tokens per second up to `burst`.
#[derive(Debug, Clone)]
pub struct TokenBucket {
    rate: f64,
    burst: f64,
    tokens: f64,
    at: Instant,
}

impl TokenBucket {
    /// A full bucket.
    pub fn new(rate_per_sec: u32, burst: u32, now: Instant) -> TokenBucket {
        let burst = f64::from(burst.max(1));
        TokenBucket { rate: f64::from(rate_per_sec), burst, tokens: burst, at: now }
    }

    fn refill(&mut self, now: Instant) {
        let dt = now.saturating_duration_since(self.at).as_secs_f64();
        self.tokens = (self.tokens + dt * self.rate).min(self.burst);
        self.at = now;
    }

    /// Takes one token if there is one.
    pub fn try_take(&mut self, now: Instant) -> bool {
        self.refill(now);
        if self.tokens >= 1.0 {
            self.tokens -= 1.0;
            true
        } else {
            false
        }
    }

    /// Whether a token is available (without taking it).
    pub fn has_token(&mut self, now: Instant) -> bool {
        self.refill(now);
        self.tokens >= 1.0
    }

    /// Time until a token is available.
    pub fn wait_time(&mut self, now: Instant) -> Duration {
        self.refill(now);
        if self.tokens >= 1.0 || self.rate <= 0.0 {
            Duration::ZERO
        } else {
            Duration::from_secs_f64((1.0 - self.tokens) / self.rate)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bucket_refills_at_its_rate() {
        let t0 = Instant::now();
        let mut b = TokenBucket::new(10, 3, t0);
        assert!(b.try_take(t0) && b.try_take(t0) && b.try_take(t0));
        assert!(!b.try_take(t0));
        assert_eq!(b.wait_time(t0), Duration::from_millis(100));
        assert!(b.try_take(t0 + Duration::from_millis(100)));
        assert!(!b.try_take(t0 + Duration::from_millis(150)));
        // Never more than the burst.
        let later = t0 + Duration::from_secs(60);
        assert!(b.try_take(later) && b.try_take(later) && b.try_take(later));
        assert!(!b.try_take(later));
    }
}
