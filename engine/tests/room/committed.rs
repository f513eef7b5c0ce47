//! Attacks on what a step shows before it commits, and on what a player's
//! input can do to a hand (issue 28's critical items), for every game.
//!
//! A step that moves chips waits for its chip call; meanwhile queries,
//! watchers and every frame must see only what was committed before it,
//! and a refused debit must leave no trace. No action a player can send may
//! void a hand.

use std::time::Duration;

use claw_engine::room::{ChipCall, ChipFailure, ChipOutcome, Input};
use claw_protocol::messages::{
    ActionRejectCode, ClientMessage, QueryData, QueryType, RawJson, ServerMessage, SignedAction,
    MAX_ACTION_BYTES,
};
use claw_protocol::PlayerId;
use serde_json::Value;

use super::Harness;

const GAMES: [&str; 5] = ["texas-holdem", "blackjack", "dou-di-zhu", "sam-gong", "guandan"];

/// A table of `game` at its smallest player count, with deep accounts.
fn table(game: &str) -> Harness {
    let g = claw_games::registry::get(game).expect("a registry game");
    let n = g.meta().min_players.max(2);
    let mut h = Harness::new(n, |c| {
        c.game = game.into();
        c.settings = Value::Null;
        c.min_players = n;
        c.max_players = n;
        if g.meta().house {
            c.house_bankroll = claw_protocol::Chips(1_000_000);
        }
    });
    h.balances = vec![1_000_000; usize::from(n)];
    for i in 0..usize::from(n) {
        h.connect(i);
        h.join(i);
    }
    h.settle_chips();
    h.tick();
    h
}

/// What a `table-state` query of player `i` answers now.
fn table_state(h: &mut Harness, i: usize, nonce: &str) -> (Option<claw_protocol::HandId>, Option<Value>) {
    h.query(i, QueryType::TableState, nonce);
    let answer = h.inbox[i].iter().rev().find_map(|m| match m {
        ServerMessage::QueryResult(q) if q.nonce == nonce => Some(q.data.clone()),
        _ => None,
    });
    match answer {
        Some(QueryData::TableState { hand_id, public_state }) => {
            (hand_id, public_state.map(|p| (*p).clone()))
        }
        other => panic!("no table-state answer to {nonce}: {other:?}"),
    }
}

/// Events each connection has received.
fn events(h: &Harness) -> Vec<usize> {
    h.inbox.iter().map(|b| b.iter().filter(|m| matches!(m, ServerMessage::Event(_))).count()).collect()
}

fn seat_of(h: &Harness, p: &PlayerId) -> usize {
    h.player_seat(p)
}

/// Plays one hand of `game` with chip calls answered after a delay; every
/// other debit of a player's action is refused. Before each chip call is
/// answered, every player asks for the table: the answer must be what the
/// table was before the step. A refused step must leave no frame behind.
fn a_query_sees_only_committed_state(game: &str) {
    let mut h = table(game);
    // The table as the last committed step left it.
    let mut committed = (None, None);
    let mut debits = 0usize;
    let mut steps = 0usize;
    for round in 0..2_000 {
        if h.log.iter().any(|l| l == "report hand-finished" || l == "report hand-voided") {
            break;
        }
        if !h.chips.iter().any(|(_, c)| matches!(c, ChipCall::Moves { .. })) {
            // No step waits for chips: this is the committed table (asked
            // by each player in turn, a moment later, within its budget).
            h.advance(Duration::from_millis(200));
            let asker = round % h.players.len();
            committed = table_state(&mut h, asker, &format!("q{round}-c"));
        }
        if let Some((id, call)) = h.chips.pop_front() {
            if let ChipCall::Moves { undo_on_refusal, .. } = &call {
                // The provider is slow: a second passes (and refills every
                // player's query budget).
                h.advance(Duration::from_secs(1));
                let sent = events(&h);
                for i in 0..h.players.len() {
                    let (hand, public) = table_state(&mut h, i, &format!("q{round}-{i}"));
                    assert_eq!(public, committed.1, "{game}: a query saw a step before it committed");
                    // The hand itself was announced (hand-prepare) before any step.
                    let announced = h.inbox[i]
                        .iter()
                        .any(|m| matches!(m, ServerMessage::Event(e) if Some(e.hand_id) == hand));
                    assert!(announced, "{game}: a query named a hand nobody was told of");
                }
                assert_eq!(events(&h), sent, "{game}: an event went out before its chips moved");
                if *undo_on_refusal {
                    debits += 1;
                    if debits % 2 == 1 {
                        h.input(Input::Chips {
                            id,
                            outcome: ChipOutcome::Moves(Err((
                                ChipFailure::Refused("insufficient balance".into()),
                                true,
                            ))),
                        });
                        let after = table_state(&mut h, 0, &format!("q{round}-refused"));
                        assert_eq!(after.1, committed.1, "{game}: a refused step left a trace in the table");
                        assert_eq!(events(&h), sent, "{game}: a refused step sent an event");
                        continue;
                    }
                }
            }
            h.complete(id, call);
            continue;
        }
        let acting = h.core.snapshot().acting.map(|a| seat_of(&h, &a.player));
        let Some(i) = acting else { panic!("{game}: nobody to act and nothing out: {:#?}", h.log) };
        let turn = h.last_turn(i).expect("the actor's turn").clone();
        let options: Vec<_> = turn.actions.iter().filter(|o| o.affordable).collect();
        let pick = options[steps % options.len()].action.clone();
        steps += 1;
        h.act(i, pick);
    }
    assert!(
        h.log.iter().any(|l| l == "report hand-finished"),
        "{game}: the hand did not finish: {:#?}",
        h.log
    );
}

