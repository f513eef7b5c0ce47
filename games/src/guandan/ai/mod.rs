//! Guandan AI: pure functions from what one seat may see to an
//! action, with a seeded tie-breaker. Every level only ever picks among the
//! legal actions of the state, so every decision is legal.
//!
//! - L1 (基础): the smallest legal play; pass when nothing beats the table.
//! - L2 (规则): heuristic score of each legal play: hand quality after the
//!   play (turns left, bombs kept, wilds kept), teammate awareness (do not
//!   beat the partner, feed a partner about to go out), opponent threat
//!   (bombs and big cards against an opponent about to go out).
//! - L3 (策略): L2's scoring plus card memory ([`memory::Memory`]: unseen
//!   cards per rank, tribute inference) where it decides — plays nobody can
//!   beat that lead out of the hand — and, with few cards left, a search
//!   over random deals of the unseen cards played out by L2 ([`search`]).

pub mod heuristics;
pub mod memory;
pub mod search;

use claw_protocol::CardId;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::cards::{natural, Level, Wilds};
use super::compare::BombProfile;
use super::moves::{legal_moves, Move};
use super::patterns::{Declared, Kind, PatternRules};
use super::{partner, tribute, GdAction, GdMemory, GdPhase, GdSettings, GdState, Gift, Lead, Turn};
use crate::plugin::GameError;

/// AI strength.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum AiLevel {
    /// Smallest legal play.
    L1,
    /// Heuristic scoring.
    L2,
    /// Heuristic scoring with card memory.
    L3,
}

/// A seeded tie-breaker (SplitMix64): equal-scored choices are picked
/// reproducibly.
#[derive(Debug, Clone)]
pub struct Ties(u64);

impl Ties {
    /// A tie-breaker from a seed.
    pub fn new(seed: u64) -> Ties {
        Ties(seed)
    }

    /// A number in `0..n` (0 when `n` is 0).
    pub fn pick(&mut self, n: usize) -> usize {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^= z >> 31;
        if n == 0 {
            0
        } else {
            (z % n as u64) as usize
        }
    }
}

/// What one seat may see: its own hand and everything public. Built from a
/// full state with [`View::of`], or by a bot from the public state.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct View {
    /// The seat deciding.
    pub seat: u8,
    /// Phase of the deal.
    pub phase: GdPhase,
    /// Its cards.
    pub hand: Vec<CardId>,
    /// The deck position of each card dealt or given to it (tribute and
    /// return name positions, not faces); may list cards no longer held.
    pub positions: Vec<(u16, CardId)>,
    /// Room settings.
    pub settings: GdSettings,
    /// The bomb ordering in force.
    pub profile: BombProfile,
    /// The level being played.
    pub level: Level,
    /// Team levels.
    pub levels: [Level; 2],
    /// The play to beat.
    pub lead: Option<Lead>,
    /// Cards left per seat.
    pub cards_left: [u8; 4],
    /// Seats out, in order.
    pub finished: Vec<u8>,
    /// Plays and passes so far.
    pub history: Vec<Turn>,
    /// Tribute cards this seat saw (given or received; all when shown).
    pub gifts: Vec<Gift>,
    /// Returned cards this seat saw.
    pub returns: Vec<Gift>,
    /// Whether this seat's team may still propose a surrender.
    pub may_surrender: bool,
}

impl View {
    /// The view of `seat` of this state.
    pub fn of(st: &GdState, seat: u8) -> View {
        // Shown to all once transferred face up (as the public state shows it).
        let seen =
            |g: &&Gift| (st.settings.show_tribute && g.to.is_some()) || g.from == seat || g.to == Some(seat);
        let (gifts, returns) = match &st.tribute {
            Some(t) => (
                t.given.iter().filter(seen).copied().collect(),
                t.returned.iter().filter(seen).copied().collect(),
            ),
            None => (Vec::new(), Vec::new()),
        };
        let mut cards_left = [0u8; 4];
        for (c, h) in cards_left.iter_mut().zip(&st.hands) {
            *c = h.len() as u8;
        }
        View {
            seat,
            phase: st.phase,
            hand: st.hands[usize::from(seat)].clone(),
            positions: st.hands[usize::from(seat)]
                .iter()
                .filter_map(|c| st.position_of(*c).map(|p| (p, *c)))
                .collect(),
            settings: st.settings.clone(),
            profile: st.profile.clone(),
            level: st.level,
            levels: st.memory.levels,
            lead: st.lead.clone(),
            cards_left,
            finished: st.finished.clone(),
            history: st.history.clone(),
            gifts,
            returns,
            may_surrender: !st.surrendered[usize::from(super::team(seat))],
        }
    }

