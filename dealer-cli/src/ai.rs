//! The dealer's house AIs (`ai_seats`): the player SDK's bots, each an
//! ordinary [`PlayerNode`] that connects to the room over the node's own
//! WebSocket listener with a house-AI key. A bot decides from its
//! `your-turn` view (the valid actions, the public state, its own verified
//! cards), so it knows only what any player at its seat knows. Keys are
//! kept for the process's life and reused once their bot has stopped, so
//! an idle AI's chips are topped up, not paid again.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use claw_dealer::ai::{AiLevel, AiPlayers, AiRequest};
use claw_player::node::{NodeConfig as PlayerConfig, PlayerNode};
use claw_player::play::play_bot;
use claw_player::Invite;
use claw_protocol::{Identity, PlayerId};
use rand::rngs::OsRng;
use rand::SeedableRng;

/// The SDK strategy a house AI of `level` plays: Guandan's `guandan-l1`–`l3`,
/// else the game's `simple` strategy.
pub fn strategy_name(level: Option<AiLevel>) -> &'static str {
    match level {
        None => "simple",
        Some(AiLevel::L1) => "guandan-l1",
        Some(AiLevel::L2) => "guandan-l2",
        Some(AiLevel::L3) => "guandan-l3",
    }
}

/// House AIs run as SDK bots on this process's runtime.
pub struct SdkAi {
    keys: Arc<Mutex<Keys>>,
    runtime: tokio::runtime::Handle,
}

#[derive(Default)]
struct Keys {
    /// Keys whose bot has stopped.
    idle: Vec<Arc<Identity>>,
    /// Keys reserved or playing, by id.
    busy: HashMap<PlayerId, Arc<Identity>>,
}

impl Keys {
    fn idle_again(&mut self, player: PlayerId) {
        if let Some(key) = self.busy.remove(&player) {
            self.idle.push(key);
        }
    }
}

fn lock(keys: &Mutex<Keys>) -> MutexGuard<'_, Keys> {
    keys.lock().unwrap_or_else(PoisonError::into_inner)
}

impl SdkAi {
    /// House AIs spawned on `runtime`.
    pub fn new(runtime: tokio::runtime::Handle) -> Arc<SdkAi> {
        Arc::new(SdkAi { keys: Arc::default(), runtime })
    }
}

impl AiPlayers for SdkAi {
    fn reserve(&self) -> Result<PlayerId, String> {
        let mut k = lock(&self.keys);
        let key = k.idle.pop().unwrap_or_else(|| Arc::new(Identity::generate(&mut OsRng)));
        let id = key.id();
        k.busy.insert(id, key);
        Ok(id)
    }

    fn start(&self, player: PlayerId, req: AiRequest) {
        let Some(me) = lock(&self.keys).busy.get(&player).cloned() else {
            tracing::error!(player = %player.short(), "house AI started without its reservation");
            return;
        };
        let keys = Arc::clone(&self.keys);
        self.runtime.spawn(async move {
            match play(me, &req).await {
                Ok(why) => tracing::info!(player = %player.short(), room = %req.url, why, "house AI left"),
                Err(e) => {
                    tracing::warn!(player = %player.short(), room = %req.url, error = %e, "house AI stopped")
                }
            }
            lock(&keys).idle_again(player);
        });
    }

    fn release(&self, player: PlayerId) {
        lock(&self.keys).idle_again(player);
    }
}

/// Connects as `me`, sits at the seat asked for and plays until the
/// connection ends; why it ended.
async fn play(me: Arc<Identity>, req: &AiRequest) -> anyhow::Result<String> {
    let invite = Invite::parse(&req.url).map_err(|e| anyhow::anyhow!("invite {}: {e}", req.url))?;
    let strategy = claw_player::bots::strategy(&req.game, strategy_name(req.level))?;
    let name = match req.level {
        Some(l) => format!("house AI L{}", u8::from(l)),
        None => "house AI".to_owned(),
    };
    let cfg = PlayerConfig { name: Some(name), seat: Some(req.seat), ..PlayerConfig::default() };
    let mut node = PlayerNode::connect(&invite, me, cfg).await?;
    let mut rng = rand_chacha::ChaCha20Rng::from_rng(OsRng)?;
    let report = play_bot(&mut node, strategy.as_ref(), &mut rng, None, |_| {}).await;
    node.close().await;
    let report = report?;
    if !report.failures.is_empty() {
        tracing::error!(failures = report.failures.len(), "a house AI's audit failed");
    }
    Ok(report.closed.unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_level_names_a_guandan_strategy_and_none_the_simple_one() {
        for (l, n) in [(None, "simple"), (Some(AiLevel::L1), "guandan-l1"), (Some(AiLevel::L3), "guandan-l3")]
        {
            assert_eq!(strategy_name(l), n);
        }
        for l in [AiLevel::L1, AiLevel::L2, AiLevel::L3] {
            assert!(claw_player::bots::strategy("guandan", strategy_name(Some(l))).is_ok());
        }
        assert!(claw_player::bots::strategy("sam-gong", strategy_name(None)).is_ok());
    }
}
