//! The Auditor: checks a whole hand from its transcript.
//!
//! The cryptographic checks (dealer signatures, hash chain, structure,
//! reveal, seed commitment, player seeds, shuffle, leaves, Merkle root, deal
//! order, opened cards, action signatures) are the protocol crate's
//! [`claw_protocol::audit::audit`]; this module supplies the game half
//! ([`GamesReplayer`]): the canonical deck of the game and a replay of the
//! game plugin over the verified inputs, which must reproduce every deal,
//! chip movement and reveal in order, the timeout actions, the announced
//! result and the table memory. The first failed check is named
//! ([`AuditCheck`]).
//!
//! The same code runs live at each hand end inside [`crate::node`] and
//! offline on saved JSON-lines transcripts ([`Auditor::audit_jsonl`],
//! `claw-player audit`).

use std::path::Path;

use claw_games::{check_conservation, registry, DynGame, HandEvent, HandRunner, PlayerInfo};
use claw_protocol::audit::{
    audit, ActionSource, AnnouncedEvent, AuditCheck, AuditError, AuditOptions, AuditReport, Replayer,
    VerifiedHand,
};
use claw_protocol::transcript::{EventEnvelope, Transcript, TranscriptHeader};
use claw_protocol::{CardId, HandId, Identity, PlayerId, Seed};
use serde_json::Value;

/// The game half of the audit: canonical decks and plugin replay through
/// the games registry (`claw_games::registry`).
#[derive(Debug, Clone, Copy, Default)]
pub struct GamesReplayer;

fn game_for(name: &str, version: &str) -> Result<std::sync::Arc<dyn DynGame>, String> {
    let g = registry::get(name).map_err(|e| e.to_string())?;
    let meta = g.meta();
    if meta.version != version {
        return Err(format!(
            "game {name} version {version} announced, this auditor has rules {}",
            meta.version
        ));
    }
    Ok(g)
}

fn json<T: serde::Serialize>(v: &T) -> Value {
    serde_json::to_value(v).unwrap_or(Value::Null)
}

/// Checks that the replay's events `from..upto` are the dealer's
/// announcements `from..upto`, and that the replay has produced no more
/// than `upto` events so far.
fn compare_events(
    replayed: &[HandEvent],
    announced: &[AnnouncedEvent],
    from: usize,
    upto: usize,
) -> Result<(), String> {
    for i in from..upto {
        match (replayed.get(i), announced.get(i)) {
            (Some(r), Some(a)) => {
                let (rj, aj) = (json(r), json(a));
                if rj != aj {
                    return Err(format!("event {i}: {} announced {aj}, the rules give {rj}", kind(a)));
                }
            }
            (None, Some(a)) => {
                return Err(format!(
                    "event {i}: {} announced {} that the rules do not give here",
                    kind(a),
                    json(a)
                ))
            }
            (_, None) => return Err(format!("event {i}: missing announcement")),
        }
    }
    match replayed.get(upto) {
        Some(r) => {
            Err(format!("event {upto}: the rules give {} that the dealer did not announce here", json(r)))
        }
        None => Ok(()),
    }
}

fn kind(a: &AnnouncedEvent) -> &'static str {
    match a {
        AnnouncedEvent::Dealt { .. } => "deal",
        AnnouncedEvent::Debit { .. } | AnnouncedEvent::Credit { .. } => "chip movement",
        AnnouncedEvent::Reveal { .. } => "reveal",
    }
}

impl Replayer for GamesReplayer {
    fn canonical_deck(
        &self,
        game: &str,
        game_version: &str,
        settings: &Value,
    ) -> Result<Vec<CardId>, String> {
        let g = game_for(game, game_version)?;
        g.create_deck(settings).map_err(|e| e.to_string())
    }

