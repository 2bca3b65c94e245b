"""The forward pass: config, operators, weights, the one model runner, decoding, sampling, the trace and its recorder,
input policy."""
