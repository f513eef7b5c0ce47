//! Blind tables (SPEC.md §9.7, docs/blind-deal.md Part II): the engine's
//! side of a mental-poker deal. The dealer collects and verifies the
//! players' key shares and shuffles, keeps the **deck view** (position →
//! opened card or unknown), asks for decryption shares when the rules need
//! a card, verifies each share and opens public cards. It never holds a
//! secret key share nor the owner's share of a hole card, so it cannot open
//! one (`blind_tests.rs::curious_dealer_cannot_open_a_hole_card`).

use std::collections::{BTreeSet, HashMap};

use claw_games::runner::deck_view_fill;
use claw_games::{ActError, ActionInput};
use claw_protocol::hand::{CardFace, DealTo, HandEvent};
use claw_protocol::mental::{
    verify_shuffle, CardTable, Complaint, Deck, DecryptionShare, EncryptedPiece, Holder, JointKey, KeyShare,
    MentalError, Piece, PieceCommitments, RecoveredShare, RecoveryError, RecoveryShare, SecretShare,
    ShuffleProof, DEALER_HOLDER,
};
use claw_protocol::messages::{
    BlindComplaint, BlindComplaintMsg, BlindKeyMsg, BlindPieces, BlindPiecesMsg, BlindRecover, BlindRecovery,
    BlindRecoveryMsg, BlindShares, BlindSharesMsg, BlindShuffleMsg, PositionShare, RequestedPosition,
    SeatKey,
};
use claw_protocol::messages::{
    BlindKeys, BlindRequest, BlindShuffle, BlindSkip, EventBody, SkipReason, YourTurn,
};
use claw_protocol::transcript::EventEnvelope;
use claw_protocol::{CardId, HandId, Seat, SignerKey};
use rand_core::CryptoRngCore;

use super::{wire, Committed, EngineError, Hand, PendingKind, State, Step};

/// Why a player's blind-table message was refused (the hand goes on).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BlindError {
    /// The message names another hand.
    #[error("blind message for hand {got}, the hand is {expected}")]
    WrongHand {
        /// The running hand.
        expected: HandId,
        /// The hand the message names.
        got: HandId,
    },
    /// The hand does not take this message now (another phase, another
    /// seat's turn to shuffle, no share request open).
    #[error("not expected now: {0}")]
    NotExpected(&'static str),
    /// The seat sent its key share already.
    #[error("this seat already sent its key share")]
    DuplicateKey,
    /// A signature does not verify under the seat's player key.
    #[error("bad signature on the {0}")]
    BadSignature(&'static str),
    /// A key share, shuffle or decryption share refused by the mental
    /// checks (docs/blind-deal.md §7 names it).
    #[error("{0}")]
    Mental(#[from] MentalError),
    /// A share for a position not requested, or not owed by this seat
    /// (its own private card, a share given already: a replay).
    #[error("share for position {0} is not owed by this seat")]
    NotOwed(u16),
    /// The message leaves out a share the seat owes.
    #[error("share for position {0} is missing")]
    MissingShare(u16),
    /// A piece, complaint or recovery share refused (docs/blind-deal.md §II.7).
    #[error("{0}")]
    Recovery(#[from] RecoveryError),
}

/// Why a game's room cannot deal blind (docs/blind-deal.md §II.1): the
/// reason is the configuration error's text.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BlindRefusal {
    /// Blackjack: the house's hand is the dealer's, and its hole card
    /// decides the house's play.
    #[error(
        "deal = \"blind\" is not offered for blackjack: the house's hole card decides the house's play, \
         and one player withholding its share would stop the house (docs/blind-deal.md §II.1)"
    )]
    HouseHand,
    /// Dou Di Zhu: every play opens cards the player names, which needs an
    /// owner's opening the protocol does not have yet.
    #[error(
        "deal = \"blind\" is not offered for dou-di-zhu yet: a play names cards whose positions only \
         their owner knows, which needs the owner's opening (docs/blind-deal.md §II.10, issue 35)"
    )]
    OwnerOpening,
    /// Guandan: tribute and return move a private card to a new owner,
    /// which needs a re-encryption proof the protocol does not have yet.
    #[error(
        "deal = \"blind\" is not offered for guandan yet: tribute and return move a private card to \
         another owner, which needs a re-encryption proof (docs/blind-deal.md §II.10, issue 35)"
    )]
    Transfer,
    /// Any other game (a dynamic plugin included).
    #[error(
        "deal = \"blind\" is not offered for {0}: its plugin does not declare a blind deal (GameMeta::blind)"
    )]
    NotOffered(String),
    /// A scripted deck (Sam Gong's tutorial) is public by design.
    #[error("deal = \"blind\" cannot deal a scripted deck (a tutorial table)")]
    Scripted,
}

/// Whether a game deals blind, as its plugin says (`GameMeta::blind`,
/// docs/blind-deal.md §II.1), with the reason when it does not.
pub fn blind_offered(meta: &claw_games::GameMeta) -> Result<(), BlindRefusal> {
    use claw_games::BlindDeal;
    match meta.blind {
        BlindDeal::Offered => Ok(()),
        BlindDeal::HouseHand => Err(BlindRefusal::HouseHand),
        BlindDeal::OwnerOpening => Err(BlindRefusal::OwnerOpening),
        BlindDeal::Transfer => Err(BlindRefusal::Transfer),
        BlindDeal::NotOffered => Err(BlindRefusal::NotOffered(meta.name.to_owned())),
    }
}

