//! Debit/credit operations per second over HTTP (through `HttpChips`, as the
//! dealer calls it) against a real server on 127.0.0.1, on SQLite and, when
//! CLAW_TEST_PG_URL is set, on PostgreSQL, with group commit (the default,
//! up to 64 mutations per commit) and without it (`max_group = 1`: one
//! commit per mutation). Every operation is durable (SQLite WAL +
//! synchronous=FULL; PostgreSQL synchronous_commit=on). Prints the load
//! average before and after each backend.
//!
//! `cargo bench -p claw-points --bench http_ops` (BENCH_OPS=N changes the
//! number of operations per run; default 2000).

use std::sync::Arc;
use std::time::{Duration, Instant};

use claw_chips::{AccountId, ChipProvider, HttpChips, HttpChipsConfig, IdempotencyKey};
use claw_points::{Limits, ServerConfig};
use claw_protocol::Chips;

#[path = "../tests/points/common/pg.rs"]
mod pg;

const TOKEN: &str = "bench-token-0123456789abcdef";

struct Figures {
    ops_per_sec: f64,
    p50: Duration,
    p99: Duration,
}

async fn run(chips: Arc<HttpChips>, run_id: &str, total: usize, concurrency: usize) -> Figures {
    let per_worker = total / concurrency;
    let start = Instant::now();
    let mut tasks = Vec::new();
    for w in 0..concurrency {
        let chips = chips.clone();
        let run_id = run_id.to_owned();
        tasks.push(tokio::spawn(async move {
            let account = AccountId::new(format!("bench-{w}")).unwrap();
            let mut lat = Vec::with_capacity(per_worker);
            for i in 0..per_worker {
                let key = IdempotencyKey::new(format!("{run_id}/{w}/{i}")).unwrap();
                let t = Instant::now();
                // Alternate bet and win so the balance stays put.
                if i.is_multiple_of(2) {
                    chips.debit(&key, &account, Chips(10), "bet").await.expect("debit");
                } else {
                    chips.credit(&key, &account, Chips(10), "win").await.expect("credit");
                }
                lat.push(t.elapsed());
            }
            lat
        }));
    }
    let mut lat = Vec::with_capacity(total);
    for t in tasks {
        lat.extend(t.await.unwrap());
    }
    let elapsed = start.elapsed();
    lat.sort_unstable();
    Figures {
        ops_per_sec: lat.len() as f64 / elapsed.as_secs_f64(),
        p50: lat[lat.len() / 2],
        p99: lat[(lat.len() * 99 / 100).min(lat.len() - 1)],
    }
}

fn loadavg() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "unknown".into())
}

async fn bench_backend(label: &str, db_url: String, total: usize, max_group: usize) {
    let server = claw_points::serve(ServerConfig {
        db_url,
        listen: "127.0.0.1:0".parse().unwrap(),
        token: TOKEN.into(),
        limits: Limits { rate_per_sec: 0, max_group, ..Limits::default() },
    })
    .await
    .expect("server");
    let chips = Arc::new(HttpChips::new(HttpChipsConfig::new(server.url(), TOKEN)).expect("client"));
    for w in 0..64 {
        let account = AccountId::new(format!("bench-{w}")).unwrap();
        chips
            .grant(&IdempotencyKey::new(format!("fund/{w}")).unwrap(), &account, Chips(1_000_000), "")
            .await
            .unwrap();
    }
    // Warm-up (connections, statement caches).
    run(chips.clone(), "warm", 64, 8).await;
    println!("{label:<10} max_group {max_group:>2}: load before {}", loadavg());
    for concurrency in [1, 8, 32, 64] {
        let before = server.store().group_stats();
        let f = run(chips.clone(), &format!("c{concurrency}"), total, concurrency).await;
        let after = server.store().group_stats();
        let per_commit =
            (after.mutations - before.mutations) as f64 / (after.commits - before.commits).max(1) as f64;
        println!(
            "{label:<10} max_group {max_group:>2} concurrency {concurrency:>2}: {:>7.0} ops/s   p50 {:>6.2} ms   p99 {:>6.2} ms   {per_commit:>5.1} ops/commit",
            f.ops_per_sec,
            f.p50.as_secs_f64() * 1e3,
            f.p99.as_secs_f64() * 1e3
        );
    }
    println!("{label:<10} max_group {max_group:>2}: load after {}", loadavg());
    let report = server.store().verify().await.expect("verify");
    assert!(report.ok, "audit log verifies after the benchmark");
    server.shutdown().await.expect("shutdown");
}

fn cpu_model() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .map(|l| l.split(':').nth(1).unwrap_or("").trim().to_owned())
        })
        .unwrap_or_else(|| "unknown".into())
}

fn main() {
    let total: usize = std::env::var("BENCH_OPS").ok().and_then(|s| s.parse().ok()).unwrap_or(2000);
    let cores = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
    println!("claw-points HTTP debit/credit benchmark: {total} ops per run; CPU {} x{cores}", cpu_model());
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    rt.block_on(async {
        let dir = tempfile::tempdir().unwrap();
        for max_group in [claw_points::DEFAULT_GROUP, 1] {
            let file = dir.path().join(format!("bench-{max_group}.db"));
            bench_backend("sqlite", claw_points::sqlite_url(&file), total, max_group).await;
        }
        if !pg::configured() {
            println!("postgres: not measured (set CLAW_TEST_PG_URL, scripts/start-postgres.sh)");
            return;
        }
        for max_group in [claw_points::DEFAULT_GROUP, 1] {
            let url = pg::fresh_database("http_ops postgres", "claw_bench").await;
            bench_backend("postgres", url, total, max_group).await;
        }
    });
}
