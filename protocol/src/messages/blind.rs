//! Blind tables (SPEC.md §9.7, docs/blind-deal.md Part II): the players'
//! messages and the dealer's event bodies of a mental-poker deal, and the
//! byte strings the players sign for them. The cryptography is
//! [`crate::mental`]; this module only carries its encodings.

use serde::{Deserialize, Serialize};

use crate::bytes::{hex_vec, sha256, Digest, HandId, Signature};
use crate::card::CardId;
use crate::identity::Identity;
use crate::ids::Seat;
use crate::mental::{
    Deck, EncryptedPiece, Holder, KeyShare, Piece, PieceCommitments, SecretShare, ShuffleProof,
};
use crate::sign::{Purpose, SignatureError, SignerKey};
use rand_core::CryptoRngCore;

/// Who can see the cards of a room's hands (`RoomConfig.deal`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum DealMode {
    /// The dealer deals, commits and seals every card (SPEC.md §5–§7).
    #[default]
    Dealer,
    /// The players hold the deck's key jointly; the dealer sees no hidden card.
    Blind,
}

impl DealMode {
    /// Whether this is the default (omitted on the wire).
    pub fn is_dealer(&self) -> bool {
        *self == DealMode::Dealer
    }
}

/// The bytes a seat signs for its key share (after `"claw/v1/blind-key" ||
/// 0x00`): `hand_id (16) || seat (1) || key_share (96)`.
pub fn blind_key_signing_body(hand_id: &HandId, seat: Seat, key_share: &[u8; 96]) -> [u8; 113] {
    let mut b = [0u8; 113];
    b[..16].copy_from_slice(&hand_id.0);
    b[16] = seat.0;
    b[17..].copy_from_slice(key_share);
    b
}

/// The bytes a seat signs for its shuffle (after `"claw/v1/blind-shuffle" ||
/// 0x00`): `hand_id (16) || seat (1) || SHA-256(deck) (32) || SHA-256(proof) (32)`.
pub fn blind_shuffle_signing_body(hand_id: &HandId, seat: Seat, deck: &[u8], proof: &[u8]) -> [u8; 81] {
    let mut b = [0u8; 81];
    b[..16].copy_from_slice(&hand_id.0);
    b[16] = seat.0;
    b[17..49].copy_from_slice(&sha256(&[deck]).0);
    b[49..].copy_from_slice(&sha256(&[proof]).0);
    b
}

/// The bytes a seat signs for the pieces of its secret (after
/// `"claw/v1/blind-pieces" || 0x00`): `hand_id (16) || seat (1) ||
/// SHA-256(commitments) (32) || SHA-256(pieces) (32)`.
pub fn blind_pieces_signing_body(
    hand_id: &HandId,
    seat: Seat,
    commitments: &[u8],
    pieces: &[u8],
) -> [u8; 81] {
    let mut b = [0u8; 81];
    b[..16].copy_from_slice(&hand_id.0);
    b[16] = seat.0;
    b[17..49].copy_from_slice(&sha256(&[commitments]).0);
    b[49..].copy_from_slice(&sha256(&[pieces]).0);
    b
}

/// The deck a blind table's rules run over (SPEC.md §9.7, docs/blind-deal.md
/// §II.5), the same for the dealer's engine and the auditor's replay:
/// position `p` holds `view[p]` when it was opened; the unopened positions
/// take the cards of `declared` that no position opened, in `declared`
/// order (a permutation of the deck, so the rules' own checks hold).
/// `None` when the view does not fit the deck.
pub fn deck_view_fill(declared: &[CardId], view: &[Option<CardId>]) -> Option<Vec<CardId>> {
    let opened: std::collections::BTreeSet<CardId> = view.iter().flatten().copied().collect();
    let mut rest = declared.iter().filter(|c| !opened.contains(c));
    view.iter().map(|v| v.or_else(|| rest.next().copied())).collect()
}

/// `SHA-256("claw/v1/blind-deck" || 0x00 || hand_id || deck bytes)`: a blind
/// hand's deck commitment (`game-start.root`).
pub fn blind_deck_digest(hand_id: &HandId, deck: &Deck) -> Digest {
    sha256(&[b"claw/v1/blind-deck\0", &hand_id.0, &deck.to_bytes()])
}

