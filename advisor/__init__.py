"""cuda-advisor: quantified CUDA tuning advice from NVIDIA profiler output."""

__version__ = "0.1.0"
