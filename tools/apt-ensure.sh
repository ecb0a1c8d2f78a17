#!/usr/bin/env bash
# apt-ensure.sh WHAT CHECK PACKAGE: install Debian's PACKAGE with apt-get unless CHECK (a path
# that must be executable) exists. Shared by the ensure-*.sh scripts `make test` runs; as root
# or through sudo, never through a browser or database vendor's own downloader.
set -euo pipefail

WHAT=$1 CHECK=$2 PACKAGE=$3

if [ -x "$CHECK" ]; then
    echo "ensure-$WHAT: $CHECK present; nothing to do"
    exit 0
fi

if ! command -v apt-get >/dev/null 2>&1; then
    echo "ensure-$WHAT: $CHECK missing and apt-get not available; install Debian's $PACKAGE package" >&2
    exit 1
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1; then
        SUDO="sudo"
    else
        echo "ensure-$WHAT: need root (or sudo) to apt-get install $PACKAGE" >&2
        exit 1
    fi
fi

echo "ensure-$WHAT: $CHECK missing; installing Debian's $PACKAGE with apt-get"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq "$PACKAGE"
if [ ! -x "$CHECK" ]; then
    echo "ensure-$WHAT: apt-get finished but $CHECK is still missing" >&2
    exit 1
fi
echo "ensure-$WHAT: installed $CHECK"
