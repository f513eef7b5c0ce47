//! `claw-player audit`: audits saved transcripts (completing pending hands
//! from the dealer's archive with `--fetch`) and prints one line per hand.

use std::io::Write;

use claw_audit::{bind_balances, reveal_overdue, split_hands, AuditFileError, Auditor, HandVerdict, Verdict};
use claw_player::fetch::{fetch_completion, fetch_hand, FetchError, FetchLimits, Fetcher};
use claw_protocol::audit::{AuditCheck, AuditError, AuditReport};
use claw_protocol::{CardId, Chips, Identity, PlayerId, Seat};
use serde_json::{json, Value};

use crate::cli::{exit, AuditArgs};
use crate::stderr;

/// Runs `claw-player audit`; returns the exit code.
pub fn run(a: AuditArgs) -> i32 {
    let dealer = match a.dealer.as_deref().map(str::parse::<PlayerId>).transpose() {
        Ok(d) => d,
        Err(e) => {
            stderr().error(format_args!("--dealer: {e}"));
            return exit::UNREADABLE;
        }
    };
    let me = match a.key.as_deref().map(Identity::load).transpose() {
        Ok(me) => me,
        Err(e) => {
            stderr().error(format_args!("--key: {e}"));
            return exit::UNREADABLE;
        }
    };
    let mut auditor = Auditor::new(dealer);
    auditor.allow_pending_reveal = true;
    auditor.commission = a.commission.map(Chips);
    if let Some(me) = &me {
        auditor = auditor.with_viewer(me);
    }
    let fetch = match &a.fetch {
        Some(base) => {
            let limits = FetchLimits::with_timeout(std::time::Duration::from_secs(a.fetch_timeout));
            match (tokio::runtime::Runtime::new(), Fetcher::new(limits)) {
                (Ok(rt), Ok(fetcher)) => Some((rt, fetcher, base.clone())),
                (Err(e), _) => {
                    stderr().error(format_args!("cannot start the runtime: {e}"));
                    return exit::UNREADABLE;
                }
                (_, Err(e)) => {
                    stderr().error(e);
                    return exit::UNREADABLE;
                }
            }
        }
        None => None,
    };
    let mut code = exit::OK;
    let (mut ok, mut pending, mut failed) = (0usize, 0usize, 0usize);
    // Every hand is audited first: the cross-hand check (`balances`)
    // compares hands of one room across files, in hand-number order.
    let mut verdicts: Vec<HandVerdict> = Vec::new();
    // Per file: its name, and its error when it could not be read.
    let mut files: Vec<(String, usize, Option<AuditFileError>)> = Vec::new();
    let grace = std::time::Duration::from_secs(a.reveal_grace);
    for f in &a.files {
        let name = f.display().to_string();
        // No earlier than the player saw the end of every hand in the file.
        let written = std::fs::metadata(f).and_then(|m| m.modified()).ok();
        let hands = std::fs::read_to_string(f)
            .map_err(|source| AuditFileError::Io { path: name.clone(), source })
            .and_then(|text| split_hands(&text))
            .and_then(|h| if h.is_empty() { Err(AuditFileError::Empty) } else { Ok(h) });
        match hands {
            Ok(hands) => {
                // The file's hands as they will be written back: a fetched
                // completion replaces a saved hand only once it audits OK.
                let mut kept = Vec::with_capacity(hands.len());
                let mut completed = 0usize;
                for (line, t) in hands {
                    let mut outcome = auditor.audit(&t, None);
                    let mut keep = None;
                    if let (Some((rt, client, base)), Verdict::Pending) = (&fetch, Verdict::of(&outcome)) {
                        match rt.block_on(fetch_completion(client, base, &t)) {
                            Ok(full) => {
                                outcome = auditor.audit(&full, None);
                                if Verdict::of(&outcome) == Verdict::Ok {
                                    completed += 1;
                                    keep = Some(full);
                                }
                                // Still pending at the dealer: past due, withheld.
                                let now = std::time::SystemTime::now();
                                if let (Ok(r), Some(seen)) = (&outcome, written) {
                                    if let Some(e) = reveal_overdue(r, seen, now, grace) {
                                        outcome = Err(e);
                                    }
                                }
                            }
                            Err(e @ FetchError::Diverged(_)) => {
                                outcome =
                                    Err(AuditError { check: AuditCheck::HashChain, detail: e.to_string() })
                            }
                            Err(e) => stderr().warn(format_args!("{name}: hand {}: {e}", t.hand_id)),
                        }
                    }
                    let room = t.header.as_ref().map(|h| h.room_id.clone());
                    kept.push(keep.unwrap_or(t));
                    verdicts.push(HandVerdict { hand_id: kept[kept.len() - 1].hand_id, room, line, outcome });
                }
                if completed > 0 {
                    match rewrite_atomically(f, &kept) {
                        Ok(()) => stderr().info(format_args!(
                            "{name}: rewritten with the fetched reveal of {completed} hand(s)"
                        )),
                        Err(e) => {
                            stderr().error(format_args!("{name}: could not save the completed hands: {e}"));
                            if code == exit::OK {
                                code = exit::UNREADABLE;
                            }
                        }
                    }
                }
                files.push((name, verdicts.len(), None));
            }
            Err(e) => files.push((name, verdicts.len(), Some(e))),
        }
    }
    // The previous hands the files name but do not hold, fetched so that
    // the chain check compares every given hand with the one it continues.
    let given = verdicts.len();
    if let Some((rt, client, base)) = &fetch {
        let fetched = fetch_previous(rt, client, base, &auditor, &verdicts);
        if !fetched.is_empty() {
            stderr().info(format_args!(
                "{} previous hand(s) fetched to compare the chain of hands",
                fetched.len()
            ));
        }
        verdicts.extend(fetched);
    }
    bind_balances(&mut verdicts);
    // A closed stdout (`| head`) ends the audit quietly: no panic, no more output.
    let mut out = std::io::stdout().lock();
    let mut from = 0;
    for (name, to, error) in files {
        match error {
            None => {
                for v in &verdicts[from..to] {
                    let viewer = me.as_ref().map(Identity::id);
                    let text = if a.json {
                        verdict_json(&name, v, viewer).to_string()
                    } else {
                        verdict_line(&name, v, viewer)
                    };
                    if writeln!(out, "{text}").is_err() {
                        return code;
                    }
                    match v.verdict() {
                        Verdict::Ok => ok += 1,
                        Verdict::Pending => pending += 1,
                        Verdict::Failed => {
                            failed += 1;
                            code = exit::CHECK_FAILED;
                        }
                    }
                }
                from = to;
            }
            Some(e) => {
                let check = match &e {
                    AuditFileError::Parse { check, .. } => check.name(),
                    _ => "structure",
                };
                let line = if a.json {
                    json!({"file": name, "ok": false, "verdict": Verdict::Failed, "check": check, "detail": e.to_string()})
                        .to_string()
                } else {
                    format!("FAIL {name}: check {check} failed: {e}")
                };
                if writeln!(out, "{line}").is_err() {
                    return exit::UNREADABLE;
                }
                failed += 1;
                if code != exit::CHECK_FAILED {
                    code = exit::UNREADABLE;
                }
            }
        }
    }
    // A fetched previous hand is reported only when it fails its own audit.
    let base = a.fetch.as_deref().unwrap_or_default();
    for v in verdicts[given..].iter().filter(|v| v.verdict() == Verdict::Failed) {
        let name = match &v.room {
            Some(room) => claw_player::fetch::hand_url(base, room, v.hand_id).unwrap_or_default(),
            None => base.to_owned(),
        };
        let text =
            if a.json { verdict_json(&name, v, None).to_string() } else { verdict_line(&name, v, None) };
        if writeln!(out, "{text}").is_err() {
            return code;
        }
        failed += 1;
        code = exit::CHECK_FAILED;
    }
    if !a.json {
        stderr().info(format_args!(
            "{ok} hands audited OK, {pending} pending (reveal not out yet), {failed} failed"
        ));
    }
    if code == exit::OK && pending > 0 {
        exit::PENDING
    } else {
        code
    }
}

