//! `claw-dealer --bots N --hands H`: N SDK bots play H hands against the
//! in-process dealer over real WebSockets on 127.0.0.1; every bot audits
//! every hand it played; a summary is printed.

use std::io::Write;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use claw_chips::{AccountId, ChipProvider};
use claw_player::node::{NodeConfig as PlayerConfig, NodeEvent, PlayerNode};
use claw_player::play::{play_bot, BotReport};
use claw_player::Invite;
use claw_protocol::{Identity, PlayerId};
use rand::rngs::OsRng;
use rand::SeedableRng;
use tokio::sync::broadcast::error::RecvError;

use claw_dealer::room::{RoomCmd, RoomEvent};
use claw_dealer::NodeHandle;

/// What the demo is asked to do.
#[derive(Debug, Clone)]
pub struct DemoParams {
    /// The demo room's id.
    pub room: String,
    /// Its game.
    pub game: String,
    /// How many bots to seat.
    pub bots: u8,
    /// Hands to play (the room closes after them).
    pub hands: u64,
    /// `simple` or `random` (see the player SDK's bots).
    pub strategy: String,
    /// Bot `i` plays as the key file `bot-<i>.key` here (created if
    /// missing), for chips registered to known ids (EVM); none = fresh keys.
    pub bot_keys: Option<std::path::PathBuf>,
    /// Redraw a progress line on stderr while hands run (hands done,
    /// hands/s, audits passed; the binary sets it when stderr is a terminal
    /// and the log format is text; results go to `out`).
    pub progress: bool,
}

/// What the demo did.
#[derive(Debug, Clone)]
pub struct DemoOutcome {
    /// Hands settled.
    pub hands: u64,
    /// Every hand audited OK by every bot that played it.
    pub all_audited: bool,
    /// Failed audit checks over all bots (a cheating dealer or a bug).
    pub audit_failures: usize,
    /// Hands a bot was dealt into but did not see end (a dropped connection
    /// or a voided hand): not audited by that bot, not a failure.
    pub incomplete: u64,
    /// Why the demo ended before its hands: the table broke up (too few
    /// bots left with chips to deal a hand, e.g. one holds them all), and
    /// the room was closed instead of waiting forever.
    pub broke_up: Option<String>,
}

