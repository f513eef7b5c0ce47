//! Launch paths of the real binary: a private-network chips URL names the
//! flag that permits it, Sam Gong gets the same reveal policy from the
//! flags, a rooms file and the demo, and a demo whose table breaks up ends
//! with its own exit code instead of waiting forever.

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::sync::Arc;

use claw_player::node::{NodeConfig as PlayerConfig, PlayerNode};
use claw_protocol::messages::{QueryData, QueryType, RevealPolicy};
use claw_protocol::Identity;

use crate::stop::DealerProc;
use crate::GUARD;

/// Runs `claw-dealer ARGS` to its exit (guarded); stdout and stderr captured.
async fn run_dealer(args: &[&str], data_dir: &Path) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_claw-dealer"));
    c.args(args).arg("--data-dir").arg(data_dir).stdin(Stdio::null());
    let child = c.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().expect("claw-dealer starts");
    let pid = child.id();
    let out =
        tokio::time::timeout(GUARD, tokio::task::spawn_blocking(move || child.wait_with_output())).await;
    match out {
        Ok(r) => r.expect("wait task").expect("wait"),
        Err(_) => {
            let _ = Command::new("kill").args(["-KILL", &pid.to_string()]).status();
            panic!("guard: claw-dealer {args:?} did not exit (it hangs)")
        }
    }
}

