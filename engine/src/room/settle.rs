//! The end of a hand: settlement (commission and rake to the dealer, the
//! conservation check), the archive write and the report, in that order
//! before the hand's `game-end` goes out; voiding with refunds; the pause
//! between hands; and deferred `audit-reveal`s owed for archived hands.

use std::time::{Duration, Instant};

use claw_protocol::messages::{ErrorCode, ErrorMsg, ServerMessage};
use claw_protocol::transcript::{EventEnvelope, Transcript};
use claw_protocol::{Chips, HandId, PlayerId};

use super::chips::Waiting;
use super::hand::{Rest, Table};
use super::{encode, ArchiveWrite, ChipCall, ChipOutcome, Now, RoomCore, RoomEvent, RETRY_BACKOFF};
use crate::hand::{Carried, HandEnd};
use crate::metrics::{dec, inc};

/// Why a hand was voided, as its players are told: a stable code and a
/// short text, never the chip service's address or an OS error.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VoidCause {
    /// The chip service failed, refused a move, or did not answer.
    ChipService,
    /// The game could not go on (an engine or rules error).
    Game,
    /// The dealer is shutting down.
    Shutdown,
    /// The hand's chip moves did not add up (conservation check).
    Conservation,
    /// A player the hand cannot go on without left before acting (Sam
    /// Gong's banker before its bet).
    Left,
}

impl VoidCause {
    /// The code players see (`[chip-service]`).
    pub fn code(self) -> &'static str {
        match self {
            VoidCause::ChipService => "chip-service",
            VoidCause::Game => "game-error",
            VoidCause::Shutdown => "shutdown",
            VoidCause::Conservation => "chip-conservation",
            VoidCause::Left => "player-left",
        }
    }

    /// The short text players see.
    pub fn text(self) -> &'static str {
        match self {
            VoidCause::ChipService => "the chip service failed or did not answer",
            VoidCause::Game => "the game could not continue",
            VoidCause::Shutdown => "the dealer is shutting down",
            VoidCause::Conservation => "the hand's chip movements did not add up",
            VoidCause::Left => "a player the hand cannot go on without left before acting",
        }
    }
}

/// An archived hand whose `audit-reveal` is still owed (policy `deferred`).
/// The signed reveal itself waits in the archive's pending store.
pub(super) struct PendingReveal {
    pub hand_number: u64,
    pub hand_id: HandId,
    /// Who is sent the reveal when it is published.
    pub players: Vec<PlayerId>,
    /// When to publish; none = when the room closes.
    pub at: Option<Instant>,
}

impl RoomCore {
    /// Settles a finished hand: commission and rake to the dealer (with the
    /// conservation check), then the archive, then the report; the pause
    /// between hands starts now. `last` is the hand's final burst (its
    /// `game-end`): it is queued after the hand's archive write and its
    /// settlement, and the driver runs the effects queued after those two
    /// only once they have completed, so no player sees the end of a hand
    /// that is not on file and paid (a crash before then refunds the hand
    /// at restart and sets its file aside as voided).
    pub(super) fn finish_hand(&mut self, now: Now, end: HandEnd, last: &[EventEnvelope]) {
        let Table::Playing(h) = std::mem::replace(&mut self.hands.table, Table::Idle(Rest::Settling)) else {
            return;
        };
        let h = *h;
        let hand_id = h.hand.hand_id();
        let hand_number = h.hand.hand_number();
        let fee = Chips(h.commission_total.0.saturating_add(end.result.rake.0));
        inc(&self.metrics.hands_finished);
        self.hands.played += 1;
        self.hands.carried = end.carried();
        let winners = end.result.winners.iter().filter_map(|s| h.players.get(s.index()).copied()).collect();
        tracing::info!(room = %self.cfg.id, hand = %hand_id, hand_number, summary = %end.result.summary, "hand finished");
        let report = RoomEvent::HandFinished {
            room: self.cfg.id.clone(),
            hand_number,
            hand_id,
            summary: end.result.summary.clone(),
            players: h.players.clone(),
            net: end.result.net.clone(),
            winners,
            transcript: None,
        };
        // The reveal is signed now (the hand's state is dropped with it) and
        // stored pending by the archive write, never in memory.
        let mut hand = h.hand;
        // The file's copy first: signing the reveal appends it to the chain.
        let transcript = hand.transcript().clone();
        let pending_reveal = if end.reveal_pending {
            hand.audit_reveal().unwrap_or_else(|e| {
                tracing::error!(room = %self.cfg.id, hand = %hand_id, error = %e, "audit-reveal failed");
                None
            })
        } else {
            None
        };
        let players = h.players;
        let owed = pending_reveal.is_some().then(|| PendingReveal {
            hand_number,
            hand_id,
            players: players.clone(),
            at: self.cfg.reveal_delay.map(|d| now.at + d),
        });
        let pending_reveal = pending_reveal.map(Box::new);
        let write = ArchiveWrite::Hand { hand_number, transcript, pending_reveal };
        self.out.archive(write.clone(), Waiting::Log("hand"));
        let next = Box::new((write, report, owed));
        self.queries.parked.insert(hand_id, Vec::new());
        self.out.call(ChipCall::Settle { hand: hand_id, fee }, Waiting::Settle(next));
        for e in last {
            if let Some(f) = encode(&ServerMessage::Event(e.clone())) {
                self.send_frame(&players, f);
            }
        }
        self.feed_hand_over(last);
        self.after_hand(now);
        self.match_finished(now, &players);
    }

