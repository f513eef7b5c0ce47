//! Kill the real `claw-dealer` binary mid-hand and restart it: the
//! unfinished hand is refunded — exactly once.
//!
//! The dealer runs with its default chips (the built-in points server on
//! SQLite in a temporary `--data-dir`), once settling per hand through its
//! escrow account (the default) and once per call (`--chips-settle call`).
//! Two SDK players join a Hold'em room and never act; once the hand has started and the blinds (and a
//! commission) are debited, the dealer gets SIGKILL. The restarted dealer
//! must give every account back its pre-hand balance, the points audit log
//! must verify, a second restart must move nothing more, and the dealer key
//! (the invite URL fragment) must stay the same.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use claw_chips::AccountId;
use claw_player::node::{NodeEvent, PlayerNode};
use claw_points::{sqlite_url, Store, VerifyReport};
use claw_protocol::messages::{ChipOp, ChipParty, QueryData, QueryType};
use claw_protocol::{Chips, Identity, PlayerId, Seat};

use crate::stop::{connect, next_event, DealerProc};
use crate::GUARD;

/// Chips granted once to every new player (`--welcome`).
const WELCOME: u64 = 10_000;
/// Commission per player per hand (debited at hand start, before the blinds).
const COMMISSION: u64 = 2;
const ROOM: &str = "texas-holdem";

/// A dealer on `data_dir` with the commission; `extra` flags appended.
async fn dealer(data_dir: &Path, log: PathBuf, extra: &[&str]) -> DealerProc {
    let mut c = DealerProc::command(data_dir, &log);
    c.args(["--commission", &COMMISSION.to_string()]).args(extra);
    DealerProc::start_with(c, log).await
}

async fn balance(p: &PlayerNode) -> u64 {
    match tokio::time::timeout(GUARD, p.query(QueryType::MyBalance)).await.expect("guard: query") {
        Ok(QueryData::MyBalance { balance }) => balance.0,
        other => panic!("my-balance: {other:?}"),
    }
}

fn open_journals(data: &Path) -> Vec<PathBuf> {
    files(&data.join("rooms").join(ROOM).join("journal").join("open"))
}

/// The escrow journal's running hands.
fn open_escrow(data: &Path) -> Vec<PathBuf> {
    files(&data.join("escrow-journal").join("open"))
}

fn files(dir: &Path) -> Vec<PathBuf> {
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

/// How the dealer settles with the points server.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Settle {
    /// The default: stakes in escrow at hand start, one payout at the end.
    Hand,
    /// `--chips-settle call`: every bet is a ledger write.
    Call,
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dealer_killed_mid_hand_refunds_it_once_after_restart() {
    killed_mid_hand(Settle::Hand).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dealer_settling_per_call_killed_mid_hand_refunds_it_once_after_restart() {
    killed_mid_hand(Settle::Call).await;
}

async fn killed_mid_hand(mode: Settle) {
    let mode_args: &[&str] = if mode == Settle::Call { &["--chips-settle", "call"] } else { &[] };
    let restart_args: Vec<&str> = mode_args.iter().copied().chain(["--min-players", "3"]).collect();
    let tmp = tempfile::tempdir().expect("temp dir");
    let data = tmp.path().join("data");
    let ids: Vec<Arc<Identity>> = (1..=2u8).map(|i| Arc::new(Identity::from_seed([i; 32]))).collect();

    // 1. Start, seat two silent players, let the hand start.
    let d1 = dealer(&data, tmp.path().join("dealer-1.log"), mode_args).await;
    let key = d1.key().to_owned();
    let invite = d1.invite();
    let mut players = Vec::new();
    for seed in 1..=2 {
        players.push(connect(&invite, seed).await);
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
    assert_eq!(open_escrow(&data).len(), usize::from(mode == Settle::Hand), "escrow journal");

    // 2. kill -9 mid-hand.
    d1.kill();
    drop(players);
    let accounts: Vec<AccountId> = ids
        .iter()
        .map(|me| AccountId::from(me.id()))
        .chain([AccountId::new(format!("dealer:{key}")).expect("dealer account")])
        .chain([AccountId::new(format!("escrow:{key}")).expect("escrow account")])
        .collect();
    let (mid, report) = ledger(&data, &accounts).await;
    assert!(report.ok, "{report:?}");
    for (me, b) in ids.iter().zip(&mid) {
        match mode {
            Settle::Call => {
                assert_eq!(
                    *b,
                    WELCOME - COMMISSION - debited[&seats[&me.id()]],
                    "acknowledged debits are durable"
                )
            }
            // Every chip of the hand sits in escrow; the bets are booked by the dealer.
            Settle::Hand => assert_eq!(*b, 0, "the whole balance is staked"),
        }
    }
    assert_eq!(mid[2], 0, "the dealer is paid only when a hand settles");
    let escrowed = if mode == Settle::Hand { 2 * WELCOME } else { 0 };
    assert_eq!(mid[3], escrowed, "the stakes are in escrow");

    // 3. Restart on the same data dir; three players needed so that no new
    //    hand starts while the players check their balances.
    let d2 = dealer(&data, tmp.path().join("dealer-2.log"), &restart_args).await;
    assert_eq!(d2.key(), key, "the dealer key survives a restart");
    // Recovery runs before the node listens.
    assert!(open_journals(&data).is_empty(), "journal still open; log:\n{}", d2.log_text());
    let log = std::fs::read_to_string(data.join("rooms").join(ROOM).join("journal").join("chips.jsonl"))
        .expect("chips.jsonl");
    let outcome = if mode == Settle::Hand { "reconciled-by-provider" } else { "voided-after-restart" };
    assert!(log.contains(outcome), "{log}");
    assert!(open_escrow(&data).is_empty(), "escrow journal still open; log:\n{}", d2.log_text());
    let invite = d2.invite();
    for seed in 1..=2 {
        let p = connect(&invite, seed).await;
        assert_eq!(balance(&p).await, WELCOME, "refunded to the pre-hand balance");
        tokio::time::timeout(GUARD, p.close()).await.expect("guard: close");
    }
    d2.kill();
    let (after, report) = ledger(&data, &accounts).await;
    assert!(report.ok, "{report:?}");
    assert_eq!(after, vec![WELCOME, WELCOME, 0, 0], "every account back to its pre-hand balance");
    assert_eq!(report.total_debited, report.total_credited, "{report:?}");
    assert_eq!(report.total_balance, report.total_granted, "no chip created or lost: {report:?}");

    // 4. A second restart refunds nothing more.
    let d3 = dealer(&data, tmp.path().join("dealer-3.log"), &restart_args).await;
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
