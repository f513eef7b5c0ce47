#!/usr/bin/env bash
# Stops the throw-away PostgreSQL cluster started by scripts/start-postgres.sh
# (directory from $CLAW_TEST_PG_DATA or the first argument) and deletes it.
exec "$(dirname "$0")/start-postgres.sh" stop "$@"