/// A key share as the hand keeps it: decoded, with the signed message.
struct KeyEntry {
    share: KeyShare,
    sig: claw_protocol::Signature,
}

/// An open `blind-request`: who still owes which positions, and what the
/// hand does once every share is in.
pub(super) struct Request {
    pub positions: Vec<RequestedPosition>,
    /// Per seat: the positions it still owes.
    owed: Vec<BTreeSet<u16>>,
    pub resume: Resume,
    /// The recovery of a withholder's shares, once its deadline passed.
    recovery: Option<Recovery>,
}

/// A withholder's shares being rebuilt from its pieces (§II.7).
struct Recovery {
    seat: Seat,
    positions: Vec<u16>,
    /// Per seat: whether it still owes its recovery shares.
    owed: Vec<bool>,
    /// Position → the verified recovery shares, by holder.
    shares: HashMap<u16, Vec<(Holder, RecoveryShare)>>,
}

/// A seat's pieces as the dealer keeps them.
struct SeatPieces {
    commitments: PieceCommitments,
    /// The dealer's own piece, decrypted and checked.
    dealer_piece: Piece,
    encrypted: Vec<EncryptedPiece>,
}

/// What the hand does when a share request's deadline passed.
#[derive(Debug)]
pub enum Withheld {
    /// One withholder: its shares are recovered (`blind-recover` chained).
    Recover(Seat, EventEnvelope),
    /// Recovery is impossible (a second withholder, a withholder whose
    /// piece was bad, a holder withholding a recovery share): the hand is
    /// cancelled; the seats named withheld.
    Cancel(Vec<Seat>),
}

/// What a completed request lets the hand do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Resume {
    /// Re-run the pending step over the new view.
    Step,
    /// Hole cards can now be opened by their owners: the next turn.
    Turn,
}

/// The blind deal of one hand.
pub(super) struct BlindDeal {
    hand_id: HandId,
    seats: usize,
    keys: Vec<Option<KeyEntry>>,
    key: Option<JointKey>,
    /// The current deck (initial, then each accepted shuffle's output).
    deck: Deck,
    /// Index of the next seat to shuffle (== seats: shuffles are done).
    next_shuffler: usize,
    accepted_shuffles: usize,
    /// The canonical (unshuffled) deck.
    declared: Vec<CardId>,
    table: CardTable,
    /// Position → the opened card.
    view: Vec<Option<CardId>>,
    /// Position → the verified decryption shares received, by seat.
    shares: HashMap<u16, Vec<(Seat, DecryptionShare)>>,
    pub request: Option<Request>,
    /// The dealer's per-hand piece key (never a key share of the deck).
    dealer_secret: SecretShare,
    dealer_key: KeyShare,
    /// Seat → its pieces, once sent.
    pieces: Vec<Option<SeatPieces>>,
    /// Seats with an upheld complaint: their secret cannot be recovered.
    complained: BTreeSet<Seat>,
    /// Every withholder of the hand (complained seats included).
    withholders: BTreeSet<Seat>,
    /// Position → the withholder's share rebuilt from its pieces.
    recovered: HashMap<u16, RecoveredShare>,
}

impl BlindDeal {
    /// A blind deal of `declared` for `seats` players.
    pub fn new<R: CryptoRngCore + ?Sized>(
        hand_id: HandId,
        seats: usize,
        declared: &[CardId],
        rng: &mut R,
    ) -> Result<BlindDeal, MentalError> {
        let dealer_secret = SecretShare::generate(rng);
        let dealer_key = dealer_secret.key_share(&hand_id, Seat(DEALER_HOLDER), rng);
        Ok(BlindDeal {
            dealer_secret,
            dealer_key,
            pieces: (0..seats).map(|_| None).collect(),
            complained: BTreeSet::new(),
            withholders: BTreeSet::new(),
            recovered: HashMap::new(),
            hand_id,
            seats,
            keys: (0..seats).map(|_| None).collect(),
            key: None,
            deck: Deck::initial(declared)?,
            next_shuffler: 0,
            accepted_shuffles: 0,
            declared: declared.to_vec(),
            table: CardTable::new(declared),
            view: vec![None; declared.len()],
            shares: HashMap::new(),
            request: None,
        })
    }

    fn check_hand(&self, got: HandId) -> Result<(), BlindError> {
        if got != self.hand_id {
            return Err(BlindError::WrongHand { expected: self.hand_id, got });
        }
        Ok(())
    }

    /// Records `seat`'s signed key share (checked: signature, proof).
    pub fn add_key(&mut self, seat: Seat, signer: &SignerKey, msg: &BlindKeyMsg) -> Result<(), BlindError> {
        self.check_hand(msg.hand_id)?;
        if self.key.is_some() {
            return Err(BlindError::NotExpected("the key shares are complete"));
        }
        let slot = self.keys.get_mut(seat.index()).ok_or(BlindError::NotExpected("no such seat"))?;
        if slot.is_some() {
            return Err(BlindError::DuplicateKey);
        }
        let share = KeyShare::from_bytes(&msg.key_share)?;
        msg.verify_by(signer, seat).map_err(|_| BlindError::BadSignature("key share"))?;
        share.verify(&self.hand_id, seat)?;
        *slot = Some(KeyEntry { share, sig: msg.sig });
        Ok(())
    }

    /// Every seat sent its key share.
    pub fn keys_complete(&self) -> bool {
        self.keys.iter().all(Option::is_some)
    }

