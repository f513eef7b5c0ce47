//! End of a deal: level-up by the finishing order (the source rules' LEVEL_UP_PHASE),
//! the match's terminal states (as the source rules list them), and the chips: a stake per level
//! won, paid by each losing player and shared by the winners, exactly.

use claw_protocol::{Chips, Seat};
use serde::{Deserialize, Serialize};

use super::cards::Level;
use super::{team, AceRule, EndRequest, GdMemory, GdSettings};
use crate::plugin::{ChipMove, ChipOp, ChipParty, PendingAction};

/// How a match ended (source rules: "终端状态分支").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", tag = "kind")]
pub enum MatchEnd {
    /// GAME_END_NORMAL: a team at A won a deal at its level.
    Normal {
        /// The winning team.
        winner: u8,
    },
    /// GAME_END_SURRENDER: a team gave up (its partner and an opponent agreed).
    Surrender {
        /// The team that did not give up.
        winner: u8,
    },
    /// GAME_END_TIMEOUT: the duration limit passed; the higher level wins.
    Timeout {
        /// The team with the higher level.
        winner: u8,
    },
    /// GAME_END_DRAW: the duration limit passed with equal levels.
    Draw,
    /// GAME_END_DISCONNECT: a player stayed away; the other team wins.
    Disconnect {
        /// The team that stayed.
        winner: u8,
    },
}

impl MatchEnd {
    fn winner(self) -> Option<u8> {
        match self {
            MatchEnd::Normal { winner }
            | MatchEnd::Surrender { winner }
            | MatchEnd::Timeout { winner }
            | MatchEnd::Disconnect { winner } => Some(winner),
            MatchEnd::Draw => None,
        }
    }
}

/// What a finished deal produced.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DealOutcome {
    /// Finishing order, first to last; after a double-down the two losers in
    /// seat order (their order is not played out). Empty without play.
    pub order: Vec<u8>,
    /// The team that won the deal (or the match, without play); None for a draw.
    pub winner_team: Option<u8>,
    /// Levels the winners went up (1, 2 or `double_down_levels`), before the A cap.
    pub levels_up: u8,
    /// Team levels after the deal.
    pub levels_after: [Level; 2],
    /// The match ended with this deal.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub match_end: Option<MatchEnd>,
    /// Chips per seat (credits minus debits).
    pub net: Vec<i64>,
    /// In words.
    pub summary: String,
    /// Table memory for the next deal.
    pub memory_after: GdMemory,
}

/// Levels for this finishing order: the partner of the first is 2nd, 3rd or 4th.
pub fn levels_up(order: &[u8], double_down_levels: u8) -> u8 {
    let partner_place = order.iter().position(|s| team(*s) == team(order[0]) && *s != order[0]);
    match partner_place {
        Some(1) => double_down_levels,
        Some(2) => 2,
        _ => 1,
    }
}

/// Memory for a new match after `end`.
fn next_match(m: &GdMemory, end: MatchEnd) -> GdMemory {
    let mut n = GdMemory {
        match_no: m.match_no + 1,
        matches_won: m.matches_won,
        draws: m.draws,
        ..GdMemory::default()
    };
    match end.winner() {
        Some(w) => n.matches_won[usize::from(w)] += 1,
        None => n.draws += 1,
    }
    n.last_match_end = Some(end);
    n
}

/// Chips: each seat of `losers` pays `stake` (at most its balance); the
/// winners share the total, the odd chip to the first of them in `winners`.
fn pay(
    stake: u128,
    losers: &[u8],
    winners: &[u8],
    balances: &[Chips],
    reason: &str,
) -> (Vec<i64>, Vec<PendingAction>) {
    let mut net = vec![0i64; 4];
    let mut debits = Vec::new();
    let mut total: u64 = 0;
    for l in losers {
        // Bounded by a balance, so it fits in u64.
        let amount = u64::try_from(stake.min(u128::from(balances[usize::from(*l)].0))).unwrap_or(0);
        if amount > 0 {
            total += amount;
            net[usize::from(*l)] -= amount as i64;
            debits.push(PendingAction::Chip(ChipMove {
                op: ChipOp::Debit,
                party: ChipParty::Seat(Seat(*l)),
                amount: Chips(amount),
                reason: format!("{reason}: loses"),
            }));
        }
    }
    let share = total / winners.len() as u64;
    let odd = total - share * winners.len() as u64;
    for (i, w) in winners.iter().enumerate() {
        let amount = share + if i == 0 { odd } else { 0 };
        if amount > 0 {
            net[usize::from(*w)] += amount as i64;
            debits.push(PendingAction::Chip(ChipMove {
                op: ChipOp::Credit,
                party: ChipParty::Seat(Seat(*w)),
                amount: Chips(amount),
                reason: format!("{reason}: wins"),
            }));
        }
    }
    (net, debits)
}

