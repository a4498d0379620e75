"""Names of the host functions the CPU target's code calls for thread block clusters: the
lowerings (lower/cluster.py) emit calls to them and the CPU device (cluster.py)
registers them with the JIT. Kept apart so that the device need not load the lowerings."""
RANK, SIZE, SHARED = "simt_cpu_cluster_rank", "simt_cpu_cluster_size", "simt_cpu_cluster_shared"
DIM = "simt_cpu_cluster_dim"
