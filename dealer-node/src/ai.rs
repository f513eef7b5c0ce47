//! House-AI seats, the driver's side (room setting `ai_seats`): when a room
//! asks for an AI ([`Effect::Ai`](claw_engine::room::Effect::Ai)), the node
//! picks an identity from the integrator's [`AiPlayers`], tops its chips up
//! to the seat's amount by one transfer from the operator's house-AI
//! account (refused when that account cannot cover it: AI chips are never
//! minted), then has the integrator connect it to the room over the node's
//! own WebSocket listener. The AI is an ordinary player: it sees only what
//! a player sees. The node never depends on the player SDK; `claw-dealer`
//! (the binary) implements [`AiPlayers`] with the SDK's bots.

use std::sync::{Arc, OnceLock};

use claw_chips::{AccountId, IdempotencyKey};
use claw_engine::room::{AiOutcome, AiStart};
use claw_protocol::{PlayerId, Seat};

pub use claw_engine::room::config::{AiLevel, AiSeats};

use crate::room::{unix_ms, NodeContext};

/// A house AI to connect.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AiRequest {
    /// The invite URL of its room on the node's own listener
    /// (`ws://127.0.0.1:PORT/ROOM#DEALER`).
    pub url: String,
    /// The room's game.
    pub game: String,
    /// The seat it asks for.
    pub seat: Seat,
    /// Its strength (Guandan), or the game's default AI.
    pub level: Option<AiLevel>,
}

/// An integrator's house-AI players. Each plays as an identity it holds
/// the key of; an identity plays at one seat at a time.
pub trait AiPlayers: Send + Sync {
    /// The identity the next AI plays as: an idle one (its chips are
    /// topped up, not granted again) or a new one.
    fn reserve(&self) -> Result<PlayerId, String>;
    /// Connects the reserved `player` as `req` says; it plays until its
    /// connection closes, and its identity is idle again after.
    fn start(&self, player: PlayerId, req: AiRequest);
    /// A reserved identity that was not started (its chips were refused)
    /// is idle again.
    fn release(&self, player: PlayerId);
}

/// A node's house-AI seats: the players and the account that pays them.
pub struct HouseAi {
    players: Arc<dyn AiPlayers>,
    /// The operator account every AI's chips are transferred from.
    pub account: AccountId,
    /// The node's WebSocket base (`ws://127.0.0.1:PORT`) and the dealer's
    /// id, once it listens.
    listener: OnceLock<(String, PlayerId)>,
}

impl HouseAi {
    /// AIs from `players`, paid from `account`.
    pub fn new(players: Arc<dyn AiPlayers>, account: AccountId) -> HouseAi {
        HouseAi { players, account, listener: OnceLock::new() }
    }

    /// The node listens at `base` (`ws://HOST:PORT`), signing as `dealer`.
    pub(crate) fn listening(&self, base: String, dealer: PlayerId) {
        let _ = self.listener.set((base, dealer));
    }
}

/// The house-AI account's id unless the operator names another.
pub const DEFAULT_ACCOUNT: &str = "house-ai";

/// Starts the AI `start` asks for in `room`: an identity, its chips from the
/// house-AI account, its connection. Refused with the reason when the node
/// has no AI players, the account cannot cover the chips, or the chip
/// service fails.
pub(crate) async fn start_ai(ctx: &NodeContext, room: &str, start: AiStart) -> AiOutcome {
    let Some(ai) = &ctx.ai else {
        return AiOutcome::Refused("this dealer runs no house AIs".into());
    };
    let Some((base, dealer)) = ai.listener.get() else {
        return AiOutcome::Refused(
            "no plain ws:// listener for house AIs (not listening yet, or TLS only)".into(),
        );
    };
    let player = match ai.players.reserve() {
        Ok(p) => p,
        Err(e) => return AiOutcome::Refused(format!("no AI player: {e}")),
    };
    if let Err(why) = fund(ctx, ai, room, player, start.chips).await {
        ai.players.release(player);
        return AiOutcome::Refused(why);
    }
    let url = crate::node::invite_url(base, room, *dealer);
    ai.players.start(player, AiRequest { url, game: start.game, seat: start.seat, level: start.level });
    AiOutcome::Started(player)
}

/// Tops `player`'s chips up to `chips` from the house-AI account, in one
/// atomic transfer (nothing moves when the account cannot cover it).
async fn fund(
    ctx: &NodeContext,
    ai: &HouseAi,
    room: &str,
    player: PlayerId,
    chips: claw_protocol::Chips,
) -> Result<(), String> {
    let account = AccountId::from(player);
    let balance = ctx.desk.balance(&account).await.map_err(|e| format!("chip service: {e}"))?;
    let Some(top_up) = chips.0.checked_sub(balance.0).filter(|n| *n > 0) else { return Ok(()) };
    let key = IdempotencyKey::new(format!("ai/{room}/{player}/{}", unix_ms())).map_err(|e| e.to_string())?;
    let amount = claw_protocol::Chips(top_up);
    match ctx.desk.transfer(&key, &ai.account, &account, amount, "house AI chips").await {
        Ok(()) => {
            tracing::info!(room, player = %player.short(), %amount, from = %ai.account, "house AI funded");
            Ok(())
        }
        Err(e) => Err(format!("the house-AI account {} cannot pay {amount} chips: {e}", ai.account)),
    }
}
