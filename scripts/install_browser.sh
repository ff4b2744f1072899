#!/usr/bin/env bash
# Install the headless browser used by `make browser-test` (tests_browser/).
#
# Idempotent: does nothing but print the versions when /usr/bin/chromium and
# /usr/bin/chromedriver are already there. Otherwise installs Debian's `chromium`
# and `chromium-driver` packages with apt-get (non-interactive, no standard input
# needed). Needs root (or sudo without a password). Test tools' own browser
# downloads (e.g. `playwright install`) are not used: the tests drive
# /usr/bin/chromium directly.
set -euo pipefail

CHROMIUM=${CHROMIUM:-/usr/bin/chromium}
DRIVER=${CHROMEDRIVER:-/usr/bin/chromedriver}

if [ -x "$CHROMIUM" ] && [ -x "$DRIVER" ]; then
    echo "chromium already installed"
else
    if ! command -v apt-get >/dev/null 2>&1; then
        echo "error: $CHROMIUM is missing and apt-get is not available;" \
             "install Chromium by hand and set CHROMIUM=/path/to/chromium" >&2
        exit 1
    fi
    SUDO=""
    if [ "$(id -u)" -ne 0 ]; then
        if command -v sudo >/dev/null 2>&1; then
            SUDO="sudo -n"
        else
            echo "error: installing chromium needs root (or sudo)" >&2
            exit 1
        fi
    fi
    export DEBIAN_FRONTEND=noninteractive
    $SUDO apt-get update -q </dev/null
    $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
        --no-install-recommends chromium chromium-driver fonts-dejavu-core </dev/null
fi

# (Debian's launcher may print a harmless "[: unexpected operator" from
# /etc/chromium.d/dev-shm when /dev/shm is mounted twice; hide it.)
"$CHROMIUM" --version 2>/dev/null
if [ -x "$DRIVER" ]; then
    "$DRIVER" --version
fi
