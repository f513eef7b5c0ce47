//! The admin HTTP API, on the health/metrics listener, every request with
//! `Authorization: Bearer TOKEN` (the token file `DATA_DIR/admin.token`,
//! created 0600):
//!
//! - `POST /admin/rooms` `{"room": {…rooms-file fields…}, "private": false}`
//!   opens a room → `201 {"room", "invite", "private"}`. A private room's id
//!   gets a random 128-bit suffix: only its invite URL reaches it, and no
//!   listing shows it.
//! - `GET /admin/rooms` → every served room with its invite URL.
//! - `DELETE /admin/rooms/{room}` closes a room (running hand finished or
//!   refunded, players told) → `200 {"closed"}`.
//!
//! - `POST /admin/players/{id}/ban` `{"reason": "…", "for": "24h"}` bans an
//!   identity (`for` optional: until lifted; units s, m, h, d): refused at
//!   the handshake (`banned`), and removed from every room once its running
//!   hand has settled (`kicked` `banned`, close 4001). `DELETE` lifts it.
//! - `POST /admin/players/{id}/freeze` (same body) freezes an identity: it
//!   may connect and see its balance, not sit down (a seated one loses its
//!   seat once its running hand has settled). `DELETE` lifts it.
//! - `GET /admin/sanctions` → the bans and freezes in force;
//!   `GET /admin/players/{id}` → one identity's sanctions and abuse signals;
//!   `GET /admin/signals?limit=N` → the N identities with the most flags
//!   (default 50); `GET /admin/audit` → the operator audit log's length
//!   once its hash chain checks (500 if it does not).
//!
//! Every change on an identity is appended to the hash-chained audit log
//! `DATA_DIR/admin-audit.jsonl` before it takes effect ([`crate::audit_log`]).
//!
//! A room opened here with nobody seated for the room expiry is closed.
//! Each open room is kept in `DATA_DIR/admin-rooms/<room>.json` until it is
//! closed or expires, so a restarted node serves it again at the same id.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::{Path as UrlPath, Request, State};
use axum::http::{header, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{delete, get, post};
use axum::{Json, Router};
use claw_games::DynGame;
use claw_protocol::PlayerId;
use serde::Deserialize;
use serde_json::json;
use subtle::ConstantTimeEq;
use tokio::sync::{oneshot, watch, Mutex};

use crate::config::RoomConfig;
use crate::registry::{Listing, Registry};
use crate::room::{spawn_room, unix_ms, NodeContext, RoomCmd, RoomHandle};
use crate::sanctions::{parse_term, Change, SanctionError};
use claw_engine::room::BarKind;

/// Name of the admin token file in the data directory.
pub const TOKEN_FILE: &str = "admin.token";

/// Folder of the data directory holding the rooms the API opened.
pub const ROOMS_DIR: &str = "admin-rooms";

/// Reads the admin token from `path`, or creates it (32 random bytes, hex,
/// mode 0600) if missing. The token stays the same across restarts.
pub fn load_or_create_token(path: &Path) -> std::io::Result<String> {
    match std::fs::read_to_string(path) {
        Ok(t) if t.trim().len() >= 32 => return Ok(t.trim().to_owned()),
        Ok(_) => {
            return Err(std::io::Error::other(format!(
                "{}: the token is shorter than 32 chars",
                path.display()
            )))
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(e),
    }
    let mut b = [0u8; 32];
    rand_core::RngCore::fill_bytes(&mut rand_core::OsRng, &mut b);
    let token = hex::encode(b);
    let mut opts = std::fs::OpenOptions::new();
    opts.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        opts.mode(0o600);
    }
    let mut f = opts.open(path)?;
    std::io::Write::write_all(&mut f, format!("{token}\n").as_bytes())?;
    f.sync_all()?;
    Ok(token)
}

/// What the admin API needs to open, list and close rooms.
pub struct Admin {
    token_hash: [u8; 32],
    ctx: Arc<NodeContext>,
    games: Vec<Arc<dyn DynGame>>,
    registry: Arc<Registry>,
    invite_base: String,
    dealer: PlayerId,
    /// A run-time room with nobody seated this long is closed.
    expiry: Duration,
    /// Time a closing room's running hand gets.
    grace: Duration,
    /// One open at a time: the id check and the insert do not race.
    opening: Mutex<()>,
    /// Set when the node shuts down: its rooms close but stay stored.
    stop: watch::Receiver<bool>,
}

/// The settings of the admin API.
#[derive(Debug, Clone)]
pub struct AdminConfig {
    /// The bearer token.
    pub token: String,
    /// A room opened through the API with nobody seated this long is closed.
    pub room_expiry: Duration,
    /// Time a closing room's running hand gets before it is refunded.
    pub close_grace: Duration,
}

impl Admin {
    /// The API over `registry`; rooms it opens share `ctx`.
    pub(crate) fn new(
        cfg: &AdminConfig,
        ctx: Arc<NodeContext>,
        games: Vec<Arc<dyn DynGame>>,
        registry: Arc<Registry>,
        invite_base: String,
        dealer: PlayerId,
        stop: watch::Receiver<bool>,
    ) -> Admin {
        Admin {
            token_hash: claw_protocol::sha256(&[cfg.token.as_bytes()]).0,
            ctx,
            games,
            registry,
            invite_base,
            dealer,
            expiry: cfg.room_expiry,
            grace: cfg.close_grace,
            opening: Mutex::new(()),
            stop,
        }
    }

    fn invite(&self, room: &str) -> String {
        crate::node::invite_url(&self.invite_base, room, self.dealer)
    }

    /// Closes `room` (grace for its running hand) and stops serving it; it
    /// is not reopened at the next start.
    async fn close(&self, room: &RoomHandle) {
        let (done, rx) = oneshot::channel();
        if room.send(RoomCmd::Shutdown { grace: self.grace, done }).await {
            let _ = rx.await;
        }
        room.wait_closed().await;
        self.registry.remove(&room.id);
        self.forget(&room.id);
    }

    fn rooms_dir(&self) -> std::path::PathBuf {
        self.ctx.data_dir.join(ROOMS_DIR)
    }

    fn room_file(&self, id: &str) -> std::path::PathBuf {
        self.rooms_dir().join(format!("{id}.json"))
    }

    /// Drops a closed room's stored copy.
    fn forget(&self, id: &str) {
        match std::fs::remove_file(self.room_file(id)) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => tracing::error!(room = %id, error = %e, "admin API: cannot remove the stored room"),
        }
    }

    /// Starts `room` and adds it to the registry.
    fn serve(&self, room: RoomConfig, game: Arc<dyn DynGame>, private: bool) -> Result<RoomHandle, String> {
        let handle = spawn_room(room, game, Arc::clone(&self.ctx)).map_err(|e| e.to_string())?;
        let listing = if private { Listing::Private } else { Listing::Public };
        self.registry.insert(handle.clone(), listing);
        Ok(handle)
    }
}

