//! The ledger storage: one code path over SQLite and PostgreSQL (`sqlx::Any`).
//!
//! Mutations go to one writer task that commits them in groups: one database
//! transaction that first locks the audit chain's head row (so mutations are
//! serialised, also across processes), then, for each mutation in its own
//! savepoint, looks up the idempotency key (a repeat replays the stored
//! answer), applies the movements with conditional updates (never below zero;
//! the `CHECK (balance >= 0)` constraint is the backstop) and writes the ledger
//! rows, the audit entry and the answer (a refusal gets an entry without
//! movements, so every stored answer is under the hash chain); then the new
//! head, and one commit.
//! Answers are released only after the commit.
//! SQLite runs in WAL mode with `synchronous = FULL`: an acknowledged write
//! has been fsynced.

use std::collections::{BTreeMap, HashMap};
use std::str::FromStr;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use claw_chips::{AccountId, IdempotencyKey};
use serde::{Deserialize, Serialize};
use serde_json::json;
use sha2::{Digest, Sha256};
use sqlx::any::{AnyConnectOptions, AnyPoolOptions, AnyRow};
use sqlx::{AnyPool, Row};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use tokio::sync::{mpsc, oneshot};

use crate::audit::{entry_hash, AuditBody, AuditEntry, AuditMove, EntryFields, EntryKind, GENESIS_HASH};

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
    let init = match backend {
        Backend::Sqlite => include_str!("../migrations/sqlite/0001_init.sql"),
        Backend::Postgres => include_str!("../migrations/postgres/0001_init.sql"),
    };
    Migrator::with_migrations(vec![Migration::new(
        1,
        "init".into(),
        MigrationType::Simple,
        init.into_sql_str(),
        false,
    )])
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
    /// The audit entry concerned, when there is one.
    pub seq: Option<u64>,
    /// Machine code: `seq-gap`, `prev-hash-mismatch`, `hash-mismatch`, `bad-body`,
    /// `balance-mismatch`, `head-mismatch`, `ledger-mismatch`, `account-mismatch`,
    /// `answer-missing`, `answer-mismatch`, `answer-unchained`.
    pub kind: String,
    /// Human explanation.
    pub message: String,
}

/// Result of verifying the audit chain against the tables.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct VerifyReport {
    /// True when no problem was found.
    pub ok: bool,
    /// Audit entries read.
    pub entries: u64,
    /// The chain head's sequence number.
    pub head_seq: u64,
    /// The chain head's hash: publish it to detect a rewrite of the whole tail.
    pub head_hash: String,
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

