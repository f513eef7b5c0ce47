//! The audit of a blind hand (SPEC.md §9.7, docs/blind-deal.md §II.8):
//! key shares (signature and proof, reported as `player-seeds`), the
//! shuffles in seat order and the final deck's digest (`shuffle`), each
//! share request and decryption share, and each opened card
//! (`opened-cards`); the pieces of every secret and upheld complaints
//! (`player-seeds`), and each recovery of a withheld share
//! (`opened-cards`). The deck view it ends with is the replay's deck.

use std::collections::{BTreeSet, HashMap};

use super::{structure, AuditCheck, AuditError};
use crate::bytes::HandId;
use crate::card::CardId;
use crate::ids::{PlayerId, Seat};
use crate::mental::{
    verify_shuffle, CardTable, Complaint, Deck, DecryptionShare, EncryptedPiece, Holder, JointKey, KeyShare,
    PieceCommitments, RecoveredShare, RecoveryShare, ShuffleProof, DEALER_HOLDER,
};
use crate::messages::{
    blind_deck_digest, blind_key_signing_body, blind_pieces_signing_body, blind_shuffle_signing_body,
    BlindComplaint, BlindKeys, BlindPieces, BlindRecover, BlindRecovery, BlindRequest, BlindShares,
    BlindShuffle, BlindSkip, EventBody, GameStart,
};
use crate::sign::{verify, Purpose};

fn fail(check: AuditCheck, d: String) -> AuditError {
    AuditError::new(check, d)
}

/// The events between `hand-prepare` and `game-start`, kept until
/// `game-start` names the deck they shuffle.
#[derive(Default)]
pub(super) struct BlindSetup {
    keys: Option<BlindKeys>,
    pieces: Vec<(u64, BlindPieces)>,
    complaints: Vec<(u64, BlindComplaint)>,
    shuffles: Vec<(u64, Result<BlindShuffle, BlindSkip>)>,
}

impl BlindSetup {
    /// Whether any blind event came (the hand is blind).
    pub fn seen(&self) -> bool {
        self.keys.is_some()
    }

    /// Accepts a setup event in order: `blind-keys` first and once, then
    /// every seat's `blind-pieces` once, then one shuffle or skip per seat;
    /// a `blind-complaint` after its accused's pieces.
    pub fn accept(&mut self, seq: u64, body: EventBody) -> Result<(), AuditError> {
        let seats = self.keys.as_ref().map_or(0, |k| k.keys.len());
        let pieces_done = self.keys.is_some() && self.pieces.len() == seats;
        match body {
            EventBody::BlindKeys(k) if self.keys.is_none() => self.keys = Some(k),
            EventBody::BlindPieces(p)
                if self.keys.is_some()
                    && !pieces_done
                    && !self.pieces.iter().any(|(_, q)| q.seat == p.seat) =>
            {
                self.pieces.push((seq, p))
            }
            EventBody::BlindComplaint(c)
                if self.pieces.iter().any(|(_, q)| q.seat == c.accused)
                    && !self.complaints.iter().any(|(_, d)| d.accused == c.accused) =>
            {
                self.complaints.push((seq, c))
            }
            EventBody::BlindShuffle(s) if pieces_done => self.shuffles.push((seq, Ok(s))),
            EventBody::BlindSkip(s) if pieces_done => self.shuffles.push((seq, Err(s))),
            b => return Err(structure(format!("event {seq}: {} not allowed here", b.type_name()))),
        }
        Ok(())
    }

