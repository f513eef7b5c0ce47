//! Domain-separated Ed25519 signatures.
//!
//! Every signature of the protocol is over the byte string
//! `tag || 0x00 || body`, where `tag` is the ASCII purpose tag
//! `claw/v1/<purpose>` and `body` is a fixed binary layout given in SPEC.md
//! §4. The tag keeps a signature made for one role (say, a handshake
//! response) from being accepted in another (say, a player action); the
//! `0x00` separator keeps tags that are prefixes of one another apart.

use std::fmt;

use ed25519_dalek::VerifyingKey;

use crate::bytes::Signature;
use crate::ids::PlayerId;

/// What a signature is for. Each purpose has its own tag, so a signature can
/// never be replayed in another role (SPEC.md §4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Purpose {
    /// Handshake step 1, player → dealer.
    Hello,
    /// Handshake step 2, dealer → player.
    Challenge,
    /// Handshake step 3, player → dealer.
    Response,
    /// Handshake step 4 (success), dealer → player.
    Accepted,
    /// Handshake step 4 (failure), dealer → player.
    Rejected,
    /// A dealer transcript event (hand-prepare, game-start, deals, game-end…).
    Event,
    /// A player's game action.
    Action,
    /// A player's shuffle seed contribution.
    PlayerSeed,
    /// A player's request to join a room / take a seat.
    JoinRequest,
    /// A player's query (balance, room state…).
    Query,
    /// The dealer's answer to a query.
    QueryResult,
    /// A reconnecting player's proof of identity.
    Reconnect,
    /// A player leaving a room or sitting out.
    Leave,
    /// A player binding an EVM address to their id in a chip vault (docs/chips-evm.md).
    EvmBinding,
    /// A player's per-hand mental-poker key share (blind tables, SPEC.md §9.7).
    BlindKey,
    /// A player's shuffle of a blind table's deck (SPEC.md §9.7).
    BlindShuffle,
    /// A player's pieces of its blind-table key share (SPEC.md §9.7).
    BlindPieces,
}

impl Purpose {
    /// Every purpose, in declaration order.
    pub const ALL: [Purpose; 17] = [
        Purpose::Hello,
        Purpose::Challenge,
        Purpose::Response,
        Purpose::Accepted,
        Purpose::Rejected,
        Purpose::Event,
        Purpose::Action,
        Purpose::PlayerSeed,
        Purpose::JoinRequest,
        Purpose::Query,
        Purpose::QueryResult,
        Purpose::Reconnect,
        Purpose::Leave,
        Purpose::EvmBinding,
        Purpose::BlindKey,
        Purpose::BlindShuffle,
        Purpose::BlindPieces,
    ];

    /// The ASCII tag `claw/v1/<purpose>` (without the `0x00` separator).
    pub fn tag(self) -> &'static [u8] {
        match self {
            Purpose::Hello => b"claw/v1/hello",
            Purpose::Challenge => b"claw/v1/challenge",
            Purpose::Response => b"claw/v1/response",
            Purpose::Accepted => b"claw/v1/accepted",
            Purpose::Rejected => b"claw/v1/rejected",
            Purpose::Event => b"claw/v1/event",
            Purpose::Action => b"claw/v1/action",
            Purpose::PlayerSeed => b"claw/v1/player-seed",
            Purpose::JoinRequest => b"claw/v1/join-request",
            Purpose::Query => b"claw/v1/query",
            Purpose::QueryResult => b"claw/v1/query-result",
            Purpose::Reconnect => b"claw/v1/reconnect",
            Purpose::Leave => b"claw/v1/leave",
            Purpose::EvmBinding => b"claw/v1/evm-binding",
            Purpose::BlindKey => b"claw/v1/blind-key",
            Purpose::BlindShuffle => b"claw/v1/blind-shuffle",
            Purpose::BlindPieces => b"claw/v1/blind-pieces",
        }
    }
}

impl fmt::Display for Purpose {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Tags are ASCII by construction.
        f.write_str(std::str::from_utf8(self.tag()).unwrap_or("claw/v1/?"))
    }
}

