#include "report/timeline.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <tuple>

#include "core/parse.h"
#include "core/units.h"
#include "extern/et_io.h"

namespace orrery {

namespace {

enum Track { kCompute = 0, kCpu = 1, kComm = 2, kMemory = 3 };  // then receive lanes and streams from 10 on

// Microseconds with exactly three decimals: the nanosecond, no rounding.
std::string Us(Tick ns) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%llu.%03llu", static_cast<unsigned long long>(ns / kNsPerUs),
                static_cast<unsigned long long>(ns % kNsPerUs));
  return buf;
}

std::string Quote(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\u%04x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

Status RanksError(const std::string& text, const std::string& why, int npus) {
  return Status::Invalid("--timeline-ranks = \"" + text + "\": " + why +
                         "; allowed: ranks and ranges A-B (A <= B) separated by commas, each 0.." +
                         std::to_string(npus - 1) + " (the network has " + std::to_string(npus) + " NPUs)");
}

}  // namespace

Result<std::vector<uint8_t>> ParseRankSelection(const std::string& text, int npus) {
  std::vector<uint8_t> out(static_cast<size_t>(npus), text.empty() ? 1 : 0);
  if (text.empty()) return out;
  size_t pos = 0;
  while (pos <= text.size()) {
    const size_t comma = std::min(text.find(',', pos), text.size());
    const std::string item = text.substr(pos, comma - pos);
    const size_t dash = item.find('-');
    const std::string a = item.substr(0, dash), b = dash == std::string::npos ? a : item.substr(dash + 1);
    auto lo = ParseUint(a, Where{"", 0, "--timeline-ranks"}, 0, uint64_t{1} << 40);
    auto hi = ParseUint(b, Where{"", 0, "--timeline-ranks"}, 0, uint64_t{1} << 40);
    if (item.empty() || !lo.ok() || !hi.ok())
      return RanksError(text, "\"" + item + "\" is not a rank or a range", npus);
    if (lo.value() > hi.value()) {
      return RanksError(text, "range " + item + " runs backwards", npus);
    }
    if (hi.value() >= static_cast<uint64_t>(npus)) {
      return RanksError(text, "rank " + std::to_string(hi.value()) + " is beyond the last NPU", npus);
    }
    for (uint64_t r = lo.value(); r <= hi.value(); ++r) out[r] = 1;
    pos = comma + 1;
  }
  return out;
}

Result<std::pair<Tick, Tick>> ParseTimeWindow(const std::string& text) {
  const std::string allowed = "; allowed: START_NS-END_NS, two integers in ns with START_NS <= END_NS";
  const size_t dash = text.find('-');
  if (dash == std::string::npos) return Status::Invalid("--timeline-window = \"" + text + "\": no '-'" + allowed);
  auto a = ParseUint(text.substr(0, dash), Where{"", 0, "--timeline-window"}, 0, kTickMax);
  auto b = ParseUint(text.substr(dash + 1), Where{"", 0, "--timeline-window"}, 0, kTickMax);
  if (!a.ok() || !b.ok()) return Status::Invalid("--timeline-window = \"" + text + "\": not two numbers" + allowed);
  if (a.value() > b.value())
    return Status::Invalid("--timeline-window = \"" + text + "\": ends before it starts" + allowed);
  return std::make_pair(Tick{a.value()}, Tick{b.value()});
}

Result<std::unique_ptr<TimelineWriter>> TimelineWriter::Open(const TimelineOptions& options, int npus, bool symmetric) {
  std::unique_ptr<TimelineWriter> w(new TimelineWriter());
  auto ranks = ParseRankSelection(options.ranks, npus);
  if (!ranks.ok()) return ranks.status();
  w->selected_ = std::move(ranks.value());
  for (int r = 0; r < npus; ++r) {
    if (w->selected_[r]) w->selected_list_.push_back(r);
  }
  if (!options.window.empty()) {
    auto window = ParseTimeWindow(options.window);
    if (!window.ok()) return window.status();
    w->window_ = window.value();
  }
  ORRERY_PARSE_OR_RETURN(w->file_, OutputFile::Create(options.path, "--timeline"));
  w->symmetric_ = symmetric;
  w->ranks_.resize(symmetric ? 1 : w->selected_list_.size());
  if (!symmetric) {
    w->state_of_.assign(static_cast<size_t>(npus), 0);
    for (size_t i = 0; i < w->selected_list_.size(); ++i) w->state_of_[w->selected_list_[i]] = static_cast<uint32_t>(i);
  }
  w->Begin();
  return w;
}

