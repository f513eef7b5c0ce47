//! A minimal raw test client on the protocol crate (full control, for
//! attacks), a node fixture, and a bot loop that plays and audits hands.

#![allow(dead_code)]

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use claw_chips::{AccountId, ChipProvider, LocalChips};
use claw_dealer::{DealerNode, NodeConfig, NodeHandle, RoomConfig};
use claw_games::audit::GamesReplayer;
use claw_games::DynGame;
use claw_protocol::audit::{audit, AuditOptions, AuditReport};
use claw_protocol::handshake::{ClientHandshake, ClientSession, HandshakeError};
use claw_protocol::messages::{
    ClientMessage, EntropyMode, EventBody, JoinRequest, JoinResponse, PlayerSeed, Query, QueryType, RawJson,
    ServerMessage, SignedAction, YourTurn,
};
use claw_protocol::transcript::{EventEnvelope, Transcript, TranscriptVerifier};
use claw_protocol::{Chips, HandId, Identity, PlayerId, Seed};
use futures_util::{SinkExt, StreamExt};
use rand::rngs::OsRng;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde_json::Value;
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

pub type Ws = WebSocketStream<MaybeTlsStream<TcpStream>>;

/// Failure guard for every wait (never an assertion about speed).
pub const GUARD: Duration = Duration::from_secs(30);

pub fn now_ms() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_millis() as u64
}

/// A running node with local chips.
pub struct Fixture {
    pub node: NodeHandle,
    pub chips: Arc<LocalChips>,
    pub dir: tempfile::TempDir,
}

impl Fixture {
    /// A node with `rooms`, local chips granting 10 000 to every new player.
    pub async fn start(rooms: Vec<RoomConfig>) -> Fixture {
        Fixture::start_with(rooms, |c| c, |b| b).await
    }

    /// Same, with a config tweak and a builder tweak.
    pub async fn start_with(
        rooms: Vec<RoomConfig>,
        cfg: impl FnOnce(NodeConfig) -> NodeConfig,
        builder: impl FnOnce(DealerNode) -> DealerNode,
    ) -> Fixture {
        if let Some(filter) = std::env::var("CLAW_TEST_LOG")
            .ok()
            .and_then(|v| v.parse::<tracing_subscriber::filter::Targets>().ok())
        {
            use tracing_subscriber::layer::SubscriberExt;
            use tracing_subscriber::util::SubscriberInitExt;
            let fmt =
                tracing_subscriber::fmt().with_max_level(tracing::Level::TRACE).with_test_writer().finish();
            let _ = fmt.with(filter).try_init();
        }
        let dir = tempfile::tempdir().unwrap();
        let chips = Arc::new(LocalChips::new());
        let mut base = NodeConfig::local(dir.path(), rooms);
        // The raw test client answers pings only while a test reads it.
        base.limits.ping_interval = Duration::from_secs(10);
        let config = cfg(base);
        let b = DealerNode::builder(config)
            .local_chips(chips.clone(), Chips(10_000))
            .game(claw_engine::testgame::high_card());
        let node = builder(b).launch().await.unwrap();
        Fixture { node, chips, dir }
    }

    pub fn addr(&self) -> SocketAddr {
        self.node.addr()
    }

    pub fn dealer(&self) -> PlayerId {
        self.node.dealer_id()
    }

    pub async fn client(&self, room: &str, seed: u8) -> Client {
        Client::connect(self.addr(), room, self.dealer(), Arc::new(Identity::from_seed([seed; 32])), None)
            .await
            .unwrap()
    }

    pub async fn balance(&self, id: &PlayerId) -> u64 {
        self.chips.balance(&AccountId::from(*id)).await.unwrap().0
    }
}

/// A plain WebSocket to `room` (no handshake).
pub async fn raw_ws(addr: SocketAddr, room: &str) -> Ws {
    let (ws, _) = tokio_tungstenite::connect_async(format!("ws://{addr}/{room}")).await.unwrap();
    ws
}

