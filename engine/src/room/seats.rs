//! Seats and presence: who is in the room, on which connection, in which
//! seat; sessions resumed with their reconnect token, joins, sitting out,
//! leaving, reconnect windows, and the dissolving of an under-filled table.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use claw_protocol::handshake::{RejectReason, VerifiedPlayer};
use claw_protocol::messages::{
    JoinRejectReason, JoinRequest, JoinResponse, KickReason, Kicked, ServerMessage,
};
use claw_protocol::{Chips, Nonce, PlayerId, Seat};

use super::chips::Waiting;
use super::player::{ct_eq, Player, Presence, TokenBucket};
use super::{encode, Admit, ChipCall, ChipFailure, ConnId, Now, Refusal, RoomCore};
use crate::metrics::{dec, inc};

/// The room's players (watchers included), their connections and the
/// table's seats.
pub(super) struct Roster {
    players: HashMap<PlayerId, Player>,
    conns: HashMap<ConnId, PlayerId>,
    /// Table seats (room-level seat numbers).
    seats: Vec<Option<PlayerId>>,
    /// Credit scores, kept across sessions (lowered by leaving mid-hand).
    credit: HashMap<PlayerId, i32>,
    /// Since when the table has been under-filled (seats taken, fewer than
    /// `min_players`, no hand): it is dissolved `dissolve_after` later.
    pub underfilled_since: Option<Instant>,
    /// Since when no seat has been taken (from the room's opening): the
    /// room closes `expire_after` later.
    pub empty_since: Option<Instant>,
}

impl Roster {
    /// An empty room of `seats` seats.
    pub fn new(seats: usize) -> Roster {
        Roster {
            players: HashMap::new(),
            conns: HashMap::new(),
            seats: vec![None; seats],
            credit: HashMap::new(),
            underfilled_since: None,
            empty_since: None,
        }
    }

    /// The players away for `window` at `t`.
    fn away_expired(&self, window: Duration, t: Instant) -> Vec<PlayerId> {
        let over = |p: &&Player| matches!(p.presence, Presence::Away { since } if since + window <= t);
        self.players.values().filter(over).map(|p| p.id).collect()
    }

    /// The seated players sitting out for `limit` at `t`.
    fn sat_out_for(&self, limit: Duration, t: Instant) -> Vec<PlayerId> {
        let over = |p: &&Player| p.seat.is_some() && p.sit_out.is_some_and(|since| since + limit <= t);
        self.players.values().filter(over).map(|p| p.id).collect()
    }

    /// The first reconnect window or sit-out limit to run out.
    fn next_expiry(&self, window: Duration, sit_out_limit: Duration) -> Option<Instant> {
        let each = |p: &Player| {
            let away = match p.presence {
                Presence::Away { since } => Some(since + window),
                _ => None,
            };
            let out = p.sit_out.filter(|_| p.seat.is_some()).map(|since| since + sit_out_limit);
            away.into_iter().chain(out).min()
        };
        self.players.values().filter_map(each).min()
    }

    /// The seated players.
    pub fn seated(&self) -> impl Iterator<Item = &PlayerId> {
        self.seats.iter().flatten()
    }

    /// Who holds `seat`, if anyone.
    pub fn seat_holder(&self, seat: Seat) -> Option<PlayerId> {
        self.seats.get(seat.index()).copied().flatten()
    }

    /// Whether no seat is taken.
    pub fn table_empty(&self) -> bool {
        self.seats.iter().all(Option::is_none)
    }

    /// How many seats the table has.
    pub fn seat_count(&self) -> usize {
        self.seats.len()
    }

    /// Everyone in the room, watchers included.
    pub fn players(&self) -> impl Iterator<Item = &Player> {
        self.players.values()
    }

    /// How many are in the room, watchers included.
    pub fn len(&self) -> usize {
        self.players.len()
    }

    /// The player `id`, if in the room.
    pub fn get(&self, id: &PlayerId) -> Option<&Player> {
        self.players.get(id)
    }

    /// The player `id`, if in the room.
    pub fn get_mut(&mut self, id: &PlayerId) -> Option<&mut Player> {
        self.players.get_mut(id)
    }

    /// The player on `conn`, if it is that player's current connection (not
    /// a stale one of a resumed session).
    pub fn on_conn(&self, conn: ConnId) -> Option<PlayerId> {
        let id = self.conns.get(&conn).copied()?;
        (self.players.get(&id)?.conn() == Some(conn)).then_some(id)
    }

