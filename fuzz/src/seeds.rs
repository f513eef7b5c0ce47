//! Valid inputs of each target, from the real state machines and engines
//! (so the mutator starts from what honest peers send).

use claw_games::HandRunner;
use claw_protocol::handshake::{RejectReason, ServerHandshake};
use claw_protocol::messages::{ClientMessage, PlayerSeed, RawJson, ServerMessage, SignedAction};
use claw_protocol::{shuffle, Chips, HandId, Identity, Seed};
use serde_json::Value;

use crate::targets::{canon, deferred_hand, honest_hand, parties, room_config, ROOM, T0};

/// The honest handshake's frames, exactly as the handshake target produces them.
struct HonestFrames {
    hello: String,
    challenge: String,
    response: String,
    accepted: String,
    rejected: String,
}

fn honest_frames() -> HonestFrames {
    let c = canon();
    let p = parties();
    let rejected = ServerHandshake::new(p.dealer.clone(), ROOM, room_config()).reject(RejectReason::Busy, T0);
    let enc_c = |m: ClientMessage| m.encode().expect("small frame");
    let enc_s = |m: ServerMessage| m.encode().expect("small frame");
    HonestFrames {
        hello: enc_c(ClientMessage::Hello(c.hello.clone())),
        challenge: enc_s(ServerMessage::Challenge(c.challenge.clone())),
        response: enc_c(ClientMessage::Response(c.response.clone())),
        accepted: enc_s(ServerMessage::Accepted(c.accepted.clone())),
        rejected: enc_s(ServerMessage::Rejected(rejected)),
    }
}

fn raw(s: &str) -> RawJson {
    RawJson::from_string(s.to_owned()).expect("seed JSON")
}

