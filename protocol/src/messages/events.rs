//! Bodies of the signed hand events (SPEC.md §9.4). Each is carried, as
//! exact JSON text, inside a [`crate::transcript::EventEnvelope`] that chains
//! it to the previous event and carries the dealer's signature. Every event
//! goes to every player at the table, so all hold the same transcript.

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{check_size, check_text, parse_as, peek_type, unknown, DecodeError, EncodeError, RawJson};
use crate::bytes::{sha256, Digest, EncryptionKey, HandId, Seed, Signature};
use crate::card::CardId;
use crate::commit::CardOpening;
use crate::hand::{CardFace, ChipMove, DealTo, HandResult};
use crate::ids::{Chips, PlayerId, Seat};
use crate::seal::SealedCard;
use crate::sign::SignatureError;

use super::client::{PlayerSeed, SignedAction};

/// Every hand event, in the order a hand produces them: `hand-prepare`,
/// `game-start`, then any of `phase-deal`, `new-card`, `reveal`,
/// `card-transfer`, `chips`, `action-result`, `timeout-action`, then
/// `game-end`, and (deferred reveal policy) one later `audit-reveal`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "type", rename_all = "kebab-case")]
pub enum EventBody {
    /// A hand is about to start: the dealer's seed commitment.
    HandPrepare(HandPrepare),
    /// The committed deck and everything the replay needs.
    GameStart(GameStart),
    /// Cards dealt for a phase (hole cards, flop, kitty, …).
    PhaseDeal(DealEvent),
    /// Extra cards to one player (a blackjack hit).
    NewCard(DealEvent),
    /// Face-down cards opened to everyone mid-hand.
    Reveal(Reveal),
    /// A dealt card moved from one player's hand to another's (tribute).
    CardTransfer(CardTransfer),
    /// Chip movements (bets, blinds, pots) in order.
    Chips(ChipsMoved),
    /// A player's action, accepted and applied.
    ActionResult(ActionResult),
    /// The action the dealer took for a player whose time ran out.
    TimeoutAction(TimeoutAction),
    /// The hand is over: result and (policy `full`) every secret.
    GameEnd(GameEnd),
    /// Deferred secrets published after the hand (policy `deferred`).
    AuditReveal(AuditReveal),
    /// Blind tables (SPEC.md §9.7): every seat's key share.
    BlindKeys(super::BlindKeys),
    /// Blind tables: an accepted shuffle.
    BlindShuffle(super::BlindShuffle),
    /// Blind tables: a skipped shuffle.
    BlindSkip(super::BlindSkip),
    /// Blind tables: decryption shares the hand needs.
    BlindRequest(super::BlindRequest),
    /// Blind tables: a seat's verified decryption shares.
    BlindShares(super::BlindShares),
    /// Blind tables: face-down cards the game shows.
    BlindReveal(super::BlindReveal),
    /// Blind tables: a seat's piece commitments and encrypted pieces.
    BlindPieces(super::BlindPieces),
    /// Blind tables: an upheld complaint against a seat's piece.
    BlindComplaint(super::BlindComplaint),
    /// Blind tables: a withheld share's recovery is asked for.
    BlindRecover(super::BlindRecover),
    /// Blind tables: a holder's verified recovery shares.
    BlindRecovery(super::BlindRecovery),
}