fn text(o: &Output) -> String {
    format!(
        "stdout:\n{}\nstderr:\n{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_private_chips_url_is_refused_naming_chips_allow_private_and_accepted_with_it() {
    let tmp = tempfile::tempdir().unwrap();
    // A closed port: with the flag the URL passes the policy and the
    // health check then fails to connect.
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let url = format!("https://0.0.0.0:{port}/");
    let base = ["--game", "texas-holdem", "--listen", "127.0.0.1:0", "--http-listen", "off"];
    let chips = ["--chips-url", url.as_str(), "--chips-token", "t0ken"];

    let refused = run_dealer(&[&base[..], &chips[..]].concat(), &tmp.path().join("a")).await;
    let t = text(&refused);
    assert_ne!(refused.status.code(), Some(0), "{t}");
    assert!(t.contains("private or reserved address") && t.contains("--chips-allow-private"), "{t}");

    let allowed = [&base[..], &chips[..], &["--chips-allow-private"][..]].concat();
    let passed = run_dealer(&allowed, &tmp.path().join("b")).await;
    let t = text(&passed);
    assert_ne!(passed.status.code(), Some(0), "nothing listens there: {t}");
    assert!(!t.contains("private or reserved address"), "{t}");
    assert!(t.contains(&format!("points service at {url}")), "{t}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_node_limit_is_listed_in_help_and_set_with_limit_flags() {
    let tmp = tempfile::tempdir().unwrap();
    let help = run_dealer(&["--help"], &tmp.path().join("h")).await;
    let t = text(&help);
    assert_eq!(help.status.code(), Some(0), "{t}");
    let defaults = claw_dealer::Limits::default();
    for name in claw_dealer::Limits::NAMES {
        let line = format!("{name:<24} {}", defaults.get(name).unwrap());
        assert!(t.contains(&line), "--help lacks {line:?}: {t}");
    }

    let base = ["--game", "texas-holdem", "--listen", "127.0.0.1:0", "--http-listen", "off"];
    let unknown =
        run_dealer(&[&base[..], &["--limit", "max_wachers=3"]].concat(), &tmp.path().join("a")).await;
    let t = text(&unknown);
    assert_ne!(unknown.status.code(), Some(0), "{t}");
    assert!(t.contains("no limit \"max_wachers\"") && t.contains("max_watchers"), "{t}");

    let bad = run_dealer(&[&base[..], &["--limit", "send_grace=soon"]].concat(), &tmp.path().join("b")).await;
    let t = text(&bad);
    assert_ne!(bad.status.code(), Some(0), "{t}");
    assert!(t.contains("limit send_grace") && t.contains("bad duration"), "{t}");

    // The value reaches the node's checks: a handshake deadline over the
    // protocol's 10 s is refused by name.
    let long =
        run_dealer(&[&base[..], &["--limit", "handshake_deadline=11s"]].concat(), &tmp.path().join("c"))
            .await;
    let t = text(&long);
    assert_ne!(long.status.code(), Some(0), "{t}");
    assert!(t.contains("handshake_deadline must be positive and at most the protocol's 10 s"), "{t}");
}

/// The reveal policy the room of a running dealer announces.
async fn announced_reveal(d: &DealerProc) -> RevealPolicy {
    let me = Arc::new(Identity::from_seed([7; 32]));
    let p = tokio::time::timeout(GUARD, PlayerNode::connect(&d.invite(), me, PlayerConfig::default()))
        .await
        .expect("guard: connect")
        .expect("player connects");
    let q = tokio::time::timeout(GUARD, p.query(QueryType::RoomConfig)).await.expect("guard: query");
    p.close().await;
    match q {
        Ok(QueryData::RoomConfig { config }) => config.reveal,
        other => panic!("room-config answer: {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sam_gong_is_deferred_from_the_flags_the_rooms_file_and_the_demo() {
    let tmp = tempfile::tempdir().unwrap();

    // --game sam-gong
    let flags = DealerProc::start_with(
        DealerProc::command_for("sam-gong", &tmp.path().join("flags"), &tmp.path().join("flags.log")),
        tmp.path().join("flags.log"),
    )
    .await;
    let from_flags = announced_reveal(&flags).await;
    let _ = flags.terminate().await;

    // --rooms with a sam-gong room that names no policy
    let rooms = tmp.path().join("rooms.toml");
    std::fs::write(&rooms, "[[room]]\nid = \"sg\"\ngame = \"sam-gong\"\n").unwrap();
    let log = tmp.path().join("file.log");
    let mut c = Command::new(env!("CARGO_BIN_EXE_claw-dealer"));
    c.arg("--rooms")
        .arg(&rooms)
        .args(["--listen", "127.0.0.1:0", "--http-listen", "off", "--welcome", "1000", "--data-dir"])
        .arg(tmp.path().join("file"))
        .stdin(Stdio::null())
        .stderr(Stdio::from(std::fs::File::create(&log).unwrap()));
    let file = DealerProc::start_with(c, log).await;
    let from_file = announced_reveal(&file).await;
    let _ = file.terminate().await;

    // --bots: the hands' transcripts record the policy they were dealt under.
    let demo_dir = tmp.path().join("demo");
    let demo =
        run_dealer(&["--game", "sam-gong", "--bots", "2", "--hands", "2", "--chips", "local"], &demo_dir)
            .await;
    assert_eq!(demo.status.code(), Some(0), "{}", text(&demo));
    let transcripts: Vec<_> = std::fs::read_dir(demo_dir.join("rooms/sam-gong/transcripts"))
        .unwrap()
        .map(|e| std::fs::read_to_string(e.unwrap().path()).unwrap())
        .collect();
    assert_eq!(transcripts.len(), 2, "{}", text(&demo));
    let policies: Vec<bool> = transcripts.iter().map(|t| t.contains(r#""reveal":"deferred""#)).collect();

    assert_eq!(from_flags, RevealPolicy::Deferred);
    assert_eq!(from_file, from_flags, "the rooms file's default differs from the flags'");
    assert_eq!(policies, [true, true], "the demo's hands were not dealt deferred");
    // Deferred reveals are published at room close: the demo's bots still audit every hand.
    assert!(text(&demo).contains("2 hands audited OK"), "{}", text(&demo));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_random_demo_whose_table_breaks_up_ends_with_exit_code_3() {
    let tmp = tempfile::tempdir().unwrap();
    // 60 chips each and a hand limit never reached: one bot soon holds
    // every chip, and the other cannot cover the next hand.
    let args = [
        "--game",
        "texas-holdem",
        "--bots",
        "2",
        "--hands",
        "100000",
        "--bot-strategy",
        "random",
        "--chips",
        "local",
        "--welcome",
        "60",
    ];
    let out = run_dealer(&args, tmp.path()).await;
    let t = text(&out);
    assert_eq!(out.status.code(), Some(3), "{t}");
    assert!(t.contains("the table broke up after") && t.contains("texas-holdem needs 2"), "{t}");
    assert!(t.contains("cannot cover"), "the reason the bot left: {t}");
    assert!(!t.contains("AUDIT FAILURES"), "{t}");
}

/// Flags go through the rooms' one validation: the same reasons as the
/// rooms file and the admin API (`RoomConfig::validate`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_house_without_a_bankroll_and_a_bankroll_without_a_house_are_refused_by_the_one_validation() {
    let tmp = tempfile::tempdir().unwrap();
    // Reachable from the network (a public host): no play-money bankroll.
    let bj = ["--game", "blackjack", "--listen", "127.0.0.1:0", "--public-host", "dealer.example.org"];
    let out = run_dealer(&[&bj[..], &["--http-listen", "off"][..]].concat(), &tmp.path().join("a")).await;
    let t = text(&out);
    assert_ne!(out.status.code(), Some(0), "{t}");
    assert!(t.contains("blackjack has a house") && t.contains("--house-bankroll N"), "{t}");
    let holdem = ["--game", "texas-holdem", "--listen", "127.0.0.1:0", "--house-bankroll", "5"];
    let out = run_dealer(&[&holdem[..], &["--http-listen", "off"][..]].concat(), &tmp.path().join("b")).await;
    let t = text(&out);
    assert_ne!(out.status.code(), Some(0), "{t}");
    assert!(t.contains("texas-holdem has no house: house_bankroll does not apply"), "{t}");
}

/// A negative amount is named as such (clap alone reads `-5` as an unknown
/// option and says "unexpected argument").
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_negative_amount_is_named_as_negative() {
    let tmp = tempfile::tempdir().unwrap();
    for flag in ["--buy-in", "--commission", "--hands", "--house-bankroll"] {
        let out = run_dealer(&["--game", "texas-holdem", flag, "-5"], tmp.path()).await;
        let t = text(&out);
        assert_eq!(out.status.code(), Some(2), "{flag}: {t}");
        assert!(
            t.contains("negative numbers are not allowed") && !t.contains("unexpected argument"),
            "{flag}: {t}"
        );
    }
}
