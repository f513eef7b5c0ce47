//! Invite URLs: `ws://host:port/ROOM#DEALER_PUBKEY_HEX`.
//!
//! The fragment pins the dealer's Ed25519 key, so even the first contact
//! is safe from a man in the middle: the SDK refuses a dealer that presents
//! any other key. The fragment is never sent to the server.

use std::fmt;
use std::net::IpAddr;
use std::str::FromStr;

use claw_protocol::PlayerId;

/// A parsed invite: where to connect, which room, and which dealer key to expect.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invite {
    /// The WebSocket URL to dial (no fragment).
    pub ws_url: String,
    /// The room id: the last segment of the URL path (a proxy may serve
    /// the dealer under a prefix, `wss://host/claw/ROOM`).
    pub room: String,
    /// The dealer's signing key, from the fragment.
    pub dealer: PlayerId,
    /// Whether the transport is TLS (`wss`).
    pub tls: bool,
}

/// Why an invite URL was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InviteError {
    /// Not a URL at all.
    #[error("not a URL: {0}")]
    Syntax(String),
    /// Not `ws://` or `wss://`.
    #[error("scheme must be ws or wss, got {0:?}")]
    Scheme(String),
    /// `user:password@` in the URL.
    #[error("the URL carries credentials; refusing to send them anywhere")]
    Credentials,
    /// No host.
    #[error("the URL has no host")]
    NoHost,
    /// No room path.
    #[error("the URL names no room (ws://host:port/ROOM#KEY)")]
    NoRoom,
    /// No `#<dealer key>` fragment.
    #[error("the URL has no dealer key fragment (#<64 hex>)")]
    NoDealerKey,
    /// The fragment is not a key.
    #[error("the dealer key fragment is not 64 lowercase hex characters")]
    BadDealerKey,
    /// Plain `ws://` to a host that is not loopback.
    #[error("plain ws:// to a non-local host {0}; use wss:// (or allow insecure transport)")]
    InsecureRemote(String),
}

impl Invite {
    /// Parses an invite, refusing plain `ws://` to anything but a loopback
    /// address (SPEC.md §8: non-local connections require TLS).
    pub fn parse(s: &str) -> Result<Invite, InviteError> {
        Self::parse_with(s, false)
    }

    /// Parses an invite; `allow_insecure` permits plain `ws://` to any host
    /// (a trusted LAN). The dealer key check still applies.
    pub fn parse_with(s: &str, allow_insecure: bool) -> Result<Invite, InviteError> {
        let url = url::Url::parse(s.trim()).map_err(|e| InviteError::Syntax(e.to_string()))?;
        let tls = match url.scheme() {
            "ws" => false,
            "wss" => true,
            other => return Err(InviteError::Scheme(other.to_string())),
        };
        if !url.username().is_empty() || url.password().is_some() {
            return Err(InviteError::Credentials);
        }
        let host = url.host_str().ok_or(InviteError::NoHost)?.to_string();
        let room = url.path().rsplit('/').next().unwrap_or_default().to_string();
        if room.is_empty() {
            return Err(InviteError::NoRoom);
        }
        let frag = url.fragment().ok_or(InviteError::NoDealerKey)?;
        if frag.is_empty() {
            return Err(InviteError::NoDealerKey);
        }
        let dealer = PlayerId::from_str(&frag.to_ascii_lowercase()).map_err(|_| InviteError::BadDealerKey)?;
        if !tls && !allow_insecure && !is_loopback(&host) {
            return Err(InviteError::InsecureRemote(host));
        }
        let mut dial = url.clone();
        dial.set_fragment(None);
        Ok(Invite { ws_url: dial.to_string(), room, dealer, tls })
    }

