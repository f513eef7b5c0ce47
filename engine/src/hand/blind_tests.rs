//! Blind tables (SPEC.md §9.7): whole Hold'em hands dealt by the engine
//! with players simulated by the real mental-poker prover, checked against
//! the true deck; and the attacks of issue 35 on the engine's checks.

use std::collections::HashSet;
use std::sync::Arc;

use claw_games::audit::GamesReplayer;
use claw_games::runner::{deck_view_fill, replay, RecordedAction};
use claw_games::DynGame;
use claw_protocol::audit::{audit, AuditCheck, AuditError, AuditOptions};
use claw_protocol::hand::{CardFace, DealTo};
use claw_protocol::mental::{
    shuffle, verify_shuffle, Ciphertext, Deck, JointKey, MentalError, SecretShare, ShuffleProof,
};
use claw_protocol::messages::{
    BlindKeyMsg, BlindSharesMsg, BlindShuffleMsg, EntropyMode, EventBody, PositionShare, RevealPolicy,
    SignedAction,
};
use claw_protocol::transcript::{Transcript, TranscriptBuilder};
use claw_protocol::{CardId, HandId, Identity, Seat};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha20Rng;
use serde_json::{json, Value};

use super::*;

fn holdem() -> Arc<dyn DynGame> {
    claw_games::registry::get("texas-holdem").unwrap()
}

fn blind_spec() -> Arc<GameSpec> {
    let g = holdem();
    let settings = g.normalize_settings(&json!({"small_blind": 1, "big_blind": 2})).unwrap();
    let spec =
        GameSpec::new("blind-room", g, settings, EntropyMode::Dealer, RevealPolicy::Full, 2000).unwrap();
    Arc::new(spec.blind().unwrap())
}

/// How a simulated table misbehaves.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum ShuffleAttack {
    DropCard,
    DuplicateCard,
    ReplaceCard,
    ReusePreviousDeck,
    FlipProofByte(usize),
    OtherPlayersSignature,
}

/// A hand with `n` simulated players, each holding its own secret.
struct Sim {
    hand: Hand,
    hand_id: HandId,
    dealer: Arc<Identity>,
    players: Vec<Identity>,
    secrets: Vec<SecretShare>,
    key: Option<JointKey>,
    deck: Option<Deck>,
    events: Vec<EventEnvelope>,
    /// (seat, position) shares each simulated player has sent.
    given: HashSet<(u8, u16)>,
    rng: ChaCha20Rng,
}

impl Sim {
    fn new(n: u8, seed: u64) -> Sim {
        let mut rng = ChaCha20Rng::seed_from_u64(seed);
        let dealer = Arc::new(Identity::from_seed([200; 32]));
        let players: Vec<Identity> = (0..n).map(|i| Identity::from_seed([i + 1; 32])).collect();
        let seats = players
            .iter()
            .map(|p| HandSeat {
                id: p.id(),
                encryption_key: p.encryption_key(),
                balance: Chips(200),
                commission: Chips::ZERO,
                key: dealer.shared_key(&p.encryption_key()).unwrap(),
                house_ai: false,
            })
            .collect();
        let hand_id = HandId::random(&mut rng);
        let (hand, env) =
            Hand::prepare(blind_spec(), Arc::clone(&dealer), seats, Carried::default(), 0, hand_id, &mut rng)
                .unwrap();
        let secrets = (0..n).map(|_| SecretShare::generate(&mut rng)).collect();
        Sim {
            hand,
            hand_id,
            dealer,
            players,
            secrets,
            key: None,
            deck: None,
            events: vec![env],
            given: HashSet::new(),
            rng,
        }
    }

    fn key_msg(&mut self, seat: u8) -> BlindKeyMsg {
        let share = self.secrets[usize::from(seat)].key_share(&self.hand_id, Seat(seat), &mut self.rng);
        BlindKeyMsg::sign(&self.players[usize::from(seat)], self.hand_id, Seat(seat), &share)
    }

    /// Every seat sends its key share; the dealer closes the key phase.
    fn keys(&mut self) {
        for s in 0..self.players.len() as u8 {
            let msg = self.key_msg(s);
            self.hand.add_blind_key(Seat(s), &msg).unwrap();
        }
        let env = self.hand.close_blind_keys().unwrap();
        // Every player recomputes the joint key from the published shares.
        let Ok(EventBody::BlindKeys(k)) = env.decode_body() else { panic!("blind-keys expected") };
        let list: Vec<_> = k
            .keys
            .iter()
            .map(|k| (k.seat, claw_protocol::mental::KeyShare::from_bytes(&k.key_share).unwrap()))
            .collect();
        self.key = Some(JointKey::combine(&self.hand_id, &list).unwrap());
        let declared = holdem().create_deck(&self.hand.spec.settings).unwrap();
        self.deck = Some(Deck::initial(&declared).unwrap());
        self.events.push(env);
        // Every seat splits its secret among the others and the dealer.
        let keys: Vec<_> = list.iter().map(|(_, k)| *k).collect();
        let dealer_key = claw_protocol::mental::KeyShare::from_bytes(&k.dealer_key).unwrap();
        for s in 0..self.players.len() as u8 {
            let msg = claw_protocol::messages::BlindPiecesMsg::split(
                &self.players[usize::from(s)],
                self.hand_id,
                Seat(s),
                &self.secrets[usize::from(s)],
                &keys,
                &dealer_key,
                &mut self.rng,
            );
            let env = self.hand.add_blind_pieces(Seat(s), &msg).unwrap();
            self.events.push(env);
        }
    }

