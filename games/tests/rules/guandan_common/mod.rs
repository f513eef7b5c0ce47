//! Shared helpers of the Guandan tests: cards from text, scripted deals,
//! a deal driven through the typed plugin.

use claw_games::guandan::{GdAction, GdMemory, GdSettings, GdState, Guandan};
use claw_games::{CardFace, DealTo, DealtCard, GamePlugin, PendingAction, PlayerInfo};
use claw_protocol::{CardId, Chips, PlayerId, Seat};

/// Cards from text: `"3c 3d 5h#1 RJ"`.
pub fn cards(s: &str) -> Vec<CardId> {
    s.split_whitespace().map(|c| c.parse().unwrap_or_else(|e| panic!("{c}: {e}"))).collect()
}

pub fn players(balance: u64) -> Vec<PlayerInfo> {
    (0..4u8)
        .map(|i| {
            let mut b = [0u8; 32];
            b[0] = i + 1;
            PlayerInfo { id: PlayerId::from_bytes(b), balance: Chips(balance) }
        })
        .collect()
}

/// A deck order that deals `fixed[s]` to seat `s` (then the rest of the
/// deck in canonical order to fill 27 each).
pub fn deck_for(fixed: [&str; 4]) -> Vec<CardId> {
    let mut rest = CardId::deck(2, true);
    let mut hands: Vec<Vec<CardId>> = fixed.iter().map(|f| cards(f)).collect();
    for h in &hands {
        for c in h {
            let i = rest.iter().position(|x| x == c).unwrap_or_else(|| panic!("{c} used twice"));
            rest.remove(i);
        }
    }
    for h in &mut hands {
        assert!(h.len() <= 27);
        while h.len() < 27 {
            h.push(rest.remove(0));
        }
    }
    (0..108).map(|i| hands[i % 4][i / 4]).collect()
}

/// A deal started with this deck; the pending actions of the start and deal.
pub fn start(settings: &GdSettings, memory: &GdMemory, deck: &[CardId]) -> GdState {
    start_with(settings, memory, deck, &players(1_000))
}

/// [`start`] with these players.
pub fn start_with(
    settings: &GdSettings,
    memory: &GdMemory,
    deck: &[CardId],
    players: &[PlayerInfo],
) -> GdState {
    let g = Guandan;
    let mut st = g.create_game(settings, players, memory).expect("create");
    let pending = g.start(&mut st).expect("start");
    for p in pending {
        if let PendingAction::Deal { cards, .. } = p {
            let dealt: Vec<DealtCard> = cards
                .iter()
                .enumerate()
                .map(|(i, spec)| DealtCard {
                    position: i as u16,
                    target: spec.target,
                    face: spec.face,
                    card: deck[i],
                })
                .collect();
            assert!(dealt.iter().all(|d| matches!(d.target, DealTo::Player(_)) && d.face == CardFace::Down));
            let more = g.receive_cards(&mut st, &dealt).expect("deal");
            assert!(more.is_empty());
        }
    }
    st
}

pub fn act(st: &mut GdState, seat: u8, a: GdAction) -> Vec<PendingAction> {
    Guandan.apply(st, Seat(seat), &a).unwrap_or_else(|e| panic!("seat {seat} {a:?}: {e}"))
}

pub fn play(st: &mut GdState, seat: u8, c: &str) -> Vec<PendingAction> {
    act(st, seat, GdAction::Play { cards: cards(c), reading: None })
}

pub fn pass(st: &mut GdState, seat: u8) {
    act(st, seat, GdAction::Pass {});
}

pub fn to_act(st: &GdState) -> Option<u8> {
    Guandan.to_act(st).map(|s| s.0)
}

/// Replaces the hands (white-box, for play-phase scenarios).
pub fn set_hands(st: &mut GdState, hands: [&str; 4]) {
    for (h, c) in st.hands.iter_mut().zip(hands) {
        *h = cards(c);
    }
}

/// Memory after a deal with this finishing order at these levels.
pub fn after(order: [u8; 4], levels: [u8; 2], level_team: u8) -> GdMemory {
    GdMemory {
        deal: 1,
        levels: [
            claw_games::guandan::cards::Level::new(levels[0]).unwrap(),
            claw_games::guandan::cards::Level::new(levels[1]).unwrap(),
        ],
        level_team,
        last_order: order.to_vec(),
        ..GdMemory::default()
    }
}
