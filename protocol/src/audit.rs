//! The auditor's checks of a hand transcript (SPEC.md §11), in one
//! incremental verifier.
//!
//! [`HandAudit`] is fed the events of a hand in order
//! ([`HandAudit::accept`]: chain, structure, seeds, Merkle root, commission,
//! deal order, opened cards as each event arrives) and then finished
//! ([`HandAudit::finish`]: reveal, seed commitment, shuffle, leaves, action
//! signatures, the game replay). The live player runs it as events arrive;
//! the offline [`audit`] batch-verifies the dealer signatures and feeds a
//! whole transcript. Both return the verified inputs of the hand
//! ([`VerifiedHand`]). The game replay lives outside this crate (protocol
//! does not know the games): a caller that has the rules implements
//! [`Replayer`] (the player SDK does, with `claw_games::audit::GamesReplayer`).
//! The first failed check is reported by name ([`AuditCheck`]).

mod blind;

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::bytes::{Digest, EncryptionKey, HandId, Seed, Signature};
use crate::card::CardId;
use crate::commit::{merkle_root, CardOpening};
use crate::identity::Identity;
use crate::ids::{Chips, PlayerId, Seat};
use crate::messages::{
    config_hash, expected_start_balance, AuditReveal, CardFace, CardTransfer, ChipParty, DealEvent, DealTo,
    DeckMode, EntropyMode, EventBody, GameEnd, GameStart, HandPlayer, HandPrepare, HandResult, PreviousHand,
    RawJson, Reveal, RevealPolicy, RoomConfig, TimeoutReason,
};
use crate::seal::{SealedCard, SharedKey};
use crate::shuffle::{seed_commitment, shuffle, shuffle_seed};
use crate::sign::{verify_batch, BatchItem, Purpose, SignatureError};
use crate::transcript::{EventEnvelope, Transcript, TranscriptVerifier};

/// One check of the audit. [`AuditCheck::ALL`] lists them in the order they
/// run; the audit stops at the first failure.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum AuditCheck {
    /// Every event is signed by the dealer.
    DealerSignatures,
    /// One hand id, seq 0, 1, 2, … and each `prev` is the previous event's hash.
    HashChain,
    /// Bodies parse, events come in a legal order, fields agree.
    Structure,
    /// The dealer seed and an opening for every deck position are published.
    RevealComplete,
    /// The dealer seed matches `hand-prepare`'s commitment.
    SeedCommitment,
    /// Each published player seed is signed by its seat's player (and the
    /// viewer's own seed is there).
    PlayerSeeds,
    /// The deck order is the shuffle of the declared deck with the joint
    /// seed (scripted decks: the same cards), and the declared deck is the
    /// game's.
    Shuffle,
    /// Every leaf is recomputed from its opening.
    Leaves,
    /// The Merkle root is recomputed from the leaves.
    MerkleRoot,
    /// Dealt positions are 0, 1, 2, … in order; reveals open dealt face-down
    /// cards; a card transfer moves a position its giver holds at that point.
    DealOrder,
    /// Every card opened during the hand (face up, revealed, transferred,
    /// sealed to the viewer, shown at the end) matches its leaf.
    OpenedCards,
    /// Every action is signed by its seat's player, with increasing seq.
    ActionSignatures,
    /// The game replay reproduces deals, chip movements and the result.
    Replay,
    /// Every seat paid the same commission, the room's (from the room
    /// configuration `game-start` carries, or the one the auditor was told).
    Commission,
    /// Across the hands of a room: a hand continues the previous hand it
    /// names (its number, table memory, room configuration, config hash and
    /// dealer encryption key), and no two hands continue the same one (not a
    /// per-hand check: [`check_previous`], and the live verifier).
    PreviousHand,
    /// Across consecutive hands of a room: each player starts where its
    /// previous hand left it, less the commission (not a per-hand check:
    /// [`check_balances`], and the live verifier).
    Balances,
}

impl AuditCheck {
    /// Every per-hand check, in the order the audit runs them
    /// ([`AuditCheck::PreviousHand`] and [`AuditCheck::Balances`] compare
    /// hands and are not among them).
    pub const ALL: [AuditCheck; 14] = [
        AuditCheck::DealerSignatures,
        AuditCheck::HashChain,
        AuditCheck::Structure,
        AuditCheck::RevealComplete,
        AuditCheck::SeedCommitment,
        AuditCheck::PlayerSeeds,
        AuditCheck::Shuffle,
        AuditCheck::Leaves,
        AuditCheck::MerkleRoot,
        AuditCheck::DealOrder,
        AuditCheck::OpenedCards,
        AuditCheck::ActionSignatures,
        AuditCheck::Replay,
        AuditCheck::Commission,
    ];

    /// The check's name as printed by `claw-player audit` (kebab-case).
    pub fn name(self) -> &'static str {
        match self {
            AuditCheck::DealerSignatures => "dealer-signatures",
            AuditCheck::HashChain => "hash-chain",
            AuditCheck::Structure => "structure",
            AuditCheck::RevealComplete => "reveal-complete",
            AuditCheck::SeedCommitment => "seed-commitment",
            AuditCheck::PlayerSeeds => "player-seeds",
            AuditCheck::Shuffle => "shuffle",
            AuditCheck::Leaves => "leaves",
            AuditCheck::MerkleRoot => "merkle-root",
            AuditCheck::DealOrder => "deal-order",
            AuditCheck::OpenedCards => "opened-cards",
            AuditCheck::ActionSignatures => "action-signatures",
            AuditCheck::Replay => "replay",
            AuditCheck::Commission => "commission",
            AuditCheck::PreviousHand => "previous-hand",
            AuditCheck::Balances => "balances",
        }
    }

    /// Whether the check needs the secrets (dealer seed, every opening) and
    /// is skipped while a deferred reveal is pending.
    pub fn needs_reveal(self) -> bool {
        matches!(
            self,
            AuditCheck::RevealComplete
                | AuditCheck::SeedCommitment
                | AuditCheck::Shuffle
                | AuditCheck::Leaves
                | AuditCheck::Replay
        )
    }
}

impl fmt::Display for AuditCheck {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A failed audit: which check, and what exactly.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("audit check {check} failed: {detail}")]
pub struct AuditError {
    /// The first check that failed.
    pub check: AuditCheck,
    /// What failed, for people (event seq, position, seat…).
    pub detail: String,
}

impl AuditError {
    fn new(check: AuditCheck, detail: impl Into<String>) -> AuditError {
        AuditError { check, detail: detail.into() }
    }
}

/// The game-rules half of the audit, supplied by a crate that knows the
/// games (the player SDK implements it with `claw_games`).
pub trait Replayer {
    /// The canonical (unshuffled) deck of `game` with `settings`; the audit
    /// compares it with the deck `game-start` declared.
    fn canonical_deck(&self, game: &str, game_version: &str, settings: &Value)
        -> Result<Vec<CardId>, String>;

    /// The deck order the game scripts for hand `hand_number` with
    /// `settings` (tutorials), or `None` when it shuffles: the audit
    /// compares it with `deck_mode` and, when scripted, with the dealt order.
    fn scripted_deck(
        &self,
        game: &str,
        game_version: &str,
        settings: &Value,
        hand_number: u64,
    ) -> Result<Option<Vec<CardId>>, String>;

    /// Replays the hand from `hand` (settings, players, memory, deck order,
    /// actions) and compares deals, chip movements, result and table memory
    /// with what the dealer announced. Runs only when the deck order is known.
    fn replay(&self, hand: &VerifiedHand) -> Result<(), String>;
}

/// What the audit is given besides the transcript.
#[derive(Clone, Copy, Default)]
pub struct AuditOptions<'a> {
    /// The dealer key the auditor trusts (from the invite URL). When absent,
    /// the transcript header's key is used; when both, they must agree.
    pub dealer: Option<PlayerId>,
    /// The auditing player: its sealed cards are opened and checked.
    pub viewer: Option<&'a Identity>,
    /// The seed the viewer sent in time; it must be among the published seeds.
    pub my_seed: Option<Seed>,
    /// Under policy `deferred`, accept a transcript whose secrets are not
    /// published yet: the checks that need them are skipped and reported.
    pub allow_pending_reveal: bool,
    /// Game rules: canonical deck and replay.
    pub replayer: Option<&'a dyn Replayer>,
    /// The room's commission per player per hand, from the room
    /// configuration the dealer signed in the handshake (SPEC.md §8.2); when
    /// given, every seat's `commission` must equal it (and the room
    /// configuration `game-start` carries must state it). Needed only for a
    /// transcript written before `game-start` carried its room configuration.
    pub commission: Option<Chips>,
}

