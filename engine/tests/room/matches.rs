//! Guandan matches that always end (issue 31): the room ends a match from
//! outside the rules when it runs past `max_game_duration_sec` (the higher
//! level wins; equal levels draw) or when one of its players left the room
//! past the reconnect window (the other team wins). The next deal's signed
//! `game-start` memory carries the request, so the auditor's replay
//! reproduces the match's end and the chain of hands still links.

use std::time::Duration;

use claw_engine::room::{Input, RoomEvent};
use claw_protocol::audit::{audit, check_previous, AuditOptions, VerifiedHand};
use claw_protocol::messages::EventBody;
use claw_protocol::transcript::Transcript;
use serde_json::{json, Value};

use super::Harness;

/// A Guandan table of players 0–3 (player 4 waits outside), one deal
/// running; `settings` are the room's.
fn guandan(settings: Value) -> Harness {
    let mut h = Harness::new(5, |c| {
        c.game = "guandan".into();
        c.settings = settings;
        c.min_players = 4;
        c.max_players = 4;
        // The timer plays every seat: nobody is sat out for it.
        c.timeouts_to_sit_out = 0;
    });
    for i in 0..4 {
        h.connect(i);
        h.join(i);
    }
    h.settle_chips();
    h.tick();
    h.settle_chips();
    h
}

fn finished(h: &Harness) -> Vec<claw_protocol::HandId> {
    h.reports
        .iter()
        .filter_map(|r| match r {
            RoomEvent::HandFinished { hand_id, .. } => Some(*hand_id),
            _ => None,
        })
        .collect()
}

/// Plays the running deal out by the timer alone (each seat's 30 s runs
/// out); returns its archived transcript.
fn deal_by_timer(h: &mut Harness) -> Transcript {
    let before = finished(h).len();
    for _ in 0..3_000 {
        if finished(h).len() > before {
            break;
        }
        h.advance(Duration::from_secs(31));
        h.settle_chips();
    }
    let Some(id) = finished(h).get(before).copied() else {
        panic!("the deal did not finish: {:#?}", &h.log[h.log.len().saturating_sub(40)..])
    };
    h.files[&id].clone()
}

/// The next hand starts after `pause` (and ends at once when it is a
/// match's end); returns its transcript when it finished.
fn next_hand(h: &mut Harness, pause: Duration) -> Option<Transcript> {
    let before = finished(h).len();
    h.advance(pause);
    h.settle_chips();
    h.tick();
    h.settle_chips();
    finished(h).get(before).map(|id| h.files[id].clone())
}

fn memory(t: &Transcript) -> Value {
    t.events
        .iter()
        .find_map(|e| match e.decode_body() {
            Ok(EventBody::GameStart(g)) => Some(g.memory),
            _ => None,
        })
        .expect("a game-start")
}

fn memory_after(t: &Transcript) -> Value {
    t.events
        .iter()
        .find_map(|e| match e.decode_body() {
            Ok(EventBody::GameEnd(g)) => Some(g.memory_after),
            _ => None,
        })
        .expect("a game-end")
}

/// Audits `hands` (a room's consecutive hands) with the games' replay and
/// checks each continues the one before.
fn audit_chain(h: &Harness, hands: &[&Transcript]) -> Vec<VerifiedHand> {
    let replayer = claw_games::audit::GamesReplayer::default();
    let opts = AuditOptions { dealer: Some(h.dealer.id()), replayer: Some(&replayer), ..Default::default() };
    let verified: Vec<VerifiedHand> =
        hands.iter().map(|t| audit(t, &opts).unwrap_or_else(|e| panic!("audit: {e}")).hand).collect();
    for w in verified.windows(2) {
        check_previous(&w[0], &w[1]).expect("the next hand continues the one before");
    }
    verified
}

/// The match ends at the first deal boundary past the limit: the end deal
/// deals nothing and moves no chips, the higher level wins.
#[test]
fn a_match_past_its_time_limit_ends_at_the_next_deal_and_the_higher_level_wins() {
    let mut h = guandan(json!({"max_game_duration_sec": 3600}));
    let first = deal_by_timer(&mut h);
    let after = memory_after(&first);
    let levels: Vec<u64> = serde_json::from_value(after["levels"].clone()).unwrap();
    assert_ne!(levels[0], levels[1], "one team went up");
    let chips = h.balances.clone();
    let end = next_hand(&mut h, Duration::from_secs(3600)).expect("the end deal finished at once");
    assert_eq!(memory(&end)["end_request"], json!({"kind": "timeout"}), "signed in game-start");
    let winner = u64::from(levels[1] > levels[0]);
    let ended = memory_after(&end);
    assert_eq!(ended["last_match_end"], json!({"kind": "timeout", "winner": winner}));
    assert_eq!((ended["match_no"].clone(), ended["deal"].clone()), (json!(1), json!(0)), "a new match");
    assert_eq!(ended["levels"], json!([2, 2]));
    assert_eq!(h.balances, chips, "the end deal moves no chips");
    let deals = end
        .events
        .iter()
        .filter(|e| {
            matches!(
                e.decode_body(),
                Ok(EventBody::PhaseDeal(_) | EventBody::NewCard(_) | EventBody::Chips(_))
            )
        })
        .count();
    assert_eq!(deals, 0, "the end deal deals nothing and moves no chips");
    let chain = audit_chain(&h, &[&first, &end]);
    // Only the one member may be added: a dealer that also moves the levels
    // (or adds anything else) breaks the chain.
    let mut forged = chain[1].clone();
    forged.memory["levels"] = json!([14, 2]);
    assert!(check_previous(&chain[0], &forged).is_err(), "levels changed with the request");
    let mut forged = chain[1].clone();
    forged.memory["extra"] = json!(1);
    assert!(check_previous(&chain[0], &forged).is_err(), "a member other than end_request");
    // The new match deals again, without a request.
    let third = next_hand(&mut h, Duration::from_secs(2));
    assert!(third.is_none(), "a real deal is being played");
    assert!(h.core.snapshot().acting.is_some());
}

