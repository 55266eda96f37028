#!/bin/sh
# Set up hloscope on a fresh machine: Graphviz's `dot` (for `hloscope graph`) and the
# package with its test dependencies. Safe to run again.
set -e
cd "$(dirname "$0")"
if ! command -v dot >/dev/null 2>&1; then
  if command -v apt-get >/dev/null 2>&1; then
    SUDO=""
    [ "$(id -u)" -ne 0 ] && SUDO="sudo"
    $SUDO apt-get update -qq && $SUDO apt-get install -y -qq graphviz >/dev/null
  else
    echo "warning: Graphviz (dot) not found and no apt-get; 'hloscope graph' will write .dot files" >&2
  fi
fi
python3 -m pip install -q -e '.[test]'
