//! A rooms file's `[chips]` table: `claw-dealer --rooms FILE` with
//! `type = "evm"` and `[chips.evm]` (no chip flags) plays on a real local
//! node (anvil); a bad field is refused with its name.

use std::process::{Command, Stdio};

use crate::anvil::{anvil_bin, CHAIN_ID};
use crate::evm::vault_with_bots;

#[tokio::test]
#[cfg_attr(
    not(claw_evm),
    ignore = "skipped: no local EVM node; set CLAW_ANVIL (scripts/install-evm-tools.sh prints it) or CLAW_REQUIRE_EVM=1"
)]
async fn rooms_file_chips_table_selects_the_evm_provider() {
    let bin = anvil_bin("rooms_file_chips_table_selects_the_evm_provider");
    let dir = tempfile::tempdir().expect("temp dir");
    let w = vault_with_bots(&bin, dir.path(), 2, 1000).await;
    let (url, vault, bots) = (&w.url, w.vault, &w.bots);
    let rooms = dir.path().join("rooms.toml");
    let write = |chips: &str| {
        std::fs::write(
            &rooms,
            format!("[[room]]\nid = \"holdem\"\ngame = \"texas-holdem\"\nbetween_hands = \"0s\"\n\n{chips}"),
        )
        .expect("rooms file")
    };
    let run = || {
        Command::new(env!("CARGO_BIN_EXE_claw-dealer"))
            .arg("--rooms")
            .arg(&rooms)
            .args(["--bots", "2", "--hands", "2", "--bot-keys"])
            .arg(bots)
            .arg("--data-dir")
            .arg(dir.path().join("data"))
            .stdin(Stdio::null())
            .output()
            .expect("claw-dealer runs")
    };

    // Relative key_file: next to the rooms file.
    write(&format!(
        "[chips]\ntype = \"evm\"\n[chips.evm]\nrpc_url = \"{url}\"\nchain_id = {CHAIN_ID}\ncontract = \"{vault}\"\nkey_file = \"operator.key\"\n"
    ));
    let out = run();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "claw-dealer failed:\n{stdout}\n{stderr}");
    assert!(stdout.contains("2 hands audited OK"), "{stdout}\n{stderr}");

    // A misspelt field, a wrong type, an unknown provider: refused, named.
    for (chips, named) in [
        ("[chips]\ntype = \"evm\"\n[chips.evm]\nrpc = \"x\"\n", "rpc"),
        ("[chips]\ntype = \"evm\"\n[chips.evm]\nchain_id = \"one\"\n", "chain_id"),
        ("[chips]\ntype = \"bitcoin\"\n", "bitcoin"),
    ] {
        write(chips);
        let out = run();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "accepted {chips:?}");
        assert!(stderr.contains(named), "{chips:?}: {stderr}");
    }
}
