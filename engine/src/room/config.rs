//! Room configuration and node limits: defaults, validation, and the public
//! view of a room's config that players may see.
//!
//! A room config holds no secret (the chip service token lives in the node's
//! chip provider, never here), so [`RoomConfig::public`] can be sent as is in
//! the handshake challenge and in `room-config` query answers.

use std::time::Duration;

use claw_protocol::Chips;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

/// Why a configuration was refused.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// A room's settings are unusable.
    #[error("room {room}: {reason}")]
    Room {
        /// The room id.
        room: String,
        /// What is wrong.
        reason: String,
    },
    /// The rooms file cannot be read or parsed.
    #[error("rooms file: {0}")]
    File(String),
    /// A node-wide setting is unusable.
    #[error("node config: {0}")]
    Node(String),
}

pub use claw_protocol::messages::{EntropyMode, RevealPolicy};

/// The registry's facts about `game` (`None` for a game it does not know).
fn meta_of(game: &str) -> Option<claw_games::GameMeta> {
    claw_games::registry::get(game).ok().map(|g| g.meta())
}

/// Whether `game` has a house bank that plays against the seats
/// ([`claw_games::GameMeta::house`]): only such rooms are granted a house
/// bankroll.
pub fn has_house(game: &str) -> bool {
    meta_of(game).is_some_and(|m| m.house)
}

/// The reveal policy of a room of `game` that names none, in every launch
/// path (flags, rooms file, demo, admin API): the game's
/// [`claw_games::GameMeta::default_reveal`].
pub fn default_reveal(game: &str) -> RevealPolicy {
    meta_of(game).map_or(RevealPolicy::Full, |m| m.default_reveal)
}

/// A duration written as `30s`, `500ms`, `2m` or a bare number of seconds.
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    let s = s.trim();
    let (num, unit) = match s.find(|c: char| !(c.is_ascii_digit() || c == '.')) {
        Some(i) => (&s[..i], s[i..].trim()),
        None => (s, "s"),
    };
    let v: f64 = num.parse().map_err(|_| format!("bad duration {s:?} (e.g. 30s, 500ms, 2m)"))?;
    let secs = match unit {
        "ms" => v / 1000.0,
        "s" => v,
        "m" => v * 60.0,
        _ => return Err(format!("bad duration unit in {s:?} (ms, s or m)")),
    };
    if !secs.is_finite() || !(0.0..=86_400.0 * 7.0).contains(&secs) {
        return Err(format!("duration {s:?} out of range (0 to 7 days)"));
    }
    Ok(Duration::from_secs_f64(secs))
}

/// Formats a duration as milliseconds, the form that round-trips through
/// [`parse_duration`].
fn fmt_duration(d: Duration) -> String {
    format!("{}ms", d.as_millis())
}

mod dur {
    use super::*;
    pub fn serialize<S: Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&fmt_duration(*d))
    }
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Num(f64),
            Str(String),
        }
        match Raw::deserialize(d)? {
            Raw::Num(n) => parse_duration(&n.to_string()).map_err(serde::de::Error::custom),
            Raw::Str(s) => parse_duration(&s).map_err(serde::de::Error::custom),
        }
    }
}

