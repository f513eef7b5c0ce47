//! The room announces what it took before each hand: every `game-start`
//! player carries the room's commission, and each hand starts a player
//! where its previous hand left it, less that commission (SPEC.md §9.5,
//! §11.4), as the auditor checks.

use std::time::Duration;

use claw_protocol::audit::{audit, check_balances, AuditCheck, AuditOptions};
use claw_protocol::messages::EventBody;
use claw_protocol::transcript::Transcript;
use claw_protocol::Chips;

use super::{play_hand, Harness};

fn game_start_players(t: &Transcript) -> Vec<claw_protocol::messages::HandPlayer> {
    t.events
        .iter()
        .find_map(|e| match e.decode_body() {
            Ok(EventBody::GameStart(g)) => Some(g.players),
            _ => None,
        })
        .expect("a game-start")
}

#[test]
fn game_start_carries_the_commission_and_balances_chain_from_hand_to_hand() {
    let mut h = Harness::new(3, |c| c.commission = Chips(3));
    h.seat_everyone();
    play_hand(&mut h);
    h.settle_chips();
    h.advance(Duration::from_secs(2));
    h.settle_chips();
    h.tick();
    h.settle_chips();
    play_hand(&mut h);
    h.settle_chips();
    let mut hands: Vec<Transcript> = h.files.values().cloned().collect();
    assert_eq!(hands.len(), 2, "two hands archived");
    let opts =
        AuditOptions { dealer: Some(h.dealer.id()), commission: Some(Chips(3)), ..AuditOptions::default() };
    let mut reports: Vec<_> = hands.iter().map(|t| audit(t, &opts).unwrap()).collect();
    reports.sort_by_key(|r| r.hand.hand_number);
    hands.sort_by_key(|t| reports.iter().position(|r| r.hand.hand_id == t.hand_id));
    for (t, r) in hands.iter().zip(&reports) {
        assert!(r.passed.contains(&AuditCheck::Commission));
        assert!(game_start_players(t).iter().all(|p| p.commission == Chips(3)));
    }
    // The first hand starts from the provider's 1000 less the commission.
    assert!(reports[0].hand.players.iter().all(|p| p.balance == Chips(997)));
    check_balances(&reports[0].hand, &reports[1].hand).unwrap();
    // Told another commission, the auditor refuses the room's hands.
    let other = AuditOptions { commission: Some(Chips(2)), ..opts };
    assert_eq!(audit(&hands[0], &other).unwrap_err().check, AuditCheck::Commission);
}
