//! People at a table (issue 30): the ready check before a match, the
//! rematch vote after one, and the live feed of watchers, `watch_delay`
//! actions behind the table. The test game's every hand is a match of
//! its own.

use std::collections::HashSet;
use std::time::Duration;

use claw_protocol::messages::{
    ClientMessage, ErrorCode, EventBody, KickReason, PlayerStatus, RematchVote, ServerMessage, VoteState,
    Watch,
};
use claw_protocol::HandId;
use serde_json::json;

use super::{kicked, status, Harness};

fn ready_checks(h: &Harness, i: usize) -> Vec<claw_protocol::messages::ReadyCheck> {
    h.inbox[i]
        .iter()
        .filter_map(|m| match m {
            ServerMessage::ReadyCheck(r) => Some(r.clone()),
            _ => None,
        })
        .collect()
}

fn rematches(h: &Harness, i: usize) -> Vec<claw_protocol::messages::Rematch> {
    h.inbox[i]
        .iter()
        .filter_map(|m| match m {
            ServerMessage::Rematch(r) => Some(r.clone()),
            _ => None,
        })
        .collect()
}

/// The hands `i` was sent a `hand-prepare` for.
fn hands_prepared(h: &Harness, i: usize) -> Vec<HandId> {
    h.inbox[i]
        .iter()
        .filter_map(|m| match m {
            ServerMessage::Event(e) if matches!(e.decode_body(), Ok(EventBody::HandPrepare(_))) => {
                Some(e.hand_id)
            }
            _ => None,
        })
        .collect()
}

fn count_game_ends(h: &Harness, i: usize) -> usize {
    h.inbox[i]
        .iter()
        .filter(
            |m| matches!(m, ServerMessage::Event(e) if matches!(e.decode_body(), Ok(EventBody::GameEnd(_)))),
        )
        .count()
}

/// Players `seats` connect and sit down.
fn sit(h: &mut Harness, seats: &[usize]) {
    for &i in seats {
        h.connect(i);
        h.join(i);
    }
    h.settle_chips();
    h.tick();
    h.settle_chips();
}

/// Seats `seats` each bet once, in order (one hand of high card).
fn play(h: &mut Harness, seats: &[usize]) {
    for &i in seats {
        h.act(i, json!({"type": "bet"}));
        h.settle_chips();
    }
}

#[test]
fn a_ready_check_holds_the_first_hand_until_every_seat_is_ready() {
    let mut h = Harness::new(2, |c| c.ready_check = Duration::from_secs(20));
    sit(&mut h, &[0, 1]);
    let open = ready_checks(&h, 0);
    let ids = [h.players[0].id(), h.players[1].id()];
    assert_eq!(open.last().map(|r| (r.state, r.waiting.clone())), Some((VoteState::Open, ids.to_vec())));
    assert_eq!(open.last().unwrap().deadline_ms, h.now.unix_ms + 20_000);
    assert!(hands_prepared(&h, 0).is_empty(), "no hand before everyone is ready");
    h.send(0, ClientMessage::Ready);
    let r = ready_checks(&h, 1).pop().unwrap();
    assert_eq!((r.state, r.ready, r.waiting), (VoteState::Open, vec![ids[0]], vec![ids[1]]));
    h.advance(Duration::from_secs(5));
    assert!(hands_prepared(&h, 0).is_empty());
    h.send(1, ClientMessage::Ready);
    assert_eq!(ready_checks(&h, 0).pop().unwrap().state, VoteState::Passed);
    h.tick();
    h.settle_chips();
    assert_eq!(hands_prepared(&h, 0).len(), 1, "the match starts once all are ready");
    // The seats stay ready: the next hand needs no second check.
    play(&mut h, &[0, 1]);
    h.advance(Duration::from_secs(1));
    h.settle_chips();
    assert_eq!(hands_prepared(&h, 1).len(), 2);
    assert_eq!(ready_checks(&h, 0).len(), 3, "open, one ready, passed");
}

