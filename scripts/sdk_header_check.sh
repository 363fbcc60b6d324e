#!/usr/bin/env bash
# The plugin ABI header stands alone: plugins/sdk/orrery_plugin.h compiles with
# `-I plugins/sdk` as the only include path (C++17 and C++20), and everything
# it pulls in is the C++ standard library (or the C library under it).
# Usage: scripts/sdk_header_check.sh CXX SOURCE_DIR
set -euo pipefail
CXX="$1"; SRC="$2"
W=$(mktemp -d /tmp/orrery-sdk-header-XXXXXX)
trap 'rm -rf "$W"' EXIT
# A plugin that provides nothing: uses every name the header declares.
cat > "$W/tu.cc" <<'TU'
#include "orrery_plugin.h"
namespace {
bool Register(orrery::PluginRegistries* r, char* error, size_t n) {
  if (n > 0) error[0] = '\0';
  return r != nullptr && r->network == nullptr && r->collectives == nullptr && r->memory == nullptr;
}
const OrreryPluginInfo kInfo = {ORRERY_PLUGIN_ABI_VERSION, "nothing", "0", &Register};
}  // namespace
extern "C" ORRERY_EXPORT const OrreryPluginInfo* orrery_plugin_info(void) { return &kInfo; }
TU
for std in c++17 c++20; do
  if ! "$CXX" -std=$std -Wall -Wextra -Werror -fsyntax-only -H -I "$SRC/plugins/sdk" "$W/tu.cc" 2> "$W/headers.$std"; then
    grep -Ev '^\.+ ' "$W/headers.$std" >&2 || true
    echo "FAIL ($std): plugins/sdk/orrery_plugin.h does not compile with -I plugins/sdk alone" >&2
    exit 1
  fi
  # -H prints one line per header: dots (the depth), a space, the path.
  grep -E '^\.+ ' "$W/headers.$std" | sed -E 's/^\.+ //' > "$W/paths.$std"
  standard='(/c\+\+/|^/usr/lib/gcc/[^/]+/[^/]+/include/|^/usr/include/[^/]+\.h$|^/usr/include/(x86_64-linux-gnu|aarch64-linux-gnu|bits|gnu|sys|asm|asm-generic|linux)/|/plugins/sdk/orrery_plugin\.h$)'
  if grep -Ev "$standard" "$W/paths.$std"; then
    echo "FAIL ($std): plugins/sdk/orrery_plugin.h includes the headers above, outside the standard library" >&2
    exit 1
  fi
  grep -q '/plugins/sdk/orrery_plugin\.h$' "$W/paths.$std"
done
echo "SDK header check passed: $(wc -l < "$W/paths.c++20") headers, all standard"
