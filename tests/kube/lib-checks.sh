# Checks shared by the stand-in's protocol tests (sourced after tests/lib.sh and lib-apiserver.sh;
# $out is the file that holds the last response body). Sourcing it skips the test file when a
# tool they all need is missing.
for t in python3 curl openssl jq; do
	command -v "$t" >/dev/null || skip_all "$t not installed"
done
# code IDENTITY URL [CURL-ARGS...]: prints the HTTP code, body in $out
code() { local who=$1 url=$2; shift 2; kube_curl "$who" -o "$out" -w '%{http_code}' "$@" "$url"; }
is() { [ "$1" = "$2" ] || { echo "# expected '$2', got '$1'" >&2; return 1; }; }
jqo() { jq -e "$@" "$out" >/dev/null; }
has() { grep -qF -- "$1" "$2" || { echo "# '$1' not in $2:" >&2; head -c 600 "$2" >&2; return 1; }; }
# not_json FILE [LINES]: FILE is not valid JSON (LINES: not one JSON document per line). Not
# `! jq .`: jq 1.6 (Debian 12) stops reading at a NUL byte and exits 0 with no output, so a
# body starting with NUL — the stand-in's garbage fault — passed as valid JSON.
not_json() {
	python3 - "$@" <<'PY'
import json, sys
data = open(sys.argv[1], "rb").read()
try:
    if len(sys.argv) > 2:
        for line in data.splitlines():
            json.loads(line)
    else:
        json.loads(data)
except ValueError:
    sys.exit(0)
sys.exit(1)
PY
}