/// The hands the audited `verdicts` name as their previous hand (SPEC.md
/// §11.4) and do not hold, fetched whole from the dealer's archive at
/// `base` and audited (line 0: no file). A hand that cannot be fetched is
/// left out with a warning: the hand naming it is then compared with
/// nothing, as without `--fetch`.
fn fetch_previous(
    rt: &tokio::runtime::Runtime,
    client: &Fetcher,
    base: &str,
    auditor: &Auditor<'_>,
    verdicts: &[HandVerdict],
) -> Vec<HandVerdict> {
    let held: std::collections::HashSet<_> = verdicts.iter().map(|v| v.hand_id).collect();
    let mut asked = std::collections::HashSet::new();
    let mut out = Vec::new();
    for v in verdicts {
        let Ok(r) = &v.outcome else { continue };
        let Some(link) = r.hand.previous else { continue };
        let Some(room) = r.hand.room.as_ref().map(|c| c.room_id.clone()).or_else(|| v.room.clone()) else {
            continue;
        };
        if held.contains(&link.hand_id) || !asked.insert((r.hand.dealer, room.clone(), link.hand_id)) {
            continue;
        }
        match rt.block_on(fetch_hand(client, base, &room, link.hand_id, r.hand.dealer)) {
            Ok(t) => out.push(HandVerdict {
                hand_id: t.hand_id,
                room: Some(room),
                line: 0,
                outcome: auditor.audit(&t, None),
            }),
            Err(e) => stderr().warn(format_args!(
                "hand {} names hand {} as its previous hand, which could not be fetched: {e}",
                v.hand_id, link.hand_id
            )),
        }
    }
    out
}

