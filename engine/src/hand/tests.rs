use std::sync::Arc;

use claw_games::audit::GamesReplayer;
use claw_games::DynGame;
use claw_protocol::audit::{audit, AuditCheck, AuditOptions};
use claw_protocol::messages::{
    ActionRejectCode, EntropyMode, EventBody, PlayerSeed, RawJson, RevealPolicy, SignedAction,
};
use claw_protocol::{HandId, Identity, Seat, Seed};
use rand::rngs::OsRng;
use serde_json::{json, Value};

use super::*;
use crate::testgame::high_card;

/// The one replayer of the games crate, knowing the test game.
fn replayer(g: Arc<dyn DynGame>) -> GamesReplayer {
    GamesReplayer::default().with_game(g)
}

fn spec(entropy: EntropyMode, reveal: RevealPolicy) -> Arc<GameSpec> {
    let g = high_card();
    let settings = g.normalize_settings(&Value::Null).unwrap();
    Arc::new(GameSpec::new("room1", g, settings, entropy, reveal, 2000).unwrap())
}

struct Table {
    dealer: Arc<Identity>,
    players: Vec<Identity>,
}

impl Table {
    fn new(n: u8) -> Table {
        Table {
            dealer: Arc::new(Identity::from_seed([200; 32])),
            players: (0..n).map(|i| Identity::from_seed([i + 1; 32])).collect(),
        }
    }

    fn seats(&self, balance: u64) -> Vec<HandSeat> {
        self.players
            .iter()
            .map(|p| HandSeat {
                id: p.id(),
                encryption_key: p.encryption_key(),
                balance: Chips(balance),
                commission: Chips::ZERO,
                key: self.dealer.shared_key(&p.encryption_key()).unwrap(),
                house_ai: false,
            })
            .collect()
    }
}

fn action(p: &Identity, hand: HandId, seq: u32, a: Value) -> SignedAction {
    SignedAction::sign(p, hand, seq, RawJson::from_value(&a).unwrap())
}

/// Plays a whole hand with `choices[seat]` (bet/fold) and returns it.
fn play(t: &Table, spec: Arc<GameSpec>, choices: &[&str]) -> (Hand, Vec<EventEnvelope>, HandEnd) {
    let mut rng = OsRng;
    let (mut hand, prep) = Hand::prepare(
        spec,
        t.dealer.clone(),
        t.seats(100),
        Carried::default(),
        0,
        HandId::random(&mut rng),
        &mut rng,
    )
    .unwrap();
    let mut events = vec![prep];
    if hand.collecting_seeds() {
        for (i, p) in t.players.iter().enumerate() {
            let s = PlayerSeed::sign(p, hand.hand_id(), Seed::random(&mut rng));
            hand.add_seed(Seat(i as u8), &s).unwrap();
        }
        assert!(hand.seeds_complete());
    }
    let step = hand.start(&mut rng).unwrap();
    assert_eq!(step.moves.len(), t.players.len(), "one ante each");
    let mut c = hand.commit(&mut rng, 0).unwrap();
    events.extend(c.events);
    loop {
        if let Some(end) = c.end {
            return (hand, events, end);
        }
        let turn = c.your_turn.expect("someone to act");
        let i = turn.seat.index();
        let kind = choices[i];
        assert!(turn.actions.iter().any(|o| o.action["type"] == kind));
        let step = hand
            .act(&t.players[i].id(), action(&t.players[i], hand.hand_id(), turn.seq, json!({"type": kind})))
            .unwrap();
        let debits = step.moves.iter().filter(|m| m.op == claw_protocol::messages::ChipOp::Debit).count();
        assert_eq!(debits, usize::from(kind == "bet"));
        c = hand.commit(&mut rng, 0).unwrap();
        events.extend(c.events);
    }
}

fn audit_ok(t: &Table, hand: &Hand, viewer: Option<&Identity>) -> claw_protocol::audit::AuditReport {
    let r = replayer(high_card());
    let opts = AuditOptions {
        dealer: Some(t.dealer.id()),
        viewer,
        my_seed: None,
        allow_pending_reveal: false,
        replayer: Some(&r),
        commission: None,
    };
    audit(hand.transcript(), &opts).unwrap()
}

