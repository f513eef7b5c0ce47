-- claw-points schema v1 (SQLite). Keep in step with ../postgres/0001_init.sql:
-- the same tables, columns and constraints; only the append-only triggers differ.

-- Current balance of every account that ever held chips.
CREATE TABLE accounts (
    id          TEXT    NOT NULL PRIMARY KEY,
    balance     BIGINT  NOT NULL CHECK (balance >= 0),
    updated_seq BIGINT  NOT NULL
);

-- Head of the audit hash chain: one row, locked first by every mutation so that
-- mutations are serialised and the chain has no forks.
CREATE TABLE audit_head (
    id   INTEGER NOT NULL PRIMARY KEY CHECK (id = 1),
    seq  BIGINT  NOT NULL CHECK (seq >= 0),
    hash TEXT    NOT NULL
);
INSERT INTO audit_head (id, seq, hash)
VALUES (1, 0, '0000000000000000000000000000000000000000000000000000000000000000');

-- Append-only, hash-chained log of every applied mutation (layout in docs/points-server.md).
CREATE TABLE audit_log (
    seq        BIGINT NOT NULL PRIMARY KEY CHECK (seq >= 1),
    op         TEXT   NOT NULL,
    idem_key   TEXT   NOT NULL UNIQUE,
    body       TEXT   NOT NULL,
    created_ms BIGINT NOT NULL,
    prev_hash  TEXT   NOT NULL,
    hash       TEXT   NOT NULL
);

-- One row per account movement: the per-account transaction history.
CREATE TABLE ledger (
    audit_seq     BIGINT  NOT NULL,
    idx           INTEGER NOT NULL,
    account       TEXT    NOT NULL,
    kind          TEXT    NOT NULL,
    amount        BIGINT  NOT NULL CHECK (amount > 0),
    balance_after BIGINT  NOT NULL CHECK (balance_after >= 0),
    memo          TEXT    NOT NULL,
    created_ms    BIGINT  NOT NULL,
    PRIMARY KEY (audit_seq, idx)
);
CREATE INDEX ledger_by_account ON ledger (account, audit_seq, idx);

-- The first answer given to every idempotency key, replayed on repeats.
CREATE TABLE idempotency (
    idem_key    TEXT    NOT NULL PRIMARY KEY,
    fingerprint TEXT    NOT NULL,
    status      INTEGER NOT NULL,
    response    TEXT    NOT NULL,
    created_ms  BIGINT  NOT NULL
);

CREATE TRIGGER audit_log_no_update BEFORE UPDATE ON audit_log
BEGIN SELECT RAISE(ABORT, 'audit_log is append-only'); END;
CREATE TRIGGER audit_log_no_delete BEFORE DELETE ON audit_log
BEGIN SELECT RAISE(ABORT, 'audit_log is append-only'); END;
CREATE TRIGGER ledger_no_update BEFORE UPDATE ON ledger
BEGIN SELECT RAISE(ABORT, 'ledger is append-only'); END;
CREATE TRIGGER ledger_no_delete BEFORE DELETE ON ledger
BEGIN SELECT RAISE(ABORT, 'ledger is append-only'); END;
