//! The dealer node (see the dealer-node issue).