    /// The honest shuffle of `seat` over the current deck.
    fn honest_shuffle(&mut self, seat: u8) -> (Deck, ShuffleProof) {
        let key = self.key.clone().unwrap();
        let input = self.deck.clone().unwrap();
        shuffle(&self.hand_id, Seat(seat), &key, &input, &mut self.rng)
    }

    /// Every seat shuffles in turn; `attack` makes one seat cheat. Returns
    /// the refusal the dealer gave the cheat.
    fn shuffles(&mut self, attack: Option<(u8, ShuffleAttack)>) -> Option<BlindError> {
        let mut refused = None;
        while let Some(seat) = self.hand.blind_shuffler() {
            let (out, proof) = self.honest_shuffle(seat.0);
            let id = &self.players[seat.index()];
            let msg = match attack {
                Some((s, a)) if s == seat.0 => self.cheat(seat, a, &out, &proof),
                _ => BlindShuffleMsg::sign(id, self.hand_id, seat, &out, &proof),
            };
            let (env, why) = self.hand.add_blind_shuffle(seat, &msg).unwrap();
            match env.decode_body().unwrap() {
                EventBody::BlindShuffle(b) => {
                    // Every player verifies every shuffle it is shown.
                    let new = Deck::from_bytes(&b.deck).unwrap();
                    let proof = ShuffleProof::from_bytes(new.len(), &b.proof).unwrap();
                    let input = self.deck.clone().unwrap();
                    verify_shuffle(&self.hand_id, b.seat, self.key.as_ref().unwrap(), &input, &new, &proof)
                        .unwrap();
                    self.deck = Some(new);
                }
                EventBody::BlindSkip(s) => assert_eq!(s.seat, seat),
                other => panic!("unexpected {}", other.type_name()),
            }
            refused = refused.or(why);
            self.events.push(env);
        }
        refused
    }

    fn cheat(
        &mut self,
        seat: Seat,
        attack: ShuffleAttack,
        out: &Deck,
        proof: &ShuffleProof,
    ) -> BlindShuffleMsg {
        let id = &self.players[seat.index()];
        let mut cards = out.cards().to_vec();
        let mut proof_bytes = proof.to_bytes();
        let input = self.deck.clone().unwrap();
        match attack {
            ShuffleAttack::DropCard => {
                cards.pop();
            }
            ShuffleAttack::DuplicateCard => cards[1] = cards[0],
            ShuffleAttack::ReplaceCard => {
                let key = self.key.clone().unwrap();
                // A card of the deck masked afresh: the shuffler's own choice.
                let card = holdem().create_deck(&self.hand.spec.settings).unwrap()[0];
                cards[0] = Ciphertext::mask(card, &key, &mut self.rng);
            }
            ShuffleAttack::ReusePreviousDeck => cards = input.cards().to_vec(),
            ShuffleAttack::FlipProofByte(i) => {
                let at = i % proof_bytes.len();
                proof_bytes[at] ^= 1;
            }
            ShuffleAttack::OtherPlayersSignature => {
                let other = &self.players[(seat.index() + 1) % self.players.len()];
                return BlindShuffleMsg::sign(other, self.hand_id, seat, out, proof);
            }
        }
        let deck: Vec<u8> = cards.iter().flat_map(|c| c.to_bytes()).collect();
        let body =
            claw_protocol::messages::blind_shuffle_signing_body(&self.hand_id, seat, &deck, &proof_bytes);
        let sig = id.sign(claw_protocol::sign::Purpose::BlindShuffle, &body);
        BlindShuffleMsg { hand_id: self.hand_id, deck, proof: proof_bytes, sig }
    }

    /// The shares `seat` owes for the last `blind-request` it was shown.
    fn owed_shares(&mut self, seat: u8) -> BlindSharesMsg {
        let req = self
            .events
            .iter()
            .rev()
            .find_map(|e| match e.decode_body() {
                Ok(EventBody::BlindRequest(r)) => Some(r),
                _ => None,
            })
            .expect("a blind-request");
        let mut shares = Vec::new();
        for r in req.positions {
            if r.to == Some(Seat(seat)) || self.given.contains(&(seat, r.position)) {
                continue;
            }
            shares.push(self.share(seat, r.position));
        }
        BlindSharesMsg { hand_id: self.hand_id, shares }
    }

    fn share(&mut self, seat: u8, position: u16) -> PositionShare {
        let ct = *self.deck.as_ref().unwrap().get(position).unwrap();
        let d = self.secrets[usize::from(seat)].decryption_share(
            &self.hand_id,
            Seat(seat),
            position,
            &ct,
            &mut self.rng,
        );
        PositionShare { position, share: d.to_bytes().to_vec() }
    }

    fn send_shares(&mut self, seat: u8, msg: &BlindSharesMsg) -> BlindProgress {
        let p = self.hand.add_blind_shares(Seat(seat), msg, 0).unwrap();
        for s in &msg.shares {
            self.given.insert((seat, s.position));
        }
        p
    }