/// Why a validated room could not be opened.
enum OpenError {
    /// Its copy could not be kept in the data directory.
    Store(std::io::Error),
    /// The node refused to serve it.
    Refused(String),
}

/// The body of `POST /admin/rooms`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct OpenRoom {
    #[serde(deserialize_with = "RoomConfig::deserialize_with_defaults")]
    room: RoomConfig,
    #[serde(default)]
    private: bool,
}

fn error(code: StatusCode, text: impl Into<String>) -> Response {
    (code, Json(json!({ "error": text.into() }))).into_response()
}

async fn auth(State(a): State<Arc<Admin>>, req: Request, next: Next) -> Response {
    let ok = req
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|s| s.strip_prefix("Bearer "))
        .is_some_and(|t| bool::from(claw_protocol::sha256(&[t.trim().as_bytes()]).0.ct_eq(&a.token_hash)));
    if !ok {
        tracing::warn!(path = %req.uri().path(), "admin API: missing or wrong bearer token");
        return error(StatusCode::UNAUTHORIZED, "missing or wrong bearer token");
    }
    next.run(req).await
}

async fn open(State(a): State<Arc<Admin>>, body: axum::body::Bytes) -> Response {
    let req: OpenRoom = match serde_json::from_slice(&body) {
        Ok(r) => r,
        Err(e) => return error(StatusCode::BAD_REQUEST, format!("body: {e}")),
    };
    let OpenRoom { mut room, private } = req;
    if private {
        let mut secret = [0u8; 16];
        rand_core::RngCore::fill_bytes(&mut rand_core::OsRng, &mut secret);
        room.id = format!("{}-{}", room.id, hex::encode(secret));
    }
    let _one = a.opening.lock().await;
    if a.registry.contains(&room.id) {
        return error(StatusCode::CONFLICT, format!("room {} exists", room.id));
    }
    let game = match room.validate_with(&a.games) {
        Ok(g) => g,
        Err(e) => return error(StatusCode::BAD_REQUEST, e.to_string()),
    };
    let id = room.id.clone();
    // Kept before it is served: a room the node answers for survives a restart.
    let mut stored: serde_json::Value = serde_json::from_slice(&body).unwrap_or_default();
    stored["room"]["id"] = json!(id);
    stored["private"] = json!(private);
    let file = a.room_file(&id);
    // The file writes (fsync) and the room's archive scan run off the async
    // workers: a slow disk delays this request only.
    let opened = tokio::task::spawn_blocking({
        let (a, file) = (Arc::clone(&a), file.clone());
        move || {
            std::fs::create_dir_all(a.rooms_dir())
                .and_then(|()| crate::archive::write_atomic(&file, &stored.to_string()))
                .map_err(OpenError::Store)?;
            a.serve(room, game, private).map_err(|e| {
                let _ = std::fs::remove_file(&file);
                OpenError::Refused(e)
            })
        }
    })
    .await;
    let handle = match opened {
        Ok(Ok(h)) => h,
        Ok(Err(OpenError::Refused(e))) => return error(StatusCode::BAD_REQUEST, format!("room {id}: {e}")),
        Ok(Err(OpenError::Store(e))) => {
            tracing::error!(room = %id, file = %file.display(), error = %e, "admin API: cannot keep the room");
            return error(StatusCode::INTERNAL_SERVER_ERROR, "cannot store the room in the data directory");
        }
        Err(e) => {
            tracing::error!(room = %id, error = %e, "admin API: opening the room failed");
            return error(StatusCode::INTERNAL_SERVER_ERROR, "opening the room failed");
        }
    };
    tracing::info!(room = %id, private, "admin API: room opened");
    tokio::spawn(expire_when_empty(Arc::clone(&a), handle));
    (StatusCode::CREATED, Json(json!({ "room": id, "invite": a.invite(&id), "private": private })))
        .into_response()
}

