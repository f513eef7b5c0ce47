//! House-AI seats (issue #30) under the virtual clock: empty seats are
//! asked for after the room's wait, a house AI joins without a welcome
//! grant and is marked in `room-state` and `game-start`, a refused start
//! (the house-AI budget spent) seats nobody and is asked again only after
//! the back-off, a disconnected person's seat goes to an AI after the
//! takeover grace (only while another person plays), an AI gives its seat
//! up to a person between hands, and the AIs leave when no person is seated.

use super::*;
use claw_engine::room::config::AiSeats;
use claw_engine::room::AiOutcome;
use claw_protocol::messages::KickReason;
use claw_protocol::Seat;

/// A room of `seats` seats with AI seats filled `after` 5 s; `n` identities
/// (people first, then the AIs' identities the driver would start).
fn ai_room(n: u8, seats: u8, edit: impl FnOnce(&mut AiSeats)) -> Harness {
    Harness::new(n, |c| {
        c.max_players = seats;
        c.reconnect_window = Duration::from_secs(60);
        let mut ai = AiSeats::after(Duration::from_secs(5));
        ai.chips = Chips(500);
        edit(&mut ai);
        c.ai_seats = Some(ai);
    })
}

/// Player `i` joins asking for `seat` (as a house AI's SDK does).
fn join_seat(h: &mut Harness, i: usize, seat: Seat) {
    h.send(
        i,
        ClientMessage::JoinRequest(JoinRequest {
            sdk_version: String::new(),
            name: None,
            seat: Some(seat),
            buy_in: None,
        }),
    );
}

/// Completes the next AI start as the identity `i`, which then connects
/// and joins for the seat asked; its join's chip call is checked and run.
fn start_ai(h: &mut Harness, i: usize) -> Seat {
    let (id, start) = h.ais.pop_front().expect("an AI start asked for");
    let player = h.players[i].id();
    h.input(Input::Ai { id, outcome: AiOutcome::Started(player) });
    h.connect(i);
    join_seat(h, i, start.seat);
    let (cid, call) = h.chips.pop_back().expect("the AI's join look-up");
    assert_eq!(call, ChipCall::Balance(player), "a house AI gets no welcome grant");
    h.complete(cid, call);
    start.seat
}

fn seat_person(h: &mut Harness, i: usize) {
    h.connect(i);
    h.join(i);
    h.settle_chips();
}

fn house_ai_flags(h: &Harness) -> Vec<(Option<Seat>, bool)> {
    h.core.snapshot().players.iter().map(|p| (p.seat, p.house_ai)).collect()
}

fn game_start_flags(h: &Harness, i: usize) -> Option<Vec<bool>> {
    h.inbox[i].iter().rev().find_map(|m| match m {
        ServerMessage::Event(e) => match e.decode_body().ok()? {
            EventBody::GameStart(g) => Some(g.players.iter().map(|p| p.house_ai).collect()),
            _ => None,
        },
        _ => None,
    })
}

#[test]
fn empty_seats_are_filled_after_the_wait_and_marked_as_the_houses() {
    let mut h = ai_room(3, 3, |_| {});
    // Nobody seated: nothing is asked for, however long.
    h.advance(Duration::from_secs(60));
    assert!(h.ais.is_empty());
    seat_person(&mut h, 0);
    h.advance(Duration::from_millis(4_999));
    assert!(h.ais.is_empty(), "not before the wait: {:#?}", h.log);
    h.advance(Duration::from_millis(1));
    let seats: Vec<Seat> = h.ais.iter().map(|(_, s)| s.seat).collect();
    assert_eq!(seats, vec![Seat(1), Seat(2)], "one start per empty seat");
    assert!(h.ais.iter().all(|(_, s)| s.chips == Chips(500) && s.game == "high-card"));
    // Asked once: the seats in flight are not asked for again.
    h.advance(Duration::from_secs(10));
    assert_eq!(h.log.iter().filter(|l| l.starts_with("ai seat")).count(), 2);
    assert_eq!(start_ai(&mut h, 1), Seat(1));
    assert_eq!(start_ai(&mut h, 2), Seat(2));
    assert_eq!(
        house_ai_flags(&h),
        vec![(Some(Seat(0)), false), (Some(Seat(1)), true), (Some(Seat(2)), true)],
        "room-state marks the house's AIs"
    );
    h.tick();
    h.settle_chips();
    assert_eq!(game_start_flags(&h, 0), Some(vec![false, true, true]), "game-start marks them, signed");
}