    /// Plays the hand to its end: commits, answers every share request,
    /// acts with `choose` (a pick among the valid actions).
    fn play(&mut self, mut choose: impl FnMut(&mut ChaCha20Rng, &[Value]) -> usize) -> HandEnd {
        let _ = self.hand.start(&mut self.rng).unwrap();
        let mut committed = true;
        for _ in 0..10_000 {
            if committed {
                let c = self.hand.commit(&mut self.rng, 0).unwrap();
                self.events.extend(c.events);
                if let Some(end) = c.end {
                    return end;
                }
                committed = false;
                if c.awaits_shares {
                    continue;
                }
            }
            if self.hand.awaits_shares() {
                for seat in self.hand.blind_owing() {
                    let msg = self.owed_shares(seat.0);
                    match self.send_shares(seat.0, &msg) {
                        BlindProgress::Waiting(e) | BlindProgress::Turn(e, _) => self.events.push(e),
                        BlindProgress::Step(e, _) => {
                            self.events.push(e);
                            committed = true;
                        }
                        BlindProgress::Broken(e) => panic!("broken: {e}"),
                    }
                }
                continue;
            }
            let seat = self.hand.to_act().expect("someone to act");
            let turn = self.hand.your_turn(seat, 0);
            let options: Vec<Value> = turn.actions.iter().map(|a| a.action.clone()).collect();
            let pick = choose(&mut self.rng, &options);
            let raw = RawJson::from_value(&options[pick]).unwrap();
            let signed = SignedAction::sign(&self.players[seat.index()], self.hand_id, turn.seq, raw);
            let id = self.players[seat.index()].id();
            self.hand.act(&id, signed).unwrap();
            committed = true;
        }
        panic!("the hand did not end");
    }

    /// Test-only: every position opened with every secret (what nobody at
    /// a real table can do).
    fn true_deck(&mut self) -> Vec<CardId> {
        let key = self.key.clone().unwrap();
        let declared = holdem().create_deck(&self.hand.spec.settings).unwrap();
        let table = claw_protocol::mental::CardTable::new(&declared);
        let deck = self.deck.clone().unwrap();
        (0..deck.len() as u16)
            .map(|p| {
                let ct = *deck.get(p).unwrap();
                let shares: Vec<_> = (0..self.players.len() as u8)
                    .map(|s| {
                        let d = self.secrets[usize::from(s)].decryption_share(
                            &self.hand_id,
                            Seat(s),
                            p,
                            &ct,
                            &mut self.rng,
                        );
                        (Seat(s), d)
                    })
                    .collect();
                key.open(&self.hand_id, p, &ct, &shares, &table).unwrap()
            })
            .collect()
    }

    /// The actions of the transcript, as the replay takes them.
    fn actions(&self) -> Vec<RecordedAction> {
        self.events
            .iter()
            .filter_map(|e| match e.decode_body() {
                Ok(EventBody::ActionResult(a)) => {
                    Some(RecordedAction { seat: a.seat, action: a.action.to_value().unwrap() })
                }
                Ok(EventBody::TimeoutAction(t)) => Some(RecordedAction { seat: t.seat, action: t.action }),
                _ => None,
            })
            .collect()
    }
}

/// Mostly calls and checks, sometimes a fold or a raise.
fn mixed(rng: &mut ChaCha20Rng, options: &[Value]) -> usize {
    let find = |t: &str| options.iter().position(|o| o["type"] == t);
    let r: u32 = rng.gen_range(0..10);
    match r {
        0 => find("fold").unwrap_or(0),
        1 | 2 => find("raise").or(find("bet")).or(find("call")).or(find("check")).unwrap_or(0),
        _ => find("check").or(find("call")).unwrap_or(0),
    }
}

/// Never folds: every hand reaches the showdown.
fn calling(_: &mut ChaCha20Rng, options: &[Value]) -> usize {
    options
        .iter()
        .position(|o| o["type"] == "check")
        .or(options.iter().position(|o| o["type"] == "call"))
        .unwrap_or(0)
}

/// Checks a finished blind hand against the true deck: the result is the
/// one the rules give over the true order, every opened card is the true
/// card, each owner opens its own hole cards, and the replay over the deck
/// view reproduces the engine's events.
fn check_against_truth(sim: &mut Sim, end: &HandEnd) {
    // The offline auditor passes the transcript (every key, shuffle, share
    // and opened card, then the replay over the deck view and the chips).
    let report = audit_blind(sim.hand.transcript(), &sim.dealer).unwrap_or_else(|e| panic!("audit: {e}"));
    assert!(report.complete());
    assert_eq!(report.passed, AuditCheck::ALL.to_vec());
    assert_eq!(report.hand.result, end.result);
    let truth = sim.true_deck();
    let g = holdem();
    let infos: Vec<PlayerInfo> =
        sim.players.iter().map(|p| PlayerInfo { id: p.id(), balance: Chips(200) }).collect();
    let actions = sim.actions();
    let real =
        replay(g.as_ref(), &sim.hand.spec.settings, &infos, &Value::Null, truth.clone(), &actions).unwrap();
    assert_eq!(real.result, end.result, "the blind result is the true deck's");
    let b = sim.hand.blind.as_ref().unwrap();
    for (p, v) in b.view().iter().enumerate() {
        if let Some(c) = v {
            assert_eq!(*c, truth[p], "opened position {p}");
        }
    }
    // The auditor's replay: over the deck view, the same events and result.
    let declared = g.create_deck(&sim.hand.spec.settings).unwrap();
    let view_deck = deck_view_fill(&declared, b.view()).unwrap();
    let over_view =
        replay(g.as_ref(), &sim.hand.spec.settings, &infos, &Value::Null, view_deck, &actions).unwrap();
    assert_eq!(over_view.result, end.result);
    let blank = |events: &[HandEvent]| -> Vec<String> {
        events
            .iter()
            .map(|e| match e {
                HandEvent::Dealt { phase, cards } => {
                    let c: Vec<String> = cards
                        .iter()
                        .map(|c| {
                            let card = b.opened(c.position).map_or("??".into(), |c| c.to_string());
                            format!("{}:{:?}:{:?}:{card}", c.position, c.target, c.face)
                        })
                        .collect();
                    format!("deal {phase} {}", c.join(","))
                }
                other => format!("{other:?}"),
            })
            .collect()
    };
    assert_eq!(blank(&over_view.events), blank(sim.hand.game_events()));
    // Each owner opens its own hole cards: the others' public shares from
    // the transcript, its own made locally.
    let mut public: Vec<(u16, Seat, Vec<u8>)> = Vec::new();
    for e in &sim.events {
        if let Ok(EventBody::BlindShares(s)) = e.decode_body() {
            public.extend(s.shares.into_iter().map(|x| (x.position, s.seat, x.share)));
        }
    }
    let deck = sim.deck.clone().unwrap();
    let key = sim.key.clone().unwrap();
    let table = claw_protocol::mental::CardTable::new(&declared);
    for d in sim.hand.running().unwrap().runner.dealt() {
        let DealTo::Player(owner) = d.target else { continue };
        let ct = *deck.get(d.position).unwrap();
        let mut shares: Vec<(Seat, claw_protocol::mental::DecryptionShare)> = public
            .iter()
            .filter(|(p, s, _)| *p == d.position && *s != owner)
            .map(|(_, s, b)| (*s, claw_protocol::mental::DecryptionShare::from_bytes(b).unwrap()))
            .collect();
        let own =
            sim.secrets[owner.index()].decryption_share(&sim.hand_id, owner, d.position, &ct, &mut sim.rng);
        shares.push((owner, own));
        assert_eq!(
            key.open(&sim.hand_id, d.position, &ct, &shares, &table).unwrap(),
            truth[usize::from(d.position)]
        );
    }
}

