//! Operator-facing room rules (issue #18: protocol and Sam Gong details,
//! "Chips an operator did not ask for"): leaving, presence, warnings,
//! entry thresholds, dissolving under-filled tables.

use super::*;

/// The players of every `hand-prepare` seat `i` received, in order.
fn prepared(h: &Harness, i: usize) -> Vec<Vec<PlayerId>> {
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
}

/// Completes the oldest chip call out.
fn complete_one(h: &mut Harness) -> ChipCall {
    let (id, call) = h.chips.pop_front().expect("a chip call");
    h.complete(id, call.clone());
    call
}

#[test]
fn a_player_who_leaves_or_goes_away_while_the_next_hand_forms_is_not_dealt_and_keeps_its_commission() {
    let mut h = Harness::new(4, |c| {
        c.commission = Chips(5);
        c.between_hands = Duration::ZERO;
    });
    h.seat_everyone();
    play_hand(&mut h);
    let after_first = h.balances.clone();
    // The next hand forms at once: the journal, then seat 0's and seat 1's commission.
    h.tick();
    assert!(matches!(complete_one(&mut h), ChipCall::OpenHand { .. }));
    assert!(matches!(complete_one(&mut h), ChipCall::Moves { .. }));
    assert!(matches!(complete_one(&mut h), ChipCall::Moves { .. }));
    assert_eq!(h.balances[0], after_first[0] - 5, "seat 0 paid its commission");
    // Seat 0's client closes (a bot done with its hands); seat 1 says leave.
    h.input(Input::Disconnected(Harness::conn(0)));
    h.send(1, ClientMessage::Leave);
    h.settle_chips();
    let ids: Vec<PlayerId> = h.players.iter().map(Identity::id).collect();
    let hands = prepared(&h, 2);
    assert_eq!(hands.len(), 2, "{:#?}", h.log);
    assert_eq!(hands[1], vec![ids[2], ids[3]], "neither the away nor the leaving player is dealt in");
    assert_eq!(h.balances[0], after_first[0], "seat 0's commission is back");
    assert_eq!(h.balances[1], after_first[1], "seat 1's commission is back");
    assert_eq!(h.balances[2], after_first[2] - 5 - 1, "commission and ante");
    // The hand's fee is the two commissions of the players dealt in.
    let fees = play_hand_of(&mut h, &[2, 3]);
    assert_eq!(fees, vec![Chips(10)]);
}

/// Plays one hand of high card with the given seats betting; returns the
/// fees of the settlements asked for meanwhile.
fn play_hand_of(h: &mut Harness, seats: &[usize]) -> Vec<Chips> {
    let mut fees = Vec::new();
    for i in seats {
        h.act(*i, json!({"type": "bet"}));
        while let Some((id, call)) = h.chips.pop_front() {
            if let ChipCall::Settle { fee, .. } = &call {
                fees.push(*fee);
            }
            h.complete(id, call);
        }
    }
    fees
}

/// A harness whose room plays Sam Gong (bronze tier: entry 1 000, bets
/// 100–500) with `cfg` edited by `edit`.
fn sam_gong(n: u8, edit: impl FnOnce(&mut RoomConfig)) -> Harness {
    let mut h = Harness::new(n, |_| {});
    let mut cfg = RoomConfig::new("r", "sam-gong");
    cfg.entropy = EntropyMode::Dealer;
    cfg.between_hands = Duration::from_secs(1);
    edit(&mut cfg);
    let game = cfg.validate().unwrap();
    let spec =
        Arc::new(GameSpec::new("r", game, cfg.settings.clone(), cfg.entropy, cfg.reveal, 1000).unwrap());
    h.core = RoomCore::new(
        h.now,
        Arc::new(cfg),
        spec,
        Arc::clone(&h.dealer),
        Limits::default(),
        Arc::new(Metrics::default()),
        Box::new(ChaCha20Rng::seed_from_u64(7)),
    );
    h.drain();
    h
}

fn join_answer(h: &Harness, i: usize) -> Option<claw_protocol::messages::JoinResponse> {
    h.inbox[i].iter().rev().find_map(|m| match m {
        ServerMessage::JoinResponse(j) => Some(j.clone()),
        _ => None,
    })
}

