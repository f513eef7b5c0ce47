//! The ledger storage: one code path over SQLite and PostgreSQL (`sqlx::Any`).
//!
//! The audit log is one hash chain per account shard (`audit::shard_of`); an
//! entry is linked into the chain of every shard its accounts are in.
//! Mutations go to writer tasks (one per lane: SQLite has one, PostgreSQL
//! several) that commit them in groups: one database transaction that first
//! locks the head rows of every shard the group touches, in ascending order
//! (so mutations of one shard are serialised, also across processes, without
//! deadlock), then, for each mutation in its own savepoint, looks up the
//! idempotency key (a repeat replays the stored answer), applies the
//! movements with conditional updates (never below zero; the
//! `CHECK (balance >= 0)` constraint is the backstop) and writes the ledger
//! rows, the audit entry and the answer (a refusal gets an entry without
//! movements, so every stored answer is under a hash chain); then the new
//! heads, and one commit.
//! Answers are released only after the commit.
//! SQLite runs in WAL mode with `synchronous = FULL`: an acknowledged write
//! has been fsynced.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::str::FromStr;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use claw_protocol::{AccountId, IdempotencyKey};
use serde::{Deserialize, Serialize};
use serde_json::json;
use sha2::{Digest, Sha256};
use sqlx::any::{AnyConnectOptions, AnyPoolOptions, AnyRow};
use sqlx::{AnyPool, Row};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use tokio::sync::{mpsc, oneshot};

use crate::audit::{
    checkpoint_hash, entry_hash_v3, heads_hash, heads_text, links_text, parse_heads, parse_links, shard_of,
    AuditBody, AuditEntry, AuditMove, EntryFields, EntryKind, ShardLink, GENESIS_HASH,
};

/// Largest amount one movement may carry (10^15).
pub const MAX_AMOUNT: u64 = 1_000_000_000_000_000;
/// Largest balance an account may reach (10^18, below `i64::MAX`).
pub const MAX_BALANCE: u64 = 1_000_000_000_000_000_000;
/// Longest memo, in bytes.
pub const MAX_MEMO_LEN: usize = 256;
/// Most movements in one settle batch.
pub const MAX_BATCH_OPS: usize = 256;
/// Largest page of history or audit entries.
pub const MAX_PAGE: u32 = 1000;

/// The schema migrations of `backend`, embedded in the binary. Built as
/// `sqlx::migrate!` would (version and description from the file name, same
/// checksum), without sqlx's macros: those compile the database drivers a
/// second time for the build host.
fn migrator(backend: Backend) -> sqlx::migrate::Migrator {
    use sqlx::migrate::{Migration, MigrationType, Migrator};
    use sqlx::SqlSafeStr;
    let (init, shards) = match backend {
        Backend::Sqlite => (
            include_str!("../migrations/sqlite/0001_init.sql"),
            include_str!("../migrations/sqlite/0002_shards.sql"),
        ),
        Backend::Postgres => (
            include_str!("../migrations/postgres/0001_init.sql"),
            include_str!("../migrations/postgres/0002_shards.sql"),
        ),
    };
    Migrator::with_migrations(vec![
        Migration::new(1, "init".into(), MigrationType::Simple, init.into_sql_str(), false),
        Migration::new(2, "shards".into(), MigrationType::Simple, shards.into_sql_str(), false),
    ])
}

/// Which database engine a URL names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    /// `sqlite://path?mode=rwc` (a file; `mode=rwc` creates it).
    Sqlite,
    /// `postgres://user:pass@host:port/db`.
    Postgres,
}

impl From<sqlx::Error> for StoreError {
    fn from(e: sqlx::Error) -> StoreError {
        StoreError::Db(e)
    }
}

impl From<sqlx::migrate::MigrateError> for StoreError {
    fn from(e: sqlx::migrate::MigrateError) -> StoreError {
        StoreError::Migrate(e)
    }
}

/// A database error's text, the database's own message once: sqlx says
/// "error returned from database: MESSAGE" and has MESSAGE as its source.
fn db_text(e: &sqlx::Error) -> String {
    match e {
        sqlx::Error::Database(d) => d.to_string(),
        other => other.to_string(),
    }
}

impl std::fmt::Display for Backend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Backend::Sqlite => "sqlite",
            Backend::Postgres => "postgres",
        })
    }
}

impl Backend {
    /// Picks the backend from a database URL's scheme.
    pub fn from_url(url: &str) -> Result<Backend, StoreError> {
        if url.starts_with("sqlite:") {
            Ok(Backend::Sqlite)
        } else if url.starts_with("postgres://") || url.starts_with("postgresql://") {
            Ok(Backend::Postgres)
        } else {
            Err(StoreError::BadUrl(redact_url(url)))
        }
    }
}

/// Strips a password from a URL before it goes into an error or a log line.
pub fn redact_url(url: &str) -> String {
    match url::Url::parse(url) {
        Ok(mut u) if u.password().is_some() => {
            let _ = u.set_password(Some("***"));
            u.to_string()
        }
        Ok(u) => u.to_string(),
        Err(_) => "<unparseable url>".to_owned(),
    }
}

/// Builds a SQLite URL for a file path, creating the file if missing.
pub fn sqlite_url(path: &std::path::Path) -> String {
    format!("sqlite://{}?mode=rwc", path.display())
}

/// Storage failures. None of them means chips moved twice.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The URL is neither `sqlite:` nor `postgres://`.
    #[error("unsupported database URL {0} (use sqlite://PATH?mode=rwc or postgres://…)")]
    BadUrl(String),
    /// A `postgres://` URL in a build without the feature `postgres`.
    #[error("{0}: this build has no PostgreSQL support (claw-points feature `postgres`)")]
    NoPostgres(String),
    /// The database refused or failed a statement, or is unreachable. Its
    /// text is part of this one, not a `source`: an error chain says it once.
    #[error("database error: {}", db_text(.0))]
    Db(sqlx::Error),
    /// Applying the schema migrations failed (its text is part of this one).
    #[error("migration failed: {0}")]
    Migrate(sqlx::migrate::MigrateError),
    /// A stored row does not parse (only possible if someone edited the database).
    #[error("stored data is corrupt: {0}")]
    Corrupt(String),
    /// The group commit a mutation was part of failed, or the writer task stopped.
    #[error("ledger writer failed: {0}")]
    Task(String),
    /// The database could not be reached for a group commit.
    #[error("database unavailable: {0}")]
    Unavailable(String),
    /// The shard count asked for is not the ledger's (it is fixed when the
    /// ledger is created) or out of range.
    #[error("{0}")]
    Shards(String),
}

/// The operation named in the audit log.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum OpName {
    /// One debit.
    Debit,
    /// One credit.
    Credit,
    /// One operator grant.
    Grant,
    /// An atomic batch of debits and credits.
    Settle,
}

impl OpName {
    /// The stable text used in the audit log.
    pub fn as_str(self) -> &'static str {
        match self {
            OpName::Debit => "debit",
            OpName::Credit => "credit",
            OpName::Grant => "grant",
            OpName::Settle => "settle",
        }
    }
}

/// One validated account movement of a mutation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Move {
    /// Debit, credit or grant.
    pub kind: EntryKind,
    /// The account moved.
    pub account: AccountId,
    /// 1..=MAX_AMOUNT.
    pub amount: u64,
    /// At most MAX_MEMO_LEN bytes, no control characters.
    pub memo: String,
}

/// A validated mutating request: what the idempotency key is bound to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Mutation {
    /// The operation as named in the audit log.
    pub op: OpName,
    /// The movements, applied in order, all or none.
    pub moves: Vec<Move>,
}

impl Mutation {
    /// SHA-256 (hex) of the canonical JSON of the request: equal requests have
    /// equal fingerprints, whatever whitespace or field order the client sent.
    pub fn fingerprint(&self) -> String {
        let text = serde_json::to_string(self).unwrap_or_default();
        hex::encode(Sha256::digest(text.as_bytes()))
    }
}

