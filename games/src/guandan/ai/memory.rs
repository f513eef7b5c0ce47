//! L3's card memory (source rules: "记牌与算牌", "手牌推断"): what is still
//! unseen (per rank, and the wilds) and what the tribute says about the
//! payers' hands.

use claw_protocol::CardId;

use super::View;
use crate::guandan::cards::{natural, order, slot, Tally, Wilds, SMALL_JOKER};
use crate::guandan::moves::{legal_moves, Move};
use crate::guandan::patterns::readings;
use crate::guandan::team;
use crate::guandan::tribute;

/// The hidden-information pool of one seat.
#[derive(Debug, Clone, PartialEq)]
pub struct Memory {
    /// Cards per natural rank slot (jokers at 13, 14) not in this hand and not played.
    pub unseen: [u8; 15],
    /// Unseen wilds.
    pub unseen_wilds: u8,
    /// Per seat: the highest tribute value it may still hold, learnt from
    /// the tribute it gave (it held nothing higher that it was allowed to give).
    pub tribute_cap: [Option<u8>; 4],
}

impl Memory {
    /// Builds the pool from a view (one pass over the history).
    pub fn of(v: &View) -> Memory {
        let wilds: Wilds = v.wilds();
        let mut unseen = [8u8; 15];
        unseen[13] = 2;
        unseen[14] = 2;
        let mut unseen_wilds = wilds.count;
        let played = v.history.iter().flat_map(|t| t.cards.iter().flatten());
        for c in v.hand.iter().chain(played) {
            if wilds.is_wild(*c) {
                unseen_wilds = unseen_wilds.saturating_sub(1);
            } else {
                let s = slot(natural(c.card()));
                unseen[s] = unseen[s].saturating_sub(1);
            }
        }
        let mut tribute_cap = [None; 4];
        for g in v.gifts.iter().filter(|g| g.from != v.seat) {
            tribute_cap[usize::from(g.from)] = Some(tribute::value(g.card, v.level));
        }
        Memory { unseen, unseen_wilds, tribute_cap }
    }

    /// Whether `seat` may hold `card` by what its tribute said: nothing it
    /// was allowed to give above its tribute card (wilds and level cards it
    /// may have kept).
    pub fn may_hold(&self, seat: u8, card: CardId, v: &View) -> bool {
        self.tribute_cap[usize::from(seat)].is_none_or(|cap| {
            tribute::value(card, v.level) <= cap
                || v.wilds().is_wild(card)
                || natural(card.card()) == v.level.rank()
        })
    }

    /// Whether no unseen group of this kind and length could beat a play of
    /// this strength (bombs aside); only for singles, pairs and triples.
    pub fn is_boss(&self, m: &Move, v: &View) -> bool {
        let need = match m.reading.kind {
            crate::guandan::patterns::Kind::Single => 1,
            crate::guandan::patterns::Kind::Pair => 2,
            crate::guandan::patterns::Kind::Triple => 3,
            _ => return false,
        };
        let level = v.level;
        let mine = order(m.reading.rank, level);
        (0..15).all(|s| {
            let rank = s as u8 + 2;
            let joker = rank >= SMALL_JOKER;
            let n = self.unseen[s] + if joker { 0 } else { self.unseen_wilds };
            order(rank, level) <= mine || n < need
        })
    }

    /// L3's adjustment of L2's score for a play: zero unless the memory
    /// decides. A play nobody can beat (bombs aside) that leaves one pattern
    /// wins the table and then the deal; a boss single or pair is a safe lead
    /// against an opponent about to go out (L2 fears every short lead).
    pub fn adjust(&self, v: &View, m: &Move, after: &[CardId], table_by: Option<u8>, opp_min: u8) -> f64 {
        let r = m.reading;
        if !self.is_boss(m, v) {
            return 0.0;
        }
        let mut s = 0.0;
        let against_opponent = table_by.is_none_or(|by| team(by) != team(v.seat));
        if against_opponent && self.plays_out(after, v, 2) {
            s += 20.0;
        }
        if table_by.is_none() && opp_min <= 2 && r.len <= opp_min {
            let st = f64::from(crate::guandan::ai::heuristics::strength(&r, v.level));
            s += 2.0 + 0.1 * (17.0 - st);
        }
        s
    }

    /// Whether `cards` go out as up to `depth` plays nobody can beat (bombs
    /// aside), each winning the lead back, and then one last play.
    fn plays_out(&self, cards: &[CardId], v: &View, depth: u8) -> bool {
        if one_pattern(cards, v) {
            return true;
        }
        if depth == 0 || cards.len() > 12 {
            return false;
        }
        legal_moves(cards, v.rules(), v.settings.wild_count, &v.profile, None).iter().any(|m2| {
            self.is_boss(m2, v) && {
                let rest: Vec<CardId> = cards.iter().copied().filter(|c| !m2.cards.contains(c)).collect();
                self.plays_out(&rest, v, depth - 1)
            }
        })
    }
}

/// Whether these cards are one play.
fn one_pattern(cards: &[CardId], v: &View) -> bool {
    !cards.is_empty() && !readings(&Tally::of_ids(cards, v.wilds()), v.rules()).is_empty()
}