#[test]
fn fill_to_bounds_the_seats_filled() {
    let mut h = ai_room(3, 3, |a| a.fill_to = 2);
    seat_person(&mut h, 0);
    h.advance(Duration::from_secs(5));
    let seats: Vec<Seat> = h.ais.iter().map(|(_, s)| s.seat).collect();
    assert_eq!(seats, vec![Seat(1)]);
}

#[test]
fn a_spent_budget_seats_no_ai_and_the_seat_is_asked_for_again_only_after_the_back_off() {
    let mut h = ai_room(2, 2, |_| {});
    seat_person(&mut h, 0);
    h.advance(Duration::from_secs(5));
    let (id, _) = h.ais.pop_front().expect("asked for seat 1");
    let why = "the house-AI account holds 0 chips, the seat needs 500".to_owned();
    h.input(Input::Ai { id, outcome: AiOutcome::Refused(why) });
    assert_eq!(house_ai_flags(&h), vec![(Some(Seat(0)), false)], "nobody seated");
    assert_eq!(h.core.snapshot().phase, RoomPhase::Waiting);
    h.advance(Duration::from_secs(59));
    assert!(h.ais.is_empty(), "no new ask within the back-off");
    h.advance(Duration::from_secs(1));
    assert_eq!(h.ais.len(), 1, "asked again after the back-off: {:#?}", h.log);
}

#[test]
fn an_ai_that_never_connects_frees_its_seat_for_another_ask() {
    let mut h = ai_room(3, 2, |_| {});
    seat_person(&mut h, 0);
    h.advance(Duration::from_secs(5));
    let (id, _) = h.ais.pop_front().unwrap();
    h.input(Input::Ai { id, outcome: AiOutcome::Started(h.players[1].id()) });
    h.advance(Duration::from_secs(29));
    assert!(h.ais.is_empty());
    h.advance(Duration::from_secs(1));
    h.advance(Duration::from_secs(5));
    assert_eq!(h.ais.len(), 1, "asked again: {:#?}", h.log);
}

#[test]
fn a_disconnected_person_is_replaced_after_the_grace_while_another_person_plays() {
    // Seats: people 0 and 1, and identity 2 for the AI.
    let mut h = ai_room(3, 2, |a| a.takeover = Some(Duration::from_secs(10)));
    seat_person(&mut h, 0);
    seat_person(&mut h, 1);
    h.tick();
    h.settle_chips();
    assert_eq!(h.core.snapshot().phase, RoomPhase::Playing);
    h.input(Input::Disconnected(Harness::conn(1)));
    h.advance(Duration::from_millis(9_999));
    assert_eq!(status(&h, 1), Some(claw_protocol::messages::PlayerStatus::Disconnected), "held in the grace");
    assert!(h.ais.is_empty());
    h.advance(Duration::from_millis(1));
    // The seat goes at once (not after `after`): person 1 is out of the
    // table (still in the running hand until it ends), an AI is asked for.
    assert_eq!(h.ais.iter().map(|(_, s)| s.seat).collect::<Vec<_>>(), vec![Seat(1)], "{:#?}", h.log);
    assert!(h.core.snapshot().players.iter().all(|p| p.seat != Some(Seat(1))));
}

#[test]
fn the_only_person_away_keeps_the_seat_for_the_reconnect_window() {
    let mut h = ai_room(2, 2, |a| a.takeover = Some(Duration::from_secs(10)));
    seat_person(&mut h, 0);
    h.advance(Duration::from_secs(5));
    start_ai(&mut h, 1);
    h.tick();
    h.settle_chips();
    h.input(Input::Disconnected(Harness::conn(0)));
    h.advance(Duration::from_secs(30));
    assert_eq!(status(&h, 0), Some(claw_protocol::messages::PlayerStatus::Disconnected));
    assert!(h.ais.is_empty(), "no takeover with no other person at the table");
}

