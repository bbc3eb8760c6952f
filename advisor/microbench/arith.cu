// Arithmetic microbenchmarks (seed 002 section III-B): latency and throughput of the four
// instruction classes -- integer, simple fp32, special-function fp32, fp64 -- and the arithmetic
// intensity sweep that gives F_ARITHThr.
//
// Timed regions (checked by tests/test_microbench.py in PTX and SASS):
//   mb_<class>_latency     one thread, MB_CHAIN dependent instructions
//   mb_<class>_throughput  two full waves of blocks, MB_ILP independent chains of MB_CHAIN each
//   mb_arith_intensity_<F> per 16-byte DRAM load, F fma.rn.f32 on four chains (2F flop / 16 B);
//                          F = 4, 16, 64, and 64 x `rounds` for 128 ... 4096
#include "microbench.cuh"

// ------------------------------------------------------------------------------ the classes

// integer: add.s32 then xor.b32 on the same register (two PTX instructions per step).  A chain of
// add.s32 alone is fused pairwise by ptxas into three-input IADD3s; the xor keeps one SASS
// instruction per PTX instruction.
template <int ILP>
struct IntOp {
  int x[ILP];
  int y;
  __device__ __forceinline__ void operator()() {
#pragma unroll
    for (int k = 0; k < ILP; ++k) {
      asm volatile("add.s32 %0, %0, %1;" : "+r"(x[k]) : "r"(y));
      asm volatile("xor.b32 %0, %0, %1;" : "+r"(x[k]) : "r"(y));
    }
  }
};

// simple fp32: fused multiply-add
template <int ILP>
struct Fp32Op {
  float x[ILP];
  float y;
  __device__ __forceinline__ void operator()() {
#pragma unroll
    for (int k = 0; k < ILP; ++k) asm volatile("fma.rn.f32 %0, %0, %1, %1;" : "+f"(x[k]) : "f"(y));
  }
};

// special function fp32: reciprocal square root on the special-function unit (MUFU.RSQ).  Not
// rcp: ptxas cancels rcp.approx(rcp.approx(x)) pairs and deletes an even-length chain.
template <int ILP>
struct SfuOp {
  float x[ILP];
  float y;
  __device__ __forceinline__ void operator()() {
#pragma unroll
    for (int k = 0; k < ILP; ++k) asm volatile("rsqrt.approx.ftz.f32 %0, %0;" : "+f"(x[k]));
  }
};

// fp64: fused multiply-add
template <int ILP>
struct Fp64Op {
  double x[ILP];
  double y;
  __device__ __forceinline__ void operator()() {
#pragma unroll
    for (int k = 0; k < ILP; ++k) asm volatile("fma.rn.f64 %0, %0, %1, %1;" : "+d"(x[k]) : "d"(y));
  }
};

template <class Op>
__device__ __forceinline__ void mb_seed_op(Op &op, unsigned seed);

template <int ILP>
__device__ __forceinline__ void mb_seed_op(IntOp<ILP> &op, unsigned seed) {
  op.y = (int)(seed | 1u);
#pragma unroll
  for (int k = 0; k < ILP; ++k) op.x[k] = (int)(seed + k);
}
template <int ILP>
__device__ __forceinline__ void mb_seed_op(Fp32Op<ILP> &op, unsigned seed) {
  op.y = mb_seed_f32(seed);
#pragma unroll
  for (int k = 0; k < ILP; ++k) op.x[k] = mb_seed_f32(seed + k);
}
template <int ILP>
__device__ __forceinline__ void mb_seed_op(SfuOp<ILP> &op, unsigned seed) {
  op.y = mb_seed_f32(seed);
#pragma unroll
  for (int k = 0; k < ILP; ++k) op.x[k] = mb_seed_f32(seed + k);
}
template <int ILP>
__device__ __forceinline__ void mb_seed_op(Fp64Op<ILP> &op, unsigned seed) {
  op.y = (double)mb_seed_f32(seed);
#pragma unroll
  for (int k = 0; k < ILP; ++k) op.x[k] = (double)mb_seed_f32(seed + k);
}

template <class Op, int ILP>
__device__ __forceinline__ float mb_fold(const Op &op) {
  float s = 0.f;
#pragma unroll
  for (int k = 0; k < ILP; ++k) s += (float)op.x[k];
  return s;
}

// Latency: one thread runs the chain twice (the first pass warms the instruction cache) and
// writes the cycles of the second pass.  The seed includes threadIdx.x: with a warp-uniform
// seed ptxas runs the integer chain on the uniform datapath (UIADD3), not the vector ALU.
template <class Op>
__device__ __forceinline__ void mb_latency(float *sink, long long *cycles) {
  Op op;
  mb_seed_op(op, mb_seed() + threadIdx.x);
  long long t0 = 0, t1 = 0;
#pragma unroll 1
  for (int pass = 0; pass < 2; ++pass) {
    t0 = mb_clock64();
    Repeat<MB_DEPTH>::run(op);
    t1 = mb_clock64();
  }
  sink[0] = mb_fold<Op, 1>(op);
  cycles[0] = t1 - t0;
}

