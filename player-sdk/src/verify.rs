//! Live verification: checks each dealer event the moment it arrives.
//!
//! Every check is the protocol's one hand verifier,
//! [`claw_protocol::audit::HandAudit`], fed each event as it arrives (the
//! chain on every event; a dealer signature where the player relies on it:
//! before it acts, see [`SessionVerifier::before_acting`], and at the hand's
//! end — one signature covers every event before it): chain, structure, seeds, Merkle
//! root, commission, deal order, opened cards (this player's sealed cards
//! are opened once, with the handshake's box key), and at `game-end` the
//! checks that need the whole hand (reveal, shuffle, leaves, action
//! signatures, the game replay). This module keeps only the player's view
//! ([`HandView`]: own cards, table, balance) and what only this player
//! knows: an action attributed to it must be one it signed. A failure is a
//! [`VerifyError`] naming the [`AuditCheck`]; it is never ignored.
//!
//! [`SessionVerifier`] follows the hands of one connection; it also
//! recognises events the dealer re-sends after a reconnect (identical
//! events are skipped, a different event under a seen sequence number is a
//! hash-chain failure: the dealer equivocated). It also binds this
//! player's hands to the handshake and to each other (SPEC.md §10.3,
//! §11.4): every `game-start` carries the room configuration the dealer
//! signed in the handshake (check `structure`), whose commission every seat
//! pays (check `commission`); a hand continues the last one this
//! connection saw end (check `previous-hand`); and this player's start
//! balance is the end of its previous hand in this session less that
//! commission (check `balances`).

use std::collections::VecDeque;
use std::sync::Arc;

use claw_games::audit::GamesReplayer;
use claw_protocol::audit::{
    Accepted, AnnouncedCard, AuditCheck, AuditError, AuditReport, HandAudit, HandLink, Viewer,
};
use claw_protocol::messages::{
    expected_start_balance, CardFace, ChipParty, DealTo, EventBody, HandPlayer, HandResult, RawJson,
    RevealPolicy,
};
use claw_protocol::transcript::{EventEnvelope, Transcript, TranscriptHeader};
use claw_protocol::{CardId, Chips, Digest, HandId, Identity, PlayerId, Seat, Seed, SharedKey};
use serde::Serialize;
use serde_json::Value;

use crate::node::NodeEvent;

/// A failed live check: which check, in which hand and event, and what.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, Serialize)]
#[error("hand {hand_id}: event {seq}: check {check} failed: {detail}")]
pub struct VerifyError {
    /// The check that failed (same names as the offline audit).
    pub check: AuditCheck,
    /// The hand.
    pub hand_id: HandId,
    /// The event's sequence number.
    pub seq: u64,
    /// What exactly.
    pub detail: String,
}

/// A card dealt in a deal event, as this player sees it: the card is
/// `None` (`null` in JSON) unless it is face up or sealed to this player.
/// The protocol's one definition ([`AnnouncedCard`]).
pub type SeenCard = AnnouncedCard;

/// What a verified event means for the player.
#[derive(Debug, Clone, PartialEq)]
pub enum Update {
    /// A verified event the node reports as it is: [`NodeEvent::HandPrepared`],
    /// `HandStarted`, `Dealt`, `Revealed`, `Transferred`, `Chips` or
    /// `ActionApplied`.
    Event(NodeEvent),
    /// The hand is over; the hand's audit finished (replay included).
    Ended {
        /// The hand.
        hand_id: HandId,
        /// The announced result.
        result: HandResult,
        /// The audit outcome.
        audit: Box<Result<AuditReport, AuditError>>,
    },
    /// Deferred secrets arrived; the hand's audit finished again, with them.
    AuditCompleted {
        /// The hand.
        hand_id: HandId,
        /// The audit outcome.
        audit: Box<Result<AuditReport, AuditError>>,
    },
}

