//! Blind tables through the room core (SPEC.md §9.7): players simulated
//! with the real mental-poker prover answer the room's key, shuffle and
//! share requests; every hand is audited offline; a withheld share voids
//! the hand and returns every stake exactly (docs/blind-deal.md §II.6).

use std::collections::HashSet;

use claw_games::audit::GamesReplayer;
use claw_protocol::audit::{audit, AuditCheck, AuditOptions};
use claw_protocol::mental::{shuffle, Deck, JointKey, KeyShare, SecretShare};
use claw_protocol::messages::{BlindKeyMsg, BlindSharesMsg, BlindShuffleMsg, DealMode, PositionShare};
use claw_protocol::Seat;

use super::*;

/// What a simulated player knows of the running hand.
#[derive(Default)]
struct Mind {
    secret: Option<SecretShare>,
    hand: Option<HandId>,
    seat: Option<Seat>,
    key: Option<JointKey>,
    deck: Option<Deck>,
    given: HashSet<u16>,
    read: usize,
}

fn blind_harness(n: u8) -> Harness {
    let mut cfg = RoomConfig::new("r", "texas-holdem");
    cfg.entropy = EntropyMode::Dealer;
    cfg.deal = DealMode::Blind;
    cfg.action_timeout = Duration::from_secs(30);
    cfg.between_hands = Duration::from_secs(1);
    cfg.settings = json!({"small_blind": 1, "big_blind": 2});
    let game = cfg.validate().unwrap();
    let spec =
        Arc::new(GameSpec::new("r", game, cfg.settings.clone(), cfg.entropy, cfg.reveal, 1000).unwrap());
    let dealer = Arc::new(Identity::from_seed([200; 32]));
    let now = Now { at: Instant::now(), unix_ms: 1_700_000_000_000 };
    let core = RoomCore::new(
        now,
        Arc::new(cfg),
        spec,
        Arc::clone(&dealer),
        Limits::default(),
        Arc::new(Metrics::default()),
        Box::new(ChaCha20Rng::seed_from_u64(7)),
    );
    let mut h = Harness {
        core,
        now,
        dealer,
        players: (0..n).map(|i| Identity::from_seed([i + 1; 32])).collect(),
        chips: VecDeque::new(),
        inbox: vec![Vec::new(); usize::from(n)],
        log: Vec::new(),
        reports: Vec::new(),
        balances: vec![1000; usize::from(n)],
        files: HashMap::new(),
        pending: HashMap::new(),
        voided: Vec::new(),
    };
    h.drain();
    h
}

/// Every player reads its new messages and answers them; `withhold`: a
/// player that sends no decryption share. Returns whether anything was sent.
fn pump(h: &mut Harness, minds: &mut [Mind], rng: &mut ChaCha20Rng, withhold: Option<usize>) -> bool {
    let declared = claw_games::registry::get("texas-holdem").unwrap().create_deck(&json!({})).unwrap();
    let mut sent = false;
    #[allow(clippy::needless_range_loop)] // `i` indexes the harness's inboxes and players too
    for i in 0..minds.len() {
        let news: Vec<ServerMessage> = h.inbox[i][minds[i].read..].to_vec();
        minds[i].read = h.inbox[i].len();
        for m in news {
            let mut out: Vec<ClientMessage> = Vec::new();
            let me = &mut minds[i];
            match m {
                ServerMessage::Event(e) => match e.decode_body().unwrap() {
                    EventBody::HandPrepare(p) => {
                        let seat =
                            Seat(p.players.iter().position(|x| *x == h.players[i].id()).unwrap() as u8);
                        let secret = SecretShare::generate(rng);
                        let share = secret.key_share(&e.hand_id, seat, rng);
                        out.push(ClientMessage::BlindKey(BlindKeyMsg::sign(
                            &h.players[i],
                            e.hand_id,
                            seat,
                            &share,
                        )));
                        *me = Mind {
                            secret: Some(secret),
                            hand: Some(e.hand_id),
                            seat: Some(seat),
                            read: me.read,
                            ..Mind::default()
                        };
                    }
                    EventBody::BlindKeys(k) => {
                        let list: Vec<_> = k
                            .keys
                            .iter()
                            .map(|k| (k.seat, KeyShare::from_bytes(&k.key_share).unwrap()))
                            .collect();
                        me.key = Some(JointKey::combine(&e.hand_id, &list).unwrap());
                        me.deck = Some(Deck::initial(&declared).unwrap());
                        if me.seat == Some(Seat(0)) {
                            out.push(shuffle_msg(h, i, me, rng));
                        }
                    }
                    EventBody::BlindShuffle(s) => {
                        me.deck = Some(Deck::from_bytes(&s.deck).unwrap());
                        if me.seat.map(|x| x.0) == Some(s.seat.0 + 1) {
                            out.push(shuffle_msg(h, i, me, rng));
                        }
                    }
                    EventBody::BlindSkip(s) if me.seat.map(|x| x.0) == Some(s.seat.0 + 1) => {
                        out.push(shuffle_msg(h, i, me, rng));
                    }
                    EventBody::BlindRequest(r) if withhold != Some(i) => {
                        let mut shares = Vec::new();
                        for p in r.positions {
                            if p.to == me.seat || !me.given.insert(p.position) {
                                continue;
                            }
                            let ct = *me.deck.as_ref().unwrap().get(p.position).unwrap();
                            let seat = me.seat.unwrap();
                            let d = me
                                .secret
                                .as_ref()
                                .unwrap()
                                .decryption_share(&e.hand_id, seat, p.position, &ct, rng);
                            shares.push(PositionShare { position: p.position, share: d.to_bytes().to_vec() });
                        }
                        if !shares.is_empty() {
                            out.push(ClientMessage::BlindShares(BlindSharesMsg {
                                hand_id: e.hand_id,
                                shares,
                            }));
                        }
                    }
                    _ => {}
                },
                ServerMessage::YourTurn(t) => {
                    let pick = t
                        .actions
                        .iter()
                        .find(|a| a.action["type"] == "check")
                        .or_else(|| t.actions.iter().find(|a| a.action["type"] == "call"))
                        .unwrap_or(&t.actions[0]);
                    let raw = RawJson::from_value(&pick.action).unwrap();
                    out.push(ClientMessage::Action(SignedAction::sign(&h.players[i], t.hand_id, t.seq, raw)));
                }
                _ => {}
            }
            for msg in out {
                sent = true;
                h.send(i, msg);
            }
        }
    }
    sent
}