    /// The view of `seat` built from what a player receives: the room
    /// settings and table memory (`game-start`), its own cards, and the
    /// game's public state after the last action (`null` before the first
    /// action of the deal, when `phase` — known from the offered actions —
    /// and the memory say everything). `may_surrender`: a surrender is
    /// among the offered actions. `positions` is left empty for the caller
    /// to fill from its own deal (needed for tribute and return).
    pub fn from_public(
        seat: u8,
        hand: Vec<CardId>,
        settings: &GdSettings,
        memory: &GdMemory,
        phase: GdPhase,
        public: &Value,
        may_surrender: bool,
    ) -> Result<View, GameError> {
        fn field<T: serde::de::DeserializeOwned>(public: &Value, key: &str) -> Result<T, GameError> {
            serde_json::from_value(public.get(key).cloned().unwrap_or(Value::Null))
                .map_err(|e| GameError::Malformed(format!("public state {key}: {e}")))
        }
        let mut v = View {
            seat,
            phase,
            cards_left: [super::HAND_SIZE as u8; 4],
            hand,
            positions: Vec::new(),
            settings: settings.clone(),
            profile: settings.profile(),
            level: memory.level(),
            levels: memory.levels,
            lead: None,
            finished: Vec::new(),
            history: Vec::new(),
            gifts: Vec::new(),
            returns: Vec::new(),
            may_surrender,
        };
        if public.is_null() {
            return Ok(v);
        }
        v.phase = field(public, "phase")?;
        v.level = field(public, "level")?;
        v.levels = field(public, "levels")?;
        v.lead = field(public, "lead")?;
        let left: Vec<u8> = field(public, "cards_left")?;
        v.cards_left = left.try_into().map_err(|_| GameError::Malformed("public state cards_left".into()))?;
        v.finished = field(public, "finished")?;
        v.history = field(public, "history")?;
        // Tribute cards appear in the public state only when shown.
        let gifts = |key: &str| -> Vec<Gift> {
            let list = public.get("tribute").and_then(|t| t.get(key)).and_then(Value::as_array);
            list.into_iter().flatten().filter_map(|g| serde_json::from_value(g.clone()).ok()).collect()
        };
        v.gifts = gifts("given");
        v.returns = gifts("returned");
        Ok(v)
    }

    /// Wild rules.
    pub fn wilds(&self) -> Wilds {
        Wilds { level: self.level, count: self.settings.wild_count }
    }

    /// Pattern rules.
    pub fn rules(&self) -> PatternRules {
        PatternRules {
            level: self.level,
            ace_high: self.settings.straight_extends_to_ace,
            purity: self.settings.purity,
        }
    }

    /// Legal plays now.
    pub fn plays(&self) -> Vec<Move> {
        legal_moves(
            &self.hand,
            self.rules(),
            self.settings.wild_count,
            &self.profile,
            self.lead.as_ref().map(|l| &l.reading),
        )
    }

    /// The deck position of one of its cards.
    pub fn position_of(&self, card: CardId) -> Option<u16> {
        self.positions.iter().rev().find(|(_, c)| *c == card).map(|(p, _)| *p)
    }

    /// The partner of the deciding seat.
    pub fn partner(&self) -> u8 {
        partner(self.seat)
    }
}

/// The action that plays a move, naming its reading.
pub fn play(m: Move) -> GdAction {
    GdAction::Play { cards: m.cards, reading: Some(Declared { kind: m.reading.kind, rank: m.reading.rank }) }
}