#[test]
fn blind_holdem_hands_play_to_the_true_result() {
    for (i, n) in [2u8, 3, 6].into_iter().enumerate() {
        for k in 0..3u64 {
            let mut sim = Sim::new(n, 100 * i as u64 + k);
            sim.keys();
            assert!(sim.shuffles(None).is_none());
            let end = if k == 0 { sim.play(calling) } else { sim.play(mixed) };
            check_against_truth(&mut sim, &end);
            // The transcript's structure (SPEC.md §9.7): keys, every seat's
            // pieces, one shuffle per seat, then game-start with the final
            // deck's digest.
            let types: Vec<String> =
                sim.events.iter().map(|e| e.decode_body().unwrap().type_name().to_owned()).collect();
            let n = usize::from(n);
            assert_eq!(types[1], "blind-keys");
            assert!(types[2..2 + n].iter().all(|t| t == "blind-pieces"));
            assert!(types[2 + n..2 + 2 * n].iter().all(|t| t == "blind-shuffle"));
            let Ok(EventBody::GameStart(g)) = sim.events[2 + 2 * n].decode_body() else {
                panic!("game-start expected")
            };
            assert_eq!(g.deck_mode, DeckMode::Blind);
            assert!(g.leaves.is_empty() && g.player_seeds.is_empty());
            assert_eq!(
                g.root,
                claw_protocol::messages::blind_deck_digest(&sim.hand_id, sim.deck.as_ref().unwrap())
            );
            assert!(types.last().is_some_and(|t| t == "game-end"));
        }
    }
}

#[test]
fn curious_dealer_cannot_open_a_hole_card() {
    let mut sim = Sim::new(6, 7);
    sim.keys();
    sim.shuffles(None);
    let end = sim.play(mixed);
    let truth = sim.true_deck();
    let b = sim.hand.blind.as_ref().unwrap();
    let key = b.joint_key().unwrap().clone();
    let deck = b.deck().clone();
    let revealed: HashSet<u16> = sim
        .events
        .iter()
        .filter_map(|e| match e.decode_body() {
            Ok(EventBody::BlindReveal(r)) => Some(r.positions),
            _ => None,
        })
        .flatten()
        .collect();
    let mut hidden = 0;
    for d in sim.hand.running().unwrap().runner.dealt() {
        let p = d.position;
        let face_up = d.face == CardFace::Up;
        if face_up || revealed.contains(&p) {
            assert_eq!(b.opened(p), Some(truth[usize::from(p)]));
            continue;
        }
        hidden += 1;
        // The dealer's state: no card, and whatever shares it holds do not open it.
        assert_eq!(b.opened(p), None, "position {p} is hidden from the dealer");
        let got = key.open(&sim.hand_id, p, deck.get(p).unwrap(), b.shares_of(p), b.card_table());
        match d.target {
            DealTo::Player(owner) => {
                assert_eq!(got, Err(MentalError::MissingShare { seat: owner.0 }), "hole card at {p}");
                assert!(
                    b.shares_of(p).iter().all(|(s, _)| *s != owner),
                    "the owner's share never reached the dealer"
                );
            }
            _ => assert!(matches!(got, Err(MentalError::MissingShare { .. })), "burned card at {p}"),
        }
    }
    assert!(hidden >= 3, "burned cards at least stay hidden");
    // No event the dealer published carries a card of a hidden position.
    for e in &sim.events {
        if let Ok(EventBody::PhaseDeal(d) | EventBody::NewCard(d)) = e.decode_body() {
            assert!(d.cards.iter().all(|c| c.opening.is_none() && c.sealed.is_none()));
        }
        if let Ok(EventBody::GameEnd(g)) = e.decode_body() {
            assert!(g.openings.is_empty());
        }
    }
    let _ = end;
}

