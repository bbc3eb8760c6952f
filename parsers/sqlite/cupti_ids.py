"""CUPTI enumeration values that nvprof databases store as bare numbers.

Every value here was checked against NVIDIA's CUPTI headers (``cupti_activity.h``,
``cupti_runtime_cbid.h``, ``cupti_driver_cbid.h`` as shipped with CUDA 11.x; the ids are append-only
across CUDA versions, so older databases use the same numbers).  The callback-id tables are a
selection (the calls a CUDA program commonly makes); an id that is not listed is reported as
``runtime cbid N`` / ``driver cbid N`` rather than guessed.  Names drop the CUPTI version suffix
(``cudaMalloc_v3020`` -> ``cudaMalloc``) as nvprof and nsys print them; the per-thread-stream
variants keep ``_ptsz`` / ``_ptds`` and driver names keep their ``_v2`` symbol suffix.
"""

from __future__ import annotations

#: CUpti_ActivityMemcpyKind -> normalised transfer kind (0 = unknown direction)
MEMCPY_KINDS: dict[int, str] = {
    1: "HtoD", 2: "DtoH", 3: "HtoA", 4: "AtoH", 5: "AtoA",
    6: "AtoD", 7: "DtoA", 8: "DtoD", 9: "HtoH", 10: "PtoP",
}  # fmt: skip

#: CUpti_ActivityMemoryKind -> the label nvprof prints (0 = unknown: a missing value)
MEMORY_KINDS: dict[int, str] = {
    1: "Pageable", 2: "Pinned", 3: "Device", 4: "Array",
    5: "Managed", 6: "Device Static", 7: "Managed Static",
}  # fmt: skip