/// The answer to a mutating request: an HTTP status and a JSON body, stored
/// under the idempotency key and replayed byte for byte on repeats.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answer {
    /// HTTP status (200, or 409 for insufficient balance / overflow / key reuse).
    pub status: u16,
    /// JSON text.
    pub body: String,
    /// True when this is a stored answer to an earlier identical request.
    pub replayed: bool,
}

/// One movement of an account's history.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct HistoryEntry {
    /// The audit entry that made this movement.
    pub seq: u64,
    /// Position inside that entry.
    pub idx: u32,
    /// Debit, credit or grant.
    pub kind: EntryKind,
    /// Chips moved.
    pub amount: u64,
    /// The balance right after.
    pub balance: u64,
    /// Caller's memo.
    pub memo: String,
    /// Unix milliseconds.
    pub created_ms: i64,
}

/// One thing wrong found by [`Store::verify`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Problem {
    /// The audit entry concerned (its operation id), when there is one.
    pub seq: Option<u64>,
    /// The shard chain concerned, when there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<u32>,
    /// Machine code: `seq-gap`, `prev-hash-mismatch`, `hash-mismatch`, `bad-body`,
    /// `bad-links`, `shard-mismatch`, `checkpoint-mismatch`, `balance-mismatch`, `head-mismatch`,
    /// `ledger-mismatch`, `account-mismatch`, `answer-missing`,
    /// `answer-mismatch`, `answer-unchained`.
    pub kind: String,
    /// Human explanation.
    pub message: String,
}

/// One shard chain's head.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ShardHead {
    /// The shard.
    pub shard: u32,
    /// Entries in its chain.
    pub seq: u64,
    /// Its last entry's hash ([`GENESIS_HASH`] when empty).
    pub hash: String,
}

/// Result of verifying the audit chains against the tables.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct VerifyReport {
    /// True when no problem was found.
    pub ok: bool,
    /// Audit entries read (of the shard verified, when only one is).
    pub entries: u64,
    /// The last entry's operation id.
    pub head_seq: u64,
    /// The head of heads (`audit::heads_hash` over every shard's head; the
    /// shard's own head when only one is verified): publish it to detect a
    /// rewrite of a whole tail.
    pub head_hash: String,
    /// Shard chains of the ledger.
    #[serde(default)]
    pub shard_count: u32,
    /// The shard verified alone, if only one was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<u32>,
    /// Each verified shard's head as stored.
    #[serde(default)]
    pub heads: Vec<ShardHead>,
    /// Checkpoints read (each checked against the chains it pins).
    #[serde(default)]
    pub checkpoints: u64,
    /// The last checkpoint's hash, if there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_checkpoint: Option<String>,
    /// Accounts with a balance row.
    pub accounts: u64,
    /// Sum of all balances.
    pub total_balance: u128,
    /// Sum of all grants (chips created by the operator).
    pub total_granted: u128,
    /// Sum of all debits.
    pub total_debited: u128,
    /// Sum of all credits.
    pub total_credited: u128,
    /// What is wrong (at most 100 listed).
    pub problems: Vec<Problem>,
}

/// Every shard's head at one moment, chained to the previous checkpoint.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Checkpoint {
    /// Position in the checkpoint chain, from 1.
    pub id: u64,
    /// Unix milliseconds.
    pub created_ms: i64,
    /// `SHARD:SEQ:HASH` of every shard, in order (`audit::heads_text`).
    pub heads: String,
    /// The head of heads of those heads (`audit::heads_hash`).
    pub head_hash: String,
    /// The previous checkpoint's hash ([`GENESIS_HASH`] for the first).
    pub prev_hash: String,
    /// This checkpoint's hash (`audit::checkpoint_hash`).
    pub hash: String,
}

/// Default shard chains of a new ledger.
pub const DEFAULT_SHARDS: u32 = 16;
/// Most shard chains a ledger may have.
pub const MAX_SHARDS: u32 = 1024;
/// Default concurrent group-commit writers of one PostgreSQL store.
pub const DEFAULT_WRITERS: usize = 4;

/// How [`Store::open_with`] opens a ledger.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StoreOptions {
    /// Most mutations committed in one transaction.
    pub max_group: usize,
    /// Shard chains of a new ledger (1..=[`MAX_SHARDS`]); `None`: an existing
    /// ledger's count, [`DEFAULT_SHARDS`] for a new one. An existing ledger
    /// with another count is refused ([`StoreError::Shards`]).
    pub shards: Option<u32>,
    /// Concurrent group-commit writers on PostgreSQL (SQLite has one);
    /// `None`: the smaller of the shard count and [`DEFAULT_WRITERS`].
    pub writers: Option<usize>,
}

impl Default for StoreOptions {
    fn default() -> StoreOptions {
        StoreOptions { max_group: DEFAULT_GROUP, shards: None, writers: None }
    }
}

/// Opened ledger database. Cheap to clone.
#[derive(Clone)]
pub struct Store {
    pool: AnyPool,
    backend: Backend,
    writers: Vec<mpsc::Sender<Job>>,
    counters: Arc<GroupCounters>,
    max_group: usize,
    shards: u32,
}

/// Commits and mutations counted by the writer since the store opened.
#[derive(Default)]
struct GroupCounters {
    commits: AtomicU64,
    mutations: AtomicU64,
    largest: AtomicU64,
}

/// What the group commit has done since the store opened.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct GroupStats {
    /// Transactions committed by the writer.
    pub commits: u64,
    /// Mutations in those transactions (applied, refused or replayed).
    pub mutations: u64,
    /// The most mutations one commit carried.
    pub largest_group: u64,
    /// The configured most mutations per commit.
    pub max_group: u64,
}

fn now_ms() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_millis() as i64).unwrap_or(0)
}

fn to_i64(v: u64) -> i64 {
    // Every amount and balance is bounded by MAX_BALANCE < i64::MAX.
    i64::try_from(v).unwrap_or(i64::MAX)
}

fn from_i64(v: i64, what: &str) -> Result<u64, StoreError> {
    u64::try_from(v).map_err(|_| StoreError::Corrupt(format!("negative {what} {v}")))
}

impl Store {
    /// Connects, tunes SQLite (WAL, synchronous=FULL, busy timeout) and applies
    /// migrations; groups of up to [`DEFAULT_GROUP`] mutations per commit.
    pub async fn open(db_url: &str) -> Result<Store, StoreError> {
        Store::open_grouped(db_url, DEFAULT_GROUP).await
    }

    /// [`Store::open`] with at most `max_group` mutations per commit (1: one
    /// commit per mutation, as without group commit).
    pub async fn open_grouped(db_url: &str, max_group: usize) -> Result<Store, StoreError> {
        Store::open_with(db_url, StoreOptions { max_group, ..StoreOptions::default() }).await
    }

    /// Opens an existing ledger with its own settings (for `verify`). Like
    /// [`Store::open`] it applies pending migrations: a ledger written before
    /// shards becomes a one-shard ledger (one-way; its chain stays valid).
    pub async fn connect(db_url: &str) -> Result<Store, StoreError> {
        Store::open(db_url).await
    }