impl EventBody {
    /// The `type` of this body.
    pub fn type_name(&self) -> &'static str {
        match self {
            EventBody::HandPrepare(_) => "hand-prepare",
            EventBody::GameStart(_) => "game-start",
            EventBody::PhaseDeal(_) => "phase-deal",
            EventBody::NewCard(_) => "new-card",
            EventBody::Reveal(_) => "reveal",
            EventBody::CardTransfer(_) => "card-transfer",
            EventBody::Chips(_) => "chips",
            EventBody::ActionResult(_) => "action-result",
            EventBody::TimeoutAction(_) => "timeout-action",
            EventBody::GameEnd(_) => "game-end",
            EventBody::AuditReveal(_) => "audit-reveal",
            EventBody::BlindKeys(_) => "blind-keys",
            EventBody::BlindShuffle(_) => "blind-shuffle",
            EventBody::BlindSkip(_) => "blind-skip",
            EventBody::BlindRequest(_) => "blind-request",
            EventBody::BlindShares(_) => "blind-shares",
            EventBody::BlindReveal(_) => "blind-reveal",
            EventBody::BlindPieces(_) => "blind-pieces",
            EventBody::BlindComplaint(_) => "blind-complaint",
            EventBody::BlindRecover(_) => "blind-recover",
            EventBody::BlindRecovery(_) => "blind-recovery",
        }
    }

    /// Parses an event body from its exact JSON text.
    pub fn decode(text: &str) -> Result<EventBody, DecodeError> {
        check_size(text)?;
        let ty = peek_type(text)?;
        let body = match ty.as_str() {
            "hand-prepare" => EventBody::HandPrepare(parse_as(text)?),
            "game-start" => EventBody::GameStart(parse_as(text)?),
            "phase-deal" => EventBody::PhaseDeal(parse_as(text)?),
            "new-card" => EventBody::NewCard(parse_as(text)?),
            "reveal" => EventBody::Reveal(parse_as(text)?),
            "card-transfer" => EventBody::CardTransfer(parse_as(text)?),
            "chips" => EventBody::Chips(parse_as(text)?),
            "action-result" => EventBody::ActionResult(parse_as(text)?),
            "timeout-action" => EventBody::TimeoutAction(parse_as(text)?),
            "game-end" => EventBody::GameEnd(parse_as(text)?),
            "audit-reveal" => EventBody::AuditReveal(parse_as(text)?),
            "blind-keys" => EventBody::BlindKeys(parse_as(text)?),
            "blind-shuffle" => EventBody::BlindShuffle(parse_as(text)?),
            "blind-skip" => EventBody::BlindSkip(parse_as(text)?),
            "blind-request" => EventBody::BlindRequest(parse_as(text)?),
            "blind-shares" => EventBody::BlindShares(parse_as(text)?),
            "blind-reveal" => EventBody::BlindReveal(parse_as(text)?),
            "blind-pieces" => EventBody::BlindPieces(parse_as(text)?),
            "blind-complaint" => EventBody::BlindComplaint(parse_as(text)?),
            "blind-recover" => EventBody::BlindRecover(parse_as(text)?),
            "blind-recovery" => EventBody::BlindRecovery(parse_as(text)?),
            other => return Err(unknown(other)),
        };
        if let EventBody::PhaseDeal(d) | EventBody::NewCard(d) = &body {
            check_text("phase", &d.phase)?;
        }
        Ok(body)
    }

    /// The body as compact JSON text, ready to be signed into an envelope.
    pub fn to_raw(&self) -> Result<RawJson, EncodeError> {
        RawJson::from_value(self)
    }
}

/// Where the players' shuffle entropy comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum EntropyMode {
    /// Dealer seed plus every seated player's signed seed (default).
    Joint,
    /// Dealer seed only (saves the seed round trip); still committed first.
    Dealer,
}

/// How the deck order was obtained.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum DeckMode {
    /// Fisher–Yates over the declared deck with the joint shuffle seed.
    Shuffled,
    /// A fixed order given by the game (tutorials). The shuffle check is
    /// skipped; every other check runs.
    Scripted,
    /// The players' mental-poker shuffles (blind tables, SPEC.md §9.7):
    /// `root` is the final deck's digest, `leaves` is empty.
    Blind,
}

/// When the dealer publishes the secrets of a hand.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RevealPolicy {
    /// `game-end` carries the dealer seed and an opening for every position.
    Full,
    /// `game-end` may withhold them; a later `audit-reveal` publishes them.
    Deferred,
}

/// `hand-prepare`: opens a hand. Seated players answer with `player-seed`
/// (entropy `joint`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HandPrepare {
    /// Hands dealt at this table before this one (scripted decks use it).
    pub hand_number: u64,
    /// `seed_commitment(hand_id, dealer_seed)` (SPEC.md §7).
    pub seed_commitment: Digest,
    /// Whether player seeds are requested.
    pub entropy: EntropyMode,
    /// The hand's players in seat order (seat = index).
    pub players: Vec<PlayerId>,
    /// How long the dealer waits for seeds, in milliseconds.
    pub seed_timeout_ms: u64,
}

/// A seat's player in `game-start`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct HandPlayer {
    /// Signing key.
    pub id: PlayerId,
    /// Seat (= index in the list).
    pub seat: Seat,
    /// Chips available to the hand (after commission).
    pub balance: Chips,
    /// The X25519 key the player's cards are sealed to.
    pub encryption_key: EncryptionKey,
    /// The room's commission taken from this player for this hand, before
    /// `balance` (SPEC.md §9.5; absent = 0, as in transcripts before it).
    #[serde(default, skip_serializing_if = "Chips::is_zero")]
    pub commission: Chips,
    /// The seat is played by the dealer's own AI (a house-AI seat, SPEC.md
    /// §9.5); absent = false. Informational: the AI is a player like any other.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub house_ai: bool,
}

/// The most chips a player brings into one hand, whatever its balance
/// (exact arithmetic in every game stays below 2^53). A `game-start`
/// balance at this cap is not bound to the previous hand's end (SPEC.md §11.4).
pub const MAX_HAND_STAKE: u64 = crate::limits::MAX_STAKE;

