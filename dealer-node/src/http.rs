//! Health and Prometheus metrics over HTTP (axum), on their own listener so
//! that the game port only ever speaks WebSocket.
//!
//! `GET /health` → `200 ok` with a JSON summary; `GET /metrics` → the
//! Prometheus text exposition. Neither exposes a secret.

use std::net::SocketAddr;
use std::sync::Arc;

use axum::extract::State;
use axum::http::header;
use axum::response::IntoResponse;
use axum::routing::get;
use axum::{Json, Router};
use tokio::net::TcpListener;
use tokio::sync::watch;

use crate::metrics::Metrics;

/// What the health endpoint reports besides metrics.
#[derive(Clone)]
pub struct HttpState {
    /// The node's metrics.
    pub metrics: Arc<Metrics>,
    /// The dealer's public key (public anyway: it is in every invite URL).
    pub dealer_id: String,
    /// The room ids.
    pub rooms: Vec<String>,
    /// The browser app and its API (`crate::web`), if served.
    #[cfg(feature = "web")]
    pub web: Option<crate::web::WebState>,
}

async fn health(State(s): State<HttpState>) -> impl IntoResponse {
    use std::sync::atomic::Ordering::Relaxed;
    Json(serde_json::json!({
        "status": "ok",
        "dealer": s.dealer_id,
        "rooms": s.rooms,
        "rooms_open": s.metrics.rooms_open.load(Relaxed),
        "connections_open": s.metrics.connections_open.load(Relaxed),
        "hands_finished": s.metrics.hands_finished.load(Relaxed),
    }))
}

async fn metrics(State(s): State<HttpState>) -> impl IntoResponse {
    ([(header::CONTENT_TYPE, "text/plain; version=0.0.4")], s.metrics.render())
}

/// The router: `/health`, `/metrics` and the web app ([`crate::web`]).
pub fn router(state: HttpState) -> Router {
    #[cfg(feature = "web")]
    let web = state.web.clone().map(crate::web::router).unwrap_or_default();
    #[cfg(not(feature = "web"))]
    let web = Router::new();
    Router::new().route("/health", get(health)).route("/metrics", get(metrics)).with_state(state).merge(web)
}

/// Binds `addr` and serves until `stop` turns true. Returns the bound address
/// and the server task.
pub async fn serve(
    addr: SocketAddr,
    state: HttpState,
    mut stop: watch::Receiver<bool>,
) -> std::io::Result<(SocketAddr, tokio::task::JoinHandle<()>)> {
    let listener = TcpListener::bind(addr).await?;
    let local = listener.local_addr()?;
    let task = tokio::spawn(async move {
        let shutdown = async move {
            while !*stop.borrow() {
                if stop.changed().await.is_err() {
                    break;
                }
            }
        };
        if let Err(e) = axum::serve(listener, router(state)).with_graceful_shutdown(shutdown).await {
            tracing::error!(error = %e, "http server stopped");
        }
    });
    Ok((local, task))
}