/// One room as written in the rooms file (`[[room]]` tables) or built from
/// command-line flags. Missing fields take the defaults shown in docs/dealer.md.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RoomConfig {
    /// Room id, the URL path: 1–64 chars of `[A-Za-z0-9_-]`.
    pub id: String,
    /// Registry name of the game (`texas-holdem`, `blackjack`, …).
    pub game: String,
    /// Game-specific settings (blinds, tiers, variants); `null` = defaults.
    #[serde(default)]
    pub settings: Value,
    /// Minimum chip balance to take a seat.
    #[serde(default)]
    pub buy_in: Chips,
    /// Smallest bet; passed to the game as `min_bet` when its settings accept it.
    #[serde(default)]
    pub min_bet: Chips,
    /// Largest bet; passed to the game as `max_bet` when its settings accept it.
    #[serde(default)]
    pub max_bet: Chips,
    /// Fixed fee debited from every player at hand start, paid to the dealer.
    #[serde(default)]
    pub commission: Chips,
    /// Players needed to start a hand; 0 = the game's minimum.
    #[serde(default)]
    pub min_players: u8,
    /// Seats at the table; 0 = the game's maximum.
    #[serde(default)]
    pub max_players: u8,
    /// Time a player has to act before the game's auto action is taken.
    #[serde(default = "d_action_timeout", with = "dur")]
    pub action_timeout: Duration,
    /// Pause between two hands.
    #[serde(default = "d_between_hands", with = "dur")]
    pub between_hands: Duration,
    /// How long the dealer waits for player seeds after `hand-prepare`.
    #[serde(default = "d_seed_timeout", with = "dur")]
    pub seed_timeout: Duration,
    /// How long a disconnected player keeps the seat.
    #[serde(default = "d_reconnect_window", with = "dur")]
    pub reconnect_window: Duration,
    /// Time an away player (connection lost, or a missed pong) has to act
    /// before its auto action, when shorter than `action_timeout`.
    #[serde(default = "d_away_timeout", with = "dur")]
    pub away_timeout: Duration,
    /// Longest a seat may sit out; then it is freed (`kicked` `idle`).
    #[serde(default = "d_sit_out_limit", with = "dur")]
    pub sit_out_limit: Duration,
    /// Most seats sitting out at once; one more frees the seat that has sat
    /// out longest. 0 = half the seats (at least one).
    #[serde(default)]
    pub sit_out_seats: u8,
    /// A seat whose turns are taken by the timer this many times in a row
    /// sits out from the next hand (its turns in the running hand are then
    /// as short as an away player's). 0 = never.
    #[serde(default = "d_timeouts_to_sit_out")]
    pub timeouts_to_sit_out: u8,
    /// A seat sitting out while this many hands are dealt without it is
    /// freed (`kicked` `idle`), whatever `sit_out_limit` says. 0 = never.
    #[serde(default = "d_sit_out_hands")]
    pub sit_out_hands: u16,
    /// `full`: every secret at hand end; `deferred`: folded cards and seeds
    /// are published when the room closes or `reveal_delay` after the hand.
    /// Default: [`default_reveal`] of the game (filled in by
    /// [`RoomConfig::new`] and [`RoomConfig::deserialize_with_defaults`]).
    #[serde(default = "d_reveal")]
    pub reveal: RevealPolicy,
    /// For `deferred`: publish this long after the hand (else at room close).
    #[serde(default, with = "opt_dur", skip_serializing_if = "Option::is_none")]
    pub reveal_delay: Option<Duration>,
    /// `joint` (default): dealer and player seeds; `dealer`: the dealer's only.
    #[serde(default = "d_entropy")]
    pub entropy: EntropyMode,
    /// Close the room after this many hands (demos); none = run forever.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_hands: Option<u64>,
    /// `dealer` (default): the dealer deals and seals; `blind`: a
    /// mental-poker deal the dealer cannot see (SPEC.md §9.7; Texas
    /// Hold'em, `entropy = "dealer"`).
    #[serde(default, skip_serializing_if = "claw_protocol::messages::DealMode::is_dealer")]
    pub deal: claw_protocol::messages::DealMode,
    /// Chips granted to the house account at start when the chip provider
    /// supports operator grants (the local ledger); games with a house bank.
    #[serde(default)]
    pub house_bankroll: Chips,
    /// The acting player gets `your-turn` again with `warning` ("10 s
    /// left") this long before its deadline; 0 = never.
    #[serde(default = "d_warn_time_left", with = "dur")]
    pub warn_time_left: Duration,
    /// `your-turn` carries a low-balance `warning` while the player's chips
    /// for the hand are below this; 0 = ten times what a hand needs
    /// (commission + max(min bet, 1)).
    #[serde(default)]
    pub low_balance_warning: Chips,
    /// A table with at least one but fewer than `min_players` seats taken,
    /// and no hand, for this long is dissolved: its players get `kicked`
    /// `dissolved` and leave. Unset = the game's default
    /// ([`default_dissolve_after`]); `0s` = never.
    #[serde(default, with = "opt_dur", skip_serializing_if = "Option::is_none")]
    pub dissolve_after: Option<Duration>,
    /// The seeds' room lifecycle (a created room nobody joins within 60 s
    /// is dissolved; a dissolved or emptied room is gone): a room with no
    /// seat taken for this long closes, and a room whose table is dissolved
    /// closes at once. Unset (the default, a node's standing rooms): never.
    #[serde(default, with = "opt_dur", skip_serializing_if = "Option::is_none")]
    pub expire_after: Option<Duration>,
    /// House-AI seats: empty seats are filled with the dealer's own bots
    /// while a person is seated (issue #30); unset = never.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ai_seats: Option<AiSeats>,
    /// Before a match starts, every dealable seat must send `ready` within
    /// this long or its seat is freed (`ready.rs`); 0 = no ready check.
    /// Default: [`default_match_votes`] of the game (Guandan 30 s).
    #[serde(default, with = "dur")]
    pub ready_check: Duration,
    /// At a match's end its players vote on a rematch for this long; a no,
    /// or a vote missing at the deadline, ends the match; 0 = no vote.
    /// Default: [`default_match_votes`] of the game (Guandan 30 s).
    #[serde(default, with = "dur")]
    pub rematch_vote: Duration,
    /// Watchers following the running hand (`watch`) trail it by this many
    /// player actions.
    /// Default: the game's (`GameMeta::watch_delay`: 5, Guandan 3).
    #[serde(default = "d_watch_delay")]
    pub watch_delay: u32,
    /// Most watchers following the running hand at once; 0 = no live feed.
    #[serde(default = "d_max_spectators")]
    pub max_spectators: u16,
}