#[test]
fn a_query_during_a_steps_chip_call_sees_the_table_before_it_in_every_game() {
    for game in GAMES {
        a_query_sees_only_committed_state(game);
    }
}

/// The round-3 exploit: the attacker's `call` waits for its debit, it asks
/// for the table at once, and the debit is refused (an emptied account).
/// The answer must not hold the flop; the refused step leaves nothing.
#[test]
fn a_refused_call_does_not_show_the_flop_to_a_query_sent_behind_it() {
    let mut h = table("texas-holdem");
    h.settle_chips();
    let before = table_state(&mut h, 0, "before");
    let sent = events(&h);
    // Pre-flop: whoever acts calls (or checks) until a debit is out.
    let acting = h.core.snapshot().acting.map(|a| seat_of(&h, &a.player)).expect("a turn");
    let turn = h.last_turn(acting).unwrap().clone();
    let call = turn
        .actions
        .iter()
        .find(|o| o.action["type"] == "call")
        .map(|o| o.action.clone())
        .expect("a call is offered pre-flop");
    h.act(acting, call);
    let seen = table_state(&mut h, acting, "behind-the-call");
    assert_eq!(seen, before, "the query saw the call's step");
    let (id, _) = h.chips.pop_front().expect("the call's debit is out");
    h.advance(Duration::from_millis(250));
    h.input(Input::Chips {
        id,
        outcome: ChipOutcome::Moves(Err((ChipFailure::Refused("insufficient balance".into()), true))),
    });
    let after = table_state(&mut h, acting, "after-refusal");
    assert_eq!(after, before);
    let board = after.1.as_ref().and_then(|s| s.get("board")).cloned().unwrap_or(Value::Null);
    assert!(board.as_array().is_none_or(|b| b.is_empty()), "no flop on the table: {board}");
    assert_eq!(events(&h), sent, "the refused call sent an event: {:#?}", h.log);
    // Still its turn, with a fresh timer.
    assert_eq!(h.core.snapshot().acting.map(|a| seat_of(&h, &a.player)), Some(acting));
}

/// The round-3 void: an action padded with JSON whitespace to just under
/// the frame limit. It is refused to its sender, the hand goes on.
#[test]
fn an_action_padded_to_the_frame_limit_is_refused_and_the_hand_goes_on() {
    for game in GAMES {
        let mut h = table(game);
        h.settle_chips();
        let acting = h.core.snapshot().acting.map(|a| seat_of(&h, &a.player)).expect("a turn");
        let turn = h.last_turn(acting).unwrap().clone();
        let honest = serde_json::to_string(&turn.actions[0].action).unwrap();
        for pad in [MAX_ACTION_BYTES + 1 - honest.len(), 65_136] {
            let text = format!("{}{}{}", &honest[..honest.len() - 1], " ".repeat(pad), "}");
            assert!(text.len() > MAX_ACTION_BYTES);
            let raw = RawJson::from_string(text).unwrap();
            let signed = SignedAction::sign(&h.players[acting], turn.hand_id, turn.seq, raw);
            h.send(acting, ClientMessage::Action(signed));
            let code = h.inbox[acting].iter().rev().find_map(|m| match m {
                ServerMessage::ActionRejected(r) => Some(r.code),
                _ => None,
            });
            assert_eq!(code, Some(ActionRejectCode::Malformed), "{game}: pad {pad}");
            assert!(h.chips.is_empty(), "{game}: the padded action reached the hand");
        }
        // An action of exactly the limit is carried into the transcript.
        let at_limit =
            format!("{}{}{}", &honest[..honest.len() - 1], " ".repeat(MAX_ACTION_BYTES - honest.len()), "}");
        assert_eq!(at_limit.len(), MAX_ACTION_BYTES);
        let signed = SignedAction::sign(
            &h.players[acting],
            turn.hand_id,
            turn.seq,
            RawJson::from_string(at_limit).unwrap(),
        );
        h.send(acting, ClientMessage::Action(signed));
        h.settle_chips();
        assert!(!h.log.iter().any(|l| l == "report hand-voided"), "{game}: {:#?}", h.log);
        assert!(
            h.log.iter().any(|l| l.ends_with("<- event action-result")),
            "{game}: the action at the limit was recorded: {:#?}",
            h.log
        );
    }
}
