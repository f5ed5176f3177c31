"""Developer tooling: the local control plane build, image tooling, generators and benchmarks."""
