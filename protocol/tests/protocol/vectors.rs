//! SPEC.md §13 test vectors: computed here from fixed inputs and compared,
//! name by name, with the `name = value` lines of SPEC.md §13. A second
//! implementation that reproduces these values interoperates with this one.
//!
//! `CLAW_PRINT_VECTORS=1 cargo test -p claw-protocol --test protocol vectors:: -- --nocapture`
//! prints the computed lines (to update SPEC.md after a deliberate change).

use std::collections::BTreeMap;

use claw_protocol::commit::{leaf_preimage, MerkleTree};
use claw_protocol::handshake::{
    accepted_body, challenge_body, hello_body, response_body, Accepted, Challenge, Hello, Response,
};
use claw_protocol::messages::{
    expected_start_balance, CardFace, CardTransfer, EntropyMode, EventBody, HandPlayer, PreviousHand,
    RawJson, RevealPolicy, RoomConfig,
};
use claw_protocol::shuffle::{seed_commitment, shuffle, shuffle_seed};
use claw_protocol::sign::signed_message;
use claw_protocol::transcript::{EventEnvelope, GENESIS_PREV};
use claw_protocol::{
    leaf, sha256, CardId, CardOpening, Chips, Digest, HandId, Identity, Nonce, Purpose, Salt, Seat, Seed,
    Signature,
};
use rand_chacha::rand_core::{RngCore as _, SeedableRng as _};
use rand_chacha::ChaCha20Rng;

fn hx(b: impl AsRef<[u8]>) -> String {
    hex::encode(b)
}

