//! Abuse signals per identity: hands voided by its input, turns the timer
//! took, disconnects on its own turn, the net chips that moved between each
//! pair of identities across hands (chip dumping), and identities seen from
//! one address. Rooms and the server record them; the node lists them per
//! identity (admin API) and `/metrics` shows only node-wide aggregates (a
//! fixed set of series, never one per identity or address).
//!
//! A [`Rule`] turns flags (voids, timeouts, disconnects on its turn) into a
//! temporary ban: `flags` of them within an identity's last `window_hands`
//! hands trips it, and [`Conduct::take_trips`] hands the trip to the node.
//! The record is bounded: at most [`MAX_IDENTITIES`] identities,
//! [`MAX_PAIRS`] pairs and [`MAX_ADDRESSES`] addresses (each with at most
//! [`MAX_PER_ADDRESS`] identities); beyond that new entries are not kept
//! (counted in `claw_abuse_untracked_total`).

use std::collections::{BTreeSet, HashMap, VecDeque};
use std::net::IpAddr;
use std::sync::Mutex;
use std::time::Duration;

use claw_protocol::PlayerId;
use serde::Serialize;

/// Most identities whose signals are kept.
pub const MAX_IDENTITIES: usize = 100_000;
/// Most identity pairs whose chip flow is kept.
pub const MAX_PAIRS: usize = 200_000;
/// Most source addresses whose identities are kept.
pub const MAX_ADDRESSES: usize = 50_000;
/// Most identities kept per source address.
pub const MAX_PER_ADDRESS: usize = 32;

/// A flag against an identity (each counts towards the [`Rule`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flag {
    /// A hand was voided because of it (it left when the hand could not go
    /// on without it).
    Voided,
    /// The timer took its turn while it was connected.
    Timeout,
    /// Its connection closed while the hand waited for its action.
    DisconnectOnTurn,
}

impl Flag {
    /// The label value in `/metrics` and the field in the admin listing.
    pub fn name(self) -> &'static str {
        match self {
            Flag::Voided => "voided",
            Flag::Timeout => "timeout",
            Flag::DisconnectOnTurn => "disconnect-on-turn",
        }
    }
}

/// When flags become a temporary ban: `flags` flags within the identity's
/// last `window_hands` hands bans it for `ban`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rule {
    /// Flags that trip the rule (at least 1).
    pub flags: u32,
    /// Hands the flags are counted over (at least 1).
    pub window_hands: u32,
    /// How long the ban lasts.
    pub ban: Duration,
}

/// A tripped [`Rule`]: the node bans `player` for `rule.ban`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Trip {
    /// Who.
    pub player: PlayerId,
    /// The rule it tripped.
    pub rule: Rule,
    /// Why, in words (for the ban's reason).
    pub reason: String,
}

/// One identity's signals, as the admin API lists them.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Signals {
    /// Hands dealt to it.
    pub hands: u64,
    /// Hands voided by its input.
    pub voided: u64,
    /// Turns the timer took.
    pub timeouts: u64,
    /// Disconnects while the hand waited for its action.
    pub disconnects_on_turn: u64,
    /// Flags within its last `window_hands` hands (the rule's count).
    pub recent_flags: u32,
    /// The other identity it has given the most net chips to, and how many.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub top_flow_to: Option<Flow>,
    /// How many other identities were seen from one of its addresses.
    pub sharing_address_with: usize,
}

/// Net chips that moved from one identity to another across hands.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Flow {
    /// The receiving identity.
    pub to: PlayerId,
    /// Net chips it received from the giver.
    pub chips: u64,
}

#[derive(Debug, Default)]
struct Record {
    signals: Signals,
    /// The hand index (its `hands` count when flagged) of each recent flag.
    flagged_at: VecDeque<u64>,
    /// Addresses it was seen from (at most a few kept).
    addrs: BTreeSet<IpAddr>,
}

#[derive(Debug, Default)]
struct Inner {
    players: HashMap<PlayerId, Record>,
    /// Net chips from `a` to `b` for `a < b` (negative: from `b` to `a`).
    flows: HashMap<(PlayerId, PlayerId), i128>,
    addrs: HashMap<IpAddr, BTreeSet<PlayerId>>,
    rule: Option<Rule>,
    trips: Vec<Trip>,
    totals: [u64; 3],
    trips_total: u64,
    untracked: u64,
}

/// The node's abuse signals (see the module doc). Shared by every room.
#[derive(Debug, Default)]
pub struct Conduct {
    inner: Mutex<Inner>,
}

/// Addresses kept per identity (enough to tell sharing; the rest is not kept).
const ADDRS_PER_IDENTITY: usize = 8;

impl Inner {
    fn record(&mut self, id: &PlayerId) -> Option<&mut Record> {
        if !self.players.contains_key(id) {
            if self.players.len() >= MAX_IDENTITIES {
                self.untracked += 1;
                return None;
            }
            self.players.insert(*id, Record::default());
        }
        self.players.get_mut(id)
    }
}

