//! Live verification: checks each dealer event the moment it arrives.
//!
//! Per event: the hand id, sequence number, hash chain and dealer signature
//! ([`TranscriptVerifier`]). Per body: `game-start` must match
//! `hand-prepare`, commit to a Merkle root that is the root of its leaves
//! and carry this player's seed; every dealt position must be the next one;
//! every face-up or revealed card must open its leaf; every card sealed to
//! this player is opened at once and checked against its leaf; a card
//! transfer must move a card its giver holds (and the player's hand view
//! follows it); an action
//! attributed to this player must be one it signed. At `game-end` the full
//! [`Auditor`] runs on the hand's transcript (shuffle, every leaf, seeds,
//! action signatures, game replay). A failure is a [`VerifyError`] naming
//! the [`AuditCheck`]; it is never ignored.
//!
//! [`SessionVerifier`] follows the hands of one connection; it also
//! recognises events the dealer re-sends after a reconnect (identical
//! events are skipped, a different event under a seen sequence number is a
//! hash-chain failure: the dealer equivocated). It also binds this
//! player's hands to each other (SPEC.md §11.4): its `game-start`
//! commission must be the one of the room configuration the dealer signed
//! in the handshake (check `commission`), and its start balance the end of
//! its previous hand in this session less that commission (check `balances`).

use std::collections::VecDeque;
use std::sync::Arc;

use claw_protocol::audit::{AuditCheck, AuditError, AuditReport};
use claw_protocol::messages::{
    config_hash, expected_start_balance, CardFace, ChipMove, ChipOp, ChipParty, DealTo, EventBody, GameStart,
    HandPlayer, HandPrepare, HandResult, RevealPolicy,
};
use claw_protocol::transcript::{EventEnvelope, Transcript, TranscriptHeader, TranscriptVerifier};
use claw_protocol::{
    merkle_root, CardId, CardOpening, Chips, Digest, HandId, Identity, PlayerId, Seat, Seed, SharedKey,
};
use serde::Serialize;
use serde_json::Value;

use crate::audit::Auditor;

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

/// A card dealt in a deal event, as this player sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct SeenCard {
    /// Deck position.
    pub position: u16,
    /// Who got it.
    pub target: DealTo,
    /// Up or down.
    pub face: CardFace,
    /// The card, when this player can see it (face up, or sealed to it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub card: Option<CardId>,
}

/// What a verified event means for the player.
#[derive(Debug, Clone, PartialEq)]
pub enum Update {
    /// A hand is being prepared; the player should send its seed.
    Prepared {
        /// The hand.
        hand_id: HandId,
        /// Hands dealt at the table before this one.
        hand_number: u64,
        /// The players, in seat order.
        players: Vec<PlayerId>,
        /// The seat concerned.
        seat: Option<Seat>,
    },
    /// The deck is committed; the hand starts.
    Started {
        /// The hand.
        hand_id: HandId,
        /// Registry name of the game.
        game: String,
        /// The players, in seat order.
        players: Vec<HandPlayer>,
        /// The seat concerned.
        seat: Option<Seat>,
        /// The game's settings.
        settings: Value,
    },
    /// Cards were dealt (own sealed cards opened and checked).
    Dealt {
        /// The hand.
        hand_id: HandId,
        /// The game's phase name.
        phase: String,
        /// The cards.
        cards: Vec<SeenCard>,
    },
    /// Face-down cards were opened to everyone.
    Revealed {
        /// The hand.
        hand_id: HandId,
        /// The cards.
        cards: Vec<CardOpening>,
    },
    /// A dealt card moved from one player to another (tribute, return).
    Transferred {
        /// The hand.
        hand_id: HandId,
        /// The deck position.
        position: u16,
        /// The giver.
        from: Seat,
        /// The receiver.
        to: Seat,
        /// The card, when this player can see it (face up, given or received).
        card: Option<CardId>,
    },
    /// Chips moved.
    Chips {
        /// The hand.
        hand_id: HandId,
        /// The chip movements, in order.
        moves: Vec<ChipMove>,
    },
    /// An action was applied (by a player, or by the dealer on a timeout).
    Action {
        /// The hand.
        hand_id: HandId,
        /// The seat concerned.
        seat: Seat,
        /// The game action.
        action: Value,
        /// The game's public state.
        public_state: Value,
        /// Why the dealer acted for the seat, when it did.
        timeout: Option<String>,
    },
    /// The hand is over; the full audit ran on its transcript.
    Ended {
        /// The hand.
        hand_id: HandId,
        /// The announced result.
        result: HandResult,
        /// The audit outcome.
        audit: Box<Result<AuditReport, AuditError>>,
    },
    /// Deferred secrets arrived; the full audit ran again.
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
    pub settings: Value,
    /// The table memory the hand started from (after `game-start`).
    pub memory: Value,
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
    pub public_state: Value,
    /// This player's chips for the hand: start balance plus net movements.
    pub balance: Option<Chips>,
    /// Net chip movement of this player so far.
    pub net: i64,
    /// The result, once over.
    pub result: Option<HandResult>,
}

