//! Watchers: connections in the room without a seat (spectators and players
//! about to join). They are a budget of their own: a newcomer beyond it
//! makes the longest-idle watcher leave, and a watcher with no join request
//! or query for the node's `idle_timeout` is kicked, so idle connections
//! cannot lock a room.

use std::time::Instant;

use claw_protocol::handshake::RejectReason;
use claw_protocol::messages::KickReason;
use claw_protocol::PlayerId;

use super::seats::Roster;
use super::{Now, Refusal, RoomCore};
use crate::metrics::inc;

impl Roster {
    /// Each watcher with no join request out, and since when it is idle.
    fn idle_watchers(&self) -> impl Iterator<Item = (Instant, PlayerId)> + '_ {
        self.players().filter_map(|p| p.idle_watcher().map(|since| (since, p.id)))
    }
}

impl RoomCore {
    /// When the first idle watcher is due to be kicked.
    pub(super) fn watcher_deadline(&self) -> Option<Instant> {
        self.roster.idle_watchers().map(|(since, _)| since + self.limits.idle_timeout).min()
    }

    /// Kicks the watchers idle for `idle_timeout` at `now`.
    pub(super) fn kick_idle_watchers(&mut self, now: Now) {
        let idle = self.limits.idle_timeout;
        let due: Vec<PlayerId> = self
            .roster
            .idle_watchers()
            .filter(|(since, _)| *since + idle <= now.at)
            .map(|(_, id)| id)
            .collect();
        for id in due {
            inc(&self.metrics.kicked_idle);
            let why = format!("idle: no join request or query for {} s", idle.as_secs());
            self.kick_conn(now, &id, KickReason::Idle, claw_protocol::close::KICKED, &why);
        }
    }

    /// Makes a place for a newcomer: beyond the watchers' budget the
    /// longest-idle watcher leaves; refused when the room holds as many
    /// connections as it may.
    pub(super) fn admit_watcher(&mut self, now: Now) -> Result<(), Refusal> {
        let (count, oldest) =
            self.roster.idle_watchers().fold((0usize, None::<(Instant, PlayerId)>), |(n, o), w| {
                (n + 1, Some(o.map_or(w, |o| o.min(w))))
            });
        if count >= self.limits.max_watchers {
            let Some((_, oldest)) = oldest else {
                return Err(Refusal::new(RejectReason::Busy, "the room is full"));
            };
            inc(&self.metrics.kicked_idle);
            self.kick_conn(
                now,
                &oldest,
                KickReason::Idle,
                claw_protocol::close::KICKED,
                "idle: the room needs the place for a newcomer",
            );
        }
        if self.roster.len() >= self.limits.max_watchers + self.roster.seat_count() * 2 {
            return Err(Refusal::new(RejectReason::Busy, "the room is full"));
        }
        Ok(())
    }
}
