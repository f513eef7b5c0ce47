//! The Sam Gong settlement (the source rules' SettlementEngine, decision D13
//! for an insolvent banker; see docs/games/sam-gong.md §7), under one of two
//! [`SettlementRule`]s.
//!
//! Every caller is settled against the banker one by one, clockwise from the
//! banker's left ("依閒家順時鐘座位順序逐一結算（先到先得）"). A tie returns the
//! call (not in the pot, not raked); a folder has no call.
//!
//! **`banker-pays`** (the default, the source rules' words): winners are paid by the
//! banker "不經底池" (not from the pot). The banker's funds for paying them are
//! its balance after its bet (step 2 of the hand) plus its escrowed bet, i.e. its balance at hand
//! start ("破產判斷以Step 2後的chip_balance為準"; "可用資金 = 當前chip_balance +
//! 未釋放escrow_amount"). A winner gets its call back plus N × call (N = 3 Sam
//! Gong, 2 nine, 1 otherwise) from those funds; when they do not cover N × call
//! the winner gets its call back plus all that is left. Insolvency (D13) is that
//! shortfall ("chip_balance + escrow < 本次應付額"): paying exactly down to 0 is
//! not insolvent. Once the funds are at 0, a later winner gets nothing and
//! loses its call ("支付後 banker_chip_balance 歸零 → 後續贏家進入
//! insolvent_winners（net_chips = -bet）"), which is a shortfall too; after
//! insolvency every loser's call is not raked
//! ("莊家破產後未完成結算的輸家下注額不計入抽水底數"). Losers' calls reach
//! the banker only after the pass, the raked ones after the rake; forfeited
//! calls (later winners and losers) go to the banker unraked, the only party
//! left for them.
//!
//! **`one-pass`** (the earlier reading, kept as a room setting): the same
//! clockwise pass, but a loser's raked call joins the banker's funds at once,
//! so a loser seated before a winner funds that winner; the banker is
//! insolvent only when a winner finds its funds short (a winner reaching a
//! banker at exactly 0 is short and gets its call back).
//!
//! In both, the rake is taken from each loser's call as it enters the pot
//! (the total is rake(base) for the base so far, so the increments add up
//! exactly): the banker never funds the rake from its own chips.

use claw_protocol::{Chips, Seat};
use serde::{Deserialize, Serialize};

use super::eval::Outcome;
use crate::plugin::{ChipMove, ChipOp, ChipParty, GameError, PendingAction};

/// The rake on a losers' pot: floor(pot × percent / 100), at least 1 when the
/// pot is non-empty and the percent is non-zero, 0 for an empty pot (the
/// source rules' empty-pot guard).
pub fn rake(pot: u64, percent: u8) -> u64 {
    if pot == 0 || percent == 0 {
        return 0;
    }
    let r = u128::from(pot) * u128::from(percent) / 100;
    // r <= pot because percent <= 100 (validated settings).
    (r as u64).max(1)
}

/// Which reading of the source rules' settlement a table uses (room setting
/// `settlement`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SettlementRule {
    /// The source rules' words: the banker pays winners from its own funds; losers'
    /// calls reach it after the pass; at 0 later winners get nothing.
    #[default]
    BankerPays,
    /// One clockwise pass in which losers' calls refill the banker's funds.
    OnePass,
}

/// How one non-banker seat ended its decision.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Decision {
    /// Folded: no chips in, none out.
    Folded,
    /// Called the banker's bet.
    Called {
        /// The call (the banker's bet).
        bet: Chips,
        /// The hand's result against the banker.
        outcome: Outcome,
        /// The payout multiple N the hand earns when it wins (3, 2 or 1).
        multiplier: u64,
    },
}

/// What a non-banker seat got, in the source rules' settlement broadcast terms.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum EntryResult {
    /// Beat the banker and was paid (in full, or all the banker had left).
    Win,
    /// Lost the call to the banker.
    Lose,
    /// Tied: call returned.
    Tie,
    /// Folded.
    Fold,
    /// A winner the insolvent banker could not pay: net −call (D13).
    InsolventWin,
}

