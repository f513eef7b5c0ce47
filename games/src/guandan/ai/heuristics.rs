//! L2's scoring (source rules: "启发式评分"): the quality of the hand a play
//! leaves, with teammate and opponent weights; L3 adds its card memory.

use claw_protocol::CardId;

use super::memory::Memory;
use super::{Ties, View};
use crate::guandan::cards::{natural, order, Level, Tally, Wilds};
use crate::guandan::moves::Move;
use crate::guandan::patterns::{Kind, Reading};
use crate::guandan::team;

/// Strength of a reading inside its pattern (level order or sequence top).
pub fn strength(r: &Reading, level: Level) -> u8 {
    if r.kind.is_sequence() {
        r.rank
    } else {
        order(r.rank, level)
    }
}

/// Quality of a hand: higher is better. Roughly minus the turns needed to
/// play it out, cheap low groups costing more, plus bombs and controls.
pub fn quality(hand: &[CardId], wilds: Wilds) -> f64 {
    quality_by(hand, wilds, &|slot, _| default_weight(slot, wilds.level))
}

/// L2's cost of a single, pair or triple of this slot: low cards are hard to
/// get rid of; the ace, the level and the jokers control.
fn default_weight(slot: usize, level: Level) -> f64 {
    let o = f64::from(order(slot as u8 + 2, level));
    if o >= 14.0 {
        0.3
    } else {
        1.0 + (13.0 - o) / 12.0
    }
}

/// [`quality`] with the cost of a group of `n` cards of a slot given by `weight`.
pub fn quality_by(hand: &[CardId], wilds: Wilds, weight: &dyn Fn(usize, u8) -> f64) -> f64 {
    if hand.is_empty() {
        return 100.0;
    }
    let t = Tally::of_ids(hand, wilds);
    let level = wilds.level;
    let mut c = t.by_rank;
    let mut score = 0.0;
    // Bombs and the four jokers are kept whole.
    if c[13] == 2 && c[14] == 2 {
        score += 4.0;
        c[13] = 0;
        c[14] = 0;
    }
    for (s, n) in c.iter_mut().enumerate().take(13) {
        if *n >= 4 {
            score += 2.0 + f64::from(*n - 4) * 0.5 + f64::from(order(s as u8 + 2, level)) * 0.02;
            *n = 0;
        }
    }
    // Straights that lower the group count.
    loop {
        let before = groups(&c, weight);
        let mut best: Option<(usize, f64)> = None;
        for start in 0..=8usize {
            let idx: Vec<usize> =
                if start == 0 { vec![12, 0, 1, 2, 3] } else { (start - 1..start + 4).collect() };
            if idx.iter().all(|i| c[*i] > 0) {
                let mut d = c;
                idx.iter().for_each(|i| d[*i] -= 1);
                let after = groups(&d, weight) - 1.0;
                if after < before - 0.5 && best.is_none_or(|(_, b)| after < b) {
                    best = Some((start, after));
                }
            }
        }
        match best {
            Some((start, _)) => {
                let idx: Vec<usize> =
                    if start == 0 { vec![12, 0, 1, 2, 3] } else { (start - 1..start + 4).collect() };
                idx.iter().for_each(|i| c[*i] -= 1);
                score -= 0.6;
            }
            None => break,
        }
    }
    score -= groups(&c, weight);
    score += f64::from(t.wilds) * 1.2;
    score
}

/// Weighted count of singles, pairs and triples (a triple carries a pair).
fn groups(c: &[u8; 15], weight: &dyn Fn(usize, u8) -> f64) -> f64 {
    let mut cost = 0.0;
    let (mut triples, mut pairs) = (0, 0);
    for (s, n) in c.iter().enumerate() {
        if *n == 0 {
            continue;
        }
        let w = weight(s, (*n).min(3));
        match n {
            1 => cost += w,
            2 => {
                pairs += 1;
                cost += w * 0.9
            }
            _ => {
                triples += 1;
                cost += w * 0.8
            }
        }
    }
    cost - 0.5 * f64::from(triples.min(pairs))
}

