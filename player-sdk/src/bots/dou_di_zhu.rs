//! Dou Di Zhu (斗地主): bid by hand strength, then play the smallest
//! winning pattern.
//!
//! Leading, the bot sheds its lowest rank in the longest pattern that
//! starts there (a straight before a pair before a single); following, it
//! plays the lowest combination that beats the table, keeps bombs for an
//! opponent's play, and passes over its partner's.

use claw_games::dou_di_zhu::patterns::{classify, value, Combo, Pattern};
use claw_protocol::{Card, CardId};
use rand_core::RngCore;
use serde_json::Value;

use super::{action_type, playable, BotError, RandomBot, Strategy, TurnView};

/// Points of hand strength: 3 for the rocket, 2 per bomb, 1 per joker and
/// per two. Mapped to a bid by [`bid_for`].
pub fn hand_strength(hand: &[Card]) -> u32 {
    let mut counts = [0u8; 18];
    for c in hand {
        counts[usize::from(value(*c))] += 1;
    }
    let jokers = u32::from(counts[16]) + u32::from(counts[17]);
    let rocket = counts[16] == 1 && counts[17] == 1;
    let bombs = counts.iter().filter(|n| **n == 4).count() as u32;
    let twos = u32::from(counts[15]);
    (if rocket { 3 } else { jokers }) + 2 * bombs + twos
}

/// The bid (0 = pass) the simple strategy wants for a strength.
pub fn bid_for(strength: u32) -> u8 {
    match strength {
        0..=2 => 0,
        3..=4 => 1,
        5..=6 => 2,
        _ => 3,
    }
}

/// The simple Dou Di Zhu strategy.
#[derive(Debug, Clone, Copy, Default)]
pub struct SmallestWinning;

fn faces(cards: &[CardId]) -> Vec<Card> {
    cards.iter().map(|c| c.card()).collect()
}

/// The cards of a `play` option and their pattern.
fn play_of(action: &Value) -> Option<(Vec<CardId>, Combo)> {
    let cards: Vec<CardId> = serde_json::from_value(action.get("cards")?.clone()).ok()?;
    let combo = classify(&faces(&cards))?;
    Some((cards, combo))
}

impl Strategy for SmallestWinning {
    fn name(&self) -> &'static str {
        "simple"
    }

    fn choose(&self, turn: &TurnView<'_>, rng: &mut dyn RngCore) -> Result<Value, BotError> {
        let options = playable(turn.actions);
        if options.is_empty() {
            return Err(BotError::NoActions);
        }
        let pass = options.iter().find(|o| action_type(&o.action) == Some("pass")).map(|o| o.action.clone());
        // Bidding.
        let bids: Vec<(u8, &Value)> = options
            .iter()
            .filter(|o| action_type(&o.action) == Some("bid"))
            .filter_map(|o| Some((u8::try_from(o.action.get("points")?.as_u64()?).ok()?, &o.action)))
            .collect();
        if !bids.is_empty() {
            let want = bid_for(hand_strength(&faces(turn.hand)));
            if let Some((_, a)) = bids.iter().find(|(p, _)| *p == want) {
                return Ok((*a).clone());
            }
            return match pass {
                Some(p) => Ok(p),
                None => RandomBot.choose(turn, rng),
            };
        }
        // Playing.
        let plays: Vec<(Vec<CardId>, Combo, &Value)> = options
            .iter()
            .filter(|o| action_type(&o.action) == Some("play"))
            .filter_map(|o| play_of(&o.action).map(|(c, k)| (c, k, &o.action)))
            .collect();
        if plays.is_empty() {
            return match pass {
                Some(p) => Ok(p),
                None => RandomBot.choose(turn, rng),
            };
        }
        let me = u64::from(turn.seat.0);
        let landlord = turn.public_state.get("landlord").and_then(Value::as_u64);
        let lead_seat = turn.public_state.pointer("/lead/seat").and_then(Value::as_u64);
        let following = pass.is_some();
        if following {
            // Partner's play (both farmers): let it run.
            let partner = match (landlord, lead_seat) {
                (Some(l), Some(s)) => s != me && s != l && me != l,
                _ => false,
            };
            if partner {
                if let Some(p) = pass {
                    return Ok(p);
                }
            }
            let best = plays
                .iter()
                .filter(|(_, k, _)| !k.is_bomb())
                .min_by_key(|(c, k, _)| (k.main, c.len()))
                .or_else(|| plays.iter().min_by_key(|(_, k, _)| (k.pattern == Pattern::Rocket, k.main)));
            // A bomb only when the opponent is close to going out.
            let lead_left = lead_seat
                .and_then(|s| turn.public_state.pointer(&format!("/cards_left/{s}")))
                .and_then(Value::as_u64)
                .unwrap_or(20);
            return match best {
                Some((_, k, a)) if !k.is_bomb() || lead_left <= 4 => Ok((*a).clone()),
                _ => Ok(pass.unwrap_or_else(|| plays[0].2.clone())),
            };
        }
        // Leading: the lowest rank first, as many cards as possible, no bombs
        // unless nothing else is left.
        let lowest = plays
            .iter()
            .filter(|(_, k, _)| !k.is_bomb())
            .map(|(c, _, _)| c.iter().map(|x| value(x.card())).min().unwrap_or(u8::MAX))
            .min();
        let choice = match lowest {
            Some(low) => plays
                .iter()
                .filter(|(c, k, _)| {
                    // The lowest rank must be the play's main part (a chain
                    // starting there, or the single/pair/triple itself), not
                    // a kicker under a high triple.
                    let chain = matches!(
                        k.pattern,
                        Pattern::Straight
                            | Pattern::PairStraight
                            | Pattern::Airplane
                            | Pattern::AirplaneSingles
                            | Pattern::AirplanePairs
                    );
                    !k.is_bomb()
                        && c.iter().map(|x| value(x.card())).min() == Some(low)
                        && (chain || k.main == low)
                })
                .max_by_key(|(c, k, _)| (c.len(), std::cmp::Reverse(k.main))),
            None => plays.iter().min_by_key(|(_, k, _)| k.main),
        };
        Ok(choice.map(|(_, _, a)| (*a).clone()).unwrap_or_else(|| plays[0].2.clone()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn h(s: &str) -> Vec<Card> {
        s.split_whitespace().map(|c| c.parse().unwrap()).collect()
    }

    #[test]
    fn strength_and_bids() {
        assert_eq!(hand_strength(&h("BJ RJ 2s 2d 3c")), 5);
        assert_eq!(hand_strength(&h("5s 5d 5c 5h 3c")), 2);
        assert_eq!(bid_for(0), 0);
        assert_eq!(bid_for(3), 1);
        assert_eq!(bid_for(5), 2);
        assert_eq!(bid_for(9), 3);
    }
}
