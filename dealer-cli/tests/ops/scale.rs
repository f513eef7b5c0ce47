//! Past one machine: two `claw-dealer` nodes, each with its own points
//! server, and both points servers on one PostgreSQL ledger. Two rooms on
//! each node play at the same time; then every pair of players moves to a
//! room on the other node and plays again. Afterwards the ledger verifies,
//! every account's balance is its welcome grant plus exactly the movements
//! the two dealers journaled for it, every journaled operation is in the
//! ledger exactly once, the ledger holds no operation that neither dealer
//! journaled, and each player's welcome grant was applied once although
//! both nodes granted it.
//!
//! The points servers run in this test process (`claw_points::serve`, what
//! the `claw-points` binary runs), each with its own connection pool and
//! writer; the dealers are the real binary.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Arc;

use claw_player::bots::strategy;
use claw_player::node::{NodeConfig as PlayerConfig, PlayerNode};
use claw_player::play::{play_bot, BotReport};
use claw_player::Invite;
use claw_points::{AuditEntry, RunningServer, ServerConfig};
use claw_protocol::Identity;
use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;
use serde_json::Value;

use crate::pg::fresh_database;
use crate::stop::DealerProc;
use crate::GUARD;

const TOKEN: &str = "scale-test-token-0123456789";
const WELCOME: u64 = 10_000;
/// Hands each pair plays in each room it sits in.
const HANDS: u64 = 3;

async fn points_server(db_url: &str) -> RunningServer {
    let mut cfg = ServerConfig::new(db_url, "127.0.0.1:0".parse().unwrap(), TOKEN);
    cfg.limits.rate_per_sec = 0;
    claw_points::serve(cfg).await.expect("points server on the shared ledger")
}

/// A dealer node with rooms `<prefix>1` and `<prefix>2` on the points
/// server at `chips_url`; returns it and the invite of each room.
async fn dealer(dir: &Path, prefix: &str, chips_url: &str) -> (DealerProc, Vec<Invite>) {
    std::fs::create_dir_all(dir).unwrap();
    let rooms = dir.join("rooms.toml");
    let mut file = String::new();
    for i in 1..=2 {
        file.push_str(&format!(
            "[[room]]\nid = \"{prefix}{i}\"\ngame = \"texas-holdem\"\naction_timeout = \"5s\"\nbetween_hands = \"200ms\"\n\n"
        ));
    }
    std::fs::write(&rooms, file).unwrap();
    let log = dir.join("dealer.log");
    let mut c = Command::new(env!("CARGO_BIN_EXE_claw-dealer"));
    c.arg("--rooms")
        .arg(&rooms)
        .args(["--listen", "127.0.0.1:0", "--http-listen", "off", "--shutdown-grace", "1s"])
        .args(["--chips", "http", "--chips-url", chips_url, "--chips-token", TOKEN])
        .args(["--welcome", &WELCOME.to_string()])
        .arg("--data-dir")
        .arg(dir.join("data"))
        .env("RUST_LOG", "claw_dealer=info,claw_engine=info")
        .stdin(Stdio::null())
        .stderr(Stdio::from(std::fs::File::create(&log).unwrap()));
    let proc = DealerProc::start_with(c, log).await;
    // The first line names room 1; room 2 is the same node under another path.
    let (base, key) = proc.url.rsplit_once('#').expect("key fragment");
    let (origin, _) = base.rsplit_once('/').expect("room path");
    let invites = (1..=2)
        .map(|i| Invite::parse(&format!("{origin}/{prefix}{i}#{key}")).expect("invite parses"))
        .collect();
    (proc, invites)
}