/// The strength of a house AI: Guandan's L1–L3 (`1`, `2`, `3` in a rooms
/// file); the other games have one AI each.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(try_from = "u8", into = "u8")]
pub enum AiLevel {
    /// Level 1: plays the lowest legal combination.
    L1,
    /// Level 2: the game's default AI.
    L2,
    /// Level 3: the strongest.
    L3,
}

impl TryFrom<u8> for AiLevel {
    type Error = String;
    fn try_from(n: u8) -> Result<AiLevel, String> {
        match n {
            1 => Ok(AiLevel::L1),
            2 => Ok(AiLevel::L2),
            3 => Ok(AiLevel::L3),
            _ => Err(format!("AI level {n}: the levels are 1, 2 and 3")),
        }
    }
}

impl From<AiLevel> for u8 {
    fn from(l: AiLevel) -> u8 {
        match l {
            AiLevel::L1 => 1,
            AiLevel::L2 => 2,
            AiLevel::L3 => 3,
        }
    }
}

/// A room's house-AI seats (`ai_seats = { after = "5s", chips = 10000 }`):
/// while at least one person is seated, empty seats are filled with the
/// dealer's own bots `after` the table last changed; their chips are
/// transferred from the operator's house-AI account, never minted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AiSeats {
    /// Wait from a person's seating (or a seat freeing) to the filling.
    #[serde(default = "d_ai_after", with = "dur")]
    pub after: Duration,
    /// The AI's strength (Guandan only); unset = the game's default AI.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub level: Option<AiLevel>,
    /// Chips an AI seat starts with, transferred from the house-AI account
    /// (topping up an AI identity that still holds some). 0 = ten times
    /// what the room needs to seat a player (its buy-in, entry threshold or
    /// minimum, whichever is largest), at least 10 000.
    #[serde(default)]
    pub chips: Chips,
    /// Seats to fill up to; 0 = every seat.
    #[serde(default)]
    pub fill_to: u8,
    /// A disconnected person's seat is given to an AI after this grace
    /// (only while another person is seated; shorter than the reconnect
    /// window). Unset = never: the reconnect window holds the seat.
    #[serde(default, with = "opt_dur", skip_serializing_if = "Option::is_none")]
    pub takeover: Option<Duration>,
}

/// The least chips an AI seat gets when `ai_seats.chips` is 0 (a welcome
/// grant's worth).
pub const DEFAULT_AI_CHIPS: u64 = 10_000;

fn d_ai_after() -> Duration {
    Duration::from_secs(5)
}

impl AiSeats {
    /// Fill every seat after `after`, the game's default AI, the room's
    /// chips, no takeover.
    pub fn after(after: Duration) -> AiSeats {
        AiSeats { after, level: None, chips: Chips::ZERO, fill_to: 0, takeover: None }
    }
}

/// The game's default for [`RoomConfig::ready_check`] and
/// [`RoomConfig::rematch_vote`] ([`claw_games::GameMeta::match_votes_secs`];
/// zero: none).
pub fn default_match_votes(game: &str) -> Duration {
    Duration::from_secs(meta_of(game).map_or(0, |m| m.match_votes_secs))
}

/// The game's default for [`RoomConfig::watch_delay`]
/// ([`claw_games::GameMeta::watch_delay`]; 5 for a game not registered).
pub fn default_watch_delay(game: &str) -> u32 {
    meta_of(game).map_or(5, |m| m.watch_delay)
}

/// The game's default for [`RoomConfig::dissolve_after`]
/// ([`claw_games::GameMeta::dissolve_after_secs`]; zero: never).
pub fn default_dissolve_after(game: &str) -> Duration {
    Duration::from_secs(meta_of(game).map_or(0, |m| m.dissolve_after_secs))
}

mod opt_dur {
    use super::*;
    pub fn serialize<S: Serializer>(d: &Option<Duration>, s: S) -> Result<S::Ok, S::Error> {
        match d {
            Some(d) => super::dur::serialize(d, s),
            None => s.serialize_none(),
        }
    }
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Duration>, D::Error> {
        super::dur::deserialize(d).map(Some)
    }
}

