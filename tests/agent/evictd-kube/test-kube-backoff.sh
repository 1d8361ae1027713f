#!/bin/bash
# A refused pod's back-off is the pod's (issue 29, item 4): eviction-api = eviction, the pod "low"
# guarded by a PodDisruptionBudget that allows no disruption (the stand-in API server answers 429),
# nodefs pressure from outside the pods that lasts, every other pod critical (never chosen), and a
# kubelet that restarts low's container each time it is killed. evictd kills low (hard threshold),
# evictd-kube asks the Eviction API, gets 429 and tells evictd; low may be chosen again after
# retry-backoff (1 s here), doubling up to retry-backoff-max (4 s): the waits are 1, 2, 4 s across
# kills and refusals, and across a kill -9 and restart of evictd the count and the retry time hold
# (the next refusal is the 4th, waits the cap, and low is not killed before its retry time).
. "$(dirname "$0")/../../lib.sh"
. "$(dirname "$0")/../lib-agent.sh"
. "$(dirname "$0")/../../kube/lib-apiserver.sh"

command -v python3 >/dev/null || skip_all "python3 missing"
command -v openssl >/dev/null || skip_all "openssl missing (test certificates)"
command -v curl >/dev/null || skip_all "curl missing"
KUBE_NO_TRAP=1
node_init kube-backoff
KPID="" KUBELET=""
cleanup() {
	[ -n "$KUBELET" ] && kill -9 "$KUBELET" 2>/dev/null && wait "$KUBELET" 2>/dev/null
	[ -n "$KPID" ] && kill -9 "$KPID" 2>/dev/null
	node_cleanup
	kube_stop
}
trap cleanup EXIT
kube_start --bookmark-interval 0.5 --grace-scale 0.01 || skip_all "the stand-in API server does not start"

LOW=bbbb-0000
api_pod() {	# api_pod NAME UID PRIORITY APP
	kube_apply "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"namespace\":\"default\",\"name\":\"$1\",
	  \"uid\":\"$2\",\"labels\":{\"app\":\"$4\"}},\"spec\":{\"nodeName\":\"node-1\",\"priority\":$3,
	  \"containers\":[{\"name\":\"main\",\"image\":\"pause\",\"resources\":{\"requests\":{\"memory\":\"64Mi\"}}}]}}" >/dev/null
}
api_pod low $LOW 0 guarded
api_pod dns aaaa-crit 2000001000 free
kube_apply '{"apiVersion":"policy/v1","kind":"PodDisruptionBudget","metadata":{"namespace":"default","name":"guard"},
  "spec":{"minAvailable":1,"selector":{"matchLabels":{"app":"guarded"}}},"status":{"disruptionsAllowed":0,
  "currentHealthy":1,"desiredHealthy":1,"expectedPods":1}}' >/dev/null

node_conf 4Mi "[eviction]" "retry-backoff = 1s" "retry-backoff-max = 4s" \
	"[kubernetes]" "enable = yes" "node-name = node-1" "kubeconfig = $KUBE_DIR/kubeconfig-node" \
	"descriptor-dir = $T/kube-pods" "spool-dir = $T/spool" "eviction-api = eviction" "retry-max-interval = 1s"
sed -i "s|^pod-metadata-dir = .*|pod-metadata-dir = $T/kube-pods|" "$T/evictd.conf"	# what evictd-kube writes
"$BUILD/evictd-kube" --config "$T/evictd.conf" --log-target stderr 2>"$T/kube.err" &
KPID=$!
ok "evictd-kube writes the descriptors" node_wait 10 test -e "$T/kube-pods/$LOW.conf" -a -e "$T/kube-pods/aaaa-crit.conf"
mkdir -p "$PODS/pod$LOW" "$PODS/podaaaa-crit"
NODE_UIDS+=("$LOW" aaaa-crit)
node_restart_container aaaa-crit
node_restart_container $LOW
# The kubelet: low's container is restarted once the API server has refused its eviction (the pod
# was not deleted; restarted earlier, evictd would rightly kill it again as a victim still
# reclaiming); each kill's time goes to $T/kills.
( n=0
  while :; do
	if grep -q "populated 0" "$PODS/pod$LOW/cgroup.events" 2>/dev/null; then
		date +%s.%N >> "$T/kills"
		n=$((n + 1))
		until [ "$(grep -c 'The API server refused the eviction of default/low' "$T/stderr")" -ge $n ]; do sleep 0.02; done
		"$REC" --cgroup "$PODS/pod$LOW" "$T/low.rec" &
		until grep -q "populated 1" "$PODS/pod$LOW/cgroup.events"; do sleep 0.01; done
	fi
	sleep 0.02
  done ) &
KUBELET=$!
dd if=/dev/zero of="$T/nodefs/fill" bs=1M count=21 status=none   # from outside the pods: it lasts
node_start

refusal() {	# refusal N WAIT: evictd heard the Nth refusal of low, with that wait
	node_logged "The API server refused the eviction of default/low (HTTP 429, a PodDisruptionBudget): it is not killed again if its containers restart, may be chosen again in ${2}s at the earliest (refusal $1;"
}
kills() { wc -l < "$T/kills" 2>/dev/null || echo 0; }
# The kill times are the poller's, which sees a kill up to a loop turn late under load: a gap may
# read short by that much (JITTER) without a back-off cut short.
JITTER=0.15
gap() {	# gap I J: seconds between the Ith and the Jth kill
	awk -v i="$1" -v j="$2" 'NR == i { a = $1 } NR == j { b = $1 } END { printf "%.2f", b - a }' "$T/kills"
}
ok "1st refusal: chosen again in 1s" node_wait 15 refusal 1 1
ok "2nd refusal: the wait doubles, 2s (a new kill does not reset it)" node_wait 15 refusal 2 2
ok "3rd refusal: 4s" node_wait 15 refusal 3 4
ok "three kills so far" test "$(kills)" = 3
ok "the 2nd kill waited the 1st back-off ($(gap 1 2)s)" awk -v j="$JITTER" -v g="$(gap 1 2)" 'BEGIN { exit !(g >= 1.0 - j) }'
ok "the 3rd kill waited the 2nd, doubled ($(gap 2 3)s)" awk -v j="$JITTER" -v g="$(gap 2 3)" 'BEGIN { exit !(g >= 2.0 - j) }'
ok "its record holds the back-off" python3 -c "
import json, sys; r = json.load(open('$T/inflight/$LOW.json'))
sys.exit(0 if r['phase'] == 'backoff' and r['failures'] == 3 else 1)"
# evictd dies during low's 4 s back-off and comes back at once
node_kill9
node_start
sleep 2
ok "restarted: low not killed again before its retry time" test "$(kills)" = 3
ok "4th refusal: the count survived the restart, the wait is the cap, 4s" node_wait 15 refusal 4 4
ok "the 4th kill waited the 3rd back-off across the restart ($(gap 3 4)s)" awk -v j="$JITTER" -v g="$(gap 3 4)" 'BEGIN { exit !(g >= 4.0 - j) }'
ok "every refusal was heard (no 'first' refusal twice)" test "$(node_count '(refusal 1;')" = 1
node_stop
done_testing
