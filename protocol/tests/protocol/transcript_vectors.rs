//! Test vectors of SPEC.md §9–§10 (event envelope, action and seed
//! signatures, config hash): computed here from fixed keys and inputs, and
//! checked against the values printed in the spec, so a second
//! implementation can prove it interoperates.

use claw_protocol::messages::EventBody;
use claw_protocol::messages::{
    action_signing_body, config_hash, player_seed_signing_body, PlayerSeed, RawJson, SignedAction,
};
use claw_protocol::sign::{signed_message, Purpose};
use claw_protocol::transcript::{event_signing_body, EventEnvelope, TranscriptBuilder, GENESIS_PREV};
use claw_protocol::{HandId, Identity, Seed};

fn hand() -> HandId {
    let mut b = [0u8; 16];
    for (i, x) in b.iter_mut().enumerate() {
        *x = i as u8;
    }
    HandId(b)
}

fn raw(s: &str) -> RawJson {
    RawJson::from_string(s.to_owned()).unwrap()
}

struct Vectors {
    items: Vec<(&'static str, String)>,
}

fn compute() -> Vectors {
    let dealer = Identity::from_seed([0x01; 32]);
    let player = Identity::from_seed([0x02; 32]);
    let body = raw(r#"{"type":"reveal","openings":[]}"#);
    // A burst of two events: only the last is signed (SPEC.md §10.1).
    let mut b = TranscriptBuilder::new(hand());
    let reveal = EventBody::decode(body.as_str()).unwrap();
    let burst = b.append_burst(&dealer, &[reveal.clone(), reveal]).unwrap();
    let (e0, e1) = (burst[0].clone(), burst[1].clone());
    assert_eq!(e0, EventEnvelope::unsigned(hand(), 0, GENESIS_PREV, body.clone()));
    assert_eq!(e1, EventEnvelope::sign(&dealer, hand(), 1, e0.hash(), body.clone()));
    let action = raw(r#"{"type":"check"}"#);
    let a = SignedAction::sign(&player, hand(), 0, action.clone());
    let s = PlayerSeed::sign(&player, hand(), Seed([0x03; 32]));
    let settings = raw(r#"{"small_blind":1,"big_blind":2}"#);
    Vectors {
        items: vec![
            ("dealer id", dealer.id().to_string()),
            ("player id", player.id().to_string()),
            ("event body sha256", body.digest().to_string()),
            ("event 0 signing bytes", hex::encode(signed_message(Purpose::Event, &e0.signing_body()))),
            ("event 0 hash", e0.hash().to_string()),
            ("event 0 frame", e0.encode().unwrap()),
            ("event 1 hash", e1.hash().to_string()),
            ("event 1 sig", e1.sig.expect("the burst's last event is signed").to_string()),
            (
                "action signed bytes",
                hex::encode(signed_message(Purpose::Action, &action_signing_body(&hand(), 0, &action))),
            ),
            ("action sig", a.sig.to_string()),
            (
                "seed signed bytes",
                hex::encode(signed_message(
                    Purpose::PlayerSeed,
                    &player_seed_signing_body(&hand(), &Seed([0x03; 32])),
                )),
            ),
            ("seed sig", s.sig.to_string()),
            ("config hash", config_hash("texas-holdem", "1", &settings).to_string()),
            ("event 1 frame", e1.encode().unwrap()),
        ],
    }
    .check_layout(&e0)
}

impl Vectors {
    fn check_layout(self, e0: &EventEnvelope) -> Vectors {
        assert_eq!(e0.signing_body(), event_signing_body(&hand(), 0, &GENESIS_PREV, &e0.body.digest()));
        self
    }
}

const EXPECTED: &[(&str, &str)] = &[
    ("dealer id", "3534d08a72bede8ccdc212e25e2435f990f186597bd13b490da9cdb81ea4c3fd"),
    ("player id", "7fd46ed80bb397870de9aea710adaa0dd2552a4b8adc12714cf67992f623dbcd"),
    ("event body sha256", "bba6573d8252eba9cb37efd1667a2acde9f0aa4b9376704aa3fcdddff8355a30"),
    (
        "event 0 signing bytes",
        "636c61772f76312f6576656e7400000102030405060708090a0b0c0d0e0f0000000000000000000000000000000000000000000000000000000000000000000000000000000\
         0bba6573d8252eba9cb37efd1667a2acde9f0aa4b9376704aa3fcdddff8355a30",
    ),
    ("event 0 hash", "8b6872baddaf791bb9a3102387fce20c9c10c5a340831b7a89ff77236abd2dac"),
    (
        "event 0 frame",
        r#"{"type":"event","hand_id":"000102030405060708090a0b0c0d0e0f","seq":0,"prev":"0000000000000000000000000000000000000000000000000000000000000000","body":{"type":"reveal","openings":[]}}"#,
    ),
    ("event 1 hash", "b7f6bca9f12f77cef47367f3622481130d5a2aae8de6438bc95f1ea80c263ace"),
    (
        "event 1 sig",
        "5b8b39567bad7538f597f321481a283792aff990ec7f9fbe36cbf09f79aa99c6ad68f623e9e70f68761591269e0e26ad514004e20d78f98d95ef9122b519bb05",
    ),
    (
        "action signed bytes",
        "636c61772f76312f616374696f6e00000102030405060708090a0b0c0d0e0f000000001311e9c67d07011834fc13c8a0680b13ae3f9c77ad9fbe396a2fdcc8578623ed",
    ),
    (
        "action sig",
        "fb02cc90e3a101cab76d86ca1b94ea33ccf02bd83524bae163cb670f9263e5a5f8ef9073394cce6a885f66b374edcb5381615c6cad32dd3f6058d89ba3a0bc0b",
    ),
    (
        "seed signed bytes",
        "636c61772f76312f706c617965722d7365656400000102030405060708090a0b0c0d0e0f0303030303030303030303030303030303030303030303030303030303030303",
    ),
    (
        "seed sig",
        "79976531d86785b373e0c9913cd69a7ba926b6a54dbe6e1902d6ed195629053b9bab341be7a01758fd2bd716b12794202c47bf186d1b36ffda4f8927b6ed1103",
    ),
    ("config hash", "5e356ec34a7f5de257e96a25913f374fad6cc138089a89711b6a3c56931241d0"),
    (
        "event 1 frame",
        r#"{"type":"event","hand_id":"000102030405060708090a0b0c0d0e0f","seq":1,"prev":"8b6872baddaf791bb9a3102387fce20c9c10c5a340831b7a89ff77236abd2dac","body":{"type":"reveal","openings":[]},"sig":"5b8b39567bad7538f597f321481a283792aff990ec7f9fbe36cbf09f79aa99c6ad68f623e9e70f68761591269e0e26ad514004e20d78f98d95ef9122b519bb05"}"#,
    ),
];

#[test]
fn vectors_match_the_code() {
    let got = compute().items;
    assert_eq!(got.len(), EXPECTED.len());
    for ((k, v), (ek, ev)) in got.iter().zip(EXPECTED) {
        assert_eq!(k, ek);
        assert_eq!(v, ev, "{k}");
    }
}

/// SPEC.md §9.6 and §10.5 print every vector.
#[test]
fn vectors_are_printed_in_the_spec() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../SPEC.md");
    let spec = std::fs::read_to_string(path).expect("SPEC.md at the workspace root");
    assert!(spec.contains("## 10. Transcript"));
    // Long hex strings may be wrapped in the spec: compare without whitespace.
    let flat: String = spec.split_whitespace().collect();
    for (k, v) in EXPECTED {
        let v: String = v.split_whitespace().collect();
        assert!(flat.contains(&v), "{k} not in the spec: {v}");
    }
}