    /// At `game-start`: every key share signed by its seat's player and
    /// proven; every seat's shuffle in seat order, each verified against the
    /// deck before it (the open initial deck first), at least one accepted;
    /// `root` is the final deck's digest.
    pub fn start(
        self,
        hand_id: HandId,
        players: &[PlayerId],
        g: &GameStart,
    ) -> Result<BlindAudit, AuditError> {
        let keys = self.keys.ok_or_else(|| structure("deck mode blind without blind-keys"))?;
        let n = players.len();
        if keys.keys.len() != n || keys.keys.iter().enumerate().any(|(i, k)| k.seat.index() != i) {
            return Err(structure("blind-keys must list every seat once, in seat order"));
        }
        let mut list = Vec::with_capacity(n);
        for k in &keys.keys {
            let bytes: [u8; 96] = k.key_share.as_slice().try_into().map_err(|_| {
                fail(
                    AuditCheck::PlayerSeeds,
                    format!("seat {}: key share of {} bytes", k.seat.0, k.key_share.len()),
                )
            })?;
            verify(
                &players[k.seat.index()],
                Purpose::BlindKey,
                &blind_key_signing_body(&hand_id, k.seat, &bytes),
                &k.sig,
            )
            .map_err(|e| {
                fail(AuditCheck::PlayerSeeds, format!("seat {}: key share signature: {e}", k.seat.0))
            })?;
            let share = KeyShare::from_bytes(&bytes)
                .map_err(|e| fail(AuditCheck::PlayerSeeds, format!("seat {}: {e}", k.seat.0)))?;
            list.push((k.seat, share));
        }
        let key =
            JointKey::combine(&hand_id, &list).map_err(|e| fail(AuditCheck::PlayerSeeds, e.to_string()))?;
        KeyShare::from_bytes(&keys.dealer_key)
            .and_then(|k| k.verify(&hand_id, Seat(DEALER_HOLDER)))
            .map_err(|e| fail(AuditCheck::PlayerSeeds, format!("the dealer's piece key: {e}")))?;
        let (commitments, pieces) = check_pieces(hand_id, players, &list, &self.pieces)?;
        let mut complained = BTreeSet::new();
        for (seq, c) in &self.complaints {
            let bad = |d: String| {
                fail(AuditCheck::PlayerSeeds, format!("event {seq}: complaint of seat {}: {d}", c.seat.0))
            };
            let holder = Holder::Seat(c.seat);
            let k = Holder::of(c.accused, n)
                .iter()
                .position(|h| *h == holder)
                .ok_or_else(|| bad("not a holder of the accused's pieces".into()))?;
            let (Some(a), Some(piece), Some((_, hk))) = (
                commitments[c.accused.index()].get(k),
                pieces[c.accused.index()].get(k),
                list.get(c.seat.index()),
            ) else {
                return Err(bad("no such piece".into()));
            };
            let complaint = Complaint::from_bytes(&c.complaint).map_err(|e| bad(e.to_string()))?;
            complaint.verify(&hand_id, c.accused, holder, hk, piece, a).map_err(|e| bad(e.to_string()))?;
            complained.insert(c.accused);
        }
        let mut deck = Deck::initial(&g.deck).map_err(|e| structure(format!("blind deck: {e}")))?;
        if self.shuffles.len() != n {
            return Err(structure(format!("{} shuffles or skips for {n} seats", self.shuffles.len())));
        }
        let mut accepted = 0;
        for (i, (seq, s)) in self.shuffles.into_iter().enumerate() {
            let seat = Seat(i as u8);
            let s = match s {
                Ok(s) => s,
                Err(skip) if skip.seat == seat => continue,
                Err(skip) => {
                    return Err(structure(format!("event {seq}: skip of seat {}, expected {i}", skip.seat.0)))
                }
            };
            if s.seat != seat {
                return Err(structure(format!("event {seq}: shuffle of seat {}, expected {i}", s.seat.0)));
            }
            let bad = |d: String| fail(AuditCheck::Shuffle, format!("event {seq}: seat {i}: {d}"));
            let body = blind_shuffle_signing_body(&hand_id, seat, &s.deck, &s.proof);
            verify(&players[i], Purpose::BlindShuffle, &body, &s.sig)
                .map_err(|e| bad(format!("signature: {e}")))?;
            let out = Deck::from_bytes(&s.deck).map_err(|e| bad(e.to_string()))?;
            let proof = ShuffleProof::from_bytes(deck.len(), &s.proof).map_err(|e| bad(e.to_string()))?;
            verify_shuffle(&hand_id, seat, &key, &deck, &out, &proof).map_err(|e| bad(e.to_string()))?;
            deck = out;
            accepted += 1;
        }
        if accepted == 0 {
            return Err(fail(AuditCheck::Shuffle, "no shuffle was accepted: the order is public".into()));
        }
        if !g.leaves.is_empty() || !g.player_seeds.is_empty() {
            return Err(structure("a blind game-start has no leaves and no player seeds"));
        }
        if blind_deck_digest(&hand_id, &deck) != g.root {
            return Err(fail(AuditCheck::Shuffle, "root is not the final deck's digest".into()));
        }
        Ok(BlindAudit {
            hand_id,
            table: CardTable::new(&g.deck),
            view: vec![None; deck.len()],
            key,
            deck,
            requested: HashMap::new(),
            shares: HashMap::new(),
            commitments,
            withholders: complained.clone(),
            complained,
            recovery: None,
            recovered: HashMap::new(),
        })
    }
}

