//! The game-claw points server: an HTTP JSON chip ledger over SQLite (default)
//! or PostgreSQL, with idempotency keys, balances that never go negative, a
//! hash-chained audit log, bearer-token auth and per-client rate limiting.
//!
//! Run it as the `claw-points` binary, or in-process with [`serve`]:
//!
//! ```no_run
//! # async fn demo() -> Result<(), claw_points::ServeError> {
//! let server = claw_points::serve(claw_points::ServerConfig::new(
//!     claw_points::sqlite_url(std::path::Path::new("/var/lib/claw/points.db")),
//!     "127.0.0.1:0".parse().unwrap(),
//!     claw_points::generate_token(),
//! ))
//! .await?;
//! println!("points server at {}", server.url());
//! server.shutdown().await?;
//! # Ok(()) }
//! ```
//!
//! API and storage details: `docs/points-server.md`.

#![warn(missing_docs)]

pub mod api;
pub mod audit;
pub mod store;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio::task::JoinHandle;

pub use audit::{AuditEntry, EntryKind};
pub use store::{
    sqlite_url, Backend, Checkpoint, GroupStats, ShardHead, Store, StoreError, StoreOptions, VerifyReport,
    DEFAULT_GROUP, DEFAULT_SHARDS, DEFAULT_WRITERS, MAX_AMOUNT, MAX_BALANCE, MAX_SHARDS,
};

/// Shortest bearer token accepted (bytes).
pub const MIN_TOKEN_LEN: usize = 16;

/// Request-level limits of a server.
#[derive(Debug, Clone)]
pub struct Limits {
    /// Requests per second per client IP without the bearer token (token bucket
    /// refill); 0 disables limiting.
    pub rate_per_sec: u32,
    /// Bucket size: requests such a client may send in a burst.
    pub burst: u32,
    /// Requests per second per IP with the bearer token (the dealer), in a bucket of
    /// their own; 0 (the default) leaves them unlimited: the token holder is the operator.
    pub operator_rate_per_sec: u32,
    /// Bucket size of token holders.
    pub operator_burst: u32,
    /// Largest request body in bytes.
    pub max_body_bytes: usize,
    /// Longest time allowed to receive a request body.
    pub body_timeout: Duration,
    /// Most mutations committed in one transaction (group commit: one fsync
    /// for all of them); 1 commits each mutation alone.
    pub max_group: usize,
    /// Hash chains (account shards) of a new ledger; `None`: the ledger's
    /// own count, [`DEFAULT_SHARDS`] for a new one (1: one chain, as before
    /// shards). Fixed when the ledger is created.
    pub shards: Option<u32>,
    /// Concurrent group-commit writers on PostgreSQL (SQLite has one);
    /// `None`: [`DEFAULT_WRITERS`], at most one per shard.
    pub writers: Option<usize>,
    /// How often the server records a checkpoint of every shard's head
    /// (when one moved); zero: never.
    pub checkpoint_every: Duration,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            rate_per_sec: 1000,
            burst: 2000,
            operator_rate_per_sec: 0,
            operator_burst: 2000,
            max_body_bytes: 16 * 1024,
            body_timeout: Duration::from_secs(10),
            max_group: store::DEFAULT_GROUP,
            shards: None,
            writers: None,
            checkpoint_every: Duration::from_secs(60),
        }
    }
}

/// Everything [`serve`] needs.
#[derive(Debug, Clone)]
pub struct ServerConfig {
    /// `sqlite://PATH?mode=rwc` or `postgres://user:pass@host:port/db`.
    pub db_url: String,
    /// Address to listen on; port 0 picks a free port (see [`RunningServer::local_addr`]).
    pub listen: SocketAddr,
    /// The bearer token clients must present; at least [`MIN_TOKEN_LEN`] bytes.
    pub token: String,
    /// Rate, size and time limits.
    pub limits: Limits,
}

impl ServerConfig {
    /// A config with default limits.
    pub fn new(db_url: impl Into<String>, listen: SocketAddr, token: impl Into<String>) -> ServerConfig {
        ServerConfig { db_url: db_url.into(), listen, token: token.into(), limits: Limits::default() }
    }
}

/// Why the server could not start or stop cleanly.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// The configuration is unusable (e.g. the token is too short).
    #[error("bad configuration: {0}")]
    Config(String),
    /// Opening or migrating the database failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// Binding or serving the socket failed (its text is part of this one).
    #[error("network error: {0}")]
    Io(std::io::Error),
    /// The server task panicked or was aborted.
    #[error("server task failed: {0}")]
    Task(String),
}

impl From<std::io::Error> for ServeError {
    fn from(e: std::io::Error) -> ServeError {
        ServeError::Io(e)
    }
}

/// A clonable handle that asks a running server to stop gracefully.
#[derive(Clone)]
pub struct ShutdownHandle(Arc<watch::Sender<bool>>);

