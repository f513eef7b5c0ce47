//! The browser app on the dealer's HTTP port: a lobby, a spectator table
//! and hand pages with the in-browser audit (sources in `web/`, bundled into
//! `web/dist/`, embedded here so nothing is fetched at run time), plus the
//! JSON and hand-history endpoints they read.
//!
//! Spectators only ever get archived hands, and only once the spectator
//! delay has passed since the hand's file was written: a hand in progress,
//! its sealed cards and its secrets never leave the dealer through here.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use axum::extract::{Path as UrlPath, Query, State};
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use claw_player::export::{export, ExportOptions, Format};
use claw_player::Auditor;
use claw_protocol::PlayerId;
use serde::Deserialize;
use serde_json::json;

use crate::registry::Registry;

const INDEX_HTML: &str = include_str!("../../web/dist/index.html");
const APP_JS: &str = include_str!("../../web/dist/app.js");
const APP_CSS: &str = include_str!("../../web/dist/app.css");

pub use crate::http::DEFAULT_SPECTATOR_DELAY;

/// Hands listed per room, newest first.
const MAX_LISTED: usize = 200;

/// What the web app serves.
#[derive(Clone)]
pub struct WebState {
    dealer: PlayerId,
    /// The node's rooms: configured and opened through the admin API alike.
    rooms: Arc<Registry>,
    data_dir: Arc<Path>,
    delay: Duration,
}

impl WebState {
    /// The app for the rooms of `rooms` (the lobby lists the public ones in
    /// the order they were opened), their archives under `data_dir`, and
    /// spectators `delay` behind the table (default 30 s).
    pub fn new(dealer: PlayerId, rooms: Arc<Registry>, data_dir: &Path, delay: Option<Duration>) -> WebState {
        WebState { dealer, rooms, data_dir: data_dir.into(), delay: delay.unwrap_or(DEFAULT_SPECTATOR_DELAY) }
    }

    /// The transcript folder of a room this node serves or served (a
    /// private room is reached by its id, never listed).
    #[allow(clippy::result_large_err)] // an axum Response is the error page itself
    fn transcripts(&self, id: &str) -> Result<PathBuf, Response> {
        if !self.rooms.known(id) {
            return Err(not_found("no such room"));
        }
        Ok(self.data_dir.join("rooms").join(id).join("transcripts"))
    }
}

fn not_found(why: &'static str) -> Response {
    (StatusCode::NOT_FOUND, why).into_response()
}

/// The router: the app's pages and assets, and `/api/…`.
pub fn router(state: WebState) -> Router {
    Router::new()
        .route("/", get(index))
        .route("/room/{room}", get(index))
        .route("/hand/{room}/{file}", get(index))
        .route("/audit", get(index))
        .route(
            "/app.js",
            get(|| async { ([(header::CONTENT_TYPE, "text/javascript; charset=utf-8")], APP_JS) }),
        )
        .route("/app.css", get(|| async { ([(header::CONTENT_TYPE, "text/css; charset=utf-8")], APP_CSS) }))
        .route("/api/rooms", get(rooms))
        .route("/api/rooms/{room}/hands", get(hands))
        .route("/api/rooms/{room}/hands/{file}", get(transcript))
        .route("/api/rooms/{room}/hands/{file}/history", get(history))
        .with_state(state)
}

