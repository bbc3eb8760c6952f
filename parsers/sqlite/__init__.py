"""SQLite profiles: nvprof databases (`.nvprof`/`.nvvp`) and Nsight Systems SQLite exports, over a
shared safe database opener and column readers."""