impl Conduct {
    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Sets (or clears) the rule that turns flags into a ban.
    pub fn set_rule(&self, rule: Option<Rule>) {
        self.lock().rule = rule.filter(|r| r.flags > 0 && r.window_hands > 0);
    }

    /// A hand was dealt to `players`.
    pub fn dealt(&self, players: &[PlayerId]) {
        let mut g = self.lock();
        for p in players {
            if let Some(r) = g.record(p) {
                r.signals.hands += 1;
            }
        }
    }

    /// Records `flag` against `id`; trips the rule when it is reached.
    pub fn flag(&self, id: &PlayerId, flag: Flag) {
        let mut g = self.lock();
        let i = match flag {
            Flag::Voided => 0,
            Flag::Timeout => 1,
            Flag::DisconnectOnTurn => 2,
        };
        g.totals[i] += 1;
        let rule = g.rule;
        let Some(r) = g.record(id) else { return };
        match flag {
            Flag::Voided => r.signals.voided += 1,
            Flag::Timeout => r.signals.timeouts += 1,
            Flag::DisconnectOnTurn => r.signals.disconnects_on_turn += 1,
        }
        let hand = r.signals.hands;
        r.flagged_at.push_back(hand);
        let window = u64::from(rule.map_or(10, |r| r.window_hands));
        while r.flagged_at.front().is_some_and(|h| h + window <= hand) {
            r.flagged_at.pop_front();
        }
        let recent = u32::try_from(r.flagged_at.len()).unwrap_or(u32::MAX);
        r.signals.recent_flags = recent;
        if let Some(rule) = rule.filter(|rule| recent >= rule.flags) {
            r.flagged_at.clear();
            r.signals.recent_flags = 0;
            let reason = format!(
                "{recent} flags (voided hands, timeouts, disconnects on its turn) within {} hands",
                rule.window_hands
            );
            g.trips.push(Trip { player: *id, rule, reason });
            g.trips_total += 1;
        }
    }

    /// A settled hand's net result per player (same order): each loser's
    /// loss is counted as given to the winners in proportion to their gains.
    pub fn settled(&self, players: &[PlayerId], net: &[i64]) {
        let won: i128 = net.iter().filter(|n| **n > 0).map(|n| i128::from(*n)).sum();
        if won == 0 {
            return;
        }
        let mut g = self.lock();
        for p in players {
            g.record(p);
        }
        for (loser, lost) in players.iter().zip(net).filter(|(_, n)| **n < 0) {
            for (winner, gain) in players.iter().zip(net).filter(|(_, n)| **n > 0) {
                let chips = i128::from(lost.unsigned_abs()) * i128::from(*gain) / won;
                if chips == 0 || loser == winner {
                    continue;
                }
                let (key, signed) =
                    if loser < winner { ((*loser, *winner), chips) } else { ((*winner, *loser), -chips) };
                if !g.flows.contains_key(&key) && g.flows.len() >= MAX_PAIRS {
                    g.untracked += 1;
                    continue;
                }
                *g.flows.entry(key).or_default() += signed;
            }
        }
    }

    /// `id` completed a handshake from `addr`.
    pub fn seen_from(&self, id: &PlayerId, addr: IpAddr) {
        let mut g = self.lock();
        if !g.addrs.contains_key(&addr) && g.addrs.len() >= MAX_ADDRESSES {
            g.untracked += 1;
            return;
        }
        let set = g.addrs.entry(addr).or_default();
        if !set.contains(id) && set.len() >= MAX_PER_ADDRESS {
            g.untracked += 1;
            return;
        }
        set.insert(*id);
        if let Some(r) = g.record(id) {
            if r.addrs.len() < ADDRS_PER_IDENTITY {
                r.addrs.insert(addr);
            }
        }
    }

    /// The rule trips since the last call (the node bans each).
    pub fn take_trips(&self) -> Vec<Trip> {
        std::mem::take(&mut self.lock().trips)
    }

    /// One identity's signals, if any were recorded.
    pub fn of(&self, id: &PlayerId) -> Option<Signals> {
        let g = self.lock();
        g.players.get(id).map(|r| Self::view(&g, id, r))
    }

    /// The `limit` identities with the most flags (then the largest net
    /// chips given to one other identity), with their signals.
    pub fn top(&self, limit: usize) -> Vec<(PlayerId, Signals)> {
        let g = self.lock();
        let mut all: Vec<(PlayerId, Signals)> =
            g.players.iter().map(|(id, r)| (*id, Self::view(&g, id, r))).collect();
        let key = |s: &Signals| {
            (s.voided + s.timeouts + s.disconnects_on_turn, s.top_flow_to.as_ref().map_or(0, |f| f.chips))
        };
        all.sort_by(|a, b| key(&b.1).cmp(&key(&a.1)).then(a.0.cmp(&b.0)));
        all.truncate(limit);
        all
    }

