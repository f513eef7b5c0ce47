//! Sam Gong settlement vectors for the `one-pass` room setting (losers'
//! calls refill the banker during the pass). The default `banker-pays`
//! reading has its own vectors in `sam_gong_banker_pays.rs`.
//! Each vector is worked out by hand in its comment.

use claw_games::sam_gong::settle::{rake, settle, Decision, EntryResult, Settlement, SettlementRule};
use claw_games::sam_gong::Outcome;
use claw_games::{ChipMove, ChipOp, ChipParty, PendingAction};
use claw_protocol::{Chips, Seat};

const W1: Decision = Decision::Called { bet: Chips(100), outcome: Outcome::Win, multiplier: 1 };
const W2: Decision = Decision::Called { bet: Chips(100), outcome: Outcome::Win, multiplier: 2 };
const W3: Decision = Decision::Called { bet: Chips(100), outcome: Outcome::Win, multiplier: 3 };
const L: Decision = Decision::Called { bet: Chips(100), outcome: Outcome::Lose, multiplier: 1 };
const T: Decision = Decision::Called { bet: Chips(100), outcome: Outcome::Tie, multiplier: 1 };
const F: Decision = Decision::Folded;

fn lose(bet: u64) -> Decision {
    Decision::Called { bet: Chips(bet), outcome: Outcome::Lose, multiplier: 1 }
}

/// Settles with the banker at seat 0 and the given seats 1.. clockwise.
fn run(banker_start: u64, banker_bet: u64, seats: &[Decision]) -> Settlement {
    let seats: Vec<(Seat, Decision)> =
        seats.iter().enumerate().map(|(i, d)| (Seat(i as u8 + 1), *d)).collect();
    let s =
        settle(SettlementRule::OnePass, Seat(0), Chips(banker_start), Chips(banker_bet), 5, &seats).unwrap();
    // Conservation: every net change plus the rake sums to zero.
    let nets = s.nets(seats.len() + 1);
    assert_eq!(nets.iter().sum::<i64>() + s.rake.0 as i64, 0, "{s:?}");
    // The banker never ends below zero.
    assert_eq!(banker_start as i64 + s.banker_net, s.banker_remaining.0 as i64);
    s
}

fn results(s: &Settlement) -> Vec<(EntryResult, u64, i64)> {
    s.entries.iter().map(|e| (e.result, e.payout.0, e.net)).collect()
}

#[test]
fn winner_loser_tie_folder() {
    // Loser: pot 100, rake 5, banker funds 1000 + 95. Winner (×1): call back + 100.
    // Tie: call back. Fold: nothing. Banker: 1095 − 100 = 995 → net −5.
    let s = run(1000, 100, &[L, W1, T, F]);
    use EntryResult::*;
    assert_eq!(results(&s), vec![(Lose, 0, -100), (Win, 200, 100), (Tie, 100, 0), (Fold, 0, 0)]);
    assert_eq!((s.pot.0, s.rake.0, s.banker_net, s.banker_insolvent), (100, 5, -5, false));
    assert_eq!(s.banker_remaining.0, 995);
}

#[test]
fn multipliers_sam_gong_nine_other() {
    // Sam Gong 3× (net +300), nine 2× (+200), a plain win 1× (+100), one loser.
    // Banker: 1000 − 300 − 200 − 100 + 95 = 495 → net −505; rake 5.
    let s = run(1000, 100, &[W3, W2, W1, L]);
    assert_eq!(s.entries.iter().map(|e| e.net).collect::<Vec<_>>(), vec![300, 200, 100, -100]);
    assert_eq!(s.entries.iter().map(|e| e.payout.0).collect::<Vec<_>>(), vec![400, 300, 200, 0]);
    assert_eq!((s.banker_net, s.rake.0), (-505, 5));
}

#[test]
fn several_losers_rake_rounding() {
    // Three losers of 30: pot 90, rake floor(4.5) = 4. Banker +86.
    let s = run(500, 30, &[lose(30), lose(30), lose(30)]);
    assert_eq!((s.pot.0, s.rake.0, s.banker_net), (90, 4, 86));
    // Five losers of 100: pot 500, rake 25.
    let s = run(500, 100, &[L, L, L, L, L]);
    assert_eq!((s.pot.0, s.rake.0, s.banker_net), (500, 25, 475));
    // Two losers of 110: pot 220, rake floor(11.0) = 11.
    let s = run(500, 110, &[lose(110), lose(110)]);
    assert_eq!((s.pot.0, s.rake.0, s.banker_net), (220, 11, 209));
    // Pot 39: floor(1.95) = 1; pot 41: floor(2.05) = 2.
    assert_eq!(run(500, 39, &[lose(39)]).rake.0, 1);
    assert_eq!(run(500, 41, &[lose(41)]).rake.0, 2);
}

