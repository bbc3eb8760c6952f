// Shared helpers of the cuda-advisor microbenchmarks (seed 002 section III, MODELS.md section 2).
//
// Every benchmark follows the paper's recipe (Fig. 3):
//   * the measured instructions are inline PTX in `asm volatile`, so the front end neither
//     removes nor reorders them;
//   * their operands come from registers seeded with clock() at run time, so constant
//     propagation cannot fold them (with an immediate operand ptxas folds a chain of add.s32
//     into one IADD3 and moves it out of the timed region: the SASS check catches that);
//   * long straight-line sequences come from template recursion: Repeat<N> unrolls MB_UNROLL
//     copies and recurses N times (the paper: 8,191 unrolled copies, the pragma's limit, times N);
//   * the timed region is delimited by two clock64() reads (SM cycles); whole launches are
//     timed with CUDA events (nanoseconds).
// The tests compile every kernel to PTX (and SASS where cuobjdump is installed) and count the
// measured instructions between the two clock64 reads: the paper's Fig. 2 (b) and (c) checks.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>

#define MB_CHECK(call)                                                                        \
  do {                                                                                        \
    cudaError_t mb_err_ = (call);                                                             \
    if (mb_err_ != cudaSuccess) {                                                             \
      fprintf(stderr, "cuda-advisor-microbench: %s failed: %s\n", #call,                      \
              cudaGetErrorString(mb_err_));                                                   \
      exit(4);                                                                                \
    }                                                                                         \
  } while (0)

// Copies unrolled per recursion level and recursion depth: MB_CHAIN instructions per chain.
#ifndef MB_UNROLL
#define MB_UNROLL 128
#endif
#ifndef MB_DEPTH
#define MB_DEPTH 4
#endif
constexpr int MB_CHAIN = MB_UNROLL * MB_DEPTH;
// Independent chains per thread in the throughput kernels (instruction-level parallelism).
constexpr int MB_ILP = 4;
constexpr int MB_BLOCK = 256;  // threads per block of the throughput kernels

// ------------------------------------------------------------------ device-side building blocks

// Repeat<N>::run(body) calls body() MB_UNROLL * N times in straight-line code (Fig. 3).
template <int N>
struct Repeat {
  template <class Body>
  __device__ __forceinline__ static void run(Body &body) {
#pragma unroll
    for (int i = 0; i < MB_UNROLL; ++i) body();
    Repeat<N - 1>::run(body);
  }
};
template <>
struct Repeat<0> {
  template <class Body>
  __device__ __forceinline__ static void run(Body &) {}
};

// Unrolled<N>::run(body): N copies, for sequences below the unroll limit.
template <int N>
struct Unrolled {
  template <class Body>
  __device__ __forceinline__ static void run(Body &body) {
#pragma unroll
    for (int i = 0; i < N; ++i) body();
  }
};
template <>
struct Unrolled<0> {
  template <class Body>
  __device__ __forceinline__ static void run(Body &) {}
};

// The timer: a 64-bit SM cycle counter read that the compiler keeps in program order.
__device__ __forceinline__ long long mb_clock64() {
  long long t;
  asm volatile("mov.u64 %0, %%clock64;" : "=l"(t)::"memory");
  return t;
}

// A run-time value the compiler cannot know: the paper's "dynamic value assignment".
// It reads %clock (what clock() reads), so that %clock64 marks only the timed region.
__device__ __forceinline__ unsigned mb_seed() {
  unsigned t;
  asm volatile("mov.u32 %0, %%clock;" : "=r"(t));
  return t;
}

// A float close to 1 built from a run-time seed (keeps fma chains finite for MB_CHAIN steps).
__device__ __forceinline__ float mb_seed_f32(unsigned seed) {
  return __uint_as_float(0x3f800000u | (seed & 0x7fu));
}

// ------------------------------------------------------------------------- host-side helpers

struct MbEvents {
  cudaEvent_t start_, stop_;
  MbEvents() {
    MB_CHECK(cudaEventCreate(&start_));
    MB_CHECK(cudaEventCreate(&stop_));
  }
  ~MbEvents() {
    cudaEventDestroy(start_);
    cudaEventDestroy(stop_);
  }
  void start() { MB_CHECK(cudaEventRecord(start_)); }
  // Nanoseconds since start(); checks the launch in between.
  double stop_ns() {
    MB_CHECK(cudaGetLastError());
    MB_CHECK(cudaEventRecord(stop_));
    MB_CHECK(cudaEventSynchronize(stop_));
    float ms = 0.f;
    MB_CHECK(cudaEventElapsedTime(&ms, start_, stop_));
    return 1e6 * (double)ms;
  }
};

// What every benchmark group needs to know about the device and the run.
struct MbContext {
  int device;
  int sm_count;
  int max_threads_per_sm;
  int l2_bytes;
  int reps;
  void *flush_buffer;  // 2 x L2: written before a launch that must start with a cold L2
  size_t flush_bytes;
};

// Evicts the L2 by writing a buffer twice its size.
inline void mb_flush_l2(const MbContext &ctx) {
  MB_CHECK(cudaMemset(ctx.flush_buffer, ctx.reps & 0xff, ctx.flush_bytes));
  MB_CHECK(cudaDeviceSynchronize());
}

// Resident blocks of `kernel` per SM times SMs (one full wave).
template <class Kernel>
inline int mb_wave_blocks(const MbContext &ctx, Kernel kernel, int block, size_t shared = 0) {
  int per_sm = 0;
  MB_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, block, shared));
  return (per_sm > 0 ? per_sm : 1) * ctx.sm_count;
}

// The benchmark groups (one per translation unit); each prints JSON lines on stdout.
void mb_run_arith(const MbContext &ctx);
void mb_run_arith_intensity(const MbContext &ctx);
void mb_run_memory(const MbContext &ctx);
void mb_run_dram_sweep(const MbContext &ctx);
void mb_run_shmem(const MbContext &ctx);
void mb_run_divergence(const MbContext &ctx);
