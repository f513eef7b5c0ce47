//! What `claw-player join` says when a `wss://` dealer's certificate is
//! refused: the cause once, in one line, with its fix (the SDK's own
//! messages: player-sdk/tests/sdk/tls.rs).

use crate::player;
use crate::tls_listener::{self_signed_ca, serve};

/// The binary prints the cause once, in one line, with its fix.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claw_player_join_says_what_is_wrong_with_the_certificate() {
    let dir = tempfile::tempdir().unwrap();
    let (pem, cert, key) = self_signed_ca(dir.path());
    let port = serve(cert, key).await;
    let url = format!("wss://127.0.0.1:{port}/room#{}", "ab".repeat(32));
    let out = tokio::task::spawn_blocking(move || {
        player().args(["join", &url, "--ca"]).arg(&pem).env("RUST_BACKTRACE", "0").output().unwrap()
    })
    .await
    .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    let line = stderr.lines().find(|l| l.contains("TLS")).unwrap_or_else(|| panic!("{stderr}"));
    assert_eq!(line.matches("CA:TRUE").count(), 1, "{line}");
    assert!(line.starts_with("claw-player: joining: connection: TLS: the dealer serves a CA"), "{line}");
    assert!(!line.contains("--ca FILE"), "{line}");
}
