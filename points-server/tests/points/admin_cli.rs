//! The `claw-points` admin subcommands (grant, balance, history, verify) as an
//! operator runs them: the real binary against a real server on SQLite.

use crate::common;

use std::process::Output;

use common::{open_limits, start, Client, TOKEN};
use serde_json::{json, Value};

const BIN: &str = env!("CARGO_BIN_EXE_claw-points");

/// Runs the binary with `args`, the token from the environment (or none).
async fn run(token: Option<&str>, args: &[&str]) -> Output {
    let mut cmd = tokio::process::Command::new(BIN);
    cmd.args(args).env_remove("CLAW_POINTS_URL").env_remove("CLAW_POINTS_DB").env("RUST_LOG", "warn");
    match token {
        Some(t) => cmd.env("CLAW_POINTS_TOKEN", t),
        None => cmd.env_remove("CLAW_POINTS_TOKEN"),
    };
    cmd.output().await.expect("run claw-points")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn grant_balance_history_verify() {
    let db = common::sqlite_db();
    let s = start(&db, open_limits()).await;
    let url = s.url();
    let t = Some(TOKEN);

    let g = run(t, &["grant", "alice", "500", "--key", "buyin/1", "--memo", "buy-in", "--url", &url]).await;
    assert!(g.status.success(), "{}", stderr(&g));
    assert_eq!(stdout(&g), "alice 500\n");
    // The same key again grants nothing more.
    let again =
        run(t, &["grant", "alice", "500", "--key", "buyin/1", "--memo", "buy-in", "--url", &url]).await;
    assert_eq!(stdout(&again), "alice 500\n", "{}", stderr(&again));
    // Without --key a fresh key is used and printed for a safe retry.
    let fresh = run(t, &["grant", "alice", "25", "--url", &url]).await;
    assert_eq!(stdout(&fresh), "alice 525\n", "{}", stderr(&fresh));
    assert!(stderr(&fresh).contains("--key admin-grant/"), "{}", stderr(&fresh));

    let c = Client::for_server(&s);
    let d =
        c.post("/v1/debit", json!({"key": "bet", "account": "alice", "amount": 40, "memo": "hand 7"})).await;
    assert_eq!(d.status, 200);

    let b = run(t, &["balance", "alice", "--url", &url]).await;
    assert_eq!(stdout(&b), "alice 485\n", "{}", stderr(&b));
    let nobody = run(t, &["balance", "nobody", "--url", &url]).await;
    assert_eq!(stdout(&nobody), "nobody 0\n");

    let h = run(t, &["history", "alice", "--url", &url]).await;
    assert!(h.status.success(), "{}", stderr(&h));
    let out = stdout(&h);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 3, "{lines:?}");
    assert_eq!(lines[0], "1:0 grant 500 500 buy-in");
    assert_eq!(lines[2], "3:0 debit 40 485 hand 7");
    let one = run(t, &["history", "alice", "--limit", "1", "--json", "--url", &url]).await;
    let rows: Vec<Value> = stdout(&one).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(rows.len(), 1);
    assert_eq!((rows[0]["kind"].as_str(), rows[0]["balance"].as_u64()), (Some("grant"), Some(500)));

    let v = run(t, &["verify", "--url", &url]).await;
    assert!(v.status.success(), "{}", stderr(&v));
    let report: Value = serde_json::from_str(&stdout(&v)).unwrap();
    assert_eq!((report["ok"].clone(), report["entries"].clone()), (json!(true), json!(3)));
    s.shutdown().await.unwrap();

    // Offline verify of the same database agrees.
    let off = run(None, &["verify", "--db", &db.url]).await;
    assert!(off.status.success(), "{}", stderr(&off));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn clear_errors() {
    let db = common::sqlite_db();
    let s = start(&db, open_limits()).await;
    let url = s.url();

    let no_token = run(None, &["balance", "alice", "--url", &url]).await;
    assert_eq!(no_token.status.code(), Some(1));
    assert!(stderr(&no_token).contains("no token"), "{}", stderr(&no_token));

    let wrong = run(Some("wrong-token-0123456789"), &["grant", "alice", "5", "--url", &url]).await;
    assert_eq!(wrong.status.code(), Some(1));
    assert!(stderr(&wrong).contains("refused the token"), "{}", stderr(&wrong));

    let zero = run(Some(TOKEN), &["grant", "alice", "0", "--url", &url]).await;
    assert_eq!(zero.status.code(), Some(1));
    assert!(stderr(&zero).contains("amount must be an integer from 1"), "{}", stderr(&zero));

    let bad_account = run(Some(TOKEN), &["balance", "al ice", "--url", &url]).await;
    assert_eq!(bad_account.status.code(), Some(1));
    assert!(stderr(&bad_account).contains("account \"al ice\""), "{}", stderr(&bad_account));

    let not_a_number = run(Some(TOKEN), &["grant", "alice", "lots", "--url", &url]).await;
    assert_eq!(not_a_number.status.code(), Some(2), "usage errors exit 2");
    assert!(stderr(&not_a_number).contains("invalid value 'lots'"), "{}", stderr(&not_a_number));

    // Nothing moved.
    assert_eq!(Client::for_server(&s).balance("alice").await, 0);
    s.shutdown().await.unwrap();

    let down = run(Some(TOKEN), &["balance", "alice", "--url", &url]).await;
    assert_eq!(down.status.code(), Some(1));
    assert!(stderr(&down).contains("is claw-points serving there"), "{}", stderr(&down));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn verify_over_http_fails_on_an_edited_answer() {
    let db = common::sqlite_db();
    let s = start(&db, open_limits()).await;
    let c = Client::for_server(&s);
    c.grant("g", "alice", 100).await;
    sqlx::query("UPDATE idempotency SET response = REPLACE(response, '100', '999') WHERE idem_key = 'g'")
        .execute(s.store().pool())
        .await
        .unwrap();
    let v = run(Some(TOKEN), &["verify", "--url", &s.url()]).await;
    assert_eq!(v.status.code(), Some(1));
    let report: Value = serde_json::from_str(&stdout(&v)).unwrap();
    assert_eq!(report["ok"], false);
    let shard = claw_points::audit::shard_of("alice", claw_points::DEFAULT_SHARDS);
    let line = format!("answer-mismatch: shard {shard}: entry 1: idempotency row \"g\"");
    assert!(stderr(&v).contains(&line), "{}", stderr(&v));
    s.shutdown().await.unwrap();
}

#[tokio::test]
async fn help_names_every_subcommand() {
    let h = run(None, &["--help"]).await;
    let text = stdout(&h);
    for sub in ["serve", "verify", "grant", "balance", "history"] {
        assert!(text.contains(sub), "{sub} missing from --help:\n{text}");
    }
    let g = run(None, &["grant", "--help"]).await;
    assert!(stdout(&g).contains("Idempotency key"), "{}", stdout(&g));
}

/// Each error says its cause once: a reused idempotency key, a negative
/// amount (not "unexpected argument"); `--log-format json` errors are one
/// JSON object on one line.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn errors_say_their_cause_once() {
    let db = common::sqlite_db();
    let s = start(&db, open_limits()).await;
    let url = s.url();
    let t = Some(TOKEN);
    let g = run(t, &["grant", "alice", "5", "--key", "k1", "--url", &url]).await;
    assert!(g.status.success(), "{}", stderr(&g));
    let reused = run(t, &["grant", "alice", "7", "--key", "k1", "--url", &url]).await;
    assert_eq!(reused.status.code(), Some(1));
    let text = stderr(&reused);
    assert_eq!(
        text,
        format!(
            "claw-points: points server {url}: idempotency key k1 was already used for a different request\n"
        )
    );

    let negative = run(t, &["grant", "alice", "-5", "--url", &url]).await;
    assert_eq!(negative.status.code(), Some(2));
    let text = stderr(&negative);
    assert!(text.contains("invalid value '-5' for '<AMOUNT>': negative numbers are not allowed"), "{text}");
    assert!(!text.contains("unexpected argument"), "{text}");

    let json = run(t, &["grant", "alice", "7", "--key", "k1", "--url", &url, "--log-format", "json"]).await;
    let text = stderr(&json);
    assert_eq!(text.lines().count(), 1, "{text}");
    let v: Value = serde_json::from_str(text.trim()).unwrap();
    assert_eq!(v["level"], "ERROR");
    assert_eq!(v["fields"]["message"].as_str().unwrap().matches("already used").count(), 1, "{v}");
    let json = run(t, &["grant", "alice", "-5", "--log-format", "json"]).await;
    assert_eq!(json.status.code(), Some(2));
    let v: Value = serde_json::from_str(stderr(&json).trim()).unwrap();
    assert!(v["fields"]["message"].as_str().unwrap().contains("negative numbers"), "{v}");
    s.shutdown().await.unwrap();
}

/// `verify` names a balance that differs from the audit log, or a missing
/// account row, in words (no `Some(…)`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn verify_says_which_balance_differs_in_words() {
    let db = common::sqlite_db();
    let s = start(&db, open_limits()).await;
    let c = Client::for_server(&s);
    c.grant("g1", "alice", 100).await;
    c.grant("g2", "bob", 50).await;
    let pool = s.store().pool();
    sqlx::query("UPDATE accounts SET balance = 999 WHERE id = 'alice'").execute(pool).await.unwrap();
    sqlx::query("DELETE FROM accounts WHERE id = 'bob'").execute(pool).await.unwrap();
    let v = run(Some(TOKEN), &["verify", "--url", &s.url()]).await;
    assert_eq!(v.status.code(), Some(1));
    let text = stderr(&v);
    assert!(text.contains("account alice holds 999, the audit log says 100"), "{text}");
    assert!(text.contains("account bob is missing from the accounts table, the audit log says 50"), "{text}");
    assert!(!text.contains("Some("), "{text}");
    s.shutdown().await.unwrap();
}