    fn replay(&self, hand: &VerifiedHand) -> Result<(), String> {
        let g = game_for(&hand.game, &hand.game_version)?;
        let deck = hand.deck_order.clone().ok_or("deck order not revealed")?;
        let players: Vec<PlayerInfo> =
            hand.players.iter().map(|p| PlayerInfo { id: p.id, balance: p.balance }).collect();
        let (mut runner, mut events) =
            HandRunner::start(g.as_ref(), &hand.settings, &players, &hand.memory, deck)
                .map_err(|e| format!("hand start: {e}"))?;
        let mut checked = 0;
        for (index, a) in hand.actions.iter().enumerate() {
            // Everything the rules produced before this action must be what
            // the dealer announced before it, in the same order.
            compare_events(&events, &hand.announced, checked, a.events_before)?;
            checked = a.events_before;
            let expected = runner.hand().to_act();
            if expected != Some(a.seat) {
                return Err(format!("action {index} by seat {}: it was {expected:?}'s turn", a.seat.0));
            }
            if let ActionSource::Timeout { .. } = a.source {
                let auto = runner.hand().auto_action(a.seat);
                if auto.as_ref() != Some(&a.action) {
                    return Err(format!(
                        "action {index}: timeout action {} for seat {} is not the game's auto action {}",
                        a.action,
                        a.seat.0,
                        auto.unwrap_or(Value::Null)
                    ));
                }
            }
            let more =
                runner.act(a.seat, &a.action).map_err(|e| format!("action {index} ({}): {e}", a.action))?;
            events.extend(more);
        }
        compare_events(&events, &hand.announced, checked, hand.announced.len())?;
        if !runner.hand().is_over() {
            return Err(format!("the hand is not over after {} actions", hand.actions.len()));
        }
        let result = runner.hand().result().ok_or("the rules give no result")?;
        let (rj, aj) = (json(&result), json(&hand.result));
        if rj != aj {
            let what = if result.winners != hand.result.winners {
                "winners"
            } else if result.net != hand.result.net || result.house_net != hand.result.house_net {
                "net chip changes"
            } else if result.rake != hand.result.rake {
                "rake"
            } else {
                "summary"
            };
            return Err(format!("result ({what}): announced {aj}, the rules give {rj}"));
        }
        check_conservation(&events, &result, players.len()).map_err(|e| format!("chip conservation: {e}"))?;
        let memory = runner.hand().memory_after();
        if memory != hand.memory_after {
            return Err(format!(
                "table memory after the hand: announced {}, the rules give {memory}",
                hand.memory_after
            ));
        }
        Ok(())
    }
}

/// Audits hands: the protocol checks plus the game replay, with the
/// dealer key the auditor trusts and, for a player auditing its own hands,
/// its identity (to open its sealed cards) and the seed it sent.
#[derive(Clone, Copy, Default)]
pub struct Auditor<'a> {
    /// The trusted dealer key (from the invite URL). Without it, a
    /// transcript's header names the key.
    pub dealer: Option<PlayerId>,
    /// The auditing player, whose sealed cards are opened and checked.
    pub viewer: Option<&'a Identity>,
    /// Accept a deferred-reveal hand whose secrets are not out yet (the
    /// checks that need them are reported as skipped).
    pub allow_pending_reveal: bool,
}

impl std::fmt::Debug for Auditor<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Auditor")
            .field("dealer", &self.dealer)
            .field("viewer", &self.viewer.map(|v| v.id()))
            .field("allow_pending_reveal", &self.allow_pending_reveal)
            .finish()
    }
}

/// The outcome of auditing one hand of a file.
#[derive(Debug, Clone)]
pub struct HandVerdict {
    /// The hand (from its header or first event).
    pub hand_id: HandId,
    /// Where it starts in the file (1-based line number).
    pub line: usize,
    /// The report, or the first failed check.
    pub outcome: Result<AuditReport, AuditError>,
}

/// Why a transcript file could not be audited at all.
#[derive(Debug, thiserror::Error)]
pub enum AuditFileError {
    /// The file could not be read.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// A line is not a transcript line; names the failed check (`structure`).
    #[error("line {line}: audit check {check} failed: {detail}")]
    Parse {
        /// The line number (1-based).
        line: usize,
        /// The check that failed.
        check: AuditCheck,
        /// What failed.
        detail: String,
    },
    /// The file holds no hand.
    #[error("no hand in the file")]
    Empty,
}

