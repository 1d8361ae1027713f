# Start/stop helpers for the stand-in API server (tests/kube/apiserver.py) in shell tests.
# Source it, then:
#   kube_start [apiserver.py options...]   PKI + server; sets KUBE_DIR KUBE_URL KUBE_CTL KUBE_PID
#                                          KUBE_NODE KUBE_PORT and installs an EXIT trap calling
#                                          kube_stop (set KUBE_NO_TRAP=1 to manage it yourself)
#   kube_stop                              SIGTERM, wait, remove KUBE_DIR (idempotent)
#   kube_restart [options...]              same port, same certificates, state lost
#   kube_ctl METHOD PATH [JSON]            the control endpoint (curl); prints the body
#   kube_apply JSON                        create or replace objects (object, array or List)
#   kube_fault JSON                        inject a fault (see README.md)
#   kube_requests                          the request log, JSON lines
#   kube_curl IDENTITY CURL-ARGS...        HTTPS as admin|node|expired|rogue|anonymous|
#                                          admin-token|node-token (-s, CA set)
#   kube_pod_json NS NAME NODE [PRIORITY] [MEMORY-REQUEST] [CPU-REQUEST]   a Pod to kube_apply
#   kube_pending_pod_json NS NAME [PRIORITY] [CPU-REQUEST] [MEMORY-REQUEST] [SCHEDULER]
#                                          an unbound Pod (schedulerName default: preemptd)
#   kube_node_json NAME [CPU] [MEMORY] [PODS]   a Node (allocatable = capacity)
#   kube_kubelet JSON                      configure the kubelet simulation (README.md)
#   kube_outage SECONDS                    the API server refuses connections for SECONDS
# Variables for identities: $KUBE_DIR/kubeconfig-{admin,node,node-data,node-token,admin-token,
# expired,rogue,exec,anonymous}.
# shellcheck disable=SC2034  # KUBE_URL, KUBE_CTL, KUBE_PORT are for the sourcing test
KUBE_HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
KUBE_NODE=${KUBE_NODE:-node-1}
KUBE_PID=""
KUBE_DIR=""

_kube_spawn() {	# _kube_spawn PORT OPTIONS...
	local port=$1; shift
	rm -f "$KUBE_DIR/ports.json"
	python3 "$KUBE_HERE/apiserver.py" --dir "$KUBE_DIR" --port "$port" "$@" \
		2>>"$KUBE_DIR/apiserver.stderr" &
	KUBE_PID=$!

	for _ in $(seq 1 200); do
		[ -s "$KUBE_DIR/ports.json" ] && break
		if ! kill -0 "$KUBE_PID" 2>/dev/null; then
			echo "apiserver.py exited at startup:" >&2; cat "$KUBE_DIR/apiserver.stderr" >&2
			KUBE_PID=""; return 1
		fi
		sleep 0.05
	done
	[ -s "$KUBE_DIR/ports.json" ] || { echo "apiserver.py not ready after 10 s" >&2; return 1; }
	KUBE_PORT=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["port"])' \
		"$KUBE_DIR/ports.json")
	KUBE_CTL_PORT=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["control_port"])' \
		"$KUBE_DIR/ports.json")
	KUBE_URL="https://127.0.0.1:$KUBE_PORT"
	KUBE_CTL="http://127.0.0.1:$KUBE_CTL_PORT"
}

kube_start() {
	KUBE_DIR=$(mktemp -d "${TMPDIR:-/tmp}/kube-apiserver.XXXXXX") || return 1
	if [ -z "${KUBE_NO_TRAP:-}" ]; then trap kube_stop EXIT; fi
	"$KUBE_HERE/mkcerts.sh" "$KUBE_DIR" "$KUBE_NODE" || return 1
	_kube_spawn 0 "$@"
}

