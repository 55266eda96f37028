"""Layout math, per-instruction FLOPs/bytes, chips, and the roofline model."""
