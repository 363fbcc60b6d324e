#include "extern/trace_sniff.h"

#include <algorithm>

namespace orrery {

namespace {

bool IsText(unsigned char c) { return c >= 0x20 || c == '\n' || c == '\r' || c == '\t'; }

// The string value of "key" in the JSON text, when it is one (no escapes, at most 64 bytes).
std::optional<std::string> StringValue(std::string_view text, std::string_view key) {
  const size_t k = text.find("\"" + std::string(key) + "\"");
  if (k == std::string_view::npos) return std::nullopt;
  size_t i = k + key.size() + 2;
  while (i < text.size() && (text[i] == ' ' || text[i] == ':' || text[i] == '\n' || text[i] == '\t')) ++i;
  if (i >= text.size() || text[i] != '"') return std::nullopt;
  const size_t end = text.find('"', i + 1);
  if (end == std::string_view::npos || end - i - 1 > 64) return std::nullopt;
  std::string v(text.substr(i + 1, end - i - 1));
  if (!std::all_of(v.begin(), v.end(), [](char c) { return IsText(static_cast<unsigned char>(c)) && c != '\\'; })) {
    return std::nullopt;
  }
  return v;
}

bool Has(std::string_view text, std::string_view key) { return text.find("\"" + std::string(key) + "\"") != text.npos; }

constexpr const char* kNotATrace = ", not a Chakra trace (.et files are binary protobuf records); ";

std::string Convert(std::string_view input) {
  return "chakra_converter PyTorch --input " + std::string(input) + " --output PREFIX.<rank>.et";
}

std::string DescribeJson(std::string_view text, std::string_view file) {
  if (Has(text, "traceEvents")) {
    return std::string("a Kineto (PyTorch profiler) device trace (JSON with \"traceEvents\")") + kNotATrace +
           "link it with its host execution trace, then convert the result: chakra_trace_link --rank R "
           "--chakra-host-trace HOST.json --chakra-device-trace " +
           std::string(file) + " --output-file LINKED.json, then " + Convert("LINKED.json");
  }
  if (Has(text, "nodes") && Has(text, "schema")) {
    const std::string schema = StringValue(text, "schema").value_or("?");
    if (Has(text, "exclusive_dur") || Has(text, "inclusive_dur")) {
      return "a linked PyTorch host + device trace (JSON, schema " + schema + ", as chakra_trace_link writes it)" +
             kNotATrace + "convert it: " + Convert(file);
    }
    return "a PyTorch host execution trace (JSON, schema " + schema + ")" + kNotATrace +
           "link it with its Kineto device trace for the GPU kernels (chakra_trace_link --rank R --chakra-host-trace " +
           std::string(file) +
           " --chakra-device-trace KINETO.json --output-file LINKED.json), then convert it: " + Convert("LINKED.json") +
           " (or convert it alone, host operators only: " + Convert(file) +
           "; the converter needs schema 1.0.2-chakra.0.0.4 or later)";
  }
  if (Has(text, "data_deps") || Has(text, "ctrl_deps") || Has(text, "dataDeps") || Has(text, "ctrlDeps") ||
      text.find("_NODE\"") != std::string_view::npos) {
    return std::string("a Chakra trace as JSON (orrery trace to-json, or chakra_jsonizer)") + kNotATrace +
           "turn the lines of orrery trace to-json back with: orrery trace from-json " + std::string(file) +
           " --out=PREFIX.<rank>.et (chakra_jsonizer's output has no way back: use the .et it was made from)";
  }
  return std::string("a JSON file") + kNotATrace +
         "traces of PyTorch runs are made with Chakra's chakra_trace_link and chakra_converter, one .et per rank";
}

}  // namespace

std::optional<std::string> DescribeNotATrace(std::string_view head, std::string_view file) {
  if (head.size() >= 3 && static_cast<unsigned char>(head[0]) == 0x1f && static_cast<unsigned char>(head[1]) == 0x8b &&
      head[2] == 8) {
    return std::string("gzip-compressed data") + kNotATrace + "decompress it first (gunzip), then look again";
  }
  size_t i = head.compare(0, 3, "\xEF\xBB\xBF") == 0 ? 3 : 0;  // a UTF-8 byte-order mark
  while (i < head.size() && (head[i] == ' ' || head[i] == '\n' || head[i] == '\r' || head[i] == '\t')) ++i;
  if (i >= head.size() || (head[i] != '{' && head[i] != '[')) return std::nullopt;
  const std::string_view first = head.substr(0, 4096);
  if (!std::all_of(first.begin(), first.end(), [](char c) { return IsText(static_cast<unsigned char>(c)); })) {
    return std::nullopt;
  }
  return DescribeJson(head, file);
}

}  // namespace orrery
