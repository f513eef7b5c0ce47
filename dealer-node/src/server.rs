//! The WebSocket server: rooms addressed by path (`ws://host:port/<room>`),
//! limits per source address (checked first), a node-wide connection cap,
//! a budget of connections not yet authenticated (per address and in all;
//! a newcomer beyond it closes the oldest, see [`crate::pending`]), a
//! message size limit, a deadline on the whole
//! handshake (TCP accept to `accepted`), the 4-step handshake from the
//! protocol crate, a cap per identity, then a reader that rate-limits raw
//! frames, pings the peer (heartbeat) and hands decoded messages to the
//! room, and a writer that drains the connection's queue.
//!
//! A bad frame, a failed handshake or a hostile peer ends at most its own
//! connection; every per-connection task catches its own errors.

use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use claw_protocol::handshake::{ChallengeBook, Hello, RejectReason, Rejected, Response, ServerHandshake};
use claw_protocol::messages::{
    decode_client, peek_type, ActionRejectCode, ActionRejected, ClientMessage, DecodeError, ErrorCode,
    ErrorMsg, ServerMessage,
};
use futures_util::{SinkExt, StreamExt};
use rand::rngs::OsRng;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{oneshot, watch, Semaphore};
use tokio::time::{timeout_at, Instant};
use tokio_tungstenite::tungstenite::handshake::server::{ErrorResponse, Request, Response as HttpResponse};
use tokio_tungstenite::tungstenite::http::StatusCode;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::protocol::{CloseFrame, WebSocketConfig};
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::WebSocketStream;

use crate::metrics::{dec, inc};
use claw_engine::room::TokenBucket;

use crate::conn::{next_conn_id, ConnRx, ConnTx, Counter, Outbound, Queued, SendBudget, Slot, TOO_SLOW};
use crate::matchmaking::{Matchmaker, SeatHold, QUICK_MATCH_PATH};
use crate::pending::PendingBudget;
use crate::registry::Registry;
use crate::room::{unix_ms, NodeContext, RoomCmd, RoomHandle};
use crate::tls::{ServerStream, ServerTls};
use claw_protocol::PlayerId;

/// Bytes read from a socket at a time. tungstenite's default (128 KiB, held
/// for the connection's life) made an idle seated connection cost ≈ 155 KiB;
/// players send small frames, and a larger one is read in several steps.
const READ_BUFFER_BYTES: usize = 4 * 1024;

/// Frame bytes gathered before they go to the socket: the frames one burst
/// sends a connection leave in one write at the batch's flush, not one each.
const WRITE_BUFFER_BYTES: usize = 8 * 1024;

/// The kernel send buffer of every connection (Linux doubles it). Left to
/// itself the kernel grows it to megabytes on loopback, which would hide a
/// reader that stopped reading from the send budget (SPEC §9.1).
const SOCKET_SEND_BUFFER_BYTES: usize = 32 * 1024;

/// What every connection task shares.
pub struct ServerState {
    /// Rooms by id (the URL path).
    pub rooms: Arc<Registry>,
    /// What rooms and connections share.
    pub ctx: Arc<NodeContext>,
    /// Answered challenges, node-wide (a response is accepted once).
    pub book: Mutex<ChallengeBook>,
    /// One permit per open connection.
    pub permits: Arc<Semaphore>,
    /// TLS on every connection (`wss://`), or none (`ws://`).
    pub tls: Option<ServerTls>,
    /// Connections not yet authenticated, per address and in all.
    pub pending: Arc<PendingBudget>,
    /// One permit per handshake step being computed.
    pub handshake_lane: Semaphore,
    /// Open connections per source address.
    pub per_addr: Arc<Counter<IpAddr>>,
    /// Authenticated connections per identity.
    pub per_identity: Arc<Counter<PlayerId>>,
    /// Quick match (the `quick-match` path).
    pub matcher: Arc<Matchmaker>,
}

