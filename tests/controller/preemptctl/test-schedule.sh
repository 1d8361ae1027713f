#!/bin/bash
# preemptctl schedule: JSON lines per event in simulated time (bind, nominate + victims,
# victim-gone after the grace period, clear-nomination, unschedulable + reasons), exit codes.
. "$(dirname "$0")/../../lib.sh"

PCTL=$BUILD/preemptctl
F=tests/fixtures/k8s/schedule
[ -x "$PCTL" ] || skip_all "$PCTL not built"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
NOW=--now=2024-06-01T00:00:00Z

run() { "$PCTL" schedule "$@" >"$tmp/out" 2>"$tmp/err"; echo $? >"$tmp/rc"; }
rc_is() { [ "$(cat "$tmp/rc")" = "$1" ] || { echo "# exit $(cat "$tmp/rc"), want $1"; sed 's/^/#   /' "$tmp/err"; false; }; }
out_is() { diff "$1" "$tmp/out" | sed 's/^/#   /'; cmp -s "$1" "$tmp/out"; }
line_is() { [ "$(sed -n "$1p" "$tmp/out")" = "$2" ] || { echo "# line $1: $(sed -n "$1p" "$tmp/out")"; false; }; }
err_has() { grep -qF -- "$1" "$tmp/err" || { echo "# stderr lacks '$1':"; sed 's/^/#   /' "$tmp/err"; false; }; }
no_line() { ! grep -qF -- "$1" "$tmp/out" || { echo "# unexpected: $(grep -F -- "$1" "$tmp/out")"; false; }; }

run "$F/seed-takeover.yaml" "$NOW" --until-idle
ok "seed takeover: runs to idle, exit 0" rc_is 0
ok "seed takeover: the whole event stream" out_is "$F/seed-takeover.expected"
ok "higher-priority pod takes the node with the victims already terminating" \
	line_is 1 '{"time":0,"event":"nominate","pod":"default/urgent","node":"node-a","victims":["default/low-1","default/low-2"]}'
ok "the waiting preemptor's nomination is cleared, naming who took the node" \
	line_is 2 '{"time":0,"event":"clear-nomination","pod":"default/preempt","node":"node-a","by":"default/urgent"}'
ok "Never pod: unschedulable with reason counts, never nominated" \
	line_is 4 '{"time":0,"event":"unschedulable","pod":"default/batch","reasons":{"Insufficient cpu":1,"node(s) were unschedulable":1},"message":"0/2 nodes are available: 1 Insufficient cpu, 1 node(s) were unschedulable. preemption: not eligible due to preemptionPolicy=Never."}'
ok "Never pod is never a preemptor" no_line '"event":"nominate","pod":"default/batch"'
ok "victims go after their own grace period (10 s, default 30 s)" \
	bash -c "grep -q '^{\"time\":10,\"event\":\"victim-gone\",\"pod\":\"default/low-2\"' $tmp/out && grep -q '^{\"time\":30,\"event\":\"victim-gone\",\"pod\":\"default/low-1\"' $tmp/out"
ok "the preemptor binds once its victims are gone; small fits beside it" \
	bash -c "tail -n 1 $tmp/out | grep -qx '{\"time\":30,\"event\":\"bind\",\"pod\":\"default/small\",\"node\":\"node-a\"}' && grep -qx '{\"time\":30,\"event\":\"bind\",\"pod\":\"default/urgent\",\"node\":\"node-a\"}' $tmp/out"
ok "summary on stderr" err_has "preemptctl: idle at 30s: 2 bound, 2 preemptions, 2 pods still pending, 0 victims terminating"
ok "every line is a JSON object" bash -c "python3 -c 'import json,sys; [json.loads(l) for l in open(sys.argv[1])]' $tmp/out"

run "$F/seed-takeover.yaml" "$NOW" --max-time 5s
ok "--max-time stops the simulation before the victims are gone" rc_is 0
ok "--max-time: nothing after 5 s" no_line '"victim-gone"'
ok "--max-time: summary says stopped at the simulated time reached (the limit, not the last event)" \
	err_has "preemptctl: stopped at 5s (--max-time): 0 bound, 1 preemption, 4 pods still pending, 2 victims terminating"
run "$F/seed-takeover.yaml" "$NOW" --max-time 1500ms
ok "--max-time: a fraction of a second is reported as such" err_has "preemptctl: stopped at 1.5s (--max-time):"

run "$F/seed-takeover.yaml" "$NOW"
ok "default: runs to idle when that takes less than 10 minutes" out_is "$F/seed-takeover.expected"

run "$F/seed-takeover.yaml" --max-time 5x
ok "bad --max-time: usage error" rc_is 2
ok "bad --max-time: says why" err_has "preemptctl schedule: --max-time:"
run
ok "no file: usage error" rc_is 2
run tests/fixtures/k8s/bad-quantity.json
ok "bad input: rejected" rc_is 1
ok "bad input: names the problem count" err_has "input rejected"
run "$F/does-not-exist.yaml"
ok "missing file: rejected" rc_is 1
run --help
ok "--help exits 0" rc_is 0
done_testing
