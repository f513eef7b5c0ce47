//! The defaults that depend on where a dealer runs: a dealer only this
//! machine can reach (a local try-out) deals play money — welcome chips for
//! every new identity, a house bankroll for Blackjack — while one reachable
//! from the network grants nothing the operator did not ask for; the data
//! directory (per user for a serving dealer, fresh for each demo); and the
//! demo's table size.

use std::ffi::OsString;
use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;

use claw_games::GameMeta;
use claw_protocol::Chips;

/// Welcome chips a dealer grants by default when only this machine reaches
/// it, and in the `--bots` demo.
pub const PLAY_MONEY_WELCOME: u64 = 10_000;
/// The house bankroll a house game (Blackjack) gets by default in the demo
/// and on a dealer only this machine reaches.
pub const PLAY_MONEY_BANKROLL: u64 = 1_000_000;
/// `--bots` without a number seats the game's maximum, at most this many.
pub const DEMO_TABLE: u8 = 6;

/// Who can reach the dealer's game port, as far as its flags tell.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reach {
    /// It listens on loopback and its invites name no other host: a local
    /// try-out.
    ThisMachine,
    /// It listens off loopback, serves TLS, or its invites name a public
    /// host or URL (a proxy in front): a public dealer.
    Network,
}

impl Reach {
    /// The reach of a dealer listening on `listen` whose invites use
    /// `public_host` or `public_url` (if given), serving TLS or not.
    pub fn of(listen: SocketAddr, public_host: Option<&str>, public_url: Option<&str>, tls: bool) -> Reach {
        let local = listen.ip().is_loopback()
            && public_url.is_none()
            && !tls
            && public_host.is_none_or(host_is_loopback);
        if local {
            Reach::ThisMachine
        } else {
            Reach::Network
        }
    }
}

/// Whether `host[:port]` names this machine (`localhost`, 127/8, `[::1]`).
fn host_is_loopback(host: &str) -> bool {
    let name = match host.strip_prefix('[') {
        Some(rest) => rest.split(']').next().unwrap_or(rest),
        None => host.rsplit_once(':').map_or(host, |(h, port)| {
            // A bare IPv6 address has several colons and no port.
            if h.contains(':') || port.parse::<u16>().is_err() {
                host
            } else {
                h
            }
        }),
    };
    name.eq_ignore_ascii_case("localhost") || name.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

/// Where the chips live, for the defaults: grants from nothing are only
/// made by default on a ledger the dealer itself runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ledger {
    /// In memory, or the built-in points server: the dealer's own ledger.
    Own,
    /// An external points service (`--chips-url`): its grants are its
    /// operator's decision.
    External,
    /// A chain: no grants at all.
    NoGrants,
}

/// The welcome flags as given.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WelcomeFlags {
    /// `--welcome`.
    pub amount: Option<u64>,
    /// `--welcome-total`.
    pub total: Option<u64>,
    /// `--welcome-per-day`.
    pub per_day: Option<u64>,
}

/// Where the welcome amount came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WelcomeOrigin {
    /// `--welcome N` (N > 0).
    Flag,
    /// The `--bots` demo's default.
    Demo,
    /// The play-money default of a dealer only this machine reaches.
    PlayMoney,
    /// No welcome chips.
    Off,
}

/// The welcome chips a dealer grants and their caps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WelcomePlan {
    /// Granted once to every new identity.
    pub amount: Chips,
    /// The most granted in total (`None`: no total cap).
    pub total: Option<u64>,
    /// The most granted per 24 h window (`None`: no daily cap).
    pub per_day: Option<u64>,
    /// Why that amount.
    pub origin: WelcomeOrigin,
}

impl WelcomePlan {
    /// The plan for the flags, the demo or not, the ledger and the reach:
    /// the flags win; else the demo and a dealer only this machine reaches
    /// grant [`PLAY_MONEY_WELCOME`] on the dealer's own ledger. A flag's
    /// amount is capped by default at 100 grants in all; the play-money
    /// default at 100 grants a day (a try-out's data directory outlives
    /// many one-time identities); the demo is not capped.
    pub fn resolve(flags: WelcomeFlags, demo: bool, ledger: Ledger, reach: Reach) -> WelcomePlan {
        let default_origin = match (ledger, demo, reach) {
            (Ledger::Own, true, _) => WelcomeOrigin::Demo,
            (Ledger::Own, false, Reach::ThisMachine) => WelcomeOrigin::PlayMoney,
            _ => WelcomeOrigin::Off,
        };
        let (amount, origin) = match (ledger, flags.amount) {
            (Ledger::NoGrants, _) => (0, WelcomeOrigin::Off),
            (_, Some(0)) => (0, WelcomeOrigin::Off),
            (_, Some(n)) => (n, WelcomeOrigin::Flag),
            (_, None) if default_origin == WelcomeOrigin::Off => (0, WelcomeOrigin::Off),
            (_, None) => (PLAY_MONEY_WELCOME, default_origin),
        };
        let hundred = amount.saturating_mul(100);
        let total = flags.total.or(match origin {
            WelcomeOrigin::Flag if !demo => Some(hundred),
            _ => None,
        });
        let per_day = flags.per_day.or(match origin {
            WelcomeOrigin::PlayMoney => Some(hundred),
            _ => None,
        });
        WelcomePlan { amount: Chips(amount), total, per_day, origin }
    }

