#!/bin/bash
# deploy/prometheus/preemptd-rules.yaml: valid rules (promtool check rules), and each alert fires
# when it should and stays quiet when it should not, over made-up series (promtool test rules,
# tests/deploy/preemptd-rules.test.yaml). promtool: Debian's prometheus package.
cd "$(dirname "$0")/../.." || exit 1
. tests/lib.sh
command -v promtool >/dev/null || skip_all "promtool missing (Debian package prometheus)"
ok "promtool check rules: the rules parse" promtool check rules deploy/prometheus/preemptd-rules.yaml
ok "promtool test rules: every alert fires as its test says" \
	bash -c 'cd tests/deploy && promtool test rules preemptd-rules.test.yaml'
done_testing
