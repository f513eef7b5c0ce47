//! The random play of the simulation (`simulate.rs`), shared with the replay
//! corpus generator (`games/examples/replay_corpus.rs`, which includes this
//! file): table sessions of up to [`SESSION`] hands carrying the table memory,
//! players leaving and joining, random balances and deck orders, random legal
//! actions (random amounts inside ranges) and now and then the timeout action.
//! ChaCha20 seeded from the game name and session number, so a hand is
//! reproducible. What is checked along the way is the caller's [`Watch`].

#![allow(dead_code)]

use claw_games::{DynGame, GameError, HandEvent, HandRunner, PlayerInfo, RecordedAction};
use claw_protocol::{CardId, Chips, PlayerId, Seat};
use rand::seq::SliceRandom;
use rand::{Rng, RngCore, SeedableRng};
use rand_chacha::ChaCha20Rng;
use serde_json::Value;

/// Actions after which a hand counts as not terminating.
pub const MAX_STEPS: usize = 5_000;
/// Hands per table session (memory carried between them).
pub const SESSION: usize = 8;

/// The seed of a session: FNV-1a over the game name, mixed with the session
/// number and `extra` (0 in the simulation).
pub fn seed_of(name: &str, session: usize, extra: u64) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in name.bytes() {
        h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
    }
    h ^ (session as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ extra
}

pub fn random_balance(rng: &mut ChaCha20Rng) -> u64 {
    match rng.gen_range(0..10) {
        0 => rng.gen_range(1..=20),
        1..=6 => rng.gen_range(20..=2_000),
        7 | 8 => rng.gen_range(2_000..=100_000),
        _ => rng.gen_range(100_000..=1_000_000_000),
    }
}

pub fn random_id(rng: &mut ChaCha20Rng) -> PlayerId {
    let mut b = [0u8; 32];
    rng.fill_bytes(&mut b);
    PlayerId::from_bytes(b)
}

/// Replaces the first numeric field equal to the range's minimum (the
/// representative action carries the minimum) with `amount`.
pub fn with_amount(action: &Value, min: Chips, amount: u64) -> Value {
    let mut a = action.clone();
    if let Value::Object(o) = &mut a {
        if let Some((_, v)) = o.iter_mut().find(|(k, v)| *k != "type" && v.as_u64() == Some(min.0)) {
            *v = Value::from(amount);
        }
    }
    a
}

/// Who sits at a session's table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ids {
    /// Random player ids; a leaving player leaves from any seat, a new one
    /// sits anywhere.
    Random,
    /// The player at seat i has the id of 32 bytes `i + 1` (SPEC §13.1's
    /// vectors): the same random draws, but a leaving player is the last id
    /// and a new one takes the next.
    BySeat,
}

/// One hand's inputs.
pub struct Hand<'a> {
    pub game: &'a dyn DynGame,
    pub settings: &'a Value,
    pub players: Vec<PlayerInfo>,
    pub memory: Value,
    pub deck: Vec<CardId>,
}

/// One random choice for the seat to act.
pub struct Choice {
    pub seat: Seat,
    /// The seat's auto (timeout) action.
    pub auto: Value,
    /// Every option `valid_actions` gave.
    pub options: Vec<claw_games::ActionOption<Value>>,
    /// Another seat, picked at random (None heads-down alone): its action
    /// must be refused.
    pub other: Option<Seat>,
    /// The action taken.
    pub action: Value,
    /// Whether it is the auto action taken as a timeout.
    pub timeout: bool,
}

/// What the caller checks as the hand is played; every step defaults to no check.
pub trait Watch {
    /// After the hand's start and what it set off (`events`).
    fn started(&mut self, _runner: &HandRunner, _events: &[HandEvent]) -> Result<(), String> {
        Ok(())
    }
    /// Every state, the start and the end included (`at` actions taken).
    fn state(&mut self, _runner: &HandRunner, _at: usize) -> Result<(), String> {
        Ok(())
    }
    /// Before the chosen action is applied.
    fn choice(&mut self, _runner: &HandRunner, _at: usize, _c: &Choice) -> Result<(), String> {
        Ok(())
    }
    /// After an action and what it set off (`events`).
    fn acted(&mut self, _runner: &HandRunner, _action: &Value, _events: &[HandEvent]) -> Result<(), String> {
        Ok(())
    }
}

impl Watch for () {}

/// A hand played to its end.
pub struct Played {
    pub runner: HandRunner,
    pub events: Vec<HandEvent>,
    pub actions: Vec<RecordedAction>,
    pub timeouts: usize,
}

