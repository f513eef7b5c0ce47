//! The HTTP JSON API: routes, validation, bearer auth, rate limiting and errors.
//!
//! Every error is `{"code": "...", "message": "..."}` (plus detail fields for
//! `insufficient` and `balance-overflow`) with a fitting status.

use std::collections::HashMap;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::body::Body;
use axum::extract::{ConnectInfo, RawQuery, Request, State};
use axum::http::{header, HeaderValue, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;
use claw_protocol::{AccountId, IdempotencyKey};
use serde::de::DeserializeOwned;
use serde::Deserialize;
use serde_json::{json, Value};
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

use crate::audit::EntryKind;
use crate::store::{
    Answer, Move, Mutation, OpName, Store, StoreError, MAX_AMOUNT, MAX_BATCH_OPS, MAX_MEMO_LEN, MAX_PAGE,
};
use crate::Limits;

/// Response header set on a replayed idempotent answer.
pub const REPLAY_HEADER: &str = "idempotent-replayed";

/// A JSON error response.
#[derive(Debug)]
pub struct ApiError {
    status: StatusCode,
    code: &'static str,
    message: String,
    retry_after: Option<u64>,
}

impl ApiError {
    fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> ApiError {
        ApiError { status, code, message: message.into(), retry_after: None }
    }

    fn bad(code: &'static str, message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::BAD_REQUEST, code, message)
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = json!({"code": self.code, "message": self.message}).to_string();
        let mut resp = json_response(self.status, body);
        if let Some(secs) = self.retry_after {
            resp.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from(secs));
        }
        if self.status == StatusCode::UNAUTHORIZED {
            resp.headers_mut().insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
        }
        resp
    }
}

impl From<StoreError> for ApiError {
    fn from(e: StoreError) -> ApiError {
        tracing::error!(error = %e, "storage failure");
        match e {
            StoreError::Db(sqlx::Error::PoolTimedOut | sqlx::Error::PoolClosed | sqlx::Error::Io(_))
            | StoreError::Unavailable(_) => ApiError::new(
                StatusCode::SERVICE_UNAVAILABLE,
                "unavailable",
                "database unavailable, retry later",
            ),
            _ => ApiError::new(
                StatusCode::INTERNAL_SERVER_ERROR,
                "internal",
                "internal error; retry with the same key",
            ),
        }
    }
}

fn json_response(status: StatusCode, body: String) -> Response {
    let mut resp = Response::new(Body::from(body));
    *resp.status_mut() = status;
    resp.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    resp
}

fn ok_json(v: Value) -> Response {
    json_response(StatusCode::OK, v.to_string())
}

/// Per-client token buckets keyed by peer IP address.
pub struct RateLimiter {
    rate: f64,
    burst: f64,
    buckets: Mutex<HashMap<IpAddr, (f64, Instant)>>,
}

impl RateLimiter {
    /// `rate` tokens per second, at most `burst` saved; `rate == 0` disables limiting.
    pub fn new(rate: u32, burst: u32) -> RateLimiter {
        RateLimiter {
            rate: f64::from(rate),
            burst: f64::from(burst.max(1)),
            buckets: Mutex::new(HashMap::new()),
        }
    }

    /// Takes one token for `ip`, or says how long until one is available.
    pub fn check(&self, ip: IpAddr, now: Instant) -> Result<(), Duration> {
        if self.rate <= 0.0 {
            return Ok(());
        }
        let mut map = self.buckets.lock().unwrap_or_else(|p| p.into_inner());
        if map.len() > 100_000 {
            // Forget clients whose bucket has refilled completely.
            let full = Duration::from_secs_f64(self.burst / self.rate);
            map.retain(|_, (_, t)| now.duration_since(*t) < full);
        }
        let (tokens, last) = map.entry(ip).or_insert((self.burst, now));
        let elapsed = now.saturating_duration_since(*last).as_secs_f64();
        *tokens = (*tokens + elapsed * self.rate).min(self.burst);
        *last = now;
        if *tokens >= 1.0 {
            *tokens -= 1.0;
            Ok(())
        } else {
            Err(Duration::from_secs_f64((1.0 - *tokens) / self.rate))
        }
    }
}

/// Shared state of the handlers.
pub struct AppState {
    /// The ledger.
    pub store: Store,
    /// SHA-256 of the bearer token (compared in constant time).
    pub token_hash: [u8; 32],
    /// Size, time and rate limits.
    pub limits: Limits,
    /// Rate limiter of requests without the right token, per peer IP.
    pub limiter: RateLimiter,
    /// Rate limiter of requests with the right token (the dealer), per peer IP:
    /// players' traffic never empties the dealer's bucket.
    pub operator_limiter: RateLimiter,
}

