#!/bin/bash
# libpreempt as an outside controller meets it: the installed tree of `make install` (header,
# shared library with its SONAME symlinks, pkg-config file), a consumer built with
# `pkg-config --cflags --libs libpreempt` and run against the installed library.
. "$(dirname "$0")/../lib.sh"
set -u
stage=$(mktemp -d); trap 'rm -rf "$stage"' EXIT
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"

san=()
nm -D "$BUILD/libpreempt.so.0" 2>/dev/null | grep -q __asan_init && san=(-fsanitize=address,undefined)

# The same steps as the Makefile's install rule for the library part, so this test does not
# rebuild the tree (it runs inside `make check`, with whatever build directory that uses).
install_lib() {
	make -s --no-print-directory B="$BUILD" DESTDIR="$stage" PREFIX=/usr LIBDIR=/usr/lib \
		install-lib >/dev/null
}
ok "install-lib into a staging tree" install_lib
ok "shared library, SONAME symlink and dev symlink installed" \
	test -f "$stage/usr/lib/libpreempt.so.0.1.0" -a -L "$stage/usr/lib/libpreempt.so.0" -a -L "$stage/usr/lib/libpreempt.so"
ok "pkg-config file names the install prefix" grep -qx 'prefix=/usr' "$stage/usr/lib/pkgconfig/libpreempt.pc"

flags() {
	PKG_CONFIG_SYSROOT_DIR="$stage" PKG_CONFIG_LIBDIR="$stage/usr/lib/pkgconfig" \
		pkg-config --cflags --libs libpreempt
}
flags_ok() { [ -n "$(flags)" ]; }
ok "pkg-config --cflags --libs libpreempt" flags_ok
build_consumer() {
	# shellcheck disable=SC2046
	cc -std=c11 -Wall -Wextra -Werror "${san[@]}" -o "$stage/consumer" examples/consumer.c $(flags)
}
ok "a consumer compiles with -Wall -Wextra -Werror against the installed header" build_consumer
run_consumer() {
	out=$(LD_LIBRARY_PATH="$stage/usr/lib" "$stage/consumer") || return 1
	[ "$out" = "node=n1 victims=1 default/batch-a criterion=lowest highest-victim priority" ] ||
		{ echo "# got: $out"; return 1; }
}
ok "the consumer's decision: preempt the priority-0 pod on n1" run_consumer
needs_only_libc() {
	local needed
	needed=$(objdump -p "$stage/usr/lib/libpreempt.so.0.1.0" | awk '/NEEDED/ {print $2}' | grep -v '^libasan\|^libubsan\|^libstdc' | sort | tr '\n' ' ')
	[ "$needed" = "libc.so.6 " ] || { echo "# NEEDED: $needed"; return 1; }
}
ok "libpreempt needs only libc" needs_only_libc
ok "SONAME is libpreempt.so.0" sh -c "objdump -p '$stage/usr/lib/libpreempt.so.0.1.0' | grep -q 'SONAME *libpreempt.so.0$'"
done_testing
