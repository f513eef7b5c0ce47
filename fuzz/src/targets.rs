//! The fuzz targets. Each takes arbitrary bytes, feeds them to the code that
//! parses what a peer sends, and asserts what must hold whatever the input.

use std::sync::{Arc, OnceLock};

use claw_games::{check_conservation, registry, ChipParty, DynGame, HandEvent, HandRunner, PlayerInfo};
use claw_protocol::audit::{audit, AuditOptions};
use claw_protocol::handshake::{
    Accepted, Challenge, ChallengeBook, ClientHandshake, Hello, Response, ServerHandshake,
};
use claw_protocol::messages::{
    decode_client, decode_server, ClientMessage, EncodeError, RawJson, ServerMessage,
};
use claw_protocol::transcript::{Transcript, TranscriptBuilder};
use claw_protocol::{shuffle, Chips, Identity, Seat};
use rand_chacha::rand_core::SeedableRng;
use rand_chacha::ChaCha20Rng;
use serde_json::Value;

#[path = "../../protocol/tests/protocol/audit_common/mod.rs"]
#[allow(clippy::all, dead_code)]
pub(crate) mod audit_common;

/// Handshake clock origin (unix ms).
pub(crate) const T0: u64 = 1_750_000_000_000;
/// Room of the handshake target.
pub(crate) const ROOM: &str = "fuzz-room";
/// SDK version the fuzzed player announces.
pub(crate) const SDK: &str = "claw-fuzz/1";
/// Most action lines one game input plays.
const MAX_STEPS: usize = 400;

/// The dealer and player of the handshake target (fixed keys).
pub(crate) struct Parties {
    pub dealer: Arc<Identity>,
    pub player: Arc<Identity>,
}

pub(crate) fn parties() -> &'static Parties {
    static P: OnceLock<Parties> = OnceLock::new();
    P.get_or_init(|| Parties {
        dealer: Arc::new(Identity::from_seed([0xd1; 32])),
        player: Arc::new(Identity::from_seed([0xa1; 32])),
    })
}

/// The honest handshake of the handshake target, step by step (fixed keys,
/// fixed generator): the only messages that may be accepted.
pub(crate) struct Canon {
    pub hello: Hello,
    pub challenge: Challenge,
    pub response: Response,
    pub accepted: Accepted,
}

/// The generator of the handshake target's dealer and player.
fn handshake_rng() -> ChaCha20Rng {
    ChaCha20Rng::from_seed([7; 32])
}

pub(crate) fn canon() -> &'static Canon {
    static C: OnceLock<Canon> = OnceLock::new();
    C.get_or_init(|| {
        let p = parties();
        let mut rng = handshake_rng();
        let (mut client, hello) =
            ClientHandshake::start(p.player.clone(), p.dealer.id(), ROOM, SDK, None, T0, &mut rng);
        let mut server = ServerHandshake::new(p.dealer.clone(), ROOM, room_config());
        let honest = "the honest handshake completes";
        let challenge = server.on_hello(&hello, T0, &mut rng).expect(honest);
        let response = client.on_challenge(&challenge, T0).expect(honest);
        server.on_response(&response, T0, &mut ChallengeBook::new()).expect(honest);
        let accepted = server.accept(None, None, T0, &mut rng).expect(honest);
        Canon { hello, challenge, response, accepted }
    })
}

pub(crate) fn room_config() -> RawJson {
    RawJson::from_string(r#"{"game":"texas-holdem","small_blind":1,"big_blind":2}"#.to_owned())
        .unwrap_or_else(|e| unreachable!("fixed JSON: {e}"))
}

/// The honest hand whose transcript seeds the transcript target.
pub(crate) fn honest_hand() -> &'static audit_common::Hand {
    static H: OnceLock<audit_common::Hand> = OnceLock::new();
    H.get_or_init(|| audit_common::Hand::new(audit_common::Opts::default()))
}

/// Every complete transcript the honest dealer signed for the seeds.
fn honest_transcripts() -> &'static [Transcript] {
    static T: OnceLock<Vec<Transcript>> = OnceLock::new();
    T.get_or_init(|| vec![honest_hand().transcript(), deferred_hand().transcript()])
}