// Not closed: the run failed, and the temporary file goes (OutputFile); a file
// of that name from before is left as it was.
TimelineWriter::~TimelineWriter() = default;

void TimelineWriter::Write(const std::string& text) {
  if (!first_) (void)file_.Write(",\n");
  first_ = false;
  (void)file_.Write(text);  // a failure is kept and returned by Close
}

void TimelineWriter::Meta(int pid, int tid, const char* what, const std::string& value) {
  const bool sort = std::strstr(what, "sort") != nullptr;
  Write("{\"name\":\"" + std::string(what) + "\",\"ph\":\"M\",\"ts\":0,\"pid\":" + std::to_string(pid) + ",\"tid\":" +
        std::to_string(tid) + ",\"args\":{" + (sort ? "\"sort_index\":" + value : "\"name\":" + Quote(value)) + "}}");
}

void TimelineWriter::Begin() {
  (void)file_.Write("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n");
  static const char* kTracks[] = {"compute", "cpu", "communication", "memory"};
  for (int r : selected_list_) {
    Meta(r, 0, "process_name", "rank " + std::to_string(r));
    Meta(r, 0, "process_sort_index", std::to_string(r));
    for (int t = 0; t < 4; ++t) Meta(r, t, "thread_name", kTracks[t]);
  }
}

void TimelineWriter::Span(int pid, int tid, const std::string& name, const char* cat, Tick start, Tick end,
                          const std::string& args) {
  Write("{\"name\":" + Quote(name) + ",\"cat\":\"" + cat + "\",\"ph\":\"X\",\"ts\":" + Us(start) +
        ",\"dur\":" + Us(end - start) + ",\"pid\":" + std::to_string(pid) + ",\"tid\":" + std::to_string(tid) +
        ",\"args\":{" + args + "}}");
}

// The first receive lane of `rank` whose last span ended by `start`.
int TimelineWriter::RecvLane(int rank, Tick start, Tick end) {
  RankState& state = State(rank);
  std::vector<Tick>& lanes = state.lane_end;
  size_t k = 0;
  while (k < lanes.size() && lanes[k] > start) ++k;
  if (k == lanes.size()) {
    lanes.push_back(0);
    state.lane_tid.push_back(state.next_tid++);
    for (int r : selected_list_) {
      if (symmetric_ || r == rank) Meta(r, state.lane_tid[k], "thread_name", "recv " + std::to_string(k));
    }
  }
  lanes[k] = end;
  return state.lane_tid[k];
}

TimelineWriter::RankState::Stream& TimelineWriter::CommStream(int rank, int stream) {
  RankState& state = State(rank);
  if (stream >= static_cast<int>(state.streams.size())) state.streams.resize(static_cast<size_t>(stream) + 1);
  RankState::Stream& st = state.streams[stream];
  if (st.tid >= 0) return st;
  st.tid = stream == 0 ? kComm : state.next_tid++;
  st.unnamed = false;
  if (stream == 0) return st;  // the communication track, named at the start
  for (int r : selected_list_) {
    if (symmetric_ || r == rank) Meta(r, st.tid, "thread_name", "communication stream " + std::to_string(stream));
  }
  return st;
}

TimelineWriter::RankState::Stream& TimelineWriter::StreamState(int rank, int stream) {
  RankState& state = State(rank);
  if (stream >= static_cast<int>(state.streams.size())) state.streams.resize(static_cast<size_t>(stream) + 1);
  RankState::Stream& st = state.streams[stream];
  if (st.tid < 0 && !st.unnamed) {
    st.unnamed = true;
    unnamed_.emplace_back(rank, stream);
  }
  return st;
}

void TimelineWriter::CollectiveIssued(int rank, uint32_t idx, const std::string& algorithm) {
  if (symmetric_ || selected_[rank]) StreamState(rank, StreamOf(rank, idx)).algorithm = algorithm;
}

void TimelineWriter::Delivered(int rank, uint32_t idx, Tick send_start, Tick now) {
  const WorkNode& n = Node(rank, idx);
  if (symmetric_ || !selected_[rank] || !selected_[n.comm_dst]) return;
  StreamState(rank, n.comm_stream);
  in_flight_[std::make_tuple(rank, n.comm_dst, n.comm_tag)].push_back(Sent{send_start, now, n.comm_stream});
}

namespace {
std::string DimsName(uint32_t dims) {
  std::string out;
  for (int b = 0; b < 32; ++b) {
    if (!(dims & (uint32_t{1} << b))) continue;
    if (!out.empty()) out += '+';
    out += b == 31 ? std::string("flat") : "dim" + std::to_string(b);
  }
  return out;
}
}  // namespace

