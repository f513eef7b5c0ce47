//! The GameEngine: one hand of any registered game, sans-IO.
//!
//! A [`Hand`] goes through prepare (dealer seed commitment, `hand-prepare`),
//! seed collection (entropy `joint`), start (joint shuffle, deck commitment,
//! `game-start`, the game's start actions), actions (validated and applied
//! through the shared [`HandRunner`], so the dealer deals exactly what the
//! auditor's replay deals), and the end (`game-end` with every secret, or the
//! shown cards only under the deferred policy followed later by
//! `audit-reveal`). Every event is signed and chained into the hand's
//! transcript.
//!
//! The engine never reads a clock or draws randomness itself and does no
//! I/O: the room task passes the rng and times in and carries the results
//! out. Chip movements are two-phase: a step ([`Hand::start`], [`Hand::act`],
//! [`Hand::auto_act`]) applies the game move and returns the chip moves it
//! needs; the room executes them, then [`Hand::commit`]s the step (which
//! publishes it) or [`Hand::rollback`]s it when a debit was refused.

mod blind;
mod wire;

pub use blind::{blind_offered, BlindError, BlindProgress, BlindRefusal, Withheld};
use blind::{BlindDeal, Resume};

use std::collections::HashSet;
use std::sync::Arc;

use claw_games::{
    check_conservation, runner::ConservationError, ActError, ActionInput, DynGame, GameError, GameMeta,
    HandRunner, PlayerInfo,
};
use claw_protocol::hand::{ChipMove, ChipParty, HandEvent, HandResult};
use claw_protocol::messages::{
    blind_deck_digest, config_hash, ActionRejectCode, ActionResult, AuditReveal, BlindRequest, DealMode,
    DeckMode, EncodeError, EntropyMode, EventBody, GameEnd, GameStart, HandPlayer, HandPrepare, PlayerSeed,
    PreviousHand, RawJson, RevealPolicy, RoomConfig, SeatSeed, SignedAction, TimeoutAction, TimeoutReason,
    YourTurn,
};
use claw_protocol::transcript::{EventEnvelope, Transcript, TranscriptBuilder, TranscriptError};
use claw_protocol::{
    leaf, merkle_root, seed_commitment, shuffle, shuffle_seed, CardId, CardOpening, Chips, Digest,
    EncryptionKey, HandId, Identity, PlayerId, Salt, Seat, Seed, SharedKey, SignerKey,
};
use rand_core::CryptoRngCore;
use serde_json::Value;

/// A fresh runner over `run.order` with `run.actions` replayed (where the
/// committed steps left the game), and the start's events.
fn replayed(
    spec: &GameSpec,
    infos: &[PlayerInfo],
    memory: &Value,
    run: &Running,
) -> Result<(HandRunner, Vec<HandEvent>), EngineError> {
    let (mut runner, start_events) =
        HandRunner::start(spec.game.as_ref(), &spec.settings, infos, memory, run.order.clone())?;
    for (seat, a) in &run.actions {
        runner.act_as(*seat, a.input()).map_err(ActError::into_error)?;
    }
    Ok((runner, start_events))
}

/// Where a hand is: what its phase allows is decided by the type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HandPhase {
    /// `hand-prepare` sent; seeds are collected (entropy `joint`).
    Preparing,
    /// Shuffled, committed and being played.
    Running,
    /// `game-end` sent.
    Over,
}

