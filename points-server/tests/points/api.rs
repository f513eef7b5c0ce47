//! The points server's HTTP API against a real server on 127.0.0.1, the same
//! suite on SQLite and (when CLAW_TEST_PG_URL is set) PostgreSQL.

use crate::common;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use common::{open_limits, start, Client, TestDb};
use serde_json::{json, Value};
use sqlx::Row;

on_both_backends!(
    basic_flow,
    idempotent_repeats,
    concurrent_debits_never_negative,
    settle_is_atomic,
    validation_errors,
    auth_errors,
    flood_gets_429,
    operator_token_has_its_own_limit,
    audit_detects_tampering,
    edited_answers_fail_verify,
    restart_keeps_everything,
);

async fn basic_flow(db: TestDb) {
    let s = start(&db, open_limits()).await;
    let c = Client::for_server(&s);
    let h = c.get("/v1/health").await;
    assert_eq!(h.status, 200);
    assert_eq!(h.json["backend"], db.backend);

    // Unknown accounts have balance 0 (documented decision).
    assert_eq!(c.balance("nobody").await, 0);

    let g = c.grant("g-alice", "alice", 1000).await;
    assert_eq!((g.status, g.u64("balance"), g.u64("seq")), (200, 1000, 1), "{}", g.text);
    let d = c.post("/v1/debit", json!({"key": "d1", "account": "alice", "amount": 300, "memo": "bet"})).await;
    assert_eq!((d.status, d.u64("balance")), (200, 700), "{}", d.text);
    let cr = c.post("/v1/credit", json!({"key": "c1", "account": "bob", "amount": 50, "memo": "win"})).await;
    assert_eq!((cr.status, cr.u64("balance")), (200, 50));
    assert_eq!(c.balance("alice").await, 700);
    assert_eq!(c.balance("bob").await, 50);

    // History, paged with a cursor.
    for i in 0..5 {
        let r = c.post("/v1/debit", json!({"key": format!("p{i}"), "account": "alice", "amount": 1})).await;
        assert_eq!(r.status, 200);
    }
    let mut seen = Vec::new();
    let mut after: Option<String> = None;
    loop {
        let q = match &after {
            Some(a) => format!("/v1/transactions?account=alice&limit=3&after={a}"),
            None => "/v1/transactions?account=alice&limit=3".to_owned(),
        };
        let page = c.get(&q).await;
        assert_eq!(page.status, 200, "{}", page.text);
        for e in page.json["entries"].as_array().unwrap() {
            seen.push((
                e["kind"].as_str().unwrap().to_owned(),
                e["amount"].as_u64().unwrap(),
                e["balance"].as_u64().unwrap(),
            ));
        }
        match page.json["next"].as_str() {
            Some(n) => after = Some(n.to_owned()),
            None => break,
        }
    }
    assert_eq!(seen.len(), 7);
    assert_eq!(seen[0], ("grant".into(), 1000, 1000));
    assert_eq!(seen[1], ("debit".into(), 300, 700));
    assert_eq!(seen[6], ("debit".into(), 1, 695));

    // Audit log pages, and the chain verifies.
    let a = c.get("/v1/audit?limit=2").await;
    let entries = a.json["entries"].as_array().unwrap();
    assert_eq!(entries.len(), 2);
    assert_eq!(entries[0]["prev_hash"], claw_points::audit::GENESIS_HASH);
    assert_eq!(entries[1]["prev_hash"], entries[0]["hash"]);
    assert_eq!(a.json["next"], 2);
    let rest = c.get("/v1/audit?after=2&limit=1000").await;
    assert_eq!(rest.json["entries"].as_array().unwrap().len(), 6);
    assert_eq!(rest.json["next"], Value::Null);
    let v = c.verify().await;
    assert_eq!(v["ok"], true, "{v}");
    assert_eq!(v["entries"], 8);
    assert_eq!(v["total_balance"], 745);
    assert_eq!(v["total_granted"], 1000);
    // POST works too.
    let vp = c.post("/v1/audit/verify", json!({})).await;
    assert_eq!(vp.json["ok"], true);
    s.shutdown().await.unwrap();
}