pub async fn send_text(ws: &mut Ws, text: impl Into<String>) {
    let _ = ws.send(Message::Text(text.into().into())).await;
}

/// The next text frame, decoded; `None` when the connection closed.
pub async fn recv_ws(ws: &mut Ws) -> Option<ServerMessage> {
    loop {
        let m = tokio::time::timeout(GUARD, ws.next()).await.expect("guard: no frame from the dealer");
        match m {
            Some(Ok(Message::Text(t))) => {
                return Some(
                    claw_protocol::messages::decode_server(t.as_str()).expect("dealer frames decode"),
                )
            }
            Some(Ok(Message::Close(_))) | None | Some(Err(_)) => return None,
            _ => continue,
        }
    }
}

/// A connected, authenticated player.
pub struct Client {
    pub me: Arc<Identity>,
    pub dealer: PlayerId,
    pub room: String,
    pub addr: SocketAddr,
    pub ws: Ws,
    pub session: ClientSession,
    /// Events of the current hand.
    pub events: Vec<EventEnvelope>,
    verifier: Option<TranscriptVerifier>,
    pub my_seed: Option<Seed>,
    /// The next action seq per hand (a reconnecting test client carries it over).
    pub seq: HashMap<HandId, u32>,
}

impl Client {
    /// Connects and runs the handshake (with a reconnect token to resume).
    pub async fn connect(
        addr: SocketAddr,
        room: &str,
        dealer: PlayerId,
        me: Arc<Identity>,
        token: Option<claw_protocol::Nonce>,
    ) -> Result<Client, HandshakeError> {
        Client::handshake(raw_ws(addr, room).await, addr, room, dealer, me, token).await
    }

    /// Runs the handshake on an open WebSocket to `room`.
    pub async fn handshake(
        mut ws: Ws,
        addr: SocketAddr,
        room: &str,
        dealer: PlayerId,
        me: Arc<Identity>,
        token: Option<claw_protocol::Nonce>,
    ) -> Result<Client, HandshakeError> {
        let (mut hs, hello) = ClientHandshake::start(
            me.clone(),
            dealer,
            room,
            "claw-dealer-tests/0",
            token,
            now_ms(),
            &mut OsRng,
        );
        send_text(&mut ws, ClientMessage::Hello(hello).encode().unwrap()).await;
        let ch = match recv_ws(&mut ws).await {
            Some(ServerMessage::Challenge(c)) => c,
            Some(ServerMessage::Rejected(r)) => return Err(hs.on_rejected(&r)),
            other => panic!("expected a challenge, got {other:?}"),
        };
        let resp = hs.on_challenge(&ch, now_ms())?;
        send_text(&mut ws, ClientMessage::Response(resp).encode().unwrap()).await;
        let session = match recv_ws(&mut ws).await {
            Some(ServerMessage::Accepted(a)) => hs.on_accepted(&a, now_ms())?,
            Some(ServerMessage::Rejected(r)) => return Err(hs.on_rejected(&r)),
            other => panic!("expected accepted/rejected, got {other:?}"),
        };
        Ok(Client {
            me,
            dealer,
            room: room.to_owned(),
            addr,
            ws,
            session,
            events: Vec::new(),
            verifier: None,
            my_seed: None,
            seq: HashMap::new(),
        })
    }

    pub fn id(&self) -> PlayerId {
        self.me.id()
    }

    pub async fn send(&mut self, m: ClientMessage) {
        send_text(&mut self.ws, m.encode().unwrap()).await;
    }

    pub async fn send_raw(&mut self, text: impl Into<String>) {
        send_text(&mut self.ws, text).await;
    }

    /// Next message; events are checked against the chain as they arrive.
    pub async fn recv(&mut self) -> Option<ServerMessage> {
        let m = recv_ws(&mut self.ws).await?;
        if let ServerMessage::Event(e) = &m {
            if e.seq == 0 {
                self.verifier = Some(TranscriptVerifier::new(self.dealer));
                self.events.clear();
            }
            let v = self.verifier.as_mut().expect("event before hand-prepare");
            v.accept(e).expect("every event verifies against the chain");
            self.events.push(e.clone());
        }
        Some(m)
    }

