//! The WebSocket transport: plain `ws://`, or `wss://` over rustls (the
//! aws-lc-rs provider, the one reqwest uses too) trusting the bundled
//! webpki roots, the system's roots and any extra CA the player names.
//!
//! The TLS layer authenticates the host name; the dealer key in the invite
//! fragment is checked on top of it by the handshake.

use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::CertificateDer;
use rustls::{ClientConfig, RootCertStore};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;
use tokio_tungstenite::tungstenite::Error as WsError;
use tokio_tungstenite::{Connector, MaybeTlsStream, WebSocketStream};

/// A WebSocket to the dealer, over TCP or TLS.
pub type Ws = WebSocketStream<MaybeTlsStream<TcpStream>>;

/// Why a TLS client configuration could not be built.
#[derive(Debug, thiserror::Error)]
pub enum TlsSetupError {
    /// The CA file cannot be read or is not PEM.
    #[error("CA file {path}: {reason}")]
    CaFile {
        /// The file.
        path: PathBuf,
        /// Why.
        reason: String,
    },
    /// The CA file holds no certificate.
    #[error("CA file {0}: no PEM certificate in it")]
    NoCertificate(PathBuf),
    /// rustls refused the configuration.
    #[error("TLS configuration: {0}")]
    Config(String),
}

/// Which certificate authorities a `wss://` connection trusts: the
/// bundled webpki roots, the system's roots, and any extra CAs.
#[derive(Clone)]
pub struct ClientTls {
    config: Arc<ClientConfig>,
    /// The extra CAs trusted besides the default roots, as the player named
    /// them (`--ca FILE`), for the error when they do not sign the dealer's
    /// certificate.
    extra: Option<String>,
}

impl std::fmt::Debug for ClientTls {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientTls").finish_non_exhaustive()
    }
}

impl ClientTls {
    /// The bundled webpki roots and the system's roots (built once per
    /// process; unreadable system roots are skipped with a debug log).
    pub fn system() -> Result<ClientTls, TlsSetupError> {
        static SYSTEM: OnceLock<Result<ClientTls, String>> = OnceLock::new();
        SYSTEM
            .get_or_init(|| ClientTls::with_extra(Vec::new()).map_err(|e| e.to_string()))
            .clone()
            .map_err(TlsSetupError::Config)
    }

    /// The default roots plus every certificate in the PEM file `path`
    /// (`claw-player join --ca FILE`).
    pub fn with_ca_file(path: &Path) -> Result<ClientTls, TlsSetupError> {
        let bytes = std::fs::read(path)
            .map_err(|e| TlsSetupError::CaFile { path: path.to_owned(), reason: e.to_string() })?;
        let certs = CertificateDer::pem_slice_iter(&bytes)
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| TlsSetupError::CaFile { path: path.to_owned(), reason: e.to_string() })?;
        if certs.is_empty() {
            return Err(TlsSetupError::NoCertificate(path.to_owned()));
        }
        let tls = ClientTls::with_extra(certs).map_err(|e| match e {
            TlsSetupError::Config(reason) => TlsSetupError::CaFile { path: path.to_owned(), reason },
            e => e,
        })?;
        Ok(ClientTls { extra: Some(format!("--ca {}", path.display())), ..tls })
    }

    /// The rustls configuration, for an HTTP client (reqwest is built
    /// without a crypto provider of its own).
    pub(crate) fn rustls_config(&self) -> ClientConfig {
        (*self.config).clone()
    }

    /// The default roots plus `extra` (DER certificates).
    pub fn with_extra(extra: Vec<CertificateDer<'static>>) -> Result<ClientTls, TlsSetupError> {
        let named = (!extra.is_empty()).then(|| format!("the {} extra CA certificate(s)", extra.len()));
        let mut roots = RootCertStore::empty();
        roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
        let native = rustls_native_certs::load_native_certs();
        for e in &native.errors {
            tracing::debug!(error = %e, "TLS: a system root certificate could not be loaded");
        }
        roots.add_parsable_certificates(native.certs);
        for c in extra {
            roots.add(c).map_err(|e| TlsSetupError::Config(format!("extra CA refused: {e}")))?;
        }
        Ok(ClientTls { config: Arc::new(Self::builder(roots)?), extra: named })
    }

    fn builder(roots: RootCertStore) -> Result<ClientConfig, TlsSetupError> {
        Ok(ClientConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
            .with_safe_default_protocol_versions()
            .map_err(|e| TlsSetupError::Config(e.to_string()))?
            .with_root_certificates(roots)
            .with_no_client_auth())
    }
}

