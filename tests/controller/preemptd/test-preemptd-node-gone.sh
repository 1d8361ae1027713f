#!/bin/bash
# A node deleted while a preemptor is nominated to it (found by the soak: preemptd's model kept
# every such node for good, 40 nodes became 78 in 17 minutes of churn): the pod GC deletes its
# pods, preemptd preempts elsewhere and nominates the preemptor there, and the deleted node leaves
# the model (preemptd_cluster_objects{kind="nodes"}) once nothing is bound or nominated to it.
. "$(dirname "$0")/../../lib.sh"
. "$(dirname "$0")/../../kube/lib-apiserver.sh"
. "$(dirname "$0")/lib-preemptd.sh"
pd_require
pd_setup --podgc-delay 0.3

node n1 4
running_grace default v1 n1 0 3500m 300	# 6 s of grace at the stand-in's scale
pd_start a --leader-elect no
ok "preemptd is synced" wait_for 10 logged a "Caches synced"
model_nodes() { metric a preemptd_cluster_objects '{"kind":"nodes"}'; }
pending default pre 1000 3
ok "the preemptor is nominated to n1, v1 terminating" wait_for 10 nominated pre n1
node n2 4
running_grace default v2 n2 0 3500m 300
kube_ctl DELETE /objects/nodes/n1 >/dev/null
moved() { nominated pre n2 || [ "$(node_of default pre)" = n2 ]; }
ok "n1 deleted (its pods collected): the preemptor preempts on n2" wait_for 15 moved
n1_gone() { [ "$(model_nodes)" = 1 ]; }
ok "...and n1 leaves preemptd's model (nodes: $(model_nodes), the API server has 1)" wait_for 5 n1_gone
done_testing
