#!/usr/bin/env bash
# README command 1: set up, build, and run the embedded default simulation.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh run build
exec build/apps/orrery run --example=default "$@"
