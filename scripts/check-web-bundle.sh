#!/usr/bin/env bash
# Rebuilds the web app from web/src with the locked npm packages and fails if
# the committed bundle (web/dist, embedded in claw-dealer) differs; then runs
# the JavaScript audit's tests (SPEC.md test vectors; with
# CLAW_WEB_TRANSCRIPTS=DIR also real transcripts, honest and tampered) and
# the play client's (with CLAW_DEALER_BIN and CLAW_PLAYER_BIN, against them).
set -euo pipefail
cd "$(dirname "$0")/../web"
npm ci --no-audit --no-fund --loglevel=error
npm run --silent build
if ! git diff --exit-code --stat -- dist; then
    echo "web/dist is not what web/src builds to: run (cd web && npm ci && npm run build) and commit web/dist" >&2
    exit 1
fi
npm test