#[test]
fn a_seat_that_resumes_during_a_check_is_asked_again() {
    let mut h = Harness::new(2, |c| c.ready_check = Duration::from_secs(20));
    let token = h.admit(0, None);
    h.input(claw_engine::room::Input::Ready(Harness::conn(0)));
    h.join(0);
    sit(&mut h, &[1]);
    assert_eq!(ready_checks(&h, 0).len(), 1);
    h.input(claw_engine::room::Input::Disconnected(Harness::conn(0)));
    h.inbox[0].clear();
    h.admit(0, Some(token));
    h.input(claw_engine::room::Input::Ready(Harness::conn(0)));
    let again = ready_checks(&h, 0);
    assert_eq!(again.len(), 1, "the open check, once");
    assert_eq!(again[0].state, VoteState::Open);
    assert!(again[0].waiting.contains(&h.players[0].id()));
}

/// SPEC §12's rows for the room settings of §9.8 state `RoomConfig::new`'s defaults.
#[test]
fn the_specs_people_defaults_are_the_rooms() {
    let spec = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../SPEC.md")).unwrap();
    let row = |label: &str| spec.lines().find(|l| l.starts_with(&format!("| {label}"))).unwrap().to_owned();
    let c = claw_engine::room::config::RoomConfig::new("r", "texas-holdem");
    assert!(c.ready_check.is_zero() && row("Ready check before a match").contains("default 0 (none)"));
    assert!(c.rematch_vote.is_zero() && row("Rematch vote after a match").contains("default 0 (none)"));
    let g = claw_engine::room::config::RoomConfig::new("r", "guandan");
    assert_eq!(g.ready_check, Duration::from_millis(30_000));
    assert_eq!(g.rematch_vote, Duration::from_millis(30_000));
    assert!(row("Ready check before a match").contains("Guandan 30 000 ms"));
    assert!(row("Rematch vote after a match").contains("Guandan 30 000 ms"));
    assert_eq!(g.watch_delay, 3);
    assert!(row("Live feed delay").contains("(Guandan 3)"));
    // A rooms file that leaves them out gets the game's default; one that sets 0 turns them off.
    let read =
        |v: serde_json::Value| claw_engine::room::config::RoomConfig::deserialize_with_defaults(v).unwrap();
    assert_eq!(read(serde_json::json!({"id": "g", "game": "guandan"})).ready_check, Duration::from_secs(30));
    let off =
        read(serde_json::json!({"id": "g", "game": "guandan", "ready_check": "0s", "rematch_vote": "0s"}));
    assert!(off.ready_check.is_zero() && off.rematch_vote.is_zero());
    let feed = row("Live feed delay");
    assert!(feed.contains(&format!("`watch_delay`, default {} player actions", c.watch_delay)), "{feed}");
    assert!(
        feed.contains(&format!("`max_spectators`, default {} (0 = no feed)", c.max_spectators)),
        "{feed}"
    );
    assert!(row("Seat held for a player quick-matched over HTTP").contains("15 000 ms"));
}

#[test]
fn an_unready_seat_is_freed_at_the_deadline_and_the_ready_ones_play() {
    let mut h = Harness::new(3, |c| c.ready_check = Duration::from_secs(20));
    sit(&mut h, &[0, 1, 2]);
    h.send(0, ClientMessage::Ready);
    h.send(1, ClientMessage::Ready);
    h.advance(Duration::from_secs(19));
    assert_eq!(status(&h, 2), Some(PlayerStatus::Seated), "the seat is held until the deadline");
    h.advance(Duration::from_secs(1));
    let last = ready_checks(&h, 2).pop().unwrap();
    assert_eq!((last.state, last.waiting), (VoteState::Failed, vec![h.players[2].id()]));
    assert_eq!(kicked(&h, 2), Some(KickReason::Idle));
    assert_eq!(status(&h, 2), None, "the unready seat is free");
    h.tick();
    h.settle_chips();
    assert_eq!(hands_prepared(&h, 0).len(), 1, "the ready seats play");
    assert!(hands_prepared(&h, 2).is_empty());
    // Nobody out of a seat can answer a check.
    h.connect(2);
    h.send(2, ClientMessage::Ready);
    assert!(h.inbox[2]
        .iter()
        .any(|m| matches!(m, ServerMessage::Error(e) if e.code == ErrorCode::NotAllowed)));
}

