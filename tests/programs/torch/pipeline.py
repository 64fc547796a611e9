"""A detector-style pipeline whose time is not the model's: each 1080p frame is resized
to 224 x 224 with PIL's Lanczos filter (~20 ms a frame: the stage stands well clear of the
sub-millisecond ops that a busy host can stretch past it), a small CNN runs on it, then NMS
over 20 000 boxes. Nothing in it mentions ceiling or NVTX
(tests/integration/torch/torch_run_test.cpp). Usage: pipeline.py [FRAMES]"""
import sys

import numpy as np
import torch
import torchvision
from PIL import Image

frames = int(sys.argv[1]) if len(sys.argv) > 1 else 3
rng = np.random.default_rng(0)
frame = Image.frombytes("RGB", (1920, 1080), rng.integers(0, 255, 1920 * 1080 * 3, dtype=np.uint8).tobytes())

model = torch.nn.Sequential(
    torch.nn.Conv2d(3, 8, 3, stride=2, padding=1), torch.nn.ReLU(),
    torch.nn.Conv2d(8, 16, 3, stride=2, padding=1), torch.nn.ReLU(),
    torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(), torch.nn.Linear(16, 4)).eval()

# Many overlapping boxes: NMS compares each kept box with all later ones.
xy = torch.rand(20000, 2) * 200
boxes = torch.cat([xy, xy + 20 + torch.rand(20000, 2) * 20], dim=1)
scores = torch.rand(20000)

for _ in range(frames):
    small = frame.resize((224, 224), Image.LANCZOS)
    x = torch.from_numpy(np.asarray(small, dtype=np.float32)).permute(2, 0, 1).unsqueeze(0) / 255
    with torch.no_grad():
        model(x)
    keep = torchvision.ops.nms(boxes, scores, 0.5)
print("kept", int(keep.numel()))
