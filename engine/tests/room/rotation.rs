//! Sam Gong's banker queue is pushed (`banker-queue`, SPEC.md §9.4), not
//! left to `room-state` polls: when seats are taken, at each hand's start
//! (after its `hand-prepare`), after its `game-end`, to a connection when
//! it is admitted, and only when it changed. Under the virtual clock.

use std::time::Duration;

use claw_protocol::messages::{BankerQueue, ClientMessage, EventBody, JoinRequest, ServerMessage};
use claw_protocol::PlayerId;

use super::Harness;

fn sam_gong(n: u8) -> Harness {
    let mut h = Harness::new(n, |c| {
        c.game = "sam-gong".into();
        c.settings = serde_json::Value::Null; // bronze: entry 1 000, bets 100–500
        c.min_players = 3;
        c.max_players = 6;
    });
    h.balances = vec![10_000; usize::from(n)];
    h
}

fn join_at(h: &mut Harness, i: usize, seat: u8) {
    h.connect(i);
    h.send(
        i,
        ClientMessage::JoinRequest(JoinRequest {
            sdk_version: String::new(),
            name: None,
            seat: Some(claw_protocol::Seat(seat)),
            buy_in: None,
        }),
    );
    h.settle_chips();
}

/// Everyone takes its first offered action until the hand ends.
fn play_out(h: &mut Harness) {
    let finished = |h: &Harness| h.log.iter().filter(|l| *l == "report hand-finished").count();
    let before = finished(h);
    let mut done = std::collections::HashSet::new();
    while finished(h) == before {
        let next = (0..h.players.len()).find_map(|i| {
            let t = h.last_turn(i)?;
            (!done.contains(&(t.hand_id, t.seq, i)))
                .then(|| (i, t.hand_id, t.seq, t.actions[0].action.clone()))
        });
        let Some((i, hand, seq, action)) = next else { panic!("nobody to act: {:#?}", h.log) };
        done.insert((hand, seq, i));
        h.act(i, action);
        h.settle_chips();
    }
}

/// The pause between hands, then the next hand's chip calls.
fn next_hand(h: &mut Harness) {
    h.settle_chips();
    h.advance(Duration::from_secs(2));
    h.settle_chips();
    h.tick();
    h.settle_chips();
}

fn queues(h: &Harness, i: usize) -> Vec<BankerQueue> {
    h.inbox[i]
        .iter()
        .filter_map(|m| match m {
            ServerMessage::BankerQueue(q) => Some(q.clone()),
            _ => None,
        })
        .collect()
}

/// Log positions of what connection `i` received labelled `what`.
fn at(h: &Harness, i: usize, what: &str) -> Vec<usize> {
    let line = format!("{i} <- {what}");
    h.log.iter().enumerate().filter(|(_, l)| **l == line).map(|(n, _)| n).collect()
}

fn last_banker(h: &Harness) -> PlayerId {
    let end = h.inbox[0]
        .iter()
        .rev()
        .find_map(|m| match m {
            ServerMessage::Event(e) => match e.decode_body() {
                Ok(EventBody::GameEnd(g)) => Some(g),
                _ => None,
            },
            _ => None,
        })
        .expect("a game-end");
    serde_json::from_value(end.memory_after["last_banker"].clone()).expect("sam-gong memory")
}

#[test]
fn the_banker_queue_is_pushed_at_joins_hand_start_hand_end_and_admission_only_when_it_changes() {
    let mut h = sam_gong(5);
    let id = |h: &Harness, i: usize| h.players[i].id();
    let (p0, p1, p2, p3) = (id(&h, 0), id(&h, 1), id(&h, 2), id(&h, 3));
    for i in 0..3 {
        join_at(&mut h, i, i as u8);
    }
    // Seated one by one before any hand: equal chips, the lowest seat
    // banks first. Each change is pushed once, to everyone in the room.
    let before: Vec<BankerQueue> = queues(&h, 0).into_iter().filter(|q| q.hand_id.is_none()).collect();
    assert_eq!(before.last().map(|q| q.players.clone()), Some(vec![p0, p1, p2]), "{before:?}");
    h.tick();
    h.settle_chips();
    // Hand 1: its queue (with its id) right after its hand-prepare.
    let q = queues(&h, 1);
    let start = q.last().expect("pushed at hand start").clone();
    let hand1 = start.hand_id.expect("the running hand");
    assert_eq!(start.players, vec![p0, p1, p2]);
    let prepare = *at(&h, 1, "event hand-prepare").last().unwrap();
    let pushed = *at(&h, 1, "banker-queue").last().unwrap();
    assert!(prepare < pushed, "after hand-prepare");
    // Playing the hand changes nothing: nothing more is pushed until its end.
    let n = queues(&h, 1).len();
    play_out(&mut h);
    h.settle_chips();
    assert_eq!(last_banker(&h), p0, "the queue's head banked");
    let after = queues(&h, 1);
    assert_eq!(after.len(), n + 1, "one push at the hand's end: {after:?}");
    let next = after.last().unwrap();
    assert_eq!((next.hand_id, next.players.clone()), (None, vec![p1, p2, p0]), "clockwise after the banker");
    let end = *at(&h, 1, "event game-end").last().unwrap();
    assert!(end < *at(&h, 1, "banker-queue").last().unwrap(), "after game-end");

    // A fourth player sits down between hands: it joins the rotation after
    // the last hand's players (it does not bank on its first hand).
    join_at(&mut h, 3, 3);
    let seated = queues(&h, 0).last().unwrap().clone();
    assert_eq!((seated.hand_id, seated.players.clone()), (None, vec![p1, p2, p3, p0]));
    assert_eq!(queues(&h, 3).last(), Some(&seated), "the newcomer has it too");
    // A watcher admitted now gets the last queue on its connection.
    h.connect(4);
    assert_eq!(queues(&h, 4), vec![seated.clone()]);

    // Hand 2 starts with that head as its banker.
    next_hand(&mut h);
    let start2 = queues(&h, 0).last().unwrap().clone();
    assert!(start2.hand_id.is_some_and(|id| id != hand1));
    assert_eq!(start2.players, vec![p1, p2, p3, p0]);
    assert_eq!(queues(&h, 4).last(), Some(&start2), "watchers are told too");
    play_out(&mut h);
    h.settle_chips();
    assert_eq!(last_banker(&h), p1);
    assert_eq!(queues(&h, 0).last().unwrap().players, vec![p2, p3, p0, p1]);
}

#[test]
fn a_game_without_a_rotating_banker_pushes_no_queue() {
    let mut h = Harness::new(3, |_| {});
    h.seat_everyone();
    super::play_hand(&mut h);
    h.settle_chips();
    for i in 0..3 {
        assert!(queues(&h, i).is_empty(), "high-card has no banker");
    }
}
