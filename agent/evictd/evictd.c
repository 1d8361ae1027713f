/* SPDX-License-Identifier: MIT */
/*
 * evictd — Kubernetes-style node-pressure eviction as a systemd service.
 *
 *   evictd [--config FILE] [--dry-run] ...          the daemon (evictd-daemon.c)
 *   evictd --once [--json] [--dry-run] ...          one scan, one decision, printed; nothing evicted
 *   evictd --status                                 the daemon's status file (exit 3: not running)
 *   evictd --reload[=PID]                           validate the configuration, SIGHUP, wait
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cadence.h"
#include "cgdiscover.h"
#include "config.h"
#include "config-out.h"
#include "evictd-daemon.h"
#include "decide.h"
#include "events.h"
#include "node.h"
#include "log.h"
#include "report.h"
#include "runtime.h"
#include "scan.h"
#include "signals.h"
#include "status-cmd.h"
#include "clock.h"

#ifndef EVICTD_VERSION
#define EVICTD_VERSION "unknown"
#endif

/* How long `evictd --reload` (the unit's ExecReload=) waits for the daemon to confirm. */
#define RELOAD_TIMEOUT_USEC (10 * USEC_PER_SEC)

#define EXIT_USAGE 2

typedef struct options {
	const char *config_path;
	bool config_explicit;
	config_overrides ov;
	bool once, json, status, reload, dump_keys, dump_config;
	int64_t reload_pid;
	logging_target log;
	const char *status_file;
} options;

static void usage(FILE *f)
{
	fputs("Usage: evictd [OPTIONS]\n"
	      "Node-pressure eviction with Kubernetes semantics, on cgroup v2.\n\n"
	      "  --config FILE         configuration (default " EVICTD_CONFIG_PATH ", plus FILE.d/*.conf)\n"
	      "  --cgroup-root DIR     cgroup v2 root (default: found with libcgroup)\n"
	      "  --metadata-dir DIR    pod descriptors (default /run/evictd/pods)\n"
	      "  --proc-root DIR       where meminfo, loadavg, pressure/ and sys/kernel/ are read (default /proc)\n"
	      "  --dry-run             decide and log, evict nothing\n"
	      "  --once                scan once, print signals, conditions, ranking and the pods that\n"
	      "                        would be evicted, and exit (never evicts)\n"
	      "  --json                with --once: one JSON object on stdout\n"
	      "  --status              print the running daemon's status file; exit 3 when no\n"
	      "                        daemon is running\n"
	      "  --reload[=PID]        check the configuration, make the daemon re-read it (SIGHUP)\n"
	      "                        and wait until it has (PID: from the status file)\n"
	      "  --log-target T        auto | journal | stderr (default auto)\n"
	      "  --dump-config         print every effective setting and where it came from (evictd.conf,\n"
	      "                        a drop-in, the kubelet's configuration, or the default)\n"
	      "  --dump-config-keys    print every configuration section and key evictd accepts\n"
	      "  -V, --version         the version\n"
	      "  -h, --help            this text\n",
	      f);
}

