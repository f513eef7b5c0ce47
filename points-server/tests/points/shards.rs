//! The sharded ledger (issue #33): several real `claw-points` processes
//! write one database at once, then every shard chain verifies, alone and
//! together; tampering with one shard (an edited, dropped or reordered row,
//! a cross-shard entry moved out of a shard) fails verification naming the
//! shard; a ledger written before shards opens, verifies and grows as shard
//! 0 of 1.

use crate::api::tamper;
use crate::common;

use std::collections::BTreeSet;

use claw_points::audit::{
    entry_hash, entry_hash_v3, links_text, parse_links, shard_of, AuditBody, AuditMove,
};
use claw_points::store::{Move, Mutation, OpName};
use claw_points::{EntryKind, Limits, StoreOptions};
use common::{open_limits, start, Client, TestDb};
use serde_json::{json, Value};
use tokio::process::{Child, Command};

const BIN: &str = env!("CARGO_BIN_EXE_claw-points");
const SHARDS: u32 = 8;
const ACCOUNTS: u64 = 24;
const FUND: u64 = 10_000;

/// Starts the binary with `--shards SHARDS` on 127.0.0.1:0; returns it and its URL.
async fn spawn_server(db_url: &str) -> (Child, String) {
    common::spawn_server(db_url, &["--shards", &SHARDS.to_string(), "--writers", "4"]).await
}

/// Operation `i` of worker `w`: a two- or three-account settle (most touch
/// several shards), or a single debit.
fn operation(i: u64, w: u64) -> (&'static str, Value) {
    let from = (i * 5 + w) % ACCOUNTS;
    let to = (i * 3 + w + 1) % ACCOUNTS;
    let to = if to == from { (to + 1) % ACCOUNTS } else { to };
    let amount = 1 + (i * 7 + w) % 40;
    let key = format!("w{w}/op/{i}");
    match i % 4 {
        0 => {
            ("/v1/debit", json!({"key": key, "account": format!("p{from}"), "amount": amount, "memo": "fee"}))
        }
        1 => (
            "/v1/settle",
            json!({"key": key, "ops": [
                {"kind": "debit", "account": format!("p{from}"), "amount": amount + 1, "memo": "bet"},
                {"kind": "credit", "account": format!("p{to}"), "amount": amount, "memo": "win"},
                {"kind": "credit", "account": "house", "amount": 1, "memo": "rake"},
            ]}),
        ),
        _ => (
            "/v1/settle",
            json!({"key": key, "ops": [
                {"kind": "debit", "account": format!("p{from}"), "amount": amount},
                {"kind": "credit", "account": format!("p{to}"), "amount": amount},
            ]}),
        ),
    }
}