#[test]
fn minimum_one_chip_rake_and_empty_pot() {
    // floor(10 × 5%) = 0 → at least 1 once the pot is non-empty.
    let s = run(100, 10, &[lose(10)]);
    assert_eq!((s.rake.0, s.banker_net), (1, 9));
    assert_eq!(run(100, 1, &[lose(1)]).rake.0, 1);
    assert_eq!(run(100, 19, &[lose(19)]).rake.0, 1);
    assert_eq!(run(100, 20, &[lose(20)]).rake.0, 1);
    // Empty pot (all win, tie or fold): rake 0, the minimum does not apply.
    let s = run(1000, 100, &[W1, T, F]);
    assert_eq!((s.pot.0, s.rake.0), (0, 0));
    assert_eq!(rake(0, 5), 0);
    assert_eq!(rake(1, 0), 0);
}

#[test]
fn all_fold_returns_the_banker_bet() {
    let s = run(1000, 100, &[F, F, F]);
    assert!(s.all_fold);
    assert_eq!((s.pot.0, s.rake.0, s.banker_net, s.banker_remaining.0), (0, 0, 0, 1000));
    // The banker's escrowed 100 comes back.
    assert_eq!(
        s.pending(Chips(1000)),
        vec![PendingAction::Chip(ChipMove {
            op: ChipOp::Credit,
            party: ChipParty::Seat(Seat(0)),
            amount: Chips(100),
            reason: "all folded: banker bet returned".into()
        })]
    );
}

#[test]
fn ties_are_not_in_the_pot() {
    let s = run(1000, 100, &[T, T]);
    assert_eq!((s.pot.0, s.rake.0, s.banker_net), (0, 0, 0));
    assert!(s.entries.iter().all(|e| e.result == EntryResult::Tie && e.payout.0 == 100));
}

#[test]
fn insolvent_on_the_first_winner() {
    // Banker 150 (bet 100). Seat 1 nine (owed 200): call back + the 150 left;
    // the banker is at zero. Seat 2 wins later: gets nothing, loses its call
    // (insolvent winner). Seat 3 loses after the insolvency: its call is not
    // raked. Both forfeited calls go to the banker: 0 + 100 + 100 = 200.
    let s = run(150, 100, &[W2, W1, L]);
    use EntryResult::*;
    assert_eq!(results(&s), vec![(Win, 250, 150), (InsolventWin, 0, -100), (Lose, 0, -100)]);
    assert_eq!(s.entries[0].shortfall.0, 50);
    assert!(s.banker_insolvent);
    assert_eq!((s.pot.0, s.rake.0, s.forfeited.0), (0, 0, 200));
    assert_eq!((s.banker_remaining.0, s.banker_net), (200, 50));
}

#[test]
fn insolvent_after_losers_fund_the_banker() {
    // Banker 100. Seat 1 loses: pot 100, rake 5, funds 195. Seat 2 wins ×1:
    // funds 95. Seat 3 wins ×2 (owed 200): call back + 95, insolvent.
    // Seat 4 loses after: forfeited, not raked. Seat 5 wins after: nothing.
    let s = run(100, 100, &[L, W1, W2, L, W1]);
    use EntryResult::*;
    assert_eq!(
        results(&s),
        vec![(Lose, 0, -100), (Win, 200, 100), (Win, 195, 95), (Lose, 0, -100), (InsolventWin, 0, -100)]
    );
    assert_eq!(s.entries[2].shortfall.0, 105);
    assert_eq!((s.pot.0, s.rake.0, s.forfeited.0), (100, 5, 200));
    assert_eq!((s.banker_remaining.0, s.banker_net), (200, 100));
}

#[test]
fn insolvency_order_decides_the_rake_base() {
    // Same players, loser after the winner: the winner takes the banker's
    // 100, the loser's call is forfeited unraked.
    let s = run(100, 100, &[W2, L]);
    assert_eq!(s.entries.iter().map(|e| e.net).collect::<Vec<_>>(), vec![100, -100]);
    assert_eq!((s.pot.0, s.rake.0, s.banker_net), (0, 0, 0));
    // Loser first: pot 100, rake 5, banker funds 195, all of which go to the
    // ×2 winner (owed 200): call back + 195.
    let s = run(100, 100, &[L, W2]);
    assert_eq!(s.entries.iter().map(|e| e.net).collect::<Vec<_>>(), vec![-100, 195]);
    assert_eq!((s.pot.0, s.rake.0, s.banker_net, s.banker_insolvent), (100, 5, -100, true));
    // With 5 more chips the banker pays in full.
    let s = run(105, 100, &[L, W2]);
    assert_eq!(s.entries.iter().map(|e| e.net).collect::<Vec<_>>(), vec![-100, 200]);
    assert_eq!((s.pot.0, s.rake.0, s.banker_net, s.banker_insolvent), (100, 5, -105, false));
}

