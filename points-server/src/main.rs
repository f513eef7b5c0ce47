//! `claw-points`: the points server binary. Serves the ledger, verifies a
//! database's audit log, and administers a running server (grant, balance,
//! history, verify) over its HTTP API.

use std::net::SocketAddr;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{bail, Context};
use clap::{Args, Parser, Subcommand};
use claw_chips::{AccountId, ChipError, ChipProvider, HttpChips, HttpChipsConfig, IdempotencyKey};
use claw_cli_log::{json_requested, LogFormat, Stderr};
use claw_points::{Limits, ServerConfig, Store, VerifyReport};

/// Where admin subcommands find the server when --url is not given.
const DEFAULT_URL: &str = "http://127.0.0.1:7700";

/// game-claw points server: an HTTP chip ledger over SQLite or PostgreSQL.
///
/// Without a subcommand it serves. The admin subcommands (grant, balance,
/// history, and verify with --url) talk to a running server with its token.
#[derive(Parser)]
#[command(name = "claw-points", version, args_conflicts_with_subcommands = true)]
struct Cli {
    /// Bearer token of the server: it needs one to serve, admin commands send it.
    /// Prefer the env variable: command lines are visible to other users.
    #[arg(long, global = true, env = "CLAW_POINTS_TOKEN", hide_env_values = true)]
    token: Option<String>,
    /// Database URL: sqlite://PATH?mode=rwc (created if missing) or postgres://user:pass@host/db.
    #[arg(long, global = true, env = "CLAW_POINTS_DB", default_value = "sqlite://claw-points.db?mode=rwc")]
    db: String,
    /// Log lines on stderr: text (colours only on a terminal) or json (one
    /// object per line, errors included; filter: RUST_LOG, default info).
    #[arg(long, global = true, value_enum, default_value = "text")]
    log_format: LogFormat,
    #[command(flatten)]
    serve: ServeArgs,
    #[command(subcommand)]
    cmd: Option<Cmd>,
}

#[derive(Args)]
struct ServeArgs {
    /// Address to listen on (port 0 picks a free port; the bound address is printed).
    #[arg(long, default_value = "127.0.0.1:7700")]
    listen: SocketAddr,
    /// Requests per second allowed per client IP without the token (0 = unlimited).
    #[arg(long, default_value_t = Limits::default().rate_per_sec)]
    rate: u32,
    /// Burst size per client IP without the token.
    #[arg(long, default_value_t = Limits::default().burst)]
    burst: u32,
    /// Requests per second per IP with the token (the dealer), in their own bucket (0 = unlimited).
    #[arg(long, default_value_t = Limits::default().operator_rate_per_sec)]
    operator_rate: u32,
    /// Burst size per IP with the token.
    #[arg(long, default_value_t = Limits::default().operator_burst)]
    operator_burst: u32,
    /// Largest request body in bytes.
    #[arg(long, default_value_t = Limits::default().max_body_bytes)]
    max_body: usize,
    /// Most mutations committed in one transaction (group commit; 1 = one
    /// commit, one fsync, per mutation).
    #[arg(long, default_value_t = Limits::default().max_group as u64, value_parser = clap::value_parser!(u64).range(1..=4096))]
    max_group: u64,
    /// Hash chains (account shards) of a NEW ledger [default: 16]; an existing
    /// ledger keeps its own count (another value is refused). 1 = one chain.
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=i64::from(claw_points::MAX_SHARDS)))]
    shards: Option<u32>,
    /// Concurrent group-commit writers on PostgreSQL, at most one per shard
    /// (SQLite always has one).
    #[arg(long, default_value_t = claw_points::DEFAULT_WRITERS as u64, value_parser = clap::value_parser!(u64).range(1..=64))]
    writers: u64,
    /// Seconds between checkpoints of every shard's head (0 = none).
    #[arg(long, default_value_t = Limits::default().checkpoint_every.as_secs())]
    checkpoint_every: u64,
}

/// Where a running server is (admin subcommands).
#[derive(Args)]
struct Remote {
    /// Base URL of the running server.
    #[arg(long, env = "CLAW_POINTS_URL", default_value = DEFAULT_URL)]
    url: String,
}