    /// Connects, migrates, and creates the shard heads of a new ledger.
    pub async fn open_with(db_url: &str, options: StoreOptions) -> Result<Store, StoreError> {
        if let Some(n) = options.shards {
            if !(1..=MAX_SHARDS).contains(&n) {
                return Err(StoreError::Shards(format!("shard count {n} is not between 1 and {MAX_SHARDS}")));
            }
        }
        let max_group = options.max_group.clamp(1, 4096);
        sqlx::any::install_default_drivers();
        let backend = Backend::from_url(db_url)?;
        if backend == Backend::Postgres && !cfg!(feature = "postgres") {
            return Err(StoreError::NoPostgres(redact_url(db_url)));
        }
        let connect =
            AnyConnectOptions::from_str(db_url).map_err(|_| StoreError::BadUrl(redact_url(db_url)))?;
        let in_memory = db_url.contains(":memory:") || db_url.contains("mode=memory");
        let lanes = match backend {
            Backend::Sqlite => 1,
            Backend::Postgres => options.writers.unwrap_or(DEFAULT_WRITERS).clamp(1, 64),
        };
        let mut pool =
            AnyPoolOptions::new().acquire_timeout(Duration::from_secs(15)).max_connections(match backend {
                Backend::Sqlite if in_memory => 1,
                Backend::Sqlite => 4,
                Backend::Postgres => lanes as u32 + 4,
            });
        if backend == Backend::Sqlite {
            pool = pool.after_connect(|conn, _meta| {
                Box::pin(async move {
                    // Durable on every acknowledged write: WAL + fsync at each commit.
                    sqlx::query("PRAGMA journal_mode = WAL").fetch_optional(&mut *conn).await?;
                    sqlx::query("PRAGMA synchronous = FULL").execute(&mut *conn).await?;
                    sqlx::query("PRAGMA busy_timeout = 15000").fetch_optional(&mut *conn).await?;
                    Ok(())
                })
            });
        }
        let pool = pool.connect_with(connect).await?;
        if let Err(e) = migrator(backend).run(&pool).await {
            pool.close().await;
            return Err(e.into());
        }
        let shards = match init_ledger(&pool, backend, options.shards).await {
            Ok(n) => n,
            Err(e) => {
                pool.close().await;
                return Err(e);
            }
        };
        let lanes = lanes.min(shards as usize);
        let counters = Arc::new(GroupCounters::default());
        let writers = (0..lanes)
            .map(|_| {
                let (writer, rx) = mpsc::channel(4 * max_group);
                tokio::spawn(writer_loop(pool.clone(), backend, shards, rx, max_group, counters.clone()));
                writer
            })
            .collect();
        Ok(Store { pool, backend, writers, counters, max_group, shards })
    }

    /// The ledger's shard chains.
    pub fn shard_count(&self) -> u32 {
        self.shards
    }

    /// Commits and mutations of the group commit so far.
    pub fn group_stats(&self) -> GroupStats {
        GroupStats {
            commits: self.counters.commits.load(Ordering::Relaxed),
            mutations: self.counters.mutations.load(Ordering::Relaxed),
            largest_group: self.counters.largest.load(Ordering::Relaxed),
            max_group: self.max_group as u64,
        }
    }

    /// Which engine this store runs on.
    pub fn backend(&self) -> Backend {
        self.backend
    }

    /// The underlying pool (tests use it to inspect or tamper with tables).
    pub fn pool(&self) -> &AnyPool {
        &self.pool
    }

    /// Closes every connection; waits for checked-out ones to return.
    pub async fn close(&self) {
        self.pool.close().await;
    }

    /// An account's balance; accounts never seen have balance 0.
    pub async fn balance(&self, account: &AccountId) -> Result<u64, StoreError> {
        let row = sqlx::query("SELECT balance FROM accounts WHERE id = $1")
            .bind(account.as_str())
            .fetch_optional(&self.pool)
            .await?;
        match row {
            Some(r) => from_i64(r.try_get::<i64, _>(0)?, "balance"),
            None => Ok(0),
        }
    }

    /// Applies a mutation exactly once per key. Mutations are queued to one
    /// writer task that commits them in groups (one transaction, one fsync,
    /// each mutation in its own savepoint); the answer comes after the commit.
    /// A client hanging up cannot cut a transaction short.
    pub async fn apply(&self, key: &IdempotencyKey, m: Mutation) -> Result<Answer, StoreError> {
        let (reply, answer) = oneshot::channel();
        let shards: BTreeSet<u32> =
            m.moves.iter().map(|mv| shard_of(mv.account.as_str(), self.shards)).collect();
        let lane = shards.first().map_or(0, |&s| s as usize % self.writers.len());
        self.writers[lane]
            .send(Job { key: key.clone(), m, shards, reply })
            .await
            .map_err(|_| StoreError::Task("the ledger writer has stopped".into()))?;
        answer.await.map_err(|_| StoreError::Task("the ledger writer dropped the request".into()))?
    }

    /// One page of an account's movements, oldest first, strictly after the
    /// cursor `(seq, idx)`.
    pub async fn history(
        &self,
        account: &AccountId,
        after: (u64, u32),
        limit: u32,
    ) -> Result<Vec<HistoryEntry>, StoreError> {
        let rows = sqlx::query(
            "SELECT audit_seq, idx, kind, amount, balance_after, memo, created_ms FROM ledger \
             WHERE account = $1 AND (audit_seq > $2 OR (audit_seq = $2 AND idx > $3)) \
             ORDER BY audit_seq, idx LIMIT $4",
        )
        .bind(account.as_str())
        .bind(to_i64(after.0))
        .bind(i64::from(after.1))
        .bind(i64::from(limit.min(MAX_PAGE)))
        .fetch_all(&self.pool)
        .await?;
        rows.iter().map(history_row).collect()
    }

    /// One page of the audit log, strictly after `after_seq`, in order.
    pub async fn audit_page(&self, after_seq: u64, limit: u32) -> Result<Vec<AuditEntry>, StoreError> {
        audit_page(&self.pool, after_seq, limit).await
    }

    /// Walks every shard chain in one consistent snapshot: checks positions,
    /// links, hashes, which shards each entry is in, and the heads; replays
    /// the movements and compares the result with the ledger and accounts
    /// tables.
    pub async fn verify(&self) -> Result<VerifyReport, StoreError> {
        self.verify_chains(None).await
    }

    /// Records every shard's head (one consistent snapshot) as a checkpoint
    /// chained to the previous one; `None` when no head moved since the last.
    /// Two writers checkpointing at once: one of them fails (retry later).
    pub async fn checkpoint(&self) -> Result<Option<Checkpoint>, StoreError> {
        let mut tx = match self.backend {
            Backend::Sqlite => self.pool.begin_with("BEGIN IMMEDIATE").await?,
            Backend::Postgres => self.pool.begin_with("BEGIN ISOLATION LEVEL REPEATABLE READ").await?,
        };
        let mut heads = Vec::new();
        for (i, r) in sqlx::query("SELECT shard, seq, hash FROM audit_heads ORDER BY shard")
            .fetch_all(&mut *tx)
            .await?
            .iter()
            .enumerate()
        {
            if i64::from(r.try_get::<i32, _>(0)?) != i as i64 {
                return Err(StoreError::Corrupt(format!("the head of shard {i} is missing")));
            }
            heads.push((from_i64(r.try_get(1)?, "head seq")?, r.try_get::<String, _>(2)?));
        }
        let text = heads_text(&heads);
        let last = sqlx::query("SELECT id, heads, hash FROM audit_checkpoints ORDER BY id DESC LIMIT 1")
            .fetch_optional(&mut *tx)
            .await?;
        let (id, prev_hash) = match last {
            Some(r) if r.try_get::<String, _>(1)? == text => {
                tx.rollback().await?;
                return Ok(None);
            }
            Some(r) => (from_i64(r.try_get(0)?, "checkpoint id")? + 1, r.try_get::<String, _>(2)?),
            None => (1, GENESIS_HASH.to_owned()),
        };
        let created_ms = now_ms();
        let hash = checkpoint_hash(id, &prev_hash, created_ms, &text)
            .ok_or_else(|| StoreError::Corrupt("the last checkpoint's hash is not 64 hex".into()))?;
        sqlx::query(
            "INSERT INTO audit_checkpoints (id, created_ms, heads, prev_hash, hash) VALUES ($1, $2, $3, $4, $5)",
        )
        .bind(to_i64(id))
        .bind(created_ms)
        .bind(text.as_str())
        .bind(prev_hash.as_str())
        .bind(hash.as_str())
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        let head_hash = heads_hash(&heads).unwrap_or_default();
        Ok(Some(Checkpoint { id, created_ms, heads: text, head_hash, prev_hash, hash }))
    }

