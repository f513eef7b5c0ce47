//! `claw-player join`: plays a room, events out as JSON lines on stdout and
//! actions and queries in as JSON lines on stdin, or a bot plays.

use std::io::Write;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use claw_player::bots::strategy;
use claw_player::node::{NodeConfig, NodeEvent, NodeHandle, PlayerNode};
use claw_player::play::play_bot;
use claw_player::transport::ClientTls;
use claw_player::Invite;
use claw_protocol::messages::{QueryType, QuickMatch};
use claw_protocol::Identity;
use rand::rngs::OsRng;
use rand_chacha::rand_core::SeedableRng;
use rand_chacha::ChaCha20Rng;
use serde::Deserialize;
use serde_json::{json, Value};
use tokio::io::AsyncBufReadExt;

use crate::cli::{exit, JoinArgs};
use crate::stderr;

/// How long the node may take to say `closed` once told to leave.
const CLOSE_WAIT: Duration = Duration::from_secs(5);

/// One line read on stdin by `claw-player join`.
#[derive(Debug, Clone, PartialEq)]
pub enum InputLine {
    /// Sign and send a game action.
    Act(Value),
    /// Ask the dealer; the answer is printed as `query-result`.
    Query(QueryType),
    /// Print the node's state (`state` line).
    State,
    /// Skip the coming hands, keeping the seat.
    SitOut,
    /// Play again from the next hand.
    SitIn,
    /// Answer a ready check (or be ready for the next one).
    Ready,
    /// Vote on the open rematch.
    Rematch(bool),
    /// Leave the room and exit.
    Leave,
}

/// Why an input line was not understood.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InputError {
    /// Not a JSON object.
    #[error("not a JSON object: {0}")]
    NotJson(String),
    /// `cmd` is not one of the known commands.
    #[error("unknown cmd {0:?} (act, query, state, sit-out, sit-in, ready, rematch, leave)")]
    UnknownCommand(String),
    /// A command without its field.
    #[error("{0}")]
    Missing(&'static str),
}

#[derive(Deserialize)]
struct RawLine {
    cmd: Option<String>,
    action: Option<Value>,
    query: Option<QueryType>,
    accept: Option<bool>,
}

