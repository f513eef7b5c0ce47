//! Kill -9 of a `claw-points` child process in the middle of a run of
//! operations (also while the writer is committing groups of several
//! mutations), then a restart on the same database: every acknowledged
//! operation is there (its repeat is a replay of the same answer), the audit
//! log verifies, and no chip is created or lost. Also the binary's CLI.

use crate::common;

use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::{Client, TestDb};
use serde_json::{json, Value};
use tokio::process::Child;

const BIN: &str = env!("CARGO_BIN_EXE_claw-points");
const ACCOUNTS: u64 = 8;
const FUND: u64 = 10_000;

/// Starts the binary on 127.0.0.1:0 and reads the bound URL from its first stdout line.
async fn spawn_server(db_url: &str) -> (Child, String) {
    common::spawn_server(db_url, &[]).await
}

fn transfer(i: u64, worker: u64) -> Value {
    let from = (i + worker) % ACCOUNTS;
    let to = (i * 3 + worker + 1) % ACCOUNTS;
    let to = if to == from { (to + 1) % ACCOUNTS } else { to };
    let amount = 1 + (i * 7 + worker) % 40;
    let key = format!("w{worker}/op/{i}");
    if i.is_multiple_of(3) {
        // A settle batch: debit, credit and a commission to the house.
        json!({"key": key, "ops": [
            {"kind": "debit", "account": format!("p{from}"), "amount": amount + 1, "memo": "bet"},
            {"kind": "credit", "account": format!("p{to}"), "amount": amount, "memo": "win"},
            {"kind": "credit", "account": "house", "amount": 1, "memo": "rake"},
        ]})
    } else {
        json!({"key": key, "ops": [
            {"kind": "debit", "account": format!("p{from}"), "amount": amount},
            {"kind": "credit", "account": format!("p{to}"), "amount": amount},
        ]})
    }
}

/// The group commit's (commits, mutations) counters of a running server.
async fn group_counters(c: &Client) -> (u64, u64) {
    let r = c.get("/v1/stats").await;
    assert_eq!(r.status, 200, "{}", r.text);
    let g = &r.json["group_commit"];
    (g["commits"].as_u64().unwrap(), g["mutations"].as_u64().unwrap())
}

async fn kill_and_restart(db: TestDb) {
    crash_run(db, 6, false).await;
}

/// 48 concurrent clients keep the writer's queue full; the kill comes right
/// after two samples of the counters 20 ms apart show groups of several
/// mutations per commit, so it lands in the middle of such a group.
async fn kill_during_a_group(db: TestDb) {
    crash_run(db, 48, true).await;
}

