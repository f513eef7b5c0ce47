//! The driver's side of a connection: an outgoing frame queue drained by the
//! connection's writer task.

use std::sync::atomic::{AtomicU64, Ordering};

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

    /// Asks the writer to close the connection.
    pub fn close(&self, code: u16, reason: &str) {
        let _ = self.tx.try_send(Outbound::Close { code, reason: reason.to_owned() });
    }

    /// Whether the writer is gone.
    pub fn is_closed(&self) -> bool {
        self.tx.is_closed()
    }
}
