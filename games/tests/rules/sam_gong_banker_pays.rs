//! Sam Gong settlement vectors for the default `banker-pays` reading (the
//! source rules: winners are paid by the banker "不經底池", insolvency is
//! judged on the banker's own funds after its bet (step 2), losers' calls reach
//! the banker after the rake; once the banker is at 0 "後續贏家進入
//! insolvent_winners（net_chips = -bet）"). Bet 100, rake 5 % throughout;
//! each vector is worked out in its comment.

use claw_games::sam_gong::settle::{settle, Decision, EntryResult, Settlement, SettlementRule};
use claw_games::sam_gong::Outcome;
use claw_games::{ChipMove, ChipOp, ChipParty, PendingAction};
use claw_protocol::{Chips, Seat};

const W1: Decision = Decision::Called { bet: Chips(100), outcome: Outcome::Win, multiplier: 1 };
const W2: Decision = Decision::Called { bet: Chips(100), outcome: Outcome::Win, multiplier: 2 };
const W3: Decision = Decision::Called { bet: Chips(100), outcome: Outcome::Win, multiplier: 3 };
const L: Decision = Decision::Called { bet: Chips(100), outcome: Outcome::Lose, multiplier: 1 };
const T: Decision = Decision::Called { bet: Chips(100), outcome: Outcome::Tie, multiplier: 1 };
const F: Decision = Decision::Folded;

fn run_rule(rule: SettlementRule, banker_start: u64, seats: &[Decision]) -> Settlement {
    let seats: Vec<(Seat, Decision)> =
        seats.iter().enumerate().map(|(i, d)| (Seat(i as u8 + 1), *d)).collect();
    let s = settle(rule, Seat(0), Chips(banker_start), Chips(100), 5, &seats).unwrap();
    let nets = s.nets(seats.len() + 1);
    assert_eq!(nets.iter().sum::<i64>() + s.rake.0 as i64, 0, "{s:?}");
    assert_eq!(banker_start as i64 + s.banker_net, s.banker_remaining.0 as i64);
    s
}

fn run(banker_start: u64, seats: &[Decision]) -> Settlement {
    run_rule(SettlementRule::BankerPays, banker_start, seats)
}

fn nets(s: &Settlement) -> Vec<i64> {
    s.entries.iter().map(|e| e.net).collect()
}

#[test]
fn banker_pays_is_the_default() {
    assert_eq!(SettlementRule::default(), SettlementRule::BankerPays);
}

#[test]
fn a_solvent_banker_settles_as_before() {
    // Loser: pot 100, rake 5, 95 to the banker after the pass. Winner ×1: the
    // banker's 1000 pays 100. Banker 1000 − 100 + 95 = 995 (net −5).
    let s = run(1000, &[L, W1, T, F]);
    assert_eq!(nets(&s), vec![-100, 100, 0, 0]);
    assert_eq!((s.pot.0, s.losers_total.0, s.rake.0, s.banker_net), (100, 100, 5, -5));
    // Sam Gong, nine, ×1 and a loser: 1000 − 600 + 95 = 495.
    let s = run(1000, &[W3, W2, W1, L]);
    assert_eq!(nets(&s), vec![300, 200, 100, -100]);
    assert_eq!(s.entries.iter().map(|e| e.multiplier).collect::<Vec<_>>(), vec![3, 2, 1, 1]);
    assert_eq!((s.banker_net, s.rake.0, s.banker_insolvent), (-505, 5, false));
}

#[test]
fn losers_seated_before_a_winner_do_not_fund_it() {
    // Banker 100. The loser's 100 (95 after the rake) reaches the banker only
    // after the pass, so the nine (owed 200) finds 100: call back + 100,
    // short 100. Banker ends with the loser's 95: net −5.
    let s = run(100, &[L, W2]);
    assert_eq!(nets(&s), vec![-100, 100]);
    assert_eq!(s.entries[1].shortfall.0, 100);
    assert_eq!((s.pot.0, s.rake.0, s.banker_remaining.0, s.banker_net), (100, 5, 95, -5));
    assert!(s.banker_insolvent);
    // The one-pass reading lets the loser fund the nine: +195, banker −100.
    let o = run_rule(SettlementRule::OnePass, 100, &[L, W2]);
    assert_eq!((nets(&o), o.banker_net), (vec![-100, 195], -100));
}