/// Why the engine could not go on with a hand (the room voids it).
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    /// The game refused (bad settings or players, a broken deal).
    #[error("game: {0}")]
    Game(#[from] GameError),
    /// An event could not be signed into the transcript (too large).
    #[error("transcript: {0}")]
    Transcript(#[from] TranscriptError),
    /// A message could not be encoded.
    #[error("encoding: {0}")]
    Encode(#[from] EncodeError),
    /// The game's chip movements and its result disagree.
    #[error("chip movements do not match the result: {0}")]
    Conservation(#[from] ConservationError),
    /// The game does not take this many players.
    #[error("{players} players for {game}")]
    PlayerCount {
        /// Players offered.
        players: usize,
        /// The game.
        game: &'static str,
    },
    /// A call the hand's phase does not allow.
    #[error("{call} is not possible while the hand is {phase:?}")]
    WrongPhase {
        /// The call.
        call: &'static str,
        /// Where the hand is.
        phase: HandPhase,
    },
    /// A step is still waiting for its chip moves.
    #[error("{0}: a step is still waiting for its chip moves")]
    StepPending(&'static str),
    /// `commit` or `rollback` without a step waiting.
    #[error("no step is waiting for its chip moves")]
    NothingPending,
    /// Only a player's action can be rolled back (not start or auto actions).
    #[error("only a player action can be rolled back")]
    NotAnAction,
    /// An auto action for a seat that is not to act.
    #[error("auto action for {0}, who is not to act")]
    NotToAct(Seat),
    /// The game has no automatic action here.
    #[error("the game has no auto action for {0}")]
    NoAutoAction(Seat),
    /// The game's deck or deals do not fit the committed deck.
    #[error("deck: {0}")]
    Deck(String),
    /// The game says it is over but gives no result.
    #[error("the game is over but has no result")]
    NoResult,
    /// A blind table (SPEC.md §9.7) cannot go on: a configuration it does
    /// not support, missing key shares, no accepted shuffle, a call out of
    /// its phase.
    #[error("blind deal: {0}")]
    Blind(String),
    /// A mental-poker value of the hand's own state failed (never expected).
    #[error("blind deal: {0}")]
    Mental(#[from] claw_protocol::mental::MentalError),
}

/// Why a player's action was refused (sent back as `action-rejected`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ActionReject {
    /// The wire code.
    pub code: ActionRejectCode,
    /// For people.
    pub reason: String,
}

impl ActionReject {
    fn new(code: ActionRejectCode, reason: impl Into<String>) -> ActionReject {
        ActionReject { code, reason: reason.into() }
    }
}

fn reject_from_game(e: &GameError) -> ActionReject {
    let code = match e {
        GameError::NotYourTurn => ActionRejectCode::NotYourTurn,
        GameError::HandOver => ActionRejectCode::HandOver,
        GameError::BadAmount(_) => ActionRejectCode::BadAmount,
        GameError::CardNotInHand(_) => ActionRejectCode::CardNotInHand,
        GameError::Malformed(_) => ActionRejectCode::Malformed,
        _ => ActionRejectCode::Illegal,
    };
    ActionReject::new(code, e.to_string())
}

/// Why a player seed was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SeedError {
    /// The seed names another hand.
    #[error("seed for hand {got}, the hand being prepared is {expected}")]
    WrongHand {
        /// The hand being prepared.
        expected: HandId,
        /// The hand the seed names.
        got: HandId,
    },
    /// The hand started already, or uses dealer-only entropy.
    #[error("seeds are not being collected now")]
    NotCollecting,
    /// One seed per seat.
    #[error("this seat already sent its seed")]
    Duplicate,
    /// The sender has no seat in the hand.
    #[error("the player is not in this hand")]
    NotInHand,
    /// Not signed by the seat's player (or `from` names someone else).
    #[error("bad seed signature")]
    BadSignature,
}

/// The fixed part of a room's hands: game, normalised settings, policies.
#[derive(Clone)]
pub struct GameSpec {
    /// The room (named in transcript headers).
    pub room_id: String,
    /// The rules.
    pub game: Arc<dyn DynGame>,
    /// The game's name, version and player counts.
    pub meta: GameMeta,
    /// Normalised settings.
    pub settings: Value,
    /// The same settings as the exact text signed in `game-start`.
    pub settings_raw: RawJson,
    /// `config_hash(game, version, settings)`, in `game-start`.
    pub config_hash: Digest,
    /// Joint or dealer-only shuffle entropy.
    pub entropy: EntropyMode,
    /// When secrets are published.
    pub reveal: RevealPolicy,
    /// Announced in `hand-prepare`.
    pub seed_timeout_ms: u64,
    /// The room's public configuration, the exact text the handshake signs:
    /// carried by every `game-start` ([`GameSpec::for_room`]).
    pub room_config: Option<RawJson>,
    /// Dealer-dealt (default) or blind (SPEC.md §9.7, [`GameSpec::blind`]).
    pub deal: DealMode,
}

impl GameSpec {
    /// Builds the spec; `settings` must already be normalised by the game.
    pub fn new(
        room_id: impl Into<String>,
        game: Arc<dyn DynGame>,
        settings: Value,
        entropy: EntropyMode,
        reveal: RevealPolicy,
        seed_timeout_ms: u64,
    ) -> Result<GameSpec, EngineError> {
        let meta = game.meta();
        let settings_raw = RawJson::from_value(&settings)?;
        let config_hash = config_hash(meta.name, meta.version, &settings_raw);
        Ok(GameSpec {
            room_id: room_id.into(),
            game,
            meta,
            settings,
            settings_raw,
            config_hash,
            entropy,
            reveal,
            seed_timeout_ms,
            room_config: None,
            deal: DealMode::Dealer,
        })
    }

    /// The same spec dealing blind (SPEC.md §9.7): a game [`blind_offered`]
    /// names, never a scripted deck, with `entropy = dealer` (the order
    /// comes from the players' shuffles).
    pub fn blind(mut self) -> Result<GameSpec, EngineError> {
        blind_offered(&self.meta).map_err(|e| EngineError::Blind(e.to_string()))?;
        if self.game.scripted_deck(&self.settings, 0)?.is_some() {
            return Err(EngineError::Blind(BlindRefusal::Scripted.to_string()));
        }
        if self.entropy != EntropyMode::Dealer {
            return Err(EngineError::Blind("a blind table has entropy = \"dealer\"".into()));
        }
        self.deal = DealMode::Blind;
        Ok(self)
    }

    /// The same spec for the room whose public configuration is `room`
    /// (the one the handshake signs): every `game-start` carries it, byte
    /// for byte, and every `hand-prepare` announces its seed timeout
    /// (SPEC.md §9.5).
    pub fn for_room(mut self, room: &RoomConfig) -> Result<GameSpec, EngineError> {
        self.room_config = Some(RawJson::from_value(room)?);
        self.seed_timeout_ms = room.seed_timeout_ms;
        match room.deal {
            DealMode::Blind => self.blind(),
            DealMode::Dealer => Ok(self),
        }
    }
}

/// What a room carries from its last finished hand into the next one
/// (SPEC.md §9.5 `game-start`): the game's table memory and the link to
/// that hand. The default is a table that has finished no hand since it
/// opened: no memory, no link.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Carried {
    /// The table memory the next hand starts from (`null`: a fresh table).
    pub memory: Value,
    /// The hand it was left by.
    pub previous: Option<PreviousHand>,
}

/// A player of a hand: identity, keys, chips available.
#[derive(Clone)]
pub struct HandSeat {
    /// The player's signing key (its id).
    pub id: PlayerId,
    /// The X25519 key its cards are sealed to.
    pub encryption_key: EncryptionKey,
    /// Chips the player can put into the hand (after commission).
    pub balance: Chips,
    /// The room's commission taken from the player for this hand (announced
    /// in `game-start`).
    pub commission: Chips,
    /// The session's precomputed box key with this player.
    pub key: SharedKey,
    /// The dealer's own AI plays the seat (`game-start` `house_ai`).
    pub house_ai: bool,
}

/// A step that changed the game and waits for its chip moves to be done.
struct Pending {
    kind: PendingKind,
    events: Vec<HandEvent>,
    /// Blind tables: positions the step needs opened before it can be
    /// published (its `events` were computed over the old deck view).
    open: Vec<claw_protocol::messages::RequestedPosition>,
}

enum PendingKind {
    Start,
    Action { seat: Seat, signed: SignedAction },
    Timeout { seat: Seat, action: Value, reason: TimeoutReason },
}

/// A committed action as the engine keeps it: the player's signed JSON
/// text, or the game's auto action.
enum Recorded {
    Signed(RawJson),
    Auto(Value),
}

impl Recorded {
    fn input(&self) -> ActionInput<'_> {
        match self {
            Recorded::Signed(text) => ActionInput::Text(text.as_str()),
            Recorded::Auto(v) => ActionInput::Value(v),
        }
    }
}

/// What a step needs from the chip provider before it can be published.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Step {
    /// Debits and credits, in the game's order.
    pub moves: Vec<ChipMove>,
}

