//! The dealer node: rooms, the WebSocket server and the HTTP endpoint,
//! started in-process and stopped gracefully.
//!
//! ```no_run
//! # async fn demo() -> Result<(), claw_dealer::NodeError> {
//! use claw_dealer::{DealerNode, NodeConfig, RoomConfig};
//! let rooms = vec![RoomConfig::new("holdem", "texas-holdem")];
//! let node = DealerNode::start(NodeConfig::local("/tmp/claw-data", rooms)).await?;
//! println!("{}", node.invite_url("holdem").unwrap());
//! node.shutdown(std::time::Duration::from_secs(5)).await;
//! # Ok(()) }
//! ```

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use claw_chips::{AccountId, ChipProvider, LocalChips};
use claw_games::DynGame;
use claw_protocol::{Chips, Identity, PlayerId};
use rand::rngs::OsRng;
use tokio::net::TcpListener;
use tokio::sync::{broadcast, oneshot, watch};

use crate::admin::{Admin, AdminConfig};
use crate::chips::{recover, ChipDesk, Grants, WelcomeDesk};
use crate::config::{ConfigError, NodeConfig};
use crate::http::{self, HttpState};
use crate::lock::{DataDirLock, LockError};
use crate::matchmaking::{CheckedTemplate, Matchmaker, RoomTemplate, MAX_TEMPLATE_ID_LEN, QUICK_MATCH_PATH};
use crate::metrics::Metrics;
use crate::registry::Registry;
use crate::room::{spawn_room, NodeContext, RoomCmd, RoomEvent, RoomHandle};
use crate::server::{serve, ServerState};
use crate::tls::ServerTls;
use claw_chips::ledger::welcome::{DayCaps, GrantKind, WelcomeCaps};

