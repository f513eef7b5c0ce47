//! Dealer-side processing, engine only (sans-IO, no sockets, no chips):
//! a whole hand (prepare, seed checks, shuffle, commitments, sealing,
//! action checks, signing every event, the reveal) and one action, for
//! every registered game. Player-side signing is done beforehand and not
//! measured. Beside each hand, `…/primitives` runs only the crypto
//! primitives that very hand made (counted from its transcript: dealer
//! signatures, player signatures verified, keys parsed, cards sealed, leaves,
//! root, shuffle), so the two medians of one run give the engine's overhead
//! over its crypto.

use std::sync::Arc;
use std::time::{Duration, Instant};

use claw_engine::{Carried, GameSpec, Hand, HandSeat};
use claw_protocol::messages::{
    EntropyMode, EventBody, PlayerSeed, RawJson, RevealPolicy, SignedAction, YourTurn,
};
use claw_protocol::{
    leaf, merkle_root, seed_commitment, shuffle, shuffle_seed, CardId, CardOpening, Chips, Digest, HandId,
    Identity, Purpose, Salt, Seed, SignerKey,
};
use criterion::{criterion_group, criterion_main, Criterion};
use rand_chacha::rand_core::SeedableRng;
use rand_chacha::ChaCha20Rng;
use serde_json::Value;

struct Table {
    spec: Arc<GameSpec>,
    dealer: Arc<Identity>,
    players: Vec<Identity>,
    seats: Vec<HandSeat>,
}

fn table(game: &str, n: u8) -> Table {
    let g = claw_games::registry::get(game).unwrap();
    let settings = g.normalize_settings(&Value::Null).unwrap();
    let spec =
        Arc::new(GameSpec::new("bench", g, settings, EntropyMode::Joint, RevealPolicy::Full, 2000).unwrap());
    let dealer = Arc::new(Identity::from_seed([250; 32]));
    let players: Vec<Identity> = (0..n).map(|i| Identity::from_seed([i + 1; 32])).collect();
    let seats = players
        .iter()
        .map(|p| HandSeat {
            id: p.id(),
            encryption_key: p.encryption_key(),
            balance: Chips(10_000),
            commission: Chips::ZERO,
            key: dealer.shared_key(&p.encryption_key()).unwrap(),
            house_ai: false,
        })
        .collect();
    Table { spec, dealer, players, seats }
}

/// A deterministic, long-ish line of play: check or call when possible.
fn choose(t: &YourTurn) -> Value {
    let ok: Vec<_> = t.actions.iter().filter(|o| o.affordable).collect();
    for want in ["check", "call", "stand", "pass"] {
        if let Some(o) = ok.iter().find(|o| o.action["type"] == want) {
            return o.action.clone();
        }
    }
    ok[0].action.clone()
}

/// The players' messages of one hand, signed in advance.
struct Script {
    hand_id: HandId,
    seeds: Vec<PlayerSeed>,
    actions: Vec<SignedAction>,
    /// The seat of each action.
    seats: Vec<usize>,
}

const RNG_SEED: [u8; 32] = [42; 32];

/// The crypto primitives one hand made, read from its transcript.
struct Census {
    dealer_signatures: usize,
    player_signatures: usize,
    sealed: usize,
    /// The declared deck (one leaf per position).
    deck: Vec<CardId>,
}

impl Census {
    fn of(transcript: &claw_protocol::transcript::Transcript, script: &Script) -> Census {
        let mut sealed = 0;
        let mut deck = Vec::new();
        for e in &transcript.events {
            match e.decode_body().unwrap() {
                EventBody::GameStart(g) => deck = g.deck,
                EventBody::PhaseDeal(d) | EventBody::NewCard(d) => {
                    sealed += d.cards.iter().filter(|c| c.sealed.is_some()).count()
                }
                EventBody::CardTransfer(x) => sealed += usize::from(x.sealed.is_some()),
                _ => {}
            }
        }
        Census {
            dealer_signatures: transcript.events.iter().filter(|e| e.sig.is_some()).count(),
            player_signatures: script.seeds.len() + script.actions.len(),
            sealed,
            deck,
        }
    }

    /// Runs the same primitives on bodies of the real sizes.
    fn run(&self, t: &Table, script: &Script) {
        let mut rng = ChaCha20Rng::from_seed(RNG_SEED);
        let hand_id = script.hand_id;
        let dealer_seed = Seed([3; 32]);
        let _ = seed_commitment(&hand_id, &dealer_seed);
        let keys: Vec<SignerKey> = t.players.iter().map(|p| SignerKey::new(&p.id())).collect();
        for (s, k) in script.seeds.iter().zip(&keys) {
            s.verify_by(k).unwrap();
        }
        for (a, seat) in script.actions.iter().zip(&script.seats) {
            a.verify_by(&keys[*seat]).unwrap();
        }
        let seeds: Vec<Option<Seed>> = script.seeds.iter().map(|s| Some(s.seed)).collect();
        let order = shuffle(&self.deck, &shuffle_seed(&dealer_seed, &seeds));
        let leaves: Vec<Digest> = order
            .iter()
            .enumerate()
            .map(|(i, c)| leaf(&hand_id, i as u16, *c, &Salt([i as u8; 32])))
            .collect();
        let _ = merkle_root(&leaves);
        for i in 0..self.sealed {
            let opening =
                CardOpening { position: i as u16, card: order[i % order.len()], salt: Salt([1; 32]) };
            let _ = t.seats[i % t.seats.len()].key.seal(&mut rng, &hand_id, &opening);
        }
        for i in 0..self.dealer_signatures {
            let _ = t.dealer.sign(Purpose::Event, &[i as u8; 88]);
        }
    }
}