/// The balance a player must start its next hand in the room with: its
/// start `balance` of the previous hand plus its `net` there, minus the
/// next hand's `commission` (SPEC.md §11.4). `None` when nothing binds it
/// (the previous balance was at [`MAX_HAND_STAKE`], or the sum leaves the
/// range of chips).
pub fn expected_start_balance(prev_balance: Chips, prev_net: i64, commission: Chips) -> Option<Chips> {
    if prev_balance.0 >= MAX_HAND_STAKE {
        return None;
    }
    let end = i128::from(prev_balance.0) + i128::from(prev_net) - i128::from(commission.0);
    let end = u64::try_from(end).ok()?;
    Some(Chips(end.min(MAX_HAND_STAKE)))
}

/// A player's seed as published in `game-start`, with the player's own
/// signature (over `hand_id || seed`, purpose `player-seed`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct SeatSeed {
    /// Whose seed.
    pub seat: Seat,
    /// The seed.
    pub seed: Seed,
    /// The player's signature of it.
    pub sig: Signature,
}

impl SeatSeed {
    /// Checks the seat's signature for `hand_id`.
    pub fn verify(&self, hand_id: HandId, player: &PlayerId) -> Result<(), SignatureError> {
        PlayerSeed { hand_id, seed: self.seed, sig: self.sig, from: None }.verify(player)
    }
}

/// Domain tag of the config hash.
pub const CONFIG_TAG: &[u8] = b"claw/v1/config";

/// `SHA-256("claw/v1/config" || 0x00 || game || 0x00 || game_version || 0x00
/// || settings JSON text)`: names the rules a hand runs under, comparable
/// across hands and with the room configuration.
pub fn config_hash(game: &str, game_version: &str, settings: &RawJson) -> Digest {
    sha256(&[
        CONFIG_TAG,
        &[0],
        game.as_bytes(),
        &[0],
        game_version.as_bytes(),
        &[0],
        settings.as_str().as_bytes(),
    ])
}

/// `game-start`: the hand's inputs and the commitment to every card.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GameStart {
    /// Registry name of the game (`texas-holdem`).
    pub game: String,
    /// Rules version of the game.
    pub game_version: String,
    /// [`config_hash`] of `game`, `game_version` and `settings`.
    pub config_hash: Digest,
    /// The game's normalised settings, exact text.
    pub settings: RawJson,
    /// The room configuration, byte for byte as the dealer signed it in
    /// the handshake's challenge (SPEC.md §8.2, §9.5): it binds the
    /// commission, settings, policies and seed timeout of every hand.
    /// Absent only in transcripts written before the member existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub room_config: Option<RawJson>,
    /// Players in seat order.
    pub players: Vec<HandPlayer>,
    /// Table memory carried from the previous hand (button, banker).
    pub memory: Value,
    /// The room's last finished hand before this one, whose
    /// `memory_after` is `memory` (SPEC.md §9.5). Absent for the first hand
    /// a room deals after it opens (`memory` is then null), and in
    /// transcripts written before the member existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub previous: Option<PreviousHand>,
    /// The dealer's X25519 key (sealed cards are boxed with it).
    pub dealer_encryption_key: EncryptionKey,
    /// Shuffled or scripted deck.
    pub deck_mode: DeckMode,
    /// Joint or dealer-only entropy (as in `hand-prepare`).
    pub entropy: EntropyMode,
    /// When the secrets are published.
    pub reveal: RevealPolicy,
    /// The seeds received in time, signed by their players, in seat order.
    /// Public now: without the dealer seed they say nothing about the order;
    /// each player checks at once that its own seed is here.
    pub player_seeds: Vec<SeatSeed>,
    /// The game's canonical deck (before shuffling).
    pub deck: Vec<CardId>,
    /// `leaf_i` for every deck position `i` (SPEC.md §5).
    pub leaves: Vec<Digest>,
    /// Merkle root over `leaves`.
    pub root: Digest,
}

/// The hand a room finished last before the next one (`game-start`'s
/// `previous`): it links a room's hands, so that an auditor of several
/// compares each with the one it names, whatever their numbers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct PreviousHand {
    /// Its id.
    pub hand_id: HandId,
    /// Its `hand-prepare` `hand_number`.
    pub hand_number: u64,
}

/// One dealt card in `phase-deal` / `new-card`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DealtCardMsg {
    /// The deck position (strictly increasing over the hand, from 0).
    pub position: u16,
    /// Who gets it.
    pub target: DealTo,
    /// Up or down.
    pub face: CardFace,
    /// Face up: the opening (position, card, salt).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub opening: Option<CardOpening>,
    /// Face down to a player: the opening sealed to that player.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sealed: Option<SealedCard>,
}