#[test]
fn curious_dealer_cannot_open_a_recovered_hole_card() {
    let mut sim = Sim::new(3, 9);
    sim.keys();
    sim.shuffles(None);
    let _ = sim.hand.start(&mut sim.rng).unwrap();
    let c = sim.hand.commit(&mut sim.rng, 0).unwrap();
    sim.events.extend(c.events);
    assert!(sim.hand.awaits_shares());
    // Seats 0 and 1 answer the hole-card request; seat 2 withholds.
    for seat in [0u8, 1] {
        let msg = sim.owed_shares(seat);
        let p = sim.send_shares(seat, &msg);
        assert!(matches!(p, BlindProgress::Waiting(_)));
    }
    assert_eq!(sim.hand.blind_owing(), vec![Seat(2)]);
    let Withheld::Recover(seat, env) = sim.hand.blind_withheld(&mut sim.rng) else { panic!("recovery") };
    assert_eq!(seat, Seat(2));
    sim.events.push(env);
    assert!(sim.hand.is_blind_withholder(Seat(2)));
    let Ok(EventBody::BlindRecover(r)) = sim.events.last().unwrap().decode_body() else { panic!() };
    // Seats 0 and 1 publish their recovery shares from the pieces they hold.
    let pieces = sim
        .events
        .iter()
        .find_map(|e| match e.decode_body() {
            Ok(EventBody::BlindPieces(p)) if p.seat == Seat(2) => Some(p),
            _ => None,
        })
        .unwrap();
    let mut last = None;
    for holder in [0u8, 1] {
        let piece = pieces
            .piece_for(sim.hand_id, 3, Seat(holder), &sim.secrets[usize::from(holder)], &mut sim.rng)
            .unwrap()
            .unwrap();
        let deck = sim.deck.clone().unwrap();
        let shares = r
            .positions
            .iter()
            .map(|p| PositionShare {
                position: *p,
                share: piece
                    .recovery_share(
                        &sim.hand_id,
                        Seat(2),
                        claw_protocol::mental::Holder::Seat(Seat(holder)),
                        *p,
                        deck.get(*p).unwrap(),
                        &mut sim.rng,
                    )
                    .to_bytes()
                    .to_vec(),
            })
            .collect();
        let msg =
            claw_protocol::messages::BlindRecoveryMsg { hand_id: sim.hand_id, withholder: Seat(2), shares };
        last = Some(sim.hand.add_blind_recovery(Seat(holder), &msg, 0).unwrap());
    }
    assert!(matches!(last, Some(BlindProgress::Turn(..))), "the hand goes on");
    let truth = sim.true_deck();
    let b = sim.hand.blind.as_ref().unwrap();
    let key = b.joint_key().unwrap().clone();
    let deck = b.deck().clone();
    let mut recovered = 0;
    for d in sim.hand.running().unwrap().runner.dealt() {
        let (p, DealTo::Player(owner)) = (d.position, d.target) else { continue };
        let rebuilt: Vec<_> = b.recovered_of(p).into_iter().collect();
        recovered += rebuilt.len();
        assert_eq!(b.opened(p), None, "position {p} is hidden from the dealer");
        // Everything the dealer holds, the rebuilt share included, does not open it.
        let got = key.open_recovered(
            &sim.hand_id,
            p,
            deck.get(p).unwrap(),
            b.shares_of(p),
            &rebuilt,
            b.card_table(),
        );
        assert_eq!(got, Err(MentalError::MissingShare { seat: owner.0 }), "hole card at {p}");
        // The owner, with its own share, opens it.
        if owner != Seat(2) {
            let ct = deck.get(p).unwrap();
            let mut list = b.shares_of(p).to_vec();
            list.push((
                owner,
                sim.secrets[owner.index()].decryption_share(&sim.hand_id, owner, p, ct, &mut sim.rng),
            ));
            let card = key.open_recovered(&sim.hand_id, p, ct, &list, &rebuilt, b.card_table());
            assert_eq!(card, Ok(truth[usize::from(p)]), "the owner of {p} gets its card");
        }
    }
    assert_eq!(recovered, 4, "seat 2's shares of the four hole cards of seats 0 and 1 were rebuilt");
}

#[test]
fn cheating_shuffles_are_refused_and_skipped_and_the_hand_goes_on() {
    let cases = [
        (ShuffleAttack::DropCard, "shuffle: deck-length"),
        (ShuffleAttack::DuplicateCard, "shuffle: permutation-sum"),
        (ShuffleAttack::ReplaceCard, "shuffle: permutation-sum"),
        (ShuffleAttack::ReusePreviousDeck, "shuffle: unchanged"),
        // A changed proof byte: a non-canonical encoding or a failed equation.
        (ShuffleAttack::FlipProofByte(0), "bad-point|shuffle:"),
        (ShuffleAttack::FlipProofByte(33), "bad-point|shuffle:"),
        (ShuffleAttack::FlipProofByte(4000), "bad-point|shuffle:"),
        (ShuffleAttack::FlipProofByte(5152), "bad-scalar|shuffle:"),
        (ShuffleAttack::FlipProofByte(8607), "bad-scalar|shuffle:"),
        (ShuffleAttack::OtherPlayersSignature, "bad signature on the shuffle"),
    ];
    for (i, (attack, want)) in cases.into_iter().enumerate() {
        let mut sim = Sim::new(3, 1000 + i as u64);
        sim.keys();
        let refused = sim.shuffles(Some((1, attack))).unwrap_or_else(|| panic!("{attack:?} was accepted"));
        assert!(want.split('|').any(|w| refused.to_string().starts_with(w)), "{attack:?}: {refused}");
        // Seat 1 was skipped: seats 0 and 2 shuffled.
        let skips: Vec<_> = sim
            .events
            .iter()
            .filter_map(|e| match e.decode_body() {
                Ok(EventBody::BlindSkip(s)) => Some(s),
                _ => None,
            })
            .collect();
        assert_eq!(skips.len(), 1);
        assert_eq!(
            (skips[0].seat, skips[0].reason),
            (Seat(1), claw_protocol::messages::SkipReason::BadShuffle)
        );
        let end = sim.play(calling);
        check_against_truth(&mut sim, &end);
    }
}

