//! `claw-player audit` on saved transcripts: a good file exits 0, a
//! tampered one exits 1 naming the failed check and the hand, an unreadable
//! one exits 2; `approve` / `revoke` in a build without Solana say how to
//! build it.

use crate::{player, support};

use std::path::Path;

use claw_engine::testing::Table;
use claw_player::bots::strategy;
use claw_protocol::messages::EventBody;
use claw_protocol::Seat;
use serde_json::Value;

/// Writes `n` hands of `game` played in one room, signed, to a file in
/// `dir` (hand `tamper` with another winner announced): the file and the
/// hand ids.
pub fn write_hands(
    dir: &Path,
    game: &str,
    n: usize,
    tamper: Option<usize>,
) -> (std::path::PathBuf, Vec<String>) {
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
    let out = player().arg("audit").arg(&path).output().unwrap();
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
    let out = player().arg("audit").arg(&path).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(stdout.contains(&format!("FAIL {}: hand {}", path.display(), ids[1])), "{stdout}");
    assert!(stdout.contains("check replay failed"), "{stdout}");
    assert!(stdout.contains(&format!("OK   {}: hand {}", path.display(), ids[0])), "{stdout}");
    // The JSON form names the same check.
    let out = player().args(["audit", "--json"]).arg(&path).output().unwrap();
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
    let out = player().args(["audit", "--commission", "3"]).arg(&path).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(stdout.contains("check commission failed"), "{stdout}");
    let out = player().args(["audit", "--commission", "0"]).arg(&path).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stdout));
}

#[test]
fn a_wrong_dealer_key_and_an_unreadable_file_fail() {
    let dir = tempfile::tempdir().unwrap();
    let (path, _) = write_hands(dir.path(), "sam-gong", 1, None);
    let other = "ab".repeat(32);
    let out = player().args(["audit", "--dealer", &other]).arg(&path).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stdout).contains("check dealer-signatures failed"));

    let junk = dir.path().join("junk.jsonl");
    std::fs::write(&junk, "{\"type\":\"event\",\"nope\":1}\n").unwrap();
    let out = player().arg("audit").arg(&junk).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stdout).contains("check structure failed"));

    let out = player().arg("audit").arg(dir.path().join("missing.jsonl")).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
}

/// Without the `solana` feature, `approve` and `revoke` (any arguments, even
/// `--help`) answer in one line how to build them, exit 2.
#[cfg(not(feature = "solana"))]
#[test]
fn approve_and_revoke_without_solana_say_how_to_build_them() {
    for args in [&["approve", "--key", "me.key", "--amount", "5"][..], &["revoke", "--help"], &["approve"]] {
        let out = player().args(args).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{args:?}: one line: {stderr}");
        assert!(stderr.starts_with(&format!("claw-player {}: ", args[0])), "{stderr}");
        assert!(stderr.contains("--features solana"), "{stderr}");
    }
}

/// A pending hand (deferred reveal not out) is not `ok` in `audit --json`
/// (`verdict` `pending`, exit 3); with `--key` the text and JSON say what
/// the key added: the player's sealed cards, opened and checked; a key
/// whose player is not in the hand says so.
#[test]
fn a_pending_hand_is_not_ok_and_the_key_says_what_it_opened() {
    let dir = tempfile::tempdir().unwrap();
    let mut sim = Table::new("sam-gong", &Value::Null, 3, 78).unwrap();
    sim.reveal = claw_protocol::messages::RevealPolicy::Deferred;
    let bot = strategy("sam-gong", "simple").unwrap();
    let h = support::play(&mut sim, bot.as_ref());
    let path = dir.path().join("pending.jsonl");
    std::fs::write(&path, h.sign(&sim.dealer, "room").unwrap().to_jsonl().unwrap()).unwrap();
    let key = dir.path().join("seat0.key");
    sim.players[0].save(&key).unwrap();
    let stranger = dir.path().join("stranger.key");
    claw_protocol::Identity::from_secrets([5; 32], [6; 32]).save(&stranger).unwrap();

    let json = |extra: &[&std::ffi::OsStr]| {
        let out = player().args(["audit", "--json"]).args(extra).arg(&path).output().unwrap();
        assert_eq!(out.status.code(), Some(3), "{}", String::from_utf8_lossy(&out.stdout));
        serde_json::from_slice::<Value>(&out.stdout).unwrap()
    };
    let v = json(&[]);
    assert_eq!((v["ok"].clone(), v["verdict"].clone()), (Value::Bool(false), Value::from("pending")), "{v}");
    // `claw-player join`'s `hand-ended` line says the same of it.
    let mut auditor = claw_audit::Auditor::new(None);
    auditor.allow_pending_reveal = true;
    let live =
        claw_player::node::AuditSummary::of(&auditor.audit(&h.sign(&sim.dealer, "room").unwrap(), None));
    let live = serde_json::to_value(live).unwrap();
    assert_eq!(
        (live["ok"].clone(), live["verdict"].clone()),
        (v["ok"].clone(), v["verdict"].clone()),
        "{live}"
    );
    assert!(v.get("my_cards").is_none(), "{v}");
    let v = json(&["--key".as_ref(), key.as_os_str()]);
    assert_eq!(v["my_seat"], 0, "{v}");
    let cards = v["my_cards"].as_array().unwrap();
    assert_eq!(cards.len(), 3, "Sam Gong deals three cards: {v}");
    let v = json(&["--key".as_ref(), stranger.as_os_str()]);
    assert_eq!((v["my_seat"].clone(), v["my_cards"].clone()), (Value::Null, serde_json::json!([])), "{v}");

    let text = |k: &Path| {
        let out = player().args(["audit", "--key"]).arg(k).arg(&path).output().unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let mine = text(&key);
    assert!(mine.starts_with("PENDING "), "{mine}");
    let said = format!("--key: 3 sealed card(s) of yours opened and checked against their leaves: {}", {
        let names: Vec<&str> = cards.iter().map(|c| c.as_str().unwrap()).collect();
        names.join(" ")
    });
    assert!(mine.contains(&said), "{mine}");
    assert!(text(&stranger).contains("--key: its player is not in this hand"), "{}", text(&stranger));
    let without = player().arg("audit").arg(&path).output().unwrap();
    assert!(!String::from_utf8_lossy(&without.stdout).contains("--key"));
}

/// A negative number is named as such (not "unexpected argument '-5'"),
/// and with `--log-format json` the usage error is one JSON line too.
#[test]
fn negative_numbers_are_named_and_json_usage_errors_are_json() {
    let out = player().args(["audit", "x.jsonl", "--commission", "-5"]).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("invalid value '-5' for '--commission <CHIPS>': negative numbers are not allowed"),
        "{stderr}"
    );
    assert!(!stderr.contains("unexpected argument"), "{stderr}");
    let out = player()
        .args(["--log-format", "json", "join", "ws://127.0.0.1:1/r#ab", "--hands", "-1"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    let v: Value = serde_json::from_str(stderr.trim()).unwrap();
    assert_eq!(v["level"], "ERROR");
    assert!(v["fields"]["message"].as_str().unwrap().contains("--hands <HANDS>': negative numbers"), "{v}");
}