    fn view(g: &Inner, id: &PlayerId, r: &Record) -> Signals {
        let mut s = r.signals.clone();
        s.top_flow_to = g
            .flows
            .iter()
            .filter_map(|((a, b), n)| match (a == id, b == id) {
                (true, _) if *n > 0 => Some((*b, *n)),
                (_, true) if *n < 0 => Some((*a, -*n)),
                _ => None,
            })
            .max_by_key(|(_, n)| *n)
            .map(|(to, n)| Flow { to, chips: u64::try_from(n).unwrap_or(u64::MAX) });
        let mut others: BTreeSet<&PlayerId> = BTreeSet::new();
        for a in &r.addrs {
            others.extend(g.addrs.get(a).into_iter().flatten().filter(|p| *p != id));
        }
        s.sharing_address_with = others.len();
        s
    }

    /// Node-wide totals and maxima of the signals (no identity or address):
    /// what `/metrics` shows.
    pub fn totals(&self) -> ConductTotals {
        let g = self.lock();
        ConductTotals {
            flags: [Flag::Voided, Flag::Timeout, Flag::DisconnectOnTurn]
                .iter()
                .enumerate()
                .map(|(i, f)| (f.name(), g.totals[i]))
                .collect(),
            max_pair_flow: g.flows.values().map(|n| n.unsigned_abs()).max().unwrap_or(0),
            shared_addresses: g.addrs.values().filter(|ids| ids.len() > 1).count(),
            max_identities_per_address: g.addrs.values().map(BTreeSet::len).max().unwrap_or(0),
            rule_trips: g.trips_total,
            untracked: g.untracked,
        }
    }
}

/// The signals' node-wide aggregates ([`Conduct::totals`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConductTotals {
    /// Flags against identities, by flag name.
    pub flags: Vec<(&'static str, u64)>,
    /// Largest net chips moved from one identity to one other across hands.
    pub max_pair_flow: u128,
    /// Source addresses from which more than one identity completed a handshake.
    pub shared_addresses: usize,
    /// Most identities seen from one source address.
    pub max_identities_per_address: usize,
    /// Temporary bans the abuse rule asked for.
    pub rule_trips: u64,
    /// Signals not kept because the record is full.
    pub untracked: u64,
}

#[cfg(test)]
mod tests {
    use super::*;
    use claw_protocol::Identity;

    fn id(n: u8) -> PlayerId {
        Identity::from_seed([n; 32]).id()
    }

    #[test]
    fn the_rule_trips_on_n_flags_within_m_hands_and_not_on_spread_ones() {
        let c = Conduct::default();
        c.set_rule(Some(Rule { flags: 3, window_hands: 5, ban: Duration::from_secs(60) }));
        let (a, b) = (id(1), id(2));
        // b: one timeout every 3 hands never has 3 within 5 hands.
        for _ in 0..12 {
            for _ in 0..3 {
                c.dealt(&[b]);
            }
            c.flag(&b, Flag::Timeout);
        }
        assert!(c.take_trips().is_empty(), "spread flags do not trip");
        c.dealt(&[a]);
        c.flag(&a, Flag::Timeout);
        c.dealt(&[a]);
        c.flag(&a, Flag::DisconnectOnTurn);
        assert!(c.take_trips().is_empty());
        c.dealt(&[a]);
        c.flag(&a, Flag::Voided);
        let trips = c.take_trips();
        assert_eq!(trips.len(), 1);
        assert_eq!(trips[0].player, a);
        assert!(c.take_trips().is_empty(), "taken once");
        let s = c.of(&a).unwrap();
        assert_eq!((s.hands, s.timeouts, s.voided, s.disconnects_on_turn), (3, 1, 1, 1));
        assert!(c.of(&id(9)).is_none());
    }

    #[test]
    fn chip_flows_are_netted_per_pair_and_metrics_name_no_identity() {
        let c = Conduct::default();
        let (a, b, x) = (id(1), id(2), id(3));
        for _ in 0..10 {
            c.settled(&[a, b, x], &[-100, 100, 0]);
        }
        c.settled(&[a, b], &[30, -30]);
        // a loses 100 to b and 50 to x in one hand: split by gains.
        c.settled(&[a, b, x], &[-150, 100, 50]);
        let s = c.of(&a).unwrap_or_default();
        assert_eq!(s.top_flow_to, Some(Flow { to: b, chips: 1000 - 30 + 100 }));
        assert_eq!(c.of(&b).unwrap_or_default().top_flow_to, None, "b only received from a");
        c.seen_from(&a, "10.0.0.1".parse().unwrap());
        c.seen_from(&b, "10.0.0.1".parse().unwrap());
        c.seen_from(&x, "10.0.0.2".parse().unwrap());
        assert_eq!(c.of(&a).unwrap().sharing_address_with, 1);
        assert_eq!(c.of(&x).unwrap().sharing_address_with, 0);
        let t = c.totals();
        assert_eq!((t.max_pair_flow, t.shared_addresses, t.max_identities_per_address), (1070, 1, 2));
        assert_eq!(c.top(1)[0].0, a, "the biggest giver first among the unflagged");
    }
}
