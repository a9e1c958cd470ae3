// SPDX-License-Identifier: BSD-3-Clause
// Stage 11: ranks, one GPU each. Beyond the book (14.6 stops at one host): MPI starts the
// processes, NCCL moves the positions between their GPUs.
//
// Changes from stage 10: processes instead of threads, so no rank can read another's memory; a
// whole simulation instead of one force call, so the bodies stay on the GPUs between steps. Each
// rank owns a slice of the bodies: it integrates their velocities and positions and computes
// their forces against all n with stage 08's kernel (lesson_mass_scaled.cuh over
// lesson_register_blocked.cuh, your code). What crosses the wire each step is the positions, 16
// bytes a body: every rank's slice to every other rank, one all-gather, in place.
// The slices are ceil(n / P) bodies (the last ones shorter, or empty), laid out at rank * slice in
// a buffer padded to P * slice: every rank sends the same count, which ncclAllGather needs, and
// the n bodies stay contiguous, so the force kernel reads [0, n) as on one GPU and the padding
// (zero mass, never integrated) is never read. P broadcasts in a group would move the same bytes
// with no padding, but as P collectives where one says what happens.
// With NCCL the all-gather is enqueued on the stage's stream: after the drift kernel that wrote
// the slice, before the force kernel that reads all of it, with no host wait in the loop. With
// MPI alone (no NCCL, or --transport mpi) the positions go through host memory: the host must
// wait for the copy out before MPI reads it.
// What to look for: the bench's ranks tables (force and all-gather time per step, strong and
// weak scaling, stage 10 beside it) and model_ranks.py's prediction past the GPUs measured.
#include "lesson_mass_scaled.cuh"
#include "ranks.h"

#include "common/check.h"
#include "common/memory.h"

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <vector>

namespace {

// Stage 08's best blocking (the progression's): 4 rows per thread, 256 threads, unrolled 16.
constexpr int R = 4, B = 256, U = 16;

// A rank's share of n bodies among P ranks.
struct slice {
  std::size_t size = 0;   // bodies per rank in the gathered buffer (the last ranks' partly padding)
  std::size_t begin = 0;  // this rank's first body
  std::size_t rows = 0;   // this rank's bodies: [begin, begin + rows), maybe none
  std::size_t padded = 0;  // the buffer every rank gathers into: P * size bodies
  std::size_t at = 0;      // where this rank's slice sits in that buffer (rank * size)
};

slice slice_of(std::size_t n, int rank, int ranks) {
  slice s;
  // EXERCISE BEGIN: this rank's slice of the n bodies: ceil(n / P) each, the last ranks shorter or
  // empty when n is not a multiple of P, so that every rank sends the same count.
  s.size = nbody::ceil_div(n, std::size_t(ranks));
  s.padded = s.size * std::size_t(ranks);
  s.at = s.size * std::size_t(rank);
  s.begin = std::min(n, s.at);
  s.rows = std::min(n, s.begin + s.size) - s.begin;
  // EXERCISE END
  return s;
}

// Kick and drift of leapfrog (nbody::leapfrog_step): v += a dt/2, then x += v dt.
__global__ void kick_drift(float4 *__restrict__ body, float4 *__restrict__ vel,
                           const float4 *__restrict__ accel, std::size_t rows, float half_dt,
                           float dt) {
  const std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= rows) return;
  float4 v = vel[i], x = body[i];
  const float4 a = accel[i];
  v.x += half_dt * a.x, v.y += half_dt * a.y, v.z += half_dt * a.z;
  x.x += dt * v.x, x.y += dt * v.y, x.z += dt * v.z;
  vel[i] = v, body[i] = x;
}

// The closing kick: v += a dt/2 with the new forces.
__global__ void kick(float4 *__restrict__ vel, const float4 *__restrict__ accel, std::size_t rows,
                     float half_dt) {
  const std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= rows) return;
  float4 v = vel[i];
  const float4 a = accel[i];
  v.x += half_dt * a.x, v.y += half_dt * a.y, v.z += half_dt * a.z;
  vel[i] = v;
}

unsigned blocks_of(std::size_t rows) {
  return unsigned(std::max<std::size_t>(1, nbody::ceil_div(rows, 256)));
}

// Forces on this rank's rows from all n bodies: stage 08's kernel, its columns split over blocks
// when the slice alone has too few rows to fill the GPU.
void slice_forces(float4 *d_accel, const float4 *d_body, std::size_t n, const slice &s,
                  float softening2, cudaStream_t stream) {
  if (s.rows == 0) return;
  const std::size_t row_blocks = nbody::ceil_div(s.rows, std::size_t(R) * B);
  const int split = nbody::column_split(n, row_blocks, B);
  nbody::launch_register_blocked<mass_scaled_form, R, B, U>(d_accel, d_body, n, s.begin, s.rows,
                                                            split, softening2, stream);
}

