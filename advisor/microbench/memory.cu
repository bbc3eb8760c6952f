// Memory microbenchmarks (seed 002 section III-B and section V): the eight load/store
// latency-throughput benchmarks for shared memory, L1, L2 and DRAM, and the sweep of bytes in
// flight that gives F_DRAMThr.
//
// Timed regions (checked by tests/test_microbench.py in PTX and SASS):
//   mb_<level>_load_latency     one thread, MB_CHAIN dependent loads (pointer chase)
//   mb_<level>_store_latency    one thread, MB_CHAIN independent stores, then a memory barrier
//   mb_<level>_<op>_throughput  a full wave, MB_ILP independent 16-byte accesses per iteration
//   mb_dram_sweep_ilp<N>        one block of W warps per SM, N independent 16-byte loads each
// Levels: shared (ld/st.shared), l1 (ld.global.ca, a 16 KiB footprint), l2 (ld.global.cg, which
// bypasses L1), dram (ld.global.cg after the L2 was flushed).  Stores on NVIDIA GPUs complete in
// the write-back L2, so the L1 and DRAM store latencies measure the store path to L2; the DRAM
// store throughput streams a footprint four times the L2.
#include "microbench.cuh"

enum MbLevel { MB_SHARED = 0, MB_L1 = 1, MB_L2 = 2, MB_DRAM = 3 };
static const char *const MB_LEVEL_NAMES[] = {"shared", "l1", "l2", "dram"};

// Ring strides of the pointer chases, in bytes: several loads per line in L1 (all hits once
// warm), one sector per load in L2, and 1 KiB in DRAM (a new line per load, few TLB pages).
static const size_t MB_RING_STRIDE[] = {4, 16, 64, 1024};
// Store-latency strides (bytes between consecutive stores).
constexpr int MB_SHARED_STORE_STRIDE = 8;  // 4 would let ptxas merge four stores into STS.128
constexpr int MB_L1_STORE_STRIDE = 16;
constexpr int MB_L2_STORE_STRIDE = 64;
constexpr int MB_DRAM_STORE_STRIDE = 1024;
constexpr int MB_SHARED_TP_BYTES = 16 << 10;  // shared footprint of the throughput kernel
constexpr size_t MB_L1_TP_BYTES = 16 << 10;   // global footprint that stays in L1

// ---------------------------------------------------------------------------- load latency

struct SharedChase {
  unsigned p;
  __device__ __forceinline__ void operator()() { asm volatile("ld.shared.u32 %0, [%0];" : "+r"(p)); }
};
struct L1Chase {
  unsigned long long p;
  __device__ __forceinline__ void operator()() {
    asm volatile("ld.global.ca.u64 %0, [%0];" : "+l"(p));
  }
};
struct L2Chase {
  unsigned long long p;
  __device__ __forceinline__ void operator()() {
    asm volatile("ld.global.cg.u64 %0, [%0];" : "+l"(p));
  }
};

// Two passes over the chain: the first warms the instruction cache (and, for L1/L2, the data
// cache: their ring has MB_CHAIN entries); the DRAM ring is longer, so the second pass misses.
template <class Chase, class P>
__device__ __forceinline__ void mb_chase(P start, unsigned *sink, long long *cycles) {
  Chase c;
  c.p = start;
  long long t0 = 0, t1 = 0;
#pragma unroll 1
  for (int pass = 0; pass < 2; ++pass) {
    t0 = mb_clock64();
    Repeat<MB_DEPTH>::run(c);
    t1 = mb_clock64();
  }
  sink[0] = (unsigned)c.p;
  cycles[0] = t1 - t0;
}

extern "C" __global__ void mb_shared_load_latency(unsigned *sink, long long *cycles) {
  __shared__ unsigned ring[MB_CHAIN];
  unsigned base = (unsigned)__cvta_generic_to_shared(ring);
  for (int i = 0; i < MB_CHAIN; ++i) ring[i] = base + 4u * ((i + 1) % MB_CHAIN);
  __syncthreads();
  mb_chase<SharedChase>(base, sink, cycles);
}
extern "C" __global__ void mb_l1_load_latency(const unsigned long long *ring, unsigned *sink,
                                              long long *cycles) {
  mb_chase<L1Chase>((unsigned long long)ring, sink, cycles);
}
extern "C" __global__ void mb_l2_load_latency(const unsigned long long *ring, unsigned *sink,
                                              long long *cycles) {
  mb_chase<L2Chase>((unsigned long long)ring, sink, cycles);
}
extern "C" __global__ void mb_dram_load_latency(const unsigned long long *ring, unsigned *sink,
                                                long long *cycles) {
  mb_chase<L2Chase>((unsigned long long)ring, sink, cycles);
}