    /// The seats whose key share is missing.
    pub fn missing_keys(&self) -> Vec<Seat> {
        (0..self.seats).filter(|i| self.keys[*i].is_none()).map(|i| Seat(i as u8)).collect()
    }

    /// Combines the key shares (all present) into the joint key; gives the
    /// `blind-keys` entries, in seat order.
    pub fn close_keys(&mut self) -> Result<Vec<SeatKey>, MentalError> {
        let mut list = Vec::with_capacity(self.seats);
        let mut out = Vec::with_capacity(self.seats);
        for (i, k) in self.keys.iter().enumerate() {
            let k = k.as_ref().ok_or(MentalError::MissingShare { seat: i as u8 })?;
            list.push((Seat(i as u8), k.share));
            out.push(SeatKey { seat: Seat(i as u8), key_share: k.share.to_bytes().to_vec(), sig: k.sig });
        }
        self.key = Some(JointKey::combine(&self.hand_id, &list)?);
        Ok(out)
    }

    /// The dealer's piece key, as `blind-keys` carries it.
    pub fn dealer_key(&self) -> [u8; 96] {
        self.dealer_key.to_bytes()
    }

    fn key_share_of(&self, seat: Seat) -> Result<&KeyShare, BlindError> {
        self.keys
            .get(seat.index())
            .and_then(Option::as_ref)
            .map(|k| &k.share)
            .ok_or(BlindError::NotExpected("no key share from that seat"))
    }

    /// Checks and records `seat`'s pieces: signature, one commitment and
    /// one encrypted piece per holder, `Σ A_ij = X_i`, and the dealer's own
    /// piece decrypting to its commitment. Gives the `blind-pieces` body.
    pub fn add_pieces(
        &mut self,
        seat: Seat,
        signer: &SignerKey,
        msg: &BlindPiecesMsg,
    ) -> Result<BlindPieces, BlindError> {
        self.check_hand(msg.hand_id)?;
        if self.key.is_none() || self.accepted_shuffles > 0 || self.next_shuffler > 0 {
            return Err(BlindError::NotExpected("pieces come between blind-keys and the shuffles"));
        }
        if self.pieces.get(seat.index()).ok_or(BlindError::NotExpected("no such seat"))?.is_some() {
            return Err(BlindError::NotExpected("this seat sent its pieces already"));
        }
        let holders = Holder::of(seat, self.seats);
        let commitments = PieceCommitments::from_bytes(holders.len(), &msg.commitments)?;
        if msg.pieces.len() != holders.len() * EncryptedPiece::LEN {
            return Err(MentalError::BadLength.into());
        }
        let encrypted: Vec<EncryptedPiece> = msg
            .pieces
            .chunks_exact(EncryptedPiece::LEN)
            .map(EncryptedPiece::from_bytes)
            .collect::<Result<_, _>>()?;
        msg.verify_by(signer, seat).map_err(|_| BlindError::BadSignature("pieces"))?;
        commitments.check_sum(seat, self.key_share_of(seat)?)?;
        let last = holders.len() - 1;
        let bad = RecoveryError::BadPiece { seat: seat.0, holder: DEALER_HOLDER };
        let (Some(ct), Some(a)) = (encrypted.get(last), commitments.get(last)) else {
            return Err(bad.into());
        };
        let bytes = self.dealer_secret.decrypt_piece(&self.hand_id, seat, Holder::Dealer, ct);
        let dealer_piece = Piece::from_bytes_checked(&bytes, a).ok_or(bad)?;
        self.pieces[seat.index()] = Some(SeatPieces { commitments, dealer_piece, encrypted });
        Ok(BlindPieces {
            seat,
            commitments: msg.commitments.clone(),
            pieces: msg.pieces.clone(),
            sig: msg.sig,
        })
    }

    /// Every seat sent its pieces.
    pub fn pieces_complete(&self) -> bool {
        self.pieces.iter().all(Option::is_some)
    }

    /// The seats whose pieces are missing.
    pub fn missing_pieces(&self) -> Vec<Seat> {
        (0..self.seats).filter(|i| self.pieces[*i].is_none()).map(|i| Seat(i as u8)).collect()
    }

    /// A holder's complaint against the piece `accused` encrypted to it:
    /// upheld (the proof verifies and the piece does not match its
    /// commitment), `accused` is a withholder whose secret cannot be
    /// recovered. Gives the `blind-complaint` body.
    pub fn add_complaint(
        &mut self,
        seat: Seat,
        msg: &BlindComplaintMsg,
    ) -> Result<BlindComplaint, BlindError> {
        self.check_hand(msg.hand_id)?;
        let accused = msg.accused;
        if accused == seat || self.complained.contains(&accused) {
            return Err(BlindError::NotExpected("no complaint about that seat is taken"));
        }
        let pieces = self
            .pieces
            .get(accused.index())
            .and_then(Option::as_ref)
            .ok_or(BlindError::NotExpected("that seat sent no pieces"))?;
        let holder = Holder::Seat(seat);
        let k = Holder::of(accused, self.seats)
            .iter()
            .position(|h| *h == holder)
            .ok_or(BlindError::NotExpected("no such seat"))?;
        let (Some(piece), Some(a)) = (pieces.encrypted.get(k), pieces.commitments.get(k)) else {
            return Err(BlindError::NotExpected("no piece for this seat"));
        };
        let complaint = Complaint::from_bytes(&msg.complaint)?;
        complaint.verify(&self.hand_id, accused, holder, self.key_share_of(seat)?, piece, a)?;
        self.complained.insert(accused);
        self.withholders.insert(accused);
        Ok(BlindComplaint { seat, accused, complaint: msg.complaint.clone() })
    }