/// Who produced a recorded action.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", tag = "by")]
pub enum ActionSource {
    /// The player, signed with this seq.
    Player {
        /// The signed seq.
        seq: u32,
    },
    /// The dealer's timeout action.
    Timeout {
        /// The reason given.
        reason: TimeoutReason,
    },
}

/// An action of the hand, in order, ready for the replay.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct VerifiedAction {
    /// Who acted.
    pub seat: Seat,
    /// The game action.
    pub action: Value,
    /// Signed by the player, or a timeout.
    pub source: ActionSource,
    /// How many [`VerifiedHand::announced`] events came before this action
    /// (the replay's events up to here must be exactly that many).
    pub events_before: usize,
    /// The game's public state the dealer announced after the action (the
    /// replay recomputes it: bots act on it). Shared: a finished hand's
    /// report and the audit hold the same state.
    pub public_state: Arc<Value>,
}

/// A dealt card as the transcript announces it (the card known once the
/// deck order is, or when the viewer opened it).
pub type AnnouncedCard = crate::hand::DealtCard<Option<CardId>>;

/// A deal, chip movement, reveal or card transfer the dealer announced, in
/// transcript order: the rules' [`crate::hand::HandEvent`], with the cards
/// the viewer cannot see yet left out.
pub type AnnouncedEvent = crate::hand::HandEvent<Option<CardId>>;

/// The verified inputs and announcements of a hand: what the game replay
/// consumes and compares.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VerifiedHand {
    /// The hand.
    pub hand_id: HandId,
    /// The dealer key that signed it.
    pub dealer: PlayerId,
    /// Hands dealt at the table before this one.
    pub hand_number: u64,
    /// Registry name of the game.
    pub game: String,
    /// Rules version.
    pub game_version: String,
    /// Settings (parsed from the signed text).
    pub settings: Value,
    /// The config hash (checked against game, version and settings).
    pub config_hash: Digest,
    /// The room configuration `game-start` carries (checked against the
    /// hand's game, settings, policies, seed timeout and commission);
    /// `None` in a transcript written before it did.
    pub room: Option<RoomConfig>,
    /// Players in seat order.
    pub players: Vec<HandPlayer>,
    /// Table memory at hand start.
    pub memory: Value,
    /// The room's previous hand, which this one continues.
    pub previous: Option<PreviousHand>,
    /// The dealer's X25519 key the hand's cards were sealed with.
    pub dealer_encryption_key: EncryptionKey,
    /// Shuffled or scripted.
    pub deck_mode: DeckMode,
    /// Entropy mode.
    pub entropy: EntropyMode,
    /// Reveal policy.
    pub reveal: RevealPolicy,
    /// The canonical deck `game-start` declared.
    pub declared_deck: Vec<CardId>,
    /// The card at every position, once revealed.
    pub deck_order: Option<Vec<CardId>>,
    /// The dealer seed, once revealed.
    pub dealer_seed: Option<Seed>,
    /// Player seeds by seat (`None`: none received).
    pub player_seeds: Vec<Option<Seed>>,
    /// Deals, chip movements and reveals, in order.
    pub announced: Vec<AnnouncedEvent>,
    /// Actions in order (player-signed and timeouts).
    pub actions: Vec<VerifiedAction>,
    /// The announced result.
    pub result: HandResult,
    /// The announced table memory after the hand.
    pub memory_after: Value,
    /// The viewer's own cards, opened from their sealed boxes (dealt or
    /// transferred to it), in transcript order.
    pub my_cards: Vec<CardOpening>,
}

/// A passed audit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuditReport {
    /// The verified hand.
    pub hand: VerifiedHand,
    /// Checks that ran and passed, in order.
    pub passed: Vec<AuditCheck>,
    /// Checks that did not run: secrets pending (deferred reveal), or no
    /// [`Replayer`] given.
    pub skipped: Vec<AuditCheck>,
    /// Whether the declared deck was compared with the game's canonical deck
    /// (needs a [`Replayer`]).
    pub deck_checked: bool,
}

impl AuditReport {
    /// True when every check ran.
    pub fn complete(&self) -> bool {
        self.skipped.is_empty()
    }
}

/// Reads a JSON-lines transcript and audits it; a file that does not parse
/// fails the `structure` check.
pub fn audit_jsonl(text: &str, opts: &AuditOptions<'_>) -> Result<AuditReport, AuditError> {
    let t = Transcript::from_jsonl(text).map_err(|e| AuditError::new(e.check(), e.to_string()))?;
    audit(&t, opts)
}

/// The offline audit of a whole transcript: the dealer signatures of every
/// event are batch-verified, then every event is fed to one [`HandAudit`]
/// (which does not verify them again) and the hand is finished. Returns the
/// verified hand, or the first failure.
pub fn audit(t: &Transcript, opts: &AuditOptions<'_>) -> Result<AuditReport, AuditError> {
    let dealer = dealer_key(t, opts)?;
    check_dealer_signatures(t, &dealer)?;
    let mut hand = HandAudit::presigned(dealer, t.hand_id);
    if let Some(h) = &t.header {
        hand = hand.with_room_id(h.room_id.clone());
    }
    if let Some(v) = opts.viewer {
        hand = hand.with_viewer(Viewer::Identity(v));
    }
    if let Some(c) = opts.commission {
        hand = hand.with_room_commission(c);
    }
    if let Some(s) = opts.my_seed {
        hand.set_my_seed(s);
    }
    for e in &t.events {
        hand.accept(e)?;
    }
    hand.finish(opts.replayer, opts.allow_pending_reveal)
}

/// Check 14: every seat paid the room's commission: the one of the room
/// configuration `game-start` carries (`signed`), else the one the auditor
/// was told (`told`), else seat 0's. Told and signed must agree.
fn check_commission(
    players: &[HandPlayer],
    signed: Option<Chips>,
    told: Option<Chips>,
) -> Result<(), AuditError> {
    let fail = |d: String| Err(AuditError::new(AuditCheck::Commission, d));
    if let (Some(s), Some(t)) = (signed, told) {
        if s != t {
            return fail(format!(
                "the room configuration in the hand states commission {s}, the room's is {t}"
            ));
        }
    }
    let room = signed.or(told);
    let first = players.first().map_or(Chips::ZERO, |p| p.commission);
    let expected = room.unwrap_or(first);
    match players.iter().find(|p| p.commission != expected) {
        Some(p) => fail(format!(
            "seat {} paid commission {}, the room's is {expected}{}",
            p.seat.0,
            p.commission,
            if room.is_some() { "" } else { " (as seat 0's)" }
        )),
        None => Ok(()),
    }
}

/// A finished hand as the next hand of its room must continue it (SPEC.md
/// §11.4): what `game-start`'s `previous` names, and what carries over.
#[derive(Debug, Clone, PartialEq)]
pub struct HandLink {
    /// The hand.
    pub hand_id: HandId,
    /// Its number.
    pub hand_number: u64,
    /// The table memory it left (the next hand's `memory`).
    pub memory_after: Value,
    /// Its room configuration, if it carried one.
    pub room: Option<RoomConfig>,
    /// Its config hash (game, version, settings).
    pub config_hash: Digest,
    /// The dealer's X25519 key it was sealed with.
    pub dealer_encryption_key: EncryptionKey,
}

impl VerifiedHand {
    /// This hand as the next hand of its room must continue it.
    pub fn link(&self) -> HandLink {
        HandLink {
            hand_id: self.hand_id,
            hand_number: self.hand_number,
            memory_after: self.memory_after.clone(),
            room: self.room.clone(),
            config_hash: self.config_hash,
            dealer_encryption_key: self.dealer_encryption_key,
        }
    }
}

/// What a hand states about the hand before it: the fields
/// [`check_continues`] compares with that hand's [`HandLink`].
struct NextHand<'a> {
    hand_id: HandId,
    hand_number: u64,
    previous: Option<PreviousHand>,
    memory: &'a Value,
    room: Option<&'a RoomConfig>,
    config_hash: Digest,
    dealer_encryption_key: EncryptionKey,
}

impl<'a> From<&'a VerifiedHand> for NextHand<'a> {
    fn from(h: &'a VerifiedHand) -> NextHand<'a> {
        NextHand {
            hand_id: h.hand_id,
            hand_number: h.hand_number,
            previous: h.previous,
            memory: &h.memory,
            room: h.room.as_ref(),
            config_hash: h.config_hash,
            dealer_encryption_key: h.dealer_encryption_key,
        }
    }
}

