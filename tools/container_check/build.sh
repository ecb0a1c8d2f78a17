#!/usr/bin/env bash
# Build the Dockerfile for real and check the image: the demo runs, and an image post is read
# (OCR) and matched to a fact-check with the network cut. Run from the repository root, as root.
#
#   tools/container_check/build.sh
#
# Where Docker Hub cannot be reached (this project's development machines reach PyPI and
# Debian's archive only), STANDIN=1 first makes stand-ins for the two base images the project
# uses: python:3.11-slim (Debian bookworm by debootstrap, Debian's Python 3.11 as a venv in
# /usr/local, as the official image keeps its Python) and postgres:15 (postgres/Containerfile),
# and builds with torch from a local wheel folder (TORCH_WHEELS) instead of PyTorch's index.
# The image is built with buildah (no daemon needed); BUILDER=docker uses `docker build`.
set -euo pipefail
builder=${BUILDER:-buildah}
if [ "${STANDIN:-0}" = 1 ]; then
    root=$(mktemp -d /var/tmp/pyslim.XXXX)
    debootstrap --variant=minbase bookworm "$root" http://deb.debian.org/debian >/dev/null
    cp /etc/resolv.conf "$root/etc/resolv.conf"
    # The machine's CA bundle: a TLS-inspecting proxy in front of PyPI is trusted as on the host.
    cp /etc/ssl/certs/ca-certificates.crt "$root/ca-bundle.crt"
    chroot "$root" sh -c 'apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive \
        apt-get install -y -q --no-install-recommends python3 python3-venv ca-certificates \
        >/dev/null && python3 -m venv /usr/local && apt-get clean && rm -rf /var/lib/apt/lists/*'
    ctr=$(buildah from scratch)
    cp -a "$root/." "$(buildah mount "$ctr")/"
    buildah umount "$ctr" >/dev/null
    buildah config --env PATH=/usr/local/bin:/usr/local/sbin:/usr/sbin:/usr/bin:/sbin:/bin \
        --env LANG=C.UTF-8 --env PIP_CERT=/ca-bundle.crt --env SSL_CERT_FILE=/ca-bundle.crt \
        --cmd python3 "$ctr"
    buildah commit -q "$ctr" docker.io/library/python:3.11-slim >/dev/null
    buildah rm "$ctr" >/dev/null
    rm -rf "$root"
    buildah bud -q --isolation chroot --network host --pull=never \
        -t docker.io/library/postgres:15 tools/container_check/postgres >/dev/null
    wheels=${TORCH_WHEELS:-/opt/wheels}
    set -- --isolation chroot --network host --pull=never -v "$wheels:$wheels:ro" \
        --build-arg TORCH_INDEX_URL=https://pypi.org/simple --build-arg PIP_FIND_LINKS="$wheels"
fi
start=$(date +%s)
if [ "$builder" = docker ]; then docker build -t factnote "$@" .; else buildah bud -t factnote "$@" .; fi
echo "built factnote in $(( $(date +%s) - start )) s"

# The image's own checks, as its user, in /data: the demo, then an image post offline.
ctr=$(buildah from localhost/factnote)
trap 'buildah rm "$ctr" >/dev/null' EXIT
buildah copy "$ctr" tools/container_check/image_post_check.sh /tmp/image_post_check.sh >/dev/null
buildah run --isolation chroot "$ctr" -- factnote demo | tail -3
unshare -n buildah run --isolation chroot "$ctr" -- sh /tmp/image_post_check.sh
