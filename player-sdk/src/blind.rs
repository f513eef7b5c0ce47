//! The player's side of a blind table (SPEC.md §9.7, docs/blind-deal.md
//! Part II): a per-hand key share, the pieces of its secret (and a
//! complaint against a bad piece it holds), its shuffle when its turn
//! comes, the decryption shares each `blind-request` asks of it and the
//! recovery shares each `blind-recover` asks of it. The transcript's
//! checks (every key, shuffle and share) are the audit's
//! (`claw_protocol::audit`); this only answers, and never helps open a
//! folded seat's face-down card for everyone: no game shows one, so such a
//! request is a dealer fishing for a hidden card (docs/blind-deal.md §II.6).

use std::collections::{HashMap, HashSet};

use claw_protocol::mental::{
    shuffle, CardTable, Deck, DecryptionShare, Holder, JointKey, KeyShare, Piece, PieceCommitments,
    RecoveredShare, RecoveryShare, SecretShare,
};
use claw_protocol::messages::{
    BlindKeyMsg, BlindPiecesMsg, BlindRecoveryMsg, BlindSharesMsg, BlindShuffleMsg, CardFace, ClientMessage,
    DealTo, EventBody, PositionShare, RoomConfig,
};
use claw_protocol::transcript::EventEnvelope;
use claw_protocol::{CardId, HandId, Identity, Seat};
use rand_core::CryptoRngCore;

/// One hand's secrets and public state, as this player knows them.
#[derive(Default)]
struct HandKeys {
    hand: Option<HandId>,
    secret: Option<SecretShare>,
    seat: Option<Seat>,
    key: Option<JointKey>,
    deck: Option<Deck>,
    given: HashSet<u16>,
    players: usize,
    /// This player's private positions not opened yet.
    mine: Vec<u16>,
    /// Published shares of those positions.
    shares: Vec<(u16, Seat, DecryptionShare)>,
    /// Seat → the commitments of its pieces.
    commitments: HashMap<Seat, PieceCommitments>,
    /// Seat → the piece of its secret this player holds.
    pieces: HashMap<Seat, Piece>,
    /// Seats whose `blind-pieces` came.
    pieces_seen: usize,
    /// Position → (withholder, recovery shares by holder) of the positions
    /// of this player's own cards being recovered.
    recovery: HashMap<u16, (Seat, Vec<(Holder, RecoveryShare)>)>,
    /// Position → the seat it was dealt face down to.
    owners: HashMap<u16, Seat>,
    /// Seats that folded (their face-down cards are never shown).
    folded: HashSet<Seat>,
}

impl HandKeys {
    /// Whether opening `position` for everyone would show a folded seat's
    /// face-down card.
    fn folded_card(&self, position: u16) -> bool {
        self.owners.get(&position).is_some_and(|s| self.folded.contains(s))
    }
}

/// Whether an action is a fold (`{"type": "fold", …}`).
fn is_fold(action: &serde_json::Value) -> bool {
    action.get("type").and_then(serde_json::Value::as_str) == Some("fold")
}

/// A seat at a blind table.
pub(crate) struct BlindSeat {
    declared: Vec<CardId>,
    table: CardTable,
    hand: HandKeys,
}

impl BlindSeat {
    /// The seat of a room whose configuration (as the handshake signed it)
    /// deals blind; `None` for any other room.
    pub fn for_room(room_config: &str) -> Option<BlindSeat> {
        let room: RoomConfig = serde_json::from_str(room_config).ok()?;
        if room.deal.is_dealer() {
            return None;
        }
        let declared = claw_games::registry::get(&room.game).ok()?.create_deck(&room.settings).ok()?;
        Some(BlindSeat { table: CardTable::new(&declared), declared, hand: HandKeys::default() })
    }

