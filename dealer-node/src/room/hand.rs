//! The hand lifecycle inside a room: choosing players, commission, prepare,
//! seeds, dealing, actions and timeouts, chip steps, settlement, voiding
//! with refunds, and deferred reveals.

use std::time::Duration;

use claw_chips::{AccountId, ChipOpKind};
use claw_games::Party;
use claw_protocol::messages::{
    ActionRejectCode, ActionRejected, ErrorCode, KickReason, PlayerSeed, RoomPhase, ServerMessage,
    SignedAction,
};
use claw_protocol::transcript::EventEnvelope;
use claw_protocol::{Chips, HandId, PlayerId, Seat};
use tokio::time::Instant;
use tokio_tungstenite::tungstenite::Utf8Bytes;

use super::{encode, unix_ms, Room, RoomEvent};
use crate::chips::{HandLedger, LedgerError};
use crate::engine::{Hand, HandEnd, HandSeat, Step};
use crate::metrics::inc;

/// The hand being played.
pub(crate) struct ActiveHand {
    pub hand: Hand,
    /// Taken when the hand settles or is voided.
    pub ledger: Option<HandLedger>,
    /// Hand seat → player.
    pub players: Vec<PlayerId>,
    /// Hand seat → chip account.
    pub accounts: Vec<AccountId>,
    pub commission_total: Chips,
    /// Entropy `joint`: when to start without the missing seeds.
    pub seed_deadline: Option<Instant>,
    /// Whose turn, until when.
    pub action: Option<Turn>,
}

/// The player the hand waits for.
pub(crate) struct Turn {
    pub seat: Seat,
    pub deadline: Instant,
    pub deadline_ms: u64,
}

/// A finished hand whose `audit-reveal` is still owed (policy `deferred`).
pub(crate) struct DeferredHand {
    pub hand: Hand,
    pub players: Vec<PlayerId>,
    /// When to publish; none = when the room closes.
    pub at: Option<Instant>,
}

/// Who set off a step.
enum Origin {
    Start,
    Player { id: PlayerId, hand_id: HandId, seq: u32, at: Instant },
    Auto,
}

/// Why a step's chip moves could not all be done.
enum StepFail {
    /// A debit was refused for good (insufficient balance…): nothing of the
    /// step stays.
    Refused(String),
    /// The provider did not answer: the hand must be voided.
    Void(String),
}

/// The most chips a player brings into one hand, whatever the balance.
pub const MAX_HAND_STAKE: u64 = 1 << 50;

/// Smallest pause before trying again after a hand could not start.
const RETRY_BACKOFF: Duration = Duration::from_secs(1);

impl Room {
    /// Asks for a hand start as soon as possible (auto-start at min players).
    pub(super) fn schedule_start(&mut self) {
        if self.hand.is_none()
            && self.closing.is_none()
            && self.phase == RoomPhase::Waiting
            && self.next_hand_at.is_none()
        {
            self.next_hand_at = Some(Instant::now());
        }
    }

    fn max_hands_reached(&self) -> bool {
        self.cfg.max_hands.is_some_and(|m| self.hands_played >= m)
    }