/// Why a connection could not be opened.
#[derive(Debug, thiserror::Error)]
pub enum ConnectError {
    /// The dealer's certificate was refused: why, and what to do about it.
    #[error("TLS: {problem}")]
    Untrusted {
        /// What is wrong with the certificate.
        problem: CertProblem,
    },
    /// Any other failure (refused, reset, not a WebSocket server, …).
    #[error("{0}")]
    Other(String),
}

/// What is wrong with the dealer's certificate, each with its own fix.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CertProblem {
    /// No trusted CA signed it. `extra` names the CAs the player added
    /// (`--ca FILE`), if any: then those are the wrong CAs.
    UnknownIssuer {
        /// The player's extra CAs, as named (`--ca FILE`).
        extra: Option<String>,
    },
    /// It does not name the host the player dialled.
    WrongHost {
        /// The host of the URL.
        host: String,
        /// The names the certificate is valid for.
        names: Vec<String>,
    },
    /// It is a CA certificate (basicConstraints CA:TRUE) served as the
    /// dealer's own, which TLS refuses even when that CA is trusted.
    CaAsServerCertificate,
    /// It expired this many seconds ago (`None`: not known).
    Expired(Option<u64>),
    /// It is valid only from this many seconds from now (`None`: not known).
    NotValidYet(Option<u64>),
    /// Anything else rustls refused, in its words.
    Other(String),
}

impl std::fmt::Display for CertProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CertProblem::UnknownIssuer { extra: None } => f.write_str(
                "the dealer's certificate is not trusted: no CA this client trusts (the bundled Mozilla \
                 roots, the system's) signed it; if the dealer has its own CA, give it with --ca FILE",
            ),
            CertProblem::UnknownIssuer { extra: Some(extra) } => write!(
                f,
                "the dealer's certificate is not trusted: neither {extra} nor the bundled or system roots \
                 signed it; give the CA that signed the dealer's certificate"
            ),
            CertProblem::WrongHost { host, names } => {
                let names = if names.is_empty() { "no host name".to_owned() } else { names.join(", ") };
                write!(
                    f,
                    "the dealer's certificate is not valid for {host} (it names {names}): connect with a \
                     name it names, or give the dealer a certificate for {host}"
                )
            }
            CertProblem::CaAsServerCertificate => f.write_str(
                "the dealer serves a CA certificate (basicConstraints CA:TRUE) as its own, which TLS \
                 refuses even when that CA is trusted: the dealer needs a server certificate (CA:FALSE, \
                 naming its host) signed by that CA (--tls-cert, leaf first)",
            ),
            CertProblem::Expired(ago) => {
                f.write_str("the dealer's certificate has expired")?;
                if let Some(s) = ago {
                    write!(f, " ({s} s ago)")?;
                }
                f.write_str(": the dealer must renew it (or this machine's clock is wrong)")
            }
            CertProblem::NotValidYet(until) => {
                f.write_str("the dealer's certificate is not valid yet")?;
                if let Some(s) = until {
                    write!(f, " (for another {s} s)")?;
                }
                f.write_str(": check this machine's clock and the dealer's")
            }
            CertProblem::Other(why) => write!(f, "the dealer's certificate was refused: {why}"),
        }
    }
}