// --------------------------------------------------------------------------- store latency

template <int LEVEL, int STRIDE>
struct StoreOp {
  unsigned long long p;
  unsigned v;
  __device__ __forceinline__ void operator()() {
    if (LEVEL == MB_SHARED)
      asm volatile("st.shared.u32 [%0], %1;" ::"r"((unsigned)p), "r"(v) : "memory");
    else if (LEVEL == MB_L1)
      asm volatile("st.global.wb.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
    else if (LEVEL == MB_L2)
      asm volatile("st.global.cg.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
    else
      asm volatile("st.global.cs.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
    p += STRIDE;
  }
};

template <int LEVEL, int STRIDE>
__device__ __forceinline__ void mb_store_latency(unsigned long long base, long long *cycles) {
  StoreOp<LEVEL, STRIDE> op;
  op.v = mb_seed();
  long long t0 = 0, t1 = 0;
#pragma unroll 1
  for (int pass = 0; pass < 2; ++pass) {
    op.p = base;
    t0 = mb_clock64();
    Repeat<MB_DEPTH>::run(op);
    if (LEVEL == MB_SHARED)
      asm volatile("membar.cta;" ::: "memory");
    else
      asm volatile("membar.gl;" ::: "memory");
    t1 = mb_clock64();
  }
  cycles[0] = t1 - t0;
}

extern "C" __global__ void mb_shared_store_latency(unsigned *sink, long long *cycles) {
  __shared__ unsigned buf[MB_CHAIN * MB_SHARED_STORE_STRIDE / 4];
  mb_store_latency<MB_SHARED, MB_SHARED_STORE_STRIDE>(__cvta_generic_to_shared(buf), cycles);
  __syncthreads();
  sink[0] = buf[mb_seed() % (MB_CHAIN * MB_SHARED_STORE_STRIDE / 4)];
}
extern "C" __global__ void mb_l1_store_latency(unsigned *buf, long long *cycles) {
  mb_store_latency<MB_L1, MB_L1_STORE_STRIDE>((unsigned long long)buf, cycles);
}
extern "C" __global__ void mb_l2_store_latency(unsigned *buf, long long *cycles) {
  mb_store_latency<MB_L2, MB_L2_STORE_STRIDE>((unsigned long long)buf, cycles);
}
extern "C" __global__ void mb_dram_store_latency(unsigned *buf, long long *cycles) {
  mb_store_latency<MB_DRAM, MB_DRAM_STORE_STRIDE>((unsigned long long)buf, cycles);
}

// ------------------------------------------------------------------------------ throughput

template <int LEVEL, bool STORE>
__device__ __forceinline__ void mb_access16(unsigned long long addr, unsigned (&r)[4]) {
  if (STORE) {
    if (LEVEL == MB_SHARED)
      asm volatile("st.shared.v4.u32 [%0], {%1, %2, %3, %4};" ::"r"((unsigned)addr), "r"(r[0]),
                   "r"(r[1]), "r"(r[2]), "r"(r[3])
                   : "memory");
    else if (LEVEL == MB_L1)
      asm volatile("st.global.wb.v4.u32 [%0], {%1, %2, %3, %4};" ::"l"(addr), "r"(r[0]), "r"(r[1]),
                   "r"(r[2]), "r"(r[3])
                   : "memory");
    else if (LEVEL == MB_L2)
      asm volatile("st.global.cg.v4.u32 [%0], {%1, %2, %3, %4};" ::"l"(addr), "r"(r[0]), "r"(r[1]),
                   "r"(r[2]), "r"(r[3])
                   : "memory");
    else
      asm volatile("st.global.cs.v4.u32 [%0], {%1, %2, %3, %4};" ::"l"(addr), "r"(r[0]), "r"(r[1]),
                   "r"(r[2]), "r"(r[3])
                   : "memory");
  } else {
    if (LEVEL == MB_SHARED)
      asm volatile("ld.shared.v4.u32 {%0, %1, %2, %3}, [%4];"
                   : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                   : "r"((unsigned)addr));
    else if (LEVEL == MB_L1)
      asm volatile("ld.global.ca.v4.u32 {%0, %1, %2, %3}, [%4];"
                   : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                   : "l"(addr));
    else
      asm volatile("ld.global.cg.v4.u32 {%0, %1, %2, %3}, [%4];"
                   : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                   : "l"(addr));
  }
}

// Every thread issues ILP independent 16-byte accesses per iteration; a warp covers 512
// contiguous bytes per access.  Shared and L1 kernels revisit a small footprint (each iteration
// one warp's 512 bytes further, modulo the footprint); L2 and DRAM kernels stream a footprint of
// mask + 1 bytes.  Loaded
// words are folded into `acc` (two LOP3 per load): ptxas deletes loads whose result is unused,
// asm volatile or not.
template <int LEVEL, bool STORE, int ILP>
__device__ __forceinline__ void mb_bandwidth(unsigned long long base, size_t mask, int iters,
                                             unsigned *sink, long long *cycles) {
  unsigned r[4];
  unsigned seed = mb_seed();
#pragma unroll
  for (int k = 0; k < 4; ++k) r[k] = seed + k;
  bool local = LEVEL == MB_SHARED || LEVEL == MB_L1;
  size_t thread = local ? threadIdx.x : (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  size_t span = 16 * (size_t)blockDim.x * (local ? 1 : gridDim.x);  // bytes per access wave
  size_t off = 16 * thread;
  unsigned acc = 0;
  long long t0 = mb_clock64();
#pragma unroll 1
  for (int it = 0; it < iters; ++it) {
#pragma unroll
    for (int k = 0; k < ILP; ++k) {
      mb_access16<LEVEL, STORE>(base + ((off + k * span) & mask), r);
      if (!STORE) acc ^= r[0] ^ r[1] ^ r[2] ^ r[3];
    }
    // Local levels move on by one warp's 512 bytes, so that every iteration reads other
    // addresses: with the same addresses each time, ptxas hoisted the loads out of the loop
    // (found on an H200: "load bandwidth" 2.7x the shared-memory peak, the loop only LOP3).
    off += local ? 16 * 32 : ILP * span;
  }
  long long t1 = mb_clock64();
  if (acc == 0x9e3779b9u) sink[0] = acc;  // keeps the loads alive
  if (blockIdx.x == 0 && threadIdx.x == 0) cycles[0] = t1 - t0;
}

#define MB_BW_KERNEL(LVL, OP, LEVEL, STORE)                                                     \
  extern "C" __global__ void __launch_bounds__(MB_BLOCK) mb_##LVL##_##OP##_throughput(          \
      unsigned long long base, size_t mask, int iters, unsigned *sink, long long *cycles) {     \
    if (LEVEL == MB_SHARED) {                                                                   \
      __shared__ uint4 buf[MB_SHARED_TP_BYTES / 16];                                            \
      base = __cvta_generic_to_shared(buf);                                                     \
      mask = MB_SHARED_TP_BYTES - 1;                                                            \
    }                                                                                           \
    mb_bandwidth<LEVEL, STORE, MB_ILP>(base, mask, iters, sink, cycles);                        \
  }

MB_BW_KERNEL(shared, load, MB_SHARED, false)
MB_BW_KERNEL(shared, store, MB_SHARED, true)
MB_BW_KERNEL(l1, load, MB_L1, false)
MB_BW_KERNEL(l1, store, MB_L1, true)
MB_BW_KERNEL(l2, load, MB_L2, false)
MB_BW_KERNEL(l2, store, MB_L2, true)
MB_BW_KERNEL(dram, load, MB_DRAM, false)
MB_BW_KERNEL(dram, store, MB_DRAM, true)

// The F_DRAMThr sweep: DRAM loads with 1, 2, 4 or 8 independent 16-byte loads in flight per
// thread; the host varies the warps per SM.
#define MB_SWEEP_KERNEL(N)                                                                      \
  extern "C" __global__ void mb_dram_sweep_ilp##N(unsigned long long base, size_t mask,        \
                                                  int iters, unsigned *sink, long long *cycles) { \
    mb_bandwidth<MB_DRAM, false, N>(base, mask, iters, sink, cycles);                           \
  }
MB_SWEEP_KERNEL(1)
MB_SWEEP_KERNEL(2)
MB_SWEEP_KERNEL(4)
MB_SWEEP_KERNEL(8)

// ------------------------------------------------------------------------------------ host

// The smallest power of two >= bytes.
static size_t mb_pow2_at_least(size_t bytes) {
  size_t n = 1;
  while (n < bytes) n <<= 1;
  return n;
}

// A pointer-chase ring of `count` entries, `stride` bytes apart, in device memory at `buf`.
static void mb_build_ring(char *buf, size_t count, size_t stride) {
  size_t words = count * stride / 8;
  unsigned long long *host = (unsigned long long *)calloc(words, 8);
  for (size_t i = 0; i < count; ++i)
    host[i * stride / 8] = (unsigned long long)(buf + ((i + 1) % count) * stride);
  MB_CHECK(cudaMemcpy(buf, host, words * 8, cudaMemcpyHostToDevice));
  free(host);
}

static void mb_print_latency(int level, const char *op, int rep, long long cycles) {
  printf("{\"bench\": \"mem_latency\", \"level\": \"%s\", \"op\": \"%s\", \"rep\": %d, "
         "\"cycles\": %lld, \"accesses\": %d}\n",
         MB_LEVEL_NAMES[level], op, rep, cycles, MB_CHAIN);
}

typedef void (*MbBwKernel)(unsigned long long, size_t, int, unsigned *, long long *);

void mb_run_memory(const MbContext &ctx) {
  size_t dram_bytes = mb_pow2_at_least(4 * (size_t)ctx.l2_bytes);
  if (dram_bytes < (64u << 20)) dram_bytes = 64u << 20;
  size_t l2_bytes = mb_pow2_at_least((size_t)ctx.l2_bytes / 4) / 2;  // within a quarter of L2
  char *buf;
  unsigned *sink;
  long long *cycles, c = 0;
  MB_CHECK(cudaMalloc(&buf, dram_bytes));
  MB_CHECK(cudaMemset(buf, 0, dram_bytes));
  MB_CHECK(cudaMalloc(&sink, 4096));
  MB_CHECK(cudaMalloc(&cycles, sizeof(long long)));
  unsigned long long *ring = (unsigned long long *)buf;

  // Load latency: pointer chases.
  for (int rep = 0; rep < ctx.reps; ++rep) {
    mb_shared_load_latency<<<1, 1>>>(sink, cycles);
    MB_CHECK(cudaMemcpy(&c, cycles, sizeof c, cudaMemcpyDeviceToHost));
    mb_print_latency(MB_SHARED, "load", rep, c);
  }
  void (*chase[])(const unsigned long long *, unsigned *, long long *) = {
      nullptr, mb_l1_load_latency, mb_l2_load_latency, mb_dram_load_latency};
  for (int level = MB_L1; level <= MB_DRAM; ++level) {
    size_t count = level == MB_DRAM ? 2 * MB_CHAIN : MB_CHAIN;
    mb_build_ring(buf, count, MB_RING_STRIDE[level]);
    for (int rep = 0; rep < ctx.reps; ++rep) {
      if (level == MB_DRAM) mb_flush_l2(ctx);
      chase[level]<<<1, 1>>>(ring, sink, cycles);
      MB_CHECK(cudaGetLastError());
      MB_CHECK(cudaMemcpy(&c, cycles, sizeof c, cudaMemcpyDeviceToHost));
      mb_print_latency(level, "load", rep, c);
    }
  }

  // Store latency: MB_CHAIN stores and a barrier.
  for (int rep = 0; rep < ctx.reps; ++rep) {
    mb_shared_store_latency<<<1, 1>>>(sink, cycles);
    MB_CHECK(cudaMemcpy(&c, cycles, sizeof c, cudaMemcpyDeviceToHost));
    mb_print_latency(MB_SHARED, "store", rep, c);
  }
  void (*store[])(unsigned *, long long *) = {nullptr, mb_l1_store_latency, mb_l2_store_latency,
                                              mb_dram_store_latency};
  for (int level = MB_L1; level <= MB_DRAM; ++level) {
    for (int rep = 0; rep < ctx.reps; ++rep) {
      if (level == MB_DRAM) mb_flush_l2(ctx);
      store[level]<<<1, 1>>>((unsigned *)buf, cycles);
      MB_CHECK(cudaGetLastError());
      MB_CHECK(cudaMemcpy(&c, cycles, sizeof c, cudaMemcpyDeviceToHost));
      mb_print_latency(level, "store", rep, c);
    }
  }

  // Throughput: a full wave of MB_BLOCK-thread blocks, twice.
  const struct {
    int level;
    const char *op;
    MbBwKernel kernel;
  } bw[] = {{MB_SHARED, "load", mb_shared_load_throughput},
            {MB_SHARED, "store", mb_shared_store_throughput},
            {MB_L1, "load", mb_l1_load_throughput},
            {MB_L1, "store", mb_l1_store_throughput},
            {MB_L2, "load", mb_l2_load_throughput},
            {MB_L2, "store", mb_l2_store_throughput},
            {MB_DRAM, "load", mb_dram_load_throughput},
            {MB_DRAM, "store", mb_dram_store_throughput}};
  MbEvents ev;
  for (const auto &b : bw) {
    int blocks = 2 * mb_wave_blocks(ctx, b.kernel, MB_BLOCK);
    size_t threads = (size_t)blocks * MB_BLOCK;
    size_t footprint = b.level == MB_DRAM ? dram_bytes : b.level == MB_L2 ? l2_bytes
                                                                          : MB_L1_TP_BYTES;
    // Local levels: 64 iterations; L2: 64 sweeps of its footprint; DRAM: two sweeps.
    size_t sweeps = b.level == MB_DRAM ? 2 : 64;
    int iters = b.level <= MB_L1
                    ? 64
                    : (int)((sweeps * footprint + threads * MB_ILP * 16 - 1) /
                            (threads * MB_ILP * 16));
    b.kernel<<<blocks, MB_BLOCK>>>((unsigned long long)buf, footprint - 1, iters, sink, cycles);
    MB_CHECK(cudaDeviceSynchronize());
    for (int rep = 0; rep < ctx.reps; ++rep) {
      if (b.level == MB_DRAM) mb_flush_l2(ctx);
      ev.start();
      b.kernel<<<blocks, MB_BLOCK>>>((unsigned long long)buf, footprint - 1, iters, sink, cycles);
      double ns = ev.stop_ns();
      printf("{\"bench\": \"mem_throughput\", \"level\": \"%s\", \"op\": \"%s\", \"rep\": %d, "
             "\"ns\": %.1f, \"bytes\": %.0f, \"footprint_bytes\": %zu}\n",
             MB_LEVEL_NAMES[b.level], b.op, rep, ns, 16.0 * MB_ILP * threads * iters,
             b.level == MB_SHARED ? (size_t)MB_SHARED_TP_BYTES : footprint);
    }
  }
  fflush(stdout);
  MB_CHECK(cudaFree(buf));
  MB_CHECK(cudaFree(sink));
  MB_CHECK(cudaFree(cycles));
}

void mb_run_dram_sweep(const MbContext &ctx) {
  size_t dram_bytes = mb_pow2_at_least(4 * (size_t)ctx.l2_bytes);
  if (dram_bytes < (64u << 20)) dram_bytes = 64u << 20;
  char *buf;
  unsigned *sink;
  long long *cycles;
  MB_CHECK(cudaMalloc(&buf, dram_bytes));
  MB_CHECK(cudaMemset(buf, 0, dram_bytes));
  MB_CHECK(cudaMalloc(&sink, 4096));
  MB_CHECK(cudaMalloc(&cycles, sizeof(long long)));
  const struct {
    int ilp;
    MbBwKernel kernel;
  } sweep[] = {{1, mb_dram_sweep_ilp1}, {2, mb_dram_sweep_ilp2}, {4, mb_dram_sweep_ilp4},
               {8, mb_dram_sweep_ilp8}};
  const int warps[] = {1, 2, 4, 8, 16, 32};
  MbEvents ev;
  for (const auto &s : sweep) {
    for (int w : warps) {
      if (32 * w > ctx.max_threads_per_sm) continue;
      int blocks = ctx.sm_count;  // one block of w warps per SM
      size_t threads = (size_t)blocks * 32 * w;
      size_t per_iter = threads * s.ilp * 16;
      // One sweep of the footprint, at most 256 MiB (the lightest loads run at a few GB/s).
      size_t bytes = dram_bytes < (256u << 20) ? dram_bytes : (256u << 20);
      int iters = (int)((bytes + per_iter - 1) / per_iter);
      for (int rep = 0; rep < ctx.reps; ++rep) {
        mb_flush_l2(ctx);
        ev.start();
        s.kernel<<<blocks, 32 * w>>>((unsigned long long)buf, dram_bytes - 1, iters, sink, cycles);
        double ns = ev.stop_ns();
        printf("{\"bench\": \"dram_sweep\", \"warps_per_sm\": %d, \"ilp\": %d, \"rep\": %d, "
               "\"ns\": %.1f, \"bytes\": %.0f, \"bytes_in_flight\": %zu}\n",
               w, s.ilp, rep, ns, (double)per_iter * iters, per_iter);
      }
    }
  }
  fflush(stdout);
  MB_CHECK(cudaFree(buf));
  MB_CHECK(cudaFree(sink));
  MB_CHECK(cudaFree(cycles));
}