void TimelineWriter::PhaseChange(int rank, uint64_t cookie, int from_dim, int to_dim, Tick now) {
  if (!symmetric_ && !selected_[rank]) return;
  RankState::Stream& r = StreamState(rank, StreamOf(rank, static_cast<uint32_t>(cookie)));
  auto bit = [](int dim) { return dim >= 0 && dim < 31 ? dim : 31; };
  if (from_dim != kNoPhase) --r.phases_on[bit(from_dim)];
  if (to_dim != kNoPhase) ++r.phases_on[bit(to_dim)];
  uint32_t dims = 0;
  for (int b = 0; b < 32; ++b) dims |= r.phases_on[b] ? uint32_t{1} << b : 0;
  if (dims == r.dims) return;
  if (r.dims != 0 && now > r.dims_since) r.pieces.push_back(Piece{r.dims_since, now, r.dims});
  r.dims = dims;
  r.dims_since = now;
}

// The collective's span, then the pieces nested in it, on its stream's track.
void TimelineWriter::WriteCollective(int rank, int tid, const std::string& name, const Ended& e,
                                     const std::string& args) {
  for (int pid : selected_list_) {
    if (!symmetric_ && pid != rank) continue;
    if (InWindow(e.start, e.end)) Span(pid, tid, name, "collective", e.start, e.end, args);
    for (const Piece& p : e.pieces) {
      if (InWindow(p.start, p.end))
        Span(pid, tid, DimsName(p.dims), "phase", p.start, p.end, "\"dims\":\"" + DimsName(p.dims) + "\"");
    }
  }
}

// Node `idx` of `rank` ended: kept until the instant is over, with what its
// collective's stream holds now (the stream's next collective may start at
// the same instant).
void TimelineWriter::NodeEnded(int rank, uint32_t idx, Tick start, Tick end, int iteration) {
  if (!symmetric_ && !selected_[rank]) return;
  const WorkNode& n = Node(rank, idx);
  if (n.kind == NodeKind::kInvalid || n.kind == NodeKind::kMetadata) return;
  if (ended_count_ == ended_.size()) ended_.emplace_back();
  Ended& e = ended_[ended_count_++];
  e.rank = rank;
  e.idx = idx;
  e.start = start;
  e.end = end;
  e.iteration = iteration;
  e.pieces.clear();
  if (n.kind != NodeKind::kColl) return;
  RankState::Stream& st = StreamState(rank, n.comm_stream);
  e.algorithm = st.algorithm;
  e.pieces.swap(st.pieces);
}

// The current instant's streams named (by rank and stream), then its nodes
// written by rank, start, iteration and node: the same order however the
// run's events at this instant were interleaved.
void TimelineWriter::WriteInstant() {
  if (!unnamed_.empty()) {
    std::sort(unnamed_.begin(), unnamed_.end());
    for (const auto& [rank, stream] : unnamed_) CommStream(rank, stream);
    unnamed_.clear();
  }
  if (ended_count_ == 0) return;
  std::sort(ended_.begin(), ended_.begin() + static_cast<std::ptrdiff_t>(ended_count_),
            [](const Ended& a, const Ended& b) {
              return std::tie(a.rank, a.start, a.iteration, a.idx) < std::tie(b.rank, b.start, b.iteration, b.idx);
            });
  for (size_t i = 0; i < ended_count_; ++i) NodeDone(ended_[i]);
  ended_count_ = 0;
}