/// Frames of both directions: the handshake, signed player messages, the
/// honest hand's events, and the other message types.
pub fn frames() -> Vec<Vec<u8>> {
    let h = honest_frames();
    let player = Identity::from_seed([1; 32]);
    let hand = HandId([7; 16]);
    let mut out = vec![h.hello, h.challenge, h.response, h.accepted, h.rejected];
    out.push(
        ClientMessage::PlayerSeed(PlayerSeed::sign(&player, hand, Seed([4; 32]))).encode().expect("frame"),
    );
    out.push(
        ClientMessage::Action(SignedAction::sign(&player, hand, 3, raw(r#"{"type":"raise","amount":40}"#)))
            .encode()
            .expect("frame"),
    );
    for e in &honest_hand().transcript().events {
        out.push(ServerMessage::Event(e.clone()).encode().expect("frame"));
    }
    for s in [
        r#"{"type":"join-request","sdk_version":"claw-player/0.1.0","name":"ann","seat":2,"buy_in":500}"#,
        r#"{"type":"query","query_type":"my-balance","nonce":"n1"}"#,
        r#"{"type":"query","query_type":"table-state","nonce":"n3"}"#,
        r#"{"type":"sit-out"}"#,
        r#"{"type":"sit-in"}"#,
        r#"{"type":"leave"}"#,
        r#"{"type":"your-turn","hand_id":"07070707070707070707070707070707","seat":1,"seq":2,"actions":[{"action":{"type":"call"},"cost":2,"affordable":true},{"action":{"type":"raise","amount":4},"cost":4,"affordable":true,"range":[4,100]}],"balance":100,"deadline_ms":1700000000000,"phase":"flop"}"#,
        r#"{"type":"action-rejected","hand_id":"07070707070707070707070707070707","seq":2,"code":"not-your-turn","reason":"wait"}"#,
        r#"{"type":"kicked","code":"insufficient-balance","reason":"broke"}"#,
        r#"{"type":"query-result","nonce":"a","query_type":"my-balance","balance":7}"#,
        r#"{"type":"query-result","nonce":"c","query_type":"table-state","hand_id":"07070707070707070707070707070707","public_state":{"pot":1}}"#,
        r#"{"type":"query-error","nonce":"f","error":"rate-limited","message":"slow"}"#,
        r#"{"type":"error","code":"malformed","message":"no"}"#,
        r#"{"type":"join-response","accepted":false,"reason":"room-full","message":"full","players":[]}"#,
    ] {
        out.push(s.to_owned());
    }
    out.into_iter().map(String::into_bytes).collect()
}

/// Handshake inputs: honest runs, each frame given explicitly, clocks at the limits.
pub fn handshake() -> Vec<Vec<u8>> {
    let h = honest_frames();
    let (he, ch, re, ac, rj) = (&h.hello, &h.challenge, &h.response, &h.accepted, &h.rejected);
    [
        "0 0 0 0\n\n\n\n".to_owned(),
        format!("0 0 0 0\n{he}\n\n\n"),
        format!("0 0 0 0\n\n{ch}\n\n"),
        format!("0 0 0 0\n\n\n{re}\n"),
        format!("0 0 0 0\n\n\n\n{ac}"),
        format!("0 0 0 0\n{he}\n{ch}\n{re}\n{ac}"),
        format!("0 0 0 0\n\n\n\n{rj}"),
        "15000 15000 25000 29999\n\n\n\n".to_owned(),
        "-15001 0 10001 0\n\n\n\n".to_owned(),
    ]
    .into_iter()
    .map(String::into_bytes)
    .collect()
}

/// Transcript inputs: the honest hand as a network attacker sees it (mode
/// `0`), and hands for the cheating dealer (odd modes), also with deferred reveals.
pub fn transcript() -> Vec<Vec<u8>> {
    let honest = honest_hand().transcript().to_jsonl().expect("honest transcript");
    let deferred = deferred_hand();
    let pending = deferred.transcript_with(false).to_jsonl().expect("deferred transcript");
    let complete = deferred.transcript().to_jsonl().expect("deferred transcript");
    [format!("0\n{honest}"), format!("1\n{honest}"), format!("3\n{pending}"), format!("1\n{complete}")]
        .into_iter()
        .map(String::into_bytes)
        .collect()
}

/// Game inputs: for every game and a few table sizes, an honest hand played
/// by offered-action indices, and the same hand as explicit `SEAT JSON` lines.
pub fn game_actions() -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    for game in claw_games::registry::all() {
        let meta = game.meta();
        for (players, shuffle_seed, balance) in
            [(meta.min_players, 1u8, 1000u64), (meta.max_players, 2, 50), (meta.min_players.max(3), 3, 20)]
        {
            let header = format!("{} {players} {shuffle_seed} {balance}", meta.name);
            let infos: Vec<_> = (0..usize::from(players))
                .map(|i| claw_games::PlayerInfo {
                    id: Identity::from_seed([i as u8 + 1; 32]).id(),
                    balance: Chips(balance),
                })
                .collect();
            let Ok(deck) = game.create_deck(&Value::Null) else { continue };
            let deck = shuffle(&deck, &[shuffle_seed; 32]);
            let Ok((mut runner, _)) =
                HandRunner::start(game.as_ref(), &Value::Null, &infos, &Value::Null, deck)
            else {
                continue;
            };
            let (mut picks, mut explicit) = (vec![header.clone()], vec![header]);
            for step in 0..200usize {
                let hand = runner.hand();
                let Some(seat) = hand.to_act().filter(|_| !hand.is_over()) else { break };
                let options = hand.valid_actions();
                let Some(k) =
                    (0..options.len()).map(|j| (step + j) % options.len()).find(|&j| options[j].affordable)
                else {
                    break;
                };
                let action = options[k].action.clone();
                picks.push(k.to_string());
                explicit.push(format!("{} {action}", seat.0));
                if runner.act(seat, &action).is_err() {
                    break;
                }
            }
            out.push(picks.join("\n").into_bytes());
            out.push(explicit.join("\n").into_bytes());
        }
    }
    out
}

/// Honest hands of every game through the engine (`K` lines), one with an
/// action padded far over the size limit, one just under it.
pub fn hand_actions() -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    for game in claw_games::registry::all() {
        let meta = game.meta();
        for (players, seed) in [(meta.min_players, 1u8), (meta.max_players, 2)] {
            let header = format!("{} {players} {seed}", meta.name);
            let picks: Vec<String> = (0..120).map(|k| (k % 3).to_string()).collect();
            out.push(format!("{header}\n{}", picks.join("\n")).into_bytes());
            out.push(format!("{header}\npad 0 65136\npad 0 4000\n{}", picks.join("\n")).into_bytes());
        }
    }
    out
}