/// `blind-key` (player → dealer): the seat's key share for the hand, signed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BlindKeyMsg {
    /// The hand announced by `hand-prepare`.
    pub hand_id: HandId,
    /// `X || R || s` (docs/blind-deal.md §4), 96 bytes.
    #[serde(with = "hex_vec")]
    pub key_share: Vec<u8>,
    /// Purpose `blind-key` over [`blind_key_signing_body`].
    pub sig: Signature,
}

impl BlindKeyMsg {
    /// Signs `share` for `seat` of `hand_id` as `player`.
    pub fn sign(player: &Identity, hand_id: HandId, seat: Seat, share: &KeyShare) -> BlindKeyMsg {
        let bytes = share.to_bytes();
        let sig = player.sign(Purpose::BlindKey, &blind_key_signing_body(&hand_id, seat, &bytes));
        BlindKeyMsg { hand_id, key_share: bytes.to_vec(), sig }
    }

    /// Checks the signature as `player`'s for `seat` (the key share's
    /// length too: a signature over another length cannot exist).
    pub fn verify_by(&self, player: &SignerKey, seat: Seat) -> Result<(), SignatureError> {
        let bytes: [u8; 96] = self
            .key_share
            .as_slice()
            .try_into()
            .map_err(|_| SignatureError::Invalid { signer: *player.id(), purpose: Purpose::BlindKey })?;
        player.verify(Purpose::BlindKey, &blind_key_signing_body(&self.hand_id, seat, &bytes), &self.sig)
    }
}

/// `blind-shuffle` (player → dealer): the seat's shuffle of the deck before
/// it, with its proof, signed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BlindShuffleMsg {
    /// The hand.
    pub hand_id: HandId,
    /// The new deck, `n × 64` bytes.
    #[serde(with = "hex_vec")]
    pub deck: Vec<u8>,
    /// The proof, `(5n + 9) × 32` bytes.
    #[serde(with = "hex_vec")]
    pub proof: Vec<u8>,
    /// Purpose `blind-shuffle` over [`blind_shuffle_signing_body`].
    pub sig: Signature,
}

impl BlindShuffleMsg {
    /// Signs a shuffle of `seat` as `player`.
    pub fn sign(player: &Identity, hand_id: HandId, seat: Seat, deck: &Deck, proof: &ShuffleProof) -> Self {
        let (deck, proof) = (deck.to_bytes(), proof.to_bytes());
        let sig =
            player.sign(Purpose::BlindShuffle, &blind_shuffle_signing_body(&hand_id, seat, &deck, &proof));
        BlindShuffleMsg { hand_id, deck, proof, sig }
    }

    /// Checks the signature as `player`'s for `seat`.
    pub fn verify_by(&self, player: &SignerKey, seat: Seat) -> Result<(), SignatureError> {
        let body = blind_shuffle_signing_body(&self.hand_id, seat, &self.deck, &self.proof);
        player.verify(Purpose::BlindShuffle, &body, &self.sig)
    }
}

/// `blind-pieces` (player → dealer): the additive pieces of the seat's
/// secret (docs/blind-deal.md §II.7), their commitments in holder order
/// (every other seat in seat order, then the dealer) and each piece
/// encrypted to its holder, signed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BlindPiecesMsg {
    /// The hand.
    pub hand_id: HandId,
    /// `A_0 || A_1 || …`, 32 bytes per holder.
    #[serde(with = "hex_vec")]
    pub commitments: Vec<u8>,
    /// `R || masked` per holder, 64 bytes each, same order.
    #[serde(with = "hex_vec")]
    pub pieces: Vec<u8>,
    /// Purpose `blind-pieces` over [`blind_pieces_signing_body`].
    pub sig: Signature,
}

impl BlindPiecesMsg {
    /// Signs `seat`'s commitments and encrypted pieces as `player`.
    pub fn sign(
        player: &Identity,
        hand_id: HandId,
        seat: Seat,
        commitments: &PieceCommitments,
        pieces: &[EncryptedPiece],
    ) -> Self {
        let commitments = commitments.to_bytes();
        let pieces: Vec<u8> = pieces.iter().flat_map(|p| p.to_bytes()).collect();
        let sig = player
            .sign(Purpose::BlindPieces, &blind_pieces_signing_body(&hand_id, seat, &commitments, &pieces));
        BlindPiecesMsg { hand_id, commitments, pieces, sig }
    }

