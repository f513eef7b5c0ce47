//! A TLS listener on 127.0.0.1 serving a certificate the client refuses:
//! for the SDK's TLS error messages and the `claw-player` binary's.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, KeyPair};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use tokio::net::TcpListener;

/// A self-signed CA certificate (basicConstraints CA:TRUE) for 127.0.0.1,
/// written to `dir/self.pem`: what `openssl req -x509` gives by default.
pub fn self_signed_ca(dir: &Path) -> (PathBuf, CertificateDer<'static>, PrivateKeyDer<'static>) {
    let key = KeyPair::generate().unwrap();
    let mut params = CertificateParams::new(vec!["127.0.0.1".to_string()]).unwrap();
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    params.distinguished_name.push(DnType::CommonName, "self-signed dealer");
    let cert = params.self_signed(&key).unwrap();
    let pem = dir.join("self.pem");
    std::fs::write(&pem, cert.pem()).unwrap();
    (pem, cert.der().clone(), PrivatePkcs8KeyDer::from(key.serialize_der()).into())
}

/// A TLS listener on 127.0.0.1 serving `cert` (it completes handshakes and
/// speaks no HTTP): its port.
pub async fn serve(cert: CertificateDer<'static>, key: PrivateKeyDer<'static>) -> u16 {
    let config =
        rustls::ServerConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_no_client_auth()
            .with_single_cert(vec![cert], key)
            .unwrap();
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        while let Ok((tcp, _)) = listener.accept().await {
            let acceptor = acceptor.clone();
            tokio::spawn(async move {
                let _ = acceptor.accept(tcp).await;
            });
        }
    });
    port
}