/// Every seat's `blind-pieces` once: its signature, one commitment and one
/// piece per holder, commitments summing to its key share.
#[allow(clippy::type_complexity)]
fn check_pieces(
    hand_id: HandId,
    players: &[PlayerId],
    keys: &[(Seat, KeyShare)],
    events: &[(u64, BlindPieces)],
) -> Result<(Vec<PieceCommitments>, Vec<Vec<EncryptedPiece>>), AuditError> {
    let n = players.len();
    if events.len() != n {
        return Err(structure(format!("{} blind-pieces for {n} seats", events.len())));
    }
    let mut commitments: Vec<Option<PieceCommitments>> = vec![None; n];
    let mut pieces: Vec<Vec<EncryptedPiece>> = vec![Vec::new(); n];
    for (seq, p) in events {
        let bad = |d: String| {
            fail(AuditCheck::PlayerSeeds, format!("event {seq}: pieces of seat {}: {d}", p.seat.0))
        };
        let (Some(player), Some((_, key))) = (players.get(p.seat.index()), keys.get(p.seat.index())) else {
            return Err(structure(format!("event {seq}: pieces of a missing seat")));
        };
        let body = blind_pieces_signing_body(&hand_id, p.seat, &p.commitments, &p.pieces);
        verify(player, Purpose::BlindPieces, &body, &p.sig).map_err(|e| bad(format!("signature: {e}")))?;
        let holders = Holder::of(p.seat, n).len();
        let c = PieceCommitments::from_bytes(holders, &p.commitments).map_err(|e| bad(e.to_string()))?;
        c.check_sum(p.seat, key).map_err(|e| bad(e.to_string()))?;
        if p.pieces.len() != holders * EncryptedPiece::LEN {
            return Err(bad(format!("{} bytes of pieces for {holders} holders", p.pieces.len())));
        }
        pieces[p.seat.index()] = p
            .pieces
            .chunks_exact(EncryptedPiece::LEN)
            .map(EncryptedPiece::from_bytes)
            .collect::<Result<_, _>>()
            .map_err(|e| bad(e.to_string()))?;
        commitments[p.seat.index()] = Some(c);
    }
    let commitments = commitments
        .into_iter()
        .collect::<Option<Vec<_>>>()
        .ok_or_else(|| structure("a seat's pieces are missing"))?;
    Ok((commitments, pieces))
}

/// The withholder of an open recovery, its positions, and the verified
/// recovery shares by position and holder.
type OpenRecovery = (Seat, Vec<u16>, HashMap<u16, Vec<(Holder, RecoveryShare)>>);

