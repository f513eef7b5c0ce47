//! People at a table (SPEC.md §9.8): the ready check before a match and the
//! rematch vote after one. A room with `ready_check` set deals the first
//! hand of a match only once every dealable seat has sent `ready`; a seat
//! still unready at the deadline is freed. A room with `rematch_vote` set
//! asks the players of a match that just ended whether to play again; a
//! no, or a vote missing at the deadline, ends it and frees the seats that
//! did not accept. Both are pushed as they change (`ready-check`,
//! `rematch`); no hand starts while either is open.

use std::collections::{HashSet, VecDeque};
use std::time::{Duration, Instant};

use claw_protocol::messages::{ErrorCode, ReadyCheck, Rematch, ServerMessage, VoteState};
use claw_protocol::PlayerId;

use super::{millis, Now, RoomCore};

/// Which question is open.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum VoteKind {
    /// Before a match: `ready`.
    Ready,
    /// After a match: `rematch-vote`.
    Rematch,
}

/// An open ready check or rematch vote.
#[derive(Debug)]
pub(super) struct Vote {
    kind: VoteKind,
    deadline: Instant,
    deadline_ms: u64,
    /// Who is asked, in seat order.
    asked: Vec<PlayerId>,
    /// Who said yes, in the order they did.
    yes: Vec<PlayerId>,
}

impl Vote {
    fn waiting(&self) -> Vec<PlayerId> {
        self.asked.iter().filter(|p| !self.yes.contains(p)).copied().collect()
    }
}

/// The seats' answers, kept with the running match.
#[derive(Debug, Default)]
pub(super) struct People {
    /// Seats confirmed for the coming match (a `ready`, or a yes to the
    /// rematch); a seat stays confirmed while it is held.
    confirmed: HashSet<PlayerId>,
    /// The open question, if any.
    vote: Option<Vote>,
}

impl RoomCore {
    /// Whether a hand may be formed with the `ready` seats now. Before the
    /// first hand of a match of a room with a ready check, every one of
    /// them must have confirmed; otherwise a check is opened (or the open
    /// one takes in newcomers) and the hand waits. No hand starts while a
    /// rematch vote is open.
    pub(super) fn people_gate(&mut self, now: Now, ready: &VecDeque<PlayerId>) -> bool {
        if let Some(v) = &mut self.hands.matched.people.vote {
            if v.kind == VoteKind::Ready {
                let new: Vec<PlayerId> = ready.iter().filter(|p| !v.asked.contains(p)).copied().collect();
                if !new.is_empty() {
                    v.asked.extend(new);
                    self.push_vote(VoteState::Open);
                }
            }
            return false;
        }
        if self.cfg.ready_check.is_zero() || !self.spec.game.match_begins(&self.hands.carried.memory) {
            return true;
        }
        let seated: HashSet<PlayerId> = self.roster.seated().copied().collect();
        let people = &mut self.hands.matched.people;
        people.confirmed.retain(|p| seated.contains(p));
        if ready.iter().all(|p| people.confirmed.contains(p)) {
            return true;
        }
        let yes = ready.iter().filter(|p| people.confirmed.contains(p)).copied().collect();
        self.open_vote(now, VoteKind::Ready, ready.iter().copied().collect(), yes, self.cfg.ready_check);
        false
    }

    /// A hand just ended (its `game-end` is queued): if it ended a match
    /// and the room votes on rematches, the vote opens for the match's
    /// players still seated.
    pub(super) fn match_finished(&mut self, now: Now, players: &[PlayerId]) {
        if self.cfg.rematch_vote.is_zero()
            || !self.life.is_open()
            || !self.spec.game.match_begins(&self.hands.carried.memory)
        {
            return;
        }
        let asked: Vec<PlayerId> = players
            .iter()
            .filter(|p| self.roster.get(p).is_some_and(|x| x.seat.is_some()))
            .copied()
            .collect();
        if asked.is_empty() {
            return;
        }
        for p in &asked {
            self.hands.matched.people.confirmed.remove(p);
        }
        // A ready check still open (new seats waiting) gives way to the vote.
        self.hands.matched.people.vote = None;
        self.open_vote(now, VoteKind::Rematch, asked, Vec::new(), self.cfg.rematch_vote);
    }

    fn open_vote(&mut self, now: Now, kind: VoteKind, asked: Vec<PlayerId>, yes: Vec<PlayerId>, d: Duration) {
        tracing::info!(room = %self.cfg.id, ?kind, asked = asked.len(), "vote opened");
        self.hands.matched.people.vote = Some(Vote {
            kind,
            deadline: now.at + d,
            deadline_ms: now.unix_ms.saturating_add(millis(d)),
            asked,
            yes,
        });
        self.push_vote(VoteState::Open);
    }

