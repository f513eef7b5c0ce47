//! Sam Gong (三公): the banker bets the minimum; a player calls with a Sam
//! Gong or at least [`CALL_POINTS`] points and folds otherwise.

use claw_games::sam_gong::{HandValue, SamGongRule};
use claw_protocol::Card;
use rand_core::RngCore;
use serde_json::Value;

use super::{find_option, playable, with_amount, BotError, RandomBot, Strategy, TurnView};

/// The fewest points the simple strategy calls with.
pub const CALL_POINTS: u8 = 5;

/// Whether the simple strategy calls with these three cards.
pub fn should_call(cards: &[Card; 3], rule: SamGongRule) -> bool {
    let v = HandValue::of(cards, rule);
    v.sam_gong || v.points >= CALL_POINTS
}

/// The simple Sam Gong strategy.
#[derive(Debug, Clone, Copy, Default)]
pub struct SimpleSamGong;

impl Strategy for SimpleSamGong {
    fn name(&self) -> &'static str {
        "simple"
    }

    fn choose(&self, turn: &TurnView<'_>, rng: &mut dyn RngCore) -> Result<Value, BotError> {
        if playable(turn.actions).is_empty() {
            return Err(BotError::NoActions);
        }
        // Banker: the minimum bet.
        if let Some(bet) = turn.actions.iter().find(|o| super::action_type(&o.action) == Some("bet")) {
            return Ok(match bet.range {
                Some((lo, _)) => with_amount(bet, lo),
                None => bet.action.clone(),
            });
        }
        let rule: SamGongRule = turn
            .public_state
            .get("sam_gong_rule")
            .and_then(|v| serde_json::from_value(v.clone()).ok())
            .unwrap_or_default();
        let cards: Vec<Card> = turn.hand.iter().map(|c| c.card()).collect();
        let Ok(three) = <[Card; 3]>::try_from(cards) else { return RandomBot.choose(turn, rng) };
        let wanted: &[&str] = if should_call(&three, rule) { &["call", "fold"] } else { &["fold", "call"] };
        match find_option(turn.actions, wanted) {
            Some(o) => Ok(o.action.clone()),
            None => RandomBot.choose(turn, rng),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn h(a: &str, b: &str, c: &str) -> [Card; 3] {
        [a.parse().unwrap(), b.parse().unwrap(), c.parse().unwrap()]
    }

    #[test]
    fn calls_with_five_or_better() {
        assert!(should_call(&h("Ks", "Qd", "Jc"), SamGongRule::TenValue));
        assert!(should_call(&h("2s", "3d", "Kc"), SamGongRule::TenValue));
        assert!(should_call(&h("9s", "Kd", "Tc"), SamGongRule::TenValue));
        assert!(!should_call(&h("2s", "2d", "Kc"), SamGongRule::TenValue));
        assert!(!should_call(&h("Ts", "Kd", "Qc"), SamGongRule::FaceCards));
    }
}