/// `phase-deal` / `new-card`: one deal of the game (one `Deal` pending
/// action), cards in position order. `new-card` when every card goes to one
/// player, `phase-deal` otherwise; both mean the same to an auditor.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DealEvent {
    /// The game's name for the deal (`hole`, `flop`, `hit`, `kitty`).
    pub phase: String,
    /// The cards.
    pub cards: Vec<DealtCardMsg>,
}

/// `reveal`: face-down cards opened to everyone now (the Dou Di Zhu kitty,
/// the blackjack hole card).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Reveal {
    /// One opening per revealed position, in the order the game asked.
    pub openings: Vec<CardOpening>,
}

/// `card-transfer`: the card at deck `position`, held by seat `from`, now
/// belongs to seat `to` (Guandan's tribute and return). Face `down`: its
/// opening sealed to `to`; face `up`: its opening, for everyone. The signed
/// game action that caused it (`action-result` just before) names the card.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CardTransfer {
    /// The deck position that changes hands.
    pub position: u16,
    /// The giver: it holds `position` before this event.
    pub from: Seat,
    /// The receiver (not `from`).
    pub to: Seat,
    /// Up: shown to everyone; down: only to `to`.
    pub face: CardFace,
    /// Face up: the opening (position, card, salt).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub opening: Option<CardOpening>,
    /// Face down: the opening sealed to `to`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sealed: Option<SealedCard>,
}

/// `chips`: consecutive chip movements, in the order the game produced them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChipsMoved {
    /// The movements.
    pub moves: Vec<ChipMove>,
}

/// `action-result`: an accepted action, with the player's signed bytes so
/// anyone can check the player really took it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ActionResult {
    /// Who acted.
    pub seat: Seat,
    /// The player's action counter, as signed.
    pub seq: u32,
    /// The action JSON, exactly as the player signed it.
    pub action: RawJson,
    /// The player's signature (purpose `action`).
    pub sig: Signature,
    /// The game's public state after the action (shared, not copied, by
    /// whoever keeps it: the audit, a player's view).
    pub public_state: Arc<Value>,
}

impl ActionResult {
    /// Builds the result from the player's signed action.
    pub fn from_signed(
        seat: Seat,
        signed: &SignedAction,
        public_state: impl Into<Arc<Value>>,
    ) -> ActionResult {
        let public_state = public_state.into();
        ActionResult { seat, seq: signed.seq, action: signed.action.clone(), sig: signed.sig, public_state }
    }

    /// The player's message as it was signed, for verification.
    pub fn signed_action(&self, hand_id: HandId) -> SignedAction {
        SignedAction { hand_id, seq: self.seq, action: self.action.clone(), sig: self.sig }
    }
}

/// `timeout-action`: the game's automatic action for a seat whose timer ran
/// out (not signed by the player; the replay checks it is the game's
/// `auto_action`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TimeoutAction {
    /// The seat that timed out.
    pub seat: Seat,
    /// The action applied for it.
    pub action: Value,
    /// Why the dealer acted for the seat.
    pub reason: TimeoutReason,
    /// The game's public state after the action (shared, as in
    /// [`ActionResult`]).
    pub public_state: Arc<Value>,
}

/// Why the dealer took a seat's auto action. Informational to the audit
/// (the replay checks the action, not the reason), but only these three.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TimeoutReason {
    /// The player was connected and its time ran out.
    Timeout,
    /// The player's connection was down when its time ran out.
    Disconnected,
    /// The player left the table.
    Left,
}

impl TimeoutReason {
    /// The wire name (`timeout`, `disconnected`, `left`).
    pub fn as_str(self) -> &'static str {
        match self {
            TimeoutReason::Timeout => "timeout",
            TimeoutReason::Disconnected => "disconnected",
            TimeoutReason::Left => "left",
        }
    }
}

impl std::fmt::Display for TimeoutReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// `game-end`: the result, the table memory for the next hand and, under
/// policy `full`, the dealer seed and an opening for every deck position.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GameEnd {
    /// Winners, net changes, rake.
    pub result: HandResult,
    /// Table memory after the hand.
    pub memory_after: Value,
    /// The dealer seed (absent only under policy `deferred`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dealer_seed: Option<Seed>,
    /// Openings: every position under policy `full`; under `deferred` the
    /// cards shown at showdown.
    pub openings: Vec<CardOpening>,
}

/// `audit-reveal`: the secrets `game-end` withheld (policy `deferred`),
/// chained after it so the audit can complete later.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AuditReveal {
    /// The dealer seed.
    pub dealer_seed: Seed,
    /// Openings for the positions `game-end` did not open (it may repeat
    /// some; repeats must be identical).
    pub openings: Vec<CardOpening>,
}