/// What a committed step published.
#[derive(Debug)]
pub struct Committed {
    /// The burst's events for every player of the hand, in order (the last
    /// one signed).
    pub events: Vec<EventEnvelope>,
    /// The next player to act, when the hand goes on.
    pub your_turn: Option<YourTurn>,
    /// The hand's end, when it is over.
    pub end: Option<HandEnd>,
    /// Blind tables: the hand waits for decryption shares
    /// ([`Hand::add_blind_shares`]) before it names a player or goes on.
    pub awaits_shares: bool,
}

/// A finished hand's outcome.
#[derive(Debug, Clone)]
pub struct HandEnd {
    /// This hand, as the room's next hand names it.
    pub hand: PreviousHand,
    /// Winners, net changes, rake.
    pub result: HandResult,
    /// Table memory for the next hand.
    pub memory_after: Value,
    /// Policy `deferred`: an `audit-reveal` is still owed.
    pub reveal_pending: bool,
}

impl HandEnd {
    /// What the room's next hand starts from.
    pub fn carried(&self) -> Carried {
        Carried { memory: self.memory_after.clone(), previous: Some(self.hand) }
    }
}

struct Running {
    /// A blind table: deals carry no openings, reveals no cards.
    blind: bool,
    deck_mode: DeckMode,
    declared: Vec<CardId>,
    order: Vec<CardId>,
    salts: Vec<Salt>,
    leaves: Vec<Digest>,
    /// The seeds `game-start` carries (joint entropy).
    seeds: Vec<SeatSeed>,
    runner: HandRunner,
    /// The committed actions, in order, to rebuild the game from.
    actions: Vec<(Seat, Recorded)>,
    last_seq: Vec<Option<u32>>,
    /// Positions whose opening has been published.
    opened: Vec<bool>,
    /// Every committed game event.
    events: Vec<HandEvent>,
    /// Chips left per seat: balance − debits + credits.
    remaining: Vec<i128>,
    /// The public state as the last committed step left it (`None` until
    /// the start is committed): what queries see, never a pending step's.
    public: Option<Arc<Value>>,
}

