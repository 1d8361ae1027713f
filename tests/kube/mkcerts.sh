#!/bin/sh
# Makes the test PKI for the stand-in API server (tests/kube/apiserver.py) with the openssl CLI:
# a CA, server certificates for 127.0.0.1/localhost (valid and expired), client certificates for
# a node (CN=system:node:<node>, O=system:nodes), an admin (O=system:masters), an expired node
# certificate, one signed by an unknown CA, and a token file in kube-apiserver's
# --token-auth-file format.  Nothing here is secret: it lives only for one test run.
# Usage: mkcerts.sh DIR [NODE]        (NODE defaults to node-1)
set -eu
dir=${1:?usage: mkcerts.sh DIR [NODE]}
node=${2:-node-1}
mkdir -p "$dir"
cd "$dir"
work=$(mktemp -d ./.pki.XXXXXX)
trap 'rm -rf "$work"' EXIT

# `openssl ca` is the CLI's only way to set arbitrary validity dates (expired certificates).
cat >"$work/ca.cnf" <<CNF
[ca]
default_ca = testca
[testca]
dir = $work
database = $work/index.txt
new_certs_dir = $work
serial = $work/serial
default_md = sha256
policy = anything
copy_extensions = none
unique_subject = no
[anything]
commonName = supplied
organizationName = optional
[server]
basicConstraints = CA:FALSE
keyUsage = critical, digitalSignature, keyEncipherment
extendedKeyUsage = serverAuth
subjectAltName = IP:127.0.0.1, DNS:localhost
[client]
basicConstraints = CA:FALSE
keyUsage = critical, digitalSignature, keyEncipherment
extendedKeyUsage = clientAuth
CNF
: >"$work/index.txt"
echo 1000 >"$work/serial"

q() { "$@" >/dev/null 2>&1 || { echo "mkcerts: failed: $*" >&2; "$@" >&2; exit 1; }; }

mkca() {	# mkca NAME CN
	q openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -sha256 \
		-keyout "$1.key" -out "$1.crt" -days 2 -subj "/CN=$2" \
		-addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign"
}
# issue NAME SUBJECT EXTENSIONS [START END] [CA]
issue() {
	q openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
		-keyout "$1.key" -out "$work/$1.csr" -subj "$2"
	if [ -n "${4:-}" ]; then dates="-startdate $4 -enddate $5"; else dates="-days 2"; fi
	# shellcheck disable=SC2086
	q openssl ca -batch -config "$work/ca.cnf" -extensions "$3" -cert "${6:-ca}.crt" \
		-keyfile "${6:-ca}.key" $dates -in "$work/$1.csr" -out "$1.crt" -notext
	chmod 600 "$1.key"
}
mkca ca "evictd-test-ca"
mkca rogue-ca "unknown-ca"
issue server "/CN=kube-apiserver" server
issue server-expired "/CN=kube-apiserver" server 20200101000000Z 20200102000000Z
issue node "/O=system:nodes/CN=system:node:$node" client
issue admin "/O=system:masters/CN=kubernetes-admin" client
issue expired "/O=system:nodes/CN=system:node:$node" client 20200101000000Z 20200102000000Z
issue rogue "/O=system:masters/CN=rogue-admin" client "" "" rogue-ca
rm -f rogue-ca.key
# kube-apiserver --token-auth-file: token,user,uid,"group1,group2"
cat >tokens.csv <<CSV
admin-token-0123456789,kubernetes-admin,uid-admin,"system:masters"
node-token-0123456789,system:node:$node,uid-node,"system:nodes"
user-token-0123456789,jane,uid-jane,"developers"
CSV
echo "$node" >node-name
