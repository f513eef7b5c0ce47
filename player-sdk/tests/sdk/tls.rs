//! What the SDK says when a `wss://` dealer's certificate is refused: a
//! real TLS listener on 127.0.0.1 serves each kind of bad certificate, and
//! each error names its own cause and fix (`--ca` only when no `--ca` was
//! given). The `claw-player` binary's line: player-cli/tests/cli/tls.rs.

use std::path::{Path, PathBuf};

use crate::tls_listener::{self_signed_ca, serve};
use claw_player::transport::{connect, CertProblem, ClientTls, ConnectError};
use rcgen::{
    date_time_ymd, BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer,
    KeyPair, KeyUsagePurpose,
};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;

struct Ca {
    pem: PathBuf,
    issuer: Issuer<'static, KeyPair>,
}

fn make_ca(dir: &Path, name: &str) -> Ca {
    let key = KeyPair::generate().unwrap();
    let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    params.distinguished_name.push(DnType::CommonName, name);
    params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
    let cert = params.self_signed(&key).unwrap();
    let pem = dir.join(format!("{name}.pem"));
    std::fs::write(&pem, cert.pem()).unwrap();
    Ca { pem, issuer: Issuer::new(params, key) }
}

/// A server certificate for `names` signed by `ca`, optionally with
/// another validity: (certificate, key).
fn leaf(
    ca: &Ca,
    names: &[&str],
    valid: Option<(i32, i32)>,
) -> (CertificateDer<'static>, PrivateKeyDer<'static>) {
    let key = KeyPair::generate().unwrap();
    let mut params = CertificateParams::new(names.iter().map(|n| n.to_string()).collect::<Vec<_>>()).unwrap();
    params.distinguished_name.push(DnType::CommonName, "claw test dealer");
    params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
    if let Some((from, to)) = valid {
        params.not_before = date_time_ymd(from, 1, 1);
        params.not_after = date_time_ymd(to, 1, 1);
    }
    let cert = params.signed_by(&key, &ca.issuer).unwrap();
    (cert.der().clone(), PrivatePkcs8KeyDer::from(key.serialize_der()).into())
}

async fn refusal(port: u16, tls: Option<&ClientTls>) -> ConnectError {
    let url = format!("wss://127.0.0.1:{port}/room");
    match connect(&url, tls, WebSocketConfig::default()).await {
        Err(e) => e,
        Ok(_) => panic!("{url}: connected"),
    }
}

fn problem(e: ConnectError) -> CertProblem {
    match e {
        ConnectError::Untrusted { problem } => problem,
        other => panic!("not a certificate refusal: {other}"),
    }
}

#[tokio::test]
async fn each_refused_certificate_names_its_cause_and_fix() {
    let dir = tempfile::tempdir().unwrap();
    let ca = make_ca(dir.path(), "dealer-ca");
    let other = make_ca(dir.path(), "other-ca");
    let trusting = |ca: &Path| ClientTls::with_ca_file(ca).unwrap();
    let (cert, key) = leaf(&ca, &["localhost", "127.0.0.1"], None);
    let good = serve(cert, key).await;

    // No --ca: the CA is unknown, and --ca is the fix.
    let e = refusal(good, None).await;
    let text = e.to_string();
    assert_eq!(problem(e), CertProblem::UnknownIssuer { extra: None });
    assert!(text.starts_with("TLS: the dealer's certificate is not trusted"), "{text}");
    assert!(text.contains("give it with --ca FILE"), "{text}");

    // Another CA given with --ca: that CA is the wrong one, said so.
    let e = refusal(good, Some(&trusting(&other.pem))).await;
    let text = e.to_string();
    let named = format!("--ca {}", other.pem.display());
    assert_eq!(problem(e), CertProblem::UnknownIssuer { extra: Some(named.clone()) });
    assert!(text.contains(&format!("neither {named} nor")), "{text}");
    assert!(!text.contains("--ca FILE"), "{text}");

    // The right CA: TLS passes (this listener then speaks no WebSocket).
    let e = refusal(good, Some(&trusting(&ca.pem))).await;
    assert!(matches!(e, ConnectError::Other(_)), "{e}");

    // The right CA, but the certificate names another host.
    let (cert, key) = leaf(&ca, &["dealer.example"], None);
    let e = refusal(serve(cert, key).await, Some(&trusting(&ca.pem))).await;
    let text = e.to_string();
    assert_eq!(
        problem(e),
        CertProblem::WrongHost { host: "127.0.0.1".into(), names: vec!["dealer.example".into()] }
    );
    assert!(text.contains("not valid for 127.0.0.1 (it names dealer.example)"), "{text}");
    assert!(!text.contains("--ca"), "{text}");

    // The right CA, an expired certificate.
    let (cert, key) = leaf(&ca, &["127.0.0.1"], Some((2000, 2001)));
    let e = refusal(serve(cert, key).await, Some(&trusting(&ca.pem))).await;
    let text = e.to_string();
    assert!(matches!(problem(e), CertProblem::Expired(Some(s)) if s > 365 * 86_400), "{text}");
    assert!(text.contains("has expired") && text.contains("renew"), "{text}");

    // A self-signed CA:TRUE certificate given with --ca: not a trust
    // problem, the dealer serves a CA as its own certificate.
    let (pem, cert, key) = self_signed_ca(dir.path());
    let e = refusal(serve(cert, key).await, Some(&trusting(&pem))).await;
    let text = e.to_string();
    assert_eq!(problem(e), CertProblem::CaAsServerCertificate, "{text}");
    assert!(text.contains("CA:TRUE") && text.contains("server certificate"), "{text}");
    assert!(!text.contains("--ca"), "{text}");
}
