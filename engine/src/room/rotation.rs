//! The banker queue of a table whose banker rotates (Sam Gong), pushed as
//! `banker-queue` (SPEC.md §9.4) instead of being left to `room-state`
//! polls: to the whole room when it changes (a hand starts or ends, a seat
//! is taken or freed, a balance moves the order), and to a connection when
//! it is admitted. Games without a rotation send nothing.

use claw_games::PlayerInfo;
use claw_protocol::messages::{BankerQueue, ServerMessage};
use claw_protocol::{PlayerId, Seat};

use super::hand::Table;
use super::{encode, ConnId, Presence, RoomCore};

/// The queue last pushed to the room (none: nothing pushed yet).
#[derive(Default)]
pub(super) struct Rotation {
    sent: Option<BankerQueue>,
}

impl RoomCore {
    /// The banker queue now, or None when the game has no rotation. While
    /// a hand runs: its players from the memory it started from, its
    /// banker first; between hands: the players the next hand would deal
    /// in (seated, present, not sitting out) in seat order.
    fn banker_queue(&self) -> Option<BankerQueue> {
        let (hand_id, infos) = match &self.hands.table {
            Table::Playing(h) => {
                let infos =
                    h.hand.seats().iter().map(|s| PlayerInfo { id: s.id, balance: s.balance }).collect();
                (Some(h.hand.hand_id()), infos)
            }
            _ => {
                let dealt = |id: &&PlayerId| {
                    self.roster.get(id).is_some_and(|p| {
                        p.sit_out.is_none() && matches!(p.presence, Presence::Online(_)) && !p.left()
                    })
                };
                let infos: Vec<PlayerInfo> = self
                    .roster
                    .seated()
                    .filter(dealt)
                    .filter_map(|id| self.roster.get(id).map(|p| PlayerInfo { id: *id, balance: p.balance }))
                    .collect();
                (None, infos)
            }
        };
        let seats: Vec<Seat> =
            self.spec.game.rotation(&self.spec.settings, &self.hands.carried.memory, &infos)?;
        let players = seats.iter().filter_map(|s| infos.get(s.index()).map(|p| p.id)).collect();
        Some(BankerQueue { hand_id, players })
    }

    /// Pushes the banker queue to everyone in the room when it differs
    /// from the one last pushed.
    pub(super) fn push_banker_queue(&mut self) {
        let Some(q) = self.banker_queue() else { return };
        if self.rotation.sent.as_ref() == Some(&q) {
            return;
        }
        let everyone: Vec<PlayerId> = self.roster.players().map(|p| p.id).collect();
        if let Some(f) = encode(&ServerMessage::BankerQueue(q.clone())) {
            self.send_frame(&everyone, f);
        }
        self.rotation.sent = Some(q);
    }

    /// A connection just admitted gets the queue last pushed.
    pub(super) fn banker_queue_to(&mut self, conn: ConnId) {
        let Some(q) = self.rotation.sent.clone() else { return };
        if let Some(f) = encode(&ServerMessage::BankerQueue(q)) {
            self.out.send(vec![conn], f);
        }
    }
}
