#!/bin/sh
# Set up hloscope on a fresh machine: Graphviz's `dot` (for `hloscope graph` and the
# report's graphs), Chromium (the browser tests of `hloscope report`) and the package with
# its test dependencies. Safe to run again.
set -e
cd "$(dirname "$0")"
missing=""
command -v dot >/dev/null 2>&1 || missing="$missing graphviz"
command -v chromium >/dev/null 2>&1 || missing="$missing chromium"
if [ -n "$missing" ]; then
  if command -v apt-get >/dev/null 2>&1; then
    SUDO=""
    [ "$(id -u)" -ne 0 ] && SUDO="sudo"
    # shellcheck disable=SC2086
    $SUDO apt-get update -qq && $SUDO apt-get install -y -qq $missing >/dev/null
  else
    echo "warning:$missing not found and no apt-get; 'hloscope graph' writes .dot files and" \
         "the browser tests are skipped" >&2
  fi
fi
python3 -m pip install -q -e '.[test]'
# The package's bytecode, now: an editable install writes none, and where
# PYTHONDONTWRITEBYTECODE is set (as on these machines) nothing ever would, so every command
# compiled the modules it imports again (lint of a 4 MB module: 0.60 s -> 0.49 s).
python3 -m compileall -q hloscope >/dev/null
# The compiled core (native/, Rust, issue #37: the parser's line reader, the placement of
# temporaries): built where cargo is; without Rust everything works on the Python route.
if command -v cargo >/dev/null 2>&1; then
  python3 -m pip install -q ./native
else
  echo "note: no Rust toolchain: the compiled core (native/) is not built; the Python route runs, its tests are skipped" >&2
fi