    /// Receives until `f` picks a message.
    pub async fn recv_until<T>(&mut self, mut f: impl FnMut(&ServerMessage) -> Option<T>) -> T {
        loop {
            let m = self.recv().await.expect("connection closed while waiting");
            if let Some(t) = f(&m) {
                return t;
            }
        }
    }

    pub async fn join(&mut self) -> JoinResponse {
        self.send(ClientMessage::JoinRequest(JoinRequest {
            sdk_version: "tests".into(),
            name: None,
            seat: None,
            buy_in: None,
        }))
        .await;
        self.recv_until(|m| match m {
            ServerMessage::JoinResponse(j) => Some(j.clone()),
            _ => None,
        })
        .await
    }

    pub async fn query(&mut self, t: QueryType, nonce: &str) -> ServerMessage {
        self.send(ClientMessage::Query(Query::new(t, nonce))).await;
        let n = nonce.to_owned();
        self.recv_until(|m| match m {
            ServerMessage::QueryResult(r) if r.nonce == n => Some(m.clone()),
            ServerMessage::QueryError(e) if e.nonce == n => Some(m.clone()),
            _ => None,
        })
        .await
    }

    /// Signs and sends `action` for the current hand.
    pub async fn act(&mut self, hand: HandId, action: &Value) -> u32 {
        let seq = self.seq.entry(hand).or_insert(0);
        let s = *seq;
        *seq += 1;
        let signed = SignedAction::sign(&self.me, hand, s, RawJson::from_value(action).unwrap());
        self.send(ClientMessage::Action(signed)).await;
        s
    }

    /// Sends a seed for the hand being prepared.
    pub async fn seed(&mut self, hand: HandId) {
        let s = Seed::random(&mut OsRng);
        self.my_seed = Some(s);
        self.send(ClientMessage::PlayerSeed(PlayerSeed::sign(&self.me, hand, s))).await;
    }

    /// The current hand's events as a transcript.
    pub fn transcript(&self) -> Transcript {
        Transcript::from_events(None, self.events.clone()).unwrap()
    }

    /// Audits the current hand as this player.
    pub fn audit(&self, game: Arc<dyn DynGame>, allow_pending: bool) -> AuditReport {
        let r = GamesReplayer::default().with_game(game);
        let opts = AuditOptions {
            dealer: Some(self.dealer),
            viewer: Some(&self.me),
            my_seed: self.my_seed,
            allow_pending_reveal: allow_pending,
            replayer: Some(&r),
            commission: None,
        };
        audit(&self.transcript(), &opts).unwrap_or_else(|e| panic!("audit failed: {e}"))
    }
}

/// What a bot saw.
#[derive(Debug, Default, Clone)]
pub struct BotReport {
    pub hands_audited: usize,
    pub actions: usize,
    pub rejected: usize,
    pub timeouts_seen: usize,
    pub kicked: bool,
}

/// Plays with random legal actions until `hands` games ended (or the room
/// closes), auditing each hand as this player.
/// Says `ready` to an open ready check and votes yes in an open rematch
/// vote that wait for this player (Guandan rooms ask both by default), as
/// the SDK's bots do.
pub async fn answer_votes(c: &mut Client, m: &ServerMessage) {
    use claw_protocol::messages::{RematchVote, VoteState};
    match m {
        ServerMessage::ReadyCheck(r) if r.state == VoteState::Open && r.waiting.contains(&c.id()) => {
            c.send(ClientMessage::Ready).await
        }
        ServerMessage::Rematch(r) if r.state == VoteState::Open && r.waiting.contains(&c.id()) => {
            c.send(ClientMessage::RematchVote(RematchVote { accept: true })).await
        }
        _ => {}
    }
}

