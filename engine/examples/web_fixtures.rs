//! Writes the browser audit's test fixtures (web/test/fixtures/): hands of
//! the five games dealt by the real engine with fixed seeds (Guandan with
//! single and double tribute, face down and face up; hands with a
//! commission), tampered and re-signed copies, and for each file the Rust
//! auditor's verdict (`claw_protocol::audit::audit` with the games'
//! replayer, so check 13 `replay` runs) in `cases.json`, which `npm test` in
//! web/ compares with the browser audit (its own TypeScript replay).
//!
//! Regenerate (deterministic: same seeds, same bytes):
//!
//! ```sh
//! cargo run -p claw-engine --features test-game --example web_fixtures
//! ```
//!
//! Transcripts are stored gzipped (`gzip -n`, so the bytes are reproducible);
//! the key files beside them are seeded test keys.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

use claw_engine::testing::{PlayedHand, Table, TurnInfo};
use claw_protocol::audit::{audit, AuditOptions};
use claw_protocol::hand::CardFace;
use claw_protocol::messages::{config_hash, CardTransfer, EventBody, GameStart, RawJson, Reveal};
use claw_protocol::{Chips, Identity, Salt, Seat};
use rand_chacha::rand_core::RngCore;
use rand_chacha::ChaCha20Rng;
use serde_json::{json, Value};

/// A random legal action: never a Guandan surrender, seldom a pass, mostly
/// one of the plays of the most cards (short hands, small fixtures).
fn choose(t: &TurnInfo<'_>, rng: &mut ChaCha20Rng) -> Result<Value, String> {
    let kind = |a: &Value| a["type"].as_str().unwrap_or("").to_owned();
    let size = |a: &Value| a["cards"].as_array().map_or(0, Vec::len);
    let ok: Vec<&Value> = t
        .actions
        .iter()
        .filter(|o| o.affordable && kind(&o.action) != "surrender")
        .map(|o| &o.action)
        .collect();
    let plays: Vec<&Value> = ok.iter().copied().filter(|a| kind(a) != "pass").collect();
    let most = plays.iter().map(|a| size(a)).max().unwrap_or(0);
    let big: Vec<&Value> = plays.iter().copied().filter(|a| size(a) == most).collect();
    let pool = match rng.next_u32() % 4 {
        _ if plays.is_empty() => ok,
        0 => ok,
        1 => plays,
        _ => big,
    };
    if pool.is_empty() {
        return Err(format!("no action for seat {}", t.seat.0));
    }
    Ok(pool[rng.next_u32() as usize % pool.len()].clone())
}

fn play(t: &mut Table) -> PlayedHand {
    t.play_hand(&mut choose).unwrap_or_else(|e| panic!("{}: {e}", t.game_name))
}

fn transfers(h: &PlayedHand) -> Vec<(usize, CardTransfer)> {
    h.bodies
        .iter()
        .enumerate()
        .filter_map(|(i, b)| match b {
            EventBody::CardTransfer(x) => Some((i, x.clone())),
            _ => None,
        })
        .collect()
}

fn transfer_mut(h: &mut PlayedHand, i: usize) -> &mut CardTransfer {
    match &mut h.bodies[i] {
        EventBody::CardTransfer(x) => x,
        _ => unreachable!("index of a card-transfer"),
    }
}

fn game_start(h: &mut PlayedHand) -> &mut GameStart {
    match &mut h.bodies[1] {
        EventBody::GameStart(g) => g,
        _ => unreachable!("event 1 is game-start"),
    }
}

struct Out {
    dir: PathBuf,
    cases: Vec<Value>,
}