    /// Starts a hand if enough players are ready: kicks those who cannot
    /// cover the minimum, takes the commission, signs `hand-prepare`.
    pub(super) async fn maybe_start_hand(&mut self) {
        if self.hand.is_some() || self.closing.is_some() || self.phase == RoomPhase::Closed {
            return;
        }
        if self.hold {
            self.phase = RoomPhase::Waiting;
            return;
        }
        if self.max_hands_reached() {
            self.begin_close(Duration::ZERO, None);
            return;
        }
        let ready: Vec<PlayerId> = self
            .seats
            .iter()
            .flatten()
            .filter(|id| self.players.get(id).is_some_and(|p| p.conn.is_some() && !p.sit_out && !p.left))
            .copied()
            .collect();
        if ready.len() < usize::from(self.cfg.min_players) {
            self.phase = RoomPhase::Waiting;
            return;
        }
        let hand_number = self.first_hand_number + self.hands_played + self.hands_voided;
        let hand_id = HandId::random(&mut self.rng);
        let journal = self.ctx.data_dir.join("rooms").join(&self.cfg.id).join("journal");
        let mut ledger = match HandLedger::open(&self.cfg.id, &hand_id.to_string(), Some(&journal), unix_ms())
        {
            Ok(l) => l,
            Err(e) => {
                tracing::error!(room = %self.cfg.id, error = %e, "cannot open the chip journal; no hand");
                self.next_hand_at = Some(Instant::now() + RETRY_BACKOFF);
                return;
            }
        };
        self.phase = RoomPhase::Playing;
        let mut seated: Vec<(PlayerId, AccountId, Chips)> = Vec::new();
        let mut commission_total = Chips::ZERO;
        let min_stake = Chips(self.cfg.min_bet.0.max(1));
        for id in ready {
            let account = AccountId::from(id);
            let balance = if self.cfg.commission.0 > 0 {
                let r = ledger
                    .run(&self.ctx.desk, ChipOpKind::Debit, &account, self.cfg.commission, "commission")
                    .await;
                match r {
                    Ok(b) => {
                        commission_total = Chips(commission_total.0 + self.cfg.commission.0);
                        if b < min_stake {
                            // Cannot play after paying: give it back, kick.
                            if ledger
                                .run(
                                    &self.ctx.desk,
                                    ChipOpKind::Credit,
                                    &account,
                                    self.cfg.commission,
                                    "commission returned",
                                )
                                .await
                                .is_ok()
                            {
                                commission_total = Chips(commission_total.0 - self.cfg.commission.0);
                            }
                            self.kick_broke(&id, b);
                            continue;
                        }
                        b
                    }
                    Err(LedgerError::Chip(e)) if !e.is_retryable() => {
                        self.kick_broke(&id, Chips::ZERO);
                        continue;
                    }
                    Err(e) => {
                        inc(&self.ctx.metrics.chip_errors);
                        tracing::error!(room = %self.cfg.id, error = %e, "commission debit failed; hand not started");
                        self.abandon_start(ledger, hand_id).await;
                        return;
                    }
                }
            } else {
                match self.ctx.desk.balance(&account).await {
                    Ok(b) if b < min_stake => {
                        self.kick_broke(&id, b);
                        continue;
                    }
                    Ok(b) => b,
                    Err(e) => {
                        inc(&self.ctx.metrics.chip_errors);
                        tracing::warn!(room = %self.cfg.id, error = %e, "balance check failed; player skips this hand");
                        continue;
                    }
                }
            };
            if let Some(p) = self.players.get_mut(&id) {
                p.balance = balance;
            }
            // Games bound the stacks they accept (exact arithmetic below 2^53).
            seated.push((id, account, Chips(balance.0.min(MAX_HAND_STAKE))));
        }
        if seated.len() < usize::from(self.cfg.min_players) {
            self.abandon_start(ledger, hand_id).await;
            return;
        }
        let seats: Vec<HandSeat> = seated
            .iter()
            .filter_map(|(id, _, b)| {
                self.players.get(id).map(|p| HandSeat {
                    id: *id,
                    encryption_key: p.encryption_key,
                    balance: *b,
                    key: p.key.clone(),
                })
            })
            .collect();
        let prepared = Hand::prepare(
            self.spec.clone(),
            self.ctx.dealer.clone(),
            seats,
            self.memory.clone(),
            hand_number,
            hand_id,
            &mut self.rng,
        );
        let (hand, env) = match prepared {
            Ok(x) => x,
            Err(e) => {
                tracing::error!(room = %self.cfg.id, error = %e, "cannot prepare a hand");
                self.abandon_start(ledger, hand_id).await;
                return;
            }
        };
        inc(&self.ctx.metrics.hands_started);
        let seed_deadline = hand.collecting_seeds().then(|| Instant::now() + self.cfg.seed_timeout);
        tracing::debug!(room = %self.cfg.id, hand = %hand_id, hand_number, players = seated.len(), "hand prepared");
        self.hand = Some(ActiveHand {
            hand,
            ledger: Some(ledger),
            players: seated.iter().map(|s| s.0).collect(),
            accounts: seated.into_iter().map(|s| s.1).collect(),
            commission_total,
            seed_deadline,
            action: None,
        });
        self.broadcast(&[env]);
        if seed_deadline.is_none() {
            self.start_dealing().await;
        }
    }

