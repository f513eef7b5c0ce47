//! Test helpers: databases (SQLite in a temp dir; a fresh PostgreSQL database
//! per test when CLAW_TEST_PG_URL is set), a server on 127.0.0.1 and a client.

pub mod pg;

use std::net::SocketAddr;

use claw_points::{Limits, RunningServer, ServerConfig};
use reqwest::header::HeaderMap;
use serde_json::Value;

/// The token every test server uses.
pub const TOKEN: &str = "test-token-0123456789abcdef";

/// A database for one test; the SQLite directory lives as long as this value.
pub struct TestDb {
    pub url: String,
    pub backend: &'static str,
    _dir: Option<tempfile::TempDir>,
}

/// A fresh SQLite file in a new temp dir.
pub fn sqlite_db() -> TestDb {
    let dir = tempfile::tempdir().expect("tempdir");
    let url = claw_points::sqlite_url(&dir.path().join("points.db"));
    TestDb { url, backend: "sqlite", _dir: Some(dir) }
}

/// A fresh database on the PostgreSQL server named by CLAW_TEST_PG_URL
/// (the test fails when it is unset: [`pg::fresh_database`]).
pub async fn pg_db(test: &str) -> TestDb {
    let url = pg::fresh_database(test, "claw_t").await;
    TestDb { url, backend: "postgres", _dir: None }
}

/// Limits for tests: no rate limiting unless a test asks for it.
pub fn open_limits() -> Limits {
    Limits { rate_per_sec: 0, ..Limits::default() }
}

/// Starts an in-process server on 127.0.0.1:0.
pub async fn start(db: &TestDb, limits: Limits) -> RunningServer {
    let addr: SocketAddr = "127.0.0.1:0".parse().unwrap();
    claw_points::serve(ServerConfig { db_url: db.url.clone(), listen: addr, token: TOKEN.into(), limits })
        .await
        .expect("server starts")
}

/// A raw HTTP client for the JSON API.
#[derive(Clone)]
pub struct Client {
    pub http: reqwest::Client,
    pub base: String,
    pub token: String,
}

/// Status, headers and parsed JSON body of one response.
pub struct Resp {
    pub status: u16,
    pub headers: HeaderMap,
    pub text: String,
    pub json: Value,
}

impl Resp {
    pub fn code(&self) -> &str {
        self.json.get("code").and_then(Value::as_str).unwrap_or("")
    }
    pub fn replayed(&self) -> bool {
        self.headers.get("idempotent-replayed").is_some()
    }
    pub fn u64(&self, k: &str) -> u64 {
        self.json.get(k).and_then(Value::as_u64).unwrap_or_else(|| panic!("no {k} in {}", self.text))
    }
}

impl Client {
    pub fn new(base: impl Into<String>) -> Client {
        Client {
            http: claw_chips::http::client_builder().no_proxy().build().unwrap(),
            base: base.into(),
            token: TOKEN.into(),
        }
    }

    pub fn for_server(s: &RunningServer) -> Client {
        Client::new(s.url())
    }

    async fn finish(r: Result<reqwest::Response, reqwest::Error>) -> Result<Resp, reqwest::Error> {
        let r = r?;
        let status = r.status().as_u16();
        let headers = r.headers().clone();
        let text = r.text().await?;
        let json = serde_json::from_str(&text).unwrap_or(Value::Null);
        Ok(Resp { status, headers, text, json })
    }

    /// POST a JSON value (Err only on transport failure).
    pub async fn try_post(&self, path: &str, body: &Value) -> Result<Resp, reqwest::Error> {
        Self::finish(
            self.http.post(format!("{}{path}", self.base)).bearer_auth(&self.token).json(body).send().await,
        )
        .await
    }

    pub async fn post(&self, path: &str, body: Value) -> Resp {
        self.try_post(path, &body).await.expect("request")
    }

    /// POST raw bytes with a content type.
    pub async fn post_raw(&self, path: &str, ctype: &str, body: impl Into<reqwest::Body>) -> Resp {
        Self::finish(
            self.http
                .post(format!("{}{path}", self.base))
                .bearer_auth(&self.token)
                .header("content-type", ctype)
                .body(body)
                .send()
                .await,
        )
        .await
        .expect("request")
    }

    pub async fn get(&self, path_and_query: &str) -> Resp {
        Self::finish(
            self.http.get(format!("{}{path_and_query}", self.base)).bearer_auth(&self.token).send().await,
        )
        .await
        .expect("request")
    }

    pub async fn balance(&self, account: &str) -> u64 {
        let r = self.get(&format!("/v1/balance?account={account}")).await;
        assert_eq!(r.status, 200, "{}", r.text);
        r.u64("balance")
    }

    pub async fn grant(&self, key: &str, account: &str, amount: u64) -> Resp {
        self.post(
            "/v1/grant",
            serde_json::json!({"key": key, "account": account, "amount": amount, "memo": "gift"}),
        )
        .await
    }

    pub async fn verify(&self) -> Value {
        let r = self.get("/v1/audit/verify").await;
        assert_eq!(r.status, 200, "{}", r.text);
        r.json
    }
}

/// Generates `mod $name { sqlite, postgres }` running `$name(db)` on each
/// backend; `postgres` is ignored (skipped) unless built for PostgreSQL.
macro_rules! on_both_backends {
    ($($name:ident),* $(,)?) => {$(
        mod $name {
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn sqlite() {
                super::$name($crate::common::sqlite_db()).await;
            }
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            #[cfg_attr(not(claw_pg), ignore = "skipped: PostgreSQL (set CLAW_TEST_PG_URL, scripts/start-postgres.sh)")]
            async fn postgres() {
                super::$name($crate::common::pg_db(concat!(module_path!(), "::postgres")).await).await;
            }
        }
    )*};
}

/// Starts the `claw-points` binary on 127.0.0.1:0 with no rate limit and
/// `extra` flags, and reads its URL from its first stdout line.
pub async fn spawn_server(db_url: &str, extra: &[&str]) -> (tokio::process::Child, String) {
    use tokio::io::{AsyncBufReadExt, BufReader};
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_claw-points"))
        .args(["--db", db_url, "--listen", "127.0.0.1:0", "--rate", "0"])
        .args(extra)
        .env("CLAW_POINTS_TOKEN", TOKEN)
        .env("RUST_LOG", "warn")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::inherit())
        .kill_on_drop(true)
        .spawn()
        .expect("spawn claw-points");
    let stdout = child.stdout.take().unwrap();
    let mut lines = BufReader::new(stdout).lines();
    let line = tokio::time::timeout(std::time::Duration::from_secs(60), lines.next_line())
        .await
        .expect("server prints its address in time")
        .unwrap()
        .expect("a line");
    let url = line.strip_prefix("listening on ").expect("listening line").trim().to_owned();
    (child, url)
}
