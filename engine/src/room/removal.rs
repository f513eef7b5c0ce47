//! Operator removals: the bans and freezes the node tells the room about
//! ([`Input::Bar`](super::Input::Bar)). A banned player is removed from the
//! room (`kicked` `banned`, close 4001); a frozen one loses its seat
//! (`kicked` `frozen`, close 4000) and is refused a seat, but may connect
//! and query its balance. A player in the running hand is removed only once
//! that hand has settled: it plays on (its turns as usual) and its chips
//! are paid like everyone's. Neither is dealt into a later hand.

use std::collections::HashMap;

use claw_protocol::close;
use claw_protocol::messages::{JoinRejectReason, JoinResponse, KickReason, Kicked, ServerMessage};
use claw_protocol::PlayerId;
use serde::{Deserialize, Serialize};

use super::{Now, RoomCore};

/// What an operator bars an identity from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum BarKind {
    /// Refused at the handshake; removed from every room.
    Ban,
    /// May connect and see its balance; may not sit down.
    Freeze,
}

impl BarKind {
    /// `ban` or `freeze`.
    pub fn name(self) -> &'static str {
        match self {
            BarKind::Ban => "ban",
            BarKind::Freeze => "freeze",
        }
    }
}

/// A ban or freeze as a room applies it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bar {
    /// Ban or freeze.
    pub kind: BarKind,
    /// The operator's reason, told to the player.
    pub reason: String,
    /// When it stops applying (unix ms); none: until lifted.
    pub until_ms: Option<u64>,
}

impl Bar {
    /// Whether it still applies at `unix_ms`.
    pub fn applies(&self, unix_ms: u64) -> bool {
        self.until_ms.is_none_or(|u| unix_ms < u)
    }

    /// The player's text: the reason and, if any, the expiry.
    fn text(&self) -> String {
        let what = match self.kind {
            BarKind::Ban => "banned by the operator",
            BarKind::Freeze => "frozen by the operator: you may see your balance, not sit down",
        };
        match self.until_ms {
            Some(u) => format!("{what}: {} (until unix ms {u})", self.reason),
            None => format!("{what}: {}", self.reason),
        }
    }
}

/// The bars the room knows, by identity (a ban over a freeze).
#[derive(Debug, Default)]
pub(super) struct Removals {
    bars: HashMap<PlayerId, Bar>,
}

impl RoomCore {
    /// Sets (`Some`) or lifts (`None`) the bar on `player` and applies it.
    pub(super) fn set_bar(&mut self, now: Now, player: PlayerId, bar: Option<Bar>) {
        match bar {
            Some(b) => {
                tracing::info!(room = %self.cfg.id, player = %player.short(), kind = b.kind.name(), "operator bar set");
                self.removals.bars.insert(player, b);
            }
            None => {
                self.removals.bars.remove(&player);
            }
        }
        self.apply_bars(now);
    }

    /// The bar on `id` that applies now.
    fn bar_of(&self, id: &PlayerId) -> Option<&Bar> {
        self.removals.bars.get(id).filter(|b| b.applies(self.clock.unix_ms))
    }

    /// Whether `id` may be dealt into a hand (no bar applies).
    pub(super) fn unbarred(&self, id: &PlayerId) -> bool {
        self.bar_of(id).is_none()
    }

    /// Refuses the join of a barred player (`join-response` `frozen`);
    /// true when refused.
    pub(super) fn refuse_barred_join(&mut self, id: &PlayerId) -> bool {
        let Some(text) = self.bar_of(id).map(Bar::text) else { return false };
        let refusal = ServerMessage::JoinResponse(JoinResponse {
            accepted: false,
            reason: Some(JoinRejectReason::Frozen),
            message: Some(text),
            seat: None,
            room: None,
            players: Vec::new(),
        });
        self.send(id, &refusal);
        true
    }

    /// Removes every barred player who is no longer in a running hand:
    /// banned ones from the room, frozen ones from their seat. Expired bars
    /// are forgotten. Runs after every input and timer.
    pub(super) fn apply_bars(&mut self, now: Now) {
        if self.removals.bars.is_empty() {
            return;
        }
        self.removals.bars.retain(|_, b| b.applies(now.unix_ms));
        let due: Vec<(PlayerId, Bar)> = self
            .removals
            .bars
            .iter()
            .filter(|(id, b)| {
                self.roster.get(id).is_some_and(|p| {
                    !p.left() && (b.kind == BarKind::Ban || p.seat.is_some()) && !self.in_hand(id)
                })
            })
            .map(|(id, b)| (*id, b.clone()))
            .collect();
        for (id, bar) in due {
            let (code, close, why) = match bar.kind {
                BarKind::Ban => (KickReason::Banned, close::BANNED, "banned"),
                BarKind::Freeze => (KickReason::Frozen, close::KICKED, "frozen"),
            };
            tracing::info!(room = %self.cfg.id, player = %id.short(), why, "operator bar: player removed");
            self.send(&id, &ServerMessage::Kicked(Kicked { code, reason: bar.text() }));
            let conn = self.roster.get(&id).and_then(|p| p.conn());
            self.remove_player(&id, false);
            if let Some(c) = conn {
                self.out.close(c, close, why);
            }
        }
    }
}