/// Logs written to a file have no colour codes; `--log-format json` logs
/// are one JSON object per line, every line.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn logs_to_a_file_are_plain_or_json_lines() {
    for json in [false, true] {
        let db = common::sqlite_db();
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("points.log");
        let mut cmd = tokio::process::Command::new(BIN);
        cmd.args(["serve", "--listen", "127.0.0.1:0", "--db", &db.url])
            .env("CLAW_POINTS_TOKEN", TOKEN)
            .env("RUST_LOG", "info")
            .stdout(std::process::Stdio::piped())
            .stderr(std::fs::File::create(&log).unwrap());
        if json {
            cmd.args(["--log-format", "json"]);
        }
        let mut child = cmd.spawn().unwrap();
        let mut out = tokio::io::BufReader::new(child.stdout.take().unwrap());
        let mut first = String::new();
        tokio::io::AsyncBufReadExt::read_line(&mut out, &mut first).await.unwrap();
        assert!(first.starts_with("listening on http://"), "{first}");
        // A refused request logs a warning too.
        let url = first.trim().trim_start_matches("listening on ").to_owned();
        let r = claw_chips::http::client_builder()
            .build()
            .unwrap()
            .get(format!("{url}/v1/balance?account=alice"))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 401);
        child.start_kill().unwrap();
        child.wait().await.unwrap();
        let text = std::fs::read_to_string(&log).unwrap();
        assert!(text.lines().count() >= 2, "{text}");
        assert!(!text.contains('\u{1b}'), "colour codes in a log file:\n{text}");
        for line in text.lines() {
            if json {
                let v: Value = serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}"));
                assert!(v["level"].is_string(), "{line}");
            } else {
                assert!(serde_json::from_str::<Value>(line).is_err(), "{line}");
            }
        }
        assert!(text.contains("backend=sqlite") || text.contains(r#""backend":"sqlite""#), "{text}");
    }
}

/// A database that cannot be opened is said once (sqlx's message is not
/// repeated by the error chain).
#[tokio::test]
async fn an_unopenable_database_is_said_once() {
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite://{}?mode=rwc", dir.path().join("missing-dir/points.db").display());
    let out = run(None, &["verify", "--db", &db]).await;
    assert_eq!(out.status.code(), Some(1));
    let text = stderr(&out);
    assert_eq!(text.lines().count(), 1, "{text}");
    assert!(text.starts_with("claw-points: opening the database: database error: "), "{text}");
    assert_eq!(text.matches("unable to open database file").count(), 1, "{text}");
}
