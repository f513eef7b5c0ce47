//! Card commitments: one salted leaf per deck position and a Merkle tree
//! over them (SPEC.md §5).
//!
//! `leaf_i = SHA-256("claw/v1/card" || hand_id || i as u16 BE || card_code
//! as u16 BE || salt_i)`. The tree hashes a leaf node as
//! `SHA-256(0x00 || leaf)` and an inner node as `SHA-256(0x01 || left ||
//! right)`; a node without a right sibling moves up a level unchanged.

use serde::{Deserialize, Serialize};

use crate::bytes::{sha256, Digest, HandId, Salt};
use crate::card::CardId;

/// Domain tag of a card leaf.
pub const CARD_TAG: &[u8] = b"claw/v1/card";

/// The 64-byte leaf preimage: `"claw/v1/card" || hand_id || position BE ||
/// card code BE || salt`. It is also the plaintext of a sealed card.
pub fn leaf_preimage(hand: &HandId, position: u16, card: CardId, salt: &Salt) -> [u8; 64] {
    let mut b = [0u8; 64];
    b[..12].copy_from_slice(CARD_TAG);
    b[12..28].copy_from_slice(&hand.0);
    b[28..30].copy_from_slice(&position.to_be_bytes());
    b[30..32].copy_from_slice(&card.code().to_be_bytes());
    b[32..].copy_from_slice(&salt.0);
    b
}

/// The commitment to the card at deck `position` of hand `hand`.
pub fn leaf(hand: &HandId, position: u16, card: CardId, salt: &Salt) -> Digest {
    sha256(&[&leaf_preimage(hand, position, card, salt)])
}

/// What opens one leaf: the position, the card and its salt. Face-up cards
/// and end-of-hand reveals publish this; sealed cards carry it encrypted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct CardOpening {
    /// Deck position (0 = first card dealt).
    pub position: u16,
    /// The physical card.
    pub card: CardId,
    /// The position's salt.
    pub salt: Salt,
}

impl CardOpening {
    /// The leaf this opening commits to in hand `hand`.
    pub fn leaf(&self, hand: &HandId) -> Digest {
        leaf(hand, self.position, self.card, &self.salt)
    }

    /// True when this opening matches the committed `expected` leaf.
    pub fn matches(&self, hand: &HandId, expected: &Digest) -> bool {
        use subtle::ConstantTimeEq as _;
        bool::from(self.leaf(hand).0.ct_eq(&expected.0))
    }
}

/// Hash of a leaf node: `SHA-256(0x00 || leaf)`.
pub fn leaf_node(leaf: &Digest) -> Digest {
    sha256(&[&[0x00], &leaf.0])
}

/// Hash of an inner node: `SHA-256(0x01 || left || right)`.
pub fn inner_node(left: &Digest, right: &Digest) -> Digest {
    sha256(&[&[0x01], &left.0, &right.0])
}

/// The root of a tree with no leaves: SHA-256 of the empty string.
pub fn empty_root() -> Digest {
    sha256(&[])
}

/// A Merkle tree over the leaves of a deck, kept whole so the dealer can hand
/// out inclusion proofs for revealed cards.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MerkleTree {
    /// `levels[0]` are the leaf nodes, the last level is `[root]`.
    levels: Vec<Vec<Digest>>,
    leaf_count: usize,
}

impl MerkleTree {
    /// Builds the tree (SPEC.md §5.2).
    pub fn new(leaves: &[Digest]) -> MerkleTree {
        if leaves.is_empty() {
            return MerkleTree { levels: vec![vec![empty_root()]], leaf_count: 0 };
        }
        let mut levels = vec![leaves.iter().map(leaf_node).collect::<Vec<_>>()];
        while levels.last().map_or(0, Vec::len) > 1 {
            let prev = levels.last().map(Vec::as_slice).unwrap_or_default();
            let next = prev
                .chunks(2)
                .map(|pair| match pair {
                    [l, r] => inner_node(l, r),
                    _ => pair[0],
                })
                .collect();
            levels.push(next);
        }
        MerkleTree { levels, leaf_count: leaves.len() }
    }

    /// The root every leaf is committed under.
    pub fn root(&self) -> Digest {
        self.levels.last().and_then(|l| l.first()).copied().unwrap_or_else(empty_root)
    }

    /// Number of leaves.
    pub fn leaf_count(&self) -> usize {
        self.leaf_count
    }

