//! The browser app on the dealer's HTTP port: a lobby, a spectator table
//! and hand pages with the in-browser audit (sources in `web/`, bundled into
//! `web/dist/`, embedded here so nothing is fetched at run time), plus the
//! JSON and hand-history endpoints they read.
//!
//! Spectators only ever get archived hands, and only once the spectator
//! delay has passed since the hand's file was written: a hand in progress,
//! its sealed cards and its secrets never leave the dealer through here.

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use axum::extract::{Path as UrlPath, Query, State};
use axum::http::{header, HeaderValue, StatusCode};
use axum::middleware;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use claw_audit::export::{export, ExportOptions, Format};
use claw_audit::Auditor;
use claw_protocol::PlayerId;
use serde::Deserialize;
use serde_json::json;

use crate::http::reads::{self, ArchiveReads, ReadError, Rendered};
use crate::registry::Registry;

const INDEX_HTML: &str = include_str!("../../web/dist/index.html");
const APP_JS: &str = include_str!("../../web/dist/app.js");
const APP_CSS: &str = include_str!("../../web/dist/app.css");

pub use crate::http::DEFAULT_SPECTATOR_DELAY;

/// What the web app serves.
#[derive(Clone)]
pub struct WebState {
    dealer: PlayerId,
    /// The node's rooms: configured and opened through the admin API alike.
    rooms: Arc<Registry>,
    /// The archives, read off the async workers within the per-address rate.
    reads: Arc<ArchiveReads>,
    /// The rooms' WebSocket base (`ws[s]://HOST:PORT[/prefix]`, the invite
    /// URLs' front): the play page connects there.
    game_url: Option<Arc<str>>,
    /// The pages' Content Security Policy: nothing loads from elsewhere, and
    /// the page may connect to the node itself and to the game port's origin.
    csp: HeaderValue,
}

/// The pages' policy, `connect-src` extended with `origin`.
fn page_csp(origin: Option<&str>) -> HeaderValue {
    let connect = origin.map_or_else(|| "'self'".to_owned(), |o| format!("'self' {o}"));
    let csp = format!(
        "default-src 'self'; img-src 'self' data:; style-src 'self'; connect-src {connect}; frame-ancestors 'none'"
    );
    HeaderValue::from_str(&csp).unwrap_or(HeaderValue::from_static(
        "default-src 'self'; img-src 'self' data:; style-src 'self'; connect-src 'self'; frame-ancestors 'none'",
    ))
}

/// `ws[s]://AUTHORITY` of a WebSocket base URL, when it is one whose
/// authority is a plain host and port (nothing that could end a CSP source).
fn ws_origin(base: &str) -> Option<String> {
    let (scheme, rest) = base.split_once("://")?;
    let authority = rest.split('/').next()?;
    let plain = |c: char| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | ':' | '[' | ']');
    ((scheme == "ws" || scheme == "wss") && !authority.is_empty() && authority.chars().all(plain))
        .then(|| format!("{scheme}://{authority}"))
}

impl WebState {
    /// The app for the rooms of `rooms` (the lobby lists the public ones in
    /// the order they were opened), their archives read through `reads`
    /// (spectators its delay behind the table).
    pub fn new(dealer: PlayerId, rooms: Arc<Registry>, reads: Arc<ArchiveReads>) -> WebState {
        WebState { dealer, rooms, reads, game_url: None, csp: page_csp(None) }
    }

    /// The rooms' WebSocket base (`ws[s]://HOST:PORT[/prefix]`): served to
    /// the play page, whose policy then allows connecting to its origin.
    pub fn with_game_url(mut self, base: &str) -> WebState {
        self.csp = page_csp(ws_origin(base).as_deref());
        self.game_url = Some(base.into());
        self
    }

    /// Whether `id` is a room this node serves or served (a private room is
    /// reached by its id, never listed).
    #[allow(clippy::result_large_err)] // an axum Response is the error page itself
    fn known(&self, id: &str) -> Result<(), Response> {
        if self.rooms.known(id) {
            Ok(())
        } else {
            Err(not_found("no such room"))
        }
    }
}

fn not_found(why: &'static str) -> Response {
    (StatusCode::NOT_FOUND, why).into_response()
}

/// The router: the app's pages and assets, and `/api/…` (the archive's
/// routes within the per-address rate).
pub fn router(state: WebState) -> Router {
    let archive = Router::new()
        .route("/api/rooms/{room}/hands", get(hands))
        .route("/api/rooms/{room}/hands/{file}", get(transcript))
        .route("/api/rooms/{room}/hands/{file}/history", get(history))
        .route_layer(middleware::from_fn_with_state(Arc::clone(&state.reads), reads::limit));
    Router::new()
        .route("/", get(index))
        .route("/room/{room}", get(index))
        .route("/hand/{room}/{file}", get(index))
        .route("/audit", get(index))
        .route("/play/{room}", get(index))
        .route(
            "/app.js",
            get(|| async { ([(header::CONTENT_TYPE, "text/javascript; charset=utf-8")], APP_JS) }),
        )
        .route("/app.css", get(|| async { ([(header::CONTENT_TYPE, "text/css; charset=utf-8")], APP_CSS) }))
        .route("/api/rooms", get(rooms))
        .merge(archive)
        .with_state(state)
}

