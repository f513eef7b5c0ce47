//! Kill the real `claw-dealer` binary mid-hand and restart it: the
//! unfinished hand is refunded — exactly once.
//!
//! The dealer runs with its default chips (the built-in points server on
//! SQLite in a temporary `--data-dir`). Two SDK players join a Hold'em room
//! and never act; once the hand has started and the blinds (and a
//! commission) are debited, the dealer gets SIGKILL. The restarted dealer
//! must give every account back its pre-hand balance, the points audit log
//! must verify, a second restart must move nothing more, and the dealer key
//! (the invite URL fragment) must stay the same.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

use claw_chips::AccountId;
use claw_player::node::{NodeConfig, NodeEvent, PlayerNode, ReconnectPolicy};
use claw_player::Invite;
use claw_points::{sqlite_url, Store, VerifyReport};
use claw_protocol::messages::{ChipOp, ChipParty, QueryData, QueryType};
use claw_protocol::{Chips, Identity, PlayerId, Seat};

/// Chips granted once to every new player (`--welcome`).
const WELCOME: u64 = 10_000;
/// Commission per player per hand (debited at hand start, before the blinds).
const COMMISSION: u64 = 2;
/// Failure guard for every wait (never a timed assertion).
const WAIT: Duration = Duration::from_secs(120);
const ROOM: &str = "texas-holdem";

/// The `claw-dealer` binary of this package.
fn claw_dealer_bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_claw-dealer"))
}

/// A running `claw-dealer` process; killed (SIGKILL) and reaped on drop, so
/// no path of the test leaves it behind.
struct DealerProc {
    child: Child,
    url: String,
    log: PathBuf,
}

impl DealerProc {
    /// Starts the binary on `data_dir` (127.0.0.1, free port, no HTTP
    /// endpoint) and waits for the invite URL it prints on stdout.
    async fn start(bin: &Path, data_dir: &Path, log: PathBuf, extra: &[&str]) -> DealerProc {
        let err = std::fs::File::create(&log).expect("log file");
        let mut child = Command::new(bin)
            .args(["--game", ROOM, "--listen", "127.0.0.1:0", "--http-listen", "off"])
            .args(["--timeout", "120s", "--between-hands", "0", "--commission", &COMMISSION.to_string()])
            .args(["--welcome", &WELCOME.to_string()])
            .arg("--data-dir")
            .arg(data_dir)
            .args(extra)
            .env("RUST_LOG", "claw_dealer=info,claw_points=info")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::from(err))
            .spawn()
            .expect("claw-dealer starts");
        let stdout = child.stdout.take().expect("piped stdout");
        let mut proc = DealerProc { child, url: String::new(), log };
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let line = tokio::time::timeout(WAIT, rx.recv()).await;
        match line {
            Ok(Some(url)) if url.starts_with("ws://127.0.0.1:") => proc.url = url.trim().to_owned(),
            other => panic!("no invite URL from claw-dealer ({other:?}); log:\n{}", proc.log_text()),
        }
        proc
    }

    /// The dealer's public key: the invite URL fragment.
    fn key(&self) -> &str {
        self.url.rsplit_once('#').map(|(_, k)| k).expect("invite URL has a key fragment")
    }

    fn invite(&self) -> Invite {
        Invite::parse(&self.url).expect("invite parses")
    }

    fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// `kill -9` and reap.
    fn kill(mut self) {
        self.child.kill().expect("SIGKILL the dealer");
        self.child.wait().expect("reap the dealer");
    }
}