    /// Checks the signature as `player`'s for `seat`.
    pub fn verify_by(&self, player: &SignerKey, seat: Seat) -> Result<(), SignatureError> {
        let body = blind_pieces_signing_body(&self.hand_id, seat, &self.commitments, &self.pieces);
        player.verify(Purpose::BlindPieces, &body, &self.sig)
    }
}

impl BlindPiecesMsg {
    /// Splits `seat`'s secret among its holders (docs/blind-deal.md §II.7),
    /// encrypts each piece to its holder's key (`keys`: every seat's key
    /// share by seat index; `dealer_key`: the dealer's piece key) and signs.
    pub fn split<R: CryptoRngCore + ?Sized>(
        player: &Identity,
        hand_id: HandId,
        seat: Seat,
        secret: &SecretShare,
        keys: &[KeyShare],
        dealer_key: &KeyShare,
        rng: &mut R,
    ) -> BlindPiecesMsg {
        let holders = Holder::of(seat, keys.len());
        let pieces = secret.split(holders.len(), rng);
        let encrypted: Vec<EncryptedPiece> = holders
            .iter()
            .zip(&pieces)
            .map(|(h, p)| {
                let key = match h {
                    Holder::Seat(s) => keys.get(s.index()).unwrap_or(dealer_key),
                    Holder::Dealer => dealer_key,
                };
                p.encrypt(&hand_id, seat, *h, key, rng)
            })
            .collect();
        BlindPiecesMsg::sign(player, hand_id, seat, &PieceCommitments::of(&pieces), &encrypted)
    }
}

impl BlindPieces {
    /// The piece of this event's seat that `me` holds, decrypted with its
    /// secret and checked against its commitment; a piece that does not
    /// match gives the complaint to send instead. `None`: `me` holds no
    /// piece of this seat, or the event is malformed (the audit names it).
    pub fn piece_for<R: CryptoRngCore + ?Sized>(
        &self,
        hand_id: HandId,
        seats: usize,
        me: Seat,
        secret: &SecretShare,
        rng: &mut R,
    ) -> Option<Result<Piece, BlindComplaintMsg>> {
        let holder = Holder::Seat(me);
        let holders = Holder::of(self.seat, seats);
        let k = holders.iter().position(|h| *h == holder)?;
        let commitments = PieceCommitments::from_bytes(holders.len(), &self.commitments).ok()?;
        let piece = EncryptedPiece::from_bytes(self.pieces.get(k * 64..k * 64 + 64)?).ok()?;
        let bytes = secret.decrypt_piece(&hand_id, self.seat, holder, &piece);
        Some(match Piece::from_bytes_checked(&bytes, commitments.get(k)?) {
            Some(p) => Ok(p),
            None => Err(BlindComplaintMsg {
                hand_id,
                accused: self.seat,
                complaint: secret.complain(&hand_id, self.seat, holder, &piece, rng).to_bytes().to_vec(),
            }),
        })
    }
}

/// `blind-complaint` (player → dealer): the piece `accused` encrypted to
/// the sender does not match its commitment; `complaint` = `S || e || s`
/// (docs/blind-deal.md §II.7), 96 bytes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BlindComplaintMsg {
    /// The hand.
    pub hand_id: HandId,
    /// The seat whose piece is bad.
    pub accused: Seat,
    /// `S || e || s`.
    #[serde(with = "hex_vec")]
    pub complaint: Vec<u8>,
}

/// `blind-recovery` (player → dealer): the sender's recovery shares for
/// the positions `blind-recover` names, one per position.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BlindRecoveryMsg {
    /// The hand.
    pub hand_id: HandId,
    /// The withholding seat whose shares are recovered.
    pub withholder: Seat,
    /// `S || e || s` per position.
    pub shares: Vec<PositionShare>,
}

/// One decryption share for one deck position.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PositionShare {
    /// The deck position.
    pub position: u16,
    /// `D || e || s` (docs/blind-deal.md §5), 96 bytes.
    #[serde(with = "hex_vec")]
    pub share: Vec<u8>,
}

