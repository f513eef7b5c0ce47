//! Bots: strategies that pick an action from a `your-turn`.
//!
//! A bot sees what a player sees — the valid actions with their cost,
//! affordability and amount range, the public state, its own cards and its
//! balance — and returns the action as the JSON value it sends. Bots are pure
//! and deterministic given the rng passed in, so a seeded rng replays a game.
//!
//! Every game has two strategies: `random` (a uniformly random legal action,
//! generic over the valid-actions JSON, see [`random::RandomBot`]) and
//! `simple` (a small, sensible, game-specific policy).

pub mod blackjack;
pub mod dou_di_zhu;
pub mod guandan;
pub mod random;
pub mod sam_gong;
pub mod texas_holdem;

use claw_games::ActionOption;
use claw_protocol::{CardId, Chips, Seat};
use rand_core::RngCore;
use serde_json::Value;

pub use random::RandomBot;

/// What a bot sees when it is its turn.
#[derive(Debug, Clone, Copy)]
pub struct TurnView<'a> {
    /// Registry name of the game (`texas-holdem`, `blackjack`, …).
    pub game: &'a str,
    /// The bot's seat in this hand.
    pub seat: Seat,
    /// The options from `your-turn`; never empty when a turn is offered.
    pub actions: &'a [ActionOption<Value>],
    /// The game's public state as last broadcast.
    pub public_state: &'a Value,
    /// The bot's own cards still in its hand (dealt, opened and verified,
    /// minus those it has played).
    pub hand: &'a [CardId],
    /// The deck position of each card dealt or transferred to the bot (a
    /// superset of `hand`'s; Guandan's tribute and return name positions).
    pub positions: &'a [(u16, CardId)],
    /// Face-up cards on the table that everyone can see (board, house cards).
    pub table: &'a [CardId],
    /// The bot's chips available in this hand.
    pub balance: Chips,
    /// The game's normalised settings, as signed in `game-start`.
    pub settings: &'a Value,
    /// The table memory the hand started from (`game-start`).
    pub memory: &'a Value,
}

/// Why a bot could not choose.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BotError {
    /// The turn offered nothing.
    #[error("no valid actions were offered")]
    NoActions,
    /// Not `random`, `simple` or a Guandan AI level.
    #[error("unknown strategy {0:?} (known: random, simple, guandan-l1, guandan-l2, guandan-l3)")]
    UnknownStrategy(String),
    /// The strategy needs another game.
    #[error("strategy {strategy} plays {wants}, not {game}")]
    WrongGame {
        /// The strategy asked for.
        strategy: String,
        /// The game it plays.
        wants: &'static str,
        /// The room's game.
        game: String,
    },
}

/// A policy that picks one action for a turn.
pub trait Strategy: Send + Sync {
    /// The strategy's name as given to `--bot` (`random`, `simple`).
    fn name(&self) -> &'static str;

    /// Picks an action. Must return one of `turn.actions` (with an amount in
    /// its range where there is one); draws randomness only from `rng`.
    fn choose(&self, turn: &TurnView<'_>, rng: &mut dyn RngCore) -> Result<Value, BotError>;
}

/// The strategy `name` (`random`, `simple`, or for Guandan `guandan-l1`,
/// `guandan-l2`, `guandan-l3`) for `game`. An unknown game gets the random
/// strategy for `simple` too, so a new game is playable at once. Guandan's
/// `simple` is its L2 AI.
pub fn strategy(game: &str, name: &str) -> Result<Box<dyn Strategy>, BotError> {
    if let Some(level) = guandan::level_of(name) {
        if game != claw_games::guandan::NAME {
            return Err(BotError::WrongGame {
                strategy: name.to_owned(),
                wants: claw_games::guandan::NAME,
                game: game.to_owned(),
            });
        }
        return Ok(Box::new(guandan::GuandanAi(level)));
    }
    match name {
        "random" => Ok(Box::new(RandomBot)),
        "simple" => Ok(match game {
            "texas-holdem" => Box::new(texas_holdem::SimpleHoldem),
            "blackjack" => Box::new(blackjack::BasicStrategy),
            "dou-di-zhu" => Box::new(dou_di_zhu::SmallestWinning),
            "sam-gong" => Box::new(sam_gong::SimpleSamGong),
            claw_games::guandan::NAME => Box::new(guandan::GuandanAi(claw_games::guandan::ai::AiLevel::L2)),
            _ => Box::new(RandomBot),
        }),
        other => Err(BotError::UnknownStrategy(other.to_string())),
    }
}

/// The `type` tag of an action value (`"fold"`, `"raise"`, …).
pub fn action_type(action: &Value) -> Option<&str> {
    action.get("type").and_then(Value::as_str)
}

/// The first affordable option whose `type` is one of `types` (in the order
/// given), or `None`.
pub fn find_option<'a>(
    actions: &'a [ActionOption<Value>],
    types: &[&str],
) -> Option<&'a ActionOption<Value>> {
    types.iter().find_map(|t| actions.iter().find(|o| o.affordable && action_type(&o.action) == Some(*t)))
}

/// The options a bot may take: the affordable ones, or all of them when none
/// is marked affordable (the game then decides, e.g. an all-in call).
pub fn playable(actions: &[ActionOption<Value>]) -> Vec<&ActionOption<Value>> {
    let affordable: Vec<_> = actions.iter().filter(|o| o.affordable).collect();
    if affordable.is_empty() {
        actions.iter().collect()
    } else {
        affordable
    }
}

/// `option`'s action with its amount set to `amount`, clamped to the
/// option's range. The amount field is the one carrying the range minimum
/// (`amount` by convention); options without a range are returned as is.
pub fn with_amount(option: &ActionOption<Value>, amount: Chips) -> Value {
    let mut action = option.action.clone();
    let Some((lo, hi)) = option.range else { return action };
    let amount = amount.clamp(lo, hi);
    if let Some(obj) = action.as_object_mut() {
        let key = if obj.contains_key("amount") {
            Some("amount".to_string())
        } else {
            obj.iter().find(|(_, v)| v.as_u64() == Some(lo.0)).map(|(k, _)| k.clone())
        };
        if let Some(k) = key {
            obj.insert(k, Value::from(amount.0));
        }
    }
    action
}

/// A uniformly random integer in `lo..=hi` from `rng`, without modulo bias.
pub fn uniform(rng: &mut dyn RngCore, lo: u64, hi: u64) -> u64 {
    if hi <= lo {
        return lo;
    }
    let span = hi - lo;
    if span == u64::MAX {
        return rng.next_u64();
    }
    let n = span + 1;
    let zone = u64::MAX - (u64::MAX % n) - 1;
    loop {
        let v = rng.next_u64();
        if v <= zone {
            return lo + v % n;
        }
    }
}

#[cfg(test)]
pub(crate) mod test_support;