    /// Voids the running hand: every chip it moved goes back, the players
    /// are told `cause` (code and short text; `detail` goes to the log and
    /// the node's report only), the next hand is scheduled.
    pub(super) fn void_hand(&mut self, now: Now, cause: VoidCause, detail: &str) {
        if !self.hands.table.is_playing() {
            return self.abandon_start(now);
        }
        let Table::Playing(h) = std::mem::replace(&mut self.hands.table, Table::Idle(Rest::Settling)) else {
            return;
        };
        let hand_id = h.hand.hand_id();
        tracing::warn!(room = %self.cfg.id, hand = %hand_id, cause = cause.code(), detail, "voiding the hand");
        let report = RoomEvent::HandVoided { room: self.cfg.id.clone(), hand_id, reason: detail.to_owned() };
        self.out.call(ChipCall::Void(hand_id), Waiting::Void(Box::new(report)));
        self.out.archive(
            ArchiveWrite::Voided { transcript: h.hand.transcript().clone() },
            Waiting::Log("voided"),
        );
        inc(&self.metrics.hands_voided);
        self.hands.voided += 1;
        self.tell_voided(&h.players, hand_id, cause);
        self.after_hand(now);
        self.hands.next_at = self.hands.next_at.map(|t| t.max(now.at + RETRY_BACKOFF));
    }

    /// Tells `players` that `hand_id` was voided, with `cause`'s code and text.
    pub(super) fn tell_voided(&mut self, players: &[PlayerId], hand_id: HandId, cause: VoidCause) {
        let msg =
            format!("hand {hand_id} voided [{}]: {}; its chips are refunded", cause.code(), cause.text());
        if let Some(f) = encode(&ServerMessage::Error(ErrorMsg { code: ErrorCode::Internal, message: msg })) {
            self.send_frame(players, f);
        }
    }

    pub(super) fn after_hand(&mut self, now: Now) {
        // Players who left during the hand are gone now.
        self.roster.forget_left();
        if !self.life.is_open() {
            return;
        }
        if self.max_hands_reached() {
            self.begin_close(now, std::time::Duration::ZERO);
            return;
        }
        self.hands.table = Table::Idle(Rest::BetweenHands);
        self.hands.next_at = Some(now.at + self.cfg.between_hands);
    }

    /// Publishes an owed `audit-reveal`: the archive moves it from the
    /// pending store into the hand's file, then it goes to the hand's players.
    pub(super) fn publish_reveal(&mut self, d: PendingReveal) {
        let write = ArchiveWrite::Publish { hand_number: d.hand_number, hand_id: d.hand_id };
        self.out.archive(write, Waiting::Publish(d.players));
    }

    /// Publishes the deferred reveals due at `now`.
    pub(super) fn reveal_timers(&mut self, now: Now) {
        let (due, owed) = std::mem::take(&mut self.hands.deferred)
            .into_iter()
            .partition(|d| d.at.is_some_and(|at| at <= now.at));
        self.hands.deferred = owed;
        let due: Vec<PendingReveal> = due;
        for d in due.into_iter().rev() {
            self.publish_reveal(d);
        }
    }