async fn index() -> impl IntoResponse {
    (
        [
            (header::CONTENT_TYPE, "text/html; charset=utf-8"),
            // Everything is embedded: the page may load nothing from elsewhere.
            (
                header::CONTENT_SECURITY_POLICY,
                "default-src 'self'; img-src 'self' data:; style-src 'self'; connect-src 'self'; \
                 frame-ancestors 'none'",
            ),
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
    Json(json!({"dealer": s.dealer, "spectator_delay_ms": s.delay.as_millis() as u64, "rooms": out}))
}

/// An archive file name: `<8 digits>-<32 hex>.jsonl` (nothing else is served).
fn valid_file(name: &str) -> bool {
    let b = name.as_bytes();
    name.len() == 8 + 1 + 32 + 6
        && b[..8].iter().all(u8::is_ascii_digit)
        && b[8] == b'-'
        && b[9..41].iter().all(|c| matches!(c, b'0'..=b'9' | b'a'..=b'f'))
        && name.ends_with(".jsonl")
}

/// Whether a spectator may see a file: archived at least `delay` ago.
fn visible(path: &Path, delay: Duration) -> Option<SystemTime> {
    let written = std::fs::metadata(path).and_then(|m| m.modified()).ok()?;
    (SystemTime::now().duration_since(written).ok()? >= delay).then_some(written)
}

async fn hands(State(s): State<WebState>, UrlPath(room): UrlPath<String>) -> Response {
    let transcripts = match s.transcripts(&room) {
        Ok(t) => t,
        Err(e) => return e,
    };
    let mut names: Vec<String> = std::fs::read_dir(&transcripts)
        .map(|d| {
            d.flatten().filter_map(|e| e.file_name().into_string().ok()).filter(|n| valid_file(n)).collect()
        })
        .unwrap_or_default();
    names.sort_unstable_by(|a, b| b.cmp(a));
    let mut list = Vec::new();
    let mut hidden = 0usize;
    for n in names {
        if list.len() == MAX_LISTED {
            break;
        }
        match visible(&transcripts.join(&n), s.delay) {
            Some(t) => list.push(json!({
                "file": n,
                "hand_number": n[..8].parse::<u64>().unwrap_or_default(),
                "hand_id": &n[9..41],
                "archived_ms": t.duration_since(SystemTime::UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64),
            })),
            None => hidden += 1,
        }
    }
    Json(json!({"room": room, "hands": list, "not_yet_public": hidden})).into_response()
}

/// A visible archived transcript's text.
#[allow(clippy::result_large_err)] // an axum Response is the error page itself
fn read_visible(s: &WebState, room: &str, file: &str) -> Result<(String, SystemTime), Response> {
    let transcripts = s.transcripts(room)?;
    if !valid_file(file) {
        return Err(not_found("no such hand"));
    }
    let path = transcripts.join(file);
    let t = visible(&path, s.delay).ok_or_else(|| not_found("no such hand, or not public yet"))?;
    let text = std::fs::read_to_string(&path).map_err(|_| not_found("no such hand"))?;
    Ok((text, t))
}

async fn transcript(State(s): State<WebState>, UrlPath((room, file)): UrlPath<(String, String)>) -> Response {
    match read_visible(&s, &room, &file) {
        Ok((text, _)) => ([(header::CONTENT_TYPE, "application/x-ndjson")], text).into_response(),
        Err(e) => e,
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
    let format = match q.format.as_deref().unwrap_or("pokerstars") {
        "pokerstars" => Format::Pokerstars,
        "ohh" => Format::Ohh,
        "text" => Format::Text,
        _ => return (StatusCode::BAD_REQUEST, "format: pokerstars, ohh or text").into_response(),
    };
    let (text, written) = match read_visible(&s, &room, &file) {
        Ok(v) => v,
        Err(e) => return e,
    };
    let auditor = Auditor::new(Some(s.dealer));
    let verdicts = match auditor.audit_jsonl(&text) {
        Ok(v) => v,
        Err(e) => return (StatusCode::UNPROCESSABLE_ENTITY, e.to_string()).into_response(),
    };
    let time_ms = written.duration_since(SystemTime::UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64);
    let opts = ExportOptions { time_ms, table: room.clone(), hero: None };
    let mut out = String::new();
    for v in verdicts {
        let report = match v.outcome {
            Ok(r) => r,
            Err(e) => {
                return (StatusCode::UNPROCESSABLE_ENTITY, format!("audit failed: {e}")).into_response()
            }
        };
        match export(&report.hand, format, &opts) {
            Ok(h) => {
                out.push_str(&h);
                out.push('\n');
            }
            Err(e) => return (StatusCode::UNPROCESSABLE_ENTITY, e.to_string()).into_response(),
        }
    }
    let ty = if format == Format::Ohh { "application/json" } else { "text/plain; charset=utf-8" };
    ([(header::CONTENT_TYPE, ty)], out).into_response()
}

#[cfg(test)]
mod tests {
    use super::valid_file;

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
