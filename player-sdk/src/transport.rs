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
        ClientTls::with_extra(certs).map_err(|e| match e {
            TlsSetupError::Config(reason) => TlsSetupError::CaFile { path: path.to_owned(), reason },
            e => e,
        })
    }

    /// The default roots plus `extra` (DER certificates).
    pub fn with_extra(extra: Vec<CertificateDer<'static>>) -> Result<ClientTls, TlsSetupError> {
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
        Ok(ClientTls { config: Arc::new(Self::builder(roots)?) })
    }

    fn builder(roots: RootCertStore) -> Result<ClientConfig, TlsSetupError> {
        Ok(ClientConfig::builder_with_provider(Arc::new(rustls::crypto::aws_lc_rs::default_provider()))
            .with_safe_default_protocol_versions()
            .map_err(|e| TlsSetupError::Config(e.to_string()))?
            .with_root_certificates(roots)
            .with_no_client_auth())
    }
}

/// Why a connection could not be opened.
#[derive(Debug, thiserror::Error)]
pub enum ConnectError {
    /// The dealer's certificate is not signed by a trusted CA, names
    /// another host, or has expired.
    #[error("TLS: the dealer's certificate is not trusted ({0}); give its CA with --ca FILE")]
    Untrusted(String),
    /// Any other failure (refused, reset, not a WebSocket server, …).
    #[error("{0}")]
    Other(String),
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
    let connector = Connector::Rustls(tls.config);
    match tokio_tungstenite::connect_async_tls_with_config(url, Some(config), true, Some(connector)).await {
        Ok((ws, _)) => Ok(ws),
        Err(e) => Err(classify(e)),
    }
}

fn classify(e: WsError) -> ConnectError {
    if let WsError::Io(io) = &e {
        let cert = io.get_ref().and_then(|inner| inner.downcast_ref::<rustls::Error>());
        if let Some(rustls::Error::InvalidCertificate(c)) = cert {
            return ConnectError::Untrusted(format!("{c:?}"));
        }
    }
    ConnectError::Other(e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

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
