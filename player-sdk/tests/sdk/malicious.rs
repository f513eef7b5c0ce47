//! The malicious-dealer harness: an honest hand is built by the reference
//! dealer, exactly one thing is altered (a card in a sealed box, a salt, a
//! leaf, a signature, the deal order, the seed, the shuffle, the announced
//! winner, a chip movement, a player's seed or action, the chain), the
//! dealer signs the result, and both the live verifier (as seat 0 sees the
//! events) and the offline auditor must fail, naming the right check.

use crate::support;

mod bindings;
mod bursts;
mod commission;

use std::sync::Arc;

use claw_audit::Auditor;
use claw_engine::testing::{PlayedHand, Table};
use claw_player::bots::strategy;
use claw_player::node::NodeEvent;
use claw_player::verify::{SessionVerifier, Update, VerifyError};
use claw_protocol::audit::AuditCheck;
use claw_protocol::messages::{CardFace, ChipParty, DealTo, EventBody};
use claw_protocol::transcript::{EventEnvelope, Transcript};
use claw_protocol::{leaf, merkle_root, CardOpening, Chips, Salt, Seat, Seed};
use serde_json::Value;

/// A table of Hold'em (3 players: sealed hole cards, face-up board, burns)
/// whose hands are long enough to have every kind of event.
fn holdem_hand(seed: u64) -> (Table, PlayedHand) {
    let mut sim = Table::new("texas-holdem", &Value::Null, 3, seed).unwrap();
    let bot = strategy("texas-holdem", "simple").unwrap();
    for _ in 0..200 {
        let h = support::play(&mut sim, bot.as_ref());
        let has_board =
            h.bodies.iter().any(|b| deals(b).is_some_and(|d| d.cards.iter().any(|c| c.face == CardFace::Up)));
        let has_action_0 =
            h.bodies.iter().any(|b| matches!(b, EventBody::ActionResult(a) if a.seat == Seat(0)));
        if has_board && has_action_0 {
            return (sim, h);
        }
    }
    panic!("no hand with a board in 200 hands");
}

fn deals(b: &EventBody) -> Option<&claw_protocol::messages::DealEvent> {
    match b {
        EventBody::PhaseDeal(d) | EventBody::NewCard(d) => Some(d),
        _ => None,
    }
}

fn deals_mut(b: &mut EventBody) -> Option<&mut claw_protocol::messages::DealEvent> {
    match b {
        EventBody::PhaseDeal(d) | EventBody::NewCard(d) => Some(d),
        _ => None,
    }
}

fn game_end(h: &mut PlayedHand) -> &mut claw_protocol::messages::GameEnd {
    h.bodies
        .iter_mut()
        .find_map(|b| match b {
            EventBody::GameEnd(g) => Some(g),
            _ => None,
        })
        .unwrap()
}

fn game_start(h: &mut PlayedHand) -> &mut claw_protocol::messages::GameStart {
    h.bodies
        .iter_mut()
        .find_map(|b| match b {
            EventBody::GameStart(g) => Some(g),
            _ => None,
        })
        .unwrap()
}

/// Seat `seat`'s live verifier at `sim`'s table, holding the room
/// configuration the dealer signed in the handshake, as the node's does.
fn seat_verifier(sim: &Table, seat: usize) -> SessionVerifier {
    let me = Arc::clone(&sim.players[seat]);
    let shared = me.shared_key(&sim.dealer.encryption_key()).unwrap();
    SessionVerifier::new(sim.dealer.id(), "room", me, sim.dealer.encryption_key(), shared)
        .with_room_config(room_text(&sim.room_config()))
}

/// A room configuration as the exact text the handshake signs.
fn room_text(room: &claw_protocol::messages::RoomConfig) -> claw_protocol::messages::RawJson {
    claw_protocol::messages::RawJson::from_value(room).unwrap()
}

/// A seat's live verifier fed as the SDK node feeds it: at `hand-prepare`
/// it records the seed it sent and the actions it signed; after the event
/// before each of its turns it relies on the chain (`before_acting`,
/// SPEC.md §10.3); at the hand's end its audit must pass.
struct LivePlayer {
    v: SessionVerifier,
    seat: Seat,
}

