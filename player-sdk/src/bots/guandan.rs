//! Guandan (掼蛋): the games crate's AI (`claw_games::guandan::ai`, levels
//! L1–L3), fed with what this player sees — the settings and table memory of
//! `game-start`, its own opened hand (transfers applied) and the public
//! state — and a tie-breaker seeded from the bot's CSPRNG. The same AI the
//! dealer uses for timeouts; there is no second copy of it here.

use claw_games::guandan::ai::{self, AiLevel, Ties, View};
use claw_games::guandan::{GdMemory, GdPhase, GdSettings};
use rand_core::RngCore;
use serde_json::Value;

use super::{action_type, BotError, RandomBot, Strategy, TurnView};

/// A Guandan bot playing the games crate's AI at one level.
#[derive(Debug, Clone, Copy)]
pub struct GuandanAi(pub AiLevel);

/// The phase the offered actions belong to (the public state is `null`
/// before the first action of a deal).
fn phase_of(turn: &TurnView<'_>) -> GdPhase {
    let has = |t: &str| turn.actions.iter().any(|o| action_type(&o.action) == Some(t));
    if has("tribute") {
        GdPhase::Tribute
    } else if has("return") {
        GdPhase::Return
    } else if has("vote") {
        GdPhase::Vote
    } else {
        GdPhase::Playing
    }
}

impl GuandanAi {
    /// The AI's view of this turn.
    pub fn view(turn: &TurnView<'_>) -> Result<View, String> {
        let settings: GdSettings =
            serde_json::from_value(turn.settings.clone()).map_err(|e| e.to_string())?;
        let memory: GdMemory = match turn.memory {
            Value::Null => GdMemory::default(),
            m => serde_json::from_value(m.clone()).map_err(|e| e.to_string())?,
        };
        let may_surrender = turn.actions.iter().any(|o| action_type(&o.action) == Some("surrender"));
        let mut view = View::from_public(
            turn.seat.0,
            turn.hand.to_vec(),
            &settings,
            &memory,
            phase_of(turn),
            turn.public_state,
            may_surrender,
        )
        .map_err(|e| e.to_string())?;
        view.positions = turn.positions.to_vec();
        Ok(view)
    }
}

impl Strategy for GuandanAi {
    fn name(&self) -> &'static str {
        match self.0 {
            AiLevel::L1 => "guandan-l1",
            AiLevel::L2 => "guandan-l2",
            AiLevel::L3 => "guandan-l3",
        }
    }

    fn choose(&self, turn: &TurnView<'_>, rng: &mut dyn RngCore) -> Result<Value, BotError> {
        if turn.actions.is_empty() {
            return Err(BotError::NoActions);
        }
        let view = match GuandanAi::view(turn) {
            Ok(v) => v,
            Err(e) => {
                tracing::warn!(error = %e, "guandan bot: cannot read the table; random legal action");
                return RandomBot.choose(turn, rng);
            }
        };
        let action = ai::decide(self.0, &view, &mut Ties::new(rng.next_u64()));
        serde_json::to_value(action).map_err(|_| BotError::NoActions)
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_support::play;
    use serde_json::json;

    #[test]
    fn every_level_plays_whole_deals_with_tribute_legally() {
        for (name, seed) in [("guandan-l1", 11), ("guandan-l2", 12), ("guandan-l3", 13)] {
            // Three deals: the second and third start with tribute (or its resistance).
            let p = play("guandan", json!({}), name, 4, 3, seed);
            assert_eq!(p.hands, 3);
            for t in ["play", "pass"] {
                assert!(p.types.contains(t), "{name} never chose {t}: {:?}", p.types);
            }
        }
    }

    #[test]
    fn face_up_tribute_tables_play_too() {
        let p = play("guandan", json!({"show_tribute": true}), "simple", 4, 3, 14);
        assert_eq!(p.hands, 3);
    }

    #[test]
    fn the_first_turn_of_a_deal_needs_no_public_state() {
        // Before the first action of a deal a player has seen no public
        // state: the bot reads the phase from the offered actions and the
        // level from the table memory, and its choice is legal.
        use claw_games::{registry, DealTo, HandRunner, PlayerInfo};
        use claw_protocol::{Chips, PlayerId};
        use rand_chacha::rand_core::SeedableRng;
        let g = registry::get("guandan").unwrap();
        let settings = g.normalize_settings(&json!({})).unwrap();
        let infos: Vec<PlayerInfo> = (0..4)
            .map(|i| PlayerInfo { id: PlayerId::from_bytes([i + 1; 32]), balance: Chips(100) })
            .collect();
        for (memory, first) in [
            (json!(null), "play"),
            (json!({"deal": 1, "levels": [5, 2], "last_order": [0, 2, 1, 3]}), "tribute"),
        ] {
            let deck = claw_protocol::shuffle(&g.create_deck(&settings).unwrap(), &[9; 32]);
            let (runner, _) = HandRunner::start(g.as_ref(), &settings, &infos, &memory, deck).unwrap();
            let seat = runner.hand().to_act().unwrap();
            let positions: Vec<_> = runner
                .dealt()
                .iter()
                .zip(runner.holders())
                .filter(|(_, h)| **h == DealTo::Player(seat))
                .map(|(d, _)| (d.position, d.card))
                .collect();
            let hand: Vec<_> = positions.iter().map(|(_, c)| *c).collect();
            let actions = runner.hand().valid_actions();
            let turn = super::super::TurnView {
                game: "guandan",
                seat,
                actions: &actions,
                public_state: &serde_json::Value::Null,
                hand: &hand,
                positions: &positions,
                table: &[],
                balance: Chips(100),
                settings: &settings,
                memory: &memory,
            };
            for level in ["guandan-l1", "guandan-l2", "guandan-l3"] {
                let bot = super::super::strategy("guandan", level).unwrap();
                let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(1);
                let a = bot.choose(&turn, &mut rng).unwrap();
                assert_eq!(super::super::action_type(&a), Some(first), "{level}: {a}");
                runner.hand().validate(seat, &a).unwrap_or_else(|e| panic!("{level}: {a}: {e}"));
            }
        }
    }

    #[test]
    fn guandan_levels_are_guandan_only() {
        assert!(super::super::strategy("texas-holdem", "guandan-l2").is_err());
        assert_eq!(super::super::strategy("guandan", "guandan-l3").unwrap().name(), "guandan-l3");
        assert_eq!(super::super::strategy("guandan", "simple").unwrap().name(), "guandan-l2");
    }
}
