//! The auditor's checks of a hand transcript, in order (SPEC.md §11).
//!
//! [`audit`] runs the cryptographic checks that need no game rules and
//! returns the verified inputs of the hand ([`VerifiedHand`]): settings,
//! players, table memory, the full deck order, the signed actions, the
//! announced deals and chip movements, the announced result. The game replay
//! lives outside this crate (protocol does not know the games): a caller
//! that has the rules implements [`Replayer`] (the player SDK does, with
//! `claw_games::replay`) and [`audit`] runs it as the last check. The first
//! failed check is reported by name ([`AuditCheck`]).

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::bytes::{Digest, HandId, Seed};
use crate::card::CardId;
use crate::commit::{merkle_root, CardOpening};
use crate::identity::Identity;
use crate::ids::{Chips, PlayerId, Seat};
use crate::messages::{
    config_hash, expected_start_balance, AuditReveal, CardFace, ChipOp, ChipParty, DealTo, DeckMode,
    EntropyMode, EventBody, GameEnd, GameStart, HandPlayer, HandPrepare, HandResult, RevealPolicy,
    TimeoutReason,
};
use crate::shuffle::{seed_commitment, shuffle, shuffle_seed};
use crate::sign::{verify_batch, BatchItem, Purpose, SignatureError};
use crate::transcript::{Transcript, GENESIS_PREV};

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
    /// Every seat paid the same commission, the room's (when the auditor
    /// knows the room configuration the dealer signed).
    Commission,
    /// Across consecutive hands of a room: each player starts where its
    /// previous hand left it, less the commission (not a per-hand check:
    /// [`check_balances`], and the live verifier).
    Balances,
}

impl AuditCheck {
    /// Every per-hand check, in the order the audit runs them
    /// ([`AuditCheck::Balances`] compares hands and is not among them).
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
    /// given, every seat's `commission` must equal it.
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
    /// replay recomputes it: bots act on it).
    pub public_state: Value,
}

/// A dealt card as announced (cards known once the deck order is).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AnnouncedCard {
    /// Deck position.
    pub position: u16,
    /// Destination.
    pub target: DealTo,
    /// Up or down.
    pub face: CardFace,
    /// The card, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub card: Option<CardId>,
}

/// A deal, chip movement or reveal the dealer announced, in transcript
/// order. Same JSON as the games crate's `HandEvent`, so a replay's events
/// compare directly.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", tag = "type")]
pub enum AnnouncedEvent {
    /// A deal.
    Dealt {
        /// The game's phase name.
        phase: String,
        /// The cards, position order.
        cards: Vec<AnnouncedCard>,
    },
    /// Chips taken.
    Debit {
        /// From whom.
        party: ChipParty,
        /// How many.
        amount: Chips,
        /// Why.
        reason: String,
    },
    /// Chips given.
    Credit {
        /// To whom.
        party: ChipParty,
        /// How many.
        amount: Chips,
        /// Why.
        reason: String,
    },
    /// Face-down cards opened.
    Reveal {
        /// Positions opened.
        positions: Vec<u16>,
    },
    /// A dealt card moved between two players' hands.
    Transfer {
        /// The deck position.
        position: u16,
        /// The giver.
        from: Seat,
        /// The receiver.
        to: Seat,
        /// Shown to everyone (up) or only to the receiver (down).
        face: CardFace,
    },
}

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
    /// Players in seat order.
    pub players: Vec<HandPlayer>,
    /// Table memory at hand start.
    pub memory: Value,
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

/// Runs every check of [`AuditCheck::ALL`] in order and returns the verified
/// hand, or the first failure.
pub fn audit(t: &Transcript, opts: &AuditOptions<'_>) -> Result<AuditReport, AuditError> {
    run(t, opts, false)
}

/// [`audit`] for a live player that already checked every event of this very
/// transcript on arrival with a [`crate::transcript::TranscriptVerifier`] for
/// the same dealer key: the dealer signatures are not verified a second time
/// (check 1 is reported passed); every other check runs. Never use it for a
/// transcript read from a file or received from someone else.
pub fn audit_verified_live(t: &Transcript, opts: &AuditOptions<'_>) -> Result<AuditReport, AuditError> {
    run(t, opts, true)
}

