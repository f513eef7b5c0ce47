//! Writes the hand-history export's fixtures (audit/tests/fixtures/): real
//! hands dealt by the engine with fixed seeds, which `scripts/check_exports.py`
//! feeds to third-party readers and `cargo test -p claw-audit` checks.
//!
//! - `holdem-split-odd-chips.jsonl`: four-handed Hold'em, button at seat 0;
//!   the small blind folds and the other three check it down to a three-way
//!   split of 35 chips, so two odd chips go to the two winners nearest the
//!   button's left (seats 2 and 3 get 12, seat 0 gets 11). Its signed room
//!   configuration seats four.
//!
//! Regenerate (deterministic: same seeds, same bytes):
//!
//! ```sh
//! cargo run -p claw-audit --example export_fixtures
//! ```

use std::fs;
use std::path::Path;

use claw_engine::testing::{PlayedHand, Table, TurnInfo};
use claw_protocol::Seat;
use serde_json::{json, Value};

/// Seat 1 (the small blind, the button being seat 0) folds; the others
/// check where they may, else call.
fn fold_small_blind_check_the_rest(t: &TurnInfo<'_>) -> Result<Value, String> {
    let offered = |kind: &str| {
        t.actions
            .iter()
            .find(|o| o.action.get("type").and_then(Value::as_str) == Some(kind))
            .map(|o| o.action.clone())
    };
    let wanted = if t.seat == Seat(1) { ["fold", "fold"] } else { ["check", "call"] };
    wanted.iter().find_map(|k| offered(k)).ok_or_else(|| format!("seat {}: nothing to {wanted:?}", t.seat.0))
}

/// The first hand of the seeded tables where three players split a pot of
/// 35 chips.
fn three_way_split() -> (Table, PlayedHand) {
    for seed in 1..=50 {
        let mut t = Table::new("texas-holdem", &json!({"button": 0}), 4, seed).expect("table");
        for _ in 0..2_000 {
            let h = t.play_hand(&mut |turn, _| fold_small_blind_check_the_rest(turn)).expect("hand");
            if h.result.winners.len() == 3 {
                return (t, h);
            }
        }
    }
    panic!("no three-way split in the seeded hands");
}

fn main() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/transcripts");
    fs::create_dir_all(&dir).expect("fixtures dir");
    let (t, h) = three_way_split();
    let tr = h.sign(&t.dealer, &t.room_config().room_id).expect("sign");
    let file = dir.join("holdem-split-odd-chips.jsonl");
    fs::write(&file, tr.to_jsonl().expect("jsonl")).expect("write");
    println!("{}: hand {}, {}", file.display(), h.hand_id, h.result.summary);
}
