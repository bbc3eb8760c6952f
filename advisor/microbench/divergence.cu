// F_Divergence microbenchmark (seed 002 section III-B): the same useful work per thread with a
// growing share of divergent control flow.
//
// Each iteration every thread executes MB_DIV_WORK dependent fma.rn.f32: UNI of them outside any
// branch, then DIV inside one of WAYS branches chosen by lane % WAYS (an if / else-if chain
// built by template recursion; each branch adds its own constant, so no two branches are the
// same code).  A warp therefore issues UNI + WAYS * DIV fma per iteration for 32 * (UNI + DIV)
// thread instructions: warp execution efficiency x = (UNI + DIV) / (UNI + WAYS * DIV).
// The configuration WAYS = 1 has no branch and is the reference.
//
// Timed region (checked by tests/test_microbench.py): UNI + WAYS * DIV fma.rn.f32 and WAYS - 1
// predicated branches besides the loop's own.
#include "microbench.cuh"

constexpr int MB_DIV_WORK = 64;  // useful fma per thread and iteration

// Uniform work: x = x * y + y.
struct UniFma {
  float x, y;
  __device__ __forceinline__ void operator()() {
    asm volatile("fma.rn.f32 %0, %0, %1, %1;" : "+f"(x) : "f"(y));
  }
};

// Branch K's work: x = x * y + (K + 1), the constant an immediate of the instruction.  With the
// same instruction in every branch and only a register operand differing, the compiler sinks
// the branches' asm into their common successor (one copy, operand chosen by a phi), and the
// divergence disappears: the PTX check of the test catches that.
template <int K>
struct BranchFma {
  float &x;
  float y;
  __device__ __forceinline__ void operator()() {
    asm volatile("fma.rn.f32 %0, %0, %1, %2.0;" : "+f"(x) : "f"(y), "n"(K + 1));
  }
};

// Branch<K>: if (group == K) {branch K} else Branch<K - 1>; Branch<0> is the last else.
template <int K, int DIV>
struct Branch {
  __device__ __forceinline__ static void run(int group, UniFma &op) {
    if (group == K) {
      BranchFma<K> body{op.x, op.y};
      Unrolled<DIV>::run(body);
    } else {
      Branch<K - 1, DIV>::run(group, op);
    }
  }
};
template <int DIV>
struct Branch<0, DIV> {
  __device__ __forceinline__ static void run(int, UniFma &op) {
    BranchFma<0> body{op.x, op.y};
    Unrolled<DIV>::run(body);
  }
};

template <int WAYS, int UNI, int DIV>
__device__ __forceinline__ void mb_divergence(int iters, float *sink, long long *cycles) {
  static_assert(UNI + DIV == MB_DIV_WORK, "every configuration does the same useful work");
  UniFma op;
  unsigned seed = mb_seed();
  op.x = mb_seed_f32(seed + threadIdx.x);
  op.y = mb_seed_f32(seed);
  int group = (threadIdx.x & 31) % WAYS;
  long long t0 = mb_clock64();
#pragma unroll 1
  for (int it = 0; it < iters; ++it) {
    Unrolled<UNI>::run(op);
    Branch<WAYS - 1, DIV>::run(group, op);
  }
  long long t1 = mb_clock64();
  if (op.x == 0.12345f) sink[blockIdx.x] = op.x;
  if (blockIdx.x == 0 && threadIdx.x == 0) cycles[0] = t1 - t0;
}

#define MB_DIV_KERNEL(W, U, D)                                                                  \
  extern "C" __global__ void __launch_bounds__(MB_BLOCK)                                        \
      mb_divergence_w##W##_u##U##_d##D(int iters, float *sink, long long *cycles) {             \
    mb_divergence<W, U, D>(iters, sink, cycles);                                                \
  }

// full divergence at 1 (reference), 2, 4, 8, 16 and 32 ways
MB_DIV_KERNEL(1, 0, 64)
MB_DIV_KERNEL(2, 0, 64)
MB_DIV_KERNEL(4, 0, 64)
MB_DIV_KERNEL(8, 0, 64)
MB_DIV_KERNEL(16, 0, 64)
MB_DIV_KERNEL(32, 0, 64)
// a share of 1/4, 1/2, 3/4 of the work in a 2-way branch; 1/8 and 1/4 in a 32-way branch
MB_DIV_KERNEL(2, 48, 16)
MB_DIV_KERNEL(2, 32, 32)
MB_DIV_KERNEL(2, 16, 48)
MB_DIV_KERNEL(32, 56, 8)
MB_DIV_KERNEL(32, 48, 16)

typedef void (*MbDivKernel)(int, float *, long long *);

void mb_run_divergence(const MbContext &ctx) {
  const struct {
    int ways, uni, div;
    MbDivKernel kernel;
  } configs[] = {{1, 0, 64, mb_divergence_w1_u0_d64},    {2, 0, 64, mb_divergence_w2_u0_d64},
                 {4, 0, 64, mb_divergence_w4_u0_d64},    {8, 0, 64, mb_divergence_w8_u0_d64},
                 {16, 0, 64, mb_divergence_w16_u0_d64},  {32, 0, 64, mb_divergence_w32_u0_d64},
                 {2, 48, 16, mb_divergence_w2_u48_d16},  {2, 32, 32, mb_divergence_w2_u32_d32},
                 {2, 16, 48, mb_divergence_w2_u16_d48},  {32, 56, 8, mb_divergence_w32_u56_d8},
                 {32, 48, 16, mb_divergence_w32_u48_d16}};
  float *sink;
  long long *cycles;
  MB_CHECK(cudaMalloc(&sink, 1 << 20));
  MB_CHECK(cudaMalloc(&cycles, sizeof(long long)));
  const int iters = 256;
  MbEvents ev;
  for (const auto &c : configs) {
    int blocks = mb_wave_blocks(ctx, c.kernel, MB_BLOCK);
    c.kernel<<<blocks, MB_BLOCK>>>(iters, sink, cycles);  // warm-up
    MB_CHECK(cudaDeviceSynchronize());
    double warp_inst = (double)(c.uni + c.ways * c.div);
    for (int rep = 0; rep < ctx.reps; ++rep) {
      ev.start();
      c.kernel<<<blocks, MB_BLOCK>>>(iters, sink, cycles);
      double ns = ev.stop_ns();
      printf("{\"bench\": \"divergence\", \"ways\": %d, \"uniform_fma\": %d, "
             "\"divergent_fma\": %d, \"rep\": %d, \"ns\": %.1f, \"thread_fma\": %.0f, "
             "\"efficiency\": %.6f}\n",
             c.ways, c.uni, c.div, rep, ns, (double)MB_DIV_WORK * iters * blocks * MB_BLOCK,
             (double)MB_DIV_WORK / warp_inst);
    }
  }
  fflush(stdout);
  MB_CHECK(cudaFree(sink));
  MB_CHECK(cudaFree(cycles));
}