pub async fn bot(mut c: Client, game: Arc<dyn DynGame>, hands: usize, seed: u64) -> (Client, BotReport) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut rep = BotReport::default();
    let mut deferred = false;
    while rep.hands_audited < hands {
        let Some(m) = c.recv().await else { break };
        answer_votes(&mut c, &m).await;
        match m {
            ServerMessage::Event(e) => match e.decode_body().unwrap() {
                EventBody::HandPrepare(p) => {
                    c.my_seed = None;
                    if p.entropy == EntropyMode::Joint && p.players.contains(&c.id()) {
                        c.seed(e.hand_id).await;
                    }
                }
                EventBody::GameStart(g) => {
                    deferred = g.reveal == claw_protocol::messages::RevealPolicy::Deferred;
                }
                EventBody::TimeoutAction(_) => rep.timeouts_seen += 1,
                EventBody::GameEnd(_) => {
                    let r = c.audit(game.clone(), deferred);
                    assert!(deferred || r.complete(), "every check ran");
                    rep.hands_audited += 1;
                }
                _ => {}
            },
            ServerMessage::YourTurn(t) => {
                let a = pick(&t, &mut rng);
                c.act(t.hand_id, &a).await;
                rep.actions += 1;
            }
            ServerMessage::ActionRejected(r) => {
                panic!("a legal action was rejected: {r:?}");
            }
            ServerMessage::Kicked(_) => {
                rep.kicked = true;
                break;
            }
            _ => {}
        }
    }
    (c, rep)
}

/// A random affordable, modest action (cost at most a twentieth of the
/// player's chips when possible, so tests do not go broke); bet ranges
/// pick an amount in range. Never a Guandan surrender proposal while there
/// is another option, so deals are played out.
pub fn pick(t: &YourTurn, rng: &mut impl Rng) -> Value {
    let playing = |o: &&claw_protocol::messages::ActionOption| {
        o.action.get("type").and_then(Value::as_str) != Some("surrender")
    };
    let all: Vec<_> = t.actions.iter().filter(|o| o.affordable).collect();
    let all = if all.iter().any(playing) { all.into_iter().filter(playing).collect() } else { all };
    let modest: Vec<_> = all.iter().copied().filter(|o| o.cost.0 <= t.balance.0 / 20).collect();
    let options = if modest.is_empty() { all } else { modest };
    assert!(!options.is_empty(), "your-turn without an affordable action");
    let o = options[rng.gen_range(0..options.len())];
    let mut a = o.action.clone();
    if let (Some((lo, hi)), Some(obj)) = (o.range, a.as_object_mut()) {
        if let Some(k) = ["amount", "to", "bet"].iter().find(|k| obj.contains_key(**k)) {
            let hi = hi.0.min(lo.0.saturating_mul(4).max(lo.0));
            obj.insert((*k).into(), Value::from(rng.gen_range(lo.0..=hi)));
        }
    }
    a
}

/// A room of `game` that starts at once and never waits between hands.
pub fn fast_room(id: &str, game: &str) -> RoomConfig {
    let mut r = RoomConfig::new(id, game);
    r.between_hands = Duration::ZERO;
    r
}

/// Connects and seats `n` players (identity seeds `base..base+n`).
pub async fn seat_players(f: &Fixture, room: &str, base: u8, n: u8) -> Vec<Client> {
    let mut v = Vec::new();
    for i in 0..n {
        let mut c = f.client(room, base + i).await;
        let j = c.join().await;
        assert!(j.accepted, "{j:?}");
        v.push(c);
    }
    v
}

/// Runs bots over `clients` for `hands` hands each; returns reports.
pub async fn run_bots(
    clients: Vec<Client>,
    game: Arc<dyn DynGame>,
    hands: usize,
) -> Vec<(Client, BotReport)> {
    let tasks: Vec<_> = clients
        .into_iter()
        .enumerate()
        .map(|(i, c)| tokio::spawn(bot(c, game.clone(), hands, i as u64 + 1)))
        .collect();
    let mut out = Vec::new();
    for t in tasks {
        out.push(tokio::time::timeout(GUARD * 4, t).await.expect("guard: bots did not finish").unwrap());
    }
    out
}