#[test]
fn a_rematch_vote_that_passes_deals_again_and_one_that_fails_ends_the_match() {
    let mut h = Harness::new(2, |c| c.rematch_vote = Duration::from_secs(10));
    sit(&mut h, &[0, 1]);
    play(&mut h, &[0, 1]);
    let v = rematches(&h, 0).pop().expect("a vote after the match");
    assert_eq!((v.state, v.waiting.len()), (VoteState::Open, 2));
    let end = h.log.iter().position(|l| l == "0 <- event game-end").unwrap();
    let vote = h.log.iter().position(|l| l == "0 <- rematch").unwrap();
    assert!(end < vote, "the vote follows the match's end");
    h.advance(Duration::from_secs(5));
    h.settle_chips();
    assert_eq!(hands_prepared(&h, 0).len(), 1, "no hand while the vote is open");
    h.send(0, ClientMessage::RematchVote(RematchVote { accept: true }));
    h.send(1, ClientMessage::RematchVote(RematchVote { accept: true }));
    assert_eq!(rematches(&h, 1).pop().unwrap().state, VoteState::Passed);
    h.tick();
    h.settle_chips();
    assert_eq!(hands_prepared(&h, 0).len(), 2, "the rematch is dealt");
    play(&mut h, &[0, 1]);
    // Player 1 wants more, player 0 does not: the match is over and the
    // seat that did not accept is freed.
    h.send(1, ClientMessage::RematchVote(RematchVote { accept: true }));
    h.send(0, ClientMessage::RematchVote(RematchVote { accept: false }));
    let v = rematches(&h, 1).pop().unwrap();
    assert_eq!(
        (v.state, v.accepted, v.waiting),
        (VoteState::Failed, vec![h.players[1].id()], vec![h.players[0].id()])
    );
    assert_eq!(kicked(&h, 0), Some(KickReason::Idle));
    assert_eq!(status(&h, 0), None);
    assert_eq!(status(&h, 1), Some(PlayerStatus::Seated));
    h.advance(Duration::from_secs(30));
    h.settle_chips();
    assert_eq!(hands_prepared(&h, 1).len(), 2, "one seat left: no hand");
    // A vote nobody answers ends the same way at its deadline.
    h.connect(0);
    h.join(0);
    h.settle_chips();
    h.tick();
    h.settle_chips();
    play(&mut h, &[0, 1]);
    h.advance(Duration::from_secs(10));
    assert_eq!(rematches(&h, 1).pop().unwrap().state, VoteState::Failed);
    assert_eq!((status(&h, 0), status(&h, 1)), (None, None));
    // A vote that asks nobody is refused.
    h.connect(0);
    h.send(0, ClientMessage::RematchVote(RematchVote { accept: true }));
    assert!(h.inbox[0]
        .iter()
        .any(|m| matches!(m, ServerMessage::Error(e) if e.code == ErrorCode::NotAllowed)));
}

/// Every seed and salt `t`'s `game-end` reveals that no event before it
/// made public: what a spectator must not get before the hand is over.
fn hidden_secrets(t: &claw_protocol::transcript::Transcript) -> Vec<String> {
    let text = |e: &claw_protocol::transcript::EventEnvelope| e.body.as_str().to_owned();
    let end = t.events.iter().position(|e| matches!(e.decode_body(), Ok(EventBody::GameEnd(_)))).unwrap();
    let before: String = t.events[..end].iter().map(text).collect();
    let Ok(EventBody::GameEnd(g)) = t.events[end].decode_body() else { unreachable!() };
    let mut secrets: Vec<String> = g.openings.iter().map(|o| o.salt.to_string()).collect();
    secrets.extend(g.dealer_seed.map(|s| s.to_string()));
    secrets.retain(|s| !before.contains(s.as_str()));
    assert!(!secrets.is_empty(), "the hand dealt hidden cards");
    secrets
}

/// Actions among the events `i` was sent for `hand`.
fn actions_seen(h: &Harness, i: usize, hand: HandId) -> usize {
    h.inbox[i]
        .iter()
        .filter(|m| {
            matches!(m, ServerMessage::Event(e) if e.hand_id == hand
                && matches!(e.decode_body(), Ok(EventBody::ActionResult(_) | EventBody::TimeoutAction(_))))
        })
        .count()
}

