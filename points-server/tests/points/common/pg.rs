//! A fresh PostgreSQL database on the server CLAW_TEST_PG_URL names, for the
//! points-server tests and benchmark and the dealer's two-node scale test.
//! Outside CI the tests that need it are compiled `#[ignore]`d (the
//! `claw_pg` cfg of `scripts/test-services-cfg.rs`), so they show as skipped.

use std::io::Write;

use sqlx::Connection;

/// The URL of a new, empty database named `<prefix>_<random>`, or None when
/// CLAW_TEST_PG_URL is unset (said on stderr as SKIPPED for `test`). With
/// CLAW_REQUIRE_PG set, as in CI, a missing URL fails instead.
pub async fn fresh_database(test: &str, prefix: &str) -> Option<String> {
    let Ok(base) = std::env::var("CLAW_TEST_PG_URL") else {
        if std::env::var_os("CLAW_REQUIRE_PG").is_some_and(|v| !v.is_empty() && v != "0") {
            panic!("{test}: CLAW_REQUIRE_PG is set but CLAW_TEST_PG_URL is not");
        }
        // Written to the real stderr (not the captured one) so it shows in the log.
        let _ = writeln!(
            std::io::stderr(),
            "SKIPPED (PostgreSQL): {test} — set CLAW_TEST_PG_URL (see scripts/start-postgres.sh) to run it"
        );
        return None;
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
    Some(url.to_string())
}
