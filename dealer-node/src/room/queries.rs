//! Queries (seed 002's query protocol): answered to the asking connection
//! only, matched by nonce, about the asker's own account or public room
//! data. No answer carries a secret: no deck, no hidden card, no salt, no
//! seed, no chip-service credential.

use std::time::Duration;

use claw_chips::AccountId;
use claw_protocol::messages::{
    Query, QueryData, QueryError, QueryErrorCode, QueryResult, QueryType, ServerMessage,
};
use claw_protocol::PlayerId;

use super::Room;
use crate::metrics::inc;

/// Longest a query may take (a chip balance lookup).
const QUERY_TIMEOUT: Duration = Duration::from_secs(5);

impl Room {
    pub(super) async fn query(&mut self, id: &PlayerId, q: Query) {
        inc(&self.ctx.metrics.queries);
        let nonce = q.nonce.clone();
        let error = |error: QueryErrorCode, message: &str| {
            ServerMessage::QueryError(QueryError { nonce: nonce.clone(), error, message: message.to_owned() })
        };
        let data = match q.query_type {
            QueryType::MyBalance => match self.fresh_balance(id).await {
                Ok(balance) => QueryData::MyBalance { balance },
                Err(e) => return self.send(id, &error(e, "the chip service did not answer")),
            },
            QueryType::RoomState => QueryData::RoomState {
                phase: self.phase,
                hands_played: self.hands_played,
                players: self.table_players(),
            },
            QueryType::TableState => QueryData::TableState {
                hand_id: self.hand.as_ref().map(|h| h.hand.hand_id()),
                public_state: self.hand.as_ref().and_then(|h| h.hand.public_state()),
            },
            QueryType::RoomConfig => QueryData::RoomConfig { config: self.cfg.public() },
            QueryType::MyStatus => {
                let balance = self.fresh_balance(id).await.ok();
                let Some(p) = self.players.get(id) else { return };
                QueryData::MyStatus {
                    seat: p.seat,
                    status: self.status_of(p),
                    balance: balance.unwrap_or(p.balance),
                    credit_score: p.credit_score,
                }
            }
            QueryType::Unknown => {
                return self.send(id, &error(QueryErrorCode::UnknownQuery, "unknown query type"))
            }
        };
        self.send(id, &ServerMessage::QueryResult(QueryResult { nonce: q.nonce, data }));
    }

    /// The player's balance from the chip provider (5 s at most); also
    /// refreshes the cached one.
    async fn fresh_balance(&mut self, id: &PlayerId) -> Result<claw_protocol::Chips, QueryErrorCode> {
        let account = AccountId::from(*id);
        match tokio::time::timeout(QUERY_TIMEOUT, self.ctx.desk.balance(&account)).await {
            Ok(Ok(b)) => {
                if let Some(p) = self.players.get_mut(id) {
                    p.balance = b;
                }
                Ok(b)
            }
            Ok(Err(_)) => {
                inc(&self.ctx.metrics.chip_errors);
                Err(QueryErrorCode::Unavailable)
            }
            Err(_) => Err(QueryErrorCode::Timeout),
        }
    }
}
