//! `claw-dealer --game texas-holdem --deal blind --bots 6 --hands N --chips
//! local` and `--game sam-gong --bots 4` (issue 35): the real binary deals
//! dealer-blind hands to SDK bots over real sockets; every bot splits its secret into pieces,
//! shuffles, answers every share request and audits every hand live; each
//! archived transcript is audited again offline, and no archived hand (nor
//! the dealer's state, `engine/src/hand/blind_tests.rs`) holds an opened
//! hidden card: a blind transcript opens no position at its end.

use std::process::{Command, Stdio};

use claw_audit::Auditor;
use claw_dealer::archive::Archive;

/// Hands played: enough for several button rotations, short for CI.
const HANDS: u64 = 12;

#[test]
fn six_bots_play_blind_holdem_and_every_hand_audits() {
    blind_table_audits("texas-holdem", 6, HANDS);
}

/// Sam Gong blind (the banker is always a seated player): its showdown
/// opens the callers' and the banker's hands with their owners' shares.
#[test]
fn four_bots_play_blind_sam_gong_and_every_hand_audits() {
    blind_table_audits("sam-gong", 4, 10);
}

/// Runs `claw-dealer --game GAME --deal blind` with `bots` bots for `hands`
/// hands and audits every archived hand offline.
fn blind_table_audits(game: &str, bots: u8, hands: u64) {
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_claw-dealer"))
        .args(["--game", game, "--deal", "blind", "--bots", &bots.to_string()])
        .args(["--hands", &hands.to_string(), "--chips", "local", "--data-dir"])
        .arg(dir.path())
        .stdin(Stdio::null())
        .output()
        .expect("claw-dealer runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "claw-dealer failed:\n{stdout}\n{stderr}");
    assert!(stdout.contains(&format!("{hands} hands audited OK")), "summary:\n{stdout}\n{stderr}");
    assert!(stdout.contains("(0 voided)"), "no blind hand is cancelled:\n{stdout}");

    let files = Archive::reader(dir.path(), game).files();
    assert_eq!(files.len() as u64, hands, "one archived transcript per hand");
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        assert!(text.contains(r#""type":"blind-pieces""#), "{}: every seat's pieces", f.display());
        assert!(text.contains(r#""deck_mode":"blind""#), "{}: a blind deck", f.display());
        for v in Auditor::new(None).audit_file(f).unwrap() {
            let rep = v.outcome.unwrap_or_else(|e| panic!("{}: {e}", f.display()));
            assert!(rep.complete(), "{}: every check ran", f.display());
        }
    }
}

/// A game not dealt blind is refused before anything starts, with its
/// reason (docs/blind-deal.md §II.1).
#[test]
fn blind_blackjack_and_dou_di_zhu_are_refused_with_their_reason() {
    for (game, why) in [
        ("blackjack", "the house's hole card decides the house's play"),
        ("dou-di-zhu", "which needs the owner's opening"),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let out = Command::new(env!("CARGO_BIN_EXE_claw-dealer"))
            .args(["--game", game, "--deal", "blind", "--bots", "--hands", "1", "--chips", "local"])
            .arg("--data-dir")
            .arg(dir.path())
            .stdin(Stdio::null())
            .output()
            .expect("claw-dealer runs");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{game} must be refused");
        assert!(stderr.contains(&format!("deal = \"blind\" is not offered for {game}")), "{stderr}");
        assert!(stderr.contains(why), "{stderr}");
    }
}
