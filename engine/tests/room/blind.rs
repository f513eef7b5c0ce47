//! Blind tables through the room core (SPEC.md §9.7): players simulated
//! with the real mental-poker prover answer the room's key, piece, shuffle,
//! share and recovery requests; every hand is audited offline. The
//! liveness rule (docs/blind-deal.md §II.6–§II.7) under attack: a withheld
//! hole, board or showdown share is recovered from the withholder's pieces
//! and the hand plays on; a bad piece draws an upheld complaint; a wrong
//! recovery share is refused; two withholders cancel the hand.

use std::collections::{HashMap as Map, HashSet};

use claw_games::audit::GamesReplayer;
use claw_protocol::audit::{audit, AuditCheck, AuditOptions};
use claw_protocol::mental::{shuffle, Deck, Holder, JointKey, KeyShare, Piece, SecretShare};
use claw_protocol::messages::{
    BlindKeyMsg, BlindPiecesMsg, BlindRecoveryMsg, BlindSharesMsg, BlindShuffleMsg, DealMode, PositionShare,
};
use claw_protocol::Seat;
use serde_json::Value;

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
    /// This player's own hole positions.
    mine: HashSet<u16>,
    /// Seat → the piece of its secret this player holds.
    pieces: Map<Seat, Piece>,
    pieces_seen: usize,
    players: usize,
}

/// How a simulated player misbehaves.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Fault {
    /// Sends no decryption or recovery share at all.
    WithholdAll,
    /// Withholds its shares of other seats' hole cards.
    WithholdHole,
    /// Withholds its shares of board cards.
    WithholdBoard,
    /// Withholds its own hole cards' shares at the showdown.
    WithholdShowdown,
    /// Corrupts the piece it encrypts to its first holder.
    BadPiece,
    /// Sends a wrong recovery share first (then the right one).
    WrongRecovery,
    /// Plays honestly but folds whenever it can (not a fault: a style).
    Folds,
}

fn fault_of(faults: &[(usize, Fault)], i: usize) -> Option<Fault> {
    faults.iter().find(|(j, _)| *j == i).map(|(_, f)| *f)
}

fn blind_harness(n: u8) -> Harness {
    blind_harness_for("texas-holdem", json!({"small_blind": 1, "big_blind": 2}), n)
}

/// A blind room of `game` with `n` players seated.
fn blind_harness_for(game: &str, settings: Value, n: u8) -> Harness {
    let mut cfg = RoomConfig::new("r", game);
    cfg.entropy = EntropyMode::Dealer;
    cfg.deal = DealMode::Blind;
    cfg.action_timeout = Duration::from_secs(30);
    cfg.between_hands = Duration::from_secs(1);
    cfg.settings = settings;
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
        ais: VecDeque::new(),
    };
    h.drain();
    h
}

