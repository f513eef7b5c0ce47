//! Node configuration: the rooms TOML file and the node's listen addresses
//! and data directory. Room settings and limits are `claw-engine`'s.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::str::FromStr;
use std::time::Duration;

pub use claw_engine::room::config::{
    default_reveal, has_house, parse_duration, valid_room_id, ConfigError, EntropyMode, Limits, RevealPolicy,
    RoomConfig,
};
use claw_protocol::limits::{HANDSHAKE_DEADLINE_MS, MAX_PING_INTERVAL_MS};
use serde::{Deserialize, Serialize};

/// The rooms file: `[[room]]` tables and an optional `[chips]` table.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RoomsFile {
    /// The rooms, in file order.
    #[serde(default, deserialize_with = "rooms_with_defaults")]
    pub room: Vec<RoomConfig>,
    /// Where chips live (`type` and the provider's fields), kept as a plain
    /// table: the binary that picks the provider reads it (so this crate
    /// links no chain SDK), with its flags taking precedence.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chips: Option<toml::Table>,
    /// Rooms quick match may open (`[[template]]` tables, with a `[template.room]`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub template: Vec<crate::matchmaking::RoomTemplate>,
}

/// The `[[room]]` tables, each with its game-dependent defaults.
fn rooms_with_defaults<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<RoomConfig>, D::Error> {
    #[derive(Deserialize)]
    struct Room(#[serde(deserialize_with = "RoomConfig::deserialize_with_defaults")] RoomConfig);
    Ok(Vec::<Room>::deserialize(d)?.into_iter().map(|r| r.0).collect())
}

impl FromStr for RoomsFile {
    type Err = ConfigError;

    fn from_str(s: &str) -> Result<RoomsFile, ConfigError> {
        let f: RoomsFile = toml::from_str(s).map_err(|e| ConfigError::File(e.to_string()))?;
        if f.room.is_empty() {
            return Err(ConfigError::File("no [[room]] table".into()));
        }
        Ok(f)
    }
}

impl RoomsFile {
    /// Reads and parses a rooms file (not yet validated against the games).
    pub fn load(path: &std::path::Path) -> Result<RoomsFile, ConfigError> {
        let s = std::fs::read_to_string(path)
            .map_err(|e| ConfigError::File(format!("{}: {e}", path.display())))?;
        s.parse()
    }
}

/// Everything a dealer node needs besides its chip provider and identity.
#[derive(Debug, Clone)]
pub struct NodeConfig {
    /// WebSocket listen address (`127.0.0.1:0` picks a free port).
    pub listen: SocketAddr,
    /// Health and metrics HTTP listen address; none = no HTTP endpoint.
    pub http_listen: Option<SocketAddr>,
    /// Host name put in invite URLs; none = the listen address.
    pub public_host: Option<String>,
    /// Where the key file, transcripts and chip journals live.
    pub data_dir: PathBuf,
    /// The rooms this node serves.
    pub rooms: Vec<RoomConfig>,
    /// Connection and chip-call limits.
    pub limits: Limits,
    /// How long after a hand the web app shows it to spectators (none: 30 s).
    pub spectator_delay: Option<Duration>,
}

impl NodeConfig {
    /// A node on 127.0.0.1 with a free port, no HTTP endpoint, default limits.
    pub fn local(data_dir: impl Into<PathBuf>, rooms: Vec<RoomConfig>) -> NodeConfig {
        NodeConfig {
            listen: SocketAddr::from(([127, 0, 0, 1], 0)),
            http_listen: None,
            public_host: None,
            data_dir: data_dir.into(),
            rooms,
            limits: Limits::default(),
            spectator_delay: None,
        }
    }

    /// Validates every room (unique ids, known games — `extra` first, then
    /// the registry); returns the games in room order.
    pub fn validate(
        &mut self,
        extra: &[std::sync::Arc<dyn claw_games::DynGame>],
    ) -> Result<Vec<std::sync::Arc<dyn claw_games::DynGame>>, ConfigError> {
        if self.rooms.is_empty() {
            return Err(ConfigError::Node("no rooms".into()));
        }
        let mut seen = std::collections::HashSet::new();
        let mut games = Vec::new();
        for r in &mut self.rooms {
            if r.id == crate::matchmaking::QUICK_MATCH_PATH {
                return Err(ConfigError::Node(format!("room id {:?} is the quick-match path", r.id)));
            }
            if !seen.insert(r.id.clone()) {
                return Err(ConfigError::Node(format!("room id {:?} used twice", r.id)));
            }
            games.push(r.validate_with(extra)?);
        }
        let l = &self.limits;
        if l.max_connections == 0
            || l.max_frame_bytes < claw_protocol::messages::MAX_FRAME_BYTES
            || l.rate_per_sec == 0
            || l.frame_rate_per_sec == 0
            || l.frame_burst == 0
            || l.chip_attempts == 0
            || l.send_budget_bytes < claw_protocol::messages::MAX_FRAME_BYTES
            || l.send_grace.is_zero()
        {
            return Err(ConfigError::Node(
                "limits: max_connections, rate_per_sec, frame_rate_per_sec, frame_burst, chip_attempts and \
                 send_grace must be positive, \
                 max_frame_bytes and send_budget_bytes at least the protocol's 64 KiB"
                    .into(),
            ));
        }
        if l.max_watchers == 0
            || l.max_conns_per_identity == 0
            || l.max_conns_per_addr == 0
            || l.max_handshakes_per_addr == 0
            || l.max_handshakes == 0
            || l.handshake_concurrency == 0
            || l.idle_timeout.is_zero()
            || l.ping_interval.is_zero()
            || l.ping_interval > Duration::from_millis(MAX_PING_INTERVAL_MS)
        {
            return Err(ConfigError::Node(
                "limits: connection budgets and idle_timeout must be positive, ping_interval 1 ms to 10 s"
                    .into(),
            ));
        }
        if l.http_header_timeout.is_zero()
            || l.http_body_timeout.is_zero()
            || l.http_idle_timeout.is_zero()
            || l.http_max_connections == 0
            || l.http_max_conns_per_addr == 0
            || l.http_archive_reads_per_sec == 0
            || l.http_archive_burst == 0
        {
            return Err(ConfigError::Node(
                "limits: http_header_timeout, http_body_timeout, http_idle_timeout, http_max_connections, \
                 http_max_conns_per_addr, http_archive_reads_per_sec and http_archive_burst must be positive"
                    .into(),
            ));
        }
        if l.handshake_deadline.is_zero()
            || l.handshake_deadline > Duration::from_millis(HANDSHAKE_DEADLINE_MS)
        {
            return Err(ConfigError::Node(
                "limits: handshake_deadline must be positive and at most the protocol's 10 s".into(),
            ));
        }
        Ok(games)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use claw_protocol::Chips;
    use std::time::Duration;

    #[test]
    fn rooms_file_parses_with_defaults() {
        let f: RoomsFile = r#"
            [[room]]
            id = "t1"
            game = "texas-holdem"
            buy_in = 1000
            commission = 1
            action_timeout = "15s"
            between_hands = 0
            reveal = "deferred"
            reveal_delay = "1m"
            [room.settings]
            small_blind = 5

            [[room]]
            id = "bj"
            game = "blackjack"
            entropy = "dealer"
        "#
        .parse()
        .unwrap();
        assert_eq!(f.room.len(), 2);
        let r = &f.room[0];
        assert_eq!(r.buy_in, Chips(1000));
        assert_eq!(r.action_timeout, Duration::from_secs(15));
        assert_eq!(r.between_hands, Duration::ZERO);
        assert_eq!(r.reveal, RevealPolicy::Deferred);
        assert_eq!(r.reveal_delay, Some(Duration::from_secs(60)));
        assert_eq!(r.settings["small_blind"], 5);
        let b = &f.room[1];
        assert_eq!(b.entropy, EntropyMode::Dealer);
        assert_eq!(b.action_timeout, Duration::from_secs(30));
        assert_eq!(b.between_hands, Duration::from_secs(10));
        assert_eq!(b.reconnect_window, Duration::from_secs(60));
        assert_eq!(b.reveal, RevealPolicy::Full);
    }

    #[test]
    fn rooms_file_gives_sam_gong_the_same_reveal_default_as_the_flags() {
        let f: RoomsFile = "[[room]]\nid = \"sg\"\ngame = \"sam-gong\"\n\n\
                            [[room]]\nid = \"sg-full\"\ngame = \"sam-gong\"\nreveal = \"full\"\n\n\
                            [[room]]\nid = \"th\"\ngame = \"texas-holdem\"\n"
            .parse()
            .unwrap();
        assert_eq!(f.room[0].reveal, RevealPolicy::Deferred);
        assert_eq!(f.room[0].reveal, RoomConfig::new("x", "sam-gong").reveal);
        assert_eq!(f.room[1].reveal, RevealPolicy::Full, "an explicit policy wins");
        assert_eq!(f.room[2].reveal, RevealPolicy::Full);
        assert_eq!(default_reveal("sam-gong"), RevealPolicy::Deferred);
    }

    #[test]
    fn rooms_file_rejects_unknown_fields_and_empty() {
        assert!("[[room]]\nid = \"a\"\ngame = \"x\"\ntoken = \"secret\"\n".parse::<RoomsFile>().is_err());
        assert!("".parse::<RoomsFile>().is_err());
        assert!("[[room]]\nid = \"a\"\n".parse::<RoomsFile>().is_err());
    }

    #[test]
    fn limits_beyond_the_protocols_are_refused() {
        let room = RoomConfig::new("t", "texas-holdem");
        let mut c = NodeConfig::local("/nonexistent", vec![room.clone()]);
        assert!(c.validate(&[]).is_ok());
        for (deadline, ping) in [
            (Duration::from_millis(HANDSHAKE_DEADLINE_MS + 1), Duration::from_secs(5)),
            (Duration::ZERO, Duration::from_secs(5)),
            (Duration::from_secs(5), Duration::from_millis(MAX_PING_INTERVAL_MS + 1)),
        ] {
            let mut c = NodeConfig::local("/nonexistent", vec![room.clone()]);
            c.limits.handshake_deadline = deadline;
            c.limits.ping_interval = ping;
            assert!(matches!(c.validate(&[]), Err(ConfigError::Node(_))), "{deadline:?} {ping:?}");
        }
    }

    #[test]
    fn send_budget_defaults_are_the_specs_and_below_the_minimum_is_refused() {
        let spec = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../SPEC.md")).unwrap();
        let row = |label: &str| {
            spec.lines()
                .find(|l| l.starts_with(&format!("| {label}")))
                .unwrap_or_else(|| panic!("row {label}"))
        };
        let l = Limits::default();
        assert_eq!(l.send_budget_bytes, 262_144);
        assert!(row("Send budget of a connection").contains("default 262 144 bytes, ≥ 65 536"));
        assert_eq!(l.send_grace, Duration::from_millis(5_000));
        assert!(row("Grace of a connection behind").contains("default 5 000 ms"));
        assert_eq!(claw_protocol::messages::MAX_FRAME_BYTES, 65_536);
        let mut c =
            NodeConfig::local(std::path::Path::new("/tmp"), vec![RoomConfig::new("r", "texas-holdem")]);
        c.limits.send_budget_bytes = claw_protocol::messages::MAX_FRAME_BYTES - 1;
        assert!(matches!(c.validate(&[]), Err(ConfigError::Node(_))));
        c.limits.send_budget_bytes = claw_protocol::messages::MAX_FRAME_BYTES;
        c.limits.send_grace = Duration::ZERO;
        assert!(matches!(c.validate(&[]), Err(ConfigError::Node(_))));
    }
}