/// The honest hand under the deferred reveal policy (same dealer key).
pub(crate) fn deferred_hand() -> &'static audit_common::Hand {
    static H: OnceLock<audit_common::Hand> = OnceLock::new();
    H.get_or_init(|| {
        audit_common::Hand::new(audit_common::Opts {
            reveal: claw_protocol::messages::RevealPolicy::Deferred,
            ..audit_common::Opts::default()
        })
    })
}

fn games() -> &'static [Arc<dyn DynGame>] {
    static G: OnceLock<Vec<Arc<dyn DynGame>>> = OnceLock::new();
    G.get_or_init(registry::all)
}

/// The header line of the game targets, `GAME PLAYERS …`: the game, its
/// facts, the table size (clamped to the game's) and the remaining fields.
fn table_header<'a>(
    lines: &mut std::str::Lines<'a>,
) -> Option<(&'static Arc<dyn DynGame>, claw_games::GameMeta, usize, std::str::SplitWhitespace<'a>)> {
    let mut head = lines.next().unwrap_or("").split_whitespace();
    let game = head.next().and_then(|n| games().iter().find(|g| g.meta().name == n))?;
    let meta = game.meta();
    let n = head
        .next()
        .and_then(|s| s.parse::<usize>().ok())
        .unwrap_or(usize::from(meta.min_players))
        .clamp(usize::from(meta.min_players), usize::from(meta.max_players));
    Some((game, meta, n, head))
}

/// Frame decoding, both directions (SPEC.md §9): no panic; whatever decodes
/// encodes again (unless the canonical form outgrows the frame limit) and
/// decodes to the same message.
pub fn frames(data: &[u8]) {
    let Ok(frame) = std::str::from_utf8(data) else { return };
    if let Ok(m) = decode_client(frame) {
        match m.encode() {
            Ok(text) => {
                assert_eq!(decode_client(&text).as_ref(), Ok(&m), "client message round trip: {text}")
            }
            Err(EncodeError::Oversize { .. }) => {}
            Err(e) => panic!("a decoded client message does not encode: {e}"),
        }
    }
    if let Ok(m) = decode_server(frame) {
        match m.encode() {
            Ok(text) => {
                assert_eq!(decode_server(&text).as_ref(), Ok(&m), "server message round trip: {text}")
            }
            Err(EncodeError::Oversize { .. }) => {}
            Err(e) => panic!("a decoded server message does not encode: {e}"),
        }
    }
}

/// The handshake state machines of both sides (SPEC.md §8). Input: a line of
/// clock offsets `d1 d2 d3 d4` (ms from T0 of each step), then up to four
/// frames (hello, challenge, response, accepted/rejected); an empty line
/// keeps the honest message. Without the private keys nothing can be
/// accepted but the honest message of each step.
pub fn handshake(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let mut lines = text.split('\n');
    let times: Vec<i64> =
        lines.next().unwrap_or("").split_whitespace().map(|t| t.parse().unwrap_or(0)).collect();
    let at = |i: usize| T0.saturating_add_signed(times.get(i).copied().unwrap_or(0));
    let frames: Vec<Option<&str>> = (0..4).map(|_| lines.next().filter(|l| !l.trim().is_empty())).collect();

    let p = parties();
    let canon = canon();
    let mut rng = handshake_rng();
    let (mut client, honest_hello) =
        ClientHandshake::start(p.player.clone(), p.dealer.id(), ROOM, SDK, None, T0, &mut rng);
    let mut server = ServerHandshake::new(p.dealer.clone(), ROOM, room_config());

    let hello = match frames[0] {
        None => honest_hello,
        Some(f) => match decode_client(f) {
            Ok(ClientMessage::Hello(h)) => h,
            _ => return,
        },
    };
    let challenge = server.on_hello(&hello, at(0), &mut rng).ok();
    if challenge.is_some() {
        assert_eq!(hello, canon.hello, "the dealer accepted a hello the player did not sign");
    }
    // Genuine messages are this run's and the canonical run's (replayed from a seed).

    let ch_in = match (frames[1], &challenge) {
        (None, Some(c)) => c.clone(),
        (None, None) => return,
        (Some(f), _) => match decode_server(f) {
            Ok(ServerMessage::Challenge(c)) => c,
            _ => return,
        },
    };
    let response = client.on_challenge(&ch_in, at(1)).ok();
    if response.is_some() {
        assert!(
            ch_in == canon.challenge || Some(&ch_in) == challenge.as_ref(),
            "the player answered a challenge the dealer did not sign: {ch_in:?}"
        );
    }

    let resp_in = match (frames[2], &response) {
        (None, Some(r)) => r.clone(),
        (None, None) => return,
        (Some(f), _) => match decode_client(f) {
            Ok(ClientMessage::Response(r)) => r,
            _ => return,
        },
    };
    let mut book = ChallengeBook::new();
    let Ok(verified) = server.on_response(&resp_in, at(2), &mut book) else { return };
    assert!(
        (resp_in == canon.response || Some(&resp_in) == response.as_ref())
            && verified.player.signing == canon.hello.player,
        "the dealer verified a response the player did not sign: {resp_in:?}"
    );
    let Some(accepted) = server.accept(None, None, at(2), &mut rng) else {
        panic!("a verified handshake could not be accepted");
    };
    // The same challenge is never accepted twice, on any connection.
    let mut again = ServerHandshake::new(p.dealer.clone(), ROOM, room_config());
    if again.on_hello(&hello, at(0), &mut handshake_rng()).is_ok() {
        assert!(again.on_response(&resp_in, at(2), &mut book).is_err(), "a reused challenge was accepted");
    }
    match frames[3] {
        None => {
            let _ = client.on_accepted(&accepted, at(3));
        }
        Some(f) => match decode_server(f) {
            Ok(ServerMessage::Accepted(a)) => {
                if client.on_accepted(&a, at(3)).is_ok() {
                    assert!(
                        a == canon.accepted || a == accepted,
                        "the player took an acceptance the dealer did not sign: {a:?}"
                    );
                }
            }
            Ok(ServerMessage::Rejected(r)) => {
                let _ = client.on_rejected(&r);
            }
            _ => {}
        },
    }
}