    /// This player's hole cards the event completes: each opened with the
    /// others' published shares (a withholder's rebuilt from its holders'
    /// recovery shares) and its own.
    pub fn opened(&mut self, env: &EventEnvelope) -> Vec<(u16, CardId)> {
        let h = &mut self.hand;
        if h.hand != Some(env.hand_id) {
            return Vec::new();
        }
        let mut recovery = |p: u16, withholder: Seat, holder: Holder, share: &[u8]| {
            if let (true, Ok(r)) = (h.mine.contains(&p), RecoveryShare::from_bytes(share)) {
                let e = h.recovery.entry(p).or_insert((withholder, Vec::new()));
                if e.0 == withholder {
                    e.1.push((holder, r));
                }
            }
        };
        match env.decode_body() {
            Ok(EventBody::BlindShares(s)) => {
                for x in &s.shares {
                    if let (true, Ok(d)) =
                        (h.mine.contains(&x.position), DecryptionShare::from_bytes(&x.share))
                    {
                        h.shares.push((x.position, s.seat, d));
                    }
                }
            }
            Ok(EventBody::BlindRecover(r)) => {
                for x in &r.dealer_shares {
                    recovery(x.position, r.seat, Holder::Dealer, &x.share);
                }
            }
            Ok(EventBody::BlindRecovery(r)) => {
                for x in &r.shares {
                    recovery(x.position, r.withholder, Holder::Seat(r.seat), &x.share);
                }
            }
            _ => return Vec::new(),
        }
        let (Some(secret), Some(seat), Some(key), Some(deck)) = (&h.secret, h.seat, &h.key, &h.deck) else {
            return Vec::new();
        };
        let mut out = Vec::new();
        for p in h.mine.clone() {
            let mut list: Vec<(Seat, DecryptionShare)> =
                h.shares.iter().filter(|(q, _, _)| *q == p).map(|(_, s, d)| (*s, *d)).collect();
            let Some(ct) = deck.get(p) else { continue };
            let rebuilt: Vec<RecoveredShare> = h
                .recovery
                .get(&p)
                .and_then(|(w, list)| {
                    let c = h.commitments.get(w)?;
                    RecoveredShare::combine(&env.hand_id, *w, h.players, c, p, ct, list).ok()
                })
                .into_iter()
                .collect();
            if list.len() + rebuilt.len() + 1 < h.players {
                continue;
            }
            // Its own share never leaves this player (its proof is for itself).
            list.push((seat, secret.decryption_share(&env.hand_id, seat, p, ct, &mut rand::rngs::OsRng)));
            if let Ok(card) = key.open_recovered(&env.hand_id, p, ct, &list, &rebuilt, &self.table) {
                out.push((p, card));
                h.mine.retain(|q| *q != p);
            }
        }
        out
    }