impl Out {
    /// Writes `h` re-signed (its bodies, altered or not) as `name.jsonl.gz`
    /// (unless written already) and records the Rust auditor's verdict on it
    /// with these options.
    fn write(
        &mut self,
        name: &str,
        t: &Table,
        h: &PlayedHand,
        viewer: Option<&Identity>,
        commission: Option<u64>,
    ) {
        // The header names the room whose configuration `game-start` carries.
        let tr = h.sign(&t.dealer, &t.room_config().room_id).expect("sign");
        let file = format!("{name}.jsonl.gz");
        if !self.dir.join(&file).exists() {
            let plain = self.dir.join(format!("{name}.jsonl"));
            fs::write(&plain, tr.to_jsonl().expect("jsonl")).expect("write transcript");
            // gzip -n: no name or time in the file, so the bytes are reproducible.
            let ok = Command::new("gzip").args(["-n", "-9", "-f"]).arg(&plain).status().expect("run gzip");
            assert!(ok.success(), "gzip failed");
        }
        let key = viewer.map(|v| {
            let k = format!("{name}.{}.key.json", self.cases.len());
            fs::write(self.dir.join(&k), v.to_key_file().expect("key").as_str()).expect("key");
            k
        });
        let replayer = claw_games::audit::GamesReplayer::default();
        let opts = AuditOptions {
            viewer,
            commission: commission.map(Chips),
            replayer: Some(&replayer),
            ..AuditOptions::default()
        };
        let rust = match audit(&tr, &opts) {
            Ok(r) => json!({
                "ok": true,
                "passed": r.passed.iter().map(|c| c.name()).collect::<Vec<_>>(),
                "skipped": r.skipped.iter().map(|c| c.name()).collect::<Vec<_>>(),
                "my_cards": r.hand.my_cards.iter().map(|o| o.position).collect::<Vec<_>>(),
                "transfers": transfers(h).len(),
            }),
            Err(e) => json!({"ok": false, "check": e.check.name(), "detail": e.detail}),
        };
        println!("{file}: {rust}");
        self.cases.push(json!({"file": file, "key": key, "commission": commission, "rust": rust}));
    }
}

/// The first deal of a Guandan match (seed `seed`) with `n` transfers (2:
/// single tribute, 4: double), of face `face`.
fn guandan(settings: &Value, seed: u64, n: usize, face: CardFace) -> (Table, PlayedHand) {
    let mut t = Table::new("guandan", settings, 4, seed).expect("guandan");
    t.commission = Chips(5);
    t.carry_balances = true;
    for _ in 0..30 {
        let h = play(&mut t);
        let x = transfers(&h);
        if x.len() == n && x.iter().all(|(_, x)| x.face == face) {
            return (t, h);
        }
    }
    panic!("guandan seed {seed}: no deal with {n} transfers");
}

