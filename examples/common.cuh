// Helpers shared by the case-study examples: error checks, event timing, argument parsing.
#pragma once
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#define CHECK(call)                                                                          \
  do {                                                                                       \
    cudaError_t err_ = (call);                                                               \
    if (err_ != cudaSuccess) {                                                               \
      fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #call,                   \
              cudaGetErrorString(err_));                                                     \
      exit(1);                                                                               \
    }                                                                                        \
  } while (0)

// Times `launch` (a callable that enqueues one kernel) with CUDA events; returns milliseconds
// of the last of `reps` launches (the first warms up).
template <class Launch>
float time_ms(Launch launch, int reps = 3) {
  cudaEvent_t a, b;
  CHECK(cudaEventCreate(&a));
  CHECK(cudaEventCreate(&b));
  float ms = 0.f;
  for (int r = 0; r < reps; ++r) {
    CHECK(cudaEventRecord(a));
    launch();
    CHECK(cudaGetLastError());
    CHECK(cudaEventRecord(b));
    CHECK(cudaEventSynchronize(b));
    CHECK(cudaEventElapsedTime(&ms, a, b));
  }
  CHECK(cudaEventDestroy(a));
  CHECK(cudaEventDestroy(b));
  return ms;
}

// True when `variant` is `name` or "all".
inline bool selected(const char *variant, const char *name) {
  return strcmp(variant, "all") == 0 || strcmp(variant, name) == 0;
}
