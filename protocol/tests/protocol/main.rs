//! The protocol's integration tests in one binary (one link instead of one
//! per file); each former test file is the module of the same name.

mod audit_bindings;
mod audit_common;
mod audit_hand;
mod crypto_roundtrip;
mod crypto_tamper;
mod handshake_attacks;
mod mental;
mod messages_wire;
mod shuffle_fairness;
mod transcript_chain;
mod transcript_vectors;
mod vectors;
