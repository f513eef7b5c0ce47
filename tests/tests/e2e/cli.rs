//! The `claw-player` binary against a real dealer: a bot session that saves
//! its transcripts, `claw-player audit` on them (good, then tampered), and
//! the JSON-lines interface an agent uses (events out, actions and queries in).

use std::process::{Command, Stdio};

use claw_e2e::harness::*;
use claw_player::node::NodeConfig;
use serde_json::{json, Value};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bot_session_saves_transcripts_that_audit_ok() {
    let bin = claw_player_bin("a_bot_session_saves_transcripts_that_audit_ok");
    let mut room = fast_room("r", "texas-holdem");
    room.min_players = 2;
    let d = start_dealer(vec![room], 10_000_000).await;
    let url = d.node.invite_url("r").unwrap();
    let dir = tempfile::tempdir().unwrap();
    let save = dir.path().join("hands");
    let key = dir.path().join("me.key");
    // One in-process bot and the CLI bot.
    let nodes = connect_players(&d.invite("r"), 1, 3, NodeConfig::default()).await;
    let other = tokio::spawn(run_bots(nodes, "texas-holdem", "simple", 4, 3));
    let out = tokio::task::spawn_blocking({
        let (bin, save, key) = (bin.clone(), save.clone(), key.clone());
        move || {
            Command::new(bin)
                .args(["join", &url, "--bot", "simple", "--hands", "4", "--quiet", "--bot-seed", "5"])
                .arg("--key")
                .arg(&key)
                .arg("--save-transcripts")
                .arg(&save)
                .output()
                .unwrap()
        }
    })
    .await
    .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    let ended: Vec<Value> = stdout
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|v| v["event"] == "hand-ended")
        .collect();
    assert_eq!(ended.len(), 4, "{stdout}");
    assert!(ended.iter().all(|e| e["audit"]["ok"] == true));
    assert!(key.exists(), "key file created");
    let _ = other.await.unwrap();

    // Audit the saved files with the dealer key from the invite.
    let mut files: Vec<_> = std::fs::read_dir(&save).unwrap().map(|e| e.unwrap().path()).collect();
    files.sort();
    assert_eq!(files.len(), 4);
    let dealer = d.node.dealer_id().to_string();
    let out = Command::new(&bin).args(["audit", "--dealer", &dealer]).args(&files).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stdout));

    // Tamper with one saved file: change a chip amount in the game-end result.
    let victim = &files[2];
    let text = std::fs::read_to_string(victim).unwrap();
    let lines: Vec<String> = text
        .lines()
        .map(|l| {
            if l.contains("game-end") {
                let mut v: Value = serde_json::from_str(l).unwrap();
                let body = v["body"].as_object_mut().unwrap();
                let net = body["result"]["net"].as_array_mut().unwrap();
                net[0] = json!(net[0].as_i64().unwrap() + 1);
                v.to_string()
            } else {
                l.to_string()
            }
        })
        .collect();
    std::fs::write(victim, lines.join("\n")).unwrap();
    let out = Command::new(&bin).args(["audit", "--dealer", &dealer]).args(&files).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    // The body changed under the dealer's signature.
    let hand = victim.file_stem().unwrap().to_string_lossy().to_string();
    assert!(
        stdout.contains(&format!("hand {hand}")) && stdout.contains("check dealer-signatures failed"),
        "{stdout}"
    );
    d.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn json_lines_in_and_out() {
    let bin = claw_player_bin("json_lines_in_and_out");
    let mut room = fast_room("r", "blackjack");
    room.min_players = 1;
    let d = start_dealer(vec![room], 10_000_000).await;
    let url = d.node.invite_url("r").unwrap();
    let lines = tokio::task::spawn_blocking(move || {
        let first = [r#"{"cmd":"query","query":"my-balance"}"#, "not json"];
        json_lines_session(bin, &url, 2, &first, |v| {
            if v["event"] == "your-turn" {
                vec![act_first(v)]
            } else {
                Vec::new()
            }
        })
    })
    .await
    .unwrap();
    let (status, seen) = lines;
    let kinds: Vec<&str> = seen.iter().filter_map(|v| v["event"].as_str()).collect();
    assert_eq!(status.code(), Some(0), "{kinds:?}");
    for k in
        ["joined", "hand-prepared", "hand-started", "dealt", "your-turn", "action-sent", "action-applied"]
    {
        assert!(kinds.contains(&k), "no {k} line: {kinds:?}");
    }
    assert!(kinds.contains(&"query-result"), "{kinds:?}");
    assert!(kinds.contains(&"input-error"), "{kinds:?}");
    let ended: Vec<&Value> = seen.iter().filter(|v| v["event"] == "hand-ended").collect();
    assert_eq!(ended.len(), 2, "{kinds:?}");
    assert!(ended.iter().all(|e| e["audit"]["ok"] == true));
    let q = seen.iter().find(|v| v["event"] == "query-result").unwrap();
    assert_eq!(q["query"], "my-balance");
    assert!(q["result"]["balance"].as_u64().unwrap() > 0);
    d.stop().await;
}

/// `claw-player audit --key` opens the player's own sealed cards: the
/// right key passes, a key with the same player id but another encryption
/// secret (a box not sealed to this player) fails `opened-cards`; and an
/// audit whose stdout is closed (`| head`) ends without a panic.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn audit_with_the_player_key_checks_its_sealed_cards() {
    let bin = claw_player_bin("audit_with_the_player_key_checks_its_sealed_cards");
    let mut room = fast_room("r", "texas-holdem");
    room.min_players = 2;
    let d = start_dealer(vec![room], 10_000_000).await;
    let url = d.node.invite_url("r").unwrap();
    let dir = tempfile::tempdir().unwrap();
    let save = dir.path().join("hands");
    let key = dir.path().join("me.key");
    let imposter = dir.path().join("imposter.key");
    claw_protocol::Identity::from_secrets([7; 32], [8; 32]).save(&key).unwrap();
    claw_protocol::Identity::from_secrets([7; 32], [9; 32]).save(&imposter).unwrap();
    let nodes = connect_players(&d.invite("r"), 1, 11, NodeConfig::default()).await;
    let other = tokio::spawn(run_bots(nodes, "texas-holdem", "simple", 2, 3));
    let out = tokio::task::spawn_blocking({
        let (bin, save, key) = (bin.clone(), save.clone(), key.clone());
        move || {
            Command::new(bin)
                .args(["join", &url, "--bot", "simple", "--hands", "2", "--quiet"])
                .arg("--key")
                .arg(&key)
                .arg("--save-transcripts")
                .arg(&save)
                .output()
                .unwrap()
        }
    })
    .await
    .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let _ = other.await.unwrap();
    let mut files: Vec<_> = std::fs::read_dir(&save).unwrap().map(|e| e.unwrap().path()).collect();
    files.sort();
    assert_eq!(files.len(), 2);

    let audit = |k: &std::path::Path| {
        Command::new(&bin).args(["audit", "--json", "--key"]).arg(k).args(&files).output().unwrap()
    };
    let out = audit(&key);
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    for line in stdout.lines() {
        let v: Value = serde_json::from_str(line).unwrap();
        assert!(v["passed"].as_array().unwrap().contains(&json!("opened-cards")), "{line}");
    }
    let out = audit(&imposter);
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    // Same player id, another encryption key: the hand was sealed to a key
    // this key file does not hold, and the audit says so before opening.
    assert!(stdout.contains(r#""check":"structure""#) && stdout.contains("encryption key"), "{stdout}");
    let out = audit(&dir.path().join("missing.key"));
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--key"));

    // `claw-player audit … | head`: the reader is gone before the first line.
    let mut child = Command::new(&bin)
        .arg("audit")
        .args(files.iter().cycle().take(40))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    d.stop().await;
}
