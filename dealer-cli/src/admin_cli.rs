//! `claw-dealer admin …`: the operator's commands on a running dealer's
//! admin API (`--admin-api`), over HTTP with the bearer token from
//! `DATA_DIR/admin.token`: ban, unban, freeze, unfreeze an identity, list
//! the sanctions, show an identity's sanctions and abuse signals, list the
//! identities with the most flags, and check the audit log's hash chain.
//! The API's JSON answer goes to stdout; exit status 0 on success, 1 when
//! the API refused (its error on stderr), 2 on a usage error.

use std::path::PathBuf;

use anyhow::{bail, Context};
use clap::{Parser, Subcommand};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// Operator commands on a running dealer's admin API.
#[derive(Debug, Parser)]
#[command(
    name = "claw-dealer admin",
    bin_name = "claw-dealer admin",
    version,
    about = "Operator commands on a running dealer's admin API (--admin-api): ban, freeze, abuse signals, audit log"
)]
pub struct AdminCli {
    /// The dealer's HTTP listener (its --http-listen).
    #[arg(long, default_value = "http://127.0.0.1:7778", value_name = "URL")]
    pub url: String,
    /// The admin token file (default: DATA_DIR/admin.token); the variable
    /// CLAW_ADMIN_TOKEN, when set, is used instead.
    #[arg(long, value_name = "FILE")]
    pub token_file: Option<PathBuf>,
    /// The dealer's data directory (for the token file; default as the dealer's).
    #[arg(long = "data-dir", value_name = "DATA_DIR")]
    pub data_dir: Option<PathBuf>,
    /// What to do.
    #[command(subcommand)]
    pub command: AdminCommand,
}

/// One admin action.
#[derive(Debug, Subcommand)]
pub enum AdminCommand {
    /// Ban an identity: refused at the handshake, removed from its room once
    /// its running hand has settled.
    Ban {
        /// The identity (player public key, 64 hex characters).
        id: String,
        /// Why (told to the player; 1 to 200 bytes).
        #[arg(long)]
        reason: String,
        /// How long (e.g. 90s, 30m, 24h, 7d); default: until lifted.
        #[arg(long = "for", value_name = "TERM")]
        term: Option<String>,
    },
    /// Lift a ban.
    Unban {
        /// The identity.
        id: String,
    },
    /// Freeze an identity: it may connect and see its balance, not sit down.
    Freeze {
        /// The identity.
        id: String,
        /// Why (told to the player).
        #[arg(long)]
        reason: String,
        /// How long (e.g. 24h); default: until lifted.
        #[arg(long = "for", value_name = "TERM")]
        term: Option<String>,
    },
    /// Lift a freeze.
    Unfreeze {
        /// The identity.
        id: String,
    },
    /// The bans and freezes in force.
    List,
    /// One identity's sanctions and abuse signals.
    Show {
        /// The identity.
        id: String,
    },
    /// The identities with the most flags, with their signals.
    Signals {
        /// How many.
        #[arg(long, default_value_t = 50)]
        limit: usize,
    },
    /// Check the admin audit log's hash chain.
    Audit,
}

impl AdminCommand {
    /// The request: method, path and JSON body.
    fn request(&self) -> (&'static str, String, String) {
        let body = |reason: &str, term: &Option<String>| {
            let mut b = serde_json::json!({ "reason": reason });
            if let Some(t) = term {
                b["for"] = serde_json::json!(t);
            }
            b.to_string()
        };
        match self {
            AdminCommand::Ban { id, reason, term } => {
                ("POST", format!("/admin/players/{id}/ban"), body(reason, term))
            }
            AdminCommand::Unban { id } => ("DELETE", format!("/admin/players/{id}/ban"), String::new()),
            AdminCommand::Freeze { id, reason, term } => {
                ("POST", format!("/admin/players/{id}/freeze"), body(reason, term))
            }
            AdminCommand::Unfreeze { id } => ("DELETE", format!("/admin/players/{id}/freeze"), String::new()),
            AdminCommand::List => ("GET", "/admin/sanctions".into(), String::new()),
            AdminCommand::Show { id } => ("GET", format!("/admin/players/{id}"), String::new()),
            AdminCommand::Signals { limit } => {
                ("GET", format!("/admin/signals?limit={limit}"), String::new())
            }
            AdminCommand::Audit => ("GET", "/admin/audit".into(), String::new()),
        }
    }
}

/// `host:port` of an `http://` URL (the admin API has no TLS of its own:
/// reach a remote one through an SSH tunnel or a TLS proxy's loopback).
fn host_of(url: &str) -> anyhow::Result<String> {
    let Some(rest) = url.strip_prefix("http://") else {
        bail!("--url {url:?}: expected http://HOST:PORT (the dealer's HTTP listener)")
    };
    let host = rest.trim_end_matches('/');
    if host.is_empty() || host.contains('/') {
        bail!("--url {url:?}: expected http://HOST:PORT");
    }
    Ok(if host.contains(':') { host.to_owned() } else { format!("{host}:80") })
}