/// The `audit-reveal` a finished hand owes (policy `deferred`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Reveal {
    /// Policy `full`: `game-end` published everything.
    NotOwed,
    /// Policy `deferred`, not yet published.
    Owed,
    /// Policy `deferred`, published.
    Published,
}

/// The hand's state machine.
enum State {
    Preparing {
        seeds: Vec<Option<SeatSeed>>,
    },
    /// `pending`: a step applied to the game, waiting for its chip moves.
    Running {
        run: Box<Running>,
        pending: Option<Pending>,
    },
    Over {
        run: Box<Running>,
        reveal: Reveal,
    },
}

/// One hand in progress.
pub struct Hand {
    spec: Arc<GameSpec>,
    dealer: Arc<Identity>,
    hand_id: HandId,
    hand_number: u64,
    seats: Vec<HandSeat>,
    /// The seats' keys, parsed once for the hand's seed and action signatures.
    signers: Vec<SignerKey>,
    /// The memory and previous hand `game-start` announces.
    carried: Carried,
    dealer_seed: Seed,
    tb: TranscriptBuilder,
    state: State,
    /// Blind tables: the mental-poker deal.
    blind: Option<Box<BlindDeal>>,
}

impl Hand {
    /// Opens hand `hand_id` (fresh random bytes, chosen by the caller so that
    /// chip operations can be keyed by it before the hand exists) after what
    /// the table `carried` from its last finished hand: draws the dealer
    /// seed and signs `hand-prepare` (the first transcript event, returned
    /// for broadcast).
    pub fn prepare<R: CryptoRngCore + ?Sized>(
        spec: Arc<GameSpec>,
        dealer: Arc<Identity>,
        seats: Vec<HandSeat>,
        carried: Carried,
        hand_number: u64,
        hand_id: HandId,
        rng: &mut R,
    ) -> Result<(Hand, EventEnvelope), EngineError> {
        let n = seats.len();
        if n == 0 || n > usize::from(spec.meta.max_players) || n < usize::from(spec.meta.min_players) {
            return Err(EngineError::PlayerCount { players: n, game: spec.meta.name });
        }
        let dealer_seed = Seed::random(rng);
        let mut tb = TranscriptBuilder::with_header(hand_id, dealer.id(), spec.room_id.clone());
        let body = EventBody::HandPrepare(HandPrepare {
            hand_number,
            seed_commitment: seed_commitment(&hand_id, &dealer_seed),
            entropy: spec.entropy,
            players: seats.iter().map(|s| s.id).collect(),
            seed_timeout_ms: spec.seed_timeout_ms,
        });
        let env = tb.append(&dealer, &body)?;
        let blind = match spec.deal {
            DealMode::Dealer => None,
            DealMode::Blind => {
                let declared = spec.game.create_deck(&spec.settings)?;
                Some(Box::new(BlindDeal::new(hand_id, n, &declared, rng)?))
            }
        };
        let hand = Hand {
            spec,
            dealer,
            hand_id,
            hand_number,
            signers: seats.iter().map(|s| SignerKey::new(&s.id)).collect(),
            seats,
            carried,
            dealer_seed,
            tb,
            state: State::Preparing { seeds: vec![None; n] },
            blind,
        };
        Ok((hand, env))
    }

    /// The hand's id.
    pub fn hand_id(&self) -> HandId {
        self.hand_id
    }

    /// Hands dealt at the table before this one.
    pub fn hand_number(&self) -> u64 {
        self.hand_number
    }

    /// The players in seat order.
    pub fn seats(&self) -> &[HandSeat] {
        &self.seats
    }

    /// The seat of `player` in this hand.
    pub fn seat_of(&self, player: &PlayerId) -> Option<Seat> {
        self.seats.iter().position(|s| s.id == *player).map(|i| Seat(i as u8))
    }

    /// Where the hand is.
    pub fn phase(&self) -> HandPhase {
        match self.state {
            State::Preparing { .. } => HandPhase::Preparing,
            State::Running { .. } => HandPhase::Running,
            State::Over { .. } => HandPhase::Over,
        }
    }

    /// Whether player seeds are being collected.
    pub fn collecting_seeds(&self) -> bool {
        matches!(self.state, State::Preparing { .. })
            && self.spec.entropy == EntropyMode::Joint
            && self.blind.is_none()
    }

    /// Records a seat's signed seed (entropy `joint`, before start).
    pub fn add_seed(&mut self, seat: Seat, msg: &PlayerSeed) -> Result<(), SeedError> {
        let State::Preparing { seeds } = &mut self.state else { return Err(SeedError::NotCollecting) };
        if self.spec.entropy != EntropyMode::Joint {
            return Err(SeedError::NotCollecting);
        }
        if msg.hand_id != self.hand_id {
            return Err(SeedError::WrongHand { expected: self.hand_id, got: msg.hand_id });
        }
        let player = self.signers.get(seat.index()).ok_or(SeedError::NotInHand)?;
        let slot = seeds.get_mut(seat.index()).ok_or(SeedError::NotInHand)?;
        if slot.is_some() {
            return Err(SeedError::Duplicate);
        }
        msg.verify_by(player).map_err(|_| SeedError::BadSignature)?;
        *slot = Some(SeatSeed { seat, seed: msg.seed, sig: msg.sig });
        Ok(())
    }