    /// Whether `seat` is a withholder of this hand (docs/blind-deal.md §II.6).
    pub fn is_withholder(&self, seat: Seat) -> bool {
        self.withholders.contains(&seat)
    }

    /// The seat whose shuffle the hand waits for.
    pub fn shuffler(&self) -> Option<Seat> {
        (self.key.is_some() && self.pieces_complete() && self.next_shuffler < self.seats)
            .then_some(Seat(self.next_shuffler as u8))
    }

    /// Checks `seat`'s shuffle against the current deck. `Ok`: accepted and
    /// applied; `Err(Mental | BadSignature)`: refused — the caller skips the
    /// seat; other errors: not this seat's turn (nothing changes).
    pub fn check_shuffle(
        &mut self,
        seat: Seat,
        signer: &SignerKey,
        msg: &BlindShuffleMsg,
    ) -> Result<(), BlindError> {
        self.check_hand(msg.hand_id)?;
        if self.shuffler() != Some(seat) {
            return Err(BlindError::NotExpected("it is not this seat's turn to shuffle"));
        }
        let key = self.key.as_ref().ok_or(BlindError::NotExpected("no joint key"))?;
        msg.verify_by(signer, seat).map_err(|_| BlindError::BadSignature("shuffle"))?;
        let output = Deck::from_bytes(&msg.deck)?;
        let proof = ShuffleProof::from_bytes(self.deck.len(), &msg.proof)?;
        verify_shuffle(&self.hand_id, seat, key, &self.deck, &output, &proof)?;
        self.deck = output;
        self.accepted_shuffles += 1;
        self.next_shuffler += 1;
        Ok(())
    }

    /// The current shuffler is skipped (timeout or a refused shuffle).
    pub fn skip_shuffler(&mut self) {
        self.next_shuffler = (self.next_shuffler + 1).min(self.seats);
    }

    /// Shuffles accepted so far.
    pub fn accepted_shuffles(&self) -> usize {
        self.accepted_shuffles
    }

    /// The final (current) deck.
    pub fn deck(&self) -> &Deck {
        &self.deck
    }

    /// The runner's deck: every opened position holds its card, every other
    /// position the cards not yet opened, in canonical order (a permutation
    /// of the declared deck; docs/blind-deal.md §II.5).
    pub fn filled(&self) -> Option<Vec<CardId>> {
        deck_view_fill(&self.declared, &self.view)
    }

    /// The opened card at `position`, if any.
    pub fn opened(&self, position: u16) -> Option<CardId> {
        self.view.get(usize::from(position)).copied().flatten()
    }

    /// The deck view (position → opened card).
    #[cfg(test)]
    pub fn view(&self) -> &[Option<CardId>] {
        &self.view
    }

    /// The positions a step's events need opened before the step can be
    /// published: face-up deals and reveals of unopened positions.
    pub fn needed(&self, events: &[HandEvent]) -> Vec<RequestedPosition> {
        let mut out: Vec<RequestedPosition> = Vec::new();
        let mut push = |p: u16| {
            if self.opened(p).is_none() && !out.iter().any(|r| r.position == p) {
                out.push(RequestedPosition { position: p, to: None });
            }
        };
        for e in events {
            match e {
                HandEvent::Dealt { cards, .. } => {
                    cards.iter().filter(|c| c.face == CardFace::Up).for_each(|c| push(c.position))
                }
                HandEvent::Reveal { positions } => positions.iter().for_each(|p| push(*p)),
                HandEvent::Transfer { position, face: CardFace::Up, .. } => push(*position),
                _ => {}
            }
        }
        out
    }

    /// The private cards a published step dealt: each needs every other
    /// key holder's share for its owner.
    pub fn private_deals(events: &[HandEvent]) -> Vec<RequestedPosition> {
        let mut out = Vec::new();
        for e in events {
            if let HandEvent::Dealt { cards, .. } = e {
                for c in cards {
                    if let (CardFace::Down, DealTo::Player(s)) = (c.face, c.target) {
                        out.push(RequestedPosition { position: c.position, to: Some(s) });
                    }
                }
            }
        }
        out
    }

    /// Opens a request for `positions`; gives `None` when nobody owes
    /// anything (every share is in already).
    pub fn request(&mut self, positions: Vec<RequestedPosition>, resume: Resume) -> Option<&Request> {
        let mut owed = vec![BTreeSet::new(); self.seats];
        for r in &positions {
            let have = self.shares.get(&r.position);
            let rebuilt = self.recovered.get(&r.position).map(RecoveredShare::seat);
            for (i, o) in owed.iter_mut().enumerate() {
                let seat = Seat(i as u8);
                let given = have.is_some_and(|h| h.iter().any(|(s, _)| *s == seat)) || rebuilt == Some(seat);
                if r.to != Some(seat) && !given {
                    o.insert(r.position);
                }
            }
        }
        if owed.iter().all(BTreeSet::is_empty) {
            return None;
        }
        self.request = Some(Request { positions, owed, resume, recovery: None });
        self.request.as_ref()
    }

