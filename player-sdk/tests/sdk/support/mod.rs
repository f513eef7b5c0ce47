//! Hands dealt by the real engine (`claw_engine::testing::Table`) with the
//! SDK's bots choosing every action: the input of the verifier, auditor and
//! malicious-dealer tests, of the verification benchmark and of the
//! `claw-player` binary's tests (player-cli/tests/cli).

use claw_engine::testing::{PlayedHand, Table, TurnInfo};
use claw_player::bots::{Strategy, TurnView};

/// Plays one hand at `table` with every seat using `bot`.
pub fn play(table: &mut Table, bot: &dyn Strategy) -> PlayedHand {
    let game = table.game_name.clone();
    let mut choose = |t: &TurnInfo<'_>, rng: &mut rand_chacha::ChaCha20Rng| {
        let view = TurnView {
            game: &game,
            seat: t.seat,
            actions: t.actions,
            public_state: t.public_state,
            hand: t.hand,
            positions: t.positions,
            table: t.table,
            balance: t.balance,
            settings: t.settings,
            memory: t.memory,
        };
        bot.choose(&view, rng).map_err(|e| e.to_string())
    };
    table.play_hand(&mut choose).unwrap_or_else(|e| panic!("{game}: {e}"))
}
