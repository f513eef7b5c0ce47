//! Replay corpus: random hands of one game, one SPEC.md §13.1 game vector per
//! line (inputs `game`, `settings`, `balances`, `memory`, `deck_top`,
//! `actions`; outputs `events`, `result`, `details`, `memory_after` from
//! `claw_games::runner`), for a second implementation of the rules (the
//! browser's) to replay and compare.
//!
//! The play is the rules simulation's (`games/tests/rules/simulate.rs`, the
//! shared `random_play.rs`): table sessions of up to 8 hands carrying the
//! table memory, players leaving and joining, with the seat-numbered ids of
//! the vectors. Sessions cycle through settings variants per game.
//!
//! Beside the §13.1 outputs each line carries `settings_form` (the settings
//! as the rules write them, what `game-start` signs) and `autos` (per action,
//! the acting seat's auto (timeout) action in that state), so the second
//! implementation checks its settings normal form and timeout rule too.
//!
//! `cargo run -p claw-games --example replay_corpus -- --game <g> --hands N --seed S > file.jsonl`

use std::io::Write;

use claw_games::{registry, replay, DynGame};
use claw_protocol::CardId;
use serde_json::{json, Map, Value};

#[path = "../tests/rules/random_play.rs"]
mod random_play;
#[path = "../tests/rules/vector_form.rs"]
mod vector_form;

use random_play::{Choice, Hand, Ids, Watch, SESSION};

const USAGE: &str = "\
usage: replay_corpus --game <name> [--hands N] [--seed S]

Plays N random hands (default 1000) of the game <name> (texas-holdem,
blackjack, dou-di-zhu, sam-gong, guandan) and prints one SPEC.md §13.1 game
vector per line on stdout. Seed 0 (the default) plays the rules simulation's
sessions. Table sessions of 8 hands carry the table memory; sessions cycle
through settings variants of the game.";

/// The settings (as a room would give them, before normalisation) and the
/// table memory a session starts from that sessions cycle through: the
/// defaults and the variants the simulation's other-settings test plays;
/// Guandan's readings of its source rules also from a match near A, where
/// `ace_rule` decides.
fn variants(game: &str) -> Vec<(Value, Value)> {
    if game == "guandan" {
        let near_a = json!({"deal": 1, "levels": [13, 12], "level_team": 0, "last_order": [0, 1, 2, 3]});
        return vec![
            (json!({}), Value::Null),
            (json!({"show_tribute": true}), Value::Null),
            (json!({"double_tribute": "by-card"}), Value::Null),
            (json!({}), near_a.clone()),
            (json!({"ace_rule": "reach"}), near_a.clone()),
            (json!({"ace_rule": "partner-not-last"}), near_a),
            (json!({"bomb_profile": "seed", "purity": "any-wild"}), Value::Null),
            (json!({"bomb_profile": "seed"}), Value::Null),
        ];
    }
    let settings = match game {
        "texas-holdem" => vec![
            json!({}),
            json!({"small_blind": 1, "big_blind": 2, "ante": 1}),
            json!({"small_blind": 50, "big_blind": 100}),
            // Antes as big as the big blind: short stacks all-in on the ante,
            // chips only their owner put in (`uncalled chips returned`).
            json!({"small_blind": 5, "big_blind": 10, "ante": 10}),
        ],
        "blackjack" => vec![json!({}), json!({"decks": 1}), json!({"decks": 8, "hit_soft_17": true})],
        "dou-di-zhu" => vec![json!({}), json!({"rules": "permissive"}), json!({"base": 5})],
        "sam-gong" => vec![
            json!({}),
            json!({"settlement": "one-pass"}),
            json!({"tutorial": true}),
            json!({"sam_gong": "face-cards", "rake_percent": 0}),
        ],
        _ => vec![json!({})],
    };
    settings.into_iter().map(|s| (s, Value::Null)).collect()
}

/// Records the acting seat's auto action before each action.
#[derive(Default)]
struct Autos(Vec<Value>);

impl Watch for Autos {
    fn choice(&mut self, _runner: &claw_games::HandRunner, _at: usize, c: &Choice) -> Result<(), String> {
        self.0.push(c.auto.clone());
        Ok(())
    }
}

