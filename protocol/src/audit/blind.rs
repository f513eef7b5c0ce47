//! The audit of a blind hand (SPEC.md §9.7, docs/blind-deal.md §II.8):
//! key shares (signature and proof, reported as `player-seeds`), the
//! shuffles in seat order and the final deck's digest (`shuffle`), each
//! share request and decryption share, and each opened card
//! (`opened-cards`). The deck view it ends with is the replay's deck.

use std::collections::HashMap;

use super::{structure, AuditCheck, AuditError};
use crate::bytes::HandId;
use crate::card::CardId;
use crate::ids::{PlayerId, Seat};
use crate::mental::{verify_shuffle, CardTable, Deck, DecryptionShare, JointKey, KeyShare, ShuffleProof};
use crate::messages::{
    blind_deck_digest, blind_key_signing_body, blind_shuffle_signing_body, BlindKeys, BlindRequest,
    BlindShares, BlindShuffle, BlindSkip, EventBody, GameStart,
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
    shuffles: Vec<(u64, Result<BlindShuffle, BlindSkip>)>,
}

impl BlindSetup {
    /// Whether any blind event came (the hand is blind).
    pub fn seen(&self) -> bool {
        self.keys.is_some()
    }

    /// Accepts a setup event in order: `blind-keys` first and once, then
    /// one shuffle or skip per seat.
    pub fn accept(&mut self, seq: u64, body: EventBody) -> Result<(), AuditError> {
        match body {
            EventBody::BlindKeys(k) if self.keys.is_none() => self.keys = Some(k),
            EventBody::BlindShuffle(s) if self.keys.is_some() => self.shuffles.push((seq, Ok(s))),
            EventBody::BlindSkip(s) if self.keys.is_some() => self.shuffles.push((seq, Err(s))),
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
        })
    }
}

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
            if self.shares.get(&p).is_some_and(|v| v.iter().any(|(q, _)| *q == s.seat)) {
                return Err(bad(format!("a second share for position {p}")));
            }
            let ct = self.deck.get(p).ok_or_else(|| bad(format!("position {p} beyond the deck")))?;
            let d = DecryptionShare::from_bytes(&x.share).map_err(|e| bad(e.to_string()))?;
            self.key.verify_share(&self.hand_id, s.seat, p, ct, &d).map_err(|e| bad(e.to_string()))?;
            self.shares.entry(p).or_default().push((s.seat, d));
            if self.requested.get(&p) == Some(&None) && self.opened(p).is_none() {
                let all = self.shares.get(&p).map_or(0, Vec::len) == self.key.seats().count();
                if all {
                    let list = self.shares.get(&p).map_or(&[][..], Vec::as_slice);
                    let card = self
                        .key
                        .open(&self.hand_id, p, ct, list, &self.table)
                        .map_err(|e| bad(format!("position {p}: {e}")))?;
                    if let Some(v) = self.view.get_mut(usize::from(p)) {
                        *v = Some(card);
                    }
                }
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