#[test]
fn a_player_below_the_tiers_entry_chips_cannot_sit_down() {
    use claw_protocol::messages::JoinRejectReason;
    let mut h = sam_gong(2, |_| {});
    h.balances = vec![500, 1000];
    for i in 0..2 {
        h.connect(i);
        h.join(i);
    }
    h.settle_chips();
    let refused = join_answer(&h, 0).expect("an answer");
    assert!(!refused.accepted, "500 chips at a bronze (1 000) table");
    assert_eq!(refused.reason, Some(JoinRejectReason::BelowEntry));
    assert!(refused.message.unwrap().contains("1000"));
    assert!(join_answer(&h, 1).unwrap().accepted, "1 000 chips meet the threshold");
    // A tutorial table has no threshold (practice, guests may have none).
    let mut t = sam_gong(1, |c| c.settings = json!({"tutorial": true}));
    t.balances = vec![0];
    t.connect(0);
    t.join(0);
    t.settle_chips();
    let j = join_answer(&t, 0).unwrap();
    assert_ne!(j.reason, Some(JoinRejectReason::BelowEntry));
}

/// Whose `timeout-action`s seat `i` saw, with their reasons.
fn timeouts(h: &Harness, i: usize) -> Vec<(claw_protocol::Seat, claw_protocol::messages::TimeoutReason)> {
    h.inbox[i]
        .iter()
        .filter_map(|m| match m {
            ServerMessage::Event(e) => match e.decode_body().ok()? {
                EventBody::TimeoutAction(t) => Some((t.seat, t.reason)),
                _ => None,
            },
            _ => None,
        })
        .collect()
}

#[test]
fn a_sam_gong_banker_leaving_before_the_bet_voids_the_hand_and_refunds_it() {
    let mut h = sam_gong(3, |c| c.settings = json!({"banker_seat": 0}));
    h.seat_everyone();
    let turn = h.last_turn(0).expect("the banker is to bet").clone();
    assert_eq!(turn.phase.as_deref(), Some("banker-bet"));
    h.send(0, ClientMessage::Leave);
    // No auto bet: the hand is voided and its (empty) journal refunded.
    assert!(timeouts(&h, 1).is_empty(), "the banker was not auto-bet");
    let (id, call) = h.chips.pop_front().expect("the refund");
    assert!(matches!(call, ChipCall::Void(_)));
    h.complete(id, call);
    assert!(h.reports.iter().any(|r| matches!(r, RoomEvent::HandVoided { .. })));
    for i in 1..3 {
        let told = h.inbox[i]
            .iter()
            .any(|m| matches!(m, ServerMessage::Error(e) if e.message.contains("[player-left]")));
        assert!(told, "seat {i} is told why");
    }
    assert_eq!(h.balances, vec![1000, 1000, 1000]);
}

#[test]
fn a_sam_gong_player_who_leaves_is_folded_when_its_turn_comes_without_a_timer() {
    use claw_protocol::messages::TimeoutReason;
    let mut h = sam_gong(3, |c| c.settings = json!({"banker_seat": 0}));
    h.seat_everyone();
    h.act(0, json!({"type": "bet", "amount": 100}));
    h.settle_chips();
    // Seat 2 leaves while seat 1 is to act; seat 1 calls.
    h.send(2, ClientMessage::Leave);
    h.act(1, json!({"type": "call"}));
    h.settle_chips();
    // Seat 2 was folded at once (no clock moved) and the hand ended.
    assert_eq!(timeouts(&h, 1), vec![(claw_protocol::Seat(2), TimeoutReason::Left)]);
    assert!(h.reports.iter().any(|r| matches!(r, RoomEvent::HandFinished { .. })), "{:#?}", h.log);
    assert_eq!(h.balances[2], 1000, "the leaver lost nothing");
}

fn turns(h: &Harness, i: usize) -> Vec<claw_protocol::messages::YourTurn> {
    h.inbox[i]
        .iter()
        .filter_map(|m| match m {
            ServerMessage::YourTurn(t) => Some(t.clone()),
            _ => None,
        })
        .collect()
}

