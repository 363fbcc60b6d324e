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

#include "core/status.h"
#include "extern/chakra.pb.h"

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
  const std::string& path() const { return path_; }

 private:
  Result<bool> ReadRecord(google::protobuf::Message* msg, const char* what);
  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::string path_;
  ChakraProtoMsg::GlobalMetadata metadata_;
  uint64_t records_ = 0;
};

class EtWriter {
 public:
  Status Open(const std::string& path, const ChakraProtoMsg::GlobalMetadata& metadata);
  Status Write(const ChakraProtoMsg::Node& node);
  Status Close();

 private:
  Status WriteRecord(const google::protobuf::Message& msg);
  std::ofstream out_;
  std::string path_;
};

// Attribute access by value: integers are accepted from any integer (or bool)
// field of the oneof, as Chakra producers disagree on which they use.
const ChakraProtoMsg::AttributeProto* FindAttr(const ChakraProtoMsg::Node& node, const std::string& name);
std::optional<uint64_t> AttrUint(const ChakraProtoMsg::AttributeProto& attr);
std::optional<bool> AttrBool(const ChakraProtoMsg::AttributeProto& attr);
std::optional<std::string> AttrString(const ChakraProtoMsg::AttributeProto& attr);
std::optional<std::vector<bool>> AttrBoolList(const ChakraProtoMsg::AttributeProto& attr);

const char* NodeTypeName(int type);
const char* CollectiveName(int comm_type);

}  // namespace orrery
