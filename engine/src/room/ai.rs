//! House-AI seats (room setting `ai_seats`): while a person is seated, the
//! room asks the driver to start the dealer's own bots for its empty seats
//! `after` a wait ([`Effect::Ai`](super::Effect::Ai)); the driver funds each
//! from the operator's house-AI account and connects it as an ordinary
//! player, so it sees only what a player sees. Its join is a plain balance
//! look-up (no welcome grant), and its seat is marked `house_ai` in
//! `room-state` and `game-start`. A disconnected person's seat goes to an
//! AI after `takeover` while another person plays on; an AI gives its seat
//! up to a person between hands; and once no person is seated the AIs leave.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use claw_protocol::messages::{KickReason, Kicked, ServerMessage};
use claw_protocol::{PlayerId, Seat};

use super::config::AiSeats;
use super::player::Presence;
use super::{AiOutcome, AiStart, EffectId, Now, RoomCore};

/// How long a started AI has to connect and take its seat before its seat
/// may be asked for again.
const AI_CONNECT_WAIT: Duration = Duration::from_secs(30);

/// Smallest wait before asking again after the driver refused to start an
/// AI (the house-AI budget is spent, or no AI is available).
const AI_RETRY: Duration = Duration::from_secs(60);

/// The room's house-AI bookkeeping.
#[derive(Default)]
pub(super) struct AiTable {
    /// When the empty seats are to be filled (a seat could take an AI).
    fill_at: Option<Instant>,
    /// Starts asked of the driver and not answered, by effect.
    starting: HashMap<EffectId, Seat>,
    /// AIs started and not seated yet: their seat and since when.
    expected: HashMap<PlayerId, (Seat, Instant)>,
    /// No start before this (after a refusal).
    retry_at: Option<Instant>,
}

impl AiTable {
    /// Whether `id` is an AI the room started that has not sat down yet.
    pub fn is_expected(&self, id: &PlayerId) -> bool {
        self.expected.contains_key(id)
    }

    /// Seats asked for and not taken yet.
    fn in_flight(&self) -> impl Iterator<Item = Seat> + '_ {
        self.starting.values().copied().chain(self.expected.values().map(|(s, _)| *s))
    }
}

impl RoomCore {
    fn ai_cfg(&self) -> Option<AiSeats> {
        self.cfg.ai_seats
    }

    /// Seated people (not the house's AIs).
    fn people_seated(&self) -> impl Iterator<Item = &super::player::Player> {
        self.roster.players().filter(|p| p.seat.is_some() && !p.house_ai)
    }

    /// How many more AIs the table wants now.
    fn ai_wanted(&self) -> usize {
        let Some(ai) = self.ai_cfg() else { return 0 };
        if !self.life.is_open() || self.people_seated().next().is_none() {
            return 0;
        }
        let target = if ai.fill_to == 0 { self.roster.seat_count() } else { usize::from(ai.fill_to) };
        let taken = self.roster.seated().count() + self.ai.in_flight().count();
        target.saturating_sub(taken)
    }

    /// The next house-AI timer: the filling, a takeover, a start that
    /// never connected.
    pub(super) fn ai_deadline(&self) -> Option<Instant> {
        let ai = self.ai_cfg()?;
        let fill = self.ai.fill_at.map(|t| self.ai.retry_at.map_or(t, |r| r.max(t)));
        let takeover = ai
            .takeover
            .and_then(|grace| self.takeover_candidates().into_iter().map(|(_, since)| since + grace).min());
        let stale = self.ai.expected.values().map(|(_, since)| *since + AI_CONNECT_WAIT).min();
        fill.into_iter().chain(takeover).chain(stale).min()
    }

    /// Seated people who are away while another person is online at the
    /// table, and since when they are away.
    fn takeover_candidates(&self) -> Vec<(PlayerId, Instant)> {
        let online = self.people_seated().filter(|p| matches!(p.presence, Presence::Online(_))).count();
        if online == 0 {
            return Vec::new();
        }
        self.people_seated()
            .filter_map(|p| match p.presence {
                Presence::Away { since } => Some((p.id, since)),
                _ => None,
            })
            .collect()
    }

