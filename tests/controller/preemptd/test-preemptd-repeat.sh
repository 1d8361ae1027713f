#!/bin/bash
# The same Lease or write failure again and again is one line, then at most one a minute: a Role
# without leases refuses every try (every second here), a server that answers 422 to every binding
# refuses each pod alike (422). Once the writes go through again, one line says how many failures went
# untold.
. "$(dirname "$0")/../../lib.sh"
. "$(dirname "$0")/../../kube/lib-apiserver.sh"
. "$(dirname "$0")/lib-preemptd.sh"
pd_require
pd_setup

kube_fault '{"kind": "status", "code": 403, "count": -1, "resource": "leases"}'
pd_start a --leader-elect-retry-period 1s
sleep 5
lease_lines=$(logged_n a 'GET /apis/coordination.k8s.io/v1/namespaces/.*/leases/.*: HTTP 403')
ok "a Lease refused at every try (5 s, a try a second): one line, not one a try ($lease_lines)" [ "$lease_lines" = 1 ] ||
	sed 's/^/# /' "$T/a.log"
ok "...which says that the same again is told at most once a minute" \
	logged a 'HTTP 403: preemptd.s Role must allow get, create and update on leases in .*; the same again is told at most once a minute'
pd_stop a

kube_ctl DELETE /faults >/dev/null
node n1 8
kube_fault '{"kind": "status", "code": 422, "count": -1, "resource": "pods/binding"}'
for i in 1 2 3 4 5 6; do pending default "web$i" 0 100m; done
pd_start b --leader-elect no
tried() { [ "$(nreqs '.subresource == "binding" and .status == 422')" -ge 6 ]; }
ok "bindings refused with 422, pod after pod" wait_for 20 tried
sleep 1
write_lines=$(logged_n b 'POST /api/v1/namespaces/default/pods/web[0-9]*/binding: HTTP 422')
ok "...one line for all of them ($write_lines)" [ "$write_lines" = 1 ] || sed 's/^/# /' "$T/b.log"
kube_ctl DELETE /faults >/dev/null
pending default late 0 100m
ok "the API server takes bindings again: a pod is bound" wait_for 10 bound_to default late n1
told_again() { logged b 'POST /api/v1/namespaces/default/pods/[a-z0-9]*/binding: answering again ([1-9][0-9]* more failures like the last line since it)'; }
ok "...and one line says how many failures went untold" wait_for 10 told_again || sed 's/^/# /' "$T/b.log" | grep -v ' Bound pod ' | tail -20
done_testing
