//! L3's endgame search (source rules: "策略"): when few cards are left, the best
//! few plays by L3's score are each tried on hands dealt at random from the
//! unseen cards (a tribute payer gets no card above its tribute it could
//! have given, while others can take them), the deal played out by L2 for
//! every seat; the play with the best total result (levels won or lost by
//! this seat's team) is chosen.

use claw_protocol::{CardId, Chips};

use super::heuristics;
use super::memory::Memory;
use super::{play, Ties, View};
use crate::guandan::cards::{DECK_SIZE, PACKS};
use crate::guandan::moves::Move;
use crate::guandan::{team, GdMemory, GdPhase, GdState, Guandan};
use crate::plugin::GamePlugin;

/// Plays compared by the search.
pub const CANDIDATES: usize = 3;
/// Random deals of the unseen cards per play.
pub const SAMPLES: usize = 6;
/// The search runs when the other seats hold at most this many cards together.
pub const ENDGAME_CARDS: u16 = 24;
/// Most turns a rollout plays before it is scored as a draw.
const ROLLOUT_TURNS: usize = 400;

/// Whether the search applies to this view.
pub fn applies(v: &View) -> bool {
    let others: u16 =
        (0..4u8).filter(|s| *s != v.seat).map(|s| u16::from(v.cards_left[usize::from(s)])).sum();
    v.phase == GdPhase::Playing && others <= ENDGAME_CARDS
}

/// The best of `scored` (L2's scores) after the search; `None` when the
/// unseen cards do not add up (then the caller keeps L2's choice).
pub fn best(v: &View, mem: &Memory, scored: &[(f64, Option<Move>)], ties: &mut Ties) -> Option<Option<Move>> {
    let mut order: Vec<usize> = (0..scored.len()).collect();
    order.sort_by(|a, b| scored[*b].0.total_cmp(&scored[*a].0));
    order.truncate(CANDIDATES);
    if order.len() < 2 || scored[order[0]].0 >= 999.0 {
        return None;
    }
    let mut totals = vec![0i32; order.len()];
    for _ in 0..SAMPLES {
        let st = sample(v, mem, ties)?;
        for (t, i) in totals.iter_mut().zip(&order) {
            *t += rollout(st.clone(), v.seat, &scored[*i].1);
        }
    }
    // Highest total; ties to the better L2 score (earlier in `order`).
    let (k, _) = totals.iter().enumerate().max_by_key(|(k, t)| (**t, std::cmp::Reverse(*k)))?;
    Some(scored[order[k]].1.clone())
}

/// A full state consistent with the view: the unseen cards dealt at random
/// to the other seats, as many as each holds.
fn sample(v: &View, mem: &Memory, ties: &mut Ties) -> Option<GdState> {
    let mut hands: Vec<Vec<CardId>> = vec![Vec::new(); 4];
    hands[usize::from(v.seat)] = v.hand.clone();
    let mut gone: Vec<CardId> = v.hand.clone();
    for t in &v.history {
        gone.extend(t.cards.iter().flatten().copied());
    }
    // Cards this seat gave away sit with their receiver unless played.
    for g in v.gifts.iter().chain(&v.returns).filter(|g| g.from == v.seat) {
        if let Some(to) = g.to.filter(|to| *to != v.seat && !gone.contains(&g.card)) {
            hands[usize::from(to)].push(g.card);
            gone.push(g.card);
        }
    }
    let mut pool: Vec<CardId> = CardId::deck(PACKS, true).into_iter().filter(|c| !gone.contains(c)).collect();
    for i in (1..pool.len()).rev() {
        pool.swap(i, ties.pick(i + 1));
    }
    let mut seats: Vec<u8> = (0..4u8).filter(|s| *s != v.seat).collect();
    seats.sort_by_key(|s| mem.tribute_cap[usize::from(*s)].is_none());
    for s in seats {
        let want = usize::from(v.cards_left[usize::from(s)]);
        let h = &mut hands[usize::from(s)];
        if h.len() > want || pool.len() < want - h.len() {
            return None;
        }
        let need = want - h.len();
        let (mut fit, mut rest): (Vec<CardId>, Vec<CardId>) =
            pool.iter().partition(|c| mem.may_hold(s, **c, v));
        let from_fit = need.min(fit.len());
        h.extend(fit.drain(..from_fit));
        h.extend(rest.drain(..need - from_fit));
        fit.append(&mut rest);
        pool = fit;
    }
    if !pool.is_empty() {
        return None;
    }
    let passes = match v.lead {
        Some(_) => v.history.iter().rev().take_while(|t| t.cards.is_none() && !t.cleared).count() as u8,
        None => 0,
    };
    let level_team = u8::from(v.levels[0] != v.level);
    Some(GdState {
        settings: v.settings.clone(),
        profile: v.profile.clone(),
        memory: GdMemory { deal: 0, levels: v.levels, level_team, ..GdMemory::default() },
        level: v.level,
        balances: vec![Chips(1 << 40); 4],
        hands,
        positions: vec![None; DECK_SIZE],
        phase: GdPhase::Playing,
        tribute: None,
        turn: v.seat,
        lead: v.lead.clone(),
        passes,
        finished: v.finished.clone(),
        history: Vec::new(),
        surrendered: [true; 2],
        vote: None,
        outcome: None,
        summary: String::new(),
    })
}

/// Plays `first` for `seat`, then L2 for everyone to the end; the levels
/// `seat`'s team won (negative: lost).
fn rollout(mut st: GdState, seat: u8, first: &Option<Move>) -> i32 {
    let g = Guandan;
    let mut ties = Ties::new(u64::from(seat));
    let a = first.clone().map(play).unwrap_or(crate::guandan::GdAction::Pass {});
    if g.apply(&mut st, claw_protocol::Seat(seat), &a).is_err() {
        return -100;
    }
    for _ in 0..ROLLOUT_TURNS {
        let Some(s) = g.to_act(&st) else { break };
        let v = View::of(&st, s.0);
        let m = heuristics::choose(&v, v.plays(), None, &mut ties);
        let a = m.map(play).unwrap_or(crate::guandan::GdAction::Pass {});
        if g.apply(&mut st, s, &a).is_err() {
            return 0;
        }
    }
    match &st.outcome {
        Some(o) if o.winner_team == Some(team(seat)) => i32::from(o.levels_up),
        Some(o) if o.winner_team.is_some() => -i32::from(o.levels_up),
        _ => 0,
    }
}
