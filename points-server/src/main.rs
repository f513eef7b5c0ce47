//! `claw-points`: the points server binary (serve, or verify a database's audit log).

use std::net::SocketAddr;
use std::time::Duration;

use anyhow::{bail, Context};
use clap::{Parser, Subcommand};
use claw_points::{Limits, ServerConfig, Store};
use tracing_subscriber::EnvFilter;

/// game-claw points server: an HTTP chip ledger over SQLite or PostgreSQL.
#[derive(Parser)]
#[command(name = "claw-points", version)]
struct Cli {
    /// Database URL: sqlite://PATH?mode=rwc (created if missing) or postgres://user:pass@host/db.
    #[arg(long, global = true, env = "CLAW_POINTS_DB", default_value = "sqlite://claw-points.db?mode=rwc")]
    db: String,
    /// Address to listen on (port 0 picks a free port; the bound address is printed).
    #[arg(long, default_value = "127.0.0.1:7700")]
    listen: SocketAddr,
    /// Bearer token clients must present (at least 16 bytes). Prefer the env variable:
    /// command lines are visible to other users.
    #[arg(long, env = "CLAW_POINTS_TOKEN", hide_env_values = true)]
    token: Option<String>,
    /// Requests per second allowed per client IP (0 = unlimited).
    #[arg(long, default_value_t = Limits::default().rate_per_sec)]
    rate: u32,
    /// Burst size per client IP.
    #[arg(long, default_value_t = Limits::default().burst)]
    burst: u32,
    /// Largest request body in bytes.
    #[arg(long, default_value_t = Limits::default().max_body_bytes)]
    max_body: usize,
    #[command(subcommand)]
    cmd: Option<Cmd>,
}

#[derive(Subcommand)]
enum Cmd {
    /// Serve the HTTP API (the default).
    Serve,
    /// Verify the audit hash chain and the balances against it; exit 1 if anything is wrong.
    Verify,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    tracing_subscriber::fmt()
        .with_env_filter(EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info")))
        .with_writer(std::io::stderr)
        .init();
    let cli = Cli::parse();
    match cli.cmd {
        Some(Cmd::Verify) => verify(&cli.db).await,
        Some(Cmd::Serve) | None => run(cli).await,
    }
}

async fn verify(db: &str) -> anyhow::Result<()> {
    let store = Store::connect(db).await.context("opening the database")?;
    let report = store.verify().await.context("reading the audit log")?;
    store.close().await;
    println!("{}", serde_json::to_string_pretty(&report)?);
    if !report.ok {
        bail!("audit log verification FAILED: {} problem(s)", report.problems.len());
    }
    eprintln!("audit log OK: {} entries, head {}", report.entries, report.head_hash);
    Ok(())
}

async fn run(cli: Cli) -> anyhow::Result<()> {
    let Some(token) = cli.token else {
        bail!("no token: pass --token or set CLAW_POINTS_TOKEN (refusing to start an open ledger)");
    };
    let limits = Limits {
        rate_per_sec: cli.rate,
        burst: cli.burst,
        max_body_bytes: cli.max_body,
        body_timeout: Duration::from_secs(10),
    };
    let server = claw_points::serve(ServerConfig { db_url: cli.db, listen: cli.listen, token, limits })
        .await
        .context("starting the points server")?;
    // The one line on stdout: scripts and tests read the bound address from it.
    println!("listening on {}", server.url());
    let handle = server.shutdown_handle();
    tokio::spawn(async move {
        shutdown_signal().await;
        tracing::info!("shutdown requested");
        handle.shutdown();
    });
    server.wait().await.context("serving")?;
    tracing::info!("points server stopped");
    Ok(())
}

async fn shutdown_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => {
                tokio::select! {
                    _ = tokio::signal::ctrl_c() => {}
                    _ = term.recv() => {}
                }
            }
            Err(_) => {
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}