    /// Sends the open vote as it stands to everyone asked.
    fn push_vote(&mut self, state: VoteState) {
        let Some(v) = &self.hands.matched.people.vote else { return };
        let (yes, waiting, deadline_ms) = (v.yes.clone(), v.waiting(), v.deadline_ms);
        let msg = match v.kind {
            VoteKind::Ready => {
                ServerMessage::ReadyCheck(ReadyCheck { state, deadline_ms, ready: yes, waiting })
            }
            VoteKind::Rematch => {
                ServerMessage::Rematch(Rematch { state, deadline_ms, accepted: yes, waiting })
            }
        };
        let to = v.asked.clone();
        if let Some(f) = super::encode(&msg) {
            self.send_frame(&to, f);
        }
    }

    /// A resumed session gets the open vote that asks it, as it stands.
    pub(super) fn resend_vote(&mut self, id: &PlayerId) {
        let Some(v) = &self.hands.matched.people.vote else { return };
        if !v.asked.contains(id) {
            return;
        }
        let (yes, waiting, deadline_ms) = (v.yes.clone(), v.waiting(), v.deadline_ms);
        let state = VoteState::Open;
        let msg = match v.kind {
            VoteKind::Ready => {
                ServerMessage::ReadyCheck(ReadyCheck { state, deadline_ms, ready: yes, waiting })
            }
            VoteKind::Rematch => {
                ServerMessage::Rematch(Rematch { state, deadline_ms, accepted: yes, waiting })
            }
        };
        self.send(id, &msg);
    }

    /// `ready` (`yes` always) or `rematch-vote` from `id`.
    pub(super) fn vote_answer(&mut self, now: Now, id: &PlayerId, kind: VoteKind, yes: bool) {
        let seated = self.roster.get(id).is_some_and(|p| p.seat.is_some());
        let open = self.hands.matched.people.vote.as_ref().filter(|v| v.kind == kind && v.asked.contains(id));
        let Some(v) = open else {
            if kind == VoteKind::Ready && seated {
                // Ready ahead of the check: the seat is confirmed for the next match.
                self.hands.matched.people.confirmed.insert(*id);
                return;
            }
            let why = match kind {
                VoteKind::Ready => "you hold no seat",
                VoteKind::Rematch => "no rematch vote asks you",
            };
            return self.error_to(id, ErrorCode::NotAllowed, why);
        };
        if v.yes.contains(id) {
            return;
        }
        if !yes {
            tracing::info!(room = %self.cfg.id, player = %id.short(), "rematch declined");
            return self.close_vote(now);
        }
        if let Some(v) = &mut self.hands.matched.people.vote {
            v.yes.push(*id);
        }
        self.hands.matched.people.confirmed.insert(*id);
        if !self.settle_if_unanimous(now) {
            self.push_vote(VoteState::Open);
        }
    }

    /// Drops the seats that left from the open vote; when every seat left
    /// said yes, the vote passes and the table may deal. Returns whether it
    /// passed.
    fn settle_if_unanimous(&mut self, now: Now) -> bool {
        let seated: HashSet<PlayerId> = self.roster.seated().copied().collect();
        let Some(v) = &mut self.hands.matched.people.vote else { return false };
        v.asked.retain(|p| seated.contains(p));
        v.yes.retain(|p| seated.contains(p));
        if v.asked.is_empty() || !v.waiting().is_empty() {
            return false;
        }
        tracing::info!(room = %self.cfg.id, kind = ?v.kind, "vote passed");
        self.push_vote(VoteState::Passed);
        self.hands.matched.people.vote = None;
        self.schedule_start(now);
        true
    }

    /// When the open vote closes.
    pub(super) fn people_deadline(&self) -> Option<Instant> {
        self.hands.matched.people.vote.as_ref().map(|v| v.deadline)
    }

    /// Closes the open vote if its deadline has come.
    pub(super) fn people_timers(&mut self, now: Now) {
        if self.people_deadline().is_some_and(|d| d <= now.at) && !self.settle_if_unanimous(now) {
            self.close_vote(now);
        }
    }

    /// The vote failed (a no, or the deadline): everyone asked is told,
    /// and the seats that did not say yes are freed.
    fn close_vote(&mut self, now: Now) {
        let seated: HashSet<PlayerId> = self.roster.seated().copied().collect();
        if let Some(v) = &mut self.hands.matched.people.vote {
            v.asked.retain(|p| seated.contains(p));
            v.yes.retain(|p| seated.contains(p));
        }
        self.push_vote(VoteState::Failed);
        let Some(v) = self.hands.matched.people.vote.take() else { return };
        let why = match v.kind {
            VoteKind::Ready => "not ready in time: the seat is freed",
            VoteKind::Rematch => "no rematch: the match is over and the seat is freed",
        };
        tracing::info!(room = %self.cfg.id, kind = ?v.kind, freed = v.waiting().len(), "vote failed");
        for id in v.waiting() {
            self.free_seat(now, &id, why);
        }
        self.schedule_start(now);
    }
}