/// Runs the demo on a started node whose room `params.room` holds its
/// hands and closes after `params.hands` hands.
pub async fn run(
    node: &NodeHandle,
    chips: &Arc<dyn ChipProvider>,
    params: &DemoParams,
    out: &mut (dyn Write + Send),
) -> anyhow::Result<DemoOutcome> {
    let room = node.room(&params.room).ok_or_else(|| anyhow::anyhow!("no room {}", params.room))?;
    let url = node.invite_url(&params.room).ok_or_else(|| anyhow::anyhow!("no invite URL"))?;
    let invite = Invite::parse(&url).map_err(|e| anyhow::anyhow!("invite {url}: {e}"))?;
    let mut events = node.subscribe();
    let dealer = AccountId::new(format!("dealer:{}", node.dealer_id())).ok();
    let house = AccountId::new(format!("house:{}", params.room)).ok();
    // A data directory used before holds earlier runs' takings: the summary
    // shows what these hands added.
    let dealer_before = balance_or_zero(chips, dealer.as_ref()).await;
    // Every hand a bot audited OK (live, or when its deferred reveal came).
    let audits_ok = Arc::new(AtomicU64::new(0));
    room.hold_hands(true).await;
    // Each bot says here when it stops (and why), so that a table that can
    // no longer deal is closed rather than waited on.
    let (left_tx, mut left_rx) = tokio::sync::mpsc::unbounded_channel::<(u8, Option<String>)>();
    let mut bots = Vec::new();
    let mut ids = Vec::new();
    for i in 0..params.bots {
        let me = Arc::new(match &params.bot_keys {
            Some(dir) => {
                let path = dir.join(format!("bot-{i}.key"));
                Identity::load_or_create(&path, &mut OsRng)
                    .map_err(|e| anyhow::anyhow!("bot key {}: {e}", path.display()))?
            }
            None => Identity::generate(&mut OsRng),
        });
        ids.push(me.id());
        let cfg = PlayerConfig { name: Some(format!("bot-{i}")), ..PlayerConfig::default() };
        let mut p = PlayerNode::connect(&invite, me.clone(), cfg)
            .await
            .map_err(|e| anyhow::anyhow!("bot {i} could not join: {e}"))?;
        let strategy = claw_player::bots::strategy(&params.game, &params.strategy)
            .map_err(|e| anyhow::anyhow!("bot strategy: {e}"))?;
        let left = left_tx.clone();
        let audited = Arc::clone(&audits_ok);
        bots.push(tokio::spawn(async move {
            let mut rng = rand_chacha::ChaCha20Rng::from_rng(OsRng)
                .unwrap_or_else(|_| rand_chacha::ChaCha20Rng::seed_from_u64(i.into()));
            let count = |ev: &NodeEvent| {
                if let NodeEvent::HandEnded { audit, .. } | NodeEvent::AuditCompleted { audit, .. } = ev {
                    if audit.ok {
                        audited.fetch_add(1, Ordering::Relaxed);
                    }
                }
            };
            let r = play_bot(&mut p, strategy.as_ref(), &mut rng, None, count).await;
            p.close().await;
            let why = match &r {
                Ok(r) => r.closed.clone(),
                Err(e) => Some(format!("error: {e}")),
            };
            let _ = left.send((i, why));
            (me.id(), r)
        }));
    }
    // Every bot is seated (connect returns after the join answer): go.
    let started = Instant::now();
    let mut progress = Progress::new(params.progress, started);
    room.hold_hands(false).await;
    let (mut hands, mut voided) = (0u64, 0u64);
    let mut played: std::collections::HashMap<PlayerId, (u64, i64)> = Default::default();
    let need = usize::from(room.config.min_players);
    let mut seated = usize::from(params.bots);
    let mut broke_up = None;
    loop {
        // Events first: a bot that stops because the room closed finds the
        // room's last events already queued.
        let event = tokio::select! {
            biased;
            e = events.recv() => e,
            Some((i, why)) = left_rx.recv() => {
                seated = seated.saturating_sub(1);
                if broke_up.is_none() && seated < need && hands < params.hands && !room.is_closed() {
                    let msg = format!(
                        "the table broke up after {hands} of {} hands: bot-{i} left ({}), \
                         {seated} bot(s) remain and {} needs {need}; closing the room",
                        params.hands,
                        why.as_deref().unwrap_or("?"),
                        params.game,
                    );
                    let _ = writeln!(out, "[claw-dealer] {msg}");
                    broke_up = Some(msg);
                    let (done, _) = tokio::sync::oneshot::channel();
                    room.send(RoomCmd::Shutdown { grace: Duration::ZERO, done }).await;
                }
                continue;
            }
        };
        match event {
            Ok(RoomEvent::HandFinished { room: r, players, net, .. }) if r == params.room => {
                hands += 1;
                for (p, n) in players.iter().zip(net) {
                    let e = played.entry(*p).or_default();
                    e.0 += 1;
                    e.1 += n;
                }
                progress.draw(params, hands, audits_ok.load(Ordering::Relaxed), false);
            }
            Ok(RoomEvent::HandVoided { room: r, reason, .. }) if r == params.room => {
                voided += 1;
                let _ = writeln!(out, "[claw-dealer] hand voided: {reason}");
            }
            Ok(RoomEvent::Closed { room: r }) if r == params.room => break,
            Ok(_) => {}
            Err(RecvError::Lagged(_)) => {}
            Err(RecvError::Closed) => break,
        }
        if room.is_closed() {
            break;
        }
    }
    let elapsed = started.elapsed();
    let mut reports = Vec::new();
    for b in bots {
        match tokio::time::timeout(Duration::from_secs(30), b).await {
            Ok(Ok((id, Ok(r)))) => reports.push((id, r)),
            Ok(Ok((id, Err(e)))) => {
                reports.push((id, BotReport { closed: Some(format!("error: {e}")), ..BotReport::default() }))
            }
            _ => anyhow::bail!("a bot did not stop"),
        }
    }
    progress.finish(params, hands, audits_ok.load(Ordering::Relaxed));
    let all_audited =
        hands > 0 && reports.iter().all(|(_, r)| r.failures.is_empty() && r.audited_ok == r.hands);
    // Summary.
    let _ = writeln!(
        out,
        "game {}  room {}  {hands} hands in {:.2?} ({voided} voided)",
        params.game, params.room, elapsed
    );
    let mut total: i128 = 0;
    for (i, (id, r)) in reports.iter().enumerate() {
        let bal = chips.balance(&AccountId::from(*id)).await.map(|c| c.0 as i128).unwrap_or(-1);
        total += bal.max(0);
        let (n, net) = played.get(id).copied().unwrap_or_default();
        let early = if n < hands {
            format!("  (left early: {})", r.closed.as_deref().unwrap_or("?"))
        } else {
            String::new()
        };
        let _ = writeln!(
            out,
            "  bot-{i} {}  hands {n:>4}  audited OK {:>4}  net {net:>+8}  balance {bal:>8}{early}",
            id.short(),
            r.audited_ok,
        );
        for (h, check, detail) in r.failures.iter().take(3) {
            let _ = writeln!(out, "    FAILED hand {h}: {check}: {detail}");
        }
    }
    let d = balance_or_zero(chips, dealer.as_ref()).await;
    let h = balance_or_zero(chips, house.as_ref()).await;
    let earlier = match dealer_before {
        0 => String::new(),
        b => format!(" (balance {d}, {b} from earlier runs on this data directory)"),
    };
    let _ = writeln!(
        out,
        "  chips: bots {total}, dealer (commission + rake) {}{earlier}, house {h}",
        d.saturating_sub(dealer_before)
    );
    if all_audited && hands > 0 {
        let _ = writeln!(out, "{hands} hands audited OK");
    } else {
        let _ = writeln!(out, "AUDIT FAILURES or no hands played");
    }
    let audit_failures = reports.iter().map(|(_, r)| r.failures.len()).sum();
    let incomplete = reports.iter().map(|(_, r)| r.incomplete).sum();
    Ok(DemoOutcome { hands, all_audited, audit_failures, incomplete, broke_up })
}