impl Drop for DealerProc {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn player_config() -> NodeConfig {
    NodeConfig {
        reconnect: ReconnectPolicy {
            initial: Duration::from_millis(100),
            max: Duration::from_millis(500),
            give_up_after: Duration::from_secs(2),
        },
        ..NodeConfig::default()
    }
}

async fn connect(invite: &Invite, me: &Arc<Identity>) -> PlayerNode {
    tokio::time::timeout(WAIT, PlayerNode::connect(invite, Arc::clone(me), player_config()))
        .await
        .expect("connect timed out")
        .expect("player connects")
}

async fn next_event(p: &mut PlayerNode) -> NodeEvent {
    tokio::time::timeout(WAIT, p.next_event()).await.expect("event timed out").expect("player node ended")
}

async fn balance(p: &PlayerNode) -> u64 {
    match tokio::time::timeout(WAIT, p.query(QueryType::MyBalance)).await.expect("query timed out") {
        Ok(QueryData::MyBalance { balance }) => balance.0,
        other => panic!("my-balance: {other:?}"),
    }
}

fn open_journals(data: &Path) -> Vec<PathBuf> {
    let dir = data.join("rooms").join(ROOM).join("journal").join("open");
    match std::fs::read_dir(dir) {
        Ok(d) => d.map(|e| e.expect("dir entry").path()).collect(),
        Err(_) => Vec::new(),
    }
}

/// Balances of `accounts` and the audit-log verification, read straight
/// from the SQLite file (the dealer is not running).
async fn ledger(data: &Path, accounts: &[AccountId]) -> (Vec<u64>, VerifyReport) {
    let store = Store::open(&sqlite_url(&data.join("points.db"))).await.expect("open points.db");
    let mut out = Vec::new();
    for a in accounts {
        out.push(store.balance(a).await.expect("balance"));
    }
    let report = store.verify().await.expect("verify runs");
    store.close().await;
    (out, report)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dealer_killed_mid_hand_refunds_it_once_after_restart() {
    let bin = tokio::task::spawn_blocking(claw_dealer_bin).await.expect("build task");
    let tmp = tempfile::tempdir().expect("temp dir");
    let data = tmp.path().join("data");
    let ids: Vec<Arc<Identity>> = (1..=2u8).map(|i| Arc::new(Identity::from_seed([i; 32]))).collect();

    // 1. Start, seat two silent players, let the hand start.
    let d1 = DealerProc::start(&bin, &data, tmp.path().join("dealer-1.log"), &[]).await;
    let key = d1.key().to_owned();
    let invite = d1.invite();
    let mut players = Vec::new();
    for me in &ids {
        players.push(connect(&invite, me).await);
    }
    let mut debited: BTreeMap<Seat, u64> = BTreeMap::new();
    let mut seats: BTreeMap<PlayerId, Seat> = BTreeMap::new();
    for (i, p) in players.iter_mut().enumerate() {
        loop {
            match next_event(p).await {
                NodeEvent::HandStarted { players: hp, .. } => {
                    assert_eq!(hp.len(), 2);
                    for h in &hp {
                        // Balance available to the hand = welcome − commission.
                        assert_eq!(h.balance, Chips(WELCOME - COMMISSION), "{hp:?}");
                        seats.insert(h.id, h.seat);
                    }
                    if i > 0 {
                        break;
                    }
                }
                NodeEvent::Chips { moves, .. } if i == 0 => {
                    for m in moves {
                        if let (ChipOp::Debit, ChipParty::Seat(s)) = (m.op, m.party) {
                            *debited.entry(s).or_default() += m.amount.0;
                        }
                    }
                    // Both blinds are posted: the hand is under way.
                    if debited.len() == 2 {
                        break;
                    }
                }
                NodeEvent::HandEnded { .. } => panic!("the hand ended although nobody acted"),
                _ => {}
            }
        }
    }
    assert_eq!(debited.values().sum::<u64>(), 15, "small + big blind: {debited:?}");
    // The points server really holds the debits (commission + blind).
    for (p, me) in players.iter().zip(&ids) {
        let seat = seats[&me.id()];
        assert_eq!(balance(p).await, WELCOME - COMMISSION - debited[&seat]);
    }
    assert_eq!(open_journals(&data).len(), 1, "one hand in flight");

    // 2. kill -9 mid-hand.
    d1.kill();
    drop(players);
    let accounts: Vec<AccountId> = ids
        .iter()
        .map(|me| AccountId::from(me.id()))
        .chain([AccountId::new(format!("dealer:{key}")).expect("dealer account")])
        .collect();
    let (mid, report) = ledger(&data, &accounts).await;
    assert!(report.ok, "{report:?}");
    for (me, b) in ids.iter().zip(&mid) {
        assert_eq!(*b, WELCOME - COMMISSION - debited[&seats[&me.id()]], "acknowledged debits are durable");
    }
    assert_eq!(mid[2], 0, "the dealer is paid only when a hand settles");

    // 3. Restart on the same data dir; three players needed so that no new
    //    hand starts while the players check their balances.
    let d2 = DealerProc::start(&bin, &data, tmp.path().join("dealer-2.log"), &["--min-players", "3"]).await;
    assert_eq!(d2.key(), key, "the dealer key survives a restart");
    // Recovery runs before the node listens.
    assert!(open_journals(&data).is_empty(), "journal still open; log:\n{}", d2.log_text());
    let log = std::fs::read_to_string(data.join("rooms").join(ROOM).join("journal").join("chips.jsonl"))
        .expect("chips.jsonl");
    assert!(log.contains("voided-after-restart"), "{log}");
    let invite = d2.invite();
    for me in &ids {
        let p = connect(&invite, me).await;
        assert_eq!(balance(&p).await, WELCOME, "refunded to the pre-hand balance");
        tokio::time::timeout(WAIT, p.close()).await.expect("close timed out");
    }
    d2.kill();
    let (after, report) = ledger(&data, &accounts).await;
    assert!(report.ok, "{report:?}");
    assert_eq!(after, vec![WELCOME, WELCOME, 0], "every account back to its pre-hand balance");
    assert_eq!(report.total_debited, report.total_credited, "{report:?}");
    assert_eq!(report.total_balance, report.total_granted, "no chip created or lost: {report:?}");

    // 4. A second restart refunds nothing more.
    let d3 = DealerProc::start(&bin, &data, tmp.path().join("dealer-3.log"), &["--min-players", "3"]).await;
    assert_eq!(d3.key(), key, "the dealer key survives a second restart");
    d3.kill();
    let (again, report2) = ledger(&data, &accounts).await;
    assert!(report2.ok, "{report2:?}");
    assert_eq!(again, after, "a second restart moves nothing");
    assert_eq!(report2.head_seq, report.head_seq, "no new audit entry: {report2:?}");
    assert_eq!(report2.total_debited, report.total_debited);
    assert_eq!(report2.total_credited, report.total_credited);
    let log2 = std::fs::read_to_string(data.join("rooms").join(ROOM).join("journal").join("chips.jsonl"))
        .expect("chips.jsonl");
    assert_eq!(log2, log, "the journal is not touched again");
}