    /// Players who left during the hand are forgotten once it is over.
    pub fn forget_left(&mut self) {
        self.players.retain(|_, p| !p.left());
    }
}

impl RoomCore {
    /// When a reconnect window, a sit-out limit or the under-filled table's
    /// wait runs out.
    pub(super) fn seat_deadline(&self) -> Option<Instant> {
        let next = self.roster.next_expiry(self.cfg.reconnect_window, self.cfg.sit_out_limit);
        next.into_iter().chain(self.dissolve_at()).chain(self.expire_at()).min()
    }

    /// Players whose reconnect window ran out leave.
    pub(super) fn expire_away(&mut self, now: Now) {
        for id in self.roster.away_expired(self.cfg.reconnect_window, now.at) {
            tracing::info!(room = %self.cfg.id, player = %id.short(), "reconnect window over: player left");
            self.remove_player(&id, false);
        }
    }

    /// Seats that sat out longer than `sit_out_limit` are freed.
    pub(super) fn free_squatters(&mut self, now: Now) {
        let limit = self.cfg.sit_out_limit;
        for id in self.roster.sat_out_for(limit, now.at) {
            let why = format!("sat out longer than {} s: the seat is freed", limit.as_secs());
            self.free_seat(now, &id, &why);
        }
    }

    /// A handshake verified on `conn`: admits the player (a new session, or
    /// the resumption of the one whose reconnect token it presents) or
    /// refuses with a reason.
    pub fn connect(&mut self, now: Now, conn: ConnId, v: &VerifiedPlayer) -> Result<Admit, Refusal> {
        self.clock = now;
        if !self.life.is_open() {
            return Err(Refusal::new(RejectReason::Refused, "the room is closing"));
        }
        let id = v.player.signing;
        let bucket = TokenBucket::new(self.limits.rate_per_sec, self.limits.rate_burst, now.at);
        if let Some(p) = self.roster.players.get_mut(&id) {
            let token_ok = v.reconnect_token.is_some_and(|t| ct_eq(&t, &p.token));
            if !token_ok || p.left() {
                // The seat is held for the session that owns the token.
                tracing::warn!(room = %self.cfg.id, player = %id.short(), "connection without the session's reconnect token refused");
                let why = match p.presence {
                    Presence::Away { since } => {
                        let left = (since + self.cfg.reconnect_window).saturating_duration_since(now.at);
                        format!(
                            "the seat is held for {} s more for the session of this key: resume it with its reconnect token",
                            left.as_secs().max(1)
                        )
                    }
                    Presence::Online(_) => {
                        "this key is connected on another connection: resume its session with its reconnect token"
                            .to_owned()
                    }
                    Presence::Left => "this key left the room; its hand is still running".to_owned(),
                };
                return Err(Refusal::new(RejectReason::Refused, why));
            }
            if p.encryption_key != v.player.encryption {
                return Err(Refusal::new(
                    RejectReason::Refused,
                    "the session was opened with another encryption key",
                ));
            }
            // Resume: the new connection replaces the old one.
            let old = p.conn();
            p.key = v.shared_key.clone();
            p.presence = Presence::Online(conn);
            p.resume();
            p.bucket = bucket;
            let admit = Admit { seat: p.seat, token: p.token };
            match old {
                Some(old) => {
                    self.roster.conns.remove(&old);
                    if let Some(f) = encode(&ServerMessage::Kicked(Kicked {
                        code: KickReason::Replaced,
                        reason: "another connection resumed this session".into(),
                    })) {
                        self.out.send(vec![old], f);
                    }
                    self.out.close(old, claw_protocol::close::REPLACED, "replaced");
                }
                None => inc(&self.metrics.players_connected),
            }
            self.roster.conns.insert(conn, id);
            tracing::info!(room = %self.cfg.id, player = %id.short(), seat = ?admit.seat, "player reconnected");
            return Ok(admit);
        }
        // Seats are a budget of their own (a seated player resumes above).
        self.admit_watcher(now)?;
        let token = Nonce::random(&mut *self.rng);
        let mut p = Player::new(v, conn, token, bucket, now.at);
        p.house_ai = self.ai.is_expected(&id);
        p.credit_score = self.roster.credit.get(&id).copied().unwrap_or(p.credit_score);
        self.roster.players.insert(id, p);
        self.roster.conns.insert(conn, id);
        inc(&self.metrics.players_connected);
        tracing::info!(room = %self.cfg.id, player = %id.short(), sdk = %v.sdk_version, "player connected");
        Ok(Admit { seat: None, token })
    }