    /// The seats that still owe shares (or, during a recovery, recovery
    /// shares) for the open request.
    pub fn owing(&self) -> Vec<Seat> {
        self.request.as_ref().map_or(Vec::new(), |r| match &r.recovery {
            Some(rec) => {
                rec.owed.iter().enumerate().filter(|(_, o)| **o).map(|(i, _)| Seat(i as u8)).collect()
            }
            None => {
                r.owed.iter().enumerate().filter(|(_, o)| !o.is_empty()).map(|(i, _)| Seat(i as u8)).collect()
            }
        })
    }

    /// The open request's deadline passed: one withholder whose secret can
    /// be recovered starts its recovery (the dealer's own recovery shares
    /// go in the `blind-recover` body); anything else cancels the hand.
    pub fn withheld<R: CryptoRngCore + ?Sized>(&mut self, rng: &mut R) -> Result<BlindRecover, Vec<Seat>> {
        let owing = self.owing();
        let Some(req) = self.request.as_mut() else { return Err(owing) };
        let [seat] = owing[..] else { return Err(owing) };
        let recoverable = req.recovery.is_none()
            && !self.complained.contains(&seat)
            && self.withholders.iter().all(|w| *w == seat);
        let pieces = self.pieces.get(seat.index()).and_then(Option::as_ref);
        let (true, Some(pieces)) = (recoverable, pieces) else { return Err(owing) };
        let positions: Vec<u16> = std::mem::take(&mut req.owed[seat.index()]).into_iter().collect();
        let mut dealer_shares = Vec::with_capacity(positions.len());
        let mut shares: HashMap<u16, Vec<(Holder, RecoveryShare)>> = HashMap::new();
        for p in &positions {
            let Some(ct) = self.deck.get(*p) else { return Err(owing) };
            let s = pieces.dealer_piece.recovery_share(&self.hand_id, seat, Holder::Dealer, *p, ct, rng);
            dealer_shares.push(PositionShare { position: *p, share: s.to_bytes().to_vec() });
            shares.entry(*p).or_default().push((Holder::Dealer, s));
        }
        let owed = (0..self.seats).map(|i| i != seat.index()).collect();
        req.recovery = Some(Recovery { seat, positions: positions.clone(), owed, shares });
        self.withholders.insert(seat);
        Ok(BlindRecover { seat, positions, dealer_shares })
    }

    /// Checks and records `seat`'s recovery shares for the open recovery:
    /// one per position, each proven against its piece's commitment.
    pub fn add_recovery(&mut self, seat: Seat, msg: &BlindRecoveryMsg) -> Result<BlindRecovery, BlindError> {
        self.check_hand(msg.hand_id)?;
        let rec = self
            .request
            .as_ref()
            .and_then(|r| r.recovery.as_ref())
            .ok_or(BlindError::NotExpected("no recovery is open"))?;
        if msg.withholder != rec.seat || !rec.owed.get(seat.index()).copied().unwrap_or(false) {
            return Err(BlindError::NotExpected("no recovery shares are owed by this seat"));
        }
        let pieces = self
            .pieces
            .get(rec.seat.index())
            .and_then(Option::as_ref)
            .ok_or(BlindError::NotExpected("the withholder sent no pieces"))?;
        let holder = Holder::Seat(seat);
        let k = Holder::of(rec.seat, self.seats)
            .iter()
            .position(|h| *h == holder)
            .ok_or(BlindError::NotExpected("no such seat"))?;
        let mut seen = BTreeSet::new();
        let mut checked = Vec::with_capacity(msg.shares.len());
        for PositionShare { position, share } in &msg.shares {
            if !rec.positions.contains(position) || !seen.insert(*position) {
                return Err(BlindError::NotOwed(*position));
            }
            let ct = self.deck.get(*position).ok_or(BlindError::NotOwed(*position))?;
            let s = RecoveryShare::from_bytes(share)?;
            s.verify(&self.hand_id, rec.seat, holder, k, &pieces.commitments, *position, ct)?;
            checked.push((*position, s));
        }
        if let Some(p) = rec.positions.iter().find(|p| !seen.contains(*p)) {
            return Err(BlindError::MissingShare(*p));
        }
        // In the order of `blind-recover` (the auditor reads them so).
        if let Some((x, _)) = msg.shares.iter().zip(&rec.positions).find(|(x, p)| x.position != **p) {
            return Err(BlindError::NotOwed(x.position));
        }
        let withholder = rec.seat;
        if let Some(rec) = self.request.as_mut().and_then(|r| r.recovery.as_mut()) {
            for (p, s) in checked {
                rec.shares.entry(p).or_default().push((holder, s));
            }
            rec.owed[seat.index()] = false;
        }
        Ok(BlindRecovery { seat, withholder, shares: msg.shares.clone() })
    }

    /// Checks and records `seat`'s shares for the open request: every share
    /// it owes, each with a valid proof, and nothing else. Gives the
    /// `blind-shares` body to publish.
    pub fn add_shares(&mut self, seat: Seat, msg: &BlindSharesMsg) -> Result<BlindShares, BlindError> {
        self.check_hand(msg.hand_id)?;
        let key = self.key.as_ref().ok_or(BlindError::NotExpected("no joint key"))?;
        let req = self.request.as_ref().ok_or(BlindError::NotExpected("no share request is open"))?;
        let owed = req.owed.get(seat.index()).ok_or(BlindError::NotExpected("no such seat"))?;
        let mut seen = BTreeSet::new();
        let mut checked = Vec::with_capacity(msg.shares.len());
        for PositionShare { position, share } in &msg.shares {
            if !owed.contains(position) || !seen.insert(*position) {
                return Err(BlindError::NotOwed(*position));
            }
            let ct = self.deck.get(*position).ok_or(BlindError::NotOwed(*position))?;
            let d = DecryptionShare::from_bytes(share)?;
            key.verify_share(&self.hand_id, seat, *position, ct, &d)?;
            checked.push((*position, d));
        }
        if let Some(p) = owed.iter().find(|p| !seen.contains(*p)) {
            return Err(BlindError::MissingShare(*p));
        }
        for (p, d) in checked {
            self.shares.entry(p).or_default().push((seat, d));
        }
        if let Some(r) = self.request.as_mut() {
            r.owed[seat.index()].clear();
        }
        Ok(BlindShares { seat, shares: msg.shares.clone() })
    }