/// Picks the action of the seat to act: a random affordable option (random
/// amount inside a range), or the auto action 5% of the time or when nothing
/// is affordable.
pub fn choose(hand: &dyn claw_games::DynHand, n: usize, rng: &mut ChaCha20Rng) -> Result<Choice, String> {
    let seat = hand.to_act().ok_or("stalled: the hand is not over and nobody is to act")?;
    let auto = hand.auto_action(seat).ok_or_else(|| format!("no auto action for {seat}"))?;
    let options = hand.valid_actions();
    if options.is_empty() {
        return Err(format!("{seat} to act but no valid actions"));
    }
    let other = (n > 1).then(|| Seat(((seat.index() + 1 + rng.gen_range(0..n - 1)) % n) as u8));
    let affordable: Vec<_> = options.iter().filter(|o| o.affordable).collect();
    let (action, timeout) = if affordable.is_empty() || rng.gen_bool(0.05) {
        (auto.clone(), true)
    } else {
        let o = affordable[rng.gen_range(0..affordable.len())];
        let a = match o.range {
            Some((lo, hi)) if hi > lo => {
                let amount = match rng.gen_range(0..4) {
                    0 | 1 => lo.0,
                    2 => rng.gen_range(lo.0..=hi.0),
                    _ => hi.0,
                };
                with_amount(&o.action, lo, amount)
            }
            _ => o.action.clone(),
        };
        (a, false)
    };
    Ok(Choice { seat, auto, options, other, action, timeout })
}

/// Plays one hand with random choices, `watch` checking each step.
pub fn play(h: &Hand, rng: &mut ChaCha20Rng, watch: &mut dyn Watch) -> Result<Played, String> {
    let n = h.players.len();
    let (mut runner, mut events) =
        HandRunner::start(h.game, h.settings, &h.players, &h.memory, h.deck.clone())
            .map_err(|e| format!("start: {e}"))?;
    watch.started(&runner, &events)?;
    let mut actions: Vec<RecordedAction> = Vec::new();
    let mut timeouts = 0;
    loop {
        let at = actions.len();
        watch.state(&runner, at).map_err(|e| format!("after {at} actions: {e}"))?;
        if runner.hand().is_over() {
            break;
        }
        if at >= MAX_STEPS {
            return Err(format!("not over after {MAX_STEPS} actions"));
        }
        let c = choose(runner.hand(), n, rng).map_err(|e| format!("action {at}: {e}"))?;
        watch.choice(&runner, at, &c).map_err(|e| format!("action {at}: {e}"))?;
        timeouts += usize::from(c.timeout);
        let ev = runner
            .act(c.seat, &c.action)
            .map_err(|e| format!("action {at}: {} {} refused: {e}", c.seat, c.action))?;
        watch.acted(&runner, &c.action, &ev).map_err(|e| format!("action {at}: {e}"))?;
        events.extend(ev);
        actions.push(RecordedAction { seat: c.seat, action: c.action });
    }
    Ok(Played { runner, events, actions, timeouts })
}

/// Counts a session reports.
#[derive(Debug, Default, Clone, Copy)]
pub struct SessionCounts {
    /// Balances the game refused (too small for its minimum bet), drawn again.
    pub refused_starts: usize,
}

/// One table session of `hands` hands (hand numbers from `session × SESSION`)
/// with memory carried over: `each` plays a hand and returns its memory after.
pub fn session(
    game: &dyn DynGame,
    settings: &Value,
    session: usize,
    hands: usize,
    seed: u64,
    ids_kind: Ids,
    each: &mut dyn FnMut(&Hand, &mut ChaCha20Rng) -> Result<Value, String>,
) -> Result<SessionCounts, String> {
    session_from(game, settings, &Value::Null, session, hands, seed, ids_kind, each)
}

/// [`session`] from the table memory `start` instead of a fresh table.
#[allow(clippy::too_many_arguments)]
pub fn session_from(
    game: &dyn DynGame,
    settings: &Value,
    start: &Value,
    session: usize,
    hands: usize,
    seed: u64,
    ids_kind: Ids,
    each: &mut dyn FnMut(&Hand, &mut ChaCha20Rng) -> Result<Value, String>,
) -> Result<SessionCounts, String> {
    let meta = game.meta();
    let name = meta.name;
    let mut rng = ChaCha20Rng::seed_from_u64(seed_of(name, session, seed));
    let (lo, hi) = (usize::from(meta.min_players), usize::from(meta.max_players));
    let mut ids: Vec<PlayerId> = (0..rng.gen_range(lo..=hi)).map(|_| random_id(&mut rng)).collect();
    let mut memory = start.clone();
    let mut counts = SessionCounts::default();
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
        let mem = loop {
            let players: Vec<PlayerInfo> = ids
                .iter()
                .enumerate()
                .map(|(i, id)| PlayerInfo {
                    id: match ids_kind {
                        Ids::Random => *id,
                        Ids::BySeat => PlayerId::from_bytes([i as u8 + 1; 32]),
                    },
                    balance: Chips(random_balance(&mut rng)),
                })
                .collect();
            let h = Hand { game, settings, players, memory: memory.clone(), deck: deck.clone() };
            match game.new_hand(settings, &h.players, &h.memory) {
                Err(GameError::BadPlayers(e)) if attempt < 50 => {
                    attempt += 1;
                    counts.refused_starts += 1;
                    if attempt == 50 {
                        return Err(ctx(format!("players refused 50 times: {e}")));
                    }
                    continue;
                }
                Err(e) => return Err(ctx(format!("new hand: {e}"))),
                Ok(_) => {}
            }
            let mut hand_rng = ChaCha20Rng::seed_from_u64(rng.next_u64());
            break each(&h, &mut hand_rng).map_err(ctx)?;
        };
        memory = mem;
    }
    Ok(counts)
}
