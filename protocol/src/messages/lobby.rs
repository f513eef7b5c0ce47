//! Messages for people at a table (SPEC.md §9.8): quick match before the
//! handshake, the ready check before a match, the rematch vote after one,
//! and the live spectator feed.

use serde::{Deserialize, Serialize};

use super::DecodeError;
use crate::ids::PlayerId;

pub use crate::limits::MAX_MATCH_NAME_LEN;

/// `quick-match` (player → dealer, the first frame on the node's
/// quick-match path, before `hello`): seat me at a room of this game and
/// tier with a free seat.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct QuickMatch {
    /// Registry name of the game (`sam-gong`).
    pub game: String,
    /// The room tier (the `tier` member of the room's settings, `silver`);
    /// absent: the room of the game with the lowest entry threshold.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tier: Option<String>,
}

impl QuickMatch {
    /// Checks the lengths of `game` and `tier` (the decoder does; a
    /// request read otherwise, over HTTP, calls this).
    pub fn check(&self) -> Result<(), DecodeError> {
        self.validate()
    }

    pub(crate) fn validate(&self) -> Result<(), DecodeError> {
        for (what, s) in [("game", Some(&self.game)), ("tier", self.tier.as_ref())] {
            if s.is_some_and(|s| s.is_empty() || s.len() > MAX_MATCH_NAME_LEN) {
                return Err(DecodeError::malformed(format!("{what} must be 1..={MAX_MATCH_NAME_LEN} bytes")));
            }
        }
        Ok(())
    }
}

/// `matched` (dealer → player, the answer to `quick-match`): the room this
/// connection now belongs to. The handshake that follows names it, and its
/// signed `challenge` carries the room's configuration.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Matched {
    /// The room (the `room_id` the `hello` must name).
    pub room_id: String,
    /// The room's game.
    pub game: String,
    /// The room's tier, when its settings name one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tier: Option<String>,
    /// Whether the room was opened for this request (from a template).
    #[serde(default)]
    pub opened: bool,
}

/// Where a ready check or a rematch vote stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum VoteState {
    /// Waiting for answers until `deadline_ms`.
    Open,
    /// Everyone answered yes: the match starts.
    Passed,
    /// A no, or the deadline passed without every yes.
    Failed,
}

/// `ready-check` (dealer → seated players): before a match the room waits
/// for every seat to send `ready`; a seat not ready by `deadline_ms` is
/// freed. Sent when the check opens, on each `ready`, and when it ends.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReadyCheck {
    /// Where the check stands.
    pub state: VoteState,
    /// Unix ms when unready seats are freed.
    pub deadline_ms: u64,
    /// Seats that sent `ready`.
    pub ready: Vec<PlayerId>,
    /// Seats still to answer (at `failed`: those freed).
    pub waiting: Vec<PlayerId>,
}

/// `rematch-vote` (player → dealer): the player's vote on a rematch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct RematchVote {
    /// Yes (play the same table again) or no.
    pub accept: bool,
}

/// `rematch` (dealer → the players of the match that ended): the vote on
/// playing again at the same table. Sent when it opens, on each vote, and
/// when it ends; a failed vote ends the match and frees the seats that did
/// not accept.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Rematch {
    /// Where the vote stands.
    pub state: VoteState,
    /// Unix ms when the vote closes.
    pub deadline_ms: u64,
    /// Players who voted yes.
    pub accepted: Vec<PlayerId>,
    /// Players still to vote (at `failed`: those whose seats are freed).
    pub waiting: Vec<PlayerId>,
}

/// `watch` (player → dealer): follow the running table's events, the
/// room's spectator delay behind (`on: false` stops).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Watch {
    /// Start (default) or stop following.
    #[serde(default = "yes")]
    pub on: bool,
}

fn yes() -> bool {
    true
}

/// `watching` (dealer → a watcher, the answer to `watch`): what the feed
/// withholds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Watching {
    /// Following or not.
    pub on: bool,
    /// The feed trails the running hand by this many player actions
    /// (timeout actions included); a hand's end is sent once it is over.
    pub delay: u32,
}
