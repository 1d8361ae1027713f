#!/bin/bash
# preemptd's lists and watches as client-go's reflector makes them: the first list of each kind
# at resourceVersion=0 with limit=500 (relistResourceVersion(); the pager follows continue tokens,
# whether the server pages or answers whole, as the watch cache may); each watch's
# timeoutSeconds random in [t, 2t) (minWatchTimeout × (1 + rand)); a relist after 410 from the
# last resourceVersion, and from etcd (resourceVersion unset) when that one is too old as well.
# A healthy watch stream that is cut is reopened at once (the reflector's watch loop), even after
# an earlier hiccup had grown the backoff: a pod created right after the cut is bound at once.
. "$(dirname "$0")/../../lib.sh"
. "$(dirname "$0")/../../kube/lib-apiserver.sh"
. "$(dirname "$0")/lib-preemptd.sh"
pd_require
pd_setup

node n1 16
node n2 16
consumed() { [ "$(kube_ctl GET /faults | jq length)" = 0 ]; }
synced() { logged a "Caches synced"; }

# an API server hiccup: the first four pod watches answered 500 (the backoff grows to 4 s: 2–4 s)
kube_fault '{"kind": "status", "code": 500, "count": 4, "resource": "pods", "watch": true}'
PD_WATCH_TIMEOUT=5m pd_start a --leader-elect no --retry-max 30s --page-limit 500
wait_for 20 synced || bail "preemptd syncs its caches"
# the fifth watch works, and is cut a second later (after its first bookmark)
wait_for 20 consumed || bail "the stand-in answers 500 to four pod watches"
kube_fault '{"kind": "drop", "resource": "pods", "after": 1}'
wait_for 10 consumed || bail "the next pod watch is cut"
sleep 1.5
pending default after-cut 0 100m
t0=$(date +%s.%N)
bound_soon() { [ -n "$(node_of default after-cut)" ]; }
ok "a watch cut after an earlier hiccup is reopened at once: a pod created after the cut is bound within 2 s" \
	wait_for 2 bound_soon
wait_for 20 bound_soon
echo "# bound $(python3 -c "import sys,time; print(round(time.time() - float(sys.argv[1]), 2))" "$t0") s after its creation"

first_lists() {	# the first list of each kind: resourceVersion=0, limit=500
	local r
	for r in priorityclasses nodes poddisruptionbudgets pods; do
		reqs ".verb == \"list\" and .resource == \"$r\"" | head -1 |
			jq -e '.query.resourceVersion == "0" and .query.limit == "500"' >/dev/null || return 1
	done
}
ok "the first list of each kind asks for resourceVersion=0 and limit=500" first_lists
timeouts() { reqs '.verb == "watch"' | jq -r '.query.timeoutSeconds'; }
in_range() { timeouts | awk '$1 < 300 || $1 >= 600 { bad = 1 } END { exit bad }'; }
ok "every watch's timeoutSeconds is in [300, 600)" in_range
ok "...and they differ ($(timeouts | sort -u | wc -l) values among $(timeouts | wc -l) watches)" \
	[ "$(timeouts | sort -u | wc -l)" -ge 2 ]
pd_stop a

# a 410 on the node watch: relisted from the last resourceVersion; a 410 on that list too: from
# etcd (no resourceVersion)
PD_WATCH_TIMEOUT=2s pd_start b --leader-elect no
wait_for 20 logged b "Caches synced" || bail "preemptd b syncs its caches"
kube_fault '{"kind": "gone", "resource": "nodes"}'
wait_for 10 consumed || bail "the next node watch is told 410"
relisted() { logged b "Relisted nodes"; }
ok "a 410 on the node watch: relisted" wait_for 10 relisted
relist_rv() {
	reqs '.verb == "list" and .resource == "nodes"' | tail -1 |
		jq -e '(.query.resourceVersion // "") != "" and .query.resourceVersion != "0" and (.query | has("limit") | not)' >/dev/null
}
ok "...from the last resourceVersion seen, without limit (the watch cache can answer it)" relist_rv
nlists() { nreqs '.verb == "list" and .resource == "nodes"'; }
before=$(nlists)
kube_fault '{"kind": "gone", "resource": "nodes"}'
kube_fault '{"kind": "gone", "resource": "nodes", "watch": false}'
relisted_twice() { [ "$(nlists)" -ge $((before + 2)) ] && [ "$(logged_n b "Relisted nodes")" -ge 2 ]; }
ok "a 410 on that relist too: listed again" wait_for 15 relisted_twice
quorum() {
	reqs '.verb == "list" and .resource == "nodes"' | tail -1 | jq -e '.status == 200 and (.query | has("resourceVersion") | not)' >/dev/null
}
ok "...from etcd (no resourceVersion), at once" quorum
node n3 16
pending default after-relist 0 100m
bound_any() { [ -n "$(node_of "$1" "$2")" ]; }
ok "...and the watch goes on: a new pod is bound" wait_for 10 bound_any default after-relist
pd_stop b

# a server that pages (--page-limit 1 here): the pages are followed, and relists keep the limit
nbefore=$(kube_requests | wc -l)
since() { kube_requests | tail -n +$((nbefore + 1)) | jq -c "select($1)"; }
PD_WATCH_TIMEOUT=2s pd_start c --leader-elect no --page-limit 1
wait_for 20 logged c "Caches synced" || bail "preemptd c syncs its caches"
paged() {	# the node list: resourceVersion=0&limit=1, then the continue pages without resourceVersion
	since '.verb == "list" and .resource == "nodes"' | head -2 |
		jq -s -e '.[0].query.resourceVersion == "0" and .[0].query.limit == "1" and
			(.[1].query.continue // "") != "" and (.[1].query | has("resourceVersion") | not) and .[1].query.limit == "1"' >/dev/null
}
ok "--page-limit 1: the first list at resourceVersion=0 follows the server's pages (continue, no resourceVersion)" paged
kube_fault '{"kind": "gone", "resource": "nodes"}'
relist_paged() {
	since '.verb == "list" and .resource == "nodes" and (.query | has("continue") | not)' | tail -1 |
		jq -e '.query.resourceVersion != "0" and (.query.resourceVersion // "") != "" and .query.limit == "1"' >/dev/null
}
ok "...a relist after 410 from the last resourceVersion keeps the limit (client-go's paginatedResult)" \
	wait_for 10 relist_paged
pd_stop c
done_testing
