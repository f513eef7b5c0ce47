//! Wire messages: every message round-trips, `type` names match, signed JSON
//! is kept byte for byte, and bad frames fail with the right typed error.

use claw_protocol::messages::*;
use claw_protocol::transcript::{EventEnvelope, GENESIS_PREV};
use claw_protocol::{
    Accepted, BoxNonce, CardId, CardOpening, Challenge, ChallengeBook, Chips, ClientHandshake, Digest,
    EncryptionKey, HandId, Hello, Identity, PlayerId, RejectReason, Rejected, Response, Salt, SealedCard,
    Seat, Seed, ServerHandshake, Signature,
};
use proptest::prelude::*;
use serde_json::{json, Value};
use std::sync::Arc;

fn raw(s: &str) -> RawJson {
    RawJson::from_string(s.to_owned()).unwrap()
}

fn hand() -> HandId {
    HandId([7; 16])
}

fn pid(b: u8) -> PlayerId {
    PlayerId::from_bytes([b; 32])
}

fn opening(p: u16) -> CardOpening {
    CardOpening { position: p, card: CardId::from_code(p).unwrap(), salt: Salt([p as u8; 32]) }
}

fn sealed() -> SealedCard {
    SealedCard { nonce: BoxNonce([3; 24]), ciphertext: vec![9; 80] }
}

/// A real handshake run: hello, challenge, response, accepted, rejected.
fn handshake() -> (Hello, Challenge, Response, Accepted, Rejected) {
    use rand_chacha::rand_core::SeedableRng;
    let mut rng = rand_chacha::ChaCha20Rng::from_seed([9; 32]);
    let dealer = Arc::new(Identity::from_seed([2; 32]));
    let player = Arc::new(Identity::from_seed([1; 32]));
    let now = 1_700_000_000_000;
    let config = RawJson::from_value(&room_config()).unwrap();
    let mut server = ServerHandshake::new(dealer.clone(), "r1", config);
    let (mut client, hello) = ClientHandshake::start(player, dealer.id(), "r1", "sdk/1", None, now, &mut rng);
    let challenge = server.on_hello(&hello, now, &mut rng).unwrap();
    let response = client.on_challenge(&challenge, now).unwrap();
    let mut book = ChallengeBook::new();
    server.on_response(&response, now, &mut book).unwrap();
    let accepted = server.accept(Some(Seat(1)), None, now, &mut rng).unwrap();
    client.on_accepted(&accepted, now).unwrap();
    let rejected = ServerHandshake::new(dealer, "r1", raw("{}")).reject(RejectReason::VersionMismatch, now);
    (hello, challenge, response, accepted, rejected)
}

