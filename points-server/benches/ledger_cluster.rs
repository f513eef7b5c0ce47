//! The cluster's ledger throughput (issue #33): 1, 2 and 4 real
//! `claw-points` processes on one PostgreSQL database, 64 concurrent clients
//! spread evenly over them, each alternating debits and credits of its own
//! account through `HttpChips`; once with one chain (`--shards 1
//! --writers 1`: every writer takes the same lock, the ledger before shards)
//! and once with the defaults (16 shard chains, 4 writers per process).
//! Prints ops/s, group sizes and the load average beside every figure; the
//! ledger verifies after every run.
//!
//! `CLAW_TEST_PG_URL=… cargo bench -p claw-points --bench ledger_cluster`
//! (BENCH_OPS=N operations per run, default 6000; BENCH_WRITERS=N writers
//! per process of the sharded runs, default 4).

use std::process::Stdio;
use std::sync::Arc;
use std::time::{Duration, Instant};

use claw_chips::{AccountId, ChipProvider, HttpChips, HttpChipsConfig, IdempotencyKey};
use claw_protocol::Chips;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

#[path = "../tests/points/common/pg.rs"]
mod pg;

const BIN: &str = env!("CARGO_BIN_EXE_claw-points");
const TOKEN: &str = "bench-token-0123456789abcdef";
const CLIENTS: usize = 64;

fn loadavg() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "unknown".into())
}

async fn spawn(db: &str, shards: &str, writers: &str) -> (Child, String) {
    let mut child = Command::new(BIN)
        .args([
            "--db",
            db,
            "--listen",
            "127.0.0.1:0",
            "--rate",
            "0",
            "--shards",
            shards,
            "--writers",
            writers,
        ])
        .env("CLAW_POINTS_TOKEN", TOKEN)
        .env("RUST_LOG", "warn")
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("spawn claw-points");
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let line = lines.next_line().await.unwrap().expect("listening line");
    (child, line.trim_start_matches("listening on ").trim().to_owned())
}

/// `total` operations by CLIENTS workers, worker w on server w % servers.
async fn run(chips: &[Arc<HttpChips>], run_id: &str, total: usize) -> f64 {
    let per = total / CLIENTS;
    let start = Instant::now();
    let mut tasks = Vec::new();
    for w in 0..CLIENTS {
        let c = chips[w % chips.len()].clone();
        let run_id = run_id.to_owned();
        tasks.push(tokio::spawn(async move {
            let account = AccountId::new(format!("bench-{w}")).unwrap();
            for i in 0..per {
                let key = IdempotencyKey::new(format!("{run_id}/{w}/{i}")).unwrap();
                if i % 2 == 0 {
                    c.debit(&key, &account, Chips(10), "bet").await.expect("debit");
                } else {
                    c.credit(&key, &account, Chips(10), "win").await.expect("credit");
                }
            }
        }));
    }
    for t in tasks {
        t.await.unwrap();
    }
    (per * CLIENTS) as f64 / start.elapsed().as_secs_f64()
}

async fn stats(url: &str) -> (u64, u64) {
    let v: serde_json::Value = reqwest::Client::new()
        .get(format!("{url}/v1/stats"))
        .bearer_auth(TOKEN)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let g = &v["group_commit"];
    (g["commits"].as_u64().unwrap_or(0), g["mutations"].as_u64().unwrap_or(0))
}

async fn cluster(servers: usize, shards: &str, writers: &str, total: usize) {
    let db = pg::fresh_database("ledger_cluster", "claw_bench").await;
    // The first process creates the ledger (its shard count), then the others join.
    let mut procs = vec![spawn(&db, shards, writers).await];
    for _ in 1..servers {
        procs.push(spawn(&db, shards, writers).await);
    }
    let chips: Vec<Arc<HttpChips>> = procs
        .iter()
        .map(|(_, url)| Arc::new(HttpChips::new(HttpChipsConfig::new(url.clone(), TOKEN)).expect("client")))
        .collect();
    for w in 0..CLIENTS {
        let account = AccountId::new(format!("bench-{w}")).unwrap();
        let key = IdempotencyKey::new(format!("fund/{w}")).unwrap();
        chips[0].grant(&key, &account, Chips(1_000_000), "").await.unwrap();
    }
    run(&chips, "warm", CLIENTS * 4).await;
    let before = loadavg();
    let mut s0 = (0, 0);
    for (_, url) in &procs {
        let s = stats(url).await;
        s0 = (s0.0 + s.0, s0.1 + s.1);
    }
    let ops = run(&chips, "run", total).await;
    let mut s1 = (0, 0);
    for (_, url) in &procs {
        let s = stats(url).await;
        s1 = (s1.0 + s.0, s1.1 + s.1);
    }
    let per_commit = (s1.1 - s0.1) as f64 / (s1.0 - s0.0).max(1) as f64;
    println!(
        "shards {shards:>2} writers {writers} x {servers} process(es): {ops:>6.0} ops/s  {per_commit:>5.1} ops/commit  load {before} -> {}",
        loadavg()
    );
    for (mut c, _) in procs {
        c.kill().await.ok();
    }
    let out = Command::new(BIN).args(["verify", "--db", &db]).output().await.unwrap();
    assert!(out.status.success(), "the ledger verifies: {}", String::from_utf8_lossy(&out.stderr));
}

fn main() {
    let total: usize = std::env::var("BENCH_OPS").ok().and_then(|s| s.parse().ok()).unwrap_or(6000);
    if !pg::configured() {
        println!("ledger_cluster: not measured (set CLAW_TEST_PG_URL, scripts/start-postgres.sh)");
        return;
    }
    let cores = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
    println!("claw-points cluster ledger: {total} ops per run, {CLIENTS} clients, {cores} cores");
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    rt.block_on(async {
        let writers = std::env::var("BENCH_WRITERS").unwrap_or_else(|_| "4".into());
        for (shards, writers) in [("1", "1"), ("16", writers.as_str())] {
            for servers in [1, 2, 4] {
                cluster(servers, shards, writers, total).await;
                tokio::time::sleep(Duration::from_secs(2)).await;
            }
        }
    });
}