    /// The inclusion proof of leaf `index`, or `None` if out of range.
    pub fn proof(&self, index: usize) -> Option<MerkleProof> {
        if index >= self.leaf_count {
            return None;
        }
        let mut siblings = Vec::new();
        let mut i = index;
        for level in &self.levels[..self.levels.len() - 1] {
            let sib = i ^ 1;
            if sib < level.len() {
                siblings.push(level[sib]);
            }
            i /= 2;
        }
        Some(MerkleProof { siblings })
    }
}

/// The root over `leaves` without keeping the tree.
pub fn merkle_root(leaves: &[Digest]) -> Digest {
    MerkleTree::new(leaves).root()
}

/// The sibling hashes from a leaf up to the root, bottom first. Levels where
/// the node has no sibling (last node of an odd level) contribute nothing.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(transparent)]
pub struct MerkleProof {
    /// Sibling node hashes, leaf level first.
    pub siblings: Vec<Digest>,
}

impl MerkleProof {
    /// True iff `leaf` is leaf number `index` of a tree of `leaf_count`
    /// leaves with this `root`. Never panics: a proof of the wrong length or
    /// an index out of range is simply false.
    pub fn verify(&self, root: &Digest, leaf: &Digest, index: usize, leaf_count: usize) -> bool {
        if index >= leaf_count {
            return false;
        }
        let mut node = leaf_node(leaf);
        let mut i = index;
        let mut width = leaf_count;
        let mut sibs = self.siblings.iter();
        while width > 1 {
            if i ^ 1 < width {
                let Some(s) = sibs.next() else { return false };
                node = if i.is_multiple_of(2) { inner_node(&node, s) } else { inner_node(s, &node) };
            }
            i /= 2;
            width = width.div_ceil(2);
        }
        sibs.next().is_none() && node == *root
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn leaves(n: usize) -> Vec<Digest> {
        (0..n).map(|i| sha256(&[&(i as u64).to_be_bytes()])).collect()
    }

    #[test]
    fn leaf_layout() {
        let hand = HandId([0x11; 16]);
        let salt = Salt([0x22; 32]);
        let card: CardId = "As".parse().unwrap();
        let pre = leaf_preimage(&hand, 0x0102, card, &salt);
        assert_eq!(&pre[..12], b"claw/v1/card");
        assert_eq!(&pre[12..28], &[0x11; 16]);
        assert_eq!(&pre[28..32], &[0x01, 0x02, 0x00, 51]);
        assert_eq!(leaf(&hand, 0x0102, card, &salt), sha256(&[&pre]));
        let o = CardOpening { position: 0x0102, card, salt };
        assert!(o.matches(&hand, &o.leaf(&hand)));
        assert!(!o.matches(&HandId([0; 16]), &o.leaf(&hand)));
    }

    #[test]
    fn small_trees_by_hand() {
        let l = leaves(3);
        assert_eq!(merkle_root(&[]), empty_root());
        assert_eq!(merkle_root(&l[..1]), leaf_node(&l[0]));
        let n = |i: usize| leaf_node(&l[i]);
        assert_eq!(merkle_root(&l[..2]), inner_node(&n(0), &n(1)));
        // Odd node promoted unchanged.
        assert_eq!(merkle_root(&l), inner_node(&inner_node(&n(0), &n(1)), &n(2)));
    }

    #[test]
    fn every_proof_verifies_and_nothing_else_does() {
        for count in 1..=40 {
            let l = leaves(count);
            let tree = MerkleTree::new(&l);
            let root = tree.root();
            for (i, leaf) in l.iter().enumerate() {
                let p = tree.proof(i).unwrap();
                assert!(p.verify(&root, leaf, i, count), "n={count} i={i}");
                if count > 1 {
                    assert!(!p.verify(&root, leaf, (i + 1) % count, count));
                    let other = &l[(i + 1) % count];
                    assert!(!p.verify(&root, other, i, count));
                }
                let mut longer = p.clone();
                longer.siblings.push(root);
                assert!(!longer.verify(&root, leaf, i, count));
                if let Some(mut shorter) = (!p.siblings.is_empty()).then(|| p.clone()) {
                    shorter.siblings.pop();
                    assert!(!shorter.verify(&root, leaf, i, count));
                }
            }
            assert!(tree.proof(count).is_none());
            assert!(!MerkleProof::default().verify(&root, &l[0], count, count));
        }
    }
}