    /// The one start-up line saying what new players get (and how to
    /// change it).
    pub fn describe(&self) -> String {
        let caps = match (self.total, self.per_day) {
            (Some(t), Some(d)) => format!("at most {t} in total and {d} a day"),
            (Some(t), None) => format!("at most {t} in total"),
            (None, Some(d)) => format!("at most {d} a day"),
            (None, None) => "no cap".to_owned(),
        };
        let w = self.amount;
        match self.origin {
            WelcomeOrigin::Off => {
                "welcome chips: off (a new player has none; --welcome N grants N once per new identity)"
                    .to_owned()
            }
            WelcomeOrigin::PlayMoney => format!(
                "welcome chips: {w} play-money chips once per new identity, {caps} (the default of a \
                 dealer only this machine can reach; --welcome 0 turns them off)"
            ),
            WelcomeOrigin::Flag | WelcomeOrigin::Demo => {
                format!("welcome chips: {w} once per new identity, {caps}")
            }
        }
    }
}

/// The bankroll a house game's room gets when none is given: play money in
/// the demo, and on the dealer's own ledger when only this machine reaches
/// it; `None` elsewhere (the operator must give one).
pub fn default_bankroll(demo: bool, ledger: Ledger, reach: Reach) -> Option<Chips> {
    match (demo, ledger, reach) {
        (_, Ledger::NoGrants, _) => None,
        (true, _, _) | (false, Ledger::Own, Reach::ThisMachine) => Some(Chips(PLAY_MONEY_BANKROLL)),
        _ => None,
    }
}

/// How many bots `--bots` without a number seats: the game's maximum, at
/// most [`DEMO_TABLE`] (and at least its minimum).
pub fn demo_seats(meta: &GameMeta) -> u8 {
    meta.max_players.min(DEMO_TABLE).max(meta.min_players)
}

/// A serving dealer's data directory when `--data-dir` is not given, from
/// the environment: `$XDG_DATA_HOME/claw` (an absolute path), else
/// `$HOME/.local/share/claw`, else `%LOCALAPPDATA%\claw`; `None` when none
/// is set.
pub fn user_data_dir(
    xdg_data_home: Option<OsString>,
    home: Option<OsString>,
    local_app_data: Option<OsString>,
) -> Option<PathBuf> {
    let set = |v: Option<OsString>| v.filter(|s| !s.is_empty()).map(PathBuf::from);
    set(xdg_data_home)
        .filter(|p| p.is_absolute())
        .or_else(|| set(home).map(|h| h.join(".local").join("share")))
        .or_else(|| set(local_app_data))
        .map(|d| d.join("claw"))
}

/// [`user_data_dir`] of this process's environment.
pub fn user_data_dir_from_env() -> Option<PathBuf> {
    user_data_dir(
        std::env::var_os("XDG_DATA_HOME"),
        std::env::var_os("HOME"),
        std::env::var_os("LOCALAPPDATA"),
    )
}