#[test]
fn a_full_hand_passes_every_audit_check() {
    let t = Table::new(3);
    let (hand, events, end) = play(&t, spec(EntropyMode::Joint, RevealPolicy::Full), &["bet", "fold", "bet"]);
    assert!(hand.is_over());
    assert_eq!(events.len(), hand.transcript().events.len());
    let report = audit_ok(&t, &hand, Some(&t.players[0]));
    assert!(report.complete(), "{:?}", report.skipped);
    assert_eq!(report.passed.len(), AuditCheck::ALL.len());
    assert_eq!(report.hand.my_cards.len(), 1);
    assert_eq!(report.hand.player_seeds.iter().flatten().count(), 3);
    assert_eq!(end.result.net.iter().sum::<i64>(), 0);
    assert!(end.result.winners.len() == 1);
    // The transcript round-trips through JSON lines and still audits.
    let text = hand.transcript().to_jsonl().unwrap();
    let r = replayer(high_card());
    let opts = AuditOptions { dealer: Some(t.dealer.id()), replayer: Some(&r), ..Default::default() };
    claw_protocol::audit::audit_jsonl(&text, &opts).unwrap();
}

#[test]
fn dealer_entropy_and_everyone_folding() {
    let t = Table::new(2);
    let (hand, _, end) = play(&t, spec(EntropyMode::Dealer, RevealPolicy::Full), &["fold", "fold"]);
    assert!(end.result.winners.is_empty());
    assert!(end.result.net.iter().all(|n| *n == 0));
    audit_ok(&t, &hand, None);
}

#[test]
fn sealed_cards_open_only_for_their_owner() {
    let t = Table::new(2);
    let (hand, _, _) = play(&t, spec(EntropyMode::Dealer, RevealPolicy::Full), &["bet", "bet"]);
    let other = Identity::from_seed([99; 32]);
    let d = hand
        .transcript()
        .events
        .iter()
        .find_map(|e| match e.decode_body().unwrap() {
            EventBody::PhaseDeal(d) => Some(d),
            _ => None,
        })
        .expect("the hole deal");
    let sealed = d.cards[0].sealed.clone().unwrap();
    let k = other.shared_key(&t.dealer.encryption_key()).unwrap();
    assert!(k.open(&hand.hand_id(), &sealed).is_err());
    let mine = t.players[0].shared_key(&t.dealer.encryption_key()).unwrap();
    assert_eq!(mine.open(&hand.hand_id(), &sealed).unwrap().position, 0);
    // Nothing in a mid-hand event carries a hidden card in clear: the burn
    // (position 2) has neither opening nor box.
    assert!(d.cards[2].opening.is_none() && d.cards[2].sealed.is_none());
}

#[test]
fn deferred_reveal_holds_back_folded_cards_and_seeds() {
    let t = Table::new(3);
    let (mut hand, _, end) =
        play(&t, spec(EntropyMode::Joint, RevealPolicy::Deferred), &["bet", "fold", "bet"]);
    assert!(end.reveal_pending);
    let last = hand.transcript().events.last().unwrap().decode_body().unwrap();
    let EventBody::GameEnd(g) = last else { panic!("game-end last") };
    assert!(g.dealer_seed.is_none());
    // Seat 1 folded: its hole card (position 1) is not opened at game end.
    assert!(g.openings.iter().all(|o| o.position != 1));
    let r = replayer(high_card());
    let strict = AuditOptions { dealer: Some(t.dealer.id()), replayer: Some(&r), ..Default::default() };
    assert_eq!(audit(hand.transcript(), &strict).unwrap_err().check, AuditCheck::RevealComplete);
    let lenient = AuditOptions { allow_pending_reveal: true, ..strict };
    assert!(!audit(hand.transcript(), &lenient).unwrap().complete());
    let env = hand.audit_reveal().unwrap().expect("an audit-reveal");
    assert!(matches!(env.decode_body().unwrap(), EventBody::AuditReveal(_)));
    assert!(hand.audit_reveal().unwrap().is_none(), "only once");
    assert!(audit(hand.transcript(), &strict).unwrap().complete());
}

/// A hand prepared with dealer-only entropy and policy full, 100 chips a seat.
fn dealer_entropy_hand(t: &Table, rng: &mut OsRng) -> Hand {
    let hand_id = HandId::random(rng);
    let spec = spec(EntropyMode::Dealer, RevealPolicy::Full);
    Hand::prepare(spec, t.dealer.clone(), t.seats(100), Carried::default(), 0, hand_id, rng).unwrap().0
}