impl LivePlayer {
    fn new(sim: &Table, seat: usize) -> LivePlayer {
        LivePlayer { v: seat_verifier(sim, seat), seat: Seat(seat as u8) }
    }

    fn feed(&mut self, hand: &PlayedHand, env: &EventEnvelope) -> Result<(), VerifyError> {
        let seat = self.seat;
        match self.v.on_event(env)? {
            Some(Update::Event(NodeEvent::HandPrepared { hand_id, .. })) => {
                if let Some(s) = hand.player_seeds[seat.index()] {
                    self.v.set_my_seed(&hand_id, s);
                }
                for b in &hand.bodies {
                    if let EventBody::ActionResult(a) = b {
                        if a.seat == seat {
                            self.v.record_my_action(&hand_id, a.seq, a.action.as_str(), a.sig);
                        }
                    }
                }
            }
            Some(Update::Ended { audit, .. } | Update::AuditCompleted { audit, .. }) => {
                if let Err(e) = *audit {
                    return Err(VerifyError {
                        check: e.check,
                        hand_id: env.hand_id,
                        seq: env.seq,
                        detail: e.detail,
                    });
                }
            }
            _ => {}
        }
        if hand.turns.iter().any(|(i, s, _)| *s == seat && *i as u64 == env.seq + 1) {
            self.v.before_acting(&env.hand_id)?;
        }
        Ok(())
    }
}

/// The first failure seat 0's live verifier reports on `t`, if any.
fn live_failure(sim: &Table, hand: &PlayedHand, t: &Transcript) -> Option<AuditCheck> {
    live_failure_of(sim, hand, &t.events)
}

fn live_failure_of(sim: &Table, hand: &PlayedHand, events: &[EventEnvelope]) -> Option<AuditCheck> {
    live_failure_over(sim, &[(hand, events)], None)
}

/// The first failure seat 0's live verifier reports over consecutive hands
/// of one session, the room configuration it was signed in the handshake
/// stating `commission` (if given; else the table's).
fn live_failure_over(
    sim: &Table,
    hands: &[(&PlayedHand, &[EventEnvelope])],
    commission: Option<Chips>,
) -> Option<AuditCheck> {
    let mut p = LivePlayer::new(sim, 0);
    if let Some(c) = commission {
        let mut room = sim.room_config();
        room.commission = c;
        p.v = p.v.with_room_config(room_text(&room));
    }
    for (hand, events) in hands {
        for env in *events {
            if let Err(e) = p.feed(hand, env) {
                return Some(e.check);
            }
        }
    }
    None
}

fn offline_failure(sim: &Table, hand: &PlayedHand, t: &Transcript) -> Option<AuditCheck> {
    let a = Auditor::new(Some(sim.dealer.id())).with_viewer(&sim.players[0]);
    a.audit(t, hand.player_seeds[0]).err().map(|e| e.check)
}

fn expect(name: &str, sim: &Table, hand: &PlayedHand, t: &Transcript, live: AuditCheck, offline: AuditCheck) {
    assert_eq!(live_failure(sim, hand, t), Some(live), "{name}: live verification");
    assert_eq!(offline_failure(sim, hand, t), Some(offline), "{name}: offline audit");
}

fn signed(sim: &Table, h: &PlayedHand) -> Transcript {
    h.sign(&sim.dealer, "room").unwrap()
}

#[test]
fn the_honest_hand_passes_live_and_offline() {
    for seed in 0..5 {
        let (sim, h) = holdem_hand(seed);
        let t = signed(&sim, &h);
        assert_eq!(live_failure(&sim, &h, &t), None);
        assert_eq!(offline_failure(&sim, &h, &t), None);
    }
}

