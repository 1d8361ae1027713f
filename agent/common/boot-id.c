/* SPDX-License-Identifier: MIT */
#include "boot-id.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

int boot_id_read(char buf[static 40])
{
	int fd = open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ssize_t k = read(fd, buf, 39);
	int r = k < 0 ? -errno : 0;
	close(fd);
	if (r < 0)
		return r;
	size_t n = (size_t)k;
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		n--;
	buf[n] = '\0';
	return n > 0 ? 0 : -EBADMSG;
}