    /// A finished hand's settlement completed: archive it (as voided when
    /// its chips did not add up).
    pub(super) fn settled_write(
        &mut self,
        now: Now,
        outcome: ChipOutcome,
        write: ArchiveWrite,
        report: RoomEvent,
        owed: Option<PendingReveal>,
    ) {
        if let ChipOutcome::Unbalanced(detail) = &outcome {
            // Refunded: the hand is archived as voided, its owed reveal with it.
            return self.unbalanced(now, write, report, detail);
        }
        if let ChipOutcome::Done(Err(e)) = &outcome {
            inc(&self.metrics.chip_errors);
            tracing::error!(room = %self.cfg.id, error = %e,
                "settlement incomplete; the chip journal stays open and a restart completes it");
        }
        self.out.archive(write, Waiting::ArchiveHand(Box::new((report, owed))));
    }

    /// A settled hand's chips did not add up: the ledger refunded it, so it
    /// is counted, archived and reported as voided; a second time in this
    /// room stops the room (something is wrong with the chips).
    pub(super) fn unbalanced(&mut self, now: Now, write: ArchiveWrite, report: RoomEvent, detail: &str) {
        inc(&self.metrics.chip_conservation_failures);
        self.hands.conservation_failures += 1;
        tracing::error!(severity = crate::metrics::CRITICAL, room = %self.cfg.id, detail,
            failures = self.hands.conservation_failures, "chip conservation failed: hand voided and refunded");
        let players = match &report {
            RoomEvent::HandFinished { players, .. } => players.clone(),
            _ => Vec::new(),
        };
        if let ArchiveWrite::Hand { mut transcript, pending_reveal, .. } = write {
            // Refunded, the hand left nothing behind: the next hand starts
            // from what it started from (SPEC.md §9.5 `previous`).
            if self.hands.carried.previous.map(|p| p.hand_id) == Some(transcript.hand_id) {
                if let Some(c) = carried_into(&transcript) {
                    self.hands.carried = c;
                }
            }
            // A deferred reveal is owed whatever became of the chips: nothing
            // is at stake any more, so it goes out now, before the void notice,
            // and into the voided file, so the hand still audits.
            if let Some(env) = pending_reveal {
                transcript.events.push((*env).clone());
                if let Some(f) = encode(&ServerMessage::Event(*env)) {
                    self.send_frame(&players, f);
                }
            }
            self.out.archive(ArchiveWrite::Voided { transcript }, Waiting::Log("voided"));
        }
        self.hands.played = self.hands.played.saturating_sub(1);
        self.hands.voided += 1;
        dec(&self.metrics.hands_finished);
        inc(&self.metrics.hands_voided);
        if let RoomEvent::HandFinished { room, hand_id, players, .. } = report {
            self.tell_voided(&players, hand_id, VoidCause::Conservation);
            let reason = format!("chip conservation failed: {detail}");
            self.out.report(RoomEvent::HandVoided { room, hand_id, reason });
        }
        if self.hands.conservation_failures >= 2 && self.life.is_open() {
            tracing::error!(severity = crate::metrics::CRITICAL, room = %self.cfg.id,
                "chip conservation failed again: closing the room");
            self.begin_close(now, Duration::ZERO);
        }
    }

    /// Publishes, at once, the reveals a previous run of this room left
    /// pending (`(hand_number, hand_id)` from the archive's pending store):
    /// the room that dealt those hands has closed, so they are due.
    pub fn publish_left_pending(&mut self, hands: Vec<(u64, HandId)>) {
        for (hand_number, hand_id) in hands {
            tracing::info!(room = %self.cfg.id, hand = %hand_id, hand_number, "publishing a reveal left pending by the previous run");
            self.out.archive(ArchiveWrite::Publish { hand_number, hand_id }, Waiting::Publish(Vec::new()));
        }
    }
}

/// What a hand's `game-start` says it was carried from: its table memory
/// and previous hand.
fn carried_into(t: &Transcript) -> Option<Carried> {
    t.events.iter().find_map(|e| match e.decode_body() {
        Ok(claw_protocol::messages::EventBody::GameStart(g)) => {
            Some(Carried { memory: g.memory, previous: g.previous })
        }
        _ => None,
    })
}
