#!/usr/bin/env bash
# Installs Debian's chromium for the browser tests (tests marked `browser`), if missing.
# Idempotent: does nothing when /usr/bin/chromium exists. Never downloads a browser build
# through Playwright; the tests drive this system binary.
set -euo pipefail

CHROMIUM=/usr/bin/chromium

if [ -x "$CHROMIUM" ]; then
    echo "ensure-chromium: $CHROMIUM present; nothing to do"
    exit 0
fi

if ! command -v apt-get >/dev/null 2>&1; then
    echo "ensure-chromium: $CHROMIUM missing and apt-get not available; install Debian's chromium package" >&2
    exit 1
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1; then
        SUDO="sudo"
    else
        echo "ensure-chromium: need root (or sudo) to apt-get install chromium" >&2
        exit 1
    fi
fi

echo "ensure-chromium: $CHROMIUM missing; installing Debian's chromium with apt-get"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq chromium
if [ ! -x "$CHROMIUM" ]; then
    echo "ensure-chromium: apt-get finished but $CHROMIUM is still missing" >&2
    exit 1
fi
echo "ensure-chromium: installed $CHROMIUM"