/// A started blind hand's deck, requests, shares and opened cards.
pub(super) struct BlindAudit {
    hand_id: HandId,
    key: JointKey,
    deck: Deck,
    table: CardTable,
    /// Position → the private card's owner (`Some`) or a public card.
    requested: HashMap<u16, Option<Seat>>,
    shares: HashMap<u16, Vec<(Seat, DecryptionShare)>>,
    /// Position → the opened card.
    pub view: Vec<Option<CardId>>,
    /// Seat → the commitments of its pieces.
    commitments: Vec<PieceCommitments>,
    /// Seats with an upheld complaint (their secret is not recoverable).
    complained: BTreeSet<Seat>,
    /// The hand's withholders (complained seats included).
    withholders: BTreeSet<Seat>,
    /// The open recovery: the withholder, its positions, and the verified
    /// recovery shares by position and holder.
    recovery: Option<OpenRecovery>,
    /// Position → the withholder's share rebuilt from its pieces.
    recovered: HashMap<u16, RecoveredShare>,
}

impl BlindAudit {
    /// The deck's size.
    pub fn len(&self) -> usize {
        self.deck.len()
    }

    /// The opened card at `position`.
    pub fn opened(&self, position: u16) -> Option<CardId> {
        self.view.get(usize::from(position)).copied().flatten()
    }

    /// A `blind-request`: positions already dealt (`dealt`), each requested
    /// as the deal made it (`to` = the owner of a face-down card to a
    /// player; absent for a card the game shows).
    pub fn request(&mut self, seq: u64, r: &BlindRequest, dealt: &[Option<Seat>]) -> Result<(), AuditError> {
        for p in &r.positions {
            if usize::from(p.position) >= self.deck.len() {
                return Err(fail(
                    AuditCheck::DealOrder,
                    format!("event {seq}: request of position {} beyond the deck", p.position),
                ));
            }
            // A public request comes before the step that shows the card
            // (checked at the end: every publicly requested card is shown);
            // a private one names a card dealt to its owner.
            let holder = dealt.get(usize::from(p.position));
            if p.to.is_some() && holder != Some(&p.to) {
                return Err(fail(
                    AuditCheck::OpenedCards,
                    format!("event {seq}: position {} requested for another seat", p.position),
                ));
            }
            // A private request turns public at a showdown, never back.
            match self.requested.get(&p.position) {
                Some(None) if p.to.is_some() => {
                    return Err(fail(
                        AuditCheck::OpenedCards,
                        format!("event {seq}: position {} requested privately after publicly", p.position),
                    ))
                }
                _ => {}
            }
            self.requested.insert(p.position, p.to);
        }
        Ok(())
    }

    /// A `blind-shares`: each share requested, not from the private card's
    /// owner, not given before, with a valid proof; a public position
    /// with every key holder's share opens to a card of the deck.
    pub fn shares(&mut self, seq: u64, s: &BlindShares) -> Result<(), AuditError> {
        let bad = |d: String| fail(AuditCheck::OpenedCards, format!("event {seq}: seat {}: {d}", s.seat.0));
        for x in &s.shares {
            let p = x.position;
            match self.requested.get(&p) {
                None => return Err(bad(format!("share for position {p}, never requested"))),
                Some(Some(owner)) if *owner == s.seat => {
                    return Err(bad(format!("the owner's share of its private card at {p}")))
                }
                _ => {}
            }
            if self.shares.get(&p).is_some_and(|v| v.iter().any(|(q, _)| *q == s.seat))
                || self.recovered.get(&p).is_some_and(|r| r.seat() == s.seat)
                || self.recovery.as_ref().is_some_and(|(w, ps, _)| *w == s.seat && ps.contains(&p))
            {
                return Err(bad(format!("a second share for position {p}")));
            }
            let ct = self.deck.get(p).ok_or_else(|| bad(format!("position {p} beyond the deck")))?;
            let d = DecryptionShare::from_bytes(&x.share).map_err(|e| bad(e.to_string()))?;
            self.key.verify_share(&self.hand_id, s.seat, p, ct, &d).map_err(|e| bad(e.to_string()))?;
            self.shares.entry(p).or_default().push((s.seat, d));
            self.open_if_complete(p).map_err(bad)?;
        }
        Ok(())
    }