/// Replaces `path` with `hands` as JSON lines: written to a temporary file
/// beside it, synced, then renamed over it, so a crash leaves the old file
/// or the new one, never half of either.
fn rewrite_atomically(
    path: &std::path::Path,
    hands: &[claw_protocol::transcript::Transcript],
) -> std::io::Result<()> {
    let mut text = String::new();
    for t in hands {
        text.push_str(&t.to_jsonl().map_err(|e| std::io::Error::other(e.to_string()))?);
    }
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let tmp = path.with_file_name(format!(".{name}.{}.tmp", std::process::id()));
    let written = (|| {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(text.as_bytes())?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written
}

/// The text line `claw-player audit` prints for one hand. `viewer` is the
/// player of `--key`: the line then says what the key added (its sealed
/// cards opened and checked, or that it is not in the hand).
pub fn verdict_line(file: &str, v: &HandVerdict, viewer: Option<PlayerId>) -> String {
    let mine = |r: &AuditReport| match viewer.map(|id| own_cards(r, id)) {
        None => String::new(),
        Some(None) => "; --key: its player is not in this hand, no sealed card to open".to_owned(),
        Some(Some((_, cards))) => format!(
            "; --key: {} sealed card(s) of yours opened and checked against their leaves{}{}",
            cards.len(),
            if cards.is_empty() { "" } else { ": " },
            cards.iter().map(ToString::to_string).collect::<Vec<_>>().join(" ")
        ),
    };
    match &v.outcome {
        Ok(r) if r.complete() => format!(
            "OK   {file}: hand {} (line {}): {} checks passed{}",
            v.hand_id,
            v.line,
            r.passed.len(),
            mine(r)
        ),
        Ok(r) => format!(
            "PENDING {file}: hand {} (line {}): {} checks passed, waiting for the reveal: {}{}",
            v.hand_id,
            v.line,
            r.passed.len(),
            r.skipped.iter().map(|c| c.name()).collect::<Vec<_>>().join(", "),
            mine(r)
        ),
        Err(e) => format!(
            "FAIL {file}: hand {} (line {}): check {} failed: {}",
            v.hand_id, v.line, e.check, e.detail
        ),
    }
}

/// The JSON object `claw-player audit --json` prints for one hand. `ok` is
/// true only when `verdict` is `ok` (a pending hand is not OK), as in the
/// `audit` of `claw-player join`'s `hand-ended` line. With `viewer` (`--key`)
/// it also has `my_seat` (null: not in the hand) and `my_cards`, the cards
/// sealed to that player, opened and checked.
pub fn verdict_json(file: &str, v: &HandVerdict, viewer: Option<PlayerId>) -> Value {
    let verdict = v.verdict();
    let mut line = match &v.outcome {
        Ok(r) => serde_json::json!({
            "file": file, "hand_id": v.hand_id, "line": v.line, "ok": verdict == Verdict::Ok,
            "verdict": verdict, "passed": r.passed, "skipped": r.skipped,
        }),
        Err(e) => serde_json::json!({
            "file": file, "hand_id": v.hand_id, "line": v.line, "ok": false, "verdict": verdict,
            "check": e.check, "detail": e.detail,
        }),
    };
    if let (Some(id), Ok(r), Some(obj)) = (viewer, &v.outcome, line.as_object_mut()) {
        let (seat, cards) = own_cards(r, id).map_or((None, Vec::new()), |(s, c)| (Some(s), c));
        obj.insert("my_seat".into(), serde_json::json!(seat));
        obj.insert("my_cards".into(), serde_json::json!(cards));
    }
    line
}

/// The seat of `viewer` in the audited hand and its cards opened from their
/// sealed boxes; `None` when it is not in the hand.
fn own_cards(r: &AuditReport, viewer: PlayerId) -> Option<(Seat, Vec<CardId>)> {
    let seat = r.hand.players.iter().find(|p| p.id == viewer)?.seat;
    Some((seat, r.hand.my_cards.iter().map(|o| o.card).collect()))
}