/// Builds the router. Serve it with `into_make_service_with_connect_info::<SocketAddr>()`.
pub fn router(state: Arc<AppState>) -> Router {
    let protected = Router::new()
        .route("/v1/balance", get(get_balance))
        .route("/v1/debit", post(post_debit))
        .route("/v1/credit", post(post_credit))
        .route("/v1/grant", post(post_grant))
        .route("/v1/settle", post(post_settle))
        .route("/v1/transactions", get(get_transactions))
        .route("/v1/audit", get(get_audit))
        .route("/v1/audit/verify", get(verify).post(verify))
        .route("/v1/audit/checkpoint", post(checkpoint))
        .route("/v1/stats", get(stats))
        .route_layer(middleware::from_fn_with_state(state.clone(), auth));
    Router::new()
        .route("/v1/health", get(health))
        .merge(protected)
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        .layer(middleware::from_fn_with_state(state.clone(), rate_limit))
        .with_state(state)
}

async fn not_found() -> ApiError {
    ApiError::new(StatusCode::NOT_FOUND, "not-found", "no such endpoint")
}

async fn method_not_allowed() -> ApiError {
    ApiError::new(StatusCode::METHOD_NOT_ALLOWED, "method-not-allowed", "method not allowed on this endpoint")
}

/// Requests with the right token and the rest have separate buckets, so a
/// flood of other requests from the dealer's address cannot refuse the dealer.
async fn rate_limit(State(st): State<Arc<AppState>>, req: Request, next: Next) -> Response {
    let ip = req
        .extensions()
        .get::<ConnectInfo<SocketAddr>>()
        .map(|c| c.0.ip())
        .unwrap_or(IpAddr::V4(Ipv4Addr::UNSPECIFIED));
    let limiter = if bearer_ok(&st, &req) { &st.operator_limiter } else { &st.limiter };
    match limiter.check(ip, Instant::now()) {
        Ok(()) => next.run(req).await,
        Err(wait) => {
            let secs = wait.as_secs_f64().ceil().max(1.0) as u64;
            let mut e = ApiError::new(
                StatusCode::TOO_MANY_REQUESTS,
                "rate-limited",
                format!("too many requests; retry in {secs} s"),
            );
            e.retry_after = Some(secs);
            e.into_response()
        }
    }
}

/// Hashes a token so that comparisons take the same time whatever its length.
pub fn token_hash(token: &str) -> [u8; 32] {
    Sha256::digest(token.as_bytes()).into()
}

/// True when the request carries the server's bearer token (constant-time compare).
fn bearer_ok(st: &AppState, req: &Request) -> bool {
    req.headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|s| s.strip_prefix("Bearer "))
        .map(|t| bool::from(token_hash(t.trim()).ct_eq(&st.token_hash)))
        .unwrap_or(false)
}

async fn auth(State(st): State<Arc<AppState>>, req: Request, next: Next) -> Response {
    if !bearer_ok(&st, &req) {
        tracing::warn!(path = %req.uri().path(), "rejected request: bad or missing bearer token");
        return ApiError::new(StatusCode::UNAUTHORIZED, "unauthorized", "missing or wrong bearer token")
            .into_response();
    }
    next.run(req).await
}

async fn read_json<T: DeserializeOwned>(req: Request, limits: &Limits) -> Result<T, ApiError> {
    let too_large = || {
        ApiError::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            "body-too-large",
            format!("request body exceeds {} bytes", limits.max_body_bytes),
        )
    };
    let ct = req.headers().get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).unwrap_or("");
    if !ct.trim_start().to_ascii_lowercase().starts_with("application/json") {
        return Err(ApiError::new(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "unsupported-media-type",
            "Content-Type must be application/json",
        ));
    }
    let declared = req
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|s| s.parse::<u64>().ok());
    if declared.is_some_and(|n| n > limits.max_body_bytes as u64) {
        return Err(too_large());
    }
    let bytes = match tokio::time::timeout(
        limits.body_timeout,
        axum::body::to_bytes(req.into_body(), limits.max_body_bytes),
    )
    .await
    {
        Err(_) => {
            return Err(ApiError::new(
                StatusCode::REQUEST_TIMEOUT,
                "body-timeout",
                "request body arrived too slowly",
            ))
        }
        Ok(Err(e)) => {
            let text = format!("{e:?} {e}");
            return Err(if text.contains("length limit") {
                too_large()
            } else {
                ApiError::bad("bad-body", "could not read the request body")
            });
        }
        Ok(Ok(b)) => b,
    };
    serde_json::from_slice(&bytes).map_err(|e| match e.classify() {
        serde_json::error::Category::Data => ApiError::bad("invalid-body", format!("invalid request: {e}")),
        _ => ApiError::bad("malformed-json", format!("malformed JSON: {e}")),
    })
}