impl ShutdownHandle {
    /// Stops accepting connections; in-flight requests finish.
    pub fn shutdown(&self) {
        let _ = self.0.send(true);
    }
}

/// A server started by [`serve`]. Stop it with [`RunningServer::shutdown`] or a
/// [`ShutdownHandle`]; dropping it together with every handle also stops it
/// gracefully (without waiting).
pub struct RunningServer {
    addr: SocketAddr,
    store: Store,
    handle: ShutdownHandle,
    task: JoinHandle<Result<(), std::io::Error>>,
}

impl RunningServer {
    /// The bound address (the real port when the config said port 0).
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://ADDR`, the base URL for clients such as `claw_chips::http::HttpChips`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The ledger behind the server (for in-process checks such as `verify`).
    pub fn store(&self) -> &Store {
        &self.store
    }

    /// A handle to stop the server from elsewhere (e.g. a signal handler).
    pub fn shutdown_handle(&self) -> ShutdownHandle {
        self.handle.clone()
    }

    /// Waits until the server stops (after a [`ShutdownHandle::shutdown`] or a fatal error),
    /// then closes the database.
    pub async fn wait(self) -> Result<(), ServeError> {
        let res = self.task.await;
        self.store.close().await;
        match res {
            Ok(r) => r.map_err(ServeError::Io),
            Err(e) => Err(ServeError::Task(e.to_string())),
        }
    }

    /// Stops gracefully: no new connections, in-flight requests finish (up to
    /// 10 s, then connections are cut), and the database is closed.
    pub async fn shutdown(mut self) -> Result<(), ServeError> {
        self.handle.shutdown();
        let res = match tokio::time::timeout(Duration::from_secs(10), &mut self.task).await {
            Ok(r) => r,
            Err(_) => {
                self.task.abort();
                tracing::warn!("points server: connections still open after 10 s, cut");
                Ok(Ok(()))
            }
        };
        self.store.close().await;
        match res {
            Ok(r) => r.map_err(ServeError::Io),
            Err(e) => Err(ServeError::Task(e.to_string())),
        }
    }
}

/// A fresh random bearer token (32 bytes from the OS, hex).
pub fn generate_token() -> String {
    use rand_core::RngCore;
    let mut b = [0u8; 32];
    rand_core::OsRng.fill_bytes(&mut b);
    hex::encode(b)
}

/// Opens (and migrates) the database, binds the socket and serves in a
/// background task. Returns once the server accepts connections.
pub async fn serve(config: ServerConfig) -> Result<RunningServer, ServeError> {
    if config.token.trim().len() < MIN_TOKEN_LEN || config.token.trim() != config.token {
        return Err(ServeError::Config(format!(
            "the bearer token must be at least {MIN_TOKEN_LEN} bytes without surrounding spaces"
        )));
    }
    if config.limits.max_body_bytes == 0 {
        return Err(ServeError::Config("max_body_bytes must be positive".into()));
    }
    if config.limits.max_group == 0 {
        return Err(ServeError::Config("max_group must be positive".into()));
    }
    let options = store::StoreOptions {
        max_group: config.limits.max_group,
        shards: config.limits.shards,
        writers: config.limits.writers,
    };
    let store = Store::open_with(&config.db_url, options).await?;
    let listener = match TcpListener::bind(config.listen).await {
        Ok(l) => l,
        Err(e) => {
            store.close().await;
            return Err(e.into());
        }
    };
    let addr = listener.local_addr()?;
    let checkpoint_every = config.limits.checkpoint_every;
    let state = Arc::new(api::AppState {
        store: store.clone(),
        token_hash: api::token_hash(&config.token),
        limiter: api::RateLimiter::new(config.limits.rate_per_sec, config.limits.burst),
        operator_limiter: api::RateLimiter::new(
            config.limits.operator_rate_per_sec,
            config.limits.operator_burst,
        ),
        limits: config.limits,
    });
    let app = api::router(state);
    let (tx, mut rx) = watch::channel(false);
    if !checkpoint_every.is_zero() {
        let (store, mut stop, every) = (store.clone(), rx.clone(), checkpoint_every);
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(every);
            tick.tick().await;
            loop {
                tokio::select! {
                    _ = tick.tick() => {}
                    _ = stop.wait_for(|s| *s) => return,
                }
                if let Err(e) = store.checkpoint().await {
                    tracing::warn!(error = %e, "checkpoint of the shard heads failed; next one at the next interval");
                }
            }
        });
    }
    let task = tokio::spawn(async move {
        axum::serve(listener, app.into_make_service_with_connect_info::<SocketAddr>())
            .with_graceful_shutdown(async move {
                let _ = rx.wait_for(|stop| *stop).await;
            })
            .await
    });
    tracing::info!(%addr, backend = %store.backend(), db = %store::redact_url(&config.db_url), "points server listening");
    Ok(RunningServer { addr, store, handle: ShutdownHandle(Arc::new(tx)), task })
}