/// Opened ledger database. Cheap to clone.
#[derive(Clone)]
pub struct Store {
    pool: AnyPool,
    backend: Backend,
    writer: mpsc::Sender<Job>,
    counters: Arc<GroupCounters>,
    max_group: usize,
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
        let store = Store::connect_grouped(db_url, max_group).await?;
        migrator(store.backend).run(&store.pool).await?;
        Ok(store)
    }

    /// Connects without migrating (for `verify` on an existing database).
    pub async fn connect(db_url: &str) -> Result<Store, StoreError> {
        Store::connect_grouped(db_url, DEFAULT_GROUP).await
    }

    async fn connect_grouped(db_url: &str, max_group: usize) -> Result<Store, StoreError> {
        let max_group = max_group.clamp(1, 4096);
        sqlx::any::install_default_drivers();
        let backend = Backend::from_url(db_url)?;
        if backend == Backend::Postgres && !cfg!(feature = "postgres") {
            return Err(StoreError::NoPostgres(redact_url(db_url)));
        }
        let options =
            AnyConnectOptions::from_str(db_url).map_err(|_| StoreError::BadUrl(redact_url(db_url)))?;
        let in_memory = db_url.contains(":memory:") || db_url.contains("mode=memory");
        let mut pool =
            AnyPoolOptions::new().acquire_timeout(Duration::from_secs(15)).max_connections(match backend {
                Backend::Sqlite if in_memory => 1,
                Backend::Sqlite => 4,
                Backend::Postgres => 8,
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
        let pool = pool.connect_with(options).await?;
        let (writer, rx) = mpsc::channel(4 * max_group);
        let counters = Arc::new(GroupCounters::default());
        tokio::spawn(writer_loop(pool.clone(), backend, rx, max_group, counters.clone()));
        Ok(Store { pool, backend, writer, counters, max_group })
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
        self.writer
            .send(Job { key: key.clone(), m, reply })
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

    /// Walks the whole audit chain in one consistent snapshot: checks sequence
    /// numbers, links, hashes and the head; replays the movements and compares
    /// the result with the ledger and accounts tables.
    pub async fn verify(&self) -> Result<VerifyReport, StoreError> {
        let mut tx = match self.backend {
            Backend::Sqlite => self.pool.begin().await?,
            Backend::Postgres => {
                self.pool.begin_with("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY").await?
            }
        };
        let head = sqlx::query("SELECT seq, hash FROM audit_head WHERE id = 1").fetch_one(&mut *tx).await?;
        let head_seq = from_i64(head.try_get(0)?, "head seq")?;
        let head_hash: String = head.try_get(1)?;

        let mut problems = Vec::new();
        let mut push = |p: Problem| {
            if problems.len() < 100 {
                problems.push(p);
            }
        };
        let mut balances: BTreeMap<String, u64> = BTreeMap::new();
        let (mut granted, mut debited, mut credited) = (0u128, 0u128, 0u128);
        let mut expected_ledger = Sha256::new();
        let mut expected_rows = 0u64;
        let mut prev_hash = GENESIS_HASH.to_owned();
        let mut expect_seq = 1u64;
        let mut entries = 0u64;
        let mut after = 0u64;
        loop {
            let page = audit_page(&mut *tx, after, MAX_PAGE).await?;
            let Some(last) = page.last() else { break };
            after = last.seq;
            for e in &page {
                entries += 1;
                if e.seq != expect_seq {
                    push(Problem {
                        seq: Some(e.seq),
                        kind: "seq-gap".into(),
                        message: format!(
                            "expected entry {expect_seq}, found {}: entries were deleted",
                            e.seq
                        ),
                    });
                }
                expect_seq = e.seq + 1;
                if e.prev_hash != prev_hash {
                    push(Problem {
                        seq: Some(e.seq),
                        kind: "prev-hash-mismatch".into(),
                        message: "prev_hash does not match the previous entry's hash".into(),
                    });
                }
                let answer_found = e.status != 0;
                if !answer_found {
                    push(Problem {
                        seq: Some(e.seq),
                        kind: "answer-missing".into(),
                        message: format!(
                            "idempotency row {:?} (the entry's stored answer) is missing",
                            e.key
                        ),
                    });
                } else if e.computed_hash().as_deref() != Some(e.hash.as_str()) {
                    push(Problem {
                        seq: Some(e.seq),
                        kind: "hash-mismatch".into(),
                        message: format!(
                            "stored hash does not match the entry's contents or its stored answer \
                             (idempotency row {:?})",
                            e.key
                        ),
                    });
                }
                prev_hash = e.hash.clone();
                let body: AuditBody = match serde_json::from_str(&e.body) {
                    Ok(b) => b,
                    Err(err) => {
                        push(Problem {
                            seq: Some(e.seq),
                            kind: "bad-body".into(),
                            message: format!("body does not parse: {err}"),
                        });
                        continue;
                    }
                };
                if answer_found {
                    if let Some(why) = answer_problem(e, &body) {
                        push(Problem {
                            seq: Some(e.seq),
                            kind: "answer-mismatch".into(),
                            message: format!("idempotency row {:?}: {why}", e.key),
                        });
                    }
                }
                for (idx, mv) in body.entries.iter().enumerate() {
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
                        push(Problem {
                            seq: Some(e.seq),
                            kind: "balance-mismatch".into(),
                            message: format!(
                                "{} {} on {} from {} {gives}, entry says {}",
                                mv.kind.as_str(),
                                mv.amount,
                                mv.account,
                                b,
                                mv.balance
                            ),
                        });
                    }
                    *b = mv.balance;
                    ledger_digest(
                        &mut expected_ledger,
                        e.seq,
                        idx as u64,
                        &mv.account,
                        mv.kind.as_str(),
                        mv.amount,
                        mv.balance,
                        &mv.memo,
                        e.created_ms,
                    );
                    expected_rows += 1;
                }
            }
        }
        if entries != head_seq || prev_hash != head_hash {
            push(Problem {
                seq: Some(head_seq),
                kind: "head-mismatch".into(),
                message: format!(
                    "head says {head_seq} entries ending in {head_hash}, log has {entries} ending in {prev_hash}"
                ),
            });
        }

        // The ledger table must be exactly the movements of the audit log.
        let mut actual_ledger = Sha256::new();
        let mut actual_rows = 0u64;
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
                let kind: String = r.try_get(3)?;
                let memo: String = r.try_get(6)?;
                ledger_digest(
                    &mut actual_ledger,
                    r.try_get::<i64, _>(0)? as u64,
                    r.try_get::<i32, _>(1)? as u64,
                    &account,
                    &kind,
                    r.try_get::<i64, _>(4)? as u64,
                    r.try_get::<i64, _>(5)? as u64,
                    &memo,
                    r.try_get(7)?,
                );
                actual_rows += 1;
            }
        }
        if actual_rows != expected_rows || actual_ledger.finalize() != expected_ledger.finalize() {
            push(Problem {
                seq: None,
                kind: "ledger-mismatch".into(),
                message: format!(
                    "ledger table ({actual_rows} rows) differs from the audit log's movements ({expected_rows})"
                ),
            });
        }

        // Every stored answer must belong to an entry of the chain.
        let orphans = sqlx::query(
            "SELECT i.idem_key FROM idempotency i LEFT JOIN audit_log a ON a.idem_key = i.idem_key \
             WHERE a.seq IS NULL ORDER BY i.idem_key LIMIT 100",
        )
        .fetch_all(&mut *tx)
        .await?;
        for r in &orphans {
            let key: String = r.try_get(0)?;
            push(Problem {
                seq: None,
                kind: "answer-unchained".into(),
                message: format!(
                    "idempotency row {key:?} has no audit entry: a repeat would replay a forged answer"
                ),
            });
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
                table.insert(r.try_get(0)?, r.try_get::<i64, _>(1)? as u64);
            }
        }
        tx.rollback().await?;
        let total_balance: u128 = table.values().map(|&b| u128::from(b)).sum();
        for (account, want) in &balances {
            let message = match table.get(account) {
                Some(have) if have == want => continue,
                Some(have) => format!("account {account} holds {have}, the audit log says {want}"),
                None => {
                    format!("account {account} is missing from the accounts table, the audit log says {want}")
                }
            };
            push(Problem { seq: None, kind: "account-mismatch".into(), message });
        }
        for (account, have) in &table {
            if !balances.contains_key(account) {
                push(Problem {
                    seq: None,
                    kind: "account-mismatch".into(),
                    message: format!("account {account} holds {have} but has no audit entry"),
                });
            }
        }
        Ok(VerifyReport {
            ok: problems.is_empty(),
            entries,
            head_seq,
            head_hash,
            accounts: table.len() as u64,
            total_balance,
            total_granted: granted,
            total_debited: debited,
            total_credited: credited,
            problems,
        })
    }
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
    reply: oneshot::Sender<Result<Answer, StoreError>>,
}

