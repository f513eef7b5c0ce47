//! Guandan match simulation: AI level A against AI level B over whole
//! matches (from level 2 until a match end), teams swapping seats every
//! match. Prints A's match win rate with a 95% interval.
//!
//! `cargo run --release -p claw-games --example guandan_match -- l2 l1 1000 [seed]`

use claw_games::guandan::ai::{decide, AiLevel, Ties, View};
use claw_games::guandan::{GdMemory, GdSettings, Guandan};
use claw_games::{GamePlugin, PlayerInfo};
use claw_protocol::{Chips, PlayerId};
use rand::seq::SliceRandom;
use rand::{RngCore, SeedableRng};
use rand_chacha::ChaCha20Rng;

fn level(s: &str) -> AiLevel {
    match s {
        "l1" => AiLevel::L1,
        "l2" => AiLevel::L2,
        "l3" => AiLevel::L3,
        other => panic!("unknown AI level {other} (l1, l2, l3)"),
    }
}

/// Plays one match; returns (winning team or None for a draw, deals played).
fn play_match(levels: [AiLevel; 4], rng: &mut ChaCha20Rng) -> (Option<u8>, u32) {
    let g = Guandan;
    let settings = GdSettings::default();
    let players: Vec<PlayerInfo> = (0..4u8)
        .map(|i| PlayerInfo { id: PlayerId::from_bytes([i + 1; 32]), balance: Chips(1_000_000) })
        .collect();
    let mut memory = GdMemory::default();
    let mut ties = Ties::new(rng.next_u64());
    for deal in 1..=300u32 {
        let mut st = g.create_game(&settings, &players, &memory).expect("create");
        let mut deck = g.create_deck(&settings);
        deck.shuffle(rng);
        g.deal_offline(&mut st, &deck).expect("deal");
        while let Some(seat) = g.to_act(&st) {
            let a = decide(levels[seat.index()], &View::of(&st, seat.0), &mut ties);
            g.apply(&mut st, seat, &a).expect("AI actions are legal");
        }
        let o = st.outcome.clone().expect("over");
        if o.match_end.is_some() {
            return (o.winner_team, deal);
        }
        memory = g.memory_after(&st);
    }
    (None, 300)
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let a = level(args.first().map(String::as_str).unwrap_or("l2"));
    let b = level(args.get(1).map(String::as_str).unwrap_or("l1"));
    let n: usize = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(1000);
    let seed: u64 = args.get(3).and_then(|s| s.parse().ok()).unwrap_or(1);
    let mut rng = ChaCha20Rng::seed_from_u64(seed);
    let (mut wins, mut draws, mut deals) = (0usize, 0usize, 0u64);
    let t0 = std::time::Instant::now();
    for m in 0..n {
        // A sits at seats 0 and 2 in even matches, 1 and 3 in odd ones.
        let a_team = (m % 2) as u8;
        let levels = [0u8, 1, 2, 3].map(|s| if s % 2 == a_team { a } else { b });
        let (winner, d) = play_match(levels, &mut rng);
        deals += u64::from(d);
        match winner {
            Some(w) if w == a_team => wins += 1,
            None => draws += 1,
            _ => {}
        }
    }
    let p = wins as f64 / n as f64;
    let half = 1.96 * (p * (1.0 - p) / n as f64).sqrt();
    println!(
        "{a:?} vs {b:?}: {n} matches, {a:?} won {wins} ({:.1}% ± {:.1}%), {draws} unfinished, {:.1} deals per match, {:.1} s",
        p * 100.0,
        half * 100.0,
        deals as f64 / n as f64,
        t0.elapsed().as_secs_f64()
    );
}
