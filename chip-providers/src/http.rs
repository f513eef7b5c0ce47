//! `HttpChips`: the chip provider for an HTTP points service (`claw-points`).
//!
//! - URL policy (the protocol's security rules): no credentials in the URL; plain `http` only to a
//!   loopback host (`127.0.0.0/8`, `::1`, `localhost`); private-network, link-local
//!   and other non-public addresses refused unless `allow_private` is set, also
//!   when a host *name* resolves to them (checked at every connection, so DNS
//!   rebinding does not get around it); no redirects, no proxies.
//! - Each attempt has a timeout; retryable failures (unreachable, timeout, 429,
//!   5xx, a connection dropped before the answer) are retried with exponential
//!   backoff and jitter, **with the same idempotency key and body**, so a
//!   request that did land is answered from the server's record instead of
//!   moving chips twice.
//! - Errors are typed: `Insufficient`, `Unauthorized`, `KeyReused`,
//!   `BadRequest`, `RateLimited`, `Timeout`, `Unreachable`, `Service`.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use claw_protocol::Chips;
use rand::Rng;
use reqwest::dns::{Addrs, Name, Resolve, Resolving};
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};
use url::{Host, Url};

use crate::{AccountId, AccountOp, ChipError, ChipOp, ChipProvider, IdempotencyKey};

/// Settings of an [`HttpChips`] client.
#[derive(Debug, Clone)]
pub struct HttpChipsConfig {
    /// Base URL of the points service, e.g. `https://points.example.com/` or `http://127.0.0.1:7700`.
    pub url: String,
    /// Bearer token sent with every request.
    pub token: String,
    /// Time limit of one attempt (connect, send, receive).
    pub timeout: Duration,
    /// Time limit of establishing a connection.
    pub connect_timeout: Duration,
    /// Attempts per call, the first included (at least 1).
    pub max_attempts: u32,
    /// Backoff before the second attempt; doubles each time.
    pub backoff_base: Duration,
    /// Upper bound of one backoff pause.
    pub backoff_max: Duration,
    /// Longest `Retry-After` the client is willing to wait; longer ones fail with `RateLimited`.
    pub max_retry_after: Duration,
    /// Permit private-network / link-local / unique-local addresses (still over TLS).
    pub allow_private: bool,
}

impl HttpChipsConfig {
    /// Defaults: 5 s per attempt, 2 s to connect, 4 attempts, backoff 100 ms doubling up to 2 s.
    pub fn new(url: impl Into<String>, token: impl Into<String>) -> HttpChipsConfig {
        HttpChipsConfig {
            url: url.into(),
            token: token.into(),
            timeout: Duration::from_secs(5),
            connect_timeout: Duration::from_secs(2),
            max_attempts: 4,
            backoff_base: Duration::from_millis(100),
            backoff_max: Duration::from_secs(2),
            max_retry_after: Duration::from_secs(10),
            allow_private: false,
        }
    }
}

/// Why a points-service URL or client configuration was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HttpConfigError {
    /// Not a URL at all.
    #[error("not a valid URL: {0}")]
    BadUrl(String),
    /// Scheme other than http/https.
    #[error("unsupported scheme {0:?}: use https (or http to a loopback host)")]
    Scheme(String),
    /// The URL has no host.
    #[error("the URL has no host")]
    NoHost,
    /// A user name or password is embedded in the URL.
    #[error("credentials in the URL are refused: pass the token separately")]
    Credentials,
    /// A query string or fragment in the base URL.
    #[error("the base URL must not have a query or fragment")]
    QueryOrFragment,
    /// Plain http to a host that is not loopback.
    #[error("TLS required: {0} is not a loopback host, use https")]
    TlsRequired(String),
    /// A private-network (or otherwise non-public) address without `allow_private`.
    #[error("{0} is a private or reserved address; set allow_private to use it")]
    PrivateAddress(String),
    /// Empty token or one with characters that cannot go in a header.
    #[error("the token must be non-empty visible ASCII")]
    BadToken,
    /// The HTTP client could not be built (TLS initialisation).
    #[error("HTTP client: {0}")]
    Client(String),
}