async fn index(State(s): State<WebState>) -> impl IntoResponse {
    (
        [
            (header::CONTENT_TYPE, HeaderValue::from_static("text/html; charset=utf-8")),
            // Everything is embedded: the page may load nothing from elsewhere.
            (header::CONTENT_SECURITY_POLICY, s.csp.clone()),
        ],
        INDEX_HTML,
    )
}

async fn rooms(State(s): State<WebState>) -> impl IntoResponse {
    let mut out = Vec::new();
    for handle in s.rooms.listed().iter().filter_map(|id| s.rooms.get(id)) {
        let snap = handle.inspect().await;
        let public_config: serde_json::Value =
            serde_json::from_str(handle.public_config.as_str()).unwrap_or_default();
        out.push(json!({
            "room": handle.id,
            "game": handle.config.game,
            "max_players": public_config.get("max_players"),
            "config": public_config,
            "phase": snap.as_ref().map(|s| s.phase),
            "hands_played": snap.as_ref().map(|s| s.hands_played),
            "players": snap.as_ref().map(|s| s.players.clone()).unwrap_or_default(),
        }));
    }
    Json(json!({
        "dealer": s.dealer,
        "game_url": s.game_url.as_deref(),
        "spectator_delay_ms": s.reads.delay().as_millis() as u64,
        "rooms": out,
    }))
}

/// An archive file name: `<8+ digits>-<32 hex>.jsonl` (nothing else is served).
fn valid_file(name: &str) -> bool {
    reads::file_hand_number(name).is_some()
}

fn unix_ms(t: SystemTime) -> u64 {
    t.duration_since(SystemTime::UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64)
}

fn unavailable(e: ReadError) -> Response {
    tracing::error!(error = %e, "archive read");
    (StatusCode::SERVICE_UNAVAILABLE, "the archive could not be read now").into_response()
}

/// `?before=N&limit=K`: the page of hands older than hand `N`, `K` of them
/// (at most 200, the default).
#[derive(Deserialize)]
struct PageQuery {
    before: Option<u64>,
    limit: Option<usize>,
}

async fn hands(
    State(s): State<WebState>,
    UrlPath(room): UrlPath<String>,
    Query(q): Query<PageQuery>,
) -> Response {
    if let Err(e) = s.known(&room) {
        return e;
    }
    let reads = Arc::clone(&s.reads);
    let id = room.clone();
    let page = match s.reads.run(move || reads.page(&id, q.before, q.limit.unwrap_or(reads::MAX_PAGE))).await
    {
        Ok(p) => p,
        Err(e) => return unavailable(e),
    };
    let list: Vec<_> = page
        .hands
        .iter()
        .map(|h| {
            json!({
                "file": h.file,
                "hand_number": h.hand_number,
                "hand_id": h.file.split_once('-').map_or("", |(_, r)| r.trim_end_matches(".jsonl")),
                "archived_ms": unix_ms(h.archived),
            })
        })
        .collect();
    Json(json!({
        "room": room,
        "hands": list,
        "not_yet_public": page.not_yet_public,
        "next_before": page.next_before,
    }))
    .into_response()
}

/// A public archived file: (its length, its archive time), or why not.
/// Blocking.
fn visible(path: &Path, delay: Duration) -> Result<(u64, SystemTime), &'static str> {
    let meta = std::fs::metadata(path).map_err(|_| "no such hand")?;
    let written = meta.modified().map_err(|_| "no such hand")?;
    // An mtime a tick after our clock reads as age 0 (served at once only with no delay).
    if SystemTime::now().duration_since(written).unwrap_or_default() >= delay {
        Ok((meta.len(), written))
    } else {
        Err("no such hand, or not public yet")
    }
}

/// A public archived transcript's text. Blocking.
fn read_visible(path: &Path, delay: Duration) -> Result<(String, SystemTime), &'static str> {
    let (_, written) = visible(path, delay)?;
    let text = std::fs::read_to_string(path).map_err(|_| "no such hand")?;
    Ok((text, written))
}

