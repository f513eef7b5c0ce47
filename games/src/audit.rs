//! The game half of the audit: the canonical deck of the game a hand
//! announces and a replay of its rules over the verified inputs, which must
//! reproduce every deal, chip movement, reveal and card transfer in order, the timeout
//! actions, the announced result and the table memory. The one replayer
//! the dealer's tests, the SDK's live verifier and the offline auditor use:
//! [`crate::runner::replay_checked`], with the announcements compared
//! between its steps.

use std::sync::Arc;

use claw_protocol::audit::{ActionSource, AnnouncedEvent, Replayer, VerifiedAction, VerifiedHand};
use claw_protocol::CardId;
use serde_json::Value;

use crate::runner::{replay_checked, ReplayCheck};
use crate::{registry, DynGame, HandEvent, HandRunner, PlayerInfo};

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

    fn scripted_deck(
        &self,
        game: &str,
        game_version: &str,
        settings: &Value,
        hand_number: u64,
    ) -> Result<Option<Vec<CardId>>, String> {
        let g = self.game_for(game, game_version)?;
        g.scripted_deck(settings, hand_number).map_err(|e| e.to_string())
    }

    /// Replays the hand, first checking that its settings and table memory
    /// are in the game's own form (what its rules write: no member they
    /// ignore, none left out), so that no variant the rules would read
    /// alike passes for the signed text.
    fn replay(&self, hand: &VerifiedHand) -> Result<(), String> {
        let g = self.game_for(&hand.game, &hand.game_version)?;
        let settings = g.normalize_settings(&hand.settings).map_err(|e| format!("settings: {e}"))?;
        if settings != hand.settings {
            return Err(format!("settings {} are not the game's form of them, {settings}", hand.settings));
        }
        let memory = g.normalize_memory(&hand.memory).map_err(|e| e.to_string())?;
        if memory != hand.memory {
            return Err(format!("table memory {} is not the game's form of it, {memory}", hand.memory));
        }
        let deck = hand.deck_order.clone().ok_or("deck order not revealed")?;
        let players: Vec<PlayerInfo> =
            hand.players.iter().map(|p| PlayerInfo { id: p.id, balance: p.balance }).collect();
        let actions = hand.actions.iter().map(|a| (a.seat, &a.action));
        let mut check = Announced { hand, checked: 0 };
        let out =
            replay_checked(g.as_ref(), &hand.settings, &players, &hand.memory, deck, actions, &mut check)
                .map_err(|e| e.to_string())?;
        // `summary` is human text, informational (SPEC.md §14.1): not compared.
        let (result, announced) = (out.result, &hand.result);
        let what = if result.winners != announced.winners {
            Some("winners")
        } else if result.net != announced.net || result.house_net != announced.house_net {
            Some("net chip changes")
        } else if result.rake != announced.rake {
            Some("rake")
        } else {
            None
        };
        if let Some(what) = what {
            return Err(format!("result ({what}): announced {announced:?}, the rules give {result:?}"));
        }
        if out.memory_after != hand.memory_after {
            return Err(format!(
                "table memory after the hand: announced {}, the rules give {}",
                hand.memory_after, out.memory_after
            ));
        }
        Ok(())
    }
}

/// The auditor's checks between the replay's steps: the rules' events are
/// the dealer's announcements, in order; a timeout action is the game's auto
/// action; the public state after each action is the one announced (a check
/// of the reference rules only: SPEC.md §14.1 leaves its JSON unspecified).
struct Announced<'a> {
    hand: &'a VerifiedHand,
    /// Announcements compared so far.
    checked: usize,
}

impl<'a> Announced<'a> {
    fn action(&self, index: usize) -> Result<&'a VerifiedAction, String> {
        self.hand.actions.get(index).ok_or_else(|| format!("action {index}: not recorded"))
    }
}

impl ReplayCheck for Announced<'_> {
    fn before_action(
        &mut self,
        index: usize,
        runner: &HandRunner,
        events: &[HandEvent],
    ) -> Result<(), String> {
        let a = self.action(index)?;
        // Everything the rules produced before this action must be what the
        // dealer announced before it, in the same order.
        compare_events(events, &self.hand.announced, self.checked, a.events_before)?;
        self.checked = a.events_before;
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
        Ok(())
    }

    fn after_action(&mut self, index: usize, runner: &HandRunner) -> Result<(), String> {
        let a = self.action(index)?;
        let public = runner.hand().public_state();
        if public != *a.public_state {
            return Err(format!(
                "action {index}: public state announced {}, the reference rules give {public} \
                 (a reference-rules check: public_state is informational, SPEC.md §14.1)",
                a.public_state
            ));
        }
        Ok(())
    }

    fn before_end(&mut self, _runner: &HandRunner, events: &[HandEvent]) -> Result<(), String> {
        compare_events(events, &self.hand.announced, self.checked, self.hand.announced.len())
    }
}