#[test]
fn shuffles_out_of_turn_and_hands_without_a_shuffle_are_refused() {
    let mut sim = Sim::new(3, 5);
    sim.keys();
    // Seat 2 before seat 0: refused, nothing changes.
    let (out, proof) = sim.honest_shuffle(2);
    let msg = BlindShuffleMsg::sign(&sim.players[2], sim.hand_id, Seat(2), &out, &proof);
    assert!(matches!(sim.hand.add_blind_shuffle(Seat(2), &msg), Err(BlindError::NotExpected(_))));
    assert_eq!(sim.hand.blind_shuffler(), Some(Seat(0)));
    // Every seat times out: no shuffle, so the hand cannot start.
    while sim.hand.blind_shuffler().is_some() {
        sim.hand.skip_blind_shuffle().unwrap();
    }
    let err = sim.hand.start(&mut sim.rng).expect_err("refused");
    assert!(err.to_string().contains("no shuffle was accepted"), "{err}");
}

#[test]
fn key_shares_are_checked_and_a_missing_one_is_named() {
    let mut sim = Sim::new(3, 9);
    // Signed by another player; made for another seat; a second share.
    let mut m = sim.key_msg(0);
    let body = claw_protocol::messages::blind_key_signing_body(
        &sim.hand_id,
        Seat(0),
        &m.key_share.clone().try_into().unwrap(),
    );
    m.sig = sim.players[1].sign(claw_protocol::sign::Purpose::BlindKey, &body);
    assert_eq!(sim.hand.add_blind_key(Seat(0), &m), Err(BlindError::BadSignature("key share")));
    let for_seat_2 = sim.key_msg(2);
    let mut m = for_seat_2.clone();
    let body = claw_protocol::messages::blind_key_signing_body(
        &sim.hand_id,
        Seat(1),
        &m.key_share.clone().try_into().unwrap(),
    );
    m.sig = sim.players[1].sign(claw_protocol::sign::Purpose::BlindKey, &body);
    assert_eq!(
        sim.hand.add_blind_key(Seat(1), &m),
        Err(BlindError::Mental(MentalError::KeyProof { seat: 1 }))
    );
    let ok = sim.key_msg(0);
    sim.hand.add_blind_key(Seat(0), &ok).unwrap();
    assert_eq!(sim.hand.add_blind_key(Seat(0), &ok), Err(BlindError::DuplicateKey));
    let other_hand = BlindKeyMsg { hand_id: HandId([9; 16]), ..sim.key_msg(1) };
    assert!(matches!(sim.hand.add_blind_key(Seat(1), &other_hand), Err(BlindError::WrongHand { .. })));
    sim.hand.add_blind_key(Seat(2), &for_seat_2).unwrap();
    let err = sim.hand.close_blind_keys().unwrap_err().to_string();
    assert_eq!(err, "blind deal: no key share from seat 1");
}

#[test]
fn wrong_replayed_and_unowed_decryption_shares_are_refused() {
    let mut sim = Sim::new(3, 11);
    sim.keys();
    sim.shuffles(None);
    let _ = sim.hand.start(&mut sim.rng).unwrap();
    let c = sim.hand.commit(&mut sim.rng, 0).unwrap();
    sim.events.extend(c.events);
    assert!(c.awaits_shares && c.your_turn.is_none(), "hole cards need shares first");
    // An action while shares are owed is refused.
    let seat = sim.hand.running().unwrap().runner.hand().to_act().unwrap();
    let act = SignedAction::sign(
        &sim.players[seat.index()],
        sim.hand_id,
        0,
        RawJson::from_value(&json!({"type":"call"})).unwrap(),
    );
    let id = sim.players[seat.index()].id();
    assert_eq!(sim.hand.act(&id, act).unwrap_err().code, ActionRejectCode::NotYourTurn);

    let honest = sim.owed_shares(0);
    assert_eq!(honest.shares.len(), 2 * 2, "two hole cards of each of the two other seats");
    let p = honest.shares[0].position;
    // A share made with another secret.
    let mut wrong = honest.clone();
    let ct = *sim.deck.as_ref().unwrap().get(p).unwrap();
    let other =
        SecretShare::generate(&mut sim.rng).decryption_share(&sim.hand_id, Seat(0), p, &ct, &mut sim.rng);
    wrong.shares[0].share = other.to_bytes().to_vec();
    assert_eq!(
        sim.hand.add_blind_shares(Seat(0), &wrong, 0).unwrap_err(),
        BlindError::Mental(MentalError::DecryptionProof { seat: 0, position: p })
    );
    // A share for another position presented as this one's.
    let mut moved = honest.clone();
    moved.shares[0].share = honest.shares[1].share.clone();
    assert_eq!(
        sim.hand.add_blind_shares(Seat(0), &moved, 0).unwrap_err(),
        BlindError::Mental(MentalError::DecryptionProof { seat: 0, position: p })
    );
    // Seat 1's message presented as seat 0's: made for seat 1's key.
    let ones = sim.owed_shares(1);
    let common: Vec<PositionShare> = ones
        .shares
        .iter()
        .filter(|s| honest.shares.iter().any(|h| h.position == s.position))
        .cloned()
        .collect();
    let mut as_zero = honest.clone();
    as_zero.shares[0] = common.iter().find(|s| s.position == p).cloned().unwrap_or(as_zero.shares[0].clone());
    if as_zero != honest {
        assert!(matches!(sim.hand.add_blind_shares(Seat(0), &as_zero, 0), Err(BlindError::Mental(_))));
    }
    // A share for its own hole card (not owed), a missing share, a byte changed.
    let own = sim
        .hand
        .running()
        .unwrap()
        .runner
        .dealt()
        .iter()
        .find(|d| d.target == DealTo::Player(Seat(0)))
        .unwrap()
        .position;
    let mut extra = honest.clone();
    extra.shares.push(sim.share(0, own));
    assert_eq!(sim.hand.add_blind_shares(Seat(0), &extra, 0).unwrap_err(), BlindError::NotOwed(own));
    let mut short = honest.clone();
    let last = short.shares.pop().unwrap().position;
    assert_eq!(sim.hand.add_blind_shares(Seat(0), &short, 0).unwrap_err(), BlindError::MissingShare(last));
    let mut dup = honest.clone();
    dup.shares[1] = dup.shares[0].clone();
    assert_eq!(sim.hand.add_blind_shares(Seat(0), &dup, 0).unwrap_err(), BlindError::NotOwed(p));
    for byte in [0usize, 31, 32, 63, 64, 95] {
        let mut flipped = honest.clone();
        flipped.shares[0].share[byte] ^= 0x01;
        assert!(sim.hand.add_blind_shares(Seat(0), &flipped, 0).is_err(), "byte {byte}");
    }
    // Nothing refused changed the hand; the honest shares are accepted once,
    // and the same message again is a replay.
    assert_eq!(sim.hand.blind_owing(), vec![Seat(0), Seat(1), Seat(2)]);
    assert!(matches!(sim.send_shares(0, &honest), BlindProgress::Waiting(_)));
    assert_eq!(sim.hand.add_blind_shares(Seat(0), &honest, 0).unwrap_err(), BlindError::NotOwed(p));
    // A share replayed from another hand does not verify in this one.
    let mut other_hand = Sim::new(3, 11);
    other_hand.keys();
    let from_other = BlindSharesMsg { hand_id: sim.hand_id, shares: other_hand.owed_shares_for(1, &ones) };
    assert!(matches!(sim.hand.add_blind_shares(Seat(1), &from_other, 0), Err(BlindError::Mental(_))));
    // The withholder is named while the request is open (the room's
    // liveness rule acts on it, docs/blind-deal.md §II.6).
    assert_eq!(sim.hand.blind_owing(), vec![Seat(1), Seat(2)]);
}