    pub(super) fn ready(&mut self, now: Now, conn: ConnId) {
        let Some(id) = self.roster.conns.get(&conn).copied() else { return };
        let resend = self.roster.players.get_mut(&id).is_some_and(Player::take_resume);
        if resend {
            self.resend_hand(&id);
            self.resend_vote(&id);
            // A seat back online may complete a table waiting for players.
            self.schedule_start(now);
        }
    }

    pub(super) fn conn_closed(&mut self, now: Now, conn: ConnId) {
        let Some(id) = self.roster.conns.remove(&conn) else { return };
        let in_hand = self.in_hand(&id);
        let Some(p) = self.roster.players.get_mut(&id) else { return };
        if p.conn() != Some(conn) {
            return;
        }
        dec(&self.metrics.players_connected);
        if p.seat.is_none() && !in_hand {
            self.roster.players.remove(&id);
            tracing::info!(room = %self.cfg.id, player = %id.short(), "player disconnected (not seated)");
            return;
        }
        p.presence = Presence::Away { since: now.at };
        tracing::info!(room = %self.cfg.id, player = %id.short(), "player disconnected; seat held for the reconnect window");
        if self.hands.table.turn_of(&id).is_some() {
            self.metrics.conduct.flag(&id, crate::conduct::Flag::DisconnectOnTurn);
        }
        self.hurry_and_announce(now);
    }

    /// Sends `kicked` and closes the player's connection (the seat follows
    /// the disconnect rules).
    pub(super) fn kick_conn(&mut self, now: Now, id: &PlayerId, code: KickReason, close: u16, reason: &str) {
        self.send(id, &ServerMessage::Kicked(Kicked { code, reason: reason.to_owned() }));
        if let Some(c) = self.roster.players.get(id).and_then(Player::conn) {
            self.out.close(c, close, reason);
            self.conn_closed(now, c);
        }
    }

    /// A seat that sat out too long (or one too many) is freed: `kicked`
    /// `idle`, then the player leaves the room.
    pub(super) fn free_seat(&mut self, now: Now, id: &PlayerId, why: &str) {
        tracing::info!(room = %self.cfg.id, player = %id.short(), why, "sit-out seat freed");
        inc(&self.metrics.kicked_idle);
        self.send(id, &ServerMessage::Kicked(Kicked { code: KickReason::Idle, reason: why.to_owned() }));
        self.leave(now, id);
    }

    pub(super) fn join(&mut self, now: Now, id: &PlayerId, j: JoinRequest) {
        if let Some(n) = &j.name {
            if let Some(p) = self.roster.players.get_mut(id) {
                p.name = Some(n.clone());
            }
        }
        let already = self.roster.players.get(id).and_then(|p| p.seat);
        if already.is_some() {
            return self.join_accepted(now, id);
        }
        if !self.life.is_open() {
            return self.send(id, &join_refused(JoinRejectReason::RoomClosed, "the room is closing"));
        }
        if self.roster.seats.iter().all(Option::is_some) && !self.ai_yield_seat(id) {
            return self.send(id, &join_refused(JoinRejectReason::RoomFull, "every seat is taken"));
        }
        let Some(p) = self.roster.players.get_mut(id) else { return };
        if !p.start_join() {
            return; // the first request is still being answered
        }
        // A house AI was funded from the house-AI account: no welcome grant.
        let call = if p.house_ai { ChipCall::Balance(*id) } else { ChipCall::JoinBalance(*id) };
        self.out.call(call, Waiting::Join(*id, j));
    }