    /// A public position with every key holder's share (one maybe
    /// recovered) opens to a card of the deck.
    fn open_if_complete(&mut self, p: u16) -> Result<(), String> {
        if self.requested.get(&p) != Some(&None) || self.opened(p).is_some() {
            return Ok(());
        }
        let rebuilt: Vec<RecoveredShare> = self.recovered.get(&p).copied().into_iter().collect();
        let have = self.shares.get(&p).map_or(0, Vec::len) + rebuilt.len();
        if have != self.key.seats().count() {
            return Ok(());
        }
        let ct = self.deck.get(p).ok_or_else(|| format!("position {p} beyond the deck"))?;
        let list = self.shares.get(&p).map_or(&[][..], Vec::as_slice);
        let card = self
            .key
            .open_recovered(&self.hand_id, p, ct, list, &rebuilt, &self.table)
            .map_err(|e| format!("position {p}: {e}"))?;
        if let Some(v) = self.view.get_mut(usize::from(p)) {
            *v = Some(card);
        }
        Ok(())
    }

    /// A `blind-recover`: one withholder per hand (no other withholder, no
    /// complaint against it), positions it owed and had not shared, the
    /// dealer's recovery shares proven against its pieces' commitments.
    pub fn recover(&mut self, seq: u64, r: &BlindRecover) -> Result<(), AuditError> {
        let bad = |d: String| {
            fail(AuditCheck::OpenedCards, format!("event {seq}: recovery of seat {}: {d}", r.seat.0))
        };
        if self.recovery.is_some() {
            return Err(bad("a recovery is open already".into()));
        }
        if self.complained.contains(&r.seat) || self.withholders.iter().any(|w| *w != r.seat) {
            return Err(bad("a second withholder: the hand must be cancelled".into()));
        }
        let n = self.commitments.len();
        let holders = Holder::of(r.seat, n);
        let c = self.commitments.get(r.seat.index()).ok_or_else(|| bad("no such seat".into()))?;
        if r.positions.is_empty()
            || r.positions.windows(2).any(|w| w[0] >= w[1])
            || r.dealer_shares.len() != r.positions.len()
        {
            return Err(bad("positions must be increasing, one dealer share each".into()));
        }
        let mut shares: HashMap<u16, Vec<(Holder, RecoveryShare)>> = HashMap::new();
        for (p, x) in r.positions.iter().zip(&r.dealer_shares) {
            let owed = match self.requested.get(p) {
                Some(Some(owner)) => *owner != r.seat,
                Some(None) => true,
                None => false,
            };
            let shared = self.shares.get(p).is_some_and(|v| v.iter().any(|(q, _)| *q == r.seat))
                || self.recovered.contains_key(p);
            if !owed || shared || x.position != *p {
                return Err(bad(format!("position {p} was not owed by the seat")));
            }
            let ct = self.deck.get(*p).ok_or_else(|| bad(format!("position {p} beyond the deck")))?;
            let s = RecoveryShare::from_bytes(&x.share).map_err(|e| bad(e.to_string()))?;
            s.verify(&self.hand_id, r.seat, Holder::Dealer, holders.len() - 1, c, *p, ct)
                .map_err(|e| bad(e.to_string()))?;
            shares.entry(*p).or_default().push((Holder::Dealer, s));
        }
        self.withholders.insert(r.seat);
        self.recovery = Some((r.seat, r.positions.clone(), shares));
        Ok(())
    }

