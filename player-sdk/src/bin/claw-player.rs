//! `claw-player`: join a game-claw room (JSON lines on stdin/stdout, or a
//! bot) and audit saved hand transcripts. See docs/player-cli.md.

use std::io::Write;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Context;
use clap::Parser;
use claw_player::audit::{
    bind_balances, fetch_completion, split_hands, AuditFileError, Auditor, FetchError, FetchLimits, Fetcher,
    HandVerdict, Verdict,
};
use claw_player::bots::strategy;
use claw_player::cli::{
    exit, parse_input, verdict_json, verdict_line, AuditArgs, Cli, Command, InputLine, JoinArgs,
};
use claw_player::node::{NodeConfig, NodeEvent, PlayerNode};
use claw_player::play::play_bot;
use claw_player::transport::ClientTls;
use claw_player::Invite;
use claw_protocol::audit::{AuditCheck, AuditError};
use claw_protocol::{Chips, Identity, PlayerId};
use rand::rngs::OsRng;
use rand_chacha::rand_core::SeedableRng;
use rand_chacha::ChaCha20Rng;
use serde_json::json;
use tokio::io::AsyncBufReadExt;

fn main() -> ExitCode {
    let cli = Cli::parse();
    claw_player::logging::init(cli.log_format, "CLAW_LOG", "warn");
    let code = match cli.command {
        Command::Audit(a) => audit(a),
        Command::Export(e) => claw_player::export::run(&e),
        #[cfg(feature = "solana")]
        Command::Approve(a) => chain_command(claw_player::solana::approve(&a)),
        #[cfg(feature = "solana")]
        Command::Revoke(r) => chain_command(claw_player::solana::revoke(&r)),
        #[cfg(not(feature = "solana"))]
        Command::Approve(_) => not_built("approve"),
        #[cfg(not(feature = "solana"))]
        Command::Revoke(_) => not_built("revoke"),
        Command::Join(j) => {
            let rt = match tokio::runtime::Runtime::new() {
                Ok(rt) => rt,
                Err(e) => {
                    eprintln!("claw-player: cannot start the runtime: {e}");
                    return ExitCode::from(exit::UNREADABLE as u8);
                }
            };
            let code = match rt.block_on(join(j)) {
                Ok(c) => c,
                Err(e) => {
                    eprintln!("claw-player: {e:#}");
                    exit::UNREADABLE
                }
            };
            // A blocking read of stdin may still be pending: do not wait for it.
            rt.shutdown_background();
            code
        }
    };
    ExitCode::from(code as u8)
}

/// A command this build lacks: the one line saying how to build it, and 2.
#[cfg(not(feature = "solana"))]
fn not_built(command: &str) -> i32 {
    eprintln!("claw-player {command}: {}", claw_player::cli::SOLANA_NOT_BUILT);
    exit::UNREADABLE
}

/// Runs a chain command: its line on stdout and 0, or the error and 2.
#[cfg(feature = "solana")]
fn chain_command(f: impl std::future::Future<Output = anyhow::Result<String>>) -> i32 {
    let r = tokio::runtime::Runtime::new().map_err(anyhow::Error::from).and_then(|rt| rt.block_on(f));
    match r {
        Ok(line) => {
            println!("{line}");
            0
        }
        Err(e) => {
            eprintln!("claw-player: {e:#}");
            exit::UNREADABLE
        }
    }
}