    /// Whether every seat has sent its seed (or none are asked for).
    pub fn seeds_complete(&self) -> bool {
        match &self.state {
            State::Preparing { seeds } => {
                self.spec.entropy == EntropyMode::Dealer || seeds.iter().all(Option::is_some)
            }
            _ => true,
        }
    }

    /// Shuffles, commits the deck and runs the game's start actions. The
    /// returned moves (blinds, antes) must be done before [`Hand::commit`]
    /// publishes `game-start` and the first deals.
    pub fn start<R: CryptoRngCore + ?Sized>(&mut self, rng: &mut R) -> Result<Step, EngineError> {
        let State::Preparing { seeds } = &self.state else {
            return Err(EngineError::WrongPhase { call: "start", phase: self.phase() });
        };
        let spec = Arc::clone(&self.spec);
        let declared = spec.game.create_deck(&spec.settings)?;
        if declared.is_empty() || declared.len() > claw_protocol::limits::MAX_DECK_POSITIONS {
            return Err(EngineError::Deck(format!("deck of {} cards", declared.len())));
        }
        let scripted = match &self.blind {
            Some(b) => {
                if b.joint_key().is_none() || b.shuffler().is_some() {
                    return Err(EngineError::Blind("the key shares and shuffles are not complete".into()));
                }
                if b.accepted_shuffles() == 0 {
                    return Err(EngineError::Blind(
                        "no shuffle was accepted: the order would be public".into(),
                    ));
                }
                let order = b.filled().ok_or_else(|| EngineError::Deck("deck view".into()))?;
                Some((DeckMode::Blind, order))
            }
            None => {
                spec.game.scripted_deck(&spec.settings, self.hand_number)?.map(|d| (DeckMode::Scripted, d))
            }
        };
        let (deck_mode, order) = match scripted {
            Some(d) => d,
            None => {
                let seeds: Vec<Option<Seed>> = seeds.iter().map(|s| s.map(|s| s.seed)).collect();
                (DeckMode::Shuffled, shuffle(&declared, &shuffle_seed(&self.dealer_seed, &seeds)))
            }
        };
        if order.len() != declared.len() {
            return Err(EngineError::Deck("scripted deck length differs from the game's deck".into()));
        }
        let seeds: Vec<SeatSeed> = seeds.iter().flatten().copied().collect();
        // A blind deck is committed by its ciphertexts: no salts, no leaves.
        let salted = if self.blind.is_some() { 0 } else { order.len() };
        let mut salt_bytes = vec![0u8; 32 * salted];
        rng.fill_bytes(&mut salt_bytes);
        let salts: Vec<Salt> = salt_bytes.chunks_exact(32).filter_map(Salt::from_slice).collect();
        let leaves: Vec<Digest> = order
            .iter()
            .zip(&salts)
            .enumerate()
            .map(|(i, (c, s))| leaf(&self.hand_id, i as u16, *c, s))
            .collect();
        let infos = self.player_infos();
        let (runner, events) = HandRunner::start(
            spec.game.as_ref(),
            &spec.settings,
            &infos,
            &self.carried.memory,
            order.clone(),
        )?;
        let n = self.seats.len();
        let open = self.blind.as_ref().map_or(Vec::new(), |b| b.needed(&events));
        let run = Box::new(Running {
            blind: self.blind.is_some(),
            deck_mode,
            declared,
            opened: vec![false; order.len()],
            order,
            salts,
            leaves,
            seeds,
            runner,
            actions: Vec::new(),
            last_seq: vec![None; n],
            events: Vec::new(),
            remaining: self.seats.iter().map(|s| i128::from(s.balance.0)).collect(),
            public: None,
        });
        let moves = if open.is_empty() { wire::moves(&events) } else { Vec::new() };
        self.state =
            State::Running { run, pending: Some(Pending { kind: PendingKind::Start, events, open }) };
        Ok(Step { moves })
    }

    fn player_infos(&self) -> Vec<PlayerInfo> {
        self.seats.iter().map(|s| PlayerInfo { id: s.id, balance: s.balance }).collect()
    }

    /// The dealt and played part of the hand, once started.
    fn running(&self) -> Option<&Running> {
        match &self.state {
            State::Preparing { .. } => None,
            State::Running { run, .. } | State::Over { run, .. } => Some(run),
        }
    }

    /// The seat whose action the hand waits for.
    pub fn to_act(&self) -> Option<Seat> {
        if self.awaits_shares() {
            return None;
        }
        match &self.state {
            State::Running { run, pending: None } => run.runner.hand().to_act(),
            _ => None,
        }
    }

