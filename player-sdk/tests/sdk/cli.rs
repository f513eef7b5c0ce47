//! `claw-player audit` on saved transcripts: a good file exits 0, a
//! tampered one exits 1 naming the failed check and the hand, an unreadable
//! one exits 2; `approve` / `revoke` in a build without Solana say how to
//! build it.

use crate::support;

use std::path::Path;
use std::process::Command;

use claw_engine::testing::Table;
use claw_player::bots::strategy;
use claw_protocol::messages::EventBody;
use claw_protocol::Seat;
use serde_json::Value;

fn claw_player() -> Command {
    Command::new(env!("CARGO_BIN_EXE_claw-player"))
}

fn write_hands(dir: &Path, game: &str, n: usize, tamper: Option<usize>) -> (std::path::PathBuf, Vec<String>) {
    let mut sim = Table::new(game, &Value::Null, 3, 77).unwrap();
    // Consecutive hands of one room: audited together, balances carry over.
    sim.carry_balances = true;
    let bot = strategy(game, "simple").unwrap();
    let mut text = String::new();
    let mut ids = Vec::new();
    for i in 0..n {
        let mut h = support::play(&mut sim, bot.as_ref());
        if tamper == Some(i) {
            // The dealer announces another winner.
            for b in &mut h.bodies {
                if let EventBody::GameEnd(g) = b {
                    let w = g.result.winners.first().map_or(0, |s| s.0);
                    g.result.winners = vec![Seat((w + 1) % 3)];
                }
            }
        }
        ids.push(h.hand_id.to_string());
        text.push_str(&h.sign(&sim.dealer, "room").unwrap().to_jsonl().unwrap());
    }
    let path = dir.join(format!("{game}-{n}-{tamper:?}.jsonl"));
    std::fs::write(&path, text).unwrap();
    (path, ids)
}

#[test]
fn a_good_transcript_passes() {
    let dir = tempfile::tempdir().unwrap();
    let (path, ids) = write_hands(dir.path(), "texas-holdem", 3, None);
    let out = claw_player().arg("audit").arg(&path).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    for id in &ids {
        assert!(stdout.contains(&format!("OK   {}: hand {id}", path.display())), "{stdout}");
    }
    assert!(stdout.contains("14 checks passed"), "{stdout}");
}

#[test]
fn a_tampered_transcript_fails_naming_the_check_and_the_hand() {
    let dir = tempfile::tempdir().unwrap();
    let (path, ids) = write_hands(dir.path(), "blackjack", 3, Some(1));
    let out = claw_player().arg("audit").arg(&path).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(stdout.contains(&format!("FAIL {}: hand {}", path.display(), ids[1])), "{stdout}");
    assert!(stdout.contains("check replay failed"), "{stdout}");
    assert!(stdout.contains(&format!("OK   {}: hand {}", path.display(), ids[0])), "{stdout}");
    // The JSON form names the same check.
    let out = claw_player().args(["audit", "--json"]).arg(&path).output().unwrap();
    let lines: Vec<Value> =
        String::from_utf8_lossy(&out.stdout).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines.len(), 3);
    assert_eq!(lines[1]["ok"], false);
    assert_eq!(lines[1]["check"], "replay");
    assert_eq!(lines[1]["hand_id"], ids[1].as_str());
}

#[test]
fn a_commission_other_than_the_rooms_fails() {
    let dir = tempfile::tempdir().unwrap();
    let (path, _) = write_hands(dir.path(), "sam-gong", 2, None);
    // The hands announce commission 0; told the room charges 3, the audit refuses them.
    let out = claw_player().args(["audit", "--commission", "3"]).arg(&path).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(stdout.contains("check commission failed"), "{stdout}");
    let out = claw_player().args(["audit", "--commission", "0"]).arg(&path).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stdout));
}

#[test]
fn a_wrong_dealer_key_and_an_unreadable_file_fail() {
    let dir = tempfile::tempdir().unwrap();
    let (path, _) = write_hands(dir.path(), "sam-gong", 1, None);
    let other = "ab".repeat(32);
    let out = claw_player().args(["audit", "--dealer", &other]).arg(&path).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stdout).contains("check dealer-signatures failed"));

    let junk = dir.path().join("junk.jsonl");
    std::fs::write(&junk, "{\"type\":\"event\",\"nope\":1}\n").unwrap();
    let out = claw_player().arg("audit").arg(&junk).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stdout).contains("check structure failed"));

    let out = claw_player().arg("audit").arg(dir.path().join("missing.jsonl")).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
}

/// Without the `solana` feature, `approve` and `revoke` (any arguments, even
/// `--help`) answer in one line how to build them, exit 2.
#[cfg(not(feature = "solana"))]
#[test]
fn approve_and_revoke_without_solana_say_how_to_build_them() {
    for args in [&["approve", "--key", "me.key", "--amount", "5"][..], &["revoke", "--help"], &["approve"]] {
        let out = claw_player().args(args).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{args:?}: one line: {stderr}");
        assert!(stderr.starts_with(&format!("claw-player {}: ", args[0])), "{stderr}");
        assert!(stderr.contains("--features solana"), "{stderr}");
    }
}