impl ServerState {
    /// The server's state for `rooms`, with budgets from `ctx.limits`.
    pub fn new(rooms: Arc<Registry>, ctx: Arc<NodeContext>, tls: Option<ServerTls>) -> ServerState {
        let l = &ctx.limits;
        ServerState {
            book: Mutex::new(ChallengeBook::new()),
            permits: Arc::new(Semaphore::new(l.max_connections)),
            pending: PendingBudget::new(l.max_handshakes_per_addr, l.max_handshakes),
            handshake_lane: Semaphore::new(l.handshake_concurrency),
            tls,
            per_addr: Arc::default(),
            per_identity: Arc::default(),
            matcher: Arc::new(Matchmaker::new(Arc::clone(&rooms), Arc::clone(&ctx), Vec::new())),
            rooms,
            ctx,
        }
    }
}

/// Longest a single write may block on a peer that does not read: a last
/// resort, longer than the send grace and the heartbeat's two intervals,
/// which close such a peer first (with their reason).
const WRITE_TIMEOUT: Duration = Duration::from_secs(30);

/// Accepts connections until `stop` turns true.
pub async fn serve(listener: TcpListener, state: Arc<ServerState>, mut stop: watch::Receiver<bool>) {
    loop {
        tokio::select! {
            r = listener.accept() => match r {
                Ok((stream, peer)) => {
                    inc(&state.ctx.metrics.connections_total);
                    let st = Arc::clone(&state);
                    let task = tokio::spawn(async move { connection(st, stream, peer).await });
                    tokio::spawn(async move {
                        if let Err(e) = task.await {
                            tracing::error!(%peer, error = %e, "connection task failed");
                        }
                    });
                }
                Err(e) => {
                    // Out of file descriptors and the like: back off a little.
                    tracing::warn!(error = %e, "accept failed");
                    tokio::time::sleep(Duration::from_millis(20)).await;
                }
            },
            r = stop.changed() => {
                if r.is_err() || *stop.borrow() {
                    break;
                }
            }
        }
    }
}

type Ws = WebSocketStream<ServerStream>;

/// Decrements the open-connection gauge when the connection ends.
struct OpenGuard(Arc<NodeContext>);

impl Drop for OpenGuard {
    fn drop(&mut self) {
        dec(&self.0.metrics.connections_open);
    }
}

async fn connection(state: Arc<ServerState>, stream: TcpStream, peer: SocketAddr) {
    let ctx = Arc::clone(&state.ctx);
    let limits = ctx.limits.clone();
    let deadline = Instant::now() + limits.handshake_deadline;
    // Per source address first: one address cannot use up the node's cap.
    let ip = peer.ip();
    let Some(addr_slot) = state.per_addr.try_take(ip, limits.max_conns_per_addr) else {
        inc(&ctx.metrics.connections_refused_addr);
        tracing::debug!(%peer, "too many connections from this address: closed");
        return;
    };
    // Not yet authenticated: a place in the pending budget, taken from the
    // oldest pending connection (of this address, or of the node) if full.
    let (mut ticket, evicted) = state.pending.admit(ip);
    if evicted > 0 {
        ctx.metrics.handshakes_evicted.fetch_add(evicted as u64, std::sync::atomic::Ordering::Relaxed);
    }
    let permit = Arc::clone(&state.permits).try_acquire_owned().ok();
    let _ = stream.set_nodelay(true);
    // A small kernel send buffer: what a reader does not take stays in the
    // connection's queue, where the send budget sees it.
    let _ = socket2::SockRef::from(&stream).set_send_buffer_size(SOCKET_SEND_BUFFER_BYTES);
    let full = permit.is_none();
    let authenticated = async {
        let (mut ws, room, open) = upgrade(&state, stream, peer, deadline, full).await?;
        let (room, hold) = match room {
            Some(r) => (r, None),
            None => {
                let (r, h) = quick_match(&state, &mut ws, deadline).await?;
                (r, Some(h))
            }
        };
        let end = handshake(&state, &mut ws, &room, deadline, ip, hold.as_ref()).await;
        Some((ws, room, open, end, hold))
    };
    let authenticated = tokio::select! {
        biased;
        () = ticket.evicted() => {
            tracing::debug!(%peer, "a newer connection took this one's place in the handshake budget: closed");
            return;
        }
        r = authenticated => r,
    };
    drop(ticket);
    // A quick-matched connection's seat stays held while it lives.
    let Some((ws, room, _open, end, _hold)) = authenticated else { return };
    let _permit = permit;
    let _addr = addr_slot;
    session(state, ws, room, peer, end).await;
}