fn parse_account(s: &str) -> Result<AccountId, ApiError> {
    AccountId::new(s).map_err(|_| {
        ApiError::bad(
            "bad-account",
            format!("account id must be 1–{} chars of [A-Za-z0-9-_.:/]", AccountId::MAX_LEN),
        )
    })
}

fn parse_key(s: &str) -> Result<IdempotencyKey, ApiError> {
    IdempotencyKey::new(s).map_err(|_| {
        ApiError::bad(
            "bad-key",
            format!("idempotency key must be 1–{} chars of [A-Za-z0-9-_.:/]", IdempotencyKey::MAX_LEN),
        )
    })
}

fn parse_amount(n: &serde_json::Number) -> Result<u64, ApiError> {
    match n.as_u64() {
        Some(a) if (1..=MAX_AMOUNT).contains(&a) => Ok(a),
        _ => Err(ApiError::bad(
            "bad-amount",
            format!("amount must be an integer from 1 to {MAX_AMOUNT}, got {n}"),
        )),
    }
}

fn parse_memo(s: String) -> Result<String, ApiError> {
    if s.len() > MAX_MEMO_LEN || s.chars().any(char::is_control) {
        return Err(ApiError::bad(
            "bad-memo",
            format!("memo must be at most {MAX_MEMO_LEN} bytes without control characters"),
        ));
    }
    Ok(s)
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SingleReq {
    key: String,
    account: String,
    amount: serde_json::Number,
    #[serde(default)]
    memo: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct OpReq {
    kind: String,
    account: String,
    amount: serde_json::Number,
    #[serde(default)]
    memo: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SettleReq {
    key: String,
    ops: Vec<OpReq>,
}

async fn parse_mutation(
    req: Request,
    limits: &Limits,
    op: OpName,
) -> Result<(IdempotencyKey, Mutation), ApiError> {
    if op == OpName::Settle {
        let r: SettleReq = read_json(req, limits).await?;
        let key = parse_key(&r.key)?;
        if r.ops.is_empty() || r.ops.len() > MAX_BATCH_OPS {
            return Err(ApiError::bad(
                "bad-batch",
                format!("a settle batch holds 1 to {MAX_BATCH_OPS} operations"),
            ));
        }
        let mut moves = Vec::with_capacity(r.ops.len());
        for o in r.ops {
            let kind = match o.kind.as_str() {
                "debit" => EntryKind::Debit,
                "credit" => EntryKind::Credit,
                other => {
                    return Err(ApiError::bad(
                        "bad-op",
                        format!("operation kind must be debit or credit, got {other:?}"),
                    ))
                }
            };
            moves.push(Move {
                kind,
                account: parse_account(&o.account)?,
                amount: parse_amount(&o.amount)?,
                memo: parse_memo(o.memo)?,
            });
        }
        return Ok((key, Mutation { op, moves }));
    }
    let r: SingleReq = read_json(req, limits).await?;
    let key = parse_key(&r.key)?;
    let kind = match op {
        OpName::Debit => EntryKind::Debit,
        OpName::Credit => EntryKind::Credit,
        _ => EntryKind::Grant,
    };
    let mv = Move {
        kind,
        account: parse_account(&r.account)?,
        amount: parse_amount(&r.amount)?,
        memo: parse_memo(r.memo)?,
    };
    Ok((key, Mutation { op, moves: vec![mv] }))
}

fn answer_response(a: Answer) -> Response {
    let status = StatusCode::from_u16(a.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let mut resp = json_response(status, a.body);
    if a.replayed {
        resp.headers_mut().insert(REPLAY_HEADER, HeaderValue::from_static("true"));
    }
    resp
}

async fn mutate(st: Arc<AppState>, req: Request, op: OpName) -> Response {
    let result = async {
        let (key, m) = parse_mutation(req, &st.limits, op).await?;
        let answer = st.store.apply(&key, m).await?;
        if !answer.replayed {
            tracing::debug!(op = op.as_str(), key = %key, status = answer.status, "mutation");
        }
        Ok::<_, ApiError>(answer_response(answer))
    }
    .await;
    result.unwrap_or_else(IntoResponse::into_response)
}

async fn post_debit(State(st): State<Arc<AppState>>, req: Request) -> Response {
    mutate(st, req, OpName::Debit).await
}

async fn post_credit(State(st): State<Arc<AppState>>, req: Request) -> Response {
    mutate(st, req, OpName::Credit).await
}

async fn post_grant(State(st): State<Arc<AppState>>, req: Request) -> Response {
    mutate(st, req, OpName::Grant).await
}

async fn post_settle(State(st): State<Arc<AppState>>, req: Request) -> Response {
    mutate(st, req, OpName::Settle).await
}

/// Parses a query string, refusing unknown or repeated parameters.
fn query_params(raw: Option<String>, allowed: &[&str]) -> Result<HashMap<String, String>, ApiError> {
    let mut out = HashMap::new();
    let raw = raw.unwrap_or_default();
    for (k, v) in url::form_urlencoded::parse(raw.as_bytes()) {
        if !allowed.contains(&k.as_ref()) {
            return Err(ApiError::bad("bad-query", format!("unknown query parameter {k:?}")));
        }
        if out.insert(k.to_string(), v.to_string()).is_some() {
            return Err(ApiError::bad("bad-query", format!("repeated query parameter {k:?}")));
        }
    }
    Ok(out)
}

fn param_u64(q: &HashMap<String, String>, name: &str, default: u64, max: u64) -> Result<u64, ApiError> {
    match q.get(name) {
        None => Ok(default),
        Some(s) => match s.parse::<u64>() {
            Ok(v) if v <= max => Ok(v),
            _ => Err(ApiError::bad("bad-query", format!("{name} must be an integer from 0 to {max}"))),
        },
    }
}

fn required_account(q: &HashMap<String, String>) -> Result<AccountId, ApiError> {
    let a = q.get("account").ok_or_else(|| ApiError::bad("bad-query", "missing query parameter account"))?;
    parse_account(a)
}

async fn get_balance(State(st): State<Arc<AppState>>, RawQuery(raw): RawQuery) -> Result<Response, ApiError> {
    let q = query_params(raw, &["account"])?;
    let account = required_account(&q)?;
    let balance = st.store.balance(&account).await?;
    Ok(ok_json(json!({"account": account.as_str(), "balance": balance})))
}

async fn get_transactions(
    State(st): State<Arc<AppState>>,
    RawQuery(raw): RawQuery,
) -> Result<Response, ApiError> {
    let q = query_params(raw, &["account", "after", "limit"])?;
    let account = required_account(&q)?;
    let after = match q.get("after") {
        None => (0, 0),
        Some(c) => {
            let bad = || ApiError::bad("bad-query", "after must be a cursor SEQ:IDX from a previous page");
            let (s, i) = c.split_once(':').ok_or_else(bad)?;
            (s.parse::<u64>().map_err(|_| bad())?, i.parse::<u32>().map_err(|_| bad())?)
        }
    };
    let limit = param_u64(&q, "limit", 100, u64::from(MAX_PAGE))?.max(1) as u32;
    let entries = st.store.history(&account, after, limit).await?;
    let next = (entries.len() == limit as usize)
        .then(|| entries.last().map(|e| format!("{}:{}", e.seq, e.idx)))
        .flatten();
    Ok(ok_json(json!({"account": account.as_str(), "entries": entries, "next": next})))
}

async fn get_audit(State(st): State<Arc<AppState>>, RawQuery(raw): RawQuery) -> Result<Response, ApiError> {
    let q = query_params(raw, &["after", "limit"])?;
    let after = param_u64(&q, "after", 0, i64::MAX as u64)?;
    let limit = param_u64(&q, "limit", 100, u64::from(MAX_PAGE))?.max(1) as u32;
    let entries = st.store.audit_page(after, limit).await?;
    let next = (entries.len() == limit as usize).then(|| entries.last().map(|e| e.seq)).flatten();
    Ok(ok_json(json!({"entries": entries, "next": next})))
}

async fn verify(State(st): State<Arc<AppState>>, RawQuery(raw): RawQuery) -> Result<Response, ApiError> {
    let q = query_params(raw, &["shard"])?;
    let report = match q.get("shard") {
        None => st.store.verify().await?,
        Some(_) => {
            let last = st.store.shard_count().saturating_sub(1);
            let shard = param_u64(&q, "shard", 0, u64::from(last))? as u32;
            st.store.verify_shard(shard).await?
        }
    };
    if !report.ok {
        tracing::error!(problems = report.problems.len(), "audit verification failed");
    }
    Ok(ok_json(serde_json::to_value(report).unwrap_or(Value::Null)))
}

/// Records every shard's head as a checkpoint (`null` when none moved since the last).
async fn checkpoint(State(st): State<Arc<AppState>>) -> Result<Response, ApiError> {
    let c = st.store.checkpoint().await?;
    Ok(ok_json(json!({ "checkpoint": c })))
}

/// The group commit's counters (commits, mutations, largest group).
async fn stats(State(st): State<Arc<AppState>>) -> Response {
    ok_json(json!({"group_commit": st.store.group_stats()}))
}

async fn health(State(st): State<Arc<AppState>>) -> Result<Response, ApiError> {
    sqlx::query("SELECT 1").fetch_one(st.store.pool()).await.map_err(StoreError::from)?;
    let backend = match st.store.backend() {
        crate::store::Backend::Sqlite => "sqlite",
        crate::store::Backend::Postgres => "postgres",
    };
    Ok(ok_json(json!({"status": "ok", "backend": backend})))
}