fn computed() -> Vec<(String, String)> {
    let mut v: Vec<(String, String)> = Vec::new();
    let mut put = |k: &str, val: String| v.push((k.to_owned(), val));

    // §3 identities.
    let dealer = Identity::from_seed([0x01; 32]);
    let player = Identity::from_seed([0x02; 32]);
    put("identity.dealer.ed25519_secret", hx(sha256(&[b"claw/v1/identity/ed25519", &[0x01; 32]]).0));
    put("identity.dealer.x25519_secret", hx(sha256(&[b"claw/v1/identity/x25519", &[0x01; 32]]).0));
    put("identity.dealer.player_id", dealer.id().to_string());
    put("identity.dealer.encryption_key", dealer.encryption_key().to_string());
    put("identity.player.player_id", player.id().to_string());
    put("identity.player.encryption_key", player.encryption_key().to_string());

    // §4 signatures.
    let hand = HandId(core::array::from_fn(|i| i as u8));
    put("sign.event.message", hx(signed_message(Purpose::Event, &hand.0)));
    put("sign.event.sig", dealer.sign(Purpose::Event, &hand.0).to_string());
    put("sign.action.sig", player.sign(Purpose::Action, b"fold").to_string());

    // §5 leaves and Merkle trees.
    let as0: CardId = "As".parse().unwrap();
    let as1: CardId = "As#1".parse().unwrap();
    put("commit.leaf0.preimage", hx(leaf_preimage(&hand, 0, as0, &Salt([0x11; 32]))));
    put("commit.leaf0", leaf(&hand, 0, as0, &Salt([0x11; 32])).to_string());
    put("commit.leaf1", leaf(&hand, 1, as1, &Salt([0x22; 32])).to_string());
    let small: Vec<Digest> = (0u8..5).map(|i| sha256(&[&[i]])).collect();
    put("merkle.root1", MerkleTree::new(&small[..1]).root().to_string());
    put("merkle.root2", MerkleTree::new(&small[..2]).root().to_string());
    put("merkle.root3", MerkleTree::new(&small[..3]).root().to_string());
    let t5 = MerkleTree::new(&small);
    put("merkle.root5", t5.root().to_string());
    let proof: Vec<String> = t5.proof(4).unwrap().siblings.iter().map(|d| d.to_string()).collect();
    put("merkle.proof5.index4", proof.join(","));
    let proof: Vec<String> = t5.proof(1).unwrap().siblings.iter().map(|d| d.to_string()).collect();
    put("merkle.proof5.index1", proof.join(","));

    // §7 shuffle.
    let dealer_seed = Seed([0x0d; 32]);
    let seeds = [Some(Seed([0xa0; 32])), None, Some(Seed([0xa2; 32]))];
    put("shuffle.seed_commitment", seed_commitment(&hand, &dealer_seed).to_string());
    let ss = shuffle_seed(&dealer_seed, &seeds);
    put("shuffle.shuffle_seed", hx(ss));
    let mut rng = ChaCha20Rng::from_seed(ss);
    let words: Vec<String> = (0..4).map(|_| rng.next_u32().to_string()).collect();
    put("shuffle.chacha20.first_u32", words.join(","));
    let order = shuffle(&CardId::deck(1, false), &ss);
    put("shuffle.order52", order.iter().map(|c| c.to_string()).collect::<Vec<_>>().join(","));
    let order108 = shuffle(&CardId::deck(2, true), &ss);
    put(
        "shuffle.order108.first12",
        order108[..12].iter().map(|c| c.to_string()).collect::<Vec<_>>().join(","),
    );
    let leaves: Vec<Digest> = order
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let salt = Salt(sha256(&[b"claw/vector/salt", &(i as u16).to_be_bytes()]).0);
            leaf(&hand, i as u16, *c, &salt)
        })
        .collect();
    put("deck.leaf51", leaves[51].to_string());
    put("deck.root", MerkleTree::new(&leaves).root().to_string());

    // §6 sealing.
    let key = dealer.shared_key(&player.encryption_key()).unwrap();
    let opening = CardOpening { position: 7, card: "Td".parse().unwrap(), salt: Salt([0x33; 32]) };
    let sealed = key.seal(&mut ChaCha20Rng::from_seed([0x05; 32]), &hand, &opening);
    put("seal.nonce", sealed.nonce.to_string());
    put("seal.ciphertext", hx(&sealed.ciphertext));
    let back = player.shared_key(&dealer.encryption_key()).unwrap().open(&hand, &sealed).unwrap();
    assert_eq!(back, opening);

    // §9.5 card-transfer: the box above moved from seat 0 to seat 1 (face
    // down), and the same card face up; each signed as event 2 after a
    // zero `prev`, and the leaf the face-up opening must match.
    let down = EventBody::CardTransfer(CardTransfer {
        position: 7,
        from: Seat(0),
        to: Seat(1),
        face: CardFace::Down,
        opening: None,
        sealed: Some(sealed.clone()),
    });
    let down = down.to_raw().unwrap();
    put("transfer.down.body", down.as_str().to_owned());
    let env = EventEnvelope::sign(&dealer, hand, 2, GENESIS_PREV, down);
    put("transfer.down.event_sig", env.sig.expect("signed").to_string());
    put("transfer.down.event_hash", env.hash().to_string());
    let up = EventBody::CardTransfer(CardTransfer {
        position: 7,
        from: Seat(0),
        to: Seat(1),
        face: CardFace::Up,
        opening: Some(opening),
        sealed: None,
    });
    put("transfer.up.body", up.to_raw().unwrap().as_str().to_owned());
    put("transfer.up.leaf", leaf(&hand, 7, opening.card, &opening.salt).to_string());

    // §8 handshake.
    let t = 1_750_000_000_000u64;
    let mut hello = Hello {
        protocol_version: "claw/1".into(),
        sdk_version: "claw-sdk/0.1.0".into(),
        room_id: "table-1".into(),
        player: player.id(),
        encryption_key: player.encryption_key(),
        timestamp_ms: t,
        client_nonce: Nonce([0x44; 32]),
        reconnect_token: None,
        sig: Signature([0; 64]),
    };
    put("handshake.hello.body", hx(hello_body(&hello)));
    hello.sig = player.sign(Purpose::Hello, &hello_body(&hello));
    put("handshake.hello.sig", hello.sig.to_string());
    let mut ch = Challenge {
        challenge: Nonce([0x55; 32]),
        dealer: dealer.id(),
        dealer_encryption_key: dealer.encryption_key(),
        room_id: "table-1".into(),
        room_config: RawJson::from_string(r#"{"game":"texas-holdem"}"#.into()).unwrap(),
        client_nonce: hello.client_nonce,
        timestamp_ms: t + 20,
        sig: Signature([0; 64]),
    };
    put("handshake.challenge.body", hx(challenge_body(&ch, &player.id())));
    ch.sig = dealer.sign(Purpose::Challenge, &challenge_body(&ch, &player.id()));
    put("handshake.challenge.sig", ch.sig.to_string());
    let mut r =
        Response { challenge: ch.challenge, dealer: dealer.id(), room_id: "table-1".into(), sig: ch.sig };
    put("handshake.response.body", hx(response_body(&r, &hello.client_nonce, &player.id())));
    r.sig = player.sign(Purpose::Response, &response_body(&r, &hello.client_nonce, &player.id()));
    put("handshake.response.sig", r.sig.to_string());
    let mut a = Accepted {
        session_id: Nonce([0x66; 32]),
        reconnect_token: Nonce([0x77; 32]),
        seat: Some(Seat(3)),
        timestamp_ms: t + 40,
        sig: Signature([0; 64]),
    };
    put("handshake.accepted.body", hx(accepted_body(&a, &ch.challenge, &player.id())));
    a.sig = dealer.sign(Purpose::Accepted, &accepted_body(&a, &ch.challenge, &player.id()));
    put("handshake.accepted.sig", a.sig.to_string());
    // §9.5 / §11.4: a seat that paid the room's commission, and the balance
    // its next hand must start with.
    let seat = HandPlayer {
        id: player.id(),
        seat: Seat(1),
        balance: Chips(195),
        encryption_key: player.encryption_key(),
        commission: Chips(5),
        house_ai: false,
    };
    put("commission.hand_player", serde_json::to_string(&seat).unwrap());
    let next = expected_start_balance(seat.balance, -20, Chips(5)).unwrap();
    put("balances.next_start", next.to_string());
    // §9.4 / §9.5: a room configuration as the challenge signs it and every
    // `game-start` carries it (exact text and its SHA-256), and the link to
    // the room's previous hand.
    let room = RoomConfig {
        room_id: "table-1".into(),
        game: "texas-holdem".into(),
        settings: serde_json::json!({"big_blind": 2, "small_blind": 1}),
        buy_in: Chips(100),
        min_bet: Chips(2),
        max_bet: Chips::ZERO,
        commission: Chips(5),
        min_players: 2,
        max_players: 6,
        entropy: EntropyMode::Joint,
        reveal: RevealPolicy::Deferred,
        action_timeout_ms: 30_000,
        between_hands_ms: 10_000,
        seed_timeout_ms: 2_000,
        reveal_delay_ms: Some(600_000),
        deal: Default::default(),
    };
    let room = RawJson::from_value(&room).unwrap();
    put("room.config", room.as_str().to_owned());
    put("room.config_sha256", hx(room.digest().0));
    let previous = PreviousHand { hand_id: HandId(core::array::from_fn(|i| i as u8)), hand_number: 6 };
    put("chain.previous", serde_json::to_string(&previous).unwrap());
    v
}