    /// Whether the game cannot go on once `seat`'s player has left and
    /// `seat` is to act (see `GamePlugin::leave_voids`).
    pub fn leave_voids(&self, seat: Seat) -> bool {
        self.to_act() == Some(seat) && self.running().is_some_and(|r| r.runner.hand().leave_voids(seat))
    }

    /// Whether the hand is over.
    pub fn is_over(&self) -> bool {
        self.phase() == HandPhase::Over
    }

    /// Whether the hand has started (past seed collection).
    pub fn started(&self) -> bool {
        self.phase() != HandPhase::Preparing
    }

    /// Checks and applies a player's signed action (`player` is the
    /// connection's verified identity). On success the action waits for its
    /// chip moves; on refusal nothing changed.
    pub fn act(&mut self, player: &PlayerId, signed: SignedAction) -> Result<Step, ActionReject> {
        use ActionRejectCode as C;
        // An action too long to record is refused before anything else.
        signed.check_size().map_err(|e| ActionReject::new(C::Malformed, e.to_string()))?;
        if signed.hand_id != self.hand_id {
            return Err(ActionReject::new(C::WrongHand, format!("the current hand is {}", self.hand_id)));
        }
        let seat = self
            .seat_of(player)
            .ok_or_else(|| ActionReject::new(C::NotInHand, "you are not in this hand"))?;
        let run = match &mut self.state {
            State::Over { .. } => return Err(ActionReject::new(C::HandOver, "the hand is over")),
            State::Running { run, pending: None } => run,
            State::Preparing { .. } | State::Running { .. } => {
                return Err(ActionReject::new(C::NotYourTurn, "the hand is not waiting for an action"))
            }
        };
        if self.blind.as_ref().is_some_and(|b| b.request.is_some()) {
            return Err(ActionReject::new(C::NotYourTurn, "the hand waits for decryption shares"));
        }
        if run.runner.hand().to_act() != Some(seat) {
            return Err(ActionReject::new(C::NotYourTurn, "not your turn"));
        }
        if run.last_seq[seat.index()].is_some_and(|l| signed.seq <= l) {
            return Err(ActionReject::new(C::BadSeq, "seq must be greater than your last accepted action's"));
        }
        if self.signers.get(seat.index()).is_none_or(|k| signed.verify_by(k).is_err()) {
            return Err(ActionReject::new(C::BadSignature, "the action signature does not verify"));
        }
        // The signed text is parsed once, into the game's action; the rules
        // check and apply it in one call (on refusal nothing changed).
        match run.runner.act_as(seat, ActionInput::Text(signed.action.as_str())) {
            Ok(events) => {
                let open = self.blind.as_ref().map_or(Vec::new(), |b| b.needed(&events));
                let moves = if open.is_empty() { wire::moves(&events) } else { Vec::new() };
                if let State::Running { pending, .. } = &mut self.state {
                    *pending = Some(Pending { kind: PendingKind::Action { seat, signed }, events, open });
                }
                Ok(Step { moves })
            }
            Err(ActError::Refused(e)) => Err(reject_from_game(&e)),
            Err(ActError::Broken(e)) => {
                // Applied but failed while running what it set off: rebuild
                // the state without it. If even that fails the hand is
                // broken; the room sees it at the next step.
                let _ = self.rebuild();
                Err(ActionReject::new(C::Illegal, format!("the game refused the action: {e}")))
            }
        }
    }

    /// Applies the game's automatic action for `seat` (its timer ran out,
    /// it left, or it is disconnected).
    pub fn auto_act(&mut self, seat: Seat, reason: TimeoutReason) -> Result<Step, EngineError> {
        let phase = self.phase();
        let State::Running { run, pending } = &mut self.state else {
            return Err(EngineError::WrongPhase { call: "auto action", phase });
        };
        if pending.is_some() {
            return Err(EngineError::StepPending("auto action"));
        }
        if run.runner.hand().to_act() != Some(seat) {
            return Err(EngineError::NotToAct(seat));
        }
        if self.blind.as_ref().is_some_and(|b| b.request.is_some()) {
            return Err(EngineError::Blind("the hand waits for decryption shares".into()));
        }
        let action = run.runner.hand().auto_action(seat).ok_or(EngineError::NoAutoAction(seat))?;
        let events = run.runner.act(seat, &action)?;
        let open = self.blind.as_ref().map_or(Vec::new(), |b| b.needed(&events));
        let moves = if open.is_empty() { wire::moves(&events) } else { Vec::new() };
        *pending = Some(Pending { kind: PendingKind::Timeout { seat, action, reason }, events, open });
        Ok(Step { moves })
    }

    /// Undoes the pending player action (a debit was refused): the game
    /// state is rebuilt from the recorded actions.
    pub fn rollback(&mut self) -> Result<(), EngineError> {
        let State::Running { pending, .. } = &mut self.state else { return Ok(()) };
        match pending {
            None => Ok(()),
            Some(Pending { kind: PendingKind::Action { .. }, .. }) => {
                *pending = None;
                self.rebuild()
            }
            Some(_) => Err(EngineError::NotAnAction),
        }
    }

