//! `claw-dealer --bots N --hands H`: N SDK bots play H hands against the
//! in-process dealer over real WebSockets on 127.0.0.1; every bot audits
//! every hand it played; a summary is printed.

use std::io::Write;
use std::sync::Arc;
use std::time::{Duration, Instant};

use claw_chips::{AccountId, ChipProvider};
use claw_player::node::{NodeConfig as PlayerConfig, PlayerNode};
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
    /// Print a progress line on stderr while hands run (the binary sets it
    /// when stderr is a terminal; results go to `out`).
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
        bots.push(tokio::spawn(async move {
            let mut rng = rand_chacha::ChaCha20Rng::from_rng(OsRng)
                .unwrap_or_else(|_| rand_chacha::ChaCha20Rng::seed_from_u64(i.into()));
            let r = play_bot(&mut p, strategy.as_ref(), &mut rng, None, |_| {}).await;
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
                if params.progress {
                    let mut err = std::io::stderr();
                    let _ = write!(err, "\r[claw-dealer] {} hands: {hands}/{}", params.game, params.hands);
                    let _ = err.flush();
                }
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
    if params.progress {
        eprintln!();
    }
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
    let dealer = AccountId::new(format!("dealer:{}", node.dealer_id())).ok();
    let house = AccountId::new(format!("house:{}", params.room)).ok();
    let d = match &dealer {
        Some(a) => chips.balance(a).await.map(|c| c.0).unwrap_or(0),
        None => 0,
    };
    let h = match &house {
        Some(a) => chips.balance(a).await.map(|c| c.0).unwrap_or(0),
        None => 0,
    };
    let _ = writeln!(out, "  chips: bots {total}, dealer (commission + rake) {d}, house {h}");
    if all_audited && hands > 0 {
        let _ = writeln!(out, "{hands} hands audited OK");
    } else {
        let _ = writeln!(out, "AUDIT FAILURES or no hands played");
    }
    let audit_failures = reports.iter().map(|(_, r)| r.failures.len()).sum();
    let incomplete = reports.iter().map(|(_, r)| r.incomplete).sum();
    Ok(DemoOutcome { hands, all_audited, audit_failures, incomplete, broke_up })
}