impl CertProblem {
    /// Names what rustls found wrong. `host` is the URL's; `extra` the
    /// player's extra CAs ([`ClientTls`]).
    pub fn of(e: &rustls::CertificateError, host: &str, extra: Option<&str>) -> CertProblem {
        use rustls::CertificateError as C;
        match e {
            C::UnknownIssuer => CertProblem::UnknownIssuer { extra: extra.map(str::to_owned) },
            C::NotValidForNameContext { expected, presented } => {
                let names = presented.iter().map(|n| plain_name(n)).collect();
                CertProblem::WrongHost { host: expected.to_str().into_owned(), names }
            }
            C::NotValidForName => CertProblem::WrongHost { host: host.to_owned(), names: Vec::new() },
            C::ExpiredContext { time, not_after } => {
                CertProblem::Expired(Some(time.as_secs().saturating_sub(not_after.as_secs())))
            }
            C::Expired => CertProblem::Expired(None),
            C::NotValidYetContext { time, not_before } => {
                CertProblem::NotValidYet(Some(not_before.as_secs().saturating_sub(time.as_secs())))
            }
            C::NotValidYet => CertProblem::NotValidYet(None),
            // rustls passes webpki's CaUsedAsEndEntity on as `Other`, whose
            // text is the variant's name (a unit test pins it).
            C::Other(o) if o.to_string().contains("CaUsedAsEndEntity") => CertProblem::CaAsServerCertificate,
            other => CertProblem::Other(other.to_string()),
        }
    }
}

/// A name webpki lists as the certificate's (`DnsName("a.example")`,
/// `IpAddress(192.0.2.1)`), as the name alone.
fn plain_name(n: &str) -> String {
    let inner =
        n.strip_prefix("DnsName(").or_else(|| n.strip_prefix("IpAddress(")).and_then(|r| r.strip_suffix(')'));
    match inner {
        Some(i) => i.trim_matches('"').to_owned(),
        None => n.to_owned(),
    }
}

/// Dials `url` (`ws://` or `wss://`) and runs the WebSocket upgrade.
/// `tls` of `None` trusts [`ClientTls::system`].
pub async fn connect(
    url: &str,
    tls: Option<&ClientTls>,
    config: WebSocketConfig,
) -> Result<Ws, ConnectError> {
    let tls = match tls {
        Some(t) => t.clone(),
        None => ClientTls::system().map_err(|e| ConnectError::Other(e.to_string()))?,
    };
    let connector = Connector::Rustls(Arc::clone(&tls.config));
    match tokio_tungstenite::connect_async_tls_with_config(url, Some(config), true, Some(connector)).await {
        Ok((ws, _)) => Ok(ws),
        Err(e) => Err(classify(e, url, tls.extra.as_deref())),
    }
}

fn classify(e: WsError, url: &str, extra: Option<&str>) -> ConnectError {
    if let WsError::Io(io) = &e {
        let cert = io.get_ref().and_then(|inner| inner.downcast_ref::<rustls::Error>());
        if let Some(rustls::Error::InvalidCertificate(c)) = cert {
            let host = url::Url::parse(url).ok().and_then(|u| u.host_str().map(str::to_owned));
            return ConnectError::Untrusted {
                problem: CertProblem::of(c, host.as_deref().unwrap_or(url), extra),
            };
        }
    }
    ConnectError::Other(e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn certificate_names_are_shown_without_their_kind() {
        assert_eq!(plain_name(r#"DnsName("dealer.example")"#), "dealer.example");
        assert_eq!(plain_name("IpAddress(192.0.2.7)"), "192.0.2.7");
        assert_eq!(plain_name("DirectoryName"), "DirectoryName");
    }

    #[test]
    fn ca_file_errors_are_clear() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("missing.pem");
        let e = ClientTls::with_ca_file(&missing).unwrap_err();
        assert!(matches!(e, TlsSetupError::CaFile { .. }), "{e}");
        assert!(e.to_string().contains("missing.pem"), "{e}");
        let empty = dir.path().join("empty.pem");
        std::fs::write(&empty, "not a certificate\n").unwrap();
        let e = ClientTls::with_ca_file(&empty).unwrap_err();
        assert!(matches!(e, TlsSetupError::NoCertificate(_)), "{e}");
        let bad = dir.path().join("bad.pem");
        std::fs::write(&bad, "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n").unwrap();
        let e = ClientTls::with_ca_file(&bad).unwrap_err();
        assert!(matches!(e, TlsSetupError::CaFile { .. }), "{e}");
        assert!(ClientTls::system().is_ok());
    }
}
