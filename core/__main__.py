import os

# Set before numpy loads: OpenBLAS threads slow the small (6×6, batched) solves the
# integrators and the optimiser make by an order of magnitude on a shared machine.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

from .cli import main

main()
