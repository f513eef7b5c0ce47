//! The Auditor: checks a whole hand from its transcript.
//!
//! The cryptographic checks (dealer signatures, hash chain, structure,
//! reveal, seed commitment, player seeds, shuffle, leaves, Merkle root, deal
//! order, opened cards, action signatures) are the protocol crate's
//! [`claw_protocol::audit::audit`]; the game half is `claw-games`'
//! [`GamesReplayer`]: the canonical deck of the game and a replay of the
//! game plugin over the verified inputs, which must reproduce every deal,
//! chip movement and reveal in order, the timeout actions, the announced
//! result and the table memory. The first failed check is named
//! ([`AuditCheck`]).
//!
//! The SDK's live verifier feeds the same protocol checks event by event
//! (`claw_protocol::audit::HandAudit`) with the same replayer; this is the
//! offline side, on saved JSON-lines transcripts ([`Auditor::audit_jsonl`],
//! `claw-player audit`, the dealer's web app).

use std::path::Path;

use claw_games::audit::GamesReplayer;
use claw_protocol::audit::{
    audit, check_balances, check_previous, AuditCheck, AuditError, AuditOptions, AuditReport,
};
use claw_protocol::transcript::{EventEnvelope, Transcript, TranscriptHeader};
use claw_protocol::{Chips, HandId, Identity, PlayerId, Seed};

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
    /// The room's commission (from the room configuration the dealer
    /// signed): every seat's `game-start` commission must equal it. Needed
    /// only for transcripts written before `game-start` carried the room
    /// configuration (which states it, signed); given as well, both must
    /// agree.
    pub commission: Option<Chips>,
}

impl std::fmt::Debug for Auditor<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Auditor")
            .field("dealer", &self.dealer)
            .field("viewer", &self.viewer.map(|v| v.id()))
            .field("allow_pending_reveal", &self.allow_pending_reveal)
            .field("commission", &self.commission)
            .finish()
    }
}

/// What an audit outcome means: every check passed, every check that could
/// run passed but the hand's deferred reveal is not out yet, or cheating.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    /// Every check ran and passed.
    Ok,
    /// The reveal is not published yet: the checks that need it were
    /// skipped. Neither "audited OK" nor a failure; fetch the hand later.
    Pending,
    /// A check failed.
    Failed,
}

impl Verdict {
    /// The verdict of an audit outcome.
    pub fn of(r: &Result<AuditReport, AuditError>) -> Verdict {
        match r {
            Ok(rep) if rep.complete() => Verdict::Ok,
            Ok(_) => Verdict::Pending,
            Err(_) => Verdict::Failed,
        }
    }
}

/// The outcome of auditing one hand of a file.
#[derive(Debug, Clone)]
pub struct HandVerdict {
    /// The hand (from its header or first event).
    pub hand_id: HandId,
    /// Its room, from the transcript header (the cross-hand check groups by it).
    pub room: Option<String>,
    /// Where it starts in the file (1-based line number).
    pub line: usize,
    /// The report, or the first failed check.
    pub outcome: Result<AuditReport, AuditError>,
}