    /// The messages this event asks of the player (none for most).
    pub fn on_event<R: CryptoRngCore>(
        &mut self,
        me: &Identity,
        env: &EventEnvelope,
        rng: &mut R,
    ) -> Vec<ClientMessage> {
        let Ok(body) = env.decode_body() else { return Vec::new() };
        let hand_id = env.hand_id;
        let h = &mut self.hand;
        if !matches!(body, EventBody::HandPrepare(_)) && h.hand != Some(hand_id) {
            return Vec::new();
        }
        match body {
            EventBody::HandPrepare(p) => {
                let Some(i) = p.players.iter().position(|x| *x == me.id()) else { return Vec::new() };
                let seat = Seat(i as u8);
                let secret = SecretShare::generate(rng);
                let share = secret.key_share(&hand_id, seat, rng);
                self.hand = HandKeys {
                    hand: Some(hand_id),
                    secret: Some(secret),
                    seat: Some(seat),
                    players: p.players.len(),
                    ..HandKeys::default()
                };
                vec![ClientMessage::BlindKey(BlindKeyMsg::sign(me, hand_id, seat, &share))]
            }
            EventBody::BlindKeys(k) => {
                let list: Option<Vec<_>> = k
                    .keys
                    .iter()
                    .map(|k| KeyShare::from_bytes(&k.key_share).ok().map(|s| (k.seat, s)))
                    .collect();
                h.key = list.as_ref().and_then(|l| JointKey::combine(&hand_id, l).ok());
                h.deck = Deck::initial(&self.declared).ok();
                let keys: Vec<KeyShare> = list.unwrap_or_default().into_iter().map(|(_, k)| k).collect();
                let (Some(secret), Some(seat), Ok(dealer_key)) =
                    (&h.secret, h.seat, KeyShare::from_bytes(&k.dealer_key))
                else {
                    return Vec::new();
                };
                let msg = BlindPiecesMsg::split(me, hand_id, seat, secret, &keys, &dealer_key, rng);
                vec![ClientMessage::BlindPieces(msg)]
            }
            EventBody::BlindPieces(p) => {
                h.pieces_seen += 1;
                let mut out = Vec::new();
                if let (Some(secret), Some(seat)) = (&h.secret, h.seat) {
                    // `players` holders: the other seats and the dealer.
                    if let Ok(c) = PieceCommitments::from_bytes(h.players, &p.commitments) {
                        h.commitments.insert(p.seat, c);
                    }
                    match p.piece_for(hand_id, h.players, seat, secret, rng) {
                        Some(Ok(piece)) => {
                            h.pieces.insert(p.seat, piece);
                        }
                        Some(Err(complaint)) => out.push(ClientMessage::BlindComplaint(complaint)),
                        None => {}
                    }
                }
                if h.pieces_seen == h.players {
                    out.extend(self.shuffle_if(me, Seat(0), rng));
                }
                out
            }
            EventBody::PhaseDeal(d) | EventBody::NewCard(d) => {
                for c in d.cards {
                    if let (DealTo::Player(s), CardFace::Down) = (c.target, c.face) {
                        h.owners.insert(c.position, s);
                    }
                }
                Vec::new()
            }
            EventBody::ActionResult(a) => {
                if serde_json::from_str(a.action.as_str()).is_ok_and(|v| is_fold(&v)) {
                    h.folded.insert(a.seat);
                }
                Vec::new()
            }
            EventBody::TimeoutAction(a) => {
                if is_fold(&a.action) {
                    h.folded.insert(a.seat);
                }
                Vec::new()
            }
            EventBody::BlindRecover(r) => {
                let (Some(seat), Some(deck)) = (h.seat, &h.deck) else { return Vec::new() };
                let Some(piece) = h.pieces.get(&r.seat) else { return Vec::new() };
                if r.positions.iter().any(|p| h.folded_card(*p)) {
                    tracing::warn!(hand = %hand_id, "refused: the dealer asks to rebuild a share of a folded seat's card");
                    return Vec::new();
                }
                let mut shares = Vec::with_capacity(r.positions.len());
                for p in &r.positions {
                    let Some(ct) = deck.get(*p) else { return Vec::new() };
                    let s = piece.recovery_share(&hand_id, r.seat, Holder::Seat(seat), *p, ct, rng);
                    shares.push(PositionShare { position: *p, share: s.to_bytes().to_vec() });
                }
                vec![ClientMessage::BlindRecovery(BlindRecoveryMsg { hand_id, withholder: r.seat, shares })]
            }
            EventBody::BlindShuffle(s) => {
                h.deck = Deck::from_bytes(&s.deck).ok();
                self.shuffle_if(me, Seat(s.seat.0.wrapping_add(1)), rng)
            }
            EventBody::BlindSkip(s) => self.shuffle_if(me, Seat(s.seat.0.wrapping_add(1)), rng),
            EventBody::BlindRequest(r) => {
                let (Some(secret), Some(seat), Some(deck)) = (&h.secret, h.seat, &h.deck) else {
                    return Vec::new();
                };
                let mut shares = Vec::new();
                for p in r.positions {
                    if p.to == Some(seat) {
                        h.mine.push(p.position);
                        continue;
                    }
                    if h.given.contains(&p.position) {
                        continue;
                    }
                    if p.to.is_none() && h.folded_card(p.position) {
                        tracing::warn!(hand = %hand_id, position = p.position, "refused: a folded seat's card asked for everyone");
                        continue;
                    }
                    let Some(ct) = deck.get(p.position) else { continue };
                    h.given.insert(p.position);
                    let d = secret.decryption_share(&hand_id, seat, p.position, ct, rng);
                    shares.push(PositionShare { position: p.position, share: d.to_bytes().to_vec() });
                }
                if shares.is_empty() {
                    return Vec::new();
                }
                vec![ClientMessage::BlindShares(BlindSharesMsg { hand_id, shares })]
            }
            _ => Vec::new(),
        }
    }

