//! Random play over every game in `registry::all()`.
//!
//! For each game, `CLAW_SIM_HANDS` hands (default 10,000), in table sessions
//! of up to 8 hands that carry the table memory from hand to hand (players
//! sometimes leave or join between hands). Random player counts, balances
//! and deck orders (ChaCha20 seeded from the game name and session number,
//! so a failure names a reproducible hand), random legal actions picked from
//! `valid_actions` (random amounts inside ranges), and now and then the
//! timeout action. Checked for every hand:
//! - it ends within `MAX_STEPS` actions, and never stalls with nobody to act;
//! - in every state, the auto action for the player to act exists, validates
//!   and applies on a clone of the hand; another seat's action is refused;
//! - every affordable offered action applies;
//! - public state never names a card dealt face down that is still hidden;
//! - no deck position or physical card is dealt twice;
//! - chips are conserved (`check_conservation`) and no seat is ever debited
//!   more than it had;
//! - replaying the recorded actions gives the same events, result and memory;
//! - the typed hooks say what the public state says: in every state `phase`
//!   is its `"phase"` string and `shown_cards` exactly the cards among its
//!   strings (the string scan the engine's deferred reveal used before), and
//!   every action's `cards_played` is its `"cards"` member (what clients
//!   read before).

use std::collections::HashSet;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use claw_games::{
    check_conservation, registry, replay, CardFace, ChipMove, ChipOp, ChipParty, DynGame, DynHand, HandEvent,
    HandRunner,
};
use claw_protocol::CardId;
use rand_chacha::ChaCha20Rng;
use serde_json::Value;

use crate::random_play::{self, Choice, Hand, Ids, Watch, SESSION};

fn hands_per_game() -> usize {
    std::env::var("CLAW_SIM_HANDS").ok().and_then(|v| v.trim().parse().ok()).unwrap_or(10_000)
}

#[derive(Debug, Default, Clone)]
struct Stats {
    hands: usize,
    actions: usize,
    max_actions: usize,
    timeouts: usize,
    refused_starts: usize,
    cards: usize,
    millis: u128,
}

impl Stats {
    fn add(&mut self, o: &Stats) {
        self.hands += o.hands;
        self.actions += o.actions;
        self.max_actions = self.max_actions.max(o.max_actions);
        self.timeouts += o.timeouts;
        self.refused_starts += o.refused_starts;
        self.cards += o.cards;
        self.millis += o.millis;
    }
}

/// Every string in a JSON document (object keys included).
fn strings<'a>(v: &'a Value, out: &mut Vec<&'a str>) {
    match v {
        Value::String(s) => out.push(s),
        Value::Array(a) => a.iter().for_each(|x| strings(x, out)),
        Value::Object(o) => o.iter().for_each(|(k, x)| {
            out.push(k);
            strings(x, out)
        }),
        _ => {}
    }
}

/// Tracks which dealt cards are still hidden: dealt face down, not revealed,
/// not named in an action. A bitset over the two-byte card codes.
struct Visibility {
    hidden: Vec<u64>,
    any: bool,
}

impl Default for Visibility {
    fn default() -> Visibility {
        Visibility { hidden: vec![0; 1024], any: false }
    }
}

impl Visibility {
    fn set(&mut self, c: CardId, on: bool) {
        let (w, b) = (usize::from(c.code() / 64), c.code() % 64);
        if on {
            self.hidden[w] |= 1 << b;
            self.any = true;
        } else {
            self.hidden[w] &= !(1 << b);
        }
    }

    fn is_hidden(&self, c: CardId) -> bool {
        self.hidden[usize::from(c.code() / 64)] >> (c.code() % 64) & 1 == 1
    }

    fn see_events(&mut self, events: &[HandEvent], dealt: &[claw_games::DealtCard]) {
        for e in events {
            match e {
                HandEvent::Dealt { cards, .. } => {
                    for c in cards {
                        self.set(c.card, c.face == CardFace::Down);
                    }
                }
                HandEvent::Reveal { positions } => {
                    for p in positions {
                        if let Some(c) = dealt.get(usize::from(*p)) {
                            self.set(c.card, false);
                        }
                    }
                }
                // A face-up transfer (Guandan's shown tribute) shows the card.
                HandEvent::Transfer { position, face: CardFace::Up, .. } => {
                    if let Some(c) = dealt.get(usize::from(*position)) {
                        self.set(c.card, false);
                    }
                }
                _ => {}
            }
        }
    }

