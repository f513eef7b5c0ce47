//! WebSocket close codes the dealer sends (SPEC.md §9.1). The `kicked`
//! message before a close says why in detail; the code tells a client
//! whether to reconnect.

/// The dealer or the player ended the session normally (the player left).
pub const NORMAL: u16 = 1000;
/// The room closed, or the peer missed a pong (the player is away).
pub const GOING_AWAY: u16 = 1001;
/// Floods, bad frames, a reader too slow for its send budget, a failed
/// handshake.
pub const POLICY: u16 = 1008;
/// Kicked by the dealer (an idle watcher, a frozen identity's seat freed):
/// do not reconnect at once.
pub const KICKED: u16 = 4000;
/// The operator banned this identity: do not reconnect.
pub const BANNED: u16 = 4001;
/// Another connection resumed this session (the same identity logged in
/// elsewhere): do not reconnect.
pub const REPLACED: u16 = 4005;

/// Whether a client should not try to resume after a close with `code`.
pub fn final_close(code: u16) -> bool {
    matches!(code, KICKED | BANNED | REPLACED)
}
