//! SPEC.md §13.1 game vectors: each line gives a hand's inputs (game,
//! settings, balances, table memory, deck order, actions) and its outputs
//! (every deal, chip movement and reveal in order, the result, the typed
//! details, the next table memory). This test parses them out of SPEC.md,
//! replays each hand with the rules, and fails on any difference. With
//! `CLAW_PRINT_GAME_VECTORS=1` it prints the recomputed lines instead (to
//! update SPEC.md after a deliberate rules change).

use claw_games::{registry, HandRunner};
use claw_protocol::{CardId, Seat};
use serde_json::{Map, Value};

use crate::vector_form;

const INPUTS: [&str; 7] = ["name", "game", "settings", "balances", "memory", "deck_top", "actions"];

/// The JSON lines of the code block under "### 13.1 Game vectors".
fn spec_lines() -> Vec<Value> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../SPEC.md");
    let text = std::fs::read_to_string(path).expect("SPEC.md at the repository root");
    let start = text.find("\n### 13.1 Game vectors").expect("SPEC.md has §13.1 Game vectors");
    let section = &text[start..];
    let open = section.find("\n```").expect("a code block in §13.1");
    let body = &section[open + 4..];
    let body = &body[body.find('\n').unwrap() + 1..];
    let close = body.find("\n```").expect("the code block ends");
    body[..close]
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("bad vector line {l}: {e}")))
        .collect()
}

/// Replays one vector's inputs and returns the full line (inputs + outputs).
fn compute(v: &Value) -> Value {
    let name = v["name"].as_str().unwrap();
    let game = registry::get(v["game"].as_str().unwrap()).unwrap();
    let balances: Vec<u64> = serde_json::from_value(v["balances"].clone()).unwrap();
    let players = vector_form::players(&balances);
    let top: Vec<CardId> = serde_json::from_value(v["deck_top"].clone()).unwrap();
    let deck = vector_form::deck(game.as_ref(), &v["settings"], &top).unwrap();
    let (mut runner, mut events) =
        HandRunner::start(game.as_ref(), &v["settings"], &players, &v["memory"], deck).unwrap();
    for a in v["actions"].as_array().unwrap() {
        let seat = Seat(a[0].as_u64().unwrap() as u8);
        events.extend(runner.act(seat, &a[1]).unwrap_or_else(|e| panic!("{name}: {a}: {e}")));
    }
    let hand = runner.hand();
    assert!(hand.is_over(), "{name}: the actions finish the hand");
    let mut out = Map::new();
    for k in INPUTS {
        out.insert(k.into(), v[k].clone());
    }
    vector_form::outputs(&mut out, &events, hand).unwrap();
    Value::Object(out)
}

#[test]
fn spec_game_vectors_replay() {
    let lines = spec_lines();
    let print = std::env::var_os("CLAW_PRINT_GAME_VECTORS").is_some();
    let mut games = std::collections::BTreeSet::new();
    for v in &lines {
        let got = compute(v);
        if print {
            println!("{}", serde_json::to_string(&got).unwrap());
            continue;
        }
        let name = v["name"].as_str().unwrap();
        for k in ["events", "result", "details", "memory_after"] {
            assert_eq!(v[k], got[k], "SPEC.md §13.1 vector {name}: {k} differs from the rules");
        }
        games.insert(v["game"].as_str().unwrap().to_owned());
    }
    if !print {
        for g in ["blackjack", "dou-di-zhu", "sam-gong", "texas-holdem"] {
            assert!(games.contains(g), "SPEC.md §13.1 has a vector for {g}");
        }
    }
}