/// Check `previous-hand` of `next` against `prev`, a hand of the same room
/// and dealer before it. When `next` names `prev` as its previous hand, it
/// continues it: `prev`'s number, a greater number of its own, `prev`'s
/// table memory, room configuration, config hash and dealer encryption
/// key. When it names another hand (a live player saw `prev`, then sat out
/// hands the room finished since), that hand came after `prev`, and the
/// room configuration and dealer key are still `prev`'s. `next` naming no
/// previous hand fails (within one connection the room did not restart).
fn check_continues(prev: &HandLink, next: &NextHand<'_>) -> Result<(), AuditError> {
    let fail = |d: String| {
        Err(AuditError::new(
            AuditCheck::PreviousHand,
            format!("hand {} after hand {}: {d}", next.hand_id, prev.hand_id),
        ))
    };
    let Some(named) = next.previous else {
        return fail("it names no previous hand, as if the room had just opened".into());
    };
    if named.hand_id == prev.hand_id {
        if named.hand_number != prev.hand_number {
            return fail(format!(
                "it names hand number {}, that hand is number {}",
                named.hand_number, prev.hand_number
            ));
        }
        if !continues_memory(next.memory, &prev.memory_after) {
            return fail(format!(
                "it starts from table memory {}, that hand left {}",
                next.memory, prev.memory_after
            ));
        }
        if next.config_hash != prev.config_hash {
            return fail("its game, version or settings (config hash) differ".into());
        }
    } else if named.hand_number <= prev.hand_number {
        return fail(format!(
            "it names hand {} number {} as its previous hand, not a hand after number {}",
            named.hand_id, named.hand_number, prev.hand_number
        ));
    }
    if next.hand_number <= prev.hand_number {
        return fail(format!("hand number {} is not above {}", next.hand_number, prev.hand_number));
    }
    if next.room != prev.room.as_ref() {
        return fail("its room configuration differs".into());
    }
    if next.dealer_encryption_key != prev.dealer_encryption_key {
        return fail("its dealer encryption key differs".into());
    }
    Ok(())
}

/// The member of a table memory by which the dealer ends a game's match
/// from outside its rules (SPEC.md §9.5 `memory`; Guandan's `end_request`).
pub const END_REQUEST: &str = "end_request";

/// Whether a hand's table `memory` continues `after`, its previous hand's
/// `memory_after`: equal to it, or an object equal to it with the member
/// [`END_REQUEST`] added (whether the game accepts that member is the
/// replay's check 13).
fn continues_memory(memory: &Value, after: &Value) -> bool {
    match (memory, after) {
        _ if memory == after => true,
        (Value::Object(m), Value::Object(a)) => {
            !a.contains_key(END_REQUEST)
                && m.contains_key(END_REQUEST)
                && m.len() == a.len() + 1
                && a.iter().all(|(k, v)| m.get(k) == Some(v))
        }
        _ => false,
    }
}

/// The cross-hand check `previous-hand` (SPEC.md §11.4) of two hands of a
/// room, `next` naming `prev` as its previous hand: see [`HandLink`].
pub fn check_previous(prev: &VerifiedHand, next: &VerifiedHand) -> Result<(), AuditError> {
    check_continues(&prev.link(), &NextHand::from(next))
}

/// The cross-hand check `balances` (SPEC.md §11.4): `next` is the hand the
/// room dealt after `prev` (it names `prev` as its previous hand, or, in
/// transcripts from before that link, their numbers are consecutive; same
/// dealer). Every player of both must start `next` with
/// [`expected_start_balance`] of its `prev` balance, net and its `next`
/// commission.
pub fn check_balances(prev: &VerifiedHand, next: &VerifiedHand) -> Result<(), AuditError> {
    for p in &next.players {
        let Some(q) = prev.players.iter().find(|q| q.id == p.id) else { continue };
        let net = prev.result.net.get(q.seat.index()).copied().unwrap_or(0);
        let Some(expected) = expected_start_balance(q.balance, net, p.commission) else { continue };
        if p.balance != expected {
            return Err(AuditError::new(
                AuditCheck::Balances,
                format!(
                    "hand {} seat {}: balance {}, but hand {} left it {} {net:+} and the commission is {}: expected {expected}",
                    next.hand_id, p.seat.0, p.balance, prev.hand_id, q.balance, p.commission
                ),
            ));
        }
    }
    Ok(())
}

fn dealer_key(t: &Transcript, opts: &AuditOptions<'_>) -> Result<PlayerId, AuditError> {
    match (opts.dealer, t.dealer()) {
        (Some(d), Some(h)) if d != h => Err(AuditError::new(
            AuditCheck::DealerSignatures,
            format!("transcript header names dealer {h}, expected {d}"),
        )),
        (Some(d), _) | (None, Some(d)) => Ok(d),
        (None, None) => {
            Err(AuditError::new(AuditCheck::DealerSignatures, "no dealer key given and no header"))
        }
    }
}

/// Check 1 offline, before the first event: every signature present
/// verifies (one batch; the first bad event named). The unsigned runs and
/// the signed end are checked per event, as live.
fn check_dealer_signatures(t: &Transcript, dealer: &PlayerId) -> Result<(), AuditError> {
    let fail = |d: String| AuditError::new(AuditCheck::DealerSignatures, d);
    let signed: Vec<(&EventEnvelope, &Signature)> =
        t.events.iter().filter_map(|e| e.sig.as_ref().map(|s| (e, s))).collect();
    let bodies: Vec<_> = signed.iter().map(|(e, _)| e.signing_body()).collect();
    let items: Vec<BatchItem<'_>> = signed
        .iter()
        .zip(&bodies)
        .map(|((_, s), b)| BatchItem { signer: dealer, purpose: Purpose::Event, body: b, signature: s })
        .collect();
    verify_batch(&items).map_err(|e| {
        fail(match &e {
            SignatureError::BatchItem { index, source } => {
                let seq = signed.get(*index).map_or(*index as u64, |(e, _)| e.seq);
                format!("event seq {seq}: {source}")
            }
            other => other.to_string(),
        })
    })?;
    Ok(())
}

/// Check 7 on `deck_mode`, given the game's rules (`scripted`: what they
/// script for the hand, `None` without a [`Replayer`]): a hand is scripted
/// exactly when its game scripts it (a dealer cannot stack a shuffled
/// game's deck by calling it scripted), and then dealt in the script's
/// order (`order`, once revealed).
fn check_deck_mode(
    mode: DeckMode,
    scripted: Option<&Option<Vec<CardId>>>,
    order: Option<&[CardId]>,
) -> Result<(), AuditError> {
    let fail = |d: &str| Err(AuditError::new(AuditCheck::Shuffle, d));
    match (mode, scripted) {
        (_, None) => Ok(()),
        (DeckMode::Shuffled, Some(Some(_))) => {
            fail("deck mode shuffled, but the game scripts this hand's deck")
        }
        (DeckMode::Scripted, Some(None)) => {
            fail("deck mode scripted, but the game shuffles this hand's deck")
        }
        (DeckMode::Scripted, Some(Some(script))) if order.is_some_and(|o| o != script.as_slice()) => {
            fail("the scripted deck is not dealt in the game's scripted order for this hand")
        }
        _ => Ok(()),
    }
}

fn check_shuffle(
    start: &GameStart,
    dealer_seed: &Seed,
    player_seeds: &[Option<Seed>],
    order: &[CardId],
) -> Result<(), AuditError> {
    match start.deck_mode {
        DeckMode::Shuffled => {
            let s = shuffle_seed(dealer_seed, player_seeds);
            let expected = shuffle(&start.deck, &s);
            if let Some(p) = expected.iter().zip(order).position(|(a, b)| a != b) {
                return Err(AuditError::new(
                    AuditCheck::Shuffle,
                    format!("position {p}: shuffle gives {}, dealt {}", expected[p], order[p]),
                ));
            }
            if expected.len() != order.len() {
                return Err(AuditError::new(AuditCheck::Shuffle, "deck length differs"));
            }
        }
        // Refused at `structure` before this (the blind events come first).
        DeckMode::Blind => {
            return Err(AuditError::new(
                AuditCheck::Shuffle,
                "blind hands are not audited yet (SPEC.md §9.7)",
            ))
        }
        DeckMode::Scripted => {
            let mut a = start.deck.clone();
            let mut b = order.to_vec();
            a.sort();
            b.sort();
            if a != b {
                return Err(AuditError::new(
                    AuditCheck::Shuffle,
                    "scripted deck is not a permutation of the declared deck",
                ));
            }
        }
    }
    Ok(())
}

/// The auditing player: its sealed cards are opened and checked.
#[derive(Clone)]
pub enum Viewer<'a> {
    /// A player's identity; its box key with the dealer is derived from
    /// `game-start`'s `dealer_encryption_key`.
    Identity(&'a Identity),
    /// A live session's keys, agreed in the handshake: `game-start` must
    /// list this player's and the dealer's encryption keys as given, and
    /// boxes are opened with `shared` (no key exchange per hand).
    Session {
        /// The player.
        id: PlayerId,
        /// The player's encryption key.
        encryption_key: EncryptionKey,
        /// The dealer's encryption key from the handshake.
        dealer_encryption_key: EncryptionKey,
        /// The box key of the two.
        shared: SharedKey,
    },
}

