//! `claw-dealer --game guandan --bots 4 --hands N`: whole deals of a match,
//! with tribute and return moving sealed cards (`card-transfer`), over real
//! sockets; the binary's bots audit every hand live, and each transcript
//! the dealer archived is audited again offline, as `claw-player audit`
//! does, and with the `claw-player` binary.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use claw_audit::Auditor;
use claw_dealer::archive::Archive;

/// Deals played: the first of a match has no tribute, the later ones do
/// (unless resisted), and four keep the test short.
const HANDS: u64 = 4;

/// The `claw-player` binary: `CLAW_PLAYER_BIN`, else next to `claw-dealer`
/// (`cargo test --workspace` builds both). Another package's binary, so no
/// `CARGO_BIN_EXE_…`: missing, the test fails saying how to build it.
pub(crate) fn claw_player_bin() -> PathBuf {
    if let Some(p) = std::env::var_os("CLAW_PLAYER_BIN") {
        return PathBuf::from(p);
    }
    let dealer = Path::new(env!("CARGO_BIN_EXE_claw-dealer"));
    let p = dealer.with_file_name(format!("claw-player{}", std::env::consts::EXE_SUFFIX));
    assert!(
        p.exists(),
        "no claw-player binary at {}: run the workspace's tests (`cargo test --workspace`), or \
         `cargo build -p claw-player-cli` first, or set CLAW_PLAYER_BIN",
        p.display()
    );
    p
}

#[test]
fn guandan_bots_play_tribute_deals_and_every_hand_audits_offline() {
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_claw-dealer"))
        .args(["--game", "guandan", "--bots", "4", "--hands", &HANDS.to_string()])
        .arg("--data-dir")
        .arg(dir.path())
        .stdin(Stdio::null())
        .output()
        .expect("claw-dealer runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "claw-dealer failed:\n{stdout}\n{stderr}");
    assert!(stdout.contains(&format!("{HANDS} hands audited OK")), "summary:\n{stdout}\n{stderr}");
    assert!(!stderr.contains("exceeds"), "a message did not fit a frame:\n{stderr}");

    let files = Archive::reader(dir.path(), "guandan").files();
    assert_eq!(files.len() as u64, HANDS, "one archived transcript per hand");
    let mut transfers = 0;
    let mut dealers = std::collections::BTreeSet::new();
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        transfers += text.matches(r#""type":"card-transfer""#).count();
        for v in Auditor::new(None).audit_file(f).unwrap() {
            let rep = v.outcome.unwrap_or_else(|e| panic!("{}: {e}", f.display()));
            assert!(rep.complete(), "{}: every check ran", f.display());
            dealers.insert(rep.hand.dealer);
        }
    }
    assert_eq!(dealers.len(), 1, "one dealer signed every hand");
    assert!(transfers >= 2, "tribute and return moved cards in the later deals ({transfers} transfers)");

    // The player CLI on the same files, trusting the dealer's key.
    let bin = claw_player_bin();
    let dealer = dealers.iter().next().unwrap().to_string();
    let out = Command::new(&bin).arg("audit").arg("--dealer").arg(&dealer).args(&files).output().unwrap();
    assert!(
        out.status.success(),
        "claw-player audit:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}