/// TLS (if any) and the WebSocket upgrade to a room (none: the quick-match
/// path), before `deadline`.
async fn upgrade(
    state: &ServerState,
    stream: TcpStream,
    peer: SocketAddr,
    deadline: Instant,
    full: bool,
) -> Option<(Ws, Option<RoomHandle>, OpenGuard)> {
    let ctx = &state.ctx;
    let limits = &ctx.limits;
    let stream = match &state.tls {
        None => ServerStream::Plain(stream),
        Some(tls) => match timeout_at(deadline, tls.accept(stream)).await {
            Ok(Ok(s)) => s,
            Ok(Err(e)) => {
                inc(&ctx.metrics.handshakes_failed);
                tracing::debug!(%peer, error = %e, "TLS handshake failed");
                return None;
            }
            Err(_) => {
                inc(&ctx.metrics.handshakes_failed);
                tracing::debug!(%peer, "TLS handshake timed out");
                return None;
            }
        },
    };
    let mut room_id: Option<String> = None;
    let rooms = &state.rooms;
    // The error type is tungstenite's; its size is not ours to choose.
    #[allow(clippy::result_large_err)]
    let callback = |req: &Request, resp: HttpResponse| -> Result<HttpResponse, ErrorResponse> {
        let refuse = |code: StatusCode, text: &str| {
            let mut r = ErrorResponse::new(Some(text.to_owned()));
            *r.status_mut() = code;
            r
        };
        if full {
            return Err(refuse(StatusCode::SERVICE_UNAVAILABLE, "connection limit reached"));
        }
        let path = req.uri().path().trim_start_matches('/');
        if path == QUICK_MATCH_PATH {
            return Ok(resp);
        }
        if !rooms.contains(path) {
            return Err(refuse(StatusCode::NOT_FOUND, "no such room"));
        }
        room_id = Some(path.to_owned());
        Ok(resp)
    };
    let config = WebSocketConfig::default()
        .read_buffer_size(READ_BUFFER_BYTES)
        .write_buffer_size(WRITE_BUFFER_BYTES)
        .max_message_size(Some(limits.max_frame_bytes))
        .max_frame_size(Some(limits.max_frame_bytes));
    let upgraded =
        timeout_at(deadline, tokio_tungstenite::accept_hdr_async_with_config(stream, callback, Some(config)))
            .await;
    let ws = match upgraded {
        Ok(Ok(ws)) => ws,
        Ok(Err(e)) => {
            if full {
                inc(&ctx.metrics.connections_refused_cap);
            }
            tracing::debug!(%peer, error = %e, "websocket upgrade refused");
            return None;
        }
        Err(_) => {
            inc(&ctx.metrics.handshakes_failed);
            tracing::debug!(%peer, "websocket upgrade timed out");
            return None;
        }
    };
    let room = match room_id {
        Some(r) => Some(state.rooms.get(&r)?),
        None => None,
    };
    inc(&ctx.metrics.connections_open);
    Some((ws, room, OpenGuard(Arc::clone(ctx))))
}

enum HandshakeEnd {
    Admitted { conn: ConnTx, rx: ConnRx, identity: Slot<PlayerId> },
    Failed,
}

