//! The room's outbox: the effects queued for the driver, the ids of those
//! whose completion the room waits for, and what each completion is for.
//! Every part of the room queues its effects here.

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;

use claw_protocol::messages::{JoinRequest, Query};
use claw_protocol::PlayerId;

use super::settle::PendingReveal;
use super::{ArchiveWrite, ChipCall, ConnId, Effect, EffectId, RoomEvent};

/// What a pending effect's completion is for.
pub(super) enum Waiting {
    /// The house bankroll grant.
    FundHouse,
    /// A join request (balance and welcome grant).
    Join(PlayerId, JoinRequest),
    /// A `my-balance` or `my-status` query.
    Query(PlayerId, Query),
    /// A `hand` query's archive read.
    Fetch(PlayerId, Query),
    /// A chip step of the table's hand (see `hand.rs`, `forming.rs`).
    Table,
    /// The settlement of a finished hand; then its archive write.
    Settle(Box<(ArchiveWrite, RoomEvent, Option<PendingReveal>)>),
    /// The archive write of a settled hand; then its report, and its
    /// reveal is owed.
    ArchiveHand(Box<(RoomEvent, Option<PendingReveal>)>),
    /// A reveal being published; then it is sent to these players.
    Publish(Vec<PlayerId>),
    /// A refund; then its report.
    Void(Box<RoomEvent>),
    /// A write nothing waits for (logged).
    Log(&'static str),
    /// The start of a house AI (`ai.rs`).
    Ai,
}

impl Waiting {
    /// Whether the room may not close before this completes (chips moved,
    /// transcripts archived).
    fn must_finish(&self) -> bool {
        !matches!(
            self,
            Waiting::Join(..) | Waiting::Query(..) | Waiting::Fetch(..) | Waiting::FundHouse | Waiting::Ai
        )
    }
}

/// Effects in the order the driver is to start them, and the completions
/// the room waits for.
#[derive(Default)]
pub(super) struct Outbox {
    queue: VecDeque<Effect>,
    next_id: u64,
    waiting: HashMap<EffectId, Waiting>,
}

impl Outbox {
    /// The next effect to run.
    pub fn pop(&mut self) -> Option<Effect> {
        self.queue.pop_front()
    }

    fn next_id(&mut self) -> EffectId {
        self.next_id += 1;
        EffectId(self.next_id)
    }

    /// Queues a chip call whose completion is for `w`.
    pub fn call(&mut self, call: ChipCall, w: Waiting) -> EffectId {
        let id = self.next_id();
        self.waiting.insert(id, w);
        self.queue.push_back(Effect::Chips { id, call });
        id
    }

    /// Queues an archive write whose completion is for `w`.
    pub fn archive(&mut self, write: ArchiveWrite, w: Waiting) {
        let id = self.next_id();
        self.waiting.insert(id, w);
        self.queue.push_back(Effect::Archive { id, write });
    }

    /// Queues the start of a house AI for `start.seat`.
    pub fn ai(&mut self, start: super::AiStart) -> EffectId {
        let id = self.next_id();
        self.waiting.insert(id, Waiting::Ai);
        self.queue.push_back(Effect::Ai { id, start });
        id
    }

    /// Queues a report to the node.
    pub fn report(&mut self, e: RoomEvent) {
        self.queue.push_back(Effect::Report(e));
    }

    /// Queues `frame` for `to` (nothing when `to` is empty).
    pub fn send(&mut self, to: Vec<ConnId>, frame: Arc<str>) {
        if !to.is_empty() {
            self.queue.push_back(Effect::Send { to, frame });
        }
    }

    /// Queues the closing of `conn`.
    pub fn close(&mut self, conn: ConnId, code: u16, reason: &str) {
        self.queue.push_back(Effect::Close { conn, code, reason: reason.to_owned() });
    }

    /// What the completion `id` is for (once: a second completion is ignored).
    pub fn complete(&mut self, id: EffectId) -> Option<Waiting> {
        self.waiting.remove(&id)
    }

    /// Whether a completion the room may not close without is still out.
    pub fn must_wait(&self) -> bool {
        self.waiting.values().any(Waiting::must_finish)
    }
}
