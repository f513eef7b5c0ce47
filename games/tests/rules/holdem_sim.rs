//! Hold'em random play with random settings (blinds, antes) and stacks from
//! a fraction of a blind to hundreds of blinds, with a calling-heavy policy
//! so that most hands reach side pots and showdowns. Typed invariants on the
//! private state after every action, on top of the generic `simulate.rs`.

use crate::holdem_common;

use claw_games::texas_holdem::{evaluate, State, Street};
use claw_games::{
    check_conservation, replay, ChipMove, ChipOp, ChipParty, HandEvent, HandRunner, RecordedAction,
};
use claw_protocol::{Card, Seat};
use holdem_common::*;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha20Rng;
use serde_json::{json, Value};

fn hands() -> usize {
    let n = std::env::var("CLAW_SIM_HANDS").ok().and_then(|v| v.trim().parse().ok()).unwrap_or(10_000usize);
    (n / 4).max(1)
}

fn state(r: &HandRunner) -> State {
    serde_json::from_value(r.hand().state_json()).unwrap()
}

/// Invariants of a hand in progress.
fn check_state(s: &State, ctx: &str) {
    let bb = s.settings.big_blind.0;
    let mut bets = 0;
    for (i, p) in s.players.iter().enumerate() {
        if s.result.is_none() {
            assert_eq!(p.stack.0 + p.committed.0, p.start.0, "{ctx}: seat {i} chips appeared or vanished");
        }
        assert!(p.bet <= p.committed, "{ctx}: seat {i}");
        assert!(p.bet <= s.level, "{ctx}: seat {i} bet above the level");
        if s.result.is_none() {
            assert_eq!(p.all_in, p.stack.0 == 0, "{ctx}: seat {i} all-in flag");
        }
        bets += p.bet.0;
    }
    assert!(s.min_raise.0 >= bb, "{ctx}: min raise below the big blind");
    let total: u64 = s.players.iter().map(|p| p.committed.0).sum();
    let pots = s.players.iter().map(|p| p.committed.0 - p.bet.0).sum::<u64>();
    assert_eq!(pots + bets, total, "{ctx}");
    if let Some(i) = s.to_act {
        assert!(!s.players[i].folded && !s.players[i].all_in, "{ctx}: {i} cannot act");
    }
    let board = s.board.len();
    let want = match s.street {
        Street::Preflop => 0,
        Street::Flop => 3,
        Street::Turn => 4,
        Street::River | Street::Complete => 5,
    };
    if s.result.is_none() || s.players.iter().filter(|p| !p.folded).count() > 1 {
        assert_eq!(board, want, "{ctx}: board for {:?}", s.street);
    }
}