    pub(super) fn join_done(
        &mut self,
        now: Now,
        id: &PlayerId,
        j: JoinRequest,
        balance: Result<Chips, ChipFailure>,
    ) {
        let Some(p) = self.roster.players.get_mut(id) else { return };
        p.end_join();
        if p.left() || p.seat.is_some() {
            return;
        }
        let balance = match balance {
            Ok(b) => b,
            Err(e) => {
                inc(&self.metrics.chip_errors);
                tracing::warn!(room = %self.cfg.id, error = ?e, "balance check failed");
                return self
                    .send(id, &join_refused(JoinRejectReason::Other, "the chip service is unavailable"));
            }
        };
        if !self.life.is_open() {
            return self.send(id, &join_refused(JoinRejectReason::RoomClosed, "the room is closing"));
        }
        let free: Vec<usize> =
            (0..self.roster.seats.len()).filter(|i| self.roster.seats[*i].is_none()).collect();
        let Some(first) = free.first().copied() else {
            return self.send(id, &join_refused(JoinRejectReason::RoomFull, "every seat is taken"));
        };
        let need = self.cfg.buy_in.max(j.buy_in.unwrap_or_default()).max(self.min_balance());
        if balance < need {
            let m = format!("balance {balance} is below the {need} this room needs");
            return self.send(id, &join_refused(JoinRejectReason::InsufficientBalance, &m));
        }
        if balance < self.entry {
            let m = format!("balance {balance} is below this table's entry threshold of {}", self.entry);
            return self.send(id, &join_refused(JoinRejectReason::BelowEntry, &m));
        }
        let seat = j.seat.map(|s| s.index()).filter(|s| free.contains(s)).unwrap_or(first);
        self.roster.seats[seat] = Some(*id);
        self.roster.underfilled_since = None; // a newcomer: the wait starts again
        if let Some(p) = self.roster.players.get_mut(id) {
            p.seat = Some(Seat(seat as u8));
            p.balance = balance;
        }
        inc(&self.metrics.players_seated);
        self.ai_seated(id);
        tracing::info!(room = %self.cfg.id, player = %id.short(), seat, "player seated");
        self.join_accepted(now, id);
    }

    pub(super) fn join_accepted(&mut self, now: Now, id: &PlayerId) {
        let seat = self.roster.players.get(id).and_then(|p| p.seat);
        let waits = self.hands.table.is_playing() && !self.in_hand(id);
        let resp = ServerMessage::JoinResponse(JoinResponse {
            accepted: true,
            reason: None,
            message: waits.then(|| "a hand is running: you play from the next one".to_owned()),
            seat,
            room: Some(self.cfg.public()),
            players: self.table_players(),
        });
        self.send(id, &resp);
        self.schedule_start(now);
    }

    /// Chips a player needs for a hand: commission plus the minimum bet (at
    /// least one chip).
    pub(super) fn min_balance(&self) -> Chips {
        Chips(self.cfg.commission.0.saturating_add(self.cfg.min_bet.0.max(1)))
    }

    pub(super) fn sit_out(&mut self, now: Now, id: &PlayerId, out: bool) {
        let Some(p) = self.roster.players.get_mut(id) else { return };
        if !out {
            p.sit_out = None;
            p.sat_out_hands = 0;
            p.timeouts_in_a_row = 0;
            return;
        }
        if p.sit_out.is_some() || p.seat.is_none() {
            return;
        }
        p.sit_out = Some(now.at);
        // Too many seats sitting out: the one out longest is freed.
        let mut out: Vec<(Instant, PlayerId)> = self
            .roster
            .players
            .values()
            .filter(|p| p.seat.is_some())
            .filter_map(|p| p.sit_out.map(|since| (since, p.id)))
            .collect();
        if out.len() > usize::from(self.cfg.sit_out_seats) {
            out.sort();
            let why =
                format!("more than {} seats sit out: the seat out longest is freed", self.cfg.sit_out_seats);
            self.free_seat(now, &out[0].1, &why);
        }
    }

    pub(super) fn leave(&mut self, now: Now, id: &PlayerId) {
        let in_hand = self.hands.table.hand().is_some_and(|h| h.seat_of(id).is_some() && !h.is_over());
        tracing::info!(room = %self.cfg.id, player = %id.short(), in_hand, "player leaves");
        self.remove_player(id, true);
        // If the hand waits for this player, act for it now.
        if let Some(seat) = self.hands.table.turn_of(id) {
            self.timeout_action(now, seat);
        }
    }

    /// The player leaves the room: seat freed, connection closed. A player
    /// still in the hand stays in it (auto actions) until it ends.
    pub(super) fn remove_player(&mut self, id: &PlayerId, close_conn: bool) {
        self.match_player_left(id);
        let in_hand = self.in_hand(id);
        let Some(p) = self.roster.players.get_mut(id) else { return };
        if in_hand {
            p.credit_score -= 10;
            self.roster.credit.insert(*id, p.credit_score);
        }
        if let Some(s) = p.seat.take() {
            if let Some(slot) = self.roster.seats.get_mut(s.index()) {
                *slot = None;
            }
            dec(&self.metrics.players_seated);
        }
        let conn = p.conn();
        p.presence = Presence::Left;
        if let Some(c) = conn {
            self.roster.conns.remove(&c);
            dec(&self.metrics.players_connected);
            if close_conn {
                self.out.close(c, 1000, "left");
            }
        }
        if !in_hand {
            self.roster.players.remove(id);
        }
    }

    pub(super) fn in_hand(&self, id: &PlayerId) -> bool {
        self.hands.table.hand().is_some_and(|h| h.seat_of(id).is_some())
    }