#[test]
fn a_banker_paid_down_to_zero_pays_no_later_winner() {
    // Banker 200: the nine takes all 200 (paid in full) and the banker is at
    // 0; the two later winners find it short, get nothing and lose their calls
    // (the source rules' insolvent_winners, net −bet); the tie is returned.
    // Banker: 0 + 200 forfeited = 200, net 0.
    let s = run(200, &[W2, W1, W1, T]);
    use EntryResult::*;
    let got: Vec<_> = s.entries.iter().map(|e| (e.result, e.payout.0, e.net)).collect();
    assert_eq!(got, vec![(Win, 300, 200), (InsolventWin, 0, -100), (InsolventWin, 0, -100), (Tie, 100, 0)]);
    assert!(s.banker_insolvent);
    assert_eq!((s.forfeited.0, s.banker_remaining.0, s.banker_net), (200, 200, 0));
    // One-pass: the first later winner still gets its call back (net 0).
    let o = run_rule(SettlementRule::OnePass, 200, &[W2, W1, W1, T]);
    assert_eq!(nets(&o), vec![200, 0, -100, 0]);
}

#[test]
fn exactly_enough_is_not_insolvent() {
    // D13 is a shortfall ("chip_balance + escrow < 本次應付額"). Banker 200:
    // the nine takes all 200 in full; no later winner, so no insolvency.
    use EntryResult::*;
    let s = run(200, &[W2, T, F]);
    let got: Vec<_> = s.entries.iter().map(|e| (e.result, e.payout.0, e.net)).collect();
    assert_eq!(got, vec![(Win, 300, 200), (Tie, 100, 0), (Fold, 0, 0)]);
    assert!(!s.banker_insolvent);
    assert_eq!((s.banker_remaining.0, s.banker_net, s.forfeited.0), (0, -200, 0));
    // A loser after it: the banker is not insolvent, so the call is raked
    // (pot 100, rake 5) and its 95 reach the banker after the pass.
    let s = run(200, &[W2, L]);
    assert!(!s.banker_insolvent);
    assert_eq!(nets(&s), vec![200, -100]);
    assert_eq!((s.pot.0, s.rake.0, s.forfeited.0, s.banker_remaining.0, s.banker_net), (100, 5, 0, 95, -105));
    // A winner after the loser finds the banker at 0: that is the shortfall.
    // It gets nothing; the loser before it was settled first and stays raked.
    let s = run(200, &[W2, L, W1]);
    assert!(s.banker_insolvent);
    let got: Vec<_> = s.entries.iter().map(|e| (e.result, e.payout.0, e.net)).collect();
    assert_eq!(got, vec![(Win, 300, 200), (Lose, 0, -100), (InsolventWin, 0, -100)]);
    assert_eq!(
        (s.pot.0, s.rake.0, s.forfeited.0, s.banker_remaining.0, s.banker_net),
        (100, 5, 100, 195, -5)
    );
}

#[test]
fn one_chip_short_is_insolvent() {
    // Banker 199, the nine is owed 200: call back + 199, short 1.
    let s = run(199, &[W2, T]);
    assert!(s.banker_insolvent);
    assert_eq!((s.entries[0].payout.0, s.entries[0].net, s.entries[0].shortfall.0), (299, 199, 1));
    assert_eq!((s.banker_remaining.0, s.banker_net), (0, -199));
    // A later winner gets nothing; a later loser is not raked.
    let s = run(199, &[W2, W1, L]);
    assert!(s.banker_insolvent);
    assert_eq!(nets(&s), vec![199, -100, -100]);
    assert_eq!(s.entries[1].result, EntryResult::InsolventWin);
    assert_eq!((s.pot.0, s.rake.0, s.forfeited.0, s.banker_net), (0, 0, 200, 1));
    // One chip more and the banker pays in full: not insolvent.
    let s = run(200, &[W2, T]);
    assert!(!s.banker_insolvent);
    assert_eq!(s.entries[0].shortfall.0, 0);
    // The same under `one-pass`.
    let o = run_rule(SettlementRule::OnePass, 199, &[W2, T]);
    assert!(o.banker_insolvent && o.entries[0].shortfall.0 == 1);
    assert!(!run_rule(SettlementRule::OnePass, 200, &[W2, T]).banker_insolvent);
}

