/* SPDX-License-Identifier: MIT */
/*
 * The transport of --shadow: reads pass, every write is refused here, below the act stage and the
 * Lease, so that no path of preemptd — present or future, bug or not — can write to a cluster it
 * only watches. A refused write is a bug worth a loud line, and it is counted (a metric).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "journal.h"
#include "transport.h"

struct readonly {
	transport t;
	transport *inner;
	uint64_t refused;
};

static int ro_start(transport *t, const transport_request *rq, transport_done_fn done, void *userdata,
                    void **ret_handle)
{
	struct readonly *ro = (struct readonly *)t;

	if (rq->method && strcmp(rq->method, "GET") == 0)
		return ro->inner->start(ro->inner, rq, done, userdata, ret_handle);
	ro->refused++;
	journal_msg(LOG_CRIT, "Shadow mode: %s %s refused before it left (preemptd writes nothing in shadow mode; "
	            "this is a bug)", rq->method ? rq->method : "?", rq->path ? rq->path : "?");
	return -EROFS;
}

static void ro_cancel(transport *t, void *handle)
{
	struct readonly *ro = (struct readonly *)t;
	ro->inner->cancel(ro->inner, handle);
}

static void ro_free(transport *t)
{
	struct readonly *ro = (struct readonly *)t;

	if (ro->inner)
		ro->inner->free(ro->inner);
	free(ro);
}

int transport_readonly_new(transport *inner, transport **ret)
{
	struct readonly *ro = calloc(1, sizeof(*ro));

	if (!ro)
		return -ENOMEM;
	ro->t = (transport){ .start = ro_start, .cancel = ro_cancel, .free = ro_free };
	ro->inner = inner;
	*ret = &ro->t;
	return 0;
}

uint64_t transport_readonly_refused(const transport *t)
{
	return t && t->start == ro_start ? ((const struct readonly *)t)->refused : 0;
}
