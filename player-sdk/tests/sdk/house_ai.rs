//! The dealer's house AIs are the SDK's bots (issue #30): they decide from
//! what a player at their seat sees and nothing else. Each hand is played
//! twice by the rules: once with a deck, once with a poisoned deck in which
//! every card the bot's seat had not seen by its last decision (the other
//! seats' hidden cards and the undealt rest) is changed, the other seats
//! replaying their actions. The bot's views and its moves are the same.

use claw_games::{registry, CardFace, DealTo, HandRunner, PlayerInfo};
use claw_player::bots::{strategy, Strategy, TurnView};
use claw_protocol::{CardId, Chips, PlayerId, Seat};
use rand_chacha::rand_core::SeedableRng;
use rand_chacha::ChaCha20Rng;
use serde_json::Value;

/// One hand as the bot at `bot` lived it.
struct Run {
    /// The bot's view at each of its turns (its whole `TurnView`).
    views: Vec<String>,
    /// Its moves.
    moves: Vec<Value>,
    /// Every action of the hand, in order.
    actions: Vec<(Seat, Value)>,
    /// Deck positions the bot's seat saw by its last decision.
    seen: Vec<u16>,
    /// Positions dealt face down to another seat.
    others: Vec<u16>,
}

/// Plays one hand of `game` on `deck`: the bot at `bot` chooses with its own
/// rng (seeded `seed`); the other seats replay `script` when given, else
/// choose with the same strategy.
fn run(
    game: &str,
    n: usize,
    bot: Seat,
    deck: Vec<CardId>,
    script: Option<&[(Seat, Value)]>,
    seed: u64,
) -> Run {
    let g = registry::get(game).unwrap();
    let settings = g.normalize_settings(&Value::Null).unwrap();
    let memory = Value::Null;
    let infos: Vec<PlayerInfo> = (0..n)
        .map(|i| PlayerInfo { id: PlayerId::from_bytes([i as u8 + 1; 32]), balance: Chips(10_000) })
        .collect();
    let ai: Box<dyn Strategy> = strategy(game, "simple").unwrap();
    let (mut runner, _) = HandRunner::start(g.as_ref(), &settings, &infos, &memory, deck).unwrap();
    let mut bot_rng = ChaCha20Rng::seed_from_u64(seed);
    let mut others_rng = ChaCha20Rng::seed_from_u64(seed ^ 0xdead);
    let mut script = script.map(|s| s.iter());
    let mut out = Run {
        views: Vec::new(),
        moves: Vec::new(),
        actions: Vec::new(),
        seen: Vec::new(),
        others: Vec::new(),
    };
    while let Some(seat) = runner.hand().to_act() {
        assert!(out.actions.len() < 2000, "{game}: the hand does not end");
        let action = if seat == bot || script.is_none() {
            let actions = runner.hand().valid_actions();
            let public = runner.hand().public_state();
            let positions: Vec<(u16, CardId)> = runner
                .dealt()
                .iter()
                .zip(runner.holders())
                .filter(|(_, h)| **h == DealTo::Player(seat))
                .map(|(d, _)| (d.position, d.card))
                .collect();
            let hand: Vec<CardId> = positions.iter().map(|(_, c)| *c).collect();
            let table: Vec<CardId> =
                runner.dealt().iter().filter(|d| d.face == CardFace::Up).map(|d| d.card).collect();
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
            if let Some(s) = script.as_mut() {
                s.next(); // the bot's own recorded move: it chooses again
            }
            let rng = if seat == bot { &mut bot_rng } else { &mut others_rng };
            let action = ai.choose(&view, rng).unwrap();
            if seat == bot {
                out.views.push(format!("{view:?}"));
                out.moves.push(action.clone());
                out.seen = runner
                    .dealt()
                    .iter()
                    .zip(runner.holders())
                    .filter(|(d, h)| **h == DealTo::Player(bot) || d.face == CardFace::Up)
                    .map(|(d, _)| d.position)
                    .collect();
            }
            action
        } else {
            let (s, a) = script.as_mut().and_then(Iterator::next).expect("the script has the next action");
            assert_eq!(*s, seat, "{game}: the replay follows the same turns");
            a.clone()
        };
        runner.act(seat, &action).unwrap_or_else(|e| panic!("{game}: {seat}: {action} refused: {e}"));
        out.actions.push((seat, action));
    }
    out.others = runner
        .dealt()
        .iter()
        .filter(|d| d.face == CardFace::Down && d.target != DealTo::Player(bot))
        .map(|d| d.position)
        .collect();
    out
}

/// `deck` with every card at a position outside `seen` moved to the next
/// such position (the hidden cards rotated: each of them changes).
fn poison(deck: &[CardId], seen: &[u16]) -> Vec<CardId> {
    let hidden: Vec<usize> = (0..deck.len()).filter(|p| !seen.contains(&(*p as u16))).collect();
    let mut out = deck.to_vec();
    for (i, p) in hidden.iter().enumerate() {
        out[hidden[(i + 1) % hidden.len()]] = deck[*p];
    }
    out
}

fn same_moves_on_a_poisoned_deck(game: &str, n: usize) {
    let g = registry::get(game).unwrap();
    let settings = g.normalize_settings(&Value::Null).unwrap();
    let mut decided = 0;
    for seed in 0..8u64 {
        let deck = claw_protocol::shuffle(&g.create_deck(&settings).unwrap(), &[seed as u8 + 1; 32]);
        for b in 0..n {
            let bot = Seat(b as u8);
            let honest = run(game, n, bot, deck.clone(), None, seed);
            if honest.moves.is_empty() {
                continue;
            }
            let poisoned_deck = poison(&deck, &honest.seen);
            // The poison reaches the other seats' hidden cards.
            let changed =
                honest.others.iter().filter(|p| deck[**p as usize] != poisoned_deck[**p as usize]).count();
            assert!(changed > 0, "{game} seed {seed} seat {b}: nothing hidden was changed");
            let poisoned = run(game, n, bot, poisoned_deck, Some(&honest.actions), seed);
            assert_eq!(poisoned.views, honest.views, "{game} seed {seed} seat {b}: the bot saw the same");
            assert_eq!(poisoned.moves, honest.moves, "{game} seed {seed} seat {b}: the bot moved the same");
            decided += honest.moves.len();
        }
    }
    assert!(decided > 0, "{game}: the bot never decided");
}

#[test]
fn a_house_ai_at_texas_holdem_moves_the_same_on_a_poisoned_deck() {
    same_moves_on_a_poisoned_deck("texas-holdem", 6);
}

#[test]
fn a_house_ai_at_sam_gong_moves_the_same_on_a_poisoned_deck() {
    same_moves_on_a_poisoned_deck("sam-gong", 4);
}
