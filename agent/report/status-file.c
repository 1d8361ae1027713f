/* SPDX-License-Identifier: MIT */
#include "status-file.h"

#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

int status_print(const char *path, int out)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	char buf[8192];
	int r = 0;
	size_t total = 0;
	for (;;) {
		ssize_t n = read(fd, buf, sizeof(buf));
		if (n < 0) {
			if (errno == EINTR)
				continue;
			r = -errno;
			break;
		}
		if (n == 0)
			break;
		total += (size_t)n;
		if (total > STATUS_MAX_BYTES) {
			r = -EFBIG;
			break;
		}
		if ((r = atomic_write_all(out, buf, (size_t)n)) < 0)
			break;
	}
	close(fd);
	return r;
}

void status_history_add(status_history *h, const status_decision *d)
{
	h->items[h->next] = *d;
	h->next = (h->next + 1) % STATUS_HISTORY;
	if (h->count < STATUS_HISTORY)
		h->count++;
}

status_decision *status_history_find(status_history *h, const char *uid)
{
	for (size_t i = 0; i < h->count; i++) {
		status_decision *d = &h->items[(h->next + STATUS_HISTORY - 1 - i) % STATUS_HISTORY];
		if (strcmp(d->uid, uid) == 0)
			return d;
	}
	return NULL;
}

const status_decision *status_history_get(const status_history *h, size_t i)
{
	if (i >= h->count)
		return NULL;
	return &h->items[(h->next + STATUS_HISTORY - 1 - i) % STATUS_HISTORY];
}
