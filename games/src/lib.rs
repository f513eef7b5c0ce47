//! Game plugins for game-claw: pure, deterministic rules that the dealer runs
//! authoritatively and that auditors replay. See [`plugin::GamePlugin`].

pub mod audit;
pub mod blackjack;
pub mod dou_di_zhu;
pub mod dynamic;
pub mod guandan;
pub mod plugin;
pub mod registry;
pub mod runner;
pub mod sam_gong;
pub mod texas_holdem;

pub use dynamic::{DynGame, DynHand};
pub use plugin::{
    ActionOption, DealSpec, DealTarget, DealtCard, Face, GameDetails, GameError, GameMeta, GamePlugin,
    GameResult, Party, PendingAction, PlayerInfo,
};
pub use runner::{
    check_conservation, replay, HandEvent, HandRunner, RecordedAction, ReplayError, ReplayOutcome,
};