    /// This player's shuffle, when `next` is its seat.
    fn shuffle_if<R: CryptoRngCore>(&mut self, me: &Identity, next: Seat, rng: &mut R) -> Vec<ClientMessage> {
        let h = &self.hand;
        let (Some(hand), Some(seat), Some(key), Some(deck)) = (h.hand, h.seat, &h.key, &h.deck) else {
            return Vec::new();
        };
        if seat != next {
            return Vec::new();
        }
        let (out, proof) = shuffle(&hand, seat, key, deck, rng);
        vec![ClientMessage::BlindShuffle(BlindShuffleMsg::sign(me, hand, seat, &out, &proof))]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use claw_protocol::messages::{
        BlindKeys, BlindRequest, DealEvent, DealtCardMsg, EntropyMode, HandPrepare, RawJson,
        RequestedPosition, SeatKey, TimeoutAction, TimeoutReason,
    };
    use claw_protocol::{Digest, Signature};
    use rand::SeedableRng;
    use rand_chacha::ChaCha20Rng;

    fn env(hand: HandId, body: &EventBody) -> EventEnvelope {
        EventEnvelope {
            hand_id: hand,
            seq: 0,
            prev: Digest::from_bytes([0; 32]),
            body: RawJson::from_value(body).unwrap(),
            sig: None,
        }
    }

    fn request(positions: &[(u16, Option<u8>)]) -> EventBody {
        EventBody::BlindRequest(BlindRequest {
            positions: positions
                .iter()
                .map(|(p, to)| RequestedPosition { position: *p, to: to.map(Seat) })
                .collect(),
        })
    }

    fn shared(out: &[ClientMessage]) -> Vec<u16> {
        out.iter()
            .flat_map(|m| match m {
                ClientMessage::BlindShares(s) => s.shares.iter().map(|x| x.position).collect(),
                _ => Vec::new(),
            })
            .collect()
    }

    /// A dealer asking everyone's shares of a folded seat's hole card (to
    /// learn it: no game shows one) gets none from this player; the board
    /// and a live seat's private card are answered as before.
    #[test]
    fn a_folded_seats_card_is_never_opened_for_everyone() {
        let mut rng = ChaCha20Rng::seed_from_u64(3);
        let me = Identity::from_seed([2; 32]);
        let hand = HandId::from_bytes([9; 16]);
        let declared =
            claw_games::registry::get("texas-holdem").unwrap().create_deck(&serde_json::Value::Null).unwrap();
        let mut seat = BlindSeat { table: CardTable::new(&declared), declared, hand: HandKeys::default() };
        let players = vec![Identity::from_seed([1; 32]).id(), me.id(), Identity::from_seed([3; 32]).id()];
        let prepare = EventBody::HandPrepare(HandPrepare {
            hand_number: 0,
            seed_commitment: Digest::from_bytes([0; 32]),
            entropy: EntropyMode::Dealer,
            players,
            seed_timeout_ms: 1000,
        });
        let out = seat.on_event(&me, &env(hand, &prepare), &mut rng);
        let Some(ClientMessage::BlindKey(mine)) = out.first() else { panic!("a key share: {out:?}") };
        let key = |s: u8, rng: &mut ChaCha20Rng| {
            SecretShare::generate(rng).key_share(&hand, Seat(s), rng).to_bytes().to_vec()
        };
        let keys = vec![
            SeatKey { seat: Seat(0), key_share: key(0, &mut rng), sig: Signature::from_bytes([0; 64]) },
            SeatKey { seat: Seat(1), key_share: mine.key_share.clone(), sig: Signature::from_bytes([0; 64]) },
            SeatKey { seat: Seat(2), key_share: key(2, &mut rng), sig: Signature::from_bytes([0; 64]) },
        ];
        let dealer_key = key(0xFF, &mut rng);
        seat.on_event(&me, &env(hand, &EventBody::BlindKeys(BlindKeys { keys, dealer_key })), &mut rng);
        assert!(seat.hand.key.is_some() && seat.hand.deck.is_some(), "the joint key and the open deck");
        // Hole cards: positions 0, 3 to seat 0; 1, 4 to this player (seat 1); 2, 5 to seat 2; 6 a board card.
        let card = |position: u16, target: DealTo, face: CardFace| DealtCardMsg {
            position,
            target,
            face,
            opening: None,
            sealed: None,
        };
        let mut cards: Vec<DealtCardMsg> =
            (0..6).map(|p| card(p, DealTo::Player(Seat((p % 3) as u8)), CardFace::Down)).collect();
        cards.push(card(6, DealTo::Community, CardFace::Up));
        let deal = EventBody::PhaseDeal(DealEvent { phase: "hole".into(), cards });
        seat.on_event(&me, &env(hand, &deal), &mut rng);
        // Seat 0's first card privately, for its owner: answered.
        let out = seat.on_event(&me, &env(hand, &request(&[(0, Some(0))])), &mut rng);
        assert_eq!(shared(&out), vec![0]);
        // Seat 0 folds (by its timeout), then the dealer asks its other card for everyone.
        let fold = EventBody::TimeoutAction(TimeoutAction {
            seat: Seat(0),
            action: serde_json::json!({"type": "fold"}),
            reason: TimeoutReason::Timeout,
            public_state: std::sync::Arc::new(serde_json::Value::Null),
        });
        seat.on_event(&me, &env(hand, &fold), &mut rng);
        let out = seat.on_event(&me, &env(hand, &request(&[(3, None), (6, None), (5, None)])), &mut rng);
        assert_eq!(
            shared(&out),
            vec![6, 5],
            "the board card and a live seat's card, never the folded seat's"
        );
    }
}