impl Sim {
    /// `seat`'s shares in this hand for the positions of `like` (a
    /// message of another hand, to replay).
    fn owed_shares_for(&mut self, seat: u8, like: &BlindSharesMsg) -> Vec<PositionShare> {
        self.deck = Some(Deck::initial(&holdem().create_deck(&self.hand.spec.settings).unwrap()).unwrap());
        like.shares.iter().map(|s| self.share(seat, s.position)).collect()
    }
}

#[test]
fn holdem_and_sam_gong_deal_blind_the_others_are_refused_with_their_reason() {
    let spec_of = |name: &str, settings: Value| {
        let g = claw_games::registry::get(name).unwrap();
        let settings = g.normalize_settings(&settings).unwrap();
        GameSpec::new("r", g, settings, EntropyMode::Dealer, RevealPolicy::Full, 2000).unwrap()
    };
    for name in ["texas-holdem", "sam-gong"] {
        assert!(spec_of(name, Value::Null).blind().is_ok(), "{name} deals blind");
    }
    let refused = [
        ("blackjack", BlindRefusal::HouseHand),
        ("dou-di-zhu", BlindRefusal::OwnerOpening),
        ("guandan", BlindRefusal::Transfer),
    ];
    for (name, why) in refused {
        let Err(err) = spec_of(name, Value::Null).blind() else { panic!("{name} must be refused") };
        assert_eq!(err.to_string(), format!("blind deal: {why}"));
        assert!(err.to_string().contains(name), "{err}");
    }
    assert_eq!(
        blind_offered(&claw_games::GameMeta::new("poker-x", "Poker X", 2, 6, "1")),
        Err(BlindRefusal::NotOffered("poker-x".into())),
        "a game the engine does not know to deal blind"
    );
    // Sam Gong's tutorial deals a public script: never blind.
    let Err(err) = spec_of("sam-gong", json!({"tutorial": true})).blind() else {
        panic!("a tutorial table must be refused")
    };
    assert_eq!(err.to_string(), format!("blind deal: {}", BlindRefusal::Scripted));
    let g = holdem();
    let settings = g.normalize_settings(&Value::Null).unwrap();
    let joint = GameSpec::new("r", g, settings, EntropyMode::Joint, RevealPolicy::Full, 2000).unwrap();
    assert!(joint.blind().is_err());
}

/// A short soak: many blind hands at six seats, each checked against the
/// true deck (the engine's part of issue 35's soak).
#[test]
fn soak_six_seats_twenty_blind_hands() {
    for k in 0..20u64 {
        let mut sim = Sim::new(6, 50_000 + k);
        sim.keys();
        sim.shuffles(None);
        let end = sim.play(mixed);
        check_against_truth(&mut sim, &end);
        let _ = &sim.dealer;
    }
}

fn audit_blind(t: &Transcript, dealer: &Identity) -> Result<claw_protocol::audit::AuditReport, AuditError> {
    let r = GamesReplayer::default();
    let opts = AuditOptions { dealer: Some(dealer.id()), replayer: Some(&r), ..Default::default() };
    audit(t, &opts)
}

