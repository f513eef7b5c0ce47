//! Guandan with AI players of every level through the hand runner:
//! `CLAW_SIM_HANDS` deals (default 10,000) in table sessions that carry the
//! match from deal to deal (so tribute, level-up and match ends happen),
//! under the defaults and, on a fifth as many deals, `double_tribute: by-card`.
//! Checked for every deal: it ends (no stall); every AI decision validates;
//! every card is accounted for (each of the 108 is in exactly one hand or
//! was played by the seat that held it, and the runner's holders agree);
//! replaying the recorded actions gives the same events, result and memory;
//! chips are conserved. A property test then checks that every AI level's
//! decision is legal in random states reached by random legal play.

use crate::guandan_common;

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use claw_games::guandan::ai::{decide, AiLevel, Ties, View};
use claw_games::guandan::tribute::DoubleTribute;
use claw_games::guandan::{GdAction, GdMemory, GdSettings, GdState, Guandan};
use claw_games::{
    check_conservation, registry, replay, DealTo, GamePlugin, HandEvent, HandRunner, RecordedAction,
};
use claw_protocol::{CardId, Seat};
use guandan_common::players;
use proptest::prelude::*;
use rand::seq::SliceRandom;
use rand::{Rng, RngCore, SeedableRng};
use rand_chacha::ChaCha20Rng;

const MAX_STEPS: usize = 2_000;
const SESSION: usize = 8;
const LEVELS: [AiLevel; 3] = [AiLevel::L1, AiLevel::L2, AiLevel::L3];

fn deals() -> usize {
    std::env::var("CLAW_SIM_HANDS").ok().and_then(|v| v.trim().parse().ok()).unwrap_or(10_000)
}

/// The typed state the runner's hand should be in, for the AI's view.
fn shadow(settings: &GdSettings, memory: &GdMemory, runner: &HandRunner, balance: u64) -> GdState {
    let g = Guandan;
    let mut st = g.create_game(settings, &players(balance), memory).expect("create");
    g.start(&mut st).expect("start");
    if !runner.dealt().is_empty() {
        g.receive_cards(&mut st, runner.dealt()).expect("deal");
    }
    st
}

#[derive(Default, Debug, Clone, Copy)]
struct Stats {
    deals: usize,
    actions: usize,
    transfers: usize,
    matches: usize,
}

fn deal(
    settings: &GdSettings,
    seed: u64,
    memory: &GdMemory,
    levels: [AiLevel; 4],
    deck: Vec<CardId>,
    balance: u64,
) -> Result<(GdMemory, Stats), String> {
    let game = registry::get("guandan").map_err(|e| e.to_string())?;
    let sv = serde_json::to_value(settings).map_err(|e| e.to_string())?;
    let mv = serde_json::to_value(memory).map_err(|e| e.to_string())?;
    let ps = players(balance);
    let (mut runner, mut events) =
        HandRunner::start(game.as_ref(), &sv, &ps, &mv, deck.clone()).map_err(|e| format!("start: {e}"))?;
    let mut st = shadow(settings, memory, &runner, balance);
    let mut ties = Ties::new(seed);
    let mut actions = Vec::new();
    let mut played_by: HashMap<CardId, u8> = HashMap::new();
    while !runner.hand().is_over() {
        if actions.len() >= MAX_STEPS {
            return Err(format!("not over after {MAX_STEPS} actions"));
        }
        let seat = runner.hand().to_act().ok_or("stalled: nobody to act")?;
        if Guandan.to_act(&st) != Some(seat) {
            return Err("shadow state out of step".into());
        }
        let a = decide(levels[seat.index()], &View::of(&st, seat.0), &mut ties);
        Guandan
            .validate(&st, seat, &a)
            .map_err(|e| format!("{:?} decided {a:?}: {e}", levels[seat.index()]))?;
        if let GdAction::Play { cards, .. } = &a {
            for c in cards {
                played_by.insert(*c, seat.0);
            }
        }
        let json = serde_json::to_value(&a).map_err(|e| e.to_string())?;
        events.extend(runner.act(seat, &json).map_err(|e| format!("runner refused {a:?}: {e}"))?);
        Guandan.apply(&mut st, seat, &a).map_err(|e| e.to_string())?;
        actions.push(RecordedAction { seat, action: json });
    }
    let hand = runner.hand();
    let result = hand.result().ok_or("no result")?;
    check_conservation(&events, &result, 4).map_err(|e| format!("conservation: {e}"))?;
    // Every card accounted for.
    let dealt = runner.dealt();
    if !(dealt.is_empty() || dealt.len() == 108) {
        return Err(format!("{} cards dealt", dealt.len()));
    }
    for (d, holder) in dealt.iter().zip(runner.holders()) {
        let in_hand: Vec<u8> = (0..4u8).filter(|s| st.hands[usize::from(*s)].contains(&d.card)).collect();
        let owner = match (in_hand.as_slice(), played_by.get(&d.card)) {
            ([s], None) => *s,
            ([], Some(s)) => *s,
            other => return Err(format!("{} is in hands {:?} / played by {:?}", d.card, other.0, other.1)),
        };
        if *holder != DealTo::Player(Seat(owner)) {
            return Err(format!("{}: runner says {holder:?}, the deal says seat {owner}", d.card));
        }
    }
    if serde_json::to_value(&st).map_err(|e| e.to_string())? != hand.state_json() {
        return Err("typed and runner states differ".into());
    }
    let memory_after = hand.memory_after();
    let rep = replay(game.as_ref(), &sv, &ps, &mv, deck, &actions).map_err(|e| format!("replay: {e}"))?;
    if rep.events != events || rep.result != result || rep.memory_after != memory_after {
        return Err("replay differs from the live run".into());
    }
    let transfers = events.iter().filter(|e| matches!(e, HandEvent::Transfer { .. })).count();
    let next: GdMemory = serde_json::from_value(memory_after).map_err(|e| e.to_string())?;
    let stats = Stats {
        deals: 1,
        actions: actions.len(),
        transfers,
        matches: usize::from(next.match_no > memory.match_no),
    };
    Ok((next, stats))
}

