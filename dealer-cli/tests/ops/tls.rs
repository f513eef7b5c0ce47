//! A real TLS handshake on 127.0.0.1: the dealer serves `wss://` with a
//! certificate from a generated CA; the SDK trusts that CA (`--ca`) and
//! plays; a client trusting another CA, or only the public roots, is
//! refused with a clear error; plain `ws://` stays refused off loopback.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use claw_dealer::tls::ServerTls;
use claw_player::node::{NodeConfig as PlayerConfig, NodeError, PlayerNode};
use claw_player::transport::ClientTls;
use claw_player::{Invite, InviteError};
use claw_protocol::Identity;
use rcgen::{
    BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair,
    KeyUsagePurpose,
};

use crate::{holdem, play_two, start_node, GUARD};

/// A CA: its PEM file and its issuer.
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

/// A server certificate for localhost and 127.0.0.1 signed by `ca`:
/// (certificate file, key file).
fn make_leaf(dir: &Path, ca: &Ca) -> (PathBuf, PathBuf) {
    let key = KeyPair::generate().unwrap();
    let mut params = CertificateParams::new(vec!["localhost".to_string(), "127.0.0.1".to_string()]).unwrap();
    params.distinguished_name.push(DnType::CommonName, "claw test dealer");
    params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
    let cert = params.signed_by(&key, &ca.issuer).unwrap();
    let (c, k) = (dir.join("dealer.crt"), dir.join("dealer.key.pem"));
    std::fs::write(&c, cert.pem()).unwrap();
    std::fs::write(&k, key.serialize_pem()).unwrap();
    (c, k)
}

fn trusting(ca: &Path) -> PlayerConfig {
    PlayerConfig { tls: Some(ClientTls::with_ca_file(ca).expect("CA file loads")), ..PlayerConfig::default() }
}

async fn refused(invite: &Invite, config: PlayerConfig) -> String {
    let me = Arc::new(Identity::from_seed([9; 32]));
    match tokio::time::timeout(GUARD, PlayerNode::connect(invite, me, config)).await.expect("guard: connect")
    {
        Err(NodeError::Connect(reason)) => reason,
        Err(e) => panic!("refused for the wrong reason: {e}"),
        Ok(_) => panic!("a client that does not trust the dealer's CA connected"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_sdk_player_plays_over_wss_with_the_dealer_ca() {
    let certs = tempfile::tempdir().unwrap();
    let ca = make_ca(certs.path(), "claw-test-ca");
    let other = make_ca(certs.path(), "other-ca");
    let (cert, key) = make_leaf(certs.path(), &ca);
    let tls = ServerTls::from_pem_files(&cert, &key).expect("certificate loads");
    let data = tempfile::tempdir().unwrap();
    let node = start_node(data.path(), vec![holdem(1)], |b| b.tls(tls)).await.unwrap();
    let url = node.invite_url("holdem").unwrap();
    assert!(url.starts_with("wss://127.0.0.1:"), "{url}");
    let invite = Invite::parse(&url).unwrap();
    assert!(invite.tls);

    // Not trusted: another CA, or only the bundled and system roots.
    let reason = refused(&invite, trusting(&other.pem)).await;
    assert!(reason.contains("certificate is not trusted") && reason.contains("--ca"), "{reason}");
    let reason = refused(&invite, PlayerConfig::default()).await;
    assert!(reason.contains("certificate is not trusted"), "{reason}");
    // Plain ws:// to the TLS port gets no WebSocket.
    let plain = Invite::parse(&url.replacen("wss://", "ws://", 1)).unwrap();
    let reason = refused(&plain, PlayerConfig::default()).await;
    assert!(!reason.is_empty());

    // Trusted: a whole hand, audited by both players.
    let reports = play_two(&invite, trusting(&ca.pem), 1).await;
    for r in &reports {
        assert_eq!(r.hands, 1, "{r:?}");
        assert_eq!(r.audited_ok, 1, "{r:?}");
        assert!(r.failures.is_empty(), "{r:?}");
    }
    assert_eq!(std::fs::read_dir(data.path().join("rooms/holdem/transcripts")).unwrap().count(), 1);
    node.shutdown(std::time::Duration::from_secs(1)).await;
}

#[tokio::test]
async fn a_public_url_names_the_proxy_in_invites() {
    let data = tempfile::tempdir().unwrap();
    let node = start_node(data.path(), vec![holdem(1)], |b| b.public_url("wss://cards.example.com/claw/"))
        .await
        .unwrap();
    let url = node.invite_url("holdem").unwrap();
    assert_eq!(url, format!("wss://cards.example.com/claw/holdem#{}", node.dealer_id()));
    assert!(Invite::parse(&url).unwrap().tls);
    node.shutdown(std::time::Duration::from_secs(1)).await;

    let e = start_node(data.path(), vec![holdem(1)], |b| b.public_url("https://cards.example.com")).await;
    assert!(matches!(e, Err(claw_dealer::NodeError::PublicUrl(_))), "{:?}", e.err());
}

#[test]
fn plain_ws_off_loopback_is_still_refused() {
    let key = Identity::from_seed([1; 32]).id();
    let e = Invite::parse(&format!("ws://192.0.2.7:7777/holdem#{key}")).unwrap_err();
    assert_eq!(e, InviteError::InsecureRemote("192.0.2.7".into()));
    assert!(Invite::parse(&format!("wss://192.0.2.7:7777/holdem#{key}")).is_ok());
}
