//! Quick match (SPEC.md §9.8): a player names a game and a tier, and the
//! node picks a listed room of that game and tier with a free seat, or
//! opens one from a room template when the operator gave one (rooms file
//! `[[template]]`). The choice is plain code ([`decide`]); [`Matchmaker`]
//! gathers the rooms' seats, holds a seat for each player sent to a room
//! until it sits down (or its connection ends), and opens rooms.
//!
//! The tier of a room is the `tier` member of its game settings (Sam
//! Gong's halls); its entry threshold is the game's entry chips for those
//! settings, checked again by the room at `join-request` (`below-entry`).

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use claw_games::DynGame;
use claw_protocol::messages::{Matched, QuickMatch};
use claw_protocol::{Chips, PlayerId};
use serde::{Deserialize, Serialize};

use crate::config::RoomConfig;
use crate::registry::{Listing, Registry};
use crate::room::{spawn_room, NodeContext, RoomHandle};

/// The WebSocket path of quick match (`ws://host:port/quick-match`); no
/// room is served at this id.
pub const QUICK_MATCH_PATH: &str = "quick-match";

/// How long a seat stays held for a player matched over HTTP, who has yet
/// to load the table page and connect.
pub const HTTP_HOLD: Duration = Duration::from_secs(15);

/// A room the operator lets quick match open: rooms `ID-1`, `ID-2`, … with
/// the template's settings, at most `max_rooms` at once; one closes once
/// nobody has sat in it for its `expire_after` (default 5 minutes).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RoomTemplate {
    /// The rooms' configuration; its `id` is the prefix of theirs.
    #[serde(deserialize_with = "RoomConfig::deserialize_with_defaults")]
    pub room: RoomConfig,
    /// Most rooms open from this template at once.
    #[serde(default = "d_max_rooms")]
    pub max_rooms: usize,
}

/// A template with its game, validated.
pub type CheckedTemplate = (RoomTemplate, Arc<dyn DynGame>);

fn d_max_rooms() -> usize {
    8
}

/// Longest quick match waits for one room to say who is seated.
const INSPECT_TIMEOUT: Duration = Duration::from_secs(2);

/// How long a room opened from a template stays with no seat taken.
pub const TEMPLATE_EXPIRY: Duration = Duration::from_secs(300);

/// Longest template id: room ids are at most 64 bytes, and the rooms
/// opened from it add `-N`.
pub const MAX_TEMPLATE_ID_LEN: usize = 56;

/// Why quick match found no room.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NoRoom {
    /// No listed room or template plays the game in that tier.
    #[error("no room plays {game}{}", tier.as_ref().map(|t| format!(" at tier {t}")).unwrap_or_default())]
    Unknown {
        /// The game asked for.
        game: String,
        /// The tier asked for.
        tier: Option<String>,
    },
    /// Every such room is full and no template may open another.
    #[error("every {game} room is full; try again shortly")]
    Full {
        /// The game asked for.
        game: String,
    },
    /// The template's room could not be opened.
    #[error("a new room could not be opened: {0}")]
    Open(String),
}

/// A listed room as quick match sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Candidate {
    /// The room id.
    pub id: String,
    /// The game.
    pub game: String,
    /// The `tier` member of its settings.
    pub tier: Option<String>,
    /// The game's entry threshold for its settings.
    pub entry: Chips,
    /// Seats taken plus seats held for matched players.
    pub taken: usize,
    /// Seats.
    pub seats: usize,
}

/// A template as quick match sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Opening {
    /// The template's index.
    pub index: usize,
    /// Its game.
    pub game: String,
    /// Its tier.
    pub tier: Option<String>,
    /// Its entry threshold.
    pub entry: Chips,
    /// Whether it may open another room.
    pub may_open: bool,
}

/// What quick match does for a request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// Send the player to this room.
    Join(String),
    /// Open a room from this template and send the player there.
    Open(usize),
}