    /// When every share of the open request is in: closes it, opens its
    /// public positions into the view and says what to do next.
    pub fn complete(&mut self) -> Result<Option<Resume>, MentalError> {
        let done = self.request.as_ref().is_some_and(|r| {
            r.owed.iter().all(BTreeSet::is_empty)
                && r.recovery.as_ref().is_none_or(|x| !x.owed.contains(&true))
        });
        if !done {
            return Ok(None);
        }
        let Some(req) = self.request.take() else { return Ok(None) };
        if let (Some(rec), Some(pieces)) = (
            &req.recovery,
            req.recovery.as_ref().and_then(|x| self.pieces.get(x.seat.index())).and_then(Option::as_ref),
        ) {
            for p in &rec.positions {
                let ct = self.deck.get(*p).ok_or(MentalError::NotACard)?;
                let list = rec.shares.get(p).map_or(&[][..], Vec::as_slice);
                let r = RecoveredShare::combine(
                    &self.hand_id,
                    rec.seat,
                    self.seats,
                    &pieces.commitments,
                    *p,
                    ct,
                    list,
                )
                .map_err(|_| MentalError::MissingShare { seat: rec.seat.0 })?;
                self.recovered.insert(*p, r);
            }
        }
        let key = self.key.as_ref().ok_or(MentalError::NoParties)?;
        for r in req.positions.iter().filter(|r| r.to.is_none()) {
            let ct = self.deck.get(r.position).ok_or(MentalError::NotACard)?;
            let list = self.shares.get(&r.position).map_or(&[][..], Vec::as_slice);
            let rebuilt: Vec<RecoveredShare> = self.recovered.get(&r.position).copied().into_iter().collect();
            let card = key.open_recovered(&self.hand_id, r.position, ct, list, &rebuilt, &self.table)?;
            if let Some(v) = self.view.get_mut(usize::from(r.position)) {
                *v = Some(card);
            }
        }
        Ok(Some(req.resume))
    }

    /// Every decryption share the dealer holds for `position` (what a
    /// curious dealer could combine).
    #[cfg(test)]
    pub fn shares_of(&self, position: u16) -> &[(Seat, DecryptionShare)] {
        self.shares.get(&position).map_or(&[], Vec::as_slice)
    }

    /// The withheld share of `position` the dealer rebuilt, if any.
    #[cfg(test)]
    pub fn recovered_of(&self, position: u16) -> Option<RecoveredShare> {
        self.recovered.get(&position).copied()
    }

    /// The joint key, once the key shares are complete.
    pub fn joint_key(&self) -> Option<&JointKey> {
        self.key.as_ref()
    }

    /// The card table of the deck.
    #[cfg(test)]
    pub fn card_table(&self) -> &CardTable {
        &self.table
    }
}

/// What a player's accepted `blind-shares` lets the hand do next.
#[derive(Debug)]
pub enum BlindProgress {
    /// Accepted; other seats still owe shares. Broadcast the event.
    Waiting(EventEnvelope),
    /// The request is complete and the step waiting for it re-ran over the
    /// new deck view: broadcast the event, then run the step's chip moves
    /// and [`Hand::commit`] it (as after [`Hand::act`]).
    Step(EventEnvelope, Step),
    /// The hole cards just dealt can be opened by their owners: broadcast
    /// the event, then the turn (if the hand waits for one).
    Turn(EventEnvelope, Option<YourTurn>),
    /// The shares were accepted but the hand cannot go on (never expected;
    /// the room voids it).
    Broken(EngineError),
}

impl Hand {
    /// Whether this hand deals blind (SPEC.md §9.7).
    pub fn is_blind(&self) -> bool {
        self.blind.is_some()
    }

    fn blind_mut(&mut self) -> Result<&mut BlindDeal, BlindError> {
        self.blind.as_deref_mut().ok_or(BlindError::NotExpected("not a blind table"))
    }

    /// Records a seat's signed key share (before the shuffles).
    pub fn add_blind_key(&mut self, seat: Seat, msg: &BlindKeyMsg) -> Result<(), BlindError> {
        if !matches!(self.state, State::Preparing { .. }) {
            return Err(BlindError::NotExpected("the hand has started"));
        }
        let signer =
            self.signers.get(seat.index()).cloned().ok_or(BlindError::NotExpected("no such seat"))?;
        self.blind_mut()?.add_key(seat, &signer, msg)
    }

    /// Whether every seat sent its key share.
    pub fn blind_keys_complete(&self) -> bool {
        self.blind.as_ref().is_some_and(|b| b.keys_complete())
    }

