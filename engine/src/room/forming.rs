//! Forming a hand: the ready seats, the hand's chip journal opened, then
//! commission (or a balance check) per player, one chip call at a time;
//! players who cannot cover the table are kicked, those no longer dealable
//! get their commission back; then `hand-prepare`.

use std::collections::VecDeque;

use claw_protocol::messages::{KickReason, Kicked, ServerMessage};
use claw_protocol::{Chips, HandId, PlayerId};

use super::chips::Waiting;
use super::hand::{ActiveHand, Rest, Table, MAX_HAND_STAKE};
use super::player::Presence;
use super::{Account, ChipCall, ChipFailure, ChipMove, ChipOutcome, EffectId, Now, RoomCore, RETRY_BACKOFF};
use crate::hand::{Hand, HandSeat};
use crate::metrics::inc;

/// The chip call that gives `p` its commission back (in the hand's journal).
fn commission_back(hand: HandId, p: PlayerId, commission: Chips) -> ChipCall {
    let mv = ChipMove::credit(Account::Player(p), commission, "commission returned");
    ChipCall::Moves { hand, moves: vec![mv], undo_on_refusal: false }
}

/// A hand being formed: its journal opened, then commission (or a balance
/// check) per ready player, one chip call at a time.
pub(super) struct Forming {
    hand_id: HandId,
    queue: VecDeque<PlayerId>,
    step: FormStep,
    awaiting: EffectId,
    seated: Vec<(PlayerId, Chips)>,
    commission_total: Chips,
    journal_open: bool,
}

/// The chip call a forming hand waits for.
#[derive(Clone, Copy)]
enum FormStep {
    Open,
    Commission(PlayerId),
    ReturnCommission(PlayerId, Chips),
    Balance(PlayerId),
    /// A charged player left, went away or sat out before the deal: its
    /// commission goes back and it is not dealt in.
    Refund(PlayerId),
}

impl Forming {
    /// Whether the forming hand waits for the completion `id`.
    pub fn awaits(&self, id: EffectId) -> bool {
        self.awaiting == id
    }
}

impl RoomCore {
    /// Asks for a hand start as soon as possible (auto-start at min players).
    pub(super) fn schedule_start(&mut self, now: Now) {
        if !self.hands.table.is_busy()
            && self.life.is_open()
            && matches!(self.hands.table, Table::Idle(Rest::Waiting))
            && self.hands.next_at.is_none()
        {
            self.hands.next_at = Some(now.at);
        }
    }

    pub(super) fn max_hands_reached(&self) -> bool {
        self.cfg.max_hands.is_some_and(|m| self.hands.played >= m)
    }

    /// Starts forming a hand if enough players are ready.
    pub(super) fn maybe_start_hand(&mut self, now: Now) {
        if self.hands.table.is_busy() || !self.life.is_open() {
            return;
        }
        if self.hands.hold || self.hands.funding {
            self.hands.table = Table::Idle(Rest::Waiting);
            return;
        }
        if self.max_hands_reached() {
            self.begin_close(now, std::time::Duration::ZERO);
            return;
        }
        let ready: VecDeque<PlayerId> =
            self.roster.seated().filter(|id| self.dealable(id)).copied().collect();
        if ready.len() < usize::from(self.cfg.min_players) || !self.people_gate(now, &ready) {
            self.hands.table = Table::Idle(Rest::Waiting);
            return;
        }
        let hand_id = HandId::random(&mut *self.rng);
        let players = ready.iter().copied().collect();
        let awaiting = self.out.call(ChipCall::OpenHand { hand: hand_id, players }, Waiting::Table);
        self.hands.table = Table::Forming(Box::new(Forming {
            hand_id,
            queue: ready,
            step: FormStep::Open,
            awaiting,
            seated: Vec::new(),
            commission_total: Chips::ZERO,
            journal_open: false,
        }));
    }