/// One non-banker seat's settlement.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entry {
    /// The seat.
    pub seat: Seat,
    /// How it ended.
    pub result: EntryResult,
    /// The called bet (0 for a fold).
    pub bet: Chips,
    /// The payout multiple N of the caller's hand (3, 2 or 1; 0 for a fold).
    #[serde(default)]
    pub multiplier: u64,
    /// Chips credited back at settlement (call returned plus winnings).
    pub payout: Chips,
    /// payout − bet.
    pub net: i64,
    /// For the winner that found the banker short: what it was owed but not paid.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub shortfall: Chips,
}

fn is_zero(c: &Chips) -> bool {
    c.0 == 0
}

/// The whole settlement of one hand.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Settlement {
    /// The banker's seat.
    pub banker: Seat,
    /// The banker's bet (each call equals it).
    pub banker_bet: Chips,
    /// Non-banker seats, clockwise from the banker's left.
    pub entries: Vec<Entry>,
    /// Every losing caller's call, raked or not.
    #[serde(default)]
    pub losers_total: Chips,
    /// The rake base: calls of losers settled before the banker went insolvent.
    pub pot: Chips,
    /// The rake on `pot`, paid to the dealer's account.
    pub rake: Chips,
    /// Calls forfeited to the banker after it went insolvent (not raked).
    pub forfeited: Chips,
    /// Whether the banker went insolvent (D13): a winner found its funds short
    /// of what it was due (exactly enough is not insolvent).
    pub banker_insolvent: bool,
    /// Whether every player folded.
    pub all_fold: bool,
    /// The banker's balance after the hand.
    pub banker_remaining: Chips,
    /// The banker's net change over the hand.
    pub banker_net: i64,
}

fn overflow() -> GameError {
    GameError::BadAmount("chip amounts overflow".into())
}

fn to_u64(v: u128) -> Result<u64, GameError> {
    u64::try_from(v).map_err(|_| overflow())
}

fn net(credit: u128, debit: u128) -> Result<i64, GameError> {
    let d =
        i128::try_from(credit).map_err(|_| overflow())? - i128::try_from(debit).map_err(|_| overflow())?;
    i64::try_from(d).map_err(|_| overflow())
}

/// Settles a hand under `rule`. `banker_start` is the banker's balance at
/// hand start, `banker_bet` its escrowed bet, `seats` every non-banker seat
/// clockwise from the banker's left with its decision.
pub fn settle(
    rule: SettlementRule,
    banker: Seat,
    banker_start: Chips,
    banker_bet: Chips,
    rake_percent: u8,
    seats: &[(Seat, Decision)],
) -> Result<Settlement, GameError> {
    if banker_bet > banker_start {
        return Err(GameError::BadAmount("banker bet exceeds the banker's balance".into()));
    }
    let one_pass = rule == SettlementRule::OnePass;
    let mut funds = u128::from(banker_start.0);
    // Raked losers' calls waiting for the end of the pass (banker-pays).
    let mut collected = 0u128;
    let mut base = 0u128;
    let mut taken = 0u128; // rake taken so far, == rake(base)
    let mut forfeited = 0u128;
    let mut losers = 0u128;
    let mut insolvent = false;
    let mut entries = Vec::with_capacity(seats.len());
    for &(seat, decision) in seats {
        let Decision::Called { bet, outcome, multiplier } = decision else {
            entries.push(Entry {
                seat,
                result: EntryResult::Fold,
                bet: Chips::ZERO,
                multiplier: 0,
                payout: Chips::ZERO,
                net: 0,
                shortfall: Chips::ZERO,
            });
            continue;
        };
        let call = u128::from(bet.0);
        let (result, payout, shortfall) = match outcome {
            Outcome::Tie => (EntryResult::Tie, call, 0),
            Outcome::Lose if insolvent => {
                losers += call;
                forfeited += call;
                funds += call;
                (EntryResult::Lose, 0, 0)
            }
            Outcome::Lose => {
                losers += call;
                base += call;
                let total = u128::from(rake(to_u64(base)?, rake_percent));
                let step = total - taken;
                taken = total;
                if one_pass {
                    funds += call - step;
                } else {
                    collected += call - step;
                }
                (EntryResult::Lose, 0, 0)
            }
            Outcome::Win if insolvent => {
                forfeited += call;
                funds += call;
                (EntryResult::InsolventWin, 0, 0)
            }
            Outcome::Win => {
                let due = call * u128::from(multiplier);
                if due <= funds {
                    funds -= due;
                    (EntryResult::Win, call + due, 0)
                } else if funds == 0 && !one_pass {
                    // banker-pays: a banker at 0 pays a later winner nothing
                    // (source rules: "支付後…歸零 → 後續贏家…").
                    insolvent = true;
                    forfeited += call;
                    funds += call;
                    (EntryResult::InsolventWin, 0, 0)
                } else {
                    insolvent = true;
                    let paid = funds;
                    funds = 0;
                    (EntryResult::Win, call + paid, due - paid)
                }
            }
        };
        entries.push(Entry {
            seat,
            result,
            bet,
            multiplier,
            payout: Chips(to_u64(payout)?),
            net: net(payout, call)?,
            shortfall: Chips(to_u64(shortfall)?),
        });
    }
    funds += collected;
    let all_fold = entries.iter().all(|e| e.result == EntryResult::Fold);
    Ok(Settlement {
        banker,
        banker_bet,
        losers_total: Chips(to_u64(losers)?),
        pot: Chips(to_u64(base)?),
        rake: Chips(to_u64(taken)?),
        forfeited: Chips(to_u64(forfeited)?),
        banker_insolvent: insolvent,
        all_fold,
        banker_remaining: Chips(to_u64(funds)?),
        banker_net: net(funds, u128::from(banker_start.0))?,
        entries,
    })
}