/// Picks the room for `req`: among the rooms of its game and tier (any
/// tier when it names none) with a free seat, the lowest entry threshold
/// first (a player who names no tier starts at the entry tier), then the
/// fullest table (so tables fill up and start), then the first listed;
/// with none free, the first template of that game and tier (lowest entry
/// first) that may open a room.
pub fn decide(req: &QuickMatch, rooms: &[Candidate], templates: &[Opening]) -> Result<Decision, NoRoom> {
    let fits =
        |game: &str, tier: &Option<String>| game == req.game && (req.tier.is_none() || *tier == req.tier);
    let free = rooms
        .iter()
        .enumerate()
        .filter(|(_, r)| fits(&r.game, &r.tier) && r.taken < r.seats)
        .min_by_key(|(i, r)| (r.entry, std::cmp::Reverse(r.taken), *i));
    if let Some((_, r)) = free {
        return Ok(Decision::Join(r.id.clone()));
    }
    let open =
        templates.iter().filter(|t| fits(&t.game, &t.tier) && t.may_open).min_by_key(|t| (t.entry, t.index));
    if let Some(t) = open {
        return Ok(Decision::Open(t.index));
    }
    let any =
        rooms.iter().any(|r| fits(&r.game, &r.tier)) || templates.iter().any(|t| fits(&t.game, &t.tier));
    Err(match any {
        true => NoRoom::Full { game: req.game.clone() },
        false => NoRoom::Unknown { game: req.game.clone(), tier: req.tier.clone() },
    })
}

/// The `tier` member of a room's settings.
pub fn tier_of(cfg: &RoomConfig) -> Option<String> {
    cfg.settings.get("tier").and_then(|t| t.as_str()).map(str::to_owned)
}

fn entry_of(game: &dyn DynGame, cfg: &RoomConfig) -> Chips {
    game.entry_chips(&cfg.settings).unwrap_or(Chips::ZERO)
}

/// Who a held seat waits for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Holder {
    /// A socket that has not finished its handshake yet.
    Socket,
    /// The player that socket authenticated as.
    Player(PlayerId),
    /// A browser matched over HTTP from this address, until the instant.
    Http(IpAddr, Instant),
}

/// A template and the rooms opened from it.
struct Template {
    cfg: RoomTemplate,
    game: Arc<dyn DynGame>,
    /// The next suffix.
    next: AtomicU64,
}

/// Quick match for a node: its rooms, templates and held seats.
pub struct Matchmaker {
    rooms: Arc<Registry>,
    ctx: Arc<NodeContext>,
    templates: Vec<Template>,
    /// Seats held, by hold id: the room and whom it waits for.
    holds: Mutex<HashMap<u64, (String, Holder)>>,
    next_hold: AtomicU64,
    /// One decision at a time: two players never take the last seat.
    deciding: tokio::sync::Mutex<()>,
}

/// A seat held for a matched socket until it is dropped (the connection
/// ended) — or until the room shows its player seated.
pub struct SeatHold {
    matcher: Arc<Matchmaker>,
    id: u64,
}

impl SeatHold {
    /// The socket authenticated as `player`: the hold ends when `player`
    /// holds a seat in the room.
    pub fn authenticated(&self, player: PlayerId) {
        if let Some((_, h)) = self.matcher.lock().get_mut(&self.id) {
            *h = Holder::Player(player);
        }
    }
}

impl Drop for SeatHold {
    fn drop(&mut self) {
        self.matcher.lock().remove(&self.id);
    }
}

