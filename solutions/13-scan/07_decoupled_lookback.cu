// SPDX-License-Identifier: BSD-3-Clause
// Stage 07: single-pass scan with decoupled look-back (Merrill and Garland, 2016; the book's
// 13.4 names the single-pass idea, this is its modern form, what CUB's DeviceScan does).
//
// Changes from stage 04: one pass, 2N of global traffic. Each block takes the next tile number
// from a global counter (so every tile before it belongs to a block that is already running),
// scans its tile of B x 8 elements, and publishes the tile's aggregate in a status word. It then
// looks back over the tiles before it, adding their aggregates until it meets one that has
// published its inclusive prefix, publishes its own inclusive prefix, and writes its elements.
// Status words pack (epoch, status, value) into 64 bits, written and read whole with relaxed
// device-scope atomics, so no fence is needed between a value and its flag. The epoch, new per
// call, makes the previous call's words stale without clearing the array; the tile counter is
// reset by a memset on the stream before each call.
// What to look for: in the timing, the ratio to CUB (goal 0.95x) and a flat curve over n; in the
// SASS, ATOMG for the tile number, the LDG.E.64.STRONG.GPU spin of the look-back.
#include "scan_common.cuh"

#include <cuda/atomic>

namespace {

constexpr unsigned items = 8;  // elements per thread
constexpr unsigned status_aggregate = 1, status_prefix = 2;
using block_scan = scan::warp_block_scan<scan::shfl_warp_scan>;
using status_ref = cuda::atomic_ref<unsigned long long, cuda::thread_scope_device>;

__device__ unsigned long long pack(unsigned epoch, unsigned status, int value) {
  return (static_cast<unsigned long long>((epoch << 2) | status) << 32) | static_cast<unsigned>(value);
}

// Thread 0 of a tile's block: publishes `aggregate`, returns the sum of every tile before this one.
__device__ int look_back(unsigned long long *status, unsigned tile, int aggregate, unsigned epoch) {
  if (tile == 0) {
    status_ref(status[0]).store(pack(epoch, status_prefix, aggregate), cuda::memory_order_relaxed);
    return 0;
  }
  status_ref(status[tile]).store(pack(epoch, status_aggregate, aggregate), cuda::memory_order_relaxed);
  int prefix = 0;
  // EXERCISE BEGIN: walk j = tile-1, tile-2, ...: wait until status[j] carries this call's
  // epoch, add its value; stop at a tile whose status is status_prefix (tile 0 always is).
  // Then publish prefix + aggregate with status_prefix.
  for (unsigned j = tile - 1;; --j) {
    unsigned long long word;
    do {
      word = status_ref(status[j]).load(cuda::memory_order_relaxed);
    } while ((unsigned(word >> 32) >> 2) != epoch);  // not yet written in this call
    prefix += static_cast<int>(static_cast<unsigned>(word));
    if ((unsigned(word >> 32) & 3u) == status_prefix) break;
  }
  status_ref(status[tile]).store(pack(epoch, status_prefix, prefix + aggregate), cuda::memory_order_relaxed);
  // EXERCISE END
  return prefix;
}

template <unsigned B>
__global__ void __launch_bounds__(B) lookback_scan(int *out, const int *in, std::size_t n, bool inclusive,
                                                   unsigned long long *status, unsigned *tile_counter,
                                                   unsigned tiles, unsigned epoch) {
  __shared__ block_scan::storage<B> s;
  __shared__ unsigned tile_sh;
  __shared__ int prefix_sh;
  if (threadIdx.x == 0) tile_sh = atomicAdd(tile_counter, 1u);
  __syncthreads();
  const unsigned tile = tile_sh;
  if (tile >= tiles) return;  // only when the counter was not reset (the wrong variant)
  const std::size_t first = (std::size_t(tile) * B + threadIdx.x) * items;
  int v[items];
  int sum = 0;
#pragma unroll
  for (unsigned k = 0; k < items; ++k) {
    const std::size_t i = first + k;
    v[k] = i < n ? in[i] : 0;
    sum += v[k];
  }
  int aggregate;
  const int incl = block_scan::inclusive<B>(s, sum, aggregate);
  if (threadIdx.x == 0) prefix_sh = look_back(status, tile, aggregate, epoch);
  __syncthreads();
  int run = prefix_sh + incl - sum;  // everything before this thread's first element
#pragma unroll
  for (unsigned k = 0; k < items; ++k) {
    const std::size_t i = first + k;
    if (inclusive) run += v[k];
    if (i < n) out[i] = run;
    if (!inclusive) run += v[k];
  }
}

void scan_entry(int *d_out, const int *d_in, std::size_t n, bool inclusive, const scan::config &cfg,
                scan::workspace &ws, cudaStream_t stream) {
  scan::require_threads(cfg.threads);
  if (n == 0) return;
  scan::dispatch_threads(cfg.threads, [&](auto b) {
    constexpr unsigned B = decltype(b)::value;
    const std::size_t tiles = scan::ceil_div(n, std::size_t(B) * items);
    if (tiles > 0xffffffffu) throw std::invalid_argument("too many tiles for a 32-bit tile counter");
    unsigned long long *status = ws.tile_status(tiles);
    CUDA_CHECK(cudaMemsetAsync(ws.counter(), 0, sizeof(unsigned), stream));
    lookback_scan<B><<<unsigned(tiles), B, 0, stream>>>(d_out, d_in, n, inclusive, status, ws.counter(),
                                                         unsigned(tiles), ws.next_epoch());
    CUDA_CHECK_LAUNCH();
  });
}

}  // namespace

SCAN_STAGE(COURSE_THIS_STAGE("single pass, decoupled look-back"), scan_entry, false, nullptr, nullptr, 2);