// Throughput: every thread runs MB_ILP independent chains; block 0 reports its cycles.
template <class Op>
__device__ __forceinline__ void mb_throughput(float *sink, long long *cycles) {
  Op op;
  mb_seed_op(op, mb_seed() + threadIdx.x);
  long long t0 = mb_clock64();
  Repeat<MB_DEPTH>::run(op);
  long long t1 = mb_clock64();
  float s = mb_fold<Op, MB_ILP>(op);
  if (s == 0.12345f) sink[blockIdx.x] = s;  // keeps the result alive, never true in practice
  if (blockIdx.x == 0 && threadIdx.x == 0) cycles[0] = t1 - t0;
}

#define MB_ARITH_KERNELS(NAME, OP)                                                               \
  extern "C" __global__ void mb_##NAME##_latency(float *sink, long long *cycles) {               \
    mb_latency<OP<1>>(sink, cycles);                                                             \
  }                                                                                              \
  extern "C" __global__ void __launch_bounds__(MB_BLOCK)                                         \
      mb_##NAME##_throughput(float *sink, long long *cycles) {                                   \
    mb_throughput<OP<MB_ILP>>(sink, cycles);                                                     \
  }

MB_ARITH_KERNELS(int, IntOp)
MB_ARITH_KERNELS(fp32, Fp32Op)
MB_ARITH_KERNELS(sfu, SfuOp)
MB_ARITH_KERNELS(fp64, Fp64Op)

// --------------------------------------------------------------- arithmetic intensity sweep

// Per 16-byte load, FMAS fused multiply-adds spread over the four loaded lanes: arithmetic
// intensity 2 * FMAS / 16 flop per byte of DRAM traffic.  Below MB_ROUND_FMAS the sequence is
// unrolled (templates 4 and 16); above, `rounds` repetitions of an unrolled round of
// MB_ROUND_FMAS (one loop branch per 64 fma).
constexpr int MB_ROUND_FMAS = 64;

struct IntensityOp {
  float a[4];
  float v[4];
  __device__ __forceinline__ void operator()() {
#pragma unroll
    for (int k = 0; k < 4; ++k) asm volatile("fma.rn.f32 %0, %0, %1, %1;" : "+f"(a[k]) : "f"(v[k]));
  }
};

template <int FMAS>
__device__ __forceinline__ void mb_intensity(const float4 *in, size_t mask, int iters, int rounds,
                                             float *sink, long long *cycles) {
  IntensityOp op;
  unsigned seed = mb_seed();
#pragma unroll
  for (int k = 0; k < 4; ++k) op.a[k] = mb_seed_f32(seed + k);
  size_t stride = (size_t)gridDim.x * blockDim.x;
  size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  long long t0 = mb_clock64();
#pragma unroll 1
  for (int it = 0; it < iters; ++it, i += stride) {
    const float4 *p = in + (i & mask);
    asm volatile("ld.global.cg.v4.f32 {%0, %1, %2, %3}, [%4];"
                 : "=f"(op.v[0]), "=f"(op.v[1]), "=f"(op.v[2]), "=f"(op.v[3])
                 : "l"(p));
#pragma unroll 1
    for (int r = 0; r < rounds; ++r) Unrolled<FMAS / 4>::run(op);
  }
  long long t1 = mb_clock64();
  float s = op.a[0] + op.a[1] + op.a[2] + op.a[3];
  if (s == 0.12345f) sink[blockIdx.x] = s;
  if (blockIdx.x == 0 && threadIdx.x == 0) cycles[0] = t1 - t0;
}

#define MB_INTENSITY_KERNEL(F)                                                                 \
  extern "C" __global__ void __launch_bounds__(MB_BLOCK) mb_arith_intensity_##F(               \
      const float4 *in, size_t mask, int iters, int rounds, float *sink, long long *cycles) {  \
    mb_intensity<F>(in, mask, iters, rounds, sink, cycles);                                    \
  }

MB_INTENSITY_KERNEL(4)
MB_INTENSITY_KERNEL(16)
MB_INTENSITY_KERNEL(64)

// ------------------------------------------------------------------------------------ host

typedef void (*MbArithKernel)(float *, long long *);