/// The player's view of one hand, kept up to date by verified events.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HandView {
    /// The hand.
    pub hand_id: HandId,
    /// Hands dealt at the table before this one.
    pub hand_number: u64,
    /// The game (after `game-start`).
    pub game: String,
    /// This player's seat, if it plays this hand.
    pub seat: Option<Seat>,
    /// Players in seat order (after `game-start`).
    pub players: Vec<HandPlayer>,
    /// The game's normalised settings (after `game-start`; `null` before).
    pub settings: Arc<Value>,
    /// The table memory the hand started from (after `game-start`).
    pub memory: Arc<Value>,
    /// Every card dealt or transferred to this player, opened and checked,
    /// in the order received.
    pub my_cards: Vec<CardId>,
    /// The deck position of each of `my_cards`, in the same order (an action
    /// naming a position, like Guandan's tribute, needs it).
    pub my_positions: Vec<(u16, CardId)>,
    /// The cards this player holds: `my_cards`, plus the face-up cards the
    /// game gave it (a Dou Di Zhu landlord's kitty, once its public state
    /// names the landlord), minus the cards it played (`"cards"` of its
    /// actions) and the cards transferred away from it.
    pub hand: Vec<CardId>,
    /// Every card everyone can see: face-up deals and reveals, in order.
    pub table: Vec<SeenCard>,
    /// The game's public state after the last action (`null` before one).
    /// Shared, not copied, with the events that carry it: a view is cloned
    /// into the node's state after every event.
    pub public_state: Arc<Value>,
    /// This player's chips for the hand: start balance plus net movements.
    pub balance: Option<Chips>,
    /// Net chip movement of this player so far.
    pub net: i64,
    /// The result, once over.
    pub result: Option<HandResult>,
}

/// One hand being verified: the protocol's [`HandAudit`] runs every check;
/// the tracker keeps this player's view.
struct HandTracker {
    audit: HandAudit<'static>,
    envelopes: Vec<EventEnvelope>,
    hashes: Vec<Digest>,
    /// (seq, action JSON text, signature) of actions this player sent.
    my_actions: Vec<(u32, String, claw_protocol::Signature)>,
    view: HandView,
    played: Vec<CardId>,
    /// Where this player's previous hand left it (taken at `hand-prepare`).
    previous: Option<(Chips, i64)>,
    /// The game's rules (after `game-start`; none for a game not known here).
    game: Option<Arc<dyn claw_games::DynGame>>,
    /// Face-up cards the game gave this player (a landlord's kitty).
    joined: Vec<CardId>,
    failed: bool,
}

/// Verifies the events of one connection's hands, as they arrive.
pub struct SessionVerifier {
    dealer: PlayerId,
    room: String,
    me: Arc<Identity>,
    shared: SharedKey,
    dealer_encryption: claw_protocol::EncryptionKey,
    hands: VecDeque<(HandId, HandTracker)>,
    binding: Binding,
    /// Signatures verified in hands no longer kept.
    retired_signatures: u64,
}

/// What binds this player's hands in the room to the handshake and to
/// each other.
#[derive(Debug, Clone, Default)]
struct Binding {
    /// The room configuration the dealer signed in the handshake.
    room_config: Option<RawJson>,
    /// The last hand whose end this connection saw: the next hand must
    /// continue it (a reconnection forgets it: the room may have restarted).
    last_hand: Option<HandLink>,
    /// Start balance and net of this player's last finished hand, until
    /// the next hand it is dealt into takes it (a hand whose end it does not
    /// see, or a reconnection, leaves the next hand unbound: chips may have
    /// moved meanwhile).
    last: Option<(Chips, i64)>,
}

/// How many finished hands stay in memory (re-sent events). A hand whose
/// deferred reveal is still owed stays until it arrives, however old.
const KEEP_HANDS: usize = 8;

fn err(check: AuditCheck, hand_id: HandId, seq: u64, detail: impl Into<String>) -> VerifyError {
    VerifyError { check, hand_id, seq, detail: detail.into() }
}

impl SessionVerifier {
    /// A verifier for events signed by `dealer` in `room`, for player `me`,
    /// whose cards the dealer seals with `dealer_encryption` (from the
    /// handshake; `shared` is the box key of the two).
    pub fn new(
        dealer: PlayerId,
        room: impl Into<String>,
        me: Arc<Identity>,
        dealer_encryption: claw_protocol::EncryptionKey,
        shared: SharedKey,
    ) -> SessionVerifier {
        SessionVerifier {
            dealer,
            room: room.into(),
            me,
            shared,
            dealer_encryption,
            hands: VecDeque::new(),
            binding: Binding::default(),
            retired_signatures: 0,
        }
    }

    /// The room configuration the dealer signed in the handshake's
    /// challenge, exact text: every hand's `game-start` must carry exactly
    /// it (check `structure`), and every seat pay its commission (check
    /// `commission`).
    pub fn with_room_config(mut self, room_config: RawJson) -> SessionVerifier {
        self.binding.room_config = Some(room_config);
        self
    }