/// `total` deals under `settings` in sessions of [`SESSION`].
fn simulate(settings: &GdSettings, total: usize) -> Stats {
    let sessions = total.div_ceil(SESSION);
    let threads = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(2).clamp(1, 8);
    let next = AtomicUsize::new(0);
    let stats = Mutex::new(Stats::default());
    let failures = Mutex::new(Vec::<String>::new());
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| loop {
                let s = next.fetch_add(1, Ordering::Relaxed);
                if s >= sessions {
                    break;
                }
                let mut rng = ChaCha20Rng::seed_from_u64(0x6775_616e_6461_6e00 ^ s as u64);
                let levels = [0, 1, 2, 3].map(|_| LEVELS[rng.gen_range(0..3)]);
                let mut memory = GdMemory::default();
                for k in 0..SESSION.min(total - s * SESSION) {
                    let mut deck = CardId::deck(2, true);
                    deck.shuffle(&mut rng);
                    let balance = if rng.gen_bool(0.1) { rng.gen_range(0..5) } else { 1_000 };
                    match deal(settings, rng.next_u64(), &memory, levels, deck, balance) {
                        Ok((m, st)) => {
                            memory = m;
                            let mut t = stats.lock().unwrap();
                            t.deals += st.deals;
                            t.actions += st.actions;
                            t.transfers += st.transfers;
                            t.matches += st.matches;
                        }
                        Err(e) => {
                            failures.lock().unwrap().push(format!("session {s} deal {k} {levels:?}: {e}"));
                            break;
                        }
                    }
                }
            });
        }
    });
    let st = stats.into_inner().unwrap();
    eprintln!(
        "guandan AI sim ({}): {} deals, {} actions, {} tribute/return transfers, {} matches finished",
        serde_json::to_string(&settings.double_tribute).unwrap_or_default(),
        st.deals,
        st.actions,
        st.transfers,
        st.matches
    );
    let f = failures.into_inner().unwrap();
    assert!(f.is_empty(), "{} failing deals:\n{}", f.len(), f.join("\n"));
    assert_eq!(st.deals, total);
    if total >= 400 {
        assert!(st.transfers > 0, "tribute never happened");
    }
    st
}

#[test]
fn ai_players_of_every_level_play_whole_matches() {
    simulate(&GdSettings::default(), deals());
}

/// The other double-tribute reading (`by-card`), on a fifth of the deals.
#[test]
fn ai_players_play_whole_matches_with_double_tribute_by_card() {
    let s = GdSettings { double_tribute: DoubleTribute::ByCard, ..GdSettings::default() };
    simulate(&s, (deals() / 5).max(SESSION));
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, .. ProptestConfig::default() })]

    /// In states reached by random legal play, every AI level decides a legal action.
    #[test]
    fn every_ai_decision_is_legal(seed in any::<u64>(), steps in 0usize..160) {
        let mut rng = ChaCha20Rng::seed_from_u64(seed);
        let mut order = [0u8, 1, 2, 3];
        order.shuffle(&mut rng);
        let mut deck = CardId::deck(2, true);
        deck.shuffle(&mut rng);
        let memory = if seed % 3 == 0 { GdMemory::default() } else { guandan_common::after(order, [rng.gen_range(2..=14), rng.gen_range(2..=14)], (seed % 2) as u8) };
        let mut st = guandan_common::start(&GdSettings::default(), &memory, &deck);
        for _ in 0..steps {
            let Some(seat) = Guandan.to_act(&st) else { break };
            for level in LEVELS {
                let a = decide(level, &View::of(&st, seat.0), &mut Ties::new(rng.next_u64()));
                prop_assert!(Guandan.validate(&st, seat, &a).is_ok(), "{:?} at {:?}: {:?}", level, st.phase, a);
            }
            let options = Guandan.valid_actions(&st);
            prop_assert!(!options.is_empty());
            let pick = options[rng.gen_range(0..options.len())].action.clone();
            Guandan.apply(&mut st, seat, &pick).map_err(|e| TestCaseError::fail(e.to_string()))?;
        }
    }
}