impl Viewer<'_> {
    fn id(&self) -> PlayerId {
        match self {
            Viewer::Identity(i) => i.id(),
            Viewer::Session { id, .. } => *id,
        }
    }
}

/// What one accepted event gives the caller: its decoded body and the
/// viewer's cards it opened (dealt or transferred to the viewer), checked
/// against their leaves.
#[derive(Debug, Clone, PartialEq)]
pub struct Accepted {
    /// The event's body.
    pub body: EventBody,
    /// The viewer's cards this event sealed to it, opened and checked.
    pub mine: Vec<CardOpening>,
    /// The action of an `action-result` or `timeout-action`, parsed once.
    pub action: Option<Value>,
}

/// The one hand verifier (SPEC.md §11.2): fed every event of a hand in
/// order ([`HandAudit::accept`], the per-event checks), then
/// [`HandAudit::finish`] (the checks that need the whole hand). The live
/// player runs it as events arrive; the offline [`audit`] feeds a whole
/// transcript. After a failure every call returns that failure.
pub struct HandAudit<'a> {
    chain: TranscriptVerifier,
    viewer: Option<Viewer<'a>>,
    my_seed: Option<Seed>,
    /// See [`HandAudit::seed_uncertain`].
    seed_uncertain: bool,
    /// The commission the auditor was told (offline, `--commission`).
    commission: Option<Chips>,
    /// The room configuration the dealer signed in the handshake (live):
    /// `game-start` must carry exactly these bytes.
    room_config: Option<RawJson>,
    /// The room the hand must belong to (the invite's, or the header's).
    room_id: Option<String>,
    /// The hand this player saw end last in this connection (live).
    previous: Option<HandLink>,
    progress: Progress,
    failed: Option<AuditError>,
}

/// Where the hand is.
enum Progress {
    /// Nothing accepted yet.
    AwaitPrepare,
    /// `hand-prepare` accepted (and, blind tables, the key and shuffle events).
    AwaitStart(HandPrepare, blind::BlindSetup),
    /// `game-start` accepted.
    Hand(Box<HandState>),
}

/// A started hand's verified state.
struct HandState {
    hand_id: HandId,
    prepare: HandPrepare,
    start: GameStart,
    settings: Value,
    /// The room configuration `game-start` carries, parsed.
    room: Option<RoomConfig>,
    player_seeds: Vec<Option<Seed>>,
    /// The viewer's box key and seat, when the viewer plays this hand.
    key: Option<(SharedKey, Seat)>,
    cards: CardTrack,
    announced: Vec<AnnouncedEvent>,
    actions: Vec<VerifiedAction>,
    /// Action signatures, verified in one batch at finish.
    signed_actions: Vec<SignedAction>,
    last_action_seq: Vec<Option<u32>>,
    my_cards: Vec<CardOpening>,
    ending: Ending,
    actions_verified: bool,
    /// Blind tables: the deck, its requests, shares and opened cards.
    blind: Option<Box<blind::BlindAudit>>,
}

/// The end of a hand.
enum Ending {
    Playing,
    Ended(GameEnd),
    Revealed(GameEnd, AuditReveal),
}

struct SignedAction {
    event: u64,
    seat: Seat,
    body: [u8; 52],
    sig: Signature,
}

/// Who holds each dealt position and whether it is face up (check
/// `deal-order`, SPEC.md §11.2 step 10).
#[derive(Default)]
struct CardTrack {
    faces: Vec<CardFace>,
    /// `None`: community, burn or house card.
    holders: Vec<Option<Seat>>,
}

fn structure(detail: impl Into<String>) -> AuditError {
    AuditError::new(AuditCheck::Structure, detail)
}