    /// [`Store::verify`] of one shard alone: its chain, the entries linked
    /// into it, the balances and ledger rows of its accounts, and its head.
    pub async fn verify_shard(&self, shard: u32) -> Result<VerifyReport, StoreError> {
        self.verify_chains(Some(shard)).await
    }

    async fn verify_chains(&self, only: Option<u32>) -> Result<VerifyReport, StoreError> {
        let mut tx = match self.backend {
            Backend::Sqlite => self.pool.begin().await?,
            Backend::Postgres => {
                self.pool.begin_with("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY").await?
            }
        };
        let config = sqlx::query("SELECT shards, legacy_seq FROM ledger_config WHERE id = 1")
            .fetch_optional(&mut *tx)
            .await?
            .ok_or_else(|| StoreError::Corrupt("ledger_config has no row".into()))?;
        let n = u32::try_from(config.try_get::<i32, _>(0)?)
            .ok()
            .filter(|n| (1..=MAX_SHARDS).contains(n))
            .ok_or_else(|| StoreError::Corrupt("ledger_config: bad shard count".into()))?;
        let legacy_seq = from_i64(config.try_get(1)?, "legacy_seq")?;
        if let Some(s) = only {
            if s >= n {
                return Err(StoreError::Shards(format!(
                    "there is no shard {s}: the ledger has {n} (0 to {})",
                    n - 1
                )));
            }
        }
        let mine = |shard: u32| only.is_none_or(|o| o == shard);
        let mut stored_heads: BTreeMap<u32, (u64, String)> = BTreeMap::new();
        let mut stray_heads = Vec::new();
        for r in
            sqlx::query("SELECT shard, seq, hash FROM audit_heads ORDER BY shard").fetch_all(&mut *tx).await?
        {
            let shard: i32 = r.try_get(0)?;
            match u32::try_from(shard) {
                Ok(s) if s < n => {
                    stored_heads.insert(s, (from_i64(r.try_get(1)?, "head seq")?, r.try_get(2)?));
                }
                _ => stray_heads.push(shard),
            }
        }

        let mut problems = Vec::new();
        let mut push = |seq: Option<u64>, shard: Option<u32>, kind: &str, message: String| {
            if problems.len() < 100 {
                problems.push(Problem { seq, shard, kind: kind.into(), message });
            }
        };

        // The checkpoint chain, and what each checkpoint pins: (shard, position) -> hash.
        let mut pinned: Vec<BTreeMap<u64, (u64, String)>> = (0..n).map(|_| BTreeMap::new()).collect();
        let (mut checkpoints, mut last_checkpoint) = (0u64, None::<String>);
        let mut last_pin = vec![0u64; n as usize];
        for r in
            sqlx::query("SELECT id, created_ms, heads, prev_hash, hash FROM audit_checkpoints ORDER BY id")
                .fetch_all(&mut *tx)
                .await?
        {
            let id = from_i64(r.try_get(0)?, "checkpoint id")?;
            let (created_ms, text): (i64, String) = (r.try_get(1)?, r.try_get(2)?);
            let (prev, hash): (String, String) = (r.try_get(3)?, r.try_get(4)?);
            checkpoints += 1;
            let mut bad =
                |why: String| push(None, None, "checkpoint-mismatch", format!("checkpoint {id}: {why}"));
            if id != checkpoints {
                bad(format!("expected checkpoint {checkpoints}: checkpoints were deleted"));
            }
            if prev != last_checkpoint.as_deref().unwrap_or(GENESIS_HASH) {
                bad("prev_hash does not match the previous checkpoint's hash".into());
            }
            if checkpoint_hash(id, &prev, created_ms, &text).as_deref() != Some(hash.as_str()) {
                bad("stored hash does not match its contents".into());
            }
            last_checkpoint = Some(hash);
            match parse_heads(&text).filter(|h| h.len() == n as usize) {
                Some(heads) => {
                    for (shard, (seq, hash)) in heads.into_iter().enumerate() {
                        if seq < last_pin[shard] {
                            bad(format!(
                                "shard {shard} at entry {seq}, an earlier checkpoint had {}",
                                last_pin[shard]
                            ));
                        }
                        last_pin[shard] = seq;
                        if seq == 0 && hash != GENESIS_HASH {
                            bad(format!("shard {shard} empty with a hash other than the genesis"));
                        } else if seq > 0 && mine(shard as u32) {
                            pinned[shard].insert(seq, (id, hash));
                        }
                    }
                }
                None => bad(format!("heads {text:?} are not one head per shard of {n}")),
            }
        }
        struct Chain {
            expect: u64,
            prev: String,
            entries: u64,
        }
        let mut chains: Vec<Chain> =
            (0..n).map(|_| Chain { expect: 1, prev: GENESIS_HASH.to_owned(), entries: 0 }).collect();
        let mut balances: BTreeMap<String, u64> = BTreeMap::new();
        let (mut granted, mut debited, mut credited) = (0u128, 0u128, 0u128);
        let mut expected_ledger: Vec<Sha256> = (0..n).map(|_| Sha256::new()).collect();
        let mut expected_rows = vec![0u64; n as usize];
        let mut entries = 0u64;
        let mut last_seq = 0u64;
        let mut after = 0u64;
        loop {
            let page = audit_page(&mut *tx, after, MAX_PAGE).await?;
            let Some(last) = page.last() else { break };
            after = last.seq;
            for e in &page {
                let seq = Some(e.seq);
                let links: Vec<ShardLink> = if e.links.is_empty() {
                    if e.seq > legacy_seq || n != 1 {
                        push(seq, None, "bad-links", format!(
                            "entry has no shard links; only the {legacy_seq} entries written before shards may"
                        ));
                    }
                    vec![ShardLink { shard: 0, shard_seq: e.seq, prev_hash: e.prev_hash.clone() }]
                } else {
                    match parse_links(&e.links) {
                        Some(links) => {
                            if e.seq <= legacy_seq {
                                push(
                                    seq,
                                    None,
                                    "bad-links",
                                    "an entry written before shards has shard links".into(),
                                );
                            }
                            if let Some(first) = links.first().filter(|l| l.prev_hash != e.prev_hash) {
                                push(
                                    seq,
                                    Some(first.shard),
                                    "prev-hash-mismatch",
                                    format!(
                                        "the prev_hash column differs from the entry's link into shard {}",
                                        first.shard
                                    ),
                                );
                            }
                            links
                        }
                        None => {
                            push(seq, None, "bad-links", format!("links {:?} do not parse", e.links));
                            Vec::new()
                        }
                    }
                };
                if let Some(o) = only {
                    if !links.iter().any(|l| l.shard == o) {
                        continue;
                    }
                }
                entries += 1;
                last_seq = e.seq;
                let at = only.or(links.first().map(|l| l.shard));
                for l in &links {
                    let Some(c) = chains.get_mut(l.shard as usize) else {
                        push(
                            seq,
                            Some(l.shard),
                            "bad-links",
                            format!("linked into shard {}, the ledger has {n}", l.shard),
                        );
                        continue;
                    };
                    if !mine(l.shard) {
                        continue;
                    }
                    if l.shard_seq != c.expect {
                        push(seq, Some(l.shard), "seq-gap", format!(
                            "expected position {} in shard {}, found {}: entries were deleted, inserted or reordered",
                            c.expect, l.shard, l.shard_seq
                        ));
                    }
                    if l.prev_hash != c.prev {
                        push(
                            seq,
                            Some(l.shard),
                            "prev-hash-mismatch",
                            format!(
                                "prev_hash does not match the hash of the previous entry of shard {}",
                                l.shard
                            ),
                        );
                    }
                    c.expect = l.shard_seq + 1;
                    c.prev = e.hash.clone();
                    c.entries += 1;
                    if let Some((id, hash)) = pinned[l.shard as usize].remove(&l.shard_seq) {
                        if hash != e.hash {
                            push(
                                seq,
                                Some(l.shard),
                                "checkpoint-mismatch",
                                format!(
                                    "checkpoint {id} pins entry {} of shard {} at {hash}, the chain has {}: \
                                 history was rewritten after the checkpoint",
                                    l.shard_seq, l.shard, e.hash
                                ),
                            );
                        }
                    }
                }
                let answer_found = e.status != 0;
                if !answer_found {
                    push(
                        seq,
                        at,
                        "answer-missing",
                        format!("idempotency row {:?} (the entry's stored answer) is missing", e.key),
                    );
                } else if e.computed_hash().as_deref() != Some(e.hash.as_str()) {
                    push(
                        seq,
                        at,
                        "hash-mismatch",
                        format!(
                            "stored hash does not match the entry's contents, links or stored answer \
                         (idempotency row {:?})",
                            e.key
                        ),
                    );
                }
                let body: AuditBody = match serde_json::from_str(&e.body) {
                    Ok(b) => b,
                    Err(err) => {
                        push(seq, at, "bad-body", format!("body does not parse: {err}"));
                        continue;
                    }
                };
                if answer_found {
                    if let Some(why) = answer_problem(e, &body) {
                        push(seq, at, "answer-mismatch", format!("idempotency row {:?}: {why}", e.key));
                    }
                }
                if !e.links.is_empty() {
                    let have: BTreeSet<u32> = links.iter().map(|l| l.shard).collect();
                    let want: BTreeSet<u32> = if body.entries.is_empty() {
                        refused_account(&e.answer).map(|a| shard_of(&a, n)).into_iter().collect()
                    } else {
                        body.entries.iter().map(|mv| shard_of(&mv.account, n)).collect()
                    };
                    if have != want {
                        push(
                            seq,
                            at,
                            "shard-mismatch",
                            format!(
                            "entry {:?} is linked into shards {have:?}, its accounts are in shards {want:?}",
                            e.key
                        ),
                        );
                    }
                }
                for (idx, mv) in body.entries.iter().enumerate() {
                    let shard = shard_of(&mv.account, n);
                    if !mine(shard) {
                        continue;
                    }
                    let b = balances.entry(mv.account.clone()).or_insert(0);
                    let next = match mv.kind {
                        EntryKind::Debit => {
                            debited += u128::from(mv.amount);
                            b.checked_sub(mv.amount)
                        }
                        EntryKind::Credit => {
                            credited += u128::from(mv.amount);
                            b.checked_add(mv.amount)
                        }
                        EntryKind::Grant => {
                            granted += u128::from(mv.amount);
                            b.checked_add(mv.amount)
                        }
                    };
                    if next != Some(mv.balance) {
                        let gives = match next {
                            Some(n) => format!("gives {n}"),
                            None => "cannot be applied (below 0 or past the largest balance)".to_owned(),
                        };
                        push(
                            seq,
                            Some(shard),
                            "balance-mismatch",
                            format!(
                                "{} {} on {} from {} {gives}, entry says {}",
                                mv.kind.as_str(),
                                mv.amount,
                                mv.account,
                                b,
                                mv.balance
                            ),
                        );
                    }
                    *b = mv.balance;
                    ledger_digest(
                        &mut expected_ledger[shard as usize],
                        e.seq,
                        idx as u64,
                        &mv.account,
                        mv.kind.as_str(),
                        mv.amount,
                        mv.balance,
                        &mv.memo,
                        e.created_ms,
                    );
                    expected_rows[shard as usize] += 1;
                }
            }
        }
        for (shard, left) in pinned.iter().enumerate() {
            if let Some((seq, (id, _))) = left.iter().next() {
                push(
                    None,
                    Some(shard as u32),
                    "checkpoint-mismatch",
                    format!("checkpoint {id} pins entry {seq} of shard {shard}, the chain does not have it"),
                );
            }
        }
        for shard in stray_heads {
            push(None, None, "head-mismatch", format!("a head row for shard {shard}, the ledger has {n}"));
        }
        let mut heads = Vec::new();
        for (shard, c) in chains.iter().enumerate() {
            let shard = shard as u32;
            let Some((hseq, hhash)) = stored_heads.get(&shard) else {
                push(None, Some(shard), "head-mismatch", format!("shard {shard} has no head row"));
                continue;
            };
            heads.push(ShardHead { shard, seq: *hseq, hash: hhash.clone() });
            if mine(shard) && (c.entries != *hseq || &c.prev != hhash) {
                push(Some(*hseq), Some(shard), "head-mismatch", format!(
                    "the head of shard {shard} says {hseq} entries ending in {hhash}, its chain has {} ending in {}",
                    c.entries, c.prev
                ));
            }
        }
        let head_hash = match only {
            Some(o) => heads
                .iter()
                .find(|h| h.shard == o)
                .map_or_else(|| GENESIS_HASH.to_owned(), |h| h.hash.clone()),
            None => {
                let all: Vec<(u64, String)> = (0..n)
                    .map(|s| stored_heads.get(&s).cloned().unwrap_or((0, GENESIS_HASH.to_owned())))
                    .collect();
                heads_hash(&all).unwrap_or_default()
            }
        };
        if let Some(o) = only {
            heads.retain(|h| h.shard == o);
        }

        // Each shard's ledger rows must be exactly its accounts' movements in the audit log.
        let mut actual_ledger: Vec<Sha256> = (0..n).map(|_| Sha256::new()).collect();
        let mut actual_rows = vec![0u64; n as usize];
        let mut cursor = (-1i64, -1i64);
        loop {
            let rows = sqlx::query(
                "SELECT audit_seq, idx, account, kind, amount, balance_after, memo, created_ms FROM ledger \
                 WHERE audit_seq > $1 OR (audit_seq = $1 AND idx > $2) ORDER BY audit_seq, idx LIMIT $3",
            )
            .bind(cursor.0)
            .bind(cursor.1)
            .bind(i64::from(MAX_PAGE))
            .fetch_all(&mut *tx)
            .await?;
            let Some(last) = rows.last() else { break };
            cursor = (last.try_get(0)?, i64::from(last.try_get::<i32, _>(1)?));
            for r in &rows {
                let account: String = r.try_get(2)?;
                let shard = shard_of(&account, n);
                if !mine(shard) {
                    continue;
                }
                let kind: String = r.try_get(3)?;
                let memo: String = r.try_get(6)?;
                ledger_digest(
                    &mut actual_ledger[shard as usize],
                    r.try_get::<i64, _>(0)? as u64,
                    r.try_get::<i32, _>(1)? as u64,
                    &account,
                    &kind,
                    r.try_get::<i64, _>(4)? as u64,
                    r.try_get::<i64, _>(5)? as u64,
                    &memo,
                    r.try_get(7)?,
                );
                actual_rows[shard as usize] += 1;
            }
        }
        for (shard, (actual, expected)) in actual_ledger.into_iter().zip(expected_ledger).enumerate() {
            let (have, want) = (actual_rows[shard], expected_rows[shard]);
            if have != want || actual.finalize() != expected.finalize() {
                push(None, Some(shard as u32), "ledger-mismatch", format!(
                    "ledger table ({have} rows of shard {shard}'s accounts) differs from the audit log's movements ({want})"
                ));
            }
        }

        // Every stored answer must belong to an entry of a chain.
        if only.is_none() {
            let orphans = sqlx::query(
                "SELECT i.idem_key FROM idempotency i LEFT JOIN audit_log a ON a.idem_key = i.idem_key \
                 WHERE a.seq IS NULL ORDER BY i.idem_key LIMIT 100",
            )
            .fetch_all(&mut *tx)
            .await?;
            for r in &orphans {
                let key: String = r.try_get(0)?;
                push(
                    None,
                    None,
                    "answer-unchained",
                    format!(
                        "idempotency row {key:?} has no audit entry: a repeat would replay a forged answer"
                    ),
                );
            }
        }

        // Every balance must be what the audit log says.
        let mut table: HashMap<String, u64> = HashMap::new();
        let mut last_id = String::new();
        loop {
            let rows = sqlx::query("SELECT id, balance FROM accounts WHERE id > $1 ORDER BY id LIMIT $2")
                .bind(last_id.as_str())
                .bind(i64::from(MAX_PAGE))
                .fetch_all(&mut *tx)
                .await?;
            let Some(last) = rows.last() else { break };
            last_id = last.try_get(0)?;
            for r in &rows {
                let id: String = r.try_get(0)?;
                if mine(shard_of(&id, n)) {
                    table.insert(id, r.try_get::<i64, _>(1)? as u64);
                }
            }
        }
        tx.rollback().await?;
        let total_balance: u128 = table.values().map(|&b| u128::from(b)).sum();
        for (account, want) in &balances {
            let shard = shard_of(account, n);
            let message = match table.get(account) {
                Some(have) if have == want => continue,
                Some(have) => format!("account {account} holds {have}, the audit log says {want}"),
                None => {
                    format!("account {account} is missing from the accounts table, the audit log says {want}")
                }
            };
            push(None, Some(shard), "account-mismatch", message);
        }
        for (account, have) in &table {
            if !balances.contains_key(account) {
                let shard = shard_of(account, n);
                push(
                    None,
                    Some(shard),
                    "account-mismatch",
                    format!("account {account} holds {have} but has no audit entry"),
                );
            }
        }
        Ok(VerifyReport {
            ok: problems.is_empty(),
            entries,
            head_seq: last_seq,
            head_hash,
            shard_count: n,
            shard: only,
            heads,
            checkpoints,
            last_checkpoint,
            accounts: table.len() as u64,
            total_balance,
            total_granted: granted,
            total_debited: debited,
            total_credited: credited,
            problems,
        })
    }
}

