//! A full simulated hand of every registered game, per second: random legal
//! actions (the first affordable option about half the time, otherwise a
//! random one) through `HandRunner` with JSON actions, as the dealer runs it.

use claw_games::{registry, HandRunner, PlayerInfo};
use claw_protocol::{CardId, Chips, PlayerId};
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha20Rng;
use serde_json::Value;

fn hands(c: &mut Criterion) {
    let mut g = c.benchmark_group("full-hand");
    g.throughput(Throughput::Elements(1));
    for game in registry::all() {
        let meta = game.meta();
        let n = usize::from(meta.min_players.max(3).min(meta.max_players));
        let players: Vec<PlayerInfo> = (0..n)
            .map(|i| PlayerInfo { id: PlayerId::from_bytes([i as u8 + 1; 32]), balance: Chips(10_000) })
            .collect();
        let deck: Vec<CardId> = game.create_deck(&Value::Null).unwrap();
        let mut rng = ChaCha20Rng::seed_from_u64(9);
        let decks: Vec<Vec<CardId>> = (0..64)
            .map(|_| {
                let mut d = deck.clone();
                d.shuffle(&mut rng);
                d
            })
            .collect();
        let mut i = 0usize;
        g.bench_function(format!("{} ({n} players)", meta.name), |b| {
            b.iter(|| {
                i = (i + 1) % decks.len();
                let (mut runner, _) =
                    HandRunner::start(game.as_ref(), &Value::Null, &players, &Value::Null, decks[i].clone())
                        .unwrap();
                let mut steps = 0;
                while let Some(seat) = runner.hand().to_act() {
                    let opts = runner.hand().valid_actions();
                    let ok: Vec<_> = opts.iter().filter(|o| o.affordable).collect();
                    let a = match ok.len() {
                        0 => runner.hand().auto_action(seat).unwrap(),
                        k if rng.gen_bool(0.5) => ok[rng.gen_range(0..k)].action.clone(),
                        _ => ok[0].action.clone(),
                    };
                    runner.act(seat, &a).unwrap();
                    steps += 1;
                }
                steps
            })
        });
    }
    g.finish();
}

criterion_group!(benches, hands);
criterion_main!(benches);