    /// Ends the key phase: the joint key, and the `blind-keys` event to
    /// broadcast. Missing key shares: an error naming the seats (the room
    /// voids the hand before anything is staked, docs/blind-deal.md §II.2).
    pub fn close_blind_keys(&mut self) -> Result<EventEnvelope, EngineError> {
        let b = self.blind.as_deref_mut().ok_or_else(|| EngineError::Blind("not a blind table".into()))?;
        let missing = b.missing_keys();
        if !missing.is_empty() {
            let seats: Vec<String> = missing.iter().map(ToString::to_string).collect();
            return Err(EngineError::Blind(format!("no key share from {}", seats.join(", "))));
        }
        let keys = b.close_keys()?;
        let dealer_key = b.dealer_key().to_vec();
        Ok(self.tb.append(&self.dealer, &EventBody::BlindKeys(BlindKeys { keys, dealer_key }))?)
    }

    /// Records a seat's signed pieces (after `blind-keys`, before the
    /// shuffles); gives the `blind-pieces` event to broadcast.
    pub fn add_blind_pieces(
        &mut self,
        seat: Seat,
        msg: &BlindPiecesMsg,
    ) -> Result<EventEnvelope, BlindError> {
        if !matches!(self.state, State::Preparing { .. }) {
            return Err(BlindError::NotExpected("the hand has started"));
        }
        let signer =
            self.signers.get(seat.index()).cloned().ok_or(BlindError::NotExpected("no such seat"))?;
        let body = self.blind_mut()?.add_pieces(seat, &signer, msg)?;
        self.tb
            .append(&self.dealer, &EventBody::BlindPieces(body))
            .map_err(|_| BlindError::NotExpected("transcript full"))
    }

    /// Whether every seat sent its pieces.
    pub fn blind_pieces_complete(&self) -> bool {
        self.blind.as_ref().is_some_and(|b| b.pieces_complete())
    }

    /// The seats whose pieces are missing.
    pub fn blind_missing_pieces(&self) -> Vec<Seat> {
        self.blind.as_ref().map_or(Vec::new(), |b| b.missing_pieces())
    }

    /// A holder's complaint against a piece (before `game-start`); upheld,
    /// gives the `blind-complaint` event and the accused seat.
    pub fn add_blind_complaint(
        &mut self,
        seat: Seat,
        msg: &BlindComplaintMsg,
    ) -> Result<(EventEnvelope, Seat), BlindError> {
        if !matches!(self.state, State::Preparing { .. }) {
            return Err(BlindError::NotExpected("complaints are taken until game-start"));
        }
        let body = self.blind_mut()?.add_complaint(seat, msg)?;
        let accused = body.accused;
        let env = self
            .tb
            .append(&self.dealer, &EventBody::BlindComplaint(body))
            .map_err(|_| BlindError::NotExpected("transcript full"))?;
        Ok((env, accused))
    }

    /// Whether `seat` withheld a share or sent a bad piece in this hand
    /// (its turns are its timeout action at once, docs/blind-deal.md §II.6).
    pub fn is_blind_withholder(&self, seat: Seat) -> bool {
        self.blind.as_ref().is_some_and(|b| b.is_withholder(seat))
    }

    /// The open request's deadline passed (docs/blind-deal.md §II.6): one
    /// recoverable withholder starts its recovery (`blind-recover`
    /// chained); otherwise the hand must be cancelled.
    pub fn blind_withheld<R: CryptoRngCore + ?Sized>(&mut self, rng: &mut R) -> Withheld {
        let Some(b) = self.blind.as_deref_mut() else { return Withheld::Cancel(Vec::new()) };
        match b.withheld(rng) {
            Ok(body) => {
                let seat = body.seat;
                match self.tb.append(&self.dealer, &EventBody::BlindRecover(body)) {
                    Ok(env) => Withheld::Recover(seat, env),
                    Err(_) => Withheld::Cancel(vec![seat]),
                }
            }
            Err(seats) => Withheld::Cancel(seats),
        }
    }

    /// A holder's recovery shares for the open recovery (`deadline_ms` as
    /// for [`Hand::add_blind_shares`]).
    pub fn add_blind_recovery(
        &mut self,
        seat: Seat,
        msg: &BlindRecoveryMsg,
        deadline_ms: u64,
    ) -> Result<BlindProgress, BlindError> {
        let body = self.blind_mut()?.add_recovery(seat, msg)?;
        Ok(self.blind_progress(EventBody::BlindRecovery(body), deadline_ms))
    }

    /// The seat whose shuffle the hand waits for.
    pub fn blind_shuffler(&self) -> Option<Seat> {
        self.blind.as_ref().and_then(|b| b.shuffler())
    }

    /// A seat's shuffle. `Ok((event, None))`: accepted (`blind-shuffle`);
    /// `Ok((event, Some(why)))`: refused and the seat skipped
    /// (`blind-skip bad-shuffle`); `Err`: not expected from this seat now
    /// (nothing changed).
    pub fn add_blind_shuffle(
        &mut self,
        seat: Seat,
        msg: &BlindShuffleMsg,
    ) -> Result<(EventEnvelope, Option<BlindError>), BlindError> {
        let signer =
            self.signers.get(seat.index()).cloned().ok_or(BlindError::NotExpected("no such seat"))?;
        let b = self.blind_mut()?;
        let body = match b.check_shuffle(seat, &signer, msg) {
            Ok(()) => {
                let body =
                    BlindShuffle { seat, deck: msg.deck.clone(), proof: msg.proof.clone(), sig: msg.sig };
                (EventBody::BlindShuffle(body), None)
            }
            Err(e @ (BlindError::Mental(_) | BlindError::BadSignature(_))) => {
                b.skip_shuffler();
                (EventBody::BlindSkip(BlindSkip { seat, reason: SkipReason::BadShuffle }), Some(e))
            }
            Err(e) => return Err(e),
        };
        let env =
            self.tb.append(&self.dealer, &body.0).map_err(|_| BlindError::NotExpected("transcript full"))?;
        Ok((env, body.1))
    }