/// The account a stored refusal names (`insufficient`, `balance-overflow`).
fn refused_account(answer: &str) -> Option<String> {
    let v: serde_json::Value = serde_json::from_str(answer).ok()?;
    v.get("account")?.as_str().map(str::to_owned)
}

/// Why an entry's stored answer is not the one its movements produce, if it is not.
fn answer_problem(e: &AuditEntry, body: &AuditBody) -> Option<String> {
    match e.status {
        200 => {
            let want = applied_answer(e.op == OpName::Settle.as_str(), &e.key, e.seq, &body.entries);
            match want {
                Ok(w) if w == e.answer => None,
                Ok(w) => Some(format!("answer {} differs from the applied entry's {w}", e.answer)),
                Err(_) => Some("an applied entry without movements".into()),
            }
        }
        409 if !body.entries.is_empty() => Some("a refusal whose entry moved chips".into()),
        409 => match serde_json::from_str::<serde_json::Value>(&e.answer) {
            Ok(v) if matches!(v["code"].as_str(), Some("insufficient" | "balance-overflow")) => None,
            _ => Some(format!("refusal {} is not an insufficient or balance-overflow answer", e.answer)),
        },
        other => Some(format!("status {other} is neither 200 nor 409")),
    }
}

/// One queued mutation and where to send its answer.
struct Job {
    key: IdempotencyKey,
    m: Mutation,
    /// The shards of its accounts: their heads are locked for it.
    shards: BTreeSet<u32>,
    reply: oneshot::Sender<Result<Answer, StoreError>>,
}