/// Transcript parsing and auditing (SPEC.md §10–11). Input: one mode byte,
/// then JSON lines. Even modes play a network attacker: the transcript is
/// checked against the honest dealer's key, and only a prefix of the honest
/// chain may verify. Odd modes play a cheating dealer: the parsed bodies are
/// re-signed with the dealer's key and audited, which must refuse or pass,
/// never panic. Parsed transcripts round-trip through JSON lines.
pub fn transcript(data: &[u8]) {
    let Some((&mode, rest)) = data.split_first() else { return };
    let Ok(text) = std::str::from_utf8(rest) else { return };
    let Ok(t) = Transcript::from_jsonl(text) else { return };
    if let Ok(out) = t.to_jsonl() {
        let back = Transcript::from_jsonl(&out);
        assert_eq!(back.as_ref(), Ok(&t), "transcript JSON lines round trip");
    }
    let hand = honest_hand();
    let dealer = hand.dealer.id();
    if mode % 2 == 0 {
        if t.verify_chain(&dealer).is_ok() {
            // Equal events up to signatures: an attacker may strip the
            // signature of an event a later one covers (SPEC.md §10.1).
            let prefix_of = |h: &Transcript| {
                t.events.len() <= h.events.len()
                    && t.events.iter().zip(&h.events).all(|(a, b)| a.hash() == b.hash() && a.body == b.body)
            };
            assert!(honest_transcripts().iter().any(prefix_of), "a chain the dealer did not sign verified");
        }
        let _ = audit(&t, &AuditOptions { dealer: Some(dealer), ..AuditOptions::default() });
    } else {
        let mut b = TranscriptBuilder::with_header(t.hand_id, dealer, audit_common::ROOM);
        for e in &t.events {
            if b.append_raw(&hand.dealer, e.body.clone()).is_err() {
                return;
            }
        }
        let resigned = b.into_transcript();
        let opts = AuditOptions {
            dealer: Some(dealer),
            viewer: hand.players.first(),
            my_seed: hand.player_seeds.first().copied(),
            allow_pending_reveal: mode & 2 != 0,
            replayer: None,
            commission: None,
        };
        let _ = audit(&resigned, &opts);
    }
}