static int parse_args(int argc, char **argv, options *o)
{
	enum { OPT_CONFIG = 256, OPT_CGROUP_ROOT, OPT_METADATA_DIR, OPT_PROC_ROOT, OPT_DRY_RUN, OPT_ONCE, OPT_JSON,
	       OPT_STATUS, OPT_LOG_TARGET, OPT_RELOAD, OPT_DUMP_KEYS, OPT_DUMP_CONFIG };
	static const struct option longopts[] = {
		{ "config", required_argument, NULL, OPT_CONFIG },
		{ "cgroup-root", required_argument, NULL, OPT_CGROUP_ROOT },
		{ "metadata-dir", required_argument, NULL, OPT_METADATA_DIR },
		{ "proc-root", required_argument, NULL, OPT_PROC_ROOT },
		{ "dry-run", no_argument, NULL, OPT_DRY_RUN },
		{ "once", no_argument, NULL, OPT_ONCE },
		{ "json", no_argument, NULL, OPT_JSON },
		{ "status", no_argument, NULL, OPT_STATUS },
		{ "log-target", required_argument, NULL, OPT_LOG_TARGET },
		{ "reload", optional_argument, NULL, OPT_RELOAD },
		{ "dump-config-keys", no_argument, NULL, OPT_DUMP_KEYS },
		{ "dump-config", no_argument, NULL, OPT_DUMP_CONFIG },
		{ "version", no_argument, NULL, 'V' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	int c;

	*o = (options){ .config_path = EVICTD_CONFIG_PATH, .log = LOGGING_AUTO };
	while ((c = getopt_long(argc, argv, "hV", longopts, NULL)) >= 0) {
		switch (c) {
		case OPT_CONFIG:
			o->config_path = optarg;
			o->config_explicit = true;
			break;
		case OPT_CGROUP_ROOT:
		case OPT_METADATA_DIR:
		case OPT_PROC_ROOT: {
			/* A path typed on the command line means what it means in the shell it was typed in:
			 * a relative one is resolved now, against the working directory. (In the
			 * configuration file paths stay absolute: relative to the file or to the daemon's
			 * directory would be a guess.) */
			static const char *const names[] = { "--cgroup-root", "--metadata-dir", "--proc-root" };
			static char resolved[3][PATH_MAX];
			int k = c - OPT_CGROUP_ROOT;
			const char *path = optarg;
			if (path[0] != '/') {
				if (!realpath(path, resolved[k])) {
					fprintf(stderr, "evictd: %s %s: %s\n", names[k], optarg, strerror(errno));
					return -EINVAL;
				}
				path = resolved[k];
			}
			*(c == OPT_CGROUP_ROOT ? &o->ov.cgroup_root
			  : c == OPT_METADATA_DIR ? &o->ov.pod_metadata_dir
			                          : &o->ov.proc_root) = path;
			break;
		}
		case OPT_DRY_RUN:
			o->ov.dry_run = true;
			break;
		case OPT_ONCE:
			o->once = true;
			break;
		case OPT_JSON:
			o->json = true;
			break;
		case OPT_STATUS:
			o->status = true;
			break;
		case OPT_LOG_TARGET:
			if (logging_target_parse(optarg, &o->log) < 0) {
				fprintf(stderr, "evictd: --log-target: expected auto, journal or stderr, not \"%s\"\n", optarg);
				return -EINVAL;
			}
			break;
		case OPT_RELOAD:
			o->reload = true;
			if (optarg) {
				char *end;
				errno = 0;
				long long pid = strtoll(optarg, &end, 10);
				if (errno || end == optarg || *end || pid <= 0 || pid > INT32_MAX) {
					fprintf(stderr, "evictd: --reload: \"%s\" is not a process id\n", optarg);
					return -EINVAL;
				}
				o->reload_pid = pid;
			}
			break;
		case OPT_DUMP_KEYS:
			o->dump_keys = true;
			break;
		case OPT_DUMP_CONFIG:
			o->dump_config = true;
			break;
		case 'V':
			printf("evictd %s\n", EVICTD_VERSION);
			exit(EXIT_SUCCESS);
		case 'h':
			usage(stdout);
			exit(EXIT_SUCCESS);
		default:
			usage(stderr);
			return -EINVAL;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "evictd: unexpected argument \"%s\"\n", argv[optind]);
		return -EINVAL;
	}
	if (o->once + o->status + o->reload + o->dump_keys + o->dump_config > 1) {
		fputs("evictd: --once, --status, --reload, --dump-config and --dump-config-keys exclude each other\n", stderr);
		return -EINVAL;
	}
	if (o->json && !o->once) {
		fputs("evictd: --json only goes with --once\n", stderr);
		return -EINVAL;
	}
	return 0;
}

static void log_conflict(const kubelet_conflict *k, void *userdata)
{
	(void)userdata;
	log_msg(LOG_WARNING, "%s", k->text);
}

/* What the kubelet's configuration did not give: one line each, next to the output. */
static void log_kubelet_notes(const evictd_config *c, const int64_t *capacity)
{
	if (c->kubelet.warning[0])
		log_msg(LOG_WARNING, "kubelet configuration ignored (evictd runs on its own files): %s", c->kubelet.warning);
	if (c->kubelet.missing[0])
		log_msg(LOG_WARNING, "kubelet configuration %s", c->kubelet.missing);
	config_kubelet_conflicts(c, capacity, log_conflict, NULL);
}

/* The fall rates the daemon would derive at start, for what --once and --dump-config show. */
static void derive_fall_rates(evictd_config *c)
{
	unsigned cpus = 0;
	int proc_fd = open(c->proc_root ? c->proc_root : "/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (node_online_cpus(proc_fd, &cpus) < 0)
		log_msg(LOG_NOTICE, "cannot count the online CPUs in %s/stat: fall rates for one CPU",
		        c->proc_root ? c->proc_root : "/proc");
	if (proc_fd >= 0)
		close(proc_fd);
	cadence_derive_rates(c, cpus);
}

/* One scan, one decision, printed. Soft thresholds cannot have waited their grace period here. */
static int run_once(const options *o)
{
	evictd_config *c = NULL;
	config_error err;
	cg_info cg;
	scanner *sc = NULL;
	const snapshot *snap;
	threshold_state st = { 0 };
	decision d = { 0 };
	sd_event *event = NULL;
	runtime_state *rt = NULL;
	int r;

	r = config_load(o->config_path, o->config_explicit, &c, &err);
	if (r < 0) {
		events_log_config_rejected(&err, NULL);
		return EXIT_FAILURE;
	}
	r = config_apply_overrides(c, &o->ov);
	if (r < 0)
		goto fail;
	r = cg_discover(c->cgroup_root, &cg);
	if (r < 0) {
		log_msg(LOG_ERR, "cgroup root %s: %s", c->cgroup_root, strerror(-r));
		goto fail;
	}
	r = scanner_new(c, &cg, &sc);
	if (r < 0) {
		log_msg(LOG_ERR, "cannot open the cgroup root or proc root (%s): %s", c->proc_root, strerror(-r));
		goto fail;
	}
	derive_fall_rates(c);
	uint64_t now = clock_mono_usec();
	r = scanner_scan(sc, now, &snap);
	if (r < 0)
		goto fail;
	/* One-shot: the disk ranking is always shown, with measured usage. */
	r = scanner_measure_disk(sc, now);
	if (r < 0)
		goto fail;
	int64_t caps[_SIGNAL_MAX];
	for (int i = 0; i < _SIGNAL_MAX; i++)
		caps[i] = snap->node.s[i].known ? snap->node.s[i].capacity : -1;
	log_kubelet_notes(c, caps);
	/*
	 * The runtime, once: its listing (each call's deadline bounds the wait), the pods' writable
	 * layers, and what node-level reclaim would free before any pod is a victim. Nothing is
	 * removed: --once acts on nothing, so images it would remove count as gone.
	 */
	threshold_state probe = { 0 };
	evaluation ev;
	thresholds_evaluate(c, &snap->node, &probe, now, &ev);
	node_reclaim_input node = { 0 };
	runtime_plan plan = { 0 };
	bool dry = c->dry_run;
	c->dry_run = true;
	if (sd_event_new(&event) >= 0 && runtime_state_new(event, c, NULL, NULL, NULL, &rt) >= 0) {
		if (!runtime_enabled(rt))
			log_msg(LOG_NOTICE, "No container runtime (%s): node-level reclaim and writable layers not shown",
			        runtime_describe(rt));
		else if ((r = runtime_list_now(rt, now)) < 0)
			log_msg(LOG_WARNING, "The container runtime at %s did not answer usably (%s): node-level reclaim and "
			        "writable layers not shown", runtime_describe(rt), strerror(-r));
		else
			runtime_prepare(rt, (snapshot *)snap, &ev, NULL, clock_mono_usec(), &node, &plan);
	}
	c->dry_run = dry;
	decide_input in = { .snap = snap, .cfg = c, .now_usec = now, .rank_all = true,
	                    .node = plan.valid ? &node : NULL };
	r = decide_evictions(&in, &st, &d);
	if (r < 0)
		goto fail;
	r = o->json ? report_json(stdout, &cg, c, snap, &d, &plan) : report_text(stdout, &cg, c, snap, &d, &plan);
	if (fflush(stdout) != 0)
		r = -EIO;
	decide_decision_free(&d);
	runtime_state_free(rt);
	sd_event_unref(event);
	scanner_free(sc);
	config_free(c);
	return r < 0 ? EXIT_FAILURE : EXIT_SUCCESS;
fail:
	if (r == -ENOMEM)
		log_msg(LOG_ERR, "out of memory");
	runtime_state_free(rt);
	sd_event_unref(event);
	scanner_free(sc);
	config_free(c);
	return EXIT_FAILURE;
}

/* --dump-config: the configuration the daemon would run with, every key with its origin. */
static int dump_config(const options *o)
{
	evictd_config *c = NULL;
	config_error err;
	int r = config_load(o->config_path, o->config_explicit, &c, &err);
	if (r < 0) {
		events_log_config_rejected(&err, NULL);
		return EXIT_FAILURE;
	}
	r = config_apply_overrides(c, &o->ov);
	if (r == 0) {
		derive_fall_rates(c);
		r = config_out_text(stdout, c, NULL);
	}
	if (fflush(stdout) != 0)
		r = -EIO;
	config_free(c);
	return r < 0 ? EXIT_FAILURE : EXIT_SUCCESS;
}

/* "section key" per line; a signal section lists every signal. The man page test reads this. */
static int dump_config_keys(void)
{
	size_t n;
	const config_key *k = config_keys(&n);
	for (size_t i = 0; i < n; i++) {
		if (strcmp(k[i].key, CONFIG_KEY_SIGNAL) != 0) {
			printf("%s %s\n", k[i].section, k[i].key);
			continue;
		}
		for (int s = 0; s < _SIGNAL_MAX; s++)
			printf("%s %s\n", k[i].section, signal_name((evictd_signal)s));
	}
	return fflush(stdout) == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

static int status_or_reload(const options *o)
{
	/* The status file's path is configured; a broken configuration still has the default. */
	evictd_config *c = NULL;
	config_error err;
	int r = config_load(o->config_path, o->config_explicit, &c, &err);
	if (r < 0 && o->reload) {
		/*
		 * Refused before the signal: `systemctl reload` fails, nothing changes, and the journal
		 * gets the same "configuration rejected" entry (file, line) the daemon would have logged.
		 */
		events_log_config_rejected(&err, "not reloading: the running configuration stays in force");
		return EXIT_FAILURE;
	}
	if (r < 0 && config_new_default(&c) < 0)
		return EXIT_FAILURE;
	int rc = o->reload ? status_cmd_reload(o->reload_pid, c->status_file, NULL, RELOAD_TIMEOUT_USEC)
	                   : status_command(c->status_file, NULL);
	config_free(c);
	return rc;
}

int main(int argc, char **argv)
{
	options o;

	if (parse_args(argc, argv, &o) < 0)
		return EXIT_USAGE;
	/* --once is a command-line tool: its diagnostics belong next to its output, not in the journal. */
	log_setup((o.once || o.dump_config) && o.log == LOGGING_AUTO ? LOGGING_STDERR : o.log);

	if (o.once)
		return run_once(&o);
	if (o.dump_keys)
		return dump_config_keys();
	if (o.dump_config)
		return dump_config(&o);
	if (o.status || o.reload)
		return status_or_reload(&o);

	/*
	 * A shell starts background jobs with SIGINT ignored, and an ignored signal is discarded
	 * even while blocked for the signalfd: `make run &` would then not stop on Ctrl-C/SIGINT.
	 * The daemon handles these itself, so whatever it inherited does not apply.
	 */
	static const int handled[] = { SIGINT, SIGTERM, SIGHUP, SIGUSR1 };
	for (size_t i = 0; i < sizeof(handled) / sizeof(handled[0]); i++)
		(void)signal(handled[i], SIG_DFL);

	daemon_options d = {
		.config_path = o.config_path,
		.config_must_exist = o.config_explicit,
		.overrides = o.ov,
	};
	return daemon_run(&d);
}
