#!/usr/bin/env bash
# A game-claw agent in bash + jq: plays any game through `claw-player join`
# JSON lines, prints one line per hand, audits every saved hand offline at
# the end and exits 0 only when every hand's audit passed.
#
#   examples/agents/agent.sh URL [HANDS] [extra claw-player join options…]
#
# URL is the invite (`ws://host:port/ROOM#DEALER_KEY`); HANDS (default 5) is
# how many hands to play. CLAW_PLAYER names the binary (default: claw-player
# on PATH). Strategy: check when free, else call when it costs at most a
# quarter of the balance, else the first affordable option that is not a fold
# (Blackjack bets, Dou Di Zhu plays), else fold.
#
# Two FIFOs connect the agent to claw-player. (A `coproc` does not work here:
# bash closes the coprocess descriptors in subshells, so a pipeline such as
# `echo … | jq … >&"${P[1]}"` sends nothing.)
set -euo pipefail

url=${1:?usage: agent.sh URL [HANDS] [claw-player join options…]}
hands=${2:-5}
shift $(($# >= 2 ? 2 : 1))
player=${CLAW_PLAYER:-claw-player}
dealer_key=${url##*#}

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkfifo "$work/to-player" "$work/from-player"
"$player" join "$url" --hands "$hands" --save-transcripts "$work/hands" "$@" \
    <"$work/to-player" >"$work/from-player" &
pid=$!
# Opened in the order claw-player opens its ends, so neither open blocks forever.
exec 3>"$work/to-player" 4<"$work/from-player"

# The chosen action for a `your-turn` line.
choose='
  (.actions | map(select(.affordable))) as $ok
  | ($ok | map(select(.action.type == "check")))[0]
    // ($ok | map(select(.action.type == "call" and .cost * 4 <= $balance)))[0]
    // ($ok | map(select(.action.type != "fold")))[0]
    // $ok[0]
  | .action'

played=0 failed=0 net=0
while IFS= read -r line <&4; do
    event=$(jq -r '.event' <<<"$line")
    case $event in
    your-turn)
        balance=$(jq '.balance' <<<"$line")
        jq -c --argjson balance "$balance" "$choose" <<<"$line" >&3
        ;;
    hand-ended)
        # verdict: ok, pending (deferred reveal not out yet: not a failure) or failed
        read -r hand verdict mine < <(jq -r '[.hand_id, .audit.verdict, (if .seat == null then 0 else .result.net[.seat] end)] | @tsv' <<<"$line")
        played=$((played + 1))
        net=$((net + mine))
        [ "$verdict" != failed ] || failed=$((failed + 1))
        echo "hand $hand: net $mine, live audit $([ "$verdict" = failed ] && echo FAILED || echo "$verdict")"
        ;;
    verification-failed)
        failed=$((failed + 1))
        echo "verification failed: $(jq -c '{check, detail}' <<<"$line")"
        ;;
    kicked | closed)
        echo "$event: $(jq -r '.reason // .code' <<<"$line")"
        ;;
    esac
done
exec 3>&- 4<&-
status=0
wait "$pid" || status=$?

audited=0
if compgen -G "$work/hands/*.jsonl" >/dev/null; then
    # Offline audit against the key from the invite, not the files' own headers.
    if "$player" audit --dealer "$dealer_key" "$work"/hands/*.jsonl >"$work/audit.txt" 2>/dev/null; then
        audited=$(grep -c '^OK' "$work/audit.txt" || true)
    else
        failed=$((failed + 1))
        grep -v '^OK' "$work/audit.txt" || true
    fi
fi
echo "agent.sh: $played hands, net $net, $audited audited offline, $failed failures, claw-player exit $status"
[ "$failed" -eq 0 ] && [ "$status" -eq 0 ] && [ "$played" -gt 0 ]