#: CUpti_runtime_api_trace_cbid -> CUDA runtime function
RUNTIME_CBIDS: dict[int, str] = {
    1: "cudaDriverGetVersion", 2: "cudaRuntimeGetVersion", 3: "cudaGetDeviceCount",
    4: "cudaGetDeviceProperties", 5: "cudaChooseDevice", 8: "cudaConfigureCall",
    9: "cudaSetupArgument", 10: "cudaGetLastError", 11: "cudaPeekAtLastError",
    12: "cudaGetErrorString", 13: "cudaLaunch", 14: "cudaFuncSetCacheConfig",
    15: "cudaFuncGetAttributes", 16: "cudaSetDevice", 17: "cudaGetDevice",
    18: "cudaSetValidDevices", 19: "cudaSetDeviceFlags", 20: "cudaMalloc",
    21: "cudaMallocPitch", 22: "cudaFree", 23: "cudaMallocArray", 24: "cudaFreeArray",
    25: "cudaMallocHost", 26: "cudaFreeHost", 27: "cudaHostAlloc",
    28: "cudaHostGetDevicePointer", 29: "cudaHostGetFlags", 30: "cudaMemGetInfo",
    31: "cudaMemcpy", 32: "cudaMemcpy2D", 33: "cudaMemcpyToArray", 34: "cudaMemcpy2DToArray",
    35: "cudaMemcpyFromArray", 36: "cudaMemcpy2DFromArray", 37: "cudaMemcpyArrayToArray",
    38: "cudaMemcpy2DArrayToArray", 39: "cudaMemcpyToSymbol", 40: "cudaMemcpyFromSymbol",
    41: "cudaMemcpyAsync", 42: "cudaMemcpyToArrayAsync", 43: "cudaMemcpyFromArrayAsync",
    44: "cudaMemcpy2DAsync", 45: "cudaMemcpy2DToArrayAsync", 46: "cudaMemcpy2DFromArrayAsync",
    47: "cudaMemcpyToSymbolAsync", 48: "cudaMemcpyFromSymbolAsync", 49: "cudaMemset",
    50: "cudaMemset2D", 51: "cudaMemsetAsync", 52: "cudaMemset2DAsync",
    53: "cudaGetSymbolAddress", 54: "cudaGetSymbolSize", 55: "cudaBindTexture",
    56: "cudaBindTexture2D", 57: "cudaBindTextureToArray", 58: "cudaUnbindTexture",
    123: "cudaThreadExit", 126: "cudaThreadSynchronize", 127: "cudaThreadGetLimit",
    128: "cudaThreadSetLimit", 129: "cudaStreamCreate", 130: "cudaStreamDestroy",
    131: "cudaStreamSynchronize", 132: "cudaStreamQuery", 133: "cudaEventCreate",
    134: "cudaEventCreateWithFlags", 135: "cudaEventRecord", 136: "cudaEventDestroy",
    137: "cudaEventSynchronize", 138: "cudaEventQuery", 139: "cudaEventElapsedTime",
    140: "cudaMalloc3D", 141: "cudaMalloc3DArray", 142: "cudaMemset3D",
    143: "cudaMemset3DAsync", 144: "cudaMemcpy3D", 145: "cudaMemcpy3DAsync",
    146: "cudaThreadSetCacheConfig", 147: "cudaStreamWaitEvent",
    150: "cudaThreadGetCacheConfig", 151: "cudaPointerGetAttributes", 152: "cudaHostRegister",
    153: "cudaHostUnregister", 154: "cudaDeviceCanAccessPeer",
    155: "cudaDeviceEnablePeerAccess", 156: "cudaDeviceDisablePeerAccess",
    160: "cudaMemcpyPeer", 161: "cudaMemcpyPeerAsync", 162: "cudaMemcpy3DPeer",
    163: "cudaMemcpy3DPeerAsync", 164: "cudaDeviceReset", 165: "cudaDeviceSynchronize",
    166: "cudaDeviceGetLimit", 167: "cudaDeviceSetLimit", 168: "cudaDeviceGetCacheConfig",
    169: "cudaDeviceSetCacheConfig", 170: "cudaProfilerInitialize", 171: "cudaProfilerStart",
    172: "cudaProfilerStop", 173: "cudaDeviceGetByPCIBusId", 174: "cudaDeviceGetPCIBusId",
    182: "cudaFuncSetSharedMemConfig", 183: "cudaDeviceGetSharedMemConfig",
    184: "cudaDeviceSetSharedMemConfig", 185: "cudaCreateTextureObject",
    186: "cudaDestroyTextureObject", 197: "cudaStreamAddCallback",
    198: "cudaStreamCreateWithFlags", 200: "cudaDeviceGetAttribute", 201: "cudaStreamDestroy",
    202: "cudaStreamCreateWithPriority", 203: "cudaStreamGetPriority",
    204: "cudaStreamGetFlags", 205: "cudaDeviceGetStreamPriorityRange",
    206: "cudaMallocManaged", 207: "cudaOccupancyMaxActiveBlocksPerMultiprocessor",
    208: "cudaStreamAttachMemAsync", 209: "cudaGetErrorName",
    210: "cudaOccupancyMaxActiveBlocksPerMultiprocessor", 211: "cudaLaunchKernel",
    212: "cudaGetDeviceFlags", 213: "cudaLaunch_ptsz", 214: "cudaLaunchKernel_ptsz",
    215: "cudaMemcpy_ptds", 225: "cudaMemcpyAsync_ptsz", 233: "cudaMemset_ptds",
    235: "cudaMemsetAsync_ptsz", 239: "cudaStreamSynchronize_ptsz",
    242: "cudaEventRecord_ptsz", 247: "cudaStreamWaitEvent_ptsz",
    251: "cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags",
    252: "cudaMemPrefetchAsync", 253: "cudaMemPrefetchAsync_ptsz", 254: "cudaMemAdvise",
    255: "cudaDeviceGetP2PAttribute", 269: "cudaLaunchCooperativeKernel",
    270: "cudaLaunchCooperativeKernel_ptsz", 272: "cudaLaunchCooperativeKernelMultiDevice",
    273: "cudaFuncSetAttribute", 284: "cudaLaunchHostFunc", 286: "cudaGraphCreate",
    310: "cudaGraphInstantiate", 311: "cudaGraphLaunch", 313: "cudaGraphExecDestroy",
    314: "cudaGraphDestroy", 315: "cudaStreamBeginCapture", 319: "cudaStreamEndCapture",
    373: "cudaMallocAsync", 375: "cudaFreeAsync",
}  # fmt: skip