#[test]
fn actions_are_checked_before_they_touch_the_game() {
    let t = Table::new(3);
    let mut rng = OsRng;
    let mut hand = dealer_entropy_hand(&t, &mut rng);
    let h = hand.hand_id();
    let p0 = &t.players[0];
    let bet = json!({"type": "bet"});
    // Before start: nothing is accepted.
    assert_eq!(
        hand.act(&p0.id(), action(p0, h, 0, bet.clone())).unwrap_err().code,
        ActionRejectCode::NotYourTurn
    );
    hand.start(&mut rng).unwrap();
    // A step waiting for its chips: nothing else is accepted.
    assert_eq!(
        hand.act(&p0.id(), action(p0, h, 0, bet.clone())).unwrap_err().code,
        ActionRejectCode::NotYourTurn
    );
    hand.commit(&mut rng, 0).unwrap();
    let code =
        |hand: &mut Hand, who: &Identity, signed: SignedAction| hand.act(&who.id(), signed).unwrap_err().code;
    assert_eq!(code(&mut hand, p0, action(p0, HandId([1; 16]), 0, bet.clone())), ActionRejectCode::WrongHand);
    let stranger = Identity::from_seed([77; 32]);
    assert_eq!(code(&mut hand, &stranger, action(&stranger, h, 0, bet.clone())), ActionRejectCode::NotInHand);
    let p1 = &t.players[1];
    assert_eq!(code(&mut hand, p1, action(p1, h, 0, bet.clone())), ActionRejectCode::NotYourTurn);
    // Seat 1 signs an action and claims to be seat 0: the signature is checked
    // against the connection's identity.
    assert_eq!(code(&mut hand, p0, action(p1, h, 0, bet.clone())), ActionRejectCode::BadSignature);
    assert_eq!(code(&mut hand, p0, action(p0, h, 0, json!({"type": "raise"}))), ActionRejectCode::Malformed);
    // A good action, rolled back (its debit was refused), can be retried.
    let step = hand.act(&p0.id(), action(p0, h, 0, bet.clone())).unwrap();
    assert_eq!(step.moves.len(), 1);
    hand.rollback().unwrap();
    assert_eq!(hand.to_act(), Some(Seat(0)));
    hand.act(&p0.id(), action(p0, h, 0, json!({"type": "fold"}))).unwrap();
    let c = hand.commit(&mut rng, 0).unwrap();
    assert_eq!(c.your_turn.as_ref().unwrap().seat, Seat(1));
    // seq must grow per player.
    hand.act(&p1.id(), action(p1, h, 5, bet.clone())).unwrap();
    let c = hand.commit(&mut rng, 7).unwrap();
    assert_eq!(c.your_turn.as_ref().unwrap().deadline_ms, 7);
    assert_eq!(hand.remaining(Seat(1)), Chips(97));
    // Timeout: the game's auto action (fold) for seat 2 ends the hand.
    let step = hand.auto_act(Seat(2), claw_protocol::messages::TimeoutReason::Timeout).unwrap();
    assert!(step.moves.iter().any(|m| m.reason == "pot"));
    let c = hand.commit(&mut rng, 0).unwrap();
    assert!(c.end.is_some());
    assert!(c.events.iter().any(|e| matches!(e.decode_body().unwrap(), EventBody::TimeoutAction(_))));
    assert_eq!(code(&mut hand, p1, action(p1, h, 6, bet)), ActionRejectCode::HandOver);
    audit_ok(&t, &hand, None);
}

/// One player action, from its signed text to the committed step: decoded
/// into the game's action once and checked by the rules once (the test game
/// counts both on this thread). A refused one is decoded and checked once too.
#[test]
fn one_action_is_decoded_once_and_checked_once() {
    let t = Table::new(3);
    let mut rng = OsRng;
    let mut hand = dealer_entropy_hand(&t, &mut rng);
    let h = hand.hand_id();
    hand.start(&mut rng).unwrap();
    hand.commit(&mut rng, 0).unwrap();
    let p0 = &t.players[0];
    let signed = action(p0, h, 0, json!({"type": "bet"}));
    crate::testgame::take_counts();
    hand.act(&p0.id(), signed).unwrap();
    let counts = crate::testgame::take_counts();
    assert_eq!((counts.decoded, counts.checked), (1, 1), "act: {counts:?}");
    hand.commit(&mut rng, 0).unwrap();
    crate::testgame::take_counts();
    let p1 = &t.players[1];
    let next = action(p1, h, 0, json!({"type": "bet"}));
    assert_eq!(
        hand.act(&p0.id(), action(p0, h, 1, json!({"type": "bet"}))).unwrap_err().code,
        ActionRejectCode::NotYourTurn
    );
    assert_eq!(crate::testgame::take_counts().decoded, 0, "out of turn: refused before decoding");
    hand.act(&p1.id(), next).unwrap();
    let counts = crate::testgame::take_counts();
    assert_eq!((counts.decoded, counts.checked), (1, 1), "second act: {counts:?}");
}

