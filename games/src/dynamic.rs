//! Type-erased games: the same contract with settings, memory and actions as
//! JSON, so the dealer and the auditor can hold any game behind one pointer.

use std::sync::Arc;

use claw_protocol::{CardId, Chips, Seat};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::plugin::{
    ActionOption, DealtCard, GameDetails, GameError, GameMeta, GamePlugin, HandResult, MatchStop,
    PendingAction, PlayerInfo,
};

/// A game behind a pointer; see [`GamePlugin`] for what each method means.
pub trait DynGame: Send + Sync {
    fn meta(&self) -> GameMeta;
    /// Parses and validates settings; returns them normalised (defaults filled
    /// in), which is the form that is hashed and signed at game start.
    fn normalize_settings(&self, settings: &Value) -> Result<Value, GameError>;
    /// Parses table memory and returns it in the form the rules write it
    /// (`memory_after`); `null` (a fresh table) stays `null`.
    fn normalize_memory(&self, memory: &Value) -> Result<Value, GameError>;
    fn create_deck(&self, settings: &Value) -> Result<Vec<CardId>, GameError>;
    fn scripted_deck(&self, settings: &Value, hand_number: u64) -> Result<Option<Vec<CardId>>, GameError>;
    fn entry_chips(&self, settings: &Value) -> Result<Chips, GameError>;
    /// [`GamePlugin::match_time_limit`] (None also for bad settings).
    fn match_time_limit(&self, settings: &Value) -> Option<u64>;
    /// [`GamePlugin::match_begins`]; `null` (a fresh table) begins one, and
    /// so does a memory that does not parse.
    fn match_begins(&self, memory: &Value) -> bool;
    /// [`GamePlugin::end_match`], memory as JSON (None when it does not parse).
    fn end_match(&self, memory: &Value, stop: MatchStop) -> Option<Value>;
    /// [`GamePlugin::rotation`]; `null` memory is a fresh table (None also
    /// for settings or a memory that do not parse).
    fn rotation(&self, settings: &Value, memory: &Value, players: &[PlayerInfo]) -> Option<Vec<Seat>>;
    fn new_hand(
        &self,
        settings: &Value,
        players: &[PlayerInfo],
        memory: &Value,
    ) -> Result<Box<dyn DynHand>, GameError>;
    /// [`GamePlugin::public_cards_held`].
    fn public_cards_held(&self, public_state: &Value, seat: Seat) -> Vec<CardId>;
    /// [`GamePlugin::cards_played`] for an action given as JSON; none when it
    /// is not one of this game's actions.
    fn cards_played(&self, action: &Value) -> Vec<CardId>;
}

/// One hand in progress of some game.
pub trait DynHand: Send + Sync {
    fn start(&mut self) -> Result<Vec<PendingAction>, GameError>;
    fn receive_cards(&mut self, cards: &[DealtCard]) -> Result<Vec<PendingAction>, GameError>;
    fn to_act(&self) -> Option<Seat>;
    fn validate(&self, seat: Seat, action: &Value) -> Result<(), GameError>;
    fn apply(&mut self, seat: Seat, action: &Value) -> Result<Vec<PendingAction>, GameError>;
    /// [`DynHand::apply`] for an action given as JSON text (a player's signed
    /// bytes): parsed once, straight into the game's action type.
    fn apply_text(&mut self, seat: Seat, action: &str) -> Result<Vec<PendingAction>, GameError>;
    fn is_over(&self) -> bool;
    fn result(&self) -> Option<HandResult>;
    /// The settlement as typed data ([`GamePlugin::details`]).
    fn details(&self) -> Option<GameDetails>;
    fn valid_actions(&self) -> Vec<ActionOption<Value>>;
    fn public_state(&self) -> Value;
    /// [`GamePlugin::phase`]: the public state's `"phase"`, without building it.
    fn phase(&self) -> Option<&'static str>;
    /// [`GamePlugin::shown_cards`]: every card the public state names.
    fn shown_cards(&self) -> Vec<CardId>;
    fn auto_action(&self, seat: Seat) -> Option<Value>;
    fn leave_voids(&self, seat: Seat) -> bool;
    fn memory_after(&self) -> Value;
    /// The full private state, for the dealer's journal. Never sent to players.
    fn state_json(&self) -> Value;
    /// An independent copy of the hand, to try an action without committing
    /// to it (tests, and "what would a timeout do" checks).
    fn clone_box(&self) -> Box<dyn DynHand>;
}

fn from_json<T: DeserializeOwned>(v: &Value, what: &str) -> Result<T, GameError> {
    T::deserialize(v).map_err(|e| GameError::Malformed(format!("{what}: {e}")))
}

fn to_json<T: Serialize>(v: &T) -> Value {
    // Serialising our own plain data types cannot fail (no maps with
    // non-string keys, no custom failing serialisers).
    serde_json::to_value(v).unwrap_or(Value::Null)
}

/// Wraps a typed plugin as a [`DynGame`].
pub struct Erased<G>(pub Arc<G>);

impl<G: GamePlugin> Erased<G> {
    fn settings(&self, v: &Value) -> Result<G::Settings, GameError> {
        let s: G::Settings = if v.is_null() {
            G::Settings::default()
        } else {
            G::Settings::deserialize(v).map_err(|e| GameError::BadSettings(e.to_string()))?
        };
        self.0.validate_settings(&s)?;
        Ok(s)
    }
}

impl<G: GamePlugin> DynGame for Erased<G> {
    fn meta(&self) -> GameMeta {
        self.0.meta()
    }

    fn normalize_settings(&self, settings: &Value) -> Result<Value, GameError> {
        Ok(to_json(&self.settings(settings)?))
    }