/// The transcript with `change` applied to one event's body, re-signed by
/// the dealer (a dishonest dealer: the signatures and chain still verify).
fn resigned(sim: &Sim, index: usize, change: impl FnOnce(&mut EventBody)) -> Transcript {
    let t = sim.hand.transcript();
    let mut tb = TranscriptBuilder::with_header(sim.hand_id, sim.dealer.id(), "blind-room");
    let mut change = Some(change);
    for (i, e) in t.events.iter().enumerate() {
        let mut body = e.decode_body().unwrap();
        if i == index {
            if let Some(f) = change.take() {
                f(&mut body);
            }
        }
        tb.append(&sim.dealer, &body).unwrap();
    }
    tb.transcript().clone()
}

fn finished(seed: u64) -> Sim {
    let mut sim = Sim::new(3, seed);
    sim.keys();
    sim.shuffles(None);
    sim.play(calling);
    sim
}

fn index_of(sim: &Sim, ty: &str, nth: usize) -> usize {
    sim.hand
        .transcript()
        .events
        .iter()
        .enumerate()
        .filter(|(_, e)| e.decode_body().unwrap().type_name() == ty)
        .nth(nth)
        .unwrap_or_else(|| panic!("no {ty} #{nth}"))
        .0
}

#[test]
fn the_audit_of_a_blind_hand_fails_when_any_proof_byte_changes() {
    let sim = finished(77);
    assert!(audit_blind(sim.hand.transcript(), &sim.dealer).is_ok());
    // Shuffle proofs: first, middle and last bytes of each part.
    let at = index_of(&sim, "blind-shuffle", 1);
    for byte in [0usize, 1, 31, 32 * 52, 32 * 161, 32 * 165, 8607] {
        let t = resigned(&sim, at, |b| {
            if let EventBody::BlindShuffle(s) = b {
                s.proof[byte] ^= 0x01;
            }
        });
        let e = audit_blind(&t, &sim.dealer).unwrap_err();
        assert_eq!(e.check, AuditCheck::Shuffle, "proof byte {byte}: {e}");
    }
    // The output deck: a card changed, or the previous deck re-used.
    let t = resigned(&sim, at, |b| {
        if let EventBody::BlindShuffle(s) = b {
            s.deck[100] ^= 0x01;
        }
    });
    assert_eq!(audit_blind(&t, &sim.dealer).unwrap_err().check, AuditCheck::Shuffle);
    // Key shares: a byte of the proof.
    let keys = index_of(&sim, "blind-keys", 0);
    for byte in [0usize, 40, 95] {
        let t = resigned(&sim, keys, |b| {
            if let EventBody::BlindKeys(k) = b {
                k.keys[1].key_share[byte] ^= 0x01;
            }
        });
        assert_eq!(
            audit_blind(&t, &sim.dealer).unwrap_err().check,
            AuditCheck::PlayerSeeds,
            "key byte {byte}"
        );
    }
    // Decryption shares: every part of the first share of a few events.
    for nth in [0usize, 3, 6] {
        let at = index_of(&sim, "blind-shares", nth);
        for byte in [0usize, 31, 32, 63, 64, 95] {
            let t = resigned(&sim, at, |b| {
                if let EventBody::BlindShares(s) = b {
                    s.shares[0].share[byte] ^= 0x01;
                }
            });
            let e = audit_blind(&t, &sim.dealer).unwrap_err();
            assert_eq!(e.check, AuditCheck::OpenedCards, "shares #{nth} byte {byte}: {e}");
        }
    }
    // A share replayed (the same event twice), a share moved to another
    // position, a shuffle dropped from the transcript.
    let at = index_of(&sim, "blind-shares", 0);
    let t = resigned(&sim, at + 1, |b| {
        let first = sim.hand.transcript().events[at].decode_body().unwrap();
        *b = first;
    });
    assert_eq!(audit_blind(&t, &sim.dealer).unwrap_err().check, AuditCheck::OpenedCards);
    let t = resigned(&sim, at, |b| {
        if let EventBody::BlindShares(s) = b {
            let p = s.shares[0].position;
            s.shares[0].position = s.shares[1].position;
            s.shares[1].position = p;
        }
    });
    assert_eq!(audit_blind(&t, &sim.dealer).unwrap_err().check, AuditCheck::OpenedCards);
    let shuffle = index_of(&sim, "blind-shuffle", 2);
    let t = resigned(&sim, shuffle, |b| {
        *b = EventBody::BlindSkip(claw_protocol::messages::BlindSkip {
            seat: Seat(2),
            reason: claw_protocol::messages::SkipReason::Timeout,
        })
    });
    assert_eq!(
        audit_blind(&t, &sim.dealer).unwrap_err().check,
        AuditCheck::Shuffle,
        "root is the last shuffle's"
    );
}

#[test]
fn a_blind_dealer_that_deals_a_card_before_its_shares_or_names_a_card_fails_the_audit() {
    let sim = finished(78);
    // A face-up card announced with an opening (the dealer claiming a card).
    let flop = index_of(&sim, "phase-deal", 1);
    let t = resigned(&sim, flop, |b| {
        if let EventBody::PhaseDeal(d) = b {
            let c = &mut d.cards[1];
            c.opening = Some(claw_protocol::CardOpening {
                position: c.position,
                card: holdem().create_deck(&json!({})).map(|d| d[0]).unwrap_or_else(|_| unreachable!()),
                salt: claw_protocol::Salt([0; 32]),
            });
        }
    });
    assert_eq!(audit_blind(&t, &sim.dealer).unwrap_err().check, AuditCheck::Structure);
    // The result changed: the replay over the deck view catches it.
    let end = index_of(&sim, "game-end", 0);
    let t = resigned(&sim, end, |b| {
        if let EventBody::GameEnd(g) = b {
            g.result.net.swap(0, 1);
        }
    });
    assert_eq!(audit_blind(&t, &sim.dealer).unwrap_err().check, AuditCheck::Replay);
}
