// SPDX-License-Identifier: BSD-3-Clause
// NPP's normalized cross-correlation (nppiCrossCorrValid_NormLevel_8u32f_C1R, library nppist):
// the chapter's baseline. Built only where CMake finds NPP (NCC_HAVE_NPP); elsewhere the
// benchmark says so and skips it.
#pragma once

#include "ncc.h"

#include <cuda_runtime.h>

#if NCC_HAVE_NPP
#include <nppdefs.h>
#endif

#include <string>

namespace ncc {

#if NCC_HAVE_NPP
// The NPP this program runs with, "13.0.1" (nppGetLibVersion).
std::string npp_version();

// Writes NPP's coefficients (out_w x out_h, dense rows) for p's image and template.
class npp_baseline {
 public:
  explicit npp_baseline(const problem &p);
  void run(float *d_coef, cudaStream_t stream);

 private:
  const problem &p_;
  course::device_buffer<unsigned char> buffer_;
  NppStreamContext ctx_;
};
#endif

}  // namespace ncc
