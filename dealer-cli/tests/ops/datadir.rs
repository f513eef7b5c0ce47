//! One dealer per data directory, and hand numbers (archive file names)
//! that continue across restarts.

use std::process::Stdio;
use std::time::Duration;

use claw_dealer::lock::LockError;
use claw_dealer::NodeError;
use claw_player::node::NodeConfig as PlayerConfig;
use claw_player::Invite;

use crate::stop::DealerProc;
use crate::{holdem, play_two, start_node, GUARD};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_claw_dealer_on_the_same_data_dir_refuses_to_start() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    let first = DealerProc::start(&data, tmp.path().join("first.log")).await;
    let log = tmp.path().join("second.log");
    let mut second = DealerProc::command(&data, &log);
    second.stdout(Stdio::null());
    let out = tokio::time::timeout(GUARD, tokio::task::spawn_blocking(move || second.status()))
        .await
        .expect("guard: the second dealer did not exit")
        .unwrap()
        .unwrap();
    let text = std::fs::read_to_string(&log).unwrap();
    assert_ne!(out.code(), Some(0), "{text}");
    assert!(text.contains("is in use by another claw-dealer"), "{text}");
    // The first one still serves, and stops cleanly.
    let (status, log) = first.terminate().await;
    assert_eq!(status.code(), Some(0), "{log}");
    // Released at exit: a new dealer starts on the directory.
    let again = DealerProc::start(&data, tmp.path().join("again.log")).await;
    let (status, log) = again.terminate().await;
    assert_eq!(status.code(), Some(0), "{log}");
}

#[tokio::test]
async fn an_in_process_node_locks_its_data_dir_until_shutdown() {
    let data = tempfile::tempdir().unwrap();
    let a = start_node(data.path(), vec![holdem(1)], |b| b).await.unwrap();
    let b = start_node(data.path(), vec![holdem(1)], |b| b).await;
    assert!(matches!(b, Err(NodeError::Locked(LockError::Held { .. }))), "{:?}", b.err());
    a.shutdown(Duration::from_secs(1)).await;
    let c = start_node(data.path(), vec![holdem(1)], |b| b).await.unwrap();
    c.shutdown(Duration::from_secs(1)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hand_numbers_continue_after_a_restart() {
    let data = tempfile::tempdir().unwrap();
    for session in 0..2u8 {
        let node = start_node(data.path(), vec![holdem(1)], |b| b).await.unwrap();
        let invite = Invite::parse(&node.invite_url("holdem").unwrap()).unwrap();
        let reports = play_two(&invite, PlayerConfig::default(), 10 * session).await;
        assert!(reports.iter().all(|r| r.hands == 1 && r.failures.is_empty()), "{reports:?}");
        node.shutdown(Duration::from_secs(1)).await;
    }
    let mut names: Vec<String> = std::fs::read_dir(data.path().join("rooms/holdem/transcripts"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names.len(), 2, "{names:?}");
    assert!(names[0].starts_with("00000000-") && names[1].starts_with("00000001-"), "{names:?}");
}
