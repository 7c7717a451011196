#!/bin/sh
# The certificates of docker-compose.yml's mutual TLS to Temporal: a private CA, the Temporal server's certificate
# (name `temporal`, the compose service every client dials; also its client certificate between its own services),
# and one client certificate for the orchestrator's API and workers, the Temporal UI and the admin tools. Nothing
# without a certificate from this CA reaches the frontend, so nothing else on the compose network can start
# workflows or signal decisions.
#
#   sh scripts/temporal-tls-certs.sh [dir]      # default .data/temporal-tls; existing files are kept
#
# ca.key stays in the directory, mode 0600, and is mounted into no container; the other keys are 0644 because the
# Temporal images run as users of their own: compose mounts each file only into the services that use it. In
# production use your CA, certificates per service, and rotate them (the processes read the files at start).
set -eu
dir=${1:-.data/temporal-tls}
mkdir -p "$dir"
cd "$dir"
days=${TEMPORAL_TLS_DAYS:-365}

if [ ! -f ca.key ]; then
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days "$days" \
    -subj /CN=travel-rule-orchestrator-temporal-ca -keyout ca.key -out ca.pem 2>/dev/null
fi

# issue <name> <common name> <extensions>: a key and a certificate signed by the CA, unless they exist.
issue() {
  [ -f "$1.pem" ] && return 0
  openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -subj "/CN=$2" -keyout "$1.key" -out "$1.csr" 2>/dev/null
  printf '%s\n' "$3" > "$1.ext"
  openssl x509 -req -in "$1.csr" -CA ca.pem -CAkey ca.key -CAcreateserial -days "$days" -extfile "$1.ext" -out "$1.pem" 2>/dev/null
  rm -f "$1.csr" "$1.ext"
}
issue server temporal "subjectAltName=DNS:temporal,DNS:localhost,IP:127.0.0.1
keyUsage=digitalSignature
extendedKeyUsage=serverAuth,clientAuth"
issue client travel-rule-orchestrator "keyUsage=digitalSignature
extendedKeyUsage=clientAuth"

chmod 600 ca.key
chmod 644 ca.pem server.pem server.key client.pem client.key
echo "Temporal mTLS certificates in $(pwd)"
