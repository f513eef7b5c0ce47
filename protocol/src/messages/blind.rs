//! Blind tables (SPEC.md §9.7, docs/blind-deal.md Part II): the players'
//! messages and the dealer's event bodies of a mental-poker deal, and the
//! byte strings the players sign for them. The cryptography is
//! [`crate::mental`]; this module only carries its encodings.

use serde::{Deserialize, Serialize};

use crate::bytes::{hex_vec, sha256, Digest, HandId, Signature};
use crate::card::CardId;
use crate::identity::Identity;
use crate::ids::Seat;
use crate::mental::{Deck, KeyShare, ShuffleProof};
use crate::sign::{Purpose, SignatureError, SignerKey};

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

/// `blind-keys`: every seat's key share, in seat order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BlindKeys {
    /// The key shares.
    pub keys: Vec<SeatKey>,
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
