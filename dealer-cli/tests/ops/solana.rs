//! `claw-dealer --chips solana --solana-litesvm` end to end: the real
//! binary runs an in-process Solana bank (litesvm with the real SPL Token,
//! ATA and Memo programs) behind a JSON-RPC responder, its provider on the
//! production RPC path; 6 SDK bots (who approved the dealer with their game
//! keys) play 20 Hold'em hands; every hand is audited, and each bot's token
//! balance on the bank equals its start plus the transcripts' chip
//! movements (net − commission), the escrow the commission and rake.

use std::collections::BTreeMap;
use std::process::{Command, Stdio};
use std::time::Instant;

use claw_audit::Auditor;
use claw_dealer::archive::Archive;
use serde_json::Value;

use crate::{wait_dealer, GUARD};

const BOTS: usize = 6;
const HANDS: u64 = 20;
const FUNDS: i64 = 1000;

/// Every object in `v` (depth first) whose `type` is `ty`.
fn find<'a>(v: &'a Value, ty: &str, out: &mut Vec<&'a Value>) {
    match v {
        Value::Object(m) => {
            if m.get("type").and_then(Value::as_str) == Some(ty) {
                out.push(v);
            }
            m.values().for_each(|x| find(x, ty, out));
        }
        Value::Array(a) => a.iter().for_each(|x| find(x, ty, out)),
        _ => {}
    }
}

#[tokio::test]
async fn dealer_binary_plays_twenty_hands_on_spl_token_chips() {
    let dir = tempfile::tempdir().expect("temp dir");
    let data = dir.path().join("data");
    let child = Command::new(env!("CARGO_BIN_EXE_claw-dealer"))
        .args(["--game", "texas-holdem", "--bots", "6", "--hands", &HANDS.to_string(), "--commission", "1"])
        .args(["--chips", "solana", "--solana-litesvm", "--data-dir"])
        .arg(&data)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start claw-dealer");
    let started = Instant::now();
    let out = wait_dealer(child, GUARD * 3).await;
    let took = started.elapsed();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "claw-dealer failed:\n{stdout}\n{stderr}");
    assert!(stdout.contains(&format!("{HANDS} hands audited OK")), "{stdout}\n{stderr}");

    // The bank's token balances, printed by the binary at the end.
    let mut tokens: BTreeMap<String, i64> = BTreeMap::new();
    let mut escrow = None;
    for l in stdout.lines().filter_map(|l| l.strip_prefix("solana tokens: ")) {
        let f: Vec<&str> = l.split_whitespace().collect();
        match f.as_slice() {
            ["escrow", n] => escrow = n.parse::<i64>().ok(),
            [_, short, n] => {
                tokens.insert((*short).to_owned(), n.parse().expect("token amount"));
            }
            _ => panic!("unexpected line {l:?}"),
        }
    }
    let escrow = escrow.unwrap_or_else(|| panic!("no escrow line:\n{stdout}"));
    assert_eq!(tokens.len(), BOTS, "{stdout}");

    // Every transcript audited; the chip movements they record, per player.
    let files = Archive::reader(&data, "texas-holdem").files();
    assert!(files.len() as u64 >= HANDS, "{} transcripts", files.len());
    let mut moved: BTreeMap<String, i64> = tokens.keys().map(|k| (k.clone(), 0)).collect();
    let (mut taken, mut ended) = (0i64, 0u64);
    for f in &files {
        for v in Auditor::new(None).audit_file(f).expect("readable transcript") {
            let rep = v.outcome.unwrap_or_else(|e| panic!("{}: {e}", f.display()));
            assert!(rep.complete(), "{}: every check ran", f.display());
        }
        let text = std::fs::read_to_string(f).expect("transcript");
        let lines: Vec<Value> = text.lines().filter_map(|l| serde_json::from_str(l).ok()).collect();
        let (mut starts, mut ends) = (Vec::new(), Vec::new());
        lines.iter().for_each(|l| find(l, "game-start", &mut starts));
        lines.iter().for_each(|l| find(l, "game-end", &mut ends));
        let (Some(start), Some(end)) = (starts.first(), ends.first()) else { continue };
        ended += 1;
        let players = start["players"].as_array().expect("players");
        let net = end["result"]["net"].as_array().expect("result.net");
        for (p, n) in players.iter().zip(net) {
            let id = p["id"].as_str().expect("player id");
            let short = tokens.keys().find(|s| id.starts_with(s.as_str())).expect("a bot").clone();
            let commission = p["commission"].as_i64().unwrap_or(0);
            *moved.get_mut(&short).unwrap() += n.as_i64().expect("net") - commission;
            taken += commission;
        }
        taken += end["result"]["rake"].as_i64().unwrap_or(0);
    }
    assert!(ended >= HANDS, "{ended} hands ended");
    for (short, t) in &tokens {
        assert_eq!(*t, FUNDS + moved[short], "{short}: tokens on the bank vs the transcripts");
    }
    assert_eq!(escrow, taken, "the escrow holds the commission and rake");
    assert_eq!(tokens.values().sum::<i64>() + escrow, FUNDS * BOTS as i64, "no chip created or lost");
    assert!(taken >= HANDS as i64, "commission of 1 per player per hand");
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    eprintln!(
        "solana (litesvm over JSON-RPC): {ended} hands, {BOTS} seats, {took:.1?} for the run incl. start; loadavg {}",
        load.trim()
    );
}
