// Matrix transpose in the three versions named by seed 002 section VI-C (the transpose of its
// reference [20], NVIDIA's "Optimizing Matrix Transpose in CUDA"):
//   naive     reads rows (coalesced), writes columns (a warp writes 32 rows: uncoalesced)
//   shared    a 32 x 32 tile in shared memory: both global accesses coalesced, but reading a
//             tile column is a 32-way shared-memory bank conflict
//   padded    the same with a 32 x 33 tile: the padding column removes the bank conflicts
// Blocks of 32 x 8 threads, each thread moves four elements.  The kernel names are those of the
// advisor's synthetic sample profiles (sample_profiles/README.md).
//
// usage: ./transpose [naive|shared|padded|all] [N]      (default: all 4096)
#include <vector>

#include "../common.cuh"

constexpr int TILE = 32;
constexpr int ROWS = 8;  // threads per block in y; each thread handles TILE / ROWS rows

__global__ void transposeNaive(float *out, const float *in, int width, int height) {
  int x = blockIdx.x * TILE + threadIdx.x;
  int y = blockIdx.y * TILE + threadIdx.y;
  for (int j = 0; j < TILE; j += ROWS) out[x * height + (y + j)] = in[(y + j) * width + x];
}

__global__ void transposeCoalesced(float *out, const float *in, int width, int height) {
  __shared__ float tile[TILE][TILE];
  int x = blockIdx.x * TILE + threadIdx.x;
  int y = blockIdx.y * TILE + threadIdx.y;
  for (int j = 0; j < TILE; j += ROWS) tile[threadIdx.y + j][threadIdx.x] = in[(y + j) * width + x];
  __syncthreads();
  x = blockIdx.y * TILE + threadIdx.x;
  y = blockIdx.x * TILE + threadIdx.y;
  for (int j = 0; j < TILE; j += ROWS) out[(y + j) * height + x] = tile[threadIdx.x][threadIdx.y + j];
}

__global__ void transposeNoBankConflicts(float *out, const float *in, int width, int height) {
  __shared__ float tile[TILE][TILE + 1];
  int x = blockIdx.x * TILE + threadIdx.x;
  int y = blockIdx.y * TILE + threadIdx.y;
  for (int j = 0; j < TILE; j += ROWS) tile[threadIdx.y + j][threadIdx.x] = in[(y + j) * width + x];
  __syncthreads();
  x = blockIdx.y * TILE + threadIdx.x;
  y = blockIdx.x * TILE + threadIdx.y;
  for (int j = 0; j < TILE; j += ROWS) out[(y + j) * height + x] = tile[threadIdx.x][threadIdx.y + j];
}

typedef void (*TransposeKernel)(float *, const float *, int, int);

int main(int argc, char **argv) {
  const char *variant = argc > 1 ? argv[1] : "all";
  int n = argc > 2 ? atoi(argv[2]) : 4096;
  if (n <= 0 || n % TILE != 0) {
    fprintf(stderr, "N must be a positive multiple of %d\n", TILE);
    return 2;
  }
  size_t bytes = (size_t)n * n * sizeof(float);
  std::vector<float> h((size_t)n * n), t((size_t)n * n);
  for (size_t i = 0; i < h.size(); ++i) h[i] = (float)i;
  float *in, *out;
  CHECK(cudaMalloc(&in, bytes));
  CHECK(cudaMalloc(&out, bytes));
  CHECK(cudaMemcpy(in, h.data(), bytes, cudaMemcpyHostToDevice));
  const struct {
    const char *name;
    TransposeKernel kernel;
  } variants[] = {{"naive", transposeNaive},
                  {"shared", transposeCoalesced},
                  {"padded", transposeNoBankConflicts}};
  dim3 grid(n / TILE, n / TILE), block(TILE, ROWS);
  int ran = 0;
  for (const auto &v : variants) {
    if (!selected(variant, v.name)) continue;
    ++ran;
    CHECK(cudaMemset(out, 0, bytes));
    float ms = time_ms([&] { v.kernel<<<grid, block>>>(out, in, n, n); });
    CHECK(cudaMemcpy(t.data(), out, bytes, cudaMemcpyDeviceToHost));
    size_t wrong = 0;
    for (int r = 0; r < n; ++r)
      for (int c = 0; c < n; ++c) wrong += t[(size_t)c * n + r] != h[(size_t)r * n + c];
    printf("%-6s N=%d  %.3f ms  %.1f GB/s%s\n", v.name, n, ms, 2.0 * bytes / (ms * 1e6),
           wrong ? "  WRONG" : "");
    if (wrong) return 1;
  }
  if (!ran) {
    fprintf(stderr, "unknown variant %s (naive, shared, padded, all)\n", variant);
    return 2;
  }
  CHECK(cudaFree(in));
  CHECK(cudaFree(out));
  return 0;
}