async fn transcript(State(s): State<WebState>, UrlPath((room, file)): UrlPath<(String, String)>) -> Response {
    if let Err(e) = s.known(&room) {
        return e;
    }
    if !valid_file(&file) {
        return not_found("no such hand");
    }
    let (path, delay) = (s.reads.transcripts(&room).join(&file), s.reads.delay());
    match s.reads.run(move || read_visible(&path, delay)).await {
        Ok(Ok((text, _))) => ([(header::CONTENT_TYPE, "application/x-ndjson")], text).into_response(),
        Ok(Err(why)) => not_found(why),
        Err(e) => unavailable(e),
    }
}

#[derive(Deserialize)]
struct HistoryQuery {
    format: Option<String>,
}

async fn history(
    State(s): State<WebState>,
    UrlPath((room, file)): UrlPath<(String, String)>,
    Query(q): Query<HistoryQuery>,
) -> Response {
    let format: Format = match q.format.as_deref().unwrap_or("pokerstars").parse() {
        Ok(f) => f,
        Err(e) => return (StatusCode::BAD_REQUEST, e.to_string()).into_response(),
    };
    if let Err(e) = s.known(&room) {
        return e;
    }
    if !valid_file(&file) {
        return not_found("no such hand");
    }
    let (path, delay, dealer) = (s.reads.transcripts(&room).join(&file), s.reads.delay(), s.dealer);
    let reads = Arc::clone(&s.reads);
    let answer = s
        .reads
        .run(move || {
            let (len, _) = visible(&path, delay).map_err(|why| (StatusCode::NOT_FOUND, why.to_owned()))?;
            // A hand's file changes only by growing (its reveal published):
            // one audit per length.
            reads.rendered((room.clone(), file, len, format.name()), || {
                let (text, written) =
                    read_visible(&path, delay).map_err(|why| (StatusCode::NOT_FOUND, why.to_owned()))?;
                render_history(dealer, &room, &text, written, format)
            })
        })
        .await;
    let ty = if format == Format::Ohh { "application/json" } else { "text/plain; charset=utf-8" };
    match answer {
        Ok(Ok(text)) => ([(header::CONTENT_TYPE, ty)], text.to_string()).into_response(),
        Ok(Err((code, why))) => (code, why).into_response(),
        Err(e) => unavailable(e),
    }
}

/// An archived hand audited, then exported in `format`. Blocking.
fn render_history(dealer: PlayerId, room: &str, text: &str, written: SystemTime, format: Format) -> Rendered {
    let unprocessable = |e: String| (StatusCode::UNPROCESSABLE_ENTITY, e);
    let verdicts = Auditor::new(Some(dealer)).audit_jsonl(text).map_err(|e| unprocessable(e.to_string()))?;
    let opts = ExportOptions { time_ms: unix_ms(written), table: room.to_owned(), hero: None, seats: None };
    let mut out = String::new();
    for v in verdicts {
        let report = v.outcome.map_err(|e| unprocessable(format!("audit failed: {e}")))?;
        out.push_str(&export(&report.hand, format, &opts).map_err(|e| unprocessable(e.to_string()))?);
        out.push('\n');
    }
    Ok(Arc::from(out))
}

#[cfg(test)]
mod tests {
    use super::{page_csp, valid_file, ws_origin};

    #[test]
    fn the_play_page_may_connect_to_the_game_port_and_nowhere_else() {
        assert_eq!(ws_origin("ws://127.0.0.1:7777").as_deref(), Some("ws://127.0.0.1:7777"));
        assert_eq!(ws_origin("wss://cards.example.com/claw").as_deref(), Some("wss://cards.example.com"));
        assert_eq!(ws_origin("ws://[::1]:7777").as_deref(), Some("ws://[::1]:7777"));
        for bad in ["http://h:1", "ws://", "ws://h; script-src *", "ws://h:1 https://evil", "h:1"] {
            assert_eq!(ws_origin(bad), None, "{bad}");
        }
        let csp = page_csp(ws_origin("ws://127.0.0.1:7777").as_deref());
        let csp = csp.to_str().unwrap_or_default();
        assert!(csp.contains("connect-src 'self' ws://127.0.0.1:7777;"), "{csp}");
        assert!(csp.contains("default-src 'self'") && csp.contains("frame-ancestors 'none'"), "{csp}");
        let none = page_csp(None);
        assert!(none.to_str().unwrap_or_default().contains("connect-src 'self';"));
    }

    #[test]
    fn only_archive_names_are_served() {
        assert!(valid_file("00000003-0123456789abcdef0123456789abcdef.jsonl"));
        for bad in [
            "../../dealer.key",
            "00000003-0123456789abcdef0123456789abcdef.jsonl.tmp",
            "00000003-0123456789ABCDEF0123456789abcdef.jsonl",
            "0000000a-0123456789abcdef0123456789abcdef.jsonl",
            "..%2f..%2fdealer.key",
            "",
        ] {
            assert!(!valid_file(bad), "{bad}");
        }
    }
}
