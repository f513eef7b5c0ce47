//! The game half of the audit: the canonical deck of the game a hand
//! announces and a replay of its rules over the verified inputs, which must
//! reproduce every deal, chip movement, reveal and card transfer in order, the timeout
//! actions, the announced result and the table memory. The one replayer
//! the dealer's tests, the SDK's live verifier and the offline auditor use.

use std::sync::Arc;

use claw_protocol::audit::{ActionSource, AnnouncedEvent, Replayer, VerifiedHand};
use claw_protocol::CardId;
use serde_json::Value;

use crate::{check_conservation, registry, DynGame, HandEvent, HandRunner, PlayerInfo};

/// Canonical decks and rule replay through the games registry, plus games
/// added with [`GamesReplayer::with_game`] (looked up first).
#[derive(Clone, Default)]
pub struct GamesReplayer {
    extra: Vec<Arc<dyn DynGame>>,
}

impl std::fmt::Debug for GamesReplayer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<&str> = self.extra.iter().map(|g| g.meta().name).collect();
        f.debug_struct("GamesReplayer").field("extra", &names).finish()
    }
}

impl GamesReplayer {
    /// The same replayer, also knowing `game` (e.g. a test game).
    pub fn with_game(mut self, game: Arc<dyn DynGame>) -> GamesReplayer {
        self.extra.push(game);
        self
    }

    fn game_for(&self, name: &str, version: &str) -> Result<Arc<dyn DynGame>, String> {
        let g = match self.extra.iter().find(|g| g.meta().name == name) {
            Some(g) => Arc::clone(g),
            None => registry::get(name).map_err(|e| e.to_string())?,
        };
        let meta = g.meta();
        if meta.version != version {
            return Err(format!(
                "game {name} version {version} announced, this auditor has rules {}",
                meta.version
            ));
        }
        Ok(g)
    }
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
            (Some(r), Some(a)) if r.announced_as(a) => {}
            (Some(r), Some(a)) => {
                return Err(format!("event {i}: {} announced {a:?}, the rules give {r:?}", a.kind()))
            }
            (None, Some(a)) => {
                return Err(format!(
                    "event {i}: {} announced {a:?} that the rules do not give here",
                    a.kind()
                ))
            }
            (_, None) => return Err(format!("event {i}: missing announcement")),
        }
    }
    match replayed.get(upto) {
        Some(r) => Err(format!("event {upto}: the rules give {r:?} that the dealer did not announce here")),
        None => Ok(()),
    }
}

impl Replayer for GamesReplayer {
    fn canonical_deck(
        &self,
        game: &str,
        game_version: &str,
        settings: &Value,
    ) -> Result<Vec<CardId>, String> {
        let g = self.game_for(game, game_version)?;
        g.create_deck(settings).map_err(|e| e.to_string())
    }

    fn replay(&self, hand: &VerifiedHand) -> Result<(), String> {
        let g = self.game_for(&hand.game, &hand.game_version)?;
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
            let public = runner.hand().public_state();
            if public != *a.public_state {
                return Err(format!(
                    "action {index}: public state announced {}, the rules give {public}",
                    a.public_state
                ));
            }
        }
        compare_events(&events, &hand.announced, checked, hand.announced.len())?;
        if !runner.hand().is_over() {
            return Err(format!("the hand is not over after {} actions", hand.actions.len()));
        }
        let result = runner.hand().result().ok_or("the rules give no result")?;
        if result != hand.result {
            let what = if result.winners != hand.result.winners {
                "winners"
            } else if result.net != hand.result.net || result.house_net != hand.result.house_net {
                "net chip changes"
            } else if result.rake != hand.result.rake {
                "rake"
            } else {
                "summary"
            };
            return Err(format!("result ({what}): announced {:?}, the rules give {result:?}", hand.result));
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
