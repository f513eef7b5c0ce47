//! A real local EVM node for tests: `anvil` on 127.0.0.1 with a free port,
//! the chip vault and its test token deployed, players registered and
//! funded. Shared by the EVM provider's tests and the dealer's end-to-end
//! test (included with `#[path]`; each includer uses a part of it).

#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use alloy::primitives::{Address, B256, U256};
use alloy::signers::local::PrivateKeySigner;
use alloy::sol_types::SolConstructor;
use claw_chips::evm::binding::sign_binding;
use claw_chips::evm::contract::{ChipVault, TestChip};
use claw_chips::evm::{Chain, ChainSettings, EvmError};
use claw_protocol::Identity;

/// The chain id of a local anvil.
pub const CHAIN_ID: u64 = 31337;

/// The anvil binary: `CLAW_ANVIL`, else where scripts/install-evm-tools.sh
/// puts it. The tests that call this are `#[ignore]`d unless built with
/// `cfg(claw_evm)` (CLAW_ANVIL or CLAW_REQUIRE_EVM set), so a missing anvil
/// here fails the test: it never passes without running.
pub fn anvil_bin(test: &str) -> PathBuf {
    let path = std::env::var_os("CLAW_ANVIL").map(PathBuf::from).unwrap_or_else(|| {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../chip-providers/evm/node_modules/@foundry-rs/anvil-linux-amd64/bin/anvil")
    });
    assert!(
        path.is_file(),
        "{test}: no anvil at {} (run scripts/install-evm-tools.sh and set CLAW_ANVIL as it prints)",
        path.display()
    );
    path
}

/// A running anvil; killed on drop.
pub struct Anvil {
    bin: PathBuf,
    child: Child,
    pub port: u16,
    pub keys: Vec<String>,
}

impl Anvil {
    pub fn start(bin: &Path, port: u16) -> Anvil {
        let mut child = Command::new(bin)
            .args(["--host", "127.0.0.1", "--port", &port.to_string(), "--accounts", "16"])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start anvil");
        let out = BufReader::new(child.stdout.take().expect("anvil stdout"));
        let mut lines = out.lines();
        let (mut keys, mut in_keys, mut bound) = (Vec::new(), false, None);
        for line in lines.by_ref() {
            let line = line.expect("anvil output");
            if line.starts_with("Private Keys") {
                in_keys = true;
            } else if in_keys && line.starts_with('(') {
                if let Some(k) = line.split_whitespace().nth(1) {
                    keys.push(k.to_owned());
                }
            } else if line.starts_with("Wallet") || line.starts_with("Chain ID") {
                in_keys = false;
            }
            if let Some(addr) = line.strip_prefix("Listening on ") {
                bound = addr.trim().rsplit(':').next().and_then(|p| p.parse::<u16>().ok());
                break;
            }
        }
        // Keep draining stdout so anvil never blocks on a full pipe.
        std::thread::spawn(move || for _ in lines {});
        let port = bound.expect("anvil printed no listening address");
        assert!(keys.len() >= 16, "anvil printed {} keys", keys.len());
        Anvil { bin: bin.to_owned(), child, port, keys }
    }

    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Starts a fresh node on the same port (after `kill`).
    pub fn restart(&mut self) {
        let mut last = None;
        for _ in 0..50 {
            match std::panic::catch_unwind(|| Anvil::start(&self.bin, self.port)) {
                Ok(a) => {
                    *self = a;
                    return;
                }
                Err(e) => last = Some(e),
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        std::panic::resume_unwind(last.expect("restart attempts"));
    }
}

impl Drop for Anvil {
    fn drop(&mut self) {
        self.kill();
    }
}

pub fn settings(url: &str) -> ChainSettings {
    ChainSettings {
        rpc_url: url.to_owned(),
        chain_id: CHAIN_ID,
        allow_private: false,
        confirmations: 0,
        tx_timeout: Duration::from_secs(20),
        request_timeout: Duration::from_secs(5),
        poll: Duration::from_millis(20),
    }
}

pub fn signer(hex: &str) -> PrivateKeySigner {
    hex.parse().expect("anvil key")
}

/// Writes a key file readable by its owner only (mode 0600).
pub fn write_key_file(path: &Path, key: &str) -> PathBuf {
    std::fs::write(path, key).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600)).unwrap();
    }
    path.to_owned()
}

/// Deploys the test token and a vault with hand locks up to `max_lock`
/// seconds, appoints `operators`; returns (token, vault).
pub async fn deploy(admin: &Chain, max_lock: u32, operators: &[Address]) -> (Address, Address) {
    let token = admin.deploy(TestChip::BYTECODE.to_vec()).await.unwrap();
    let mut code = ChipVault::BYTECODE.to_vec();
    code.extend(ChipVault::constructorCall { token_: token, maxLock_: max_lock }.abi_encode());
    let vault = admin.deploy(code).await.unwrap();
    for op in operators {
        admin.send_to(vault, &ChipVault::setOperatorCall { operator: *op, enabled: true }).await.unwrap();
    }
    (token, vault)
}

/// Binds `player`'s address (the sender of `chain`) to the game id of `id`.
pub async fn register(id: &Identity, player: &Chain, vault: Address) -> Result<(), EvmError> {
    let sig = sign_binding(id, CHAIN_ID, vault, player.address());
    let call =
        ChipVault::registerCall { gameId: B256::from(*id.id().as_bytes()), binding: sig.0.to_vec().into() };
    player.send_vault(&call).await.map(|_| ())
}

/// Mints `amount` test chips to the player (the admin is the minter) and
/// deposits them into the vault from the player's address.
pub async fn fund(admin: &Chain, token: Address, player: &Chain, amount: u64) {
    let vault = player.vault();
    admin
        .send_to(token, &TestChip::mintCall { to: player.address(), amount: U256::from(amount) })
        .await
        .unwrap();
    player
        .send_to(token, &TestChip::approveCall { spender: vault, amount: U256::from(amount) })
        .await
        .unwrap();
    player.send_vault(&ChipVault::depositCall { amount: U256::from(amount) }).await.unwrap();
}
