//! The per-action decode-and-check path alone (issue #10), without the
//! signature and sealing work around it in the engine: the same recorded
//! hands, every action given as the JSON text a player signs.
//!
//! - `one-pass`: what the engine does now: the text is parsed once into the
//!   game's action and the rules check and apply it in one call
//!   (`HandRunner::act_as` with `ActionInput::Text`).
//! - `former`: what it did before: the text parsed into a
//!   `serde_json::Value`, `validate` (a `Value` → action conversion and a
//!   rule check), then `act` (a second conversion and `apply`, which checks
//!   again).
//!
//! Both run in one binary and one process, so the difference is not the
//! machine's load moving between two runs. Throughput is per action.

use claw_games::{registry, ActionInput, DynGame, HandRunner, PlayerInfo};
use claw_protocol::{CardId, Chips, PlayerId, Seat};
use criterion::{criterion_group, criterion_main, BatchSize, Bencher, Criterion, Throughput};
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha20Rng;
use serde_json::Value;

/// One recorded hand: the runner before the first action and every action
/// as the text a player would sign.
struct Recorded {
    start: HandRunner,
    actions: Vec<(Seat, String)>,
}

fn record(game: &dyn DynGame, players: &[PlayerInfo], rng: &mut ChaCha20Rng) -> Recorded {
    let mut deck: Vec<CardId> = game.create_deck(&Value::Null).expect("deck");
    deck.shuffle(rng);
    let (start, _) = HandRunner::start(game, &Value::Null, players, &Value::Null, deck).expect("start");
    let mut runner = start.clone();
    let mut actions = Vec::new();
    while let Some(seat) = runner.hand().to_act() {
        let ok: Vec<_> = runner.hand().valid_actions().into_iter().filter(|o| o.affordable).collect();
        let a = match ok.len() {
            0 => runner.hand().auto_action(seat).expect("auto action"),
            k if rng.gen_bool(0.5) => ok[rng.gen_range(0..k)].action.clone(),
            _ => ok[0].action.clone(),
        };
        runner.act(seat, &a).expect("recorded action applies");
        actions.push((seat, a.to_string()));
    }
    Recorded { start, actions }
}

/// Times `step` over every recorded action of `hands`, each hand from a
/// fresh copy of its start (the copies are made outside the timing).
fn replay(b: &mut Bencher<'_>, hands: &[Recorded], step: impl Fn(&mut HandRunner, Seat, &str)) {
    b.iter_batched(
        || hands.iter().map(|h| h.start.clone()).collect::<Vec<_>>(),
        |mut runners| {
            for (runner, h) in runners.iter_mut().zip(hands) {
                for (seat, text) in &h.actions {
                    step(runner, *seat, text);
                }
            }
            runners
        },
        BatchSize::SmallInput,
    )
}

fn action_path(c: &mut Criterion) {
    let mut g = c.benchmark_group("action-path");
    for game in registry::all() {
        let meta = game.meta();
        // Six at a table where the game seats six (the size the other benchmarks use).
        let n = usize::from(meta.max_players.min(6).max(meta.min_players));
        let players: Vec<PlayerInfo> = (0..n)
            .map(|i| PlayerInfo { id: PlayerId::from_bytes([i as u8 + 1; 32]), balance: Chips(10_000) })
            .collect();
        let mut rng = ChaCha20Rng::seed_from_u64(7);
        // Enough hands that one short hand does not decide the figure.
        let hands: Vec<Recorded> = (0..16).map(|_| record(game.as_ref(), &players, &mut rng)).collect();
        let per_round: usize = hands.iter().map(|h| h.actions.len()).sum();
        g.throughput(Throughput::Elements(per_round as u64));
        let name = format!("{} ({n} players, {per_round} actions in 16 hands)", meta.name);
        g.bench_function(format!("one-pass/{name}"), |b| {
            replay(b, &hands, |runner, seat, text| {
                runner.act_as(seat, ActionInput::Text(text)).expect("applies");
            })
        });
        g.bench_function(format!("former/{name}"), |b| {
            replay(b, &hands, |runner, seat, text| {
                let v: Value = serde_json::from_str(text).expect("json");
                runner.hand().validate(seat, &v).expect("valid");
                runner.act(seat, &v).expect("applies");
            })
        });
    }
    g.finish();
}

criterion_group!(benches, action_path);
criterion_main!(benches);
