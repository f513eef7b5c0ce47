//! Queries (SPEC.md §9.3 `query`, §9.4 query data): answered to the asking connection
//! only, matched by nonce, about the asker's own account or public room
//! data. No answer carries a secret: no deck, no hidden card, no salt, no
//! seed, no chip-service credential, no reveal before it is published. A
//! query that needs the chip service or the archive is an effect: the room
//! answers everything else meanwhile.

use claw_protocol::messages::{
    HandAnswer, Query, QueryData, QueryError, QueryErrorCode, QueryResult, QueryType, ServerMessage,
};
use claw_protocol::{Chips, PlayerId};

use std::time::Instant;

use super::{ArchiveWrite, Archived, ChipCall, ChipFailure, RoomCore, TokenBucket, Waiting};
use crate::metrics::inc;

impl RoomCore {
    pub(super) fn query(&mut self, id: &PlayerId, q: Query, at: Instant) {
        let rate = self.limits.room_queries_per_sec;
        let budget = self.query_budget.get_or_insert_with(|| TokenBucket::new(rate, rate, at));
        if !budget.try_take(at) {
            inc(&self.metrics.rate_limited);
            let e = query_error(&q, QueryErrorCode::RateLimited, "the room is answering too many queries");
            return self.send(id, &e);
        }
        inc(&self.metrics.queries);
        let data = match q.query_type {
            QueryType::MyBalance => {
                self.call(ChipCall::Balance(*id), Waiting::Query(*id, q));
                return;
            }
            QueryType::MyStatus => {
                self.call(ChipCall::Status(*id), Waiting::Query(*id, q));
                return;
            }
            QueryType::RoomState => QueryData::RoomState {
                phase: self.public_phase(),
                hands_played: self.hands_played,
                players: self.table_players(),
                acting: self.acting(),
            },
            QueryType::TableState => QueryData::TableState {
                hand_id: self.table.hand().map(|h| h.hand_id()),
                public_state: self.table.hand().and_then(|h| h.public_state()),
            },
            QueryType::RoomConfig => QueryData::RoomConfig { config: self.cfg.public() },
            QueryType::Hand => {
                let Some(hand_id) = q.hand_id else {
                    return self.send(id, &query_error(&q, QueryErrorCode::NotFound, "hand_id is required"));
                };
                return match self.unarchived.get_mut(&hand_id) {
                    // Its record is written once the settlement completes.
                    Some(parked) => parked.push((*id, q)),
                    None => self.fetch_hand(*id, q),
                };
            }
            QueryType::Unknown => {
                return self.send(id, &query_error(&q, QueryErrorCode::UnknownQuery, "unknown query type"))
            }
        };
        self.send(id, &ServerMessage::QueryResult(QueryResult { nonce: q.nonce, data }));
    }

    /// The chip service answered a `my-balance` or `my-status` query
    /// (`held`: chips the node holds for refunds, `my-status` only).
    pub(super) fn query_done(
        &mut self,
        id: &PlayerId,
        q: Query,
        balance: Result<Chips, ChipFailure>,
        held: Chips,
    ) {
        let balance = match balance {
            Ok(b) => {
                if let Some(p) = self.players.get_mut(id) {
                    p.balance = b;
                }
                Ok(b)
            }
            Err(ChipFailure::Timeout) => Err(QueryErrorCode::Timeout),
            Err(_) => {
                inc(&self.metrics.chip_errors);
                Err(QueryErrorCode::Unavailable)
            }
        };
        let data = match q.query_type {
            QueryType::MyStatus => {
                let Some(p) = self.players.get(id) else { return };
                QueryData::MyStatus {
                    seat: p.seat,
                    status: self.status_of(p),
                    balance: balance.unwrap_or(p.balance),
                    credit_score: p.credit_score,
                    held,
                }
            }
            _ => match balance {
                Ok(balance) => QueryData::MyBalance { balance },
                Err(e) => return self.send(id, &query_error(&q, e, "the chip service did not answer")),
            },
        };
        self.send(id, &ServerMessage::QueryResult(QueryResult { nonce: q.nonce, data }));
    }
}

impl RoomCore {
    /// Asks the archive for the hand a `hand` query names (after every write
    /// queued before it).
    pub(super) fn fetch_hand(&mut self, id: PlayerId, q: Query) {
        let Some(hand_id) = q.hand_id else { return };
        self.archive(ArchiveWrite::Fetch { hand_id }, Waiting::Fetch(id, q));
    }

    /// The archive answered a `hand` query: one page of the record. The
    /// archive's hand file never holds a pending reveal, so neither does
    /// the answer.
    pub(super) fn fetch_done(&mut self, id: &PlayerId, q: Query, result: Result<Archived, String>) {
        let reply = match result {
            Ok(Archived::Hand(Some(record))) => ServerMessage::HandRecord(HandAnswer {
                record: record.page(q.from_seq.unwrap_or(0)),
                nonce: q.nonce,
            }),
            Ok(_) => query_error(&q, QueryErrorCode::NotFound, "no finished hand of this room has that id"),
            Err(_) => query_error(&q, QueryErrorCode::Unavailable, "the archive could not be read"),
        };
        self.send(id, &reply);
    }
}

fn query_error(q: &Query, error: QueryErrorCode, message: &str) -> ServerMessage {
    ServerMessage::QueryError(QueryError { nonce: q.nonce.clone(), error, message: message.to_owned() })
}
