//! Runs a bot on a [`PlayerNode`]: answers every `your-turn` with the
//! strategy's choice and every ready check and rematch vote with yes,
//! counts hands and audits, and stops after a number of hands or when the
//! node closes. Bots are ordinary SDK clients: everything
//! they see went through the live verification first.

use std::sync::Arc;
use std::time::Duration;

use claw_audit::Verdict;
use claw_protocol::audit::AuditCheck;
use claw_protocol::messages::VoteState;
use claw_protocol::{CardId, HandId, PlayerId};
use rand_core::RngCore;
use serde_json::Value;

use crate::bots::{RandomBot, Strategy, TurnView};
use crate::node::{NodeError, NodeEvent, PlayerNode};

/// What a bot's session did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BotReport {
    /// Hands that ended while the bot was seated in them.
    pub hands: u64,
    /// Hands whose audit passed every check (a pending hand counts once its
    /// deferred reveal arrives and completes the audit).
    pub audited_ok: u64,
    /// Hands whose deferred reveal has not arrived: every check that could
    /// run passed, the rest waits for the reveal (fetch the hand later).
    pub pending: u64,
    /// Every failed check: the hand, the check and what failed.
    pub failures: Vec<(HandId, AuditCheck, String)>,
    /// Hands this bot was dealt into whose end it did not see (the
    /// connection was down, or the dealer voided the hand); counted in
    /// `hands` too, never audited.
    pub incomplete: u64,
    /// Actions sent.
    pub actions: u64,
    /// Actions the dealer refused.
    pub rejected: u64,
    /// Net chips won over the session (sum of the hands' results).
    pub net: i64,
    /// Why the node stopped, if it did.
    pub closed: Option<String>,
}

/// Plays until `hands` hands have ended (or forever with `None`) or the node
/// closes. `on_event` sees every event first (logging, JSON lines).
pub async fn play_bot(
    node: &mut PlayerNode,
    strategy: &dyn Strategy,
    rng: &mut (dyn RngCore + Send),
    hands: Option<u64>,
    on_event: impl FnMut(&NodeEvent),
) -> Result<BotReport, NodeError> {
    play_bot_paced(node, strategy, rng, hands, Duration::ZERO, on_event).await
}

/// [`play_bot`] that waits `think` before each action, as a person at the
/// table would (a load generator's human pace; the turn's deadline still
/// applies).
pub async fn play_bot_paced(
    node: &mut PlayerNode,
    strategy: &dyn Strategy,
    rng: &mut (dyn RngCore + Send),
    hands: Option<u64>,
    think: Duration,
    mut on_event: impl FnMut(&NodeEvent),
) -> Result<BotReport, NodeError> {
    let mut report = BotReport::default();
    let mut retries = 0u32;
    let mut last_turn: Option<NodeEvent> = None;
    if hands == Some(0) {
        return Ok(report);
    }
    while let Some(ev) = node.next_event().await {
        on_event(&ev);
        match &ev {
            NodeEvent::YourTurn { .. } => {
                retries = 0;
                last_turn = Some(ev.clone());
                if !think.is_zero() {
                    tokio::time::sleep(think).await;
                }
                take_turn(node, strategy, rng, &ev, &mut report).await?;
            }
            NodeEvent::ActionRejected { hand_id, .. } => {
                report.rejected += 1;
                // Try again with a random legal option (the turn is still ours).
                if let Some(t @ NodeEvent::YourTurn { hand_id: h, .. }) = &last_turn {
                    if h == hand_id && retries < 3 {
                        retries += 1;
                        take_turn(node, &RandomBot, rng, &t.clone(), &mut report).await?;
                    }
                }
            }
            NodeEvent::HandEnded { hand_id, seat, result, audit, .. } => {
                if let Some(seat) = seat {
                    report.hands += 1;
                    report.net += result.net.get(seat.index()).copied().unwrap_or(0);
                }
                let counted = u64::from(seat.is_some());
                match audit.verdict {
                    Verdict::Ok => report.audited_ok += counted,
                    Verdict::Pending => report.pending += counted,
                    Verdict::Failed => {
                        let c = audit.failed.unwrap_or(AuditCheck::Structure);
                        report.failures.push((*hand_id, c, audit.detail.clone().unwrap_or_default()));
                    }
                }
                last_turn = None;
                if hands.is_some_and(|n| report.hands >= n) {
                    return Ok(report);
                }
            }
            NodeEvent::HandIncomplete { .. } => {
                report.hands += 1;
                report.incomplete += 1;
                last_turn = None;
                if hands.is_some_and(|n| report.hands >= n) {
                    return Ok(report);
                }
            }
            NodeEvent::AuditCompleted { hand_id, audit } => match audit.verdict {
                Verdict::Failed => {
                    let c = audit.failed.unwrap_or(AuditCheck::Structure);
                    report.failures.push((*hand_id, c, audit.detail.clone().unwrap_or_default()));
                }
                _ if report.pending > 0 => {
                    report.pending -= 1;
                    report.audited_ok += 1;
                }
                _ => {}
            },
            NodeEvent::VerificationFailed { hand_id, check, detail, seq: Some(_) } => {
                report.failures.push((*hand_id, *check, detail.clone()));
            }
            NodeEvent::Closed { reason } => {
                // A kick's reason (sent before the close) says more.
                report.closed.get_or_insert_with(|| reason.clone());
                return Ok(report);
            }
            NodeEvent::Kicked { reason, .. } => report.closed = Some(format!("kicked: {reason}")),
            // A bot is always ready, and always plays on.
            NodeEvent::ReadyCheck(c) if asks(c.state, &c.waiting, node.id()) => {
                answer(node.handle().ready().await)?
            }
            NodeEvent::Rematch(r) if asks(r.state, &r.waiting, node.id()) => {
                answer(node.handle().rematch_vote(true).await)?;
            }
            _ => {}
        }
    }
    report.closed.get_or_insert_with(|| "node stopped".into());
    Ok(report)
}