#[test]
fn seeds_are_verified() {
    let t = Table::new(2);
    let mut rng = OsRng;
    let (mut hand, _) = Hand::prepare(
        spec(EntropyMode::Joint, RevealPolicy::Full),
        t.dealer.clone(),
        t.seats(100),
        Carried::default(),
        0,
        HandId::random(&mut rng),
        &mut rng,
    )
    .unwrap();
    let h = hand.hand_id();
    let s = |p: &Identity, h| PlayerSeed::sign(p, h, Seed([5; 32]));
    assert!(matches!(
        hand.add_seed(Seat(0), &s(&t.players[0], HandId([0; 16]))),
        Err(SeedError::WrongHand { .. })
    ));
    assert_eq!(hand.add_seed(Seat(0), &s(&t.players[1], h)), Err(SeedError::BadSignature));
    let mut forged = s(&t.players[0], h);
    forged.from = Some(t.players[1].id());
    assert_eq!(hand.add_seed(Seat(0), &forged), Err(SeedError::BadSignature));
    hand.add_seed(Seat(0), &s(&t.players[0], h)).unwrap();
    assert_eq!(hand.add_seed(Seat(0), &s(&t.players[0], h)), Err(SeedError::Duplicate));
    assert!(!hand.seeds_complete());
    // Seat 1 stays silent: the hand starts without its seed.
    hand.start(&mut rng).unwrap();
    assert_eq!(hand.add_seed(Seat(1), &s(&t.players[1], h)), Err(SeedError::NotCollecting));
    let c = hand.commit(&mut rng, 0).unwrap();
    let EventBody::GameStart(g) = c.events[0].decode_body().unwrap() else { panic!() };
    assert_eq!(g.player_seeds.len(), 1);
}

#[test]
fn every_registered_game_deals_an_auditable_hand() {
    let mut rng = OsRng;
    for g in claw_games::registry::all() {
        let meta = g.meta();
        let n = meta.min_players.max(2).min(meta.max_players);
        let t = Table::new(n);
        let settings = g.normalize_settings(&Value::Null).unwrap();
        let spec = Arc::new(
            GameSpec::new("r", g.clone(), settings, EntropyMode::Joint, RevealPolicy::Full, 2000).unwrap(),
        );
        let (mut hand, _) = Hand::prepare(
            spec,
            t.dealer.clone(),
            t.seats(10_000),
            Carried::default(),
            0,
            HandId::random(&mut rng),
            &mut rng,
        )
        .unwrap();
        hand.start(&mut rng).unwrap();
        let mut c = hand.commit(&mut rng, 0).unwrap();
        let mut steps = 0;
        let mut seqs = vec![0u32; usize::from(n)];
        while c.end.is_none() {
            steps += 1;
            assert!(steps < 2000, "{}: hand does not end", meta.name);
            let turn = c.your_turn.expect("a player to act");
            let i = turn.seat.index();
            let choice =
                turn.actions.iter().find(|o| o.affordable).expect("an affordable action").action.clone();
            let signed = action(&t.players[i], hand.hand_id(), seqs[i], choice);
            seqs[i] += 1;
            hand.act(&t.players[i].id(), signed).unwrap_or_else(|e| panic!("{}: {e:?}", meta.name));
            c = hand.commit(&mut rng, 0).unwrap();
        }
        let r = replayer(g.clone());
        let opts = AuditOptions { dealer: Some(t.dealer.id()), replayer: Some(&r), ..Default::default() };
        let report = audit(hand.transcript(), &opts).unwrap_or_else(|e| panic!("{}: {e}", meta.name));
        assert!(report.complete(), "{}", meta.name);
    }
}
