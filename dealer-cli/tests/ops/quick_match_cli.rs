//! `claw-player join --quick-match` with the real `claw-dealer` and the real
//! `claw-player`: two players who name only the dealer's address, its key
//! and a game are seated at that game's room and play a hand there, each
//! audited; a game no room plays is refused with the dealer's reason, and
//! the player never sits down.

use std::process::{Command, Output, Stdio};

use serde_json::Value;

use crate::guandan::claw_player_bin;
use crate::stop::DealerProc;
use crate::GUARD;

/// Runs `claw-player ARGS` to its end (off the async workers); past the
/// guard it is killed and the test fails.
async fn player(args: Vec<String>) -> Output {
    let child = Command::new(claw_player_bin())
        .args(&args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("claw-player starts");
    let pid = child.id();
    match tokio::time::timeout(GUARD, tokio::task::spawn_blocking(move || child.wait_with_output())).await {
        Ok(out) => out.expect("wait task").expect("claw-player output"),
        Err(_) => {
            let _ = Command::new("kill").arg(pid.to_string()).status();
            panic!("guard: claw-player {args:?} did not finish");
        }
    }
}

fn lines(out: &Output) -> Vec<Value> {
    String::from_utf8_lossy(&out.stdout).lines().filter_map(|l| serde_json::from_str(l).ok()).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claw_player_quick_match_seats_it_at_a_room_of_its_game() {
    let tmp = tempfile::tempdir().unwrap();
    let log = tmp.path().join("dealer.log");
    let dealer = DealerProc::start_with(DealerProc::command(&tmp.path().join("data"), &log), log).await;
    // Only the dealer's address and key: its quick-match path.
    let base = dealer.url.rsplit_once('/').expect("ws://HOST:PORT/ROOM#KEY").0;
    let at = format!("{base}/quick-match#{}", dealer.key());
    let args = |seed: &str| -> Vec<String> {
        ["join", &at, "--quick-match", "texas-holdem", "--bot", "simple", "--bot-seed", seed, "--hands", "1"]
            .map(String::from)
            .to_vec()
    };
    let (a, b) = tokio::join!(player(args("1")), player(args("2")));
    for out in [&a, &b] {
        let seen = lines(out);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{stderr}\n{seen:?}\n{}", dealer.log_text());
        let joined = seen.iter().find(|v| v["event"] == "joined").expect("a joined line");
        assert_eq!(joined["room"]["room_id"], "texas-holdem", "{joined}");
        assert_eq!(joined["room"]["game"], "texas-holdem");
        let ended: Vec<&Value> = seen.iter().filter(|v| v["event"] == "hand-ended").collect();
        assert_eq!(ended.len(), 1, "{seen:?}");
        assert_eq!(ended[0]["audit"]["ok"], true, "{}", ended[0]);
    }
    // No room plays the game: the dealer's reason, exit 2, never seated.
    let refused = player(["join", &at, "--quick-match", "go-fish"].map(String::from).to_vec()).await;
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert_eq!(refused.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("claw-player: quick match: ") && stderr.contains("go-fish"), "{stderr}");
    assert!(!stderr.contains("quick match: quick match"), "said once: {stderr}");
    assert!(!lines(&refused).iter().any(|v| v["event"] == "joined"), "never seated");
}
