//! Helpers the rules tests share: players by balance, card ids from text,
//! the strings of a JSON value.

use std::collections::HashSet;

use claw_games::PlayerInfo;
use claw_protocol::{CardId, Chips, PlayerId};
use serde_json::Value;

/// The id of the player in seat `i`.
pub fn pid(i: usize) -> PlayerId {
    PlayerId::from_bytes([i as u8 + 1; 32])
}

/// One player a balance, seats in order.
pub fn players(balances: &[u64]) -> Vec<PlayerInfo> {
    balances.iter().enumerate().map(|(i, b)| PlayerInfo { id: pid(i), balance: Chips(*b) }).collect()
}

/// Card ids from space-separated text (`"AS 10H"`).
pub fn cards(s: &str) -> Vec<CardId> {
    s.split_whitespace().map(|c| c.parse().unwrap()).collect()
}

/// Every string in `v`, at any depth (to look for a leaked secret).
pub fn strings(v: &Value, out: &mut HashSet<String>) {
    match v {
        Value::String(s) => {
            out.insert(s.clone());
        }
        Value::Array(a) => a.iter().for_each(|x| strings(x, out)),
        Value::Object(o) => o.values().for_each(|x| strings(x, out)),
        _ => {}
    }
}