/// Where an IP address sits for the URL policy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AddressClass {
    /// 127.0.0.0/8, ::1 (and IPv4-mapped loopback).
    Loopback,
    /// Private, link-local, CGNAT, unique-local, unspecified, multicast, reserved, documentation.
    Private,
    /// Everything else.
    Public,
}

/// Classifies an address (IPv4-mapped and NAT64 IPv6 addresses by their IPv4 part).
pub fn classify_ip(ip: IpAddr) -> AddressClass {
    match ip {
        IpAddr::V4(v4) => classify_v4(v4),
        IpAddr::V6(v6) => {
            if let Some(v4) = v6.to_ipv4_mapped() {
                return classify_v4(v4);
            }
            let s = v6.segments();
            if v6.is_loopback() {
                AddressClass::Loopback
            } else if s[0] == 0x64 && s[1] == 0xff9b && s[2..6] == [0, 0, 0, 0] {
                // NAT64 well-known prefix 64:ff9b::/96: judge the embedded IPv4 address.
                let o = v6.octets();
                classify_v4(Ipv4Addr::new(o[12], o[13], o[14], o[15]))
            } else if v6.is_unspecified()
                || v6.is_multicast()
                || (s[0] & 0xfe00) == 0xfc00 // unique local fc00::/7
                || (s[0] & 0xffc0) == 0xfe80 // link-local fe80::/10
                || (s[0] & 0xffc0) == 0xfec0 // site-local fec0::/10 (deprecated)
                || (s[0] == 0x2001 && s[1] == 0x0db8) // documentation
                || s[..6] == [0, 0, 0, 0, 0, 0]
            // IPv4-compatible ::a.b.c.d (deprecated) and ::/96
            {
                AddressClass::Private
            } else {
                AddressClass::Public
            }
        }
    }
}

fn classify_v4(ip: Ipv4Addr) -> AddressClass {
    let o = ip.octets();
    if ip.is_loopback() {
        AddressClass::Loopback
    } else if ip.is_private()
        || ip.is_link_local()
        || ip.is_unspecified()
        || ip.is_broadcast()
        || ip.is_multicast()
        || ip.is_documentation()
        || o[0] == 0 // "this network" 0.0.0.0/8
        || (o[0] == 100 && (o[1] & 0xc0) == 64) // CGNAT 100.64.0.0/10
        || (o[0] == 192 && o[1] == 0 && o[2] == 0) // IETF protocol assignments
        || (o[0] == 198 && (o[1] & 0xfe) == 18) // benchmarking 198.18.0.0/15
        || o[0] >= 240
    // reserved 240.0.0.0/4
    {
        AddressClass::Private
    } else {
        AddressClass::Public
    }
}

/// Checks a points-service URL against the policy and returns it normalised
/// (path ending in `/`, so endpoint paths join under it).
pub fn validate_url(url: &str, allow_private: bool) -> Result<Url, HttpConfigError> {
    let mut u = check_url(url, allow_private)?;
    if !u.path().ends_with('/') {
        let p = format!("{}/", u.path());
        u.set_path(&p);
    }
    Ok(u)
}

/// Checks a service URL against the policy (TLS off loopback, no
/// credentials, no query or fragment, private addresses only when allowed).
pub fn check_url(url: &str, allow_private: bool) -> Result<Url, HttpConfigError> {
    let u = Url::parse(url).map_err(|e| HttpConfigError::BadUrl(e.to_string()))?;
    let tls = match u.scheme() {
        "https" => true,
        "http" => false,
        other => return Err(HttpConfigError::Scheme(other.to_owned())),
    };
    if !u.username().is_empty() || u.password().is_some() {
        return Err(HttpConfigError::Credentials);
    }
    if u.query().is_some() || u.fragment().is_some() {
        return Err(HttpConfigError::QueryOrFragment);
    }
    let class = match u.host().ok_or(HttpConfigError::NoHost)? {
        Host::Ipv4(ip) => classify_ip(IpAddr::V4(ip)),
        Host::Ipv6(ip) => classify_ip(IpAddr::V6(ip)),
        Host::Domain(d) if d.eq_ignore_ascii_case("localhost") => AddressClass::Loopback,
        // Names are checked again when resolved (see GuardedResolver).
        Host::Domain(_) => AddressClass::Public,
    };
    let host = u.host_str().unwrap_or_default().to_owned();
    if class == AddressClass::Private && !allow_private {
        return Err(HttpConfigError::PrivateAddress(host));
    }
    if class != AddressClass::Loopback && !tls {
        return Err(HttpConfigError::TlsRequired(host));
    }
    Ok(u)
}