#[test]
fn another_card_in_a_sealed_box() {
    let (mut sim, mut h) = holdem_hand(1);
    let hand_id = h.hand_id;
    let other = game_end(&mut h).openings.last().copied().unwrap();
    let (i, j) = h
        .bodies
        .iter()
        .enumerate()
        .find_map(|(i, b)| {
            let j = deals(b)?
                .cards
                .iter()
                .position(|c| c.target == DealTo::Player(Seat(0)) && c.sealed.is_some())?;
            Some((i, j))
        })
        .unwrap();
    let pos = deals(&h.bodies[i]).unwrap().cards[j].position;
    let salt = game_end(&mut h).openings[usize::from(pos)].salt;
    let fake = CardOpening { position: pos, card: other.card, salt };
    let sealed = sim.seal_for(Seat(0), &hand_id, &fake).unwrap();
    deals_mut(&mut h.bodies[i]).unwrap().cards[j].sealed = Some(sealed);
    let t = signed(&sim, &h);
    expect("sealed card", &sim, &h, &t, AuditCheck::OpenedCards, AuditCheck::OpenedCards);
}

#[test]
fn a_wrong_salt_on_a_face_up_card() {
    let (sim, mut h) = holdem_hand(2);
    let c = h
        .bodies
        .iter_mut()
        .filter_map(deals_mut)
        .flat_map(|d| d.cards.iter_mut())
        .find(|c| c.face == CardFace::Up)
        .unwrap();
    c.opening.as_mut().unwrap().salt = Salt([7; 32]);
    let t = signed(&sim, &h);
    expect("face-up salt", &sim, &h, &t, AuditCheck::OpenedCards, AuditCheck::OpenedCards);
}

#[test]
fn a_wrong_salt_in_the_final_reveal() {
    let (sim, mut h) = holdem_hand(3);
    game_end(&mut h).openings[40].salt = Salt([9; 32]);
    let t = signed(&sim, &h);
    expect("reveal salt", &sim, &h, &t, AuditCheck::Leaves, AuditCheck::Leaves);
}

#[test]
fn a_changed_leaf() {
    // With the root recomputed: the leaf no longer opens.
    let (sim, mut h) = holdem_hand(4);
    let g = game_start(&mut h);
    g.leaves[45] = claw_protocol::sha256(&[b"another card"]);
    g.root = merkle_root(&g.leaves);
    let t = signed(&sim, &h);
    expect("leaf", &sim, &h, &t, AuditCheck::Leaves, AuditCheck::Leaves);
    // Without: the root does not commit to the leaves (caught at game-start).
    let (sim, mut h) = holdem_hand(4);
    game_start(&mut h).leaves[45] = claw_protocol::sha256(&[b"another card"]);
    let t = signed(&sim, &h);
    expect("leaf, root kept", &sim, &h, &t, AuditCheck::MerkleRoot, AuditCheck::MerkleRoot);
}

#[test]
fn a_bad_dealer_signature() {
    // The burst end before seat 0's first turn: caught live before acting.
    let (sim, h) = holdem_hand(5);
    let mut t = signed(&sim, &h);
    let i = bursts::before_my_turn(&h);
    t.events[i].sig.as_mut().expect("a burst end is signed").0[10] ^= 1;
    expect("signature", &sim, &h, &t, AuditCheck::DealerSignatures, AuditCheck::DealerSignatures);
}

#[test]
fn cards_dealt_out_of_order() {
    let (sim, mut h) = holdem_hand(6);
    let d = h.bodies.iter_mut().filter_map(deals_mut).next().unwrap();
    let (a, b) = (d.cards[0].position, d.cards[1].position);
    d.cards[0].position = b;
    d.cards[1].position = a;
    let t = signed(&sim, &h);
    expect("deal order", &sim, &h, &t, AuditCheck::DealOrder, AuditCheck::DealOrder);
}