/// Settles a played-out deal with this full finishing order.
pub fn settle_deal(
    s: &GdSettings,
    m: &GdMemory,
    balances: &[Chips],
    order: &[u8],
) -> (DealOutcome, Vec<PendingAction>) {
    let w = team(order[0]);
    let up = levels_up(order, s.double_down_levels);
    let partner_last = order[3] != order[0] && team(order[3]) == w;
    let played_at_own_ace = m.level_team == w && m.levels[usize::from(w)] == Level::ACE;
    let mut levels = m.levels;
    levels[usize::from(w)] = levels[usize::from(w)].up(up);
    let ends = match s.ace_rule {
        AceRule::AnyWin => played_at_own_ace,
        AceRule::PartnerNotLast => played_at_own_ace && !partner_last,
        AceRule::Reach => levels[usize::from(w)] == Level::ACE,
    };
    let winners: Vec<u8> = order.iter().copied().filter(|x| team(*x) == w).collect();
    let losers: Vec<u8> = (0..4u8).filter(|x| team(*x) != w).collect();
    let stake = u128::from(s.stake_per_level.0) * u128::from(up);
    let (net, actions) = pay(stake, &losers, &winners, balances, "deal");
    let (match_end, memory_after) = if ends {
        let end = MatchEnd::Normal { winner: w };
        (Some(end), next_match(m, end))
    } else {
        let next = GdMemory {
            deal: m.deal + 1,
            levels,
            level_team: w,
            last_order: order.to_vec(),
            end_request: None,
            ..m.clone()
        };
        (None, next)
    };
    let summary = format!(
        "finishing order {:?}: team {w} up {up} level(s) to {}{}",
        order,
        levels[usize::from(w)].rank(),
        if ends { "; team at A wins the match" } else { "" }
    );
    let o = DealOutcome {
        order: order.to_vec(),
        winner_team: Some(w),
        levels_up: up,
        levels_after: levels,
        match_end,
        net,
        summary,
        memory_after,
    };
    (o, actions)
}

/// Settles a surrender by `team_out`: the match ends; each of its players
/// pays the stake of a double-down.
pub fn settle_surrender(
    s: &GdSettings,
    m: &GdMemory,
    balances: &[Chips],
    team_out: u8,
) -> (DealOutcome, Vec<PendingAction>) {
    let w = 1 - team_out;
    let up = s.double_down_levels;
    let winners: Vec<u8> = (0..4u8).filter(|x| team(*x) == w).collect();
    let losers: Vec<u8> = (0..4u8).filter(|x| team(*x) != w).collect();
    let stake = u128::from(s.stake_per_level.0) * u128::from(up);
    let (net, actions) = pay(stake, &losers, &winners, balances, "surrender");
    let end = MatchEnd::Surrender { winner: w };
    let o = DealOutcome {
        order: Vec::new(),
        winner_team: Some(w),
        levels_up: up,
        levels_after: m.levels,
        match_end: Some(end),
        net,
        summary: format!("team {team_out} surrenders: team {w} wins the match"),
        memory_after: next_match(m, end),
    };
    (o, actions)
}

/// Ends the match at the dealer's request, without a deal and without chips.
pub fn settle_request(m: &GdMemory, req: EndRequest) -> DealOutcome {
    let [a, b] = m.levels;
    let end = match req {
        EndRequest::Timeout if a == b => MatchEnd::Draw,
        EndRequest::Timeout => MatchEnd::Timeout { winner: u8::from(b > a) },
        EndRequest::Disconnect { seat } => MatchEnd::Disconnect { winner: 1 - team(seat) },
    };
    DealOutcome {
        order: Vec::new(),
        winner_team: end.winner(),
        levels_up: 0,
        levels_after: m.levels,
        match_end: Some(end),
        net: vec![0; 4],
        summary: format!("match ended by the dealer: {end:?}"),
        memory_after: next_match(m, end),
    }
}
