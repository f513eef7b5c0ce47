//! Choosing the banker of a hand (the source rules' BankerRotation and
//! resetForNextRound, decision D9; see docs/games/sam-gong.md §6).
//!
//! - First hand at a table: the player with the most chips; on equal chips
//!   the one who joined first, i.e. the lowest seat (the dealer seats players
//!   in joining order).
//! - Every later hand: the next player clockwise after the last banker, in the
//!   last hand's seat order, folded players included. Players who joined in
//!   between are not in that order, so they do not take the banker's seat on
//!   their first hand (resetForNextRound: "剛解鎖的排隊玩家首次參與不搶莊家位").
//! - D9: a candidate whose balance is below the table's minimum bet is
//!   skipped and the turn passes on. If no one from the last hand qualifies,
//!   the first-hand rule picks among everyone; if no one at all can cover the
//!   minimum bet, there is no hand (the source rules' state machine goes back to
//!   `waiting`).

use claw_protocol::{Chips, PlayerId, Seat};
use serde::{Deserialize, Serialize};

use crate::plugin::{GameError, PlayerInfo};

/// What a Sam Gong table remembers between hands: who banked last and the
/// seat order of that hand (to find "clockwise next" after players leave).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SamGongMemory {
    /// The banker of the last hand played at this table.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_banker: Option<PlayerId>,
    /// The players of the last hand, in seat order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub last_order: Vec<PlayerId>,
    /// Hands played at this table so far.
    #[serde(default)]
    pub hands_played: u64,
}

/// The first-hand rule: most chips among players who can cover `min_bet`,
/// ties to the lowest seat.
pub fn first_banker(players: &[PlayerInfo], min_bet: Chips) -> Option<Seat> {
    let mut best: Option<(usize, Chips)> = None;
    for (i, p) in players.iter().enumerate() {
        if p.balance < min_bet {
            continue;
        }
        if best.is_none_or(|(_, b)| p.balance > b) {
            best = Some((i, p.balance));
        }
    }
    best.and_then(|(i, _)| u8::try_from(i).ok()).map(Seat)
}

/// The banker for this hand given the table memory (see the module docs).
pub fn choose_banker(
    players: &[PlayerInfo],
    memory: &SamGongMemory,
    min_bet: Chips,
) -> Result<Seat, GameError> {
    let seat_of = |id: &PlayerId| players.iter().position(|p| p.id == *id);
    if let Some(last) = &memory.last_banker {
        if let Some(idx) = memory.last_order.iter().position(|id| id == last) {
            let n = memory.last_order.len();
            // Clockwise after the last banker; the last banker itself comes
            // last (it banks again only when no one else from that hand can).
            for k in 1..=n {
                let id = &memory.last_order[(idx + k) % n];
                if let Some(i) = seat_of(id) {
                    if players[i].balance >= min_bet {
                        return u8::try_from(i)
                            .map(Seat)
                            .map_err(|_| GameError::BadPlayers("too many".into()));
                    }
                }
            }
        }
    }
    first_banker(players, min_bet).ok_or_else(|| {
        GameError::BadPlayers(format!("no player can cover the minimum bet of {min_bet} to be banker (D9)"))
    })
}

/// The banking order from the hand `memory` leads to on (the dealer's
/// `banker-queue`): that hand's banker ([`choose_banker`]), then the players
/// after it clockwise who can cover `min_bet`, as the rotation would pick
/// them if no balance changed. Empty when no one can bank.
pub fn queue(players: &[PlayerInfo], memory: &SamGongMemory, min_bet: Chips) -> Vec<Seat> {
    let Ok(first) = choose_banker(players, memory, min_bet) else { return Vec::new() };
    let n = players.len();
    (0..n)
        .map(|k| (first.index() + k) % n)
        .filter(|&i| i == first.index() || players[i].balance >= min_bet)
        .filter_map(|i| u8::try_from(i).ok().map(Seat))
        .collect()
}
