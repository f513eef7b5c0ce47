#!/usr/bin/env bash
# Runs the example agents (examples/agents/agent.sh and agent.py) against a
# real dealer on 127.0.0.1, in every game, each table completed by an SDK bot.
# Every agent must finish its hands with every live and offline audit passed.
#
#   scripts/test-agents.sh [BIN_DIR]     # default target/debug (after `cargo build --workspace --bins`)
#
# Prints one line per agent run and a closing `N passed, N failed` line.
set -uo pipefail
cd "$(dirname "$0")/.."
bin=${1:-${CARGO_TARGET_DIR:-target}/debug}
dealer="$bin/claw-dealer"
export CLAW_PLAYER="$bin/claw-player"
for b in "$dealer" "$CLAW_PLAYER"; do
    [ -x "$b" ] || { echo "missing $b: run cargo build --workspace --bins first" >&2; exit 2; }
done
command -v jq >/dev/null || { echo "agent.sh needs jq (apt-get install jq)" >&2; exit 2; }

work=$(mktemp -d)
pids=()
cleanup() {
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
    rm -rf "$work"
}
trap cleanup EXIT

passed=0 failed=0
hands=${AGENT_HANDS:-4}
for game in texas-holdem blackjack dou-di-zhu sam-gong; do
    dir="$work/$game"
    mkdir -p "$dir"
    players=3
    house=()
    [ "$game" = blackjack ] && house=(--house-bankroll 1000000)
    "$dealer" --game "$game" --listen 127.0.0.1:0 --http-listen off --data-dir "$dir/data" \
        --chips local --welcome 10000 "${house[@]}" --reveal full --between-hands 100ms --timeout 10s \
        --shutdown-grace 1s --max-players "$players" >"$dir/dealer.out" 2>"$dir/dealer.err" &
    dpid=$!
    pids+=("$dpid")
    url=
    for _ in $(seq 100); do
        url=$(head -n1 "$dir/dealer.out" 2>/dev/null)
        [ -n "$url" ] && break
        sleep 0.1
    done
    if [ -z "$url" ]; then
        echo "FAIL $game: dealer did not start"; cat "$dir/dealer.err"
        failed=$((failed + 1)); continue
    fi
    # A bot keeps the table going while the agents come and go.
    "$CLAW_PLAYER" join "$url" --bot simple --quiet --name bot >/dev/null 2>&1 &
    bpid=$!
    pids+=("$bpid")
    examples/agents/agent.sh "$url" "$hands" --name agent.sh >"$dir/sh.out" 2>"$dir/sh.err" &
    sh_pid=$!
    python3 examples/agents/agent.py "$url" --hands "$hands" >"$dir/py.out" 2>"$dir/py.err" &
    py_pid=$!
    for run in sh py; do
        pid_var=${run}_pid
        if timeout 300 tail --pid="${!pid_var}" -f /dev/null && wait "${!pid_var}"; then
            echo "ok   $game agent.$run: $(tail -n1 "$dir/$run.out")"
            passed=$((passed + 1))
        else
            echo "FAIL $game agent.$run:"; sed 's/^/    /' "$dir/$run.out" "$dir/$run.err" | tail -n 20
            failed=$((failed + 1))
        fi
    done
    kill "$bpid" "$dpid" 2>/dev/null
    wait "$bpid" "$dpid" 2>/dev/null
done
echo "agents: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
