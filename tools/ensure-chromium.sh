#!/usr/bin/env bash
# Installs Debian's chromium for the browser tests (tests marked `browser`), if missing.
# Never downloads a browser build through Playwright; the tests drive this system binary.
exec bash "$(dirname "$0")/apt-ensure.sh" chromium /usr/bin/chromium chromium
