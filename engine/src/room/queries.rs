//! Queries (SPEC.md §9.3 `query`, §9.4 query data): answered to the asking connection
//! only, matched by nonce, about the asker's own account or public room
//! data. No answer carries a secret: no deck, no hidden card, no salt, no
//! seed, no chip-service credential, no reveal before it is published. A
//! query that needs the chip service or the archive is an effect: the room
//! answers everything else meanwhile. Also the views of the room that
//! `room-state`, `my-status` and [`RoomCore::snapshot`] show.

use std::collections::HashMap;
use std::time::Instant;

use claw_protocol::messages::{
    HandAnswer, PlayerStatus, Query, QueryData, QueryError, QueryErrorCode, QueryResult, QueryType,
    RoomPhase, ServerMessage, TablePlayer,
};
use claw_protocol::{Chips, HandId, PlayerId};

use super::chips::Waiting;
use super::hand::Table;
use super::player::{Player, Presence};
use super::{
    millis, ArchiveWrite, Archived, ChipCall, ChipFailure, Life, RoomCore, RoomSnapshot, TokenBucket,
};
use crate::metrics::inc;

/// The room's query state.
#[derive(Default)]
pub(super) struct Queries {
    /// The room's query budget (`Limits::room_queries_per_sec`), from the
    /// first query on.
    budget: Option<TokenBucket>,
    /// Finished hands whose archive write waits for their settlement, with
    /// the `hand` queries asked meanwhile (answered once the write is
    /// queued, so that a query never overtakes its hand's record).
    pub parked: HashMap<HandId, Vec<(PlayerId, Query)>>,
}

impl RoomCore {
    pub(super) fn query(&mut self, id: &PlayerId, q: Query, at: Instant) {
        let rate = self.limits.room_queries_per_sec;
        let budget = self.queries.budget.get_or_insert_with(|| TokenBucket::new(rate, rate, at));
        if !budget.try_take(at) {
            inc(&self.metrics.rate_limited);
            let e = query_error(&q, QueryErrorCode::RateLimited, "the room is answering too many queries");
            return self.send(id, &e);
        }
        inc(&self.metrics.queries);
        let data = match q.query_type {
            QueryType::MyBalance => {
                self.out.call(ChipCall::Balance(*id), Waiting::Query(*id, q));
                return;
            }
            QueryType::MyStatus => {
                self.out.call(ChipCall::Status(*id), Waiting::Query(*id, q));
                return;
            }
            QueryType::RoomState => QueryData::RoomState {
                phase: self.public_phase(),
                hands_played: self.hands.played,
                players: self.table_players(),
                acting: self.acting(),
            },
            QueryType::TableState => QueryData::TableState {
                hand_id: self.hands.table.hand().map(|h| h.hand_id()),
                public_state: self.hands.table.hand().and_then(|h| h.public_state()),
            },
            QueryType::RoomConfig => QueryData::RoomConfig { config: self.cfg.public() },
            QueryType::Hand => {
                let Some(hand_id) = q.hand_id else {
                    return self.send(id, &query_error(&q, QueryErrorCode::NotFound, "hand_id is required"));
                };
                return match self.queries.parked.get_mut(&hand_id) {
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
                if let Some(p) = self.roster.get_mut(id) {
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
                let Some(p) = self.roster.get(id) else { return };
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
        self.out.archive(ArchiveWrite::Fetch { hand_id }, Waiting::Fetch(id, q));
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

// ----- views: what `room-state`, `my-status` and snapshots show ---------

impl RoomCore {
    pub(super) fn status_of(&self, p: &Player) -> PlayerStatus {
        match p.presence {
            Presence::Left => PlayerStatus::Left,
            Presence::Away { .. } => PlayerStatus::Disconnected,
            Presence::Online(_) => {
                if self.in_hand(&p.id) && !self.hands.table.hand().is_some_and(|h| h.is_over()) {
                    PlayerStatus::Playing
                } else if p.seat.is_none() {
                    PlayerStatus::Joined
                } else if p.sit_out.is_some() {
                    PlayerStatus::SitOut
                } else {
                    PlayerStatus::Seated
                }
            }
        }
    }

    /// Everyone in the room, seat order first: a player who left is shown
    /// `left` until the hand it is still in ends; `until_ms` says when an
    /// away or sitting-out seat is freed.
    pub(super) fn table_players(&self) -> Vec<TablePlayer> {
        let mut v: Vec<_> = self
            .roster
            .players()
            .map(|p| TablePlayer {
                id: p.id,
                name: p.name.clone(),
                seat: p.seat,
                status: self.status_of(p),
                chips: p.balance,
                until_ms: match (p.presence, p.sit_out) {
                    (Presence::Away { since }, _) => Some(self.unix_ms(since + self.cfg.reconnect_window)),
                    (Presence::Online(_), Some(since)) => Some(self.unix_ms(since + self.cfg.sit_out_limit)),
                    _ => None,
                },
                house_ai: p.house_ai,
            })
            .collect();
        v.sort_by_key(|p| (p.seat.map_or(u16::MAX, |s| u16::from(s.0)), p.id));
        v
    }

    /// The room phase players see: `idle` while no seat is taken and no
    /// hand runs, else the phase itself.
    pub(super) fn public_phase(&self) -> RoomPhase {
        let phase = match (self.life, &self.hands.table) {
            (Life::Closed, _) => RoomPhase::Closed,
            (_, Table::Idle(rest)) => rest.phase(),
            (_, Table::Forming(_) | Table::Playing(_)) => RoomPhase::Playing,
        };
        if phase == RoomPhase::Waiting && self.roster.table_empty() {
            RoomPhase::Idle
        } else {
            phase
        }
    }

    /// Who the running hand waits for, as `room-state` shows it.
    pub(super) fn acting(&self) -> Option<claw_protocol::messages::Acting> {
        let (player, seat, deadline_ms) = self.hands.table.acting()?;
        Some(claw_protocol::messages::Acting { player, seat, deadline_ms })
    }

    /// `t` in unix milliseconds, by the latest time the driver told.
    pub(super) fn unix_ms(&self, t: Instant) -> u64 {
        match t.checked_duration_since(self.clock.at) {
            Some(ahead) => self.clock.unix_ms.saturating_add(millis(ahead)),
            None => self.clock.unix_ms.saturating_sub(millis(self.clock.at.saturating_duration_since(t))),
        }
    }

    /// The room's public state.
    pub fn snapshot(&self) -> RoomSnapshot {
        RoomSnapshot {
            phase: self.public_phase(),
            hands_played: self.hands.played,
            hands_voided: self.hands.voided,
            players: self.table_players(),
            acting: self.acting(),
        }
    }
}

fn query_error(q: &Query, error: QueryErrorCode, message: &str) -> ServerMessage {
    ServerMessage::QueryError(QueryError { nonce: q.nonce.clone(), error, message: message.to_owned() })
}
