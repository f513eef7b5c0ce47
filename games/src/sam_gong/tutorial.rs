//! The tutorial's three scripted rounds (the source rules'
//! TutorialScriptEngine; see docs/games/sam-gong.md §9), as full deck orders
//! for the engine.
//!
//! The product rules and the engineering specification disagree; this follows
//! the product rules' outcomes, which the specification's cards are marked
//! provisional against ("暫定", an open question there):
//!
//! | round | learner                | NPC banker              | result |
//! |-------|------------------------|-------------------------|--------|
//! | 1     | K♠ Q♥ J♦ — Sam Gong    | A♠ 2♣ 4♦ — 7 points     | learner wins, 3× |
//! | 2     | 5♠ A♥ 9♦ — 5 points    | 3♦ K♣ Q♠ — 3 points     | learner wins, 1× |
//! | 3     | 6♥ J♠ Q♣ — 6 points    | 2♠ 4♥ Q♦ — 6 points     | tie by D8 (both ♠ high, both Q high): call returned |
//!
//! Round 1 keeps the specification's Sam Gong cards, round 2 swaps its two
//! hands (the product rules have the learner win 5 to 3), round 3 keeps its
//! learner hand and changes the banker's K♦ to Q♦ so that both D8 steps tie,
//! as the product rules require (the specification's `force_tie` outside the
//! rules could not be replayed by an auditor). Hands beyond the third cycle through the script again.
//!
//! The NPC banks at a fixed seat (the settings' `fixed_banker`, seat 1 by
//! default: the learner opens the table and joins first); the learner is the
//! lowest other seat.

use claw_protocol::{CardId, Seat};

use super::eval::parse_hand;

/// One scripted round: the NPC banker's hand and the learner's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScriptedRound {
    /// The NPC banker's three cards.
    pub banker: &'static str,
    /// The learner's three cards.
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

/// The learner's seat when the NPC banks at `banker`: the lowest other seat.
pub fn learner_seat(banker: Seat) -> Seat {
    if banker.0 == 0 {
        Seat(1)
    } else {
        Seat(0)
    }
}

/// The deck order for hand `hand_number` with the NPC banker at `banker`:
/// seat s is dealt positions 3s–3s+2, so the banker's block holds the NPC's
/// three cards and the learner's block the learner's; every other position
/// holds the remaining 46 cards in canonical order (what any further seats
/// receive).
pub fn deck(hand_number: u64, banker: Seat) -> Vec<CardId> {
    let r = round(hand_number);
    let parse = |hand: &str| -> Vec<CardId> {
        // The script is a constant checked by tests; a parse failure would
        // leave the deck short and the engine would refuse it.
        parse_hand(hand).map(|c| c.iter().map(|c| CardId::from(*c)).collect()).unwrap_or_default()
    };
    let (npc, learner) = (parse(r.banker), parse(r.learner));
    let mut rest = CardId::deck(1, false).into_iter().filter(|id| !npc.contains(id) && !learner.contains(id));
    let learner_at = learner_seat(banker);
    let blocks = usize::from(banker.0.max(learner_at.0)) + 1;
    let mut deck = Vec::with_capacity(52);
    for block in 0..blocks {
        if block == banker.index() {
            deck.extend(&npc);
        } else if block == learner_at.index() {
            deck.extend(&learner);
        } else {
            deck.extend(rest.by_ref().take(3));
        }
    }
    deck.extend(rest);
    deck
}