/// The action of an AI of this level for this view. Always legal when the
/// view is of the seat to act.
pub fn decide(level: AiLevel, v: &View, ties: &mut Ties) -> GdAction {
    match v.phase {
        GdPhase::Tribute => {
            let choices = tribute::tribute_choices(&v.hand, v.wilds(), &v.settings);
            match level {
                AiLevel::L1 => choices.first().copied(),
                _ => heuristics::keep_best(&v.hand, &choices, v),
            }
            .and_then(|card| v.position_of(card))
            .map(|position| GdAction::Tribute { position })
            .unwrap_or(GdAction::Pass {})
        }
        GdPhase::Return => {
            let choices = tribute::return_choices(&v.hand, v.wilds(), &v.settings);
            match level {
                AiLevel::L1 => choices.iter().copied().min_by_key(|c| tribute::value(*c, v.level)),
                _ => heuristics::keep_best(&v.hand, &choices, v),
            }
            .and_then(|card| v.position_of(card))
            .map(|position| GdAction::Return { position })
            .unwrap_or(GdAction::Pass {})
        }
        GdPhase::Vote => GdAction::Vote { accept: false },
        GdPhase::Playing => {
            let moves = v.plays();
            let chosen = match level {
                AiLevel::L1 => smallest(moves, v.level),
                AiLevel::L2 => heuristics::choose(v, moves, None, ties),
                AiLevel::L3 => {
                    let mem = memory::Memory::of(v);
                    let scored = heuristics::score(v, moves, Some(&mem));
                    match search::applies(v).then(|| search::best(v, &mem, &scored, ties)).flatten() {
                        Some(m) => m,
                        None => heuristics::pick(scored, ties),
                    }
                }
            };
            chosen.map(play).unwrap_or(GdAction::Pass {})
        }
        GdPhase::Dealing | GdPhase::Done => GdAction::Pass {},
    }
}

/// The takeover's budget: the most legal plays it scores (search nodes;
/// the rules never read a clock, so the source rules' time limit is counted in
/// work, the same on every machine and in the replay).
pub const TAKEOVER_NODES: usize = 1_000;

/// The dealer's takeover of a seat (the source rules' 断线托管: the timeout action,
/// for a player who is away, left or ran out of time): L2, its ties seeded
/// from the deal's history so that the replay reproduces it; a play that
/// would need more than `nodes` scored plays falls back to L1 (the source rules'
/// fallback for a decision over its time limit).
pub fn takeover(v: &View, nodes: usize) -> GdAction {
    let mut ties = Ties::new(v.history.len() as u64 ^ (u64::from(v.seat) << 32));
    if v.phase == GdPhase::Playing {
        let moves = v.plays();
        let chosen = if moves.len() > nodes {
            smallest(moves, v.level)
        } else {
            heuristics::choose(v, moves, None, &mut ties)
        };
        return chosen.map(play).unwrap_or(GdAction::Pass {});
    }
    decide(AiLevel::L2, v, &mut ties)
}

/// The timer's move under `timeout_action = "pass"` (the default), a rule
/// a second implementation replays from SPEC §14.2: pass where passing is
/// legal; lead one card, the lowest in level order (the level rank above
/// the ace, the jokers above it), the lowest card id among equals; tribute
/// the eligible card at the lowest deck position; return the lowest-valued
/// eligible card, the lowest deck position first; vote no.
pub fn timer(v: &View) -> GdAction {
    let lowest_position = |choices: &[CardId], by: &dyn Fn(CardId) -> u8| {
        v.positions
            .iter()
            .filter(|(_, c)| choices.contains(c))
            .min_by_key(|(p, c)| (by(*c), *p))
            .map(|(p, _)| *p)
    };
    match v.phase {
        GdPhase::Playing if v.lead.is_some() => GdAction::Pass {},
        GdPhase::Playing => v
            .hand
            .iter()
            .min_by_key(|c| (tribute::value(**c, v.level), **c))
            .map(|c| GdAction::Play {
                cards: vec![*c],
                reading: Some(Declared { kind: Kind::Single, rank: natural(c.card()) }),
            })
            .unwrap_or(GdAction::Pass {}),
        GdPhase::Tribute => {
            lowest_position(&tribute::tribute_choices(&v.hand, v.wilds(), &v.settings), &|_| 0)
                .map_or(GdAction::Pass {}, |position| GdAction::Tribute { position })
        }
        GdPhase::Return => {
            let choices = tribute::return_choices(&v.hand, v.wilds(), &v.settings);
            lowest_position(&choices, &|c| tribute::value(c, v.level))
                .map_or(GdAction::Pass {}, |position| GdAction::Return { position })
        }
        GdPhase::Vote => GdAction::Vote { accept: false },
        GdPhase::Dealing | GdPhase::Done => GdAction::Pass {},
    }
}

/// L1: the smallest play: bombs last, then fewest cards, then lowest; `None`
/// (pass) when nothing beats the table.
pub fn smallest(moves: Vec<Move>, level: Level) -> Option<Move> {
    moves
        .into_iter()
        .min_by_key(|m| (m.reading.kind.is_bomb(), m.reading.len, heuristics::strength(&m.reading, level)))
}
