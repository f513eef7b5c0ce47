//! SPEC.md §13.1 game vectors: each line gives a hand's inputs (game,
//! settings, balances, table memory, deck order, actions) and its outputs
//! (every deal, chip movement and reveal in order, the result, the typed
//! details, the next table memory). This test parses them out of SPEC.md,
//! replays each hand with the rules, and fails on any difference. With
//! `CLAW_PRINT_GAME_VECTORS=1` it prints the recomputed lines instead (to
//! update SPEC.md after a deliberate rules change).

use claw_games::{
    registry, CardFace, ChipMove, ChipOp, ChipParty, DealTo, HandEvent, HandRunner, PlayerInfo,
};
use claw_protocol::{CardId, Chips, PlayerId, Seat};
use serde_json::{json, Map, Value};

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

fn target(t: DealTo) -> String {
    match t {
        DealTo::Player(s) => format!("s{}", s.0),
        DealTo::Community => "c".into(),
        DealTo::Burn => "b".into(),
        DealTo::House => "h".into(),
    }
}

fn party(p: ChipParty) -> Value {
    match p {
        ChipParty::Seat(s) => json!(s.0),
        ChipParty::House => json!("house"),
    }
}

/// Replays one vector's inputs and returns the full line (inputs + outputs).
fn compute(v: &Value) -> Value {
    let name = v["name"].as_str().unwrap();
    let game = registry::get(v["game"].as_str().unwrap()).unwrap();
    let players: Vec<PlayerInfo> = v["balances"]
        .as_array()
        .unwrap()
        .iter()
        .enumerate()
        .map(|(i, b)| PlayerInfo {
            id: PlayerId::from_bytes([i as u8 + 1; 32]),
            balance: Chips(b.as_u64().unwrap()),
        })
        .collect();
    let top: Vec<CardId> = serde_json::from_value(v["deck_top"].clone()).unwrap();
    let mut deck = top.clone();
    deck.extend(game.create_deck(&v["settings"]).unwrap().into_iter().filter(|c| !top.contains(c)));
    let (mut runner, mut events) =
        HandRunner::start(game.as_ref(), &v["settings"], &players, &v["memory"], deck).unwrap();
    for a in v["actions"].as_array().unwrap() {
        let seat = Seat(a[0].as_u64().unwrap() as u8);
        events.extend(runner.act(seat, &a[1]).unwrap_or_else(|e| panic!("{name}: {a}: {e}")));
    }
    let hand = runner.hand();
    assert!(hand.is_over(), "{name}: the actions finish the hand");
    let events: Vec<Value> = events
        .into_iter()
        .map(|e| match e {
            HandEvent::Dealt { phase, cards } => {
                let cards: Vec<String> = cards
                    .iter()
                    .map(|c| {
                        let face = if c.face == CardFace::Up { "u" } else { "d" };
                        format!("{}:{}>{}/{face}", c.position, c.card, target(c.target))
                    })
                    .collect();
                json!(["deal", phase, cards])
            }
            HandEvent::Chip(ChipMove { op: ChipOp::Debit, party: p, amount, reason }) => {
                json!(["debit", party(p), amount, reason])
            }
            HandEvent::Chip(ChipMove { op: ChipOp::Credit, party: p, amount, reason }) => {
                json!(["credit", party(p), amount, reason])
            }
            HandEvent::Reveal { positions } => json!(["reveal", positions]),
            HandEvent::Transfer { position, from, to, face } => {
                let face = if face == CardFace::Up { "u" } else { "d" };
                json!(["transfer", position, from.0, to.0, face])
            }
        })
        .collect();
    let r = hand.result().unwrap();
    let mut out = Map::new();
    for k in INPUTS {
        out.insert(k.into(), v[k].clone());
    }
    out.insert("events".into(), json!(events));
    out.insert(
        "result".into(),
        json!({"winners": r.winners, "net": r.net, "house_net": r.house_net, "rake": r.rake}),
    );
    out.insert("details".into(), json!(hand.details()));
    out.insert("memory_after".into(), hand.memory_after());
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