/// Each game's action parser on a real hand. Input: a header line
/// `GAME PLAYERS SHUFFLE BALANCE`, then one line per step: a number picks
/// that offered action for the seat to act (to get deep into the hand), and
/// `SEAT JSON` submits any action for any seat. Checked: validate and apply
/// agree, a refused action leaves the state unchanged, an offered action
/// exists whenever someone is to act, and a finished hand conserves chips.
pub fn game_actions(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let mut lines = text.lines();
    let Some((game, meta, n, mut head)) = table_header(&mut lines) else { return };
    let shuffle_seed = head.next().and_then(|s| s.parse::<u8>().ok()).unwrap_or(0);
    let balance = head.next().and_then(|s| s.parse::<u64>().ok()).unwrap_or(1000).min(1_000_000_000_000);
    let settings = Value::Null;
    let players: Vec<PlayerInfo> = (0..n)
        .map(|i| PlayerInfo { id: Identity::from_seed([i as u8 + 1; 32]).id(), balance: Chips(balance) })
        .collect();
    let Ok(deck) = game.create_deck(&settings) else { return };
    let deck = shuffle(&deck, &[shuffle_seed; 32]);
    let Ok((mut runner, mut events)) =
        HandRunner::start(game.as_ref(), &settings, &players, &Value::Null, deck)
    else {
        return;
    };
    for line in lines.take(MAX_STEPS) {
        if runner.hand().is_over() {
            break;
        }
        let (seat, action) = if let Ok(k) = line.trim().parse::<usize>() {
            let Some(seat) = runner.hand().to_act() else {
                panic!("{}: the hand is not over and nobody is to act", meta.name);
            };
            let options = runner.hand().valid_actions();
            assert!(!options.is_empty(), "{}: {seat} is to act but has no valid action", meta.name);
            (seat, options[k % options.len()].action.clone())
        } else if let Some((s, json)) = line.split_once(' ') {
            let (Ok(s), Ok(v)) = (s.parse::<u8>(), serde_json::from_str::<Value>(json)) else { continue };
            (Seat(s), v)
        } else {
            continue;
        };
        let before = runner.hand().state_json();
        let valid = runner.hand().validate(seat, &action);
        match runner.act(seat, &action) {
            Ok(ev) => {
                assert!(
                    valid.is_ok(),
                    "{}: {seat} {action} applied although validate said {valid:?}",
                    meta.name
                );
                events.extend(ev);
            }
            Err(e) => {
                assert!(valid.is_err(), "{}: {seat} {action} validated but failed: {e}", meta.name);
                assert_eq!(
                    runner.hand().state_json(),
                    before,
                    "{}: a refused action changed the state",
                    meta.name
                );
            }
        }
    }
    if runner.hand().is_over() {
        let Some(result) = runner.hand().result() else {
            panic!("{}: a finished hand has no result", meta.name)
        };
        if let Err(e) = check_conservation(&events, &result, n) {
            panic!("{}: chips not conserved: {e}", meta.name);
        }
    }
    // No seat is ever debited more than it holds at that point of the hand.
    let mut held = vec![i128::from(balance); n];
    for e in &events {
        let HandEvent::Chip(m) = e else { continue };
        let delta = m.delta();
        if let ChipParty::Seat(s) = m.party {
            let h = &mut held[s.index()];
            *h += delta;
            assert!(*h >= 0, "{}: {s} debited below zero", meta.name);
        }
    }
}

