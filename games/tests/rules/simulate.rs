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
    check_conservation, registry, replay, CardFace, ChipMove, ChipOp, ChipParty, DynGame, DynHand, GameError,
    HandEvent, HandRunner, PlayerInfo, RecordedAction,
};
use claw_protocol::{CardId, Chips, PlayerId, Seat};
use rand::seq::SliceRandom;
use rand::{Rng, RngCore, SeedableRng};
use rand_chacha::ChaCha20Rng;
use serde_json::Value;

/// Actions after which a hand counts as not terminating.
const MAX_STEPS: usize = 5_000;
/// Hands per table session (memory carried between them).
const SESSION: usize = 8;

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

fn seed_of(name: &str, session: usize) -> u64 {
    // FNV-1a over the name, mixed with the session number.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in name.bytes() {
        h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
    }
    h ^ (session as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15)
}

fn random_balance(rng: &mut ChaCha20Rng) -> u64 {
    match rng.gen_range(0..10) {
        0 => rng.gen_range(1..=20),
        1..=6 => rng.gen_range(20..=2_000),
        7 | 8 => rng.gen_range(2_000..=100_000),
        _ => rng.gen_range(100_000..=1_000_000_000),
    }
}

fn random_id(rng: &mut ChaCha20Rng) -> PlayerId {
    let mut b = [0u8; 32];
    rng.fill_bytes(&mut b);
    PlayerId::from_bytes(b)
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

/// Replaces the first numeric field equal to the range's minimum (the
/// representative action carries the minimum) with `amount`.
fn with_amount(action: &Value, min: Chips, amount: u64) -> Value {
    let mut a = action.clone();
    if let Value::Object(o) = &mut a {
        if let Some((_, v)) = o.iter_mut().find(|(k, v)| *k != "type" && v.as_u64() == Some(min.0)) {
            *v = Value::from(amount);
        }
    }
    a
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

struct Hand<'a> {
    game: &'a dyn DynGame,
    settings: &'a Value,
    players: Vec<PlayerInfo>,
    memory: Value,
    deck: Vec<CardId>,
}

/// Plays one hand; returns its stats and the memory for the next hand.
fn play(h: &Hand, rng: &mut ChaCha20Rng) -> Result<(Stats, Value), String> {
    let settings = h.settings;
    let n = h.players.len();
    let (mut runner, mut events) = HandRunner::start(h.game, settings, &h.players, &h.memory, h.deck.clone())
        .map_err(|e| format!("start: {e}"))?;
    let mut vis = Visibility::default();
    vis.see_events(&events, runner.dealt());
    let mut actions: Vec<RecordedAction> = Vec::new();
    let mut stats = Stats { hands: 1, ..Stats::default() };
    loop {
        let hand = runner.hand();
        let public = hand.public_state();
        vis.check(&public)?;
        // The engine carries it into an action-result: it must fit (SPEC §12).
        let size = serde_json::to_string(&public).map_or(usize::MAX, |t| t.len());
        if size > claw_protocol::limits::MAX_PUBLIC_STATE_BYTES {
            return Err(format!("after {} actions: public state of {size} bytes", actions.len()));
        }
        check_hooks(hand, &public).map_err(|e| format!("after {} actions: {e}", actions.len()))?;
        if hand.is_over() {
            break;
        }
        if actions.len() >= MAX_STEPS {
            return Err(format!("not over after {MAX_STEPS} actions"));
        }
        let seat = hand.to_act().ok_or("stalled: the hand is not over and nobody is to act")?;
        if seat.index() >= n {
            return Err(format!("to_act names {seat} of {n}"));
        }
        let at = actions.len();
        // The timeout action exists, validates and applies on a copy.
        let auto = hand.auto_action(seat).ok_or_else(|| format!("action {at}: no auto action for {seat}"))?;
        hand.validate(seat, &auto).map_err(|e| format!("action {at}: auto action {auto} invalid: {e}"))?;
        runner
            .clone()
            .act(seat, &auto)
            .map_err(|e| format!("action {at}: auto action {auto} failed: {e}"))?;
        let options = hand.valid_actions();
        if let Some(o) = options.iter().find(|o| {
            serde_json::to_string(&o.action)
                .map_or(true, |t| t.len() > claw_protocol::limits::MAX_ACTION_BYTES)
        }) {
            return Err(format!(
                "action {at}: an offered action is over the signed-action limit: {}",
                o.action
            ));
        }
        if options.is_empty() {
            return Err(format!("action {at}: {seat} to act but no valid actions"));
        }
        if n > 1 {
            let other = Seat(((seat.index() + 1 + rng.gen_range(0..n - 1)) % n) as u8);
            if hand.validate(other, &options[0].action).is_ok() {
                return Err(format!("action {at}: {other} may act although {seat} is to act"));
            }
        }
        let affordable: Vec<_> = options.iter().filter(|o| o.affordable).collect();
        let action = if affordable.is_empty() || rng.gen_bool(0.05) {
            stats.timeouts += 1;
            auto
        } else {
            let o = affordable[rng.gen_range(0..affordable.len())];
            match o.range {
                Some((lo, hi)) if hi > lo => {
                    let amount = match rng.gen_range(0..4) {
                        0 | 1 => lo.0,
                        2 => rng.gen_range(lo.0..=hi.0),
                        _ => hi.0,
                    };
                    with_amount(&o.action, lo, amount)
                }
                _ => o.action.clone(),
            }
        };
        let ev =
            runner.act(seat, &action).map_err(|e| format!("action {at}: {seat} {action} refused: {e}"))?;
        check_cards_played(h.game, &action).map_err(|e| format!("action {at}: {e}"))?;
        vis.see_action(&action);
        vis.see_events(&ev, runner.dealt());
        events.extend(ev);
        actions.push(RecordedAction { seat, action });
    }
    let hand = runner.hand();
    let result = hand.result().ok_or("over without a result")?;
    check_conservation(&events, &result, n).map_err(|e| format!("conservation: {e}"))?;
    if result.winners.iter().any(|w| w.index() >= n) || result.winners.windows(2).any(|w| w[0] >= w[1]) {
        return Err(format!("bad winners {:?}", result.winners));
    }
    // No seat pays more than it has at any point.
    let mut bal: Vec<i128> = h.players.iter().map(|p| i128::from(p.balance.0)).collect();
    for e in &events {
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
    let rep = replay(h.game, settings, &h.players, &h.memory, h.deck.clone(), &actions)
        .map_err(|e| format!("replay: {e}"))?;
    if rep.events != events {
        return Err("replay: different events".into());
    }
    if rep.result != result {
        return Err(format!("replay: different result {:?} vs {:?}", rep.result, result));
    }
    if rep.memory_after != memory {
        return Err("replay: different memory".into());
    }
    stats.actions = actions.len();
    stats.max_actions = actions.len();
    stats.cards = dealt.len();
    Ok((stats, memory))
}

/// One table session: up to SESSION hands with memory carried over.
fn session(game: &dyn DynGame, settings: &Value, session: usize, hands: usize) -> Result<Stats, String> {
    let meta = game.meta();
    let name = meta.name;
    let mut rng = ChaCha20Rng::seed_from_u64(seed_of(name, session));
    let (lo, hi) = (usize::from(meta.min_players), usize::from(meta.max_players));
    let mut ids: Vec<PlayerId> = (0..rng.gen_range(lo..=hi)).map(|_| random_id(&mut rng)).collect();
    let mut memory = Value::Null;
    let mut stats = Stats::default();
    for k in 0..hands {
        let hand_no = session * SESSION + k;
        let ctx = |e: String| format!("{name}: session {session}, hand {hand_no}: {e}");
        if k > 0 {
            // Someone leaves or sits down now and then.
            match rng.gen_range(0..10) {
                0 if ids.len() > lo => {
                    let i = rng.gen_range(0..ids.len());
                    ids.remove(i);
                }
                1 if ids.len() < hi => {
                    let i = rng.gen_range(0..=ids.len());
                    let id = random_id(&mut rng);
                    ids.insert(i, id);
                }
                _ => {}
            }
        }
        let deck = match game.scripted_deck(settings, hand_no as u64).map_err(|e| ctx(e.to_string()))? {
            Some(d) => d,
            None => {
                let mut d = game.create_deck(settings).map_err(|e| ctx(e.to_string()))?;
                d.shuffle(&mut rng);
                d
            }
        };
        // Balances the game refuses (too small for its minimum bet) are drawn again.
        let mut attempt = 0;
        let (s, mem) = loop {
            let players: Vec<PlayerInfo> = ids
                .iter()
                .map(|id| PlayerInfo { id: *id, balance: Chips(random_balance(&mut rng)) })
                .collect();
            let h = Hand { game, settings, players, memory: memory.clone(), deck: deck.clone() };
            match game.new_hand(settings, &h.players, &h.memory) {
                Err(GameError::BadPlayers(e)) if attempt < 50 => {
                    attempt += 1;
                    stats.refused_starts += 1;
                    if attempt == 50 {
                        return Err(ctx(format!("players refused 50 times: {e}")));
                    }
                    continue;
                }
                Err(e) => return Err(ctx(format!("new hand: {e}"))),
                Ok(_) => {}
            }
            let mut hand_rng = ChaCha20Rng::seed_from_u64(rng.next_u64());
            break play(&h, &mut hand_rng).map_err(ctx)?;
        };
        stats.add(&s);
        memory = mem;
    }
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