/// An HTTP client builder that applies the URL policy to every connection:
/// resolved addresses filtered by [`filter_resolved`], no proxy, no redirects,
/// TLS only when `base` is https.
pub fn guarded_client(base: &Url, allow_private: bool) -> reqwest::ClientBuilder {
    client_builder()
        .redirect(reqwest::redirect::Policy::none())
        .no_proxy()
        .https_only(base.scheme() == "https")
        .dns_resolver(Arc::new(GuardedResolver { allow_private }))
        .user_agent(concat!("claw-chips/", env!("CARGO_PKG_VERSION")))
}

/// A reqwest client builder with the project's one rustls provider (ring)
/// installed as the process default: reqwest is built without a provider of
/// its own and would refuse to build a client without it.
pub fn client_builder() -> reqwest::ClientBuilder {
    // Err only when a provider is installed already: then that one is used.
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::builder()
}

/// Filters resolved addresses by the URL policy: `localhost` must resolve to
/// loopback; any other name must resolve to public addresses (or private ones
/// when allowed). Returns the addresses kept, or an error if none is.
pub fn filter_resolved(
    name: &str,
    addrs: Vec<SocketAddr>,
    allow_private: bool,
) -> Result<Vec<SocketAddr>, String> {
    let localhost = name.eq_ignore_ascii_case("localhost");
    let kept: Vec<SocketAddr> = addrs
        .into_iter()
        .filter(|a| match classify_ip(a.ip()) {
            AddressClass::Loopback => localhost || allow_private,
            AddressClass::Private => !localhost && allow_private,
            AddressClass::Public => !localhost,
        })
        .collect();
    if kept.is_empty() {
        Err(format!("{name} resolves to no address the chip client may use (private or loopback refused)"))
    } else {
        Ok(kept)
    }
}

/// DNS resolver that applies [`filter_resolved`] to every lookup.
struct GuardedResolver {
    allow_private: bool,
}

impl Resolve for GuardedResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let allow_private = self.allow_private;
        let host = name.as_str().to_owned();
        Box::pin(async move {
            let found: Vec<SocketAddr> = tokio::net::lookup_host((host.as_str(), 0)).await?.collect();
            let kept = filter_resolved(&host, found, allow_private)
                .map_err(|m| Box::new(std::io::Error::new(std::io::ErrorKind::PermissionDenied, m)))?;
            Ok(Box::new(kept.into_iter()) as Addrs)
        })
    }
}

/// Chip provider backed by an HTTP points service. Cheap to clone.
#[derive(Clone)]
pub struct HttpChips {
    client: reqwest::Client,
    base: Url,
    auth: String,
    cfg: Arc<HttpChipsConfig>,
}

impl std::fmt::Debug for HttpChips {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never print the token.
        f.debug_struct("HttpChips").field("base", &self.base.as_str()).finish_non_exhaustive()
    }
}

/// A failed attempt: the error, and the server's Retry-After if it sent one.
type Failure = (ChipError, Option<Duration>);

