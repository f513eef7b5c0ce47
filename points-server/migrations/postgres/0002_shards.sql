-- claw-points schema v2 (PostgreSQL): one hash chain per account shard. Keep in
-- step with ../sqlite/0002_shards.sql. The shard count of a new ledger is set
-- by the server when it first opens it (ledger_config); a ledger written
-- before shards keeps its chain as the history of shard 0 of 1.

CREATE TABLE ledger_config (
    id         INTEGER NOT NULL PRIMARY KEY CHECK (id = 1),
    shards     INTEGER NOT NULL CHECK (shards >= 1 AND shards <= 1024),
    legacy_seq BIGINT  NOT NULL CHECK (legacy_seq >= 0)
);

CREATE TABLE audit_heads (
    shard INTEGER NOT NULL PRIMARY KEY CHECK (shard >= 0),
    seq   BIGINT  NOT NULL CHECK (seq >= 0),
    hash  TEXT    NOT NULL
);

INSERT INTO ledger_config (id, shards, legacy_seq) SELECT 1, 1, seq FROM audit_head WHERE seq > 0;
INSERT INTO audit_heads (shard, seq, hash) SELECT 0, seq, hash FROM audit_head WHERE seq > 0;
DROP TABLE audit_head;

ALTER TABLE audit_log ADD COLUMN links TEXT NOT NULL DEFAULT '';

-- Ledger-wide operation ids: taken after the shard locks, so each shard's
-- entries have increasing ids; concurrent shards never wait on each other.
CREATE SEQUENCE audit_op_seq;
SELECT setval('audit_op_seq', COALESCE((SELECT MAX(seq) FROM audit_log), 0) + 1, false);

-- Checkpoints: the head of every shard at one moment, chained, so one
-- published hash pins every chain's history up to it.
CREATE TABLE audit_checkpoints (
    id         BIGINT NOT NULL PRIMARY KEY CHECK (id >= 1),
    created_ms BIGINT NOT NULL,
    heads      TEXT   NOT NULL,
    prev_hash  TEXT   NOT NULL,
    hash       TEXT   NOT NULL
);
CREATE TRIGGER audit_checkpoints_append_only BEFORE UPDATE OR DELETE ON audit_checkpoints
    FOR EACH ROW EXECUTE FUNCTION claw_append_only();
CREATE TRIGGER audit_checkpoints_no_truncate BEFORE TRUNCATE ON audit_checkpoints
    FOR EACH STATEMENT EXECUTE FUNCTION claw_append_only();
