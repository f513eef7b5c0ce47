//! What `claw-player join` prints against a real dealer, line by line: the
//! documented `closed` line last with `--bot --hands N`, `--log-format
//! json` making every stderr line a JSON object, a pending hand's `audit`
//! agreeing with `audit --json`, and refusals said once, in words.

use std::process::{Command, Output};

use claw_e2e::harness::*;
use claw_player::node::NodeConfig;
use claw_protocol::messages::RevealPolicy;
use serde_json::Value;

/// Runs `claw-player` with `args` (stdin closed) off the async workers.
async fn claw_player(test: &str, args: Vec<String>) -> Output {
    let bin = claw_player_bin(test);
    tokio::task::spawn_blocking(move || {
        Command::new(bin)
            .args(&args)
            .env("CLAW_LOG", "info")
            .env("RUST_BACKTRACE", "0")
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap()
    })
    .await
    .unwrap()
}

fn lines(bytes: &[u8]) -> Vec<Value> {
    String::from_utf8_lossy(bytes)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not one JSON object ({e}): {l}")))
        .collect()
}

/// A bot session of N hands in a deferred-reveal room: `closed` is the last
/// stdout line (with and without `--quiet`), every stderr line is JSON
/// under `--log-format json`, and each pending hand's `audit` has the `ok`
/// and `verdict` that `claw-player audit --json` gives its saved file.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bot_session_ends_with_closed_and_logs_only_json() {
    let test = "a_bot_session_ends_with_closed_and_logs_only_json";
    let mut room = fast_room("r", "sam-gong");
    room.reveal = RevealPolicy::Deferred;
    room.min_players = 2;
    let d = start_dealer(vec![room], 10_000_000).await;
    let url = d.node.invite_url("r").unwrap();
    let dir = tempfile::tempdir().unwrap();
    for quiet in [true, false] {
        let save = dir.path().join(format!("hands-{quiet}"));
        let nodes = connect_players(&d.invite("r"), 1, u64::from(quiet), NodeConfig::default()).await;
        let other = tokio::spawn(run_bots(nodes, "sam-gong", "simple", 2, 3));
        let mut args: Vec<String> =
            ["--log-format", "json", "join", &url, "--bot", "simple", "--hands", "2", "--save-transcripts"]
                .map(String::from)
                .to_vec();
        args.push(save.display().to_string());
        if quiet {
            args.push("--quiet".into());
        }
        let out = claw_player(test, args).await;
        let _ = other.await.unwrap();
        let stderr = lines(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{stderr:?}");
        // The one-time identity warning and the summary are log objects too.
        assert!(
            stderr.iter().any(|v| v["fields"]["message"] == "no --key: using a one-time identity"),
            "{stderr:?}"
        );
        let summary = stderr.last().unwrap();
        assert!(summary["fields"]["message"].as_str().unwrap().starts_with("2 hands, "), "{summary}");

        let stdout = lines(&out.stdout);
        assert_eq!(stdout.last().unwrap()["event"], "closed", "quiet {quiet}: {stdout:?}");
        assert_eq!(stdout.iter().filter(|v| v["event"] == "closed").count(), 1, "{stdout:?}");
        let ended: Vec<&Value> = stdout.iter().filter(|v| v["event"] == "hand-ended").collect();
        assert!(ended.len() >= 2, "{stdout:?}");
        for e in ended {
            let (audit, id) = (&e["audit"], e["hand_id"].as_str().unwrap());
            assert_eq!(
                (audit["ok"].clone(), audit["verdict"].clone()),
                (false.into(), "pending".into()),
                "{e}"
            );
            let Some(file) = e["transcript"].as_str() else { continue };
            let offline =
                Command::new(claw_player_bin(test)).args(["audit", "--json", file]).output().unwrap();
            let v = &lines(&offline.stdout)[0];
            assert_eq!(v["hand_id"], id);
            assert_eq!(
                (v["ok"].clone(), v["verdict"].clone()),
                (audit["ok"].clone(), audit["verdict"].clone())
            );
        }
    }
    d.stop().await;
}

/// A wrong dealer key is said once, with both keys in hex; a full room is
/// said in words (no `Some(RoomFull)`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refusals_are_said_once_in_words() {
    let test = "refusals_are_said_once_in_words";
    let mut room = fast_room("r", "blackjack");
    room.max_players = 1;
    room.min_players = 1;
    let d = start_dealer(vec![room], 10_000_000).await;
    let url = d.node.invite_url("r").unwrap();
    let dealer = d.node.dealer_id().to_string();

    let wrong = format!("{}#{}", url.split('#').next().unwrap(), "ab".repeat(32));
    let out = claw_player(test, vec!["join".into(), wrong, "--bot".into(), "simple".into()]).await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert_eq!(stderr.matches("the dealer's key is").count(), 1, "{stderr}");
    assert!(
        stderr.contains(&format!("the dealer's key is {dealer}, not the invite's {}", "ab".repeat(32))),
        "{stderr}"
    );
    assert!(!stderr.contains("PlayerId("), "{stderr}");

    let seated = connect_players(&d.invite("r"), 1, 9, NodeConfig::default()).await;
    let out = claw_player(test, vec!["join".into(), url, "--bot".into(), "simple".into()]).await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("claw-player: joining: the dealer refused the seat: every seat is taken"),
        "{stderr}"
    );
    assert!(!stderr.contains("Some("), "{stderr}");
    drop(seated);
    d.stop().await;
}
