"""Fast paths: int8 weights, 2 MiB-page copies, and the native C kernels built once per machine."""
