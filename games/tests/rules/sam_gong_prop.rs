//! Property test over random Sam Gong hands: random deck orders, balances,
//! bets, call/fold choices and table settings, several hands in a row at one
//! table. Every hand conserves chips (sum of nets + rake = 0, matching the
//! chip events), no seat is debited more than it holds, folded hands never
//! reach the public state, auto actions always validate, and a replay of the
//! recorded actions reproduces the hand.

use std::collections::HashSet;

use claw_games::{
    check_conservation, registry, replay, ChipMove, ChipOp, ChipParty, GameError, HandEvent, HandRunner,
    PlayerInfo, RecordedAction,
};
use claw_protocol::{CardId, Chips, PlayerId};
use proptest::prelude::*;
use serde_json::{json, Value};

use crate::support::strings;

#[derive(Debug, Clone)]
struct Table {
    balances: Vec<u64>,
    decks: Vec<Vec<CardId>>,
    choices: Vec<u8>,
    bets: Vec<u16>,
    min_bet: u64,
    span: u64,
    rake_percent: u8,
    face_cards: bool,
}

fn tables() -> impl Strategy<Value = Table> {
    (
        prop::collection::vec(prop_oneof![0u64..120, 0u64..1500, 100u64..20_000], 2..=6),
        prop::collection::vec(Just(CardId::deck(1, false)).prop_shuffle(), 1..=4),
        prop::collection::vec(any::<u8>(), 24),
        prop::collection::vec(any::<u16>(), 4),
        1u64..200,
        0u64..600,
        prop::sample::select(vec![0u8, 1, 5, 5, 5, 10, 100]),
        any::<bool>(),
    )
        .prop_map(|(balances, decks, choices, bets, min_bet, span, rake_percent, face_cards)| Table {
            balances,
            decks,
            choices,
            bets,
            min_bet,
            span,
            rake_percent,
            face_cards,
        })
}

/// What a run of hands went through (to check the generator reaches the
/// interesting cases).
#[derive(Debug, Default)]
struct Stats {
    hands: usize,
    insolvent: usize,
    all_fold: usize,
    ties: usize,
    insolvent_winners: usize,
    raked: usize,
}