#[derive(Subcommand)]
enum Cmd {
    /// Serve the HTTP API (the default).
    Serve(ServeArgs),
    /// Verify the audit hash chain, the stored answers and the balances; exit 1 if anything is wrong.
    /// Reads the database (--db) directly, or asks a running server (--url).
    Verify {
        /// Ask the server at this URL instead of opening --db.
        #[arg(long, env = "CLAW_POINTS_URL")]
        url: Option<String>,
        /// Verify this shard's chain alone (with --db).
        #[arg(long, conflicts_with = "url")]
        shard: Option<u32>,
    },
    /// Grant chips to an account (operator credit: buy-in, gift). Prints the new balance.
    Grant {
        /// The account credited.
        account: String,
        /// Chips granted, 1 to 10^15.
        #[arg(allow_negative_numbers = true, value_parser = whole_number)]
        amount: u64,
        /// Idempotency key: re-running with the same key grants once. Default: a fresh random key
        /// (printed on stderr, so a failed run can be retried safely with it).
        #[arg(long)]
        key: Option<String>,
        /// Free text stored with the grant.
        #[arg(long, default_value = "")]
        memo: String,
        #[command(flatten)]
        remote: Remote,
    },
    /// Print an account's balance (an account never seen has 0).
    Balance {
        /// The account.
        account: String,
        #[command(flatten)]
        remote: Remote,
    },
    /// Print an account's movements, oldest first: SEQ:IDX KIND AMOUNT BALANCE-AFTER MEMO.
    History {
        /// The account.
        account: String,
        /// Most movements printed (all when not given).
        #[arg(long, allow_negative_numbers = true, value_parser = whole_number)]
        limit: Option<u64>,
        /// Print JSON lines (one object per movement) instead of columns.
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        remote: Remote,
    },
}

use claw_cli_log::whole_number;

/// The binary's own stderr lines (`claw-points: …`), in the `--log-format` chosen.
fn stderr() -> Stderr {
    Stderr::chosen("claw-points")
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        // A usage error under `--log-format json` is one JSON line too;
        // `--help`, `--version` and text-mode errors print as clap prints them.
        Err(e) if e.use_stderr() && json_requested(&std::env::args_os().collect::<Vec<_>>()) => {
            Stderr::new(LogFormat::Json, "claw-points").error(e.render().to_string().trim_end());
            return ExitCode::from(2);
        }
        Err(e) => e.exit(),
    };
    claw_cli_log::init(cli.log_format, "RUST_LOG", "info");
    let result = tokio::runtime::Runtime::new()
        .context("cannot start the runtime")
        .and_then(|rt| rt.block_on(command(cli)));
    match result {
        Ok(()) => ExitCode::SUCCESS,
        // One line: each cause once (`{:#}` joins the chain with ": ").
        Err(e) => {
            stderr().error(format_args!("{e:#}"));
            ExitCode::FAILURE
        }
    }
}

async fn command(cli: Cli) -> anyhow::Result<()> {
    match cli.cmd {
        Some(Cmd::Verify { url: None, shard }) => verify_db(&cli.db, shard).await,
        Some(Cmd::Verify { url: Some(url), .. }) => {
            let chips = client(&url, cli.token)?;
            let report = chips.verify_audit().await.map_err(|e| call_error(e, &url))?;
            print_report(serde_json::from_value(report).context("the server's verify report")?)
        }
        Some(Cmd::Grant { account, amount, key, memo, remote }) => {
            let chips = client(&remote.url, cli.token)?;
            let account = account_id(&account)?;
            let key = match key {
                Some(k) => IdempotencyKey::new(k).map_err(|e| anyhow::anyhow!("--key: {e}"))?,
                None => {
                    let k =
                        IdempotencyKey::new(format!("admin-grant/{}", &claw_points::generate_token()[..32]))
                            .map_err(|e| anyhow::anyhow!("{e}"))?;
                    stderr().info(format_args!(
                        "idempotency key {k} (re-run with --key {k} to retry without granting twice)"
                    ));
                    k
                }
            };
            let balance = chips
                .grant(&key, &account, claw_protocol::Chips(amount), &memo)
                .await
                .map_err(|e| call_error(e, &remote.url))?;
            println!("{account} {}", balance.0);
            Ok(())
        }
        Some(Cmd::Balance { account, remote }) => {
            let chips = client(&remote.url, cli.token)?;
            let account = account_id(&account)?;
            let balance = chips.balance(&account).await.map_err(|e| call_error(e, &remote.url))?;
            println!("{account} {}", balance.0);
            Ok(())
        }
        Some(Cmd::History { account, limit, json, remote }) => {
            let chips = client(&remote.url, cli.token)?;
            history(&chips, &account_id(&account)?, limit, json).await.map_err(|e| call_error(e, &remote.url))
        }
        Some(Cmd::Serve(args)) => run(cli.db, args, cli.token).await,
        None => run(cli.db, cli.serve, cli.token).await,
    }
}

