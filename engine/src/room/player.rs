//! A player as the room knows it: identity, session, presence, seat.

use std::time::{Duration, Instant};

use claw_protocol::handshake::VerifiedPlayer;
use claw_protocol::{Chips, EncryptionKey, Nonce, PlayerId, Seat, SharedKey};
use subtle::ConstantTimeEq;

use super::ConnId;

/// Constant-time comparison of two reconnect tokens.
pub(crate) fn ct_eq(a: &Nonce, b: &Nonce) -> bool {
    bool::from(a.0.ct_eq(&b.0))
}

/// Whether the player is reachable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Presence {
    /// Connected on this connection.
    Online(ConnId),
    /// Connection lost at `since`; the seat is held for the reconnect window.
    Away {
        /// When the connection was lost.
        since: Instant,
    },
    /// Left the room; kept only while still in the running hand.
    Left,
}

/// One player in a room. The status the protocol names (SPEC.md §9.4,
/// `my-status`) is derived from the
/// presence, the seat and the hand (see `RoomCore::status_of` in `queries.rs`).
pub(crate) struct Player {
    pub id: PlayerId,
    pub encryption_key: EncryptionKey,
    /// The session's box key (one X25519 per session).
    pub key: SharedKey,
    pub name: Option<String>,
    /// The session's secret reconnect token.
    pub token: Nonce,
    pub presence: Presence,
    /// The table seat, once seated.
    pub seat: Option<Seat>,
    /// Sitting out since then (skips hands, keeps the seat for a bounded time).
    pub sit_out: Option<Instant>,
    /// Hands dealt without it while it sits out.
    pub sat_out_hands: u16,
    /// Its turns taken by the timer in a row (reset when it acts).
    pub timeouts_in_a_row: u8,
    /// Its last join request, query or other accepted message (an unseated
    /// connection idle for the node's `idle_timeout` is kicked).
    pub last_active: Instant,
    /// Lowered by leaving mid-hand.
    pub credit_score: i32,
    /// Last known chip balance.
    pub balance: Chips,
    /// Rate limit shared by queries and unsolicited messages.
    pub bucket: TokenBucket,
    pub limited_in_a_row: u32,
    /// What the session waits for besides the table.
    pub session: Session,
    /// A house AI the room started (`ai.rs`), not a person.
    pub house_ai: bool,
}

/// What a player's session waits for besides the table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Session {
    /// Nothing.
    Live,
    /// Resumed on a new connection: live frames wait until the connection is
    /// ready and has been sent the hand so far (in order).
    Resuming,
    /// Its join request waits for the chip service (balance, welcome grant).
    Joining,
}

impl Player {
    pub fn new(v: &VerifiedPlayer, conn: ConnId, token: Nonce, bucket: TokenBucket, now: Instant) -> Player {
        Player {
            id: v.player.signing,
            encryption_key: v.player.encryption,
            key: v.shared_key.clone(),
            name: None,
            token,
            presence: Presence::Online(conn),
            seat: None,
            sit_out: None,
            sat_out_hands: 0,
            timeouts_in_a_row: 0,
            last_active: now,
            credit_score: 100,
            balance: Chips::ZERO,
            bucket,
            limited_in_a_row: 0,
            session: Session::Live,
            house_ai: false,
        }
    }

    /// The current connection, if online.
    pub fn conn(&self) -> Option<ConnId> {
        match self.presence {
            Presence::Online(c) => Some(c),
            _ => None,
        }
    }

    pub fn left(&self) -> bool {
        self.presence == Presence::Left
    }

    /// Online without a seat: a watcher or a player about to join.
    pub fn watching(&self) -> bool {
        self.seat.is_none() && self.conn().is_some()
    }

    /// Since when a watcher with no join request out has been idle.
    pub fn idle_watcher(&self) -> Option<Instant> {
        (self.watching() && self.session != Session::Joining).then_some(self.last_active)
    }

    /// Whether live frames may go to the player (online, not resuming).
    pub fn live_conn(&self) -> Option<ConnId> {
        self.conn().filter(|_| self.session != Session::Resuming)
    }

    /// A session resumed: ends at [`Player::take_resume`].
    pub fn resume(&mut self) {
        self.session = Session::Resuming;
    }

    /// Whether the session was resuming (it is live from now on).
    pub fn take_resume(&mut self) -> bool {
        let was = self.session == Session::Resuming;
        if was {
            self.session = Session::Live;
        }
        was
    }

    /// A join request goes to the chip service, unless one is already out
    /// (false).
    pub fn start_join(&mut self) -> bool {
        let first = self.session != Session::Joining;
        self.session = Session::Joining;
        first
    }

    /// The join request's answer came.
    pub fn end_join(&mut self) {
        if self.session == Session::Joining {
            self.session = Session::Live;
        }
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
        self.at = self.at.max(now);
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