fn client_messages() -> Vec<ClientMessage> {
    let id = Identity::from_seed([1; 32]);
    let (hello, _, response, _, _) = handshake();
    vec![
        ClientMessage::Hello(hello),
        ClientMessage::Response(response),
        ClientMessage::JoinRequest(JoinRequest {
            sdk_version: "claw-player/0.1.0".into(),
            name: Some("ann".into()),
            seat: Some(Seat(2)),
            buy_in: Some(Chips(500)),
        }),
        ClientMessage::JoinRequest(JoinRequest {
            sdk_version: "x".into(),
            name: None,
            seat: None,
            buy_in: None,
        }),
        ClientMessage::PlayerSeed(PlayerSeed::sign(&id, hand(), Seed([4; 32]))),
        ClientMessage::PlayerSeed(PlayerSeed {
            from: Some(id.id()),
            ..PlayerSeed::sign(&id, hand(), Seed([4; 32]))
        }),
        ClientMessage::Action(SignedAction::sign(&id, hand(), 3, raw(r#"{"type":"raise","amount":40}"#))),
        ClientMessage::Query(Query::new(QueryType::MyBalance, "n1")),
        ClientMessage::Query(Query::new(QueryType::RoomState, "n2")),
        ClientMessage::Query(Query::new(QueryType::TableState, "n3")),
        ClientMessage::Query(Query::new(QueryType::RoomConfig, "n4")),
        ClientMessage::Query(Query::new(QueryType::MyStatus, "n5")),
        ClientMessage::SitOut,
        ClientMessage::SitIn,
        ClientMessage::Leave,
    ]
}

fn room_config() -> RoomConfig {
    RoomConfig {
        room_id: "r1".into(),
        game: "texas-holdem".into(),
        settings: json!({"small_blind": 1}),
        buy_in: Chips(1000),
        min_bet: Chips(2),
        max_bet: Chips(0),
        commission: Chips(1),
        min_players: 2,
        max_players: 6,
        entropy: EntropyMode::Joint,
        reveal: RevealPolicy::Full,
        action_timeout_ms: 30_000,
        between_hands_ms: 10_000,
        seed_timeout_ms: 2_000,
        reveal_delay_ms: Some(60_000),
        deal: Default::default(),
    }
}

fn table_player() -> TablePlayer {
    TablePlayer {
        id: pid(1),
        name: Some("bob".into()),
        seat: Some(Seat(0)),
        status: PlayerStatus::Playing,
        chips: Chips(9),
        until_ms: Some(1_700_000_060_000),
        house_ai: false,
    }
}

fn event_bodies() -> Vec<EventBody> {
    let id = Identity::from_seed([1; 32]);
    let settings = raw(r#"{"small_blind":1}"#);
    vec![
        EventBody::HandPrepare(HandPrepare {
            hand_number: 4,
            seed_commitment: Digest([1; 32]),
            entropy: EntropyMode::Joint,
            players: vec![pid(1), pid(2)],
            seed_timeout_ms: 2000,
        }),
        EventBody::GameStart(GameStart {
            game: "texas-holdem".into(),
            game_version: "1".into(),
            config_hash: config_hash("texas-holdem", "1", &settings),
            settings,
            room_config: Some(RawJson::from_value(&room_config()).unwrap()),
            players: vec![HandPlayer {
                id: pid(1),
                seat: Seat(0),
                balance: Chips(100),
                encryption_key: EncryptionKey([5; 32]),
                commission: Chips::ZERO,
                house_ai: false,
            }],
            memory: json!({"button": 1}),
            previous: Some(PreviousHand { hand_id: HandId([8; 16]), hand_number: 3 }),
            dealer_encryption_key: EncryptionKey([6; 32]),
            deck_mode: DeckMode::Scripted,
            entropy: EntropyMode::Dealer,
            reveal: RevealPolicy::Deferred,
            player_seeds: vec![SeatSeed { seat: Seat(0), seed: Seed([2; 32]), sig: Signature([3; 64]) }],
            deck: CardId::deck(1, true),
            leaves: vec![Digest([8; 32]); 54],
            root: Digest([9; 32]),
        }),
        EventBody::PhaseDeal(DealEvent {
            phase: "hole".into(),
            cards: vec![
                DealtCardMsg {
                    position: 0,
                    target: DealTo::Player(Seat(1)),
                    face: CardFace::Down,
                    opening: None,
                    sealed: Some(sealed()),
                },
                DealtCardMsg {
                    position: 1,
                    target: DealTo::Community,
                    face: CardFace::Up,
                    opening: Some(opening(1)),
                    sealed: None,
                },
                DealtCardMsg {
                    position: 2,
                    target: DealTo::Burn,
                    face: CardFace::Down,
                    opening: None,
                    sealed: None,
                },
                DealtCardMsg {
                    position: 3,
                    target: DealTo::House,
                    face: CardFace::Up,
                    opening: Some(opening(3)),
                    sealed: None,
                },
            ],
        }),
        EventBody::NewCard(DealEvent { phase: "hit".into(), cards: vec![] }),
        EventBody::Reveal(Reveal { openings: vec![opening(2)] }),
        EventBody::CardTransfer(CardTransfer {
            position: 3,
            from: Seat(0),
            to: Seat(2),
            face: CardFace::Down,
            opening: None,
            sealed: Some(sealed()),
        }),
        EventBody::CardTransfer(CardTransfer {
            position: 4,
            from: Seat(1),
            to: Seat(3),
            face: CardFace::Up,
            opening: Some(opening(4)),
            sealed: None,
        }),
        EventBody::Chips(ChipsMoved {
            moves: vec![
                ChipMove {
                    op: ChipOp::Debit,
                    party: ChipParty::Seat(Seat(0)),
                    amount: Chips(5),
                    reason: "bet".into(),
                },
                ChipMove {
                    op: ChipOp::Credit,
                    party: ChipParty::House,
                    amount: Chips(5),
                    reason: "pot".into(),
                },
            ],
        }),
        EventBody::ActionResult(ActionResult::from_signed(
            Seat(0),
            &SignedAction::sign(&id, hand(), 0, raw(r#"{ "type" : "check" }"#)),
            json!({"pot": 3}),
        )),
        EventBody::TimeoutAction(TimeoutAction {
            seat: Seat(1),
            action: json!({"type": "fold"}),
            reason: claw_protocol::messages::TimeoutReason::Timeout,
            public_state: Value::Null.into(),
        }),
        EventBody::GameEnd(GameEnd {
            result: HandResult {
                winners: vec![Seat(0)],
                net: vec![3, -3],
                house_net: 0,
                rake: Chips(0),
                summary: "x".into(),
            },
            memory_after: json!({"button": 0}),
            dealer_seed: Some(Seed([1; 32])),
            openings: vec![opening(0), opening(1)],
        }),
        EventBody::GameEnd(GameEnd {
            result: HandResult {
                winners: vec![],
                net: vec![0],
                house_net: 0,
                rake: Chips(0),
                summary: String::new(),
            },
            memory_after: Value::Null,
            dealer_seed: None,
            openings: vec![],
        }),
        EventBody::AuditReveal(AuditReveal { dealer_seed: Seed([1; 32]), openings: vec![opening(5)] }),
    ]
}

fn server_messages() -> Vec<ServerMessage> {
    let dealer = Identity::from_seed([2; 32]);
    let (_, challenge, _, accepted, rejected) = handshake();
    let mut msgs = vec![
        ServerMessage::Challenge(challenge),
        ServerMessage::Accepted(accepted),
        ServerMessage::Rejected(rejected),
        ServerMessage::JoinResponse(JoinResponse {
            accepted: true,
            reason: None,
            message: None,
            seat: Some(Seat(1)),
            room: Some(room_config()),
            players: vec![table_player()],
        }),
        ServerMessage::JoinResponse(JoinResponse {
            accepted: false,
            reason: Some(JoinRejectReason::RoomFull),
            message: Some("full".into()),
            seat: None,
            room: None,
            players: vec![],
        }),
        ServerMessage::BankerQueue(BankerQueue { hand_id: Some(hand()), players: vec![pid(1), pid(2)] }),
        ServerMessage::BankerQueue(BankerQueue { hand_id: None, players: vec![] }),
        ServerMessage::YourTurn(YourTurn {
            hand_id: hand(),
            seat: Seat(1),
            seq: 2,
            actions: vec![
                ActionOption {
                    action: json!({"type": "call"}),
                    cost: Chips(2),
                    affordable: true,
                    range: None,
                },
                ActionOption {
                    action: json!({"type": "raise", "amount": 4}),
                    cost: Chips(4),
                    affordable: true,
                    range: Some((Chips(4), Chips(100))),
                },
            ],
            balance: Chips(100),
            deadline_ms: 1_700_000_000_000,
            phase: Some("flop".into()),
            warning: None,
        }),
        ServerMessage::ActionRejected(ActionRejected {
            hand_id: hand(),
            seq: 2,
            code: ActionRejectCode::NotYourTurn,
            reason: "wait".into(),
        }),
        ServerMessage::Kicked(Kicked { code: KickReason::InsufficientBalance, reason: "broke".into() }),
        ServerMessage::QueryResult(QueryResult {
            nonce: "a".into(),
            data: QueryData::MyBalance { balance: Chips(7) },
        }),
        ServerMessage::QueryResult(QueryResult {
            nonce: "b".into(),
            data: QueryData::RoomState {
                phase: RoomPhase::BetweenHands,
                hands_played: 3,
                players: vec![table_player()],
                acting: Some(claw_protocol::messages::Acting {
                    player: pid(2),
                    seat: Seat(1),
                    deadline_ms: 1_700_000_030_000,
                }),
            },
        }),
        ServerMessage::QueryResult(QueryResult {
            nonce: "c".into(),
            data: QueryData::TableState {
                hand_id: Some(hand()),
                public_state: Some(json!({"pot": 1}).into()),
            },
        }),
        ServerMessage::QueryResult(QueryResult {
            nonce: "c2".into(),
            data: QueryData::TableState { hand_id: None, public_state: None },
        }),
        ServerMessage::QueryResult(QueryResult {
            nonce: "d".into(),
            data: QueryData::RoomConfig { config: room_config() },
        }),
        ServerMessage::QueryResult(QueryResult {
            nonce: "e".into(),
            data: QueryData::MyStatus {
                seat: None,
                status: PlayerStatus::SitOut,
                balance: Chips(1),
                credit_score: -2,
                held: Chips(3),
            },
        }),
        ServerMessage::QueryError(QueryError {
            nonce: "f".into(),
            error: QueryErrorCode::RateLimited,
            message: "slow".into(),
        }),
        ServerMessage::Error(ErrorMsg { code: ErrorCode::Malformed, message: "bad".into() }),
    ];
    for (i, b) in event_bodies().iter().enumerate() {
        msgs.push(ServerMessage::Event(EventEnvelope::sign(
            &dealer,
            hand(),
            i as u64,
            GENESIS_PREV,
            b.to_raw().unwrap(),
        )));
    }
    msgs
}

fn type_of(frame: &str) -> String {
    serde_json::from_str::<Value>(frame).unwrap()["type"].as_str().unwrap().to_owned()
}

#[test]
fn every_client_message_round_trips() {
    for m in client_messages() {
        let frame = m.encode().unwrap();
        assert_eq!(type_of(&frame), m.type_name(), "{frame}");
        let back = decode_client(&frame).unwrap_or_else(|e| panic!("{frame}: {e}"));
        assert_eq!(back, m);
        assert_eq!(back.encode().unwrap(), frame);
    }
}

#[test]
fn every_server_message_round_trips() {
    for m in server_messages() {
        let frame = m.encode().unwrap();
        assert_eq!(type_of(&frame), m.type_name(), "{frame}");
        let back = decode_server(&frame).unwrap_or_else(|e| panic!("{frame}: {e}"));
        assert_eq!(back, m);
        assert_eq!(back.encode().unwrap(), frame);
    }
}

#[test]
fn every_event_body_round_trips_and_names_its_type() {
    let bodies = event_bodies();
    let mut names: Vec<&str> = bodies.iter().map(EventBody::type_name).collect();
    names.dedup();
    assert_eq!(
        names,
        [
            "hand-prepare",
            "game-start",
            "phase-deal",
            "new-card",
            "reveal",
            "card-transfer",
            "chips",
            "action-result",
            "timeout-action",
            "game-end",
            "audit-reveal"
        ]
    );
    for b in bodies {
        let raw = b.to_raw().unwrap();
        assert_eq!(type_of(raw.as_str()), b.type_name());
        assert_eq!(EventBody::decode(raw.as_str()).unwrap(), b);
    }
}

#[test]
fn query_result_is_flat_with_query_type() {
    let m = ServerMessage::QueryResult(QueryResult {
        nonce: "n".into(),
        data: QueryData::MyBalance { balance: Chips(7) },
    });
    let v: Value = serde_json::from_str(&m.encode().unwrap()).unwrap();
    assert_eq!(v, json!({"type": "query-result", "nonce": "n", "query_type": "my-balance", "balance": 7}));
}

#[test]
fn deal_target_json_matches_the_games_crate_shape() {
    assert_eq!(serde_json::to_value(DealTo::Player(Seat(2))).unwrap(), json!({"to": "player", "seat": 2}));
    assert_eq!(serde_json::to_value(DealTo::Community).unwrap(), json!({"to": "community"}));
    assert_eq!(serde_json::to_value(ChipParty::Seat(Seat(1))).unwrap(), json!({"kind": "seat", "seat": 1}));
    assert_eq!(serde_json::to_value(ChipParty::House).unwrap(), json!({"kind": "house"}));
    assert_eq!(serde_json::to_value(CardFace::Down).unwrap(), json!("down"));
}

#[test]
fn signed_action_bytes_survive_decode_and_encode_exactly() {
    let id = Identity::from_seed([1; 32]);
    // Odd spacing and key order: must never be normalised.
    let text = r#"{ "amount" :40,   "type":"raise" }"#;
    let a = SignedAction::sign(&id, hand(), 9, raw(text));
    let frame = ClientMessage::Action(a.clone()).encode().unwrap();
    assert!(frame.contains(text), "{frame}");
    let ClientMessage::Action(back) = decode_client(&frame).unwrap() else { panic!() };
    assert_eq!(back.action.as_str(), text);
    back.verify(&id.id()).unwrap();

    // Copied into an action-result inside a signed envelope, still exact.
    let body = EventBody::ActionResult(ActionResult::from_signed(Seat(0), &back, json!({})));
    let env = EventEnvelope::sign(&id, hand(), 0, GENESIS_PREV, body.to_raw().unwrap());
    let frame = ServerMessage::Event(env).encode().unwrap();
    let ServerMessage::Event(env) = decode_server(&frame).unwrap() else { panic!() };
    let EventBody::ActionResult(r) = env.decode_body().unwrap() else { panic!() };
    assert_eq!(r.action.as_str(), text);
    r.signed_action(hand()).verify(&id.id()).unwrap();

    // The same action re-serialised (different bytes) no longer verifies.
    let normalised = RawJson::from_value(&r.action.to_value().unwrap()).unwrap();
    assert_ne!(normalised.as_str(), text);
    let forged = SignedAction { action: normalised, ..back };
    assert!(forged.verify(&id.id()).is_err());
}

#[test]
fn action_and_seed_signatures_bind_every_field() {
    let id = Identity::from_seed([1; 32]);
    let other = Identity::from_seed([2; 32]);
    let a = SignedAction::sign(&id, hand(), 1, raw(r#"{"type":"check"}"#));
    a.verify(&id.id()).unwrap();
    assert!(a.verify(&other.id()).is_err());
    assert!(SignedAction { seq: 2, ..a.clone() }.verify(&id.id()).is_err());
    assert!(SignedAction { hand_id: HandId([8; 16]), ..a.clone() }.verify(&id.id()).is_err());
    assert!(SignedAction { action: raw(r#"{"type":"fold"}"#), ..a.clone() }.verify(&id.id()).is_err());

    let s = PlayerSeed::sign(&id, hand(), Seed([4; 32]));
    s.verify(&id.id()).unwrap();
    assert!(s.verify(&other.id()).is_err());
    assert!(PlayerSeed { seed: Seed([5; 32]), ..s.clone() }.verify(&id.id()).is_err());
    assert!(PlayerSeed { hand_id: HandId([8; 16]), ..s.clone() }.verify(&id.id()).is_err());
    // A `from` naming someone else is refused even with a good signature.
    assert!(PlayerSeed { from: Some(other.id()), ..s.clone() }.verify(&id.id()).is_err());
    PlayerSeed { from: Some(id.id()), ..s.clone() }.verify(&id.id()).unwrap();
    // An action signature is not a seed signature (domain separation).
    let forged = PlayerSeed { sig: a.sig, ..s };
    assert!(forged.verify(&id.id()).is_err());
}

#[test]
fn signing_layouts_are_as_specified() {
    let h = HandId([0xaa; 16]);
    let b = player_seed_signing_body(&h, &Seed([0xbb; 32]));
    assert_eq!(&b[..16], &[0xaa; 16]);
    assert_eq!(&b[16..], &[0xbb; 32]);
    let act = raw(r#"{"type":"check"}"#);
    let b = action_signing_body(&h, 0x01020304, &act);
    assert_eq!(&b[..16], &[0xaa; 16]);
    assert_eq!(&b[16..20], &[1, 2, 3, 4]);
    assert_eq!(&b[20..], &claw_protocol::sha256(&[br#"{"type":"check"}"#]).0);
}

#[test]
fn oversize_frames_are_refused_before_parsing() {
    // Not even JSON: the size check comes first.
    let big = "x".repeat(MAX_FRAME_BYTES + 1);
    assert_eq!(
        decode_client(&big),
        Err(DecodeError::Oversize { len: MAX_FRAME_BYTES + 1, max: MAX_FRAME_BYTES })
    );
    assert!(matches!(decode_server(&big), Err(DecodeError::Oversize { .. })));
    assert!(matches!(EventBody::decode(&big), Err(DecodeError::Oversize { .. })));
    // A valid message padded just over the limit.
    let pad = "a".repeat(MAX_FRAME_BYTES);
    let frame = format!(r#"{{"type":"leave","pad":"{pad}"}}"#);
    assert!(matches!(decode_client(&frame), Err(DecodeError::Oversize { .. })));
    // Just under the limit is fine.
    let pad = "a".repeat(MAX_FRAME_BYTES - 40);
    let frame = format!(r#"{{"type":"leave","pad":"{pad}"}}"#);
    assert!(frame.len() <= MAX_FRAME_BYTES);
    assert_eq!(decode_client(&frame), Ok(ClientMessage::Leave));
}

#[test]
fn encoding_refuses_oversize_frames() {
    let m =
        ServerMessage::Error(ErrorMsg { code: ErrorCode::Internal, message: "x".repeat(MAX_FRAME_BYTES) });
    assert!(matches!(m.encode(), Err(EncodeError::Oversize { .. })));
}

#[test]
fn malformed_frames_are_named() {
    let cases = [
        "",
        "not json",
        "[1,2]",
        "42",
        "{}",
        r#"{"type": 5}"#,
        r#"{"type":"leave""#,
        r#"{"type":"action","hand_id":"07","seq":0,"action":{},"sig":"00"}"#,
        r#"{"type":"query","query_type":"my-balance"}"#,
        r#"{"type":"query","query_type":"my-balance","nonce":""}"#,
        r#"{"type":"player-seed","hand_id":"0707070707070707070707070707070707","seed":"00","sig":"00"}"#,
        r#"{"type":"join-request","seat":"x"}"#,
        r#"{"type":"type","type":"leave"}"#,
    ];
    for c in cases {
        match decode_client(c) {
            Err(DecodeError::Malformed { .. }) => {}
            other => panic!("{c:?}: {other:?}"),
        }
    }
    let long_nonce = format!(r#"{{"type":"query","query_type":"my-balance","nonce":"{}"}}"#, "n".repeat(65));
    assert!(matches!(decode_client(&long_nonce), Err(DecodeError::Malformed { .. })));
    let long_name = format!(r#"{{"type":"join-request","sdk_version":"{}"}}"#, "v".repeat(300));
    assert!(matches!(decode_client(&long_name), Err(DecodeError::Malformed { .. })));
    // Uppercase hex is not canonical.
    let h = "AB".repeat(16);
    let f =
        format!(r#"{{"type":"action","hand_id":"{h}","seq":0,"action":{{}},"sig":"{}"}}"#, "00".repeat(64));
    assert!(matches!(decode_client(&f), Err(DecodeError::Malformed { .. })));
    assert!(matches!(decode_server("{\"type\":\"event\"}"), Err(DecodeError::Malformed { .. })));
}

#[test]
fn unknown_types_are_named() {
    assert_eq!(
        decode_client(r#"{"type":"teleport"}"#),
        Err(DecodeError::UnknownType { type_name: "teleport".into() })
    );
    // Messages of the other direction are unknown here.
    assert!(matches!(decode_client(r#"{"type":"your-turn"}"#), Err(DecodeError::UnknownType { .. })));
    assert!(matches!(decode_server(r#"{"type":"action"}"#), Err(DecodeError::UnknownType { .. })));
    assert!(matches!(EventBody::decode(r#"{"type":"event"}"#), Err(DecodeError::UnknownType { .. })));
    // The echoed name is bounded.
    let long = format!(r#"{{"type":"{}"}}"#, "z".repeat(5000));
    match decode_client(&long) {
        Err(DecodeError::UnknownType { type_name }) => assert!(type_name.len() < 100),
        other => panic!("{other:?}"),
    }
    let e = decode_client("{}").unwrap_err();
    assert_eq!(ErrorMsg::from_decode(&e).code, ErrorCode::Malformed);
}

#[test]
fn a_game_start_written_before_its_room_configuration_and_previous_hand_reads_unchanged() {
    // The members are omitted when absent, so an older transcript's
    // `game-start` decodes and hashes as it did.
    let mut body = event_bodies().swap_remove(1);
    let EventBody::GameStart(g) = &mut body else { panic!("game-start") };
    (g.room_config, g.previous) = (None, None);
    let text = body.to_raw().unwrap();
    assert!(!text.as_str().contains("room_config") && !text.as_str().contains("previous"), "{text}");
    assert_eq!(EventBody::decode(text.as_str()).unwrap(), body);
}

#[test]
fn a_hand_records_events_are_event_frames_and_read_without_their_type() {
    // SPEC.md §9.4: each event of a `HandRecord` (the `hand` query's answer
    // and the HTTP archive's) is its §10.1 frame, `"type":"event"` included,
    // exactly the transcript line; a record written before that still reads.
    let dealer = Identity::from_seed([2; 32]);
    let e0 = EventEnvelope::sign(&dealer, hand(), 0, GENESIS_PREV, raw(r#"{"type":"x"}"#));
    let e1 = EventEnvelope::unsigned(hand(), 1, e0.hash(), raw(r#"{"type":"y"}"#));
    let record = HandRecord {
        room_id: "r".into(),
        hand_number: 3,
        hand_id: hand(),
        reveal: RevealState::Pending,
        events: vec![e0.clone(), e1.clone()],
        next_seq: None,
    };
    let text = serde_json::to_value(&record).unwrap();
    for (v, e) in text["events"].as_array().unwrap().iter().zip([&e0, &e1]) {
        assert_eq!(v["type"], "event", "{v}");
        let line: Value = serde_json::from_str(&e.encode().unwrap()).unwrap();
        assert_eq!(*v, line, "the record's event is the transcript line");
    }
    assert_eq!(serde_json::from_value::<HandRecord>(text.clone()).unwrap(), record);
    let mut old = text;
    for v in old["events"].as_array_mut().unwrap() {
        v.as_object_mut().unwrap().remove("type");
    }
    assert_eq!(serde_json::from_value::<HandRecord>(old).unwrap(), record);
    // A page counts each event as the frame it is written as.
    let one = serde_json::to_string(&record.page(1)).unwrap();
    assert!(one.contains(r#""events":[{"type":"event","hand_id""#), "{one}");
}

#[test]
fn unknown_query_type_still_decodes_so_the_nonce_can_be_answered() {
    let m = decode_client(r#"{"type":"query","query_type":"deck-order","nonce":"q"}"#).unwrap();
    assert_eq!(m, ClientMessage::Query(Query::new(QueryType::Unknown, "q")));
}

#[test]
fn unknown_fields_are_ignored_for_forward_compatibility() {
    let m = decode_client(r#"{"type":"join-request"}"#).unwrap();
    assert_eq!(
        m,
        ClientMessage::JoinRequest(JoinRequest {
            sdk_version: String::new(),
            name: None,
            seat: None,
            buy_in: None
        })
    );
    let m = decode_client(r#"{"type":"sit-out","since":"v2"}"#).unwrap();
    assert_eq!(m, ClientMessage::SitOut);
    let f = r#"{"type":"join-request","sdk_version":"x","extra":[1,2]}"#;
    assert!(matches!(decode_client(f), Ok(ClientMessage::JoinRequest(_))));
}

#[test]
fn raw_json_keeps_text_and_compares_by_text() {
    let a = RawJson::from_string("  {\"a\": 1}  ".into()).unwrap();
    assert_eq!(a.as_str(), "{\"a\": 1}");
    assert_ne!(a, raw("{\"a\":1}"));
    assert!(RawJson::from_string("{".into()).is_err());
    assert_eq!(a.digest(), claw_protocol::sha256(&[b"{\"a\": 1}"]));
    assert_eq!(PROTOCOL_VERSION, "claw/1");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn decoding_arbitrary_text_never_panics(s in ".{0,300}") {
        let _ = decode_client(&s);
        let _ = decode_server(&s);
        let _ = EventBody::decode(&s);
    }

    #[test]
    fn decoding_mutated_frames_never_panics(idx in any::<prop::sample::Index>(), byte in 0x20u8..0x7f) {
        for m in server_messages() {
            let mut f = m.encode().unwrap().into_bytes();
            let i = idx.index(f.len());
            f[i] = byte;
            if let Ok(s) = String::from_utf8(f) {
                let _ = decode_server(&s);
            }
        }
    }
}
