/* SPDX-License-Identifier: MIT */
/*
 * The cost of asking the container runtime (cri/): one CRI round trip (Version), and one full
 * listing — ImageFsInfo, ListImages, ListPodSandbox, ListContainers, ListContainerStats, and
 * ContainerStatus for each container whose log path is not known yet — at 110 pods × 3 containers
 * (the kubelet's default maximum pods per node) and 50 images: the first listing (every log path
 * asked) and the next ones (log paths cached). Against the stand-in runtime
 * (tests/cri/cri-standin.py, python3-grpcio: a test double, not containerd; its own Python cost
 * is most of each figure), or against the socket in $CRI_SOCKET (a real runtime: then what it holds
 * is listed, nothing is created).
 *   build/bench/bench-cri            prints medians and 90th percentiles
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cri.h"

static uint64_t now_usec(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

typedef struct waiter {
	bool done;
	int error;
	cri_listing *l;
	char why[512];
} waiter;

static void on_text(int error, const char *text, void *userdata)
{
	waiter *w = userdata;
	w->done = true;
	w->error = error;
	snprintf(w->why, sizeof(w->why), "%s", text);
}

static void on_list(int error, cri_listing *l, const char *why, void *userdata)
{
	waiter *w = userdata;
	w->done = true;
	w->error = error;
	w->l = l;
	snprintf(w->why, sizeof(w->why), "%s", why);
}

static int run(sd_event *e, waiter *w)
{
	while (!w->done)
		if (sd_event_run(e, UINT64_MAX) < 0)
			return -EIO;
	return w->error;
}

static void write_state(const char *path)
{
	FILE *f = fopen(path, "w");
	if (!f)
		exit(1);
	fputs("{\"image_filesystems\": [{\"mountpoint\": \"/var/lib/containerd/snap\", \"used_bytes\": 1, \"inodes_used\": 1}],"
	      " \"images\": [", f);
	for (int i = 0; i < 50; i++)
		fprintf(f, "%s{\"id\": \"sha256:%064d\", \"tags\": [\"localhost/image-%d:latest\"], \"size\": %d}", i ? "," : "",
		        i, i, 1000000 + i);
	fputs("], \"sandboxes\": [", f);
	for (int p = 0; p < 110; p++)
		fprintf(f, "%s{\"id\": \"sandbox-%03d\", \"uid\": \"00000000-0000-4000-8000-%012d\", \"name\": \"pod-%d\", "
		        "\"namespace\": \"default\"}", p ? "," : "", p, p, p);
	fputs("], \"containers\": [", f);
	for (int p = 0; p < 110; p++)
		for (int c = 0; c < 3; c++)
			fprintf(f, "%s{\"id\": \"%060d%04d\", \"sandbox\": \"sandbox-%03d\", \"name\": \"c%d\", "
			        "\"image_ref\": \"sha256:%064d\", \"writable_bytes\": %d, \"writable_inodes\": 10, "
			        "\"log_path\": \"/var/log/pods/default_pod-%d_00000000-0000-4000-8000-%012d/c%d/0.log\"}",
			        p || c ? "," : "", p, c, p, c, p % 50, 4096 * (c + 1), p, p, c);
	fputs("]}\n", f);
	fclose(f);
}

static pid_t start_standin(const char *sock, const char *state)
{
	static const char script[] =
		"for p in python3 /usr/bin/python3; do $p -c 'import grpc' 2>/dev/null && exec $p \"$@\"; done; exit 77";
	pid_t pid = fork();
	if (pid == 0) {
		execl("/bin/sh", "sh", "-c", script, "sh", "tests/cri/cri-standin.py", "--socket", sock, "--state", state,
		      NULL);
		_exit(127);
	}
	for (int i = 0; i < 200; i++) {
		struct stat st;
		int status;
		if (stat(sock, &st) == 0)
			return pid;
		if (waitpid(pid, &status, WNOHANG) == pid)
			return -1;
		usleep(50000);
	}
	kill(pid, SIGTERM);
	return -1;
}

static void report(const char *what, uint64_t *v, size_t n, const char *extra)
{
	qsort(v, n, sizeof(*v), cmp_u64);
	printf("  %-44s median %8.3f ms   p90 %8.3f ms   (%zu runs)%s\n", what, v[n / 2] / 1000.0, v[n * 9 / 10] / 1000.0,
	       n, extra);
}

int main(void)
{
	char dir[] = "/tmp/bench-cri.XXXXXX", sock[128], state[128], extra[128];
	const char *real = getenv("CRI_SOCKET");
	sd_event *e = NULL;
	cri_client *c = NULL;
	cri_client_opts o = { .timeout_usec = 10000000 };
	uint64_t v[200];
	pid_t pid = -1;

	if (!mkdtemp(dir))
		return 1;
	snprintf(sock, sizeof(sock), "%s/cri.sock", dir);
	snprintf(state, sizeof(state), "%s/state.json", dir);
	if (real)
		snprintf(sock, sizeof(sock), "%s", real);
	else {
		write_state(state);
		pid = start_standin(sock, state);
		if (pid < 0) {
			printf("bench-cri: skipped: no python3 with grpc (python3-grpcio) for the stand-in runtime\n");
			rmdir(dir);
			return 0;
		}
	}
	if (sd_event_new(&e) < 0 || cri_client_new(e, sock, &o, &c) < 0)
		return 1;
	printf("bench-cri: %s at %s\n", real ? "the runtime" : "the stand-in runtime (a test double, not containerd)", sock);
	/* one round trip, after a first call that warms whatever warms */
	for (int i = -1; i < 200; i++) {
		waiter w = { 0 };
		uint64_t t0 = now_usec();
		if (cri_client_version(c, on_text, &w) < 0 || run(e, &w) < 0) {
			fprintf(stderr, "bench-cri: Version: %s\n", w.why);
			return 1;
		}
		if (i >= 0)
			v[i] = now_usec() - t0;
	}
	report("one CRI round trip (Version)", v, 200, "");
	/* listings: the first asks every log path, the next ones have them cached (a new client per first) */
	unsigned long calls0 = 0;
	size_t n_containers = 0;
	for (int i = 0; i < 10; i++) {
		cri_client *fresh = NULL;
		waiter w = { 0 };
		if (cri_client_new(e, sock, &o, &fresh) < 0)
			return 1;
		uint64_t t0 = now_usec();
		if (cri_client_list(fresh, CRI_LIST_ALL, on_list, &w) < 0 || run(e, &w) < 0) {
			fprintf(stderr, "bench-cri: listing: %s\n", w.why);
			return 1;
		}
		v[i] = now_usec() - t0;
		calls0 = cri_client_calls(fresh);
		n_containers = w.l->n_containers;
		cri_listing_free(w.l);
		free(w.l);
		cri_client_free(fresh);
	}
	snprintf(extra, sizeof(extra), " %lu calls, %zu containers", calls0, n_containers);
	report("full listing, log paths asked", v, 10, extra);
	unsigned long before = cri_client_calls(c);
	for (int i = -1; i < 20; i++) {
		waiter w = { 0 };
		uint64_t t0 = now_usec();
		if (cri_client_list(c, CRI_LIST_ALL, on_list, &w) < 0 || run(e, &w) < 0) {
			fprintf(stderr, "bench-cri: listing: %s\n", w.why);
			return 1;
		}
		if (i >= 0)
			v[i] = now_usec() - t0;
		else
			before = cri_client_calls(c);
		cri_listing_free(w.l);
		free(w.l);
	}
	snprintf(extra, sizeof(extra), " %lu calls each", (cri_client_calls(c) - before) / 20);
	report("full listing, log paths cached", v, 20, extra);
	cri_client_free(c);
	sd_event_unref(e);
	if (pid > 0) {
		kill(pid, SIGTERM);
		waitpid(pid, NULL, 0);
	}
	unlink(state);
	unlink(sock);
	rmdir(dir);
	return 0;
}
