//! `claw-dealer` stops on SIGTERM exactly as on Ctrl-C: the running hand is
//! voided and refunded after the grace, players are told, the process
//! exits 0, and the next start finds no hand interrupted by a crash.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::Arc;
use std::time::Duration;

use claw_player::node::{NodeConfig as PlayerConfig, NodeEvent, PlayerNode, ReconnectPolicy};
use claw_player::Invite;
use claw_protocol::messages::{QueryData, QueryType};
use claw_protocol::Identity;

use crate::GUARD;

/// A running `claw-dealer`; killed and reaped on drop, so no path of a test
/// leaves it behind.
pub struct DealerProc {
    child: Option<Child>,
    pub url: String,
    log: PathBuf,
}

impl DealerProc {
    /// Starts the binary on `data_dir` (Hold'em, 127.0.0.1, free port, no
    /// HTTP endpoint, built-in points server) and waits for its invite URL.
    pub async fn start(data_dir: &Path, log: PathBuf) -> DealerProc {
        Self::start_with(Self::command(data_dir, &log), log).await
    }

    /// Starts `command` (see [`DealerProc::command`]) and waits for its invite URL.
    pub async fn start_with(mut command: Command, log: PathBuf) -> DealerProc {
        let mut child = command.stdout(Stdio::piped()).spawn().expect("claw-dealer starts");
        let stdout = child.stdout.take().expect("piped stdout");
        let mut proc = DealerProc { child: Some(child), url: String::new(), log };
        // Drained until the dealer exits, so that it never writes to a closed pipe.
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                let _ = tx.send(line);
            }
        });
        match tokio::time::timeout(GUARD, rx.recv()).await {
            Ok(Some(url)) if url.starts_with("ws://127.0.0.1:") => proc.url = url.trim().to_owned(),
            other => panic!("no invite URL from claw-dealer ({other:?}); log:\n{}", proc.log_text()),
        }
        proc
    }

    /// The command line of a dealer on `data_dir`, logging to `log`.
    pub fn command(data_dir: &Path, log: &Path) -> Command {
        Self::command_for("texas-holdem", data_dir, log)
    }

    /// [`DealerProc::command`] for another game.
    pub fn command_for(game: &str, data_dir: &Path, log: &Path) -> Command {
        let mut c = Command::new(env!("CARGO_BIN_EXE_claw-dealer"));
        c.args(["--game", game, "--listen", "127.0.0.1:0", "--http-listen", "off"])
            .args(["--timeout", "120s", "--between-hands", "0", "--shutdown-grace", "1s"])
            .args(["--welcome", "10000"])
            .arg("--data-dir")
            .arg(data_dir)
            .env("RUST_LOG", "claw_dealer=info,claw_engine=info")
            .stdin(Stdio::null())
            .stderr(Stdio::from(std::fs::File::create(log).expect("log file")));
        c
    }

    /// The process id (of the dealer itself when a wrapper `exec`s it).
    pub fn pid(&self) -> u32 {
        self.child.as_ref().map_or(0, Child::id)
    }

    /// The dealer's public key: the invite URL fragment.
    pub fn key(&self) -> &str {
        self.url.rsplit_once('#').map(|(_, k)| k).expect("invite URL has a key fragment")
    }

    pub fn invite(&self) -> Invite {
        Invite::parse(&self.url).expect("invite parses")
    }

    pub fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// Sends SIGTERM and waits for the exit.
    pub async fn terminate(mut self) -> (ExitStatus, String) {
        let mut child = self.child.take().expect("running");
        let pid = child.id().to_string();
        let sent = Command::new("kill").args(["-TERM", &pid]).status().expect("kill runs");
        assert!(sent.success(), "kill -TERM {pid}");
        let status = tokio::time::timeout(GUARD, tokio::task::spawn_blocking(move || child.wait()))
            .await
            .expect("guard: the dealer did not exit after SIGTERM")
            .expect("wait task")
            .expect("wait");
        (status, self.log_text())
    }
}

impl DealerProc {
    /// Kills the process (SIGKILL: a crash) and reaps it.
    pub fn kill(mut self) -> String {
        if let Some(mut c) = self.child.take() {
            c.kill().expect("kill -9");
            let _ = c.wait();
        }
        self.log_text()
    }
}

impl Drop for DealerProc {
    fn drop(&mut self) {
        if let Some(c) = &mut self.child {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

fn player_config() -> PlayerConfig {
    PlayerConfig {
        reconnect: ReconnectPolicy {
            initial: Duration::from_millis(100),
            max: Duration::from_millis(500),
            give_up_after: Duration::from_secs(2),
        },
        ..PlayerConfig::default()
    }
}

/// Seats the identity of `seed` (reconnecting briefly, then giving up).
pub async fn connect(invite: &Invite, seed: u8) -> PlayerNode {
    let me = Arc::new(Identity::from_seed([seed; 32]));
    tokio::time::timeout(GUARD, PlayerNode::connect(invite, me, player_config()))
        .await
        .expect("guard: connect")
        .expect("player connects")
}

pub async fn next_event(p: &mut PlayerNode) -> NodeEvent {
    tokio::time::timeout(GUARD, p.next_event()).await.expect("guard: event").expect("player node ended")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_voids_and_refunds_the_running_hand_and_exits_0() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");

    // Two silent players; the hand starts (blinds debited), nobody acts.
    let d1 = DealerProc::start(&data, tmp.path().join("dealer-1.log")).await;
    let invite = d1.invite();
    let mut players = vec![connect(&invite, 1).await, connect(&invite, 2).await];
    for p in &mut players {
        while !matches!(next_event(p).await, NodeEvent::HandStarted { .. }) {}
    }

    let (status, log) = d1.terminate().await;
    assert_eq!(status.code(), Some(0), "exit status {status:?}; log:\n{log}");
    assert!(log.contains("SIGTERM"), "{log}");

    // Each player was told: the hand was voided and refunded, then kicked
    // because the room closed (not a connection reset).
    for p in &mut players {
        let mut told = false;
        let kicked = loop {
            match next_event(p).await {
                NodeEvent::DealerError { message, .. } if message.contains("voided") => {
                    assert!(message.contains("refunded"), "{message}");
                    told = true;
                }
                NodeEvent::Kicked { code, reason } => break format!("{code:?}: {reason}"),
                NodeEvent::Disconnected { reason } | NodeEvent::Closed { reason } => {
                    panic!("closed without a notice: {reason}")
                }
                _ => {}
            }
        };
        assert!(told, "no void notice before the close");
        assert!(kicked.contains("RoomClosed"), "{kicked}");
    }
    drop(players);

    // The next start finds nothing interrupted; the refunds are in the
    // persistent ledger.
    let d2 = DealerProc::start(&data, tmp.path().join("dealer-2.log")).await;
    let invite = d2.invite();
    for seed in [1, 2] {
        let p = connect(&invite, seed).await;
        let balance = tokio::time::timeout(GUARD, p.query(QueryType::MyBalance)).await.expect("guard: query");
        assert!(
            matches!(balance, Ok(QueryData::MyBalance { balance }) if balance.0 == 10_000),
            "{balance:?}"
        );
        p.close().await;
    }
    let (status, log) = d2.terminate().await;
    assert_eq!(status.code(), Some(0), "{log}");
    assert!(!log.contains("interrupted by a crash"), "{log}");
    let open = data.join("rooms/texas-holdem/journal/open");
    assert_eq!(std::fs::read_dir(&open).map(|d| d.count()).unwrap_or(0), 0, "open journals left in {open:?}");
}