/// Serves again the rooms the API opened before a restart (those not
/// closed or expired); a stored room that no longer validates is logged
/// and left on disk for the operator.
pub(crate) async fn reopen(a: &Arc<Admin>) {
    let Ok(dir) = std::fs::read_dir(a.rooms_dir()) else { return };
    let mut files: Vec<_> =
        dir.flatten().map(|e| e.path()).filter(|p| p.extension().is_some_and(|x| x == "json")).collect();
    files.sort();
    let _one = a.opening.lock().await;
    for path in files {
        let stored = std::fs::read(&path)
            .map_err(|e| e.to_string())
            .and_then(|b| serde_json::from_slice::<OpenRoom>(&b).map_err(|e| e.to_string()));
        let reopened = stored.and_then(|OpenRoom { mut room, private }| {
            if a.registry.contains(&room.id) {
                return Err(format!("room {} exists", room.id));
            }
            let game = room.validate_with(&a.games).map_err(|e| e.to_string())?;
            a.serve(room, game, private).map_err(|e| e.to_string())
        });
        match reopened {
            Ok(h) => {
                tracing::info!(room = %h.id, "admin API: room reopened after a restart");
                tokio::spawn(expire_when_empty(Arc::clone(a), h));
            }
            Err(e) => {
                tracing::error!(file = %path.display(), error = %e, "admin API: a stored room was not reopened")
            }
        }
    }
}