    /// The dealer key events are checked against.
    pub fn dealer(&self) -> PlayerId {
        self.dealer
    }

    /// After a reconnect: the new session's keys (the dealer key must be the same).
    pub fn rekey(&mut self, dealer_encryption: claw_protocol::EncryptionKey, shared: SharedKey) {
        self.dealer_encryption = dealer_encryption;
        self.shared = shared;
        // Whole hands may have been played for this seat while it was away,
        // and the room may have restarted.
        self.binding.last = None;
        self.binding.last_hand = None;
    }

    /// The dealer voided `hand` after its end (its settlement failed, SPEC.md
    /// §9.5): its chips were refunded and the room's next hand does not
    /// continue it, so its end binds nothing that follows.
    pub fn hand_voided(&mut self, hand: &HandId) {
        if self.binding.last_hand.as_ref().is_some_and(|l| l.hand_id == *hand) {
            self.binding.last_hand = None;
            self.binding.last = None;
        }
    }

    fn tracker(&mut self, hand: &HandId) -> Option<&mut HandTracker> {
        self.hands.iter_mut().find(|(h, _)| h == hand).map(|(_, t)| t)
    }

    /// A blind table's hole card this player opened itself (the others'
    /// published shares and its own, SPEC.md §9.7): into its hand's view.
    pub(crate) fn receive_blind_card(&mut self, hand: &HandId, position: u16, card: CardId) {
        if let Some(t) = self.tracker(hand) {
            if !t.view.my_positions.iter().any(|(p, _)| *p == position) {
                receive(&mut t.view, position, card);
            }
        }
    }

    /// Records the seed this player sent for `hand` (it must be published).
    pub fn set_my_seed(&mut self, hand: &HandId, seed: Seed) {
        if let Some(t) = self.tracker(hand) {
            t.audit.set_my_seed(seed);
        }
    }

    /// The seed this player sent for `hand`, if any.
    pub fn my_seed(&self, hand: &HandId) -> Option<Seed> {
        self.hands.iter().find(|(h, _)| h == hand).and_then(|(_, t)| t.audit.my_seed())
    }

    /// The connection dropped: a seed sent for a hand whose `game-start`
    /// has not come may not have reached the dealer in time.
    pub fn seeds_uncertain(&mut self) {
        for (_, t) in &mut self.hands {
            if t.audit.game_start().is_none() {
                t.audit.seed_uncertain();
            }
        }
    }

    /// Records an action this player signed, so that an `action-result`
    /// in its name can be compared with it.
    pub fn record_my_action(&mut self, hand: &HandId, seq: u32, action: &str, sig: claw_protocol::Signature) {
        if let Some(t) = self.tracker(hand) {
            t.my_actions.push((seq, action.to_owned(), sig));
        }
    }

    /// The current view of `hand`, if it is known.
    pub fn view(&self, hand: &HandId) -> Option<&HandView> {
        self.hands.iter().find(|(h, _)| h == hand).map(|(_, t)| &t.view)
    }

    /// The view of the most recent hand.
    pub fn current(&self) -> Option<&HandView> {
        self.hands.back().map(|(_, t)| &t.view)
    }

    /// The hand's transcript so far (with a header naming dealer and room).
    pub fn transcript(&self, hand: &HandId) -> Option<Transcript> {
        let (_, t) = self.hands.iter().find(|(h, _)| h == hand)?;
        Some(Transcript {
            header: Some(TranscriptHeader::new(self.dealer, self.room.clone(), *hand)),
            hand_id: *hand,
            events: t.envelopes.clone(),
        })
    }

    /// A `your-turn` for `hand` arrived: before the player acts on the hand,
    /// every event of it must be covered by a dealer signature, verified now
    /// unless it was already (one signature, SPEC.md §10.3). Unconfirmed
    /// events (the burst's last event unsigned) fail `dealer-signatures`.
    pub fn before_acting(&mut self, hand: &HandId) -> Result<(), VerifyError> {
        let Some(t) = self.tracker(hand) else { return Ok(()) };
        if t.failed {
            return Ok(());
        }
        let seq = t.audit.next_seq().saturating_sub(1);
        let r = t.audit.confirm().map_err(|e| err(e.check, *hand, seq, e.detail));
        if r.is_err() {
            t.failed = true;
        }
        r
    }