void TimelineWriter::NodeDone(const Ended& e) {
  const int rank = e.rank;
  const Tick start = e.start, end = e.end;
  const WorkNode& n = Node(rank, e.idx);
  std::string name = n.name, args = "\"node\":" + std::to_string(n.id);
  const char* cat = "compute";
  int tid = kCompute;
  switch (n.kind) {
    case NodeKind::kComp:
      if (name.empty()) name = n.is_cpu ? "cpu" : "compute";
      tid = n.is_cpu ? kCpu : kCompute;
      break;
    case NodeKind::kColl:
      if (name.empty()) name = CollectiveName(n.collective);
      cat = "collective";
      args += ",\"type\":\"" + std::string(CollectiveName(n.collective)) +
              "\",\"bytes\":" + std::to_string(n.comm_size) + ",\"algorithm\":" + Quote(e.algorithm);
      WriteCollective(rank, CommStream(rank, n.comm_stream).tid, name, e, args);
      return;
    case NodeKind::kSend:
    case NodeKind::kRecv: {
      const bool send = n.kind == NodeKind::kSend;
      if (name.empty()) name = send ? "send" : "recv";
      cat = "p2p";
      args += std::string(",\"type\":\"") + (send ? "send" : "recv") +
              "\",\"peer\":" + std::to_string(send ? n.comm_dst : n.comm_src) +
              ",\"bytes\":" + std::to_string(n.comm_size) + ",\"tag\":" + std::to_string(n.comm_tag);
      tid = send ? CommStream(rank, n.comm_stream).tid : RecvLane(rank, start, end);
      break;
    }
    case NodeKind::kMemLoad:
    case NodeKind::kMemStore:
      if (name.empty()) name = n.kind == NodeKind::kMemLoad ? "mem_load" : "mem_store";
      cat = "memory";
      tid = kMemory;
      args += ",\"bytes\":" + std::to_string(n.tensor_size) + ",\"tier\":\"" + (n.local_tier ? "local" : "remote") +
              "\"";
      break;
    default: return;  // metadata: no time, no track
  }
  const bool shown = InWindow(start, end);
  if (shown) {
    for (int r : selected_list_) {
      if (symmetric_ || r == rank) Span(r, tid, name, cat, start, end, args);
    }
  }
  if (n.kind != NodeKind::kRecv || symmetric_ || !selected_[n.comm_src]) return;
  // The flow of this message: the oldest delivered message of the same source and tag.
  auto it = in_flight_.find(std::make_tuple(n.comm_src, rank, n.comm_tag));
  if (it == in_flight_.end() || it->second.empty()) return;
  const auto [send_start, send_end, send_stream] = it->second.front();
  const int send_tid = CommStream(n.comm_src, send_stream).tid;
  it->second.pop_front();
  if (it->second.empty()) in_flight_.erase(it);
  if (!shown || !InWindow(send_start, send_end)) return;
  const std::string id = std::to_string(next_flow_++);
  Write("{\"name\":\"message\",\"cat\":\"p2p\",\"ph\":\"s\",\"id\":" + id + ",\"ts\":" + Us(send_start) +
        ",\"pid\":" + std::to_string(n.comm_src) + ",\"tid\":" + std::to_string(send_tid) + "}");
  Write("{\"name\":\"message\",\"cat\":\"p2p\",\"ph\":\"f\",\"bp\":\"e\",\"id\":" + id + ",\"ts\":" +
        Us(std::max(start, send_start)) + ",\"pid\":" + std::to_string(rank) + ",\"tid\":" + std::to_string(tid) + "}");
}

// With rank classes, only representatives are simulated: each of their
// events is drawn for every selected member of the class, in rank order
// (members run in lockstep: the same node at the same instant).
void TimelineWriter::SetClasses(TimelineClasses classes) {
  classes_ = std::move(classes);
  drawn_for_.assign(classes_.map->class_of.size(), {});
  for (int r : selected_list_) drawn_for_[classes_.map->RepOf(r)].push_back(r);
}

void TimelineWriter::OnCollectiveIssued(int rank, uint32_t idx, const std::string& algorithm, Tick now) {
  AtInstant(now);
  if (!classes_.map) return CollectiveIssued(rank, idx, algorithm);
  for (int r : DrawnFor(rank)) CollectiveIssued(r, idx, algorithm);
}

void TimelineWriter::OnDelivered(int rank, uint32_t idx, Tick send_start, Tick now) {
  AtInstant(now);
  if (!classes_.map) return Delivered(rank, idx, send_start, now);
  for (int r : DrawnFor(rank)) Delivered(r, idx, send_start, now);
}

void TimelineWriter::OnNodeDone(int rank, uint32_t idx, Tick start, Tick end) {
  AtInstant(end);
  const int iteration = exec_->npus()[rank].iteration;
  if (!classes_.map) return NodeEnded(rank, idx, start, end, iteration);
  for (int r : DrawnFor(rank)) NodeEnded(r, idx, start, end, iteration);
}

void TimelineWriter::OnPhaseChange(int rank, uint64_t cookie, int from_dim, int to_dim, Tick now) {
  AtInstant(now);
  if (!classes_.map) return PhaseChange(rank, cookie, from_dim, to_dim, now);
  for (int r : DrawnFor(rank)) PhaseChange(r, cookie, from_dim, to_dim, now);
}

Status TimelineWriter::Close() {
  if (!file_.is_open()) return file_.status();  // closed already, or a write failed
  WriteInstant();
  ORRERY_RETURN_IF_ERROR(file_.Write("\n]}\n"));
  return file_.Commit();
}

}  // namespace orrery