/// An account's balance, 0 when there is no such account or the ledger
/// does not answer (the summary is informative; the audits decide).
async fn balance_or_zero(chips: &Arc<dyn ChipProvider>, account: Option<&AccountId>) -> u64 {
    match account {
        Some(a) => chips.balance(a).await.map(|c| c.0).unwrap_or(0),
        None => 0,
    }
}

/// The demo's progress line on stderr, redrawn in place (`\r`) at most
/// four times a second.
struct Progress {
    on: bool,
    started: Instant,
    drawn: Option<Instant>,
}

impl Progress {
    const EVERY: Duration = Duration::from_millis(250);

    fn new(on: bool, started: Instant) -> Progress {
        Progress { on, started, drawn: None }
    }

    /// Redraws the line unless it was drawn less than [`Self::EVERY`] ago
    /// (`force`: always).
    fn draw(&mut self, params: &DemoParams, hands: u64, audits: u64, force: bool) {
        if !self.on || (!force && self.drawn.is_some_and(|t| t.elapsed() < Self::EVERY)) {
            return;
        }
        self.drawn = Some(Instant::now());
        let line = progress_line(&params.game, hands, params.hands, audits, self.started.elapsed());
        let mut err = std::io::stderr().lock();
        let _ = write!(err, "\r{line}\x1b[K");
        let _ = err.flush();
    }

    /// The final figures, then the line is left as it is.
    fn finish(&mut self, params: &DemoParams, hands: u64, audits: u64) {
        if self.on {
            self.draw(params, hands, audits, true);
            eprintln!();
        }
    }
}

/// `[claw-dealer] GAME: 340/1500 hands, 27.1 hands/s, 2040 bot audits passed`.
fn progress_line(game: &str, hands: u64, of: u64, audits: u64, elapsed: Duration) -> String {
    let rate = hands as f64 / elapsed.as_secs_f64().max(0.001);
    format!("[claw-dealer] {game}: {hands}/{of} hands, {rate:.1} hands/s, {audits} bot audits passed")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_progress_line_has_hands_rate_and_audits() {
        let l = progress_line("texas-holdem", 340, 1500, 2040, Duration::from_secs(10));
        assert_eq!(l, "[claw-dealer] texas-holdem: 340/1500 hands, 34.0 hands/s, 2040 bot audits passed");
    }
}
