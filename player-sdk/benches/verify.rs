//! A player's verification cost per hand: live (every event checked as it
//! arrives, own sealed cards opened, full audit at game end) and offline
//! (the auditor on a saved transcript), for a 6-player Hold'em hand and the
//! other games; plus the protocol checks alone (no game replay). The
//! `check-call` group is the hand issue #14 counts: six players who check or
//! call to the end (39 events).

#[path = "../tests/sdk/support/mod.rs"]
mod support;

use std::sync::Arc;

use claw_audit::Auditor;
use claw_engine::testing::{PlayedHand, Table};
use claw_player::bots::{strategy, BotError, Strategy, TurnView};
use claw_player::verify::SessionVerifier;
use claw_protocol::audit::{audit, AuditOptions};
use claw_protocol::transcript::Transcript;
use criterion::{criterion_group, criterion_main, BatchSize, Criterion};
use rand::RngCore;
use serde_json::Value;

/// Checks where it may, else calls: every Hold'em hand goes to the showdown.
struct CheckCall;

impl Strategy for CheckCall {
    fn name(&self) -> &'static str {
        "check-call"
    }

    fn choose(&self, turn: &TurnView<'_>, _: &mut dyn RngCore) -> Result<Value, BotError> {
        let kind =
            |k: &str| turn.actions.iter().find(|o| o.action.get("type").and_then(Value::as_str) == Some(k));
        kind("check").or_else(|| kind("call")).map(|o| o.action.clone()).ok_or(BotError::NoActions)
    }
}

fn hands(game: &str, players: usize, bot: &dyn Strategy, n: usize) -> (Table, Vec<(PlayedHand, Transcript)>) {
    let mut sim = Table::new(game, &Value::Null, players, 99).unwrap();
    let hands = (0..n)
        .map(|_| {
            let h = support::play(&mut sim, bot);
            let t = h.sign(&sim.dealer, "room").unwrap();
            (h, t)
        })
        .collect();
    (sim, hands)
}

/// Feeds `events` to seat 0's verifier, registering its seed and its own
/// signed actions as the node does.
fn feed(v: &mut SessionVerifier, h: &PlayedHand, events: &[claw_protocol::transcript::EventEnvelope]) {
    for (k, e) in events.iter().enumerate() {
        let u = v.on_event(e).unwrap();
        if k == 0 {
            if let Some(s) = h.player_seeds[0] {
                v.set_my_seed(&h.hand_id, s);
            }
            for b in &h.bodies {
                if let claw_protocol::messages::EventBody::ActionResult(a) = b {
                    if a.seat.0 == 0 {
                        v.record_my_action(&h.hand_id, a.seq, a.action.as_str(), a.sig);
                    }
                }
            }
        }
        std::hint::black_box(u);
    }
}

fn bench_game(c: &mut Criterion, game: &str, players: usize, bot: &dyn Strategy) {
    let (sim, hands) = hands(game, players, bot, 32);
    let events: f64 = hands.iter().map(|(_, t)| t.events.len() as f64).sum::<f64>() / hands.len() as f64;
    let name = bot.name();
    eprintln!("{game} ({name}): {players} players, {events:.1} events per hand on average");
    let dealer = sim.dealer.id();
    let me = Arc::clone(&sim.players[0]);
    let shared = me.shared_key(&sim.dealer.encryption_key()).unwrap();
    let group = if name == "simple" {
        format!("verify/{game}-{players}p")
    } else {
        format!("verify/{game}-{players}p-{name}")
    };
    let mut g = c.benchmark_group(group);
    let mut i = 0usize;
    g.bench_function("live, seat 0, per hand", |b| {
        b.iter_batched(
            || {
                i = (i + 1) % hands.len();
                let v = SessionVerifier::new(
                    dealer,
                    "room",
                    Arc::clone(&me),
                    sim.dealer.encryption_key(),
                    shared.clone(),
                );
                (v, i)
            },
            |(mut v, i)| {
                let (h, t) = &hands[i];
                feed(&mut v, h, &t.events);
            },
            BatchSize::SmallInput,
        )
    });
    let mut i2 = 0usize;
    g.bench_function("live, events before game-end only", |b| {
        b.iter_batched(
            || {
                i2 = (i2 + 1) % hands.len();
                let v = SessionVerifier::new(
                    dealer,
                    "room",
                    Arc::clone(&me),
                    sim.dealer.encryption_key(),
                    shared.clone(),
                );
                (v, i2)
            },
            |(mut v, i)| {
                let (h, t) = &hands[i];
                feed(&mut v, h, &t.events[..t.events.len() - 1]);
            },
            BatchSize::SmallInput,
        )
    });
    g.bench_function("one dealer signature check", |b| {
        let e = hands[0].1.events.iter().find(|e| e.sig.is_some()).expect("a hand has a signed event");
        b.iter(|| std::hint::black_box(e.verify_signature(&dealer).is_ok()))
    });
    let mut j = 0usize;
    g.bench_function("offline audit, per hand", |b| {
        b.iter(|| {
            j = (j + 1) % hands.len();
            let r = Auditor::new(Some(dealer)).audit(&hands[j].1, None).unwrap();
            std::hint::black_box(r);
        })
    });
    let mut k = 0usize;
    g.bench_function("protocol checks only (no replay), per hand", |b| {
        b.iter(|| {
            k = (k + 1) % hands.len();
            let opts = AuditOptions { dealer: Some(dealer), ..AuditOptions::default() };
            let r = audit(&hands[k].1, &opts).unwrap();
            std::hint::black_box(r);
        })
    });
    let mut m = 0usize;
    g.bench_function("parse JSON lines + offline audit, per hand", |b| {
        let texts: Vec<String> = hands.iter().map(|(_, t)| t.to_jsonl().unwrap()).collect();
        b.iter(|| {
            m = (m + 1) % texts.len();
            let v = Auditor::new(Some(dealer)).audit_jsonl(&texts[m]).unwrap();
            std::hint::black_box(v);
        })
    });
    g.finish();
}

fn benches(c: &mut Criterion) {
    bench_game(c, "texas-holdem", 6, &CheckCall);
    for (game, players) in [("texas-holdem", 6), ("blackjack", 6), ("dou-di-zhu", 3), ("sam-gong", 6)] {
        bench_game(c, game, players, strategy(game, "simple").unwrap().as_ref());
    }
}

criterion_group! {
    name = verify;
    config = Criterion::default().sample_size(30).measurement_time(std::time::Duration::from_secs(3));
    targets = benches
}
criterion_main!(verify);