impl<'a> HandAudit<'a> {
    /// A live verifier for the hand `hand_id` signed by `dealer`: the chain
    /// is checked on every event, a dealer signature where the player relies
    /// on it ([`HandAudit::confirm`], `game-end`, `audit-reveal`, and when
    /// `MAX_UNSIGNED_RUN` events are unconfirmed), never twice.
    pub fn live(dealer: PlayerId, hand_id: HandId) -> HandAudit<'a> {
        HandAudit::with(TranscriptVerifier::for_hand(dealer, hand_id))
    }

    fn presigned(dealer: PlayerId, hand_id: HandId) -> HandAudit<'a> {
        HandAudit::with(TranscriptVerifier::presigned(dealer, hand_id))
    }

    fn with(chain: TranscriptVerifier) -> HandAudit<'a> {
        HandAudit {
            chain,
            viewer: None,
            my_seed: None,
            seed_uncertain: false,
            commission: None,
            room_config: None,
            room_id: None,
            previous: None,
            progress: Progress::AwaitPrepare,
            failed: None,
        }
    }

    /// Audits as `viewer`: its sealed cards are opened and checked.
    pub fn with_viewer(mut self, viewer: Viewer<'a>) -> HandAudit<'a> {
        self.viewer = Some(viewer);
        self
    }

    /// The room's commission, as the auditor was told it (a transcript
    /// written before `game-start` carried its room configuration): every
    /// seat's `game-start` commission must equal it.
    pub fn with_room_commission(mut self, commission: Chips) -> HandAudit<'a> {
        self.commission = Some(commission);
        self
    }

    /// The room configuration the dealer signed in the handshake's challenge
    /// (live): `game-start` must carry these exact bytes (check
    /// `structure`), whose commission binds every seat (check `commission`).
    pub fn with_room_config(mut self, room_config: RawJson) -> HandAudit<'a> {
        self.room_config = Some(room_config);
        self
    }

    /// The room the hand must belong to (the invite's; offline, the
    /// transcript header's): the room configuration must name it.
    pub fn with_room_id(mut self, room_id: impl Into<String>) -> HandAudit<'a> {
        self.room_id = Some(room_id.into());
        self
    }

    /// The hand of this room the player saw end last in this connection
    /// (live): the new hand must continue it (check `previous-hand`, at
    /// `game-start`).
    pub fn with_previous(mut self, previous: HandLink) -> HandAudit<'a> {
        self.previous = Some(previous);
        self
    }

    /// The seed the viewer sent in time (before `game-start` is accepted):
    /// under joint entropy it must be published for the viewer's seat.
    pub fn set_my_seed(&mut self, seed: Seed) {
        self.my_seed = Some(seed);
    }

    /// The seed the viewer sent, if any.
    pub fn my_seed(&self) -> Option<Seed> {
        self.my_seed
    }

    /// The viewer's seed may have reached the dealer after its seed window
    /// (it went out around a dropped connection, or answered a resent
    /// `hand-prepare`): its absence is then no failure; a different seed in
    /// its place still is (SPEC.md §11.2 check 6).
    pub fn seed_uncertain(&mut self) {
        self.seed_uncertain = true;
    }

    /// The dealer key events are checked against.
    pub fn dealer(&self) -> PlayerId {
        self.chain.dealer()
    }

    /// The seq due next.
    pub fn next_seq(&self) -> u64 {
        self.chain.next_seq()
    }

    /// Hash of the last accepted event.
    pub fn last_hash(&self) -> Digest {
        self.chain.last_hash()
    }

    /// Dealer signatures verified so far (live).
    pub fn signatures_verified(&self) -> u64 {
        self.chain.signatures_verified()
    }

    /// A reliance point before the player acts (`your-turn`): every accepted
    /// event must be covered by a dealer signature, which is verified now
    /// unless it was already (check `dealer-signatures`; SPEC.md §10.3).
    pub fn confirm(&mut self) -> Result<(), AuditError> {
        if let Some(e) = &self.failed {
            return Err(e.clone());
        }
        let r = self.chain.confirm().map_err(|e| AuditError::new(e.check(), e.to_string()));
        if let Err(e) = &r {
            self.failed = Some(e.clone());
        }
        r
    }

    /// The accepted `game-start`, once there.
    pub fn game_start(&self) -> Option<&GameStart> {
        match &self.progress {
            Progress::Hand(h) => Some(&h.start),
            _ => None,
        }
    }

    /// The game's settings, parsed from `game-start`'s signed text.
    pub fn settings(&self) -> Option<&Value> {
        match &self.progress {
            Progress::Hand(h) => Some(&h.settings),
            _ => None,
        }
    }

    /// The reveal policy, once `game-start` is accepted.
    pub fn reveal_policy(&self) -> Option<RevealPolicy> {
        self.game_start().map(|s| s.reveal)
    }

    /// Whether `game-end` was accepted.
    pub fn ended(&self) -> bool {
        matches!(&self.progress, Progress::Hand(h) if !matches!(h.ending, Ending::Playing))
    }

    /// Whether `audit-reveal` was accepted.
    pub fn revealed(&self) -> bool {
        matches!(&self.progress, Progress::Hand(h) if matches!(h.ending, Ending::Revealed(..)))
    }

    /// The per-event checks of SPEC.md §11.2 on the next event: chain (and
    /// its signature when live), structure, player seeds, Merkle root and
    /// commission at `game-start`, deal order and opened cards, action seqs.
    pub fn accept(&mut self, env: &EventEnvelope) -> Result<Accepted, AuditError> {
        if let Some(e) = &self.failed {
            return Err(e.clone());
        }
        let r = self.accept_event(env);
        if let Err(e) = &r {
            self.failed = Some(e.clone());
        }
        r
    }

    fn accept_event(&mut self, env: &EventEnvelope) -> Result<Accepted, AuditError> {
        let body = self.chain.accept(env).map_err(|e| AuditError::new(e.check(), e.to_string()))?;
        if matches!(body, EventBody::GameEnd(_) | EventBody::AuditReveal(_)) {
            // The hand's end is a reliance point: its signature is due here.
            self.chain.confirm().map_err(|e| AuditError::new(e.check(), e.to_string()))?;
        }
        let seq = env.seq;
        let progress = std::mem::replace(&mut self.progress, Progress::AwaitPrepare);
        let (progress, accepted) = match (progress, body) {
            (Progress::AwaitPrepare, EventBody::HandPrepare(p)) => {
                let accepted =
                    Accepted { body: EventBody::HandPrepare(p.clone()), mine: Vec::new(), action: None };
                (Progress::AwaitStart(p, blind::BlindSetup::default()), accepted)
            }
            (Progress::AwaitPrepare, b) => {
                return Err(structure(format!("event {seq}: expected hand-prepare, got {}", b.type_name())))
            }
            (
                Progress::AwaitStart(p, mut setup),
                b @ (EventBody::BlindKeys(_)
                | EventBody::BlindPieces(_)
                | EventBody::BlindComplaint(_)
                | EventBody::BlindShuffle(_)
                | EventBody::BlindSkip(_)),
            ) => {
                let accepted = Accepted { body: b.clone(), mine: Vec::new(), action: None };
                setup.accept(seq, b)?;
                (Progress::AwaitStart(p, setup), accepted)
            }
            (Progress::AwaitStart(prepare, setup), EventBody::GameStart(g)) => {
                let state = self.start(env.hand_id, prepare, setup, g.clone())?;
                let accepted = Accepted { body: EventBody::GameStart(g), mine: Vec::new(), action: None };
                (Progress::Hand(Box::new(state)), accepted)
            }
            (Progress::AwaitStart(..), b) => {
                return Err(structure(format!("event {seq}: expected game-start, got {}", b.type_name())))
            }
            (Progress::Hand(mut h), b) => {
                let accepted = h.accept(seq, b)?;
                (Progress::Hand(h), accepted)
            }
        };
        self.progress = progress;
        Ok(accepted)
    }

    /// `game-start`: structure (the room configuration included), then
    /// player seeds, Merkle root, commission, and live the previous hand.
    fn start(
        &self,
        hand_id: HandId,
        p: HandPrepare,
        setup: blind::BlindSetup,
        g: GameStart,
    ) -> Result<HandState, AuditError> {
        let n = g.players.len();
        if n == 0 || n > crate::limits::MAX_PLAYERS_PER_HAND {
            return Err(structure(format!("{n} players")));
        }
        let ids: Vec<PlayerId> = g.players.iter().map(|p| p.id).collect();
        if ids != p.players {
            return Err(structure("game-start players differ from hand-prepare's"));
        }
        if let Some(i) = g.players.iter().enumerate().position(|(i, p)| p.seat.index() != i) {
            return Err(structure(format!("player {i} has seat {}", g.players[i].seat.0)));
        }
        if g.entropy != p.entropy {
            return Err(structure("entropy mode differs between hand-prepare and game-start"));
        }
        let is_blind = g.deck_mode == DeckMode::Blind;
        if is_blind != setup.seen() {
            return Err(structure("deck mode blind exactly when the blind events come (SPEC.md §9.7)"));
        }
        if g.deck.is_empty()
            || g.deck.len() > crate::limits::MAX_DECK_POSITIONS
            || (!is_blind && g.deck.len() != g.leaves.len())
        {
            return Err(structure(format!("deck of {} cards with {} leaves", g.deck.len(), g.leaves.len())));
        }
        if config_hash(&g.game, &g.game_version, &g.settings) != g.config_hash {
            return Err(structure("config hash does not match game, version and settings"));
        }
        if g.entropy == EntropyMode::Dealer && !g.player_seeds.is_empty() {
            return Err(structure("player seeds in a dealer-entropy hand"));
        }
        let mut last: Option<Seat> = None;
        for s in &g.player_seeds {
            if s.seat.index() >= n || last.is_some_and(|l| l >= s.seat) {
                return Err(structure(format!("player seeds: bad or unordered seat {}", s.seat.0)));
            }
            last = Some(s.seat);
        }
        let settings = g.settings.to_value().map_err(|e| structure(format!("settings: {e}")))?;
        let room = self.check_room(&hand_id, &p, &g, &settings)?;
        let seat =
            self.viewer.as_ref().and_then(|v| g.players.iter().find(|q| q.id == v.id())).map(|q| q.seat);
        if let (Some(Viewer::Session { encryption_key, dealer_encryption_key, .. }), Some(seat)) =
            (&self.viewer, seat)
        {
            if g.players[seat.index()].encryption_key != *encryption_key {
                return Err(structure("game-start lists another encryption key for the viewer"));
            }
            if g.dealer_encryption_key != *dealer_encryption_key {
                return Err(structure("dealer encryption key differs from the handshake's"));
            }
        }
        // Offline, the viewer's key file names the key its cards must be sealed to.
        if let (Some(Viewer::Identity(v)), Some(seat)) = (&self.viewer, seat) {
            if g.players[seat.index()].encryption_key != v.encryption_key() {
                return Err(structure("game-start lists another encryption key for the viewer"));
            }
        }
        let player_seeds = self.check_player_seeds(&hand_id, &g, seat)?;
        let blind = if is_blind { Some(Box::new(setup.start(hand_id, &p.players, &g)?)) } else { None };
        if !is_blind && merkle_root(&g.leaves) != g.root {
            return Err(AuditError::new(AuditCheck::MerkleRoot, "root is not the Merkle root of the leaves"));
        }
        check_commission(&g.players, room.as_ref().map(|r| r.commission), self.commission)?;
        if let Some(prev) = &self.previous {
            check_continues(
                prev,
                &NextHand {
                    hand_id,
                    hand_number: p.hand_number,
                    previous: g.previous,
                    memory: &g.memory,
                    room: room.as_ref(),
                    config_hash: g.config_hash,
                    dealer_encryption_key: g.dealer_encryption_key,
                },
            )?;
        }
        let key = match (&self.viewer, seat) {
            (Some(Viewer::Identity(v)), Some(seat)) => match v.shared_key(&g.dealer_encryption_key) {
                Ok(k) => Some((k, seat)),
                Err(e) => {
                    return Err(AuditError::new(
                        AuditCheck::OpenedCards,
                        format!("dealer encryption key: {e}"),
                    ))
                }
            },
            (Some(Viewer::Session { shared, .. }), Some(seat)) => Some((shared.clone(), seat)),
            _ => None,
        };
        Ok(HandState {
            hand_id,
            prepare: p,
            settings,
            room,
            player_seeds,
            key,
            cards: CardTrack::default(),
            // Room for a typical hand's events without regrowing.
            announced: Vec::with_capacity(32),
            actions: Vec::with_capacity(32),
            signed_actions: Vec::with_capacity(32),
            last_action_seq: vec![None; n],
            my_cards: Vec::new(),
            ending: Ending::Playing,
            actions_verified: false,
            start: g,
            blind,
        })
    }

    /// Check 3 on `game-start`'s room configuration and previous hand: live,
    /// the room configuration is the handshake's, byte for byte; it names
    /// the hand's room, game, settings, entropy, reveal policy and seed
    /// timeout. The previous hand came before this one; a hand that names
    /// none starts from no table memory. A transcript written before
    /// `game-start` carried its room configuration is checked as then.
    fn check_room(
        &self,
        hand_id: &HandId,
        p: &HandPrepare,
        g: &GameStart,
        settings: &Value,
    ) -> Result<Option<RoomConfig>, AuditError> {
        if let Some(prev) = &g.previous {
            if prev.hand_id == *hand_id || prev.hand_number >= p.hand_number {
                return Err(structure(format!(
                    "hand number {} names hand {} number {} as its previous hand",
                    p.hand_number, prev.hand_id, prev.hand_number
                )));
            }
        }
        let Some(raw) = &g.room_config else {
            return match &self.room_config {
                Some(_) => Err(structure("game-start carries no room configuration")),
                None => Ok(None),
            };
        };
        if self.room_config.as_ref().is_some_and(|signed| signed != raw) {
            return Err(structure(
                "the room configuration differs from the one the dealer signed in the handshake",
            ));
        }
        let room: RoomConfig = raw.parse().map_err(|e| structure(format!("room configuration: {e}")))?;
        let differs = |what: &str| Err(structure(format!("{what} than its room configuration states")));
        if self.room_id.as_ref().is_some_and(|id| *id != room.room_id) {
            return differs("another room");
        }
        if room.game != g.game {
            return differs("another game");
        }
        if room.settings != *settings {
            return differs("other settings");
        }
        if room.entropy != g.entropy {
            return differs("another entropy mode");
        }
        if room.reveal != g.reveal {
            return differs("another reveal policy");
        }
        if room.seed_timeout_ms != p.seed_timeout_ms {
            return differs("another seed timeout in hand-prepare");
        }
        if g.previous.is_none() && !g.memory.is_null() {
            return Err(structure("a hand that names no previous hand starts from table memory"));
        }
        Ok(Some(room))
    }

    fn check_player_seeds(
        &self,
        hand_id: &HandId,
        g: &GameStart,
        viewer_seat: Option<Seat>,
    ) -> Result<Vec<Option<Seed>>, AuditError> {
        let fail = |d: String| Err(AuditError::new(AuditCheck::PlayerSeeds, d));
        let bodies: Vec<[u8; 48]> = g
            .player_seeds
            .iter()
            .map(|s| crate::messages::player_seed_signing_body(hand_id, &s.seed))
            .collect();
        let items: Vec<BatchItem<'_>> = g
            .player_seeds
            .iter()
            .zip(&bodies)
            .map(|(s, b)| BatchItem {
                signer: &g.players[s.seat.index()].id,
                purpose: Purpose::PlayerSeed,
                body: b,
                signature: &s.sig,
            })
            .collect();
        if let Err(e) = verify_batch(&items) {
            let seat = match &e {
                SignatureError::BatchItem { index, .. } => g.player_seeds.get(*index).map(|s| s.seat.0),
                _ => None,
            };
            return fail(format!("seed of seat {seat:?} not signed by its player: {e}"));
        }
        let mut seeds = vec![None; g.players.len()];
        for s in &g.player_seeds {
            seeds[s.seat.index()] = Some(s.seed);
        }
        if let (Some(seat), Some(mine)) = (viewer_seat, self.my_seed) {
            match seeds[seat.index()] {
                _ if g.entropy != EntropyMode::Joint => {}
                Some(s) if s == mine => {}
                Some(_) => return fail(format!("the viewer's seed (seat {}) was replaced", seat.0)),
                None if self.seed_uncertain => {}
                None => return fail(format!("the viewer's seed (seat {}) is missing", seat.0)),
            }
        }
        Ok(seeds)
    }

    /// The checks that need the whole hand, in SPEC.md §11.2 order: a
    /// `game-end` was accepted (structure), reveal complete, seed
    /// commitment, shuffle, leaves, the `game-end` / `audit-reveal`
    /// openings (opened cards), action signatures (one batch), replay. Under
    /// a deferred reveal not yet published, `allow_pending_reveal` skips the
    /// checks that need it. May run again once `audit-reveal` is accepted;
    /// action signatures are verified once.
    pub fn finish(
        &mut self,
        replayer: Option<&dyn Replayer>,
        allow_pending_reveal: bool,
    ) -> Result<AuditReport, AuditError> {
        if let Some(e) = &self.failed {
            return Err(e.clone());
        }
        let dealer = self.chain.dealer();
        let r = match &mut self.progress {
            Progress::Hand(h) => h.finish(dealer, replayer, allow_pending_reveal),
            _ => Err(structure("no game-end: the hand is not finished")),
        };
        if let Err(e) = &r {
            self.failed = Some(e.clone());
        }
        r
    }
}

