// SPDX-License-Identifier: BSD-3-Clause
// Chapter 14, stage 11: what the ranks share besides the bodies (given, not a lesson). MPI starts
// the processes and hands each the NCCL unique id; NCCL, where the build found it, moves the
// positions between the GPUs. Nothing else here is MPI: no rank reads another's memory except
// through the one collective of stage 11.
//
// A team is one run's ranks: an MPI communicator (MPI_COMM_WORLD under mpirun, MPI_COMM_SELF for
// a one-rank reference inside a many-rank run) and, with transport nccl, an NCCL communicator over
// the same ranks, each rank on a GPU of its own (NCCL refuses two ranks on one GPU). With transport
// mpi the positions go through host memory and MPI_Allgather, and any number of ranks may share a
// GPU: that is how one GPU tests four ranks.
#pragma once

#include "nbody.h"

#include "common/stage.h"

#include <mpi.h>
#if COURSE_HAVE_NCCL
#include <nccl.h>
#endif

#include <stdexcept>
#include <string>
#include <vector>

#ifndef COURSE_HAVE_NCCL
#define COURSE_HAVE_NCCL 0
#endif

namespace nbody::ranks {

[[noreturn]] void throw_mpi_error(int code, const char *call, const char *file, int line);
#if COURSE_HAVE_NCCL
[[noreturn]] void throw_nccl_error(ncclResult_t code, const char *call, const char *file, int line);
#endif

}  // namespace nbody::ranks

// Every MPI and NCCL call checked, as CUDA_CHECK checks CUDA's: an error throws, naming the call.
#define MPI_CHECK(call)                                                             \
  do {                                                                              \
    const int course_mpi_status_ = (call);                                          \
    if (course_mpi_status_ != MPI_SUCCESS)                                          \
      nbody::ranks::throw_mpi_error(course_mpi_status_, #call, __FILE__, __LINE__); \
  } while (0)
#if COURSE_HAVE_NCCL
#define NCCL_CHECK(call)                                                              \
  do {                                                                                \
    const ncclResult_t course_nccl_status_ = (call);                                  \
    if (course_nccl_status_ != ncclSuccess)                                           \
      nbody::ranks::throw_nccl_error(course_nccl_status_, #call, __FILE__, __LINE__); \
  } while (0)
#endif

namespace nbody::ranks {

enum class transport { nccl, mpi };
const char *to_string(transport t);
// nccl where the build has it, else mpi.
transport default_transport();
// "nccl" or "mpi" (nccl only where built with it); false, with the reason in `why`, otherwise.
bool parse_transport(const std::string &name, transport &t, std::string &why);

// MPI_Init once per process, MPI_Finalize at exit. Without mpirun, Open MPI starts a one-rank
// world of its own (a singleton): the tests and `make nbody` run one rank that way.
void start_mpi();

// The ranks on this rank's host (MPI_COMM_TYPE_SHARED), and this rank's place among them.
struct host_place {
  int local_rank = 0, local_ranks = 1;
};
host_place place_on_host(MPI_Comm comm);

// Why `how` cannot run on this many ranks here ("" when it can): NCCL needs a GPU per rank of a
// host. Collective over comm (every rank gets the same answer).
std::string cannot_run(MPI_Comm comm, transport how);

class team {
 public:
  // Collective over comm: picks this process's GPU (its rank among the world's ranks on its host,
  // modulo the visible GPUs, whatever the team), and with
  // transport nccl makes the NCCL communicator (rank 0's unique id, shared by MPI_Bcast).
  team(MPI_Comm comm, transport how);
  ~team();
  team(const team &) = delete;
  team &operator=(const team &) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }
  MPI_Comm comm() const { return comm_; }
  transport how() const { return how_; }
  int device() const { return device_; }
#if COURSE_HAVE_NCCL
  ncclComm_t nccl() const { return nccl_; }
#endif

 private:
  MPI_Comm comm_;
  transport how_;
  int rank_ = 0, size_ = 1, device_ = 0;
#if COURSE_HAVE_NCCL
  ncclComm_t nccl_ = nullptr;
#endif
};

// A run's state, the same on every rank on entry and on return: all n bodies (x, y, z, mass)
// and their velocities; on return also the forces of the final positions (accel).
struct state {
  std::vector<float4> body, vel, accel;
};

// Where the time of one step goes, in ms per step over the timed steps: this rank's force
// computation (the force kernel), its all-gather, and the whole step (integration included).
struct step_times {
  double force_ms = 0, gather_ms = 0, step_ms = 0;
};

// Stage 11: `steps` leapfrog steps (kick-drift-kick, as nbody::leapfrog_step) of the bodies in
// `s`, each rank integrating its own slice on its GPU. Collective over the team. `times`, when
// not null, receives this rank's split of a step (CUDA events; the caller reduces over ranks).
using simulate_fn = void (*)(const team &t, state &s, float dt, int steps, float softening2,
                             step_times *times);

struct stage {
  course::stage_info info;
  simulate_fn simulate = nullptr;
};

// The one stage 11 linked into a program (a test, the driver, the bench).
const stage &the_stage();

// Gathers every rank's [begin, begin + rows) of v (host memory, n elements, the same slice
// layout on every rank: rank r's rows start at begin_of(r)) so that every rank holds all of it.
// Used once after the run (velocities and forces), never in the step loop.
void gather_rows(const team &t, std::vector<float4> &v, std::size_t begin, std::size_t rows);

}  // namespace nbody::ranks

// NBODY_RANKS_STAGE("title", simulate);  registers the stage compiled in this file.
#define NBODY_RANKS_STAGE(title, fn)                                                         \
  static course::registrar<nbody::ranks::stage> COURSE_CONCAT(course_registrar_, __LINE__) { \
    nbody::ranks::stage { COURSE_THIS_STAGE(title), fn }                                     \
  }
