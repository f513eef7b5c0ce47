#!/usr/bin/env bash
# Issue 16's checks, after `cargo build --workspace --bins` and
# `cargo build --workspace --example replay_corpus --profile test`:
#  1. the web bundle rebuilds to the committed bytes; the JS audit's tests
#     (its rules replay against a corpus of random hands the Rust replay
#     wrote, CLAW_REPLAY_HANDS per game, default 10,000) and the browser play
#     client's (against the claw-dealer and claw-player built);
#  2. hand-history exports read by third-party parsers (pokerkit, ohh-pydantic);
#  3. the example agents against a real dealer;
#  4. the web app in headless Chromium, playing at a table too (screenshots
#     in $CLAW_SCREENSHOTS).
#
#   scripts/test-web.sh [BIN_DIR]      # default ${CARGO_TARGET_DIR:-target}/debug
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-${CARGO_TARGET_DIR:-target}/debug}
shots=${CLAW_SCREENSHOTS:-${CARGO_TARGET_DIR:-target}/screenshots}
hands=${CLAW_EXPORT_HANDS:-30}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

echo "== transcripts: $hands hands of each game"
for g in texas-holdem:6 blackjack:4 dou-di-zhu:3 sam-gong:5; do
    "$bin/claw-dealer" --game "${g%%:*}" --bots "${g##*:}" --hands "$hands" --chips local \
        --data-dir "$work/${g%%:*}" >/dev/null
done

corpus_hands=${CLAW_REPLAY_HANDS:-10000}
echo "== replay corpus: $corpus_hands random hands of each game (games/examples/replay_corpus.rs)"
mkdir -p "$work/corpus"
for g in texas-holdem blackjack dou-di-zhu sam-gong guandan; do
    "$bin/examples/replay_corpus" --game "$g" --hands "$corpus_hands" >"$work/corpus/$g.jsonl"
done

echo "== web bundle, JavaScript audit (its rules replay against the corpus), and the play client against the real dealer"
CLAW_REPLAY_CORPUS="$work/corpus" CLAW_WEB_TRANSCRIPTS="$work/texas-holdem/rooms/texas-holdem/transcripts" \
    CLAW_DEALER_BIN="$(cd "$bin" && pwd)/claw-dealer" CLAW_PLAYER_BIN="$(cd "$bin" && pwd)/claw-player" \
    scripts/check-web-bundle.sh

py=$(scripts/setup-python.sh)
echo "== hand-history exports"
"$py" scripts/check_exports.py "$bin/claw-player" "$work"

echo "== browser and jq (the shell agent uses it)"
scripts/install-browser.sh

echo "== example agents"
scripts/test-agents.sh "$bin"

echo "== browser"
"$py" scripts/browser_test.py "$bin" "$shots"
