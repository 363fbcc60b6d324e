#!/usr/bin/env bash
# The one-way rule of system/ (docs/design.md, "The one-way rule"): nothing
# below the collective engine includes it, directly or through another header,
# or names it; the context and the transport do not include the NPU layer.
# Usage: scripts/system_one_way_check.sh CXX SOURCE_DIR
set -euo pipefail
CXX="$1"; SRC="$2"
fail=0
deps() { "$CXX" -std=c++20 -I "$SRC" -MM -MG "$SRC/$1" | tr ' \\' '\n\n' | grep -v '^$' | tail -n +2; }
for f in system/npu_sys.h system/npu_sys.cc system/chunk.h system/chunk.cc system/algorithm.h system/algorithm.cc \
         system/algorithms.cc system/phase_spec.h system/clients.h system/chunk_store.h system/chunk_context.h \
         system/message_transport.h system/message_transport.cc; do
  if deps "$f" | grep -q 'system/collective_engine.h'; then
    echo "$f includes system/collective_engine.h (directly or through another header)"; fail=1
  fi
  if grep -v '^ *//' "$SRC/$f" | grep -q 'CollectiveEngine'; then
    echo "$f names CollectiveEngine"; fail=1
  fi
done
for f in system/chunk_context.h system/message_transport.h system/message_transport.cc; do
  if deps "$f" | grep -q 'system/npu_sys.h\|system/chunk.h\|system/algorithm.h\|system/chunk_store.h'; then
    echo "$f includes the NPU layer (system/npu_sys.h, chunk.h, algorithm.h or chunk_store.h)"; fail=1
  fi
done
[ "$fail" = 0 ] && echo "system/: one way (engine -> store -> chunk -> algorithm; engine -> npu_sys; all -> context; engine -> transport)"
exit "$fail"