/// The exact bytes an Ed25519 signature of `purpose` covers:
/// `tag || 0x00 || body`.
pub fn signed_message(purpose: Purpose, body: &[u8]) -> Vec<u8> {
    let tag = purpose.tag();
    let mut m = Vec::with_capacity(tag.len() + 1 + body.len());
    m.extend_from_slice(tag);
    m.push(0);
    m.extend_from_slice(body);
    m
}

/// Why a signature was refused. Each variant names what failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SignatureError {
    /// The signer's key is not a valid Ed25519 point, or is a weak
    /// (small-order) key that could "sign" anything.
    #[error("{purpose} signature: signer key {signer:?} is not a valid Ed25519 public key")]
    BadSignerKey { signer: PlayerId, purpose: Purpose },
    /// The signature does not verify for this signer, purpose and body.
    #[error("{purpose} signature by {signer:?} does not verify")]
    Invalid { signer: PlayerId, purpose: Purpose },
    /// Item `index` of a batch failed (the inner error names how).
    #[error("batch item {index}: {source}")]
    BatchItem {
        index: usize,
        #[source]
        source: Box<SignatureError>,
    },
}

/// A signer's id parsed once into its Ed25519 key. Parsing (point
/// decompression and the weak-key check) costs about a third of a
/// verification, so whoever checks many signatures of one signer (the dealer
/// a hand's player actions, a player the dealer's events) keeps one of these.
#[derive(Debug, Clone, Copy)]
pub struct SignerKey {
    id: PlayerId,
    /// `None`: not a valid Ed25519 point, or a weak (small-order) key; every
    /// signature is refused with [`SignatureError::BadSignerKey`].
    key: Option<VerifyingKey>,
}

impl SignerKey {
    /// Parses `id` (never fails: a bad key refuses every signature).
    pub fn new(id: &PlayerId) -> SignerKey {
        let key = VerifyingKey::from_bytes(id.as_bytes()).ok().filter(|k| !k.is_weak());
        SignerKey { id: *id, key }
    }

    /// The signer's id.
    pub fn id(&self) -> &PlayerId {
        &self.id
    }

    fn key(&self, purpose: Purpose) -> Result<&VerifyingKey, SignatureError> {
        self.key.as_ref().ok_or(SignatureError::BadSignerKey { signer: self.id, purpose })
    }

    /// Verifies `sig` as this signer's signature of `body` for `purpose`
    /// (RFC 8032 Ed25519, strict: canonical s, no small-order R or key).
    pub fn verify(&self, purpose: Purpose, body: &[u8], sig: &Signature) -> Result<(), SignatureError> {
        let s = ed25519_dalek::Signature::from_bytes(&sig.0);
        self.key(purpose)?
            .verify_strict(&signed_message(purpose, body), &s)
            .map_err(|_| SignatureError::Invalid { signer: self.id, purpose })
    }
}

/// Verifies `sig` as `signer`'s signature of `body` for `purpose`, parsing
/// the key for this one signature (see [`SignerKey`] to parse it once).
pub fn verify(
    signer: &PlayerId,
    purpose: Purpose,
    body: &[u8],
    sig: &Signature,
) -> Result<(), SignatureError> {
    SignerKey::new(signer).verify(purpose, body, sig)
}

/// One signature to check in [`verify_batch`].
#[derive(Debug, Clone, Copy)]
pub struct BatchItem<'a> {
    /// Who claims to have signed.
    pub signer: &'a PlayerId,
    /// What the signature is for.
    pub purpose: Purpose,
    /// The fixed-layout body (without tag).
    pub body: &'a [u8],
    /// The signature.
    pub signature: &'a Signature,
}