async fn idempotent_repeats(db: TestDb) {
    let s = start(&db, open_limits()).await;
    let c = Client::for_server(&s);
    c.grant("g", "alice", 100).await;

    let body = json!({"key": "bet-1", "account": "alice", "amount": 40, "memo": "hand 1"});
    let first = c.post("/v1/debit", body.clone()).await;
    assert_eq!(first.status, 200);
    assert!(!first.replayed());
    for _ in 0..3 {
        let again = c.post("/v1/debit", body.clone()).await;
        assert_eq!((again.status, &again.text), (200, &first.text));
        assert!(again.replayed());
    }
    // The same request written differently (field order, whitespace) is the same request.
    let same = c
        .post_raw(
            "/v1/debit",
            "application/json",
            r#"{ "memo":"hand 1", "amount": 40, "account":"alice","key":"bet-1" }"#,
        )
        .await;
    assert_eq!(same.text, first.text);
    assert_eq!(c.balance("alice").await, 60);

    // Same key, different body (amount, memo, account or endpoint) → key-reused, nothing moves.
    for (path, b) in [
        ("/v1/debit", json!({"key": "bet-1", "account": "alice", "amount": 41, "memo": "hand 1"})),
        ("/v1/debit", json!({"key": "bet-1", "account": "alice", "amount": 40, "memo": "hand 2"})),
        ("/v1/debit", json!({"key": "bet-1", "account": "bob", "amount": 40, "memo": "hand 1"})),
        ("/v1/credit", json!({"key": "bet-1", "account": "alice", "amount": 40, "memo": "hand 1"})),
        ("/v1/grant", json!({"key": "bet-1", "account": "alice", "amount": 40, "memo": "hand 1"})),
    ] {
        let r = c.post(path, b).await;
        assert_eq!((r.status, r.code()), (409, "key-reused"), "{}", r.text);
    }
    assert_eq!(c.balance("alice").await, 60);

    // A refusal is the final answer for its key too, even once funds arrive.
    let big = json!({"key": "bet-2", "account": "alice", "amount": 100});
    let no = c.post("/v1/debit", big.clone()).await;
    assert_eq!((no.status, no.code()), (409, "insufficient"));
    assert_eq!((no.u64("balance"), no.u64("needed")), (60, 100));
    c.grant("g2", "alice", 1000).await;
    let no2 = c.post("/v1/debit", big).await;
    assert_eq!((no2.status, &no2.text), (409, &no.text));
    assert!(no2.replayed());
    assert_eq!(c.balance("alice").await, 1060);

    // Concurrent duplicates of one request: exactly one applies.
    let dup = json!({"key": "dup", "account": "alice", "amount": 7});
    let mut tasks = Vec::new();
    for _ in 0..20 {
        let (c, b) = (c.clone(), dup.clone());
        tasks.push(tokio::spawn(async move { c.post("/v1/debit", b).await }));
    }
    let mut texts = Vec::new();
    for t in tasks {
        let r = t.await.unwrap();
        assert_eq!(r.status, 200);
        texts.push(r.text);
    }
    assert!(texts.iter().all(|t| *t == texts[0]));
    assert_eq!(c.balance("alice").await, 1053);
    let v = c.verify().await;
    assert_eq!(v["ok"], true);
    assert_eq!(v["entries"], 5); // g, bet-1, bet-2 (refused), g2, dup
    s.shutdown().await.unwrap();
}

async fn concurrent_debits_never_negative(db: TestDb) {
    let s = start(&db, open_limits()).await;
    let c = Client::for_server(&s);
    c.grant("fund", "pot", 1000).await;
    let ok = Arc::new(AtomicU64::new(0));
    let mut tasks = Vec::new();
    for i in 0..100 {
        let (c, ok) = (c.clone(), ok.clone());
        tasks.push(tokio::spawn(async move {
            let r =
                c.post("/v1/debit", json!({"key": format!("d{i}"), "account": "pot", "amount": 15})).await;
            match r.status {
                200 => {
                    ok.fetch_add(1, Ordering::SeqCst);
                    r.u64("balance")
                }
                409 => {
                    assert_eq!(r.code(), "insufficient", "{}", r.text);
                    assert!(r.u64("balance") < 15);
                    u64::MAX
                }
                other => panic!("unexpected {other}: {}", r.text),
            }
        }));
    }
    let mut balances = Vec::new();
    for t in tasks {
        let b = t.await.unwrap();
        if b != u64::MAX {
            balances.push(b);
        }
    }
    // 1000 / 15 = 66 debits fit, exactly; every acknowledged balance is distinct.
    assert_eq!(ok.load(Ordering::SeqCst), 66);
    balances.sort_unstable();
    balances.dedup();
    assert_eq!(balances.len(), 66);
    assert_eq!(balances[0], 10);
    assert_eq!(c.balance("pot").await, 1000 - 66 * 15);
    let v = c.verify().await;
    assert_eq!(v["ok"], true, "{v}");
    assert_eq!(v["entries"], 101, "the grant, 66 debits and 34 refusals");
    assert_eq!(v["total_debited"], 990);

    // Mixed concurrent transfers between accounts conserve the total.
    for a in 0..4 {
        c.grant(&format!("f{a}"), &format!("acct{a}"), 100).await;
    }
    let mut tasks = Vec::new();
    for i in 0..60u64 {
        let c = c.clone();
        tasks.push(tokio::spawn(async move {
            let (from, to) = (i % 4, (i + 1) % 4);
            let r = c
                .post(
                    "/v1/settle",
                    json!({"key": format!("t{i}"), "ops": [
                        {"kind": "debit", "account": format!("acct{from}"), "amount": 30 + i % 7},
                        {"kind": "credit", "account": format!("acct{to}"), "amount": 30 + i % 7},
                    ]}),
                )
                .await;
            assert!(r.status == 200 || (r.status == 409 && r.code() == "insufficient"), "{}", r.text);
        }));
    }
    for t in tasks {
        t.await.unwrap();
    }
    let mut sum = 0;
    for a in 0..4 {
        sum += c.balance(&format!("acct{a}")).await;
    }
    assert_eq!(sum, 400);
    assert_eq!(c.verify().await["ok"], true);
    s.shutdown().await.unwrap();
}