    /// Dealer signatures this session has verified, over all its hands (a
    /// live player verifies one per reliance point, SPEC.md §10.3).
    pub fn signatures_verified(&self) -> u64 {
        self.retired_signatures + self.hands.iter().map(|(_, t)| t.audit.signatures_verified()).sum::<u64>()
    }

    /// Checks one event. `Ok(None)`: an identical re-sent event, skipped.
    /// After a failure the hand is marked failed and its later events are
    /// skipped (the failure was reported once).
    pub fn on_event(&mut self, env: &EventEnvelope) -> Result<Option<Update>, VerifyError> {
        let hand_id = env.hand_id;
        if self.tracker(&hand_id).is_none() {
            if env.seq != 0 && is_audit_reveal(env) {
                // A hand this session never saw (played before a restart
                // of the player): nothing to check it against, nothing at stake.
                return Ok(None);
            }
            if env.seq != 0 {
                return Err(err(
                    AuditCheck::HashChain,
                    hand_id,
                    env.seq,
                    "first event seen of this hand is not seq 0",
                ));
            }
            let mut audit = HandAudit::live(self.dealer, hand_id)
                .with_viewer(Viewer::Session {
                    id: self.me.id(),
                    encryption_key: self.me.encryption_key(),
                    dealer_encryption_key: self.dealer_encryption,
                    shared: self.shared.clone(),
                })
                .with_room_id(self.room.clone());
            if let Some(c) = &self.binding.room_config {
                audit = audit.with_room_config(c.clone());
            }
            if let Some(prev) = &self.binding.last_hand {
                audit = audit.with_previous(prev.clone());
            }
            let tracker = HandTracker {
                audit,
                // Room for a typical hand's events without regrowing.
                envelopes: Vec::with_capacity(64),
                hashes: Vec::with_capacity(64),
                my_actions: Vec::new(),
                view: HandView {
                    hand_id,
                    hand_number: 0,
                    game: String::new(),
                    seat: None,
                    players: Vec::new(),
                    settings: Arc::new(Value::Null),
                    memory: Arc::new(Value::Null),
                    my_cards: Vec::new(),
                    my_positions: Vec::new(),
                    hand: Vec::new(),
                    table: Vec::new(),
                    public_state: Arc::new(Value::Null),
                    balance: None,
                    net: 0,
                    result: None,
                },
                played: Vec::new(),
                previous: None,
                game: None,
                joined: Vec::new(),
                failed: false,
            };
            self.hands.push_back((hand_id, tracker));
            // The oldest hands go first, except those whose reveal is owed.
            let mut over = self.hands.len().saturating_sub(KEEP_HANDS);
            let mut i = 0;
            while over > 0 && i + 1 < self.hands.len() {
                if self.hands[i].1.reveal_owed() {
                    i += 1;
                } else {
                    if let Some((_, t)) = self.hands.remove(i) {
                        self.retired_signatures += t.audit.signatures_verified();
                    }
                    over -= 1;
                }
            }
        }
        let me = self.me.id();
        let mut binding = std::mem::take(&mut self.binding);
        let res = match self.tracker(&hand_id) {
            Some(t) if !t.failed => {
                let res = t.accept(env, me, &mut binding);
                if res.is_err() {
                    t.failed = true;
                }
                res
            }
            _ => Ok(None),
        };
        self.binding = binding;
        res
    }
}

/// A card of this player's, dealt or transferred to it.
fn receive(view: &mut HandView, position: u16, card: CardId) {
    view.my_positions.push((position, card));
    view.my_cards.push(card);
    view.hand.push(card);
}

fn is_audit_reveal(env: &EventEnvelope) -> bool {
    matches!(env.decode_body(), Ok(EventBody::AuditReveal(_)))
}

impl HandTracker {
    /// Over, under policy `deferred`, and its `audit-reveal` not received.
    fn reveal_owed(&self) -> bool {
        self.audit.ended()
            && !self.failed
            && self.audit.reveal_policy() == Some(RevealPolicy::Deferred)
            && !self.audit.revealed()
    }