/// Three `claw-points` processes on one database, 24 clients spreading
/// cross-shard settles over them, some keys sent to two servers at once and
/// one key reused for different accounts on two servers at once; then the
/// ledger verifies from every server, shard by shard and together.
async fn several_servers_one_ledger(db: TestDb) {
    let mut servers = Vec::new();
    for _ in 0..3 {
        servers.push(spawn_server(&db.url).await);
    }
    let clients: Vec<Client> = servers.iter().map(|(_, url)| Client::new(url.clone())).collect();
    for a in 0..ACCOUNTS {
        let r = clients[(a % 3) as usize].grant(&format!("fund/p{a}"), &format!("p{a}"), FUND).await;
        assert_eq!(r.status, 200, "{}", r.text);
    }

    let mut tasks = Vec::new();
    for w in 0..ACCOUNTS {
        let clients = clients.clone();
        tasks.push(tokio::spawn(async move {
            let mut answered = 0u64;
            for i in 0..30 {
                let (path, body) = operation(i, w);
                let (a, b) = (&clients[((w + i) % 3) as usize], &clients[((w + i + 1) % 3) as usize]);
                if i % 5 == 0 {
                    // The same request to two servers at once: applied once, one answer.
                    let (x, y) = tokio::join!(a.post(path, body.clone()), b.post(path, body));
                    assert_eq!((x.text.as_str(), x.status), (y.text.as_str(), y.status), "{path}");
                    assert!(x.replayed() != y.replayed(), "exactly one is a replay");
                    assert!(matches!(x.status, 200 | 409), "{}", x.text);
                } else {
                    let r = a.post(path, body).await;
                    assert!(matches!(r.status, 200 | 409), "{}", r.text);
                }
                answered += 1;
            }
            answered
        }));
    }
    // One key, two different requests (accounts of different shards), two servers at once.
    let (p_a, p_b) = distinct_shard_accounts(SHARDS);
    let (x, y) = tokio::join!(
        clients[0].post("/v1/debit", json!({"key": "reused", "account": p_a, "amount": 1})),
        clients[1].post("/v1/debit", json!({"key": "reused", "account": p_b, "amount": 1})),
    );
    let mut codes = [x.status, y.status];
    codes.sort();
    assert_eq!(codes, [200, 409], "{} / {}", x.text, y.text);
    assert!(x.code() == "key-reused" || y.code() == "key-reused", "{} / {}", x.text, y.text);
    let mut answered = 0;
    for t in tasks {
        answered += t.await.unwrap();
    }

    for c in &clients {
        let (_, mutations) = group_counters(c).await;
        assert!(mutations > 0, "every server wrote");
    }
    let report = clients[0].verify().await;
    assert_eq!(report["ok"], true, "{report}");
    assert_eq!(report["shard_count"], SHARDS);
    assert_eq!(report["entries"], ACCOUNTS + answered + 1, "{report}");
    let n = |k: &str| report[k].as_u64().unwrap();
    let conserved = n("total_granted") + n("total_credited") - n("total_debited");
    assert_eq!(n("total_balance"), conserved, "no chip created or lost: {report}");
    for c in &clients[1..] {
        let v = c.verify().await;
        assert_eq!((v["ok"].clone(), v["head_hash"].clone()), (json!(true), report["head_hash"].clone()));
    }
    let mut per_shard = 0;
    for s in 0..SHARDS {
        let v = clients[(s % 3) as usize].get(&format!("/v1/audit/verify?shard={s}")).await;
        assert_eq!(
            (v.status, v.json["ok"].clone(), v.json["shard"].clone()),
            (200, json!(true), json!(s)),
            "{}",
            v.text
        );
        per_shard += v.json["entries"].as_u64().unwrap();
    }
    let log = audit_log(&clients[0]).await;
    let cross = log.iter().filter(|e| e["links"].as_str().unwrap().contains(',')).count();
    assert!(cross > 100, "most settles span shards: {cross}");
    assert!(per_shard > log.len() as u64, "a cross-shard entry is in each of its shards' chains");

    for (mut child, _) in servers {
        child.kill().await.unwrap();
    }
    let out = Command::new(BIN).args(["verify", "--db", &db.url]).output().await.unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
}

async fn group_counters(c: &Client) -> (u64, u64) {
    let r = c.get("/v1/stats").await;
    let g = &r.json["group_commit"];
    (g["commits"].as_u64().unwrap(), g["mutations"].as_u64().unwrap())
}

async fn audit_log(c: &Client) -> Vec<Value> {
    let mut all: Vec<Value> = Vec::new();
    loop {
        let after = all.last().map_or(0, |e| e["seq"].as_u64().unwrap());
        let page = c.get(&format!("/v1/audit?after={after}&limit=1000")).await;
        let entries = page.json["entries"].as_array().unwrap().clone();
        if entries.is_empty() {
            return all;
        }
        all.extend(entries);
    }
}

/// Two of p0, p1, … whose chains are different shards of `shards`.
fn distinct_shard_accounts(shards: u32) -> (String, String) {
    let first = shard_of("p0", shards);
    let other = (1..).map(|i| format!("p{i}")).find(|a| shard_of(a, shards) != first).unwrap();
    ("p0".into(), other)
}

