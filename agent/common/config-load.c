/* SPDX-License-Identifier: MIT */
/*
 * Configuration loader: inih over a line-counting reader, drop-ins in strcmp() order,
 * transactional result. The keys are config-keys.c's, the values config-values.c's.
 */
#include "config-parse.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ini.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Records the first error of this parse; returns 0 so that inih counts the line as an error. */
int config_fail(parse_state *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void check_raw_line(parse_state *p, const char *buf)
{
	const char *s = buf;
	size_t n;

	p->indented = *s == ' ' || *s == '\t';
	while (*s == ' ' || *s == '\t')
		s++;
	if (*s == '[') {
		const char *e = strchr(s, ']');
		n = e ? (size_t)(e - s - 1) : strlen(s + 1);
		if (n > INI_NAME_MAX && !p->bad_line) {
			p->bad_line = p->lineno;
			snprintf(p->bad_msg, sizeof(p->bad_msg), "section name longer than %d characters",
			         INI_NAME_MAX);
		} else if (e && !p->bad_line && !config_known_section(s + 1, n)) {
			/* Checked here, at the header: an unknown section without keys must not pass either. */
			p->bad_line = p->lineno;
			snprintf(p->bad_msg, sizeof(p->bad_msg), "unknown section [%.*s]", (int)(n > 60 ? 60 : n), s + 1);
		}
	} else if (*s && *s != ';' && *s != '#' && !p->indented) {
		n = strcspn(s, "=:");
		if (s[n] && n > INI_NAME_MAX && !p->bad_line) {
			p->bad_line = p->lineno;
			snprintf(p->bad_msg, sizeof(p->bad_msg), "key name longer than %d characters",
			         INI_NAME_MAX);
		}
	}
}

/*
 * fgets-style reader for ini_parse_stream(): counts lines (portable line numbers for the
 * handler) and turns inih's silent truncation of long lines into an error.
 */
static char *reader(char *buf, int size, void *stream)
{
	parse_state *p = stream;
	size_t n;
	bool overlong = false;

	if (p->text) {
		const char *s = p->text + p->text_off;
		if (!*s)
			return NULL;
		size_t len = strcspn(s, "\n");
		size_t take = len;
		if (take > (size_t)size - 2) {
			take = (size_t)size - 2;
			overlong = true;
		}
		memcpy(buf, s, take);
		buf[take] = '\n';
		buf[take + 1] = '\0';
		p->text_off += len + (s[len] == '\n');
		p->lineno++;
	} else {
		if (!fgets(buf, size, p->f))
			return NULL;
		p->lineno++;
		n = strlen(buf);
		if (n > 0 && buf[n - 1] != '\n' && !feof(p->f)) {
			int ch;
			overlong = true;
			while ((ch = fgetc(p->f)) != EOF && ch != '\n')
				;
		}
	}
	if (overlong && !p->bad_line) {
		p->bad_line = p->lineno;
		snprintf(p->bad_msg, sizeof(p->bad_msg), "line longer than %d characters", size - 3);
	}
	check_raw_line(p, buf);
	return buf;
}

static int handler(void *user, const char *section, const char *name, const char *value)
{
	parse_state *p = user;
	bool continuation = p->indented && strcmp(section, p->prev_section) == 0 &&
	                    strcmp(name, p->prev_name) == 0;

	snprintf(p->prev_section, sizeof(p->prev_section), "%s", section);
	snprintf(p->prev_name, sizeof(p->prev_name), "%s", name);

	if (p->bad_line == p->lineno)
		return 0; /* the reader already failed this line; its text is not what the user wrote */
	if (continuation && !config_is_list_key(section, name))
		return config_fail(p, "indented line continues \"%s\": only pods and exec take several lines", name);
	if (!continuation) {
		char key[100];
		snprintf(key, sizeof(key), "%s\n%s", section, name);
		for (size_t i = 0; i < p->n_seen; i++)
			if (strcmp(p->seen[i], key) == 0)
				return config_fail(p, "duplicate key \"%s\" in section [%s]", name, section);
		if (p->n_seen < ELEMENTSOF(p->seen))
			memcpy(p->seen[p->n_seen++], key, sizeof(key));
	}
	if (!*name)
		return config_fail(p, "missing key name");
	if (!*value)
		return config_fail(p, "[%s] %s: missing value", section, name);
	if (config_known_section(section, strlen(section)) && !config_known_key(section, name))
		return config_fail(p, "unknown key \"%s\" in section [%s]", name, section);

	if (strcmp(section, "agent") == 0 || strcmp(section, "kubernetes") == 0 ||
	    strcmp(section, "eviction") == 0) {
		int r = section[0] == 'a' ? config_handle_agent(p, name, value, continuation)
		      : section[0] == 'k' ? config_handle_kubernetes(p, name, value)
		                          : config_handle_eviction(p, name, value);
		int i = config_key_index(section, name);
		/* A list continued on indented lines keeps the line it started on. */
		if (r && i >= 0 && !continuation)
			snprintf(p->c->key_origin[i], sizeof(p->c->key_origin[i]), "%s:%u", p->fname, p->lineno);
		return r;
	}
	if (strncmp(section, "priority-class ", 15) == 0) {
		const char *cname = section + 15;
		if (!pp_is_dns_subdomain(cname))
			return config_fail(p, "[%s]: \"%s\" is not a valid PriorityClass name (DNS subdomain)", section, cname);
		return config_handle_class(p, cname, name, value);
	}
	if (strcmp(section, "eviction-hard") == 0 || strcmp(section, "eviction-soft") == 0 ||
	    strcmp(section, "eviction-minimum-reclaim") == 0 ||
	    strcmp(section, "eviction-soft-grace-period") == 0) {
		evictd_signal s = signal_from_name(name);
		if (s == _SIGNAL_INVALID)
			return config_fail(p, "unknown signal \"%s\" in section [%s]", name, section);
		switch (section[9]) {
		case 'h':
			p->hard_explicit[s] = true;
			if (signal_is_psi(s) && !config_psi_name_used(p, s, false))
				return 0;
			return config_parse_threshold(p, section, s, value, false, &p->c->hard[s]);
		case 'm':
			p->min_reclaim_explicit[s] = true;
			return config_parse_threshold(p, section, s, value, true, &p->c->min_reclaim[s]);
		default:
			break;
		}
		if (section[13] == '\0') {
			p->soft_explicit[s] = true;
			return config_parse_threshold(p, section, s, value, false, &p->c->soft[s]);
		}
		if (!config_parse_duration_usec(p, name, value, &p->c->soft_grace_usec[s]))
			return 0;
		p->c->soft_grace_set[s] = true;
		snprintf(p->c->soft_grace_origin[s], sizeof(p->c->soft_grace_origin[s]), "%s:%u", p->fname, p->lineno);
		return 1;
	}
	if (strncmp(section, "priority-class", 14) == 0)
		return config_fail(p, "[%s]: expected [priority-class NAME]", section);
	return config_fail(p, "unknown section [%s]", section);
}

static int parse_one(parse_state *p)
{
	int r;

	p->lineno = 0;
	p->bad_line = 0;
	p->n_seen = 0;
	p->prev_section[0] = p->prev_name[0] = '\0';
	r = ini_parse_stream(reader, p, handler, p);
	if (p->bad_line && (p->err->msg[0] == '\0' || p->bad_line <= p->err->line))
		config_set_error(p->err, p->fname, p->bad_line, "%s", p->bad_msg);
	else if (r > 0 && p->err->msg[0] == '\0')
		config_set_error(p->err, p->fname, (unsigned)r, "syntax error (expected [section], key = value or a comment)");
	else if (r < 0 && p->err->msg[0] == '\0')
		config_set_error(p->err, p->fname, 0, "%s", r == -2 ? "out of memory" : "cannot read");
	if (p->err->msg[0])
		return r == -2 ? -ENOMEM : -EINVAL;
	return 0;
}

static int parse_path(parse_state *p, const char *path, bool missing_ok)
{
	int fd, r;
	struct stat st;

	/*
	 * O_NONBLOCK: opening a FIFO for reading blocks until a writer appears, which would hang
	 * startup or a reload. Symlinks are followed on purpose (configuration management links files
	 * into /etc); what they point to must be a regular file.
	 */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0) {
		r = -errno;
		if (r == -ENOENT && missing_ok)
			return 0;
		config_set_error(p->err, path, 0, "cannot open: %s", strerror(-r));
		return r;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		config_set_error(p->err, path, 0, "not a regular file");
		return -EINVAL;
	}
	if (st.st_size > CONFIG_FILE_MAX) {
		close(fd);
		config_set_error(p->err, path, 0, "larger than %d bytes (%lld)", CONFIG_FILE_MAX, (long long)st.st_size);
		return -EFBIG;
	}
	if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) < 0) {
		r = -errno;
		close(fd);
		config_set_error(p->err, path, 0, "cannot read: %s", strerror(-r));
		return r;
	}
	p->f = fdopen(fd, "r");
	if (!p->f) {
		close(fd);
		config_set_error(p->err, path, 0, "out of memory");
		return -ENOMEM;
	}
	p->fname = path;
	r = parse_one(p);
	fclose(p->f);
	p->f = NULL;
	if (r == 0) {
		size_t old = p->c->sources ? strlen(p->c->sources) : 0;
		char *s = realloc(p->c->sources, old + strlen(path) + 2);
		if (!s)
			return -ENOMEM;
		if (old)
			s[old++] = ' ';
		strcpy(s + old, path);
		p->c->sources = s;
	}
	return r;
}