/// The `name = value` lines of SPEC.md §13 (inside its code blocks).
fn spec_vectors() -> BTreeMap<String, String> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../SPEC.md");
    let text = std::fs::read_to_string(path).expect("SPEC.md at the repository root");
    let start = text.find("\n## 13.").expect("SPEC.md has a §13");
    let section = &text[start + 1..];
    let end = section[3..].find("\n## ").map_or(section.len(), |e| e + 3);
    let mut out = BTreeMap::new();
    let mut in_code = false;
    for line in section[..end].lines() {
        if line.trim_start().starts_with("```") {
            in_code = !in_code;
            continue;
        }
        if !in_code {
            continue;
        }
        if let Some((k, v)) = line.split_once(" = ") {
            let k = k.trim();
            if !k.is_empty() && !k.starts_with('#') {
                assert!(out.insert(k.to_owned(), v.trim().to_owned()).is_none(), "duplicate vector {k}");
            }
        }
    }
    out
}

#[test]
fn spec_vectors_match_the_code() {
    let computed = computed();
    if std::env::var_os("CLAW_PRINT_VECTORS").is_some() {
        for (k, v) in &computed {
            println!("{k} = {v}");
        }
    }
    let spec = spec_vectors();
    let mut missing = Vec::new();
    for (k, v) in &computed {
        match spec.get(k) {
            None => missing.push(k.clone()),
            Some(s) => assert_eq!(s, v, "SPEC.md §13 vector {k} differs from the code"),
        }
    }
    assert!(missing.is_empty(), "vectors missing from SPEC.md §13: {missing:?}");
    let known: std::collections::HashSet<&String> = computed.iter().map(|(k, _)| k).collect();
    let stale: Vec<&String> = spec.keys().filter(|k| !known.contains(k)).collect();
    assert!(stale.is_empty(), "SPEC.md §13 lists vectors the code does not compute: {stale:?}");
}