#[test]
fn your_turn_warns_when_time_runs_low_and_when_the_balance_is_low() {
    let mut h = Harness::new(2, |c| {
        c.action_timeout = Duration::from_secs(30);
        c.warn_time_left = Duration::from_secs(10);
    });
    h.balances = vec![6, 1000];
    h.seat_everyone();
    let first = turns(&h, 0);
    assert_eq!(first.len(), 1);
    // 6 chips, 5 after the ante: below ten times the 1 chip a hand needs.
    let w = first[0].warning.clone().expect("a low-balance warning");
    assert!(w.contains("low balance") && !w.contains("10 s left"), "{w}");
    h.advance(Duration::from_secs(19));
    assert_eq!(turns(&h, 0).len(), 1, "no warning before 10 s are left");
    h.advance(Duration::from_secs(2));
    let again = turns(&h, 0);
    assert_eq!(again.len(), 2, "your-turn again at 10 s left");
    assert_eq!((again[1].seq, again[1].deadline_ms), (first[0].seq, first[0].deadline_ms), "the same turn");
    let w = again[1].warning.clone().unwrap();
    assert!(w.contains("10 s left") && w.contains("low balance"), "{w}");
    // Seat 1 (1 000 chips) acts in time: no warning at all on its turn.
    h.act(0, json!({"type": "bet"}));
    h.settle_chips();
    assert_eq!(turns(&h, 1).last().unwrap().warning, None);
    // Off: no second your-turn.
    let mut off = Harness::new(2, |c| c.warn_time_left = Duration::ZERO);
    off.seat_everyone();
    off.advance(Duration::from_secs(25));
    assert_eq!(turns(&off, 0).len(), 1);
}

#[test]
fn a_turn_shorter_than_the_warning_is_warned_in_its_first_your_turn_only() {
    let mut h = Harness::new(2, |c| {
        c.action_timeout = Duration::from_secs(5);
        c.warn_time_left = Duration::from_secs(10);
    });
    h.seat_everyone();
    h.tick();
    let t = turns(&h, 0);
    assert_eq!(t.len(), 1, "no repeat");
    assert!(t[0].warning.as_deref().is_some_and(|w| w.contains("5 s left")), "{:?}", t[0].warning);
}

/// Seat `i`'s `room-state` answer (asked now).
fn room_state(
    h: &mut Harness,
    i: usize,
    nonce: &str,
) -> (RoomPhase, Vec<claw_protocol::messages::TablePlayer>, Option<claw_protocol::messages::Acting>) {
    h.query(i, QueryType::RoomState, nonce);
    h.inbox[i]
        .iter()
        .rev()
        .find_map(|m| match m {
            ServerMessage::QueryResult(q) if q.nonce == nonce => match &q.data {
                QueryData::RoomState { phase, players, acting, .. } => {
                    Some((*phase, players.clone(), *acting))
                }
                _ => None,
            },
            _ => None,
        })
        .expect("a room-state answer")
}

#[test]
fn room_state_shows_whose_timer_runs_who_is_away_and_who_left_and_the_idle_room() {
    use claw_protocol::messages::PlayerStatus;
    // A room nobody sits in is idle; one seat taken (of two needed) is waiting.
    let mut e = Harness::new(2, |_| {});
    e.connect(0);
    assert_eq!(room_state(&mut e, 0, "e1").0, RoomPhase::Idle);
    e.join(0);
    e.settle_chips();
    assert_eq!(room_state(&mut e, 0, "e2").0, RoomPhase::Waiting);

    let mut h = Harness::new(3, |c| {
        c.action_timeout = Duration::from_secs(30);
        c.reconnect_window = Duration::from_secs(60);
    });
    h.seat_everyone();
    let ids: Vec<PlayerId> = h.players.iter().map(Identity::id).collect();
    let t0 = h.now.unix_ms;
    h.input(Input::Disconnected(Harness::conn(2)));
    let (phase, players, acting) = room_state(&mut h, 1, "s1");
    assert_eq!(phase, RoomPhase::Playing);
    let acting = acting.expect("seat 0's timer runs");
    assert_eq!((acting.player, acting.deadline_ms), (ids[0], t0 + 30_000));
    assert_eq!(Some(acting.deadline_ms), h.last_turn(0).map(|t| t.deadline_ms), "as its your-turn says");
    let away = players.iter().find(|p| p.id == ids[2]).unwrap();
    assert_eq!((away.status, away.until_ms), (PlayerStatus::Disconnected, Some(t0 + 60_000)));
    assert_eq!(players.iter().find(|p| p.id == ids[1]).unwrap().until_ms, None);
    // Seat 0 bets, then leaves: it shows as left while its hand runs.
    h.act(0, json!({"type": "bet"}));
    h.settle_chips();
    h.send(0, ClientMessage::Leave);
    let (_, players, acting) = room_state(&mut h, 1, "s2");
    assert_eq!(players.iter().find(|p| p.id == ids[0]).map(|p| p.status), Some(PlayerStatus::Left));
    assert_eq!(acting.map(|a| a.player), Some(ids[1]));
    // The hand ends (seat 2 times out while away): the leaver is gone.
    h.act(1, json!({"type": "bet"}));
    h.settle_chips();
    h.advance(Duration::from_secs(6));
    h.settle_chips();
    let (_, players, _) = room_state(&mut h, 1, "s3");
    assert!(!players.iter().any(|p| p.id == ids[0]), "{players:?}");
}

