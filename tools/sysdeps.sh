#!/usr/bin/env bash
# Install the system packages the course needs, or say how to.
#   bubblewrap            grading sandbox
#   chromium (+driver)    browser test of the book
#   fonts-nanum           Korean font for matplotlib figures in the book (book/matplotlibrc)
#   libjs-mathjax         MathJax 2 served from the built book (no CDN; book/_ext/coursebook.py copies it)
#   postgresql            server for the test of a PostgreSQL gradebook (tests/instructor/test_cluster.py)
set -euo pipefail
need=()
command -v bwrap >/dev/null 2>&1 || need+=(bubblewrap)
command -v chromium >/dev/null 2>&1 || need+=(chromium chromium-driver)
command -v chromedriver >/dev/null 2>&1 || [[ " ${need[*]-} " == *" chromium-driver "* ]] || need+=(chromium-driver)
[ -f /usr/share/fonts/truetype/nanum/NanumGothic.ttf ] || need+=(fonts-nanum)
[ -f /usr/share/javascript/mathjax/MathJax.js ] || need+=(libjs-mathjax)
command -v initdb >/dev/null 2>&1 || compgen -G "/usr/lib/postgresql/*/bin/initdb" >/dev/null \
    || need+=(postgresql)
[ ${#need[@]} -eq 0 ] && exit 0
if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "Installing system packages: ${need[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >/dev/null
    apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
else
    echo "Missing system packages: ${need[*]}" >&2
    echo "Install them first, e.g.: sudo apt-get install ${need[*]}" >&2
    exit 1
fi