fn d_reveal() -> RevealPolicy {
    RevealPolicy::Full
}
fn d_entropy() -> EntropyMode {
    EntropyMode::Joint
}
fn d_action_timeout() -> Duration {
    Duration::from_secs(30)
}
fn d_between_hands() -> Duration {
    Duration::from_secs(10)
}
fn d_seed_timeout() -> Duration {
    Duration::from_secs(2)
}
fn d_reconnect_window() -> Duration {
    Duration::from_secs(60)
}
fn d_away_timeout() -> Duration {
    Duration::from_secs(5)
}
fn d_sit_out_limit() -> Duration {
    Duration::from_secs(300)
}
fn d_timeouts_to_sit_out() -> u8 {
    3
}
fn d_sit_out_hands() -> u16 {
    3
}
fn d_warn_time_left() -> Duration {
    Duration::from_secs(10)
}
fn d_watch_delay() -> u32 {
    5
}
fn d_max_spectators() -> u16 {
    50
}

impl RoomConfig {
    /// A room of `game` with every other field at its default.
    pub fn new(id: impl Into<String>, game: impl Into<String>) -> RoomConfig {
        let game = game.into();
        let votes = default_match_votes(&game);
        let watch_delay = default_watch_delay(&game);
        RoomConfig {
            id: id.into(),
            reveal: default_reveal(&game),
            game,
            settings: Value::Null,
            buy_in: Chips::ZERO,
            min_bet: Chips::ZERO,
            max_bet: Chips::ZERO,
            commission: Chips::ZERO,
            min_players: 0,
            max_players: 0,
            action_timeout: d_action_timeout(),
            between_hands: d_between_hands(),
            seed_timeout: d_seed_timeout(),
            reconnect_window: d_reconnect_window(),
            away_timeout: d_away_timeout(),
            sit_out_limit: d_sit_out_limit(),
            sit_out_seats: 0,
            timeouts_to_sit_out: d_timeouts_to_sit_out(),
            sit_out_hands: d_sit_out_hands(),
            reveal_delay: None,
            entropy: EntropyMode::Joint,
            max_hands: None,
            house_bankroll: Chips::ZERO,
            deal: Default::default(),
            warn_time_left: d_warn_time_left(),
            low_balance_warning: Chips::ZERO,
            dissolve_after: None,
            expire_after: None,
            ai_seats: None,
            ready_check: votes,
            rematch_vote: votes,
            watch_delay,
            max_spectators: d_max_spectators(),
        }
    }

    /// Deserialises a room as written (a rooms-file table, an admin API
    /// body) and gives the fields it omits their game-dependent defaults
    /// (the reveal policy, [`default_reveal`]; the ready check and rematch vote, [`default_match_votes`]). Every reader of room configs
    /// goes through here, so that no launch path has another default.
    pub fn deserialize_with_defaults<'de, D: Deserializer<'de>>(d: D) -> Result<RoomConfig, D::Error> {
        let fields = Value::deserialize(d)?;
        let given = |f: &str| fields.get(f).is_some();
        let mut room = RoomConfig::deserialize(&fields).map_err(serde::de::Error::custom)?;
        if !given("reveal") {
            room.reveal = default_reveal(&room.game);
        }
        if !given("ready_check") {
            room.ready_check = default_match_votes(&room.game);
        }
        if !given("rematch_vote") {
            room.rematch_vote = default_match_votes(&room.game);
        }
        if !given("watch_delay") {
            room.watch_delay = default_watch_delay(&room.game);
        }
        Ok(room)
    }

    fn err(&self, reason: impl Into<String>) -> ConfigError {
        ConfigError::Room { room: self.id.clone(), reason: reason.into() }
    }

    /// Checks the room against its game (from the games registry) and fills
    /// in the game-dependent defaults (player counts, normalised settings).
    /// Returns the game.
    pub fn validate(&mut self) -> Result<std::sync::Arc<dyn claw_games::DynGame>, ConfigError> {
        self.validate_with(&[])
    }