#[test]
fn cards_dealt_to_the_wrong_seats() {
    // Positions in order, but the first two cards go to each other's seat
    // (boxes resealed accordingly): only the rules know who gets which card.
    let (mut sim, mut h) = holdem_hand(6);
    let hand_id = h.hand_id;
    let openings = game_end(&mut h).openings.clone();
    let d = h.bodies.iter_mut().filter_map(deals_mut).next().unwrap();
    let (ta, tb) = (d.cards[0].target, d.cards[1].target);
    assert_ne!(ta, tb);
    d.cards[0].target = tb;
    d.cards[1].target = ta;
    for c in d.cards.iter_mut().take(2) {
        if let DealTo::Player(s) = c.target {
            c.sealed = Some(sim.seal_for(s, &hand_id, &openings[usize::from(c.position)]).unwrap());
        }
    }
    let t = signed(&sim, &h);
    expect("wrong seats", &sim, &h, &t, AuditCheck::Replay, AuditCheck::Replay);
}

#[test]
fn a_skipped_deck_position() {
    let (sim, mut h) = holdem_hand(7);
    // The flop's first card is announced one position later than the next one.
    let d = h.bodies.iter_mut().filter_map(deals_mut).nth(1).unwrap();
    for c in &mut d.cards {
        c.position += 1;
    }
    let t = signed(&sim, &h);
    expect("skipped position", &sim, &h, &t, AuditCheck::DealOrder, AuditCheck::DealOrder);
}

#[test]
fn another_dealer_seed() {
    let (sim, mut h) = holdem_hand(8);
    game_end(&mut h).dealer_seed = Some(Seed([1; 32]));
    let t = signed(&sim, &h);
    expect("seed", &sim, &h, &t, AuditCheck::SeedCommitment, AuditCheck::SeedCommitment);
}

#[test]
fn a_deck_that_is_not_the_shuffle() {
    // Two undealt cards swap places; leaves, root and openings are made
    // consistent, so only the shuffle recomputation can tell.
    let (sim, mut h) = holdem_hand(9);
    let hand_id = h.hand_id;
    let n = game_start(&mut h).leaves.len();
    let (p, q) = (n - 1, n - 2);
    let end = game_end(&mut h);
    let (cp, cq) = (end.openings[p].card, end.openings[q].card);
    end.openings[p].card = cq;
    end.openings[q].card = cp;
    let (op, oq) = (end.openings[p], end.openings[q]);
    let g = game_start(&mut h);
    g.leaves[p] = leaf(&hand_id, op.position, op.card, &op.salt);
    g.leaves[q] = leaf(&hand_id, oq.position, oq.card, &oq.salt);
    g.root = merkle_root(&g.leaves);
    let t = signed(&sim, &h);
    expect("shuffle", &sim, &h, &t, AuditCheck::Shuffle, AuditCheck::Shuffle);
}

#[test]
fn another_winner_announced() {
    let (sim, mut h) = holdem_hand(10);
    let r = &mut game_end(&mut h).result;
    let n = r.net.len() as u8;
    let w = r.winners.first().map_or(0, |s| s.0);
    r.winners = vec![Seat((w + 1) % n)];
    let t = signed(&sim, &h);
    expect("winner", &sim, &h, &t, AuditCheck::Replay, AuditCheck::Replay);
}

#[test]
fn a_false_public_state() {
    // Bots act on the public state: a dealer showing a bigger pot (or another
    // player to act) after an action, re-signed, is caught by the replay.
    let (sim, mut h) = holdem_hand(12);
    let a = h
        .bodies
        .iter_mut()
        .find_map(|b| match b {
            EventBody::ActionResult(a) => Some(a),
            _ => None,
        })
        .unwrap();
    std::sync::Arc::make_mut(&mut a.public_state)["false"] = serde_json::json!(true);
    let t = signed(&sim, &h);
    expect("public state", &sim, &h, &t, AuditCheck::Replay, AuditCheck::Replay);
}

#[test]
fn a_changed_chip_movement() {
    let (sim, mut h) = holdem_hand(11);
    let moves = h
        .bodies
        .iter_mut()
        .rev()
        .find_map(|b| match b {
            EventBody::Chips(c) if c.moves.iter().any(|m| matches!(m.party, ChipParty::Seat(_))) => Some(c),
            _ => None,
        })
        .unwrap();
    moves.moves[0].amount = Chips(moves.moves[0].amount.0 + 1);
    let t = signed(&sim, &h);
    expect("chip movement", &sim, &h, &t, AuditCheck::Replay, AuditCheck::Replay);
}