impl HandState {
    fn n(&self) -> usize {
        self.start.players.len()
    }

    fn seat_ok(&self, s: Seat) -> bool {
        s.index() < self.n()
    }

    fn accept(&mut self, seq: u64, body: EventBody) -> Result<Accepted, AuditError> {
        let bad = |d: String| Err(structure(format!("event {seq}: {d}")));
        let playing = matches!(self.ending, Ending::Playing);
        match &body {
            EventBody::GameEnd(g) if playing => {
                let r = &g.result;
                if r.net.len() != self.n() || r.winners.iter().any(|w| !self.seat_ok(*w)) {
                    return Err(structure("game-end result does not fit the players"));
                }
                self.ending = Ending::Ended(g.clone());
                return Ok(Accepted { body, mine: Vec::new(), action: None });
            }
            EventBody::AuditReveal(a) if matches!(self.ending, Ending::Ended(_)) => {
                let a = a.clone();
                if let Ending::Ended(g) = std::mem::replace(&mut self.ending, Ending::Playing) {
                    self.ending = Ending::Revealed(g, a);
                }
                return Ok(Accepted { body, mine: Vec::new(), action: None });
            }
            EventBody::PhaseDeal(_)
            | EventBody::NewCard(_)
            | EventBody::Reveal(_)
            | EventBody::CardTransfer(_)
            | EventBody::Chips(_)
            | EventBody::ActionResult(_)
            | EventBody::TimeoutAction(_)
                if playing => {}
            EventBody::BlindRequest(_)
            | EventBody::BlindShares(_)
            | EventBody::BlindReveal(_)
            | EventBody::BlindRecover(_)
            | EventBody::BlindRecovery(_)
                if playing && self.blind.is_some() => {}
            b => return bad(format!("{} not allowed here", b.type_name())),
        }
        let mut mine = Vec::new();
        let mut action = None;
        match &body {
            EventBody::PhaseDeal(d) | EventBody::NewCard(d) => self.deal(seq, d, &mut mine)?,
            EventBody::Reveal(r) if self.blind.is_none() => self.reveal(seq, r)?,
            EventBody::CardTransfer(x) if self.blind.is_none() => self.card_transfer(seq, x, &mut mine)?,
            EventBody::Reveal(_) | EventBody::CardTransfer(_) => {
                return bad(format!("{} in a blind hand", body.type_name()))
            }
            EventBody::BlindRequest(r) => {
                let holders = self.cards.holders.clone();
                if let Some(b) = self.blind.as_mut() {
                    b.request(seq, r, &holders)?;
                }
            }
            EventBody::BlindShares(x) => {
                if !self.seat_ok(x.seat) {
                    return bad("shares of a missing seat".into());
                }
                if let Some(b) = self.blind.as_mut() {
                    b.shares(seq, x)?;
                }
            }
            EventBody::BlindReveal(r) => self.blind_reveal(seq, &r.positions)?,
            EventBody::BlindRecover(r) => {
                if let Some(b) = self.blind.as_mut() {
                    b.recover(seq, r)?;
                }
            }
            EventBody::BlindRecovery(r) => {
                if !self.seat_ok(r.seat) {
                    return bad("recovery shares of a missing seat".into());
                }
                if let Some(b) = self.blind.as_mut() {
                    b.recovery(seq, r)?;
                }
            }
            EventBody::Chips(c) => {
                if let Some(m) =
                    c.moves.iter().find(|m| matches!(m.party, ChipParty::Seat(s) if !self.seat_ok(s)))
                {
                    return bad(format!("chip movement for a missing seat: {m:?}"));
                }
                self.announced.extend(c.moves.iter().cloned().map(AnnouncedEvent::Chip));
            }
            EventBody::ActionResult(a) => {
                if !self.seat_ok(a.seat) {
                    return bad("action by a missing seat".into());
                }
                let value =
                    a.action.to_value().map_err(|e| structure(format!("event {seq}: action: {e}")))?;
                let last = &mut self.last_action_seq[a.seat.index()];
                if last.is_some_and(|l| a.seq <= l) {
                    return Err(AuditError::new(
                        AuditCheck::ActionSignatures,
                        format!("event {seq}: seat {} action seq {} not increasing", a.seat.0, a.seq),
                    ));
                }
                *last = Some(a.seq);
                self.signed_actions.push(SignedAction {
                    event: seq,
                    seat: a.seat,
                    body: crate::messages::action_signing_body(&self.hand_id, a.seq, &a.action),
                    sig: a.sig,
                });
                self.actions.push(VerifiedAction {
                    seat: a.seat,
                    action: value.clone(),
                    source: ActionSource::Player { seq: a.seq },
                    events_before: self.announced.len(),
                    public_state: Arc::clone(&a.public_state),
                });
                action = Some(value);
            }
            EventBody::TimeoutAction(t) => {
                if !self.seat_ok(t.seat) {
                    return bad("timeout of a missing seat".into());
                }
                self.actions.push(VerifiedAction {
                    seat: t.seat,
                    action: t.action.clone(),
                    source: ActionSource::Timeout { reason: t.reason },
                    events_before: self.announced.len(),
                    public_state: Arc::clone(&t.public_state),
                });
                action = Some(t.action.clone());
            }
            _ => {}
        }
        Ok(Accepted { body, mine, action })
    }

