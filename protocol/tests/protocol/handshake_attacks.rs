//! Every handshake attack of SPEC.md §8, each refused with
//! its own reason. Each test first shows the honest variant is accepted, so a
//! check that refuses everything would fail here too.

use std::collections::HashSet;
use std::sync::Arc;

use claw_protocol::handshake::{
    hello_body, response_body, Accepted, Challenge, ChallengeBook, ClientHandshake, HandshakeError, Hello,
    RejectReason, Rejected, Response, ServerHandshake, CLOCK_SKEW_MS, HANDSHAKE_DEADLINE_MS,
    USED_CHALLENGE_RETENTION_MS,
};
use claw_protocol::messages::RawJson;
use claw_protocol::{EncryptionKey, Identity, Nonce, Purpose, Seat, Signature};
use rand_chacha::rand_core::SeedableRng;
use rand_chacha::ChaCha20Rng;

const T0: u64 = 1_750_000_000_000;
const ROOM: &str = "table-1";

struct World {
    dealer: Arc<Identity>,
    player: Arc<Identity>,
    rng: ChaCha20Rng,
    book: ChallengeBook,
}

fn world() -> World {
    World {
        dealer: Arc::new(Identity::from_seed([0xd1; 32])),
        player: Arc::new(Identity::from_seed([0xa1; 32])),
        rng: ChaCha20Rng::from_seed([7; 32]),
        book: ChallengeBook::new(),
    }
}

