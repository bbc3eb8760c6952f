"""PyTorch profiler (Kineto) Chrome-trace JSON, plain or gzip-compressed, read as a stream."""