/// Every player reads its new messages and answers them, misbehaving as
/// `faults` says. Returns whether anything was sent.
fn pump(h: &mut Harness, minds: &mut [Mind], rng: &mut ChaCha20Rng, faults: &[(usize, Fault)]) -> bool {
    let cfg = h.core.config();
    let declared = claw_games::registry::get(&cfg.game).unwrap().create_deck(&cfg.settings).unwrap();
    let mut sent = false;
    #[allow(clippy::needless_range_loop)] // `i` indexes the harness's inboxes and players too
    for i in 0..minds.len() {
        let news: Vec<ServerMessage> = h.inbox[i][minds[i].read..].to_vec();
        minds[i].read = h.inbox[i].len();
        let fault = fault_of(faults, i);
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
                            players: p.players.len(),
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
                        let keys: Vec<KeyShare> = list.iter().map(|(_, k)| *k).collect();
                        let dealer_key = KeyShare::from_bytes(&k.dealer_key).unwrap();
                        let mut msg = BlindPiecesMsg::split(
                            &h.players[i],
                            e.hand_id,
                            me.seat.unwrap(),
                            me.secret.as_ref().unwrap(),
                            &keys,
                            &dealer_key,
                            rng,
                        );
                        if fault == Some(Fault::BadPiece) {
                            // The first holder's piece, masked part: re-signed, so
                            // only the holder can tell.
                            msg.pieces[40] ^= 1;
                            msg = BlindPiecesMsg { sig: resign_pieces(h, i, &msg, me.seat.unwrap()), ..msg };
                        }
                        out.push(ClientMessage::BlindPieces(msg));
                    }
                    EventBody::BlindPieces(p) => {
                        me.pieces_seen += 1;
                        let (seat, n) = (me.seat.unwrap(), me.players);
                        match p.piece_for(e.hand_id, n, seat, me.secret.as_ref().unwrap(), rng) {
                            Some(Ok(piece)) => {
                                me.pieces.insert(p.seat, piece);
                            }
                            Some(Err(c)) => out.push(ClientMessage::BlindComplaint(c)),
                            None => {}
                        }
                        if me.pieces_seen == n && seat == Seat(0) {
                            out.push(shuffle_msg(h, i, me, rng));
                        }
                    }
                    EventBody::BlindRecover(r) if fault != Some(Fault::WithholdAll) => {
                        let Some(piece) = me.pieces.get(&r.seat) else { continue };
                        let holder = Holder::Seat(me.seat.unwrap());
                        let deck = me.deck.as_ref().unwrap();
                        let make = |p: u16, q: u16, rng: &mut ChaCha20Rng| PositionShare {
                            position: p,
                            share: piece
                                .recovery_share(&e.hand_id, r.seat, holder, p, deck.get(q).unwrap(), rng)
                                .to_bytes()
                                .to_vec(),
                        };
                        if fault == Some(Fault::WrongRecovery) {
                            // Each share proven for the ciphertext of another position.
                            let shares = r.positions.iter().map(|p| make(*p, p + 1, rng)).collect();
                            out.push(ClientMessage::BlindRecovery(BlindRecoveryMsg {
                                hand_id: e.hand_id,
                                withholder: r.seat,
                                shares,
                            }));
                        }
                        let shares = r.positions.iter().map(|p| make(*p, *p, rng)).collect();
                        out.push(ClientMessage::BlindRecovery(BlindRecoveryMsg {
                            hand_id: e.hand_id,
                            withholder: r.seat,
                            shares,
                        }));
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
                    EventBody::BlindRequest(r) if fault != Some(Fault::WithholdAll) => {
                        let mut shares = Vec::new();
                        for p in r.positions {
                            if p.to == me.seat {
                                me.mine.insert(p.position);
                                continue;
                            }
                            let skip = match fault {
                                Some(Fault::WithholdHole) => p.to.is_some(),
                                Some(Fault::WithholdBoard) => {
                                    p.to.is_none() && !me.mine.contains(&p.position)
                                }
                                Some(Fault::WithholdShowdown) => me.mine.contains(&p.position),
                                _ => false,
                            };
                            if skip || !me.given.insert(p.position) {
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
                    let fold = t.actions.iter().find(|a| a.action["type"] == "fold");
                    let pick = fold
                        .filter(|_| fault == Some(Fault::Folds))
                        .or_else(|| t.actions.iter().find(|a| a.action["type"] == "check"))
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

/// The player's signature over pieces it changed after signing.
fn resign_pieces(h: &Harness, i: usize, msg: &BlindPiecesMsg, seat: Seat) -> claw_protocol::Signature {
    let body =
        claw_protocol::messages::blind_pieces_signing_body(&msg.hand_id, seat, &msg.commitments, &msg.pieces);
    h.players[i].sign(claw_protocol::sign::Purpose::BlindPieces, &body)
}

fn shuffle_msg(h: &Harness, i: usize, me: &mut Mind, rng: &mut ChaCha20Rng) -> ClientMessage {
    let (hand, seat) = (me.hand.unwrap(), me.seat.unwrap());
    let (deck, proof) = shuffle(&hand, seat, me.key.as_ref().unwrap(), me.deck.as_ref().unwrap(), rng);
    ClientMessage::BlindShuffle(BlindShuffleMsg::sign(&h.players[i], hand, seat, &deck, &proof))
}

/// Runs the room until nothing more happens at this instant.
fn settle(h: &mut Harness, minds: &mut [Mind], rng: &mut ChaCha20Rng, faults: &[(usize, Fault)]) {
    for _ in 0..10_000 {
        h.settle_chips();
        h.tick();
        if !pump(h, minds, rng, faults) && h.chips.is_empty() {
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
        settle(&mut h, &mut minds, &mut rng, &[]);
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

/// Plays hands with `faults` until `hands` finished (advancing the
/// virtual clock past each deadline); audits every finished hand.
fn play_with(faults: &[(usize, Fault)], seed: u64, hands: usize) -> (Harness, Vec<Transcript>) {
    play_game_with(blind_harness(3), faults, seed, hands)
}

/// [`play_with`] at the table `h` (its players not seated yet); a
/// deferred reveal still pending is published into its hand's file
/// before the audit, as the room's close or delay does.
fn play_game_with(
    mut h: Harness,
    faults: &[(usize, Fault)],
    seed: u64,
    hands: usize,
) -> (Harness, Vec<Transcript>) {
    let mut minds: Vec<Mind> = (0..h.players.len()).map(|_| Mind::default()).collect();
    let mut rng = ChaCha20Rng::seed_from_u64(seed);
    h.seat_everyone();
    for _ in 0..200 {
        settle(&mut h, &mut minds, &mut rng, faults);
        if h.files.len() >= hands {
            break;
        }
        h.advance(Duration::from_secs(31));
    }
    for (id, env) in std::mem::take(&mut h.pending) {
        if let Some(t) = h.files.get_mut(&id) {
            t.events.push(env);
        }
    }
    let r = GamesReplayer::default();
    let files: Vec<Transcript> = h.files.values().cloned().collect();
    for t in &files {
        let opts = AuditOptions { dealer: Some(h.dealer.id()), replayer: Some(&r), ..Default::default() };
        let report = audit(t, &opts).unwrap_or_else(|e| panic!("audit: {e}"));
        assert_eq!(report.passed, AuditCheck::ALL.to_vec());
    }
    (h, files)
}

fn types(t: &Transcript) -> Vec<String> {
    t.events.iter().map(|e| e.decode_body().unwrap().type_name().to_owned()).collect()
}

fn recovered(t: &Transcript) -> Vec<claw_protocol::messages::BlindRecover> {
    t.events
        .iter()
        .filter_map(|e| match e.decode_body().unwrap() {
            EventBody::BlindRecover(r) => Some(r),
            _ => None,
        })
        .collect()
}

#[test]
fn a_withheld_hole_share_is_recovered_the_withholder_folds_and_the_owner_plays_on() {
    let (h, files) = play_with(&[(2, Fault::WithholdHole)], 5, 2);
    assert!(h.voided.is_empty(), "no hand is cancelled: {:#?}", &h.log[h.log.len().saturating_sub(20)..]);
    assert!(files.len() >= 2);
    for t in &files {
        let r = recovered(t);
        assert!(!r.is_empty() && r.iter().all(|r| r.seat == Seat(2)), "seat 2's shares are recovered");
        assert!(t.events.iter().any(|e| e.decode_body().unwrap().type_name() == "blind-recovery"));
        // Every turn of the withholder after its withholding is its timeout action.
        let first = types(t).iter().position(|x| x == "blind-recover").unwrap();
        for e in &t.events[first..] {
            if let EventBody::ActionResult(a) = e.decode_body().unwrap() {
                assert_ne!(a.seat, Seat(2), "the withholder never acts itself once it withheld");
            }
        }
        let folds = t.events[first..]
            .iter()
            .any(|e| matches!(e.decode_body().unwrap(), EventBody::TimeoutAction(x) if x.seat == Seat(2)));
        let over = t.events[first..].iter().any(|e| e.decode_body().unwrap().type_name() == "game-end");
        assert!(folds || over, "the withholder's turns are timeout actions");
    }
    assert_eq!(h.balances.iter().sum::<u64>(), 3000, "chips are conserved");
}

#[test]
fn a_withheld_board_share_is_recovered_and_the_board_opens() {
    let (h, files) = play_with(&[(1, Fault::WithholdBoard)], 11, 1);
    assert!(h.voided.is_empty(), "{:#?}", &h.log[h.log.len().saturating_sub(20)..]);
    let recovered_board = files.iter().flat_map(recovered).any(|r| r.seat == Seat(1));
    assert!(recovered_board, "seat 1's board shares are recovered");
    assert_eq!(h.balances.iter().sum::<u64>(), 3000, "chips are conserved");
}

#[test]
fn a_showdown_withholder_has_its_hand_opened_by_recovery() {
    let (h, files) = play_with(&[(0, Fault::WithholdShowdown)], 17, 2);
    assert!(h.voided.is_empty(), "{:#?}", &h.log[h.log.len().saturating_sub(20)..]);
    // The simulated players check or call: every hand reaches the showdown.
    for t in &files {
        let r = recovered(t);
        assert!(r.iter().any(|r| r.seat == Seat(0)), "seat 0's own hole shares are recovered");
        assert!(types(t).iter().any(|x| x == "blind-reveal"));
    }
    assert_eq!(h.balances.iter().sum::<u64>(), 3000, "chips are conserved");
}

#[test]
fn a_bad_piece_draws_an_upheld_complaint_and_its_sender_is_the_withholder() {
    let (h, files) = play_with(&[(1, Fault::BadPiece)], 23, 1);
    assert!(h.voided.is_empty(), "{:#?}", &h.log[h.log.len().saturating_sub(20)..]);
    for t in &files {
        let complaint = t.events.iter().find_map(|e| match e.decode_body().unwrap() {
            EventBody::BlindComplaint(c) => Some(c),
            _ => None,
        });
        let c = complaint.expect("the holder's complaint is chained");
        assert_eq!((c.seat, c.accused), (Seat(0), Seat(1)));
        for e in &t.events {
            if let EventBody::ActionResult(a) = e.decode_body().unwrap() {
                assert_ne!(a.seat, Seat(1), "the accused's turns are timeout actions");
            }
        }
    }
    assert_eq!(h.balances.iter().sum::<u64>(), 3000, "chips are conserved");
}

#[test]
fn a_wrong_recovery_share_is_refused_and_the_right_one_completes_the_recovery() {
    let (h, files) = play_with(&[(2, Fault::WithholdHole), (0, Fault::WrongRecovery)], 29, 1);
    assert!(h.voided.is_empty(), "{:#?}", &h.log[h.log.len().saturating_sub(20)..]);
    let refused = h.inbox[0].iter().any(|m| {
        matches!(m, ServerMessage::Error(e) if e.code == claw_protocol::messages::ErrorCode::BadShare && e.message.contains("recovery-proof"))
    });
    assert!(refused, "the wrong recovery share is refused as such");
    assert!(files.iter().flat_map(recovered).any(|r| r.seat == Seat(2)));
}

#[test]
fn two_withholders_cancel_the_hand_and_every_stake_is_returned() {
    let mut h = blind_harness(3);
    let mut minds: Vec<Mind> = (0..3).map(|_| Mind::default()).collect();
    let mut rng = ChaCha20Rng::seed_from_u64(5);
    let faults = [(1, Fault::WithholdAll), (2, Fault::WithholdAll)];
    h.seat_everyone();
    settle(&mut h, &mut minds, &mut rng, &faults);
    assert!(h.files.is_empty(), "no hand can finish without two seats' shares");
    assert_eq!(h.balances.iter().sum::<u64>(), 3000 - 3, "the blinds are staked");
    h.advance(Duration::from_secs(31));
    // The hand is voided: the chip service is asked to undo all its moves
    // (the ledger's void returns every stake exactly, chip-providers' tests).
    assert!(h.chips.iter().any(|(_, c)| matches!(c, ChipCall::Void(_))), "{:#?}", h.chips);
    settle(&mut h, &mut minds, &mut rng, &faults);
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

#[test]
fn a_holder_withholding_its_recovery_share_cancels_the_hand() {
    // Seat 2 withholds a hole share; seat 1 then withholds its recovery share.
    let mut h = blind_harness(3);
    let mut minds: Vec<Mind> = (0..3).map(|_| Mind::default()).collect();
    let mut rng = ChaCha20Rng::seed_from_u64(7);
    let faults = [(2, Fault::WithholdHole), (1, Fault::WithholdAll)];
    h.seat_everyone();
    settle(&mut h, &mut minds, &mut rng, &faults);
    h.advance(Duration::from_secs(31));
    settle(&mut h, &mut minds, &mut rng, &faults);
    assert!(h.files.is_empty());
    assert!(h.chips.iter().any(|(_, c)| matches!(c, ChipCall::Void(_))) || !h.voided.is_empty());
}

/// `t` with `change` applied to event `index`, re-signed by the dealer (a
/// dishonest dealer: signatures and chain still verify).
fn resigned(h: &Harness, t: &Transcript, index: usize, change: impl FnOnce(&mut EventBody)) -> Transcript {
    let mut tb =
        claw_protocol::transcript::TranscriptBuilder::with_header(t.events[0].hand_id, h.dealer.id(), "r");
    let mut change = Some(change);
    for (i, e) in t.events.iter().enumerate() {
        let mut body = e.decode_body().unwrap();
        if i == index {
            if let Some(f) = change.take() {
                f(&mut body);
            }
        }
        tb.append(&h.dealer, &body).unwrap();
    }
    tb.transcript().clone()
}

#[test]
fn the_audit_fails_when_any_piece_complaint_or_recovery_byte_changes() {
    let (h, files) = play_with(&[(2, Fault::WithholdHole)], 5, 1);
    let t = files.iter().find(|t| !recovered(t).is_empty()).expect("a recovered hand");
    let r = GamesReplayer::default();
    let opts = AuditOptions { dealer: Some(h.dealer.id()), replayer: Some(&r), ..Default::default() };
    let same = resigned(&h, t, 0, |_| {});
    audit(&same, &opts).expect("re-signed unchanged, the hand audits");
    let at = |ty: &str| types(t).iter().position(|x| x == ty).unwrap();
    let check = |index: usize, what: &str, expect: AuditCheck, change: &dyn Fn(&mut EventBody)| {
        let changed = resigned(&h, t, index, change);
        let e = audit(&changed, &opts).expect_err(what);
        assert_eq!(e.check, expect, "{what}: {e}");
    };
    for byte in [0usize, 31, 32, 95] {
        check(at("blind-pieces"), "a commitment byte", AuditCheck::PlayerSeeds, &|b| {
            if let EventBody::BlindPieces(p) = b {
                p.commitments[byte] ^= 1;
            }
        });
        check(at("blind-pieces"), "a piece byte (signature)", AuditCheck::PlayerSeeds, &|b| {
            if let EventBody::BlindPieces(p) = b {
                p.pieces[byte] ^= 1;
            }
        });
        check(at("blind-recover"), "a dealer recovery share byte", AuditCheck::OpenedCards, &|b| {
            if let EventBody::BlindRecover(r) = b {
                r.dealer_shares[0].share[byte] ^= 1;
            }
        });
        check(at("blind-recovery"), "a recovery share byte", AuditCheck::OpenedCards, &|b| {
            if let EventBody::BlindRecovery(r) = b {
                r.shares[0].share[byte] ^= 1;
            }
        });
    }
    check(at("blind-keys"), "the dealer's piece key", AuditCheck::PlayerSeeds, &|b| {
        if let EventBody::BlindKeys(k) = b {
            k.dealer_key[70] ^= 1;
        }
    });
    // A recovery of another seat (a second withholder) is refused.
    check(at("blind-recover"), "a recovery of an honest seat", AuditCheck::OpenedCards, &|b| {
        if let EventBody::BlindRecover(r) = b {
            r.seat = Seat(0);
        }
    });
}

/// The first hand of a three-seat blind table where seat 1 misbehaves as
/// `fault` says and `kind` happens (audited by [`play_with`]).
fn first_hand_with(fault: Fault, seed: u64, kind: &str) -> (Harness, Transcript) {
    let (h, files) = play_with(&[(1, fault)], seed, 1);
    let t = files
        .into_iter()
        .filter(|t| types(t).iter().any(|x| x == kind))
        .min_by_key(|t| match t.events[0].decode_body().unwrap() {
            EventBody::HandPrepare(p) => p.hand_number,
            _ => u64::MAX,
        })
        .unwrap_or_else(|| panic!("a hand with {kind}"));
    (h, t)
}

#[test]
#[ignore = "the browser's fixtures: CLAW_WRITE_BLIND_FIXTURES=DIR cargo test -p claw-engine --test room write_the_browsers -- --ignored writes them"]
fn write_the_browsers_recovery_fixtures() {
    let (h, recovered) = first_hand_with(Fault::WithholdBoard, 11, "blind-recovery");
    let (_, complained) = first_hand_with(Fault::BadPiece, 23, "blind-complaint");
    let Some(dir) = std::env::var_os("CLAW_WRITE_BLIND_FIXTURES").map(std::path::PathBuf::from) else {
        return;
    };
    for (name, t) in [("blind-recovered", &recovered), ("blind-complained", &complained)] {
        std::fs::write(dir.join(format!("{name}.jsonl")), t.to_jsonl().unwrap()).unwrap();
    }
    std::fs::write(dir.join("blind-recovery-dealer.key.json"), h.dealer.to_key_file().unwrap().as_bytes())
        .unwrap();
}

/// `t` without event `index`, re-chained and re-signed by the dealer.
fn dropped(h: &Harness, t: &Transcript, index: usize) -> Transcript {
    let mut tb =
        claw_protocol::transcript::TranscriptBuilder::with_header(t.events[0].hand_id, h.dealer.id(), "r");
    for (i, e) in t.events.iter().enumerate() {
        if i != index {
            tb.append(&h.dealer, &e.decode_body().unwrap()).unwrap();
        }
    }
    tb.transcript().clone()
}

#[test]
fn a_dealer_leaving_out_a_share_or_a_recovery_fails_the_audit() {
    // Hands no showdown shows: only the end-of-hand check can tell that a
    // card's owner never had every share of it.
    let (h, files) = play_with(&[(0, Fault::Folds), (1, Fault::Folds), (2, Fault::WithholdHole)], 5, 4);
    let r = GamesReplayer::default();
    let opts = AuditOptions { dealer: Some(h.dealer.id()), replayer: Some(&r), ..Default::default() };
    let unshown = |t: &&Transcript| !types(t).iter().any(|x| x == "blind-reveal");
    let bodies =
        |t: &Transcript| -> Vec<EventBody> { t.events.iter().map(|e| e.decode_body().unwrap()).collect() };
    // The last holder's recovery shares: the recovery never completes.
    let t = files
        .iter()
        .filter(unshown)
        .find(|t| !recovered(t).is_empty())
        .expect("a recovered hand, no showdown");
    let last = bodies(t).iter().rposition(|b| matches!(b, EventBody::BlindRecovery(_))).unwrap();
    let e = audit(&dropped(&h, t, last), &opts).expect_err("a recovery left open");
    assert_eq!(e.check, AuditCheck::OpenedCards, "{e}");
    assert!(e.to_string().contains("never completed"), "{e}");
    // A seat's shares of the hole cards (a private request).
    let b = bodies(t);
    let hole = b
        .iter()
        .position(|b| matches!(b, EventBody::BlindRequest(r) if r.positions.iter().all(|p| p.to.is_some())))
        .unwrap();
    let shares = hole + b[hole..].iter().position(|b| matches!(b, EventBody::BlindShares(_))).unwrap();
    let e = audit(&dropped(&h, t, shares), &opts).expect_err("a seat's hole-card shares left out");
    assert_eq!(e.check, AuditCheck::OpenedCards, "{e}");
    assert!(e.to_string().contains("never sent nor recovered"), "{e}");
}

/// A blind Sam Gong room (the banker is always a seated player): bets of
/// 10–50 so that every seat stays above the entry chips for many hands.
fn sam_gong_harness(n: u8) -> Harness {
    blind_harness_for("sam-gong", json!({"min_bet": 10, "max_bet": 50, "entry_chips": 100}), n)
}

/// The chips the hands' rake took (the dealer's commission in Sam Gong).
fn raked(files: &[Transcript]) -> u64 {
    files
        .iter()
        .flat_map(|t| &t.events)
        .filter_map(|e| match e.decode_body().unwrap() {
            EventBody::GameEnd(g) => Some(g.result.rake.0),
            _ => None,
        })
        .sum()
}

/// The positions each `blind-reveal` of `t` shows.
fn blind_reveals(t: &Transcript) -> Vec<Vec<u16>> {
    t.events
        .iter()
        .filter_map(|e| match e.decode_body().unwrap() {
            EventBody::BlindReveal(r) => Some(r.positions),
            _ => None,
        })
        .collect()
}

/// The seat of the hand's first action: Sam Gong's banker bets first.
fn first_actor(t: &Transcript) -> Seat {
    t.events
        .iter()
        .find_map(|e| match e.decode_body().unwrap() {
            EventBody::ActionResult(a) => Some(a.seat),
            EventBody::TimeoutAction(a) => Some(a.seat),
            _ => None,
        })
        .expect("the banker acts")
}

#[test]
fn blind_sam_gong_hands_play_through_the_room_and_every_hand_audits() {
    let (h, files) = play_game_with(sam_gong_harness(4), &[], 41, 5);
    assert!(h.voided.is_empty(), "{:#?}", &h.log[h.log.len().saturating_sub(20)..]);
    assert!(files.len() >= 5, "hands finished: {}", files.len());
    let mut bankers = HashSet::new();
    for t in &files {
        let ty = types(t);
        assert!(ty.iter().any(|x| x == "blind-shuffle"));
        // The simulated players all call: every hand shows all four hands,
        // opened by their owners' shares at the showdown.
        let shown = blind_reveals(t);
        assert_eq!(shown.len(), 1, "one showdown");
        assert_eq!(shown[0].len(), 12, "three cards of each of four seats");
        // Deferred reveal: the audit-reveal publishes the dealer seed and
        // opens no card (the dealer has none to open).
        let reveal = t.events.iter().find_map(|e| match e.decode_body().unwrap() {
            EventBody::AuditReveal(a) => Some(a),
            _ => None,
        });
        assert!(reveal.expect("the deferred reveal").openings.is_empty());
        bankers.insert(first_actor(t));
    }
    assert!(bankers.len() > 1, "the banker rotates: {bankers:?}");
    assert_eq!(h.balances.iter().sum::<u64>() + raked(&files), 4000, "chips are conserved");
}

#[test]
fn blind_sam_gong_withheld_hole_share_is_recovered_and_the_withholder_times_out() {
    let (h, files) = play_game_with(sam_gong_harness(3), &[(2, Fault::WithholdHole)], 43, 3);
    assert!(h.voided.is_empty(), "{:#?}", &h.log[h.log.len().saturating_sub(20)..]);
    assert!(files.len() >= 3);
    assert!(files.iter().any(|t| first_actor(t) == Seat(2)), "the withholder banks a hand");
    for t in &files {
        let r = recovered(t);
        assert!(!r.is_empty() && r.iter().all(|r| r.seat == Seat(2)), "seat 2's shares are recovered");
        let first = types(t).iter().position(|x| x == "blind-recover").unwrap();
        for e in &t.events[first..] {
            if let EventBody::ActionResult(a) = e.decode_body().unwrap() {
                assert_ne!(a.seat, Seat(2), "the withholder never acts itself once it withheld");
            }
        }
        // Its turn is its timeout action: the banker's minimum bet, a
        // player's fold (docs/games/sam-gong.md §3).
        let auto = t.events[first..].iter().find_map(|e| match e.decode_body().unwrap() {
            EventBody::TimeoutAction(x) if x.seat == Seat(2) => Some(x.action),
            _ => None,
        });
        let auto = auto.expect("the withholder's turn is its timeout action");
        if first_actor(t) == Seat(2) {
            assert_eq!(auto, json!({"type": "bet", "amount": 10}));
        } else {
            assert_eq!(auto, json!({"type": "fold"}));
        }
    }
    assert_eq!(h.balances.iter().sum::<u64>() + raked(&files), 3000, "chips are conserved");
}

#[test]
fn blind_sam_gong_showdown_withholder_has_its_hand_opened_by_recovery() {
    let (h, files) = play_game_with(sam_gong_harness(3), &[(0, Fault::WithholdShowdown)], 47, 2);
    assert!(h.voided.is_empty(), "{:#?}", &h.log[h.log.len().saturating_sub(20)..]);
    for t in &files {
        let r = recovered(t);
        assert!(r.iter().any(|r| r.seat == Seat(0) && r.positions.len() == 3), "seat 0's own three cards");
        let shown = blind_reveals(t);
        assert!(shown.iter().flatten().filter(|p| r[0].positions.contains(p)).count() == 3, "and shown");
    }
    assert_eq!(h.balances.iter().sum::<u64>() + raked(&files), 3000, "chips are conserved");
}

#[test]
fn a_blind_sam_gong_dealer_hiding_a_shown_hand_or_naming_another_result_fails_the_audit() {
    let (h, files) = play_game_with(sam_gong_harness(3), &[], 53, 1);
    let t = &files[0];
    let r = GamesReplayer::default();
    let opts = AuditOptions { dealer: Some(h.dealer.id()), replayer: Some(&r), ..Default::default() };
    let check = |index: usize, what: &str, change: &dyn Fn(&mut EventBody)| {
        let changed = resigned(&h, t, index, change);
        audit(&changed, &opts).expect_err(what).check
    };
    let reveal = types(t).iter().position(|x| x == "blind-reveal").unwrap();
    // The banker's hand left out of the showdown: opened publicly, never
    // shown by the rules, as a folded hand a dealer had opened would be.
    let hidden = check(reveal, "a shown hand hidden", &|b| {
        if let EventBody::BlindReveal(r) = b {
            r.positions.truncate(6);
        }
    });
    assert_eq!(hidden, AuditCheck::OpenedCards, "publicly opened, never shown");
    // Another settlement than the opened cards give.
    let end = types(t).iter().position(|x| x == "game-end").unwrap();
    let result = check(end, "another result", &|b| {
        if let EventBody::GameEnd(g) = b {
            g.result.net.swap(0, 1);
        }
    });
    assert_eq!(result, AuditCheck::Replay);
}

#[test]
fn blind_rooms_offer_holdem_and_sam_gong_and_refuse_the_others_with_their_reason() {
    let blind = |game: &str, settings: Value| {
        let mut cfg = RoomConfig::new("r", game);
        cfg.deal = DealMode::Blind;
        cfg.entropy = EntropyMode::Dealer;
        cfg.settings = settings;
        if game == "blackjack" {
            cfg.house_bankroll = claw_protocol::Chips(1_000_000);
        }
        cfg.validate().map(|_| ()).map_err(|e| e.to_string())
    };
    assert_eq!(blind("texas-holdem", Value::Null), Ok(()));
    assert_eq!(blind("sam-gong", Value::Null), Ok(()));
    for game in ["blackjack", "dou-di-zhu", "guandan"] {
        let e = blind(game, Value::Null).expect_err(game);
        assert!(e.contains(&format!("deal = \"blind\" is not offered for {game}")), "{e}");
    }
    let e = blind("sam-gong", json!({"tutorial": true})).expect_err("a tutorial table");
    assert!(e.contains("cannot deal a scripted deck"), "{e}");
}

#[test]
fn a_folded_sam_gong_hand_is_never_opened_by_anyone() {
    let (h, files) = play_game_with(sam_gong_harness(3), &[(1, Fault::Folds)], 59, 3);
    assert!(h.voided.is_empty(), "{:#?}", &h.log[h.log.len().saturating_sub(20)..]);
    let mut folded_hands = 0;
    for t in &files {
        let body = |e: &EventEnvelope| e.decode_body().unwrap();
        // Seat 1's three hole positions, from the hole request.
        let hole: Vec<u16> = t
            .events
            .iter()
            .filter_map(|e| match body(e) {
                EventBody::BlindRequest(r) => Some(r.positions),
                _ => None,
            })
            .flatten()
            .filter(|p| p.to == Some(Seat(1)))
            .map(|p| p.position)
            .collect();
        assert_eq!(hole.len(), 3);
        if first_actor(t) == Seat(1) {
            continue; // the banker bets, it cannot fold
        }
        folded_hands += 1;
        for e in &t.events {
            match body(e) {
                EventBody::BlindRequest(r) => {
                    assert!(r.positions.iter().all(|p| p.to.is_some() || !hole.contains(&p.position)))
                }
                EventBody::BlindShares(x) if x.seat == Seat(1) => {
                    assert!(
                        x.shares.iter().all(|s| !hole.contains(&s.position)),
                        "its own shares never leave"
                    )
                }
                EventBody::BlindReveal(r) => assert!(r.positions.iter().all(|p| !hole.contains(p))),
                EventBody::AuditReveal(a) => assert!(a.openings.is_empty()),
                _ => {}
            }
        }
    }
    assert!(folded_hands >= 1, "seat 1 folded a hand");
    assert_eq!(h.balances.iter().sum::<u64>() + raked(&files), 3000, "chips are conserved");
}
