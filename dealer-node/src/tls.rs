//! TLS on the dealer's WebSocket port (`claw-dealer --tls-cert --tls-key`):
//! the certificate chain and key loaded from PEM files with clear errors,
//! and the acceptor the server runs on each TCP connection before the
//! WebSocket upgrade. rustls with the aws-lc-rs provider (the SDK's).

use std::io;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tokio_rustls::server::TlsStream;
use tokio_rustls::TlsAcceptor;

/// Why the certificate or key cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    /// A file cannot be read or is not valid PEM.
    #[error("{what} {path}: {reason}")]
    File {
        /// `certificate` or `key`.
        what: &'static str,
        /// The file.
        path: PathBuf,
        /// Why.
        reason: String,
    },
    /// The certificate file holds no certificate.
    #[error("certificate {0}: no PEM certificate in it")]
    NoCertificate(PathBuf),
    /// rustls refused the pair (the key does not match the certificate, an
    /// unsupported key type, …).
    #[error("certificate {cert} with key {key}: {reason}")]
    Refused {
        /// The certificate file.
        cert: PathBuf,
        /// The key file.
        key: PathBuf,
        /// Why.
        reason: String,
    },
}

/// The dealer's TLS identity: accepts TLS on a TCP connection.
#[derive(Clone)]
pub struct ServerTls {
    acceptor: TlsAcceptor,
}

impl std::fmt::Debug for ServerTls {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServerTls").finish_non_exhaustive()
    }
}

impl ServerTls {
    /// Loads a PEM certificate chain (leaf first) and its PEM private key
    /// (PKCS#8, PKCS#1 or SEC1).
    pub fn from_pem_files(cert: &Path, key: &Path) -> Result<ServerTls, TlsError> {
        let file_err =
            |what, path: &Path, reason: String| TlsError::File { what, path: path.to_owned(), reason };
        let chain = CertificateDer::pem_file_iter(cert)
            .map_err(|e| file_err("certificate", cert, e.to_string()))?
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| file_err("certificate", cert, e.to_string()))?;
        if chain.is_empty() {
            return Err(TlsError::NoCertificate(cert.to_owned()));
        }
        let private = PrivateKeyDer::from_pem_file(key).map_err(|e| file_err("key", key, e.to_string()))?;
        let refused =
            |reason: String| TlsError::Refused { cert: cert.to_owned(), key: key.to_owned(), reason };
        let config =
            rustls::ServerConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
                .with_safe_default_protocol_versions()
                .map_err(|e| refused(e.to_string()))?
                .with_no_client_auth()
                .with_single_cert(chain, private)
                .map_err(|e| refused(e.to_string()))?;
        Ok(ServerTls { acceptor: TlsAcceptor::from(Arc::new(config)) })
    }

    /// Runs the TLS handshake on `tcp`.
    pub async fn accept(&self, tcp: TcpStream) -> io::Result<ServerStream> {
        Ok(ServerStream::Tls(Box::new(self.acceptor.accept(tcp).await?)))
    }
}

/// A client connection: plain TCP, or TLS over it.
pub enum ServerStream {
    /// `ws://`.
    Plain(TcpStream),
    /// `wss://`.
    Tls(Box<TlsStream<TcpStream>>),
}

impl AsyncRead for ServerStream {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            ServerStream::Plain(s) => Pin::new(s).poll_read(cx, buf),
            ServerStream::Tls(s) => Pin::new(s.as_mut()).poll_read(cx, buf),
        }
    }
}

impl AsyncWrite for ServerStream {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            ServerStream::Plain(s) => Pin::new(s).poll_write(cx, buf),
            ServerStream::Tls(s) => Pin::new(s.as_mut()).poll_write(cx, buf),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            ServerStream::Plain(s) => Pin::new(s).poll_flush(cx),
            ServerStream::Tls(s) => Pin::new(s.as_mut()).poll_flush(cx),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            ServerStream::Plain(s) => Pin::new(s).poll_shutdown(cx),
            ServerStream::Tls(s) => Pin::new(s.as_mut()).poll_shutdown(cx),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn load_errors_name_the_file_and_the_reason() {
        let dir = tempfile::tempdir().unwrap();
        let cert_path = dir.path().join("cert.pem");
        let key_path = dir.path().join("key.pem");
        let e = ServerTls::from_pem_files(&cert_path, &key_path).unwrap_err();
        assert!(matches!(e, TlsError::File { what: "certificate", .. }), "{e}");
        assert!(e.to_string().contains("cert.pem"), "{e}");

        std::fs::write(&cert_path, "no pem here\n").unwrap();
        let e = ServerTls::from_pem_files(&cert_path, &key_path).unwrap_err();
        assert!(matches!(e, TlsError::NoCertificate(_)), "{e}");

        let key = rcgen::KeyPair::generate().unwrap();
        let cert =
            rcgen::CertificateParams::new(vec!["localhost".into()]).unwrap().self_signed(&key).unwrap();
        std::fs::write(&cert_path, cert.pem()).unwrap();
        let e = ServerTls::from_pem_files(&cert_path, &key_path).unwrap_err();
        assert!(matches!(e, TlsError::File { what: "key", .. }), "{e}");

        // A key that is not the certificate's.
        std::fs::write(&key_path, rcgen::KeyPair::generate().unwrap().serialize_pem()).unwrap();
        let e = ServerTls::from_pem_files(&cert_path, &key_path).unwrap_err();
        assert!(matches!(e, TlsError::Refused { .. }), "{e}");

        std::fs::write(&key_path, key.serialize_pem()).unwrap();
        assert!(ServerTls::from_pem_files(&cert_path, &key_path).is_ok());
    }
}