/// Without a limit (the default 0) the match goes on however long it takes.
#[test]
fn without_a_time_limit_the_match_goes_on() {
    let mut h = guandan(Value::Null);
    let first = deal_by_timer(&mut h);
    assert!(next_hand(&mut h, Duration::from_secs(30 * 24 * 3600)).is_none(), "the next deal is played");
    let second = deal_by_timer(&mut h);
    assert!(memory(&second).get("end_request").is_none());
    assert_eq!(memory(&second), memory_after(&first));
}

/// Equal levels when the time runs out: a draw, counted in `draws`.
#[test]
fn a_match_past_its_time_limit_with_equal_levels_is_a_draw() {
    let mut h = guandan(json!({"max_game_duration_sec": 1_000_000_000u64}));
    let mut hands = vec![deal_by_timer(&mut h)];
    // Deals until the levels are equal mid-match (the deck is seeded: this
    // is the same sequence every run).
    for _ in 0..40 {
        let m = memory_after(hands.last().unwrap());
        if m["deal"] != json!(0) && m["levels"][0] == m["levels"][1] {
            break;
        }
        assert!(next_hand(&mut h, Duration::from_secs(2)).is_none());
        hands.push(deal_by_timer(&mut h));
    }
    let m = memory_after(hands.last().unwrap());
    assert!(m["deal"] != json!(0) && m["levels"][0] == m["levels"][1], "no mid-match tie in 40 deals: {m}");
    let chips = h.balances.clone();
    let end = next_hand(&mut h, Duration::from_secs(1_000_000_000)).expect("the end deal");
    let ended = memory_after(&end);
    assert_eq!(ended["last_match_end"], json!({"kind": "draw"}));
    assert_eq!(ended["draws"], json!(1));
    assert_eq!(h.balances, chips);
    let last = hands.last().unwrap();
    audit_chain(&h, &[last, &end]);
}

/// A player who stays away past the reconnect window loses the match for
/// its team: the table waits for a fourth player, whose first deal is the
/// end deal; the auditor replays it.
#[test]
fn a_player_gone_past_the_reconnect_window_loses_the_match_for_its_team() {
    let mut h = guandan(Value::Null);
    let first = deal_by_timer(&mut h);
    let chips = h.balances.clone();
    // Player 1 (hand seat 1, team 1) drops and does not come back.
    h.input(Input::Disconnected(Harness::conn(1)));
    let window = h.core.config().reconnect_window;
    assert!(next_hand(&mut h, window + Duration::from_secs(1)).is_none(), "three players deal nothing");
    assert!(h.core.snapshot().acting.is_none());
    // A newcomer takes the free seat: the next hand ends the old match.
    h.connect(4);
    h.join(4);
    h.settle_chips();
    let end = next_hand(&mut h, Duration::ZERO).expect("the end deal");
    assert_eq!(memory(&end)["end_request"], json!({"kind": "disconnect", "seat": 1}));
    let ended = memory_after(&end);
    assert_eq!(ended["last_match_end"], json!({"kind": "disconnect", "winner": 0}));
    assert_eq!(ended["matches_won"], json!([1, 0]));
    assert_eq!(h.balances[..4], chips[..4], "no chips move (player 1 kept its own)");
    audit_chain(&h, &[&first, &end]);
    // Then a new match is dealt to the new table.
    assert!(next_hand(&mut h, Duration::from_secs(2)).is_none());
    let second = deal_by_timer(&mut h);
    assert!(memory(&second).get("end_request").is_none());
    assert_eq!(memory(&second)["deal"], json!(0));
}

/// A player who says leave mid-deal: the deal is played out for it, then
/// the match is over for its team as soon as the table can deal again.
#[test]
fn a_player_who_leaves_mid_deal_loses_the_match_once_the_deal_is_over() {
    let mut h = guandan(Value::Null);
    let first = deal_by_timer(&mut h);
    assert!(next_hand(&mut h, Duration::from_secs(2)).is_none());
    h.send(2, claw_protocol::messages::ClientMessage::Leave);
    let second = deal_by_timer(&mut h);
    assert!(memory(&second).get("end_request").is_none(), "the deal it left was played out");
    assert_ne!(memory_after(&second)["deal"], json!(0), "the match goes on after the deal it left");
    h.connect(4);
    h.join(4);
    h.settle_chips();
    let end = next_hand(&mut h, Duration::from_secs(2)).expect("the end deal");
    assert_eq!(memory(&end)["end_request"], json!({"kind": "disconnect", "seat": 2}));
    assert_eq!(memory_after(&end)["last_match_end"], json!({"kind": "disconnect", "winner": 1}));
    audit_chain(&h, &[&first, &second, &end]);
}