/// Seats the players of `seeds` in `invite`; each plays HANDS hands and leaves.
async fn play_pair(invite: Invite, seeds: [u8; 2]) -> Vec<BotReport> {
    let mut tasks = Vec::new();
    for seed in seeds {
        let invite = invite.clone();
        tasks.push(tokio::spawn(async move {
            let me = Arc::new(Identity::from_seed([seed; 32]));
            let mut node =
                tokio::time::timeout(GUARD, PlayerNode::connect(&invite, me, PlayerConfig::default()))
                    .await
                    .expect("guard: connect")
                    .expect("player connects");
            let s = strategy("texas-holdem", "simple").expect("strategy");
            let mut rng = ChaCha20Rng::seed_from_u64(u64::from(seed));
            let r = play_bot(&mut node, s.as_ref(), &mut rng, Some(HANDS), |_| {}).await.expect("bot plays");
            node.close().await;
            r
        }));
    }
    let mut out = Vec::new();
    for t in tasks {
        out.push(tokio::time::timeout(GUARD, t).await.expect("guard: bot").expect("bot task"));
    }
    out
}

/// Every pair in its room at once (all four rooms, both nodes, concurrently).
async fn play_round(seating: Vec<(Invite, [u8; 2])>) {
    let tasks: Vec<_> = seating.into_iter().map(|(i, s)| tokio::spawn(play_pair(i, s))).collect();
    for t in tasks {
        for r in t.await.expect("pair task") {
            assert!(r.hands >= HANDS, "{r:?}");
            assert!(r.failures.is_empty(), "audit failures: {:?}", r.failures);
        }
    }
}

/// One applied chip operation as a dealer journaled it.
#[derive(Debug, Clone, PartialEq, Eq)]
struct JournaledOp {
    kind: String,
    account: String,
    amount: u64,
}

/// The operations a node's journals record as applied (`done`), by key.
fn journaled_ops(data: &Path) -> BTreeMap<String, JournaledOp> {
    let mut out = BTreeMap::new();
    let rooms = std::fs::read_dir(data.join("rooms")).expect("rooms dir");
    for room in rooms {
        let journal = room.unwrap().path().join("journal");
        let open: Vec<_> = std::fs::read_dir(journal.join("open")).map(|d| d.collect()).unwrap_or_default();
        assert!(open.is_empty(), "hands left open in {}: {open:?}", journal.display());
        let Ok(text) = std::fs::read_to_string(journal.join("chips.jsonl")) else { continue };
        // Intent lines carry the op; status lines (by n, within the hand) its outcome.
        let mut intents: HashMap<u64, (String, JournaledOp)> = HashMap::new();
        for line in text.lines() {
            let v: Value = serde_json::from_str(line).expect("journal line is JSON");
            match v["kind"].as_str() {
                Some("begin") => intents.clear(),
                Some("intent") => {
                    let op = &v["op"];
                    let j = JournaledOp {
                        kind: op["kind"].as_str().unwrap().to_owned(),
                        account: op["account"].as_str().unwrap().to_owned(),
                        amount: op["amount"].as_u64().unwrap(),
                    };
                    intents.insert(op["n"].as_u64().unwrap(), (op["key"].as_str().unwrap().to_owned(), j));
                }
                Some("status") if v["status"] == "done" => {
                    let (key, op) =
                        intents.get(&v["n"].as_u64().unwrap()).expect("status of a known op").clone();
                    assert!(out.insert(key.clone(), op).is_none(), "key {key} journaled as done twice");
                }
                _ => {}
            }
        }
    }
    out
}