    pub(super) fn forming_done(&mut self, now: Now, outcome: ChipOutcome) {
        let Table::Forming(f) = &mut self.hands.table else { return };
        let commission = self.cfg.commission;
        let min_stake = Chips(self.cfg.min_bet.0.max(1));
        // A player under the table's entry chips after a hand leaves before
        // the next one (a Sam Gong rule), as a join would be refused.
        let entry = self.entry;
        let mut kick: Option<(PlayerId, Chips)> = None;
        match (f.step, outcome) {
            (FormStep::Open, ChipOutcome::Done(Ok(()))) => f.journal_open = true,
            (FormStep::Open, other) => {
                tracing::error!(room = %self.cfg.id, outcome = ?other, "cannot open the chip journal; no hand");
                self.hands.table = Table::Idle(Rest::Waiting);
                self.hands.next_at = Some(now.at + RETRY_BACKOFF);
                return;
            }
            (FormStep::Commission(p), ChipOutcome::Moves(Ok(b))) => {
                f.commission_total = Chips(f.commission_total.0 + commission.0);
                let balance = b.first().copied().unwrap_or_default();
                if balance < min_stake || Chips(balance.0.saturating_add(commission.0)) < entry {
                    // Cannot play after paying: give it back, kick.
                    let call = commission_back(f.hand_id, p, commission);
                    let id = self.out.call(call, Waiting::Table);
                    if let Table::Forming(f) = &mut self.hands.table {
                        f.step = FormStep::ReturnCommission(p, balance);
                        f.awaiting = id;
                    }
                    return;
                }
                f.seated.push((p, balance));
            }
            (FormStep::Commission(p), ChipOutcome::Moves(Err((ChipFailure::Refused(_), _)))) => {
                kick = Some((p, Chips::ZERO))
            }
            (FormStep::Commission(_), other) => {
                inc(&self.metrics.chip_errors);
                tracing::error!(room = %self.cfg.id, outcome = ?other, "commission debit failed; hand not started");
                return self.abandon_start(now);
            }
            (FormStep::ReturnCommission(p, b), outcome) => {
                if let ChipOutcome::Moves(Ok(_)) = outcome {
                    f.commission_total = Chips(f.commission_total.0 - commission.0);
                }
                kick = Some((p, b));
            }
            (FormStep::Balance(p), ChipOutcome::Balance(Ok(b))) if b < min_stake || b < entry => {
                kick = Some((p, b))
            }
            (FormStep::Balance(p), ChipOutcome::Balance(Ok(b))) => f.seated.push((p, b)),
            (FormStep::Balance(_), other) => {
                inc(&self.metrics.chip_errors);
                tracing::warn!(room = %self.cfg.id, outcome = ?other, "balance check failed; player skips this hand");
            }
            (FormStep::Refund(_), ChipOutcome::Moves(Ok(_))) => {
                f.commission_total = Chips(f.commission_total.0 - commission.0)
            }
            (FormStep::Refund(p), other) => {
                inc(&self.metrics.chip_errors);
                tracing::error!(room = %self.cfg.id, player = %p.short(), outcome = ?other,
                    "returning the commission of a player who left before the deal failed");
            }
        }
        if let Some((p, b)) = kick {
            self.kick_broke(&p, b);
        }
        if !self.life.is_open() {
            return self.abandon_start(now);
        }
        self.next_form(now);
    }

    /// Whether `id` is to be dealt into the next hand: seated, online and
    /// not sitting out. A player who said leave, went away or sat out while
    /// the hand was forming is not.
    pub(super) fn dealable(&self, id: &PlayerId) -> bool {
        self.roster.get(id).is_some_and(|p| {
            p.seat.is_some() && matches!(p.presence, Presence::Online(_)) && p.sit_out.is_none()
        }) && self.unbarred(id)
    }

    /// Charges the next ready player, gives back the commission of a charged
    /// player who is no longer dealable, or prepares the hand.
    pub(super) fn next_form(&mut self, now: Now) {
        let commission = self.cfg.commission;
        loop {
            let Table::Forming(f) = &mut self.hands.table else { return };
            let Some(p) = f.queue.pop_front() else { break };
            let hand = f.hand_id;
            if !self.dealable(&p) {
                continue;
            }
            let (step, call) = if commission.0 > 0 {
                let mv = ChipMove::debit(Account::Player(p), commission, "commission");
                (FormStep::Commission(p), ChipCall::Moves { hand, moves: vec![mv], undo_on_refusal: false })
            } else {
                (FormStep::Balance(p), ChipCall::Balance(p))
            };
            let id = self.out.call(call, Waiting::Table);
            if let Table::Forming(f) = &mut self.hands.table {
                f.step = step;
                f.awaiting = id;
            }
            return;
        }
        let Table::Forming(f) = &self.hands.table else { return };
        if let Some(i) = f.seated.iter().position(|(p, _)| !self.dealable(p)) {
            let Table::Forming(f) = &mut self.hands.table else { return };
            let (p, _) = f.seated.remove(i);
            let hand = f.hand_id;
            if commission.0 > 0 {
                tracing::info!(room = %self.cfg.id, player = %p.short(), "not dealt in: commission returned");
                let id = self.out.call(commission_back(hand, p, commission), Waiting::Table);
                if let Table::Forming(f) = &mut self.hands.table {
                    f.step = FormStep::Refund(p);
                    f.awaiting = id;
                }
                return;
            }
            return self.next_form(now);
        }
        self.prepare(now);
    }