/// Default most mutations committed in one transaction.
pub const DEFAULT_GROUP: usize = 64;

/// One writer (lane): takes every mutation queued to it (up to `max_group`)
/// and commits them together.
async fn writer_loop(
    pool: AnyPool,
    backend: Backend,
    shards: u32,
    mut rx: mpsc::Receiver<Job>,
    max_group: usize,
    counters: Arc<GroupCounters>,
) {
    while let Some(first) = rx.recv().await {
        let mut batch = vec![first];
        while batch.len() < max_group {
            match rx.try_recv() {
                Ok(j) => batch.push(j),
                Err(_) => break,
            }
        }
        match commit_group(&pool, backend, shards, &batch).await {
            Ok(outcomes) => {
                let n = batch.len() as u64;
                counters.commits.fetch_add(1, Ordering::Relaxed);
                counters.mutations.fetch_add(n, Ordering::Relaxed);
                counters.largest.fetch_max(n, Ordering::Relaxed);
                for (job, out) in batch.into_iter().zip(outcomes) {
                    let _ = job.reply.send(out);
                }
            }
            Err(e) => {
                tracing::error!(error = %e, mutations = batch.len(), "ledger group commit failed; nothing applied");
                let unavailable = matches!(e, StoreError::Db(sqlx::Error::PoolTimedOut | sqlx::Error::Io(_)));
                for job in batch {
                    let msg = e.to_string();
                    let _ = job.reply.send(Err(if unavailable {
                        StoreError::Unavailable(msg)
                    } else {
                        StoreError::Task(msg)
                    }));
                }
            }
        }
    }
}

/// Reads the ledger's shard count; on a new ledger, records `wanted` (or
/// [`DEFAULT_SHARDS`]) and creates its empty shard heads. Refuses a count
/// other than the stored one.
async fn init_ledger(pool: &AnyPool, backend: Backend, wanted: Option<u32>) -> Result<u32, StoreError> {
    let stored = |row: Option<AnyRow>| -> Result<Option<u32>, StoreError> {
        row.map(|r| {
            let n: i32 = r.try_get(0)?;
            u32::try_from(n).map_err(|_| StoreError::Corrupt(format!("shard count {n}")))
        })
        .transpose()
    };
    let read = "SELECT shards FROM ledger_config WHERE id = 1";
    let mut n = stored(sqlx::query(read).fetch_optional(pool).await?)?;
    if n.is_none() {
        let mut tx = match backend {
            Backend::Sqlite => pool.begin_with("BEGIN IMMEDIATE").await?,
            Backend::Postgres => pool.begin().await?,
        };
        let want = wanted.unwrap_or(DEFAULT_SHARDS);
        let created = sqlx::query(
            "INSERT INTO ledger_config (id, shards, legacy_seq) VALUES (1, $1, 0) ON CONFLICT (id) DO NOTHING",
        )
        .bind(want as i32)
        .execute(&mut *tx)
        .await?;
        if created.rows_affected() == 1 {
            for shard in 0..want {
                sqlx::query("INSERT INTO audit_heads (shard, seq, hash) VALUES ($1, 0, $2)")
                    .bind(shard as i32)
                    .bind(GENESIS_HASH)
                    .execute(&mut *tx)
                    .await?;
            }
        }
        tx.commit().await?;
        n = stored(sqlx::query(read).fetch_optional(pool).await?)?;
    }
    let n = n.ok_or_else(|| StoreError::Corrupt("ledger_config has no row".into()))?;
    if !(1..=MAX_SHARDS).contains(&n) {
        return Err(StoreError::Corrupt(format!("shard count {n}")));
    }
    match wanted {
        Some(w) if w != n => Err(StoreError::Shards(format!(
            "this ledger has {n} shard chain(s), not {w}: the count is fixed when a ledger is created \
             (leave the shard setting out to use the ledger's own)"
        ))),
        _ => Ok(n),
    }
}

/// A shard chain's head as known inside a group: entries and last hash.
struct Head {
    seq: i64,
    hash: String,
}

/// The locked shard heads of one group transaction, and where its
/// operation ids come from.
struct Chains {
    shards: u32,
    backend: Backend,
    heads: BTreeMap<u32, Head>,
    changed: BTreeSet<u32>,
    /// SQLite: the last operation id used (the writer holds the database lock).
    last_seq: i64,
}

impl Chains {
    /// The next ledger-wide operation id: after the shard locks, so one
    /// shard's entries get increasing ids.
    async fn next_seq(&mut self, conn: &mut sqlx::AnyConnection) -> Result<i64, StoreError> {
        match self.backend {
            Backend::Sqlite => {
                self.last_seq += 1;
                Ok(self.last_seq)
            }
            Backend::Postgres => {
                let row = sqlx::query("SELECT nextval('audit_op_seq')").fetch_one(&mut *conn).await?;
                Ok(row.try_get(0)?)
            }
        }
    }
}