/// The hand without these cards.
fn without(hand: &[CardId], cards: &[CardId]) -> Vec<CardId> {
    hand.iter().copied().filter(|c| !cards.contains(c)).collect()
}

/// The card of `choices` whose loss hurts the hand least.
pub fn keep_best(hand: &[CardId], choices: &[CardId], v: &View) -> Option<CardId> {
    let w = v.wilds();
    choices.iter().copied().max_by(|a, b| {
        let qa = quality(&without(hand, &[*a]), w) - f64::from(order(natural(a.card()), w.level)) * 0.01;
        let qb = quality(&without(hand, &[*b]), w) - f64::from(order(natural(b.card()), w.level)) * 0.01;
        qa.total_cmp(&qb)
    })
}

/// Picks the best-scored play (None = pass) for L2, or L3 with `mem`.
pub fn choose(v: &View, moves: Vec<Move>, mem: Option<&Memory>, ties: &mut Ties) -> Option<Move> {
    pick(score(v, moves, mem), ties)
}

/// One of the best-scored plays, ties broken by `ties`.
pub fn pick(scored: Vec<(f64, Option<Move>)>, ties: &mut Ties) -> Option<Move> {
    let best = scored.iter().map(|x| x.0).fold(f64::NEG_INFINITY, f64::max);
    let mut top: Vec<(f64, Option<Move>)> = scored.into_iter().filter(|x| x.0 >= best - 1e-9).collect();
    let i = ties.pick(top.len());
    top.swap_remove(i).1
}

/// Every legal play (and the pass, when following) with its score.
pub fn score(v: &View, moves: Vec<Move>, mem: Option<&Memory>) -> Vec<(f64, Option<Move>)> {
    let w = v.wilds();
    let level = v.level;
    let me = v.seat;
    let partner = v.partner();
    let opp_min = (0..4u8)
        .filter(|s| team(*s) != team(me) && v.cards_left[usize::from(*s)] > 0)
        .map(|s| v.cards_left[usize::from(s)])
        .min()
        .unwrap_or(27);
    let partner_left = v.cards_left[usize::from(partner)];
    let q = |h: &[CardId]| quality(h, w);
    let now = q(&v.hand);
    let following = v.lead.as_ref();
    let threat = opp_min <= 4;
    let mut scored: Vec<(f64, Option<Move>)> = Vec::with_capacity(moves.len() + 1);
    if let Some(lead) = following {
        // Passing keeps the hand; it is cheap when the partner holds the table.
        let mut pass = now;
        if lead.seat == partner {
            pass += 3.0;
        } else if v.cards_left[usize::from(lead.seat)] <= 4 {
            pass -= 4.0;
        }
        scored.push((pass, None));
    }
    for m in moves {
        let after = without(&v.hand, &m.cards);
        if after.is_empty() {
            scored.push((1000.0, Some(m)));
            continue;
        }
        let r = m.reading;
        let mut s = q(&after);
        let st = f64::from(strength(&r, level));
        let bomb = r.kind.is_bomb();
        match following {
            None => {
                // Leading: shed many low cards, keep bombs.
                s += 0.15 * f64::from(r.len) - 0.04 * st;
                if bomb {
                    s -= 3.0;
                }
                if partner_left > 0
                    && partner_left <= 2
                    && u8::from(r.kind == Kind::Single) + u8::from(r.kind == Kind::Pair) * 2 == partner_left
                {
                    s += 3.0 - 0.1 * st;
                }
                if opp_min <= 2 && r.len <= opp_min {
                    s -= 2.0 + 0.1 * (17.0 - st);
                }
            }
            Some(lead) => {
                if lead.seat == partner {
                    s -= 4.0;
                } else {
                    s += 0.5;
                    if v.cards_left[usize::from(lead.seat)] <= 4 {
                        s += 3.0;
                    }
                }
                if bomb {
                    s -= if threat { 0.0 } else { 3.0 };
                    s -= 0.05 * st;
                }
            }
        }
        if let Some(mem) = mem {
            s += mem.adjust(v, &m, &after, following.map(|l| l.seat), opp_min);
        }
        scored.push((s, Some(m)));
    }
    scored
}
