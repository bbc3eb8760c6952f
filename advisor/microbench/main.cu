// cuda-advisor-microbench: runs the microbenchmarks of seed 002 section III on one GPU and
// prints one JSON object per line on stdout: first a "device" record, then one record per
// sample ("bench" names the benchmark), last a "done" record.  `cuda-advisor microbench run`
// collects them into raw.json; `cuda-advisor microbench fit` turns that into a device
// characterization.
//
// usage: cuda-advisor-microbench [--device N] [--reps N] [--only GROUP[,GROUP...]]
//   groups: arith, arith_intensity, memory, dram_sweep, shmem, divergence (default: all)
#include <cstring>
#include <string>

#include "microbench.cuh"

static const char *const MB_GROUPS[] = {"arith",      "arith_intensity", "memory",
                                        "dram_sweep", "shmem",           "divergence"};
static const int MB_GROUP_COUNT = 6;

static void mb_usage(const char *message) {
  fprintf(stderr,
          "cuda-advisor-microbench: %s\nusage: cuda-advisor-microbench [--device N] [--reps N] "
          "[--only arith,arith_intensity,memory,dram_sweep,shmem,divergence]\n",
          message);
  exit(2);
}

static bool mb_selected(const std::string &only, const char *group) {
  if (only.empty()) return true;
  std::string list = "," + only + ",";
  return list.find("," + std::string(group) + ",") != std::string::npos;
}

// The device record: what fit needs to place the GPU (name, compute capability, clocks).
static void mb_print_device(int device) {
  cudaDeviceProp p;
  MB_CHECK(cudaGetDeviceProperties(&p, device));
  int clock_khz = 0, mem_clock_khz = 0, driver = 0, runtime = 0;
  MB_CHECK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, device));
  MB_CHECK(cudaDeviceGetAttribute(&mem_clock_khz, cudaDevAttrMemoryClockRate, device));
  MB_CHECK(cudaDriverGetVersion(&driver));
  MB_CHECK(cudaRuntimeGetVersion(&runtime));
  std::string name;
  for (const char *c = p.name; *c; ++c) {
    if (*c == '"' || *c == '\\') name += '\\';
    name += *c;
  }
  printf("{\"record\": \"device\", \"name\": \"%s\", \"compute_capability\": \"%d.%d\", "
         "\"sm_count\": %d, \"clock_khz\": %d, \"memory_clock_khz\": %d, "
         "\"memory_bus_width_bits\": %d, \"l2_bytes\": %d, \"max_threads_per_sm\": %d, "
         "\"shared_bytes_per_sm\": %zu, \"cuda_driver_version\": %d, \"cuda_runtime_version\": %d, "
         "\"chain\": %d, \"ilp\": %d}\n",
         name.c_str(), p.major, p.minor, p.multiProcessorCount, clock_khz, mem_clock_khz,
         p.memoryBusWidth, p.l2CacheSize, p.maxThreadsPerMultiProcessor,
         p.sharedMemPerMultiprocessor, driver, runtime, MB_CHAIN, MB_ILP);
  fflush(stdout);
}

int main(int argc, char **argv) {
  int device = 0, reps = 3;
  std::string only;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if ((a == "--device" || a == "--reps" || a == "--only") && i + 1 >= argc)
      mb_usage(("missing value after " + a).c_str());
    if (a == "--device")
      device = atoi(argv[++i]);
    else if (a == "--reps")
      reps = atoi(argv[++i]);
    else if (a == "--only")
      only = argv[++i];
    else
      mb_usage(("unknown argument " + a).c_str());
  }
  if (reps < 1) mb_usage("--reps must be at least 1");
  if (!only.empty()) {
    std::string rest = only + ",";
    for (size_t start = 0, comma; (comma = rest.find(',', start)) != std::string::npos;
         start = comma + 1) {
      std::string g = rest.substr(start, comma - start);
      bool known = false;
      for (int k = 0; k < MB_GROUP_COUNT; ++k) known = known || g == MB_GROUPS[k];
      if (!known) mb_usage(("unknown group " + g).c_str());
    }
  }
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    fprintf(stderr, "cuda-advisor-microbench: no CUDA device is available\n");
    return 3;
  }
  if (device < 0 || device >= count) mb_usage("--device is out of range");
  MB_CHECK(cudaSetDevice(device));
  mb_print_device(device);

  MbContext ctx;
  cudaDeviceProp p;
  MB_CHECK(cudaGetDeviceProperties(&p, device));
  ctx.device = device;
  ctx.sm_count = p.multiProcessorCount;
  ctx.max_threads_per_sm = p.maxThreadsPerMultiProcessor;
  ctx.l2_bytes = p.l2CacheSize > 0 ? p.l2CacheSize : (1 << 20);
  ctx.reps = reps;
  ctx.flush_bytes = 2 * (size_t)ctx.l2_bytes;
  MB_CHECK(cudaMalloc(&ctx.flush_buffer, ctx.flush_bytes));

  if (mb_selected(only, "arith")) mb_run_arith(ctx);
  if (mb_selected(only, "arith_intensity")) mb_run_arith_intensity(ctx);
  if (mb_selected(only, "memory")) mb_run_memory(ctx);
  if (mb_selected(only, "dram_sweep")) mb_run_dram_sweep(ctx);
  if (mb_selected(only, "shmem")) mb_run_shmem(ctx);
  if (mb_selected(only, "divergence")) mb_run_divergence(ctx);

  MB_CHECK(cudaFree(ctx.flush_buffer));
  printf("{\"record\": \"done\"}\n");
  return 0;
}
