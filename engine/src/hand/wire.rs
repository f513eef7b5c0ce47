//! Turning the runner's hand events into signed-event bodies: deals (face-up
//! openings, sealed boxes), chip movements, reveals and card transfers, in
//! the game's order.

use claw_games::{DealTarget, Face, GameResult, HandEvent, Party};
use claw_protocol::messages::{
    CardFace, CardTransfer, ChipMove, ChipOp, ChipParty, ChipsMoved, DealEvent, DealTo, DealtCardMsg,
    EventBody, HandResult, Reveal,
};
use claw_protocol::{CardOpening, Chips, HandId};
use rand_core::CryptoRngCore;

use super::{EngineError, HandSeat, Running};

/// One chip movement a step needs from the chip provider.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Move {
    /// A seat of the hand or the house.
    pub party: Party,
    /// Debit or credit.
    pub kind: ChipOp,
    /// How many chips.
    pub amount: Chips,
    /// The game's reason (`small-blind`, `call`, `pot`).
    pub reason: String,
}

/// The chip moves among `events`, in order.
pub(super) fn moves(events: &[HandEvent]) -> Vec<Move> {
    events
        .iter()
        .filter_map(|e| match e {
            HandEvent::Debit { party, amount, reason } => {
                Some(Move { party: *party, kind: ChipOp::Debit, amount: *amount, reason: reason.clone() })
            }
            HandEvent::Credit { party, amount, reason } => {
                Some(Move { party: *party, kind: ChipOp::Credit, amount: *amount, reason: reason.clone() })
            }
            _ => None,
        })
        .collect()
}

fn party(p: Party) -> ChipParty {
    match p {
        Party::Seat(s) => ChipParty::Seat(s),
        Party::House => ChipParty::House,
    }
}

fn target(t: DealTarget) -> DealTo {
    match t {
        DealTarget::Player(s) => DealTo::Player(s),
        DealTarget::Community => DealTo::Community,
        DealTarget::Burn => DealTo::Burn,
        DealTarget::House => DealTo::House,
    }
}

/// The result as `game-end` carries it.
pub(super) fn hand_result(r: &GameResult) -> HandResult {
    HandResult {
        winners: r.winners.clone(),
        net: r.net.clone(),
        house_net: r.house_net,
        rake: r.rake,
        summary: r.summary.clone(),
    }
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
        let mv = match e {
            HandEvent::Debit { party: p, amount, reason } => Some(ChipMove {
                op: ChipOp::Debit,
                party: party(*p),
                amount: *amount,
                reason: reason.clone(),
            }),
            HandEvent::Credit { party: p, amount, reason } => Some(ChipMove {
                op: ChipOp::Credit,
                party: party(*p),
                amount: *amount,
                reason: reason.clone(),
            }),
            _ => None,
        };
        if let Some(m) = mv {
            chips.push(m);
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
                    let salt = *run
                        .salts
                        .get(p)
                        .ok_or_else(|| EngineError::Deck(format!("deal of position {p} beyond the deck")))?;
                    let opening = CardOpening { position: c.position, card: c.card, salt };
                    let (face, opening, sealed) = match (c.face, c.target) {
                        (Face::Up, _) => {
                            run.opened[p] = true;
                            (CardFace::Up, Some(opening), None)
                        }
                        (Face::Down, DealTarget::Player(s)) => {
                            let seat = seats
                                .get(s.index())
                                .ok_or_else(|| EngineError::Deck(format!("deal to missing {s}")))?;
                            (CardFace::Down, None, Some(seat.key.seal(rng, hand_id, &opening)))
                        }
                        (Face::Down, _) => (CardFace::Down, None, None),
                    };
                    msgs.push(DealtCardMsg {
                        position: c.position,
                        target: target(c.target),
                        face,
                        opening,
                        sealed,
                    });
                }
                let one_player = match cards.first().map(|c| c.target) {
                    Some(t @ DealTarget::Player(_)) => cards.iter().all(|c| c.target == t),
                    _ => false,
                };
                let deal = DealEvent { phase: phase.clone(), cards: msgs };
                out.push(if one_player { EventBody::NewCard(deal) } else { EventBody::PhaseDeal(deal) });
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
                let (face, opening, sealed) = match face {
                    Face::Up => {
                        run.opened[p] = true;
                        (CardFace::Up, Some(opening), None)
                    }
                    Face::Down => {
                        let seat = seats
                            .get(to.index())
                            .ok_or_else(|| EngineError::Deck(format!("transfer to missing {to}")))?;
                        (CardFace::Down, None, Some(seat.key.seal(rng, hand_id, &opening)))
                    }
                };
                out.push(EventBody::CardTransfer(CardTransfer {
                    position: *position,
                    from: *from,
                    to: *to,
                    face,
                    opening,
                    sealed,
                }));
            }
            HandEvent::Debit { .. } | HandEvent::Credit { .. } => {}
        }
    }
    if !chips.is_empty() {
        out.push(EventBody::Chips(ChipsMoved { moves: chips }));
    }
    Ok(())
}
