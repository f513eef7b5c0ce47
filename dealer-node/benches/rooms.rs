//! Hands per second of a whole dealer node over real WebSockets on
//! 127.0.0.1: N concurrent Hold'em rooms of 6 in-process clients each,
//! hands back to back (joint entropy, local chips). Clients either only
//! answer (`light`: seeds and check/call actions, the dealer's load alone)
//! or also check the chain of every event, verify the dealer signature
//! before each action and at the hand's end, and open their sealed cards
//! (`verifying`). The reported time is per hand across the node.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use claw_chips::LocalChips;
use claw_dealer::room::RoomEvent;
use claw_dealer::{DealerNode, NodeConfig, NodeHandle, RoomConfig};
use claw_protocol::handshake::ClientHandshake;
use claw_protocol::messages::{
    decode_server, ClientMessage, EventBody, JoinRequest, PlayerSeed, RawJson, ServerMessage, SignedAction,
};
use claw_protocol::transcript::TranscriptVerifier;
use claw_protocol::{Chips, Identity, PlayerId, Seed};
use criterion::{criterion_group, criterion_main, Criterion};
use futures_util::{SinkExt, StreamExt};
use rand::rngs::OsRng;
use tokio::runtime::Runtime;
use tokio_tungstenite::tungstenite::Message;

fn now_ms() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_millis() as u64).unwrap_or(0)
}

async fn client(addr: SocketAddr, room: String, dealer: PlayerId, verify: bool) {
    let me = Arc::new(Identity::generate(&mut OsRng));
    let Ok((mut ws, _)) = tokio_tungstenite::connect_async(format!("ws://{addr}/{room}")).await else {
        return;
    };
    let (mut hs, hello) =
        ClientHandshake::start(me.clone(), dealer, room, "bench", None, now_ms(), &mut OsRng);
    let send = |m: ClientMessage| Message::Text(m.encode().unwrap().into());
    let _ = ws.send(send(ClientMessage::Hello(hello))).await;
    let mut session = None;
    let mut verifier = TranscriptVerifier::new(dealer);
    while let Some(Ok(m)) = ws.next().await {
        let Message::Text(t) = m else { continue };
        let Ok(msg) = decode_server(t.as_str()) else { continue };
        match msg {
            ServerMessage::Challenge(c) => {
                let r = hs.on_challenge(&c, now_ms()).unwrap();
                let _ = ws.send(send(ClientMessage::Response(r))).await;
            }
            ServerMessage::Accepted(a) => {
                session = Some(hs.on_accepted(&a, now_ms()).unwrap());
                let j = JoinRequest { sdk_version: "bench".into(), name: None, seat: None, buy_in: None };
                let _ = ws.send(send(ClientMessage::JoinRequest(j))).await;
            }
            ServerMessage::Event(e) => {
                if verify {
                    if e.seq == 0 {
                        verifier = TranscriptVerifier::new(dealer);
                    }
                    let body = verifier.accept(&e).expect("event verifies");
                    if matches!(body, EventBody::GameEnd(_) | EventBody::AuditReveal(_)) {
                        verifier.confirm().expect("the hand's end is signed");
                    }
                    if let (EventBody::PhaseDeal(d) | EventBody::NewCard(d), Some(s)) = (&body, &session) {
                        for c in d.cards.iter().filter_map(|c| c.sealed.as_ref()) {
                            let _ = s.shared_key.open(&e.hand_id, c);
                        }
                    }
                }
                if e.seq == 0 {
                    let s = PlayerSeed::sign(&me, e.hand_id, Seed::random(&mut OsRng));
                    let _ = ws.send(send(ClientMessage::PlayerSeed(s))).await;
                }
            }
            ServerMessage::YourTurn(t) => {
                if verify {
                    // Relied on before acting: one signature covers the chain.
                    verifier.confirm().expect("the events before a turn are signed");
                }
                let ok: Vec<_> = t.actions.iter().filter(|o| o.affordable).collect();
                let a = ["check", "call"]
                    .iter()
                    .find_map(|w| ok.iter().find(|o| o.action["type"] == *w))
                    .or(ok.first())
                    .map(|o| o.action.clone())
                    .unwrap();
                let signed = SignedAction::sign(&me, t.hand_id, t.seq, RawJson::from_value(&a).unwrap());
                let _ = ws.send(send(ClientMessage::Action(signed))).await;
            }
            ServerMessage::Kicked(_) => break,
            _ => {}
        }
    }
}

struct Setup {
    node: NodeHandle,
    _dir: tempfile::TempDir,
}

async fn setup(rooms: usize, verify: bool) -> Setup {
    let dir = tempfile::tempdir().unwrap();
    let cfgs: Vec<RoomConfig> = (0..rooms)
        .map(|i| {
            let mut r = RoomConfig::new(format!("t{i}"), "texas-holdem");
            r.between_hands = Duration::ZERO;
            r.min_players = 6;
            r
        })
        .collect();
    let mut cfg = NodeConfig::local(dir.path(), cfgs);
    cfg.limits.send_budget_bytes = 64 << 20;
    // Every client comes from 127.0.0.1.
    cfg.limits.max_conns_per_addr = 1024;
    cfg.limits.max_handshakes_per_addr = 1024;
    let chips = Arc::new(LocalChips::new());
    let node = DealerNode::builder(cfg).local_chips(chips, Chips(1_000_000_000)).launch().await.unwrap();
    for i in 0..rooms {
        for _ in 0..6 {
            tokio::spawn(client(node.addr(), format!("t{i}"), node.dealer_id(), verify));
        }
    }
    Setup { node, _dir: dir }
}

fn rooms(c: &mut Criterion) {
    let rt = Runtime::new().unwrap();
    let mut g = c.benchmark_group("node");
    g.sample_size(10).measurement_time(Duration::from_secs(8));
    for verify in [false, true] {
        for n in [1usize, 4, 16] {
            let s = rt.block_on(setup(n, verify));
            let mut events = s.node.subscribe();
            let name = format!("holdem6-{}/{n}-rooms/per-hand", if verify { "verifying" } else { "light" });
            g.bench_function(name, |b| {
                b.iter_custom(|iters| {
                    rt.block_on(async {
                        let t0 = Instant::now();
                        let mut done = 0;
                        while done < iters {
                            if let Ok(RoomEvent::HandFinished { .. }) = events.recv().await {
                                done += 1;
                            }
                        }
                        t0.elapsed()
                    })
                })
            });
            rt.block_on(s.node.shutdown(Duration::ZERO));
        }
    }
    g.finish();
}

criterion_group!(benches, rooms);
criterion_main!(benches);
