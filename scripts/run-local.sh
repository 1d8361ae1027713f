#!/bin/sh
# `make run` / `./run`: evictd in the foreground, dry-run, on this machine's real cgroup tree with
# the shipped configuration, until Ctrl-C.  Without root it cannot read every pod descriptor or
# cgroup, so it says so and runs anyway.
set -eu
evictd=$1
config=conf/evictd.conf
run_dir=/run/evictd
if ! { mkdir -p "$run_dir" 2>/dev/null && [ -w "$run_dir" ]; }; then
	# The status file, lock and in-flight records live in the run directory; a user who cannot
	# write /run/evictd gets one beside the build, through a copy of the shipped file that sets
	# only that (a later [agent] section wins key by key).
	run_dir=$(dirname "$evictd")/run-local
	mkdir -p "$run_dir"
	config=$run_dir/evictd.conf
	{ cat conf/evictd.conf; printf '\n[agent]\nstatus-file = %s/status.json\n' "$(cd "$run_dir" && pwd)"; } >"$config"
	echo "make run: /run/evictd is not writable; status file, lock and in-flight records in $run_dir" >&2
fi
[ "$(id -u)" -eq 0 ] || echo "make run: not root; evictd will see only what this user can read" >&2
echo "make run: $evictd --config $config --dry-run (Ctrl-C to stop)" >&2
exec "$evictd" --config "$config" --dry-run