/// Whether a mutation failed on a unique index (another writer stored the
/// same idempotency key first, in a shard this one does not lock).
fn unique_violation(e: &StoreError) -> bool {
    match e {
        StoreError::Db(sqlx::Error::Database(d)) => {
            d.code().is_some_and(|c| c == "23505" || c == "2067" || c == "1555")
        }
        _ => false,
    }
}

/// Applies a group in one transaction. Each mutation runs in a savepoint: a
/// database error in one rolls back only that one (its caller gets the error).
/// Any failure of the transaction itself fails the whole group (nothing applied).
async fn commit_group(
    pool: &AnyPool,
    backend: Backend,
    shards: u32,
    batch: &[Job],
) -> Result<Vec<Result<Answer, StoreError>>, StoreError> {
    let mut tx = match backend {
        Backend::Sqlite => pool.begin_with("BEGIN IMMEDIATE").await?,
        Backend::Postgres => pool.begin().await?,
    };
    // Lock the heads of every shard the group touches, ascending: one shard's
    // mutations are serialised across processes, and no two groups deadlock.
    let wanted: BTreeSet<u32> = batch.iter().flat_map(|j| j.shards.iter().copied()).collect();
    let list = wanted.iter().map(u32::to_string).collect::<Vec<_>>().join(",");
    let lock = format!(
        "SELECT shard, seq, hash FROM audit_heads WHERE shard IN ({}) ORDER BY shard{}",
        if list.is_empty() { "-1".to_owned() } else { list },
        if backend == Backend::Postgres { " FOR UPDATE" } else { "" }
    );
    let mut heads = BTreeMap::new();
    for r in sqlx::query(sqlx::AssertSqlSafe(lock)).fetch_all(&mut *tx).await? {
        let shard: i32 = r.try_get(0)?;
        let shard = u32::try_from(shard).map_err(|_| StoreError::Corrupt(format!("shard {shard}")))?;
        heads.insert(shard, Head { seq: r.try_get(1)?, hash: r.try_get(2)? });
    }
    if let Some(missing) = wanted.iter().find(|s| !heads.contains_key(s)) {
        return Err(StoreError::Corrupt(format!("the head of shard {missing} is missing")));
    }
    let last_seq = match backend {
        Backend::Sqlite => sqlx::query("SELECT COALESCE(MAX(seq), 0) FROM audit_log")
            .fetch_one(&mut *tx)
            .await?
            .try_get(0)?,
        Backend::Postgres => 0,
    };
    let mut chains = Chains { shards, backend, heads, changed: BTreeSet::new(), last_seq };
    let now = now_ms();
    let mut outcomes = Vec::with_capacity(batch.len());
    for job in batch {
        let mut result = Err(StoreError::Task("not applied".into()));
        for attempt in 0..2 {
            let mut sp = sqlx::Connection::begin(&mut *tx).await?;
            result = apply_one(&mut sp, &job.key, &job.m, &mut chains, now).await;
            if result.is_ok() {
                sp.commit().await?;
                break;
            }
            sp.rollback().await?;
            // The key was stored meanwhile by a writer of other shards: look again.
            if attempt > 0 || !result.as_ref().err().is_some_and(unique_violation) {
                break;
            }
        }
        outcomes.push(result);
    }
    for shard in &chains.changed {
        let Some(head) = chains.heads.get(shard) else { continue };
        sqlx::query("UPDATE audit_heads SET seq = $1, hash = $2 WHERE shard = $3")
            .bind(head.seq)
            .bind(head.hash.as_str())
            .bind(*shard as i32)
            .execute(&mut *tx)
            .await?;
    }
    tx.commit().await?;
    Ok(outcomes)
}

/// One mutation inside the group transaction: replay, refuse, or apply and
/// append its audit entry (advancing `head` only when it applies).
async fn apply_one(
    conn: &mut sqlx::AnyConnection,
    key: &IdempotencyKey,
    m: &Mutation,
    chains: &mut Chains,
    now: i64,
) -> Result<Answer, StoreError> {
    let fingerprint = m.fingerprint();
    let earlier = sqlx::query("SELECT fingerprint, status, response FROM idempotency WHERE idem_key = $1")
        .bind(key.as_str())
        .fetch_optional(&mut *conn)
        .await?;
    if let Some(row) = earlier {
        let fp: String = row.try_get(0)?;
        if fp == fingerprint {
            let status: i32 = row.try_get(1)?;
            let body: String = row.try_get(2)?;
            let status =
                u16::try_from(status).map_err(|_| StoreError::Corrupt(format!("status {status}")))?;
            return Ok(Answer { status, body, replayed: true });
        }
        let body = json!({
            "code": "key-reused",
            "key": key.as_str(),
            "message": format!("idempotency key {key} was already used for a different request"),
        });
        return Ok(Answer { status: 409, body: body.to_string(), replayed: false });
    }

    let seq = chains.next_seq(conn).await?;
    let mut moves = sqlx::Connection::begin(&mut *conn).await?;
    let mut applied: Vec<AuditMove> = Vec::with_capacity(m.moves.len());
    let mut failure: Option<(&str, serde_json::Value)> = None;
    for mv in &m.moves {
        let amount = to_i64(mv.amount);
        let row = match mv.kind {
            EntryKind::Debit => {
                sqlx::query(
                    "UPDATE accounts SET balance = balance - $1, updated_seq = $2 \
                     WHERE id = $3 AND balance >= $1 RETURNING balance",
                )
                .bind(amount)
                .bind(seq)
                .bind(mv.account.as_str())
                .fetch_optional(&mut *moves)
                .await?
            }
            EntryKind::Credit | EntryKind::Grant => {
                sqlx::query(
                    "INSERT INTO accounts (id, balance, updated_seq) VALUES ($3, $1, $2) \
                     ON CONFLICT (id) DO UPDATE SET balance = accounts.balance + excluded.balance, \
                     updated_seq = excluded.updated_seq \
                     WHERE accounts.balance <= $4 - excluded.balance RETURNING balance",
                )
                .bind(amount)
                .bind(seq)
                .bind(mv.account.as_str())
                .bind(to_i64(MAX_BALANCE))
                .fetch_optional(&mut *moves)
                .await?
            }
        };
        match row {
            Some(r) => {
                let balance = from_i64(r.try_get::<i64, _>(0)?, "balance")?;
                applied.push(AuditMove {
                    account: mv.account.to_string(),
                    kind: mv.kind,
                    amount: mv.amount,
                    balance,
                    memo: mv.memo.clone(),
                });
            }
            None => {
                let current = sqlx::query("SELECT balance FROM accounts WHERE id = $1")
                    .bind(mv.account.as_str())
                    .fetch_optional(&mut *moves)
                    .await?
                    .map(|r| r.try_get::<i64, _>(0))
                    .transpose()?
                    .unwrap_or(0);
                let current = from_i64(current, "balance")?;
                failure = Some((
                    mv.account.as_str(),
                    if mv.kind == EntryKind::Debit {
                        json!({
                            "code": "insufficient",
                            "message": format!("insufficient balance in {}: has {current}, needs {}", mv.account, mv.amount),
                            "account": mv.account.as_str(),
                            "balance": current,
                            "needed": mv.amount,
                        })
                    } else {
                        json!({
                            "code": "balance-overflow",
                            "message": format!("crediting {} to {} would exceed the largest balance {MAX_BALANCE}", mv.amount, mv.account),
                            "account": mv.account.as_str(),
                            "balance": current,
                            "amount": mv.amount,
                        })
                    },
                ));
                break;
            }
        }
    }

    if let Some((account, fail)) = failure {
        // Nothing moves, but the answer is final for this key: it goes under
        // the chain of the refused account's shard.
        moves.rollback().await?;
        let answer = fail.to_string();
        let shards = BTreeSet::from([shard_of(account, chains.shards)]);
        let e = Entry { seq, now, op: m.op, key, fingerprint: &fingerprint, status: 409, answer: &answer };
        append_entry(conn, chains, &shards, e, &[]).await?;
        return Ok(Answer { status: 409, body: answer, replayed: false });
    }
    moves.commit().await?;

    for (idx, mv) in applied.iter().enumerate() {
        sqlx::query(
            "INSERT INTO ledger (audit_seq, idx, account, kind, amount, balance_after, memo, created_ms) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
        )
        .bind(seq)
        .bind(idx as i32)
        .bind(mv.account.as_str())
        .bind(mv.kind.as_str())
        .bind(to_i64(mv.amount))
        .bind(to_i64(mv.balance))
        .bind(mv.memo.as_str())
        .bind(now)
        .execute(&mut *conn)
        .await?;
    }
    let answer = applied_answer(m.op == OpName::Settle, key.as_str(), seq as u64, &applied)?;
    let shards = applied.iter().map(|a| shard_of(&a.account, chains.shards)).collect();
    let e = Entry { seq, now, op: m.op, key, fingerprint: &fingerprint, status: 200, answer: &answer };
    append_entry(conn, chains, &shards, e, &applied).await?;
    Ok(Answer { status: 200, body: answer, replayed: false })
}

