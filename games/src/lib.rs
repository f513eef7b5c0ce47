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
    ActionOption, BlindDeal, CardFace, ChipMove, ChipOp, ChipParty, DealSpec, DealTo, DealtCard, GameDetails,
    GameError, GameMeta, GamePlugin, HandEvent, HandResult, MatchStop, PendingAction, PlayerInfo,
    PokerVariant,
};
pub use runner::{
    check_conservation, replay, replay_checked, ActError, ActionInput, HandRunner, RecordedAction,
    ReplayCheck, ReplayError, ReplayOutcome,
};
