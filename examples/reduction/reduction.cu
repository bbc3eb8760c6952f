// Parallel reduction (sum) in the three tuning versions of seed 002 section VI-A:
//   v1  the original: interleaved addressing in shared memory, a divergent branch
//       (tid % (2s) == 0) and a __syncthreads() at each of the log2(BLOCK) steps
//   v2  warp-centric: each warp reduces its values with shuffles, one __syncthreads(), then the
//       first warp reduces the warp sums (barriers: log2(BLOCK) -> 1; the first tuning step)
//   v3  v2 plus more elements per thread: a grid-stride loop over float4 loads with four
//       independent accumulators (instruction-level parallelism; the second tuning step)
// Each block writes one partial sum; the host adds the partials.
//
// usage: ./reduction [v1|v2|v3|all] [N]      (default: all 16777216)
#include <cmath>
#include <vector>

#include "../common.cuh"

constexpr int BLOCK = 256;

__global__ void reduce_v1_interleaved(const float *in, float *partial, int n) {
  __shared__ float s[BLOCK];
  unsigned tid = threadIdx.x;
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  s[tid] = i < (unsigned)n ? in[i] : 0.0f;
  __syncthreads();
  for (unsigned stride = 1; stride < blockDim.x; stride *= 2) {
    if (tid % (2 * stride) == 0) s[tid] += s[tid + stride];  // divergent: one thread in 2s works
    __syncthreads();
  }
  if (tid == 0) partial[blockIdx.x] = s[0];
}

__device__ __forceinline__ float warp_sum(float v) {
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(0xffffffffu, v, offset);
  return v;
}

// Sum of one value per thread of the block: shuffles inside warps, one barrier, then warp 0.
__device__ __forceinline__ float block_sum(float v) {
  __shared__ float warp_sums[BLOCK / 32];
  v = warp_sum(v);
  if ((threadIdx.x & 31) == 0) warp_sums[threadIdx.x / 32] = v;
  __syncthreads();
  v = threadIdx.x < BLOCK / 32 ? warp_sums[threadIdx.x] : 0.0f;
  return threadIdx.x < 32 ? warp_sum(v) : 0.0f;
}

__global__ void reduce_v2_warp_centric(const float *in, float *partial, int n) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  float v = block_sum(i < (unsigned)n ? in[i] : 0.0f);
  if (threadIdx.x == 0) partial[blockIdx.x] = v;
}

__global__ void reduce_v3_multi_element(const float4 *in4, const float *in, float *partial,
                                        int n) {
  float a0 = 0.f, a1 = 0.f, a2 = 0.f, a3 = 0.f;
  int n4 = n / 4;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n4; i += gridDim.x * blockDim.x) {
    float4 v = in4[i];
    a0 += v.x;
    a1 += v.y;
    a2 += v.z;
    a3 += v.w;
  }
  if (blockIdx.x == 0 && threadIdx.x < n - 4 * n4) a0 += in[4 * n4 + threadIdx.x];  // tail
  float v = block_sum((a0 + a1) + (a2 + a3));
  if (threadIdx.x == 0) partial[blockIdx.x] = v;
}

int main(int argc, char **argv) {
  const char *variant = argc > 1 ? argv[1] : "all";
  int n = argc > 2 ? atoi(argv[2]) : 1 << 24;
  if (n <= 0) {
    fprintf(stderr, "N must be positive\n");
    return 2;
  }
  std::vector<float> h(n);
  double ref = 0;
  for (int i = 0; i < n; ++i) {
    h[i] = (float)(i % 17) * 0.25f;
    ref += h[i];
  }
  float *in, *partial;
  int blocks = (n + BLOCK - 1) / BLOCK;
  int sms = 0;
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  int v3_blocks = 8 * sms;  // a few waves; each thread then sums many elements
  CHECK(cudaMalloc(&in, (size_t)n * sizeof(float)));
  CHECK(cudaMalloc(&partial, (size_t)blocks * sizeof(float)));
  CHECK(cudaMemcpy(in, h.data(), (size_t)n * sizeof(float), cudaMemcpyHostToDevice));
  int ran = 0;
  for (const char *name : {"v1", "v2", "v3"}) {
    if (!selected(variant, name)) continue;
    ++ran;
    int used = name[1] == '3' ? v3_blocks : blocks;
    float ms = time_ms([&] {
      if (name[1] == '1')
        reduce_v1_interleaved<<<blocks, BLOCK>>>(in, partial, n);
      else if (name[1] == '2')
        reduce_v2_warp_centric<<<blocks, BLOCK>>>(in, partial, n);
      else
        reduce_v3_multi_element<<<v3_blocks, BLOCK>>>((const float4 *)in, in, partial, n);
    });
    std::vector<float> p(used);
    CHECK(cudaMemcpy(p.data(), partial, used * sizeof(float), cudaMemcpyDeviceToHost));
    double sum = 0;
    for (float x : p) sum += x;
    double err = fabs(sum - ref) / fmax(1.0, fabs(ref));
    printf("%s N=%d  %.3f ms  %.1f GB/s  rel. error %.1e%s\n", name, n, ms,
           (double)n * sizeof(float) / (ms * 1e6), err, err < 1e-5 ? "" : "  WRONG");
    if (err >= 1e-5) return 1;
  }
  if (!ran) {
    fprintf(stderr, "unknown variant %s (v1, v2, v3, all)\n", variant);
    return 2;
  }
  CHECK(cudaFree(in));
  CHECK(cudaFree(partial));
  return 0;
}