/// The session after the 4-step handshake ended with `end`.
async fn session(state: Arc<ServerState>, mut ws: Ws, room: RoomHandle, peer: SocketAddr, end: HandshakeEnd) {
    let ctx = Arc::clone(&state.ctx);
    let (conn, rx, _identity) = match end {
        HandshakeEnd::Admitted { conn, rx, identity } => (conn, rx, identity),
        HandshakeEnd::Failed => {
            inc(&ctx.metrics.handshakes_failed);
            let _ = tokio::time::timeout(Duration::from_secs(1), ws.close(None)).await;
            return;
        }
    };
    let conn_id = conn.id;
    tracing::debug!(%peer, room = %room.id, conn = conn_id, "session open");
    let (sink, mut stream) = ws.split();
    let mut writer = tokio::spawn(writer(sink, rx));
    room.send(RoomCmd::Ready { conn: conn_id }).await;
    let limits = &ctx.limits;
    let mut bucket =
        TokenBucket::new(limits.frame_rate_per_sec, limits.frame_burst, Instant::now().into_std());
    let mut bad_in_a_row = 0u32;
    let mut writer_done = false;
    // Heartbeat: a ping every interval; one still unanswered at the next
    // tick means the peer is gone or frozen, and the player is away.
    let beat = limits.ping_interval;
    let mut heartbeat = tokio::time::interval_at(Instant::now() + beat, beat);
    heartbeat.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut pong_due = false;
    let error = |code: ErrorCode, message: String| {
        crate::room::encode(&ServerMessage::Error(ErrorMsg { code, message }))
    };
    loop {
        let next = tokio::select! {
            m = stream.next() => m,
            _ = &mut writer => {
                writer_done = true;
                break;
            }
            _ = heartbeat.tick() => {
                if pong_due {
                    inc(&ctx.metrics.pongs_missed);
                    tracing::info!(%peer, conn = conn_id, "no pong: closing, the player is away");
                    conn.close(1001, "no pong");
                    break;
                }
                match conn.ping() {
                    Queued::TooSlow => {
                        // Behind past the grace with nothing new queued for it.
                        inc(&ctx.metrics.send_too_slow);
                        tracing::info!(%peer, conn = conn_id, "reader behind its send budget past the grace: closing (too slow)");
                        conn.close(1008, TOO_SLOW);
                        break;
                    }
                    Queued::FellBehind => {
                        inc(&ctx.metrics.send_behind);
                        pong_due = true;
                    }
                    q => pong_due = q != Queued::Gone,
                }
                continue;
            }
        };
        let frame = match next {
            Some(Ok(Message::Text(t))) => t,
            Some(Ok(Message::Binary(_))) => {
                inc(&ctx.metrics.bad_frames);
                bad_in_a_row += 1;
                if let Some(f) =
                    error(ErrorCode::Malformed, "binary frames are not part of the protocol".into())
                {
                    conn.send(f);
                }
                if bad_in_a_row > limits.flood_close_after {
                    conn.close(1008, "too many bad frames");
                    break;
                }
                continue;
            }
            Some(Ok(Message::Close(_))) | None => break,
            Some(Ok(Message::Pong(_))) => {
                pong_due = false;
                continue;
            }
            Some(Ok(_)) => continue, // pings (answered by tungstenite), raw frames
            Some(Err(e)) => {
                // Oversize beyond the hard limit, protocol errors, resets.
                inc(&ctx.metrics.bad_frames);
                tracing::debug!(%peer, conn = conn_id, error = %e, "connection error");
                break;
            }
        };
        // Raw frames are throttled, not dropped: a peer above the rate
        // waits (TCP backpressure). Which messages count against the
        // player's limit is the room's business (it knows whose turn it is).
        let mut now = Instant::now();
        if !bucket.try_take(now.into_std()) {
            inc(&ctx.metrics.throttled);
            tokio::time::sleep(bucket.wait_time(now.into_std())).await;
            now = Instant::now();
            let _ = bucket.try_take(now.into_std());
        }
        match decode_client(frame.as_str()) {
            Ok(msg) => {
                bad_in_a_row = 0;
                if !room.send(RoomCmd::Message { conn: conn_id, msg: Box::new(msg), at: now }).await {
                    break;
                }
            }
            Err(e) => {
                inc(&ctx.metrics.bad_frames);
                bad_in_a_row += 1;
                if let Some(f) = crate::room::encode(&decode_refusal(&e)) {
                    conn.send(f);
                }
                if bad_in_a_row > limits.flood_close_after {
                    conn.close(1008, "too many bad frames");
                    break;
                }
            }
        }
    }
    room.send(RoomCmd::Closed { conn: conn_id }).await;
    conn.close(1000, "bye");
    drop(conn);
    if !writer_done && tokio::time::timeout(Duration::from_secs(5), &mut writer).await.is_err() {
        writer.abort();
    }
    tracing::debug!(%peer, conn = conn_id, "session closed");
}

/// The answer to a frame that did not decode: `action-rejected` for an
/// action over the size limit (its sender learns which action, the hand
/// never sees it), `error` for anything else.
fn decode_refusal(e: &DecodeError) -> ServerMessage {
    match *e {
        DecodeError::ActionTooLarge { hand_id, seq, .. } => ServerMessage::ActionRejected(ActionRejected {
            hand_id,
            seq,
            code: ActionRejectCode::Malformed,
            reason: e.to_string(),
        }),
        _ => ServerMessage::Error(ErrorMsg::from_decode(e)),
    }
}