    /// The shuffler's time ran out: it is skipped (`blind-skip timeout`).
    pub fn skip_blind_shuffle(&mut self) -> Result<EventEnvelope, EngineError> {
        let b = self.blind.as_deref_mut().ok_or_else(|| EngineError::Blind("not a blind table".into()))?;
        let seat = b.shuffler().ok_or_else(|| EngineError::Blind("no shuffle is awaited".into()))?;
        b.skip_shuffler();
        let body = EventBody::BlindSkip(BlindSkip { seat, reason: SkipReason::Timeout });
        Ok(self.tb.append(&self.dealer, &body)?)
    }

    /// Whether a step waits (for its chip moves or, blind, for shares).
    pub fn has_pending_step(&self) -> bool {
        matches!(self.state, State::Running { pending: Some(_), .. })
    }

    /// Whether the key phase is over (the joint key is made).
    pub fn blind_keys_closed(&self) -> bool {
        self.blind.as_ref().is_some_and(|b| b.joint_key().is_some())
    }

    /// Whether the hand waits for decryption shares.
    pub fn awaits_shares(&self) -> bool {
        self.blind.as_ref().is_some_and(|b| b.request.is_some())
    }

    /// The seats that still owe decryption shares (the withholders once
    /// the request's deadline has passed, docs/blind-deal.md §II.6).
    pub fn blind_owing(&self) -> Vec<Seat> {
        self.blind.as_ref().map_or(Vec::new(), |b| b.owing())
    }

    /// Publishes a `blind-request` for `positions`.
    pub(super) fn blind_request(
        &mut self,
        positions: Vec<RequestedPosition>,
        resume: Resume,
    ) -> Result<Committed, EngineError> {
        let b = self.blind.as_deref_mut().ok_or_else(|| EngineError::Blind("not a blind table".into()))?;
        if b.request.is_some() {
            return Err(EngineError::Blind("a share request is open already".into()));
        }
        if b.request(positions.clone(), resume).is_none() {
            return Err(EngineError::Blind("a needed card has every share but is not open".into()));
        }
        let env = self.tb.append(&self.dealer, &EventBody::BlindRequest(BlindRequest { positions }))?;
        Ok(Committed { events: vec![env], your_turn: None, end: None, awaits_shares: true })
    }

    /// A seat's decryption shares for the open request (`deadline_ms`: the
    /// next turn's, when this completes a hole-card request).
    pub fn add_blind_shares(
        &mut self,
        seat: Seat,
        msg: &BlindSharesMsg,
        deadline_ms: u64,
    ) -> Result<BlindProgress, BlindError> {
        let body = self.blind_mut()?.add_shares(seat, msg)?;
        Ok(self.blind_progress(EventBody::BlindShares(body), deadline_ms))
    }

    /// Chains an accepted shares or recovery event and, when the request
    /// is complete, resumes the hand.
    fn blind_progress(&mut self, body: EventBody, deadline_ms: u64) -> BlindProgress {
        let Some(b) = self.blind.as_deref_mut() else {
            return BlindProgress::Broken(EngineError::Blind("not a blind table".into()));
        };
        let resume = b.complete();
        let env = match self.tb.append(&self.dealer, &body) {
            Ok(env) => env,
            Err(e) => return BlindProgress::Broken(e.into()),
        };
        match resume {
            Ok(None) => BlindProgress::Waiting(env),
            Ok(Some(Resume::Step)) => match self.blind_rerun() {
                Ok(step) => BlindProgress::Step(env, step),
                Err(e) => BlindProgress::Broken(e),
            },
            Ok(Some(Resume::Turn)) => {
                BlindProgress::Turn(env, self.to_act().map(|s| self.your_turn(s, deadline_ms)))
            }
            Err(e) => BlindProgress::Broken(e.into()),
        }
    }

    /// Re-runs the pending step over the current deck view: the runner is
    /// rebuilt from the recorded actions, then the step applied again.
    fn blind_rerun(&mut self) -> Result<Step, EngineError> {
        let infos = self.player_infos();
        let b = self.blind.as_deref().ok_or_else(|| EngineError::Blind("not a blind table".into()))?;
        let State::Running { run, pending: Some(p) } = &mut self.state else {
            return Err(EngineError::NothingPending);
        };
        run.order = b.filled().ok_or_else(|| EngineError::Deck("deck view".into()))?;
        let (mut runner, start_events) = super::replayed(&self.spec, &infos, &self.carried.memory, run)?;
        let events = match &p.kind {
            PendingKind::Start => start_events,
            PendingKind::Action { seat, signed } => runner
                .act_as(*seat, ActionInput::Text(signed.action.as_str()))
                .map_err(ActError::into_error)?,
            PendingKind::Timeout { seat, action, .. } => runner.act(*seat, action)?,
        };
        run.runner = runner;
        p.open = b.needed(&events);
        let moves = if p.open.is_empty() { wire::moves(&events) } else { Vec::new() };
        p.events = events;
        Ok(Step { moves })
    }
}