/// Default most mutations committed in one transaction.
pub const DEFAULT_GROUP: usize = 64;

/// The single writer: takes every queued mutation (up to `max_group`) and
/// commits them together.
async fn writer_loop(
    pool: AnyPool,
    backend: Backend,
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
        match commit_group(&pool, backend, &batch).await {
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

/// Chain head as known inside a group: last seq and hash.
struct Head {
    seq: i64,
    hash: String,
}

/// Applies a group in one transaction. Each mutation runs in a savepoint: a
/// database error in one rolls back only that one (its caller gets the error).
/// Any failure of the transaction itself fails the whole group (nothing applied).
async fn commit_group(
    pool: &AnyPool,
    backend: Backend,
    batch: &[Job],
) -> Result<Vec<Result<Answer, StoreError>>, StoreError> {
    let mut tx = match backend {
        Backend::Sqlite => pool.begin_with("BEGIN IMMEDIATE").await?,
        Backend::Postgres => pool.begin().await?,
    };
    // Lock the chain head first: serialises every mutation, also across processes.
    let row = sqlx::query("UPDATE audit_head SET seq = seq WHERE id = 1 RETURNING seq, hash")
        .fetch_one(&mut *tx)
        .await?;
    let mut head = Head { seq: row.try_get(0)?, hash: row.try_get(1)? };
    let start_seq = head.seq;
    let now = now_ms();
    let mut outcomes = Vec::with_capacity(batch.len());
    for job in batch {
        let mut sp = sqlx::Connection::begin(&mut *tx).await?;
        match apply_one(&mut sp, &job.key, &job.m, &mut head, now).await {
            Ok(answer) => {
                sp.commit().await?;
                outcomes.push(Ok(answer));
            }
            Err(e) => {
                sp.rollback().await?;
                outcomes.push(Err(e));
            }
        }
    }
    if head.seq != start_seq {
        sqlx::query("UPDATE audit_head SET seq = $1, hash = $2 WHERE id = 1")
            .bind(head.seq)
            .bind(head.hash.as_str())
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
    head: &mut Head,
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

    let seq = head.seq + 1;
    let mut moves = sqlx::Connection::begin(&mut *conn).await?;
    let mut applied: Vec<AuditMove> = Vec::with_capacity(m.moves.len());
    let mut failure: Option<serde_json::Value> = None;
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
                failure = Some(if mv.kind == EntryKind::Debit {
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
                });
                break;
            }
        }
    }

    if let Some(fail) = failure {
        // Nothing moves, but the answer is final for this key: it goes under the chain.
        moves.rollback().await?;
        let answer = fail.to_string();
        append_entry(conn, head, now, m.op, key, &[], &fingerprint, 409, &answer).await?;
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
    append_entry(conn, head, now, m.op, key, &applied, &fingerprint, 200, &answer).await?;
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

/// Appends the audit entry of an answered mutation (its movements, or none
/// when refused) and stores the answer under its key; advances `head`.
#[allow(clippy::too_many_arguments)]
async fn append_entry(
    conn: &mut sqlx::AnyConnection,
    head: &mut Head,
    now: i64,
    op: OpName,
    key: &IdempotencyKey,
    applied: &[AuditMove],
    fingerprint: &str,
    status: u16,
    answer: &str,
) -> Result<(), StoreError> {
    let seq = head.seq + 1;
    let body = serde_json::to_string(&AuditBody { entries: applied.to_vec() })
        .map_err(|e| StoreError::Corrupt(e.to_string()))?;
    let hash = entry_hash(EntryFields {
        seq: seq as u64,
        prev_hash: &head.hash,
        created_ms: now,
        op: op.as_str(),
        key: key.as_str(),
        body: &body,
        fingerprint,
        status,
        answer,
    })
    .ok_or_else(|| StoreError::Corrupt(format!("audit head hash {:?} is not 64 hex", head.hash)))?;
    sqlx::query(
        "INSERT INTO audit_log (seq, op, idem_key, body, created_ms, prev_hash, hash) \
         VALUES ($1, $2, $3, $4, $5, $6, $7)",
    )
    .bind(seq)
    .bind(op.as_str())
    .bind(key.as_str())
    .bind(body.as_str())
    .bind(now)
    .bind(head.hash.as_str())
    .bind(hash.as_str())
    .execute(&mut *conn)
    .await?;
    sqlx::query(
        "INSERT INTO idempotency (idem_key, fingerprint, status, response, created_ms) VALUES ($1, $2, $3, $4, $5)",
    )
    .bind(key.as_str())
    .bind(fingerprint)
    .bind(i32::from(status))
    .bind(answer)
    .bind(now)
    .execute(&mut *conn)
    .await?;
    *head = Head { seq, hash };
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
         i.fingerprint, i.status, i.response FROM audit_log a \
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