/// One hand of a registry game through the dealer's engine, its actions
/// signed frames as a player would send them. Input: a header line
/// `GAME PLAYERS SEED`, then one line per try: `K` sends the `K`-th offered
/// action, `pad K N` sends it with `N` spaces of JSON whitespace inside,
/// `SEAT TEXT` sends `TEXT` as the action of that seat's player. Checked:
/// whatever a player sends, an action the engine accepts commits (a commit
/// that fails would void the hand and hand its chips back), a refused one
/// changes nothing, an action over the size limit is refused both where
/// the frame is decoded and by the engine, and the hand always waits for
/// somebody until it ends.
pub fn hand_actions(data: &[u8]) {
    use claw_engine::hand::{Carried, GameSpec, Hand, HandSeat};
    use claw_protocol::messages::{EntropyMode, RevealPolicy, SignedAction, MAX_ACTION_BYTES};
    use claw_protocol::HandId;

    let Ok(text) = std::str::from_utf8(data) else { return };
    let mut lines = text.lines();
    let Some((game, meta, n, mut head)) = table_header(&mut lines) else { return };
    let seed = head.next().and_then(|s| s.parse::<u8>().ok()).unwrap_or(0);
    let Ok(settings) = game.normalize_settings(&Value::Null) else { return };
    let Ok(spec) =
        GameSpec::new("fuzz", Arc::clone(game), settings, EntropyMode::Dealer, RevealPolicy::Full, 1000)
    else {
        return;
    };
    let dealer = Arc::clone(&parties().dealer);
    let players: Vec<Identity> = (0..n).map(|i| Identity::from_seed([i as u8 + 1; 32])).collect();
    let Ok(seats) = players
        .iter()
        .map(|p| {
            dealer.shared_key(&p.encryption_key()).map(|key| HandSeat {
                id: p.id(),
                encryption_key: p.encryption_key(),
                balance: Chips(100_000),
                commission: Chips::ZERO,
                key,
                house_ai: false,
            })
        })
        .collect::<Result<Vec<_>, _>>()
    else {
        return;
    };
    let mut rng = ChaCha20Rng::from_seed([seed; 32]);
    let hand_id = HandId::random(&mut rng);
    let Ok((mut hand, _)) =
        Hand::prepare(Arc::new(spec), dealer, seats, Carried::default(), 0, hand_id, &mut rng)
    else {
        return;
    };
    if hand.start(&mut rng).is_err() {
        return;
    }
    let mut c =
        hand.commit(&mut rng, 0).unwrap_or_else(|e| panic!("{}: the start did not commit: {e}", meta.name));
    let mut next_seq = vec![0u32; n];
    for line in lines.take(MAX_STEPS) {
        if c.end.is_some() {
            break;
        }
        let Some(turn) = c.your_turn.clone() else {
            panic!("{}: the hand goes on and nobody is to act", meta.name)
        };
        let offered = |k: usize| -> String {
            let options = &turn.actions;
            assert!(!options.is_empty(), "{}: {} is to act and has no action", meta.name, turn.seat);
            serde_json::to_string(&options[k % options.len()].action).unwrap_or_default()
        };
        let words: Vec<&str> = line.trim().splitn(3, ' ').collect();
        let (seat, text) = match words.as_slice() {
            [k] if k.parse::<usize>().is_ok() => (turn.seat.index(), offered(k.parse().unwrap_or(0))),
            ["pad", k, pad] => {
                let (Ok(k), Ok(pad)) = (k.parse::<usize>(), pad.parse::<usize>()) else { continue };
                let honest = offered(k);
                let Some(body) = honest.strip_suffix('}') else { continue };
                (turn.seat.index(), format!("{body}{}}}", " ".repeat(pad.min(200_000))))
            }
            [s, rest @ ..] if !rest.is_empty() => {
                let Ok(s) = s.parse::<usize>() else { continue };
                (s % n, rest.join(" "))
            }
            _ => continue,
        };
        let Ok(raw) = RawJson::from_string(text) else { continue };
        let too_long = raw.as_str().len() > MAX_ACTION_BYTES;
        let seq = if seat == turn.seat.index() { turn.seq } else { next_seq[seat] };
        let signed = SignedAction::sign(&players[seat], hand_id, seq, raw);
        let frame = ClientMessage::Action(signed.clone()).encode();
        let before = hand.transcript().events.len();
        match hand.act(&players[seat].id(), signed) {
            Ok(_) => {
                next_seq[seat] = seq.saturating_add(1);
                c = hand.commit(&mut rng, 0).unwrap_or_else(|e| {
                    panic!(
                        "{}: an accepted action could not be recorded (the hand would be voided): {e}",
                        meta.name
                    )
                });
                assert!(!too_long, "{}: the engine took an action over the size limit", meta.name);
            }
            Err(_) => {
                assert_eq!(
                    hand.transcript().events.len(),
                    before,
                    "{}: a refused action was recorded",
                    meta.name
                );
                assert_eq!(hand.to_act(), Some(turn.seat), "{}: a refused action moved the turn", meta.name);
            }
        }
        // Where the frame is read: an oversize action never reaches the hand.
        if let Ok(frame) = frame {
            let decoded = decode_client(&frame);
            assert_eq!(too_long, decoded.is_err(), "{}: the frame check disagrees with the limit", meta.name);
        }
    }
}
