//! Why a `--chips-url` points service does not answer at start, in words:
//! the name does not resolve, it resolves only to addresses the chip
//! client refuses (the one case `--chips-allow-private` fixes), nothing
//! listens there, or the host does not answer — each with its fix.

use std::net::SocketAddr;
use std::time::Duration;

use claw_chips::http::filter_resolved;
use claw_chips::ChipError;

/// How long each probe may take.
const PROBE: Duration = Duration::from_secs(5);

/// The cause of a failed health check of the points service at `url`, and
/// what fixes it. Probes the network again to tell the causes apart.
pub async fn explain(url: &str, allow_private: bool, error: &ChipError) -> String {
    match error {
        ChipError::Unauthorized(m) => {
            format!("the service refused the token ({m}): check --chips-token (or CLAW_CHIPS_TOKEN)")
        }
        ChipError::Unreachable(_) | ChipError::Timeout => match probe(url, allow_private).await {
            Some(cause) => cause,
            None => format!("{error} (the host accepts connections: check the URL's scheme and path)"),
        },
        other => format!("{other} (is --chips-url a claw points service?)"),
    }
}

/// The network-level cause for `url`, or `None` when a TCP connection to
/// it succeeds (the failure is above TCP).
async fn probe(url: &str, allow_private: bool) -> Option<String> {
    let parsed = url::Url::parse(url).ok()?;
    let host = parsed.host_str()?.trim_start_matches('[').trim_end_matches(']').to_owned();
    let port = parsed.port_or_known_default()?;
    let found: Vec<SocketAddr> =
        match tokio::time::timeout(PROBE, tokio::net::lookup_host((host.as_str(), port))).await {
            Ok(Ok(a)) => a.collect(),
            Ok(Err(e)) => {
                return Some(format!("the host name {host} does not resolve ({e}): check --chips-url"))
            }
            Err(_) => {
                return Some(format!("looking up {host} took over {PROBE:?}: check DNS and --chips-url"))
            }
        };
    let ip_literal = host.parse::<std::net::IpAddr>().is_ok();
    let usable = if ip_literal {
        // An address in the URL itself already passed the policy.
        found
    } else {
        match filter_resolved(&host, found.clone(), allow_private) {
            Ok(kept) => kept,
            Err(_) if !allow_private => {
                let list: Vec<String> = found.iter().map(|a| a.ip().to_string()).collect();
                return Some(format!(
                    "{host} resolves only to private or loopback addresses ({}), which the chip client \
                     refuses: pass --chips-allow-private to use them (still over TLS)",
                    list.join(", ")
                ));
            }
            Err(why) => return Some(why),
        }
    };
    let mut last = None;
    for addr in &usable {
        match tokio::time::timeout(PROBE, tokio::net::TcpStream::connect(addr)).await {
            Ok(Ok(_)) => return None,
            Ok(Err(e)) if e.kind() == std::io::ErrorKind::ConnectionRefused => {
                last = Some(format!(
                    "nothing listens on {addr} (connection refused): start the points service there, or \
                     correct the port in --chips-url"
                ));
            }
            Ok(Err(e)) => last = Some(format!("connecting to {addr}: {e}")),
            Err(_) => {
                last = Some(format!(
                    "{addr} does not answer (no connection within {PROBE:?}): a firewall, or the wrong host \
                     or port in --chips-url"
                ))
            }
        }
    }
    last
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unreachable() -> ChipError {
        ChipError::Unreachable("connect error".into())
    }

    #[tokio::test]
    async fn a_closed_loopback_port_is_connection_refused_not_a_private_network() {
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        for url in [format!("http://127.0.0.1:{port}/"), format!("http://localhost:{port}/")] {
            let why = explain(&url, false, &unreachable()).await;
            assert!(why.contains("connection refused") && why.contains(&port.to_string()), "{url}: {why}");
            assert!(!why.contains("--chips-allow-private"), "{url}: {why}");
        }
    }

    #[tokio::test]
    async fn a_listening_port_is_not_blamed_on_the_network() {
        let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://127.0.0.1:{}/", l.local_addr().unwrap().port());
        let why = explain(&url, false, &unreachable()).await;
        assert!(why.contains("accepts connections"), "{why}");
    }

    #[tokio::test]
    async fn a_name_that_does_not_resolve_says_so_not_the_private_network_flag() {
        let why = explain("https://points.invalid/", false, &unreachable()).await;
        assert!(why.contains("does not resolve") && !why.contains("--chips-allow-private"), "{why}");
    }

    #[tokio::test]
    async fn a_refused_token_names_the_token_flag() {
        let why =
            explain("https://points.example/", false, &ChipError::Unauthorized("bad token".into())).await;
        assert!(why.contains("--chips-token") && why.contains("bad token"), "{why}");
    }
}