    /// Replays the recorded actions on a fresh runner (same deck), which
    /// puts the game back exactly where the committed steps left it.
    fn rebuild(&mut self) -> Result<(), EngineError> {
        let infos = self.player_infos();
        let phase = self.phase();
        let State::Running { run, .. } = &mut self.state else {
            return Err(EngineError::WrongPhase { call: "rebuild", phase });
        };
        if let Some(b) = &self.blind {
            run.order = b.filled().ok_or_else(|| EngineError::Deck("deck view".into()))?;
        }
        run.runner = replayed(&self.spec, &infos, &self.carried.memory, run)?.0;
        Ok(())
    }

    /// Publishes the pending step after its chip moves were done: appends its
    /// events as one burst (the last one signed), and either names the next player to act (deadline
    /// `deadline_ms`, unix ms) or ends the hand.
    pub fn commit<R: CryptoRngCore + ?Sized>(
        &mut self,
        rng: &mut R,
        deadline_ms: u64,
    ) -> Result<Committed, EngineError> {
        let State::Running { run, pending } = &mut self.state else {
            return Err(EngineError::NothingPending);
        };
        let p = pending.take().ok_or(EngineError::NothingPending)?;
        if !p.open.is_empty() {
            // Blind: the step needs cards opened first; it stays pending.
            let positions = p.open.clone();
            *pending = Some(p);
            return self.blind_request(positions, Resume::Step);
        }
        let mut bodies: Vec<EventBody> = Vec::new();
        match p.kind {
            PendingKind::Start => {
                run.public = Some(Arc::new(run.runner.hand().public_state()));
                bodies.push(EventBody::GameStart(GameStart {
                    game: self.spec.meta.name.to_owned(),
                    game_version: self.spec.meta.version.to_owned(),
                    config_hash: self.spec.config_hash,
                    settings: self.spec.settings_raw.clone(),
                    room_config: self.spec.room_config.clone(),
                    players: self
                        .seats
                        .iter()
                        .enumerate()
                        .map(|(i, s)| HandPlayer {
                            id: s.id,
                            seat: Seat(i as u8),
                            balance: s.balance,
                            encryption_key: s.encryption_key,
                            commission: s.commission,
                            house_ai: s.house_ai,
                        })
                        .collect(),
                    memory: self.carried.memory.clone(),
                    previous: self.carried.previous,
                    dealer_encryption_key: self.dealer.encryption_key(),
                    deck_mode: run.deck_mode,
                    entropy: self.spec.entropy,
                    reveal: self.spec.reveal,
                    player_seeds: run.seeds.clone(),
                    deck: run.declared.clone(),
                    leaves: run.leaves.clone(),
                    root: match &self.blind {
                        Some(b) => blind_deck_digest(&self.hand_id, b.deck()),
                        None => merkle_root(&run.leaves),
                    },
                }));
            }
            PendingKind::Action { seat, signed } => {
                run.last_seq[seat.index()] = Some(signed.seq);
                let public_state = Arc::new(run.runner.hand().public_state());
                run.public = Some(Arc::clone(&public_state));
                bodies.push(EventBody::ActionResult(ActionResult::from_signed(seat, &signed, public_state)));
                run.actions.push((seat, Recorded::Signed(signed.action)));
            }
            PendingKind::Timeout { seat, action, reason } => {
                let public_state = Arc::new(run.runner.hand().public_state());
                run.public = Some(Arc::clone(&public_state));
                bodies.push(EventBody::TimeoutAction(TimeoutAction {
                    seat,
                    action: action.clone(),
                    reason,
                    public_state,
                }));
                run.actions.push((seat, Recorded::Auto(action)));
            }
        }
        wire::event_bodies(&self.hand_id, &self.seats, run, &p.events, rng, &mut bodies)?;
        for e in &p.events {
            if let HandEvent::Chip(m @ ChipMove { party: ChipParty::Seat(s), .. }) = e {
                run.remaining[s.index()] += m.delta();
            }
        }
        let p_events_len = p.events.len();
        run.events.extend(p.events);
        let mut end = None;
        if run.runner.hand().is_over() {
            let result = run.runner.hand().result().ok_or(EngineError::NoResult)?;
            check_conservation(&run.events, &result, self.seats.len())?;
            let memory_after = run.runner.hand().memory_after();
            let (dealer_seed, openings) = match self.spec.reveal {
                RevealPolicy::Full => (Some(self.dealer_seed), all_openings(run)),
                RevealPolicy::Deferred => (None, shown_openings(run)),
            };
            bodies.push(EventBody::GameEnd(GameEnd {
                result: result.clone(),
                memory_after: memory_after.clone(),
                dealer_seed,
                openings,
            }));
            end = Some(HandEnd {
                hand: PreviousHand { hand_id: self.hand_id, hand_number: self.hand_number },
                result,
                memory_after,
                reveal_pending: self.spec.reveal == RevealPolicy::Deferred,
            });
        }
        // Blind: the owners of the private cards just dealt need every
        // other seat's share before the hand goes on.
        let mut awaits_shares = false;
        if let (Some(b), None) = (self.blind.as_mut(), &end) {
            let private = BlindDeal::private_deals(&run.events[run.events.len() - p_events_len..]);
            if !private.is_empty() && b.request(private.clone(), Resume::Turn).is_some() {
                bodies.push(EventBody::BlindRequest(BlindRequest { positions: private }));
                awaits_shares = true;
            }
        }
        // One burst: the dealer signs its last event (SPEC.md §10.1).
        let events = self.tb.append_burst(&self.dealer, &bodies)?;
        let your_turn = if awaits_shares {
            None
        } else if end.is_some() {
            let reveal = match self.spec.reveal {
                RevealPolicy::Full => Reveal::NotOwed,
                RevealPolicy::Deferred => Reveal::Owed,
            };
            let placeholder = State::Preparing { seeds: Vec::new() };
            if let State::Running { run, .. } = std::mem::replace(&mut self.state, placeholder) {
                self.state = State::Over { run, reveal };
            }
            None
        } else {
            self.to_act().map(|seat| self.your_turn(seat, deadline_ms))
        };
        Ok(Committed { events, your_turn, end, awaits_shares })
    }

