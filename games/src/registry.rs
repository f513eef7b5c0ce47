//! Looking a game up by its registry name.

use std::sync::Arc;

use crate::dynamic::{DynGame, Erased};
use crate::plugin::GameError;

/// Every built-in game, by registry name.
pub fn all() -> Vec<Arc<dyn DynGame>> {
    vec![
        // Each game adds one line here.
        erased(crate::texas_holdem::TexasHoldem),
        erased(crate::blackjack::Blackjack),
        erased(crate::dou_di_zhu::DouDiZhu),
        erased(crate::sam_gong::SamGong),
        erased(crate::guandan::Guandan),
    ]
}

/// The registry names of every built-in game.
pub fn names() -> Vec<&'static str> {
    all().iter().map(|g| g.meta().name).collect()
}

/// The game registered under `name`.
pub fn get(name: &str) -> Result<Arc<dyn DynGame>, GameError> {
    all()
        .into_iter()
        .find(|g| g.meta().name == name)
        .ok_or_else(|| GameError::UnknownGame(format!("{name:?} (known: {})", names().join(", "))))
}

fn erased<G: crate::plugin::GamePlugin>(g: G) -> Arc<dyn DynGame> {
    Arc::new(Erased(Arc::new(g)))
}