/// Why a node could not start.
#[derive(Debug, thiserror::Error)]
pub enum NodeError {
    /// The configuration is unusable.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// The dealer key file cannot be read or created.
    #[error("dealer key: {0}")]
    Identity(#[from] claw_protocol::IdentityError),
    /// The data directory cannot be created.
    #[error("data directory {path}: {source}")]
    DataDir {
        /// The directory.
        path: String,
        /// Why.
        source: std::io::Error,
    },
    /// Another dealer runs on the data directory.
    #[error(transparent)]
    Locked(#[from] LockError),
    /// The public URL is not `ws://` or `wss://`.
    #[error("public URL {0:?}: must start with ws:// or wss://")]
    PublicUrl(String),
    /// A listener cannot be bound.
    #[error("cannot listen on {addr}: {source}")]
    Listen {
        /// The address.
        addr: SocketAddr,
        /// Why.
        source: std::io::Error,
    },
    /// The sanctions file or the operator's audit log cannot be read (or
    /// the log's hash chain is broken).
    #[error(transparent)]
    Sanctions(#[from] crate::sanctions::SanctionError),
    /// A room cannot start.
    #[error("room {room}: {reason}")]
    Room {
        /// The room id.
        room: String,
        /// Why.
        reason: String,
    },
}

/// Sets up a node before it starts (chips, identity, extra games).
pub struct DealerNode {
    config: NodeConfig,
    provider: Option<Arc<dyn ChipProvider>>,
    grants: Option<Arc<dyn Grants>>,
    welcome_grant: Chips,
    welcome_total: Option<u64>,
    welcome_window: Option<(u64, std::time::Duration)>,
    day_grants: Vec<(GrantKind, DayCaps)>,
    grants_from: Option<AccountId>,
    identity: Option<Identity>,
    games: Vec<Arc<dyn DynGame>>,
    tls: Option<ServerTls>,
    public_url: Option<String>,
    lock: Option<DataDirLock>,
    admin: Option<AdminConfig>,
    ai: Option<(crate::ai::HouseAi, Chips)>,
    templates: Vec<RoomTemplate>,
}

impl DealerNode {
    /// A node with `config`. Without further setup it uses an in-memory
    /// chip ledger and the dealer key file `DATA_DIR/dealer.key`.
    pub fn builder(config: NodeConfig) -> DealerNode {
        DealerNode {
            config,
            provider: None,
            grants: None,
            welcome_grant: Chips::ZERO,
            welcome_total: None,
            welcome_window: None,
            day_grants: Vec::new(),
            grants_from: None,
            identity: None,
            games: Vec::new(),
            tls: None,
            public_url: None,
            lock: None,
            admin: None,
            ai: None,
            templates: Vec::new(),
        }
    }

    /// Rooms quick match may open when every matching room is full
    /// ([`crate::matchmaking`]).
    pub fn templates(mut self, templates: Vec<RoomTemplate>) -> DealerNode {
        self.templates = templates;
        self
    }

    /// Starts a node with the default setup (see [`DealerNode::builder`];
    /// [`DealerNode::launch`] starts a customised one).
    pub async fn start(config: NodeConfig) -> Result<NodeHandle, NodeError> {
        DealerNode::builder(config).launch().await
    }

    /// The chip provider to use.
    pub fn chips(mut self, provider: Arc<dyn ChipProvider>) -> DealerNode {
        self.provider = Some(provider);
        self
    }

    /// An in-memory ledger that grants every new player `welcome` chips and
    /// funds house bankrolls (tests, demos).
    pub fn local_chips(mut self, chips: Arc<LocalChips>, welcome: Chips) -> DealerNode {
        self.provider = Some(chips.clone());
        self.grants = Some(chips);
        self.welcome_grant = welcome;
        self
    }

    /// Operator grants for welcome chips and house bankrolls.
    pub fn grants(mut self, grants: Arc<dyn Grants>, welcome: Chips) -> DealerNode {
        self.grants = Some(grants);
        self.welcome_grant = welcome;
        self
    }

    /// Caps the welcome chips the node grants in total (none: no cap).
    pub fn welcome_total(mut self, total: Option<u64>) -> DealerNode {
        self.welcome_total = total;
        self
    }

    /// Caps the welcome chips the node grants per period: at most `chips`
    /// in each window of `period` (none: no such cap).
    pub fn welcome_per_period(mut self, limit: Option<(u64, std::time::Duration)>) -> DealerNode {
        self.welcome_window = limit;
        self
    }

    /// The daily and rescue grants (REQ-020a; with [`DealerNode::grants`]),
    /// paid from `from` (none: the dealer's own account, where commission
    /// and rake go).
    pub fn day_grants(mut self, days: Vec<(GrantKind, DayCaps)>, from: Option<AccountId>) -> DealerNode {
        self.day_grants = days;
        self.grants_from = from;
        self
    }

    /// The dealer identity (instead of the key file).
    pub fn identity(mut self, id: Identity) -> DealerNode {
        self.identity = Some(id);
        self
    }

    /// Serve TLS (`wss://`) with this certificate.
    pub fn tls(mut self, tls: ServerTls) -> DealerNode {
        self.tls = Some(tls);
        self
    }

    /// The URL in front of the rooms in invites (`wss://host/prefix`), for
    /// a dealer behind a TLS proxy; default: `ws[s]://HOST:PORT`.
    pub fn public_url(mut self, url: impl Into<String>) -> DealerNode {
        self.public_url = Some(url.into());
        self
    }

    /// The data directory lock, when the caller took it before other
    /// services used the directory; otherwise [`DealerNode::launch`] takes it.
    pub fn data_dir_lock(mut self, lock: DataDirLock) -> DealerNode {
        self.lock = Some(lock);
        self
    }

    /// Serve the admin API (`/admin/…` on the HTTP listener, which it
    /// needs): open and close rooms at run time ([`crate::admin`]).
    pub fn admin(mut self, cfg: AdminConfig) -> DealerNode {
        self.admin = Some(cfg);
        self
    }

    /// House-AI seats for rooms with `ai_seats`: `players` connect them
    /// (the integrator's bots), their chips are transferred from `account`;
    /// with operator grants ([`DealerNode::grants`]) `budget` chips are
    /// granted to `account` once (idempotency key `ai-budget/<account>`).
    pub fn house_ai(
        mut self,
        players: Arc<dyn crate::ai::AiPlayers>,
        account: AccountId,
        budget: Chips,
    ) -> DealerNode {
        self.ai = Some((crate::ai::HouseAi::new(players, account), budget));
        self
    }

    /// A game that is not in the registry (looked up before the registry).
    pub fn game(mut self, g: Arc<dyn DynGame>) -> DealerNode {
        self.games.push(g);
        self
    }

    /// Validates the config, loads or creates the dealer key, refunds hands
    /// a crash interrupted, starts the rooms, binds the listeners.
    pub async fn launch(self) -> Result<NodeHandle, NodeError> {
        let DealerNode {
            mut config,
            provider,
            grants,
            welcome_grant,
            welcome_total,
            welcome_window,
            day_grants,
            grants_from,
            identity,
            games,
            tls,
            public_url,
            lock,
            admin,
            ai,
            templates,
        } = self;
        let room_games = config.validate(&games)?;
        let templates = validate_templates(templates, &games)?;
        // Sockets, journals, the archive and the database share one budget
        // of file descriptors: take the whole of it.
        crate::fdlimit::raise_and_log();
        let dir_err =
            |e: std::io::Error| NodeError::DataDir { path: config.data_dir.display().to_string(), source: e };
        std::fs::create_dir_all(&config.data_dir).map_err(dir_err)?;
        let lock = match lock {
            Some(l) => l,
            None => DataDirLock::acquire(&config.data_dir)?,
        };
        if let Some(u) = &public_url {
            if !(u.starts_with("ws://") || u.starts_with("wss://")) {
                return Err(NodeError::PublicUrl(u.clone()));
            }
        }
        let dealer = match identity {
            Some(id) => id,
            None => Identity::load_or_create(config.data_dir.join("dealer.key"), &mut OsRng)?,
        };
        let dealer = Arc::new(dealer);
        let provider: Arc<dyn ChipProvider> = match provider {
            Some(p) => p,
            None => Arc::new(LocalChips::new()),
        };
        let dealer_account = AccountId::new(format!("dealer:{}", dealer.id()))
            .map_err(|e| NodeError::Room { room: "-".into(), reason: e.to_string() })?;
        let desk =
            ChipDesk::new(provider, dealer_account, config.limits.chip_timeout, config.limits.chip_attempts);
        for r in recover(&config.data_dir, &desk).await {
            match r {
                Ok(rec) => {
                    tracing::warn!(room = %rec.room, hand = %rec.hand_id,
                    hand_number = rec.hand_number.map_or_else(|| "unknown".to_owned(), |n| n.to_string()),
                    outcome = %rec.outcome, debits = rec.totals.debits, credits = rec.totals.credits,
                    "finished a hand interrupted by a crash")
                }
                Err((path, e)) => {
                    tracing::error!(severity = crate::metrics::CRITICAL, journal = %path.display(), error = %e,
                    "could not finish an interrupted hand; will retry at next start")
                }
            }
        }
        let days_on = day_grants.iter().any(|(_, c)| c.amount.0 > 0);
        let welcome = match (&grants, welcome_grant.0) {
            (Some(_), n) if n > 0 || days_on => {
                let caps =
                    WelcomeCaps { amount: welcome_grant, total: welcome_total, per_period: welcome_window };
                let dir = config.data_dir.clone();
                let loaded =
                    tokio::task::spawn_blocking(move || WelcomeDesk::load_all(&dir, caps, day_grants))
                        .await
                        .map_err(std::io::Error::other)
                        .and_then(|r| r);
                let funder = grants_from.unwrap_or_else(|| desk.dealer_account.clone());
                Some(loaded.map_err(dir_err)?.funded_by(funder))
            }
            _ => None,
        };
        let dir = config.data_dir.clone();
        let sanctions = tokio::task::spawn_blocking(move || crate::sanctions::Sanctions::load(&dir))
            .await
            .map_err(|e| NodeError::DataDir {
                path: config.data_dir.display().to_string(),
                source: std::io::Error::other(e),
            })?
            .inspect_err(|e| {
                // Strict: no start on an audit log that cannot be verified.
                tracing::error!(severity = crate::metrics::CRITICAL, error = %e,
                    "the sanctions or the admin audit log cannot be trusted: not starting");
            })?;
        let metrics = Arc::new(Metrics::default());
        let cap = config.limits.max_connections as u64;
        metrics.connections_max.store(cap, std::sync::atomic::Ordering::Relaxed);
        let l = &config.limits;
        metrics.conduct.set_rule((l.abuse_flags > 0).then_some(claw_engine::conduct::Rule {
            flags: l.abuse_flags,
            window_hands: l.abuse_window_hands.max(1),
            ban: l.abuse_ban,
        }));
        let (events, _) = broadcast::channel(1024);
        let ai = match ai {
            Some((house_ai, budget)) => {
                fund_house_ai(grants.as_deref(), &house_ai.account, budget).await;
                Some(house_ai)
            }
            None => {
                if let Some(r) = config.rooms.iter().find(|r| r.ai_seats.is_some()) {
                    tracing::warn!(room = %r.id, "ai_seats set but the node has no house-AI players (DealerNode::house_ai): no AI will sit");
                }
                None
            }
        };
        let ctx = Arc::new(NodeContext {
            dealer: Arc::clone(&dealer),
            desk,
            grants,
            welcome,
            metrics: Arc::clone(&metrics),
            held: Arc::default(),
            staked: Arc::default(),
            data_dir: config.data_dir.clone(),
            limits: config.limits.clone(),
            events: events.clone(),
            sanctions: Arc::new(sanctions),
            ai,
        });
        // Grants a crash left undecided, before any join can claim one.
        crate::room::recover_grants(&ctx).await;
        let mut handles = Vec::new();
        for (cfg, game) in config.rooms.iter().cloned().zip(room_games) {
            let id = cfg.id.clone();
            let h = spawn_room(cfg, game, Arc::clone(&ctx))
                .map_err(|e| NodeError::Room { room: id.clone(), reason: e.to_string() })?;
            handles.push(h);
        }
        let rooms = Arc::new(Registry::new(handles.iter().cloned()));
        // Rooms served before (closed through the admin API, or gone from
        // the configuration) keep their archives readable.
        rooms.remember_closed(crate::archive::archived_rooms(&config.data_dir));
        let listener = TcpListener::bind(config.listen)
            .await
            .map_err(|e| NodeError::Listen { addr: config.listen, source: e })?;
        let addr = listener.local_addr().map_err(|e| NodeError::Listen { addr: config.listen, source: e })?;
        let host = config.public_host.clone().unwrap_or_else(|| match addr {
            SocketAddr::V4(a) if a.ip().is_unspecified() => format!("127.0.0.1:{}", a.port()),
            SocketAddr::V6(a) => format!("[{}]:{}", a.ip(), a.port()),
            a => a.to_string(),
        });
        let host = if host.contains(':') && !host.starts_with('[') || host.ends_with(']') {
            host
        } else {
            format!("{host}:{}", addr.port())
        };
        let invite_base = match public_url {
            Some(u) => u.trim_end_matches('/').to_owned(),
            None => format!("{}://{host}", if tls.is_some() { "wss" } else { "ws" }),
        };
        if let (Some(ai), None) = (&ctx.ai, &tls) {
            let local = match addr {
                SocketAddr::V4(a) if a.ip().is_unspecified() => format!("127.0.0.1:{}", a.port()),
                SocketAddr::V6(a) if a.ip().is_unspecified() => format!("[::1]:{}", a.port()),
                a => a.to_string(),
            };
            ai.listening(format!("ws://{local}"), dealer.id());
        }
        let (stop_tx, stop_rx) = watch::channel(false);
        let matcher = Arc::new(Matchmaker::new(Arc::clone(&rooms), Arc::clone(&ctx), templates));
        let mut state = ServerState::new(Arc::clone(&rooms), Arc::clone(&ctx), tls.clone());
        state.matcher = Arc::clone(&matcher);
        let state = Arc::new(state);
        let server = tokio::spawn(serve(listener, state, stop_rx.clone()));
        tokio::spawn(crate::sanctions::run_rule(Arc::clone(&ctx), Arc::clone(&rooms), stop_rx.clone()));
        let http_addr = match config.http_listen {
            Some(a) => {
                let admin = admin.as_ref().map(|cfg| {
                    Arc::new(Admin::new(
                        cfg,
                        Arc::clone(&ctx),
                        games.clone(),
                        Arc::clone(&rooms),
                        invite_base.clone(),
                        dealer.id(),
                        stop_rx.clone(),
                    ))
                });
                if let Some(a) = &admin {
                    crate::admin::reopen(a).await;
                }
                let reads = Arc::new(http::reads::ArchiveReads::new(
                    &config.data_dir,
                    config.spectator_delay.unwrap_or(http::DEFAULT_SPECTATOR_DELAY),
                    &config.limits,
                    Arc::clone(&metrics),
                ));
                let st = HttpState {
                    metrics: Arc::clone(&metrics),
                    dealer_id: dealer.id().to_string(),
                    rooms: Arc::clone(&rooms),
                    admin,
                    reads: Arc::clone(&reads),
                    node: Arc::clone(&ctx),
                    matcher: Arc::clone(&matcher),
                    invite_base: invite_base.clone(),
                    #[cfg(feature = "web")]
                    web: Some(
                        crate::web::WebState::new(dealer.id(), Arc::clone(&rooms), reads)
                            .with_game_url(&invite_base),
                    ),
                };
                let (bound, _task) =
                    http::serve(a, st, http::guard::HttpLimits::of(&config.limits), stop_rx.clone())
                        .await
                        .map_err(|e| NodeError::Listen { addr: a, source: e })?;
                Some(bound)
            }
            None if admin.is_some() => {
                return Err(NodeError::Config(ConfigError::Node(
                    "the admin API needs the HTTP listener".into(),
                )))
            }
            None => None,
        };
        tracing::info!(%addr, dealer = %dealer.id(), rooms = handles.len(), "dealer node listening");
        Ok(NodeHandle {
            addr,
            http_addr,
            invite_base,
            dealer: dealer.id(),
            rooms,
            metrics,
            events,
            stop: stop_tx,
            server: Some(server),
            _lock: lock,
        })
    }
}

/// Grants the house-AI account its budget, once (`ai-budget/<account>`): a
/// later start, whatever the amount, does not grant again.
async fn fund_house_ai(grants: Option<&dyn Grants>, account: &AccountId, budget: Chips) {
    if budget.0 == 0 {
        return;
    }
    let Some(g) = grants else {
        tracing::warn!(%account, "house-AI budget not granted: the chip provider has no operator grants; fund the account yourself");
        return;
    };
    let key = match claw_chips::IdempotencyKey::new(format!("ai-budget/{account}")) {
        Ok(k) => k,
        Err(e) => return tracing::error!(%account, error = %e, "house-AI budget not granted"),
    };
    match g.grant(&key, account, budget, "house-AI budget").await {
        Ok(balance) => tracing::info!(%account, %budget, %balance, "house-AI budget granted"),
        Err(e) => tracing::error!(%account, error = %e, "house-AI budget grant failed"),
    }
}

/// Checks each template as a room (its game, its settings) and its id as
/// a prefix of room ids.
fn validate_templates(
    templates: Vec<RoomTemplate>,
    games: &[Arc<dyn DynGame>],
) -> Result<Vec<CheckedTemplate>, NodeError> {
    let mut out = Vec::with_capacity(templates.len());
    for mut t in templates {
        let id = t.room.id.clone();
        let bad = |reason: String| NodeError::Config(ConfigError::Room { room: id.clone(), reason });
        if id.len() > MAX_TEMPLATE_ID_LEN || id == QUICK_MATCH_PATH {
            return Err(bad(format!(
                "a template id is at most {MAX_TEMPLATE_ID_LEN} bytes and not {QUICK_MATCH_PATH:?}"
            )));
        }
        if t.max_rooms == 0 {
            return Err(bad("a template's max_rooms must be positive".into()));
        }
        let game = t.room.validate_with(games)?;
        out.push((t, game));
    }
    Ok(out)
}

/// `BASE/ROOM#DEALER_PUBKEY_HEX`: the invite URL of `room`.
pub(crate) fn invite_url(base: &str, room: &str, dealer: PlayerId) -> String {
    format!("{base}/{room}#{dealer}")
}

/// A running node.
pub struct NodeHandle {
    addr: SocketAddr,
    http_addr: Option<SocketAddr>,
    /// `ws[s]://HOST:PORT` or the public URL: invites are `BASE/ROOM#KEY`.
    invite_base: String,
    dealer: PlayerId,
    rooms: Arc<Registry>,
    metrics: Arc<Metrics>,
    events: broadcast::Sender<RoomEvent>,
    stop: watch::Sender<bool>,
    server: Option<tokio::task::JoinHandle<()>>,
    /// Released when the node is dropped (after shutdown).
    _lock: DataDirLock,
}

impl NodeHandle {
    /// The WebSocket listen address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The health/metrics address, when enabled.
    pub fn http_addr(&self) -> Option<SocketAddr> {
        self.http_addr
    }

    /// The dealer's public key (player id form).
    pub fn dealer_id(&self) -> PlayerId {
        self.dealer
    }

    /// `ws://HOST:PORT/ROOM#DEALER_PUBKEY_HEX` (`wss://` with TLS, or the
    /// public URL in front of the room).
    pub fn invite_url(&self, room: &str) -> Option<String> {
        self.rooms.contains(room).then(|| invite_url(&self.invite_base, room, self.dealer))
    }

    /// Every room's id and invite URL, in the order they were opened
    /// (config order first; private rooms too).
    pub fn invite_urls(&self) -> Vec<(String, String)> {
        self.rooms.all().into_iter().filter_map(|(r, _)| self.invite_url(&r.id).map(|u| (r.id, u))).collect()
    }

    /// A room's handle.
    pub fn room(&self, id: &str) -> Option<RoomHandle> {
        self.rooms.get(id)
    }

    /// Finished and voided hands, room closures.
    pub fn subscribe(&self) -> broadcast::Receiver<RoomEvent> {
        self.events.subscribe()
    }

    /// The node's metrics.
    pub fn metrics(&self) -> Arc<Metrics> {
        Arc::clone(&self.metrics)
    }

    /// Waits until every room is closed (e.g. after `max_hands`).
    pub async fn wait_rooms_closed(&self) {
        for (r, _) in self.rooms.all() {
            r.wait_closed().await;
        }
    }

    /// Graceful stop: no new connections or hands; running hands get
    /// `grace` to finish, then are voided with refunds; deferred reveals
    /// are published; connections are closed.
    pub async fn shutdown(mut self, grace: Duration) {
        let _ = self.stop.send(true);
        let mut waits = Vec::new();
        for (r, _) in self.rooms.all() {
            let (done, rx) = oneshot::channel();
            if r.send(RoomCmd::Shutdown { grace, done }).await {
                waits.push(rx);
            }
        }
        for w in waits {
            let _ = w.await;
        }
        for (r, _) in self.rooms.all() {
            r.wait_closed().await;
        }
        if let Some(s) = self.server.take() {
            let _ = s.await;
        }
    }
}
