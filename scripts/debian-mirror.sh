# shellcheck shell=bash
# Sourced by the scripts that build a Debian root tree with mmdebstrap (tests/e2e/image/mkimage.sh,
# tests/fresh/mkrootfs.sh): the package mirror and proxies are whatever this machine's apt uses.

# debian_sources SUITE: one "deb URI SUITE[-updates|-security] COMPONENTS" line per repository
# this machine's apt configuration uses for SUITE (one-line and deb822 sources alike, via apt
# itself): from the index targets, or — when no `apt-get update` has run yet and indextargets
# lists nothing — from the URIs an update would fetch. Prints nothing when there is none.
debian_sources() {
	local suite=$1 targets
	targets=$(apt-get indextargets --format '$(TARGET_OF) $(REPO_URI) $(RELEASE) $(COMPONENT)' \
		'Created-By: Packages' 2>/dev/null | awk '$1 == "deb" { print $2, $3, $4 }')
	[ -n "$targets" ] || targets=$(apt-get update --print-uris 2>/dev/null |
		sed -n "s#^'\(.*/\)dists/\([^/]*\)/\(.*\)/binary-[^/]*/Packages[^']*'.*#\1 \2 \3#p")
	echo "$targets" |
		awk -v s="$suite" 'NF == 3 && $2 ~ ("^" s "(-updates|-security)?$") {
			$0 = "deb " $0
			k = $2 " " $3
			if (!(k in comp)) { order[++n] = k; comp[k] = $4 }
			else if (index(" " comp[k] " ", " " $4 " ") == 0) comp[k] = comp[k] " " $4
		}
		END { for (i = 1; i <= n; i++) print "deb " order[i] " " comp[order[i]] }'
}

# debian_aptopts: fills the array APTOPTS with mmdebstrap --aptopt options for this machine's
# apt proxies (mmdebstrap also writes them into the new tree, so apt-get inside works the same).
debian_aptopts() {
	local k v
	APTOPTS=(--aptopt='Acquire::Languages "none"')
	for k in Acquire::http::Proxy Acquire::https::Proxy; do
		v=$(apt-config dump "$k" 2>/dev/null | awk -v k="$k" '$1 == k { v = $2; gsub(/[";]/, "", v); print v }')
		[ -n "$v" ] && APTOPTS+=(--aptopt="$k \"$v\"")
	done
	return 0
}

# debian_mirror_reachable SOURCES SUITE DIR: the first source's Release file can be fetched.
debian_mirror_reachable() {
	local first
	first=$(echo "$1" | head -n1 | awk '{ print $2 }')
	timeout 60 /usr/lib/apt/apt-helper download-file "${first%/}/dists/$2/Release" \
		"$3/Release" >/dev/null 2>&1
}
