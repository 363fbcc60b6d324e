#include "explore/sweep_mpi.h"

#include <cstdio>

#ifdef ORRERY_HAVE_MPI
#include <mpi.h>
#endif

namespace orrery::sweep {

#ifndef ORRERY_HAVE_MPI

bool MpiBuilt() { return false; }

int RunSweepMpi(const std::string&, const Options&,
                const std::function<int(const Result<Summary>&, const std::string&)>& finish) {
  return finish(Status::Invalid("--mpi: this orrery was built without MPI; install Debian's libopenmpi-dev and "
                                "openmpi-bin and reconfigure (cmake -DORRERY_MPI=ON, or AUTO, the default, "
                                "which builds it when find_package(MPI) finds OpenMPI); or run the sweep with "
                                "--jobs, or sharded with --shard=I/N"),
                "");
}

#else

bool MpiBuilt() { return true; }

namespace {

// Worker -> rank 0: a row's JSON ("" when asking for the first point), or a
// failure to start. Rank 0 -> worker: the plan position to simulate, -1 to stop.
constexpr int kRowTag = 1, kFailTag = 2, kWorkTag = 3;

struct Message {
  int source = 0, tag = 0;
  std::string text;
};

Message Receive() {
  MPI_Status status;
  MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &status);
  int len = 0;
  MPI_Get_count(&status, MPI_CHAR, &len);
  Message m;
  m.source = status.MPI_SOURCE;
  m.tag = status.MPI_TAG;
  m.text.resize(static_cast<size_t>(len));
  MPI_Recv(m.text.data(), len, MPI_CHAR, m.source, m.tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  return m;
}

void SendText(const std::string& text, int tag) {
  MPI_Send(text.data(), static_cast<int>(text.size()), MPI_CHAR, 0, tag, MPI_COMM_WORLD);
}

void SendWork(int64_t k, int to) { MPI_Send(&k, 1, MPI_INT64_T, to, kWorkTag, MPI_COMM_WORLD); }

int Worker(int rank, const std::string& spec_path, const Options& o) {
  auto spec = ReadSweepSpec(spec_path);
  std::shared_ptr<const Plan> plan;
  if (spec.ok() && !o.dry_run) {
    auto made = MakePlan(spec.value(), o);
    if (made.ok()) plan = made.value();
    if (!made.ok()) spec = made.status();
  }
  if (!spec.ok()) {
    SendText("rank " + std::to_string(rank) + ": " + spec.status().message(), kFailTag);
    return spec.status().exit_code();
  }
  std::string row;  // "" first: ready for a point
  while (true) {
    SendText(row, kRowTag);
    int64_t k = -1;
    MPI_Recv(&k, 1, MPI_INT64_T, 0, kWorkTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    if (k < 0 || !plan) return 0;
    row = RowJson(SimulatePoint(*plan, static_cast<size_t>(k)));
  }
}

}  // namespace

int RunSweepMpi(const std::string& spec_path, const Options& o,
                const std::function<int(const Result<Summary>&, const std::string&)>& finish) {
  int provided = 0;
  MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (rank != 0) {
    const int code = Worker(rank, spec_path, o);
    MPI_Finalize();
    return code;
  }
  int active = size - 1;  // workers not yet told to stop
  // Rank 0: hands out `todo` one point per request, in order.
  Runner runner = [&](const Plan&, const std::vector<size_t>& todo, const std::function<void(Row)>& record) {
    size_t next = 0;
    Status st;
    while (active > 0) {
      const Message m = Receive();
      if (m.tag == kFailTag) {
        --active;
        if (st.ok()) st = Status::Invalid("MPI " + m.text);
        continue;
      }
      if (!m.text.empty()) {
        auto row = ParseRowJson(m.text);
        if (row.ok()) {
          record(std::move(row.value()));
        } else if (st.ok()) {
          st = row.status().Prefixed("MPI rank " + std::to_string(m.source) + " sent ");
        }
      }
      const int64_t k = st.ok() && next < todo.size() ? static_cast<int64_t>(todo[next++]) : -1;
      SendWork(k, m.source);
      if (k < 0) --active;
    }
    if (st.ok() && next < todo.size()) {
      st = Status::Env("MPI: " + std::to_string(todo.size() - next) + " points not run: no worker rank");
    }
    return st;
  };
  std::string dry;
  Result<Summary> sum = Status::Invalid("");
  auto spec = ReadSweepSpec(spec_path);
  if (!spec.ok()) {
    sum = spec.status();
  } else {
    // One rank alone (no mpirun, or -n 1) simulates on its own threads.
    sum = RunSweep(spec.value(), o, &dry, size > 1 ? runner : Runner());
  }
  // Workers not yet stopped (a dry run, an error before the points ran) wait for their answer.
  while (active > 0) {
    const Message m = Receive();
    if (m.tag != kFailTag) SendWork(-1, m.source);
    --active;
  }
  const int code = finish(sum, dry);
  MPI_Finalize();
  return code;
}

#endif

}  // namespace orrery::sweep
