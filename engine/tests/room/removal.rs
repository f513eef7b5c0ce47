//! Operator bans and freezes in the room core (issue #31): a barred player
//! in the running hand plays it out and is paid; only then is it removed
//! (`kicked` `banned` / `frozen`), and it is dealt into no later hand. An
//! expired bar does nothing.

use super::*;
use claw_engine::room::{Bar, BarKind};
use claw_protocol::messages::KickReason;

fn bar(kind: BarKind, until_ms: Option<u64>) -> Option<Bar> {
    Some(Bar { kind, reason: "operator test".into(), until_ms })
}

#[test]
fn barred_players_finish_the_running_hand_then_leave_and_are_not_dealt_again() {
    let mut h = Harness::new(4, |c| c.between_hands = Duration::ZERO);
    h.seat_everyone();
    let ids: Vec<PlayerId> = h.players.iter().map(Identity::id).collect();
    let hand_prepares = |h: &Harness, i: usize| -> Vec<Vec<PlayerId>> {
        h.inbox[i]
            .iter()
            .filter_map(|m| match m {
                ServerMessage::Event(e) => match e.decode_body().ok()? {
                    EventBody::HandPrepare(p) => Some(p.players),
                    _ => None,
                },
                _ => None,
            })
            .collect()
    };
    assert_eq!(hand_prepares(&h, 0).len(), 1, "a hand runs: {:#?}", h.log);
    // Mid-hand: seat 0 banned, seat 1 frozen, seat 2 with a bar already expired.
    h.input(Input::Bar { player: ids[0], bar: bar(BarKind::Ban, None) });
    h.input(Input::Bar { player: ids[1], bar: bar(BarKind::Freeze, Some(h.now.unix_ms + 3_600_000)) });
    h.input(Input::Bar { player: ids[2], bar: bar(BarKind::Ban, Some(h.now.unix_ms.saturating_sub(1))) });
    assert_eq!(kicked(&h, 0), None, "not during its hand");
    assert!(!h.log.iter().any(|l| l == "0 closed" || l == "1 closed"));
    // The hand plays out as usual, the barred seats acting, and settles.
    play_hand(&mut h);
    assert!(h.reports.iter().any(|r| matches!(r, RoomEvent::HandFinished { .. })));
    assert!(!h.reports.iter().any(|r| matches!(r, RoomEvent::HandVoided { .. })));
    assert_eq!(h.balances.iter().sum::<u64>(), 4 * 1000, "chips conserved: the antes and bets paid out");
    // Then they are removed, after their game-end.
    let at = |h: &Harness, line: &str| h.log.iter().position(|l| l == line);
    let end0 = at(&h, "0 <- event game-end").expect("seat 0 saw its hand end");
    assert!(at(&h, "0 <- kicked").expect("seat 0 kicked") > end0, "{:#?}", h.log);
    assert!(at(&h, "0 closed").is_some() && at(&h, "1 closed").is_some(), "{:#?}", h.log);
    assert_eq!(kicked(&h, 0), Some(KickReason::Banned));
    assert_eq!(kicked(&h, 1), Some(KickReason::Frozen));
    assert_eq!(kicked(&h, 2), None, "an expired bar does nothing");
    let seated: Vec<PlayerId> =
        h.core.snapshot().players.iter().filter(|p| p.seat.is_some()).map(|p| p.id).collect();
    assert_eq!(seated, vec![ids[2], ids[3]]);
    // The next hand deals the two others only.
    h.tick();
    h.settle_chips();
    let hands = hand_prepares(&h, 2);
    assert_eq!(hands.len(), 2, "{:#?}", h.log);
    assert_eq!(hands[1], vec![ids[2], ids[3]]);
    assert_eq!(hand_prepares(&h, 0).len(), 1, "seat 0 saw no later hand");
}
