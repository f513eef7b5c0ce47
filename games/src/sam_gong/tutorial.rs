//! The tutorial's three scripted rounds (PRD REQ-012 AC-5, EDD §3.6
//! TutorialScriptEngine), as full deck orders for the engine.
//!
//! The PRD and the EDD disagree; this follows the PRD's outcomes, which the
//! EDD's cards are marked provisional against ("暫定", open question Q7):
//!
//! | round | learner (seat 1)       | NPC banker (seat 0)     | result |
//! |-------|------------------------|-------------------------|--------|
//! | 1     | K♠ Q♥ J♦ — Sam Gong    | A♠ 2♣ 4♦ — 7 points     | learner wins, 3× |
//! | 2     | 5♠ A♥ 9♦ — 5 points    | 3♦ K♣ Q♠ — 3 points     | learner wins, 1× |
//! | 3     | 6♥ J♠ Q♣ — 6 points    | 2♠ 4♥ Q♦ — 6 points     | tie by D8 (both ♠ high, both Q high): call returned |
//!
//! Round 1 keeps the EDD's Sam Gong cards, round 2 swaps the EDD's two hands
//! (the PRD has the learner win 5 to 3), round 3 keeps the EDD's learner hand
//! and changes the banker's K♦ to Q♦ so that both D8 steps tie, as the PRD
//! requires (the EDD's `force_tie` outside the rules could not be replayed by
//! an auditor). Hands beyond the third cycle through the script again.

use claw_protocol::{Card, CardId};

use super::eval::parse_hand;

/// One scripted round: the NPC banker's hand (seat 0) and the learner's (seat 1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScriptedRound {
    /// The NPC banker's three cards (seat 0).
    pub banker: &'static str,
    /// The learner's three cards (seat 1).
    pub learner: &'static str,
}

/// The three rounds, in order.
pub const SCRIPT: [ScriptedRound; 3] = [
    ScriptedRound { banker: "As 2c 4d", learner: "Ks Qh Jd" },
    ScriptedRound { banker: "3d Kc Qs", learner: "5s Ah 9d" },
    ScriptedRound { banker: "2s 4h Qd", learner: "6h Js Qc" },
];

/// The round used for hand `hand_number` (0-based): the script cycles.
pub fn round(hand_number: u64) -> ScriptedRound {
    SCRIPT[(hand_number % SCRIPT.len() as u64) as usize]
}

/// The deck order for hand `hand_number`: the banker's three cards (seat 0 is
/// dealt positions 0–2), the learner's (seat 1, positions 3–5), then the other
/// 46 cards in canonical order (what any further seats receive).
pub fn deck(hand_number: u64) -> Vec<CardId> {
    let r = round(hand_number);
    let mut top: Vec<Card> = Vec::with_capacity(6);
    for hand in [r.banker, r.learner] {
        // The script is a constant checked by tests; a parse failure would
        // leave the deck short and the engine would refuse it.
        if let Some(cards) = parse_hand(hand) {
            top.extend(cards);
        }
    }
    let mut deck: Vec<CardId> = top.iter().map(|c| CardId::from(*c)).collect();
    deck.extend(CardId::deck(1, false).into_iter().filter(|id| !top.contains(&id.card())));
    deck
}