impl HttpChips {
    /// Validates the URL and token and builds the client (rustls, no proxy, no redirects).
    pub fn new(cfg: HttpChipsConfig) -> Result<HttpChips, HttpConfigError> {
        let base = validate_url(&cfg.url, cfg.allow_private)?;
        if cfg.token.is_empty() || !cfg.token.bytes().all(|b| b.is_ascii_graphic()) {
            return Err(HttpConfigError::BadToken);
        }
        let client = guarded_client(&base, cfg.allow_private)
            .timeout(cfg.timeout)
            .connect_timeout(cfg.connect_timeout)
            .build()
            .map_err(|e| HttpConfigError::Client(e.to_string()))?;
        let auth = format!("Bearer {}", cfg.token);
        Ok(HttpChips { client, base, auth, cfg: Arc::new(cfg) })
    }

    /// The normalised base URL.
    pub fn base_url(&self) -> &Url {
        &self.base
    }

    /// Operator grant (buy-in, daily gift): creates chips in `account`. Returns the new balance.
    pub async fn grant(
        &self,
        key: &IdempotencyKey,
        account: &AccountId,
        amount: Chips,
        memo: &str,
    ) -> Result<Chips, ChipError> {
        self.single("v1/grant", key, account, amount, memo).await
    }

    /// One page of an account's movements, oldest first, strictly after the cursor
    /// `SEQ:IDX` (the previous page's `next`): `{"account","entries":[…],"next"}`.
    pub async fn transactions(
        &self,
        account: &AccountId,
        after: Option<&str>,
        limit: u32,
    ) -> Result<Value, ChipError> {
        let limit = limit.to_string();
        let mut query = vec![("account", account.as_str()), ("limit", limit.as_str())];
        if let Some(a) = after {
            query.push(("after", a));
        }
        self.call(Method::GET, "v1/transactions", &query, None).await
    }

    /// Checks that the service answers and its database is reachable.
    pub async fn health(&self) -> Result<(), ChipError> {
        self.call(Method::GET, "v1/health", &[], None).await.map(|_| ())
    }

    /// Asks the service to verify its audit chain; returns its report (`ok`, `head_hash`, …).
    pub async fn verify_audit(&self) -> Result<Value, ChipError> {
        self.call(Method::GET, "v1/audit/verify", &[], None).await
    }

    async fn single(
        &self,
        path: &str,
        key: &IdempotencyKey,
        account: &AccountId,
        amount: Chips,
        memo: &str,
    ) -> Result<Chips, ChipError> {
        let body =
            json!({"key": key.as_str(), "account": account.as_str(), "amount": amount.0, "memo": memo});
        let v = self.call(Method::POST, path, &[], Some(&body)).await?;
        balance_of(&v)
    }

    /// One logical call: attempts with backoff until success, a final error or
    /// the attempt budget is spent. The body (and so the key) never changes.
    async fn call(
        &self,
        method: Method,
        path: &str,
        query: &[(&str, &str)],
        body: Option<&Value>,
    ) -> Result<Value, ChipError> {
        let attempts = self.cfg.max_attempts.max(1);
        let mut n = 0;
        loop {
            n += 1;
            let (err, retry_after) = match self.attempt(method.clone(), path, query, body).await {
                Ok(v) => return Ok(v),
                Err(f) => f,
            };
            if !err.is_retryable() || n >= attempts {
                return Err(err);
            }
            if retry_after.is_some_and(|d| d > self.cfg.max_retry_after) {
                return Err(err);
            }
            let wait = self.backoff(n).max(retry_after.unwrap_or_default());
            tracing::warn!(%path, attempt = n, error = %err, wait_ms = wait.as_millis() as u64, "chip call failed, retrying with the same key");
            tokio::time::sleep(wait).await;
        }
    }

    /// Backoff before attempt `n + 1`: base·2^(n−1) capped, with "equal jitter".
    fn backoff(&self, n: u32) -> Duration {
        let exp = self.cfg.backoff_base.saturating_mul(1u32 << (n - 1).min(16));
        let d = exp.min(self.cfg.backoff_max);
        let half = d / 2;
        half + half.mul_f64(rand::thread_rng().gen::<f64>())
    }

