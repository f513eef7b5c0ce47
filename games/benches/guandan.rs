//! Guandan benchmarks: pattern recognition of one play, full legal-move
//! generation for 15 cards with 2 wilds (the source rules' worst case), and L2 / L3
//! decision time (with a p99 over a sample of real positions printed).
//!
//! `cargo bench -p claw-games --bench guandan -- --warm-up-time 1 --measurement-time 2`

use std::hint::black_box;
use std::time::Instant;

use claw_games::guandan::ai::{decide, AiLevel, Ties, View};
use claw_games::guandan::cards::{Level, Tally, Wilds};
use claw_games::guandan::compare::BombProfile;
use claw_games::guandan::moves::legal_moves;
use claw_games::guandan::patterns::{PatternRules, Purity};
use claw_games::guandan::{read_play, GdMemory, GdSettings, GdState, Guandan};
use claw_games::{GamePlugin, PlayerInfo};
use claw_protocol::{CardId, Chips, PlayerId};
use criterion::{criterion_group, criterion_main, Criterion};
use rand::seq::SliceRandom;
use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;

fn cards(s: &str) -> Vec<CardId> {
    s.split_whitespace().map(|c| c.parse().unwrap()).collect()
}

/// States where a seat is to act, from L2 self-play over several deals.
fn positions(n: usize) -> Vec<GdState> {
    let g = Guandan;
    let settings = GdSettings::default();
    let players: Vec<PlayerInfo> = (0..4u8)
        .map(|i| PlayerInfo { id: PlayerId::from_bytes([i + 1; 32]), balance: Chips(1000) })
        .collect();
    let mut rng = ChaCha20Rng::seed_from_u64(7);
    let mut memory = GdMemory::default();
    let mut out = Vec::new();
    let mut ties = Ties::new(3);
    while out.len() < n {
        let mut st = g.create_game(&settings, &players, &memory).unwrap();
        let mut deck = g.create_deck(&settings);
        deck.shuffle(&mut rng);
        g.deal_offline(&mut st, &deck).unwrap();
        while let Some(seat) = g.to_act(&st) {
            out.push(st.clone());
            let a = decide(AiLevel::L2, &View::of(&st, seat.0), &mut ties);
            g.apply(&mut st, seat, &a).unwrap();
        }
        memory = g.memory_after(&st);
    }
    out.truncate(n);
    out
}

fn percentile_report(name: &str, level: AiLevel, states: &[GdState]) {
    let mut times: Vec<f64> = states
        .iter()
        .map(|st| {
            let v = View::of(st, st.turn);
            let t = Instant::now();
            black_box(decide(level, &v, &mut Ties::new(1)));
            t.elapsed().as_secs_f64() * 1e6
        })
        .collect();
    times.sort_by(f64::total_cmp);
    let at = |q: f64| times[((times.len() - 1) as f64 * q) as usize];
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    eprintln!(
        "{name}: {} positions, p50 {:.1} µs, p99 {:.1} µs, max {:.1} µs (loadavg {})",
        times.len(),
        at(0.5),
        at(0.99),
        at(1.0),
        load.split_whitespace().take(3).collect::<Vec<_>>().join(" ")
    );
}

fn bench(c: &mut Criterion) {
    let level = Level::new(7).unwrap();
    let rules = PatternRules { level, ace_high: true, purity: Purity::StandIn };
    let wilds = Wilds { level, count: 2 };
    let profile = BombProfile::competition();

    let play = Tally::of_ids(&cards("4c 4d 5c 5d 7h 7h#1"), wilds);
    c.bench_function("guandan/recognise one play (6 cards, 2 wilds)", |b| {
        b.iter(|| read_play(black_box(&play), rules, &profile, None, None))
    });
    let five = Tally::of_ids(&cards("8s 9s Ts Js 7h"), wilds);
    c.bench_function("guandan/recognise one play (5 cards, 1 wild)", |b| {
        b.iter(|| read_play(black_box(&five), rules, &profile, None, None))
    });

    let hand = cards("3c 3d 4c 5s 6h 6d 8c 8s 9c Tc Jd Qs Kh 7h 7h#1");
    eprintln!("15 cards with 2 wilds: {} legal plays", legal_moves(&hand, rules, 2, &profile, None).len());
    c.bench_function("guandan/legal moves, 15 cards with 2 wilds", |b| {
        b.iter(|| legal_moves(black_box(&hand), rules, 2, &profile, None))
    });
    let full = cards("3c 3d 3s 4c 4d 5s 5h 6h 6d 6c 8c 8s 9c 9d Tc Jd Jc Qs Qd Kh Kc Ac As BJ RJ 7h 7h#1");
    c.bench_function("guandan/legal moves, 27 cards with 2 wilds", |b| {
        b.iter(|| legal_moves(black_box(&full), rules, 2, &profile, None))
    });

    let states = positions(2_000);
    percentile_report("L2 decision", AiLevel::L2, &states);
    percentile_report("L3 decision", AiLevel::L3, &states);
    let sample: Vec<View> = states.iter().step_by(20).map(|st| View::of(st, st.turn)).collect();
    for (name, lv) in [("guandan/L2 decision", AiLevel::L2), ("guandan/L3 decision", AiLevel::L3)] {
        c.bench_function(name, |b| {
            let mut i = 0;
            b.iter(|| {
                i = (i + 1) % sample.len();
                decide(lv, &sample[i], &mut Ties::new(1))
            })
        });
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
