//! SPEC.md §13.1's game-vector form, shared by `spec_game_vectors.rs` and the
//! replay corpus generator (`games/examples/replay_corpus.rs`, which includes
//! this file): the players and deck a vector's inputs stand for, and the
//! outputs (events, result, details, memory) in the vector's notation.

#![allow(dead_code)]

use claw_games::{
    CardFace, ChipMove, ChipOp, ChipParty, DealTo, DynGame, DynHand, HandEvent, HandResult, PlayerInfo,
};
use claw_protocol::{CardId, Chips, PlayerId};
use serde_json::{json, Map, Value};

/// The players of a vector: seat i has the id of 32 bytes `i + 1` and the
/// i-th balance.
pub fn players(balances: &[u64]) -> Vec<PlayerInfo> {
    balances
        .iter()
        .enumerate()
        .map(|(i, b)| PlayerInfo { id: PlayerId::from_bytes([i as u8 + 1; 32]), balance: Chips(*b) })
        .collect()
}

/// The deck order of a vector: `top`, then the rest of the game's unshuffled
/// deck (SPEC §2) in unshuffled order.
pub fn deck(game: &dyn DynGame, settings: &Value, top: &[CardId]) -> Result<Vec<CardId>, String> {
    let mut deck = top.to_vec();
    let all = game.create_deck(settings).map_err(|e| e.to_string())?;
    deck.extend(all.into_iter().filter(|c| !top.contains(c)));
    Ok(deck)
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

fn face(f: CardFace) -> &'static str {
    if f == CardFace::Up {
        "u"
    } else {
        "d"
    }
}

/// One event in the vector notation.
pub fn event(e: &HandEvent) -> Value {
    match e {
        HandEvent::Dealt { phase, cards } => {
            let cards: Vec<String> = cards
                .iter()
                .map(|c| format!("{}:{}>{}/{}", c.position, c.card, target(c.target), face(c.face)))
                .collect();
            json!(["deal", phase, cards])
        }
        HandEvent::Chip(ChipMove { op: ChipOp::Debit, party: p, amount, reason }) => {
            json!(["debit", party(*p), amount, reason])
        }
        HandEvent::Chip(ChipMove { op: ChipOp::Credit, party: p, amount, reason }) => {
            json!(["credit", party(*p), amount, reason])
        }
        HandEvent::Reveal { positions } => json!(["reveal", positions]),
        HandEvent::Transfer { position, from, to, face: f } => {
            json!(["transfer", position, from.0, to.0, face(*f)])
        }
    }
}

/// The result in the vector notation (`summary` left out: informational).
pub fn result(r: &HandResult) -> Value {
    json!({"winners": r.winners, "net": r.net, "house_net": r.house_net, "rake": r.rake})
}

/// The outputs of a finished hand, added to `out`: `events`, `result`,
/// `details`, `memory_after`.
pub fn outputs(out: &mut Map<String, Value>, events: &[HandEvent], hand: &dyn DynHand) -> Result<(), String> {
    let r = hand.result().ok_or("the hand is over without a result")?;
    out.insert("events".into(), Value::Array(events.iter().map(event).collect()));
    out.insert("result".into(), result(&r));
    out.insert("details".into(), json!(hand.details()));
    out.insert("memory_after".into(), hand.memory_after());
    Ok(())
}