    fn kick_broke(&mut self, id: &PlayerId, balance: Chips) {
        tracing::info!(room = %self.cfg.id, player = %id.short(), %balance, "cannot cover the minimum: kicked");
        self.send(
            id,
            &ServerMessage::Kicked(claw_protocol::messages::Kicked {
                code: KickReason::InsufficientBalance,
                reason: format!("balance {balance} cannot cover this room's minimum {}", self.min_balance()),
            }),
        );
        self.remove_player(id, true);
    }

    /// A hand that could not start: refund what was taken, try later.
    async fn abandon_start(&mut self, ledger: HandLedger, hand_id: HandId) {
        if let Err(e) = ledger.void(&self.ctx.desk).await {
            tracing::error!(room = %self.cfg.id, hand = %hand_id, error = %e, "refund of an unstarted hand failed");
        }
        self.phase = RoomPhase::Waiting;
        self.next_hand_at = Some(Instant::now() + self.cfg.between_hands.max(RETRY_BACKOFF));
    }

    /// A seat's shuffle seed.
    pub(super) async fn player_seed(&mut self, id: &PlayerId, s: PlayerSeed) {
        let Some(h) = self.hand.as_mut() else {
            return self.error_to(id, ErrorCode::BadSeed, "no hand is being prepared");
        };
        let Some(seat) = h.hand.seat_of(id) else {
            return self.error_to(id, ErrorCode::BadSeed, "you are not in this hand");
        };
        if let Err(e) = h.hand.add_seed(seat, &s) {
            // Refused seeds draw on the rate limit.
            let _ = self.take_token(id, Instant::now());
            return self.error_to(id, ErrorCode::BadSeed, e.to_string());
        }
        if h.hand.seeds_complete() {
            self.start_dealing().await;
        }
    }

    /// Shuffle, commit, start actions, first deals.
    pub(super) async fn start_dealing(&mut self) {
        let Some(h) = self.hand.as_mut() else { return };
        if h.hand.started() {
            return;
        }
        h.seed_deadline = None;
        match h.hand.start(&mut self.rng) {
            Ok(step) => self.drive(step, Origin::Start).await,
            Err(e) => self.void_hand(&format!("the game could not start: {e}")).await,
        }
    }

    /// A player's signed action.
    pub(super) async fn player_action(&mut self, id: &PlayerId, signed: SignedAction, at: Instant) {
        let (hand_id, seq) = (signed.hand_id, signed.seq);
        let Some(h) = self.hand.as_mut() else {
            let r = ActionRejected {
                hand_id,
                seq,
                code: ActionRejectCode::NotInHand,
                reason: "no hand is running".into(),
            };
            return self.send(id, &ServerMessage::ActionRejected(r));
        };
        match h.hand.act(id, signed) {
            Ok(step) => {
                h.action = None;
                self.drive(step, Origin::Player { id: *id, hand_id, seq, at }).await;
            }
            Err(r) => {
                inc(&self.ctx.metrics.actions_rejected);
                // Refused actions draw on the rate limit.
                let _ = self.take_token(id, at);
                let msg = ActionRejected { hand_id, seq, code: r.code, reason: r.reason };
                self.send(id, &ServerMessage::ActionRejected(msg));
            }
        }
    }

    /// The seat's timer ran out (or it left): the game's auto action.
    pub(super) async fn timeout_action(&mut self, seat: Seat) {
        let reason = {
            let Some(h) = self.hand.as_ref() else { return };
            match h.players.get(seat.index()).and_then(|id| self.players.get(id)) {
                Some(p) if p.left => "left",
                Some(p) if p.conn.is_none() => "disconnected",
                None => "left",
                _ => "timeout",
            }
        };
        let Some(h) = self.hand.as_mut() else { return };
        h.action = None;
        inc(&self.ctx.metrics.timeouts);
        match h.hand.auto_act(seat, reason) {
            Ok(step) => self.drive(step, Origin::Auto).await,
            Err(e) => self.void_hand(&format!("auto action failed: {e}")).await,
        }
    }