static void run_class(const MbContext &ctx, const char *name, MbArithKernel latency,
                      MbArithKernel throughput, float *sink, long long *cycles) {
  MbEvents ev;
  for (int rep = 0; rep < ctx.reps; ++rep) {
    latency<<<1, 1>>>(sink, cycles);
    MB_CHECK(cudaGetLastError());
    long long c = 0;
    MB_CHECK(cudaMemcpy(&c, cycles, sizeof c, cudaMemcpyDeviceToHost));
    printf("{\"bench\": \"arith_latency\", \"class\": \"%s\", \"rep\": %d, \"cycles\": %lld, "
           "\"ops\": %d}\n",
           name, rep, c, MB_CHAIN * (name[0] == 'i' ? 2 : 1));
  }
  int blocks = 2 * mb_wave_blocks(ctx, throughput, MB_BLOCK);
  throughput<<<blocks, MB_BLOCK>>>(sink, cycles);  // warm-up
  MB_CHECK(cudaDeviceSynchronize());
  for (int rep = 0; rep < ctx.reps; ++rep) {
    ev.start();
    throughput<<<blocks, MB_BLOCK>>>(sink, cycles);
    double ns = ev.stop_ns();
    double ops = (double)blocks * MB_BLOCK * MB_ILP * MB_CHAIN * (name[0] == 'i' ? 2 : 1);
    printf("{\"bench\": \"arith_throughput\", \"class\": \"%s\", \"rep\": %d, \"ns\": %.1f, "
           "\"ops\": %.0f, \"blocks\": %d, \"threads_per_block\": %d}\n",
           name, rep, ns, ops, blocks, MB_BLOCK);
  }
}

void mb_run_arith(const MbContext &ctx) {
  float *sink;
  long long *cycles;
  MB_CHECK(cudaMalloc(&sink, 1 << 20));
  MB_CHECK(cudaMalloc(&cycles, sizeof(long long)));
  run_class(ctx, "int", mb_int_latency, mb_int_throughput, sink, cycles);
  run_class(ctx, "fp32", mb_fp32_latency, mb_fp32_throughput, sink, cycles);
  run_class(ctx, "sfu", mb_sfu_latency, mb_sfu_throughput, sink, cycles);
  run_class(ctx, "fp64", mb_fp64_latency, mb_fp64_throughput, sink, cycles);
  fflush(stdout);
  MB_CHECK(cudaFree(sink));
  MB_CHECK(cudaFree(cycles));
}

typedef void (*MbIntensityKernel)(const float4 *, size_t, int, int, float *, long long *);

void mb_run_arith_intensity(const MbContext &ctx) {
  // fma per 16-byte load: 4, 16, then rounds of 64 up to 4096 (0.5 ... 512 flop/byte).
  const int sweep[] = {4, 16, 64, 128, 256, 512, 1024, 2048, 4096};
  // A buffer four times the L2 (at least 64 MiB), a power of two of float4s.
  size_t elems = 1;
  while (elems * sizeof(float4) < 4 * (size_t)ctx.l2_bytes || elems * sizeof(float4) < (64u << 20))
    elems <<= 1;
  float4 *in;
  float *sink;
  long long *cycles;
  MB_CHECK(cudaMalloc(&in, elems * sizeof(float4)));
  MB_CHECK(cudaMemset(in, 0, elems * sizeof(float4)));
  MB_CHECK(cudaMalloc(&sink, 1 << 20));
  MB_CHECK(cudaMalloc(&cycles, sizeof(long long)));
  MbEvents ev;
  for (int fmas : sweep) {
    MbIntensityKernel kernel = fmas == 4    ? mb_arith_intensity_4
                               : fmas == 16 ? mb_arith_intensity_16
                                            : mb_arith_intensity_64;
    int rounds = fmas < MB_ROUND_FMAS ? 1 : fmas / MB_ROUND_FMAS;
    int blocks = mb_wave_blocks(ctx, kernel, MB_BLOCK);
    size_t threads = (size_t)blocks * MB_BLOCK;
    // Stream the buffer once up to 256 fma per load; fewer loads when compute dominates, so
    // that every point takes a fraction of a millisecond to milliseconds, not seconds.
    size_t loads = elems / (fmas <= 256 ? 1 : fmas / 256);
    int iters = (int)((loads + threads - 1) / threads);
    for (int rep = 0; rep < ctx.reps; ++rep) {
      mb_flush_l2(ctx);
      ev.start();
      kernel<<<blocks, MB_BLOCK>>>(in, elems - 1, iters, rounds, sink, cycles);
      double ns = ev.stop_ns();
      double n = (double)threads * iters;
      printf("{\"bench\": \"arith_intensity\", \"fmas_per_load\": %d, \"rep\": %d, \"ns\": %.1f, "
             "\"flops\": %.0f, \"bytes\": %.0f, \"flops_per_byte\": %.4f}\n",
             fmas, rep, ns, 2.0 * fmas * n, 16.0 * n, 2.0 * fmas / 16.0);
    }
  }
  fflush(stdout);
  MB_CHECK(cudaFree(in));
  MB_CHECK(cudaFree(sink));
  MB_CHECK(cudaFree(cycles));
}
