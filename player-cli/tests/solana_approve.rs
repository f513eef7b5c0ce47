//! `claw-player approve` / `revoke` (the real binary) against a JSON-RPC
//! server over an in-process Solana bank running the real SPL programs:
//! the approval is signed with the player's game key and lands; the revoke
//! ends it; a bad URL or an unknown key file fails with exit 2.

use std::process::Command;

use claw_chips::solana::litesvm::LiteSvmChain;
use claw_chips::solana::{player_address, spl, Keypair, Signer};
use claw_protocol::Identity;

fn run(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_claw-player")).args(args).output().expect("claw-player runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[tokio::test]
async fn approve_and_revoke_with_the_game_key() {
    let chain = LiteSvmChain::new();
    let url = format!("http://{}", chain.spawn_rpc("127.0.0.1:0".parse().unwrap()).await.unwrap());
    let operator = Keypair::new();
    chain.airdrop(&operator.pubkey(), 10_000_000_000).unwrap();
    let mint = chain.create_mint(&operator).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let key = dir.path().join("me.key");
    let id = Identity::load_or_create(&key, &mut rand::rngs::OsRng).unwrap();
    let me = player_address(&id.id());
    chain.airdrop(&me, 1_000_000_000).unwrap();
    // The player's token account does not exist yet: approve creates it.
    let account = spl::associated_account(&me, &mint);
    assert!(chain.token_account(&account).is_none());
    let (mint_s, op_s, key_s) = (mint.to_string(), operator.pubkey().to_string(), key.display().to_string());
    let args: Vec<String> = ["approve", "--key", &key_s, "--rpc-url", &url, "--mint", &mint_s]
        .into_iter()
        .chain(["--operator", &op_s, "--amount", "250"])
        .map(str::to_owned)
        .collect();
    let (code, stdout, stderr) = tokio::task::spawn_blocking(move || {
        let a: Vec<&str> = args.iter().map(String::as_str).collect();
        run(&a)
    })
    .await
    .unwrap();
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    let line: serde_json::Value = serde_json::from_str(stdout.trim()).expect("one JSON line");
    assert_eq!(line["approved"], 250);
    assert_eq!(line["token_account"], account.to_string());
    let t = chain.token_account(&account).expect("token account created");
    assert_eq!(t.owner, me, "owned by the game key");
    assert_eq!(t.delegate, Some((operator.pubkey(), 250)));

    let key_s2 = key_s.clone();
    let (url2, mint2) = (url.clone(), mint_s.clone());
    let (code, stdout, stderr) = tokio::task::spawn_blocking(move || {
        run(&["revoke", "--key", &key_s2, "--rpc-url", &url2, "--mint", &mint2])
    })
    .await
    .unwrap();
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    assert_eq!(chain.token_account(&account).unwrap().delegate, None);

    // Refused before anything is signed: plain http off loopback, a missing key.
    let missing = dir.path().join("none.key").display().to_string();
    let cases: Vec<Vec<String>> = vec![
        vec![
            "revoke".into(),
            "--key".into(),
            key_s.clone(),
            "--rpc-url".into(),
            "http://example.com".into(),
            "--mint".into(),
            mint_s.clone(),
        ],
        vec![
            "revoke".into(),
            "--key".into(),
            missing,
            "--rpc-url".into(),
            url.clone(),
            "--mint".into(),
            mint_s.clone(),
        ],
    ];
    for c in cases {
        let (code, _, stderr) = tokio::task::spawn_blocking(move || {
            let a: Vec<&str> = c.iter().map(String::as_str).collect();
            run(&a)
        })
        .await
        .unwrap();
        assert_eq!(code, 2, "{stderr}");
        assert!(stderr.contains("claw-player:"), "{stderr}");
    }
}