// Every rank's slice of d_body (device, s.padded bodies) to every rank, in place. h_body: pinned
// host memory of s.padded bodies, for the MPI transport.
void all_gather_positions(const nbody::ranks::team &t, float4 *d_body, float4 *h_body,
                          const slice &s, std::size_t n, cudaStream_t stream) {
  // EXERCISE BEGIN: the all-gather of the positions, ordered after the drift kernel already in
  // `stream` and before the force kernel that follows: NCCL in the stream itself, no host wait;
  // MPI through h_body, the host waiting only where MPI must read what the GPU wrote.
#if COURSE_HAVE_NCCL
  if (t.how() == nbody::ranks::transport::nccl) {
    NCCL_CHECK(ncclAllGather(d_body + s.at, d_body, s.size * 4, ncclFloat, t.nccl(), stream));
    return;
  }
#endif
  const std::size_t bytes = s.size * sizeof(float4);
  CUDA_CHECK(cudaMemcpyAsync(h_body + s.at, d_body + s.at, bytes, cudaMemcpyDeviceToHost, stream));
  CUDA_CHECK(cudaStreamSynchronize(stream));
  if (bytes > std::size_t(INT32_MAX)) throw std::runtime_error("stage 11: a slice over 2 GB");
  MPI_CHECK(
      MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, h_body, int(bytes), MPI_BYTE, t.comm()));
  CUDA_CHECK(cudaMemcpyAsync(d_body, h_body, n * sizeof(float4), cudaMemcpyHostToDevice, stream));
  // EXERCISE END
}

void simulate(const nbody::ranks::team &t, nbody::ranks::state &st, float dt, int steps,
              float softening2, nbody::ranks::step_times *times) {
  const std::size_t n = st.body.size();
  if (st.vel.size() != n) throw std::invalid_argument("stage 11: body and vel differ in length");
  st.accel.assign(n, float4{0, 0, 0, 0});
  if (n == 0) return;
  CUDA_CHECK(cudaSetDevice(t.device()));
  const slice s = slice_of(n, t.rank(), t.size());
  course::stream stream;
  // The positions: all n, then zero-mass padding up to P slices (never integrated, never read as
  // a source: the kernel's columns end at n).
  course::device_buffer<float4> d_body(s.padded), d_vel(std::max<std::size_t>(s.rows, 1)),
      d_accel(std::max<std::size_t>(s.rows, 1));
  course::host_buffer<float4> h_body(t.how() == nbody::ranks::transport::mpi ? s.padded : 0,
                                     course::host_memory::pinned);
  CUDA_CHECK(cudaMemsetAsync(d_body.get(), 0, s.padded * sizeof(float4), stream));
  CUDA_CHECK(cudaMemcpyAsync(d_body.get(), st.body.data(), n * sizeof(float4),
                             cudaMemcpyHostToDevice, stream));
  if (s.rows)
    CUDA_CHECK(cudaMemcpyAsync(d_vel.get(), st.vel.data() + s.begin, s.rows * sizeof(float4),
                               cudaMemcpyHostToDevice, stream));
  slice_forces(d_accel.get(), d_body.get(), n, s, softening2, stream);

  // The split of each step (events only when asked: recording costs nothing on the host).
  const int timed = times ? steps : 0;
  std::vector<course::event> marks(5 * std::size_t(timed));
  const float half = 0.5f * dt;
  for (int step = 0; step < steps; ++step) {
    if (step < timed) CUDA_CHECK(cudaEventRecord(marks[5 * step], stream));
    if (s.rows) {
      kick_drift<<<blocks_of(s.rows), 256, 0, stream>>>(d_body.get() + s.begin, d_vel.get(),
                                                        d_accel.get(), s.rows, half, dt);
      CUDA_CHECK_LAUNCH();
    }
    if (step < timed) CUDA_CHECK(cudaEventRecord(marks[5 * step + 1], stream));
    all_gather_positions(t, d_body.get(), h_body.get(), s, n, stream);
    if (step < timed) CUDA_CHECK(cudaEventRecord(marks[5 * step + 2], stream));
    slice_forces(d_accel.get(), d_body.get(), n, s, softening2, stream);
    if (step < timed) CUDA_CHECK(cudaEventRecord(marks[5 * step + 3], stream));
    if (s.rows) {
      kick<<<blocks_of(s.rows), 256, 0, stream>>>(d_vel.get(), d_accel.get(), s.rows, half);
      CUDA_CHECK_LAUNCH();
    }
    if (step < timed) CUDA_CHECK(cudaEventRecord(marks[5 * step + 4], stream));
  }
  // The final state to every rank: positions from any rank's buffer (all hold all n), velocities
  // and forces from their owners.
  CUDA_CHECK(cudaMemcpyAsync(st.body.data(), d_body.get(), n * sizeof(float4),
                             cudaMemcpyDeviceToHost, stream));
  if (s.rows) {
    CUDA_CHECK(cudaMemcpyAsync(st.vel.data() + s.begin, d_vel.get(), s.rows * sizeof(float4),
                               cudaMemcpyDeviceToHost, stream));
    CUDA_CHECK(cudaMemcpyAsync(st.accel.data() + s.begin, d_accel.get(), s.rows * sizeof(float4),
                               cudaMemcpyDeviceToHost, stream));
  }
  CUDA_CHECK(cudaStreamSynchronize(stream));
  nbody::ranks::gather_rows(t, st.vel, s.begin, s.rows);
  nbody::ranks::gather_rows(t, st.accel, s.begin, s.rows);
  if (times && timed) {
    *times = {};
    for (int step = 0; step < timed; ++step) {
      const course::event *m = &marks[5 * std::size_t(step)];
      times->gather_ms += course::elapsed_ms(m[1], m[2]);
      times->force_ms += course::elapsed_ms(m[2], m[3]);
      times->step_ms += course::elapsed_ms(m[0], m[4]);
    }
    times->gather_ms /= timed, times->force_ms /= timed, times->step_ms /= timed;
  }
}

}  // namespace

NBODY_RANKS_STAGE("ranks, one GPU each: slices, NCCL all-gather (beyond the book)", simulate);
