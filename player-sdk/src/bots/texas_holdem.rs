//! Texas Hold'em: play by hand strength.
//!
//! Before the flop a simple chart (pairs, big cards, suited aces and
//! connectors); after it the games crate's evaluator on hole + board cards,
//! counting only what the hole cards add to the board. Strong hands bet or
//! raise the minimum, fair hands check or call a modest price, weak hands
//! check or fold.

use claw_games::texas_holdem::{evaluate, Category};
use claw_protocol::{Card, Chips, Rank};
use rand_core::RngCore;
use serde_json::Value;

use super::{find_option, playable, uniform, with_amount, BotError, RandomBot, Strategy, TurnView};

/// How good a hand is for the simple strategy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Strength {
    /// Check or fold.
    Weak,
    /// Check, or call a modest price.
    Fair,
    /// Bet or raise (once per round), else call.
    Strong,
}

/// Strength of two hole cards before the flop.
pub fn preflop_strength(a: Card, b: Card) -> Strength {
    let (Some(ra), Some(rb)) = (a.rank(), b.rank()) else { return Strength::Weak };
    let (hi, lo) = if ra >= rb { (ra.value(), rb.value()) } else { (rb.value(), ra.value()) };
    let suited = a.suit() == b.suit();
    if hi == lo {
        return if hi >= 9 { Strength::Strong } else { Strength::Fair };
    }
    if hi == Rank::Ace.value() && lo >= Rank::Queen.value() {
        return Strength::Strong;
    }
    if lo >= Rank::Ten.value()
        || (hi == Rank::Ace.value() && (suited || lo >= 9))
        || (suited && hi - lo == 1 && lo >= 5)
    {
        return Strength::Fair;
    }
    Strength::Weak
}

/// Strength of the hole cards with the board (3–5 cards): what the hole
/// cards make beyond what the board alone shows.
pub fn postflop_strength(hole: &[Card], board: &[Card]) -> Strength {
    let mut all: Vec<Card> = hole.to_vec();
    all.extend_from_slice(board);
    let mine = evaluate(&all);
    let table = evaluate(board);
    if mine.category() <= table.category() {
        // The hole cards only add kickers to what everybody has.
        return Strength::Weak;
    }
    match mine.category() {
        Category::HighCard => Strength::Weak,
        Category::Pair => {
            // A pair using a hole card: fair when it is at least the board's top rank.
            let top_board = board.iter().filter_map(|c| c.rank()).max();
            let pair_rank = mine.ranks().first().copied();
            let top_pair = pair_rank.is_some() && pair_rank >= top_board;
            if top_pair || pair_rank.is_some_and(|r| r.value() >= Rank::Ten.value()) {
                Strength::Fair
            } else {
                Strength::Weak
            }
        }
        _ => Strength::Strong,
    }
}

/// The simple Hold'em strategy.
#[derive(Debug, Clone, Copy, Default)]
pub struct SimpleHoldem;

fn cards_of(v: Option<&Value>) -> Vec<Card> {
    v.and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|c| c.as_str()?.parse::<claw_protocol::CardId>().ok())
                .map(|c| c.card())
                .collect()
        })
        .unwrap_or_default()
}

impl Strategy for SimpleHoldem {
    fn name(&self) -> &'static str {
        "simple"
    }

    fn choose(&self, turn: &TurnView<'_>, rng: &mut dyn RngCore) -> Result<Value, BotError> {
        if playable(turn.actions).is_empty() {
            return Err(BotError::NoActions);
        }
        let hole: Vec<Card> = turn.hand.iter().map(|c| c.card()).collect();
        if hole.len() != 2 {
            return RandomBot.choose(turn, rng);
        }
        let mut board = cards_of(turn.public_state.get("board"));
        if board.is_empty() {
            board = turn.table.iter().map(|c| c.card()).collect();
        }
        let strength = if board.len() >= 3 {
            postflop_strength(&hole, &board)
        } else {
            preflop_strength(hole[0], hole[1])
        };
        let to_call = find_option(turn.actions, &["call"]).map_or(Chips::ZERO, |o| o.cost);
        let big_blind =
            turn.public_state.pointer("/blinds/big").and_then(Value::as_u64).filter(|b| *b > 0).unwrap_or(10);
        // A small chance of a bluff keeps the table from being read trivially.
        let bluff = uniform(rng, 0, 19) == 0;
        match (strength, bluff) {
            (Strength::Strong, _) | (Strength::Weak, true) => {
                // At most one raise per betting round: once this seat has put
                // more than a big blind in, it only calls (no endless wars).
                let my_bet = turn
                    .public_state
                    .pointer(&format!("/players/{}/bet", turn.seat.0))
                    .and_then(Value::as_u64)
                    .unwrap_or(0);
                let raise =
                    if my_bet <= big_blind { find_option(turn.actions, &["raise", "bet"]) } else { None };
                if let Some(o) = raise {
                    let lo = o.range.map_or(Chips::ZERO, |r| r.0);
                    return Ok(with_amount(o, lo));
                }
                if let Some(o) = find_option(turn.actions, &["call", "check", "all-in"]) {
                    return Ok(o.action.clone());
                }
            }
            (Strength::Fair, _) => {
                if let Some(o) = find_option(turn.actions, &["check"]) {
                    return Ok(o.action.clone());
                }
                let price_ok =
                    to_call.0 <= big_blind.saturating_mul(4) || to_call.0.saturating_mul(5) <= turn.balance.0;
                if price_ok {
                    if let Some(o) = find_option(turn.actions, &["call"]) {
                        return Ok(o.action.clone());
                    }
                }
            }
            (Strength::Weak, false) => {
                if let Some(o) = find_option(turn.actions, &["check"]) {
                    return Ok(o.action.clone());
                }
            }
        }
        match find_option(turn.actions, &["check", "fold"]) {
            Some(o) => Ok(o.action.clone()),
            None => RandomBot.choose(turn, rng),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(s: &str) -> Card {
        s.parse().unwrap()
    }

    #[test]
    fn preflop_chart() {
        assert_eq!(preflop_strength(c("As"), c("Ad")), Strength::Strong);
        assert_eq!(preflop_strength(c("As"), c("Kd")), Strength::Strong);
        assert_eq!(preflop_strength(c("5s"), c("5d")), Strength::Fair);
        assert_eq!(preflop_strength(c("Ks"), c("Td")), Strength::Fair);
        assert_eq!(preflop_strength(c("As"), c("4s")), Strength::Fair);
        assert_eq!(preflop_strength(c("8h"), c("7h")), Strength::Fair);
        assert_eq!(preflop_strength(c("7s"), c("2d")), Strength::Weak);
    }

    #[test]
    fn postflop_counts_only_the_hole_cards() {
        let board = [c("Ks"), c("7d"), c("2c")];
        assert_eq!(postflop_strength(&[c("Kd"), c("7h")], &board), Strength::Strong);
        assert_eq!(postflop_strength(&[c("Kd"), c("3h")], &board), Strength::Fair);
        assert_eq!(postflop_strength(&[c("4d"), c("3h")], &board), Strength::Weak);
        // A pair on the board is everybody's.
        let paired = [c("Ks"), c("Kd"), c("2c")];
        assert_eq!(postflop_strength(&[c("9d"), c("3h")], &paired), Strength::Weak);
    }
}