    fn leaf_check(&self, o: &CardOpening, what: &str) -> Result<(), AuditError> {
        if self.start.leaves.get(usize::from(o.position)).is_some_and(|l| o.matches(&self.hand_id, l)) {
            Ok(())
        } else {
            Err(AuditError::new(
                AuditCheck::OpenedCards,
                format!("{what}: position {} ({}) does not match its leaf", o.position, o.card),
            ))
        }
    }

    /// Opens a box sealed to the viewer at `position` and checks it.
    fn open_mine(&self, sealed: &SealedCard, position: u16, what: &str) -> Result<CardOpening, AuditError> {
        let fail = |d: String| AuditError::new(AuditCheck::OpenedCards, d);
        let Some((k, _)) = &self.key else { return Err(fail(format!("{what}: no viewer key"))) };
        let o = k.open(&self.hand_id, sealed).map_err(|e| fail(format!("{what} at {position}: {e}")))?;
        if o.position != position {
            return Err(fail(format!("{what}: sealed card at {position} opens position {}", o.position)));
        }
        self.leaf_check(&o, what)?;
        Ok(o)
    }

    fn viewer_seat(&self) -> Option<Seat> {
        self.key.as_ref().map(|(_, s)| *s)
    }

    /// A `phase-deal` or `new-card`: structure, deal order, opened cards.
    fn deal(&mut self, seq: u64, d: &DealEvent, mine: &mut Vec<CardOpening>) -> Result<(), AuditError> {
        let size = self.blind.as_ref().map_or(self.start.leaves.len(), |b| b.len());
        for c in &d.cards {
            if let DealTo::Player(s) = c.target {
                if !self.seat_ok(s) {
                    return Err(structure(format!("event {seq}: deal to missing seat {}", s.0)));
                }
            }
            let to_player = matches!(c.target, DealTo::Player(_));
            let ok = match c.face {
                // Blind: the dealer has nothing to open or seal (SPEC.md §9.7).
                _ if self.blind.is_some() => c.opening.is_none() && c.sealed.is_none(),
                CardFace::Up => c.opening.is_some() && c.sealed.is_none(),
                CardFace::Down => c.opening.is_none() && c.sealed.is_some() == to_player,
            };
            if !ok {
                return Err(structure(format!(
                    "event {seq}: position {}: opening/sealed box do not fit the face",
                    c.position
                )));
            }
        }
        let order = |d: String| Err(AuditError::new(AuditCheck::DealOrder, format!("event {seq}: {d}")));
        for c in &d.cards {
            let next = self.cards.faces.len();
            if usize::from(c.position) != next {
                return order(format!("dealt position {}, expected {next}", c.position));
            }
            if next >= size {
                return order(format!("position {next} beyond the {size}-card deck"));
            }
            self.cards.faces.push(c.face);
            self.cards.holders.push(match c.target {
                DealTo::Player(s) => Some(s),
                _ => None,
            });
        }
        let mut cards = Vec::with_capacity(d.cards.len());
        for c in &d.cards {
            let mut card = None;
            if let (Some(b), CardFace::Up) = (&self.blind, c.face) {
                card = Some(b.shown(seq, c.position, "face-up card")?);
            }
            if let Some(o) = &c.opening {
                if o.position != c.position {
                    return Err(AuditError::new(
                        AuditCheck::OpenedCards,
                        format!("event {seq}: face-up card at {} opens position {}", c.position, o.position),
                    ));
                }
                self.leaf_check(o, &format!("event {seq}: face-up card"))?;
                card = Some(o.card);
            }
            if let (Some(sealed), DealTo::Player(to)) = (&c.sealed, c.target) {
                if Some(to) == self.viewer_seat() {
                    let o = self.open_mine(sealed, c.position, &format!("event {seq}: my sealed card"))?;
                    self.my_cards.push(o);
                    mine.push(o);
                    card = Some(o.card);
                }
            }
            cards.push(AnnouncedCard { position: c.position, target: c.target, face: c.face, card });
        }
        self.announced.push(AnnouncedEvent::Dealt { phase: d.phase.clone(), cards });
        Ok(())
    }

    /// A `blind-reveal`: deal order (face-down dealt positions), and each
    /// card opened by its shares before.
    fn blind_reveal(&mut self, seq: u64, positions: &[u16]) -> Result<(), AuditError> {
        for p in positions {
            let order = |d: String| Err(AuditError::new(AuditCheck::DealOrder, format!("event {seq}: {d}")));
            match self.cards.faces.get_mut(usize::from(*p)) {
                Some(f @ CardFace::Down) => *f = CardFace::Up,
                Some(CardFace::Up) => return order(format!("reveal of position {p} already face up")),
                None => return order(format!("reveal of undealt position {p}")),
            }
            if let Some(b) = &self.blind {
                b.shown(seq, *p, "revealed card")?;
            }
        }
        self.announced.push(AnnouncedEvent::Reveal { positions: positions.to_vec() });
        Ok(())
    }

    /// A `reveal`: deal order (face-down dealt positions), opened cards.
    fn reveal(&mut self, seq: u64, r: &Reveal) -> Result<(), AuditError> {
        for o in &r.openings {
            let order = |d: String| Err(AuditError::new(AuditCheck::DealOrder, format!("event {seq}: {d}")));
            match self.cards.faces.get_mut(usize::from(o.position)) {
                Some(f @ CardFace::Down) => *f = CardFace::Up,
                Some(CardFace::Up) => {
                    return order(format!("reveal of position {} already face up", o.position))
                }
                None => return order(format!("reveal of undealt position {}", o.position)),
            }
        }
        for o in &r.openings {
            self.leaf_check(o, &format!("event {seq}: revealed card"))?;
        }
        self.announced
            .push(AnnouncedEvent::Reveal { positions: r.openings.iter().map(|o| o.position).collect() });
        Ok(())
    }

    /// A `card-transfer`: structure, deal order (the giver holds the
    /// position), opened cards (face-up opening, or the box sealed to the
    /// viewer).
    fn card_transfer(
        &mut self,
        seq: u64,
        x: &CardTransfer,
        mine: &mut Vec<CardOpening>,
    ) -> Result<(), AuditError> {
        if !self.seat_ok(x.from) || !self.seat_ok(x.to) || x.from == x.to {
            return Err(structure(format!(
                "event {seq}: card transfer of position {} from seat {} to seat {}",
                x.position, x.from.0, x.to.0
            )));
        }
        let fits = match x.face {
            CardFace::Up => x.opening.is_some() && x.sealed.is_none(),
            CardFace::Down => x.opening.is_none() && x.sealed.is_some(),
        };
        if !fits {
            return Err(structure(format!(
                "event {seq}: card transfer of position {}: opening/sealed box do not fit the face",
                x.position
            )));
        }
        let p = usize::from(x.position);
        let order = |d: String| Err(AuditError::new(AuditCheck::DealOrder, format!("event {seq}: {d}")));
        match self.cards.holders.get_mut(p) {
            Some(h) if *h == Some(x.from) => *h = Some(x.to),
            Some(h) => {
                let held = h.map_or("not a player's card".into(), |s| format!("seat {} does", s.0));
                return order(format!(
                    "transfer of position {p} from seat {}, which does not hold it ({held})",
                    x.from.0
                ));
            }
            None => return order(format!("transfer of undealt position {p}")),
        }
        if x.face == CardFace::Up {
            self.cards.faces[p] = CardFace::Up;
        }
        if let Some(o) = &x.opening {
            if o.position != x.position {
                return Err(AuditError::new(
                    AuditCheck::OpenedCards,
                    format!("event {seq}: face-up transfer of {} opens position {}", x.position, o.position),
                ));
            }
            self.leaf_check(o, &format!("event {seq}: transferred card"))?;
        }
        if let Some(sealed) = &x.sealed {
            if Some(x.to) == self.viewer_seat() {
                let o =
                    self.open_mine(sealed, x.position, &format!("event {seq}: card transferred to me"))?;
                self.my_cards.push(o);
                mine.push(o);
            }
        }
        self.announced.push(AnnouncedEvent::Transfer {
            position: x.position,
            from: x.from,
            to: x.to,
            face: x.face,
        });
        Ok(())
    }

