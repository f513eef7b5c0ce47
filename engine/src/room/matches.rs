//! Matches that always end. For a game whose hands are deals of a longer
//! match (Guandan), the rules never read a clock nor see a connection, so
//! the room ends the match from outside them: when the match has run past
//! the game's time limit, or one of its players has left the room (said
//! leave, or stayed away past the reconnect window), the next hand starts
//! from a table memory carrying the game's end request
//! ([`claw_games::GamePlugin::end_match`]). That memory is in the hand's
//! signed `game-start`, so the replay reproduces the match's end.

use std::time::{Duration, Instant};

use claw_games::MatchStop;
use claw_protocol::{PlayerId, Seat};

use super::{Now, RoomCore};
use crate::hand::Carried;

/// The running match as the room watches it.
#[derive(Debug, Default)]
pub(super) struct MatchWatch {
    /// When the match's first hand was prepared.
    since: Option<Instant>,
    /// The players of the last prepared hand, in hand seat order.
    players: Vec<PlayerId>,
    /// The first of them to leave the room since, with its hand seat.
    left: Option<(Instant, Seat)>,
    /// The ready check and the rematch vote (`ready.rs`).
    pub people: super::ready::People,
}

impl RoomCore {
    /// What the hand about to be prepared starts from: the carried table
    /// memory, with the game's end request when the running match is over
    /// its time limit or lost by a player who left (whichever came first).
    pub(super) fn match_carried(&mut self, now: Now) -> Carried {
        let mut carried = self.hands.carried.clone();
        let game = &self.spec.game;
        let w = &mut self.hands.matched;
        if game.match_begins(&carried.memory) {
            w.since = Some(now.at);
            w.left = None;
            return carried;
        }
        let limit = game.match_time_limit(&self.spec.settings).map(Duration::from_secs);
        let timeout_at = limit.zip(w.since).map(|(l, s)| s + l).filter(|t| *t <= now.at);
        let stop = match (timeout_at, w.left) {
            (Some(t), Some((l, seat))) if l < t => MatchStop::Left { seat },
            (Some(_), _) => MatchStop::Timeout,
            (None, Some((_, seat))) => MatchStop::Left { seat },
            (None, None) => return carried,
        };
        if let Some(m) = game.end_match(&carried.memory, stop) {
            tracing::info!(room = %self.cfg.id, ?stop, "the next hand ends the match");
            carried.memory = m;
        }
        carried
    }

    /// The hand just prepared is played by `players` (hand seat order).
    pub(super) fn match_dealt(&mut self, players: &[PlayerId]) {
        self.hands.matched.players = players.to_vec();
    }

    /// `id` left the room: if it played the last hand, the running match
    /// is lost for its side (the first to leave counts).
    pub(super) fn match_player_left(&mut self, id: &PlayerId) {
        let at = self.clock.at;
        let w = &mut self.hands.matched;
        if w.left.is_none() {
            if let Some(i) = w.players.iter().position(|p| p == id) {
                w.left = Some((at, Seat(i as u8)));
            }
        }
    }
}