_kube_kill() {
	if [ -n "$KUBE_PID" ]; then
		kill -TERM "$KUBE_PID" 2>/dev/null
		local i
		for _ in $(seq 1 100); do kill -0 "$KUBE_PID" 2>/dev/null || break; sleep 0.05; done
		kill -KILL "$KUBE_PID" 2>/dev/null
		wait "$KUBE_PID" 2>/dev/null
		KUBE_PID=""
	fi
}

kube_restart() {
	_kube_kill
	_kube_spawn "$KUBE_PORT" "$@"
}

kube_stop() {
	_kube_kill
	if [ -n "$KUBE_DIR" ]; then rm -rf "$KUBE_DIR"; KUBE_DIR=""; fi
}

kube_ctl() {	# kube_ctl METHOD PATH [JSON]
	if [ $# -ge 3 ]; then
		curl -sS -X "$1" -H 'Content-Type: application/json' --data-binary "$3" "$KUBE_CTL$2"
	else
		curl -sS -X "$1" "$KUBE_CTL$2"
	fi
}
kube_apply()    { kube_ctl POST /objects "$1"; }
kube_fault()    { kube_ctl POST /faults "$1" >/dev/null; }
kube_requests() { kube_ctl GET /requests; }

kube_curl() {	# kube_curl IDENTITY CURL-ARGS... (URL paths: "$KUBE_URL/api/v1/pods")
	local who=$1; shift
	local auth=()
	case "$who" in
	admin|node|expired|rogue) auth=(--cert "$KUBE_DIR/$who.crt" --key "$KUBE_DIR/$who.key") ;;
	admin-token) auth=(-H "Authorization: Bearer $(grep kubernetes-admin "$KUBE_DIR/tokens.csv" | cut -d, -f1)") ;;
	node-token)  auth=(-H "Authorization: Bearer $(grep system:node: "$KUBE_DIR/tokens.csv" | cut -d, -f1)") ;;
	anonymous) ;;
	*) echo "kube_curl: unknown identity $who" >&2; return 2 ;;
	esac
	curl -s --cacert "$KUBE_DIR/ca.crt" "${auth[@]}" "$@"
}

kube_pod_json() {	# NS NAME NODE [PRIORITY] [MEMORY-REQUEST] [CPU-REQUEST]
	local prio=""
	[ -n "${4:-}" ] && prio="\"priority\": $4,"
	cat <<JSON
{"apiVersion": "v1", "kind": "Pod",
 "metadata": {"namespace": "$1", "name": "$2", "labels": {"app": "$2"}},
 "spec": {"nodeName": "$3", $prio
  "containers": [{"name": "main", "image": "registry.k8s.io/pause:3.9",
   "resources": {"requests": {"memory": "${5:-64Mi}", "cpu": "${6:-100m}"}}}]}}
JSON
}

kube_pending_pod_json() {	# NS NAME [PRIORITY] [CPU-REQUEST] [MEMORY-REQUEST] [SCHEDULER]
	cat <<JSON
{"apiVersion": "v1", "kind": "Pod",
 "metadata": {"namespace": "$1", "name": "$2", "labels": {"app": "$2"}},
 "spec": {"schedulerName": "${6:-preemptd}", "priority": ${3:-0},
  "containers": [{"name": "main", "image": "registry.k8s.io/pause:3.9",
   "resources": {"requests": {"cpu": "${4:-100m}", "memory": "${5:-64Mi}"}}}]}}
JSON
}

kube_node_json() {	# NAME [CPU] [MEMORY] [PODS]
	cat <<JSON
{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "$1",
  "labels": {"kubernetes.io/hostname": "$1", "kubernetes.io/os": "linux"}},
 "status": {"capacity": {"cpu": "${2:-4}", "memory": "${3:-8Gi}", "pods": "${4:-110}"},
  "allocatable": {"cpu": "${2:-4}", "memory": "${3:-8Gi}", "pods": "${4:-110}"}}}
JSON
}

kube_kubelet() { kube_ctl POST /kubelet "$1" >/dev/null; }
kube_outage()  { kube_ctl POST /outage "{\"seconds\": $1}" >/dev/null; }