/// The quick-match path: the first frame must be `quick-match`; the
/// answer is `matched` (the connection then belongs to that room and its
/// handshake follows) or a signed `rejected` (`refused`, why in
/// `message`; `unexpected-message` / `malformed` for another frame), and
/// the connection closes. All before `deadline`.
async fn quick_match(state: &ServerState, ws: &mut Ws, deadline: Instant) -> Option<(RoomHandle, SeatHold)> {
    let (room, matched, hold) = match pick_room(state, ws, deadline).await {
        Ok(picked) => picked,
        Err(None) => return None,
        Err(Some((reason, message))) => {
            let null = claw_protocol::messages::RawJson::from_value(&serde_json::Value::Null).ok()?;
            let mut hs = ServerHandshake::new(Arc::clone(&state.ctx.dealer), QUICK_MATCH_PATH, null);
            let mut r = hs.reject(reason, unix_ms());
            r.message = message;
            send_rejected(ws, &r).await;
            return None;
        }
    };
    let frame = crate::room::encode(&ServerMessage::Matched(matched))?;
    timeout_at(deadline, ws.send(Message::Text(frame))).await.ok()?.ok()?;
    Some((room, hold))
}

/// Why a quick match is refused (sent as a signed `rejected`), or `None`
/// when the connection just ended.
type QuickMatchRefusal = Option<(RejectReason, Option<String>)>;

/// Reads the `quick-match` frame and picks a room for it.
async fn pick_room(
    state: &ServerState,
    ws: &mut Ws,
    deadline: Instant,
) -> Result<(RoomHandle, claw_protocol::messages::Matched, SeatHold), QuickMatchRefusal> {
    let text = loop {
        match timeout_at(deadline, ws.next()).await {
            Ok(Some(Ok(Message::Text(t)))) => break t,
            Ok(Some(Ok(Message::Ping(_) | Message::Pong(_)))) => continue,
            Ok(Some(Ok(Message::Binary(_)))) => return Err(Some((RejectReason::Malformed, None))),
            Err(_) => return Err(Some((RejectReason::DeadlineExceeded, None))),
            _ => return Err(None),
        }
    };
    let req = match decode_client(text.as_str()) {
        Ok(ClientMessage::QuickMatch(q)) => q,
        Ok(_) => return Err(Some((RejectReason::UnexpectedMessage, Some("send quick-match first".into())))),
        Err(e) => return Err(Some((RejectReason::Malformed, Some(e.to_string())))),
    };
    match timeout_at(deadline, state.matcher.for_socket(&req)).await {
        Ok(Ok(m)) => Ok(m),
        Ok(Err(e)) => {
            tracing::info!(game = %req.game, tier = ?req.tier, reason = %e, "quick match found no room");
            Err(Some((RejectReason::Refused, Some(e.to_string()))))
        }
        Err(_) => Err(Some((RejectReason::DeadlineExceeded, None))),
    }
}