    async fn attempt(
        &self,
        method: Method,
        path: &str,
        query: &[(&str, &str)],
        body: Option<&Value>,
    ) -> Result<Value, Failure> {
        let mut url = self.base.join(path).map_err(|e| (ChipError::BadRequest(e.to_string()), None))?;
        if !query.is_empty() {
            url.query_pairs_mut().extend_pairs(query);
        }
        let mut req = self.client.request(method, url).header(reqwest::header::AUTHORIZATION, &self.auth);
        if let Some(b) = body {
            req = req.json(b);
        }
        let resp = req.send().await.map_err(|e| (transport_error(&e), None))?;
        let status = resp.status();
        let retry_after = resp
            .headers()
            .get(reqwest::header::RETRY_AFTER)
            .and_then(|v| v.to_str().ok())
            .and_then(|s| s.trim().parse::<u64>().ok())
            .map(Duration::from_secs);
        let text = resp.text().await.map_err(|e| (transport_error(&e), None))?;
        let json: Option<Value> = serde_json::from_str(&text).ok();
        if status.is_success() {
            return json.ok_or_else(|| (ChipError::Service("answer is not JSON".into()), None));
        }
        Err((status_error(status, json.as_ref()), retry_after))
    }
}

fn transport_error(e: &reqwest::Error) -> ChipError {
    if e.is_timeout() {
        ChipError::Timeout
    } else {
        // Connect failures and connections dropped before the answer: the
        // request may or may not have landed; a retry with the key is safe.
        let mut msg = e.to_string();
        let mut src = std::error::Error::source(e);
        while let Some(s) = src {
            msg.push_str(": ");
            msg.push_str(&s.to_string());
            src = s.source();
        }
        ChipError::Unreachable(msg)
    }
}

fn status_error(status: StatusCode, body: Option<&Value>) -> ChipError {
    let code = body.and_then(|b| b.get("code")).and_then(Value::as_str).unwrap_or("");
    let message = body
        .and_then(|b| b.get("message"))
        .and_then(Value::as_str)
        .map(str::to_owned)
        .unwrap_or_else(|| status.to_string());
    let field_u64 = |k: &str| body.and_then(|b| b.get(k)).and_then(Value::as_u64).unwrap_or(0);
    let field_str = |k: &str| body.and_then(|b| b.get(k)).and_then(Value::as_str).unwrap_or("").to_owned();
    match (status.as_u16(), code) {
        (_, "insufficient") => ChipError::Insufficient {
            account: field_str("account"),
            balance: field_u64("balance"),
            needed: field_u64("needed"),
        },
        // The key alone: `KeyReused`'s text says the rest (older servers
        // send no `key`: their whole message then).
        (_, "key-reused") => {
            ChipError::KeyReused(Some(field_str("key")).filter(|k| !k.is_empty()).unwrap_or(message))
        }
        (401 | 403, _) => ChipError::Unauthorized(message),
        (429, _) => ChipError::RateLimited,
        (408, _) => ChipError::Timeout,
        (500..=599, _) => ChipError::Service(format!("{status}: {message}")),
        (404, "") => ChipError::Service(format!("{status}: is this a claw points service?")),
        _ => ChipError::BadRequest(if code.is_empty() { message } else { format!("{code}: {message}") }),
    }
}

fn balance_of(v: &Value) -> Result<Chips, ChipError> {
    v.get("balance")
        .and_then(Value::as_u64)
        .map(Chips)
        .ok_or_else(|| ChipError::Service("answer has no balance".into()))
}