#[test]
fn an_under_filled_sam_gong_table_is_dissolved_after_60_s_and_its_players_told() {
    use claw_protocol::messages::KickReason;
    let mut h = sam_gong(3, |c| c.min_players = 3);
    h.connect(0);
    h.join(0);
    h.settle_chips();
    h.advance(Duration::from_secs(40));
    // A newcomer restarts the wait.
    h.connect(1);
    h.join(1);
    h.settle_chips();
    h.advance(Duration::from_secs(30));
    assert_eq!(kicked(&h, 0), None, "70 s after the first, 30 s after the last join");
    h.advance(Duration::from_secs(29));
    assert_eq!(kicked(&h, 0), None);
    h.advance(Duration::from_secs(2));
    for i in 0..2 {
        assert_eq!(kicked(&h, i), Some(KickReason::Dissolved));
        let k = position(&h.log, &format!("{i} <- kicked"));
        assert!(k < position(&h.log, &format!("{i} closed")), "told before the close");
        assert_eq!(status(&h, i), None, "the seat is free");
    }
    let why = h.inbox[0].iter().find_map(|m| match m {
        ServerMessage::Kicked(k) => Some(k.reason.clone()),
        _ => None,
    });
    assert!(why.unwrap().contains("60 s"));
    // The room stays open: a new player sits down.
    h.connect(2);
    h.join(2);
    h.settle_chips();
    assert!(join_answer(&h, 2).unwrap().accepted);
}

#[test]
fn other_games_and_a_zero_setting_never_dissolve() {
    use claw_protocol::messages::KickReason;
    for (mut h, what) in [
        (Harness::new(2, |_| {}), "high-card default"),
        (sam_gong(2, |c| c.dissolve_after = Some(Duration::ZERO)), "sam-gong with 0s"),
    ] {
        h.connect(0);
        h.join(0);
        h.settle_chips();
        h.advance(Duration::from_secs(200));
        assert_ne!(kicked(&h, 0), Some(KickReason::Dissolved), "{what}");
        assert!(status(&h, 0).is_some(), "{what}");
    }
}

#[test]
fn an_idle_watcher_is_told_kicked_before_its_connection_closes() {
    let mut h = Harness::new(1, |_| {});
    h.connect(0);
    h.advance(Duration::from_secs(31));
    assert!(position(&h.log, "0 <- kicked") < position(&h.log, "0 closed"));
}

#[test]
fn my_status_shows_the_chips_the_node_holds_for_a_refund() {
    let mut h = Harness::new(2, |_| {});
    h.seat_everyone();
    h.query(1, QueryType::MyStatus, "st");
    let (id, call) = h.chips.pop_front().expect("a status lookup");
    let ChipCall::Status(p) = call else { panic!("my-status asks for the held chips too: {call:?}") };
    assert_eq!(p, h.players[1].id());
    h.input(Input::Chips { id, outcome: ChipOutcome::Status { balance: Ok(Chips(960)), held: Chips(40) } });
    let answer = h.inbox[1].iter().find_map(|m| match m {
        ServerMessage::QueryResult(q) if q.nonce == "st" => Some(q.data.clone()),
        _ => None,
    });
    let Some(QueryData::MyStatus { balance, held, .. }) = answer else { panic!("{answer:?}") };
    assert_eq!((balance, held), (Chips(960), Chips(40)));
}
