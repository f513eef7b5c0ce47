//! L3's card memory (seed §三 "记牌与算牌", "手牌推断"): what is still
//! unseen, which big cards are out, which suits are void, and what the other
//! seats' passes and tribute say about their hands.

use claw_protocol::{CardId, Suit};

use super::View;
use crate::guandan::cards::{natural, order, slot, Tally, Wilds, ACE, BIG_JOKER, SMALL_JOKER};
use crate::guandan::moves::{legal_moves, Move};
use crate::guandan::patterns::{readings, Kind};
use crate::guandan::team;

/// The hidden-information pool of one seat.
#[derive(Debug, Clone, PartialEq)]
pub struct Memory {
    /// Cards per natural rank slot (jokers at 13, 14) not in this hand and not played.
    pub unseen: [u8; 15],
    /// Unseen wilds.
    pub unseen_wilds: u8,
    /// Unseen cards per suit.
    pub unseen_suits: [u8; 4],
    /// Big jokers, small jokers, level cards and aces played so far.
    pub big_out: [u8; 4],
    /// Per seat and pattern kind: the weakest play of that kind the seat
    /// passed on while an opponent's play stood (it likely cannot beat it).
    pub passed_on: [[Option<u8>; 10]; 4],
    /// Per seat: the highest card it may hold, learnt from the tribute it
    /// gave (it held nothing higher that it was allowed to give).
    pub tribute_cap: [Option<u8>; 4],
    /// Unseen ranks with four or more cards (with wilds): possible bombs.
    pub possible_bombs: u8,
}

fn kind_index(k: Kind) -> usize {
    k as usize
}

impl Memory {
    /// Builds the pool from a view (incrementally cheap: one pass over the history).
    pub fn of(v: &View) -> Memory {
        let wilds: Wilds = v.wilds();
        let level = v.level;
        let mut unseen = [8u8; 15];
        unseen[13] = 2;
        unseen[14] = 2;
        let mut unseen_wilds = wilds.count;
        let mut unseen_suits = [26u8; 4];
        let mut big_out = [0u8; 4];
        let mut see = |c: claw_protocol::CardId, played: bool| {
            if wilds.is_wild(c) {
                unseen_wilds = unseen_wilds.saturating_sub(1);
            } else {
                let s = slot(natural(c.card()));
                unseen[s] = unseen[s].saturating_sub(1);
            }
            if let Some(su) = c.card().suit() {
                unseen_suits[usize::from(su.index())] -= 1;
            }
            if played {
                match natural(c.card()) {
                    BIG_JOKER => big_out[0] += 1,
                    SMALL_JOKER => big_out[1] += 1,
                    r if r == level.rank() => big_out[2] += 1,
                    ACE => big_out[3] += 1,
                    _ => {}
                }
            }
        };
        for c in &v.hand {
            see(*c, false);
        }
        let mut passed_on = [[None; 10]; 4];
        let mut table: Option<(u8, Kind, u8)> = None;
        for t in &v.history {
            if t.cleared {
                table = None;
                continue;
            }
            match (&t.cards, t.reading) {
                (Some(cards), Some(r)) => {
                    for c in cards {
                        see(*c, true);
                    }
                    table = Some((t.seat, r.kind, order(r.rank, level)));
                }
                _ => {
                    if let Some((by, kind, st)) = table {
                        if team(by) != team(t.seat) {
                            let e = &mut passed_on[usize::from(t.seat)][kind_index(kind)];
                            *e = Some(e.map_or(st, |x: u8| x.min(st)));
                        }
                    }
                }
            }
        }
        // Gifts that left this hand are known to be elsewhere; gifts
        // received are in the hand already.
        let mut tribute_cap = [None; 4];
        for g in &v.gifts {
            if g.from != v.seat {
                tribute_cap[usize::from(g.from)] = Some(order(natural(g.card.card()), level));
            }
        }
        let possible_bombs = (0..13).filter(|s| unseen[*s] + unseen_wilds >= 4).count() as u8;
        Memory { unseen, unseen_wilds, unseen_suits, big_out, passed_on, tribute_cap, possible_bombs }
    }

    /// Whether no unseen group of this kind and length could beat a play of
    /// this strength (bombs aside); only for singles, pairs and triples.
    pub fn is_boss(&self, m: &Move, v: &View) -> bool {
        let need = match m.reading.kind {
            Kind::Single => 1,
            Kind::Pair => 2,
            Kind::Triple => 3,
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

    /// L3's cost of keeping a group of `n` cards of `slot`: by how many
    /// unseen groups of that size could beat it; one nobody can beat is a
    /// control (negative cost: it wins a table and the lead).
    pub fn weight(&self, slot: usize, n: u8, level: crate::guandan::cards::Level) -> f64 {
        let o = order(slot as u8 + 2, level);
        let beaters = (0..15usize)
            .filter(|t| {
                let joker = *t >= 13;
                order(*t as u8 + 2, level) > o
                    && self.unseen[*t] + if joker { 0 } else { self.unseen_wilds } >= n
            })
            .count();
        if beaters == 0 {
            -0.4
        } else {
            let low = 1.0 + (13.0 - f64::from(o.min(14))) / 12.0;
            0.3 + 0.7 * low * (beaters.min(6) as f64 / 6.0)
        }
    }

    /// Whether a suit is void: every card of it seen.
    pub fn void(&self, suit: Suit) -> bool {
        self.unseen_suits[usize::from(suit.index())] == 0
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
}

impl Memory {
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