/// Whether an open ready check or rematch vote still waits for `me`.
pub fn asks(state: VoteState, waiting: &[PlayerId], me: PlayerId) -> bool {
    state == VoteState::Open && waiting.contains(&me)
}

/// A ready or a vote that could not be sent is not the session's failure:
/// disconnected, the dealer asks again after the reconnect; closed, the
/// node's `closed` event ends the session.
fn answer(r: Result<(), NodeError>) -> Result<(), NodeError> {
    match r {
        Err(NodeError::NotConnected | NodeError::Closed) => Ok(()),
        r => r,
    }
}

async fn take_turn(
    node: &PlayerNode,
    strategy: &dyn Strategy,
    rng: &mut (dyn RngCore + Send),
    turn: &NodeEvent,
    report: &mut BotReport,
) -> Result<(), NodeError> {
    let NodeEvent::YourTurn { seat, actions, balance, hand, public_state, .. } = turn else { return Ok(()) };
    let view = node.hand();
    let game = view.as_ref().map(|v| v.game.clone()).unwrap_or_default();
    let table: Vec<CardId> =
        view.as_ref().map(|v| v.table.iter().filter_map(|c| c.card).collect()).unwrap_or_default();
    let public = match (&**public_state, &view) {
        (Value::Null, Some(v)) => v.public_state.clone(),
        _ => public_state.clone(),
    };
    let positions = view.as_ref().map(|v| v.my_positions.clone()).unwrap_or_default();
    let (settings, memory) = match &view {
        Some(v) => (v.settings.clone(), v.memory.clone()),
        None => (Arc::new(Value::Null), Arc::new(Value::Null)),
    };
    let tv = TurnView {
        game: &game,
        seat: *seat,
        actions,
        public_state: &public,
        hand,
        positions: &positions,
        table: &table,
        balance: *balance,
        settings: &settings,
        memory: &memory,
    };
    let Ok(action) = strategy.choose(&tv, rng) else { return Ok(()) };
    match node.act(action).await {
        Ok(_) => {
            report.actions += 1;
            Ok(())
        }
        // Disconnected meanwhile: the dealer re-sends the turn after the reconnect.
        Err(NodeError::NotConnected | NodeError::NoHand) => Ok(()),
        Err(e) => Err(e),
    }
}
