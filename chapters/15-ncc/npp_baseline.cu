// SPDX-License-Identifier: BSD-3-Clause
#include "npp_baseline.h"

#include "common/check.h"

#include <nppcore.h>
#include <nppi.h>

#include <stdexcept>
#include <string>

namespace ncc {

namespace {

NppStreamContext context(cudaStream_t stream) {
  NppStreamContext c{};
  int device = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  cudaDeviceProp prop{};
  CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  c.hStream = stream;
  c.nCudaDeviceId = device;
  c.nMultiProcessorCount = prop.multiProcessorCount;
  c.nMaxThreadsPerMultiProcessor = prop.maxThreadsPerMultiProcessor;
  c.nMaxThreadsPerBlock = prop.maxThreadsPerBlock;
  c.nSharedMemPerBlock = prop.sharedMemPerBlock;
  c.nCudaDevAttrComputeCapabilityMajor = prop.major;
  c.nCudaDevAttrComputeCapabilityMinor = prop.minor;
  unsigned flags = 0;
  if (stream) CUDA_CHECK(cudaStreamGetFlags(stream, &flags));
  c.nStreamFlags = flags;
  return c;
}

void npp_check(NppStatus s, const char *what) {
  if (s != NPP_SUCCESS)
    throw std::runtime_error(std::string("NPP error ") + std::to_string(int(s)) + " in " + what);
}

}  // namespace

std::string npp_version() {
  const NppLibraryVersion *v = nppGetLibVersion();
  if (!v) return "unknown";
  return std::to_string(v->major) + "." + std::to_string(v->minor) + "." + std::to_string(v->build);
}

npp_baseline::npp_baseline(const problem &p) : p_(p), ctx_(context(nullptr)) {
  const view &v = p.v();
  std::size_t bytes = 0;
#if NCC_NPP_BUFFER_API == 1
  const NppiSize dst{v.out_w(), v.out_h()};
  npp_check(nppiValidNormLevelGetBufferHostSize_8u32f_C1R_Ctx(dst, &bytes, ctx_), "buffer size");
#elif NCC_NPP_BUFFER_API == 2
  const NppiSize src{v.width, v.height};
  const NppiSize tpl{v.tw, v.th};
  int b = 0;
  npp_check(nppiCrossCorrValid_NormLevelGetBufferSize_8u32f_C1R(src, tpl, &b), "buffer size");
  bytes = std::size_t(b);
#else
  bytes = std::size_t(v.width) * std::size_t(v.height) * 64 +
          (std::size_t(64) << 20);  // generous: API unknown
#endif
  buffer_ = course::device_buffer<unsigned char>(bytes ? bytes : 1);
}

void npp_baseline::run(float *d_coef, cudaStream_t stream) {
  const view &v = p_.v();
  if (ctx_.hStream != stream)
    ctx_ = context(stream);  // the device query once per stream, not per call
  npp_check(nppiCrossCorrValid_NormLevel_8u32f_C1R_Ctx(
                v.image, int(v.pitch), NppiSize{v.width, v.height}, v.templ, int(v.tpitch),
                NppiSize{v.tw, v.th}, d_coef, int(sizeof(float)) * v.out_w(), buffer_.get(), ctx_),
            "nppiCrossCorrValid_NormLevel_8u32f_C1R_Ctx");
}

}  // namespace ncc
