// F_SHMEM microbenchmark (seed 002 section III-B, Fig. 4): shared-memory access time under
// 1-way (no conflict) ... 32-way bank conflicts.
//
// Lane l of every warp reads word (l % k) * 32 + l / k of a table of 32 x 32 words: bank l / k,
// row l % k, so at most k lanes hit one bank with k different addresses (a k-way conflict and
// k transactions per request; k = 1 is conflict-free).  Each table entry holds its own shared
// address, so every load depends on the previous one (two independent chains per thread) and
// the compiler cannot know the address.
//
// Timed region (checked by tests/test_microbench.py): per iteration 2 x MB_SHMEM_UNROLL
// ld.shared.u32, after the bar.sync that publishes the table.
#include "microbench.cuh"

constexpr int MB_SHMEM_WORDS = 32 * 32;
constexpr int MB_SHMEM_UNROLL = 64;

struct ShmemChase2 {
  unsigned a, b;
  __device__ __forceinline__ void operator()() {
    asm volatile("ld.shared.u32 %0, [%0];" : "+r"(a));
    asm volatile("ld.shared.u32 %0, [%0];" : "+r"(b));
  }
};

extern "C" __global__ void __launch_bounds__(MB_BLOCK)
    mb_shmem_conflicts(int ways, int iters, unsigned *sink, long long *cycles) {
  __shared__ unsigned table[2 * MB_SHMEM_WORDS];
  unsigned base = (unsigned)__cvta_generic_to_shared(table);
  for (int i = threadIdx.x; i < 2 * MB_SHMEM_WORDS; i += blockDim.x) table[i] = base + 4u * i;
  __syncthreads();
  int lane = threadIdx.x & 31;
  unsigned word = (lane % ways) * 32 + lane / ways;
  ShmemChase2 c{base + 4u * word, base + 4u * (word + MB_SHMEM_WORDS)};
  long long t0 = mb_clock64();
#pragma unroll 1
  for (int it = 0; it < iters; ++it) Unrolled<MB_SHMEM_UNROLL>::run(c);
  long long t1 = mb_clock64();
  if (c.a == c.b) sink[blockIdx.x] = c.a;  // never true: the chains stay in their tables
  if (blockIdx.x == 0 && threadIdx.x == 0) cycles[0] = t1 - t0;
}

void mb_run_shmem(const MbContext &ctx) {
  unsigned *sink;
  long long *cycles;
  MB_CHECK(cudaMalloc(&sink, 1 << 20));
  MB_CHECK(cudaMalloc(&cycles, sizeof(long long)));
  int blocks = mb_wave_blocks(ctx, mb_shmem_conflicts, MB_BLOCK);
  const int iters = 32;
  mb_shmem_conflicts<<<blocks, MB_BLOCK>>>(1, iters, sink, cycles);  // warm-up
  MB_CHECK(cudaDeviceSynchronize());
  MbEvents ev;
  for (int ways = 1; ways <= 32; ++ways) {
    for (int rep = 0; rep < ctx.reps; ++rep) {
      ev.start();
      mb_shmem_conflicts<<<blocks, MB_BLOCK>>>(ways, iters, sink, cycles);
      double ns = ev.stop_ns();
      long long c = 0;
      MB_CHECK(cudaMemcpy(&c, cycles, sizeof c, cudaMemcpyDeviceToHost));
      printf("{\"bench\": \"shmem_conflicts\", \"ways\": %d, \"rep\": %d, \"ns\": %.1f, "
             "\"cycles\": %lld, \"accesses\": %.0f}\n",
             ways, rep, ns, c, 2.0 * MB_SHMEM_UNROLL * iters * (double)blocks * MB_BLOCK);
    }
  }
  fflush(stdout);
  MB_CHECK(cudaFree(sink));
  MB_CHECK(cudaFree(cycles));
}