/// A four-shard ledger of three accounts in three different shards: a
/// cross-shard settle, single-shard debits, another cross-shard settle.
async fn small_ledger(db: &TestDb) -> (claw_points::RunningServer, Client, [String; 3]) {
    let s = start(db, Limits { shards: Some(4), ..open_limits() }).await;
    let c = Client::for_server(&s);
    let mut names: Vec<String> = Vec::new();
    let mut seen = BTreeSet::new();
    for i in 0.. {
        let n = format!("p{i}");
        if seen.insert(shard_of(&n, 4)) {
            names.push(n);
        }
        if names.len() == 3 {
            break;
        }
    }
    let [a, b, x] = [names[0].clone(), names[1].clone(), names[2].clone()];
    for n in [&a, &b, &x] {
        assert_eq!(c.grant(&format!("g/{n}"), n, 100).await.status, 200);
    }
    let settle = |key: &str, from: &str, to: &str, amount: u64| {
        json!({"key": key, "ops": [
            {"kind": "debit", "account": from, "amount": amount},
            {"kind": "credit", "account": to, "amount": amount},
        ]})
    };
    assert_eq!(c.post("/v1/settle", settle("x1", &a, &b, 10)).await.status, 200);
    for (key, amount) in [("s1", 5), ("s2", 1)] {
        let r = c.post("/v1/debit", json!({"key": key, "account": a, "amount": amount})).await;
        assert_eq!(r.status, 200, "{}", r.text);
    }
    assert_eq!(c.post("/v1/settle", settle("x2", &b, &x, 2)).await.status, 200);
    assert_eq!(c.verify().await["ok"], true);
    (s, c, [a, b, x])
}

fn problems(v: &Value) -> Vec<(String, Option<u64>)> {
    v["problems"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (p["kind"].as_str().unwrap().to_owned(), p["shard"].as_u64()))
        .collect()
}

