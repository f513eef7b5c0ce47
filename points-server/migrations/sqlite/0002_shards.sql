-- claw-points schema v2 (SQLite): one hash chain per account shard. Keep in
-- step with ../postgres/0002_shards.sql (SQLite has one writer at a time, so
-- operation ids are MAX(seq) + 1 instead of a sequence).

CREATE TABLE ledger_config (
    id         INTEGER NOT NULL PRIMARY KEY CHECK (id = 1),
    shards     INTEGER NOT NULL CHECK (shards >= 1 AND shards <= 1024),
    legacy_seq BIGINT  NOT NULL CHECK (legacy_seq >= 0)
);

-- Head of each shard's chain: locked by every mutation touching the shard.
CREATE TABLE audit_heads (
    shard INTEGER NOT NULL PRIMARY KEY CHECK (shard >= 0),
    seq   BIGINT  NOT NULL CHECK (seq >= 0),
    hash  TEXT    NOT NULL
);

-- A ledger written before shards: its chain becomes shard 0 of 1.
INSERT INTO ledger_config (id, shards, legacy_seq) SELECT 1, 1, seq FROM audit_head WHERE seq > 0;
INSERT INTO audit_heads (shard, seq, hash) SELECT 0, seq, hash FROM audit_head WHERE seq > 0;
DROP TABLE audit_head;

-- The entry's links into the shard chains (docs/points-server.md); '' before shards.
ALTER TABLE audit_log ADD COLUMN links TEXT NOT NULL DEFAULT '';

-- Checkpoints: the head of every shard at one moment, chained, so one
-- published hash pins every chain's history up to it.
CREATE TABLE audit_checkpoints (
    id         BIGINT NOT NULL PRIMARY KEY CHECK (id >= 1),
    created_ms BIGINT NOT NULL,
    heads      TEXT   NOT NULL,
    prev_hash  TEXT   NOT NULL,
    hash       TEXT   NOT NULL
);
CREATE TRIGGER audit_checkpoints_no_update BEFORE UPDATE ON audit_checkpoints
BEGIN SELECT RAISE(ABORT, 'audit_checkpoints is append-only'); END;
CREATE TRIGGER audit_checkpoints_no_delete BEFORE DELETE ON audit_checkpoints
BEGIN SELECT RAISE(ABORT, 'audit_checkpoints is append-only'); END;