#[test]
fn insolvent_with_two_losers_before() {
    // Banker 100: two losers (pot 200, rake 10, funds 290), then a Sam Gong
    // owed 300: call back + 290. A loser after: forfeited.
    let s = run(100, 100, &[L, L, W3, L]);
    assert_eq!(s.entries.iter().map(|e| e.net).collect::<Vec<_>>(), vec![-100, -100, 290, -100]);
    assert_eq!((s.pot.0, s.rake.0, s.banker_remaining.0, s.banker_net), (200, 10, 100, 0));
}

#[test]
fn exact_payment_is_not_insolvency() {
    // Banker 200 pays a nine (200) exactly, then a tie is returned.
    let s = run(200, 100, &[W2, T]);
    assert!(!s.banker_insolvent);
    assert_eq!((s.banker_remaining.0, s.banker_net), (0, -200));
    // After the bet (100 escrowed) the banker owes 100 more: debited first.
    let p = s.pending(Chips(200));
    assert_eq!(
        p[0],
        PendingAction::Chip(ChipMove {
            op: ChipOp::Debit,
            party: ChipParty::Seat(Seat(0)),
            amount: Chips(100),
            reason: "banker pays winners".into()
        })
    );
    assert_eq!(p.len(), 3);
}

#[test]
fn banker_at_zero_then_refunded_by_a_loser() {
    // Banker 200: ×2 winner paid exactly (funds 0); a loser refills 95; the
    // next winner (owed 100) gets call back + 95 and the banker is insolvent.
    let s = run(200, 100, &[W2, L, W1]);
    assert_eq!(s.entries.iter().map(|e| e.net).collect::<Vec<_>>(), vec![200, -100, 95]);
    assert!(s.banker_insolvent);
    assert_eq!((s.rake.0, s.banker_net), (5, -200));
}

#[test]
fn banker_at_zero_then_a_winner() {
    // Banker 200: ×2 winner paid exactly; the next winner finds the banker
    // empty: its call back and nothing more; the one after gets nothing.
    let s = run(200, 100, &[W2, W1, W1, T]);
    use EntryResult::*;
    assert_eq!(results(&s), vec![(Win, 300, 200), (Win, 100, 0), (InsolventWin, 0, -100), (Tie, 100, 0)]);
    assert_eq!(s.entries[1].shortfall.0, 100);
    assert_eq!(s.banker_net, -100);
}

#[test]
fn pending_actions_match_the_nets() {
    for (start, seats) in [
        (1000u64, vec![L, W1, T, F]),
        (150, vec![W2, W1, L]),
        (100, vec![L, W1, W2, L, W1]),
        (200, vec![W2, T]),
        (1000, vec![F, F]),
        (100, vec![L, L]),
    ] {
        let s = run(start, 100, &seats);
        // Escrow debits (banker bet and calls) plus the settlement actions.
        let mut moved = vec![0i64; seats.len() + 1];
        moved[0] -= 100;
        for (i, d) in seats.iter().enumerate() {
            if let Decision::Called { bet, .. } = d {
                moved[i + 1] -= bet.0 as i64;
            }
        }
        let (mut debits, mut credits) =
            (100u64 + seats.iter().filter(|d| **d != F).count() as u64 * 100, 0u64);
        for p in s.pending(Chips(start)) {
            match p {
                PendingAction::Chip(ChipMove {
                    op: ChipOp::Debit,
                    party: ChipParty::Seat(x),
                    amount,
                    ..
                }) => {
                    moved[x.index()] -= amount.0 as i64;
                    debits += amount.0;
                }
                PendingAction::Chip(ChipMove {
                    op: ChipOp::Credit,
                    party: ChipParty::Seat(x),
                    amount,
                    ..
                }) => {
                    moved[x.index()] += amount.0 as i64;
                    credits += amount.0;
                }
                other => panic!("unexpected {other:?}"),
            }
        }
        assert_eq!(moved, s.nets(seats.len() + 1));
        assert_eq!(debits, credits + s.rake.0);
    }
}

#[test]
fn banker_bet_above_balance_is_refused() {
    for rule in [SettlementRule::OnePass, SettlementRule::BankerPays] {
        assert!(settle(rule, Seat(0), Chips(50), Chips(100), 5, &[]).is_err());
    }
}