    fn normalize_memory(&self, memory: &Value) -> Result<Value, GameError> {
        if memory.is_null() {
            return Ok(Value::Null);
        }
        Ok(to_json(&from_json::<G::Memory>(memory, "table memory")?))
    }

    fn create_deck(&self, settings: &Value) -> Result<Vec<CardId>, GameError> {
        Ok(self.0.create_deck(&self.settings(settings)?))
    }

    fn scripted_deck(&self, settings: &Value, hand_number: u64) -> Result<Option<Vec<CardId>>, GameError> {
        Ok(self.0.scripted_deck(&self.settings(settings)?, hand_number))
    }

    fn entry_chips(&self, settings: &Value) -> Result<Chips, GameError> {
        Ok(self.0.entry_chips(&self.settings(settings)?))
    }

    fn match_time_limit(&self, settings: &Value) -> Option<u64> {
        self.0.match_time_limit(&self.settings(settings).ok()?)
    }

    fn match_begins(&self, memory: &Value) -> bool {
        memory.is_null()
            || from_json::<G::Memory>(memory, "table memory").is_ok_and(|m| self.0.match_begins(&m))
    }

    fn end_match(&self, memory: &Value, stop: MatchStop) -> Option<Value> {
        let m: G::Memory = from_json(memory, "table memory").ok()?;
        self.0.end_match(&m, stop).map(|m| to_json(&m))
    }

    fn rotation(&self, settings: &Value, memory: &Value, players: &[PlayerInfo]) -> Option<Vec<Seat>> {
        let settings = self.settings(settings).ok()?;
        let memory: G::Memory =
            if memory.is_null() { G::Memory::default() } else { from_json(memory, "table memory").ok()? };
        self.0.rotation(&settings, &memory, players)
    }

    fn new_hand(
        &self,
        settings: &Value,
        players: &[PlayerInfo],
        memory: &Value,
    ) -> Result<Box<dyn DynHand>, GameError> {
        let meta = self.0.meta();
        let n = players.len();
        if n < usize::from(meta.min_players) || n > usize::from(meta.max_players) {
            return Err(GameError::BadPlayers(format!(
                "{} needs {}–{} players, got {n}",
                meta.name, meta.min_players, meta.max_players
            )));
        }
        let settings = self.settings(settings)?;
        let memory: G::Memory =
            if memory.is_null() { G::Memory::default() } else { from_json(memory, "table memory")? };
        let state = self.0.create_game(&settings, players, &memory)?;
        Ok(Box::new(ErasedHand { game: Arc::clone(&self.0), state }))
    }

    fn public_cards_held(&self, public_state: &Value, seat: Seat) -> Vec<CardId> {
        self.0.public_cards_held(public_state, seat)
    }

    fn cards_played(&self, action: &Value) -> Vec<CardId> {
        G::Action::deserialize(action).map(|a| self.0.cards_played(&a)).unwrap_or_default()
    }
}

struct ErasedHand<G: GamePlugin> {
    game: Arc<G>,
    state: G::State,
}

impl<G: GamePlugin> DynHand for ErasedHand<G> {
    fn start(&mut self) -> Result<Vec<PendingAction>, GameError> {
        self.game.start(&mut self.state)
    }

    fn receive_cards(&mut self, cards: &[DealtCard]) -> Result<Vec<PendingAction>, GameError> {
        self.game.receive_cards(&mut self.state, cards)
    }

    fn to_act(&self) -> Option<Seat> {
        self.game.to_act(&self.state)
    }

    fn validate(&self, seat: Seat, action: &Value) -> Result<(), GameError> {
        let a: G::Action = from_json(action, "action")?;
        self.game.validate(&self.state, seat, &a)
    }

    fn apply(&mut self, seat: Seat, action: &Value) -> Result<Vec<PendingAction>, GameError> {
        let a: G::Action = from_json(action, "action")?;
        self.game.apply(&mut self.state, seat, &a)
    }

    fn apply_text(&mut self, seat: Seat, action: &str) -> Result<Vec<PendingAction>, GameError> {
        let a: G::Action =
            serde_json::from_str(action).map_err(|e| GameError::Malformed(format!("action: {e}")))?;
        self.game.apply(&mut self.state, seat, &a)
    }

    fn is_over(&self) -> bool {
        self.game.is_over(&self.state)
    }

    fn result(&self) -> Option<HandResult> {
        self.game.result(&self.state)
    }

    fn details(&self) -> Option<GameDetails> {
        self.game.details(&self.state)
    }

    fn valid_actions(&self) -> Vec<ActionOption<Value>> {
        self.game
            .valid_actions(&self.state)
            .into_iter()
            .map(|o| ActionOption {
                action: to_json(&o.action),
                cost: o.cost,
                affordable: o.affordable,
                range: o.range,
            })
            .collect()
    }

    fn public_state(&self) -> Value {
        self.game.public_state(&self.state)
    }

    fn phase(&self) -> Option<&'static str> {
        self.game.phase(&self.state)
    }

    fn shown_cards(&self) -> Vec<CardId> {
        self.game.shown_cards(&self.state)
    }

    fn auto_action(&self, seat: Seat) -> Option<Value> {
        self.game.auto_action(&self.state, seat).map(|a| to_json(&a))
    }

    fn leave_voids(&self, seat: Seat) -> bool {
        self.game.leave_voids(&self.state, seat)
    }

    fn memory_after(&self) -> Value {
        to_json(&self.game.memory_after(&self.state))
    }

    fn state_json(&self) -> Value {
        to_json(&self.state)
    }

    fn clone_box(&self) -> Box<dyn DynHand> {
        Box::new(ErasedHand { game: Arc::clone(&self.game), state: self.state.clone() })
    }
}
