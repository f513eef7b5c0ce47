//! The player's side of a blind table (SPEC.md §9.7, docs/blind-deal.md
//! Part II): a per-hand key share, the pieces of its secret (and a
//! complaint against a bad piece it holds), its shuffle when its turn
//! comes, the decryption shares each `blind-request` asks of it and the
//! recovery shares each `blind-recover` asks of it. The transcript's
//! checks (every key, shuffle and share) are the audit's
//! (`claw_protocol::audit`); this only answers.

use std::collections::{HashMap, HashSet};

use claw_protocol::mental::{
    shuffle, CardTable, Deck, DecryptionShare, Holder, JointKey, KeyShare, Piece, PieceCommitments,
    RecoveredShare, RecoveryShare, SecretShare,
};
use claw_protocol::messages::{
    BlindKeyMsg, BlindPiecesMsg, BlindRecoveryMsg, BlindSharesMsg, BlindShuffleMsg, ClientMessage, EventBody,
    PositionShare, RoomConfig,
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
            EventBody::BlindRecover(r) => {
                let (Some(seat), Some(deck)) = (h.seat, &h.deck) else { return Vec::new() };
                let Some(piece) = h.pieces.get(&r.seat) else { return Vec::new() };
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
