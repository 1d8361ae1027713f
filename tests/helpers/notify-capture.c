/* SPDX-License-Identifier: MIT */
/*
 * Plays systemd's side of sd_notify in tests: binds the abstract AF_UNIX datagram socket NAME
 * (NOTIFY_SOCKET=@NAME for the daemon under test) and appends every message to FILE, one
 * "pid<TAB>message" line per datagram line (READY=1, STATUS=..., WATCHDOG=1, ...).
 *
 *   notify-capture NAME FILE      (runs until SIGTERM; FILE starts with "listening")
 */
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: notify-capture NAME FILE\n");
		return 2;
	}
	const char *name = argv[1];
	int s = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	size_t n = strlen(name);
	if (s < 0 || n + 1 > sizeof(sa.sun_path)) {
		perror("socket");
		return 1;
	}
	memcpy(sa.sun_path + 1, name, n);
	if (bind(s, (struct sockaddr *)&sa, (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + n)) < 0) {
		perror("bind");
		return 1;
	}
	int one = 1;
	setsockopt(s, SOL_SOCKET, SO_PASSCRED, &one, sizeof(one));
	FILE *f = fopen(argv[2], "a");
	if (!f) {
		perror(argv[2]);
		return 1;
	}
	setvbuf(f, NULL, _IOLBF, 0);
	fprintf(f, "listening\n");
	for (;;) {
		char buf[4096];
		char ctl[CMSG_SPACE(sizeof(struct ucred))];
		struct iovec iov = { buf, sizeof(buf) - 1 };
		struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl, .msg_controllen = sizeof(ctl) };
		ssize_t r = recvmsg(s, &mh, 0);
		if (r < 0)
			continue;
		buf[r] = '\0';
		int pid = 0;
		for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c))
			if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_CREDENTIALS)
				pid = ((struct ucred *)CMSG_DATA(c))->pid;
		for (char *line = strtok(buf, "\n"); line; line = strtok(NULL, "\n"))
			fprintf(f, "%d\t%s\n", pid, line);
	}
}
