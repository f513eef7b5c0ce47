//! Watchers: connections in the room without a seat (spectators and players
//! about to join). They are a budget of their own: a newcomer beyond it
//! makes the longest-idle watcher leave, and a watcher with no join request
//! or query for the node's `idle_timeout` is kicked, so idle connections
//! cannot lock a room.
//!
//! A watcher may follow the running hand live (`watch`, SPEC.md §9.8): it
//! gets the hand's events as the players do, `watch_delay` player actions
//! behind, and the rest of the hand once it is over. It never sees more
//! than the table's public view (private cards stay sealed to their
//! owners, the deck's salts and the seed come at the hand's end), and the
//! delay keeps a follower from relaying the table's moves as they happen.
//! At most `max_spectators` follow at once; a follower is never idle.

use std::sync::Arc;
use std::time::Instant;

use claw_protocol::handshake::RejectReason;
use claw_protocol::messages::{peek_type, ErrorCode, KickReason, ServerMessage, Watching};
use claw_protocol::transcript::EventEnvelope;
use claw_protocol::{HandId, PlayerId};

use super::seats::Roster;
use super::{Now, Refusal, RoomCore};
use crate::metrics::inc;

impl Roster {
    /// Each watcher with no join request out, and since when it is idle.
    fn idle_watchers(&self) -> impl Iterator<Item = (Instant, PlayerId)> + '_ {
        self.players().filter_map(|p| p.idle_watcher().map(|since| (since, p.id)))
    }
}

/// The live feed of the running hand.
#[derive(Debug, Default)]
pub(super) struct Feed {
    /// Watchers following, in the order they asked.
    followers: Vec<PlayerId>,
    /// The hand the frames belong to.
    hand: Option<HandId>,
    /// The hand's event frames so far, each with the number of player
    /// actions taken when it was made.
    frames: Vec<(u32, Arc<str>)>,
    /// How many of them the followers have been sent.
    released: usize,
    /// Player actions (timeout actions included) in the hand so far.
    actions: u32,
}

impl Feed {
    fn follows(&self, id: &PlayerId) -> bool {
        self.followers.contains(id)
    }
}

impl RoomCore {
    /// Idle watchers, followers of the live feed excepted.
    fn idle_unfollowing(&self) -> impl Iterator<Item = (Instant, PlayerId)> + '_ {
        self.roster.idle_watchers().filter(|(_, id)| !self.feed.follows(id))
    }

    /// When the first idle watcher is due to be kicked.
    pub(super) fn watcher_deadline(&self) -> Option<Instant> {
        self.idle_unfollowing().map(|(since, _)| since + self.limits.idle_timeout).min()
    }

    /// `watch` from `id`: start or stop following the running hand.
    pub(super) fn watch(&mut self, id: &PlayerId, on: bool) {
        let delay = self.cfg.watch_delay;
        if !on {
            self.feed.followers.retain(|f| f != id);
            return self.send(id, &ServerMessage::Watching(Watching { on, delay }));
        }
        if self.roster.get(id).is_some_and(|p| p.seat.is_some()) {
            return self.error_to(id, ErrorCode::NotAllowed, "a seated player follows the table as a player");
        }
        let max = usize::from(self.cfg.max_spectators);
        if max == 0 {
            return self.error_to(id, ErrorCode::NotAllowed, "this room has no live feed");
        }
        if !self.feed.follows(id) {
            self.prune_followers();
            if self.feed.followers.len() >= max {
                let why = format!("the room has its {max} spectators");
                return self.error_to(id, ErrorCode::NotAllowed, why);
            }
            self.feed.followers.push(*id);
        }
        self.send(id, &ServerMessage::Watching(Watching { on, delay }));
        let so_far: Vec<Arc<str>> =
            self.feed.frames[..self.feed.released].iter().map(|(_, f)| Arc::clone(f)).collect();
        for f in so_far {
            self.send_frame(&[*id], f);
        }
    }

    /// Followers who took a seat or left stop following.
    fn prune_followers(&mut self) {
        let roster = &self.roster;
        self.feed.followers.retain(|f| roster.get(f).is_some_and(|p| p.seat.is_none() && !p.left()));
    }

    /// Events of the running hand, as its players were sent them: held
    /// for the followers until `watch_delay` more actions have been taken.
    pub(super) fn feed_events(&mut self, events: &[EventEnvelope]) {
        if self.cfg.max_spectators == 0 {
            return;
        }
        for e in events {
            if self.feed.hand != Some(e.hand_id) {
                // A new hand; what a voided hand still held is never sent.
                self.feed.hand = Some(e.hand_id);
                self.feed.frames.clear();
                self.feed.released = 0;
                self.feed.actions = 0;
            }
            let ty = peek_type(e.body.as_str()).unwrap_or_default();
            if ty == "action-result" || ty == "timeout-action" {
                self.feed.actions += 1;
            }
            if let Some(f) = super::encode(&ServerMessage::Event(e.clone())) {
                self.feed.frames.push((self.feed.actions, f));
            }
        }
        let due = self.feed.actions.saturating_sub(self.cfg.watch_delay);
        let upto = self.feed.frames.iter().position(|(n, _)| *n > due).unwrap_or(self.feed.frames.len());
        self.release(upto);
    }

    /// The hand is over (`last`, its final burst, is queued to its
    /// players): the followers get the rest of it.
    pub(super) fn feed_hand_over(&mut self, last: &[EventEnvelope]) {
        if self.cfg.max_spectators == 0 {
            return;
        }
        self.feed_events(last);
        self.release(self.feed.frames.len());
        self.feed.hand = None;
        self.feed.frames.clear();
        self.feed.released = 0;
        self.feed.actions = 0;
    }

    /// Sends the followers the held frames up to `upto`.
    fn release(&mut self, upto: usize) {
        if upto <= self.feed.released {
            return;
        }
        self.prune_followers();
        let to = self.feed.followers.clone();
        let frames: Vec<Arc<str>> =
            self.feed.frames[self.feed.released..upto].iter().map(|(_, f)| Arc::clone(f)).collect();
        self.feed.released = upto;
        if to.is_empty() {
            return;
        }
        for f in frames {
            self.send_frame(&to, f);
        }
    }

    /// Kicks the watchers idle for `idle_timeout` at `now`.
    pub(super) fn kick_idle_watchers(&mut self, now: Now) {
        let idle = self.limits.idle_timeout;
        let due: Vec<PlayerId> =
            self.idle_unfollowing().filter(|(since, _)| *since + idle <= now.at).map(|(_, id)| id).collect();
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
            self.idle_unfollowing().fold((0usize, None::<(Instant, PlayerId)>), |(n, o), w| {
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
