//! Bots: strategies that pick an action from a `your-turn`.
//!
//! A bot sees what a player sees — the valid actions with their cost,
//! affordability and amount range, the public state, its own cards and its
//! balance — and returns the action as the JSON value it sends. Bots are pure
//! and deterministic given the rng passed in, so a seeded rng replays a game.
//!
//! Every game has two strategies: `random` (a uniformly random legal action,
//! generic over the valid-actions JSON, see [`random::RandomBot`]) and
//! `simple` (a small, sensible, game-specific policy); a game may have more
//! (Guandan's AI levels). [`STRATEGIES`] is the one table of them.

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
    /// Not `random` nor a name in [`STRATEGIES`].
    #[error("unknown strategy {0:?} (known: {known})", known = strategy_names().join(", "))]
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

/// Makes a strategy.
pub type MakeStrategy = fn() -> Box<dyn Strategy>;

/// Each game's own strategies by name, `simple` first, keyed by the game's
/// registry name: the one place a game's bots are listed (a test checks that
/// every game of `claw_games::registry` has a row). `random` plays every game
/// and is not listed; Guandan's `simple` is its L2 AI.
pub const STRATEGIES: &[(&str, &[(&str, MakeStrategy)])] = {
    use claw_games::guandan::ai::AiLevel;
    &[
        (claw_games::texas_holdem::NAME, &[("simple", || Box::new(texas_holdem::SimpleHoldem))]),
        (claw_games::blackjack::NAME, &[("simple", || Box::new(blackjack::BasicStrategy))]),
        (claw_games::dou_di_zhu::NAME, &[("simple", || Box::new(dou_di_zhu::SmallestWinning))]),
        (claw_games::sam_gong::NAME, &[("simple", || Box::new(sam_gong::SimpleSamGong))]),
        (
            claw_games::guandan::NAME,
            &[
                ("simple", || Box::new(guandan::GuandanAi(AiLevel::L2))),
                ("guandan-l1", || Box::new(guandan::GuandanAi(AiLevel::L1))),
                ("guandan-l2", || Box::new(guandan::GuandanAi(AiLevel::L2))),
                ("guandan-l3", || Box::new(guandan::GuandanAi(AiLevel::L3))),
            ],
        ),
    ]
};

/// Every strategy name: `random`, then those of [`STRATEGIES`] in order.
pub fn strategy_names() -> Vec<&'static str> {
    let mut names = vec![RandomBot.name()];
    for (name, _) in STRATEGIES.iter().flat_map(|(_, own)| own.iter()) {
        if !names.contains(name) {
            names.push(name);
        }
    }
    names
}

/// The strategy `name` for `game` ([`STRATEGIES`], or `random`). A game
/// without a row gets the random strategy for `simple` too, so a new game
/// is playable at once; another game's own strategy is
/// [`BotError::WrongGame`].
pub fn strategy(game: &str, name: &str) -> Result<Box<dyn Strategy>, BotError> {
    if name == RandomBot.name() {
        return Ok(Box::new(RandomBot));
    }
    let own = STRATEGIES.iter().find(|(g, _)| *g == game).map(|(_, own)| *own);
    if let Some((_, make)) = own.unwrap_or_default().iter().find(|(n, _)| *n == name) {
        return Ok(make());
    }
    if name == "simple" && own.is_none() {
        return Ok(Box::new(RandomBot));
    }
    match STRATEGIES.iter().find(|(_, own)| own.iter().any(|(n, _)| *n == name)) {
        Some((wants, _)) => {
            Err(BotError::WrongGame { strategy: name.to_owned(), wants, game: game.to_owned() })
        }
        None => Err(BotError::UnknownStrategy(name.to_owned())),
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

#[cfg(test)]
mod tests {
    use super::{strategy, strategy_names, BotError, STRATEGIES};

    #[test]
    fn every_registered_game_has_its_own_bots_and_only_those() {
        let games = claw_games::registry::names();
        for game in &games {
            let own = STRATEGIES.iter().find(|(g, _)| g == game).map(|(_, own)| *own);
            let own = own.unwrap_or_else(|| panic!("{game} has no row in STRATEGIES"));
            assert_eq!(own.first().map(|(n, _)| *n), Some("simple"), "{game}: `simple` first");
            for (name, _) in own {
                assert_ne!(strategy(game, name).unwrap().name(), "random", "{game} {name}");
            }
        }
        for (game, _) in STRATEGIES {
            assert!(games.contains(game), "{game} is not a registered game");
        }
    }

    #[test]
    fn unknown_and_foreign_strategies_are_refused() {
        let e = strategy("texas-holdem", "guandan-l1").err().unwrap();
        assert!(matches!(e, BotError::WrongGame { wants: "guandan", .. }), "{e}");
        let e = strategy("texas-holdem", "clever").err().unwrap();
        assert!(e.to_string().contains(&strategy_names().join(", ")), "{e}");
        assert_eq!(strategy("no-such-game", "simple").unwrap().name(), "random");
        assert_eq!(strategy("blackjack", "random").unwrap().name(), "random");
    }
}