fn play(t: &Table, stats: &mut Stats) -> Result<(), TestCaseError> {
    let g = registry::get("sam-gong").unwrap();
    let max_bet = t.min_bet + t.span;
    let settings = json!({
        "min_bet": t.min_bet,
        "max_bet": max_bet,
        "rake_percent": t.rake_percent,
        "sam_gong": if t.face_cards { "face-cards" } else { "ten-value" },
    });
    let ids: Vec<PlayerId> = (0..t.balances.len()).map(|i| PlayerId::from_bytes([i as u8 + 1; 32])).collect();
    let mut balances = t.balances.clone();
    let mut memory = Value::Null;
    let mut choice = t.choices.iter().cycle();
    for (h, deck) in t.decks.iter().enumerate() {
        let players: Vec<PlayerInfo> =
            ids.iter().zip(&balances).map(|(id, b)| PlayerInfo { id: *id, balance: Chips(*b) }).collect();
        let n = players.len();
        let started = HandRunner::start(g.as_ref(), &settings, &players, &memory, deck.clone());
        if balances.iter().all(|b| *b < t.min_bet) {
            prop_assert!(matches!(started.err(), Some(GameError::BadPlayers(_))));
            return Ok(());
        }
        let (mut r, mut events) = started.map_err(|e| TestCaseError::fail(e.to_string()))?;
        let banker = r.hand().to_act().unwrap();
        prop_assert!(balances[banker.index()] >= t.min_bet, "D9: the banker covers the minimum");
        let mut actions = Vec::new();
        while let Some(seat) = r.hand().to_act() {
            let auto = r.hand().auto_action(seat).unwrap();
            prop_assert!(r.hand().validate(seat, &auto).is_ok(), "auto action {auto} must validate");
            let c = *choice.next().unwrap();
            let ps = r.hand().public_state();
            let action = if ps["phase"] == json!("banker-bet") {
                let hi = max_bet.min(balances[seat.index()]);
                let amount = t.min_bet + u64::from(t.bets[h % t.bets.len()]) % (hi - t.min_bet + 1);
                json!({"type": "bet", "amount": amount})
            } else if c.is_multiple_of(3) {
                json!({"type": "fold"})
            } else if c % 7 == 1 {
                auto
            } else {
                let call = json!({"type": "call"});
                let bet = ps["banker_bet"].as_u64().unwrap();
                if bet > balances[seat.index()] {
                    let before = r.hand().state_json();
                    prop_assert!(matches!(r.act(seat, &call), Err(GameError::BadAmount(_))));
                    prop_assert_eq!(r.hand().state_json(), before);
                    json!({"type": "fold"})
                } else {
                    call
                }
            };
            events.extend(r.act(seat, &action).map_err(|e| TestCaseError::fail(format!("{action}: {e}")))?);
            actions.push(RecordedAction { seat, action });
        }
        let result = r.hand().result().unwrap();
        check_conservation(&events, &result, n).map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(result.net.iter().sum::<i64>() + result.rake.0 as i64, 0);
        prop_assert_eq!(result.house_net, 0);

        // No seat is debited more than it holds, at any point.
        let mut debited = vec![0u64; n];
        for e in &events {
            if let HandEvent::Chip(ChipMove {
                op: ChipOp::Debit, party: ChipParty::Seat(s), amount, ..
            }) = e
            {
                debited[s.index()] += amount.0;
                prop_assert!(debited[s.index()] <= balances[s.index()], "seat {} overdrawn", s.0);
            }
            let house = matches!(
                e,
                HandEvent::Chip(ChipMove { op: ChipOp::Debit, party: ChipParty::House, .. })
                    | HandEvent::Chip(ChipMove { op: ChipOp::Credit, party: ChipParty::House, .. })
            );
            prop_assert!(!house, "no house bank in Sam Gong");
        }

        // The rake never exceeds 5%-ish of the calls, and is 0 without calls.
        let called = r.hand().public_state()["players"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|p| p["status"] == json!("called"))
            .count();
        if called == 0 {
            prop_assert_eq!(result.rake, Chips(0));
        }

        // Folded hands never reach the public state; nor the reveal.
        let ps = r.hand().public_state();
        let mut seen = HashSet::new();
        strings(&ps, &mut seen);
        let revealed: HashSet<u16> = events
            .iter()
            .filter_map(
                |e| if let HandEvent::Reveal { positions } = e { Some(positions.clone()) } else { None },
            )
            .flatten()
            .collect();
        for (i, p) in ps["players"].as_array().unwrap().iter().enumerate() {
            let positions = (3 * i as u16)..(3 * i as u16 + 3);
            if p["status"] == json!("folded") {
                for pos in positions {
                    prop_assert!(!revealed.contains(&pos));
                    prop_assert!(!seen.contains(&deck[usize::from(pos)].to_string()));
                }
            } else if called > 0 {
                for pos in positions {
                    prop_assert!(revealed.contains(&pos));
                }
            }
        }

        // Replay reproduces events, result and memory.
        let out = replay(g.as_ref(), &settings, &players, &memory, deck.clone(), &actions)
            .map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(&out.events, &events);
        prop_assert_eq!(&out.result, &result);
        prop_assert_eq!(&out.memory_after, &r.hand().memory_after());

        let settlement = &ps["settlement"];
        let entries = settlement["entries"].as_array().unwrap();
        stats.hands += 1;
        stats.insolvent += usize::from(settlement["banker_insolvent"] == json!(true));
        stats.all_fold += usize::from(settlement["all_fold"] == json!(true));
        stats.ties += entries.iter().filter(|e| e["result"] == json!("tie")).count();
        stats.insolvent_winners += entries.iter().filter(|e| e["result"] == json!("insolvent-win")).count();
        stats.raked += usize::from(result.rake.0 > 0);
        // Insolvency (D13) is a shortfall: some winner was not paid in full.
        let short = entries
            .iter()
            .any(|e| e["result"] == json!("insolvent-win") || e["shortfall"].as_u64().is_some_and(|s| s > 0));
        prop_assert_eq!(settlement["banker_insolvent"] == json!(true), short);

        for (b, d) in balances.iter_mut().zip(&result.net) {
            let after = *b as i64 + d;
            prop_assert!(after >= 0);
            *b = after as u64;
        }
        memory = r.hand().memory_after();
        prop_assert_eq!(&memory["last_banker"], &json!(ids[banker.index()]));
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]
    #[test]
    fn random_hands_conserve_chips(t in tables()) {
        play(&t, &mut Stats::default())?;
    }
}

/// A fixed sample of tables reaches every settlement case.
#[test]
fn the_generator_reaches_every_case() {
    use proptest::strategy::ValueTree;
    use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
    let rng = TestRng::from_seed(RngAlgorithm::ChaCha, &[7; 32]);
    let mut runner = TestRunner::new_with_rng(Config::default(), rng);
    let mut stats = Stats::default();
    for _ in 0..400 {
        let t = tables().new_tree(&mut runner).unwrap().current();
        play(&t, &mut stats).unwrap();
    }
    assert!(stats.hands > 500, "{stats:?}");
    assert!(stats.insolvent > 5 && stats.insolvent_winners > 5, "{stats:?}");
    // Ties are rare in random deals (about 1 in 1000 hands); the vectors cover them.
    assert!(stats.all_fold > 5 && stats.ties > 0 && stats.raked > 50, "{stats:?}");
}