#[test]
fn random_settings_and_stacks() {
    let mut rng = ChaCha20Rng::seed_from_u64(0x401d);
    let (mut showdowns, mut side_pots, mut split_pots, mut uncontested) = (0, 0, 0, 0);
    for h in 0..hands() {
        let ctx = format!("hand {h}");
        let bb: u64 = *[1u64, 2, 10, 100, 1_000_000].choose(&mut rng).unwrap();
        let sb = rng.gen_range(1..=bb);
        let ante = if rng.gen_bool(0.5) { 0 } else { rng.gen_range(1..=bb) };
        let settings = json!({"small_blind": sb, "big_blind": bb, "ante": ante});
        let n = rng.gen_range(2..=10);
        let balances: Vec<u64> = (0..n)
            .map(|_| match rng.gen_range(0..4) {
                0 => rng.gen_range(1..=bb * 3),
                1 => rng.gen_range(bb..=bb * 20),
                _ => rng.gen_range(bb * 20..=bb * 300),
            })
            .collect();
        let mut deck = claw_protocol::CardId::deck(1, false);
        deck.shuffle(&mut rng);
        let memory =
            if rng.gen_bool(0.5) { Value::Null } else { json!({"button": pid(rng.gen_range(0..n))}) };
        let ps = players(&balances);
        let game = game();
        let (mut runner, mut events) =
            HandRunner::start(game.as_ref(), &settings, &ps, &memory, deck.clone()).unwrap();
        let mut actions = Vec::new();
        check_state(&state(&runner), &ctx);
        while let Some(seat) = runner.hand().to_act() {
            let opts = runner.hand().valid_actions();
            let pick = |t: &str| opts.iter().find(|o| o.action["type"] == t);
            let roll = rng.gen_range(0..100);
            let a = if roll < 8 {
                pick("fold").unwrap().action.clone()
            } else if roll < 70 {
                pick("check").or(pick("call")).unwrap().action.clone()
            } else if let (true, Some(o)) = (roll < 92, pick("bet").or(pick("raise"))) {
                let (lo, hi) = o.range.unwrap();
                let to = match rng.gen_range(0..3) {
                    0 => lo.0,
                    1 => rng.gen_range(lo.0..=hi.0),
                    _ => hi.0,
                };
                json!({"type": o.action["type"], "to": to})
            } else {
                pick("all-in").or(pick("check")).or(pick("call")).unwrap().action.clone()
            };
            events.extend(runner.act(seat, &a).unwrap_or_else(|e| panic!("{ctx}: {seat} {a}: {e}")));
            actions.push(RecordedAction { seat, action: a });
            check_state(&state(&runner), &ctx);
        }
        let s = state(&runner);
        assert!(runner.hand().is_over(), "{ctx}: nobody to act but not over");
        let r = runner.hand().result().unwrap();
        check_conservation(&events, &r, n).unwrap();
        let rep = replay(game.as_ref(), &settings, &ps, &memory, deck, &actions).unwrap();
        assert_eq!(rep.events, events, "{ctx}");

        // Folded players never get chips back; `won` counts pots, not returns.
        let mut won = vec![0u64; n];
        for e in &events {
            if let HandEvent::Chip(ChipMove {
                op: ChipOp::Credit,
                party: ChipParty::Seat(Seat(i)),
                amount,
                reason,
            }) = e
            {
                assert!(!s.players[*i as usize].folded, "{ctx}: folded seat {i} credited");
                if !reason.contains("returned") {
                    won[*i as usize] += amount.0;
                }
            }
        }
        let total: u64 = s.players.iter().map(|p| p.committed.0).sum();
        let contenders: Vec<usize> = (0..n).filter(|i| !s.players[*i].folded).collect();
        let reveals: usize = events
            .iter()
            .map(|e| match e {
                HandEvent::Reveal { positions } => positions.len(),
                _ => 0,
            })
            .sum();
        if contenders.len() == 1 {
            uncontested += 1;
            assert_eq!(reveals, 0, "{ctx}: nothing shown without a showdown");
            let w = contenders[0];
            assert_eq!(r.net[w], (total - s.players[w].committed.0) as i64, "{ctx}: the winner takes all");
        } else {
            showdowns += 1;
            assert_eq!(reveals, 2 * contenders.len(), "{ctx}: every showdown hand revealed once");
            assert_eq!(s.board.len(), 5);
            let value = |i: usize| {
                let mut c: Vec<Card> = s.board.iter().map(|d| d.card.card()).collect();
                c.extend(s.players[i].hole.iter().map(|d| d.card.card()));
                evaluate(&c)
            };
            let best = contenders.iter().map(|i| value(*i)).max().unwrap();
            let top: Vec<usize> = contenders.iter().copied().filter(|i| value(*i) == best).collect();
            let max_in = s.players.iter().map(|p| p.committed.0).max().unwrap();
            if top.len() == 1 && s.players[top[0]].committed.0 == max_in {
                let w = top[0];
                assert_eq!(
                    r.net[w],
                    (total - s.players[w].committed.0) as i64,
                    "{ctx}: best hand covering all"
                );
            }
            if top.len() > 1 {
                split_pots += 1;
            }
            let mut levels: Vec<u64> = contenders.iter().map(|i| s.players[*i].committed.0).collect();
            levels.sort();
            levels.dedup();
            if levels.len() > 1 {
                side_pots += 1;
            }
            // A hand beaten, in every pot it is in, by a better hand that covers it wins nothing.
            for i in &contenders {
                let covered = contenders
                    .iter()
                    .any(|j| value(*j) > value(*i) && s.players[*j].committed.0 >= s.players[*i].committed.0);
                if covered {
                    assert_eq!(won[*i], 0, "{ctx}: seat {i} was beaten in every pot it was in");
                }
            }
        }
    }
    eprintln!(
        "holdem random settings: {} hands, {showdowns} showdowns ({side_pots} with side pots, {split_pots} split), {uncontested} uncontested",
        hands()
    );
    assert!(showdowns > 0 && side_pots > 0 && split_pots > 0 && uncontested > 0);
}