    /// A `blind-recovery`: a holder's shares for every position of the open
    /// recovery, each proven against its piece's commitment; once every
    /// holder's are in, the withheld shares are rebuilt (and public cards
    /// opened).
    pub fn recovery(&mut self, seq: u64, r: &BlindRecovery) -> Result<(), AuditError> {
        let bad = |d: String| {
            fail(AuditCheck::OpenedCards, format!("event {seq}: recovery shares of seat {}: {d}", r.seat.0))
        };
        let n = self.commitments.len();
        let Some((w, positions, shares)) = self.recovery.as_mut() else {
            return Err(bad("no recovery is open".into()));
        };
        let holder = Holder::Seat(r.seat);
        let holders = Holder::of(*w, n);
        let k = holders.iter().position(|h| *h == holder).filter(|_| r.withholder == *w);
        let Some(k) = k else { return Err(bad("not a holder of the withholder's pieces".into())) };
        if shares.values().any(|v| v.iter().any(|(h, _)| *h == holder)) {
            return Err(bad("a second set of recovery shares".into()));
        }
        let got: Vec<u16> = r.shares.iter().map(|x| x.position).collect();
        if got != *positions {
            return Err(bad("one share per recovered position, in order".into()));
        }
        let c = &self.commitments[w.index()];
        for x in &r.shares {
            let ct = self.deck.get(x.position).ok_or_else(|| bad("beyond the deck".into()))?;
            let s = RecoveryShare::from_bytes(&x.share).map_err(|e| bad(e.to_string()))?;
            s.verify(&self.hand_id, *w, holder, k, c, x.position, ct).map_err(|e| bad(e.to_string()))?;
            shares.entry(x.position).or_default().push((holder, s));
        }
        if shares.values().all(|v| v.len() == holders.len()) {
            let Some((w, positions, shares)) = self.recovery.take() else { return Ok(()) };
            for p in positions {
                let ct = self.deck.get(p).ok_or_else(|| bad("beyond the deck".into()))?;
                let list = shares.get(&p).map_or(&[][..], Vec::as_slice);
                let rec =
                    RecoveredShare::combine(&self.hand_id, w, n, &self.commitments[w.index()], p, ct, list)
                        .map_err(|e| bad(e.to_string()))?;
                self.recovered.insert(p, rec);
                self.open_if_complete(p).map_err(bad)?;
            }
        }
        Ok(())
    }

    /// At the end: every publicly requested position was shown (a dealer
    /// cannot have a hidden card opened by calling it public).
    pub fn all_public_shown(&self, faces: &[crate::messages::CardFace]) -> Result<(), AuditError> {
        let mut public: Vec<u16> =
            self.requested.iter().filter(|(_, to)| to.is_none()).map(|(p, _)| *p).collect();
        public.sort_unstable();
        for p in public {
            if faces.get(usize::from(p)) != Some(&crate::messages::CardFace::Up) {
                return Err(fail(
                    AuditCheck::OpenedCards,
                    format!("position {p} was opened but the game never showed it"),
                ));
            }
        }
        Ok(())
    }

    /// At the end: no recovery left open, and every requested position has
    /// the share of every seat that owed one, sent or recovered (a dealer
    /// cannot recover only part of a withholder's shares, nor let a card's
    /// owner play on without being able to open it).
    pub fn all_shares_in(&self) -> Result<(), AuditError> {
        if let Some((w, ..)) = &self.recovery {
            return Err(fail(
                AuditCheck::OpenedCards,
                format!("the recovery of seat {}'s shares never completed", w.0),
            ));
        }
        let mut requested: Vec<(u16, Option<Seat>)> =
            self.requested.iter().map(|(p, to)| (*p, *to)).collect();
        requested.sort_unstable();
        for (p, to) in requested {
            for seat in self.key.seats().filter(|s| Some(*s) != to) {
                let sent = self.shares.get(&p).is_some_and(|v| v.iter().any(|(q, _)| *q == seat));
                let recovered = self.recovered.get(&p).is_some_and(|r| r.seat() == seat);
                if !sent && !recovered {
                    return Err(fail(
                        AuditCheck::OpenedCards,
                        format!("position {p}: seat {}'s share was never sent nor recovered", seat.0),
                    ));
                }
            }
        }
        Ok(())
    }

    /// A card the game shows (a face-up deal, a reveal) must be open
    /// already: its shares come before the step that shows it.
    pub fn shown(&self, seq: u64, position: u16, what: &str) -> Result<CardId, AuditError> {
        self.opened(position).ok_or_else(|| {
            fail(
                AuditCheck::OpenedCards,
                format!("event {seq}: {what} at {position} is not opened by its shares"),
            )
        })
    }
}
