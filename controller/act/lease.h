/* SPDX-License-Identifier: MIT */
/*
 * Leader election on a coordination.k8s.io/v1 Lease, as client-go's leaderelection does it for
 * kube-scheduler: optimistic concurrency on metadata.resourceVersion (a lost race is a 409, never
 * a second holder), times as MicroTime with six fraction digits, and the three durations
 * kube-scheduler takes (--leader-elect-lease-duration 15s, --leader-elect-renew-deadline 10s,
 * --leader-elect-retry-period 2s).
 *
 * A standby tries every retry period (jittered); it takes the lease when it is free or when the
 * holder has not renewed it for a lease duration — measured on the standby's own clock from when
 * it last saw the record change, never from the holder's timestamps (clocks differ). The leader
 * renews every retry period; if no renewal succeeds for the renew deadline it stops being leader —
 * and since renew deadline < lease duration, it stops writing before any standby can take over
 * (lease_may_write also bounds each write's timeout by what is left of the lease). On shutdown
 * the leader releases the lease (holder "", duration 1 s) so that a standby need not wait.
 */
#ifndef CTL_LEASE_H
#define CTL_LEASE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <systemd/sd-event.h>

#include "transport.h"

typedef struct lease lease;

typedef struct lease_opts {
	const char *namespace_, *name, *identity;
	uint64_t lease_duration_usec; /* 0: 15 s */
	uint64_t renew_deadline_usec; /* 0: 10 s */
	uint64_t retry_period_usec;   /* 0: 2 s */
	/* Leadership acquired (true) or lost (false). */
	void (*changed)(void *userdata, bool leader);
	/* Something to tell (a refused request, a holder seen): priority, text. May be NULL. */
	void (*note)(void *userdata, int priority, const char *text);
	void *userdata;
} lease_opts;

/* A Lease object as read back. */
typedef struct lease_record {
	char uid[64]; /* metadata.uid: what the LeaderElection Event's regarding names */
	char resource_version[64];
	char holder[256];
	int32_t duration_s;
	int32_t transitions;
	char acquire_time[48], renew_time[48];
} lease_record;

/* Parses a Lease object (JSON). 0, -EINVAL (not a Lease, or a field of the wrong type), -ENOMEM. */
int lease_record_parse(const char *body, size_t len, lease_record *ret);

/* The renew deadline must be shorter than the lease duration (-EINVAL otherwise). */
int lease_new(sd_event *e, transport *t, const lease_opts *o, lease **ret);
lease *lease_free(lease *l);

void lease_start(lease *l);
bool lease_is_leader(const lease *l);
/*
 * Whether this instance may write now: the leader, with its last renewal younger than the renew
 * deadline. *ret_timeout_ms: how long a write may take so that it cannot land after the lease
 * could have expired (what is left of the lease duration since that renewal, less a second).
 */
bool lease_may_write(lease *l, long *ret_timeout_ms);
/* The holder last seen ("" when none or not read yet). */
const char *lease_holder(const lease *l);
/* The Lease's uid as the last answer gave it (NULL when none yet, or the answer had none). */
const char *lease_uid(const lease *l);

/*
 * Gives the lease up, as client-go's LeaderElector.release() (ReleaseOnCancel) does: stops
 * renewing, reads the Lease and, while it still names us, writes it with no holder and a 1 s
 * duration (a 409 — a cancelled renewal that landed — reads and writes again). done is called
 * once, with LEASE_RELEASED, LEASE_NOT_HELD (the Lease names someone else, or nobody, or never
 * was ours) or -errno (-ESTALE: still 409 after retries; -EIO: an HTTP error; a transport's).
 * Leadership ends at once (the changed callback says false).
 */
enum { LEASE_NOT_HELD = 0, LEASE_RELEASED = 1 };
void lease_release(lease *l, void (*done)(void *userdata, int result), void *userdata);

typedef struct lease_stats {
	uint64_t acquired, lost, renewals, failures;
} lease_stats;
void lease_get_stats(const lease *l, lease_stats *ret);

#endif
