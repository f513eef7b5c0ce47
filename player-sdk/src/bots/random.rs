//! The random legal strategy: works for every game on the valid-actions JSON.

use claw_protocol::Chips;
use rand_core::RngCore;
use serde_json::Value;

use super::{playable, uniform, with_amount, BotError, Strategy, TurnView};

/// Picks an affordable option uniformly at random; for an option with an
/// amount range, the minimum half of the time, otherwise a uniform amount in
/// the range (so random tables do not all go all-in at once).
#[derive(Debug, Clone, Copy, Default)]
pub struct RandomBot;

impl Strategy for RandomBot {
    fn name(&self) -> &'static str {
        "random"
    }

    fn choose(&self, turn: &TurnView<'_>, rng: &mut dyn RngCore) -> Result<Value, BotError> {
        let options = playable(turn.actions);
        if options.is_empty() {
            return Err(BotError::NoActions);
        }
        let i = uniform(rng, 0, options.len() as u64 - 1) as usize;
        let option = options[i];
        Ok(match option.range {
            Some((lo, hi)) => {
                let amount = if rng.next_u32() & 1 == 0 { lo } else { Chips(uniform(rng, lo.0, hi.0)) };
                with_amount(option, amount)
            }
            None => option.action.clone(),
        })
    }
}
