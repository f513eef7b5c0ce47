-- claw-points schema v1 (PostgreSQL). Keep in step with ../sqlite/0001_init.sql:
-- the same tables, columns and constraints; only the append-only triggers differ.

CREATE TABLE accounts (
    id          TEXT    NOT NULL PRIMARY KEY,
    balance     BIGINT  NOT NULL CHECK (balance >= 0),
    updated_seq BIGINT  NOT NULL
);

CREATE TABLE audit_head (
    id   INTEGER NOT NULL PRIMARY KEY CHECK (id = 1),
    seq  BIGINT  NOT NULL CHECK (seq >= 0),
    hash TEXT    NOT NULL
);
INSERT INTO audit_head (id, seq, hash)
VALUES (1, 0, '0000000000000000000000000000000000000000000000000000000000000000');

CREATE TABLE audit_log (
    seq        BIGINT NOT NULL PRIMARY KEY CHECK (seq >= 1),
    op         TEXT   NOT NULL,
    idem_key   TEXT   NOT NULL UNIQUE,
    body       TEXT   NOT NULL,
    created_ms BIGINT NOT NULL,
    prev_hash  TEXT   NOT NULL,
    hash       TEXT   NOT NULL
);

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

CREATE TABLE idempotency (
    idem_key    TEXT    NOT NULL PRIMARY KEY,
    fingerprint TEXT    NOT NULL,
    status      INTEGER NOT NULL,
    response    TEXT    NOT NULL,
    created_ms  BIGINT  NOT NULL
);

CREATE FUNCTION claw_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION '% is append-only', TG_TABLE_NAME;
END;
$$;
CREATE TRIGGER audit_log_append_only BEFORE UPDATE OR DELETE ON audit_log
    FOR EACH ROW EXECUTE FUNCTION claw_append_only();
CREATE TRIGGER audit_log_no_truncate BEFORE TRUNCATE ON audit_log
    FOR EACH STATEMENT EXECUTE FUNCTION claw_append_only();
CREATE TRIGGER ledger_append_only BEFORE UPDATE OR DELETE ON ledger
    FOR EACH ROW EXECUTE FUNCTION claw_append_only();
CREATE TRIGGER ledger_no_truncate BEFORE TRUNCATE ON ledger
    FOR EACH STATEMENT EXECUTE FUNCTION claw_append_only();