/// The answer to an applied mutation: a pure function of its audit entry, so
/// `verify` recomputes it. Field order is fixed by the struct, not a map.
fn applied_answer(settle: bool, key: &str, seq: u64, applied: &[AuditMove]) -> Result<String, StoreError> {
    #[derive(Serialize)]
    struct Balance<'a> {
        account: &'a str,
        balance: u64,
    }
    #[derive(Serialize)]
    struct SettleAnswer<'a> {
        balances: Vec<Balance<'a>>,
        key: &'a str,
        seq: u64,
    }
    #[derive(Serialize)]
    struct SingleAnswer<'a> {
        account: &'a str,
        balance: u64,
        key: &'a str,
        seq: u64,
    }
    let text = if settle {
        let balances = applied.iter().map(|a| Balance { account: &a.account, balance: a.balance }).collect();
        serde_json::to_string(&SettleAnswer { balances, key, seq })
    } else {
        let a = applied.first().ok_or_else(|| StoreError::Corrupt("empty mutation".into()))?;
        serde_json::to_string(&SingleAnswer { account: &a.account, balance: a.balance, key, seq })
    };
    text.map_err(|e| StoreError::Corrupt(e.to_string()))
}

/// The fields of an answered mutation's audit entry, besides its movements.
struct Entry<'a> {
    seq: i64,
    now: i64,
    op: OpName,
    key: &'a IdempotencyKey,
    fingerprint: &'a str,
    status: u16,
    answer: &'a str,
}

/// Appends the audit entry of an answered mutation (its movements, or none
/// when refused), linked into the chain of each of `shards` (locked by the
/// group), and stores the answer under its key; advances those heads.
async fn append_entry(
    conn: &mut sqlx::AnyConnection,
    chains: &mut Chains,
    shards: &BTreeSet<u32>,
    e: Entry<'_>,
    applied: &[AuditMove],
) -> Result<(), StoreError> {
    let body = serde_json::to_string(&AuditBody { entries: applied.to_vec() })
        .map_err(|e| StoreError::Corrupt(e.to_string()))?;
    let mut links = Vec::with_capacity(shards.len());
    for shard in shards {
        let head = chains
            .heads
            .get(shard)
            .ok_or_else(|| StoreError::Corrupt(format!("shard {shard} was not locked")))?;
        links.push(ShardLink { shard: *shard, shard_seq: head.seq as u64 + 1, prev_hash: head.hash.clone() });
    }
    let links_text = links_text(&links);
    let prev_hash = links.first().map_or(GENESIS_HASH, |l| l.prev_hash.as_str());
    let fields = EntryFields {
        seq: e.seq as u64,
        prev_hash,
        created_ms: e.now,
        op: e.op.as_str(),
        key: e.key.as_str(),
        body: &body,
        fingerprint: e.fingerprint,
        status: e.status,
        answer: e.answer,
    };
    let hash = entry_hash_v3(fields, &links_text)
        .ok_or_else(|| StoreError::Corrupt("an audit entry field is too long".into()))?;
    sqlx::query(
        "INSERT INTO audit_log (seq, op, idem_key, body, created_ms, prev_hash, hash, links) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
    )
    .bind(e.seq)
    .bind(e.op.as_str())
    .bind(e.key.as_str())
    .bind(body.as_str())
    .bind(e.now)
    .bind(prev_hash)
    .bind(hash.as_str())
    .bind(links_text.as_str())
    .execute(&mut *conn)
    .await?;
    sqlx::query(
        "INSERT INTO idempotency (idem_key, fingerprint, status, response, created_ms) VALUES ($1, $2, $3, $4, $5)",
    )
    .bind(e.key.as_str())
    .bind(e.fingerprint)
    .bind(i32::from(e.status))
    .bind(e.answer)
    .bind(e.now)
    .execute(&mut *conn)
    .await?;
    for l in &links {
        chains.heads.insert(l.shard, Head { seq: l.shard_seq as i64, hash: hash.clone() });
        chains.changed.insert(l.shard);
    }
    Ok(())
}

#[allow(clippy::too_many_arguments)]
fn ledger_digest(
    h: &mut Sha256,
    seq: u64,
    idx: u64,
    account: &str,
    kind: &str,
    amount: u64,
    balance: u64,
    memo: &str,
    created_ms: i64,
) {
    h.update(seq.to_be_bytes());
    h.update(idx.to_be_bytes());
    for s in [account, kind, memo] {
        h.update((s.len() as u64).to_be_bytes());
        h.update(s.as_bytes());
    }
    h.update(amount.to_be_bytes());
    h.update(balance.to_be_bytes());
    h.update(created_ms.to_be_bytes());
}

async fn audit_page<'e, E>(exec: E, after_seq: u64, limit: u32) -> Result<Vec<AuditEntry>, StoreError>
where
    E: sqlx::Executor<'e, Database = sqlx::Any>,
{
    let rows = sqlx::query(
        "SELECT a.seq, a.op, a.idem_key, a.body, a.created_ms, a.prev_hash, a.hash, \
         i.fingerprint, i.status, i.response, a.links FROM audit_log a \
         LEFT JOIN idempotency i ON i.idem_key = a.idem_key \
         WHERE a.seq > $1 ORDER BY a.seq LIMIT $2",
    )
    .bind(to_i64(after_seq))
    .bind(i64::from(limit.min(MAX_PAGE)))
    .fetch_all(exec)
    .await?;
    rows.iter()
        .map(|r| {
            // A missing answer row reads as status 0 (never a real status): verify reports it.
            let status: Option<i32> = r.try_get(8)?;
            Ok(AuditEntry {
                seq: from_i64(r.try_get(0)?, "seq")?,
                op: r.try_get(1)?,
                key: r.try_get(2)?,
                body: r.try_get(3)?,
                created_ms: r.try_get(4)?,
                prev_hash: r.try_get(5)?,
                hash: r.try_get(6)?,
                fingerprint: r.try_get::<Option<String>, _>(7)?.unwrap_or_default(),
                status: status.and_then(|s| u16::try_from(s).ok()).unwrap_or(0),
                answer: r.try_get::<Option<String>, _>(9)?.unwrap_or_default(),
                links: r.try_get(10)?,
            })
        })
        .collect()
}

fn history_row(r: &AnyRow) -> Result<HistoryEntry, StoreError> {
    let kind: String = r.try_get(2)?;
    Ok(HistoryEntry {
        seq: from_i64(r.try_get(0)?, "seq")?,
        idx: u32::try_from(r.try_get::<i32, _>(1)?)
            .map_err(|_| StoreError::Corrupt("negative idx".into()))?,
        kind: EntryKind::parse(&kind).ok_or_else(|| StoreError::Corrupt(format!("ledger kind {kind:?}")))?,
        amount: from_i64(r.try_get(3)?, "amount")?,
        balance: from_i64(r.try_get(4)?, "balance")?,
        memo: r.try_get(5)?,
        created_ms: r.try_get(6)?,
    })
}