/// One hand being verified.
struct HandTracker {
    chain: TranscriptVerifier,
    envelopes: Vec<EventEnvelope>,
    hashes: Vec<Digest>,
    prepare: Option<HandPrepare>,
    start: Option<GameStart>,
    my_seed: Option<Seed>,
    /// (seq, action JSON text, signature) of actions this player sent.
    my_actions: Vec<(u32, String, claw_protocol::Signature)>,
    faces: Vec<CardFace>,
    /// The seat holding each dealt position (None: not a player's card).
    holders: Vec<Option<Seat>>,
    view: HandView,
    played: Vec<CardId>,
    /// Where this player's previous hand left it (taken at `hand-prepare`).
    previous: Option<(Chips, i64)>,
    /// The game's rules (after `game-start`; none for a game not known here).
    game: Option<Arc<dyn claw_games::DynGame>>,
    /// Face-up cards the game gave this player (a landlord's kitty).
    joined: Vec<CardId>,
    ended: bool,
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
}

/// What binds this player's hands in the room to each other.
#[derive(Debug, Clone, Copy, Default)]
struct Binding {
    /// The room's commission, from the signed room configuration.
    commission: Option<Chips>,
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
        }
    }

    /// The room's commission per player per hand, as the room configuration
    /// the dealer signed in the handshake states it: every hand's
    /// `game-start` must announce exactly it (check `commission`).
    pub fn with_room_commission(mut self, commission: Chips) -> SessionVerifier {
        self.binding.commission = Some(commission);
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
        // Whole hands may have been played for this seat while it was away.
        self.binding.last = None;
    }

    fn tracker(&mut self, hand: &HandId) -> Option<&mut HandTracker> {
        self.hands.iter_mut().find(|(h, _)| h == hand).map(|(_, t)| t)
    }

    /// Records the seed this player sent for `hand` (it must be published).
    pub fn set_my_seed(&mut self, hand: &HandId, seed: Seed) {
        if let Some(t) = self.tracker(hand) {
            t.my_seed = Some(seed);
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
            let tracker = HandTracker {
                chain: TranscriptVerifier::for_hand(self.dealer, hand_id),
                envelopes: Vec::new(),
                hashes: Vec::new(),
                prepare: None,
                start: None,
                my_seed: None,
                my_actions: Vec::new(),
                faces: Vec::new(),
                holders: Vec::new(),
                view: HandView {
                    hand_id,
                    hand_number: 0,
                    game: String::new(),
                    seat: None,
                    players: Vec::new(),
                    settings: Value::Null,
                    memory: Value::Null,
                    my_cards: Vec::new(),
                    my_positions: Vec::new(),
                    hand: Vec::new(),
                    table: Vec::new(),
                    public_state: Value::Null,
                    balance: None,
                    net: 0,
                    result: None,
                },
                played: Vec::new(),
                previous: None,
                game: None,
                joined: Vec::new(),
                ended: false,
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
                    self.hands.remove(i);
                    over -= 1;
                }
            }
        }
        let me = Arc::clone(&self.me);
        let (dealer, room, dealer_encryption) = (self.dealer, self.room.clone(), self.dealer_encryption);
        let shared = self.shared.clone();
        let mut binding = self.binding;
        let Some(t) = self.tracker(&hand_id) else { return Ok(None) };
        if t.failed {
            return Ok(None);
        }
        let ctx = Ctx { me: &me, dealer, room: &room, dealer_encryption, shared: &shared };
        let res = t.accept(env, ctx, &mut binding);
        if res.is_err() {
            t.failed = true;
        }
        self.binding = binding;
        res
    }
}

