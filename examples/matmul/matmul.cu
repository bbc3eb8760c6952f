// Matrix multiplication in the four variants of seed 000 section V.A (the BSP-model paper):
//   gm-un  #1 global memory only, uncoalesced (the paper's Fig. 3: threadIdx.x walks rows)
//   gm     #2 global memory only, coalesced (threadIdx.x walks columns)
//   sm-un  #3 shared-memory tiles loaded with uncoalesced global accesses
//   sm     #4 shared-memory tiles loaded with coalesced global accesses
// N x N single-precision matrices, tWidth x tWidth threads per block, N^2 threads: every thread
// does N fused multiply-adds and reads N elements of each matrix (from global or shared memory).
//
// usage: ./matmul [gm-un|gm|sm-un|sm|all] [N]      (default: all 1024)
#include <cmath>
#include <vector>

#include "../common.cuh"

constexpr int TW = 16;  // tWidth: the tile and block edge

// #1 (seed 000 Fig. 3): j is the row and follows threadIdx.x, so a warp reads 16 rows of Md
// (stride N) and writes 16 rows of Pd: uncoalesced.
__global__ void matMul_GmUn(float *Pd, const float *Md, const float *Nd, int N) {
  float Pvalue = 0.0f;
  int j = blockIdx.x * TW + threadIdx.x;
  int i = blockIdx.y * TW + threadIdx.y;
  if (j >= N || i >= N) return;
  for (int k = 0; k < N; ++k) Pvalue += Md[j * N + k] * Nd[k * N + i];
  Pd[j * N + i] = Pvalue;
}

// #2: the column follows threadIdx.x: Nd and Pd accesses of a warp are contiguous.
__global__ void matMul_Gm(float *Pd, const float *Md, const float *Nd, int N) {
  float Pvalue = 0.0f;
  int col = blockIdx.x * TW + threadIdx.x;
  int row = blockIdx.y * TW + threadIdx.y;
  if (row >= N || col >= N) return;
  for (int k = 0; k < N; ++k) Pvalue += Md[row * N + k] * Nd[k * N + col];
  Pd[row * N + col] = Pvalue;
}

// #3: tiled in shared memory, but the row follows threadIdx.x, so the tile loads and the final
// store stride through global memory (uncoalesced) exactly as in #1.
__global__ void matMul_SmUn(float *Pd, const float *Md, const float *Nd, int N) {
  __shared__ float Ms[TW][TW];
  __shared__ float Ns[TW][TW];
  int tx = threadIdx.x, ty = threadIdx.y;
  int row = blockIdx.x * TW + tx;
  int col = blockIdx.y * TW + ty;
  float Pvalue = 0.0f;
  for (int m = 0; m < N / TW; ++m) {
    Ms[tx][ty] = Md[row * N + m * TW + ty];
    Ns[tx][ty] = Nd[(m * TW + tx) * N + col];
    __syncthreads();
    for (int k = 0; k < TW; ++k) Pvalue += Ms[tx][k] * Ns[k][ty];
    __syncthreads();
  }
  Pd[row * N + col] = Pvalue;
}

// #4: the classic tiled kernel: consecutive threadIdx.x read consecutive addresses.
__global__ void matMul_Sm(float *Pd, const float *Md, const float *Nd, int N) {
  __shared__ float Ms[TW][TW];
  __shared__ float Ns[TW][TW];
  int tx = threadIdx.x, ty = threadIdx.y;
  int row = blockIdx.y * TW + ty;
  int col = blockIdx.x * TW + tx;
  float Pvalue = 0.0f;
  for (int m = 0; m < N / TW; ++m) {
    Ms[ty][tx] = Md[row * N + m * TW + tx];
    Ns[ty][tx] = Nd[(m * TW + ty) * N + col];
    __syncthreads();
    for (int k = 0; k < TW; ++k) Pvalue += Ms[ty][k] * Ns[k][tx];
    __syncthreads();
  }
  Pd[row * N + col] = Pvalue;
}

typedef void (*MatMulKernel)(float *, const float *, const float *, int);

int main(int argc, char **argv) {
  const char *variant = argc > 1 ? argv[1] : "all";
  int N = argc > 2 ? atoi(argv[2]) : 1024;
  if (N <= 0 || N % TW != 0) {
    fprintf(stderr, "N must be a positive multiple of %d\n", TW);
    return 2;
  }
  size_t bytes = (size_t)N * N * sizeof(float);
  std::vector<float> M((size_t)N * N), Nm((size_t)N * N), P((size_t)N * N);
  for (size_t i = 0; i < M.size(); ++i) {
    M[i] = (float)((i * 7) % 13) / 13.0f;
    Nm[i] = (float)((i * 5) % 11) / 11.0f;
  }
  float *Md, *Nd, *Pd;
  CHECK(cudaMalloc(&Md, bytes));
  CHECK(cudaMalloc(&Nd, bytes));
  CHECK(cudaMalloc(&Pd, bytes));
  CHECK(cudaMemcpy(Md, M.data(), bytes, cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(Nd, Nm.data(), bytes, cudaMemcpyHostToDevice));
  const struct {
    const char *name;
    MatMulKernel kernel;
  } variants[] = {{"gm-un", matMul_GmUn}, {"gm", matMul_Gm}, {"sm-un", matMul_SmUn},
                  {"sm", matMul_Sm}};
  dim3 block(TW, TW), grid(N / TW, N / TW);
  int ran = 0;
  for (const auto &v : variants) {
    if (!selected(variant, v.name)) continue;
    ++ran;
    CHECK(cudaMemset(Pd, 0, bytes));
    float ms = time_ms([&] { v.kernel<<<grid, block>>>(Pd, Md, Nd, N); });
    CHECK(cudaMemcpy(P.data(), Pd, bytes, cudaMemcpyDeviceToHost));
    double worst = 0;  // check 64 entries against the CPU
    for (int s = 0; s < 64; ++s) {
      int r = (s * 131) % N, c = (s * 197) % N;
      double ref = 0;
      for (int k = 0; k < N; ++k) ref += (double)M[(size_t)r * N + k] * Nm[(size_t)k * N + c];
      worst = fmax(worst, fabs(ref - P[(size_t)r * N + c]) / fmax(1.0, fabs(ref)));
    }
    printf("%-6s N=%d  %.3f ms  %.1f GFLOP/s  max rel. error %.1e%s\n", v.name, N, ms,
           2.0 * N * N * (double)N / (ms * 1e6), worst, worst < 1e-3 ? "" : "  WRONG");
    if (worst >= 1e-3) return 1;
  }
  if (!ran) {
    fprintf(stderr, "unknown variant %s (gm-un, gm, sm-un, sm, all)\n", variant);
    return 2;
  }
  CHECK(cudaFree(Md));
  CHECK(cudaFree(Nd));
  CHECK(cudaFree(Pd));
  return 0;
}