#[test]
fn vectors_are_self_consistent() {
    // Known-answer checks that do not depend on SPEC.md.
    let v: BTreeMap<String, String> = computed().into_iter().collect();
    assert_eq!(v["commit.leaf0"], hx(sha256(&[&hex::decode(&v["commit.leaf0.preimage"]).unwrap()]).0));
    assert!(v["sign.event.message"].starts_with(&hx(b"claw/v1/event\0")));
    assert_eq!(v["shuffle.order52"].split(',').count(), 52);
    assert_eq!(v["seal.ciphertext"].len(), 160);
    for k in ["transfer.down.body", "transfer.up.body"] {
        let body = EventBody::decode(&v[k]).unwrap();
        assert_eq!(body.type_name(), "card-transfer");
        assert_eq!(body.to_raw().unwrap().as_str(), v[k], "{k} is the canonical text");
    }
}

/// SPEC §12's table, a row per limit: the row whose first cell starts with
/// `label`, its value cell.
fn spec_limit(section: &str, label: &str) -> String {
    section
        .lines()
        .filter_map(|l| {
            let cells: Vec<&str> = l.split('|').map(str::trim).collect();
            (cells.len() > 3 && cells[1].starts_with(label)).then(|| cells[2].to_owned())
        })
        .next()
        .unwrap_or_else(|| panic!("SPEC §12 has no row {label:?}"))
}

/// Digits grouped by threes with spaces, as SPEC writes numbers (`10 000`).
fn grouped(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(' ');
        }
        out.push(c);
    }
    out
}

#[test]
fn spec_limits_match_the_code() {
    use claw_protocol::limits::*;
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../SPEC.md");
    let text = std::fs::read_to_string(path).expect("SPEC.md at the repository root");
    let start = text.find("\n## 12.").expect("SPEC.md has a §12");
    let section = &text[start..text.find("\n## 13.").expect("SPEC.md has a §13")];
    let n = |v: usize| grouped(v as u64);
    let rows: [(&str, String); 15] = [
        ("Clock skew", format!("±{} ms", grouped(CLOCK_SKEW_MS))),
        ("Handshake deadline", format!("{} ms", grouped(HANDSHAKE_DEADLINE_MS))),
        (
            "Challenge book retention",
            format!(
                "{} ms / 2^{} challenges",
                grouped(USED_CHALLENGE_RETENTION_MS),
                MAX_USED_CHALLENGES.ilog2()
            ),
        ),
        ("`sdk_version`, `room_id`", format!("≤ {} bytes", n(MAX_SDK_VERSION_LEN.max(MAX_ROOM_ID_LEN)))),
        ("Deck size", format!("≤ {} positions", n(MAX_DECK_POSITIONS))),
        ("Frame (WebSocket text message)", format!("≤ {} bytes (`MAX_FRAME_BYTES`)", n(MAX_FRAME_BYTES))),
        ("Free text", format!("≤ {} bytes", n(MAX_TEXT_LEN))),
        ("Query nonce", format!("1–{} bytes", n(MAX_NONCE_LEN))),
        ("`quick-match` `game`, `tier`", format!("1–{} bytes (`MAX_MATCH_NAME_LEN`)", n(MAX_MATCH_NAME_LEN))),
        ("Signed game action", format!("≤ {} bytes (`MAX_ACTION_BYTES`)", n(MAX_ACTION_BYTES))),
        (
            "A game's public state",
            format!("≤ {} bytes (`MAX_PUBLIC_STATE_BYTES`)", n(MAX_PUBLIC_STATE_BYTES)),
        ),
        ("Query answer", format!("within {} ms", grouped(QUERY_ANSWER_MS))),
        ("Players per hand", format!("1–{}", n(MAX_PLAYERS_PER_HAND))),
        ("Unsigned events in a row", format!("≤ {} (`MAX_UNSIGNED_RUN`)", n(MAX_UNSIGNED_RUN))),
        (
            "Chips one player brings into a hand",
            format!(
                "≤ 2^{} (a base a game multiplies by up to 2^10 — Dou Di Zhu, Guandan — ≤ 2^{})",
                MAX_STAKE.ilog2(),
                MAX_MULTIPLIED_BASE.ilog2()
            ),
        ),
    ];
    assert_eq!(MAX_SDK_VERSION_LEN, MAX_ROOM_ID_LEN, "SPEC §12 gives both one row");
    for (label, want) in rows {
        assert_eq!(spec_limit(section, label), want, "SPEC §12 row {label:?}");
    }
    let ping = spec_limit(section, "Heartbeat");
    assert!(ping.contains(&format!("at most {} ms", grouped(MAX_PING_INTERVAL_MS))), "{ping}");
}
