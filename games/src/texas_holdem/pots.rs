//! Main and side pots, and splitting a pot between tied winners.
//!
//! Pots are layers of the players' total contributions: each distinct
//! contribution level cuts a layer; a layer's chips come from every player
//! who put in at least that much (folded players included), and it can be
//! won by the players still in the hand who reached that level. Adjacent
//! layers with the same eligible players merge, so a hand with no all-in has
//! one pot, and each all-in for a different amount adds one side pot.

use serde::{Deserialize, Serialize};

/// One pot: its chips and the seats (indexes, ascending) that can win it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Pot {
    /// Chips in the pot.
    pub amount: u64,
    /// Seat indexes still in the hand that contributed up to this layer.
    pub eligible: Vec<usize>,
    /// True when the only eligible player is also the only one who put chips
    /// in: the chips are theirs, returned rather than won.
    pub uncalled: bool,
}

/// Cuts the pots out of per-seat contributions. `folded[i]` excludes seat
/// `i` from winning (its chips stay in). Contributions above every live
/// player's go to the highest pot still winnable.
pub fn build(contributions: &[u64], folded: &[bool]) -> Vec<Pot> {
    let mut levels: Vec<u64> = contributions.iter().copied().filter(|c| *c > 0).collect();
    levels.sort_unstable();
    levels.dedup();
    let live = |i: usize| !folded.get(i).copied().unwrap_or(false);

    let mut pots: Vec<Pot> = Vec::new();
    let mut carry = 0u64; // chips of layers nobody live reached yet
    let mut prev = 0u64;
    for level in levels {
        let mut amount = 0u64;
        let mut contributors = 0usize;
        let mut eligible = Vec::new();
        for (i, c) in contributions.iter().enumerate() {
            let layer = (*c).min(level).saturating_sub(prev);
            if layer > 0 {
                amount = amount.saturating_add(layer);
                contributors += 1;
            }
            if *c >= level && live(i) {
                eligible.push(i);
            }
        }
        prev = level;
        if eligible.is_empty() {
            // Dead chips above every live contribution: they belong to the
            // last pot the live players can win.
            match pots.last_mut() {
                Some(p) => {
                    p.amount = p.amount.saturating_add(amount);
                    p.uncalled = false;
                }
                None => carry = carry.saturating_add(amount),
            }
            continue;
        }
        let uncalled = eligible.len() == 1 && contributors == 1;
        amount = amount.saturating_add(std::mem::take(&mut carry));
        match pots.last_mut() {
            Some(p) if p.eligible == eligible && p.uncalled == uncalled => {
                p.amount = p.amount.saturating_add(amount)
            }
            _ => pots.push(Pot { amount, eligible, uncalled }),
        }
    }
    if carry > 0 {
        // Only dead chips and no live contribution at all: the live players share them.
        let eligible: Vec<usize> = (0..contributions.len()).filter(|i| live(*i)).collect();
        pots.push(Pot { amount: carry, eligible, uncalled: false });
    }
    pots
}

/// Splits `amount` between `winners` (seat indexes): equal shares, and the
/// odd chips one each to the winners nearest the button's left, clockwise
/// (`button` and `seats` give the table order). Returns (seat, chips) in that
/// clockwise order.
pub fn split(amount: u64, winners: &[usize], button: usize, seats: usize) -> Vec<(usize, u64)> {
    if winners.is_empty() || seats == 0 {
        return Vec::new();
    }
    let mut order: Vec<usize> = winners.to_vec();
    order.sort_by_key(|w| (w + seats - button % seats - 1) % seats);
    order.dedup();
    let k = order.len() as u64;
    let (share, mut odd) = (amount / k, amount % k);
    order
        .into_iter()
        .map(|w| {
            let extra = u64::from(odd > 0);
            odd -= extra;
            (w, share + extra)
        })
        .collect()
}