/// Steps 1–4 of the handshake on `ws`, all before `deadline`. A
/// quick-matched connection's held seat learns who it waits for.
async fn handshake(
    state: &ServerState,
    ws: &mut Ws,
    room: &RoomHandle,
    deadline: Instant,
    ip: IpAddr,
    hold: Option<&SeatHold>,
) -> HandshakeEnd {
    let ctx = &state.ctx;
    let mut hs = ServerHandshake::new(Arc::clone(&ctx.dealer), room.id.clone(), room.public_config.clone());
    let mut rng = OsRng;
    let reject =
        |hs: &mut ServerHandshake, reason: RejectReason| -> Rejected { hs.reject(reason, unix_ms()) };
    let verified = loop {
        let next = match timeout_at(deadline, ws.next()).await {
            Ok(n) => n,
            Err(_) => {
                let r = reject(&mut hs, RejectReason::DeadlineExceeded);
                send_rejected(ws, &r).await;
                return HandshakeEnd::Failed;
            }
        };
        let text = match next {
            Some(Ok(Message::Text(t))) => t,
            Some(Ok(Message::Ping(_) | Message::Pong(_))) => continue,
            Some(Ok(Message::Binary(_))) => {
                let r = reject(&mut hs, RejectReason::Malformed);
                send_rejected(ws, &r).await;
                return HandshakeEnd::Failed;
            }
            _ => return HandshakeEnd::Failed,
        };
        let step = {
            let Some(_turn) = lane_turn(state, deadline).await else {
                let r = reject(&mut hs, RejectReason::DeadlineExceeded);
                send_rejected(ws, &r).await;
                return HandshakeEnd::Failed;
            };
            let now = unix_ms();
            let ty = peek_type(text.as_str()).ok();
            match ty.as_deref() {
                Some("hello") if text.len() <= claw_protocol::messages::MAX_FRAME_BYTES => {
                    match serde_json::from_str::<Hello>(text.as_str()) {
                        Ok(hello) => match hs.on_hello(&hello, now, &mut rng) {
                            Ok(ch) => Ok(crate::room::encode(&ServerMessage::Challenge(ch))),
                            Err(r) => Err(r),
                        },
                        Err(_) => Err(reject(&mut hs, RejectReason::Malformed)),
                    }
                }
                Some("response") if text.len() <= claw_protocol::messages::MAX_FRAME_BYTES => {
                    match serde_json::from_str::<Response>(text.as_str()) {
                        Ok(resp) => {
                            let r = {
                                let mut book = state.book.lock().unwrap_or_else(|p| p.into_inner());
                                hs.on_response(&resp, now, &mut book)
                            };
                            match r {
                                Ok(v) => break v,
                                Err(r) => Err(r),
                            }
                        }
                        Err(_) => Err(reject(&mut hs, RejectReason::Malformed)),
                    }
                }
                Some("hello") | Some("response") => Err(reject(&mut hs, RejectReason::Malformed)),
                Some(_) => Err(reject(&mut hs, RejectReason::UnexpectedMessage)),
                None => Err(reject(&mut hs, RejectReason::Malformed)),
            }
        };
        match step {
            Ok(Some(frame)) => {
                if timeout_at(deadline, ws.send(Message::Text(frame))).await.map_or(true, |r| r.is_err()) {
                    return HandshakeEnd::Failed;
                }
            }
            Ok(None) => return HandshakeEnd::Failed,
            Err(r) => {
                tracing::info!(room = %room.id, reason = %r.reason, "handshake rejected");
                send_rejected(ws, &r).await;
                return HandshakeEnd::Failed;
            }
        }
    };
    // The player proved its key: ask the room to admit it.
    let player = verified.player.signing;
    if let Some(h) = hold {
        h.authenticated(player);
    }
    // A banned identity is refused by name (after the signature: a relay
    // cannot learn who is banned).
    if let Some(ban) = ctx.sanctions.ban_of(&player, unix_ms()) {
        tracing::info!(room = %room.id, player = %player.short(), "banned identity refused");
        let mut r = reject(&mut hs, RejectReason::Banned);
        r.message = Some(ban.text());
        send_rejected(ws, &r).await;
        return HandshakeEnd::Failed;
    }
    ctx.metrics.conduct.seen_from(&player, ip);
    let Some(identity) = state.per_identity.try_take(player, ctx.limits.max_conns_per_identity) else {
        tracing::info!(room = %room.id, player = %player.short(), "too many connections for this identity");
        let r = reject(&mut hs, RejectReason::Busy);
        send_rejected(ws, &r).await;
        return HandshakeEnd::Failed;
    };
    let conn_id = next_conn_id();
    let budget = SendBudget { bytes: ctx.limits.send_budget_bytes, grace: ctx.limits.send_grace };
    let (conn, rx) = ConnTx::channel(conn_id, budget);
    let (reply, answer) = oneshot::channel();
    let sent = room.send(RoomCmd::Connect { verified: Box::new(verified), conn: conn.clone(), reply }).await;
    let admit = match (sent, timeout_at(deadline, answer).await) {
        (true, Ok(Ok(Ok(a)))) => a,
        (_, Ok(Ok(Err(refusal)))) => {
            let mut r = reject(&mut hs, refusal.reason);
            r.message = Some(refusal.message);
            send_rejected(ws, &r).await;
            return HandshakeEnd::Failed;
        }
        (_, Err(_)) => {
            // The room did not answer in time; if it admitted us meanwhile,
            // the Closed below releases the seat to the reconnect rules.
            room.send(RoomCmd::Closed { conn: conn_id }).await;
            let r = reject(&mut hs, RejectReason::Busy);
            send_rejected(ws, &r).await;
            return HandshakeEnd::Failed;
        }
        _ => {
            let r = reject(&mut hs, RejectReason::Busy);
            send_rejected(ws, &r).await;
            return HandshakeEnd::Failed;
        }
    };
    let accepted = match lane_turn(state, deadline).await {
        Some(_turn) => {
            hs.accept(admit.seat, Some(admit.token), unix_ms(), &mut rng).map(ServerMessage::Accepted)
        }
        None => None,
    };
    let Some(accepted) = accepted else {
        room.send(RoomCmd::Closed { conn: conn_id }).await;
        return HandshakeEnd::Failed;
    };
    let ok = match crate::room::encode(&accepted) {
        Some(f) => timeout_at(deadline, ws.send(Message::Text(f))).await.is_ok_and(|r| r.is_ok()),
        None => false,
    };
    if !ok {
        room.send(RoomCmd::Closed { conn: conn_id }).await;
        return HandshakeEnd::Failed;
    }
    tracing::info!(room = %room.id, player = %player.short(), conn = conn_id, "handshake accepted");
    HandshakeEnd::Admitted { conn, rx, identity }
}