#: CUpti_driver_api_trace_cbid -> CUDA driver function
DRIVER_CBIDS: dict[int, str] = {
    1: "cuInit", 2: "cuDriverGetVersion", 3: "cuDeviceGet", 4: "cuDeviceGetCount",
    5: "cuDeviceGetName", 6: "cuDeviceComputeCapability", 7: "cuDeviceTotalMem",
    8: "cuDeviceGetProperties", 9: "cuDeviceGetAttribute", 10: "cuCtxCreate",
    11: "cuCtxDestroy", 14: "cuCtxPushCurrent", 15: "cuCtxPopCurrent", 16: "cuCtxGetDevice",
    17: "cuCtxSynchronize", 18: "cuModuleLoad", 19: "cuModuleLoadData",
    20: "cuModuleLoadDataEx", 21: "cuModuleLoadFatBinary", 22: "cuModuleUnload",
    23: "cuModuleGetFunction", 24: "cuModuleGetGlobal", 29: "cuMemAlloc", 33: "cuMemFree",
    37: "cuMemAllocHost", 38: "cuMemFreeHost", 39: "cuMemHostAlloc", 43: "cuMemcpyHtoD",
    45: "cuMemcpyDtoH", 47: "cuMemcpyDtoD", 60: "cuMemcpyHtoDAsync", 62: "cuMemcpyDtoHAsync",
    64: "cuMemcpyDtoDAsync", 71: "cuMemsetD8", 73: "cuMemsetD16", 75: "cuMemsetD32",
    85: "cuFuncGetAttribute", 86: "cuFuncSetCacheConfig", 115: "cuLaunch",
    116: "cuLaunchGrid", 117: "cuLaunchGridAsync", 118: "cuEventCreate",
    119: "cuEventRecord", 120: "cuEventQuery", 121: "cuEventSynchronize",
    122: "cuEventDestroy", 123: "cuEventElapsedTime", 124: "cuStreamCreate",
    125: "cuStreamQuery", 126: "cuStreamSynchronize", 127: "cuStreamDestroy",
    136: "cuCtxSetLimit", 137: "cuCtxGetLimit", 235: "cuCtxCreate_v2",
    241: "cuModuleGetGlobal_v2", 242: "cuMemGetInfo_v2", 243: "cuMemAlloc_v2",
    244: "cuMemAllocPitch_v2", 245: "cuMemFree_v2", 247: "cuMemHostGetDevicePointer_v2",
    249: "cuMemsetD8_v2", 250: "cuMemsetD16_v2", 251: "cuMemsetD32_v2",
    259: "cuDeviceTotalMem_v2", 271: "cuMemHostAlloc_v2", 276: "cuMemcpyHtoD_v2",
    277: "cuMemcpyHtoDAsync_v2", 278: "cuMemcpyDtoH_v2", 279: "cuMemcpyDtoHAsync_v2",
    280: "cuMemcpyDtoD_v2", 281: "cuMemcpyDtoDAsync_v2", 294: "cuMemAllocHost_v2",
    295: "cuStreamWaitEvent", 296: "cuCtxGetApiVersion", 299: "cuCtxGetCacheConfig",
    300: "cuCtxSetCacheConfig", 301: "cuMemHostRegister", 302: "cuMemHostUnregister",
    303: "cuCtxSetCurrent", 304: "cuCtxGetCurrent", 305: "cuMemcpy", 306: "cuMemcpyAsync",
    307: "cuLaunchKernel", 308: "cuProfilerStart", 309: "cuProfilerStop",
    310: "cuPointerGetAttribute", 311: "cuProfilerInitialize", 312: "cuDeviceCanAccessPeer",
    313: "cuCtxEnablePeerAccess", 318: "cuMemcpyPeer", 319: "cuMemcpyPeerAsync",
    322: "cuCtxDestroy_v2", 323: "cuCtxPushCurrent_v2", 324: "cuCtxPopCurrent_v2",
    325: "cuEventDestroy_v2", 326: "cuStreamDestroy_v2", 331: "cuDeviceGetByPCIBusId",
    332: "cuDeviceGetPCIBusId", 346: "cuStreamAddCallback", 362: "cuLinkCreate",
    363: "cuLinkAddData", 365: "cuLinkComplete", 366: "cuLinkDestroy",
    367: "cuStreamCreateWithPriority", 371: "cuMemAllocManaged", 372: "cuGetErrorString",
    373: "cuGetErrorName", 374: "cuOccupancyMaxActiveBlocksPerMultiprocessor",
    379: "cuMemHostRegister_v2", 384: "cuOccupancyMaxPotentialBlockSize",
    386: "cuDevicePrimaryCtxRetain", 387: "cuDevicePrimaryCtxRelease",
    388: "cuDevicePrimaryCtxSetFlags", 389: "cuDevicePrimaryCtxReset", 391: "cuCtxGetFlags",
    392: "cuDevicePrimaryCtxGetState", 440: "cuStreamSynchronize_ptsz",
    441: "cuEventRecord_ptsz", 442: "cuLaunchKernel_ptsz", 457: "cuMemAdvise",
    467: "cuMemPrefetchAsync", 477: "cuLaunchCooperativeKernel", 481: "cuFuncSetAttribute",
    482: "cuDeviceGetUuid",
}  # fmt: skip


def api_name(domain: str, cbid: int) -> str | None:
    """The function of a ``runtime`` or ``driver`` callback id, or None when not listed."""
    table = RUNTIME_CBIDS if domain == "runtime" else DRIVER_CBIDS
    return table.get(cbid)
