// Streaming reader and writer for Chakra execution traces (PREFIX.<rank>.et):
// a varint-length-delimited GlobalMetadata followed by varint-length-delimited
// Nodes.
#pragma once
#include <cstdint>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/collective_kind.h"
#include "core/node_kind.h"
#include "core/output_file.h"
#include "core/parse.h"
#include "core/status.h"
#include "extern/chakra.pb.h"

namespace google::protobuf::io {
class CodedInputStream;
}

namespace orrery {

class EtReader {
 public:
  EtReader();
  ~EtReader();
  // Opens the file and reads the GlobalMetadata record.
  Status Open(const std::string& path);
  const ChakraProtoMsg::GlobalMetadata& metadata() const { return metadata_; }
  // Reads the next node. Returns false at a clean end of file.
  Result<bool> Next(ChakraProtoMsg::Node* node);
  // Reads on to the next node of Chakra NodeType `type`, parsing only that
  // one (the others are skipped once their type is read); false at a clean end.
  Result<bool> NextOfType(int type, ChakraProtoMsg::Node* node);
  const std::string& path() const { return path_; }
  // The byte where the next record starts (exact, whatever was buffered).
  uint64_t position() const { return pos_; }

 private:
  Result<bool> ReadRecord(google::protobuf::Message* msg, const char* what);
  Result<std::optional<uint32_t>> ReadLength(google::protobuf::io::CodedInputStream* in, const char* what);
  std::string RecordText(const char* what) const;  // "Node record 12 at byte 345"
  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::string path_;
  ChakraProtoMsg::GlobalMetadata metadata_;
  uint64_t records_ = 0;
  uint64_t pos_ = 0;  // bytes of the records read so far
};

// Writes a trace whole or not at all (core/output_file.h): Close renames it
// into place; a writer destroyed before Close leaves no file. Traces come in
// sets of one per rank, so Close does not wait for the disk (Sync::kNo).
class EtWriter {
 public:
  Status Open(const std::string& path, const ChakraProtoMsg::GlobalMetadata& metadata);
  Status Write(const ChakraProtoMsg::Node& node);
  Status Close();

 private:
  Status WriteRecord(const google::protobuf::Message& msg);
  OutputFile out_;
  std::string path_;
};

// Attribute access by value: integers are accepted from any integer (or bool)
// field of the oneof, as Chakra producers disagree on which they use.
const ChakraProtoMsg::AttributeProto* FindAttr(const ChakraProtoMsg::Node& node, const std::string& name);
// Unchecked convenience: nullopt for a negative, NaN, infinite, fractional or
// out-of-range value (never undefined behaviour).
std::optional<uint64_t> AttrUint(const ChakraProtoMsg::AttributeProto& attr);
// The checked read the trace loader uses: an integer in [min, max] from any
// integer, bool or floating field; a negative signed value (-1 is not 2^64-1), a
// NaN, infinity, fraction or out-of-range number, or a non-number is an error
// naming `where` (file, node, attribute), the value and the allowed range.
Result<uint64_t> AttrUintChecked(const ChakraProtoMsg::AttributeProto& attr, const Where& where, uint64_t min,
                                 uint64_t max);
// A number in `range` from any integer or floating field (CheckDouble's
// message: `where`, the value, the allowed range); a string is an error too.
Result<double> AttrDoubleChecked(const ChakraProtoMsg::AttributeProto& attr, const Where& where, DoubleRange range);
std::optional<bool> AttrBool(const ChakraProtoMsg::AttributeProto& attr);
std::optional<std::string> AttrString(const ChakraProtoMsg::AttributeProto& attr);
std::optional<std::vector<bool>> AttrBoolList(const ChakraProtoMsg::AttributeProto& attr);

// Names of raw Chakra numbers, for what reads or writes them before they are
// decoded ("UNKNOWN" outside the enum); decoded nodes use the overloads of
// core/node_kind.h and core/collective_kind.h.
const char* NodeTypeName(int type);
const char* CollectiveName(int comm_type);

}  // namespace orrery