impl Matchmaker {
    /// Quick match over `rooms`, opening rooms from `templates` (each with
    /// its game, validated).
    pub fn new(rooms: Arc<Registry>, ctx: Arc<NodeContext>, templates: Vec<CheckedTemplate>) -> Matchmaker {
        Matchmaker {
            rooms,
            ctx,
            templates: templates
                .into_iter()
                .map(|(cfg, game)| Template { cfg, game, next: AtomicU64::new(1) })
                .collect(),
            holds: Mutex::new(HashMap::new()),
            next_hold: AtomicU64::new(1),
            deciding: tokio::sync::Mutex::new(()),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<u64, (String, Holder)>> {
        self.holds.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Matches a WebSocket: the room, and a seat held for it there until
    /// the returned guard drops or its player sits down.
    pub async fn for_socket(
        self: &Arc<Self>,
        req: &QuickMatch,
    ) -> Result<(RoomHandle, Matched, SeatHold), NoRoom> {
        let (room, matched, id) = self.pick(req, Holder::Socket).await?;
        Ok((room, matched, SeatHold { matcher: Arc::clone(self), id }))
    }

    /// Matches a browser over HTTP from `addr`: the room, with a seat held
    /// for [`HTTP_HOLD`] (one per address: a newer request replaces it).
    pub async fn for_http(self: &Arc<Self>, req: &QuickMatch, addr: IpAddr) -> Result<Matched, NoRoom> {
        self.lock().retain(|_, (_, h)| !matches!(h, Holder::Http(a, _) if *a == addr));
        let until = Instant::now() + HTTP_HOLD;
        self.pick(req, Holder::Http(addr, until)).await.map(|(_, m, _)| m)
    }

    /// Picks (or opens) the room and records a hold for `holder` there
    /// (returned: the hold's id).
    async fn pick(&self, req: &QuickMatch, holder: Holder) -> Result<(RoomHandle, Matched, u64), NoRoom> {
        let _one = self.deciding.lock().await;
        let listed: Vec<RoomHandle> = self
            .rooms
            .all()
            .into_iter()
            .filter(|(r, l)| *l == Listing::Public && r.config.game == req.game && !r.is_closed())
            .map(|(r, _)| r)
            .collect();
        let mut rooms = Vec::with_capacity(listed.len());
        let mut seated: HashMap<String, Vec<PlayerId>> = HashMap::new();
        for r in &listed {
            // A room too busy to answer is passed over, not waited for.
            let Ok(Some(s)) = tokio::time::timeout(INSPECT_TIMEOUT, r.inspect()).await else { continue };
            let ids: Vec<PlayerId> = s.players.iter().filter(|p| p.seat.is_some()).map(|p| p.id).collect();
            seated.insert(r.id.clone(), ids);
        }
        self.expire_holds(&seated);
        let held = self.held_per_room();
        for r in &listed {
            let Some(ids) = seated.get(&r.id) else { continue };
            let game = claw_games::registry::get(&r.config.game).ok();
            rooms.push(Candidate {
                id: r.id.clone(),
                game: r.config.game.clone(),
                tier: tier_of(&r.config),
                entry: game.map_or(Chips::ZERO, |g| entry_of(g.as_ref(), &r.config)),
                taken: ids.len() + held.get(&r.id).copied().unwrap_or(0),
                seats: usize::from(r.config.max_players),
            });
        }
        let openings: Vec<Opening> = self
            .templates
            .iter()
            .enumerate()
            .map(|(index, t)| Opening {
                index,
                game: t.cfg.room.game.clone(),
                tier: tier_of(&t.cfg.room),
                entry: entry_of(t.game.as_ref(), &t.cfg.room),
                may_open: self.opened_from(&t.cfg.room.id) < t.cfg.max_rooms,
            })
            .collect();
        let (room, opened) = match decide(req, &rooms, &openings)? {
            Decision::Join(id) => {
                (self.rooms.get(&id).ok_or(NoRoom::Full { game: req.game.clone() })?, false)
            }
            Decision::Open(i) => (self.open(i).await?, true),
        };
        let id = self.next_hold.fetch_add(1, Ordering::Relaxed);
        self.lock().insert(id, (room.id.clone(), holder));
        let matched = Matched {
            room_id: room.id.clone(),
            game: room.config.game.clone(),
            tier: tier_of(&room.config),
            opened,
        };
        tracing::info!(room = %matched.room_id, game = %req.game, tier = ?req.tier, opened, "quick match");
        Ok((room, matched, id))
    }

    /// Forgets the holds that are over: the player sat down, or the HTTP
    /// hold ran out.
    fn expire_holds(&self, seated: &HashMap<String, Vec<PlayerId>>) {
        let now = Instant::now();
        self.lock().retain(|_, (room, h)| match *h {
            Holder::Socket => true,
            Holder::Player(p) => !seated.get(room).is_some_and(|ids| ids.contains(&p)),
            Holder::Http(_, until) => until > now,
        });
    }

    fn held_per_room(&self) -> HashMap<String, usize> {
        let mut m = HashMap::new();
        for (room, _) in self.lock().values() {
            *m.entry(room.clone()).or_insert(0) += 1;
        }
        m
    }

    /// Rooms served now that were opened from the template `prefix`.
    fn opened_from(&self, prefix: &str) -> usize {
        let p = format!("{prefix}-");
        self.rooms
            .all()
            .iter()
            .filter(|(r, _)| {
                r.id.strip_prefix(&p).is_some_and(|n| n.bytes().all(|b| b.is_ascii_digit())) && !r.is_closed()
            })
            .count()
    }

    /// Opens a room from template `i` (its file scan off the async
    /// workers); it leaves the registry once it closed.
    async fn open(&self, i: usize) -> Result<RoomHandle, NoRoom> {
        let t = &self.templates[i];
        let id = loop {
            let id = format!("{}-{}", t.cfg.room.id, t.next.fetch_add(1, Ordering::Relaxed));
            if !self.rooms.known(&id) {
                break id;
            }
        };
        let mut cfg = t.cfg.room.clone();
        cfg.id = id.clone();
        if cfg.expire_after.is_none() {
            cfg.expire_after = Some(TEMPLATE_EXPIRY);
        }
        let (game, ctx, rooms) = (Arc::clone(&t.game), Arc::clone(&self.ctx), Arc::clone(&self.rooms));
        let handle = tokio::task::spawn_blocking(move || {
            let h = spawn_room(cfg, game, ctx).map_err(|e| NoRoom::Open(e.to_string()))?;
            rooms.insert(h.clone(), Listing::Public);
            Ok::<_, NoRoom>(h)
        })
        .await
        .map_err(|e| NoRoom::Open(e.to_string()))??;
        let (rooms, h) = (Arc::clone(&self.rooms), handle.clone());
        tokio::spawn(async move {
            h.wait_closed().await;
            rooms.remove(&h.id);
        });
        tracing::info!(room = %id, template = %t.cfg.room.id, "quick match opened a room");
        Ok(handle)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn room(id: &str, tier: &str, entry: u64, taken: usize) -> Candidate {
        Candidate {
            id: id.into(),
            game: "sam-gong".into(),
            tier: Some(tier.into()),
            entry: Chips(entry),
            taken,
            seats: 6,
        }
    }

    fn template(index: usize, tier: &str, entry: u64, may_open: bool) -> Opening {
        Opening { index, game: "sam-gong".into(), tier: Some(tier.into()), entry: Chips(entry), may_open }
    }

    fn ask(tier: Option<&str>) -> QuickMatch {
        QuickMatch { game: "sam-gong".into(), tier: tier.map(str::to_owned) }
    }

    #[test]
    fn the_fullest_free_table_of_the_tier_is_picked() {
        let rooms =
            [room("a", "silver", 10_000, 2), room("b", "silver", 10_000, 5), room("c", "bronze", 1_000, 5)];
        assert_eq!(decide(&ask(Some("silver")), &rooms, &[]), Ok(Decision::Join("b".into())));
        let full = [room("b", "silver", 10_000, 6), room("a", "silver", 10_000, 2)];
        assert_eq!(decide(&ask(Some("silver")), &full, &[]), Ok(Decision::Join("a".into())));
    }

    #[test]
    fn no_tier_means_the_lowest_entry_threshold() {
        let rooms = [room("s", "silver", 10_000, 5), room("b", "bronze", 1_000, 1)];
        assert_eq!(decide(&ask(None), &rooms, &[]), Ok(Decision::Join("b".into())));
    }

    #[test]
    fn a_template_opens_only_when_every_room_is_full_and_it_may() {
        let rooms = [room("s", "silver", 10_000, 6)];
        let templates = [template(0, "bronze", 1_000, true), template(1, "silver", 10_000, true)];
        assert_eq!(decide(&ask(Some("silver")), &rooms, &templates), Ok(Decision::Open(1)));
        let spent = [template(1, "silver", 10_000, false)];
        assert_eq!(
            decide(&ask(Some("silver")), &rooms, &spent),
            Err(NoRoom::Full { game: "sam-gong".into() })
        );
        assert!(matches!(decide(&ask(Some("gold")), &rooms, &templates), Err(NoRoom::Unknown { .. })));
        let other = QuickMatch { game: "guandan".into(), tier: None };
        assert!(matches!(decide(&other, &rooms, &templates), Err(NoRoom::Unknown { .. })));
    }

    #[test]
    fn a_rooms_file_takes_templates() {
        let f: crate::config::RoomsFile = "[[room]]\nid = \"a\"\ngame = \"sam-gong\"\n\n\
            [[template]]\nmax_rooms = 3\n[template.room]\nid = \"sg\"\ngame = \"sam-gong\"\n\
            [template.room.settings]\ntier = \"gold\"\n"
            .parse()
            .unwrap();
        assert_eq!(f.template.len(), 1);
        assert_eq!(f.template[0].max_rooms, 3);
        assert_eq!(tier_of(&f.template[0].room).as_deref(), Some("gold"));
        assert_eq!(f.template[0].room.reveal, crate::config::RevealPolicy::Deferred, "the game's defaults");
    }
}