fn config() -> RawJson {
    RawJson::from_string(r#"{"game":"texas-holdem","small_blind":1,"big_blind":2}"#.to_owned()).unwrap()
}

impl World {
    fn server(&self) -> ServerHandshake {
        ServerHandshake::new(self.dealer.clone(), ROOM, config())
    }

    fn client(&mut self, now: u64) -> (ClientHandshake, Hello) {
        ClientHandshake::start(
            self.player.clone(),
            self.dealer.id(),
            ROOM,
            "test-sdk/1",
            None,
            now,
            &mut self.rng,
        )
    }

    /// Hello → challenge → response, all at `T0`.
    fn up_to_response(&mut self) -> (ClientHandshake, ServerHandshake, Challenge, Response) {
        let (mut c, hello) = self.client(T0);
        let mut s = self.server();
        let ch = s.on_hello(&hello, T0, &mut self.rng).unwrap();
        let r = c.on_challenge(&ch, T0).unwrap();
        (c, s, ch, r)
    }
}

/// Re-signs a hello after a field was changed (the attacker owns the key).
fn resign(player: &Identity, h: &mut Hello) {
    h.sig = player.sign(Purpose::Hello, &hello_body(h));
}

fn rejected_reason(r: Result<impl std::fmt::Debug, Rejected>) -> RejectReason {
    r.expect_err("must be rejected").reason
}

#[test]
fn honest_handshake_is_accepted_within_the_limits() {
    let mut w = world();
    // Clocks 14.9 s apart and a 9.9 s handshake are still fine.
    let (mut c, hello) = w.client(T0);
    let mut s = w.server();
    let now = T0 + CLOCK_SKEW_MS - 100;
    let ch = s.on_hello(&hello, now, &mut w.rng).unwrap();
    let r = c.on_challenge(&ch, T0 + 100).unwrap();
    let v = s.on_response(&r, now + HANDSHAKE_DEADLINE_MS - 100, &mut w.book).unwrap();
    assert_eq!(v.player.signing, w.player.id());
    let a = s.accept(Some(Seat(0)), None, now + 9_950, &mut w.rng).unwrap();
    let session = c.on_accepted(&a, T0 + 9_950).unwrap();
    assert_eq!(session.dealer.signing, w.dealer.id());
}

#[test]
fn replayed_hello_with_old_timestamp_is_clock_skew() {
    let mut w = world();
    let (_, hello) = w.client(T0);
    // The same signed hello, 16 s later (a replay), and one from the future.
    assert_eq!(
        rejected_reason(w.server().on_hello(&hello, T0 + CLOCK_SKEW_MS + 1, &mut w.rng)),
        RejectReason::ClockSkew
    );
    assert_eq!(
        rejected_reason(w.server().on_hello(&hello, T0 - CLOCK_SKEW_MS - 1, &mut w.rng)),
        RejectReason::ClockSkew
    );
    assert!(w.server().on_hello(&hello, T0 + CLOCK_SKEW_MS, &mut w.rng).is_ok());
}

#[test]
fn reused_challenge_is_refused_on_any_connection() {
    let mut w = world();
    let (_, mut s, _, r) = w.up_to_response();
    s.on_response(&r, T0 + 1, &mut w.book).unwrap();
    // Same connection again.
    assert_eq!(rejected_reason(s.on_response(&r, T0 + 2, &mut w.book)), RejectReason::ChallengeReused);
    // A new connection of the attacker, replaying the captured response
    // after a fresh (validly signed, replayed) hello.
    let (_, hello) = w.client(T0);
    let mut s2 = w.server();
    s2.on_hello(&hello, T0 + 3, &mut w.rng).unwrap();
    assert_eq!(rejected_reason(s2.on_response(&r, T0 + 4, &mut w.book)), RejectReason::ChallengeReused);
    // The book forgets only after the retention period.
    assert!(w.book.is_used(&r.challenge));
    w.book.purge(T0 + 1 + USED_CHALLENGE_RETENTION_MS - 1);
    assert!(w.book.is_used(&r.challenge));
    w.book.purge(T0 + 1 + USED_CHALLENGE_RETENTION_MS);
    assert!(!w.book.is_used(&r.challenge));
}

#[test]
fn response_to_a_challenge_of_another_connection_is_unknown() {
    let mut w = world();
    let (_, _s1, _, r1) = w.up_to_response();
    let (_, mut s2, _, r2) = w.up_to_response();
    assert_ne!(r1.challenge, r2.challenge);
    assert_eq!(rejected_reason(s2.on_response(&r1, T0 + 1, &mut w.book)), RejectReason::UnknownChallenge);
}

#[test]
fn wrong_hello_signature() {
    let mut w = world();
    let (_, mut hello) = w.client(T0);
    hello.sig.0[10] ^= 0x40;
    assert_eq!(rejected_reason(w.server().on_hello(&hello, T0, &mut w.rng)), RejectReason::BadHelloSignature);
    // Impersonation: someone else's key in the hello, signed by the attacker.
    let (_, mut hello) = w.client(T0);
    hello.player = Identity::from_seed([0xee; 32]).id();
    assert_eq!(rejected_reason(w.server().on_hello(&hello, T0, &mut w.rng)), RejectReason::BadHelloSignature);
}

#[test]
fn wrong_response_signature() {
    let mut w = world();
    let (_, mut s, _, mut r) = w.up_to_response();
    r.sig = Identity::from_seed([0xee; 32]).sign(Purpose::Response, b"anything");
    assert_eq!(rejected_reason(s.on_response(&r, T0 + 1, &mut w.book)), RejectReason::BadResponseSignature);
    // A hello signature replayed as a response signature (domain separation).
    let (_, mut s, ch, mut r) = w.up_to_response();
    let body = response_body(&r, &ch.client_nonce, &w.player.id());
    r.sig = w.player.sign(Purpose::Hello, &body);
    assert_eq!(rejected_reason(s.on_response(&r, T0 + 1, &mut w.book)), RejectReason::BadResponseSignature);
}

#[test]
fn response_relayed_to_another_dealer() {
    // The player talks to a malicious dealer M, which forwards the player's
    // hello to the honest dealer D and relays D's challenge under its own key.
    let mut w = world();
    let mallory = Arc::new(Identity::from_seed([0x66; 32]));
    let (mut c, hello) = ClientHandshake::start(
        w.player.clone(),
        mallory.id(), // the invite URL M gave out
        ROOM,
        "sdk",
        None,
        T0,
        &mut w.rng,
    );
    let mut honest = w.server();
    let ch_d = honest.on_hello(&hello, T0, &mut w.rng).unwrap();
    // M re-signs D's challenge bytes as its own challenge.
    let mut m_server = ServerHandshake::new(mallory.clone(), ROOM, config());
    let mut ch_m = m_server.on_hello(&hello, T0, &mut w.rng).unwrap();
    ch_m.challenge = ch_d.challenge;
    ch_m.sig =
        mallory.sign(Purpose::Challenge, &claw_protocol::handshake::challenge_body(&ch_m, &w.player.id()));
    let r = c.on_challenge(&ch_m, T0).unwrap();
    // Relayed as is: made for M's key.
    assert_eq!(rejected_reason(honest.on_response(&r, T0 + 1, &mut w.book)), RejectReason::WrongDealer);
    // With the dealer field rewritten to D, the signature no longer matches.
    let mut honest = w.server();
    let ch_d = honest.on_hello(&hello, T0, &mut w.rng).unwrap();
    let mut r2 = r.clone();
    r2.challenge = ch_d.challenge;
    r2.dealer = w.dealer.id();
    assert_eq!(
        rejected_reason(honest.on_response(&r2, T0 + 1, &mut w.book)),
        RejectReason::BadResponseSignature
    );
    // A player whose invite names M refuses D's own challenge (MITM the
    // other way round).
    let (mut c, hello) =
        ClientHandshake::start(w.player.clone(), mallory.id(), ROOM, "sdk", None, T0, &mut w.rng);
    let ch = w.server().on_hello(&hello, T0, &mut w.rng).unwrap();
    assert!(matches!(c.on_challenge(&ch, T0), Err(HandshakeError::DealerKeyMismatch { .. })));
    // A challenge made for another hello (another client nonce) is refused.
    let (mut c, _) = w.client(T0);
    let (_, other_hello) = w.client(T0);
    let ch = w.server().on_hello(&other_hello, T0, &mut w.rng).unwrap();
    assert_eq!(c.on_challenge(&ch, T0).unwrap_err(), HandshakeError::NonceMismatch);
}

#[test]
fn response_relayed_to_another_room() {
    let mut w = world();
    let (_, mut s, _, mut r) = w.up_to_response();
    r.room_id = "table-2".into();
    assert_eq!(rejected_reason(s.on_response(&r, T0 + 1, &mut w.book)), RejectReason::WrongRoom);
    let (_, hello) = w.client(T0);
    let mut other_room = ServerHandshake::new(w.dealer.clone(), "table-2", config());
    assert_eq!(rejected_reason(other_room.on_hello(&hello, T0, &mut w.rng)), RejectReason::WrongRoom);
}

#[test]
fn version_mismatch() {
    let mut w = world();
    let (_, mut hello) = w.client(T0);
    hello.protocol_version = "claw/2".into();
    resign(&w.player, &mut hello);
    assert_eq!(rejected_reason(w.server().on_hello(&hello, T0, &mut w.rng)), RejectReason::VersionMismatch);
}

#[test]
fn sdk_version_mismatch() {
    use claw_protocol::handshake::{SdkVersionError, RELEASE};
    let line = RELEASE.split('.').take(2).collect::<Vec<_>>();
    let (major, minor): (u64, u64) = (line[0].parse().unwrap(), line[1].parse().unwrap());
    let hello_with = |w: &mut World, sdk: &str| {
        let (_, mut hello) = w.client(T0);
        hello.sdk_version = sdk.into();
        resign(&w.player, &mut hello);
        hello
    };
    let mut w = world();
    // Honest: the dealer's own release, another patch of it, another SDK.
    for sdk in
        [format!("claw-player/{RELEASE}"), format!("claw-player/{major}.{minor}.999"), "other/7".into()]
    {
        let h = hello_with(&mut w, &sdk);
        assert!(w.server().on_hello(&h, T0, &mut w.rng).is_ok(), "{sdk}");
    }
    // Another release line, or a version that does not parse.
    let next = if major == 0 { format!("0.{}.0", minor + 1) } else { format!("{}.0.0", major + 1) };
    for sdk in [format!("claw-player/{next}"), "claw-player/1.2".into(), "claw-player/latest".into()] {
        let h = hello_with(&mut w, &sdk);
        let (mut client, _) = w.client(T0);
        let r = w.server().on_hello(&h, T0, &mut w.rng).expect_err("an incompatible SDK");
        assert_eq!(r.reason, RejectReason::SdkVersionMismatch, "{sdk}");
        assert_eq!(r.client_nonce, Some(h.client_nonce));
        let why = r.message.clone().unwrap_or_default();
        assert!(why.contains(&sdk), "the message names the SDK: {why}");
        // The reason is the dealer's, signed (the client's own nonce aside).
        let mut r2 = r.clone();
        r2.client_nonce = Some(client.client_nonce());
        r2.sig = w.dealer.sign(Purpose::Rejected, &claw_protocol::handshake::rejected_body(&r2));
        assert_eq!(client.on_rejected(&r2), HandshakeError::Rejected(RejectReason::SdkVersionMismatch));
    }
    let e = claw_protocol::handshake::check_sdk_version(&format!("claw-player/{next}"), RELEASE);
    assert!(matches!(e, Err(SdkVersionError::Incompatible { .. })), "{e:?}");
    // Checked after the signature: a tampered version is a bad signature,
    // not a reason an attacker can choose for someone else's hello.
    let mut h = hello_with(&mut w, &format!("claw-player/{RELEASE}"));
    h.sdk_version = format!("claw-player/{next}");
    assert_eq!(rejected_reason(w.server().on_hello(&h, T0, &mut w.rng)), RejectReason::BadHelloSignature);
}

#[test]
fn deadline_exceeded() {
    let mut w = world();
    let (mut c, hello) = w.client(T0);
    let mut s = w.server();
    let ch = s.on_hello(&hello, T0, &mut w.rng).unwrap();
    assert_eq!(s.deadline_ms(), Some(T0 + HANDSHAKE_DEADLINE_MS));
    let r = c.on_challenge(&ch, T0 + 1).unwrap();
    assert_eq!(
        rejected_reason(s.on_response(&r, T0 + HANDSHAKE_DEADLINE_MS + 1, &mut w.book)),
        RejectReason::DeadlineExceeded
    );
    // Client side: a challenge after 10 s is abandoned.
    let (mut c, hello) = w.client(T0);
    let ch = w.server().on_hello(&hello, T0, &mut w.rng).unwrap();
    assert_eq!(
        c.on_challenge(&ch, T0 + HANDSHAKE_DEADLINE_MS + 1).unwrap_err(),
        HandshakeError::DeadlineExceeded
    );
    // A timer-driven rejection carries the reason and is signed.
    let (mut c, hello) = w.client(T0);
    let mut s = w.server();
    let ch = s.on_hello(&hello, T0, &mut w.rng).unwrap();
    c.on_challenge(&ch, T0).unwrap();
    let rej = s.reject(RejectReason::DeadlineExceeded, T0 + HANDSHAKE_DEADLINE_MS + 1);
    assert_eq!(c.on_rejected(&rej), HandshakeError::Rejected(RejectReason::DeadlineExceeded));
}

#[test]
fn weak_encryption_key_malformed_and_out_of_order() {
    let mut w = world();
    let (_, mut hello) = w.client(T0);
    hello.encryption_key = EncryptionKey([0; 32]);
    resign(&w.player, &mut hello);
    let mut s = w.server();
    let ch = s.on_hello(&hello, T0, &mut w.rng).unwrap();
    let mut r = Response {
        challenge: ch.challenge,
        dealer: w.dealer.id(),
        room_id: ROOM.into(),
        sig: Signature([0; 64]),
    };
    r.sig = w.player.sign(Purpose::Response, &response_body(&r, &hello.client_nonce, &w.player.id()));
    assert_eq!(rejected_reason(s.on_response(&r, T0, &mut w.book)), RejectReason::WeakEncryptionKey);

    let (_, mut hello) = w.client(T0);
    hello.sdk_version = "x".repeat(65);
    resign(&w.player, &mut hello);
    assert_eq!(rejected_reason(w.server().on_hello(&hello, T0, &mut w.rng)), RejectReason::Malformed);

    let (_, _, _, r) = w.up_to_response();
    assert_eq!(rejected_reason(w.server().on_response(&r, T0, &mut w.book)), RejectReason::UnexpectedMessage);
    let (_, hello) = w.client(T0);
    let mut s = w.server();
    s.on_hello(&hello, T0, &mut w.rng).unwrap();
    assert_eq!(rejected_reason(s.on_hello(&hello, T0, &mut w.rng)), RejectReason::UnexpectedMessage);
    assert!(s.accept(None, None, T0, &mut w.rng).is_none(), "accept before a verified response");
}

#[test]
fn client_refuses_forged_or_altered_dealer_messages() {
    let mut w = world();
    // Tampered challenge fields (signature no longer matches).
    let (mut c, hello) = w.client(T0);
    let mut ch = w.server().on_hello(&hello, T0, &mut w.rng).unwrap();
    ch.challenge.0[0] ^= 1;
    assert_eq!(c.on_challenge(&ch, T0).unwrap_err(), HandshakeError::BadChallengeSignature);
    let (mut c, hello) = w.client(T0);
    let mut ch = w.server().on_hello(&hello, T0, &mut w.rng).unwrap();
    ch.room_config = RawJson::from_string(r#"{"game":"texas-holdem","small_blind":100}"#.into()).unwrap();
    assert_eq!(c.on_challenge(&ch, T0).unwrap_err(), HandshakeError::BadChallengeSignature);
    // Dealer clock 16 s off.
    let (mut c, hello) = w.client(T0);
    let ch = w.server().on_hello(&hello, T0 + CLOCK_SKEW_MS, &mut w.rng).unwrap();
    assert!(matches!(c.on_challenge(&ch, T0 - 1001), Err(HandshakeError::ClockSkew { .. })));
    // Forged accepted / rejected.
    let (mut c, mut s, _, r) = w.up_to_response();
    s.on_response(&r, T0, &mut w.book).unwrap();
    let mut a: Accepted = s.accept(None, None, T0, &mut w.rng).unwrap();
    a.seat = Some(Seat(5));
    assert_eq!(c.on_accepted(&a, T0).unwrap_err(), HandshakeError::BadAcceptedSignature);
    let (mut c, _, _, _) = w.up_to_response();
    let mallory = Identity::from_seed([0x66; 32]);
    let mut rej = Rejected {
        reason: RejectReason::Refused,
        client_nonce: None,
        timestamp_ms: T0,
        sig: Signature([0; 64]),
        message: None,
    };
    rej.sig = mallory.sign(Purpose::Rejected, &claw_protocol::handshake::rejected_body(&rej));
    assert_eq!(c.on_rejected(&rej), HandshakeError::UnsignedRejection(RejectReason::Refused));
}

#[test]
fn each_attack_has_its_own_reason() {
    // The reasons exercised above, collected: all distinct codes.
    let reasons = [
        RejectReason::ClockSkew,
        RejectReason::ChallengeReused,
        RejectReason::UnknownChallenge,
        RejectReason::BadHelloSignature,
        RejectReason::BadResponseSignature,
        RejectReason::WrongDealer,
        RejectReason::WrongRoom,
        RejectReason::VersionMismatch,
        RejectReason::DeadlineExceeded,
        RejectReason::WeakEncryptionKey,
        RejectReason::Malformed,
        RejectReason::UnexpectedMessage,
        RejectReason::SdkVersionMismatch,
        RejectReason::Banned,
    ];
    let codes: HashSet<&str> = reasons.iter().map(|r| r.code()).collect();
    assert_eq!(codes.len(), reasons.len());
    for r in reasons {
        let j = serde_json::to_string(&r).unwrap();
        assert_eq!(j, format!("\"{}\"", r.code()));
        assert_eq!(serde_json::from_str::<RejectReason>(&j).unwrap(), r);
    }
}

#[test]
fn reconnect_token_is_signed_in_the_hello() {
    let mut w = world();
    let token = Nonce([9; 32]);
    let (_, mut hello) =
        ClientHandshake::start(w.player.clone(), w.dealer.id(), ROOM, "sdk", Some(token), T0, &mut w.rng);
    let mut s = w.server();
    assert!(s.on_hello(&hello, T0, &mut w.rng).is_ok());
    hello.reconnect_token = Some(Nonce([8; 32]));
    assert_eq!(rejected_reason(w.server().on_hello(&hello, T0, &mut w.rng)), RejectReason::BadHelloSignature);
    hello.reconnect_token = None;
    assert_eq!(rejected_reason(w.server().on_hello(&hello, T0, &mut w.rng)), RejectReason::BadHelloSignature);
}