fn shuffle_msg(h: &Harness, i: usize, me: &mut Mind, rng: &mut ChaCha20Rng) -> ClientMessage {
    let (hand, seat) = (me.hand.unwrap(), me.seat.unwrap());
    let (deck, proof) = shuffle(&hand, seat, me.key.as_ref().unwrap(), me.deck.as_ref().unwrap(), rng);
    ClientMessage::BlindShuffle(BlindShuffleMsg::sign(&h.players[i], hand, seat, &deck, &proof))
}

/// Runs the room until nothing more happens at this instant.
fn settle(h: &mut Harness, minds: &mut [Mind], rng: &mut ChaCha20Rng, withhold: Option<usize>) {
    for _ in 0..10_000 {
        h.settle_chips();
        h.tick();
        if !pump(h, minds, rng, withhold) && h.chips.is_empty() {
            return;
        }
    }
    panic!("the room does not settle");
}

#[test]
fn blind_hands_play_through_the_room_and_every_hand_audits() {
    let mut h = blind_harness(3);
    let mut minds: Vec<Mind> = (0..3).map(|_| Mind::default()).collect();
    let mut rng = ChaCha20Rng::seed_from_u64(99);
    h.seat_everyone();
    for _ in 0..4 {
        settle(&mut h, &mut minds, &mut rng, None);
        h.advance(Duration::from_secs(2));
    }
    assert!(
        h.files.len() >= 3,
        "hands finished: {}; log: {:#?}",
        h.files.len(),
        &h.log[h.log.len().saturating_sub(30)..]
    );
    assert!(h.voided.is_empty());
    let r = GamesReplayer::default();
    for t in h.files.values() {
        let opts = AuditOptions { dealer: Some(h.dealer.id()), replayer: Some(&r), ..Default::default() };
        let report = audit(t, &opts).unwrap_or_else(|e| panic!("audit: {e}"));
        assert_eq!(report.passed, AuditCheck::ALL.to_vec());
        assert!(t.events.iter().any(|e| e.decode_body().unwrap().type_name() == "blind-shuffle"));
    }
    assert_eq!(h.balances.iter().sum::<u64>(), 3000, "chips are conserved");
}

#[test]
fn a_withheld_share_voids_the_hand_and_returns_every_stake() {
    let mut h = blind_harness(3);
    let mut minds: Vec<Mind> = (0..3).map(|_| Mind::default()).collect();
    let mut rng = ChaCha20Rng::seed_from_u64(5);
    h.seat_everyone();
    settle(&mut h, &mut minds, &mut rng, Some(2));
    assert!(h.files.is_empty(), "no hand can finish without seat 2's shares");
    // The blinds are staked; the share request waits for seat 2.
    assert_eq!(h.balances.iter().sum::<u64>(), 3000 - 3, "the blinds are staked");
    h.advance(Duration::from_secs(31));
    // The hand is voided: the chip service is asked to undo all its moves
    // (the ledger's void returns every stake exactly, chip-providers' tests).
    assert!(h.chips.iter().any(|(_, c)| matches!(c, ChipCall::Void(_))), "{:#?}", h.chips);
    settle(&mut h, &mut minds, &mut rng, Some(2));
    assert_eq!(h.voided.len(), 1, "{:#?}", &h.log[h.log.len().saturating_sub(20)..]);
    assert!(h.log.iter().any(|l| l == "report hand-voided"));
    let told = h.inbox[0]
        .iter()
        .any(|m| matches!(m, ServerMessage::Error(e) if e.message.contains("voided [game-error]")));
    assert!(
        told,
        "the players are told the hand is voided: {:#?}",
        h.inbox[0].iter().rev().take(5).collect::<Vec<_>>()
    );
}
