#!/usr/bin/env bash
# Bounded fuzz run for CI: every target of fuzz/ (frame decoding, the
# handshake state machines, transcript parsing and auditing, each game's
# action parser) with the stable coverage-free mutator, a fixed number of
# inputs per target and a time cap per target, so the whole run stays well
# under 5 minutes after the build. Exit 1 when an input crashes a target (the
# input is saved under fuzz/artifacts/TARGET/).
#
#   scripts/fuzz-ci.sh                    # FUZZ_INPUTS=20000 FUZZ_SECONDS=45 per target
#   FUZZ_INPUTS=1000000 FUZZ_SECONDS=0 scripts/fuzz-ci.sh   # a long run (no time cap)
#
# The libFuzzer targets of the same functions run with cargo-fuzz, see docs/security.md.
set -euo pipefail
cd "$(dirname "$0")/../fuzz"

inputs="${FUZZ_INPUTS:-20000}"
seconds="${FUZZ_SECONDS:-45}"
seed="${FUZZ_SEED:-$(date +%s)}"

echo "== fuzz build"
cargo build --release --locked --no-default-features --bin claw-fuzz
bin="${CARGO_TARGET_DIR:-target}/release/claw-fuzz"

echo "== fuzz run: $inputs inputs per target, cap ${seconds}s per target, seed $seed"
cap=()
if [ "$seconds" != "0" ]; then
  cap=(--seconds "$seconds")
fi
"$bin" run all --inputs "$inputs" "${cap[@]}" --seed "$seed" --artifacts artifacts
