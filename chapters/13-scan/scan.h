// SPDX-License-Identifier: BSD-3-Clause
// Chapter 13, scan: the entry points every stage implements, so one test file and one benchmark
// cover them all, and the workspace the multi-pass stages keep their partial sums in.
//
// Every scan stage scans n ints in 32-bit two's-complement arithmetic (wrap-around), or n floats:
//   inclusive: out[i] = in[0] + ... + in[i]
//   exclusive: out[i] = in[0] + ... + in[i-1], out[0] = 0
// d_out may equal d_in (in place). Block sizes: powers of two, 32..1024.
#pragma once

#include "common/check.h"
#include "common/memory.h"
#include "common/stage.h"

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace scan {

struct config {
  int threads = 256;  // per block: a power of two in 32..1024
  int partials = 0;   // two-level stages: how many partial sums (blocks); 0: as many blocks as the
                      // GPU holds at once
};

// Device memory a scan needs besides its input and output. The caller owns it and may reuse it
// for any number of calls in one stream; calls that may overlap (several streams) need one each.
class workspace {
 public:
  workspace() : counter_(3) {
    CUDA_CHECK(cudaMemset(counter_.get(), 0, 3 * sizeof(unsigned)));
    CUDA_CHECK(cudaDeviceSynchronize());
  }
  // Room for `count` partial sums of type T (grows, never shrinks).
  template <class T>
  T *partials(std::size_t count) {
    const std::size_t bytes = (count ? count : 1) * sizeof(T);
    if (bytes > partials_.size()) partials_ = course::device_buffer<unsigned char>(bytes);
    return reinterpret_cast<T *>(partials_.get());
  }
  // Stages 08, 09, 11 and 12: one 64-bit status word per tile. New words are zeroed (epoch 0 is
  // never current), so a freshly grown array holds no valid status.
  unsigned long long *tile_status(std::size_t tiles) {
    const std::size_t bytes = (tiles ? tiles : 1) * sizeof(unsigned long long);
    if (bytes > status_.size()) {
      status_ = course::device_buffer<unsigned char>(bytes);
      CUDA_CHECK(cudaMemset(status_.get(), 0, bytes));
      CUDA_CHECK(cudaDeviceSynchronize());  // so that work in a non-blocking stream sees the zeros
    }
    return reinterpret_cast<unsigned long long *>(status_.get());
  }
  // Stages 08 and 09: the epoch of the next call, 1, 2, ... (30 bits, then round again from 1).
  unsigned next_epoch() {
    epoch_ = epoch_ % ((1u << 30) - 1) + 1;
    return epoch_;
  }
  // Stages 08 and 09: the tile counter, reset before each call.
  unsigned *counter() const { return counter_.get(); }
  // Stages 09 and 12: where the last tile leaves the number of kept elements.
  unsigned *kept() const { return counter_.get() + 1; }
  // Stage 12: the number of kept elements in the whole input, counted before the split's pass.
  unsigned *total_kept() const { return counter_.get() + 2; }

 private:
  course::device_buffer<unsigned char> partials_, status_;
  course::device_buffer<unsigned> counter_;
  unsigned epoch_ = 0;
};

// d_out = scan of d_in[0, n), device pointers, work enqueued on `stream`; T is int or float.
template <class T>
using scan_fn_of = void (*)(T *d_out, const T *d_in, std::size_t n, bool inclusive,
                            const config &cfg, workspace &ws, cudaStream_t stream);
using scan_fn = scan_fn_of<int>;
using scan_float_fn = scan_fn_of<float>;

// --- stage 06: warp scans in isolation (13.5) ---------------------------------------------------
enum class warp_form {
  conditional,  // 13-13: shared memory, each step guarded by lane >= offset
  zero_padded,  // 13-14: shared memory with 16 zeros below each warp's 32 slots, no guard
  templated,    // 13-15/13-16: one template doing either (here instantiated zero-padded)
  shuffle,      // __shfl_up_sync, guard on lane >= offset
  shuffle_ptx   // 13-17: shfl.sync.up.b32 whose predicate skips the add
};
constexpr warp_form all_warp_forms[] = {warp_form::conditional, warp_form::zero_padded,
                                        warp_form::templated, warp_form::shuffle,
                                        warp_form::shuffle_ptx};
inline const char *to_string(warp_form f) {
  switch (f) {
    case warp_form::conditional: return "conditional (13-13)";
    case warp_form::zero_padded: return "zero-padded (13-14)";
    case warp_form::templated: return "templated (13-15/16)";
    case warp_form::shuffle: return "__shfl_up_sync";
    case warp_form::shuffle_ptx: return "shfl.sync.up PTX (13-17)";
  }
  return "?";
}
// Scans d_in in independent segments of 32 elements (d_in[32k .. 32k+31]) with one warp scan per
// segment; the last segment may be short.
using warp_scan_fn = void (*)(int *d_out, const int *d_in, std::size_t n, warp_form form,
                              bool inclusive, cudaStream_t stream);
// The compute-bound lab: the same segments, each scanned k times over (inclusive; each scan's
// output is the next one's input), so the scan's instructions, not memory, set the time.
using warp_scan_lab_fn = void (*)(int *d_out, const int *d_in, std::size_t n, warp_form form,
                                  unsigned k, cudaStream_t stream);

// --- stages 07 and 09: stream compaction (13.6)
// ---------------------------------------------------------
#ifdef __CUDACC__
#define SCAN_HOST_DEVICE __host__ __device__
#else
#define SCAN_HOST_DEVICE
#endif
enum class predicate { odd, even, positive, all, none };
SCAN_HOST_DEVICE inline bool keep(predicate p, int x) {
  switch (p) {
    case predicate::odd: return (x & 1) != 0;
    case predicate::even: return (x & 1) == 0;
    case predicate::positive: return x > 0;
    case predicate::all: return true;
    case predicate::none: return false;
  }
  return false;
}
inline const char *to_string(predicate p) {
  switch (p) {
    case predicate::odd: return "odd";
    case predicate::even: return "even";
    case predicate::positive: return "positive";
    case predicate::all: return "all";
    case predicate::none: return "none";
  }
  return "?";
}
// Writes the kept elements of d_in, in order, to d_out[0, count) and returns count (waits for
// the stream). d_out must not overlap d_in.
using compact_fn = std::size_t (*)(int *d_out, const int *d_in, std::size_t n, predicate p,
                                   const config &cfg, workspace &ws, cudaStream_t stream);

// --- stage 11: segmented scan (13.1) ------------------------------------------------------------
// The book's form: one head flag per element (d_heads[i] != 0: a segment starts at i; element 0
// always starts one). Each segment is scanned on its own, in wrapping 32-bit arithmetic:
//   inclusive: out[i] = in[h] + ... + in[i]
//   exclusive: out[i] = in[h] + ... + in[i-1], 0 at a head
// where h <= i is the nearest head at or before i (0 if none). d_out may equal d_in (in place);
// any alignment of the three arrays; block sizes as the scans.
using segmented_scan_fn = void (*)(int *d_out, const int *d_in, const std::uint8_t *d_heads,
                                   std::size_t n, bool inclusive, const config &cfg, workspace &ws,
                                   cudaStream_t stream);

// --- stage 12: stream split (13.1), a stable partition -------------------------------------------
// Writes the kept elements of d_in, in order, to d_out[0, count), then the others, in order, to
// d_out[count, n); returns count (waits for the stream). d_out must not overlap d_in.
using split_fn = std::size_t (*)(int *d_out, const int *d_in, std::size_t n, predicate p,
                                 const config &cfg, workspace &ws, cudaStream_t stream);

struct stage {
  course::stage_info info;
  scan_fn scan;                      // null for the compaction, segmented and split stages
  scan_float_fn scan_float;          // the same scan on floats
  bool two_level = false;            // honours config::partials
  warp_scan_fn warp_scan = nullptr;  // stage 06 only
  compact_fn compact = nullptr;      // stages 07 and 09
  int traffic = 0;  // global elements moved per element by the stage's formulation (4, 3, 2)
  warp_scan_lab_fn warp_scan_lab = nullptr;    // stage 06 only
  segmented_scan_fn segmented_scan = nullptr;  // stage 11 only
  split_fn split = nullptr;                    // stage 12 only
};

inline bool supports_threads(int threads) {
  return threads >= 32 && threads <= 1024 && (threads & (threads - 1)) == 0;
}

}  // namespace scan

// SCAN_STAGE("title (13.4.1)", scan_int, scan_float, ...);  registers the stage compiled in this
// file; its id is the build's COURSE_STAGE_ID.
#define SCAN_STAGE(title, ...)                                                       \
  static course::registrar<scan::stage> COURSE_CONCAT(course_registrar_, __LINE__) { \
    scan::stage { COURSE_THIS_STAGE(title), __VA_ARGS__ }                            \
  }
