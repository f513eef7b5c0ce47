//! Test helpers for bots: play whole hands of a game in process with the
//! games crate's `HandRunner`, letting a strategy choose every action, and
//! check that each choice validates.

use claw_games::{registry, CardFace, DealTo, PlayerInfo};
use claw_protocol::{CardId, Chips, PlayerId, Seat};
use rand_chacha::rand_core::SeedableRng;
use rand_chacha::ChaCha20Rng;
use serde_json::Value;

use super::{strategy, TurnView};

/// What a series of hands did.
#[derive(Debug, Default)]
pub struct Played {
    pub hands: usize,
    pub actions: usize,
    /// Action types chosen, for coverage checks.
    pub types: std::collections::BTreeSet<String>,
}

/// Plays `hands` hands of `game` with `players` seats, every seat using the
/// strategy `name`; panics (test failure) on an action the game refuses.
pub fn play(game: &str, settings: Value, name: &str, players: usize, hands: usize, seed: u64) -> Played {
    let g = registry::get(game).unwrap();
    let settings = g.normalize_settings(&settings).unwrap();
    let bot = strategy(game, name).unwrap();
    let mut rng = ChaCha20Rng::seed_from_u64(seed);
    let mut memory = Value::Null;
    let mut out = Played::default();
    let infos: Vec<PlayerInfo> = (0..players)
        .map(|i| PlayerInfo { id: PlayerId::from_bytes([i as u8 + 1; 32]), balance: Chips(10_000) })
        .collect();
    for h in 0..hands {
        let deck = g.create_deck(&settings).unwrap();
        let mut s = [0u8; 32];
        s[..8].copy_from_slice(&(seed ^ (h as u64) << 20).to_le_bytes());
        let deck = claw_protocol::shuffle(&deck, &s);
        let (mut runner, _) =
            claw_games::HandRunner::start(g.as_ref(), &settings, &infos, &memory, deck).unwrap();
        let mut played: Vec<Vec<CardId>> = vec![Vec::new(); players];
        let mut guard = 0;
        while let Some(seat) = runner.hand().to_act() {
            guard += 1;
            assert!(guard < 5000, "{game}: hand {h} does not end");
            let actions = runner.hand().valid_actions();
            let public = runner.hand().public_state();
            let positions: Vec<(u16, CardId)> = runner
                .dealt()
                .iter()
                .zip(runner.holders())
                .filter(|(d, h)| **h == DealTo::Player(seat) && !played[seat.index()].contains(&d.card))
                .map(|(d, _)| (d.position, d.card))
                .collect();
            let hand: Vec<CardId> = positions.iter().map(|(_, c)| *c).collect();
            let table: Vec<CardId> = runner
                .dealt()
                .iter()
                .filter(|d| d.target == DealTo::Community && d.face == CardFace::Up)
                .map(|d| d.card)
                .collect();
            let view = TurnView {
                game,
                seat,
                actions: &actions,
                public_state: &public,
                hand: &hand,
                positions: &positions,
                table: &table,
                balance: Chips(10_000),
                settings: &settings,
                memory: &memory,
            };
            let action = bot.choose(&view, &mut rng).unwrap();
            if let Err(e) = runner.hand().validate(seat, &action) {
                panic!(
                    "{game}/{name}: hand {h}: {seat}: {action} refused: {e}\noptions: {actions:?}\n{public}"
                );
            }
            if let Some(cards) =
                action.get("cards").and_then(|c| serde_json::from_value::<Vec<CardId>>(c.clone()).ok())
            {
                played[seat.index()].extend(cards);
            }
            out.types.insert(super::action_type(&action).unwrap_or("?").to_string());
            runner.act(seat, &action).unwrap();
            out.actions += 1;
        }
        assert!(runner.hand().is_over(), "{game}: hand {h} stalled with nobody to act");
        memory = runner.hand().memory_after();
        out.hands += 1;
    }
    let _ = Seat(0);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn games() -> Vec<(&'static str, Value, usize)> {
        vec![
            ("texas-holdem", json!({}), 6),
            ("blackjack", json!({}), 6),
            ("dou-di-zhu", json!({}), 3),
            ("sam-gong", json!({}), 6),
        ]
    }

    #[test]
    fn every_registered_game_is_covered() {
        let covered: Vec<&str> = games().iter().map(|g| g.0).collect();
        for name in registry::names() {
            if !covered.contains(&name) {
                // A new game is played by the random bot only.
                play(
                    name,
                    Value::Null,
                    "random",
                    usize::from(registry::get(name).unwrap().meta().min_players.max(2)),
                    20,
                    9,
                );
            }
        }
    }

    #[test]
    fn random_bots_choose_valid_actions() {
        for (game, settings, n) in games() {
            let p = play(game, settings, "random", n, 150, 1);
            assert_eq!(p.hands, 150);
            assert!(p.types.len() >= 2, "{game}: {:?}", p.types);
        }
    }

    #[test]
    fn simple_bots_choose_valid_actions() {
        for (game, settings, n) in games() {
            let p = play(game, settings, "simple", n, 150, 2);
            assert_eq!(p.hands, 150);
            assert!(p.actions >= 150, "{game}: {} actions", p.actions);
        }
    }

    #[test]
    fn simple_bots_use_their_game_moves() {
        let p = play("blackjack", json!({}), "simple", 4, 200, 3);
        for t in ["bet", "hit", "stand", "double", "split"] {
            assert!(p.types.contains(t), "blackjack simple never chose {t}: {:?}", p.types);
        }
        let p = play("texas-holdem", json!({}), "simple", 6, 200, 4);
        for t in ["fold", "call", "raise"] {
            assert!(p.types.contains(t), "hold'em simple never chose {t}: {:?}", p.types);
        }
        let p = play("dou-di-zhu", json!({}), "simple", 3, 100, 5);
        for t in ["bid", "play", "pass"] {
            assert!(p.types.contains(t), "dou di zhu simple never chose {t}: {:?}", p.types);
        }
        let p = play("sam-gong", json!({}), "simple", 6, 100, 6);
        for t in ["bet", "call", "fold"] {
            assert!(p.types.contains(t), "sam gong simple never chose {t}: {:?}", p.types);
        }
    }

    #[test]
    fn bots_are_deterministic_given_the_rng() {
        let a = play("texas-holdem", json!({}), "random", 6, 20, 7);
        let b = play("texas-holdem", json!({}), "random", 6, 20, 7);
        assert_eq!((a.actions, a.types), (b.actions, b.types));
    }
}
