//! Turning the runner's hand events into signed-event bodies: deals (face-up
//! openings, sealed boxes), chip movements, reveals and card transfers, in
//! the game's order. The vocabulary is the protocol's; what is done here is
//! opening and sealing the cards.

use claw_protocol::hand::{CardFace, ChipMove, DealTo, HandEvent};
use claw_protocol::messages::{
    BlindReveal, CardTransfer, ChipsMoved, DealEvent, DealtCardMsg, EventBody, Reveal,
};
use claw_protocol::{CardOpening, HandId};
use rand_core::CryptoRngCore;

use super::{EngineError, HandSeat, Running};

/// The chip moves among `events`, in order.
pub(super) fn moves(events: &[HandEvent]) -> Vec<ChipMove> {
    events
        .iter()
        .filter_map(|e| match e {
            HandEvent::Chip(m) => Some(m.clone()),
            _ => None,
        })
        .collect()
}

/// Appends the bodies for `events` to `out`: one `phase-deal`/`new-card`
/// per deal, one `chips` per run of consecutive chip movements, one
/// `reveal` per reveal, one `card-transfer` per transfer. Marks the
/// positions it opens.
pub(super) fn event_bodies<R: CryptoRngCore + ?Sized>(
    hand_id: &HandId,
    seats: &[HandSeat],
    run: &mut Running,
    events: &[HandEvent],
    rng: &mut R,
    out: &mut Vec<EventBody>,
) -> Result<(), EngineError> {
    let mut chips: Vec<ChipMove> = Vec::new();
    for e in events {
        if let HandEvent::Chip(m) = e {
            chips.push(m.clone());
            continue;
        }
        if !chips.is_empty() {
            out.push(EventBody::Chips(ChipsMoved { moves: std::mem::take(&mut chips) }));
        }
        match e {
            HandEvent::Dealt { phase, cards } => {
                let mut msgs = Vec::with_capacity(cards.len());
                for c in cards {
                    let p = usize::from(c.position);
                    if run.blind {
                        // Blind: the dealer has no card to open or seal
                        // (SPEC.md §9.7); the shares open it.
                        if c.face == CardFace::Up {
                            run.opened[p] = true;
                        }
                        let msg = DealtCardMsg {
                            position: c.position,
                            target: c.target,
                            face: c.face,
                            opening: None,
                            sealed: None,
                        };
                        msgs.push(msg);
                        continue;
                    }
                    let salt = *run
                        .salts
                        .get(p)
                        .ok_or_else(|| EngineError::Deck(format!("deal of position {p} beyond the deck")))?;
                    let opening = CardOpening { position: c.position, card: c.card, salt };
                    let (opening, sealed) = match (c.face, c.target) {
                        (CardFace::Up, _) => {
                            run.opened[p] = true;
                            (Some(opening), None)
                        }
                        (CardFace::Down, DealTo::Player(s)) => {
                            let seat = seats
                                .get(s.index())
                                .ok_or_else(|| EngineError::Deck(format!("deal to missing {s}")))?;
                            (None, Some(seat.key.seal(rng, hand_id, &opening)))
                        }
                        (CardFace::Down, _) => (None, None),
                    };
                    msgs.push(DealtCardMsg {
                        position: c.position,
                        target: c.target,
                        face: c.face,
                        opening,
                        sealed,
                    });
                }
                let one_player = match cards.first().map(|c| c.target) {
                    Some(t @ DealTo::Player(_)) => cards.iter().all(|c| c.target == t),
                    _ => false,
                };
                let deal = DealEvent { phase: phase.clone(), cards: msgs };
                out.push(if one_player { EventBody::NewCard(deal) } else { EventBody::PhaseDeal(deal) });
            }
            HandEvent::Reveal { positions } if run.blind => {
                out.push(EventBody::BlindReveal(BlindReveal { positions: positions.clone() }));
            }
            HandEvent::Transfer { .. } if run.blind => {
                return Err(EngineError::Deck("a blind table cannot transfer a card (SPEC.md §9.7)".into()));
            }
            HandEvent::Reveal { positions } => {
                let mut openings = Vec::with_capacity(positions.len());
                for pos in positions {
                    let p = usize::from(*pos);
                    match (run.order.get(p), run.salts.get(p)) {
                        (Some(card), Some(salt)) => {
                            run.opened[p] = true;
                            openings.push(CardOpening { position: *pos, card: *card, salt: *salt });
                        }
                        _ => {
                            return Err(EngineError::Deck(format!("reveal of position {p} beyond the deck")))
                        }
                    }
                }
                out.push(EventBody::Reveal(Reveal { openings }));
            }
            HandEvent::Transfer { position, from, to, face } => {
                let p = usize::from(*position);
                let (Some(card), Some(salt)) = (run.order.get(p), run.salts.get(p)) else {
                    return Err(EngineError::Deck(format!("transfer of position {p} beyond the deck")));
                };
                let opening = CardOpening { position: *position, card: *card, salt: *salt };
                let (opening, sealed) = match face {
                    CardFace::Up => {
                        run.opened[p] = true;
                        (Some(opening), None)
                    }
                    CardFace::Down => {
                        let seat = seats
                            .get(to.index())
                            .ok_or_else(|| EngineError::Deck(format!("transfer to missing {to}")))?;
                        (None, Some(seat.key.seal(rng, hand_id, &opening)))
                    }
                };
                out.push(EventBody::CardTransfer(CardTransfer {
                    position: *position,
                    from: *from,
                    to: *to,
                    face: *face,
                    opening,
                    sealed,
                }));
            }
            HandEvent::Chip(_) => {}
        }
    }
    if !chips.is_empty() {
        out.push(EventBody::Chips(ChipsMoved { moves: chips }));
    }
    Ok(())
}