impl Settlement {
    /// The chip movements at settlement, after the bets were escrowed: the
    /// banker's extra debit first (when it pays out more than its bet), then
    /// the credits clockwise, then the banker's credit.
    pub fn pending(&self, banker_start: Chips) -> Vec<PendingAction> {
        let mut out = Vec::new();
        // The banker's balance after escrow; `banker_remaining` is where it ends.
        let after_escrow = banker_start.0 - self.banker_bet.0;
        let remaining = self.banker_remaining.0;
        if remaining < after_escrow {
            out.push(PendingAction::Chip(ChipMove {
                op: ChipOp::Debit,
                party: ChipParty::Seat(self.banker),
                amount: Chips(after_escrow - remaining),
                reason: "banker pays winners".into(),
            }));
        }
        for e in &self.entries {
            if e.payout.0 > 0 {
                let reason = match e.result {
                    EntryResult::Tie => "tie: call returned",
                    _ => "call returned with winnings",
                };
                out.push(PendingAction::Chip(ChipMove {
                    op: ChipOp::Credit,
                    party: ChipParty::Seat(e.seat),
                    amount: e.payout,
                    reason: reason.into(),
                }));
            }
        }
        if remaining > after_escrow {
            let reason = if self.all_fold { "all folded: banker bet returned" } else { "banker collects" };
            out.push(PendingAction::Chip(ChipMove {
                op: ChipOp::Credit,
                party: ChipParty::Seat(self.banker),
                amount: Chips(remaining - after_escrow),
                reason: reason.into(),
            }));
        }
        out
    }

    /// Net change per seat (indexed by seat) for `players` seats.
    pub fn nets(&self, players: usize) -> Vec<i64> {
        let mut nets = vec![0i64; players];
        for e in &self.entries {
            if let Some(n) = nets.get_mut(e.seat.index()) {
                *n = e.net;
            }
        }
        if let Some(n) = nets.get_mut(self.banker.index()) {
            *n = self.banker_net;
        }
        nets
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rake_rule() {
        assert_eq!(rake(0, 5), 0);
        assert_eq!(rake(1, 5), 1);
        assert_eq!(rake(19, 5), 1);
        assert_eq!(rake(20, 5), 1);
        assert_eq!(rake(39, 5), 1);
        assert_eq!(rake(40, 5), 2);
        assert_eq!(rake(100, 5), 5);
        assert_eq!(rake(100, 0), 0);
        assert_eq!(rake(u64::MAX, 100), u64::MAX);
    }
}