impl<'a> Auditor<'a> {
    /// An auditor trusting `dealer` (no viewer).
    pub fn new(dealer: Option<PlayerId>) -> Auditor<'a> {
        Auditor { dealer, viewer: None, allow_pending_reveal: false }
    }

    /// The same auditor, auditing as `viewer` (opens its sealed cards).
    pub fn with_viewer(self, viewer: &'a Identity) -> Auditor<'a> {
        Auditor { viewer: Some(viewer), ..self }
    }

    /// Runs every check on `t` in order; `my_seed` is the seed the viewer
    /// sent for the hand (it must be among the published seeds).
    pub fn audit(&self, t: &Transcript, my_seed: Option<Seed>) -> Result<AuditReport, AuditError> {
        let replayer = GamesReplayer;
        let opts = AuditOptions {
            dealer: self.dealer,
            viewer: self.viewer,
            my_seed,
            allow_pending_reveal: self.allow_pending_reveal,
            replayer: Some(&replayer),
        };
        audit(t, &opts)
    }

    /// Audits every hand of a JSON-lines text. Hands are separated by
    /// `transcript-header` lines or by a change of hand id, so one file may
    /// hold a single hand (as `--save-transcripts` writes) or a whole
    /// session. Lines that are not transcript lines fail the whole file.
    pub fn audit_jsonl(&self, text: &str) -> Result<Vec<HandVerdict>, AuditFileError> {
        let hands = split_hands(text)?;
        if hands.is_empty() {
            return Err(AuditFileError::Empty);
        }
        Ok(hands
            .into_iter()
            .map(|(line, t)| HandVerdict { hand_id: t.hand_id, line, outcome: self.audit(&t, None) })
            .collect())
    }

    /// Reads and audits a JSON-lines transcript file.
    pub fn audit_file(&self, path: &Path) -> Result<Vec<HandVerdict>, AuditFileError> {
        let text = std::fs::read_to_string(path)
            .map_err(|source| AuditFileError::Io { path: path.display().to_string(), source })?;
        self.audit_jsonl(&text)
    }
}

/// Splits JSON lines into hands (see [`Auditor::audit_jsonl`]); each with
/// the line number it starts on.
pub fn split_hands(text: &str) -> Result<Vec<(usize, Transcript)>, AuditFileError> {
    #[derive(serde::Deserialize)]
    struct Peek {
        #[serde(rename = "type")]
        ty: String,
    }
    let mut out: Vec<(usize, Transcript)> = Vec::new();
    let mut cur: Option<(usize, Option<TranscriptHeader>, Vec<EventEnvelope>)> = None;
    let structure =
        |line: usize, detail: String| AuditFileError::Parse { line, check: AuditCheck::Structure, detail };
    let finish = |cur: Option<(usize, Option<TranscriptHeader>, Vec<EventEnvelope>)>,
                  out: &mut Vec<(usize, Transcript)>|
     -> Result<(), AuditFileError> {
        if let Some((line, header, events)) = cur {
            let t = Transcript::from_events(header, events).map_err(|e| structure(line, e.to_string()))?;
            out.push((line, t));
        }
        Ok(())
    };
    for (i, raw) in text.lines().enumerate() {
        let n = i + 1;
        let line = raw.trim();
        if line.is_empty() {
            continue;
        }
        if line.len() > claw_protocol::messages::MAX_FRAME_BYTES {
            return Err(structure(n, format!("line of {} bytes exceeds the frame limit", line.len())));
        }
        let peek: Peek =
            serde_json::from_str(line).map_err(|e| structure(n, format!("not a transcript line: {e}")))?;
        match peek.ty.as_str() {
            "transcript-header" => {
                let h: TranscriptHeader =
                    serde_json::from_str(line).map_err(|e| structure(n, format!("header: {e}")))?;
                if h.version != claw_protocol::messages::PROTOCOL_VERSION {
                    return Err(structure(n, format!("unsupported transcript version {:?}", h.version)));
                }
                finish(cur.take(), &mut out)?;
                cur = Some((n, Some(h), Vec::new()));
            }
            "event" => {
                let e: EventEnvelope =
                    serde_json::from_str(line).map_err(|e| structure(n, format!("event: {e}")))?;
                let new_hand = match &cur {
                    Some((_, h, evs)) => {
                        let id = h.as_ref().map(|h| h.hand_id).or_else(|| evs.first().map(|e| e.hand_id));
                        id.is_some_and(|id| id != e.hand_id) && !(h.is_some() && evs.is_empty())
                    }
                    None => true,
                };
                if new_hand {
                    finish(cur.take(), &mut out)?;
                    cur = Some((n, None, Vec::new()));
                }
                if let Some((_, _, evs)) = cur.as_mut() {
                    evs.push(e);
                }
            }
            other => return Err(structure(n, format!("unexpected line type {other:?}"))),
        }
    }
    finish(cur.take(), &mut out)?;
    Ok(out)
}