async fn list(State(a): State<Arc<Admin>>) -> Response {
    let rooms: Vec<_> = a
        .registry
        .all()
        .into_iter()
        .map(|(h, l)| {
            json!({ "room": h.id, "game": h.config.game, "private": l == Listing::Private, "invite": a.invite(&h.id) })
        })
        .collect();
    Json(json!({ "rooms": rooms })).into_response()
}

async fn close(State(a): State<Arc<Admin>>, UrlPath(room): UrlPath<String>) -> Response {
    let Some(h) = a.registry.get(&room) else { return error(StatusCode::NOT_FOUND, "no such room") };
    a.close(&h).await;
    tracing::info!(room = %room, "admin API: room closed");
    Json(json!({ "closed": room })).into_response()
}

/// Closes `room` once nobody has been seated in it for the expiry; stops
/// watching when it closes otherwise.
async fn expire_when_empty(a: Arc<Admin>, room: RoomHandle) {
    let tick = (a.expiry / 4).clamp(Duration::from_millis(10), Duration::from_secs(1));
    let mut empty_since = Some(tokio::time::Instant::now());
    loop {
        tokio::time::sleep(tick).await;
        let snapshot = match room.is_closed() {
            true => None,
            false => room.inspect().await,
        };
        let Some(s) = snapshot else {
            // Closed otherwise: by the node's shutdown (served again at the
            // next start) or by its own end (max hands, failures: not).
            a.registry.remove(&room.id);
            if !*a.stop.borrow() {
                a.forget(&room.id);
            }
            return;
        };
        let now = tokio::time::Instant::now();
        match (s.players.iter().any(|p| p.seat.is_some()), empty_since) {
            (true, _) => empty_since = None,
            (false, None) => empty_since = Some(now),
            (false, Some(t)) if now.duration_since(t) >= a.expiry => {
                tracing::info!(room = %room.id, expiry = ?a.expiry, "room expired: nobody seated");
                a.close(&room).await;
                return;
            }
            (false, Some(_)) => {}
        }
    }
}

/// The body of a ban or freeze.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SetBar {
    reason: String,
    #[serde(default, rename = "for")]
    term: Option<String>,
}

/// The identity in a path, or why not (a 400 answer).
fn player_id(text: &str) -> Result<PlayerId, Box<Response>> {
    text.parse().map_err(|_| Box::new(error(StatusCode::BAD_REQUEST, "not a player id (64 hex characters)")))
}

async fn set_bar(a: &Admin, id: &str, kind: BarKind, body: &[u8]) -> Response {
    let player = match player_id(id) {
        Ok(p) => p,
        Err(r) => return *r,
    };
    let req: SetBar = match serde_json::from_slice(body) {
        Ok(r) => r,
        Err(e) => return error(StatusCode::BAD_REQUEST, format!("body: {e}")),
    };
    let duration = match req.term.as_deref().map(parse_term).transpose() {
        Ok(d) => d,
        Err(e) => return error(StatusCode::BAD_REQUEST, format!("for: {e}")),
    };
    let change = Change::Set { kind, reason: req.reason, duration, by: "admin".into() };
    apply(a, player, change).await
}

async fn apply(a: &Admin, player: PlayerId, change: Change) -> Response {
    match a.ctx.sanctions.change(player, change, unix_ms()).await {
        Ok((set, found)) => {
            crate::metrics::inc(&a.ctx.metrics.sanction_actions);
            tracing::info!(player = %player, sanction = ?set, "admin API: sanction changed");
            crate::sanctions::enforce(&a.ctx, &a.registry, player).await;
            match set {
                Some(s) => (StatusCode::CREATED, Json(json!({ "sanction": s }))).into_response(),
                None if found => Json(json!({ "lifted": player })).into_response(),
                None => error(StatusCode::NOT_FOUND, "no such sanction in force"),
            }
        }
        Err(e @ SanctionError::Reason) => error(StatusCode::BAD_REQUEST, e.to_string()),
        Err(e) => {
            tracing::error!(player = %player, error = %e, "admin API: the sanction could not be stored");
            error(StatusCode::INTERNAL_SERVER_ERROR, "the sanction could not be stored")
        }
    }
}