    /// The invite of another room of the same dealer: the last path
    /// segment replaced by `room` (percent-encoded), the key kept. Used for
    /// the quick-match path and the room quick match names.
    pub fn for_room(&self, room: &str) -> Result<Invite, InviteError> {
        let mut url = url::Url::parse(&self.ws_url).map_err(|e| InviteError::Syntax(e.to_string()))?;
        if room.is_empty() || room == "." || room == ".." {
            return Err(InviteError::NoRoom);
        }
        url.path_segments_mut().map_err(|()| InviteError::NoRoom)?.pop().push(room);
        Ok(Invite { ws_url: url.to_string(), room: room.to_owned(), dealer: self.dealer, tls: self.tls })
    }
}

impl fmt::Display for Invite {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}#{}", self.ws_url, self.dealer)
    }
}

fn is_loopback(host: &str) -> bool {
    let h = host.trim_start_matches('[').trim_end_matches(']');
    h.eq_ignore_ascii_case("localhost") || h.parse::<IpAddr>().map(|ip| ip.is_loopback()).unwrap_or(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEY: &str = "abababababababababababababababababababababababababababababababab";

    #[test]
    fn parses_a_local_invite() {
        let i = Invite::parse(&format!("ws://127.0.0.1:7000/room-1#{KEY}")).unwrap();
        assert_eq!(i.ws_url, "ws://127.0.0.1:7000/room-1");
        assert_eq!(i.room, "room-1");
        assert_eq!(i.dealer.to_string(), KEY);
        assert!(!i.tls);
        assert_eq!(i.to_string(), format!("ws://127.0.0.1:7000/room-1#{KEY}"));
        assert!(Invite::parse(&format!("ws://localhost:7000/r#{KEY}")).is_ok());
        assert!(Invite::parse(&format!("ws://[::1]:7000/r#{KEY}")).is_ok());
    }

    #[test]
    fn refuses_bad_invites() {
        use InviteError::*;
        let p = |s: String| Invite::parse(&s).unwrap_err();
        assert_eq!(p(format!("http://127.0.0.1/r#{KEY}")), Scheme("http".into()));
        assert_eq!(p(format!("ws://u:p@127.0.0.1/r#{KEY}")), Credentials);
        assert_eq!(p(format!("ws://127.0.0.1:1/#{KEY}")), NoRoom);
        assert_eq!(p("ws://127.0.0.1:1/r".into()), NoDealerKey);
        assert_eq!(p("ws://127.0.0.1:1/r#abc".into()), BadDealerKey);
        assert_eq!(p(format!("ws://example.com/r#{KEY}")), InsecureRemote("example.com".into()));
        let behind_proxy = Invite::parse(&format!("wss://cards.example.com/claw/room-1#{KEY}")).unwrap();
        assert_eq!((behind_proxy.room.as_str(), behind_proxy.tls), ("room-1", true));
        assert_eq!(behind_proxy.ws_url, "wss://cards.example.com/claw/room-1");
        assert!(Invite::parse(&format!("wss://example.com/r#{KEY}")).is_ok());
        assert!(Invite::parse_with(&format!("ws://10.0.0.2:9/r#{KEY}"), true).is_ok());
        assert!(matches!(p("not a url".into()), Syntax(_)));
    }

    #[test]
    fn another_room_of_the_same_dealer() {
        let i = Invite::parse(&format!("wss://cards.example.com/claw/room-1#{KEY}")).unwrap();
        let q = i.for_room("quick-match").unwrap();
        assert_eq!(
            (q.ws_url.as_str(), q.room.as_str()),
            ("wss://cards.example.com/claw/quick-match", "quick-match")
        );
        assert_eq!((q.dealer, q.tls), (i.dealer, true));
        let odd = i.for_room("a/b?c").unwrap();
        assert_eq!(odd.ws_url, "wss://cards.example.com/claw/a%2Fb%3Fc", "a room id stays one segment");
        assert_eq!(odd.room, "a/b?c", "the hello names the room as the dealer did");
        assert_eq!(i.for_room(".."), Err(InviteError::NoRoom));
        assert_eq!(i.for_room(""), Err(InviteError::NoRoom));
    }
}