#[async_trait]
impl ChipProvider for HttpChips {
    fn name(&self) -> &'static str {
        "http"
    }

    async fn balance(&self, account: &AccountId) -> Result<Chips, ChipError> {
        let v = self.call(Method::GET, "v1/balance", &[("account", account.as_str())], None).await?;
        balance_of(&v)
    }

    async fn debit(
        &self,
        key: &IdempotencyKey,
        account: &AccountId,
        amount: Chips,
        memo: &str,
    ) -> Result<Chips, ChipError> {
        self.single("v1/debit", key, account, amount, memo).await
    }

    async fn credit(
        &self,
        key: &IdempotencyKey,
        account: &AccountId,
        amount: Chips,
        memo: &str,
    ) -> Result<Chips, ChipError> {
        self.single("v1/credit", key, account, amount, memo).await
    }

    async fn settle(&self, key: &IdempotencyKey, ops: &[AccountOp]) -> Result<(), ChipError> {
        let ops: Vec<Value> = ops
            .iter()
            .map(|o| {
                let kind = match o.kind {
                    ChipOp::Debit => "debit",
                    ChipOp::Credit => "credit",
                };
                json!({"kind": kind, "account": o.account.as_str(), "amount": o.amount.0, "memo": o.memo})
            })
            .collect();
        let body = json!({"key": key.as_str(), "ops": ops});
        self.call(Method::POST, "v1/settle", &[], Some(&body)).await.map(|_| ())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classify() {
        let c = |s: &str| classify_ip(s.parse().unwrap());
        assert_eq!(c("127.0.0.1"), AddressClass::Loopback);
        assert_eq!(c("127.9.9.9"), AddressClass::Loopback);
        assert_eq!(c("::1"), AddressClass::Loopback);
        assert_eq!(c("::ffff:127.0.0.1"), AddressClass::Loopback);
        for p in [
            "10.1.2.3",
            "172.16.0.1",
            "172.31.255.255",
            "192.168.1.1",
            "169.254.169.254",
            "100.64.0.1",
            "0.0.0.0",
            "255.255.255.255",
            "224.0.0.1",
            "240.0.0.1",
            "198.18.0.1",
            "::",
            "fc00::1",
            "fd12:3456::1",
            "fe80::1",
            "ff02::1",
            "::ffff:10.0.0.1",
            "64:ff9b::a00:1",
            "::10.0.0.1",
        ] {
            assert_eq!(c(p), AddressClass::Private, "{p}");
        }
        for p in ["8.8.8.8", "172.32.0.1", "100.128.0.1", "2606:4700::1111", "64:ff9b::808:808"] {
            assert_eq!(c(p), AddressClass::Public, "{p}");
        }
    }

    #[test]
    fn resolver_filter() {
        let a = |s: &str| -> SocketAddr { s.parse().unwrap() };
        assert!(filter_resolved("localhost", vec![a("127.0.0.1:0")], false).is_ok());
        assert!(filter_resolved("localhost", vec![a("10.0.0.1:0")], false).is_err());
        assert!(filter_resolved("localhost", vec![a("8.8.8.8:0")], false).is_err());
        // A public name pointing inside (DNS rebinding) is refused unless allowed.
        assert!(filter_resolved("points.example", vec![a("127.0.0.1:0")], false).is_err());
        assert!(filter_resolved("points.example", vec![a("192.168.0.5:0")], false).is_err());
        assert_eq!(filter_resolved("points.example", vec![a("192.168.0.5:0")], true).unwrap().len(), 1);
        let mixed =
            filter_resolved("points.example", vec![a("10.0.0.1:0"), a("93.184.216.34:443")], false).unwrap();
        assert_eq!(mixed, vec![a("93.184.216.34:443")]);
    }

    #[test]
    fn status_mapping() {
        let j = |v: Value| Some(v);
        assert_eq!(
            status_error(
                StatusCode::CONFLICT,
                j(json!({"code":"insufficient","message":"m","account":"a","balance":3,"needed":5})).as_ref()
            ),
            ChipError::Insufficient { account: "a".into(), balance: 3, needed: 5 }
        );
        assert!(matches!(status_error(StatusCode::UNAUTHORIZED, None), ChipError::Unauthorized(_)));
        assert_eq!(status_error(StatusCode::TOO_MANY_REQUESTS, None), ChipError::RateLimited);
        assert!(matches!(status_error(StatusCode::BAD_GATEWAY, None), ChipError::Service(_)));
        assert!(matches!(
            status_error(StatusCode::BAD_REQUEST, j(json!({"code":"bad-amount","message":"m"})).as_ref()),
            ChipError::BadRequest(_)
        ));
    }
}