fn account_id(s: &str) -> anyhow::Result<AccountId> {
    AccountId::new(s).map_err(|e| anyhow::anyhow!("account {s:?}: {e}"))
}

fn client(url: &str, token: Option<String>) -> anyhow::Result<HttpChips> {
    let Some(token) = token else {
        bail!("no token: pass --token or set CLAW_POINTS_TOKEN (the token the server was started with)");
    };
    HttpChips::new(HttpChipsConfig {
        max_attempts: 2,
        allow_private: true,
        ..HttpChipsConfig::new(url, token)
    })
    .with_context(|| format!("points server URL {url}"))
}

/// A failed admin call, with what the operator can do about it.
fn call_error(e: ChipError, url: &str) -> anyhow::Error {
    let hint = match &e {
        ChipError::Unauthorized(_) => "the server refused the token: pass the one it was started with",
        ChipError::Unreachable(_) | ChipError::Timeout => {
            "is claw-points serving there? (--url / CLAW_POINTS_URL)"
        }
        ChipError::RateLimited => "the server is rate limiting this address; retry later",
        _ => "",
    };
    let err = anyhow::Error::new(e).context(format!("points server {url}"));
    if hint.is_empty() {
        err
    } else {
        err.context(hint)
    }
}

async fn history(
    chips: &HttpChips,
    account: &AccountId,
    limit: Option<u64>,
    json: bool,
) -> Result<(), ChipError> {
    let mut left = limit.unwrap_or(u64::MAX);
    let mut after: Option<String> = None;
    while left > 0 {
        let page = chips.transactions(account, after.as_deref(), left.min(1000) as u32).await?;
        let entries = page["entries"].as_array().cloned().unwrap_or_default();
        for e in &entries {
            if json {
                println!("{e}");
            } else {
                let n = |k: &str| e[k].as_u64().unwrap_or(0);
                println!(
                    "{}:{} {} {} {} {}",
                    n("seq"),
                    n("idx"),
                    e["kind"].as_str().unwrap_or("?"),
                    n("amount"),
                    n("balance"),
                    e["memo"].as_str().unwrap_or("")
                );
            }
        }
        left = left.saturating_sub(entries.len() as u64);
        match page["next"].as_str() {
            Some(next) if !entries.is_empty() => after = Some(next.to_owned()),
            _ => break,
        }
    }
    Ok(())
}

async fn verify_db(db: &str, shard: Option<u32>) -> anyhow::Result<()> {
    let store = Store::connect(db).await.context("opening the database")?;
    let report = match shard {
        Some(s) => store.verify_shard(s).await,
        None => store.verify().await,
    };
    let report = report.context("reading the audit log")?;
    store.close().await;
    print_report(report)
}

/// Prints the report as JSON on stdout; fails (exit 1) when it found problems.
fn print_report(report: VerifyReport) -> anyhow::Result<()> {
    println!("{}", serde_json::to_string_pretty(&report)?);
    if !report.ok {
        for p in &report.problems {
            let shard = p.shard.map(|s| format!("shard {s}: ")).unwrap_or_default();
            let at = p.seq.map(|s| format!("{shard}entry {s}: ")).unwrap_or(shard);
            stderr().error(format_args!("{}: {at}{}", p.kind, p.message));
        }
        bail!("audit log verification FAILED: {} problem(s)", report.problems.len());
    }
    stderr().info(format_args!("audit log OK: {} entries, head {}", report.entries, report.head_hash));
    Ok(())
}

async fn run(db_url: String, args: ServeArgs, token: Option<String>) -> anyhow::Result<()> {
    let Some(token) = token else {
        bail!("no token: pass --token or set CLAW_POINTS_TOKEN (refusing to start an open ledger)");
    };
    let limits = Limits {
        rate_per_sec: args.rate,
        burst: args.burst,
        operator_rate_per_sec: args.operator_rate,
        operator_burst: args.operator_burst,
        max_body_bytes: args.max_body,
        body_timeout: Duration::from_secs(10),
        max_group: usize::try_from(args.max_group).context("--max-group")?,
        shards: args.shards,
        writers: Some(usize::try_from(args.writers).context("--writers")?),
        checkpoint_every: Duration::from_secs(args.checkpoint_every),
    };
    let server = claw_points::serve(ServerConfig { db_url, listen: args.listen, token, limits })
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