/// The session's keys and names an event is checked with.
#[derive(Clone, Copy)]
struct Ctx<'a> {
    me: &'a Identity,
    dealer: PlayerId,
    room: &'a str,
    dealer_encryption: claw_protocol::EncryptionKey,
    shared: &'a SharedKey,
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
        self.ended
            && !self.failed
            && self.start.as_ref().is_some_and(|s| s.reveal == RevealPolicy::Deferred)
            && !self.envelopes.last().is_some_and(is_audit_reveal)
    }

    fn accept(
        &mut self,
        env: &EventEnvelope,
        ctx: Ctx<'_>,
        binding: &mut Binding,
    ) -> Result<Option<Update>, VerifyError> {
        let Ctx { me, dealer, room, dealer_encryption, shared } = ctx;
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
        let body = self.chain.accept(env).map_err(|e| err(e.check(), hand_id, seq, e.to_string()))?;
        self.envelopes.push(env.clone());
        self.hashes.push(self.chain.last_hash());
        let fail = |check: AuditCheck, d: String| Err(err(check, hand_id, seq, d));
        let structure = |d: &str| err(AuditCheck::Structure, hand_id, seq, d);
        if self.ended && !matches!(body, EventBody::AuditReveal(_)) {
            return fail(AuditCheck::Structure, format!("{} after game-end", body.type_name()));
        }
        match body {
            EventBody::HandPrepare(p) => {
                if seq != 0 {
                    return fail(AuditCheck::Structure, "hand-prepare must be the first event".into());
                }
                let seat = p.players.iter().position(|id| *id == me.id()).map(|i| Seat(i as u8));
                self.view.seat = seat;
                if seat.is_some() {
                    self.previous = binding.last.take();
                }
                self.view.hand_number = p.hand_number;
                let update = Update::Prepared {
                    hand_id,
                    hand_number: p.hand_number,
                    players: p.players.clone(),
                    seat,
                };
                self.prepare = Some(p);
                Ok(Some(update))
            }
            EventBody::GameStart(g) => {
                let p = self.prepare.as_ref().ok_or_else(|| structure("game-start before hand-prepare"))?;
                if self.start.is_some() {
                    return fail(AuditCheck::Structure, "second game-start".into());
                }
                let ids: Vec<PlayerId> = g.players.iter().map(|p| p.id).collect();
                if ids != p.players || g.players.iter().enumerate().any(|(i, p)| p.seat.index() != i) {
                    return fail(
                        AuditCheck::Structure,
                        "game-start players differ from hand-prepare's".into(),
                    );
                }
                if g.entropy != p.entropy {
                    return fail(AuditCheck::Structure, "entropy mode differs from hand-prepare's".into());
                }
                if config_hash(&g.game, &g.game_version, &g.settings) != g.config_hash {
                    return fail(AuditCheck::Structure, "config hash does not match the settings".into());
                }
                if g.deck.len() != g.leaves.len() || g.leaves.is_empty() {
                    return fail(
                        AuditCheck::Structure,
                        format!("{} leaves for {} cards", g.leaves.len(), g.deck.len()),
                    );
                }
                if let Some(seat) = self.view.seat {
                    if g.players[seat.index()].encryption_key != me.encryption_key() {
                        return fail(
                            AuditCheck::Structure,
                            "game-start lists another encryption key for me".into(),
                        );
                    }
                    if g.dealer_encryption_key != dealer_encryption {
                        return fail(
                            AuditCheck::Structure,
                            "dealer encryption key differs from the handshake's".into(),
                        );
                    }
                    let mine = &g.players[seat.index()];
                    if let Some(c) = binding.commission.filter(|c| *c != mine.commission) {
                        return fail(
                            AuditCheck::Commission,
                            format!("my commission is {}, the room's is {c}", mine.commission),
                        );
                    }
                    if let Some((balance, net)) = self.previous {
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
                }
                if merkle_root(&g.leaves) != g.root {
                    return fail(AuditCheck::MerkleRoot, "root is not the Merkle root of the leaves".into());
                }
                if let (Some(seat), Some(mine)) = (self.view.seat, self.my_seed) {
                    if g.entropy == claw_protocol::messages::EntropyMode::Joint {
                        match g.player_seeds.iter().find(|s| s.seat == seat) {
                            Some(s) if s.seed == mine => {}
                            Some(_) => return fail(AuditCheck::PlayerSeeds, "my seed was replaced".into()),
                            None => return fail(AuditCheck::PlayerSeeds, "my seed is missing".into()),
                        }
                    }
                }
                let settings = g.settings.to_value().map_err(|e| structure(&format!("settings: {e}")))?;
                self.view.game = g.game.clone();
                self.game = claw_games::registry::get(&g.game).ok();
                self.view.players = g.players.clone();
                self.view.settings = settings.clone();
                self.view.memory = g.memory.clone();
                self.view.balance = self.view.seat.map(|s| g.players[s.index()].balance);
                let update = Update::Started {
                    hand_id,
                    game: g.game.clone(),
                    players: g.players.clone(),
                    seat: self.view.seat,
                    settings,
                };
                self.start = Some(g);
                Ok(Some(update))
            }
            EventBody::PhaseDeal(d) | EventBody::NewCard(d) => {
                let start = self.start.as_ref().ok_or_else(|| structure("deal before game-start"))?;
                let mut seen = Vec::with_capacity(d.cards.len());
                for c in &d.cards {
                    let next = self.faces.len();
                    if usize::from(c.position) != next {
                        return fail(
                            AuditCheck::DealOrder,
                            format!("dealt position {}, expected {next}", c.position),
                        );
                    }
                    let Some(leaf) = start.leaves.get(next) else {
                        return fail(AuditCheck::DealOrder, format!("position {next} beyond the deck"));
                    };
                    let mut card = None;
                    match (c.face, &c.opening, &c.sealed) {
                        (CardFace::Up, Some(o), None) => {
                            if o.position != c.position || !o.matches(&hand_id, leaf) {
                                return fail(
                                    AuditCheck::OpenedCards,
                                    format!(
                                        "face-up card at position {} does not match its leaf",
                                        c.position
                                    ),
                                );
                            }
                            card = Some(o.card);
                        }
                        (CardFace::Down, None, sealed) => {
                            let mine = matches!(c.target, DealTo::Player(s) if Some(s) == self.view.seat);
                            if sealed.is_some() != matches!(c.target, DealTo::Player(_)) {
                                return fail(
                                    AuditCheck::Structure,
                                    format!("position {}: sealed box does not fit the target", c.position),
                                );
                            }
                            if let (true, Some(sealed)) = (mine, sealed) {
                                let o = shared.open(&hand_id, sealed).map_err(|e| {
                                    err(
                                        AuditCheck::OpenedCards,
                                        hand_id,
                                        seq,
                                        format!("my card at {}: {e}", c.position),
                                    )
                                })?;
                                if o.position != c.position || !o.matches(&hand_id, leaf) {
                                    return fail(
                                        AuditCheck::OpenedCards,
                                        format!(
                                            "my sealed card at position {} ({}) does not match its leaf",
                                            c.position, o.card
                                        ),
                                    );
                                }
                                card = Some(o.card);
                                receive(&mut self.view, c.position, o.card);
                            }
                        }
                        _ => {
                            return fail(
                                AuditCheck::Structure,
                                format!("position {}: opening/sealed box do not fit the face", c.position),
                            )
                        }
                    }
                    self.faces.push(c.face);
                    self.holders.push(match c.target {
                        DealTo::Player(s) => Some(s),
                        _ => None,
                    });
                    let s = SeenCard { position: c.position, target: c.target, face: c.face, card };
                    if c.face == CardFace::Up {
                        if let (DealTo::Player(p), Some(card)) = (c.target, card) {
                            if Some(p) == self.view.seat {
                                receive(&mut self.view, c.position, card);
                            }
                        }
                        self.view.table.push(s);
                    }
                    seen.push(s);
                }
                Ok(Some(Update::Dealt { hand_id, phase: d.phase, cards: seen }))
            }
            EventBody::Reveal(r) => {
                let start = self.start.as_ref().ok_or_else(|| structure("reveal before game-start"))?;
                for o in &r.openings {
                    let i = usize::from(o.position);
                    match self.faces.get(i) {
                        Some(CardFace::Down) => self.faces[i] = CardFace::Up,
                        Some(CardFace::Up) => {
                            return fail(AuditCheck::DealOrder, format!("reveal of face-up position {i}"))
                        }
                        None => {
                            return fail(AuditCheck::DealOrder, format!("reveal of undealt position {i}"))
                        }
                    }
                    if !start.leaves.get(i).is_some_and(|l| o.matches(&hand_id, l)) {
                        return fail(
                            AuditCheck::OpenedCards,
                            format!("revealed card at position {i} ({}) does not match its leaf", o.card),
                        );
                    }
                    self.view.table.push(SeenCard {
                        position: o.position,
                        target: DealTo::Community,
                        face: CardFace::Up,
                        card: Some(o.card),
                    });
                }
                Ok(Some(Update::Revealed { hand_id, cards: r.openings }))
            }
            EventBody::CardTransfer(x) => {
                let start =
                    self.start.as_ref().ok_or_else(|| structure("card transfer before game-start"))?;
                let n = start.players.len();
                if x.from.index() >= n || x.to.index() >= n || x.from == x.to {
                    return fail(
                        AuditCheck::Structure,
                        format!(
                            "transfer of position {} from seat {} to seat {}",
                            x.position, x.from.0, x.to.0
                        ),
                    );
                }
                let p = usize::from(x.position);
                match self.holders.get(p) {
                    Some(h) if *h == Some(x.from) => {}
                    Some(_) => {
                        return fail(
                            AuditCheck::DealOrder,
                            format!(
                                "transfer of position {p} from seat {}, which does not hold it",
                                x.from.0
                            ),
                        )
                    }
                    None => return fail(AuditCheck::DealOrder, format!("transfer of undealt position {p}")),
                }
                let leaf = &start.leaves[p];
                let check = |o: &CardOpening, what: &str| {
                    if o.position == x.position && o.matches(&hand_id, leaf) {
                        Ok(o.card)
                    } else {
                        Err(err(
                            AuditCheck::OpenedCards,
                            hand_id,
                            seq,
                            format!("{what} at position {p} ({}) does not match its leaf", o.card),
                        ))
                    }
                };
                let to_me = Some(x.to) == self.view.seat;
                let mut card = match (x.face, &x.opening, &x.sealed) {
                    (CardFace::Up, Some(o), None) => Some(check(o, "face-up transferred card")?),
                    (CardFace::Down, None, Some(sealed)) if to_me => {
                        let o = shared.open(&hand_id, sealed).map_err(|e| {
                            err(
                                AuditCheck::OpenedCards,
                                hand_id,
                                seq,
                                format!("card transferred to me at {p}: {e}"),
                            )
                        })?;
                        Some(check(&o, "card transferred to me")?)
                    }
                    (CardFace::Down, None, Some(_)) => None,
                    _ => {
                        return fail(
                            AuditCheck::Structure,
                            format!("transfer of position {p}: opening/sealed box do not fit the face"),
                        )
                    }
                };
                self.holders[p] = Some(x.to);
                if x.face == CardFace::Up {
                    self.faces[p] = CardFace::Up;
                }
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
                if let (true, Some(c)) = (to_me, card) {
                    receive(&mut self.view, x.position, c);
                }
                Ok(Some(Update::Transferred { hand_id, position: x.position, from: x.from, to: x.to, card }))
            }
            EventBody::Chips(c) => {
                if self.start.is_none() {
                    return fail(AuditCheck::Structure, "chips before game-start".into());
                }
                for m in &c.moves {
                    if matches!(m.party, ChipParty::Seat(s) if Some(s) == self.view.seat) {
                        let amount = i64::try_from(m.amount.0).unwrap_or(i64::MAX);
                        self.view.net = match m.op {
                            ChipOp::Debit => self.view.net.saturating_sub(amount),
                            ChipOp::Credit => self.view.net.saturating_add(amount),
                        };
                        self.view.balance = self.view.balance.map(|b| match m.op {
                            ChipOp::Debit => b.saturating_sub(m.amount),
                            ChipOp::Credit => b.checked_add(m.amount).unwrap_or(Chips(u64::MAX)),
                        });
                    }
                }
                Ok(Some(Update::Chips { hand_id, moves: c.moves }))
            }
            EventBody::ActionResult(a) => {
                if self.start.is_none() {
                    return fail(AuditCheck::Structure, "action before game-start".into());
                }
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
                let action = a.action.to_value().map_err(|e| structure(&format!("action: {e}")))?;
                if Some(a.seat) == self.view.seat {
                    self.note_played(&action);
                }
                self.view.public_state = a.public_state.clone();
                self.join_public_cards();
                Ok(Some(Update::Action {
                    hand_id,
                    seat: a.seat,
                    action,
                    public_state: a.public_state,
                    timeout: None,
                }))
            }
            EventBody::TimeoutAction(a) => {
                if self.start.is_none() {
                    return fail(AuditCheck::Structure, "timeout action before game-start".into());
                }
                if Some(a.seat) == self.view.seat {
                    self.note_played(&a.action);
                }
                self.view.public_state = a.public_state.clone();
                self.join_public_cards();
                Ok(Some(Update::Action {
                    hand_id,
                    seat: a.seat,
                    action: a.action,
                    public_state: a.public_state,
                    timeout: Some(a.reason.to_string()),
                }))
            }
            EventBody::GameEnd(g) => {
                // The openings, seeds and result are checked by the full
                // audit, which runs now, in the audit's order.
                let start = self.start.as_ref().ok_or_else(|| structure("game-end before game-start"))?;
                self.ended = true;
                self.view.result = Some(g.result.clone());
                if let Some(seat) = self.view.seat {
                    let net = g.result.net.get(seat.index()).copied().unwrap_or(0);
                    binding.last = Some((start.players[seat.index()].balance, net));
                }
                let deferred = start.reveal == RevealPolicy::Deferred;
                let audit = self.audit(dealer, room, deferred, binding.commission);
                Ok(Some(Update::Ended { hand_id, result: g.result, audit: Box::new(audit) }))
            }
            EventBody::AuditReveal(_) => {
                if !self.ended {
                    return fail(AuditCheck::Structure, "audit-reveal before game-end".into());
                }
                let audit = self.audit(dealer, room, false, binding.commission);
                Ok(Some(Update::AuditCompleted { hand_id, audit: Box::new(audit) }))
            }
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

    fn note_played(&mut self, action: &Value) {
        let Some(cards) =
            action.get("cards").and_then(|c| serde_json::from_value::<Vec<CardId>>(c.clone()).ok())
        else {
            return;
        };
        for c in cards {
            if let Some(i) = self.view.hand.iter().position(|h| *h == c) {
                self.view.hand.remove(i);
            }
            self.played.push(c);
        }
    }

    /// The full audit of the hand. This player's sealed cards and seed were
    /// already checked live (as each arrived), so the audit runs as a third
    /// party would: no second X25519 or box opening per hand.
    fn audit(
        &self,
        dealer: PlayerId,
        room: &str,
        pending_ok: bool,
        commission: Option<Chips>,
    ) -> Result<AuditReport, AuditError> {
        let t = Transcript {
            header: Some(TranscriptHeader::new(dealer, room.to_owned(), self.view.hand_id)),
            hand_id: self.view.hand_id,
            events: self.envelopes.clone(),
        };
        let mut a = Auditor::new(Some(dealer));
        a.allow_pending_reveal = pending_ok;
        a.commission = commission;
        a.audit(&t, None)
    }
}
