//! The room lifecycle of the seeds (issue 31) under the virtual clock: a
//! room with `expire_after` that nobody sits in closes after it (from its
//! opening, and from when its last seat emptied), and one whose
//! under-filled table is dissolved closes at once; a standing room (no
//! `expire_after`) never expires.

use std::time::Duration;

use claw_engine::room::Input;
use claw_protocol::messages::{ClientMessage, KickReason, ServerMessage};

use super::Harness;

fn closed(h: &Harness) -> bool {
    h.log.iter().any(|l| l == "report closed")
}

#[test]
fn a_room_nobody_sits_in_closes_after_expire_after_and_a_standing_room_never() {
    let mut h = Harness::new(2, |c| c.expire_after = Some(Duration::from_secs(60)));
    h.advance(Duration::from_secs(59));
    assert!(!closed(&h) && !h.core.is_closed());
    h.advance(Duration::from_secs(1));
    assert!(closed(&h) && h.core.is_closed(), "{:#?}", h.log);

    let mut standing = Harness::new(2, |_| {});
    standing.advance(Duration::from_secs(30 * 86_400));
    assert!(standing.core.poll_timeout().is_none(), "no timer for an empty standing room");
    assert!(!standing.core.is_closed());
}

#[test]
fn a_seat_taken_stops_the_expiry_and_the_last_one_leaving_starts_it_again() {
    let mut h = Harness::new(2, |c| {
        c.expire_after = Some(Duration::from_secs(60));
        c.dissolve_after = Some(Duration::ZERO);
    });
    h.advance(Duration::from_secs(50));
    h.connect(0);
    h.join(0);
    h.settle_chips();
    h.advance(Duration::from_secs(100));
    assert!(!h.core.is_closed(), "a seated player keeps the room");
    h.send(0, ClientMessage::Leave);
    h.advance(Duration::from_secs(59));
    assert!(!h.core.is_closed());
    h.advance(Duration::from_secs(1));
    assert!(h.core.is_closed());
}

#[test]
fn a_dissolved_table_closes_a_room_that_expires_and_not_a_standing_one() {
    for expires in [true, false] {
        let mut h = Harness::new(3, |c| {
            c.dissolve_after = Some(Duration::from_secs(60));
            c.expire_after = expires.then_some(Duration::from_secs(600));
        });
        h.connect(0);
        h.join(0);
        h.settle_chips();
        h.advance(Duration::from_secs(60));
        let kicked = h.inbox[0]
            .iter()
            .any(|m| matches!(m, ServerMessage::Kicked(k) if k.code == KickReason::Dissolved));
        assert!(kicked, "the under-filled table is dissolved");
        assert_eq!(h.core.is_closed(), expires, "expires = {expires}: {:#?}", h.log);
        if !expires {
            // The standing room seats the next player.
            h.input(Input::Disconnected(Harness::conn(0)));
            h.connect(1);
            h.join(1);
            h.settle_chips();
            assert!(h.core.snapshot().players.iter().any(|p| p.seat.is_some()));
        }
    }
}

/// The seeds' Sam Gong lifecycle in a standing room: empty, it has no
/// timer and is never dissolved or closed; once someone sits at the
/// under-filled table, it is dissolved 60 s later and the room stays open.
#[test]
fn an_empty_sam_gong_room_never_dissolves_and_a_seated_under_filled_one_does_after_60_s() {
    let mut h = Harness::new(2, |c| {
        c.game = "sam-gong".into();
        c.settings = serde_json::Value::Null;
        c.min_players = 2;
    });
    h.balances = vec![10_000; 2];
    assert!(h.core.poll_timeout().is_none(), "no timer for an empty standing room");
    h.advance(Duration::from_secs(7 * 86_400));
    assert!(!h.core.is_closed());
    h.connect(0);
    h.join(0);
    h.settle_chips();
    h.advance(Duration::from_secs(59));
    assert!(!h.inbox[0].iter().any(|m| matches!(m, ServerMessage::Kicked(_))));
    h.advance(Duration::from_secs(1));
    let kicked =
        h.inbox[0].iter().any(|m| matches!(m, ServerMessage::Kicked(k) if k.code == KickReason::Dissolved));
    assert!(kicked, "{:#?}", h.log);
    assert!(!h.core.is_closed(), "a standing room stays open");
}

/// The seeds' Guandan timer: a turn left alone for the room's default
/// action timeout (30 s) is taken by the timer, which passes where a pass
/// is legal (rules setting `timeout_action` `pass`, the default).
#[test]
fn a_guandan_turn_left_for_the_default_30_s_is_passed_by_the_timer() {
    let default = claw_engine::room::config::RoomConfig::new("x", "guandan").action_timeout;
    assert_eq!(default, Duration::from_secs(30));
    let mut h = Harness::new(4, |c| {
        c.game = "guandan".into();
        c.settings = serde_json::Value::Null;
        c.min_players = 4;
        c.max_players = 4;
        c.action_timeout = default;
    });
    h.balances = vec![100_000; 4];
    h.seat_everyone();
    let turn = |h: &Harness| (0..4).find_map(|i| h.last_turn(i).map(|t| (i, t.seq, t.actions.clone())));
    let (leader, _, actions) = turn(&h).expect("the leader's turn");
    let play = actions.iter().find(|a| a.action["type"] == "play").expect("a play").action.clone();
    h.act(leader, play);
    h.settle_chips();
    let timeouts = |h: &Harness| {
        h.inbox[0]
            .iter()
            .filter_map(|m| match m {
                ServerMessage::Event(e) => match e.decode_body() {
                    Ok(claw_protocol::messages::EventBody::TimeoutAction(t)) => Some(t),
                    _ => None,
                },
                _ => None,
            })
            .collect::<Vec<_>>()
    };
    h.advance(Duration::from_secs(29));
    assert!(timeouts(&h).is_empty(), "not before the deadline");
    h.advance(Duration::from_secs(1));
    let t = timeouts(&h);
    assert_eq!(t.len(), 1, "{:#?}", h.log);
    assert_eq!(t[0].action["type"], "pass");
    assert_eq!(t[0].reason, claw_protocol::messages::TimeoutReason::Timeout);
}