    /// Like [`RoomConfig::validate`], looking the game up in `extra` first
    /// (games that are not in the registry, e.g. test games).
    pub fn validate_with(
        &mut self,
        extra: &[std::sync::Arc<dyn claw_games::DynGame>],
    ) -> Result<std::sync::Arc<dyn claw_games::DynGame>, ConfigError> {
        if !valid_room_id(&self.id) {
            return Err(self.err("room id must be 1–64 chars of [A-Za-z0-9_-]"));
        }
        let game = match extra.iter().find(|g| g.meta().name == self.game) {
            Some(g) => g.clone(),
            None => claw_games::registry::get(&self.game).map_err(|e| self.err(e.to_string()))?,
        };
        let meta = game.meta();
        if self.min_players == 0 {
            self.min_players = meta.min_players;
        }
        if self.max_players == 0 {
            self.max_players = meta.max_players;
        }
        if self.min_players < meta.min_players || self.max_players > meta.max_players {
            return Err(self.err(format!(
                "{} seats {}–{} players; asked for {}–{}",
                meta.name, meta.min_players, meta.max_players, self.min_players, self.max_players
            )));
        }
        if self.min_players > self.max_players {
            return Err(self.err("min_players is above max_players"));
        }
        if self.max_bet.0 != 0 && self.min_bet > self.max_bet {
            return Err(self.err("min_bet is above max_bet"));
        }
        // Without a bankroll a house game refuses every bet: refused here,
        // in every launch path (flags, rooms file, admin API).
        match (meta.house, self.house_bankroll.0 > 0) {
            (true, false) => {
                return Err(self.err(format!(
                    "{} has a house: give it a bankroll (house_bankroll = N in a rooms file or the \
                     admin API, --house-bankroll N on the command line)",
                    meta.name
                )))
            }
            (false, true) => {
                return Err(self.err(format!("{} has no house: house_bankroll does not apply", meta.name)))
            }
            _ => {}
        }
        if self.action_timeout < Duration::from_millis(10) {
            return Err(self.err("action_timeout must be at least 10ms"));
        }
        if self.dissolve_after.is_none() {
            self.dissolve_after = Some(default_dissolve_after(&self.game));
        }
        if self.sit_out_seats == 0 {
            self.sit_out_seats = (self.max_players / 2).max(1);
        }
        if self.reveal == RevealPolicy::Full && self.reveal_delay.is_some() {
            return Err(self.err("reveal_delay only applies to reveal = \"deferred\""));
        }
        if !(self.settings.is_null() || self.settings.is_object()) {
            return Err(self.err("settings must be a table"));
        }
        if self.deal == claw_protocol::messages::DealMode::Blind {
            crate::hand::blind_offered(&meta).map_err(|e| self.err(e.to_string()))?;
            if self.entropy != EntropyMode::Dealer {
                return Err(self.err(
                    "deal = \"blind\" needs entropy = \"dealer\" (the players' shuffles order the deck)",
                ));
            }
        }
        self.settings = normalize_with_bets(game.as_ref(), &self.settings, self.min_bet, self.max_bet)
            .map_err(|e| self.err(format!("settings: {e}")))?;
        if self.deal == claw_protocol::messages::DealMode::Blind
            && game.scripted_deck(&self.settings, 0).map_err(|e| self.err(e.to_string()))?.is_some()
        {
            return Err(self.err(crate::hand::BlindRefusal::Scripted.to_string()));
        }
        self.validate_ai_seats(game.as_ref())?;
        Ok(game)
    }

    /// Checks `ai_seats` and fills in its chips (0: the room's need).
    fn validate_ai_seats(&mut self, game: &dyn claw_games::DynGame) -> Result<(), ConfigError> {
        let Some(mut ai) = self.ai_seats else { return Ok(()) };
        let meta = game.meta();
        match ai.level {
            Some(_) if meta.ai_levels == 0 => {
                return Err(self.err(format!("ai_seats.level: {} has one AI and no levels", meta.name)))
            }
            Some(l) if u8::from(l) > meta.ai_levels => {
                return Err(
                    self.err(format!("ai_seats.level: {} has AI levels 1–{}", meta.name, meta.ai_levels))
                )
            }
            _ => {}
        }
        if ai.fill_to > self.max_players {
            return Err(self.err(format!(
                "ai_seats.fill_to {} is above the room's {} seats",
                ai.fill_to, self.max_players
            )));
        }
        if self.dissolve_after.is_some_and(|d| !d.is_zero() && ai.after >= d) {
            return Err(self.err(
                "ai_seats.after must be shorter than dissolve_after (the table would be dissolved first)",
            ));
        }
        if ai.takeover.is_some_and(|t| t >= self.reconnect_window) {
            return Err(self.err(
                "ai_seats.takeover must be shorter than reconnect_window (the seat is held that long anyway)",
            ));
        }
        let min = self.commission.0.saturating_add(self.min_bet.0.max(1));
        let entry = game.entry_chips(&self.settings).map_err(|e| self.err(format!("settings: {e}")))?;
        let need = self.buy_in.0.max(min).max(entry.0);
        if ai.chips.0 == 0 {
            ai.chips = Chips(need.saturating_mul(10).max(DEFAULT_AI_CHIPS));
        } else if ai.chips.0 < need {
            return Err(self.err(format!(
                "ai_seats.chips {} is below the {need} chips this room needs to seat a player",
                ai.chips
            )));
        }
        self.ai_seats = Some(ai);
        Ok(())
    }

