//! The chains are cargo features of `claw-dealer-cli` (`evm`, `solana`,
//! `chains`; `solana-litesvm` for the demo bank): the flags stay in
//! `--help` in every build, and a build without a feature refuses its flag
//! in one line naming the build command, before it touches the data
//! directory. The refusals are compiled in the builds that lack the feature
//! (the plain `cargo test -p claw-dealer-cli`); the message itself is unit
//! tested in `src/features.rs` in every build.

use std::process::Command;

#[test]
fn help_lists_the_chain_flags_in_every_build() {
    let out =
        Command::new(env!("CARGO_BIN_EXE_claw-dealer")).arg("--help").output().expect("claw-dealer runs");
    let help = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{help}");
    for flag in ["evm", "solana", "--evm-rpc-url", "--solana-mint", "--solana-litesvm", "--features chains"] {
        assert!(help.contains(flag), "--help lacks {flag}:\n{help}");
    }
}

/// Runs `claw-dealer ARGS` in a fresh data directory and checks that it
/// fails (exit 2, a usage error) with exactly one stderr line holding
/// `build`, and leaves the data directory uncreated.
#[cfg(not(all(feature = "evm", feature = "solana", feature = "solana-litesvm")))]
fn refused(args: &[&str], rooms: Option<&str>, build: &str) {
    let dir = tempfile::tempdir().expect("temp dir");
    let data = dir.path().join("data");
    let mut c = Command::new(env!("CARGO_BIN_EXE_claw-dealer"));
    if let Some(text) = rooms {
        let file = dir.path().join("rooms.toml");
        std::fs::write(&file, text).expect("rooms file");
        c.arg("--rooms").arg(file);
    }
    let out = c
        .args(args)
        .arg("--data-dir")
        .arg(&data)
        .stdin(std::process::Stdio::null())
        .output()
        .expect("claw-dealer runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{args:?}: a usage error: {stderr}");
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 1, "{args:?}: one line:\n{stderr}");
    assert!(lines[0].contains(build), "{args:?}: names `{build}`: {stderr}");
    assert!(!data.exists(), "{args:?}: refused before the data directory");
}

#[cfg(not(feature = "evm"))]
#[test]
fn chips_evm_without_the_feature_is_one_line() {
    refused(&["--game", "texas-holdem", "--chips", "evm"], None, "--features chains");
    let rooms = "[[room]]\nid = \"t\"\ngame = \"texas-holdem\"\n\n[chips]\ntype = \"evm\"\n";
    refused(&[], Some(rooms), "--features chains");
}

#[cfg(not(feature = "solana"))]
#[test]
fn chips_solana_without_the_feature_is_one_line() {
    refused(&["--game", "texas-holdem", "--chips", "solana"], None, "--features chains");
}

#[cfg(not(feature = "solana-litesvm"))]
#[test]
fn solana_litesvm_without_the_feature_is_one_line() {
    let args =
        ["--game", "texas-holdem", "--bots", "2", "--hands", "1", "--chips", "solana", "--solana-litesvm"];
    refused(&args, None, "--features solana-litesvm");
}