/// The token: `CLAW_ADMIN_TOKEN`, else the token file.
fn token(cli: &AdminCli) -> anyhow::Result<String> {
    if let Ok(t) = std::env::var("CLAW_ADMIN_TOKEN") {
        return Ok(t.trim().to_owned());
    }
    let file = match (&cli.token_file, &cli.data_dir) {
        (Some(f), _) => f.clone(),
        (None, Some(d)) => d.join(claw_dealer::admin::TOKEN_FILE),
        (None, None) => crate::defaults::user_data_dir_from_env()
            .context("no data directory: give --data-dir DIR or --token-file FILE")?
            .join(claw_dealer::admin::TOKEN_FILE),
    };
    let t = std::fs::read_to_string(&file).with_context(|| format!("admin token file {}", file.display()))?;
    Ok(t.trim().to_owned())
}

/// Runs the command; returns the exit status (the answer on stdout).
pub async fn run(cli: AdminCli) -> anyhow::Result<i32> {
    let host = host_of(&cli.url)?;
    let token = token(&cli)?;
    let (method, path, body) = cli.command.request();
    let (status, answer) = request(&host, method, &path, &token, &body)
        .await
        .with_context(|| format!("admin API at {}", cli.url))?;
    let pretty = serde_json::from_str::<serde_json::Value>(&answer)
        .ok()
        .and_then(|v| serde_json::to_string_pretty(&v).ok())
        .unwrap_or(answer);
    if (200..300).contains(&status) {
        println!("{pretty}");
        Ok(0)
    } else {
        bail!("the admin API answered {status}: {pretty}")
    }
}

/// One HTTP/1.1 request (`Connection: close`): the status and the body.
async fn request(
    host: &str,
    method: &str,
    path: &str,
    token: &str,
    body: &str,
) -> anyhow::Result<(u16, String)> {
    let guard = std::time::Duration::from_secs(30);
    let mut s = tokio::time::timeout(guard, tokio::net::TcpStream::connect(host))
        .await
        .context("no answer in 30 s")?
        .context("cannot connect")?;
    let req = format!(
        "{method} {path} HTTP/1.1\r\nHost: {host}\r\nAuthorization: Bearer {token}\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    s.write_all(req.as_bytes()).await.context("sending the request")?;
    let mut buf = Vec::new();
    tokio::time::timeout(guard, s.read_to_end(&mut buf)).await.context("no answer in 30 s")??;
    let text = String::from_utf8_lossy(&buf);
    let (head, rest) = text.split_once("\r\n\r\n").context("not an HTTP answer")?;
    let status = head.split(' ').nth(1).and_then(|c| c.parse().ok()).context("not an HTTP answer")?;
    let chunked = head.lines().any(|l| {
        let l = l.to_ascii_lowercase();
        l.starts_with("transfer-encoding:") && l.contains("chunked")
    });
    Ok((status, if chunked { dechunk(rest) } else { rest.to_owned() }))
}

/// The body of a chunked answer.
fn dechunk(mut s: &str) -> String {
    let mut out = String::new();
    while let Some((size, rest)) = s.split_once("\r\n") {
        let Ok(n) = usize::from_str_radix(size.trim(), 16) else { break };
        if n == 0 || rest.len() < n {
            break;
        }
        out.push_str(&rest[..n]);
        s = rest[n..].trim_start_matches("\r\n");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_map_to_the_api() {
        let c = AdminCli::try_parse_from(["admin", "ban", "ab", "--reason", "r", "--for", "24h"]).unwrap();
        let (m, p, b) = c.command.request();
        assert_eq!((m, p.as_str()), ("POST", "/admin/players/ab/ban"));
        assert_eq!(
            serde_json::from_str::<serde_json::Value>(&b).unwrap(),
            serde_json::json!({"reason": "r", "for": "24h"})
        );
        let c = AdminCli::try_parse_from(["admin", "unfreeze", "ab"]).unwrap();
        assert_eq!(c.command.request().0, "DELETE");
        assert!(AdminCli::try_parse_from(["admin", "ban", "ab"]).is_err(), "a ban needs a reason");
        assert_eq!(host_of("http://127.0.0.1:7778/").unwrap(), "127.0.0.1:7778");
        assert!(host_of("https://x:1").is_err());
        assert_eq!(dechunk("5\r\nhello\r\n3\r\n wo\r\n0\r\n\r\n"), "hello wo");
    }
}