#[test]
fn spectators_get_nothing_early_and_follow_the_table_behind() {
    // Players 0–2 play; 3 and 4 watch; 5 is one spectator too many.
    let mut h = Harness::new(6, |c| {
        c.watch_delay = 1;
        c.max_spectators = 2;
        c.max_players = 3;
        c.min_players = 3;
    });
    for w in [3, 4, 5] {
        h.connect(w);
    }
    h.send(3, ClientMessage::Watch(Watch { on: true }));
    h.send(4, ClientMessage::Watch(Watch { on: true }));
    h.send(5, ClientMessage::Watch(Watch { on: true }));
    assert!(matches!(h.inbox[3].last(), Some(ServerMessage::Watching(w)) if w.on && w.delay == 1));
    assert!(
        h.inbox[5].iter().any(|m| matches!(m, ServerMessage::Error(e) if e.code == ErrorCode::NotAllowed)),
        "beyond max_spectators"
    );
    // (watcher inbox length, hands whose end the players had been sent)
    // after each step.
    let mut steps: Vec<(usize, HashSet<HandId>)> = Vec::new();
    let ended = |h: &Harness| -> HashSet<HandId> {
        h.inbox[0]
            .iter()
            .filter_map(|m| match m {
                ServerMessage::Event(e) if matches!(e.decode_body(), Ok(EventBody::GameEnd(_))) => {
                    Some(e.hand_id)
                }
                _ => None,
            })
            .collect()
    };
    sit(&mut h, &[0, 1, 2]);
    for hand in 0..3 {
        let id = *hands_prepared(&h, 0).last().unwrap();
        for (k, seat) in [0, 1, 2].into_iter().enumerate() {
            steps.push((h.inbox[3].len(), ended(&h)));
            // The follower trails the table by one action while it runs.
            assert_eq!(actions_seen(&h, 3, id), k.saturating_sub(1), "hand {hand}, before action {k}");
            play(&mut h, &[seat]);
        }
        steps.push((h.inbox[3].len(), ended(&h)));
        assert_eq!(count_game_ends(&h, 3), hand + 1, "the rest of the hand once it is over");
        assert_eq!(actions_seen(&h, 3, id), 3);
        // Watcher 4 stops after the first hand; 5 takes its place.
        if hand == 0 {
            h.send(4, ClientMessage::Watch(Watch { on: false }));
            h.send(5, ClientMessage::Watch(Watch { on: true }));
            assert!(matches!(h.inbox[5].last(), Some(ServerMessage::Watching(w)) if w.on));
        }
        h.advance(Duration::from_secs(1));
        h.settle_chips();
    }
    assert_eq!(count_game_ends(&h, 4), 1, "no more after `watch` off");
    assert_eq!(count_game_ends(&h, 5), 2);
    assert!(!h.inbox[3].iter().any(|m| matches!(m, ServerMessage::YourTurn(_) | ServerMessage::Turn(_))));
    // The secret scan: no seed or hidden salt reaches a follower before
    // the players were sent the hand's end.
    let frames: Vec<String> = h.inbox[3].iter().map(|m| serde_json::to_string(m).unwrap()).collect();
    for (hand_id, t) in &h.files {
        let secrets = hidden_secrets(t);
        for (len, ended) in &steps {
            if ended.contains(hand_id) {
                continue;
            }
            for f in &frames[..*len] {
                for s in &secrets {
                    assert!(!f.contains(s.as_str()), "a secret of hand {hand_id} reached a spectator early");
                }
            }
        }
    }
    // Followers are never idle; a watcher who does not follow is.
    h.advance(Duration::from_secs(31));
    assert_eq!(kicked(&h, 3), None);
    assert_eq!(kicked(&h, 4), Some(KickReason::Idle));
}

#[test]
fn a_seated_player_cannot_follow_and_a_room_without_a_feed_refuses() {
    let mut h = Harness::new(2, |c| c.max_spectators = 0);
    sit(&mut h, &[0]);
    h.send(0, ClientMessage::Watch(Watch { on: true }));
    h.connect(1);
    h.send(1, ClientMessage::Watch(Watch { on: true }));
    for i in [0, 1] {
        assert!(h.inbox[i]
            .iter()
            .any(|m| matches!(m, ServerMessage::Error(e) if e.code == ErrorCode::NotAllowed)));
    }
}
