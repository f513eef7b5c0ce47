//! A fresh PostgreSQL database on the server CLAW_TEST_PG_URL names, for the
//! points-server tests and benchmark and the dealer's two-node scale test.
//! Outside CI the tests that need it are compiled `#[ignore]`d (the
//! `claw_pg` cfg of `scripts/test-services-cfg.rs`), so they show as skipped;
//! run anyway (or in CI without the server), they fail.

use sqlx::Connection;

/// Whether a PostgreSQL server is named (CLAW_TEST_PG_URL set): the
/// benchmark measures it only then.
#[allow(dead_code)]
pub fn configured() -> bool {
    std::env::var_os("CLAW_TEST_PG_URL").is_some_and(|v| !v.is_empty())
}

/// The URL of a new, empty database named `<prefix>_<random>` on the
/// server CLAW_TEST_PG_URL names. The tests that call this are `#[ignore]`d
/// unless built with `cfg(claw_pg)` (CLAW_TEST_PG_URL or CLAW_REQUIRE_PG
/// set), so an unset URL here fails `test`: it never passes without running.
pub async fn fresh_database(test: &str, prefix: &str) -> String {
    let Ok(base) = std::env::var("CLAW_TEST_PG_URL") else {
        panic!("{test}: CLAW_TEST_PG_URL is not set (scripts/start-postgres.sh prints it)");
    };
    let mut admin = sqlx::postgres::PgConnection::connect(&base).await.expect("connect to CLAW_TEST_PG_URL");
    let name = format!("{prefix}_{}", claw_points::generate_token().get(..16).unwrap_or("x"));
    sqlx::query(sqlx::AssertSqlSafe(format!("CREATE DATABASE {name}")))
        .execute(&mut admin)
        .await
        .expect("create database");
    admin.close().await.ok();
    let mut url = url::Url::parse(&base).expect("CLAW_TEST_PG_URL is a URL");
    url.set_path(&format!("/{name}"));
    url.to_string()
}