#[test]
fn an_ai_gives_its_seat_to_a_person_between_hands_and_the_ais_leave_when_no_person_is_seated() {
    // People 0 and 2; identity 1 for the AI.
    let mut h = ai_room(3, 2, |_| {});
    h.input(Input::Hold(true));
    seat_person(&mut h, 0);
    h.advance(Duration::from_secs(5));
    start_ai(&mut h, 1);
    assert_eq!(house_ai_flags(&h), vec![(Some(Seat(0)), false), (Some(Seat(1)), true)]);
    // The table is full; a person asks for a seat (no hand running).
    seat_person(&mut h, 2);
    assert_eq!(kicked(&h, 1), Some(KickReason::Idle), "the AI was told");
    assert!(h.log.iter().any(|l| l == "1 closed"));
    assert_eq!(house_ai_flags(&h), vec![(Some(Seat(0)), false), (Some(Seat(1)), false)]);
    // Both people leave: nothing is asked for any more.
    h.send(0, ClientMessage::Leave);
    h.send(2, ClientMessage::Leave);
    h.advance(Duration::from_secs(60));
    assert!(h.ais.is_empty());
}

#[test]
fn the_ais_leave_once_the_last_person_leaves_between_hands() {
    let mut h = ai_room(3, 3, |_| {});
    h.input(Input::Hold(true));
    seat_person(&mut h, 0);
    h.advance(Duration::from_secs(5));
    start_ai(&mut h, 1);
    start_ai(&mut h, 2);
    h.send(0, ClientMessage::Leave);
    assert_eq!(kicked(&h, 1), Some(KickReason::Idle));
    assert_eq!(kicked(&h, 2), Some(KickReason::Idle));
    assert!(h.core.snapshot().players.is_empty(), "{:#?}", h.core.snapshot().players);
}

#[test]
fn ai_seats_are_validated_with_reasons() {
    let base = || {
        let mut c = RoomConfig::new("r", "guandan");
        c.ai_seats = Some(AiSeats::after(Duration::from_secs(5)));
        c
    };
    let mut ok = base();
    ok.ai_seats.as_mut().unwrap().level = Some(claw_engine::room::config::AiLevel::L3);
    ok.validate().expect("guandan takes a level");
    assert!(ok.ai_seats.unwrap().chips.0 > 0, "chips filled in from the room's need");
    let refused = |edit: &dyn Fn(&mut RoomConfig)| {
        let mut c = base();
        edit(&mut c);
        c.validate().err().expect("refused").to_string()
    };
    let e = refused(&|c| {
        c.game = "texas-holdem".into();
        c.ai_seats.as_mut().unwrap().level = Some(claw_engine::room::config::AiLevel::L2);
    });
    assert!(e.contains("has one AI and no levels"), "{e}");
    let e = refused(&|c| c.ai_seats.as_mut().unwrap().fill_to = 5);
    assert!(e.contains("fill_to 5 is above the room's 4 seats"), "{e}");
    let e = refused(&|c| c.ai_seats.as_mut().unwrap().takeover = Some(Duration::from_secs(60)));
    assert!(e.contains("takeover must be shorter than reconnect_window"), "{e}");
    let e = refused(&|c| {
        c.buy_in = Chips(1_000);
        c.ai_seats.as_mut().unwrap().chips = Chips(999);
    });
    assert!(e.contains("ai_seats.chips 999 is below the 1000"), "{e}");
    let e = refused(&|c| {
        c.game = "sam-gong".into();
        c.ai_seats.as_mut().unwrap().after = Duration::from_secs(60);
    });
    assert!(e.contains("shorter than dissolve_after"), "{e}");
    // The rooms-file form: levels are 1–3.
    let bad: Result<RoomConfig, _> = serde_json::from_value(json!({
        "id": "g", "game": "guandan", "ai_seats": {"after": "5s", "level": 4}
    }));
    assert!(bad.unwrap_err().to_string().contains("the levels are 1, 2 and 3"));
    let good: RoomConfig = serde_json::from_value(json!({
        "id": "g", "game": "guandan", "ai_seats": {"after": "2s", "level": 1, "takeover": "20s"}
    }))
    .unwrap();
    assert_eq!(good.ai_seats.unwrap().after, Duration::from_secs(2));
}