async fn tampered_shards_fail_verify(db: TestDb) {
    let fresh = || async {
        match db.backend {
            "postgres" => common::pg_db("shards-tamper").await,
            _ => common::sqlite_db(),
        }
    };
    let sh = |n: &str| u64::from(shard_of(n, 4));

    // An edited row of one shard: its shard fails, a shard it is not in verifies alone.
    let db2 = fresh().await;
    let (s, c, [a, _b, x]) = small_ledger(&db2).await;
    tamper(
        &db2,
        s.store().pool(),
        "UPDATE audit_log SET body = REPLACE(body, '\"amount\":5,', '\"amount\":4,') WHERE idem_key = 's1'",
    )
    .await;
    let v = c.verify().await;
    assert!(problems(&v).contains(&("hash-mismatch".into(), Some(sh(&a)))), "{v}");
    let alone = c.get(&format!("/v1/audit/verify?shard={}", sh(&a))).await.json;
    assert!(problems(&alone).contains(&("hash-mismatch".into(), Some(sh(&a)))), "{alone}");
    assert_eq!(c.get(&format!("/v1/audit/verify?shard={}", sh(&x))).await.json["ok"], true);
    s.shutdown().await.unwrap();

    // A dropped row: a gap in its shard.
    let db2 = fresh().await;
    let (s, c, [a, ..]) = small_ledger(&db2).await;
    tamper(&db2, s.store().pool(), "DELETE FROM audit_log WHERE idem_key = 's1'").await;
    let v = c.verify().await;
    assert!(problems(&v).contains(&("seq-gap".into(), Some(sh(&a)))), "{v}");
    s.shutdown().await.unwrap();

    // Two rows of one shard reordered (their operation ids swapped).
    let db2 = fresh().await;
    let (s, c, [a, ..]) = small_ledger(&db2).await;
    let pool = s.store().pool().clone();
    let log = audit_log(&c).await;
    let seq_of = |k: &str| log.iter().find(|e| e["key"] == k).unwrap()["seq"].as_u64().unwrap();
    let (s1, s2) = (seq_of("s1"), seq_of("s2"));
    for sql in [
        "UPDATE audit_log SET seq = 1000000 WHERE idem_key = 's1'".to_owned(),
        format!("UPDATE audit_log SET seq = {s1} WHERE idem_key = 's2'"),
        format!("UPDATE audit_log SET seq = {s2} WHERE idem_key = 's1'"),
    ] {
        tamper(&db2, &pool, &sql).await;
    }
    let order: Vec<String> =
        audit_log(&c).await.iter().map(|e| e["key"].as_str().unwrap().to_owned()).collect();
    assert!(order.iter().position(|k| k == "s2") < order.iter().position(|k| k == "s1"), "{order:?}");
    let v = c.verify().await;
    assert!(problems(&v).contains(&("seq-gap".into(), Some(sh(&a)))), "{v}");
    s.shutdown().await.unwrap();

    // A cross-shard entry taken out of one of its shards, its hash recomputed
    // by the attacker: the shard it left has a gap, and the entry's accounts
    // no longer match its shards.
    let db2 = fresh().await;
    let (s, c, [a, b, _]) = small_ledger(&db2).await;
    let log = audit_log(&c).await;
    let e: claw_points::AuditEntry =
        serde_json::from_value(log.iter().find(|e| e["key"] == "x1").unwrap().clone()).unwrap();
    let kept: Vec<_> =
        parse_links(&e.links).unwrap().into_iter().filter(|l| u64::from(l.shard) == sh(&a)).collect();
    let links = links_text(&kept);
    let hash = entry_hash_v3(e.fields(), &links).unwrap();
    let sql = format!(
        "UPDATE audit_log SET links = '{links}', hash = '{hash}', prev_hash = '{}' WHERE idem_key = 'x1'",
        kept[0].prev_hash
    );
    tamper(&db2, s.store().pool(), &sql).await;
    let v = c.verify().await;
    let found = problems(&v);
    assert!(found.iter().any(|(k, _)| k == "shard-mismatch"), "{v}");
    assert!(found.iter().any(|(k, s)| k == "seq-gap" && *s == Some(sh(&b))), "{v}");
    assert!(!found.iter().any(|(k, _)| k == "hash-mismatch"), "the attacker's hash is right: {v}");
    let alone = c.get(&format!("/v1/audit/verify?shard={}", sh(&b))).await.json;
    assert_eq!(alone["ok"], false, "{alone}");
    s.shutdown().await.unwrap();

    // A consistent rewrite of a shard's tail (entry, ledger rows and head,
    // rehashed) leaves every chain valid; a checkpoint taken before it pins
    // the old history.
    let db2 = fresh().await;
    let (s, c, [a, ..]) = small_ledger(&db2).await;
    let cp = c.post("/v1/audit/checkpoint", json!({})).await;
    assert_eq!((cp.status, cp.json["checkpoint"]["id"].clone()), (200, json!(1)), "{}", cp.text);
    assert_eq!(
        c.post("/v1/audit/checkpoint", json!({})).await.json["checkpoint"],
        Value::Null,
        "no head moved"
    );
    let v = c.verify().await;
    assert_eq!((v["ok"].clone(), v["checkpoints"].clone()), (json!(true), json!(1)), "{v}");
    assert_eq!(v["head_hash"], cp.json["checkpoint"]["head_hash"]);
    let log = audit_log(&c).await;
    let mut e: claw_points::AuditEntry =
        serde_json::from_value(log.iter().find(|e| e["key"] == "s2").unwrap().clone()).unwrap();
    e.created_ms += 1;
    let hash = entry_hash_v3(e.fields(), &e.links).unwrap();
    for sql in [
        format!("UPDATE audit_log SET created_ms = {}, hash = '{hash}' WHERE idem_key = 's2'", e.created_ms),
        format!("UPDATE ledger SET created_ms = {} WHERE audit_seq = {}", e.created_ms, e.seq),
        format!("UPDATE audit_heads SET hash = '{hash}' WHERE shard = {}", sh(&a)),
    ] {
        tamper(&db2, s.store().pool(), &sql).await;
    }
    let v = c.verify().await;
    assert_eq!(problems(&v), vec![("checkpoint-mismatch".to_owned(), Some(sh(&a)))], "{v}");
    s.shutdown().await.unwrap();
}

