//! The player SDK (see the player-sdk issue).
