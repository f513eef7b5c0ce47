//! The chip providers a build of `claw-dealer` carries (cargo features
//! `evm`, `solana`, `solana-litesvm` of `claw-dealer-cli`), and the one
//! line a request for a missing one gets: the default build has the dealer,
//! the built-in points server, HTTP chips, the web app and the demo bots;
//! the chains are opt-in because they triple the build (docs/performance.md).

/// The build command named in the error: the chains (`--features chains`),
/// or the in-process Solana demo bank (`--features solana-litesvm`).
pub const BUILD_CHAINS: &str = "cargo run --release -p claw-dealer-cli --features chains -- …";
pub const BUILD_LITESVM: &str = "cargo run --release -p claw-dealer-cli --features solana-litesvm -- …";

/// Which optional chip providers are compiled in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Built {
    pub evm: bool,
    pub solana: bool,
    pub solana_litesvm: bool,
}

impl Built {
    /// This build.
    pub const THIS: Built = Built {
        evm: cfg!(feature = "evm"),
        solana: cfg!(feature = "solana"),
        solana_litesvm: cfg!(feature = "solana-litesvm"),
    };

    /// The error line for chips `kind` (`auto`, `local`, `http`, `evm`,
    /// `solana`; `source` says where it was asked for, e.g. `--chips evm`)
    /// and `--solana-litesvm`, when this build lacks what they need; `None`
    /// when it has it. The demo bank is checked first: its build has Solana.
    pub fn missing(self, kind: &str, source: &str, solana_litesvm: bool) -> Option<String> {
        if solana_litesvm && !self.solana_litesvm {
            return Some(format!(
                "--solana-litesvm: this claw-dealer is built without the in-process Solana bank \
                 (a dev/demo feature); build and run it with: {BUILD_LITESVM}"
            ));
        }
        let chain = match kind {
            "evm" if !self.evm => "EVM",
            "solana" if !self.solana => "Solana",
            _ => return None,
        };
        Some(format!("{source}: this claw-dealer is built without {chain} chips; build and run it with: {BUILD_CHAINS}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NONE: Built = Built { evm: false, solana: false, solana_litesvm: false };
    const CHAINS: Built = Built { evm: true, solana: true, solana_litesvm: false };
    const ALL: Built = Built { evm: true, solana: true, solana_litesvm: true };

    #[test]
    fn a_missing_chain_is_one_line_naming_the_build() {
        let e = NONE.missing("evm", "--chips evm", false).unwrap();
        assert_eq!(
            e,
            "--chips evm: this claw-dealer is built without EVM chips; build and run it with: \
             cargo run --release -p claw-dealer-cli --features chains -- …"
        );
        let e = NONE.missing("solana", "rooms file [chips] type = \"solana\"", false).unwrap();
        assert!(e.starts_with("rooms file [chips] type = \"solana\": "), "{e}");
        assert!(e.contains("without Solana chips") && e.ends_with(BUILD_CHAINS), "{e}");
        for e in [e, NONE.missing("solana", "--chips solana", true).unwrap()] {
            assert!(!e.contains('\n'), "{e}");
        }
    }

    #[test]
    fn the_demo_bank_names_its_own_feature() {
        for b in [NONE, CHAINS] {
            let e = b.missing("solana", "--chips solana", true).unwrap();
            assert!(e.starts_with("--solana-litesvm: ") && e.ends_with(BUILD_LITESVM), "{e}");
        }
        assert_eq!(ALL.missing("solana", "--chips solana", true), None);
    }

    #[test]
    fn what_the_build_has_passes() {
        for kind in ["auto", "local", "http"] {
            assert_eq!(NONE.missing(kind, "--chips", false), None);
        }
        assert_eq!(CHAINS.missing("evm", "--chips evm", false), None);
        assert_eq!(CHAINS.missing("solana", "--chips solana", false), None);
        assert!(Built { evm: true, ..NONE }.missing("solana", "--chips solana", false).is_some());
    }
}