    /// Every player charged: signs `hand-prepare`.
    pub(super) fn prepare(&mut self, now: Now) {
        let Table::Forming(f) = &mut self.hands.table else { return };
        let seated: Vec<(PlayerId, Chips)> = f.seated.drain(..).collect();
        let (hand_id, commission_total) = (f.hand_id, f.commission_total);
        for (id, b) in &seated {
            if let Some(p) = self.roster.get_mut(id) {
                p.balance = *b;
            }
        }
        // Games bound the stacks they accept (exact arithmetic below 2^53).
        let seats: Vec<HandSeat> = seated
            .iter()
            .filter_map(|(id, b)| {
                self.roster.get(id).map(|p| HandSeat {
                    id: *id,
                    encryption_key: p.encryption_key,
                    balance: Chips(b.0.min(MAX_HAND_STAKE)),
                    commission: self.cfg.commission,
                    key: p.key.clone(),
                    house_ai: p.house_ai,
                })
            })
            .collect();
        if seats.len() < usize::from(self.cfg.min_players) {
            return self.abandon_start(now);
        }
        let hand_number = self.hands.first_number + self.hands.played + self.hands.voided;
        let carried = self.match_carried(now);
        let prepared = Hand::prepare(
            self.spec.clone(),
            self.dealer.clone(),
            seats,
            carried,
            hand_number,
            hand_id,
            &mut *self.rng,
        );
        let (hand, env) = match prepared {
            Ok(x) => x,
            Err(e) => {
                tracing::error!(room = %self.cfg.id, error = %e, "cannot prepare a hand");
                return self.abandon_start(now);
            }
        };
        inc(&self.metrics.hands_started);
        // Blind tables collect key shares in the seed window (SPEC.md §9.7).
        let seeds = hand.collecting_seeds() || hand.is_blind();
        let players: Vec<PlayerId> = hand.seats().iter().map(|s| s.id).collect();
        self.metrics.conduct.dealt(&players);
        self.match_dealt(&players);
        tracing::debug!(room = %self.cfg.id, hand = %hand_id, hand_number, players = players.len(), "hand prepared");
        // Until the seeds arrive (or the hand starts at once below).
        let seeds_until = now.at + self.cfg.seed_timeout;
        self.hands.table =
            Table::Playing(Box::new(ActiveHand::new(hand, players, commission_total, seeds_until)));
        self.broadcast(&[env]);
        self.count_sat_out_hand(now);
        if !seeds {
            self.start_dealing(now);
        }
    }

    pub(super) fn kick_broke(&mut self, id: &PlayerId, balance: Chips) {
        tracing::info!(room = %self.cfg.id, player = %id.short(), %balance, "cannot cover the minimum: kicked");
        let reason = if self.entry > self.min_balance() {
            format!("balance {balance} is below this table's entry threshold of {}", self.entry)
        } else {
            format!("balance {balance} cannot cover this room's minimum {}", self.min_balance())
        };
        self.send(id, &ServerMessage::Kicked(Kicked { code: KickReason::InsufficientBalance, reason }));
        self.remove_player(id, true);
    }

    /// A hand that could not start: refund what was taken, try later.
    pub(super) fn abandon_start(&mut self, now: Now) {
        let Table::Forming(f) = std::mem::replace(&mut self.hands.table, Table::Idle(Rest::Waiting)) else {
            return;
        };
        if f.journal_open {
            self.out.call(ChipCall::Void(f.hand_id), Waiting::Log("refund of an unstarted hand"));
        }
        if self.life.is_open() {
            self.hands.next_at = Some(now.at + self.cfg.between_hands.max(RETRY_BACKOFF));
        }
    }
}
