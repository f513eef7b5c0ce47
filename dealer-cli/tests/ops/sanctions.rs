//! `claw-dealer admin` against the real binary: a ban through the CLI is
//! refused at the next handshake, listed and audited; a tampered audit log
//! is reported by `admin audit` (exit 1) with a `"severity":"CRITICAL"`
//! JSON log line from the dealer, and a dealer does not start on it.

use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Arc;

use claw_player::node::{NodeConfig as PlayerConfig, NodeError, PlayerNode};
use claw_protocol::handshake::{HandshakeError, RejectReason};
use claw_protocol::Identity;
use serde_json::Value;

use crate::stop::DealerProc;
use crate::{wait_dealer, GUARD};

fn dealer(data: &Path, log: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_claw-dealer"));
    c.args(["--game", "texas-holdem", "--listen", "127.0.0.1:0", "--http-listen", "127.0.0.1:0"])
        .args(["--admin-api", "--log-format", "json", "--welcome", "1000"])
        .arg("--data-dir")
        .arg(data)
        .stdin(Stdio::null())
        .stderr(Stdio::from(std::fs::File::create(log).unwrap()));
    c
}

/// `claw-dealer admin ARGS` against `url`: (exit code, stdout, stderr).
async fn admin(url: &str, data: &Path, args: &[&str]) -> (i32, String, String) {
    let mut c = Command::new(env!("CARGO_BIN_EXE_claw-dealer"));
    c.args(["admin", "--url", url]).arg("--data-dir").arg(data).args(args);
    let out = tokio::time::timeout(GUARD, tokio::task::spawn_blocking(move || c.output()))
        .await
        .expect("guard: claw-dealer admin")
        .unwrap()
        .unwrap();
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    (out.status.code().unwrap_or(-1), text(&out.stdout), text(&out.stderr))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_operator_bans_with_the_cli_and_a_tampered_audit_log_is_critical() {
    let tmp = tempfile::tempdir().unwrap();
    let (data, log) = (tmp.path().join("data"), tmp.path().join("dealer.log"));
    let d = DealerProc::start_with(dealer(&data, &log), log.clone()).await;
    let text = d.log_text();
    let line = text.lines().find(|l| l.contains("admin API http://")).expect("the admin API line");
    let host = line.split("http://").nth(1).unwrap().split('/').next().unwrap();
    let url = format!("http://{host}");
    let me = Arc::new(Identity::from_seed([7; 32]));
    let id = me.id().to_string();

    let (code, out, err) = admin(&url, &data, &["ban", &id, "--reason", "bot farm", "--for", "2h"]).await;
    assert_eq!(code, 0, "{out}{err}");
    let v: Value = serde_json::from_str(&out).expect("the answer as JSON on stdout");
    assert_eq!((v["sanction"]["kind"].as_str(), v["sanction"]["player"].as_str()), (Some("ban"), Some(&*id)));
    assert_eq!(
        v["sanction"]["until_ms"].as_u64().unwrap() - v["sanction"]["created_ms"].as_u64().unwrap(),
        2 * 3600 * 1000
    );
    // The banned identity is refused at the handshake, by name.
    let joined = tokio::time::timeout(GUARD, PlayerNode::connect(&d.invite(), me, PlayerConfig::default()))
        .await
        .expect("guard");
    match joined {
        Err(NodeError::Handshake(HandshakeError::Rejected(RejectReason::Banned))) => {}
        other => panic!("expected `banned`, got {:?}", other.map(|_| ())),
    }
    let (code, out, _) = admin(&url, &data, &["list"]).await;
    assert_eq!(code, 0);
    assert!(out.contains(&id) && out.contains("bot farm"), "{out}");
    let (code, out, _) = admin(&url, &data, &["show", &id]).await;
    assert_eq!(code, 0);
    assert!(out.contains("\"signals\""), "{out}");
    // Refused input: exit 1 with the API's reason.
    let (code, _, err) = admin(&url, &data, &["freeze", "zz", "--reason", "x"]).await;
    assert_eq!(code, 1);
    assert!(err.contains("400") && err.contains("player id"), "{err}");
    let (code, out, _) = admin(&url, &data, &["audit"]).await;
    assert_eq!(code, 0);
    assert_eq!(serde_json::from_str::<Value>(&out).unwrap()["lines"], 1, "{out}");

    // Tampered: reported, and logged CRITICAL as a JSON field.
    let file = data.join(claw_dealer::audit_log::AUDIT_FILE);
    let t = std::fs::read_to_string(&file).unwrap();
    std::fs::write(&file, t.replace("bot farm", "nothing")).unwrap();
    let (code, _, err) = admin(&url, &data, &["audit"]).await;
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("500") && err.contains("line 1"), "{err}");
    let (_, log_text) = d.terminate().await;
    let critical = log_text
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|v| v["fields"]["severity"] == "CRITICAL")
        .unwrap_or_else(|| panic!("no CRITICAL line: {log_text}"));
    assert_eq!(critical["level"], "ERROR");
    assert!(critical["fields"]["message"].as_str().unwrap().contains("audit log"), "{critical}");

    // A dealer does not start on a broken audit log: the operator looks first.
    let child = dealer(&data, &log).stdout(Stdio::piped()).spawn().unwrap();
    let out = wait_dealer(child, GUARD).await;
    assert_ne!(out.status.code(), Some(0));
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(text.contains("admin audit log") && text.contains("line 1"), "{text}");
}