    /// What players may see of this room (`join-response`, `room-config`
    /// query). A room config holds no secret; this is a subset of it.
    pub fn public(&self) -> claw_protocol::messages::RoomConfig {
        claw_protocol::messages::RoomConfig {
            room_id: self.id.clone(),
            game: self.game.clone(),
            settings: self.settings.clone(),
            buy_in: self.buy_in,
            min_bet: self.min_bet,
            max_bet: self.max_bet,
            commission: self.commission,
            min_players: self.min_players,
            max_players: self.max_players,
            entropy: self.entropy,
            reveal: self.reveal,
            action_timeout_ms: u64::try_from(self.action_timeout.as_millis()).unwrap_or(u64::MAX),
            between_hands_ms: u64::try_from(self.between_hands.as_millis()).unwrap_or(u64::MAX),
            seed_timeout_ms: u64::try_from(self.seed_timeout.as_millis()).unwrap_or(u64::MAX),
            reveal_delay_ms: self.reveal_delay.map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX)),
            deal: self.deal,
        }
    }
}

/// The game's normalised settings, with the room's `min_bet`/`max_bet` passed
/// in as settings fields when the game accepts them and the settings do not
/// already set them.
fn normalize_with_bets(
    game: &dyn claw_games::DynGame,
    settings: &Value,
    min_bet: Chips,
    max_bet: Chips,
) -> Result<Value, claw_games::GameError> {
    let mut obj = match settings {
        Value::Object(m) => m.clone(),
        _ => serde_json::Map::new(),
    };
    let mut added = false;
    for (k, v) in [("min_bet", min_bet), ("max_bet", max_bet)] {
        if v.0 != 0 && !obj.contains_key(k) {
            obj.insert(k.to_owned(), Value::from(v.0));
            added = true;
        }
    }
    if added {
        if let Ok(n) = game.normalize_settings(&Value::Object(obj)) {
            return Ok(n);
        }
    }
    game.normalize_settings(settings)
}

/// Room ids are URL path segments: 1–64 chars of `[A-Za-z0-9_-]`.
pub fn valid_room_id(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= 64
        && id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// Limits that protect the node from floods and slow peers.
#[derive(Debug, Clone, PartialEq)]
pub struct Limits {
    /// Open WebSocket connections, handshaking or not.
    pub max_connections: usize,
    /// Largest WebSocket message, in bytes: a longer one closes the
    /// connection. Messages over the protocol's 64 KiB frame limit but under
    /// this one get an `error` (oversize) and the connection stays.
    pub max_frame_bytes: usize,
    /// Time from TCP accept to the end of the 4-step handshake.
    pub handshake_deadline: Duration,
    /// Messages per second per player, shared by queries and every message
    /// the dealer did not ask for (actions on the player's turn and seeds
    /// during seed collection are paced by the dealer and do not count).
    pub rate_per_sec: u32,
    /// Messages allowed in a burst above the steady rate.
    pub rate_burst: u32,
    /// Raw frames per second read from one connection, whatever they are:
    /// past it the reader pauses (frames are delayed, never dropped).
    pub frame_rate_per_sec: u32,
    /// Frames allowed in a burst above `frame_rate_per_sec`.
    pub frame_burst: u32,
    /// Rate-limited messages in a row after which the connection is closed.
    pub flood_close_after: u32,
    /// Time allowed for one chip provider call (then retried with the same key).
    pub chip_timeout: Duration,
    /// Attempts per chip call for retryable failures.
    pub chip_attempts: u32,
    /// Bytes queued for one connection and not yet handed to its socket
    /// above which its reader is behind (SPEC §12). Four times this closes
    /// it at once (1008 `too slow`).
    pub send_budget_bytes: usize,
    /// How long a connection may stay behind before it is closed (1008
    /// `too slow`); one that catches up within it stays. The room and the
    /// other players never wait for it.
    pub send_grace: Duration,
    /// An unseated connection (not seated, not in the hand) that sent no
    /// join request or query for this long is kicked (`idle`).
    pub idle_timeout: Duration,
    /// Unseated connections per room (watchers and players about to join);
    /// seats are a budget of their own. A newcomer beyond it makes the
    /// longest-idle watcher leave (`kicked` `idle`).
    pub max_watchers: usize,
    /// Authenticated connections per identity, node-wide.
    pub max_conns_per_identity: usize,
    /// Open connections per source address (handshaking or not), checked
    /// before the node-wide cap; beyond it a socket is closed at once.
    pub max_conns_per_addr: usize,
    /// Connections per source address still in the handshake.
    pub max_handshakes_per_addr: usize,
    /// Connections in the handshake, node-wide (then HTTP 503).
    pub max_handshakes: usize,
    /// Handshake steps (parsing, signing, verifying a hello or a response)
    /// computed at once, node-wide; the others wait their turn within their
    /// deadline, so a storm of handshakes cannot crowd out running hands.
    pub handshake_concurrency: usize,
    /// WebSocket ping interval (at most 10 s): a ping still unanswered at
    /// the next one closes the connection, and the player is away.
    pub ping_interval: Duration,
    /// Queries per second one room answers, all players together (burst
    /// the same); beyond it a query gets `query-error` `rate-limited`.
    pub room_queries_per_sec: u32,
    /// HTTP port: time from a request's first byte to the end of its
    /// headers; a slower request (slow loris) has its connection closed.
    pub http_header_timeout: Duration,
    /// HTTP port: time from the end of a request's headers to the end of
    /// its body; a slower body is refused (400) and its connection closed.
    pub http_body_timeout: Duration,
    /// HTTP port: a connection with no request in progress that read and
    /// wrote nothing for this long is closed (keep-alive idle, a silent
    /// socket, a reader that stopped reading its answer).
    pub http_idle_timeout: Duration,
    /// HTTP port: open connections, node-wide. A newcomer beyond it closes
    /// the connection idle longest; with none idle it is refused (503).
    pub http_max_connections: usize,
    /// HTTP port: open connections per source address, checked first;
    /// beyond it a socket is refused (503) and closed at once.
    pub http_max_conns_per_addr: usize,
    /// HTTP port: archive reads (hand lists, transcripts, hand histories,
    /// hand records) per second per source address; beyond it `429`.
    pub http_archive_reads_per_sec: u32,
    /// HTTP port: the burst of archive reads one address may make at once.
    pub http_archive_burst: u32,
    /// Abuse rule: this many flags (hands voided by its input, turns timed
    /// out, disconnects on its turn) within `abuse_window_hands` of an
    /// identity's hands ban it for `abuse_ban` (0: no rule).
    pub abuse_flags: u32,
    /// Abuse rule: the hands the flags are counted over.
    pub abuse_window_hands: u32,
    /// Abuse rule: how long the ban lasts.
    pub abuse_ban: Duration,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            max_connections: 10_000,
            max_frame_bytes: 256 * 1024,
            handshake_deadline: Duration::from_millis(claw_protocol::limits::HANDSHAKE_DEADLINE_MS),
            rate_per_sec: 10,
            rate_burst: 10,
            frame_rate_per_sec: 1000,
            frame_burst: 200,
            flood_close_after: 50,
            chip_timeout: Duration::from_secs(5),
            chip_attempts: 3,
            send_budget_bytes: 256 * 1024,
            send_grace: Duration::from_secs(5),
            idle_timeout: Duration::from_secs(30),
            max_watchers: 64,
            max_conns_per_identity: 4,
            max_conns_per_addr: 128,
            max_handshakes_per_addr: 32,
            max_handshakes: 1024,
            handshake_concurrency: 2,
            ping_interval: Duration::from_secs(5),
            room_queries_per_sec: 200,
            http_header_timeout: Duration::from_secs(10),
            http_body_timeout: Duration::from_secs(30),
            http_idle_timeout: Duration::from_secs(30),
            http_max_connections: 512,
            http_max_conns_per_addr: 32,
            http_archive_reads_per_sec: 20,
            http_archive_burst: 40,
            abuse_flags: 0,
            abuse_window_hands: 10,
            abuse_ban: Duration::from_secs(24 * 3600),
        }
    }
}