/// Writes a ledger as the version before shards did: schema 0001 only, one
/// chain, layout v2 hashes.
async fn legacy_ledger(db: &TestDb) {
    use sqlx::migrate::{Migration, MigrationType, Migrator};
    use sqlx::SqlSafeStr;
    sqlx::any::install_default_drivers();
    let init = match db.backend {
        "postgres" => include_str!("../../migrations/postgres/0001_init.sql"),
        _ => include_str!("../../migrations/sqlite/0001_init.sql"),
    };
    let pool = sqlx::AnyPool::connect(&db.url).await.unwrap();
    Migrator::with_migrations(vec![Migration::new(
        1,
        "init".into(),
        MigrationType::Simple,
        init.into_sql_str(),
        false,
    )])
    .run(&pool)
    .await
    .unwrap();
    let alice = claw_chips::AccountId::new("alice").unwrap();
    let mut prev = claw_points::audit::GENESIS_HASH.to_owned();
    let mut balance = 0u64;
    for (seq, key, kind, amount) in [(1u64, "g", EntryKind::Grant, 100u64), (2, "d", EntryKind::Debit, 10)] {
        balance = if kind == EntryKind::Debit { balance - amount } else { balance + amount };
        let op = if kind == EntryKind::Debit { OpName::Debit } else { OpName::Grant };
        let m = Mutation { op, moves: vec![Move { kind, account: alice.clone(), amount, memo: "m".into() }] };
        let mv = AuditMove { account: "alice".into(), kind, amount, balance, memo: "m".into() };
        let body = serde_json::to_string(&AuditBody { entries: vec![mv] }).unwrap();
        let answer = format!(r#"{{"account":"alice","balance":{balance},"key":"{key}","seq":{seq}}}"#);
        let fp = m.fingerprint();
        let fields = claw_points::audit::EntryFields {
            seq,
            prev_hash: &prev,
            created_ms: 1000,
            op: op.as_str(),
            key,
            body: &body,
            fingerprint: &fp,
            status: 200,
            answer: &answer,
        };
        let hash = entry_hash(fields).unwrap();
        let (seq, amount, balance) = (seq as i64, amount as i64, balance as i64);
        sqlx::query("INSERT INTO audit_log (seq, op, idem_key, body, created_ms, prev_hash, hash) VALUES ($1, $2, $3, $4, 1000, $5, $6)")
            .bind(seq).bind(op.as_str()).bind(key).bind(body.as_str()).bind(prev.as_str()).bind(hash.as_str())
            .execute(&pool).await.unwrap();
        sqlx::query("INSERT INTO ledger (audit_seq, idx, account, kind, amount, balance_after, memo, created_ms) VALUES ($1, 0, 'alice', $2, $3, $4, 'm', 1000)")
            .bind(seq).bind(kind.as_str()).bind(amount).bind(balance)
            .execute(&pool).await.unwrap();
        sqlx::query("INSERT INTO idempotency (idem_key, fingerprint, status, response, created_ms) VALUES ($1, $2, 200, $3, 1000)")
            .bind(key).bind(fp.as_str()).bind(answer.as_str())
            .execute(&pool).await.unwrap();
        sqlx::query("DELETE FROM accounts").execute(&pool).await.unwrap();
        sqlx::query("INSERT INTO accounts (id, balance, updated_seq) VALUES ('alice', $1, $2)")
            .bind(balance)
            .bind(seq)
            .execute(&pool)
            .await
            .unwrap();
        sqlx::query("UPDATE audit_head SET seq = $1, hash = $2 WHERE id = 1")
            .bind(seq)
            .bind(hash.as_str())
            .execute(&pool)
            .await
            .unwrap();
        prev = hash;
    }
    pool.close().await;
}

async fn ledger_before_shards_keeps_working(db: TestDb) {
    legacy_ledger(&db).await;
    // Asking for another shard count than the ledger's is refused, and names both.
    let refused =
        claw_points::Store::open_with(&db.url, StoreOptions { shards: Some(16), ..StoreOptions::default() })
            .await
            .err()
            .expect("refused");
    assert!(refused.to_string().contains("1 shard chain(s), not 16"), "{refused}");

    let s = start(&db, open_limits()).await;
    assert_eq!(s.store().shard_count(), 1);
    let c = Client::for_server(&s);
    let v = c.verify().await;
    assert_eq!(
        (v["ok"].clone(), v["entries"].clone(), v["shard_count"].clone()),
        (json!(true), json!(2), json!(1)),
        "{v}"
    );
    let again = c.post("/v1/debit", json!({"key": "d", "account": "alice", "amount": 10, "memo": "m"})).await;
    assert_eq!((again.status, again.u64("balance"), again.replayed()), (200, 90, true), "{}", again.text);
    let r = c.post("/v1/debit", json!({"key": "d2", "account": "alice", "amount": 1})).await;
    assert_eq!((r.status, r.u64("seq"), r.u64("balance")), (200, 3, 89), "{}", r.text);
    let v = c.verify().await;
    assert_eq!((v["ok"].clone(), v["entries"].clone()), (json!(true), json!(3)), "{v}");
    assert_eq!(v["heads"][0]["seq"], 3);
    let log = audit_log(&c).await;
    assert_eq!(log[0]["links"], "");
    assert_eq!(log[2]["links"].as_str().unwrap(), format!("0:3:{}", log[1]["hash"].as_str().unwrap()));
    // A legacy entry is still tamper-evident.
    tamper(&db, s.store().pool(), "UPDATE audit_log SET body = REPLACE(body, '100', '101') WHERE seq = 1")
        .await;
    let v = c.verify().await;
    assert!(problems(&v).contains(&("hash-mismatch".into(), Some(0))), "{v}");
    s.shutdown().await.unwrap();
}

on_both_backends!(
    several_servers_one_ledger,
    tampered_shards_fail_verify,
    ledger_before_shards_keeps_working
);

/// With one shard's head locked by another transaction (another writer in
/// the middle of a group), a mutation of another shard still commits, and
/// one of the locked shard waits for the lock: shards do not share a lock.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(not(claw_pg), ignore = "skipped: PostgreSQL (set CLAW_TEST_PG_URL, scripts/start-postgres.sh)")]
async fn other_shards_commit_while_one_is_locked() {
    use sqlx::Connection;
    let db = common::pg_db("shards::other_shards_commit_while_one_is_locked").await;
    let s = start(&db, open_limits()).await;
    let c = Client::for_server(&s);
    // Accounts whose shards are served by different writers of this process (shard % writers).
    let n = s.store().shard_count();
    let lane = |x: &str| shard_of(x, n) as usize % claw_points::DEFAULT_WRITERS;
    let a = "p0".to_owned();
    let b = (1..).map(|i| format!("p{i}")).find(|x| lane(x) != lane(&a)).unwrap();
    let mut holder = sqlx::postgres::PgConnection::connect(&db.url).await.unwrap();
    let mut tx = holder.begin().await.unwrap();
    sqlx::query("SELECT seq FROM audit_heads WHERE shard = $1 FOR UPDATE")
        .bind(shard_of(&a, s.store().shard_count()) as i32)
        .fetch_one(&mut *tx)
        .await
        .unwrap();
    let blocked = {
        let c = c.clone();
        let a = a.clone();
        tokio::spawn(async move { c.grant("blocked", &a, 5).await })
    };
    assert_eq!(c.grant("free", &b, 5).await.status, 200, "another shard commits meanwhile");
    assert!(!blocked.is_finished(), "the locked shard's mutation waits for its lock");
    tx.rollback().await.unwrap();
    assert_eq!(blocked.await.unwrap().status, 200);
    assert_eq!(c.verify().await["ok"], true);
    s.shutdown().await.unwrap();
}