async fn crash_run(db: TestDb, workers_n: u64, during_groups: bool) {
    let (mut child, url) = spawn_server(&db.url).await;
    let c = Client::new(url);
    for a in 0..ACCOUNTS {
        let r = c.grant(&format!("fund/{a}"), &format!("p{a}"), FUND).await;
        assert_eq!(r.status, 200, "{}", r.text);
    }

    // Workers send transfers until the server dies; record what was acknowledged.
    let acked: Arc<Mutex<Vec<(Value, String)>>> = Arc::default();
    let unacked: Arc<Mutex<Vec<Value>>> = Arc::default();
    let mut workers = Vec::new();
    for w in 0..workers_n {
        let (c, acked, unacked) = (c.clone(), acked.clone(), unacked.clone());
        workers.push(tokio::spawn(async move {
            for i in 0..10_000u64 {
                let body = transfer(i, w);
                match c.try_post("/v1/settle", &body).await {
                    Ok(r) if r.status == 200 => acked.lock().unwrap().push((body, r.text)),
                    Ok(r) => panic!("unexpected answer {}: {}", r.status, r.text),
                    Err(_) => {
                        unacked.lock().unwrap().push(body);
                        return;
                    }
                }
            }
        }));
    }
    // Kill -9 once enough operations are acknowledged (bounded wait).
    for _ in 0..1200 {
        if acked.lock().unwrap().len() >= 150 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(acked.lock().unwrap().len() >= 150, "the server acknowledged operations before the kill");
    if during_groups {
        let mut grouped = false;
        for _ in 0..200 {
            let (c0, m0) = group_counters(&c).await;
            tokio::time::sleep(Duration::from_millis(20)).await;
            let (c1, m1) = group_counters(&c).await;
            if c1 > c0 && (m1 - m0) >= 2 * (c1 - c0) {
                grouped = true;
                break;
            }
        }
        assert!(grouped, "the writer committed groups of several mutations under 48 clients");
    }
    child.start_kill().expect("SIGKILL");
    let status = child.wait().await.unwrap();
    assert!(!status.success(), "killed, not exited");
    for w in workers {
        w.await.unwrap();
    }
    let acked = std::mem::take(&mut *acked.lock().unwrap());
    let unacked = std::mem::take(&mut *unacked.lock().unwrap());

    // Restart on the same database.
    let (mut child, url) = spawn_server(&db.url).await;
    let c = Client::new(url);
    let v = c.verify().await;
    assert_eq!(v["ok"], true, "audit after the crash: {v}");
    let entries_after_crash = v["entries"].as_u64().unwrap();
    assert!(entries_after_crash >= ACCOUNTS + acked.len() as u64);
    assert_eq!(v["total_balance"].as_u64().unwrap(), ACCOUNTS * FUND, "no chip created or lost");

    // Every acknowledged operation is there: its repeat replays the same answer.
    for (body, text) in &acked {
        let r = c.post("/v1/settle", body.clone()).await;
        assert_eq!((r.status, &r.text), (200, text), "acknowledged op lost: {body}");
        assert!(r.replayed(), "acknowledged op was not recorded: {body}");
    }
    // Operations in flight at the kill either landed or not; retrying settles them exactly once.
    let mut landed = 0;
    for body in &unacked {
        let r = c.post("/v1/settle", body.clone()).await;
        assert_eq!(r.status, 200, "{}", r.text);
        if r.replayed() {
            landed += 1;
        }
    }
    assert_eq!(entries_after_crash, ACCOUNTS + acked.len() as u64 + landed);
    let v = c.verify().await;
    assert_eq!(v["ok"], true, "{v}");
    assert_eq!(v["entries"].as_u64().unwrap(), ACCOUNTS + (acked.len() + unacked.len()) as u64);
    assert_eq!(v["total_balance"].as_u64().unwrap(), ACCOUNTS * FUND);
    let mut sum = c.balance("house").await;
    for a in 0..ACCOUNTS {
        sum += c.balance(&format!("p{a}")).await;
    }
    assert_eq!(sum, ACCOUNTS * FUND);

    // Graceful stop on SIGTERM, and the offline verify subcommand agrees.
    let pid = child.id().expect("pid") as i32;
    let term = std::process::Command::new("kill").args(["-TERM", &pid.to_string()]).status().unwrap();
    assert!(term.success());
    let status = tokio::time::timeout(Duration::from_secs(30), child.wait()).await.expect("exits").unwrap();
    assert!(status.success(), "graceful exit on SIGTERM: {status}");
    let out = std::process::Command::new(BIN).args(["verify", "--db", &db.url]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["ok"], true);
}

on_both_backends!(kill_and_restart, kill_during_a_group);

#[test]
fn refuses_to_start_without_a_token() {
    let dir = tempfile::tempdir().unwrap();
    let url = claw_points::sqlite_url(&dir.path().join("p.db"));
    let out = std::process::Command::new(BIN)
        .args(["--db", &url, "--listen", "127.0.0.1:0"])
        .env_remove("CLAW_POINTS_TOKEN")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("no token"));
    let out = std::process::Command::new(BIN)
        .args(["--db", &url, "--listen", "127.0.0.1:0", "--token", "short"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("token"));
}

#[tokio::test]
async fn verify_subcommand_fails_on_tampering() {
    let db = common::sqlite_db();
    let s = common::start(&db, common::open_limits()).await;
    let c = Client::for_server(&s);
    c.grant("g", "alice", 10).await;
    c.grant("g2", "alice", 10).await;
    let pool = s.store().pool().clone();
    sqlx::query("DROP TRIGGER audit_log_no_update").execute(&pool).await.unwrap();
    sqlx::query("UPDATE audit_log SET body = REPLACE(body, '10', '99') WHERE seq = 1")
        .execute(&pool)
        .await
        .unwrap();
    s.shutdown().await.unwrap();
    let out = std::process::Command::new(BIN).args(["verify", "--db", &db.url]).output().unwrap();
    assert!(!out.status.success());
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["ok"], false);
    assert_eq!(report["problems"][0]["kind"], "hash-mismatch");
}