    /// Runs a step and what follows it: while the next player to act has
    /// left the room, acts for it at once.
    async fn drive(&mut self, step: Step, origin: Origin) {
        let mut next = self.process_step(step, origin).await;
        while let Some(seat) = next {
            let Some(h) = self.hand.as_mut() else { return };
            h.action = None;
            inc(&self.ctx.metrics.timeouts);
            match h.hand.auto_act(seat, "left") {
                Ok(step) => next = self.process_step(step, Origin::Auto).await,
                Err(e) => {
                    self.void_hand(&format!("auto action failed: {e}")).await;
                    return;
                }
            }
        }
    }

    /// Does a step's chip moves, then publishes it (or undoes it). Returns
    /// the next seat to act when that player has left the room.
    async fn process_step(&mut self, step: Step, origin: Origin) -> Option<Seat> {
        let mark = self.hand.as_ref().and_then(|h| h.ledger.as_ref()).map_or(0, HandLedger::mark);
        match self.execute_moves(&step).await {
            Ok(()) => {}
            Err(StepFail::Refused(reason)) => {
                if let Origin::Player { id, hand_id, seq, .. } = origin {
                    let undone = match self.hand.as_mut() {
                        Some(h) => {
                            let desk = self.ctx.desk.clone();
                            let undo = match h.ledger.as_mut() {
                                Some(l) => l.undo_since(&desk, mark).await,
                                None => Ok(()),
                            };
                            undo.is_ok() && h.hand.rollback().is_ok()
                        }
                        None => false,
                    };
                    if !undone {
                        self.void_hand("could not undo a refused action").await;
                        return None;
                    }
                    inc(&self.ctx.metrics.actions_rejected);
                    let r = ActionRejected {
                        hand_id,
                        seq,
                        code: ActionRejectCode::BadAmount,
                        reason: format!("the chip service refused the debit: {reason}"),
                    };
                    self.send(&id, &ServerMessage::ActionRejected(r));
                    // Still this player's turn, with a fresh timer.
                    self.set_turn_again();
                    return None;
                }
                self.void_hand(&format!("a chip debit was refused: {reason}")).await;
                return None;
            }
            Err(StepFail::Void(reason)) => {
                self.void_hand(&format!("chip service failure: {reason}")).await;
                return None;
            }
        }
        let deadline = Instant::now() + self.cfg.action_timeout;
        let deadline_ms = unix_ms() + u64::try_from(self.cfg.action_timeout.as_millis()).unwrap_or(u64::MAX);
        let committed = match self.hand.as_mut() {
            Some(h) => h.hand.commit(&mut self.rng, deadline_ms),
            None => return None,
        };
        let c = match committed {
            Ok(c) => c,
            Err(e) => {
                self.void_hand(&format!("engine: {e}")).await;
                return None;
            }
        };
        self.broadcast(&c.events);
        if let Origin::Player { at, .. } = origin {
            inc(&self.ctx.metrics.actions_accepted);
            self.ctx.metrics.observe_action(at.elapsed());
        }
        if let Some(end) = c.end {
            self.finish_hand(end).await;
            return None;
        }
        let turn = c.your_turn?;
        let seat = turn.seat;
        let h = self.hand.as_mut()?;
        h.action = Some(Turn { seat, deadline, deadline_ms });
        let actor = *h.players.get(seat.index())?;
        if self.players.get(&actor).is_none_or(|p| p.left) {
            return Some(seat);
        }
        self.send(&actor, &ServerMessage::YourTurn(turn));
        None
    }

    /// After a refused action: the same player's turn again.
    fn set_turn_again(&mut self) {
        let Some(h) = self.hand.as_mut() else { return };
        let Some(seat) = h.hand.to_act() else { return };
        let deadline = Instant::now() + self.cfg.action_timeout;
        let deadline_ms = unix_ms() + u64::try_from(self.cfg.action_timeout.as_millis()).unwrap_or(u64::MAX);
        h.action = Some(Turn { seat, deadline, deadline_ms });
        let turn = h.hand.your_turn(seat, deadline_ms);
        if let Some(id) = h.players.get(seat.index()).copied() {
            self.send(&id, &ServerMessage::YourTurn(turn));
        }
    }