struct Args {
    game: String,
    hands: usize,
    seed: u64,
}

type Error = Box<dyn std::error::Error>;

fn args() -> Result<Option<Args>, Error> {
    let mut game = None;
    let (mut hands, mut seed) = (1000usize, 0u64);
    let mut it = std::env::args().skip(1);
    while let Some(a) = it.next() {
        let mut value = |name: &str| it.next().ok_or_else(|| format!("{name} needs a value\n\n{USAGE}"));
        match a.as_str() {
            "-h" | "--help" => return Ok(None),
            "--game" => game = Some(value("--game")?),
            "--hands" => hands = value("--hands")?.parse().map_err(|e| format!("--hands: {e}"))?,
            "--seed" => seed = value("--seed")?.parse().map_err(|e| format!("--seed: {e}"))?,
            other => return Err(format!("unknown argument {other}\n\n{USAGE}").into()),
        }
    }
    let game = game.ok_or_else(|| format!("--game is required\n\n{USAGE}"))?;
    Ok(Some(Args { game, hands, seed }))
}

/// Plays one hand and returns its vector line and the memory after it.
fn vector(h: &Hand, rng: &mut rand_chacha::ChaCha20Rng, raw: &Value) -> Result<(Value, Value), String> {
    let mut autos = Autos::default();
    let played = random_play::play(h, rng, &mut autos)?;
    let dealt = played.runner.dealt().len();
    // The dealt cards are the deck's top; the rest is never seen by the
    // rules, so the vector's deck is those cards and the unshuffled rest.
    let top: Vec<CardId> = h.deck[..dealt].to_vec();
    let deck = vector_form::deck(h.game, h.settings, &top)?;
    let rep = replay(h.game, h.settings, &h.players, &h.memory, deck, &played.actions)
        .map_err(|e| format!("replay over the vector's deck: {e}"))?;
    if rep.events != played.events || rep.memory_after != played.runner.hand().memory_after() {
        return Err("replay over the vector's deck differs from the play".into());
    }
    let mut out = Map::new();
    out.insert("game".into(), json!(h.game.meta().name));
    out.insert("settings".into(), raw.clone());
    out.insert("balances".into(), json!(h.players.iter().map(|p| p.balance.0).collect::<Vec<_>>()));
    out.insert("memory".into(), h.memory.clone());
    out.insert("deck_top".into(), json!(top));
    out.insert(
        "actions".into(),
        Value::Array(played.actions.iter().map(|a| json!([a.seat.0, a.action])).collect()),
    );
    vector_form::outputs(&mut out, &rep.events, played.runner.hand())?;
    out.insert("settings_form".into(), h.settings.clone());
    out.insert("autos".into(), Value::Array(autos.0));
    Ok((Value::Object(out), rep.memory_after))
}

fn main() -> Result<(), Error> {
    let Some(args) = args()? else {
        println!("{USAGE}");
        return Ok(());
    };
    let game = registry::get(&args.game).map_err(|e| format!("{e}\n\n{USAGE}"))?;
    let game: &dyn DynGame = game.as_ref();
    let variants = variants(&args.game);
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let mut written = 0;
    for s in 0..args.hands.div_ceil(SESSION) {
        let (raw, start) = &variants[s % variants.len()];
        let settings = game.normalize_settings(raw).map_err(|e| format!("settings {raw}: {e}"))?;
        let start = game.normalize_memory(start).map_err(|e| format!("memory {start}: {e}"))?;
        let count = SESSION.min(args.hands - s * SESSION);
        let mut lines = Vec::new();
        random_play::session_from(
            game,
            &settings,
            &start,
            s,
            count,
            args.seed,
            Ids::BySeat,
            &mut |h, rng| {
                let (line, memory) = vector(h, rng, raw)?;
                lines.push(line);
                Ok(memory)
            },
        )?;
        for l in lines {
            serde_json::to_writer(&mut out, &l)?;
            out.write_all(b"\n")?;
            written += 1;
        }
    }
    out.flush()?;
    eprintln!("{}: {written} hands", args.game);
    Ok(())
}
