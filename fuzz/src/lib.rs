//! Fuzz targets of game-claw and a coverage-free mutation fuzzer to drive them
//! on stable Rust. A target panics only when it found a bug: a panic in the
//! code under test, or a broken invariant (asserted in [`targets`]).

pub mod mutate;
pub mod seeds;
pub mod targets;

/// One fuzz target: a name and the function that takes one input.
#[derive(Clone, Copy)]
pub struct Target {
    /// Name used on the command line, in corpus directories and by cargo-fuzz.
    pub name: &'static str,
    /// Runs one input; panics on a finding.
    pub run: fn(&[u8]),
    /// The valid inputs mutation starts from.
    pub seeds: fn() -> Vec<Vec<u8>>,
}

/// Every target.
pub const TARGETS: [Target; 5] = [
    Target { name: "frames", run: targets::frames, seeds: seeds::frames },
    Target { name: "handshake", run: targets::handshake, seeds: seeds::handshake },
    Target { name: "transcript", run: targets::transcript, seeds: seeds::transcript },
    Target { name: "game_actions", run: targets::game_actions, seeds: seeds::game_actions },
    Target { name: "hand_actions", run: targets::hand_actions, seeds: seeds::hand_actions },
];