    async fn execute_moves(&mut self, step: &Step) -> Result<(), StepFail> {
        let Some(h) = self.hand.as_mut() else { return Err(StepFail::Void("no hand".into())) };
        let Some(ledger) = h.ledger.as_mut() else { return Err(StepFail::Void("no ledger".into())) };
        for m in &step.moves {
            let (account, player) = match m.party {
                Party::Seat(s) => match (h.accounts.get(s.index()), h.players.get(s.index())) {
                    (Some(a), Some(p)) => (a, Some(*p)),
                    _ => return Err(StepFail::Void(format!("chip move for missing {s}"))),
                },
                Party::House => (&self.house, None),
            };
            match ledger.run(&self.ctx.desk, m.kind, account, m.amount, &m.reason).await {
                Ok(balance) => {
                    if let Some(p) = player.and_then(|p| self.players.get_mut(&p)) {
                        p.balance = balance;
                    }
                }
                Err(LedgerError::Chip(e)) if !e.is_retryable() && m.kind == ChipOpKind::Debit => {
                    inc(&self.ctx.metrics.chip_errors);
                    return Err(StepFail::Refused(e.to_string()));
                }
                Err(e) => {
                    inc(&self.ctx.metrics.chip_errors);
                    return Err(StepFail::Void(e.to_string()));
                }
            }
        }
        Ok(())
    }

    /// Settles a finished hand: commission and rake to the dealer, the
    /// conservation check, the archive, then the pause between hands.
    async fn finish_hand(&mut self, end: HandEnd) {
        let Some(mut h) = self.hand.take() else { return };
        self.phase = RoomPhase::Settling;
        let hand_id = h.hand.hand_id();
        let hand_number = h.hand.hand_number();
        if let Some(mut ledger) = h.ledger.take() {
            if let Err(e) = ledger.mark_complete() {
                tracing::error!(room = %self.cfg.id, hand = %hand_id, error = %e, "chip journal");
            }
            let fee = Chips(h.commission_total.0.saturating_add(end.result.rake.0));
            if fee.0 > 0 {
                let dealer = self.ctx.desk.dealer_account.clone();
                if let Err(e) =
                    ledger.run(&self.ctx.desk, ChipOpKind::Credit, &dealer, fee, "commission and rake").await
                {
                    inc(&self.ctx.metrics.chip_errors);
                    tracing::error!(room = %self.cfg.id, hand = %hand_id, error = %e,
                        "dealer credit failed; the journal stays open and a restart completes it");
                }
            }
            if !ledger.has_uncertain() {
                match ledger.close_settled() {
                    Ok(t) => {
                        tracing::debug!(room = %self.cfg.id, hand = %hand_id, debits = t.debits, credits = t.credits, "hand settled, chips conserved")
                    }
                    Err(e) => {
                        inc(&self.ctx.metrics.chip_errors);
                        tracing::error!(room = %self.cfg.id, hand = %hand_id, error = %e, "chip conservation check failed");
                    }
                }
            }
        }
        let transcript = match &self.archive {
            Some(a) => match a.write(hand_number, h.hand.transcript()) {
                Ok(p) => Some(p),
                Err(e) => {
                    tracing::error!(room = %self.cfg.id, hand = %hand_id, error = %e, "archive write failed");
                    None
                }
            },
            None => None,
        };
        inc(&self.ctx.metrics.hands_finished);
        self.hands_played += 1;
        self.memory = end.memory_after.clone();
        let winners = end.result.winners.iter().filter_map(|s| h.players.get(s.index()).copied()).collect();
        tracing::info!(room = %self.cfg.id, hand = %hand_id, hand_number, summary = %end.result.summary, "hand finished");
        let _ = self.ctx.events.send(RoomEvent::HandFinished {
            room: self.cfg.id.clone(),
            hand_number,
            hand_id,
            summary: end.result.summary.clone(),
            players: h.players.clone(),
            net: end.result.net.clone(),
            winners,
            transcript,
        });
        if end.reveal_pending {
            let at = self.cfg.reveal_delay.map(|d| Instant::now() + d);
            self.deferred.push(DeferredHand { hand: h.hand, players: h.players, at });
        }
        self.after_hand();
    }