    /// When the under-filled table is dissolved, if it is and the room
    /// dissolves tables.
    pub(super) fn dissolve_at(&self) -> Option<Instant> {
        let after = self.cfg.dissolve_after.filter(|d| !d.is_zero())?;
        Some(self.roster.underfilled_since? + after)
    }

    /// When the room expires for want of players, if it expires.
    pub(super) fn expire_at(&self) -> Option<Instant> {
        let after = self.cfg.expire_after.filter(|d| !d.is_zero())?;
        Some(self.roster.empty_since? + after)
    }

    /// Starts, keeps or stops the empty-room timer.
    pub(super) fn track_empty(&mut self, now: Now) {
        let empty = self.roster.table_empty() && !self.hands.table.is_busy() && self.life.is_open();
        if !empty {
            self.roster.empty_since = None;
        } else if self.roster.empty_since.is_none() {
            self.roster.empty_since = Some(now.at);
        }
    }

    /// Nobody sat for `expire_after`, or the table was dissolved: the room
    /// closes (everyone left gets `kicked` `room-closed`).
    pub(super) fn expire(&mut self, now: Now, why: &str) {
        tracing::info!(room = %self.cfg.id, why, "room expired");
        self.roster.empty_since = None;
        self.begin_close(now, Duration::ZERO);
    }

    /// Starts, keeps or stops the under-filled timer.
    pub(super) fn track_underfilled(&mut self, now: Now) {
        let seated = self.roster.seated().count();
        let under = (1..usize::from(self.cfg.min_players)).contains(&seated)
            && !self.hands.table.is_busy()
            && self.life.is_open();
        if !under {
            self.roster.underfilled_since = None;
        } else if self.roster.underfilled_since.is_none() {
            self.roster.underfilled_since = Some(now.at);
        }
    }

    /// The table stayed under-filled for `dissolve_after`: every seated
    /// player is told (`kicked` `dissolved`) and leaves; the room stays
    /// open for new players.
    pub(super) fn dissolve(&mut self) {
        self.roster.underfilled_since = None;
        let after = self.cfg.dissolve_after.unwrap_or_default().as_secs();
        let why = format!(
            "the room was dissolved: fewer than {} players for {after} s; join again, or quick-match to another table",
            self.cfg.min_players
        );
        let seated: Vec<PlayerId> = self.roster.seated().copied().collect();
        tracing::info!(room = %self.cfg.id, players = seated.len(), "under-filled table dissolved");
        for id in seated {
            self.send(
                &id,
                &ServerMessage::Kicked(Kicked { code: KickReason::Dissolved, reason: why.clone() }),
            );
            self.remove_player(&id, true);
        }
    }

    /// A hand is dealt: each seat sitting out it has sat out one more; after
    /// `sit_out_hands` the seat is freed.
    pub(super) fn count_sat_out_hand(&mut self, now: Now) {
        let limit = self.cfg.sit_out_hands;
        let mut free = Vec::new();
        for p in self.roster.players.values_mut().filter(|p| p.seat.is_some() && p.sit_out.is_some()) {
            p.sat_out_hands = p.sat_out_hands.saturating_add(1);
            if limit > 0 && p.sat_out_hands >= limit {
                free.push(p.id);
            }
        }
        for id in free {
            self.free_seat(now, &id, &format!("sat out {limit} hands: the seat is freed"));
        }
    }

    /// The room closed: everyone is told (`kicked` `room-closed`) and
    /// disconnected.
    pub(super) fn close_everyone(&mut self) {
        let ids: Vec<PlayerId> = self.roster.players.keys().copied().collect();
        let kicked = encode(&ServerMessage::Kicked(Kicked {
            code: KickReason::RoomClosed,
            reason: "the room closed".into(),
        }));
        if let Some(f) = kicked {
            self.send_frame(&ids, f);
        }
        for p in self.roster.players.values() {
            if let Some(c) = p.conn() {
                self.out.close(c, 1001, "room closed");
                dec(&self.metrics.players_connected);
            }
            if p.seat.is_some() {
                dec(&self.metrics.players_seated);
            }
        }
        self.roster.players.clear();
        self.roster.conns.clear();
    }
}

fn join_refused(reason: JoinRejectReason, message: &str) -> ServerMessage {
    ServerMessage::JoinResponse(JoinResponse {
        accepted: false,
        reason: Some(reason),
        message: Some(message.to_owned()),
        seat: None,
        room: None,
        players: Vec::new(),
    })
}
