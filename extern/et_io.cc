#include "extern/et_io.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>
#include <google/protobuf/wire_format_lite.h>

#include <fcntl.h>
#include <unistd.h>
#include <cerrno>
#include <cstring>

#include "extern/trace_sniff.h"

namespace orrery {

using google::protobuf::io::CodedInputStream;
using google::protobuf::io::FileInputStream;

struct EtReader::Impl {
  int fd = -1;
  std::unique_ptr<FileInputStream> file;
  ~Impl() {
    file.reset();
    if (fd >= 0) close(fd);
  }
};

EtReader::EtReader() = default;
EtReader::~EtReader() = default;

Status EtReader::Open(const std::string& path) {
  path_ = path;
  impl_ = std::make_unique<Impl>();
  impl_->fd = open(path.c_str(), O_RDONLY);
  if (impl_->fd < 0) {
    if (errno == ENOENT) return Status::Invalid(path + ": trace file does not exist");
    return Status::Env(path + ": cannot open trace file: " + std::strerror(errno));
  }
  // A text file given as a trace (a PyTorch or Kineto JSON trace, ...) is named for what it is.
  std::string head(4096, '\0');
  ssize_t got = pread(impl_->fd, head.data(), head.size(), 0);
  head.resize(got > 0 ? static_cast<size_t>(got) : 0);
  if (DescribeNotATrace(head, path)) {
    head.resize(kSniffBytes);
    got = pread(impl_->fd, head.data(), head.size(), 0);
    head.resize(got > 0 ? static_cast<size_t>(got) : 0);
    if (std::optional<std::string> what = DescribeNotATrace(head, path)) return Status::Invalid(path + ": " + *what);
  }
  impl_->file = std::make_unique<FileInputStream>(impl_->fd);
  Result<bool> r = ReadRecord(&metadata_, "GlobalMetadata");
  if (!r.ok()) return r.status();
  if (!r.value()) return Status::Invalid(path + ": empty trace: expected a GlobalMetadata record, found end of file");
  return Status::Ok();
}

namespace {

// The type of a serialised Node (field 3), read without parsing the rest: -1
// when the bytes are not a well-formed message. A node without the field is
// INVALID_NODE (0), as protobuf reads it.
int64_t NodeTypeOf(const std::string& body) {
  google::protobuf::io::CodedInputStream in(reinterpret_cast<const uint8_t*>(body.data()),
                                            static_cast<int>(body.size()));
  using google::protobuf::internal::WireFormatLite;
  int64_t type = 0;
  while (const uint32_t tag = in.ReadTag()) {
    if (tag == WireFormatLite::MakeTag(3, WireFormatLite::WIRETYPE_VARINT)) {
      uint64_t v = 0;
      if (!in.ReadVarint64(&v)) return -1;
      type = static_cast<int64_t>(static_cast<int32_t>(v));  // an enum is an int32 on the wire
    } else if (!WireFormatLite::SkipField(&in, tag)) {
      return -1;
    }
  }
  return in.ConsumedEntireMessage() ? type : -1;
}

}  // namespace

std::string EtReader::RecordText(const char* what) const {
  return std::string(what) + " record " + std::to_string(records_) + " at byte " + std::to_string(pos_);
}

// The framing of the next record: its length, or nullopt at a clean end of file.
Result<std::optional<uint32_t>> EtReader::ReadLength(CodedInputStream* in, const char* what) {
  const void* peek;
  int avail = 0;
  if (!in->GetDirectBufferPointer(&peek, &avail)) return std::optional<uint32_t>();  // clean end of file
  uint32_t size = 0;
  if (!in->ReadVarint32(&size)) {
    return Status::Invalid(path_ + ": truncated trace: the length of " + RecordText(what) + " is cut off or malformed");
  }
  if (size > (256u << 20)) {
    return Status::Invalid(path_ + ": corrupt trace: " + RecordText(what) + " claims " + std::to_string(size) +
                           " bytes (over 256 MiB); is this a Chakra .et file?");
  }
  return std::optional<uint32_t>(size);
}

// What makes protobuf refuse a record whose length is right.
constexpr char kWhyInvalid[] = " (bytes that are not protobuf wire data, or a string field that is not valid UTF-8)";

Result<bool> EtReader::ReadRecord(google::protobuf::Message* msg, const char* what) {
  CodedInputStream in(impl_->file.get());
  ORRERY_PARSE_OR_RETURN(const std::optional<uint32_t> size, ReadLength(&in, what));
  if (!size) return false;
  const int header = in.CurrentPosition();
  auto limit = in.PushLimit(static_cast<int>(*size));
  const bool parsed = msg->ParseFromCodedStream(&in);
  const bool complete = in.ConsumedEntireMessage() && in.BytesUntilLimit() == 0;
  in.PopLimit(limit);
  if (!parsed || !complete) {
    if (in.CurrentPosition() - header < static_cast<int>(*size)) {
      return Status::Invalid(path_ + ": truncated trace: " + RecordText(what) + " needs " + std::to_string(*size) +
                             " bytes but the file ends first");
    }
    return Status::Invalid(path_ + ": corrupt trace: " + RecordText(what) + " is not a valid Chakra " + what +
                           kWhyInvalid);
  }
  pos_ += static_cast<uint64_t>(in.CurrentPosition());
  ++records_;
  return true;
}

Result<bool> EtReader::Next(ChakraProtoMsg::Node* node) {
  node->Clear();
  return ReadRecord(node, "Node");
}

Result<bool> EtReader::NextOfType(int type, ChakraProtoMsg::Node* node) {
  std::string body;
  while (true) {
    CodedInputStream in(impl_->file.get());
    ORRERY_PARSE_OR_RETURN(const std::optional<uint32_t> size, ReadLength(&in, "Node"));
    if (!size) return false;
    if (!in.ReadString(&body, static_cast<int>(*size))) {
      return Status::Invalid(path_ + ": truncated trace: " + RecordText("Node") + " needs " + std::to_string(*size) +
                             " bytes but the file ends first");
    }
    const int64_t t = NodeTypeOf(body);
    if (t < 0 || (t == type && !node->ParseFromString(body))) {
      return Status::Invalid(path_ + ": corrupt trace: " + RecordText("Node") + " is not a valid Chakra Node" +
                             kWhyInvalid);
    }
    pos_ += static_cast<uint64_t>(in.CurrentPosition());
    ++records_;
    if (t == type) return true;
  }
}

Status EtWriter::Open(const std::string& path, const ChakraProtoMsg::GlobalMetadata& metadata) {
  path_ = path;
  ORRERY_PARSE_OR_RETURN(out_, OutputFile::Create(path, "", OutputFile::Sync::kNo));  // a trace per rank: thousands
  return WriteRecord(metadata);
}

Status EtWriter::WriteRecord(const google::protobuf::Message& msg) {
  std::string body;
  if (!msg.SerializeToString(&body)) return Status::Env(path_ + ": cannot serialise record");
  uint64_t v = body.size();
  char buf[10];
  int n = 0;
  while (v >= 0x80) {
    buf[n++] = static_cast<char>((v & 0x7f) | 0x80);
    v >>= 7;
  }
  buf[n++] = static_cast<char>(v);
  ORRERY_RETURN_IF_ERROR(out_.Write(std::string_view(buf, static_cast<size_t>(n))));
  return out_.Write(body);
}

Status EtWriter::Write(const ChakraProtoMsg::Node& node) { return WriteRecord(node); }

Status EtWriter::Close() { return out_.Commit(); }

const ChakraProtoMsg::AttributeProto* FindAttr(const ChakraProtoMsg::Node& node, const std::string& name) {
  for (const auto& a : node.attr()) {
    if (a.name() == name) return &a;
  }
  return nullptr;
}

namespace {

// What an attribute holds, as a number: an integer with its sign, a floating
// value, or nothing numeric.
struct AttrNumber {
  enum Kind { kNone, kSigned, kUnsigned, kFloating } kind = kNone;
  int64_t i = 0;
  uint64_t u = 0;
  double d = 0;
};

AttrNumber NumberOf(const ChakraProtoMsg::AttributeProto& a) {
  using A = ChakraProtoMsg::AttributeProto;
  AttrNumber n;
  auto sgn = [&](int64_t v) {
    n.kind = AttrNumber::kSigned;
    n.i = v;
  };
  auto uns = [&](uint64_t v) {
    n.kind = AttrNumber::kUnsigned;
    n.u = v;
  };
  switch (a.value_case()) {
    case A::kInt32Val: sgn(a.int32_val()); break;
    case A::kInt64Val: sgn(a.int64_val()); break;
    case A::kSint32Val: sgn(a.sint32_val()); break;
    case A::kSint64Val: sgn(a.sint64_val()); break;
    case A::kSfixed32Val: sgn(a.sfixed32_val()); break;
    case A::kSfixed64Val: sgn(a.sfixed64_val()); break;
    case A::kUint32Val: uns(a.uint32_val()); break;
    case A::kUint64Val: uns(a.uint64_val()); break;
    case A::kFixed32Val: uns(a.fixed32_val()); break;
    case A::kFixed64Val: uns(a.fixed64_val()); break;
    case A::kBoolVal: uns(a.bool_val() ? 1 : 0); break;
    case A::kDoubleVal:
      n.kind = AttrNumber::kFloating;
      n.d = a.double_val();
      break;
    case A::kFloatVal:
      n.kind = AttrNumber::kFloating;
      n.d = a.float_val();
      break;
    default: break;
  }
  return n;
}

}  // namespace

std::optional<uint64_t> AttrUint(const ChakraProtoMsg::AttributeProto& a) {
  auto r = AttrUintChecked(a, Where{}, 0, UINT64_MAX);
  if (!r.ok()) return std::nullopt;
  return r.value();
}

// An attribute that holds no number: "a string, not <kind>" (with the string) or "not <kind>".
static Status NotANumber(const ChakraProtoMsg::AttributeProto& a, const Where& where, const std::string& kind,
                         const std::string& allowed) {
  const bool is_string = a.value_case() == ChakraProtoMsg::AttributeProto::kStringVal;
  return ValueError(where, is_string ? "\"" + a.string_val() + "\"" : std::string("(not a number)"),
                    is_string ? "a string, not " + kind : "not " + kind, allowed);
}

Result<uint64_t> AttrUintChecked(const ChakraProtoMsg::AttributeProto& a, const Where& where, uint64_t min,
                                 uint64_t max) {
  // The message is built only on an error: this runs for every attribute of every node.
  const AttrNumber n = NumberOf(a);
  switch (n.kind) {
    case AttrNumber::kSigned:
      if (n.i < 0) return ValueError(where, std::to_string(n.i), "negative", DescribeUintRange(min, max));
      if (static_cast<uint64_t>(n.i) < min || static_cast<uint64_t>(n.i) > max) {
        return ValueError(where, std::to_string(n.i), "out of range", DescribeUintRange(min, max));
      }
      return static_cast<uint64_t>(n.i);
    case AttrNumber::kUnsigned:
      if (n.u < min || n.u > max)
        return ValueError(where, std::to_string(n.u), "out of range", DescribeUintRange(min, max));
      return n.u;
    case AttrNumber::kFloating: return DoubleToUint(n.d, where, min, max);
    case AttrNumber::kNone: break;
  }
  return NotANumber(a, where, "an integer", DescribeUintRange(min, max));
}

Result<double> AttrDoubleChecked(const ChakraProtoMsg::AttributeProto& a, const Where& where, DoubleRange range) {
  const AttrNumber n = NumberOf(a);
  double v = 0;
  switch (n.kind) {
    case AttrNumber::kSigned: v = static_cast<double>(n.i); break;
    case AttrNumber::kUnsigned: v = static_cast<double>(n.u); break;
    case AttrNumber::kFloating: v = n.d; break;
    case AttrNumber::kNone: {
      return NotANumber(a, where, "a number", DescribeRange(range));
    }
  }
  ORRERY_RETURN_IF_ERROR(CheckDouble(v, where, range));
  return v;
}

std::optional<bool> AttrBool(const ChakraProtoMsg::AttributeProto& a) {
  const AttrNumber n = NumberOf(a);
  switch (n.kind) {
    case AttrNumber::kSigned: return n.i != 0;
    case AttrNumber::kUnsigned: return n.u != 0;
    case AttrNumber::kFloating:
      if (n.d == 0 || n.d == 1) return n.d != 0;
      return std::nullopt;  // NaN or another number is no switch
    case AttrNumber::kNone: break;
  }
  return std::nullopt;
}

std::optional<std::string> AttrString(const ChakraProtoMsg::AttributeProto& a) {
  if (a.value_case() == ChakraProtoMsg::AttributeProto::kStringVal) return a.string_val();
  auto u = AttrUint(a);
  if (u) return std::to_string(*u);
  return std::nullopt;
}

std::optional<std::vector<bool>> AttrBoolList(const ChakraProtoMsg::AttributeProto& a) {
  using A = ChakraProtoMsg::AttributeProto;
  std::vector<bool> out;
  switch (a.value_case()) {
    case A::kBoolList:
      for (bool b : a.bool_list().values()) out.push_back(b);
      return out;
    case A::kInt32List:
      for (auto b : a.int32_list().values()) out.push_back(b != 0);
      return out;
    case A::kInt64List:
      for (auto b : a.int64_list().values()) out.push_back(b != 0);
      return out;
    case A::kUint32List:
      for (auto b : a.uint32_list().values()) out.push_back(b != 0);
      return out;
    case A::kUint64List:
      for (auto b : a.uint64_list().values()) out.push_back(b != 0);
      return out;
    default: return std::nullopt;
  }
}

const char* NodeTypeName(int t) {
  const std::optional<NodeKind> kind = NodeKindFromChakra(t);
  return kind ? NodeTypeName(*kind) : "UNKNOWN";
}

const char* CollectiveName(int c) {
  const std::optional<CollectiveKind> kind = c < 0 ? std::nullopt : CollectiveKindFromChakra(static_cast<uint64_t>(c));
  return kind ? CollectiveName(*kind) : "UNKNOWN";
}

}  // namespace orrery