#[test]
fn losers_after_the_banker_reaches_zero_are_not_raked() {
    // Banker 100. Loser (raked: 95 waits). ×1 winner takes the banker's 100:
    // banker at 0. Then the nine finds it at 0 (insolvent: a shortfall), and
    // the loser and ×1 after it: the winners get nothing, the loser's call is
    // not raked; all three calls (300) go to the banker with the 95.
    let s = run(100, &[L, W1, W2, L, W1]);
    assert_eq!(nets(&s), vec![-100, 100, -100, -100, -100]);
    assert_eq!((s.pot.0, s.losers_total.0, s.rake.0, s.forfeited.0), (100, 200, 5, 300));
    assert_eq!((s.banker_remaining.0, s.banker_net), (395, 295));
    // One-pass reads the same seats differently (the first loser funds the nine).
    let o = run_rule(SettlementRule::OnePass, 100, &[L, W1, W2, L, W1]);
    assert_eq!(nets(&o), vec![-100, 100, 95, -100, -100]);
}

#[test]
fn a_short_winner_first_then_losers() {
    // Banker 150: nine owed 200 gets call back + 150 (short 50); a later ×1
    // winner gets nothing; the loser is not raked. Banker 0 + 200 = 200.
    let s = run(150, &[W2, W1, L]);
    assert_eq!(nets(&s), vec![150, -100, -100]);
    assert_eq!(s.entries[0].shortfall.0, 50);
    assert_eq!((s.pot.0, s.rake.0, s.banker_net), (0, 0, 50));
}

#[test]
fn two_losers_then_sam_gong() {
    // Banker 300: two losers (pot 200, rake 10, 190 wait); the Sam Gong owed
    // 300 takes the banker's 300 exactly; banker ends with 190 (net −110).
    let s = run(300, &[L, L, W3]);
    assert_eq!(nets(&s), vec![-100, -100, 300]);
    assert_eq!((s.rake.0, s.banker_remaining.0, s.banker_net), (10, 190, -110));
    // Banker 100: the Sam Gong gets call back + 100; the loser after is unraked.
    let s = run(100, &[L, L, W3, L]);
    assert_eq!(nets(&s), vec![-100, -100, 100, -100]);
    assert_eq!((s.pot.0, s.rake.0, s.banker_remaining.0, s.banker_net), (200, 10, 290, 190));
}

#[test]
fn chip_movements_match_the_nets() {
    for (start, seats) in [
        (1000u64, vec![L, W1, T, F]),
        (100, vec![L, W2]),
        (200, vec![W2, W1, W1, T]),
        (100, vec![L, W1, W2, L, W1]),
        (200, vec![W2, L, W1]),
        (199, vec![W2, W1, L]),
        (1000, vec![F, F]),
    ] {
        let s = run(start, &seats);
        let mut moved = vec![0i64; seats.len() + 1];
        moved[0] -= 100;
        for (i, d) in seats.iter().enumerate() {
            if *d != F {
                moved[i + 1] -= 100;
            }
        }
        for p in s.pending(Chips(start)) {
            match p {
                PendingAction::Chip(ChipMove {
                    op: ChipOp::Debit,
                    party: ChipParty::Seat(x),
                    amount,
                    ..
                }) => moved[x.index()] -= amount.0 as i64,
                PendingAction::Chip(ChipMove {
                    op: ChipOp::Credit,
                    party: ChipParty::Seat(x),
                    amount,
                    ..
                }) => moved[x.index()] += amount.0 as i64,
                other => panic!("unexpected {other:?}"),
            }
        }
        assert_eq!(moved, s.nets(seats.len() + 1), "{start} {seats:?}");
    }
}
