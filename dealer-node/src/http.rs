//! Health and Prometheus metrics over HTTP (axum), on their own listener so
//! that the game port only ever speaks WebSocket.
//!
//! `GET /health` → `200 ok` with a JSON summary (the process answers);
//! `GET /ready` → `200` when the node can deal (the chip provider answers,
//! the data directory takes a synced write, a room is open), else `503`
//! with the reasons; `GET /metrics` → the
//! Prometheus text exposition; `GET /rooms/{room}/hands/{hand}` → an
//! archived hand's [`HandRecord`] (by hand id or number), so that a player
//! or audit bot can fetch a hand and its deferred reveal later. None exposes
//! a secret: the archive's hand files hold what the table received, plus an
//! `audit-reveal` only once published, and a hand is served only once the
//! spectator delay has passed since it was archived.
//!
//! Every answer forbids MIME sniffing and framing
//! (`X-Content-Type-Options: nosniff`, `X-Frame-Options: DENY`, a CSP with
//! `frame-ancestors 'none'`); the listener's budgets and deadlines are in
//! [`guard`].

pub mod guard;
pub mod reads;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use axum::extract::Request;
use axum::extract::{Path, State};
use axum::http::{header, HeaderValue, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use tokio::net::TcpListener;
use tokio::sync::watch;

use crate::archive::{Archive, HandKey};
use crate::metrics::Metrics;
use guard::{GuardedListener, HttpConn, HttpLimits};

/// Default spectator delay: how long after a hand is archived it is served
/// to anyone (every registered game deals hidden cards).
pub const DEFAULT_SPECTATOR_DELAY: Duration = Duration::from_secs(30);

/// What the health endpoint reports besides metrics.
#[derive(Clone)]
pub struct HttpState {
    /// The node's metrics.
    pub metrics: Arc<Metrics>,
    /// The dealer's public key (public anyway: it is in every invite URL).
    pub dealer_id: String,
    /// The rooms (listed ones in `/health`).
    pub rooms: Arc<crate::registry::Registry>,
    /// The admin API (`/admin/…`), if enabled.
    pub admin: Option<Arc<crate::admin::Admin>>,
    /// Reads of the rooms' archives (index, pool, per-address rate); a
    /// hand is served the spectator delay after it was archived.
    pub reads: Arc<reads::ArchiveReads>,
    /// The browser app and its API (`crate::web`), if served.
    #[cfg(feature = "web")]
    pub web: Option<crate::web::WebState>,
    /// What the rooms share: the chip desk and the data directory (`/ready`).
    pub node: Arc<crate::room::NodeContext>,
    /// Quick match (`POST /quick-match`), shared with the WebSocket server.
    pub matcher: Arc<crate::matchmaking::Matchmaker>,
    /// `ws[s]://HOST:PORT` (or the public URL): invites are `BASE/ROOM#KEY`.
    pub invite_base: String,
}

async fn health(State(s): State<HttpState>) -> impl IntoResponse {
    use std::sync::atomic::Ordering::Relaxed;
    Json(serde_json::json!({
        "status": "ok",
        "dealer": s.dealer_id,
        "rooms": s.rooms.listed(),
        "rooms_open": s.metrics.rooms_open.load(Relaxed),
        "connections_open": s.metrics.connections_open.load(Relaxed),
        "hands_finished": s.metrics.hands_finished.load(Relaxed),
    }))
}

/// Longest `/ready` waits for the chip provider.
const READY_CHIP_TIMEOUT: Duration = Duration::from_secs(2);

/// `GET /ready`: 200 `{"status":"ready"}`, or 503 `{"status":"not-ready",
/// "reasons":[…]}` (the details are logged, not served).
async fn ready(State(s): State<HttpState>) -> Response {
    let mut reasons: Vec<&str> = Vec::new();
    if s.rooms.all().iter().all(|(r, _)| r.is_closed()) {
        reasons.push("no room is open");
    }
    let dir = s.node.data_dir.clone();
    let probe = tokio::task::spawn_blocking(move || {
        let p = dir.join(".ready-probe");
        crate::archive::write_atomic(&p, "ready\n").and_then(|()| std::fs::remove_file(&p))
    })
    .await;
    if !matches!(probe, Ok(Ok(()))) {
        tracing::warn!(result = ?probe, "ready probe: the data directory is not writable");
        reasons.push("the archive (data directory) is not writable");
    }
    let desk = &s.node.desk;
    match tokio::time::timeout(READY_CHIP_TIMEOUT, desk.balance(&desk.dealer_account)).await {
        Ok(Ok(_)) => {}
        Ok(Err(e)) => {
            tracing::warn!(error = %e, "ready probe: the chip provider failed");
            reasons.push("the chip provider is unreachable");
        }
        Err(_) => reasons.push("the chip provider did not answer in 2 s"),
    }
    if reasons.is_empty() {
        Json(serde_json::json!({ "status": "ready" })).into_response()
    } else {
        (
            StatusCode::SERVICE_UNAVAILABLE,
            Json(serde_json::json!({ "status": "not-ready", "reasons": reasons })),
        )
            .into_response()
    }
}

async fn metrics(State(s): State<HttpState>) -> impl IntoResponse {
    ([(header::CONTENT_TYPE, "text/plain; version=0.0.4")], crate::metrics::render(&s.metrics))
}

/// `GET /rooms/{room}/hands/{hand}`: the hand's record as JSON, or 404 (no
/// such room or hand, or not public yet) / 400 (not a hand id or number).
async fn hand(State(s): State<HttpState>, Path((room, hand)): Path<(String, String)>) -> Response {
    if !s.rooms.known(&room) {
        return json_error(StatusCode::NOT_FOUND, "no such room".into());
    }
    let key: HandKey = match hand.parse() {
        Ok(k) => k,
        Err(e) => return json_error(StatusCode::BAD_REQUEST, e),
    };
    let (data_dir, delay) = (s.reads.data_dir().to_owned(), s.reads.delay());
    let found = s.reads.run(move || Archive::reader(&data_dir, &room).record_archived(key)).await;
    match found {
        // An mtime a tick after our clock reads as age 0 (served at once only with no delay).
        Ok(Ok(Some((record, at)))) if SystemTime::now().duration_since(at).unwrap_or_default() >= delay => {
            Json(record).into_response()
        }
        Ok(Ok(_)) => json_error(StatusCode::NOT_FOUND, "no such hand, or not public yet".into()),
        Ok(Err(e)) => {
            tracing::error!(error = %e, "hand record");
            json_error(StatusCode::INTERNAL_SERVER_ERROR, "the archive could not be read".into())
        }
        Err(e) => json_error(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()),
    }
}

/// `POST /quick-match` `{"game", "tier"?}` (rate-limited per address as
/// the archive reads): the room to join (a seat is held there for
/// [`crate::matchmaking::HTTP_HOLD`], one per address) →
/// `200 {"room", "game", "tier"?, "opened", "invite"}`; `404` when no room
/// or template plays that game and tier, `503` when all are full, `400`
/// for a bad body.
async fn quick_match(
    State(s): State<HttpState>,
    axum::extract::ConnectInfo(conn): axum::extract::ConnectInfo<guard::HttpConn>,
    body: axum::body::Bytes,
) -> Response {
    use crate::matchmaking::NoRoom;
    let req: claw_protocol::messages::QuickMatch = match serde_json::from_slice(&body) {
        Ok(r) => r,
        Err(e) => return json_error(StatusCode::BAD_REQUEST, format!("body: {e}")),
    };
    if let Err(e) = req.check() {
        return json_error(StatusCode::BAD_REQUEST, e.to_string());
    }
    match s.matcher.for_http(&req, conn.ip()).await {
        Ok(m) => {
            let invite = crate::node::invite_url(&s.invite_base, &m.room_id, s.node.dealer.id());
            let mut v = serde_json::to_value(&m).unwrap_or_default();
            v["room"] = v["room_id"].take();
            if let Some(o) = v.as_object_mut() {
                o.remove("room_id");
            }
            v["invite"] = invite.into();
            Json(v).into_response()
        }
        Err(e @ NoRoom::Unknown { .. }) => json_error(StatusCode::NOT_FOUND, e.to_string()),
        Err(e @ (NoRoom::Full { .. } | NoRoom::Open(_))) => {
            json_error(StatusCode::SERVICE_UNAVAILABLE, e.to_string())
        }
    }
}

fn json_error(code: StatusCode, error: String) -> Response {
    (code, Json(serde_json::json!({ "error": error }))).into_response()
}

/// The CSP of an answer that sets none: it loads nothing and is never framed.
const DEFAULT_CSP: &str = "default-src 'none'; frame-ancestors 'none'";

/// Middleware: every answer forbids MIME sniffing and framing (an answer
/// with its own CSP, the web app's pages, names `frame-ancestors` there).
async fn security_headers(req: Request, next: Next) -> Response {
    let mut response = next.run(req).await;
    let h = response.headers_mut();
    h.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    h.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    if !h.contains_key(header::CONTENT_SECURITY_POLICY) {
        h.insert(header::CONTENT_SECURITY_POLICY, HeaderValue::from_static(DEFAULT_CSP));
    }
    response
}

/// The router: `/health`, `/ready`, `/metrics`, `/rooms/{room}/hands/{hand}` and the
/// web app ([`crate::web`]), every answer with [`security_headers`].
pub fn router(state: HttpState) -> Router {
    #[cfg(feature = "web")]
    let web = state.web.clone().map(crate::web::router).unwrap_or_default();
    #[cfg(not(feature = "web"))]
    let web = Router::new();
    let admin = state.admin.clone().map(crate::admin::router).unwrap_or_default();
    let archive = Router::new()
        .route("/rooms/{room}/hands/{hand}", get(hand))
        // A quick match reads every room of its game: as costly as a read.
        .route("/quick-match", axum::routing::post(quick_match))
        .route_layer(middleware::from_fn_with_state(Arc::clone(&state.reads), reads::limit));
    Router::new()
        .route("/health", get(health))
        .route("/ready", get(ready))
        .route("/metrics", get(metrics))
        .merge(archive)
        .with_state(state)
        .merge(web)
        .merge(admin)
        .layer(middleware::from_fn(security_headers))
}

/// Binds `addr` and serves until `stop` turns true, within `limits` (the
/// connection budgets and deadlines of [`guard`]). Returns the bound
/// address and the server task.
pub async fn serve(
    addr: SocketAddr,
    state: HttpState,
    limits: HttpLimits,
    mut stop: watch::Receiver<bool>,
) -> std::io::Result<(SocketAddr, tokio::task::JoinHandle<()>)> {
    let listener = TcpListener::bind(addr).await?;
    let local = listener.local_addr()?;
    let listener = GuardedListener::new(listener, limits);
    let app = router(state)
        .layer(middleware::from_fn(guard::request))
        .into_make_service_with_connect_info::<HttpConn>();
    let task = tokio::spawn(async move {
        let shutdown = async move {
            while !*stop.borrow() {
                if stop.changed().await.is_err() {
                    break;
                }
            }
        };
        if let Err(e) = axum::serve(listener, app).with_graceful_shutdown(shutdown).await {
            tracing::error!(error = %e, "http server stopped");
        }
    });
    Ok((local, task))
}