    /// Voids the running hand: every chip it moved goes back, the players
    /// are told, the next hand is scheduled.
    pub(super) async fn void_hand(&mut self, reason: &str) {
        let Some(mut h) = self.hand.take() else { return };
        let hand_id = h.hand.hand_id();
        tracing::warn!(room = %self.cfg.id, hand = %hand_id, reason, "voiding the hand");
        if let Some(ledger) = h.ledger.take() {
            match ledger.void(&self.ctx.desk).await {
                Ok(t) => {
                    tracing::info!(room = %self.cfg.id, hand = %hand_id, refunded = t.credits, "hand refunded")
                }
                Err(e) => tracing::error!(room = %self.cfg.id, hand = %hand_id, error = %e,
                    "refund incomplete; the chip journal stays open and a restart finishes it"),
            }
        }
        if let Some(a) = &self.archive {
            let dir = a.dir().join("voided");
            let _ = std::fs::create_dir_all(&dir);
            if let Ok(text) = h.hand.transcript().to_jsonl() {
                let _ = std::fs::write(dir.join(format!("{hand_id}.jsonl")), text);
            }
        }
        inc(&self.ctx.metrics.hands_voided);
        self.hands_voided += 1;
        let msg = format!("hand {hand_id} voided ({reason}); every chip it moved was refunded");
        let frame = encode(&ServerMessage::Error(claw_protocol::messages::ErrorMsg {
            code: ErrorCode::Internal,
            message: msg,
        }));
        if let Some(f) = frame {
            for id in &h.players {
                self.send_frame(id, f.clone());
            }
        }
        let _ = self.ctx.events.send(RoomEvent::HandVoided {
            room: self.cfg.id.clone(),
            hand_id,
            reason: reason.to_owned(),
        });
        self.after_hand();
        self.next_hand_at = self.next_hand_at.map(|t| t.max(Instant::now() + RETRY_BACKOFF));
    }

    fn after_hand(&mut self) {
        // Players who left during the hand are gone now.
        let gone: Vec<PlayerId> =
            self.players.values().filter(|p| p.left && p.conn.is_none()).map(|p| p.id).collect();
        for id in gone {
            self.players.remove(&id);
        }
        if self.closing.is_some() {
            return;
        }
        if self.max_hands_reached() {
            self.begin_close(Duration::ZERO, None);
            return;
        }
        self.phase = RoomPhase::BetweenHands;
        self.next_hand_at = Some(Instant::now() + self.cfg.between_hands);
    }

    /// Publishes a deferred hand's `audit-reveal` to its players and appends
    /// it to the archived transcript.
    pub(super) fn publish_reveal(&mut self, mut d: DeferredHand) {
        match d.hand.audit_reveal() {
            Ok(Some(env)) => {
                if let Some(a) = &self.archive {
                    if let Err(e) = a.append(d.hand.hand_number(), &env) {
                        tracing::error!(room = %self.cfg.id, error = %e, "archive append failed");
                    }
                }
                if let Some(f) = encode(&ServerMessage::Event(env)) {
                    for id in &d.players {
                        self.send_frame(id, f.clone());
                    }
                }
            }
            Ok(None) => {}
            Err(e) => tracing::error!(room = %self.cfg.id, error = %e, "audit-reveal failed"),
        }
        let _ = &mut d;
    }

    /// Sends signed events to every player of the running hand.
    pub(super) fn broadcast(&mut self, events: &[EventEnvelope]) {
        let Some(h) = &self.hand else { return };
        let players = h.players.clone();
        let frames: Vec<Utf8Bytes> =
            events.iter().filter_map(|e| encode(&ServerMessage::Event(e.clone()))).collect();
        for id in &players {
            for f in &frames {
                self.send_frame(id, f.clone());
            }
        }
    }
}
