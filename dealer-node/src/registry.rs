//! The rooms a node serves, by id: those of its configuration and those the
//! admin API opens at run time. A private room is served (its invite URL
//! joins it) but never listed; a closed run-time room leaves the registry
//! and keeps its archive reachable.

use std::collections::{HashMap, HashSet};
use std::sync::{RwLock, RwLockReadGuard, RwLockWriteGuard};

use crate::room::RoomHandle;

/// Whether a room shows in listings (`/health`, the lobby).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Listing {
    /// Listed.
    Public,
    /// Reachable only by its invite URL.
    Private,
}

/// The node's rooms; shared by the WebSocket server, the HTTP endpoint and
/// the admin API.
#[derive(Default)]
pub struct Registry {
    inner: RwLock<Inner>,
}

#[derive(Default)]
struct Inner {
    rooms: HashMap<String, (RoomHandle, Listing)>,
    /// Ids in the order they were added.
    order: Vec<String>,
    /// Rooms that were served and are closed: their archives stay readable.
    closed: HashSet<String>,
}

impl Registry {
    /// The configured rooms, listed, in config order.
    pub fn new(rooms: impl IntoIterator<Item = RoomHandle>) -> Registry {
        let r = Registry::default();
        for h in rooms {
            r.insert(h, Listing::Public);
        }
        r
    }

    fn read(&self) -> RwLockReadGuard<'_, Inner> {
        self.inner.read().unwrap_or_else(|p| p.into_inner())
    }

    fn write(&self) -> RwLockWriteGuard<'_, Inner> {
        self.inner.write().unwrap_or_else(|p| p.into_inner())
    }

    /// The room served at `id`.
    pub fn get(&self, id: &str) -> Option<RoomHandle> {
        self.read().rooms.get(id).map(|(h, _)| h.clone())
    }

    /// Whether a room is served at `id`.
    pub fn contains(&self, id: &str) -> bool {
        self.read().rooms.contains_key(id)
    }

    /// Whether `id` is or was a room of this node (its archive may be read).
    pub fn known(&self, id: &str) -> bool {
        let i = self.read();
        i.rooms.contains_key(id) || i.closed.contains(id)
    }

    /// Adds a room; false (nothing changed) if the id is taken.
    pub fn insert(&self, room: RoomHandle, listing: Listing) -> bool {
        let mut i = self.write();
        if i.rooms.contains_key(&room.id) {
            return false;
        }
        i.order.push(room.id.clone());
        i.closed.remove(&room.id);
        i.rooms.insert(room.id.clone(), (room, listing));
        true
    }

    /// Stops serving `id` (after its room closed).
    pub fn remove(&self, id: &str) -> Option<RoomHandle> {
        let mut i = self.write();
        let (h, _) = i.rooms.remove(id)?;
        i.order.retain(|r| r != id);
        i.closed.insert(id.to_owned());
        Some(h)
    }

    /// Remembers rooms served before this start (their archives are on
    /// disk) as closed, so that their archives stay readable.
    pub fn remember_closed(&self, ids: impl IntoIterator<Item = String>) {
        let mut i = self.write();
        for id in ids {
            if !i.rooms.contains_key(&id) {
                i.closed.insert(id);
            }
        }
    }

    /// The listed rooms' ids, in the order they were added.
    pub fn listed(&self) -> Vec<String> {
        let i = self.read();
        i.order
            .iter()
            .filter(|id| i.rooms.get(*id).is_some_and(|(_, l)| *l == Listing::Public))
            .cloned()
            .collect()
    }

    /// Every served room with its listing, in the order they were added.
    pub fn all(&self) -> Vec<(RoomHandle, Listing)> {
        let i = self.read();
        i.order.iter().filter_map(|id| i.rooms.get(id).cloned()).collect()
    }
}