    fn end(&self) -> Option<(&GameEnd, Option<&AuditReveal>)> {
        match &self.ending {
            Ending::Playing => None,
            Ending::Ended(g) => Some((g, None)),
            Ending::Revealed(g, a) => Some((g, Some(a))),
        }
    }

    /// The dealer seed and the opening of every position, in position order,
    /// if all are published. Conflicting or out-of-range openings fail.
    fn secrets(
        &self,
        end: &GameEnd,
        reveal: Option<&AuditReveal>,
    ) -> Result<Option<(Seed, Vec<CardOpening>)>, AuditError> {
        let fail = |d: String| Err(AuditError::new(AuditCheck::RevealComplete, d));
        let seed = match (end.dealer_seed, reveal.map(|a| a.dealer_seed)) {
            (Some(a), Some(b)) if a != b => {
                return fail("game-end and audit-reveal give different dealer seeds".into())
            }
            (a, b) => a.or(b),
        };
        let size = self.start.leaves.len();
        let mut by_pos: BTreeMap<u16, CardOpening> = BTreeMap::new();
        for o in end.openings.iter().chain(reveal.iter().flat_map(|a| a.openings.iter())) {
            if usize::from(o.position) >= size {
                return fail(format!("opening of position {} beyond the deck", o.position));
            }
            if let Some(prev) = by_pos.insert(o.position, *o) {
                if prev != *o {
                    return fail(format!("two different openings of position {}", o.position));
                }
            }
        }
        match seed {
            Some(seed) if by_pos.len() == size => Ok(Some((seed, by_pos.into_values().collect()))),
            _ => Ok(None),
        }
    }

    fn check_action_signatures(&mut self) -> Result<(), AuditError> {
        if self.actions_verified {
            return Ok(());
        }
        let items: Vec<BatchItem<'_>> = self
            .signed_actions
            .iter()
            .map(|a| BatchItem {
                signer: &self.start.players[a.seat.index()].id,
                purpose: Purpose::Action,
                body: &a.body,
                signature: &a.sig,
            })
            .collect();
        if let Err(e) = verify_batch(&items) {
            let seq = match &e {
                SignatureError::BatchItem { index, .. } => self.signed_actions.get(*index).map(|a| a.event),
                _ => None,
            };
            return Err(AuditError::new(
                AuditCheck::ActionSignatures,
                format!("event {seq:?}: action not signed by its seat's player: {e}"),
            ));
        }
        self.actions_verified = true;
        Ok(())
    }

    fn finish(
        &mut self,
        dealer: PlayerId,
        replayer: Option<&dyn Replayer>,
        allow_pending_reveal: bool,
    ) -> Result<AuditReport, AuditError> {
        let (end, reveal) = self.end().ok_or_else(|| structure("no game-end: the hand is not finished"))?;
        let secrets = match &self.blind {
            // Blind: only the dealer seed; no card is the dealer's to open.
            Some(_) => {
                if !end.openings.is_empty() || reveal.is_some_and(|a| !a.openings.is_empty()) {
                    return Err(structure("a blind hand's end opens no position"));
                }
                end.dealer_seed.or(reveal.map(|a| a.dealer_seed)).map(|s| (s, Vec::new()))
            }
            None => self.secrets(end, reveal)?,
        };
        let complete = match &secrets {
            Some(_) => true,
            None if self.start.reveal == RevealPolicy::Deferred && allow_pending_reveal => false,
            None if self.start.reveal == RevealPolicy::Deferred => {
                return Err(AuditError::new(AuditCheck::RevealComplete, "deferred reveal not published yet"))
            }
            None => {
                return Err(AuditError::new(
                    AuditCheck::RevealComplete,
                    "policy full: game-end must carry the dealer seed and every opening",
                ))
            }
        };
        if let Some((seed, _)) = &secrets {
            if seed_commitment(&self.hand_id, seed) != self.prepare.seed_commitment {
                return Err(AuditError::new(
                    AuditCheck::SeedCommitment,
                    "revealed dealer seed does not match hand-prepare's commitment",
                ));
            }
        }
        // With the rules: the declared deck is the game's, and its script for this hand.
        let script = match replayer {
            Some(r) => {
                let canonical = r
                    .canonical_deck(&self.start.game, &self.start.game_version, &self.settings)
                    .map_err(|e| AuditError::new(AuditCheck::Shuffle, format!("canonical deck: {e}")))?;
                if canonical != self.start.deck {
                    return Err(AuditError::new(
                        AuditCheck::Shuffle,
                        "declared deck is not the game's canonical deck",
                    ));
                }
                let scripted = r
                    .scripted_deck(
                        &self.start.game,
                        &self.start.game_version,
                        &self.settings,
                        self.prepare.hand_number,
                    )
                    .map_err(|e| AuditError::new(AuditCheck::Shuffle, format!("scripted deck: {e}")))?;
                Some(scripted)
            }
            None => None,
        };
        if let Some(b) = &self.blind {
            b.all_public_shown(&self.cards.faces)?;
            b.all_shares_in()?;
        }
        let deck_order = match &self.blind {
            // The replay's deck: the deck view (SPEC.md §9.7).
            Some(b) => Some(
                crate::messages::deck_view_fill(&self.start.deck, &b.view)
                    .ok_or_else(|| structure("the deck view does not fit the deck"))?,
            ),
            None => secrets.as_ref().map(|(_, openings)| openings.iter().map(|o| o.card).collect::<Vec<_>>()),
        };
        check_deck_mode(self.start.deck_mode, script.as_ref(), deck_order.as_deref())?;
        let deck_checked = script.is_some();
        if let (Some((seed, _)), Some(order), None) = (&secrets, &deck_order, &self.blind) {
            check_shuffle(&self.start, seed, &self.player_seeds, order)?;
        }
        if let Some((_, openings)) = &secrets {
            for (o, l) in openings.iter().zip(&self.start.leaves) {
                if !o.matches(&self.hand_id, l) {
                    return Err(AuditError::new(
                        AuditCheck::Leaves,
                        format!("position {}: opening does not match its leaf", o.position),
                    ));
                }
            }
        }
        for o in &end.openings {
            self.leaf_check(o, "game-end opening")?;
        }
        for o in reveal.iter().flat_map(|a| a.openings.iter()) {
            self.leaf_check(o, "audit-reveal opening")?;
        }
        let (result, memory_after) = (end.result.clone(), end.memory_after.clone());
        self.check_action_signatures()?;
        let verified = self.verified(dealer, deck_order, secrets.map(|(s, _)| s), result, memory_after);
        let mut skipped = Vec::new();
        match replayer {
            Some(r) if complete => r.replay(&verified).map_err(|e| AuditError::new(AuditCheck::Replay, e))?,
            _ => skipped.push(AuditCheck::Replay),
        }
        if !complete {
            skipped
                .extend(AuditCheck::ALL.into_iter().filter(|c| c.needs_reveal() && *c != AuditCheck::Replay));
            skipped.sort();
        }
        let passed = AuditCheck::ALL.into_iter().filter(|c| !skipped.contains(c)).collect();
        Ok(AuditReport { hand: verified, passed, skipped, deck_checked })
    }

    fn verified(
        &self,
        dealer: PlayerId,
        deck_order: Option<Vec<CardId>>,
        dealer_seed: Option<Seed>,
        result: HandResult,
        memory_after: Value,
    ) -> VerifiedHand {
        let mut announced = self.announced.clone();
        if let Some(order) = &deck_order {
            for e in &mut announced {
                if let AnnouncedEvent::Dealt { cards, .. } = e {
                    for c in cards {
                        c.card = order.get(usize::from(c.position)).copied().or(c.card);
                    }
                }
            }
        }
        let start = &self.start;
        VerifiedHand {
            hand_id: self.hand_id,
            dealer,
            hand_number: self.prepare.hand_number,
            game: start.game.clone(),
            game_version: start.game_version.clone(),
            settings: self.settings.clone(),
            config_hash: start.config_hash,
            room: self.room.clone(),
            players: start.players.clone(),
            memory: start.memory.clone(),
            previous: start.previous,
            dealer_encryption_key: start.dealer_encryption_key,
            deck_mode: start.deck_mode,
            entropy: start.entropy,
            reveal: start.reveal,
            declared_deck: start.deck.clone(),
            deck_order,
            dealer_seed,
            player_seeds: self.player_seeds.clone(),
            announced,
            actions: self.actions.clone(),
            result,
            memory_after,
            my_cards: self.my_cards.clone(),
        }
    }
}