/// Plays a hand with a fixed dealer rng; with `script` the recorded player
/// messages are used, else they are produced (and recorded). Returns the
/// script and the time spent in act + commit and the number of actions.
fn play(t: &Table, script: Option<&Script>) -> (Script, Duration, u32) {
    let (script, spent, n, _) = play_hand(t, script);
    (script, spent, n)
}

/// [`play`], also returning the hand's transcript.
fn play_hand(
    t: &Table,
    script: Option<&Script>,
) -> (Script, Duration, u32, claw_protocol::transcript::Transcript) {
    let mut rng = ChaCha20Rng::from_seed(RNG_SEED);
    let hand_id = script.map_or(HandId([9; 16]), |s| s.hand_id);
    let (mut hand, _) = Hand::prepare(
        t.spec.clone(),
        t.dealer.clone(),
        t.seats.clone(),
        Carried::default(),
        0,
        hand_id,
        &mut rng,
    )
    .unwrap();
    let seeds: Vec<PlayerSeed> = match script {
        Some(s) => s.seeds.clone(),
        None => t
            .players
            .iter()
            .enumerate()
            .map(|(i, p)| PlayerSeed::sign(p, hand_id, Seed([i as u8; 32])))
            .collect(),
    };
    for (i, s) in seeds.iter().enumerate() {
        hand.add_seed(claw_protocol::Seat(i as u8), s).unwrap();
    }
    hand.start(&mut rng).unwrap();
    let mut c = hand.commit(&mut rng, 0).unwrap();
    let mut actions = Vec::new();
    let mut seats = Vec::new();
    let mut spent = Duration::ZERO;
    let mut n = 0;
    while c.end.is_none() {
        let turn = c.your_turn.take().unwrap();
        let i = turn.seat.index();
        let signed = match script {
            Some(s) => s.actions[n as usize].clone(),
            None => SignedAction::sign(
                &t.players[i],
                hand_id,
                turn.seq,
                RawJson::from_value(&choose(&turn)).unwrap(),
            ),
        };
        actions.push(signed.clone());
        seats.push(i);
        let t0 = Instant::now();
        hand.act(&t.players[i].id(), signed).unwrap();
        c = hand.commit(&mut rng, 0).unwrap();
        spent += t0.elapsed();
        n += 1;
    }
    let transcript = hand.transcript().clone();
    (Script { hand_id, seeds, actions, seats }, spent, n, transcript)
}

fn engine(c: &mut Criterion) {
    let mut g = c.benchmark_group("engine");
    g.measurement_time(Duration::from_secs(4));
    for (game, n) in [("texas-holdem", 6u8), ("blackjack", 4), ("dou-di-zhu", 3), ("sam-gong", 6)] {
        let t = table(game, n);
        let (script, _, actions, transcript) = play_hand(&t, None);
        let census = Census::of(&transcript, &script);
        eprintln!(
            "{game}: {n} players, {actions} actions, {} events per benchmarked hand; its primitives: \
             {} dealer signatures, {} player signatures verified ({n} keys parsed), {} cards sealed, \
             {} leaves",
            transcript.events.len(),
            census.dealer_signatures,
            census.player_signatures,
            census.sealed,
            census.deck.len()
        );
        g.bench_function(format!("{game}-{n}p/hand"), |b| b.iter(|| play(&t, Some(&script))));
        g.bench_function(format!("{game}-{n}p/primitives"), |b| b.iter(|| census.run(&t, &script)));
        g.bench_function(format!("{game}-{n}p/action"), |b| {
            b.iter_custom(|iters| {
                let mut total = Duration::ZERO;
                let mut done = 0u64;
                while done < iters {
                    let (_, spent, k) = play(&t, Some(&script));
                    total += spent / k.max(1);
                    done += 1;
                }
                total
            })
        });
    }
    g.finish();
}

fn primitives(c: &mut Criterion) {
    let id = Identity::from_seed([1; 32]);
    let sig = id.sign(Purpose::Event, &[7u8; 88]);
    let pid = id.id();
    let mut g = c.benchmark_group("primitives");
    g.bench_function("ed25519-sign", |b| b.iter(|| id.sign(Purpose::Event, &[7u8; 88])));
    g.bench_function("ed25519-verify", |b| {
        b.iter(|| claw_protocol::verify(&pid, Purpose::Event, &[7u8; 88], &sig).unwrap())
    });
    g.finish();
}

criterion_group!(benches, engine, primitives);
criterion_main!(benches);