/// Parses one stdin line: `{"cmd":"act","action":{…}}`, a bare action
/// object (`{"type":"call"}`), `{"cmd":"query","query":"my-balance"}`,
/// `{"cmd":"state"}`, `{"cmd":"sit-out"}`, `{"cmd":"sit-in"}`,
/// `{"cmd":"ready"}`, `{"cmd":"rematch","accept":true}`, `{"cmd":"leave"}`.
/// Blank lines give `Ok(None)`.
pub fn parse_input(line: &str) -> Result<Option<InputLine>, InputError> {
    let line = line.trim();
    if line.is_empty() {
        return Ok(None);
    }
    let v: Value = serde_json::from_str(line).map_err(|e| InputError::NotJson(e.to_string()))?;
    if !v.is_object() {
        return Err(InputError::NotJson("expected an object".into()));
    }
    if v.get("cmd").is_none() {
        return Ok(Some(InputLine::Act(v)));
    }
    let raw: RawLine = serde_json::from_value(v).map_err(|e| InputError::NotJson(e.to_string()))?;
    let cmd = raw.cmd.unwrap_or_default();
    Ok(Some(match cmd.as_str() {
        "act" => InputLine::Act(raw.action.ok_or(InputError::Missing("act needs \"action\""))?),
        "query" => InputLine::Query(raw.query.ok_or(InputError::Missing("query needs \"query\""))?),
        "state" => InputLine::State,
        "sit-out" => InputLine::SitOut,
        "sit-in" => InputLine::SitIn,
        "ready" => InputLine::Ready,
        "rematch" => InputLine::Rematch(
            raw.accept.ok_or(InputError::Missing("rematch needs \"accept\": true or false"))?,
        ),
        "leave" => InputLine::Leave,
        _ => return Err(InputError::UnknownCommand(cmd)),
    }))
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

/// Runs `claw-player join`; returns the exit code.
pub async fn run(j: JoinArgs) -> anyhow::Result<i32> {
    let invite = Invite::parse_with(&j.url, j.insecure).context("invite URL")?;
    let me = match &j.key {
        Some(p) => {
            Identity::load_or_create(p, &mut OsRng).with_context(|| format!("key file {}", p.display()))?
        }
        None => {
            stderr().warn("no --key: using a one-time identity");
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
    let mut node = match &j.quick_match {
        Some(game) => {
            let request = QuickMatch { game: game.clone(), tier: j.tier.clone() };
            // Its errors say "quick match: …" themselves.
            PlayerNode::quick_match(&invite, request, Arc::new(me), config).await?
        }
        None => PlayerNode::connect(&invite, Arc::new(me), config).await.context("joining")?,
    };
    if let Some(s) = &j.bot {
        let game = node.state().room.map(|r| r.game).unwrap_or_default();
        let strat = strategy(&game, s)?;
        let mut rng = match j.bot_seed {
            Some(seed) => ChaCha20Rng::seed_from_u64(seed),
            None => ChaCha20Rng::from_rng(OsRng).context("rng")?,
        };
        let quiet = j.quiet;
        let show = |e: &NodeEvent| {
            let shown = !quiet
                || matches!(
                    e,
                    NodeEvent::HandEnded { .. }
                        | NodeEvent::VerificationFailed { .. }
                        | NodeEvent::Closed { .. }
                        | NodeEvent::Kicked { .. }
                );
            if shown {
                print_event(e);
            }
        };
        let report = play_bot(&mut node, strat.as_ref(), &mut rng, j.hands, &show).await?;
        if report.closed.is_none() {
            // Its hands played: say leave (not just close: the seat is freed
            // at once instead of being held for the reconnect window), and
            // print the node's last events, to its `closed` line.
            if let Err(e) = node.handle().leave().await {
                tracing::debug!(error = %e, "leave");
            }
            let last = async {
                while let Some(e) = node.next_event().await {
                    show(&e);
                    if matches!(e, NodeEvent::Closed { .. }) {
                        break;
                    }
                }
            };
            if tokio::time::timeout(CLOSE_WAIT, last).await.is_err() {
                tracing::warn!("the node did not close within {} s of leaving", CLOSE_WAIT.as_secs());
            }
        }
        stderr().info(format_args!(
            "{} hands, {} audited OK, {} pending (reveal not out yet), {} failed checks, net {}",
            report.hands,
            report.audited_ok,
            report.pending,
            report.failures.len(),
            report.net
        ));
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

async fn run_command(h: NodeHandle, cmd: InputLine) {
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
        InputLine::Ready => {
            let _ = h.ready().await;
        }
        InputLine::Rematch(accept) => {
            let _ = h.rematch_vote(accept).await;
        }
        InputLine::Leave => {
            let _ = h.leave().await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn input_lines() {
        assert_eq!(parse_input("").unwrap(), None);
        assert_eq!(parse_input(r#"{"type":"call"}"#).unwrap(), Some(InputLine::Act(json!({"type":"call"}))));
        assert_eq!(
            parse_input(r#"{"cmd":"act","action":{"type":"raise","to":40}}"#).unwrap(),
            Some(InputLine::Act(json!({"type":"raise","to":40})))
        );
        assert_eq!(
            parse_input(r#"{"cmd":"query","query":"my-balance"}"#).unwrap(),
            Some(InputLine::Query(QueryType::MyBalance))
        );
        assert_eq!(parse_input(r#"{"cmd":"leave"}"#).unwrap(), Some(InputLine::Leave));
        assert_eq!(parse_input(r#"{"cmd":"state"}"#).unwrap(), Some(InputLine::State));
        assert_eq!(parse_input(r#"{"cmd":"ready"}"#).unwrap(), Some(InputLine::Ready));
        assert_eq!(
            parse_input(r#"{"cmd":"rematch","accept":false}"#).unwrap(),
            Some(InputLine::Rematch(false))
        );
        assert!(matches!(parse_input(r#"{"cmd":"rematch"}"#), Err(InputError::Missing(_))));
        assert!(matches!(parse_input("[1]"), Err(InputError::NotJson(_))));
        assert!(matches!(parse_input("nope"), Err(InputError::NotJson(_))));
        assert!(matches!(parse_input(r#"{"cmd":"dance"}"#), Err(InputError::UnknownCommand(_))));
        assert!(matches!(parse_input(r#"{"cmd":"query"}"#), Err(InputError::Missing(_))));
    }
}