async fn settle_is_atomic(db: TestDb) {
    let s = start(&db, open_limits()).await;
    let c = Client::for_server(&s);
    c.grant("g1", "a", 100).await;
    c.grant("g2", "b", 5).await;
    // The last op fails: nothing of the batch applies.
    let r = c
        .post(
            "/v1/settle",
            json!({"key": "s1", "ops": [
                {"kind": "debit", "account": "a", "amount": 50, "memo": "bet"},
                {"kind": "credit", "account": "c", "amount": 45, "memo": "win"},
                {"kind": "debit", "account": "b", "amount": 6, "memo": "rake"},
            ]}),
        )
        .await;
    assert_eq!((r.status, r.code()), (409, "insufficient"), "{}", r.text);
    assert_eq!(r.json["account"], "b");
    assert_eq!((c.balance("a").await, c.balance("b").await, c.balance("c").await), (100, 5, 0));
    // A good batch applies all, in order (an account may appear twice).
    let r = c
        .post(
            "/v1/settle",
            json!({"key": "s2", "ops": [
                {"kind": "debit", "account": "a", "amount": 50},
                {"kind": "credit", "account": "c", "amount": 45},
                {"kind": "credit", "account": "a", "amount": 5},
                {"kind": "debit", "account": "b", "amount": 5},
                {"kind": "credit", "account": "house", "amount": 5},
            ]}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
    let bal: Vec<u64> =
        r.json["balances"].as_array().unwrap().iter().map(|b| b["balance"].as_u64().unwrap()).collect();
    assert_eq!(bal, vec![50, 45, 55, 0, 5]);
    assert_eq!(c.balance("a").await, 55);
    let v = c.verify().await;
    assert_eq!(v["ok"], true);
    assert_eq!(v["total_balance"], 105);
    assert_eq!(v["entries"], 4, "two grants, the refused and the applied batch");
    s.shutdown().await.unwrap();
}

async fn validation_errors(db: TestDb) {
    let s = start(&db, open_limits()).await;
    let c = Client::for_server(&s);
    c.grant("g", "alice", 100).await;
    let debit = |v: Value| {
        let c = c.clone();
        async move { c.post("/v1/debit", v).await }
    };
    // Amounts: zero, negative, fractional, string, above the bound, beyond u64, huge float.
    for amount in
        [json!(0), json!(-5), json!(1.5), json!(1_000_000_000_000_001u64), json!(u64::MAX), json!(1e30)]
    {
        let r = debit(json!({"key": "k", "account": "alice", "amount": amount})).await;
        assert_eq!((r.status, r.code()), (400, "bad-amount"), "{amount}: {}", r.text);
    }
    let r = c
        .post_raw(
            "/v1/debit",
            "application/json",
            r#"{"key":"k","account":"alice","amount":18446744073709551616}"#,
        )
        .await;
    assert_eq!((r.status, r.code()), (400, "bad-amount"), "{}", r.text);
    let r = debit(json!({"key": "k", "account": "alice", "amount": "5"})).await;
    assert_eq!((r.status, r.code()), (400, "invalid-body"), "{}", r.text);
    // Ids and keys.
    for account in ["", "a b", "ä", &"x".repeat(129)] {
        let r = debit(json!({"key": "k", "account": account, "amount": 1})).await;
        assert_eq!((r.status, r.code()), (400, "bad-account"), "{account:?}");
    }
    for key in ["", "k k", &"k".repeat(201)] {
        let r = debit(json!({"key": key, "account": "alice", "amount": 1})).await;
        assert_eq!((r.status, r.code()), (400, "bad-key"), "{key:?}");
    }
    // Memo.
    for memo in ["x".repeat(257), "line\nbreak".to_owned()] {
        let r = debit(json!({"key": "k", "account": "alice", "amount": 1, "memo": memo})).await;
        assert_eq!((r.status, r.code()), (400, "bad-memo"));
    }
    // Structure.
    let r = debit(json!({"key": "k", "account": "alice"})).await;
    assert_eq!((r.status, r.code()), (400, "invalid-body"));
    let r = debit(json!({"key": "k", "account": "alice", "amount": 1, "extra": true})).await;
    assert_eq!((r.status, r.code()), (400, "invalid-body"));
    let r = debit(json!([1, 2])).await;
    assert_eq!((r.status, r.code()), (400, "invalid-body"));
    let r = c.post_raw("/v1/debit", "application/json", "{\"key\": \"k\", ").await;
    assert_eq!((r.status, r.code()), (400, "malformed-json"));
    let r = c.post_raw("/v1/debit", "application/json", "").await;
    assert_eq!((r.status, r.code()), (400, "malformed-json"));
    let r = c.post_raw("/v1/debit", "text/plain", r#"{"key":"k","account":"alice","amount":1}"#).await;
    assert_eq!((r.status, r.code()), (415, "unsupported-media-type"));
    // Huge bodies: declared and streamed (chunked, no Content-Length).
    let huge = format!(r#"{{"key":"k","account":"alice","amount":1,"memo":"{}"}}"#, "x".repeat(20_000));
    let r = c.post_raw("/v1/debit", "application/json", huge.clone()).await;
    assert_eq!((r.status, r.code()), (413, "body-too-large"));
    let stream = futures_util::stream::iter(
        huge.into_bytes().chunks(1000).map(|ch| Ok::<_, std::io::Error>(ch.to_vec())).collect::<Vec<_>>(),
    );
    let r = c.post_raw("/v1/debit", "application/json", reqwest::Body::wrap_stream(stream)).await;
    assert_eq!((r.status, r.code()), (413, "body-too-large"));
    // Batches.
    let r = c.post("/v1/settle", json!({"key": "s", "ops": []})).await;
    assert_eq!((r.status, r.code()), (400, "bad-batch"));
    let many: Vec<Value> = (0..257).map(|_| json!({"kind": "credit", "account": "a", "amount": 1})).collect();
    let r = c.post("/v1/settle", json!({"key": "s", "ops": many})).await;
    assert_eq!((r.status, r.code()), (400, "bad-batch"));
    let r = c
        .post("/v1/settle", json!({"key": "s", "ops": [{"kind": "grant", "account": "a", "amount": 1}]}))
        .await;
    assert_eq!((r.status, r.code()), (400, "bad-op"));
    // Balance overflow is refused, not wrapped.
    // 1000 credits of MAX_AMOUNT reach MAX_BALANCE exactly (in five batches).
    let max = claw_points::MAX_AMOUNT;
    for (i, n) in [200; 5].into_iter().enumerate() {
        let ops: Vec<Value> =
            (0..n).map(|_| json!({"kind": "credit", "account": "whale", "amount": max})).collect();
        let r = c.post("/v1/settle", json!({"key": format!("big{i}"), "ops": ops})).await;
        assert_eq!(r.status, 200, "{}", r.text);
    }
    let r = c.grant("big-last", "whale", 1).await;
    assert_eq!((r.status, r.code()), (409, "balance-overflow"), "{}", r.text);
    assert_eq!(c.balance("whale").await, claw_points::MAX_BALANCE);
    // Queries, routes, methods.
    let r = c.get("/v1/balance").await;
    assert_eq!((r.status, r.code()), (400, "bad-query"));
    let r = c.get("/v1/balance?account=a%20b").await;
    assert_eq!((r.status, r.code()), (400, "bad-account"));
    let r = c.get("/v1/balance?account=a&account=b").await;
    assert_eq!((r.status, r.code()), (400, "bad-query"));
    let r = c.get("/v1/balance?account=a&x=1").await;
    assert_eq!((r.status, r.code()), (400, "bad-query"));
    let r = c.get("/v1/transactions?account=a&after=zz").await;
    assert_eq!((r.status, r.code()), (400, "bad-query"));
    let r = c.get("/v1/audit?limit=1001").await;
    assert_eq!((r.status, r.code()), (400, "bad-query"));
    let r = c.get("/v1/nope").await;
    assert_eq!((r.status, r.code()), (404, "not-found"));
    let r = c.get("/v1/debit").await;
    assert_eq!((r.status, r.code()), (405, "method-not-allowed"));
    // Nothing of the above moved chips.
    assert_eq!(c.balance("alice").await, 100);
    assert_eq!(c.verify().await["ok"], true);
    s.shutdown().await.unwrap();
}

async fn auth_errors(db: TestDb) {
    let s = start(&db, open_limits()).await;
    let good = Client::for_server(&s);
    good.grant("g", "alice", 10).await;
    for token in ["", "wrong", &common::TOKEN[..common::TOKEN.len() - 1], &format!("{}x", common::TOKEN)] {
        let mut c = good.clone();
        c.token = token.to_owned();
        let r = c.get("/v1/balance?account=alice").await;
        assert_eq!((r.status, r.code()), (401, "unauthorized"), "{token:?}");
        assert_eq!(r.headers.get("www-authenticate").unwrap(), "Bearer");
        let r = c.post("/v1/grant", json!({"key": "steal", "account": "mallory", "amount": 1000})).await;
        assert_eq!((r.status, r.code()), (401, "unauthorized"));
    }
    // No header at all; a non-Bearer scheme.
    let raw = claw_chips::http::client_builder().no_proxy().build().unwrap();
    let r = raw.get(format!("{}/v1/balance?account=alice", s.url())).send().await.unwrap();
    assert_eq!(r.status(), 401);
    let r = raw
        .get(format!("{}/v1/balance?account=alice", s.url()))
        .header("authorization", format!("Basic {}", common::TOKEN))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 401);
    // Health needs no token.
    let r = raw.get(format!("{}/v1/health", s.url())).send().await.unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(good.balance("mallory").await, 0);
    s.shutdown().await.unwrap();
}

async fn flood_gets_429(db: TestDb) {
    let limits = claw_points::Limits { rate_per_sec: 5, burst: 10, ..claw_points::Limits::default() };
    let s = start(&db, limits).await;
    let mut c = Client::for_server(&s);
    c.token = "not-the-token".into();
    let mut refused = 0;
    let mut limited = None;
    // Bounded: at 5/s refill, 200 requests cannot all pass unless they take 38 s.
    for _ in 0..200 {
        let r = c.get("/v1/balance?account=alice").await;
        match r.status {
            401 => refused += 1,
            429 => {
                limited = Some(r);
                break;
            }
            other => panic!("unexpected {other}"),
        }
    }
    let r = limited.expect("a flood is rate limited");
    assert!(refused >= 10, "the burst passes first");
    assert_eq!(r.code(), "rate-limited");
    let secs: u64 = r.headers.get("retry-after").unwrap().to_str().unwrap().parse().unwrap();
    assert!(secs >= 1);
    // Requests without any token (health) share that bucket.
    let r = c.http.get(format!("{}/v1/health", c.base)).send().await.unwrap();
    assert_eq!(r.status(), 429);
    s.shutdown().await.unwrap();
}

/// The attack of issue #17: players' query floods from the dealer's own address
/// emptied the per-IP bucket and the dealer's chip calls got 429. Token holders
/// now have a bucket of their own (unlimited by default).
async fn operator_token_has_its_own_limit(db: TestDb) {
    let limits = claw_points::Limits { rate_per_sec: 5, burst: 10, ..claw_points::Limits::default() };
    let s = start(&db, limits).await;
    let dealer = Client::for_server(&s);
    let mut flood = dealer.clone();
    flood.token = "guessed-token-0123456789".into();
    dealer.grant("g", "alice", 1_000).await;
    // Interleave: the flood from the same IP is cut off, the dealer never is.
    let mut flood_limited = 0;
    for i in 0..150u64 {
        if flood.get("/v1/balance?account=alice").await.status == 429 {
            flood_limited += 1;
        }
        let r =
            dealer.post("/v1/debit", json!({"key": format!("d{i}"), "account": "alice", "amount": 1})).await;
        assert_eq!(r.status, 200, "dealer call {i} refused: {}", r.text);
        assert_eq!(dealer.get("/v1/balance?account=alice").await.status, 200);
    }
    assert!(flood_limited >= 100, "the flood is limited ({flood_limited} of 150 refused)");
    assert_eq!(dealer.balance("alice").await, 850);
    s.shutdown().await.unwrap();

    // An operator limit, when configured, applies to token holders only.
    let limits = claw_points::Limits {
        rate_per_sec: 0,
        operator_rate_per_sec: 1,
        operator_burst: 3,
        ..claw_points::Limits::default()
    };
    let db2 = match db.backend {
        "postgres" => common::pg_db("operator-limit").await,
        _ => common::sqlite_db(),
    };
    let s = start(&db2, limits).await;
    let dealer = Client::for_server(&s);
    let statuses: Vec<u16> = {
        let mut v = Vec::new();
        for _ in 0..6 {
            v.push(dealer.get("/v1/balance?account=a").await.status);
        }
        v
    };
    assert_eq!(&statuses[..3], &[200, 200, 200], "{statuses:?}");
    assert!(statuses[3..].contains(&429), "{statuses:?}");
    let mut other = dealer.clone();
    other.token = "wrong-token-0123456789".into();
    assert_eq!(other.get("/v1/balance?account=a").await.status, 401, "other clients use their own bucket");
    s.shutdown().await.unwrap();
}

/// Runs raw SQL with the append-only triggers disabled, as an attacker with
/// database access could.
pub(crate) async fn tamper(db: &TestDb, pool: &sqlx::AnyPool, sql: &str) {
    let mut conn = pool.acquire().await.unwrap();
    if db.backend == "postgres" {
        sqlx::query("ALTER TABLE audit_log DISABLE TRIGGER USER").execute(&mut *conn).await.unwrap();
        sqlx::query("ALTER TABLE ledger DISABLE TRIGGER USER").execute(&mut *conn).await.unwrap();
    } else {
        for t in ["audit_log_no_update", "audit_log_no_delete", "ledger_no_update", "ledger_no_delete"] {
            sqlx::query(sqlx::AssertSqlSafe(format!("DROP TRIGGER IF EXISTS {t}")))
                .execute(&mut *conn)
                .await
                .unwrap();
        }
    }
    sqlx::query(sqlx::AssertSqlSafe(sql.to_owned())).execute(&mut *conn).await.unwrap();
}

async fn audit_detects_tampering(db: TestDb) {
    let s = start(&db, open_limits()).await;
    let c = Client::for_server(&s);
    c.grant("g1", "alice", 100).await;
    c.post("/v1/debit", json!({"key": "d1", "account": "alice", "amount": 10})).await;
    c.post("/v1/credit", json!({"key": "c1", "account": "bob", "amount": 10})).await;
    c.post("/v1/debit", json!({"key": "d2", "account": "alice", "amount": 5})).await;
    assert_eq!(c.verify().await["ok"], true);
    let pool = s.store().pool().clone();

    // The append-only triggers refuse edits and deletes.
    assert!(sqlx::query("UPDATE audit_log SET body = 'x' WHERE seq = 2").execute(&pool).await.is_err());
    assert!(sqlx::query("DELETE FROM audit_log WHERE seq = 4").execute(&pool).await.is_err());
    assert!(sqlx::query("DELETE FROM ledger").execute(&pool).await.is_err());

    let kinds = |v: &Value| -> Vec<String> {
        v["problems"].as_array().unwrap().iter().map(|p| p["kind"].as_str().unwrap().to_owned()).collect()
    };
    // Edit an entry's body (the amount): its hash no longer matches.
    tamper(
        &db,
        &pool,
        "UPDATE audit_log SET body = REPLACE(body, '\"amount\":10,', '\"amount\":1,') WHERE seq = 2",
    )
    .await;
    let v = c.verify().await;
    assert_eq!(v["ok"], false);
    assert!(kinds(&v).contains(&"hash-mismatch".to_owned()), "{v}");
    assert_eq!(v["problems"][0]["seq"], 2);
    s.shutdown().await.unwrap();

    // Fresh database for each kind of tampering.
    for (sql, want) in [
        ("DELETE FROM audit_log WHERE seq = 2", "seq-gap"),
        ("DELETE FROM audit_log WHERE seq = 4", "head-mismatch"),
        ("UPDATE audit_log SET created_ms = created_ms + 1 WHERE seq = 3", "hash-mismatch"),
        ("UPDATE audit_log SET prev_hash = hash WHERE seq = 3", "prev-hash-mismatch"),
        ("UPDATE accounts SET balance = balance + 1000 WHERE id = 'bob'", "account-mismatch"),
        ("DELETE FROM accounts WHERE id = 'bob'", "account-mismatch"),
        ("UPDATE ledger SET amount = 11 WHERE audit_seq = 2", "ledger-mismatch"),
        ("DELETE FROM ledger WHERE audit_seq = 3", "ledger-mismatch"),
    ] {
        let db2 = match db.backend {
            "postgres" => common::pg_db("tamper").await,
            _ => common::sqlite_db(),
        };
        let s = start(&db2, open_limits()).await;
        let c = Client::for_server(&s);
        c.grant("g1", "alice", 100).await;
        c.post("/v1/debit", json!({"key": "d1", "account": "alice", "amount": 10})).await;
        c.post("/v1/credit", json!({"key": "c1", "account": "bob", "amount": 10})).await;
        c.post("/v1/debit", json!({"key": "d2", "account": "alice", "amount": 5})).await;
        tamper(&db2, s.store().pool(), sql).await;
        let v = c.verify().await;
        assert_eq!(v["ok"], false, "{sql}");
        assert!(kinds(&v).contains(&want.to_owned()), "{sql}: {v}");
        s.shutdown().await.unwrap();
    }
}

/// Issue #17: an edited stored idempotency answer (a retry then receives a
/// different balance) must fail verify, naming the row. Every answer, applied
/// or refused, is under the hash chain.
async fn edited_answers_fail_verify(db: TestDb) {
    async fn ledger(db: &TestDb) -> (claw_points::RunningServer, Client) {
        let s = start(db, open_limits()).await;
        let c = Client::for_server(&s);
        assert_eq!(c.grant("g1", "alice", 100).await.status, 200);
        let d = c.post("/v1/debit", json!({"key": "d1", "account": "alice", "amount": 10})).await;
        assert_eq!(d.status, 200);
        let big = c.post("/v1/debit", json!({"key": "big", "account": "alice", "amount": 1000})).await;
        assert_eq!((big.status, big.u64("balance")), (409, 90));
        (s, c)
    }
    // An honest ledger with an applied and a refused answer verifies.
    let (s, c) = ledger(&db).await;
    let v = c.verify().await;
    assert_eq!((v["ok"].clone(), v["entries"].clone()), (json!(true), json!(3)), "{v}");
    let audit = c.get("/v1/audit").await;
    assert_eq!(audit.json["entries"][2]["status"], 409, "{}", audit.text);

    // The attack: the stored answer of d1 edited, a retry replays the forged balance.
    tamper(
        &db,
        s.store().pool(),
        "UPDATE idempotency SET response = REPLACE(response, '\"balance\":90', '\"balance\":9000') \
         WHERE idem_key = 'd1'",
    )
    .await;
    let retry = c.post("/v1/debit", json!({"key": "d1", "account": "alice", "amount": 10})).await;
    assert_eq!(retry.u64("balance"), 9000, "the edit took effect");
    let v = c.verify().await;
    assert_eq!(v["ok"], false, "{v}");
    let named = |v: &Value, kind: &str, key: &str| {
        v["problems"]
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p["kind"] == kind && p["message"].as_str().unwrap().contains(&format!("\"{key}\"")))
    };
    assert!(named(&v, "answer-mismatch", "d1") && named(&v, "hash-mismatch", "d1"), "{v}");
    assert_eq!(v["problems"][0]["seq"], 2);
    s.shutdown().await.unwrap();

    // Each other edit of the idempotency table, on a fresh ledger.
    for (sql, kind, key) in [
        (
            "UPDATE idempotency SET response = REPLACE(response, '\"balance\":90', '\"balance\":5') \
             WHERE idem_key = 'big'",
            "hash-mismatch",
            "big",
        ),
        ("UPDATE idempotency SET status = 200 WHERE idem_key = 'big'", "answer-mismatch", "big"),
        ("UPDATE idempotency SET fingerprint = 'x' WHERE idem_key = 'd1'", "hash-mismatch", "d1"),
        ("DELETE FROM idempotency WHERE idem_key = 'd1'", "answer-missing", "d1"),
        (
            "INSERT INTO idempotency (idem_key, fingerprint, status, response, created_ms) \
             VALUES ('later', 'f', 200, '{\"balance\":1}', 0)",
            "answer-unchained",
            "later",
        ),
    ] {
        let db2 = match db.backend {
            "postgres" => common::pg_db("tamper-answers").await,
            _ => common::sqlite_db(),
        };
        let (s, c) = ledger(&db2).await;
        tamper(&db2, s.store().pool(), sql).await;
        let v = c.verify().await;
        assert_eq!(v["ok"], false, "{sql}");
        assert!(named(&v, kind, key), "{sql}: {v}");
        s.shutdown().await.unwrap();
    }
}

async fn restart_keeps_everything(db: TestDb) {
    let s = start(&db, open_limits()).await;
    let c = Client::for_server(&s);
    c.grant("g", "alice", 500).await;
    let first = c.post("/v1/debit", json!({"key": "d", "account": "alice", "amount": 20})).await;
    let head = c.verify().await["head_hash"].clone();
    s.shutdown().await.unwrap();

    let s = start(&db, open_limits()).await;
    let c = Client::for_server(&s);
    assert_eq!(c.balance("alice").await, 480);
    let again = c.post("/v1/debit", json!({"key": "d", "account": "alice", "amount": 20})).await;
    assert_eq!(again.text, first.text);
    assert!(again.replayed());
    let v = c.verify().await;
    assert_eq!((v["ok"].clone(), v["head_hash"].clone()), (json!(true), head));
    // The chain continues from the stored head.
    let r = c.post("/v1/debit", json!({"key": "d2", "account": "alice", "amount": 1})).await;
    assert_eq!(r.u64("seq"), 3);
    assert_eq!(c.verify().await["ok"], true);
    s.shutdown().await.unwrap();
}

#[tokio::test]
async fn sqlite_runs_in_wal_with_full_sync() {
    let db = common::sqlite_db();
    let s = start(&db, open_limits()).await;
    let mut conn = s.store().pool().acquire().await.unwrap();
    let mode: String = sqlx::query("PRAGMA journal_mode").fetch_one(&mut *conn).await.unwrap().get(0);
    assert_eq!(mode.to_lowercase(), "wal");
    let sync: i64 = sqlx::query("PRAGMA synchronous").fetch_one(&mut *conn).await.unwrap().get(0);
    assert_eq!(sync, 2, "synchronous = FULL");
    drop(conn);
    s.shutdown().await.unwrap();
}

#[tokio::test]
async fn serve_refuses_bad_config() {
    let db = common::sqlite_db();
    let addr = "127.0.0.1:0".parse().unwrap();
    let short = claw_points::ServerConfig::new(db.url.clone(), addr, "short");
    assert!(matches!(claw_points::serve(short).await, Err(claw_points::ServeError::Config(_))));
    let spaced = claw_points::ServerConfig::new(db.url.clone(), addr, " 0123456789abcdef0123 ");
    assert!(matches!(claw_points::serve(spaced).await, Err(claw_points::ServeError::Config(_))));
    let bad_url = claw_points::ServerConfig::new("mysql://x/y", addr, common::TOKEN);
    assert!(matches!(
        claw_points::serve(bad_url).await,
        Err(claw_points::ServeError::Store(claw_points::StoreError::BadUrl(_)))
    ));
    let token = claw_points::generate_token();
    assert_eq!(token.len(), 64);
    assert_ne!(token, claw_points::generate_token());
}

#[tokio::test]
async fn dropping_the_server_stops_it() {
    let db = common::sqlite_db();
    let s = start(&db, open_limits()).await;
    let url = s.url();
    let c = Client::new(url.clone());
    assert_eq!(c.get("/v1/health").await.status, 200);
    drop(s);
    // Bounded wait for the graceful stop to complete.
    let mut stopped = false;
    for _ in 0..100 {
        if c.http.get(format!("{url}/v1/health")).send().await.is_err() {
            stopped = true;
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert!(stopped);
}

/// Many mutations queued at once go through one group commit: duplicates,
/// key reuse and refusals inside one group behave as if applied one by one.
async fn group_commit_mixes_outcomes(db: TestDb) {
    use claw_chips::{AccountId, IdempotencyKey};
    use claw_points::audit::EntryKind;
    use claw_points::store::{Move, Mutation, OpName};
    let store = claw_points::Store::open(&db.url).await.unwrap();
    let mv = |kind, account: &str, amount| Move {
        kind,
        account: AccountId::new(account).unwrap(),
        amount,
        memo: String::new(),
    };
    let key = |k: &str| IdempotencyKey::new(k).unwrap();
    let grant = Mutation { op: OpName::Grant, moves: vec![mv(EntryKind::Grant, "a", 100)] };
    assert_eq!(store.apply(&key("g"), grant).await.unwrap().status, 200);

    let mut tasks = Vec::new();
    for i in 0..40u64 {
        let store = store.clone();
        let (k, m) = match i % 4 {
            // The same debit four times per pair of tasks: one applies.
            0 | 1 => (
                format!("dup{}", i / 8),
                Mutation { op: OpName::Debit, moves: vec![mv(EntryKind::Debit, "a", 3)] },
            ),
            // Key reuse with a different amount.
            2 => (
                format!("dup{}", i / 8),
                Mutation { op: OpName::Debit, moves: vec![mv(EntryKind::Debit, "a", 4)] },
            ),
            // Too large: refused.
            _ => (
                format!("big{i}"),
                Mutation { op: OpName::Debit, moves: vec![mv(EntryKind::Debit, "a", 1000)] },
            ),
        };
        tasks.push(tokio::spawn(async move { (i, store.apply(&key(&k), m).await.unwrap()) }));
    }
    let mut by_key: std::collections::HashMap<u64, Vec<(u64, claw_points::store::Answer)>> =
        Default::default();
    for t in tasks {
        let (i, a) = t.await.unwrap();
        by_key.entry(i / 8).or_default().push((i, a));
    }
    for answers in by_key.values() {
        // Per key dupN: whichever body landed first wins; same-body repeats get its answer,
        // the other body gets key-reused; the oversized debits are refused.
        let four_won = answers.iter().any(|(i, a)| i % 4 == 2 && a.status == 200);
        let fresh = answers.iter().filter(|(i, a)| i % 4 != 3 && a.status == 200 && !a.replayed).count();
        assert_eq!(fresh, 1, "exactly one request per key applies");
        for (i, a) in answers {
            match (i % 4, four_won) {
                (3, _) => assert!(a.status == 409 && a.body.contains("insufficient"), "{}", a.body),
                (2, true) | (0 | 1, false) => assert_eq!(a.status, 200, "{}", a.body),
                _ => assert!(a.status == 409 && a.body.contains("key-reused"), "{}", a.body),
            }
        }
    }
    // Five keys, each applied once: 3 or 4 chips each depending on which body landed first.
    let report = store.verify().await.unwrap();
    assert!(report.ok, "{:?}", report.problems);
    assert_eq!(report.entries, 16, "five applied keys, ten refusals, one grant");
    assert_eq!(report.total_balance + report.total_debited, 100);
    store.close().await;
}

on_both_backends!(group_commit_mixes_outcomes);

/// `max_group = 1` commits each mutation alone (the figures "without group
/// commit" in docs/points-server.md); `/v1/stats` counts what the writer did
/// and needs the token; a server refuses `max_group = 0`.
async fn max_group_one_commits_each_alone(db: TestDb) {
    let s = start(&db, claw_points::Limits { max_group: 1, ..open_limits() }).await;
    let c = Client::for_server(&s);
    let mut tasks = Vec::new();
    for i in 0..24 {
        let c = c.clone();
        tasks
            .push(tokio::spawn(async move { c.grant(&format!("g{i}"), &format!("acct{}", i % 3), 5).await }));
    }
    for t in tasks {
        assert_eq!(t.await.unwrap().status, 200);
    }
    // A replay is a mutation the writer handles too.
    assert!(c.grant("g0", "acct0", 5).await.replayed());
    let st = c.get("/v1/stats").await;
    assert_eq!(st.status, 200, "{}", st.text);
    let g = &st.json["group_commit"];
    assert_eq!((g["commits"].as_u64(), g["mutations"].as_u64()), (Some(25), Some(25)), "{}", st.text);
    assert_eq!((g["largest_group"].as_u64(), g["max_group"].as_u64()), (Some(1), Some(1)));
    let anon = claw_chips::http::client_builder()
        .build()
        .unwrap()
        .get(format!("{}/v1/stats", s.url()))
        .send()
        .await
        .unwrap();
    assert_eq!(anon.status(), 401);
    let report = s.store().verify().await.unwrap();
    assert!(report.ok && report.entries == 24, "{report:?}");
    s.shutdown().await.unwrap();

    let refused = claw_points::serve(claw_points::ServerConfig {
        db_url: db.url.clone(),
        listen: "127.0.0.1:0".parse().unwrap(),
        token: common::TOKEN.into(),
        limits: claw_points::Limits { max_group: 0, ..open_limits() },
    })
    .await;
    assert!(matches!(refused, Err(claw_points::ServeError::Config(_))));
}

on_both_backends!(max_group_one_commits_each_alone);
