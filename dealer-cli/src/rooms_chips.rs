//! The rooms file's `[chips]` table: which provider and its settings, each
//! overridden by the matching `claw-dealer` flag. docs/dealer.md.

use std::path::{Path, PathBuf};

use serde::Deserialize;

/// `[chips]`: `type` = `auto` | `local` | `http` | `evm` | `solana`, the HTTP
/// service's fields, and `[chips.evm]` / `[chips.solana]`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChipsTable {
    #[serde(rename = "type")]
    pub kind: Option<String>,
    /// HTTP points service URL.
    pub url: Option<String>,
    /// HTTP points service bearer token (prefer CLAW_CHIPS_TOKEN).
    pub token: Option<String>,
    /// HTTP: permit a private-network host.
    #[serde(default)]
    pub allow_private: bool,
    pub evm: Option<EvmTable>,
    pub solana: Option<SolanaTable>,
}

/// `[chips.evm]`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EvmTable {
    pub rpc_url: Option<String>,
    pub chain_id: Option<u64>,
    /// The ChipVault contract address.
    pub contract: Option<String>,
    /// Relative paths are relative to the rooms file.
    pub key_file: Option<PathBuf>,
    pub confirmations: Option<u64>,
    pub from_block: Option<u64>,
    #[serde(default)]
    pub allow_private: bool,
}

/// `[chips.solana]`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SolanaTable {
    pub rpc_url: Option<String>,
    pub mint: Option<String>,
    pub escrow: Option<String>,
    /// Relative paths are relative to the rooms file.
    pub key_file: Option<PathBuf>,
    #[serde(default)]
    pub allow_private: bool,
}

impl ChipsTable {
    /// Reads the table of the rooms file at `file` (key files resolved
    /// against its directory). The error names the bad field.
    pub fn parse(table: toml::Table, file: &Path) -> Result<ChipsTable, String> {
        // Through text, so that an error shows the offending line.
        let text = toml::to_string(&table).map_err(|e| format!("{}: [chips]: {e}", file.display()))?;
        let mut t: ChipsTable = toml::from_str(&text)
            .map_err(|e| format!("{}: [chips]: {}", file.display(), e.to_string().trim()))?;
        let base = file.parent().unwrap_or(Path::new("."));
        let resolve = |p: &mut Option<PathBuf>| {
            if let Some(k) = p.as_mut().filter(|k| k.is_relative()) {
                *k = base.join(&*k);
            }
        };
        if let Some(e) = t.evm.as_mut() {
            resolve(&mut e.key_file);
        }
        if let Some(s) = t.solana.as_mut() {
            resolve(&mut s.key_file);
        }
        Ok(t)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(s: &str) -> Result<ChipsTable, String> {
        ChipsTable::parse(s.parse::<toml::Table>().unwrap(), Path::new("/etc/claw/rooms.toml"))
    }

    #[test]
    fn evm_table_with_relative_key_file() {
        let t = parse("type = \"evm\"\n[evm]\nrpc_url = \"http://127.0.0.1:8545\"\nchain_id = 31337\ncontract = \"0x00\"\nkey_file = \"op.key\"\n").unwrap();
        assert_eq!(t.kind.as_deref(), Some("evm"));
        let e = t.evm.unwrap();
        assert_eq!(e.chain_id, Some(31337));
        assert_eq!(e.key_file, Some(PathBuf::from("/etc/claw/op.key")));
    }

    #[test]
    fn bad_fields_are_named() {
        let e = parse("type = \"evm\"\n[evm]\nchain_id = \"one\"\n").unwrap_err();
        assert!(e.contains("chain_id"), "{e}");
        let e = parse("type = \"evm\"\n[evm]\nrpc = \"x\"\n").unwrap_err();
        assert!(e.contains("rpc"), "{e}");
        let e = parse("kind = \"evm\"\n").unwrap_err();
        assert!(e.contains("kind"), "{e}");
    }
}