/// A turn to compute one handshake step (see `Limits::handshake_concurrency`):
/// waiting steps sleep here, off the workers' run queues, in arrival order.
/// None: the deadline passed first.
async fn lane_turn(state: &ServerState, deadline: Instant) -> Option<tokio::sync::SemaphorePermit<'_>> {
    if let Ok(turn) = state.handshake_lane.try_acquire() {
        return Some(turn);
    }
    inc(&state.ctx.metrics.handshake_steps_queued);
    timeout_at(deadline, state.handshake_lane.acquire()).await.ok()?.ok()
}

async fn send_rejected(ws: &mut Ws, r: &Rejected) {
    if let Some(f) = crate::room::encode(&ServerMessage::Rejected(r.clone())) {
        let _ = tokio::time::timeout(Duration::from_secs(2), ws.send(Message::Text(f))).await;
    }
    // A ban closes with its own code (the client must not retry); any other
    // refusal with 1008.
    let code = match r.reason {
        RejectReason::Banned => claw_protocol::close::BANNED,
        _ => claw_protocol::close::POLICY,
    };
    let close = CloseFrame { code: CloseCode::from(code), reason: r.reason.code().into() };
    let _ = tokio::time::timeout(Duration::from_secs(2), ws.send(Message::Close(Some(close)))).await;
}

/// Most frame bytes the writer hands to the socket between flushes.
const WRITE_BATCH_BYTES: usize = 64 * 1024;

/// Drains a connection's queue into the socket, batching what is queued.
/// A batch's bytes count against the send budget until its flush returns.
async fn writer(mut sink: futures_util::stream::SplitSink<Ws, Message>, mut rx: ConnRx) {
    'outer: while let Some(o) = rx.recv().await {
        let mut next = Some(o);
        let mut batch = 0usize;
        while let Some(o) = next.take() {
            let item = match o {
                Outbound::Frame(f) => {
                    batch += f.len();
                    Message::Text(f)
                }
                Outbound::Ping => Message::Ping(Default::default()),
                Outbound::Close { code, reason } => {
                    let frame = CloseFrame { code: CloseCode::from(code), reason: reason.into() };
                    let _ = tokio::time::timeout(WRITE_TIMEOUT, sink.send(Message::Close(Some(frame)))).await;
                    break 'outer;
                }
            };
            match tokio::time::timeout(WRITE_TIMEOUT, sink.feed(item)).await {
                Ok(Ok(())) => {}
                _ => break 'outer,
            }
            if batch < WRITE_BATCH_BYTES {
                next = rx.try_recv();
            }
        }
        match tokio::time::timeout(WRITE_TIMEOUT, sink.flush()).await {
            Ok(Ok(())) => rx.written(batch),
            _ => break,
        }
    }
    let _ = tokio::time::timeout(Duration::from_secs(1), sink.close()).await;
}