fn run(
    t: &Transcript,
    opts: &AuditOptions<'_>,
    signatures_verified: bool,
) -> Result<AuditReport, AuditError> {
    let mut passed = Vec::new();
    let mut skipped = Vec::new();

    // 1. dealer-signatures
    let dealer = dealer_key(t, opts)?;
    if !signatures_verified {
        check_dealer_signatures(t, &dealer)?;
    }
    passed.push(AuditCheck::DealerSignatures);

    // 2. hash-chain
    check_chain(t)?;
    passed.push(AuditCheck::HashChain);

    // 3. structure
    let hand = Parsed::parse(t)?;
    passed.push(AuditCheck::Structure);

    // 4. reveal-complete
    let secrets = hand.secrets()?;
    let complete = match &secrets {
        Some(_) => {
            passed.push(AuditCheck::RevealComplete);
            true
        }
        None if hand.start.reveal == RevealPolicy::Deferred && opts.allow_pending_reveal => false,
        None if hand.start.reveal == RevealPolicy::Deferred => {
            return Err(AuditError::new(AuditCheck::RevealComplete, "deferred reveal not published yet"))
        }
        None => {
            return Err(AuditError::new(
                AuditCheck::RevealComplete,
                "policy full: game-end must carry the dealer seed and every opening",
            ))
        }
    };

    // 5. seed-commitment
    if let Some((seed, _)) = &secrets {
        if seed_commitment(&hand.hand_id, seed) != hand.prepare.seed_commitment {
            return Err(AuditError::new(
                AuditCheck::SeedCommitment,
                "revealed dealer seed does not match hand-prepare's commitment",
            ));
        }
        passed.push(AuditCheck::SeedCommitment);
    }

    // 6. player-seeds
    let player_seeds = hand.check_player_seeds(opts)?;
    passed.push(AuditCheck::PlayerSeeds);

    // 7. shuffle (+ declared deck against the game's)
    let deck_checked = match opts.replayer {
        Some(r) => {
            let settings = &hand.settings;
            let canonical = r
                .canonical_deck(&hand.start.game, &hand.start.game_version, settings)
                .map_err(|e| AuditError::new(AuditCheck::Shuffle, format!("canonical deck: {e}")))?;
            if canonical != hand.start.deck {
                return Err(AuditError::new(
                    AuditCheck::Shuffle,
                    "declared deck is not the game's canonical deck",
                ));
            }
            true
        }
        None => false,
    };
    let deck_order =
        secrets.as_ref().map(|(_, openings)| openings.iter().map(|o| o.card).collect::<Vec<_>>());
    if let (Some((seed, _)), Some(order)) = (&secrets, &deck_order) {
        check_shuffle(&hand.start, seed, &player_seeds, order)?;
        passed.push(AuditCheck::Shuffle);
    }

    // 8. leaves
    if let Some((_, openings)) = &secrets {
        for (o, l) in openings.iter().zip(&hand.start.leaves) {
            if !o.matches(&hand.hand_id, l) {
                return Err(AuditError::new(
                    AuditCheck::Leaves,
                    format!("position {}: opening does not match its leaf", o.position),
                ));
            }
        }
        passed.push(AuditCheck::Leaves);
    }

    // 9. merkle-root
    if merkle_root(&hand.start.leaves) != hand.start.root {
        return Err(AuditError::new(AuditCheck::MerkleRoot, "root is not the Merkle root of the leaves"));
    }
    passed.push(AuditCheck::MerkleRoot);

    // 10. deal-order
    hand.check_deal_order()?;
    passed.push(AuditCheck::DealOrder);

    // 11. opened-cards
    let my_cards = hand.check_opened_cards(opts.viewer)?;
    passed.push(AuditCheck::OpenedCards);

    // 12. action-signatures
    hand.check_action_signatures()?;
    passed.push(AuditCheck::ActionSignatures);

    let verified = hand.verified(dealer, deck_order, secrets.map(|(s, _)| s), player_seeds, my_cards)?;

    // 13. replay
    match opts.replayer {
        Some(r) if complete => {
            r.replay(&verified).map_err(|e| AuditError::new(AuditCheck::Replay, e))?;
            passed.push(AuditCheck::Replay);
        }
        _ => skipped.push(AuditCheck::Replay),
    }

    // 14. commission
    check_commission(&verified.players, opts.commission)?;
    passed.push(AuditCheck::Commission);
    if !complete {
        for c in AuditCheck::ALL {
            if c.needs_reveal() && c != AuditCheck::Replay {
                skipped.push(c);
            }
        }
        skipped.sort();
    }
    Ok(AuditReport { hand: verified, passed, skipped, deck_checked })
}