/// A limit's value as the operator writes it (`--limit NAME=VALUE`).
trait LimitValue: Sized {
    fn parse(text: &str) -> Result<Self, String>;
    fn show(&self) -> String;
}

impl LimitValue for usize {
    fn parse(text: &str) -> Result<usize, String> {
        text.trim().replace('_', "").parse().map_err(|_| format!("{text:?} is not a whole number"))
    }
    fn show(&self) -> String {
        self.to_string()
    }
}

impl LimitValue for u32 {
    fn parse(text: &str) -> Result<u32, String> {
        text.trim()
            .replace('_', "")
            .parse()
            .map_err(|_| format!("{text:?} is not a whole number up to 2^32 - 1"))
    }
    fn show(&self) -> String {
        self.to_string()
    }
}

impl LimitValue for Duration {
    fn parse(text: &str) -> Result<Duration, String> {
        parse_duration(text)
    }
    fn show(&self) -> String {
        fmt_duration(*self)
    }
}

/// Every field of [`Limits`] by name, once: `get`, `set` and `NAMES` follow.
macro_rules! limit_table {
    ($($name:ident),* $(,)?) => {
        impl Limits {
            /// The names of every limit, in declaration order.
            pub const NAMES: &'static [&'static str] = &[$(stringify!($name)),*];

            /// A limit's value as text (durations in ms), `None` for an unknown name.
            pub fn get(&self, name: &str) -> Option<String> {
                match name {
                    $(stringify!($name) => Some(LimitValue::show(&self.$name)),)*
                    _ => None,
                }
            }

            /// Sets one limit from text (`30s`, `500ms`, `10000`); the node
            /// checks the whole set when it starts.
            pub fn set(&mut self, name: &str, text: &str) -> Result<(), String> {
                match name {
                    $(stringify!($name) => {
                        self.$name = LimitValue::parse(text).map_err(|e| format!("limit {name}: {e}"))?;
                        Ok(())
                    })*
                    _ => Err(format!("no limit {name:?}; the limits are: {}", Limits::NAMES.join(", "))),
                }
            }
        }
    };
}

