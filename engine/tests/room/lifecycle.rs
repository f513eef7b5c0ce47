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