fn check_commission(players: &[HandPlayer], room: Option<Chips>) -> Result<(), AuditError> {
    let first = players.first().map_or(Chips::ZERO, |p| p.commission);
    let expected = room.unwrap_or(first);
    match players.iter().find(|p| p.commission != expected) {
        Some(p) => Err(AuditError::new(
            AuditCheck::Commission,
            format!(
                "seat {} paid commission {}, the room's is {expected}{}",
                p.seat.0,
                p.commission,
                if room.is_some() { "" } else { " (as seat 0's)" }
            ),
        )),
        None => Ok(()),
    }
}

/// The cross-hand check (SPEC.md §11.4): `next` is the hand the room dealt
/// after `prev` (hand numbers consecutive, same dealer). Every player of
/// both must start `next` with [`expected_start_balance`] of its `prev`
/// balance, net and its `next` commission.
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

fn check_dealer_signatures(t: &Transcript, dealer: &PlayerId) -> Result<(), AuditError> {
    let bodies: Vec<_> = t.events.iter().map(|e| e.signing_body()).collect();
    let items: Vec<BatchItem<'_>> = t
        .events
        .iter()
        .zip(&bodies)
        .map(|(e, b)| BatchItem { signer: dealer, purpose: Purpose::Event, body: b, signature: &e.sig })
        .collect();
    verify_batch(&items).map_err(|e| {
        let detail = match &e {
            SignatureError::BatchItem { index, source } => {
                let seq = t.events.get(*index).map_or(*index as u64, |e| e.seq);
                format!("event {index} (seq {seq}): {source}")
            }
            other => other.to_string(),
        };
        AuditError::new(AuditCheck::DealerSignatures, detail)
    })
}