/// A fresh directory for one demo's data, under the system's temporary
/// directory (kept after the demo, so that its transcripts can be audited
/// and served).
pub fn fresh_demo_dir() -> std::io::Result<PathBuf> {
    Ok(tempfile::Builder::new().prefix("claw-demo-").tempdir()?.keep())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn addr(s: &str) -> SocketAddr {
        s.parse().unwrap()
    }

    #[test]
    fn only_a_loopback_dealer_naming_no_other_host_is_local() {
        let lo = addr("127.0.0.1:7777");
        assert_eq!(Reach::of(lo, None, None, false), Reach::ThisMachine);
        assert_eq!(Reach::of(addr("[::1]:7777"), None, None, false), Reach::ThisMachine);
        assert_eq!(Reach::of(lo, Some("localhost:7777"), None, false), Reach::ThisMachine);
        assert_eq!(Reach::of(lo, Some("127.0.0.2"), None, false), Reach::ThisMachine);
        assert_eq!(Reach::of(lo, Some("[::1]:80"), None, false), Reach::ThisMachine);
        assert_eq!(Reach::of(addr("0.0.0.0:7777"), None, None, false), Reach::Network);
        assert_eq!(Reach::of(addr("192.168.1.5:7777"), None, None, false), Reach::Network);
        // Behind a TLS proxy: loopback listen, public invites.
        assert_eq!(Reach::of(lo, None, Some("wss://cards.example.com/claw"), false), Reach::Network);
        assert_eq!(Reach::of(lo, Some("cards.example.com:443"), None, false), Reach::Network);
        assert_eq!(Reach::of(lo, None, None, true), Reach::Network);
    }

    #[test]
    fn a_local_dealer_grants_capped_play_money_and_a_public_one_nothing_unasked() {
        let none = WelcomeFlags::default();
        let local = WelcomePlan::resolve(none, false, Ledger::Own, Reach::ThisMachine);
        assert_eq!(local.origin, WelcomeOrigin::PlayMoney);
        assert_eq!(local.amount, Chips(PLAY_MONEY_WELCOME));
        assert_eq!((local.total, local.per_day), (None, Some(100 * PLAY_MONEY_WELCOME)));
        assert!(local.describe().contains("--welcome 0"), "{}", local.describe());

        let public = WelcomePlan::resolve(none, false, Ledger::Own, Reach::Network);
        assert_eq!((public.amount, public.origin), (Chips::ZERO, WelcomeOrigin::Off));
        let external = WelcomePlan::resolve(none, false, Ledger::External, Reach::ThisMachine);
        assert_eq!(external.amount, Chips::ZERO);

        let off = WelcomePlan::resolve(
            WelcomeFlags { amount: Some(0), ..none },
            false,
            Ledger::Own,
            Reach::ThisMachine,
        );
        assert_eq!(off.origin, WelcomeOrigin::Off);

        let asked = WelcomePlan::resolve(
            WelcomeFlags { amount: Some(500), per_day: Some(2_000), ..none },
            false,
            Ledger::Own,
            Reach::Network,
        );
        assert_eq!((asked.amount, asked.total, asked.per_day), (Chips(500), Some(50_000), Some(2_000)));

        // The flag's caps apply to the local default too.
        let capped = WelcomePlan::resolve(
            WelcomeFlags { total: Some(30_000), ..none },
            false,
            Ledger::Own,
            Reach::ThisMachine,
        );
        assert_eq!((capped.total, capped.per_day), (Some(30_000), Some(100 * PLAY_MONEY_WELCOME)));

        let demo = WelcomePlan::resolve(none, true, Ledger::Own, Reach::Network);
        assert_eq!((demo.amount, demo.total, demo.per_day), (Chips(PLAY_MONEY_WELCOME), None, None));
        let chain = WelcomePlan::resolve(
            WelcomeFlags { amount: Some(5), ..none },
            true,
            Ledger::NoGrants,
            Reach::ThisMachine,
        );
        assert_eq!(chain.amount, Chips::ZERO);
    }

    #[test]
    fn a_house_gets_play_money_only_in_the_demo_or_on_a_local_dealers_own_ledger() {
        assert_eq!(
            default_bankroll(true, Ledger::External, Reach::Network),
            Some(Chips(PLAY_MONEY_BANKROLL))
        );
        assert_eq!(
            default_bankroll(false, Ledger::Own, Reach::ThisMachine),
            Some(Chips(PLAY_MONEY_BANKROLL))
        );
        assert_eq!(default_bankroll(false, Ledger::Own, Reach::Network), None);
        assert_eq!(default_bankroll(false, Ledger::External, Reach::ThisMachine), None);
        assert_eq!(default_bankroll(true, Ledger::NoGrants, Reach::ThisMachine), None);
    }

    #[test]
    fn the_demo_table_fits_every_game() {
        for game in claw_games::registry::all() {
            let meta = game.meta();
            let n = demo_seats(&meta);
            assert!((meta.min_players..=meta.max_players).contains(&n), "{}: {n}", meta.name);
            assert!(n <= DEMO_TABLE.max(meta.min_players), "{}: {n}", meta.name);
        }
    }

    #[test]
    fn the_user_data_dir_follows_xdg_then_home() {
        let os = |s: &str| Some(OsString::from(s));
        assert_eq!(user_data_dir(os("/x/data"), os("/home/u"), None), Some(PathBuf::from("/x/data/claw")));
        // A relative XDG_DATA_HOME is ignored, as the XDG spec says.
        assert_eq!(
            user_data_dir(os("rel"), os("/home/u"), None),
            Some(PathBuf::from("/home/u/.local/share/claw"))
        );
        assert_eq!(
            user_data_dir(os(""), os("/home/u"), None),
            Some(PathBuf::from("/home/u/.local/share/claw"))
        );
        assert_eq!(user_data_dir(None, None, os("/appdata")), Some(PathBuf::from("/appdata/claw")));
        assert_eq!(user_data_dir(None, None, None), None);
    }
}