static int conf_filter(const struct dirent *de)
{
	size_t n = strlen(de->d_name);
	return de->d_name[0] != '.' && n > 5 && strcmp(de->d_name + n - 5, ".conf") == 0;
}

/* strcmp(), not strcoll(): the order of drop-ins must not depend on the locale. */
static int cmp_name(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*a)->d_name, (*b)->d_name);
}

static int load_dropins(parse_state *p, const char *dir)
{
	struct dirent **names = NULL;
	int n, r = 0;

	n = scandir(dir, &names, conf_filter, cmp_name);
	if (n < 0) {
		r = -errno;
		if (r == -ENOENT || r == -ENOTDIR)
			return 0;
		config_set_error(p->err, dir, 0, "cannot read drop-in directory: %s", strerror(-r));
		return r;
	}
	for (int i = 0; i < n; i++) {
		char path[PATH_MAX];
		struct stat st;
		/*
		 * Directories are skipped (as systemd does for its drop-ins); anything else that is not
		 * a regular file (a FIFO, a dangling link) is an error from parse_path, never a hang.
		 */
		if (r == 0 && snprintf(path, sizeof(path), "%s/%s", dir, names[i]->d_name) < (int)sizeof(path) &&
		    !(stat(path, &st) == 0 && S_ISDIR(st.st_mode)))
			r = parse_path(p, path, false);
		free(names[i]);
	}
	free(names);
	return r;
}