/// `blind-shares` (player → dealer): every share the sender owes for the
/// open request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BlindSharesMsg {
    /// The hand.
    pub hand_id: HandId,
    /// One share per owed position.
    pub shares: Vec<PositionShare>,
}

/// A seat's signed key share, as `blind-keys` publishes it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SeatKey {
    /// The seat.
    pub seat: Seat,
    /// `X || R || s`, 96 bytes.
    #[serde(with = "hex_vec")]
    pub key_share: Vec<u8>,
    /// The player's `blind-key` signature.
    pub sig: Signature,
}

/// `blind-keys`: every seat's key share, in seat order, and the dealer's
/// per-hand piece key.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BlindKeys {
    /// The key shares.
    pub keys: Vec<SeatKey>,
    /// The dealer's piece key `X_D || R || s` (docs/blind-deal.md §4's
    /// proof for seat byte `0xFF`), 96 bytes: the seats encrypt the
    /// dealer's pieces to it (§II.7).
    #[serde(with = "hex_vec")]
    pub dealer_key: Vec<u8>,
}

/// `blind-pieces`: a seat's signed piece commitments and encrypted pieces
/// (the dealer checked `Σ A_ij = X_i`, the signature, and its own piece).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BlindPieces {
    /// The seat whose secret is split.
    pub seat: Seat,
    /// As [`BlindPiecesMsg::commitments`].
    #[serde(with = "hex_vec")]
    pub commitments: Vec<u8>,
    /// As [`BlindPiecesMsg::pieces`].
    #[serde(with = "hex_vec")]
    pub pieces: Vec<u8>,
    /// The player's `blind-pieces` signature.
    pub sig: Signature,
}

/// `blind-complaint`: an upheld complaint; `accused` is the hand's
/// withholder from then on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BlindComplaint {
    /// The complaining holder.
    pub seat: Seat,
    /// The seat whose piece is bad.
    pub accused: Seat,
    /// `S || e || s`.
    #[serde(with = "hex_vec")]
    pub complaint: Vec<u8>,
}

/// `blind-recover`: `seat` withheld the shares of `positions`; every other
/// seat owes its recovery shares for them. `dealer_shares`: the dealer's,
/// one per position, in the same order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BlindRecover {
    /// The withholder.
    pub seat: Seat,
    /// The withheld positions, increasing.
    pub positions: Vec<u16>,
    /// The dealer's recovery shares.
    pub dealer_shares: Vec<PositionShare>,
}

/// `blind-recovery`: a holder's verified recovery shares.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BlindRecovery {
    /// The holder.
    pub seat: Seat,
    /// The withholder.
    pub withholder: Seat,
    /// One per position of the `blind-recover`.
    pub shares: Vec<PositionShare>,
}

/// `blind-shuffle`: an accepted shuffle of the deck before it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BlindShuffle {
    /// The shuffler.
    pub seat: Seat,
    /// The new deck.
    #[serde(with = "hex_vec")]
    pub deck: Vec<u8>,
    /// Its proof.
    #[serde(with = "hex_vec")]
    pub proof: Vec<u8>,
    /// The player's `blind-shuffle` signature.
    pub sig: Signature,
}

/// Why a seat's shuffle was skipped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SkipReason {
    /// Nothing arrived in time.
    Timeout,
    /// The shuffle, its proof or its signature failed.
    BadShuffle,
}

/// `blind-skip`: a seat's shuffle is skipped; the next seat shuffles the same deck.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct BlindSkip {
    /// The seat.
    pub seat: Seat,
    /// Why.
    pub reason: SkipReason,
}

/// A position whose decryption shares are requested.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct RequestedPosition {
    /// The deck position.
    pub position: u16,
    /// A private card's owner (who does not answer); absent: a public card.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub to: Option<Seat>,
}

/// `blind-request`: decryption shares the hand needs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BlindRequest {
    /// The positions, in deal order.
    pub positions: Vec<RequestedPosition>,
}

/// `blind-shares`: a seat's verified decryption shares.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BlindShares {
    /// The key holder.
    pub seat: Seat,
    /// Its shares, one per position.
    pub shares: Vec<PositionShare>,
}

/// `blind-reveal`: face-down cards the game shows (a showdown); the cards
/// are the ones the published shares open.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BlindReveal {
    /// The revealed positions, in the order the game asked.
    pub positions: Vec<u16>,
}
