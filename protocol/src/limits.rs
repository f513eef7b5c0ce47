//! Every limit the protocol itself fixes (SPEC §12), defined once. Both peers
//! enforce these; a dealer's own budgets (connections, rates, timeouts it may
//! choose) are node settings in the engine's `room::config::Limits`, bounded
//! by the values here. `protocol/tests/protocol/vectors.rs` checks SPEC §12 against
//! these constants.

/// The largest frame (in bytes of UTF-8 text) either side accepts, and the
/// longest transcript line. Decoding refuses anything longer before parsing;
/// encoding refuses to produce it. 64 KiB holds a 108-card game-start
/// (leaves, deck) and game-end (openings) with room to spare.
pub const MAX_FRAME_BYTES: usize = 64 * 1024;

/// The longest game action a player may sign, in bytes of its JSON text.
/// The dealer carries the action into its `action-result` event beside the
/// game's public state; with [`MAX_PUBLIC_STATE_BYTES`] and the envelope
/// ([`MAX_EVENT_OVERHEAD_BYTES`]) that event always fits in a frame, so no
/// action a player may send can make the dealer fail to record it.
pub const MAX_ACTION_BYTES: usize = 4 * 1024;

/// The largest public state a game may publish after a step (compact JSON).
pub const MAX_PUBLIC_STATE_BYTES: usize = 32 * 1024;

/// Room left in a frame for an event's envelope and its other members
/// (seat, seq, signatures, hashes).
pub const MAX_EVENT_OVERHEAD_BYTES: usize = 4 * 1024;

const _: () =
    assert!(MAX_ACTION_BYTES + MAX_PUBLIC_STATE_BYTES + MAX_EVENT_OVERHEAD_BYTES <= MAX_FRAME_BYTES);

/// Most events in a row a transcript may hold without a dealer signature
/// (the dealer signs the last event of each burst, and any event that would
/// make a longer run). A live player holds at most this many events
/// unconfirmed: one more and it verifies the newest signature.
pub const MAX_UNSIGNED_RUN: usize = 16;

/// The longest query nonce (bytes) a dealer accepts.
pub const MAX_NONCE_LEN: usize = 64;

/// Longest `game` or `tier` of a `quick-match`, in bytes (SPEC.md §9.8).
pub const MAX_MATCH_NAME_LEN: usize = 64;

/// The longest free-text field (names, reasons, phases) a peer accepts, in
/// bytes; longer text is malformed.
pub const MAX_TEXT_LEN: usize = 256;

/// Largest allowed difference between a peer's timestamp and our clock.
pub const CLOCK_SKEW_MS: u64 = 15_000;

/// Longest a handshake may take, from hello to response (server) or from
/// hello to accepted (client). A dealer may choose a shorter deadline, never
/// a longer one.
pub const HANDSHAKE_DEADLINE_MS: u64 = 10_000;

/// Longest `sdk_version` string, in bytes.
pub const MAX_SDK_VERSION_LEN: usize = 64;

/// Longest room id, in bytes.
pub const MAX_ROOM_ID_LEN: usize = 64;

/// How long a used challenge is remembered: past it, the challenge's own
/// timestamp is already outside the accepted skew.
pub const USED_CHALLENGE_RETENTION_MS: u64 = HANDSHAKE_DEADLINE_MS + 2 * CLOCK_SKEW_MS;

/// Most used challenges a challenge book holds before refusing new ones.
pub const MAX_USED_CHALLENGES: usize = 1 << 20;

/// Most deck positions a hand may commit (positions are `u16` indices).
pub const MAX_DECK_POSITIONS: usize = 1 << 16;

/// Most players in one hand (seats are `u8`).
pub const MAX_PLAYERS_PER_HAND: usize = 255;

/// How long a client waits for the answer to a query before giving up.
pub const QUERY_ANSWER_MS: u64 = 5_000;

/// The longest WebSocket ping interval a dealer may set: a frozen client is
/// noticed within two intervals.
pub const MAX_PING_INTERVAL_MS: u64 = 10_000;

/// The most chips one player brings into one hand, and the largest bet or
/// stake a game setting may name. Every payout and net change of a hand fits
/// in an `i64` with room to spare; games whose results multiply a base by a
/// large factor (bombs, levels) cap the base lower, at `MAX_STAKE >> 10`.
pub const MAX_STAKE: u64 = 1 << 50;

/// The cap for a base that a game multiplies by up to 2^10 (Dou Di Zhu's
/// bombs and spring, Guandan's levels).
pub const MAX_MULTIPLIED_BASE: u64 = MAX_STAKE >> 10;
