// Fuzz target: recognising a file given as a trace that is not one (a PyTorch
// or Kineto JSON trace, Chakra JSON, gzip: extern/trace_sniff.h), on its own
// and through EtReader::Open, which reads the first bytes of every trace.
#include <cstddef>
#include <cstdint>

#include "extern/et_io.h"
#include "extern/trace_sniff.h"
#include "tests/fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace orrery;
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  (void)DescribeNotATrace(bytes, "fuzz.0.et");
  (void)DescribeNotATrace(bytes.substr(0, 4096), "fuzz.0.et");
  const std::string path = fuzz::WriteInput("sniff.0.et", data, size);
  EtReader reader;
  if (reader.Open(path).ok()) {
    ChakraProtoMsg::Node n;
    (void)reader.NextOfType(ChakraProtoMsg::METADATA_NODE, &n);
  }
  return 0;
}