async fn audit_log(s: &RunningServer) -> Vec<AuditEntry> {
    let mut all = Vec::new();
    loop {
        let page = s.store().audit_page(all.last().map_or(0, |e: &AuditEntry| e.seq), 1000).await.unwrap();
        if page.is_empty() {
            return all;
        }
        all.extend(page);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(not(claw_pg), ignore = "skipped: PostgreSQL (set CLAW_TEST_PG_URL, scripts/start-postgres.sh)")]
async fn two_nodes_two_points_servers_one_postgres_ledger() {
    let db = fresh_database("scale::two_nodes_two_points_servers_one_postgres_ledger", "claw_scale").await;
    let tmp = tempfile::tempdir().unwrap();
    let (pa, pb) = (points_server(&db).await, points_server(&db).await);
    let (na, a) = dealer(&tmp.path().join("a"), "a", &pa.url()).await;
    let (nb, b) = dealer(&tmp.path().join("b"), "b", &pb.url()).await;

    // Round 1: pairs at home; round 2: every pair on the other node.
    let pairs = [[11u8, 12], [21, 22], [31, 32], [41, 42]];
    play_round(vec![
        (a[0].clone(), pairs[0]),
        (a[1].clone(), pairs[1]),
        (b[0].clone(), pairs[2]),
        (b[1].clone(), pairs[3]),
    ])
    .await;
    play_round(vec![
        (b[0].clone(), pairs[0]),
        (b[1].clone(), pairs[1]),
        (a[0].clone(), pairs[2]),
        (a[1].clone(), pairs[3]),
    ])
    .await;
    for n in [na, nb] {
        let (status, log) = n.terminate().await;
        assert!(status.success(), "dealer exit {status}: {log}");
    }

    // The ledger as both points servers see it.
    let report = pa.store().verify().await.unwrap();
    assert!(report.ok, "{:?}", report.problems);
    assert_eq!(report.total_balance, report.total_granted, "no chip created or lost");
    let report_b = pb.store().verify().await.unwrap();
    assert_eq!((report_b.ok, &report_b.head_hash), (true, &report.head_hash));
    let both = [pa.store().group_stats(), pb.store().group_stats()];
    assert!(both.iter().all(|g| g.mutations > 0), "both points servers wrote: {both:?}");

    let log = audit_log(&pa).await;
    assert_eq!(log.len() as u64, report.entries);
    let mut journaled = journaled_ops(&tmp.path().join("a/data"));
    let from_b = journaled_ops(&tmp.path().join("b/data"));
    let (hands_a, hands_b) = (journaled.len(), from_b.len());
    assert!(hands_a > 0 && hands_b > 0, "both nodes moved chips");
    for (k, op) in from_b {
        assert!(journaled.insert(k.clone(), op).is_none(), "key {k} on both nodes");
    }

    // Welcome grants: one per player, though both nodes seated (and granted) each.
    let players: Vec<String> = pairs
        .iter()
        .flatten()
        .map(|s| claw_chips::AccountId::from(Identity::from_seed([*s; 32]).id()).to_string())
        .collect();
    let mut balance: HashMap<String, i128> = HashMap::new();
    for p in &players {
        let key = format!("welcome/{p}");
        let n = log.iter().filter(|e| e.key == key).count();
        assert_eq!(n, 1, "{key}: {n} audit entries");
        balance.insert(p.clone(), i128::from(WELCOME));
    }

    // Every journaled operation is in the ledger once, with the same movement;
    // the ledger has nothing else but grants.
    let mut seen = HashMap::new();
    for e in &log {
        assert!(seen.insert(e.key.clone(), e.seq).is_none(), "key {} applied twice", e.key);
        if e.op == "grant" {
            continue;
        }
        let op =
            journaled.remove(&e.key).unwrap_or_else(|| panic!("ledger entry {} no dealer journaled", e.key));
        assert_eq!(e.status, 200, "{}: {}", e.key, e.answer);
        let body: Value = serde_json::from_str(&e.body).unwrap();
        let mv = &body["entries"][0];
        assert_eq!(
            (mv["kind"].as_str().unwrap(), mv["account"].as_str().unwrap(), mv["amount"].as_u64().unwrap()),
            (op.kind.as_str(), op.account.as_str(), op.amount),
            "{}",
            e.key
        );
        let sign = if op.kind == "debit" { -1 } else { 1 };
        *balance.entry(op.account.clone()).or_default() += sign * i128::from(op.amount);
    }
    assert!(journaled.is_empty(), "journaled as done but not in the ledger: {journaled:?}");

    // Balances: welcome + what the dealers journaled, exactly.
    for p in &players {
        let id = claw_chips::AccountId::new(p.as_str()).unwrap();
        let have = pa.store().balance(&id).await.unwrap();
        assert_eq!(i128::from(have), balance[p], "balance of {p}");
    }
    eprintln!(
        "scale: {} ledger entries, {hands_a} ops journaled on node a, {hands_b} on node b, group commit {both:?}",
        log.len()
    );
    pa.shutdown().await.unwrap();
    pb.shutdown().await.unwrap();
}