    fn see_action(&mut self, action: &Value) {
        let mut s = Vec::new();
        strings(action, &mut s);
        for c in s.into_iter().filter_map(card) {
            self.set(c, false);
        }
    }

    fn check(&self, public_state: &Value) -> Result<(), String> {
        if !self.any {
            return Ok(());
        }
        let mut s = Vec::new();
        strings(public_state, &mut s);
        match s.into_iter().filter_map(card).find(|c| self.is_hidden(*c)) {
            Some(c) => Err(format!("public state shows hidden card {c}: {public_state}")),
            None => Ok(()),
        }
    }
}

/// The typed hooks against the public state `public` of `hand`: `phase` is
/// its `"phase"` string (what `your-turn` carried), `shown_cards` exactly the
/// cards whose code is one of its strings, keys aside (what the engine's
/// deferred reveal scanned for).
fn check_hooks(hand: &dyn DynHand, public: &Value) -> Result<(), String> {
    let phase = public.get("phase").and_then(Value::as_str);
    if hand.phase() != phase {
        return Err(format!("phase hook {:?}, public state {phase:?}: {public}", hand.phase()));
    }
    let mut scanned = HashSet::new();
    crate::support::strings(public, &mut scanned);
    let scanned: HashSet<CardId> =
        scanned.iter().filter_map(|s| s.parse::<CardId>().ok().filter(|c| c.to_string() == *s)).collect();
    let hook: HashSet<CardId> = hand.shown_cards().into_iter().collect();
    if hook != scanned {
        let mut extra: Vec<String> = hook.difference(&scanned).map(ToString::to_string).collect();
        let mut missing: Vec<String> = scanned.difference(&hook).map(ToString::to_string).collect();
        extra.sort();
        missing.sort();
        return Err(format!("shown_cards: extra {extra:?}, missing {missing:?}: {public}"));
    }
    Ok(())
}

/// `cards_played` of `action` is its `"cards"` member, as clients read it.
fn check_cards_played(game: &dyn DynGame, action: &Value) -> Result<(), String> {
    let read: Vec<CardId> =
        action.get("cards").and_then(|c| serde_json::from_value(c.clone()).ok()).unwrap_or_default();
    let hook = game.cards_played(action);
    if hook != read {
        return Err(format!("cards_played {hook:?} of {action}, its cards {read:?}"));
    }
    Ok(())
}

/// A card named by a short string ("As", "Kh#1", "RJ"), if it is one.
fn card(s: &str) -> Option<CardId> {
    let b = s.as_bytes();
    match b.len() {
        2 => {
            let rank = match b[0] {
                b'2'..=b'9' => b[0] - b'2',
                b'T' => 8,
                b'J' => 9,
                b'Q' => 10,
                b'K' => 11,
                b'A' => 12,
                b'B' | b'R' => return s.parse().ok(),
                _ => return None,
            };
            let suit = match b[1] {
                b'c' => 0,
                b'd' => 1,
                b'h' => 2,
                b's' => 3,
                _ => return None,
            };
            CardId::from_code(u16::from(rank * 4 + suit)).ok()
        }
        4..=6 if b[2] == b'#' => s.parse().ok(),
        _ => None,
    }
}

/// The simulation's checks, step by step (see the module documentation).
struct Checks<'a> {
    game: &'a dyn DynGame,
    n: usize,
    vis: Visibility,
}

