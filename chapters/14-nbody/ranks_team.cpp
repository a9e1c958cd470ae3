// SPDX-License-Identifier: BSD-3-Clause
// Stage 11's plumbing (ranks.h): MPI started once, each rank's GPU, the NCCL communicator, and the
// gather of the final state. Given, not a lesson.
#include "ranks.h"

#include "common/check.h"

#include <cuda_runtime.h>

#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

namespace nbody::ranks {

void throw_mpi_error(int code, const char *call, const char *file, int line) {
  char text[MPI_MAX_ERROR_STRING] = {};
  int length = 0;
  MPI_Error_string(code, text, &length);
  throw std::runtime_error(std::string(file) + ":" + std::to_string(line) + ": " + call +
                           " failed: " + text);
}

#if COURSE_HAVE_NCCL
void throw_nccl_error(ncclResult_t code, const char *call, const char *file, int line) {
  throw std::runtime_error(std::string(file) + ":" + std::to_string(line) + ": " + call +
                           " failed: " + ncclGetErrorString(code));
}
#endif

const char *to_string(transport t) { return t == transport::nccl ? "nccl" : "mpi"; }

transport default_transport() { return COURSE_HAVE_NCCL ? transport::nccl : transport::mpi; }

bool parse_transport(const std::string &name, transport &t, std::string &why) {
  if (name == "mpi") {
    t = transport::mpi;
    return true;
  }
  if (name == "nccl") {
    if (!COURSE_HAVE_NCCL) {
      why =
          "this build has no NCCL (configure did not find nccl.h and libnccl; set NCCL_ROOT): "
          "--transport mpi runs without it";
      return false;
    }
    t = transport::nccl;
    return true;
  }
  why = "--transport '" + name + "': nccl or mpi";
  return false;
}

host_place place_on_host(MPI_Comm comm) {
  MPI_Comm host;
  MPI_CHECK(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &host));
  host_place p;
  MPI_CHECK(MPI_Comm_rank(host, &p.local_rank));
  MPI_CHECK(MPI_Comm_size(host, &p.local_ranks));
  MPI_CHECK(MPI_Comm_free(&host));
  return p;
}

namespace {

// MPI_Init once, MPI_Finalize when the program ends, after every team is gone. Every process
// starts it before anything else, so the one collective here (the ranks of each host) is met by
// all; a team over a few of the ranks later must not call a collective over the world.
struct mpi_session {
  host_place world_place;
  mpi_session() {
    int started = 0;
    MPI_CHECK(MPI_Initialized(&started));
    if (!started) MPI_CHECK(MPI_Init(nullptr, nullptr));
    world_place = place_on_host(MPI_COMM_WORLD);
  }
  ~mpi_session() {
    int finished = 0;
    MPI_Finalized(&finished);
    if (!finished) MPI_Finalize();
  }
};

mpi_session &session() {
  // NVLink SHARP (multicast) stays off unless asked for: on a shared host it can take the GPUs
  // out of service for others. The course's launches set it too; this covers an mpirun by hand.
  setenv("NCCL_NVLS_ENABLE", "0", 0);
  static mpi_session s;
  return s;
}

}  // namespace

void start_mpi() { session(); }

std::string cannot_run(MPI_Comm comm, transport how) {
  const host_place p = place_on_host(comm);
  int visible = 0;
  if (cudaGetDeviceCount(&visible) != cudaSuccess) visible = 0;
  // The fewest GPUs per rank over every host decides for all.
  int short_here = how == transport::nccl && p.local_ranks > visible ? 1 : 0, short_any = 0;
  MPI_CHECK(MPI_Allreduce(&short_here, &short_any, 1, MPI_INT, MPI_MAX, comm));
  if (!short_any) return "";
  int size = 1;
  MPI_CHECK(MPI_Comm_size(comm, &size));
  return "NCCL needs a GPU per rank: " + std::to_string(size) + " ranks, " +
         std::to_string(p.local_ranks) + " on this host, which has " + std::to_string(visible) +
         " GPU(s) visible; --transport mpi lets ranks share a GPU";
}

team::team(MPI_Comm comm, transport how) : comm_(comm), how_(how) {
  start_mpi();
  MPI_CHECK(MPI_Comm_rank(comm_, &rank_));
  MPI_CHECK(MPI_Comm_size(comm_, &size_));
  const std::string why = cannot_run(comm_, how_);
  if (!why.empty()) throw std::runtime_error(why);
  int visible = 0;
  CUDA_CHECK(cudaGetDeviceCount(&visible));
  if (visible == 0)
    throw std::runtime_error("stage 11: no GPU visible to rank " + std::to_string(rank_));
  // The process's place on its host in the whole world, not in this team: a one-rank team
  // (MPI_COMM_SELF) or the first P ranks of the world keep the GPU their process already has.
  device_ = session().world_place.local_rank % visible;
  CUDA_CHECK(cudaSetDevice(device_));
#if COURSE_HAVE_NCCL
  if (how_ == transport::nccl) {
    // MPI's one job besides starting the ranks: rank 0's id, the same bytes on every rank.
    ncclUniqueId id;
    if (rank_ == 0) NCCL_CHECK(ncclGetUniqueId(&id));
    MPI_CHECK(MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, comm_));
    NCCL_CHECK(ncclCommInitRank(&nccl_, size_, id, rank_));
  }
#endif
}

team::~team() {
#if COURSE_HAVE_NCCL
  if (nccl_) ncclCommDestroy(nccl_);
#endif
}

const stage &the_stage() {
  const auto &all = course::registered<stage>();
  if (all.size() != 1)
    throw std::logic_error("a stage-11 program links exactly one ranks stage; this one has " +
                           std::to_string(all.size()));
  return all.front();
}

void gather_rows(const team &t, std::vector<float4> &v, std::size_t begin, std::size_t rows) {
  // Counts and displacements in bytes, as MPI's int; the largest run (2^24 bodies) fits.
  const std::uint64_t mine[2] = {begin * sizeof(float4), rows * sizeof(float4)};
  if (mine[0] + mine[1] > std::uint64_t(INT32_MAX))
    throw std::runtime_error("gather_rows: more than 2 GB of bodies");
  std::vector<std::uint64_t> all(2 * std::size_t(t.size()));
  MPI_CHECK(MPI_Allgather(mine, 2, MPI_UINT64_T, all.data(), 2, MPI_UINT64_T, t.comm()));
  std::vector<int> displs(t.size()), counts(t.size());
  for (int r = 0; r < t.size(); ++r) displs[r] = int(all[2 * r]), counts[r] = int(all[2 * r + 1]);
  MPI_CHECK(MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, v.data(), counts.data(),
                           displs.data(), MPI_BYTE, t.comm()));
}

}  // namespace nbody::ranks
