/* SPDX-License-Identifier: MIT */
/*
 * The in-cluster configuration, as client-go's rest.InClusterConfig reads it: the API server from
 * $KUBERNETES_SERVICE_HOST and $KUBERNETES_SERVICE_PORT, the service account's token and CA from
 * /var/run/secrets/kubernetes.io/serviceaccount/. The token is a projected one that the kubelet
 * rotates: incluster_read_token() reads it again (client-go re-reads it every minute).
 */
#ifndef CTL_INCLUSTER_H
#define CTL_INCLUSTER_H

#include <stddef.h>

#include "kubeconfig.h"

#define INCLUSTER_DIR "/var/run/secrets/kubernetes.io/serviceaccount"

/* dir: NULL for INCLUSTER_DIR (tests give their own). 0 or -errno with err[] saying what is missing. */
int incluster_config(const char *dir, kube_config **ret, char *err, size_t err_size);
/* The token file's content (trailing blanks cut), malloc'ed. 0 or -errno. */
int incluster_read_token(const char *dir, char **ret);

#endif