impl Watch for Checks<'_> {
    fn started(&mut self, runner: &HandRunner, events: &[HandEvent]) -> Result<(), String> {
        self.vis.see_events(events, runner.dealt());
        Ok(())
    }

    fn state(&mut self, runner: &HandRunner, _at: usize) -> Result<(), String> {
        let hand = runner.hand();
        let public = hand.public_state();
        self.vis.check(&public)?;
        // The engine carries it into an action-result: it must fit (SPEC §12).
        let size = serde_json::to_string(&public).map_or(usize::MAX, |t| t.len());
        if size > claw_protocol::limits::MAX_PUBLIC_STATE_BYTES {
            return Err(format!("public state of {size} bytes"));
        }
        check_hooks(hand, &public)
    }

    fn choice(&mut self, runner: &HandRunner, _at: usize, c: &Choice) -> Result<(), String> {
        let (hand, seat, auto) = (runner.hand(), c.seat, &c.auto);
        if seat.index() >= self.n {
            return Err(format!("to_act names {seat} of {}", self.n));
        }
        // The timeout action validates and applies on a copy.
        hand.validate(seat, auto).map_err(|e| format!("auto action {auto} invalid: {e}"))?;
        runner.clone().act(seat, auto).map_err(|e| format!("auto action {auto} failed: {e}"))?;
        if let Some(o) = c.options.iter().find(|o| {
            serde_json::to_string(&o.action)
                .map_or(true, |t| t.len() > claw_protocol::limits::MAX_ACTION_BYTES)
        }) {
            return Err(format!("an offered action is over the signed-action limit: {}", o.action));
        }
        if let Some(other) = c.other {
            if hand.validate(other, &c.options[0].action).is_ok() {
                return Err(format!("{other} may act although {seat} is to act"));
            }
        }
        Ok(())
    }

    fn acted(&mut self, runner: &HandRunner, action: &Value, events: &[HandEvent]) -> Result<(), String> {
        check_cards_played(self.game, action)?;
        self.vis.see_action(action);
        self.vis.see_events(events, runner.dealt());
        Ok(())
    }
}

/// Plays one hand with the checks; returns its stats and the memory for the next hand.
fn play(h: &Hand, rng: &mut ChaCha20Rng) -> Result<(Stats, Value), String> {
    let n = h.players.len();
    let mut checks = Checks { game: h.game, n, vis: Visibility::default() };
    let played = random_play::play(h, rng, &mut checks)?;
    let (runner, events, actions) = (&played.runner, &played.events, &played.actions);
    let hand = runner.hand();
    let result = hand.result().ok_or("over without a result")?;
    check_conservation(events, &result, n).map_err(|e| format!("conservation: {e}"))?;
    if result.winners.iter().any(|w| w.index() >= n) || result.winners.windows(2).any(|w| w[0] >= w[1]) {
        return Err(format!("bad winners {:?}", result.winners));
    }
    // No seat pays more than it has at any point.
    let mut bal: Vec<i128> = h.players.iter().map(|p| i128::from(p.balance.0)).collect();
    for e in events {
        match e {
            HandEvent::Chip(ChipMove { op: ChipOp::Debit, party: ChipParty::Seat(s), amount, reason }) => {
                bal[s.index()] -= i128::from(amount.0);
                if bal[s.index()] < 0 {
                    return Err(format!("{s} overdrawn by {amount} ({reason})"));
                }
            }
            HandEvent::Chip(ChipMove { op: ChipOp::Credit, party: ChipParty::Seat(s), amount, .. }) => {
                bal[s.index()] += i128::from(amount.0)
            }
            _ => {}
        }
    }
    // Cards: positions 0.. in order, each the deck's card there, no physical card twice.
    let dealt = runner.dealt();
    let mut seen = HashSet::new();
    for (i, c) in dealt.iter().enumerate() {
        if usize::from(c.position) != i || h.deck.get(i) != Some(&c.card) {
            return Err(format!("position {i}: dealt {c:?}"));
        }
        if !seen.insert(c.card) {
            return Err(format!("{} dealt twice", c.card));
        }
    }
    let dealt_events: usize = events
        .iter()
        .map(|e| match e {
            HandEvent::Dealt { cards, .. } => cards.len(),
            _ => 0,
        })
        .sum();
    if dealt_events != dealt.len() {
        return Err(format!("{dealt_events} cards in events, {} dealt", dealt.len()));
    }
    let memory = hand.memory_after();
    let rep = replay(h.game, h.settings, &h.players, &h.memory, h.deck.clone(), actions)
        .map_err(|e| format!("replay: {e}"))?;
    if rep.events != *events {
        return Err("replay: different events".into());
    }
    if rep.result != result {
        return Err(format!("replay: different result {:?} vs {:?}", rep.result, result));
    }
    if rep.memory_after != memory {
        return Err("replay: different memory".into());
    }
    let stats = Stats {
        hands: 1,
        actions: actions.len(),
        max_actions: actions.len(),
        timeouts: played.timeouts,
        cards: dealt.len(),
        ..Stats::default()
    };
    Ok((stats, memory))
}