/// Verifies many signatures at once (ed25519-dalek batch verification,
/// roughly half the cost of one-by-one). On failure it re-checks the items
/// one by one with [`verify`] so the error names the first bad item; a batch
/// is accepted only if each item would be accepted alone, up to the strict
/// checks on `R`, which the batch equation does not make (SPEC.md §4).
pub fn verify_batch(items: &[BatchItem<'_>]) -> Result<(), SignatureError> {
    match items.len() {
        0 => return Ok(()),
        1 => {
            let i = &items[0];
            return verify(i.signer, i.purpose, i.body, i.signature)
                .map_err(|e| SignatureError::BatchItem { index: 0, source: Box::new(e) });
        }
        _ => {}
    }
    // Most items share a signer (the dealer): decompress each key once.
    let mut cache: std::collections::HashMap<PlayerId, SignerKey> = std::collections::HashMap::new();
    let mut keys: Vec<VerifyingKey> = Vec::with_capacity(items.len());
    for (index, i) in items.iter().enumerate() {
        let signer = cache.entry(*i.signer).or_insert_with(|| SignerKey::new(i.signer));
        let key =
            signer.key(i.purpose).map_err(|e| SignatureError::BatchItem { index, source: Box::new(e) })?;
        keys.push(*key);
    }
    let messages: Vec<Vec<u8>> = items.iter().map(|i| signed_message(i.purpose, i.body)).collect();
    let message_refs: Vec<&[u8]> = messages.iter().map(Vec::as_slice).collect();
    let sigs: Vec<ed25519_dalek::Signature> =
        items.iter().map(|i| ed25519_dalek::Signature::from_bytes(&i.signature.0)).collect();
    if ed25519_dalek::verify_batch(&message_refs, &sigs, &keys).is_ok() {
        return Ok(());
    }
    for (index, i) in items.iter().enumerate() {
        verify(i.signer, i.purpose, i.body, i.signature)
            .map_err(|e| SignatureError::BatchItem { index, source: Box::new(e) })?;
    }
    // The batch equation failed but every item verifies alone: cannot happen
    // for honest inputs; refuse rather than accept.
    Err(SignatureError::BatchItem {
        index: 0,
        source: Box::new(SignatureError::Invalid { signer: *items[0].signer, purpose: items[0].purpose }),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::identity::Identity;

    #[test]
    fn tags_are_distinct_ascii_without_nul() {
        let mut seen = std::collections::HashSet::new();
        for p in Purpose::ALL {
            let t = p.tag();
            assert!(t.starts_with(b"claw/v1/"));
            assert!(t.iter().all(|b| b.is_ascii_graphic()));
            assert!(seen.insert(t), "{p}");
        }
    }

    #[test]
    fn sign_and_verify_with_domain_separation() {
        let id = Identity::from_seed([1; 32]);
        let sig = id.sign(Purpose::Action, b"body");
        verify(&id.id(), Purpose::Action, b"body", &sig).unwrap();
        assert_eq!(
            verify(&id.id(), Purpose::Query, b"body", &sig),
            Err(SignatureError::Invalid { signer: id.id(), purpose: Purpose::Query })
        );
        assert!(verify(&id.id(), Purpose::Action, b"bodz", &sig).is_err());
        let other = Identity::from_seed([2; 32]);
        assert!(verify(&other.id(), Purpose::Action, b"body", &sig).is_err());
        // Not a curve point / weak key.
        let weak = PlayerId::from_bytes([0; 32]);
        assert!(matches!(
            verify(&weak, Purpose::Action, b"body", &sig),
            Err(SignatureError::BadSignerKey { .. })
        ));
    }

    #[test]
    fn batch_names_the_bad_item() {
        let ids: Vec<Identity> = (0..5u8).map(|i| Identity::from_seed([i; 32])).collect();
        let pids: Vec<PlayerId> = ids.iter().map(Identity::id).collect();
        let bodies: Vec<Vec<u8>> = (0..5u8).map(|i| vec![i; 10]).collect();
        let mut sigs: Vec<Signature> =
            ids.iter().zip(&bodies).map(|(id, b)| id.sign(Purpose::Event, b)).collect();
        let items = |sigs: &[Signature]| -> Result<(), SignatureError> {
            let v: Vec<BatchItem> = (0..5)
                .map(|i| BatchItem {
                    signer: &pids[i],
                    purpose: Purpose::Event,
                    body: &bodies[i],
                    signature: &sigs[i],
                })
                .collect();
            verify_batch(&v)
        };
        items(&sigs).unwrap();
        sigs[3].0[5] ^= 1;
        match items(&sigs) {
            Err(SignatureError::BatchItem { index: 3, .. }) => {}
            other => panic!("{other:?}"),
        }
        assert!(verify_batch(&[]).is_ok());
    }
}
