//! Hold'em benchmarks: 7-card evaluations per second, and full simulated
//! 6-player hands per second, typed (the plugin alone) and erased (JSON
//! actions through `HandRunner`, as the dealer runs it).

use claw_games::texas_holdem::{evaluate, Action, Memory, Settings, TexasHoldem};
use claw_games::{registry, ActionOption, DealtCard, GamePlugin, HandRunner, PendingAction, PlayerInfo};
use claw_protocol::{Card, CardId, Chips, PlayerId};
use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha20Rng;
use serde_json::Value;

const HANDS: usize = 4096;

fn random_sevens() -> Vec<[Card; 7]> {
    let mut rng = ChaCha20Rng::seed_from_u64(1);
    let mut deck: Vec<Card> = Card::standard_52().collect();
    (0..HANDS)
        .map(|_| {
            deck.shuffle(&mut rng);
            let mut h = [deck[0]; 7];
            h.copy_from_slice(&deck[..7]);
            h
        })
        .collect()
}

fn eval(c: &mut Criterion) {
    let hands = random_sevens();
    let mut g = c.benchmark_group("holdem-eval");
    g.throughput(Throughput::Elements(HANDS as u64));
    g.bench_function("evaluate 7 cards", |b| {
        b.iter(|| {
            let mut acc = 0u32;
            for h in &hands {
                acc = acc.wrapping_add(evaluate(black_box(h)).raw());
            }
            acc
        })
    });
    g.finish();
}

/// A cheap deterministic generator for the action policy.
struct XorShift(u64);

impl XorShift {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

/// Picks an option: mostly check/call, some min raises, some folds.
fn choose<A: Clone>(opts: &[ActionOption<A>], r: &mut XorShift) -> usize {
    let roll = r.next() % 100;
    let want = if roll < 10 {
        0
    } else if roll < 85 {
        1
    } else {
        2
    };
    want.min(opts.len() - 1)
}

fn players() -> Vec<PlayerInfo> {
    (0..6).map(|i| PlayerInfo { id: PlayerId::from_bytes([i as u8 + 1; 32]), balance: Chips(1000) }).collect()
}

fn decks() -> Vec<Vec<CardId>> {
    let mut rng = ChaCha20Rng::seed_from_u64(2);
    (0..64)
        .map(|_| {
            let mut d = CardId::deck(1, false);
            d.shuffle(&mut rng);
            d
        })
        .collect()
}

/// One hand through the typed plugin with a minimal in-line dealer.
fn typed_hand(players: &[PlayerInfo], deck: &[CardId], seed: u64) -> i64 {
    let g = TexasHoldem;
    let mut s = g.create_game(&Settings::default(), players, &Memory::default()).unwrap();
    let mut next = 0usize;
    let mut queue: Vec<PendingAction> = g.start(&mut s).unwrap();
    let mut r = XorShift(seed | 1);
    loop {
        while !queue.is_empty() {
            let p = queue.remove(0);
            if let PendingAction::Deal { cards, .. } = p {
                let dealt: Vec<DealtCard> = cards
                    .iter()
                    .map(|spec| {
                        let d = DealtCard {
                            position: next as u16,
                            target: spec.target,
                            face: spec.face,
                            card: deck[next],
                        };
                        next += 1;
                        d
                    })
                    .collect();
                let follow = g.receive_cards(&mut s, &dealt).unwrap();
                queue.splice(0..0, follow);
            }
        }
        let Some(seat) = g.to_act(&s) else { break };
        let opts = g.valid_actions(&s);
        let a: Action = opts[choose(&opts, &mut r)].action.clone();
        queue = g.apply(&mut s, seat, &a).unwrap();
    }
    g.result(&s).unwrap().net[0]
}

fn erased_hand(players: &[PlayerInfo], deck: &[CardId], seed: u64) -> i64 {
    let game = registry::get("texas-holdem").unwrap();
    let (mut runner, _) =
        HandRunner::start(game.as_ref(), &Value::Null, players, &Value::Null, deck.to_vec()).unwrap();
    let mut r = XorShift(seed | 1);
    while let Some(seat) = runner.hand().to_act() {
        let opts = runner.hand().valid_actions();
        let a = opts[choose(&opts, &mut r)].action.clone();
        runner.act(seat, &a).unwrap();
    }
    runner.hand().result().unwrap().net[0]
}

fn hands(c: &mut Criterion) {
    let ps = players();
    let decks = decks();
    let mut rng = ChaCha20Rng::seed_from_u64(3);
    let seeds: Vec<u64> = (0..64).map(|_| rng.gen()).collect();
    let mut g = c.benchmark_group("holdem-hand");
    g.throughput(Throughput::Elements(1));
    let mut i = 0usize;
    g.bench_function("6 players, typed plugin", |b| {
        b.iter(|| {
            i = (i + 1) % decks.len();
            typed_hand(&ps, &decks[i], seeds[i])
        })
    });
    g.bench_function("6 players, erased (JSON) via HandRunner", |b| {
        b.iter(|| {
            i = (i + 1) % decks.len();
            erased_hand(&ps, &decks[i], seeds[i])
        })
    });
    g.finish();
}

criterion_group!(benches, eval, hands);
criterion_main!(benches);
