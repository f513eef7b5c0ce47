//! Build script of the crates whose tests need a service CI starts
//! (claw-points, claw-chips, claw-dealer-cli). Sets `cfg(claw_pg)` when the
//! PostgreSQL tests are meant to run (CLAW_TEST_PG_URL or CLAW_REQUIRE_PG
//! set) and `cfg(claw_evm)` when the local EVM node tests are (CLAW_ANVIL or
//! CLAW_REQUIRE_EVM set); without it those tests are compiled `#[ignore]`d
//! and reported as skipped, not as passed.

/// A cfg and the variables that turn it on.
const SERVICES: [(&str, [&str; 2]); 2] =
    [("claw_pg", ["CLAW_TEST_PG_URL", "CLAW_REQUIRE_PG"]), ("claw_evm", ["CLAW_ANVIL", "CLAW_REQUIRE_EVM"])];

fn main() {
    for (cfg, vars) in SERVICES {
        println!("cargo::rustc-check-cfg=cfg({cfg})");
        for v in vars {
            println!("cargo::rerun-if-env-changed={v}");
        }
        if vars.iter().any(|v| std::env::var_os(v).is_some_and(|x| !x.is_empty() && x != "0")) {
            println!("cargo::rustc-cfg={cfg}");
        }
    }
}