limit_table!(
    max_connections,
    max_frame_bytes,
    handshake_deadline,
    rate_per_sec,
    rate_burst,
    frame_rate_per_sec,
    frame_burst,
    flood_close_after,
    chip_timeout,
    chip_attempts,
    send_budget_bytes,
    send_grace,
    idle_timeout,
    max_watchers,
    max_conns_per_identity,
    max_conns_per_addr,
    max_handshakes_per_addr,
    max_handshakes,
    handshake_concurrency,
    ping_interval,
    room_queries_per_sec,
    http_header_timeout,
    http_body_timeout,
    http_idle_timeout,
    http_max_connections,
    http_max_conns_per_addr,
    http_archive_reads_per_sec,
    http_archive_burst,
    abuse_flags,
    abuse_window_hands,
    abuse_ban,
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(parse_duration("30s").unwrap(), Duration::from_secs(30));
        assert_eq!(parse_duration("500ms").unwrap(), Duration::from_millis(500));
        assert_eq!(parse_duration("2m").unwrap(), Duration::from_secs(120));
        assert_eq!(parse_duration("1.5").unwrap(), Duration::from_millis(1500));
        assert_eq!(parse_duration("0").unwrap(), Duration::ZERO);
        for bad in ["", "s", "-1s", "3h", "1e9", "abc", "99999999s"] {
            assert!(parse_duration(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn every_limit_is_named_and_round_trips_through_text() {
        let defaults = Limits::default();
        let mut l = Limits::default();
        for name in Limits::NAMES {
            let text = defaults.get(name).unwrap();
            l.set(name, &text).unwrap();
        }
        assert_eq!(l, defaults);
        // Debug lists every field: the table misses none.
        assert_eq!(format!("{defaults:?}").matches(": ").count(), Limits::NAMES.len());
        l.set("idle_timeout", "2m").unwrap();
        assert_eq!(l.idle_timeout, Duration::from_secs(120));
        l.set("max_watchers", "1_000").unwrap();
        assert_eq!(l.max_watchers, 1000);
        assert!(l.set("max_watchers", "-1").unwrap_err().contains("max_watchers"));
        assert!(l.set("rate_per_sec", "1e3").is_err());
        assert!(l.set("no_such", "1").unwrap_err().contains("frame_burst"));
    }

    #[test]
    fn room_ids() {
        assert!(valid_room_id("holdem-1_A"));
        for bad in ["", "a/b", "a b", "ä", &"x".repeat(65), "..", "a?b", "a#b"] {
            assert!(!valid_room_id(bad), "{bad}");
        }
    }

    #[test]
    fn unknown_game_is_refused() {
        let mut r = RoomConfig::new("r", "no-such-game");
        assert!(matches!(r.validate(), Err(ConfigError::Room { .. })));
        let mut r = RoomConfig::new("bad/id", "no-such-game");
        assert!(r.validate().is_err());
    }

    /// Every launch path (flags, rooms file, admin API) validates here: a
    /// house game without a bankroll and a bankroll without a house are
    /// refused with the reason, by name.
    #[test]
    fn a_house_needs_a_bankroll_and_only_a_house_takes_one() {
        let mut bj = RoomConfig::new("bj", "blackjack");
        let e = bj.validate().err().expect("refused").to_string();
        assert!(
            e.contains("bj") && e.contains("blackjack has a house") && e.contains("house_bankroll"),
            "{e}"
        );
        bj.house_bankroll = Chips(1_000);
        assert!(bj.validate().is_ok());
        let mut holdem = RoomConfig::new("h", "texas-holdem");
        holdem.house_bankroll = Chips(1_000);
        let e = holdem.validate().err().expect("refused").to_string();
        assert!(e.contains("texas-holdem has no house"), "{e}");
        holdem.house_bankroll = Chips::ZERO;
        assert!(holdem.validate().is_ok());
    }

    #[test]
    fn config_round_trips_and_public_view() {
        let r = RoomConfig::new("r", "g");
        let v = serde_json::to_value(&r).unwrap();
        assert_eq!(v["action_timeout"], "30000ms");
        let back: RoomConfig = serde_json::from_value(v).unwrap();
        assert_eq!(back, r);
        let p = r.public();
        assert_eq!(p.room_id, "r");
        assert_eq!(p.action_timeout_ms, 30_000);
    }
}