static int load(const char *main_path, bool must_exist, const char *text, evictd_config **ret,
                config_error *err)
{
	config_error dummy;
	evictd_config *c = NULL;
	parse_state p = { 0 };
	int r;

	if (!err)
		err = &dummy;
	memset(err, 0, sizeof(*err));
	r = config_new_default(&c);
	if (r < 0) {
		config_set_error(err, main_path, 0, "out of memory");
		return r;
	}
	p.c = c;
	p.err = err;
	if (text) {
		p.text = text;
		p.fname = main_path;
		r = parse_one(&p);
	} else {
		r = parse_path(&p, main_path, !must_exist);
		if (r == 0) {
			char dir[PATH_MAX];
			if (snprintf(dir, sizeof(dir), "%s.d", main_path) >= (int)sizeof(dir)) {
				config_set_error(err, main_path, 0, "path too long");
				r = -ENAMETOOLONG;
			} else
				r = load_dropins(&p, dir);
		}
	}
	if (r == 0)
		r = config_merge_kubelet(&p);
	if (r == 0)
		r = config_finalize(&p);
	if (r < 0) {
		config_free(c);
		return r;
	}
	*ret = c;
	return 0;
}

int config_load(const char *main_path, bool must_exist, evictd_config **ret, config_error *err)
{
	return load(main_path ? main_path : EVICTD_CONFIG_PATH, must_exist, NULL, ret, err);
}

int config_load_string(const char *text, const char *name, evictd_config **ret, config_error *err)
{
	return load(name ? name : "<string>", true, text ? text : "", ret, err);
}

int config_reload(evictd_config **current, const char *main_path, bool must_exist,
                  const config_overrides *ov, config_error *err)
{
	evictd_config *n = NULL;
	int r = config_load(main_path, must_exist, &n, err);

	if (r < 0)
		return r;
	r = config_apply_overrides(n, ov);
	if (r < 0) {
		config_free(n);
		return r;
	}
	config_free(*current);
	*current = n;
	return 0;
}

