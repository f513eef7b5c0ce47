//! Sets `cfg(claw_pg)` when the PostgreSQL tests are meant to run
//! (CLAW_TEST_PG_URL or CLAW_REQUIRE_PG set); without it they are compiled
//! `#[ignore]`d and reported as skipped. Also the build script of
//! `claw-dealer-cli`, whose scale test needs PostgreSQL too.

const VARS: [&str; 2] = ["CLAW_TEST_PG_URL", "CLAW_REQUIRE_PG"];

fn main() {
    println!("cargo::rustc-check-cfg=cfg(claw_pg)");
    for v in VARS {
        println!("cargo::rerun-if-env-changed={v}");
    }
    if VARS.iter().any(|v| std::env::var_os(v).is_some_and(|x| !x.is_empty() && x != "0")) {
        println!("cargo::rustc-cfg=claw_pg");
    }
}