    /// The `your-turn` message for `seat`.
    pub fn your_turn(&self, seat: Seat, deadline_ms: u64) -> YourTurn {
        let (actions, seq, balance, phase) = match self.running() {
            Some(run) => (
                run.runner.hand().valid_actions(),
                run.last_seq[seat.index()].map_or(0, |l| l.saturating_add(1)),
                Chips(u64::try_from(run.remaining[seat.index()].max(0)).unwrap_or(u64::MAX)),
                run.runner.hand().phase().map(str::to_owned),
            ),
            None => (Vec::new(), 0, Chips::ZERO, None),
        };
        YourTurn { hand_id: self.hand_id, seat, seq, actions, balance, deadline_ms, phase, warning: None }
    }

    /// The chips `seat` has left in this hand.
    pub fn remaining(&self, seat: Seat) -> Chips {
        self.running()
            .and_then(|r| r.remaining.get(seat.index()))
            .map_or(Chips::ZERO, |r| Chips(u64::try_from((*r).max(0)).unwrap_or(u64::MAX)))
    }

    /// Policy `deferred`: signs the `audit-reveal` event that publishes the
    /// dealer seed and every opening `game-end` held back. Once only.
    pub fn audit_reveal(&mut self) -> Result<Option<EventEnvelope>, EngineError> {
        let State::Over { run, reveal: reveal @ Reveal::Owed } = &mut self.state else { return Ok(None) };
        let body = EventBody::AuditReveal(AuditReveal {
            dealer_seed: self.dealer_seed,
            openings: all_openings(run),
        });
        let env = self.tb.append(&self.dealer, &body)?;
        *reveal = Reveal::Published;
        Ok(Some(env))
    }

    /// The signed events so far (what a reconnecting player is re-sent).
    pub fn transcript(&self) -> &Transcript {
        self.tb.transcript()
    }

    /// The game's public state as the last committed step left it (for
    /// `table-state`): never a hidden card, never a step still waiting for
    /// its chip moves.
    pub fn public_state(&self) -> Option<Arc<Value>> {
        self.running().and_then(|r| r.public.clone())
    }

    /// Every committed game event (deals, chips, reveals).
    pub fn game_events(&self) -> &[HandEvent] {
        self.running().map_or(&[], |r| &r.events)
    }
}

/// Every card's opening, in deck order.
fn all_openings(run: &Running) -> Vec<CardOpening> {
    run.order
        .iter()
        .zip(&run.salts)
        .enumerate()
        .map(|(i, (card, salt))| CardOpening { position: i as u16, card: *card, salt: *salt })
        .collect()
}

/// Deferred policy: the face-down dealt cards, not opened yet, that the
/// game's final public state shows (`DynHand::shown_cards`: played cards,
/// shown hands); folded cards stay hidden.
fn shown_openings(run: &Running) -> Vec<CardOpening> {
    let shown: HashSet<CardId> = run.runner.hand().shown_cards().into_iter().collect();
    run.runner
        .dealt()
        .iter()
        .filter(|d| run.opened.get(usize::from(d.position)) == Some(&false) && shown.contains(&d.card))
        .filter_map(|d| {
            let salt = *run.salts.get(usize::from(d.position))?;
            Some(CardOpening { position: d.position, card: d.card, salt })
        })
        .collect()
}

#[cfg(test)]
mod blind_tests;
#[cfg(test)]
mod tests;
