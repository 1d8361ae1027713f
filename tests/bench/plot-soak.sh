#!/bin/bash
# RSS over time from a soak's samples, as a PNG, with gnuplot (Debian's gnuplot-nox), beside the
# open fds and, for soak-preemptd.sh's samples ("t_sec rss_kib fds model_pods model_nodes ..."),
# the pods and nodes in preemptd's model.
#   tests/bench/plot-soak.sh SAMPLES PNG [TITLE]
set -eu
[ $# -ge 2 ] || { echo "usage: plot-soak.sh SAMPLES PNG [TITLE]" >&2; exit 2; }
[ -r "$1" ] || { echo "plot-soak.sh: $1: not readable" >&2; exit 2; }
command -v gnuplot >/dev/null || { echo "plot-soak.sh: gnuplot missing (scripts/ensure-deps.sh bench installs it)" >&2; exit 1; }
model=""
if head -1 "$1" | grep -q model_nodes; then
	model=", \"$1\" using 1:4 axes x1y2 with lines title \"pods in the model\", \"$1\" using 1:5 axes x1y2 with lines title \"nodes in the model\""
fi
gnuplot <<GP
set terminal png size 900,450
set output "$2"
set title "${3:-soak: RSS over time}"
set xlabel "seconds"
set ylabel "RSS (MiB)"
set y2label "count"
set ytics nomirror
set y2tics
set yrange [0:*]
set y2range [0:*]
set key bottom right
set grid
plot "$1" using 1:(\$2/1024) with lines lw 2 title "RSS (MiB)", "$1" using 1:3 axes x1y2 with lines title "open fds"$model
GP