    fn accept(
        &mut self,
        env: &EventEnvelope,
        me: PlayerId,
        binding: &mut Binding,
    ) -> Result<Option<Update>, VerifyError> {
        let (hand_id, seq) = (env.hand_id, env.seq);
        if let Some(seen) = usize::try_from(seq).ok().and_then(|i| self.hashes.get(i)) {
            return if *seen == env.hash() {
                Ok(None)
            } else {
                Err(err(
                    AuditCheck::HashChain,
                    hand_id,
                    seq,
                    "the dealer sent two different events with this seq",
                ))
            };
        }
        let Accepted { body, mine, action } =
            self.audit.accept(env).map_err(|e| err(e.check, hand_id, seq, e.detail))?;
        self.envelopes.push(env.clone());
        self.hashes.push(self.audit.last_hash());
        let fail = |check: AuditCheck, d: String| Err(err(check, hand_id, seq, d));
        let opened = |position: u16| mine.iter().find(|o| o.position == position).map(|o| o.card);
        match body {
            EventBody::HandPrepare(p) => {
                let seat = p.players.iter().position(|id| *id == me).map(|i| Seat(i as u8));
                self.view.seat = seat;
                if seat.is_some() {
                    self.previous = binding.last.take();
                }
                self.view.hand_number = p.hand_number;
                Ok(Some(Update::Event(NodeEvent::HandPrepared {
                    hand_id,
                    hand_number: p.hand_number,
                    players: p.players,
                    seat,
                })))
            }
            EventBody::GameStart(g) => {
                if let (Some(seat), Some((balance, net))) = (self.view.seat, self.previous) {
                    let mine = &g.players[seat.index()];
                    if let Some(expected) = expected_start_balance(balance, net, mine.commission) {
                        if mine.balance != expected {
                            return fail(
                                AuditCheck::Balances,
                                format!(
                                    "my balance is {}: my last hand left me {balance} {net:+}, less commission {}, = {expected}",
                                    mine.balance, mine.commission
                                ),
                            );
                        }
                    }
                }
                let settings = self.audit.settings().cloned().unwrap_or(Value::Null);
                self.view.game = g.game.clone();
                self.game = claw_games::registry::get(&g.game).ok();
                self.view.players = g.players.clone();
                self.view.settings = Arc::new(settings.clone());
                self.view.memory = Arc::new(g.memory);
                self.view.balance = self.view.seat.map(|s| g.players[s.index()].balance);
                Ok(Some(Update::Event(NodeEvent::HandStarted {
                    hand_id,
                    game: g.game,
                    players: g.players,
                    seat: self.view.seat,
                    settings,
                })))
            }
            EventBody::PhaseDeal(d) | EventBody::NewCard(d) => {
                let mut seen = Vec::with_capacity(d.cards.len());
                let mut my_cards = Vec::new();
                for c in &d.cards {
                    let card = c.opening.map(|o| o.card).or_else(|| opened(c.position));
                    let s = SeenCard { position: c.position, target: c.target, face: c.face, card };
                    if let (DealTo::Player(p), Some(card)) = (c.target, card) {
                        if Some(p) == self.view.seat {
                            receive(&mut self.view, c.position, card);
                            my_cards.push(card);
                        }
                    }
                    if c.face == CardFace::Up {
                        self.view.table.push(s);
                    }
                    seen.push(s);
                }
                Ok(Some(Update::Event(NodeEvent::Dealt { hand_id, phase: d.phase, cards: seen, my_cards })))
            }
            EventBody::Reveal(r) => {
                for o in &r.openings {
                    self.view.table.push(SeenCard {
                        position: o.position,
                        target: DealTo::Community,
                        face: CardFace::Up,
                        card: Some(o.card),
                    });
                }
                Ok(Some(Update::Event(NodeEvent::Revealed { hand_id, cards: r.openings })))
            }
            EventBody::CardTransfer(x) => {
                let mut card = x.opening.map(|o| o.card).or_else(|| opened(x.position));
                if Some(x.from) == self.view.seat {
                    let given =
                        self.view.my_positions.iter().find(|(q, _)| *q == x.position).map(|(_, c)| *c);
                    if let Some(c) = given {
                        if let Some(i) = self.view.hand.iter().position(|h| *h == c) {
                            self.view.hand.remove(i);
                        }
                    }
                    card = card.or(given);
                }
                if let (true, Some(c)) = (Some(x.to) == self.view.seat, card) {
                    receive(&mut self.view, x.position, c);
                }
                Ok(Some(Update::Event(NodeEvent::Transferred {
                    hand_id,
                    position: x.position,
                    from: x.from,
                    to: x.to,
                    card,
                })))
            }
            EventBody::Chips(c) => {
                for m in &c.moves {
                    if matches!(m.party, ChipParty::Seat(s) if Some(s) == self.view.seat) {
                        let net = i128::from(self.view.net) + m.delta();
                        self.view.net =
                            i64::try_from(net).unwrap_or(if net < 0 { i64::MIN } else { i64::MAX });
                        self.view.balance = self.view.balance.map(|b| {
                            let after = i128::from(b.0) + m.delta();
                            Chips(u64::try_from(after.max(0)).unwrap_or(u64::MAX))
                        });
                    }
                }
                Ok(Some(Update::Event(NodeEvent::Chips { hand_id, moves: c.moves })))
            }
            EventBody::ActionResult(a) => {
                if Some(a.seat) == self.view.seat {
                    let mine = self.my_actions.iter().any(|(s, text, sig)| {
                        *s == a.seq && text.as_str() == a.action.as_str() && *sig == a.sig
                    });
                    if !mine {
                        return fail(
                            AuditCheck::ActionSignatures,
                            format!("action seq {} in my name is not one I signed: {}", a.seq, a.action),
                        );
                    }
                }
                let action = action.unwrap_or(Value::Null);
                if Some(a.seat) == self.view.seat {
                    self.note_played(&action);
                }
                self.view.public_state = Arc::clone(&a.public_state);
                self.join_public_cards();
                Ok(Some(Update::Event(NodeEvent::ActionApplied {
                    hand_id,
                    seat: a.seat,
                    action,
                    public_state: self.view.public_state.clone(),
                    timeout: None,
                })))
            }
            EventBody::TimeoutAction(a) => {
                if Some(a.seat) == self.view.seat {
                    self.note_played(&a.action);
                }
                self.view.public_state = Arc::clone(&a.public_state);
                self.join_public_cards();
                Ok(Some(Update::Event(NodeEvent::ActionApplied {
                    hand_id,
                    seat: a.seat,
                    action: a.action,
                    public_state: self.view.public_state.clone(),
                    timeout: Some(a.reason.to_string()),
                })))
            }
            EventBody::GameEnd(g) => {
                self.view.result = Some(g.result.clone());
                if let (Some(seat), Some(start)) = (self.view.seat, self.audit.game_start()) {
                    let net = g.result.net.get(seat.index()).copied().unwrap_or(0);
                    binding.last = Some((start.players[seat.index()].balance, net));
                }
                let deferred = self.audit.reveal_policy() == Some(RevealPolicy::Deferred);
                let audit = self.audit.finish(Some(&GamesReplayer::default()), deferred);
                if let Ok(r) = &audit {
                    binding.last_hand = Some(r.hand.link());
                }
                Ok(Some(Update::Ended { hand_id, result: g.result, audit: Box::new(audit) }))
            }
            EventBody::AuditReveal(_) => {
                let audit = self.audit.finish(Some(&GamesReplayer::default()), false);
                Ok(Some(Update::AuditCompleted { hand_id, audit: Box::new(audit) }))
            }
            // Blind tables (SPEC.md §9.7) are not played by the SDK yet: the
            // transcript audit refuses their events at `structure` above.
            // Blind tables (SPEC.md §9.7): checked by the audit above; the
            // node answers them (`crate::blind`).
            EventBody::BlindKeys(_)
            | EventBody::BlindShuffle(_)
            | EventBody::BlindSkip(_)
            | EventBody::BlindRequest(_)
            | EventBody::BlindShares(_)
            | EventBody::BlindReveal(_)
            | EventBody::BlindPieces(_)
            | EventBody::BlindComplaint(_)
            | EventBody::BlindRecover(_)
            | EventBody::BlindRecovery(_) => Ok(None),
        }
    }

    /// Adds to this player's hand, once, the face-up cards the game now
    /// gives it (a Dou Di Zhu landlord's kitty), as its public state says.
    fn join_public_cards(&mut self) {
        let (Some(game), Some(seat)) = (&self.game, self.view.seat) else { return };
        for c in game.public_cards_held(&self.view.public_state, seat) {
            if !self.joined.contains(&c) {
                self.joined.push(c);
                self.view.hand.push(c);
            }
        }
    }

    /// Drops from this player's hand the cards `action` played (the game's
    /// `cards_played`) and records them as played.
    fn note_played(&mut self, action: &Value) {
        let Some(game) = &self.game else { return };
        for c in game.cards_played(action) {
            if let Some(i) = self.view.hand.iter().position(|h| *h == c) {
                self.view.hand.remove(i);
            }
            self.played.push(c);
        }
    }
}