fn check_chain(t: &Transcript) -> Result<(), AuditError> {
    let fail = |d: String| Err(AuditError::new(AuditCheck::HashChain, d));
    let mut prev = GENESIS_PREV;
    for (i, e) in t.events.iter().enumerate() {
        if e.hand_id != t.hand_id {
            return fail(format!("event {i}: hand {} is not hand {}", e.hand_id, t.hand_id));
        }
        if e.seq != i as u64 {
            return fail(format!("event {i} has seq {} (missing, repeated or reordered event)", e.seq));
        }
        if e.prev != prev {
            return match i {
                0 => fail("event 0: prev is not zero".into()),
                _ => fail(format!("event {i}: prev is not the hash of event {}", i - 1)),
            };
        }
        prev = e.hash();
    }
    Ok(())
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

/// The transcript's bodies, parsed and structurally checked.
struct Parsed {
    hand_id: HandId,
    prepare: HandPrepare,
    start: GameStart,
    settings: Value,
    /// (seq, body) of the events between game-start and game-end.
    middle: Vec<(u64, EventBody)>,
    end: GameEnd,
    audit_reveal: Option<AuditReveal>,
}

fn structure(detail: impl Into<String>) -> AuditError {
    AuditError::new(AuditCheck::Structure, detail)
}

impl Parsed {
    fn parse(t: &Transcript) -> Result<Parsed, AuditError> {
        let mut bodies = Vec::with_capacity(t.events.len());
        for e in &t.events {
            bodies
                .push((e.seq, e.decode_body().map_err(|err| structure(format!("event {}: {err}", e.seq)))?));
        }
        let mut it = bodies.into_iter();
        let prepare = match it.next() {
            Some((_, EventBody::HandPrepare(p))) => p,
            Some((s, b)) => {
                return Err(structure(format!("event {s}: expected hand-prepare, got {}", b.type_name())))
            }
            None => return Err(structure("empty transcript")),
        };
        let start = match it.next() {
            Some((_, EventBody::GameStart(g))) => g,
            Some((s, b)) => {
                return Err(structure(format!("event {s}: expected game-start, got {}", b.type_name())))
            }
            None => return Err(structure("no game-start")),
        };
        let mut middle = Vec::new();
        let mut end = None;
        let mut audit_reveal = None;
        for (seq, b) in it {
            match (b, end.is_some()) {
                (EventBody::GameEnd(g), false) => end = Some(g),
                (EventBody::AuditReveal(a), true) if audit_reveal.is_none() => audit_reveal = Some(a),
                (
                    b @ (EventBody::PhaseDeal(_)
                    | EventBody::NewCard(_)
                    | EventBody::Reveal(_)
                    | EventBody::CardTransfer(_)
                    | EventBody::Chips(_)
                    | EventBody::ActionResult(_)
                    | EventBody::TimeoutAction(_)),
                    false,
                ) => middle.push((seq, b)),
                (b, _) => return Err(structure(format!("event {seq}: {} not allowed here", b.type_name()))),
            }
        }
        let end = end.ok_or_else(|| structure("no game-end: the hand is not finished"))?;
        let settings = start.settings.to_value().map_err(|e| structure(format!("settings: {e}")))?;
        let p = Parsed { hand_id: t.hand_id, prepare, start, settings, middle, end, audit_reveal };
        p.check_fields()?;
        Ok(p)
    }

    fn n(&self) -> usize {
        self.start.players.len()
    }

    fn seat_ok(&self, s: Seat) -> bool {
        s.index() < self.n()
    }

    fn check_fields(&self) -> Result<(), AuditError> {
        let (p, g) = (&self.prepare, &self.start);
        if g.players.is_empty() || g.players.len() > crate::limits::MAX_PLAYERS_PER_HAND {
            return Err(structure(format!("{} players", g.players.len())));
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
        if g.deck.is_empty()
            || g.deck.len() > crate::limits::MAX_DECK_POSITIONS
            || g.deck.len() != g.leaves.len()
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
            if !self.seat_ok(s.seat) || last.is_some_and(|l| l >= s.seat) {
                return Err(structure(format!("player seeds: bad or unordered seat {}", s.seat.0)));
            }
            last = Some(s.seat);
        }
        for (seq, b) in &self.middle {
            let bad = |d: String| Err(structure(format!("event {seq}: {d}")));
            match b {
                EventBody::PhaseDeal(d) | EventBody::NewCard(d) => {
                    for c in &d.cards {
                        if let DealTo::Player(s) = c.target {
                            if !self.seat_ok(s) {
                                return bad(format!("deal to missing seat {}", s.0));
                            }
                        }
                        let to_player = matches!(c.target, DealTo::Player(_));
                        let ok = match c.face {
                            CardFace::Up => c.opening.is_some() && c.sealed.is_none(),
                            CardFace::Down => c.opening.is_none() && c.sealed.is_some() == to_player,
                        };
                        if !ok {
                            return bad(format!(
                                "position {}: opening/sealed box do not fit the face",
                                c.position
                            ));
                        }
                    }
                }
                EventBody::CardTransfer(x) => {
                    if !self.seat_ok(x.from) || !self.seat_ok(x.to) || x.from == x.to {
                        return bad(format!(
                            "card transfer of position {} from seat {} to seat {}",
                            x.position, x.from.0, x.to.0
                        ));
                    }
                    let ok = match x.face {
                        CardFace::Up => x.opening.is_some() && x.sealed.is_none(),
                        CardFace::Down => x.opening.is_none() && x.sealed.is_some(),
                    };
                    if !ok {
                        return bad(format!(
                            "card transfer of position {}: opening/sealed box do not fit the face",
                            x.position
                        ));
                    }
                }
                EventBody::Chips(c) => {
                    if let Some(m) =
                        c.moves.iter().find(|m| matches!(m.party, ChipParty::Seat(s) if !self.seat_ok(s)))
                    {
                        return bad(format!("chip movement for a missing seat: {m:?}"));
                    }
                }
                EventBody::ActionResult(a) if !self.seat_ok(a.seat) => {
                    return bad("action by a missing seat".into())
                }
                EventBody::TimeoutAction(a) if !self.seat_ok(a.seat) => {
                    return bad("timeout of a missing seat".into())
                }
                _ => {}
            }
        }
        let r = &self.end.result;
        if r.net.len() != self.n() || r.winners.iter().any(|w| !self.seat_ok(*w)) {
            return Err(structure("game-end result does not fit the players"));
        }
        Ok(())
    }

    /// The dealer seed and the opening of every position, in position order,
    /// if all are published. Conflicting or out-of-range openings fail.
    fn secrets(&self) -> Result<Option<(Seed, Vec<CardOpening>)>, AuditError> {
        let fail = |d: String| Err(AuditError::new(AuditCheck::RevealComplete, d));
        let seed = match (self.end.dealer_seed, self.audit_reveal.as_ref().map(|a| a.dealer_seed)) {
            (Some(a), Some(b)) if a != b => {
                return fail("game-end and audit-reveal give different dealer seeds".into())
            }
            (a, b) => a.or(b),
        };
        let size = self.start.leaves.len();
        let mut by_pos: BTreeMap<u16, CardOpening> = BTreeMap::new();
        let extra = self.audit_reveal.iter().flat_map(|a| a.openings.iter());
        for o in self.end.openings.iter().chain(extra) {
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

    fn check_player_seeds(&self, opts: &AuditOptions<'_>) -> Result<Vec<Option<Seed>>, AuditError> {
        let fail = |d: String| Err(AuditError::new(AuditCheck::PlayerSeeds, d));
        let mut seeds = vec![None; self.n()];
        let bodies: Vec<[u8; 48]> = self
            .start
            .player_seeds
            .iter()
            .map(|s| crate::messages::player_seed_signing_body(&self.hand_id, &s.seed))
            .collect();
        let items: Vec<BatchItem<'_>> = self
            .start
            .player_seeds
            .iter()
            .zip(&bodies)
            .map(|(s, b)| BatchItem {
                signer: &self.start.players[s.seat.index()].id,
                purpose: Purpose::PlayerSeed,
                body: b,
                signature: &s.sig,
            })
            .collect();
        if let Err(e) = verify_batch(&items) {
            let seat = match &e {
                SignatureError::BatchItem { index, .. } => {
                    self.start.player_seeds.get(*index).map(|s| s.seat.0)
                }
                _ => None,
            };
            return fail(format!("seed of seat {seat:?} not signed by its player: {e}"));
        }
        for s in &self.start.player_seeds {
            seeds[s.seat.index()] = Some(s.seed);
        }
        if let (Some(me), Some(mine)) = (opts.viewer, opts.my_seed) {
            if let Some(p) = self.start.players.iter().find(|p| p.id == me.id()) {
                if self.start.entropy == EntropyMode::Joint && seeds[p.seat.index()] != Some(mine) {
                    return fail(format!("the viewer's seed (seat {}) is missing or replaced", p.seat.0));
                }
            }
        }
        Ok(seeds)
    }

    fn deals(&self) -> impl Iterator<Item = (u64, &crate::messages::DealEvent)> {
        self.middle.iter().filter_map(|(s, b)| match b {
            EventBody::PhaseDeal(d) | EventBody::NewCard(d) => Some((*s, d)),
            _ => None,
        })
    }

    fn check_deal_order(&self) -> Result<(), AuditError> {
        let fail = |d: String| Err(AuditError::new(AuditCheck::DealOrder, d));
        let size = self.start.leaves.len();
        let mut next = 0usize;
        // face of each dealt position (revealed or shown positions become
        // Up) and the seat holding it (None: community, burn, house).
        let mut faces: Vec<CardFace> = Vec::new();
        let mut holders: Vec<Option<Seat>> = Vec::new();
        for (seq, b) in &self.middle {
            match b {
                EventBody::PhaseDeal(d) | EventBody::NewCard(d) => {
                    for c in &d.cards {
                        if usize::from(c.position) != next {
                            return fail(format!(
                                "event {seq}: dealt position {}, expected {next}",
                                c.position
                            ));
                        }
                        if next >= size {
                            return fail(format!("event {seq}: position {next} beyond the {size}-card deck"));
                        }
                        faces.push(c.face);
                        holders.push(match c.target {
                            DealTo::Player(s) => Some(s),
                            _ => None,
                        });
                        next += 1;
                    }
                }
                EventBody::Reveal(r) => {
                    for o in &r.openings {
                        match faces.get_mut(usize::from(o.position)) {
                            Some(f @ CardFace::Down) => *f = CardFace::Up,
                            Some(CardFace::Up) => {
                                return fail(format!(
                                    "event {seq}: reveal of position {} already face up",
                                    o.position
                                ))
                            }
                            None => {
                                return fail(format!(
                                    "event {seq}: reveal of undealt position {}",
                                    o.position
                                ))
                            }
                        }
                    }
                }
                EventBody::CardTransfer(x) => {
                    let p = usize::from(x.position);
                    match holders.get_mut(p) {
                        Some(h) if *h == Some(x.from) => *h = Some(x.to),
                        Some(h) => {
                            return fail(format!(
                            "event {seq}: transfer of position {p} from seat {}, which does not hold it ({})",
                            x.from.0,
                            h.map_or("not a player's card".into(), |s| format!("seat {} does", s.0))
                        ))
                        }
                        None => return fail(format!("event {seq}: transfer of undealt position {p}")),
                    }
                    if x.face == CardFace::Up {
                        faces[p] = CardFace::Up;
                    }
                }
                _ => {}
            }
        }
        Ok(())
    }

    fn leaf_check(&self, o: &CardOpening, what: &str) -> Result<(), AuditError> {
        let ok = self.start.leaves.get(usize::from(o.position)).is_some_and(|l| o.matches(&self.hand_id, l));
        if ok {
            Ok(())
        } else {
            Err(AuditError::new(
                AuditCheck::OpenedCards,
                format!("{what}: position {} ({}) does not match its leaf", o.position, o.card),
            ))
        }
    }

    fn check_opened_cards(&self, viewer: Option<&Identity>) -> Result<Vec<CardOpening>, AuditError> {
        let fail = |d: String| Err(AuditError::new(AuditCheck::OpenedCards, d));
        let me = viewer.and_then(|v| self.start.players.iter().find(|p| p.id == v.id()).map(|p| (v, p.seat)));
        let key = match me {
            Some((v, seat)) => match v.shared_key(&self.start.dealer_encryption_key) {
                Ok(k) => Some((k, seat)),
                Err(e) => return fail(format!("dealer encryption key: {e}")),
            },
            None => None,
        };
        let mut mine = Vec::new();
        for (seq, d) in self.deals() {
            for c in &d.cards {
                if let Some(o) = &c.opening {
                    if o.position != c.position {
                        return fail(format!(
                            "event {seq}: face-up card at {} opens position {}",
                            c.position, o.position
                        ));
                    }
                    self.leaf_check(o, &format!("event {seq}: face-up card"))?;
                }
                if let (Some(sealed), Some((k, seat)), DealTo::Player(to)) = (&c.sealed, &key, c.target) {
                    if to == *seat {
                        let o = match k.open(&self.hand_id, sealed) {
                            Ok(o) => o,
                            Err(e) => return fail(format!("event {seq}: my card at {}: {e}", c.position)),
                        };
                        if o.position != c.position {
                            return fail(format!(
                                "event {seq}: sealed card at {} opens position {}",
                                c.position, o.position
                            ));
                        }
                        self.leaf_check(&o, &format!("event {seq}: my sealed card"))?;
                        mine.push(o);
                    }
                }
            }
        }
        for (seq, b) in &self.middle {
            match b {
                EventBody::Reveal(r) => {
                    for o in &r.openings {
                        self.leaf_check(o, &format!("event {seq}: revealed card"))?;
                    }
                }
                EventBody::CardTransfer(x) => {
                    if let Some(o) = &x.opening {
                        if o.position != x.position {
                            return fail(format!(
                                "event {seq}: face-up transfer of {} opens position {}",
                                x.position, o.position
                            ));
                        }
                        self.leaf_check(o, &format!("event {seq}: transferred card"))?;
                    }
                    if let (Some(sealed), Some((k, seat))) = (&x.sealed, &key) {
                        if x.to == *seat {
                            let o = match k.open(&self.hand_id, sealed) {
                                Ok(o) => o,
                                Err(e) => {
                                    return fail(format!(
                                        "event {seq}: card transferred to me at {}: {e}",
                                        x.position
                                    ))
                                }
                            };
                            if o.position != x.position {
                                return fail(format!(
                                    "event {seq}: sealed transfer of {} opens position {}",
                                    x.position, o.position
                                ));
                            }
                            self.leaf_check(&o, &format!("event {seq}: card transferred to me"))?;
                            mine.push(o);
                        }
                    }
                }
                _ => {}
            }
        }
        for o in &self.end.openings {
            self.leaf_check(o, "game-end opening")?;
        }
        for o in self.audit_reveal.iter().flat_map(|a| a.openings.iter()) {
            self.leaf_check(o, "audit-reveal opening")?;
        }
        Ok(mine)
    }

    fn check_action_signatures(&self) -> Result<(), AuditError> {
        let fail = |d: String| Err(AuditError::new(AuditCheck::ActionSignatures, d));
        let actions: Vec<(u64, &crate::messages::ActionResult)> = self
            .middle
            .iter()
            .filter_map(|(s, b)| match b {
                EventBody::ActionResult(a) => Some((*s, a)),
                _ => None,
            })
            .collect();
        let bodies: Vec<[u8; 52]> = actions
            .iter()
            .map(|(_, a)| crate::messages::action_signing_body(&self.hand_id, a.seq, &a.action))
            .collect();
        let items: Vec<BatchItem<'_>> = actions
            .iter()
            .zip(&bodies)
            .map(|((_, a), b)| BatchItem {
                signer: &self.start.players[a.seat.index()].id,
                purpose: Purpose::Action,
                body: b,
                signature: &a.sig,
            })
            .collect();
        if let Err(e) = verify_batch(&items) {
            let seq = match &e {
                SignatureError::BatchItem { index, .. } => actions.get(*index).map(|(s, _)| *s),
                _ => None,
            };
            return fail(format!("event {seq:?}: action not signed by its seat's player: {e}"));
        }
        let mut last: Vec<Option<u32>> = vec![None; self.n()];
        for (seq, a) in &actions {
            let l = &mut last[a.seat.index()];
            if l.is_some_and(|l| a.seq <= l) {
                return fail(format!("event {seq}: seat {} action seq {} not increasing", a.seat.0, a.seq));
            }
            *l = Some(a.seq);
        }
        Ok(())
    }

    fn verified(
        self,
        dealer: PlayerId,
        deck_order: Option<Vec<CardId>>,
        dealer_seed: Option<Seed>,
        player_seeds: Vec<Option<Seed>>,
        my_cards: Vec<CardOpening>,
    ) -> Result<VerifiedHand, AuditError> {
        let mut announced = Vec::new();
        let mut actions = Vec::new();
        let known = |pos: u16, opening: &Option<CardOpening>| -> Option<CardId> {
            deck_order
                .as_ref()
                .and_then(|d| d.get(usize::from(pos)).copied())
                .or_else(|| opening.map(|o| o.card))
                .or_else(|| my_cards.iter().find(|o| o.position == pos).map(|o| o.card))
        };
        for (seq, b) in &self.middle {
            match b {
                EventBody::PhaseDeal(d) | EventBody::NewCard(d) => announced.push(AnnouncedEvent::Dealt {
                    phase: d.phase.clone(),
                    cards: d
                        .cards
                        .iter()
                        .map(|c| AnnouncedCard {
                            position: c.position,
                            target: c.target,
                            face: c.face,
                            card: known(c.position, &c.opening),
                        })
                        .collect(),
                }),
                EventBody::Reveal(r) => announced.push(AnnouncedEvent::Reveal {
                    positions: r.openings.iter().map(|o| o.position).collect(),
                }),
                EventBody::CardTransfer(x) => announced.push(AnnouncedEvent::Transfer {
                    position: x.position,
                    from: x.from,
                    to: x.to,
                    face: x.face,
                }),
                EventBody::Chips(c) => {
                    for m in &c.moves {
                        let (party, amount, reason) = (m.party, m.amount, m.reason.clone());
                        announced.push(match m.op {
                            ChipOp::Debit => AnnouncedEvent::Debit { party, amount, reason },
                            ChipOp::Credit => AnnouncedEvent::Credit { party, amount, reason },
                        });
                    }
                }
                EventBody::ActionResult(a) => actions.push(VerifiedAction {
                    seat: a.seat,
                    action: a
                        .action
                        .to_value()
                        .map_err(|e| structure(format!("event {seq}: action: {e}")))?,
                    source: ActionSource::Player { seq: a.seq },
                    events_before: announced.len(),
                    public_state: a.public_state.clone(),
                }),
                EventBody::TimeoutAction(t) => actions.push(VerifiedAction {
                    seat: t.seat,
                    action: t.action.clone(),
                    source: ActionSource::Timeout { reason: t.reason },
                    events_before: announced.len(),
                    public_state: t.public_state.clone(),
                }),
                _ => {}
            }
        }
        let Parsed { hand_id, prepare, start, settings, end, .. } = self;
        Ok(VerifiedHand {
            hand_id,
            dealer,
            hand_number: prepare.hand_number,
            game: start.game,
            game_version: start.game_version,
            settings,
            config_hash: start.config_hash,
            players: start.players,
            memory: start.memory,
            deck_mode: start.deck_mode,
            entropy: start.entropy,
            reveal: start.reveal,
            declared_deck: start.deck,
            deck_order,
            dealer_seed,
            player_seeds,
            announced,
            actions,
            result: end.result,
            memory_after: end.memory_after,
            my_cards,
        })
    }
}
