//! A player as the room knows it: identity, session, seat, status flags.

use claw_protocol::handshake::VerifiedPlayer;
use claw_protocol::{Chips, EncryptionKey, Nonce, PlayerId, Seat, SharedKey};
use subtle::ConstantTimeEq;
use tokio::time::Instant;

use super::conn::{ConnTx, TokenBucket};
use crate::config::Limits;

/// Constant-time comparison of two reconnect tokens.
pub(crate) fn ct_eq(a: &Nonce, b: &Nonce) -> bool {
    bool::from(a.0.ct_eq(&b.0))
}

/// One player in a room. The status seed 002 names is derived from these
/// fields (see `Room::status_of`).
pub(crate) struct Player {
    pub id: PlayerId,
    pub encryption_key: EncryptionKey,
    /// The session's box key (one X25519 per session).
    pub key: SharedKey,
    pub name: Option<String>,
    /// The session's secret reconnect token.
    pub token: Nonce,
    /// The current connection; none while disconnected.
    pub conn: Option<ConnTx>,
    /// When the connection was lost (reconnect window running).
    pub disconnected_at: Option<Instant>,
    /// The table seat, once seated.
    pub seat: Option<Seat>,
    pub sit_out: bool,
    /// Left the room; kept only while still in the running hand.
    pub left: bool,
    /// Lowered by leaving mid-hand.
    pub credit_score: i32,
    /// Last known chip balance.
    pub balance: Chips,
    /// Rate limit shared by queries and unsolicited messages.
    pub bucket: TokenBucket,
    pub limited_in_a_row: u32,
    /// A resumed session waits for its cards and transcript.
    pub resend_pending: bool,
}

impl Player {
    pub fn new(v: &VerifiedPlayer, conn: ConnTx, token: Nonce, limits: &Limits, now: Instant) -> Player {
        Player {
            id: v.player.signing,
            encryption_key: v.player.encryption,
            key: v.shared_key.clone(),
            name: None,
            token,
            conn: Some(conn),
            disconnected_at: None,
            seat: None,
            sit_out: false,
            left: false,
            credit_score: 100,
            balance: Chips::ZERO,
            bucket: TokenBucket::new(limits.rate_per_sec, limits.rate_burst, now),
            limited_in_a_row: 0,
            resend_pending: false,
        }
    }
}