fn main() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../web/test/fixtures");
    fs::create_dir_all(&dir).expect("fixtures dir");
    // Only this program's files go: the directory holds other fixtures too.
    for e in fs::read_dir(&dir).expect("fixtures dir").flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if name.ends_with(".jsonl.gz") || name.ends_with(".key.json") || name == "cases.json" {
            fs::remove_file(e.path()).expect("remove an old fixture");
        }
    }
    let mut out = Out { dir, cases: Vec::new() };

    // Two hands of each game; Hold'em with a commission, Dou Di Zhu with
    // timeouts (the dealer's auto actions).
    for (game, n, seed) in
        [("texas-holdem", 3, 1), ("blackjack", 3, 2), ("dou-di-zhu", 3, 3), ("sam-gong", 4, 4)]
    {
        let mut t = Table::new(game, &Value::Null, n, seed).expect(game);
        if game == "texas-holdem" {
            t.commission = Chips(5);
            t.carry_balances = true;
        }
        if game == "dou-di-zhu" {
            t.timeout_every = Some(7);
        }
        for k in 0..2 {
            let h = play(&mut t);
            let seat0 = Arc::clone(&t.players[0]);
            out.write(
                &format!("{game}-{k}"),
                &t,
                &h,
                Some(&seat0),
                (t.commission.0 > 0).then_some(t.commission.0),
            );
        }
    }

    // Guandan: single and double tribute, sealed (the receiver's key opens
    // its transferred card) and face up (`show_tribute`).
    let down = json!({});
    let up = json!({"show_tribute": true});
    let (t1, single) = guandan(&down, 1, 2, CardFace::Down);
    let (t2, double) = guandan(&down, 2, 4, CardFace::Down);
    let (t3, single_up) = guandan(&up, 3, 2, CardFace::Up);
    let (t4, double_up) = guandan(&up, 4, 4, CardFace::Up);
    // The receiver of the first tribute.
    let receiver = |t: &Table, h: &PlayedHand| Arc::clone(&t.players[transfers(h)[0].1.to.index()]);
    out.write("guandan-single", &t1, &single, Some(&receiver(&t1, &single)), Some(5));
    out.write("guandan-double", &t2, &double, Some(&receiver(&t2, &double)), Some(5));
    out.write("guandan-single-up", &t3, &single_up, None, Some(5));
    out.write("guandan-double-up", &t4, &double_up, None, None);

    // Tampered and re-signed copies.
    let (i, x) = transfers(&single)[0].clone();
    let mut h = single.clone();
    // A position the giver does not hold (Guandan deals position p to seat p mod 4).
    transfer_mut(&mut h, i).position = (0..108u16).find(|p| p % 4 != u16::from(x.from.0)).unwrap();
    out.write("tampered-transfer-position", &t1, &h, None, None);
    let mut h = single.clone();
    transfer_mut(&mut h, i).to = x.from;
    out.write("tampered-transfer-to-giver", &t1, &h, None, None);
    let mut h = single.clone();
    transfer_mut(&mut h, i).to = Seat(4);
    out.write("tampered-transfer-to-missing-seat", &t1, &h, None, None);
    let mut h = single.clone();
    transfer_mut(&mut h, i).from = (0..4u8).map(Seat).find(|s| *s != x.from && *s != x.to).unwrap();
    out.write("tampered-transfer-from", &t1, &h, None, None);
    let mut h = single.clone();
    game_start(&mut h).players[2].commission = Chips(9);
    out.write("tampered-commission-one-seat", &t1, &h, None, None);
    // Every seat charged 9 where the room's commission is 5: the room
    // configuration the hand carries says so, no commission given.
    let mut h = single.clone();
    for p in &mut game_start(&mut h).players {
        p.commission = Chips(9);
    }
    out.write("tampered-commission-all-seats", &t1, &h, None, None);
    // The room configuration binds the seed timeout and the settings.
    let mut h = single.clone();
    if let EventBody::HandPrepare(p) = &mut h.bodies[0] {
        p.seed_timeout_ms += 1;
    }
    out.write("tampered-room-seed-timeout", &t1, &h, None, None);
    let mut h = single.clone();
    let g = game_start(&mut h);
    let mut settings = g.settings.to_value().expect("settings");
    settings["note"] = json!("play-neutral");
    g.settings = RawJson::from_value(&settings).expect("settings");
    g.config_hash = config_hash(&g.game, &g.game_version, &g.settings);
    out.write("tampered-room-settings", &t1, &h, None, None);
    // A hand that names no previous hand starts from no table memory.
    let mut h = single.clone();
    game_start(&mut h).previous = None;
    out.write("tampered-previous-dropped", &t1, &h, None, None);
    // The honest file again, audited with another room commission.
    out.write("guandan-single", &t1, &single, None, Some(6));
    // A face-up transfer whose opening does not match its leaf.
    let (j, _) = transfers(&single_up)[0].clone();
    let mut h = single_up.clone();
    transfer_mut(&mut h, j).opening.as_mut().unwrap().salt = Salt([7; 32]);
    out.write("tampered-transfer-opening-salt", &t3, &h, None, Some(5));
    let mut h = single_up.clone();
    let o = transfer_mut(&mut h, j).opening.as_mut().unwrap();
    o.position = if o.position == 0 { 1 } else { o.position - 1 };
    out.write("tampered-transfer-opening-position", &t3, &h, None, Some(5));
    // The face: a face-down transfer with an opening instead of a box.
    let mut h = single_up.clone();
    transfer_mut(&mut h, j).face = CardFace::Down;
    out.write("tampered-transfer-face", &t3, &h, None, Some(5));
    // A box sealed to the viewer that does not open.
    let (k, xk) = transfers(&single)[0].clone();
    let mut h = single.clone();
    transfer_mut(&mut h, k).sealed.as_mut().unwrap().ciphertext[20] ^= 1;
    out.write("tampered-transfer-sealed", &t1, &h, Some(&t1.players[xk.to.index()]), Some(5));
    // The same card given twice: the second time the giver no longer holds it.
    let mut h = single.clone();
    h.bodies.insert(i + 1, h.bodies[i].clone());
    out.write("tampered-transfer-twice", &t1, &h, None, None);
    // A reveal of a card a face-up transfer showed already.
    let mut h = single_up.clone();
    let opening = transfer_mut(&mut h, j).opening.unwrap();
    h.bodies.insert(j + 1, EventBody::Reveal(Reveal { openings: vec![opening] }));
    out.write("tampered-reveal-after-face-up-transfer", &t3, &h, None, None);
    // A key file with the receiver's id and another encryption key: its
    // game-start entry does not carry the key file's key.
    let r = receiver(&t1, &single);
    let other = Identity::from_secrets(*r.signing_secret(), [9; 32]);
    out.write("guandan-single", &t1, &single, Some(&other), Some(5));

    let cases = serde_json::to_string_pretty(&out.cases).expect("json") + "\n";
    fs::write(out.dir.join("cases.json"), cases).expect("cases.json");
}