/// One table session: up to SESSION hands with memory carried over.
fn session(game: &dyn DynGame, settings: &Value, session: usize, hands: usize) -> Result<Stats, String> {
    let mut stats = Stats::default();
    let counts = random_play::session(game, settings, session, hands, 0, Ids::Random, &mut |h, rng| {
        let (s, mem) = play(h, rng)?;
        stats.add(&s);
        Ok(mem)
    })?;
    stats.refused_starts += counts.refused_starts;
    Ok(stats)
}

#[test]
fn every_registered_game_survives_random_play() {
    let games = registry::all();
    assert!(!games.is_empty(), "no games registered");
    let hands = hands_per_game();
    let sessions = hands.div_ceil(SESSION);
    let threads = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(2).clamp(1, 8);
    let next = AtomicUsize::new(0);
    let stats: Mutex<Vec<Stats>> = Mutex::new(vec![Stats::default(); games.len()]);
    let failures: Mutex<Vec<String>> = Mutex::new(Vec::new());
    let games: Vec<Arc<dyn DynGame>> = games;
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| loop {
                let w = next.fetch_add(1, Ordering::Relaxed);
                if w >= sessions * games.len() {
                    break;
                }
                let (g, s) = (w % games.len(), w / games.len());
                let count = SESSION.min(hands - s * SESSION);
                let t0 = std::time::Instant::now();
                match session(games[g].as_ref(), &Value::Null, s, count) {
                    Ok(mut st) => {
                        st.millis = t0.elapsed().as_millis();
                        stats.lock().unwrap().get_mut(g).unwrap().add(&st)
                    }
                    Err(e) => {
                        let mut f = failures.lock().unwrap();
                        if f.len() < 20 {
                            f.push(e);
                        }
                    }
                }
            });
        }
    });
    let stats = stats.into_inner().unwrap();
    for (g, st) in games.iter().zip(&stats) {
        eprintln!(
            "{:<14} hands {:>6}  actions {:>7} (max {:>4} in a hand)  timeouts {:>6}  cards {:>8}  refused starts {}  {} ms",
            g.meta().name,
            st.hands,
            st.actions,
            st.max_actions,
            st.timeouts,
            st.cards,
            st.refused_starts,
            st.millis
        );
    }
    let failures = failures.into_inner().unwrap();
    assert!(failures.is_empty(), "{} failing hands (first 20):\n{}", failures.len(), failures.join("\n"));
    for (g, st) in games.iter().zip(&stats) {
        assert_eq!(st.hands, hands, "{}", g.meta().name);
    }
}

/// The typed hooks (checked in every state by `play`) under settings that
/// show more cards than the defaults or change the rules: Guandan's face-up
/// tribute and its double tribute by card size, Blackjack
/// from one pack and from eight (pack-numbered cards), Dou Di Zhu's
/// permissive attachments, Sam Gong's practice table.
#[test]
fn typed_hooks_match_the_public_state_under_other_settings() {
    let variants = [
        ("guandan", serde_json::json!({"show_tribute": true})),
        ("guandan", serde_json::json!({"double_tribute": "by-card"})),
        ("blackjack", serde_json::json!({"decks": 1})),
        ("blackjack", serde_json::json!({"decks": 8})),
        ("dou-di-zhu", serde_json::json!({"rules": "permissive"})),
        ("sam-gong", serde_json::json!({"tutorial": true})),
    ];
    let sessions = (hands_per_game() / 20).div_ceil(SESSION).max(2);
    let mut failures = Vec::new();
    for (name, settings) in &variants {
        let game = registry::get(name).unwrap();
        let settings = game.normalize_settings(settings).unwrap();
        for s in 0..sessions {
            if let Err(e) = session(game.as_ref(), &settings, s, SESSION) {
                failures.push(format!("{settings}: {e}"));
            }
        }
    }
    assert!(failures.is_empty(), "{} failing sessions:\n{}", failures.len(), failures.join("\n"));
}