impl HandVerdict {
    /// OK, pending or failed.
    pub fn verdict(&self) -> Verdict {
        Verdict::of(&self.outcome)
    }
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
        Auditor { dealer, viewer: None, allow_pending_reveal: false, commission: None }
    }

    /// The same auditor, auditing as `viewer` (opens its sealed cards).
    pub fn with_viewer(self, viewer: &'a Identity) -> Auditor<'a> {
        Auditor { viewer: Some(viewer), ..self }
    }

    /// Runs every check on `t` in order; `my_seed` is the seed the viewer
    /// sent for the hand (it must be among the published seeds).
    pub fn audit(&self, t: &Transcript, my_seed: Option<Seed>) -> Result<AuditReport, AuditError> {
        let replayer = GamesReplayer::default();
        let opts = AuditOptions {
            dealer: self.dealer,
            viewer: self.viewer,
            my_seed,
            allow_pending_reveal: self.allow_pending_reveal,
            replayer: Some(&replayer),
            commission: self.commission,
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
        let mut verdicts: Vec<HandVerdict> = hands
            .into_iter()
            .map(|(line, t)| HandVerdict {
                hand_id: t.hand_id,
                room: t.header.as_ref().map(|h| h.room_id.clone()),
                line,
                outcome: self.audit(&t, None),
            })
            .collect();
        bind_balances(&mut verdicts);
        Ok(verdicts)
    }

    /// Reads and audits a JSON-lines transcript file.
    pub fn audit_file(&self, path: &Path) -> Result<Vec<HandVerdict>, AuditFileError> {
        let text = std::fs::read_to_string(path)
            .map_err(|source| AuditFileError::Io { path: path.display().to_string(), source })?;
        self.audit_jsonl(&text)
    }
}

/// The cross-hand checks (SPEC.md §11.4) over a set of audited hands: the
/// hands that passed (or are pending) are grouped by dealer and room (the
/// room configuration's room, else the header's). A hand that names its
/// previous hand (`game-start`'s `previous`) is compared with that hand when
/// it is in the set, whatever their numbers: first `previous-hand`
/// ([`check_previous`]: it continues that hand; no two hands continue the
/// same one), then `balances` ([`check_balances`]). A hand that names none
/// starts a chain (the room opened) and is compared with nothing. A hand
/// written before that link (no room configuration in its `game-start`) is
/// compared by number, as then: `k + 1` with `k`. The same hand given twice
/// counts once; two different hands with one number in one room fail
/// `previous-hand`. A failure becomes the later hand's verdict. Returns how
/// many pairs were compared.
pub fn bind_balances(verdicts: &mut [HandVerdict]) -> usize {
    use std::collections::{BTreeMap, HashMap};
    let mut rooms: BTreeMap<(PlayerId, Option<String>), BTreeMap<u64, usize>> = BTreeMap::new();
    let mut failures: Vec<(usize, AuditError)> = Vec::new();
    let fail = |detail: String| AuditError { check: AuditCheck::PreviousHand, detail };
    for (i, v) in verdicts.iter().enumerate() {
        let Ok(r) = &v.outcome else { continue };
        let room = r.hand.room.as_ref().map(|c| c.room_id.clone()).or_else(|| v.room.clone());
        let by_number = rooms.entry((r.hand.dealer, room)).or_default();
        match by_number.get(&r.hand.hand_number) {
            Some(&j) if verdicts[j].hand_id == v.hand_id => {}
            Some(&j) => failures.push((
                i,
                fail(format!(
                    "hands {} and {} both carry hand number {}",
                    verdicts[j].hand_id, v.hand_id, r.hand.hand_number
                )),
            )),
            None => {
                by_number.insert(r.hand.hand_number, i);
            }
        }
    }
    let mut pairs = 0;
    for by_number in rooms.values() {
        let ordered: Vec<(u64, usize)> = by_number.iter().map(|(n, i)| (*n, *i)).collect();
        let by_id: HashMap<HandId, usize> = ordered.iter().map(|&(_, i)| (verdicts[i].hand_id, i)).collect();
        // The hand that continues each hand, by the hand it names.
        let mut continued: HashMap<HandId, HandId> = HashMap::new();
        for (k, &(n, j)) in ordered.iter().enumerate() {
            let Ok(next) = &verdicts[j].outcome else { continue };
            let prev = match (next.hand.previous, &next.hand.room) {
                (Some(link), _) => by_id.get(&link.hand_id).copied(),
                (None, Some(_)) => None,
                (None, None) => k
                    .checked_sub(1)
                    .map(|p| ordered[p])
                    .filter(|&(m, _)| m.checked_add(1) == Some(n))
                    .map(|(_, i)| i),
            };
            let Some(i) = prev else { continue };
            let Ok(prev) = &verdicts[i].outcome else { continue };
            if next.hand.previous.is_some() {
                if let Some(other) = continued.insert(prev.hand.hand_id, next.hand.hand_id) {
                    failures.push((
                        j,
                        fail(format!(
                            "hands {other} and {} both continue hand {}",
                            next.hand.hand_id, prev.hand.hand_id
                        )),
                    ));
                    continue;
                }
                if let Err(e) = check_previous(&prev.hand, &next.hand) {
                    failures.push((j, e));
                    continue;
                }
            }
            pairs += 1;
            if let Err(e) = check_balances(&prev.hand, &next.hand) {
                failures.push((j, e));
            }
        }
    }
    for (i, e) in failures {
        if verdicts[i].outcome.is_ok() {
            verdicts[i].outcome = Err(e);
        }
    }
    pairs
}

/// SPEC.md §9.5, "A withheld reveal": the failure of a hand still pending
/// once its reveal is past due — `reveal_delay_ms` (its signed room
/// configuration's) after its end, plus `grace` for delivery — or `None`
/// (complete, not past due, or no delay stated: a reveal due at the room's
/// close). `seen_by` is a time no earlier than the hand's end as the player
/// saw it (the saved file's last write, which holds the `game-end`), so the
/// judgement can come late, never early. Pass only a hand the dealer's
/// archive was just asked for and still answered pending.
pub fn reveal_overdue(
    r: &AuditReport,
    seen_by: std::time::SystemTime,
    now: std::time::SystemTime,
    grace: std::time::Duration,
) -> Option<AuditError> {
    let delay = r.hand.room.as_ref()?.reveal_delay_ms?;
    if r.complete() {
        return None;
    }
    let due = seen_by.checked_add(std::time::Duration::from_millis(delay))?.checked_add(grace)?;
    let late = now.duration_since(due).ok().filter(|d| !d.is_zero())?;
    Some(AuditError {
        check: AuditCheck::RevealComplete,
        detail: format!(
            "the reveal is withheld: due {delay} ms after the hand's end (its room configuration), \
             the dealer's archive still has it pending {} s past that and the {} s grace",
            late.as_secs(),
            grace.as_secs()
        ),
    })
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
