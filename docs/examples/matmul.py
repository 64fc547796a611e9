import nvtx, numpy as np
a = np.random.rand(2048, 2048).astype(np.float32)
for _ in range(10):
    with nvtx.annotate("matmul {ops=17.2G bytes=50.3M}"):  # 2 n^3 FLOPs; a read, result written
        a @ a