fn audit(a: AuditArgs) -> i32 {
    let dealer = match a.dealer.as_deref().map(str::parse::<PlayerId>).transpose() {
        Ok(d) => d,
        Err(e) => {
            eprintln!("claw-player: --dealer: {e}");
            return exit::UNREADABLE;
        }
    };
    let me = match a.key.as_deref().map(Identity::load).transpose() {
        Ok(me) => me,
        Err(e) => {
            eprintln!("claw-player: --key: {e}");
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
                    eprintln!("claw-player: cannot start the runtime: {e}");
                    return exit::UNREADABLE;
                }
                (_, Err(e)) => {
                    eprintln!("claw-player: {e}");
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
    for f in &a.files {
        let name = f.display().to_string();
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
                            }
                            Err(e @ FetchError::Diverged(_)) => {
                                outcome =
                                    Err(AuditError { check: AuditCheck::HashChain, detail: e.to_string() })
                            }
                            Err(e) => eprintln!("claw-player: {name}: hand {}: {e}", t.hand_id),
                        }
                    }
                    let room = t.header.as_ref().map(|h| h.room_id.clone());
                    kept.push(keep.unwrap_or(t));
                    verdicts.push(HandVerdict { hand_id: kept[kept.len() - 1].hand_id, room, line, outcome });
                }
                if completed > 0 {
                    match rewrite_atomically(f, &kept) {
                        Ok(()) => eprintln!(
                            "claw-player: {name}: rewritten with the fetched reveal of {completed} hand(s)"
                        ),
                        Err(e) => {
                            eprintln!("claw-player: {name}: could not save the completed hands: {e}");
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
    bind_balances(&mut verdicts);
    // A closed stdout (`| head`) ends the audit quietly: no panic, no more output.
    let mut out = std::io::stdout().lock();
    let mut from = 0;
    for (name, to, error) in files {
        match error {
            None => {
                for v in &verdicts[from..to] {
                    let text =
                        if a.json { verdict_json(&name, v).to_string() } else { verdict_line(&name, v) };
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
    if !a.json {
        eprintln!("{ok} hands audited OK, {pending} pending (reveal not out yet), {failed} failed");
    }
    if code == exit::OK && pending > 0 {
        exit::PENDING
    } else {
        code
    }
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

fn print_event(e: &NodeEvent) {
    if let Ok(line) = serde_json::to_string(e) {
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "{line}");
        let _ = out.flush();
    }
}

fn print_json(v: serde_json::Value) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{v}");
    let _ = out.flush();
}

async fn join(j: JoinArgs) -> anyhow::Result<i32> {
    let invite = Invite::parse_with(&j.url, j.insecure).context("invite URL")?;
    let me = match &j.key {
        Some(p) => {
            Identity::load_or_create(p, &mut OsRng).with_context(|| format!("key file {}", p.display()))?
        }
        None => {
            eprintln!("claw-player: no --key: using a one-time identity");
            Identity::generate(&mut OsRng)
        }
    };
    let tls = j.ca.as_deref().map(ClientTls::with_ca_file).transpose().context("--ca")?;
    let config = NodeConfig {
        name: j.name.clone(),
        save_transcripts: j.save_transcripts.clone(),
        tls,
        ..NodeConfig::default()
    };
    let mut node = PlayerNode::connect(&invite, Arc::new(me), config).await.context("joining")?;
    if let Some(s) = &j.bot {
        let game = node.state().room.map(|r| r.game).unwrap_or_default();
        let strat = strategy(&game, s)?;
        let mut rng = match j.bot_seed {
            Some(seed) => ChaCha20Rng::seed_from_u64(seed),
            None => ChaCha20Rng::from_rng(OsRng).context("rng")?,
        };
        let quiet = j.quiet;
        let report = play_bot(&mut node, strat.as_ref(), &mut rng, j.hands, |e| {
            let show = !quiet
                || matches!(
                    e,
                    NodeEvent::HandEnded { .. }
                        | NodeEvent::VerificationFailed { .. }
                        | NodeEvent::Closed { .. }
                        | NodeEvent::Kicked { .. }
                );
            if show {
                print_event(e);
            }
        })
        .await?;
        // Say leave (not just close): the seat is freed at once instead of
        // being held for the reconnect window.
        if let Err(e) = node.leave().await {
            tracing::debug!(error = %e, "leave");
        }
        eprintln!(
            "claw-player: {} hands, {} audited OK, {} pending (reveal not out yet), {} failed checks, net {}",
            report.hands,
            report.audited_ok,
            report.pending,
            report.failures.len(),
            report.net
        );
        return Ok(if report.failures.is_empty() { exit::OK } else { exit::CHECK_FAILED });
    }
    // Interactive: events out, commands in.
    let handle = node.handle();
    let mut lines = tokio::io::BufReader::new(tokio::io::stdin()).lines();
    let mut failed = false;
    let mut hands = 0u64;
    let mut stdin_open = true;
    loop {
        tokio::select! {
            ev = node.next_event() => {
                let Some(ev) = ev else { break };
                print_event(&ev);
                match &ev {
                    NodeEvent::VerificationFailed { .. } => failed = true,
                    NodeEvent::HandEnded { seat: Some(_), .. } | NodeEvent::HandIncomplete { .. } => {
                        hands += 1;
                        if j.hands.is_some_and(|n| hands >= n) {
                            let _ = handle.leave().await;
                        }
                    }
                    NodeEvent::Closed { .. } => break,
                    _ => {}
                }
            }
            line = lines.next_line(), if stdin_open => {
                let line = match line {
                    Ok(Some(l)) => l,
                    Ok(None) | Err(_) => {
                        // stdin closed: leave the room.
                        stdin_open = false;
                        let _ = handle.leave().await;
                        continue;
                    }
                };
                match parse_input(&line) {
                    Ok(None) => {}
                    Ok(Some(cmd)) => {
                        let h = handle.clone();
                        // Queries wait up to 5 s: answer them off the event loop.
                        tokio::spawn(async move { run_command(h, cmd).await });
                    }
                    Err(e) => print_json(json!({"event": "input-error", "error": e.to_string(), "line": line})),
                }
            }
        }
    }
    Ok(if failed { exit::CHECK_FAILED } else { exit::OK })
}

async fn run_command(h: claw_player::node::NodeHandle, cmd: InputLine) {
    match cmd {
        InputLine::Act(a) => match h.act(a.clone()).await {
            Ok((hand_id, seq)) => {
                print_json(json!({"event": "action-sent", "hand_id": hand_id, "seq": seq, "action": a}))
            }
            Err(e) => print_json(json!({"event": "input-error", "error": e.to_string(), "action": a})),
        },
        InputLine::Query(q) => match h.query(q).await {
            Ok(data) => print_json(json!({"event": "query-result", "query": q, "result": data})),
            Err(e) => print_json(json!({"event": "query-error", "query": q, "error": e.to_string()})),
        },
        InputLine::State => print_json(json!({"event": "state", "state": h.state()})),
        InputLine::SitOut => {
            let _ = h.sit_out().await;
        }
        InputLine::SitIn => {
            let _ = h.sit_in().await;
        }
        InputLine::Leave => {
            let _ = h.leave().await;
        }
    }
}