    /// Runs the house-AI timers due at `now`.
    pub(super) fn ai_timers(&mut self, now: Now) {
        let Some(ai) = self.ai_cfg() else { return };
        let t = now.at;
        self.ai.expected.retain(|_, (_, since)| *since + AI_CONNECT_WAIT > t);
        if let Some(grace) = ai.takeover {
            for (id, since) in self.takeover_candidates() {
                if since + grace <= t {
                    tracing::info!(room = %self.cfg.id, player = %id.short(), "away past the AI takeover grace: the seat goes to a house AI");
                    self.remove_player(&id, false);
                    // The freed seat is filled at once, not after `after`.
                    self.ai.fill_at = Some(t);
                }
            }
        }
        let due = self.ai.fill_at.is_some_and(|f| f <= t) && self.ai.retry_at.is_none_or(|r| r <= t);
        if due {
            self.ai.fill_at = None;
            self.ai.retry_at = None;
            self.start_ais(ai);
        }
    }

    /// Asks the driver for an AI for each empty seat the table wants filled.
    fn start_ais(&mut self, ai: AiSeats) {
        let wanted = self.ai_wanted();
        let busy: Vec<Seat> = self.ai.in_flight().collect();
        let free: Vec<Seat> = (0..self.roster.seat_count())
            .map(|i| Seat(i as u8))
            .filter(|s| self.roster.seat_holder(*s).is_none() && !busy.contains(s))
            .take(wanted)
            .collect();
        for seat in free {
            tracing::info!(room = %self.cfg.id, seat = seat.0, "asking for a house AI");
            let start = AiStart { game: self.cfg.game.clone(), seat, level: ai.level, chips: ai.chips };
            let id = self.out.ai(start);
            self.ai.starting.insert(id, seat);
        }
    }

    /// The driver's answer to a start.
    pub(super) fn ai_done(&mut self, now: Now, id: EffectId, outcome: AiOutcome) {
        if self.out.complete(id).is_none() {
            return;
        }
        let Some(seat) = self.ai.starting.remove(&id) else { return };
        match outcome {
            AiOutcome::Started(player) => {
                tracing::info!(room = %self.cfg.id, seat = seat.0, player = %player.short(), "house AI started");
                self.ai.expected.insert(player, (seat, now.at));
            }
            AiOutcome::Refused(why) => {
                let after = self.ai_cfg().map_or(AI_RETRY, |a| a.after.max(AI_RETRY));
                tracing::warn!(room = %self.cfg.id, seat = seat.0, why = %why, retry_in_s = after.as_secs(), "no house AI for the seat");
                self.ai.retry_at = Some(now.at + after);
            }
        }
    }

    /// A seat taken: an expected AI is no longer in flight.
    pub(super) fn ai_seated(&mut self, id: &PlayerId) {
        self.ai.expected.remove(id);
    }

    /// A person asks for a seat at a full table: a house AI gives its seat
    /// up between hands. True if a seat was freed.
    pub(super) fn ai_yield_seat(&mut self, for_player: &PlayerId) -> bool {
        if self.hands.table.is_busy() || self.roster.get(for_player).is_some_and(|p| p.house_ai) {
            return false;
        }
        let ai = self.roster.players().filter(|p| p.house_ai && p.seat.is_some()).max_by_key(|p| p.seat);
        let Some(ai) = ai.map(|p| p.id) else { return false };
        tracing::info!(room = %self.cfg.id, player = %ai.short(), "a house AI gives its seat up to a person");
        self.send(
            &ai,
            &ServerMessage::Kicked(Kicked {
                code: KickReason::Idle,
                reason: "a person takes the seat".into(),
            }),
        );
        self.remove_player(&ai, true);
        true
    }

    /// After every input: keeps the filling timer, and sends the AIs away
    /// once no person is seated (between hands).
    pub(super) fn ai_track(&mut self, now: Now) {
        let Some(ai) = self.ai_cfg() else { return };
        if self.people_seated().next().is_none() && !self.hands.table.is_busy() {
            let ais: Vec<PlayerId> = self.roster.players().filter(|p| p.house_ai).map(|p| p.id).collect();
            for id in ais {
                tracing::info!(room = %self.cfg.id, player = %id.short(), "no person seated: the house AI leaves");
                self.send(
                    &id,
                    &ServerMessage::Kicked(Kicked {
                        code: KickReason::Idle,
                        reason: "no person is seated".into(),
                    }),
                );
                self.remove_player(&id, true);
            }
        }
        if self.ai_wanted() == 0 {
            self.ai.fill_at = None;
        } else if self.ai.fill_at.is_none() {
            self.ai.fill_at = Some(now.at + ai.after);
        }
    }
}