async fn ban(State(a): State<Arc<Admin>>, UrlPath(id): UrlPath<String>, body: axum::body::Bytes) -> Response {
    set_bar(&a, &id, BarKind::Ban, &body).await
}

async fn freeze(
    State(a): State<Arc<Admin>>,
    UrlPath(id): UrlPath<String>,
    body: axum::body::Bytes,
) -> Response {
    set_bar(&a, &id, BarKind::Freeze, &body).await
}

async fn lift(a: &Admin, id: &str, kind: BarKind) -> Response {
    match player_id(id) {
        Ok(p) => apply(a, p, Change::Lift(kind)).await,
        Err(r) => *r,
    }
}

async fn unban(State(a): State<Arc<Admin>>, UrlPath(id): UrlPath<String>) -> Response {
    lift(&a, &id, BarKind::Ban).await
}

async fn unfreeze(State(a): State<Arc<Admin>>, UrlPath(id): UrlPath<String>) -> Response {
    lift(&a, &id, BarKind::Freeze).await
}

async fn sanctions(State(a): State<Arc<Admin>>) -> Response {
    Json(json!({ "sanctions": a.ctx.sanctions.list(unix_ms()) })).into_response()
}

async fn player(State(a): State<Arc<Admin>>, UrlPath(id): UrlPath<String>) -> Response {
    let player = match player_id(&id) {
        Ok(p) => p,
        Err(r) => return *r,
    };
    let sanctions: Vec<_> =
        a.ctx.sanctions.list(unix_ms()).into_iter().filter(|s| s.player == player).collect();
    let signals = a.ctx.metrics.conduct.of(&player).unwrap_or_default();
    Json(json!({ "player": player, "sanctions": sanctions, "signals": signals })).into_response()
}

#[derive(Deserialize)]
struct Limit {
    limit: Option<usize>,
}

async fn signals(
    State(a): State<Arc<Admin>>,
    axum::extract::Query(q): axum::extract::Query<Limit>,
) -> Response {
    let top = a.ctx.metrics.conduct.top(q.limit.unwrap_or(50).min(1000));
    let rows: Vec<_> = top.into_iter().map(|(p, s)| json!({ "player": p, "signals": s })).collect();
    Json(json!({ "signals": rows })).into_response()
}

async fn audit(State(a): State<Arc<Admin>>) -> Response {
    let path = a.ctx.sanctions.audit_path().to_owned();
    match tokio::task::spawn_blocking(move || crate::audit_log::verify(&path)).await {
        Ok(Ok(lines)) => Json(json!({ "lines": lines, "chain": "ok" })).into_response(),
        Ok(Err(e)) => {
            tracing::error!(severity = crate::metrics::CRITICAL, error = %e, "the operator audit log's hash chain is broken");
            error(StatusCode::INTERNAL_SERVER_ERROR, e.to_string())
        }
        Err(e) => error(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()),
    }
}

/// The routes under `/admin`, behind the bearer token.
pub(crate) fn router(a: Arc<Admin>) -> Router {
    Router::new()
        .route("/admin/rooms", get(list).post(open))
        .route("/admin/rooms/{room}", delete(close))
        .route("/admin/players/{id}", get(player))
        .route("/admin/players/{id}/ban", post(ban).delete(unban))
        .route("/admin/players/{id}/freeze", post(freeze).delete(unfreeze))
        .route("/admin/sanctions", get(sanctions))
        .route("/admin/signals", get(signals))
        .route("/admin/audit", get(audit))
        .layer(middleware::from_fn_with_state(Arc::clone(&a), auth))
        .with_state(a)
}