#[test]
fn my_seed_left_out() {
    let (sim, mut h) = holdem_hand(12);
    game_start(&mut h).player_seeds.retain(|s| s.seat != Seat(0));
    let t = signed(&sim, &h);
    expect("my seed", &sim, &h, &t, AuditCheck::PlayerSeeds, AuditCheck::PlayerSeeds);
}

#[test]
fn an_action_i_did_not_take() {
    let (sim, mut h) = holdem_hand(13);
    let a = h
        .bodies
        .iter_mut()
        .find_map(|b| match b {
            EventBody::ActionResult(a) if a.seat == Seat(0) => Some(a),
            _ => None,
        })
        .unwrap();
    let other = if a.action.as_str().contains("fold") { r#"{"type":"check"}"# } else { r#"{"type":"fold"}"# };
    a.action = claw_protocol::messages::RawJson::from_string(other.to_string()).unwrap();
    let t = signed(&sim, &h);
    expect("forged action", &sim, &h, &t, AuditCheck::ActionSignatures, AuditCheck::ActionSignatures);
}

#[test]
fn a_dropped_event_breaks_the_chain() {
    let (sim, h) = holdem_hand(14);
    let mut t = signed(&sim, &h);
    t.events.remove(4);
    expect("dropped event", &sim, &h, &t, AuditCheck::HashChain, AuditCheck::HashChain);
}

#[test]
fn a_resent_event_must_be_identical() {
    let (sim, h) = holdem_hand(15);
    let t = signed(&sim, &h);
    // Re-sending the first events unchanged (after a reconnect) is fine.
    let mut events: Vec<EventEnvelope> = t.events[..5].to_vec();
    events.extend(t.events.iter().cloned());
    assert_eq!(live_failure_of(&sim, &h, &events), None);
    // A different event under a seq already seen is equivocation.
    let mut other = h.clone();
    if let EventBody::HandPrepare(p) = &mut other.bodies[0] {
        p.seed_timeout_ms += 1;
    }
    let t2 = signed(&sim, &other);
    let mut events: Vec<EventEnvelope> = t.events[..3].to_vec();
    events.push(t2.events[0].clone());
    assert_eq!(live_failure_of(&sim, &h, &events), Some(AuditCheck::HashChain));
}

#[test]
fn blackjack_and_dou_di_zhu_reveals_are_checked() {
    // A revealed card (the blackjack hole card, the kitty) with a wrong salt.
    for (game, n) in [("blackjack", 2usize), ("dou-di-zhu", 3)] {
        let mut sim = Table::new(game, &Value::Null, n, 16).unwrap();
        let bot = strategy(game, "simple").unwrap();
        let mut h = (0..100)
            .map(|_| support::play(&mut sim, bot.as_ref()))
            .find(|h| h.bodies.iter().any(|b| matches!(b, EventBody::Reveal(_))))
            .unwrap();
        let t = signed(&sim, &h);
        assert_eq!(live_failure(&sim, &h, &t), None, "{game}: honest");
        for b in &mut h.bodies {
            if let EventBody::Reveal(r) = b {
                r.openings[0].salt = Salt([3; 32]);
                break;
            }
        }
        let t = signed(&sim, &h);
        expect(game, &sim, &h, &t, AuditCheck::OpenedCards, AuditCheck::OpenedCards);
    }
}

// ---- Guandan: tribute and return move dealt cards (`card-transfer`). ----

/// The second deal of a Guandan match (the first with tribute) in which a
/// card is transferred to seat 0, at a table with `settings`.
fn guandan_tribute_hand(settings: Value, face: CardFace) -> (Table, PlayedHand) {
    let bot = strategy("guandan", "guandan-l1").unwrap();
    for seed in 0..40 {
        let mut sim = Table::new("guandan", &settings, 4, seed).unwrap();
        let _first = support::play(&mut sim, bot.as_ref());
        let h = support::play(&mut sim, bot.as_ref());
        if transfers(&h).any(|(_, x)| x.to == Seat(0) && x.face == face) {
            return (sim, h);
        }
    }
    panic!("no tribute to seat 0 in 40 matches");
}

fn transfers(h: &PlayedHand) -> impl Iterator<Item = (usize, &claw_protocol::messages::CardTransfer)> {
    h.bodies.iter().enumerate().filter_map(|(i, b)| match b {
        EventBody::CardTransfer(x) => Some((i, x)),
        _ => None,
    })
}

fn transfer_mut(h: &mut PlayedHand, i: usize) -> &mut claw_protocol::messages::CardTransfer {
    match &mut h.bodies[i] {
        EventBody::CardTransfer(x) => x,
        _ => unreachable!("index of a card-transfer"),
    }
}

/// Seat 0's live view of `t` after every event.
fn live_view(sim: &Table, hand: &PlayedHand, t: &Transcript) -> claw_player::verify::HandView {
    let mut v = seat_verifier(sim, 0);
    for env in &t.events {
        if let Ok(Some(Update::Event(NodeEvent::HandPrepared { hand_id, .. }))) = v.on_event(env) {
            v.set_my_seed(&hand_id, hand.player_seeds[0].unwrap());
            for b in &hand.bodies {
                if let EventBody::ActionResult(a) = b {
                    if a.seat == Seat(0) {
                        v.record_my_action(&hand_id, a.seq, a.action.as_str(), a.sig);
                    }
                }
            }
        }
    }
    v.current().unwrap().clone()
}

#[test]
fn honest_guandan_tributes_pass_and_the_hand_view_follows_them() {
    for (settings, face) in
        [(serde_json::json!({}), CardFace::Down), (serde_json::json!({"show_tribute": true}), CardFace::Up)]
    {
        let (sim, mut h) = guandan_tribute_hand(settings, face);
        let t = signed(&sim, &h);
        assert_eq!(live_failure(&sim, &h, &t), None);
        assert_eq!(offline_failure(&sim, &h, &t), None);
        let view = live_view(&sim, &h, &t);
        let order: Vec<_> = game_end(&mut h).openings.iter().map(|o| o.card).collect();
        for (_, x) in transfers(&h) {
            let card = order[usize::from(x.position)];
            if x.to == Seat(0) {
                assert!(view.my_cards.contains(&card), "received {card} is among my cards");
            }
            if x.from == Seat(0) {
                assert!(!view.hand.contains(&card), "given {card} left my hand");
            }
        }
        // The view's hand is what the rules say seat 0 still holds.
        let left = view.public_state["cards_left"][0].as_u64().unwrap();
        assert_eq!(view.hand.len() as u64, left, "seat 0's hand after tribute and play");
    }
}

#[test]
fn a_transfer_of_a_card_the_giver_does_not_hold() {
    let (sim, mut h) = guandan_tribute_hand(serde_json::json!({}), CardFace::Down);
    let (i, x) = transfers(&h).next().map(|(i, x)| (i, x.clone())).unwrap();
    // Position p is dealt to seat p mod 4: take one of another seat's.
    let other = (0..108u16).find(|p| p % 4 != u16::from(x.from.0) && *p != x.position).unwrap();
    transfer_mut(&mut h, i).position = other;
    let t = signed(&sim, &h);
    expect("card not held", &sim, &h, &t, AuditCheck::DealOrder, AuditCheck::DealOrder);
    // Giving the same card twice: the second time the giver no longer holds it.
    let (sim, mut h) = guandan_tribute_hand(serde_json::json!({}), CardFace::Down);
    let (i, _) = transfers(&h).next().unwrap();
    let again = h.bodies[i].clone();
    h.bodies.insert(i + 1, again);
    let t = signed(&sim, &h);
    expect("card given twice", &sim, &h, &t, AuditCheck::DealOrder, AuditCheck::DealOrder);
}

#[test]
fn a_transfer_of_another_position_than_the_action_names() {
    // The giver's signed action names a deck position; the dealer moves
    // another card the giver holds (a higher one, say). Every card-transfer
    // rule holds (the giver holds it), so only the replay catches it.
    let (sim, mut h) = guandan_tribute_hand(serde_json::json!({}), CardFace::Down);
    let (i, x) = transfers(&h).next().map(|(i, x)| (i, x.clone())).unwrap();
    let moved: Vec<u16> = transfers(&h).map(|(_, x)| x.position).collect();
    let other = (0..108u16).find(|p| p % 4 == u16::from(x.from.0) && !moved.contains(p)).unwrap();
    transfer_mut(&mut h, i).position = other;
    let t = signed(&sim, &h);
    expect("another position than the action's", &sim, &h, &t, AuditCheck::Replay, AuditCheck::Replay);
}

#[test]
fn a_transfer_to_the_wrong_seat() {
    let (sim, mut h) = guandan_tribute_hand(serde_json::json!({}), CardFace::Down);
    // A transfer not to seat 0, redirected to the one seat that is neither
    // its giver, its receiver nor seat 0: the rules name another receiver.
    let (i, x) = transfers(&h)
        .find(|(_, x)| x.to != Seat(0) && x.from != Seat(0))
        .map(|(i, x)| (i, x.clone()))
        .unwrap_or_else(|| {
            let (i, x) = transfers(&h).find(|(_, x)| x.to != Seat(0)).unwrap();
            (i, x.clone())
        });
    let wrong = (1..4u8).map(Seat).find(|s| *s != x.from && *s != x.to).unwrap();
    transfer_mut(&mut h, i).to = wrong;
    let t = signed(&sim, &h);
    expect("wrong receiver", &sim, &h, &t, AuditCheck::Replay, AuditCheck::Replay);
    // To the giver itself: refused by its structure.
    let (sim, mut h) = guandan_tribute_hand(serde_json::json!({}), CardFace::Down);
    let (i, x) = transfers(&h).next().map(|(i, x)| (i, x.clone())).unwrap();
    transfer_mut(&mut h, i).to = x.from;
    let t = signed(&sim, &h);
    expect("to the giver", &sim, &h, &t, AuditCheck::Structure, AuditCheck::Structure);
}

#[test]
fn a_tampered_sealed_transfer() {
    // Another card in the box sealed to seat 0.
    let (mut sim, mut h) = guandan_tribute_hand(serde_json::json!({}), CardFace::Down);
    let hand_id = h.hand_id;
    let (i, x) = transfers(&h).find(|(_, x)| x.to == Seat(0)).map(|(i, x)| (i, x.clone())).unwrap();
    let real = game_end(&mut h).openings[usize::from(x.position)];
    let other = game_end(&mut h).openings.iter().find(|o| o.card != real.card).copied().unwrap();
    let fake = CardOpening { position: x.position, card: other.card, salt: real.salt };
    transfer_mut(&mut h, i).sealed = Some(sim.seal_for(Seat(0), &hand_id, &fake).unwrap());
    let t = signed(&sim, &h);
    expect("sealed transfer, other card", &sim, &h, &t, AuditCheck::OpenedCards, AuditCheck::OpenedCards);
    // A box that does not open.
    let (sim, mut h) = guandan_tribute_hand(serde_json::json!({}), CardFace::Down);
    let (i, _) = transfers(&h).find(|(_, x)| x.to == Seat(0)).unwrap();
    transfer_mut(&mut h, i).sealed.as_mut().unwrap().ciphertext[20] ^= 1;
    let t = signed(&sim, &h);
    expect("sealed transfer, broken box", &sim, &h, &t, AuditCheck::OpenedCards, AuditCheck::OpenedCards);
}

#[test]
fn a_face_up_transfer_with_a_wrong_opening() {
    let (sim, mut h) = guandan_tribute_hand(serde_json::json!({"show_tribute": true}), CardFace::Up);
    let (i, _) = transfers(&h).next().unwrap();
    transfer_mut(&mut h, i).opening.as_mut().unwrap().salt = Salt([7; 32]);
    let t = signed(&sim, &h);
    expect("face-up transfer salt", &sim, &h, &t, AuditCheck::OpenedCards, AuditCheck::OpenedCards);
}
