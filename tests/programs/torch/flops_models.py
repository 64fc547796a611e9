"""Forwards of the named torchvision models (random weights: nothing is downloaded) at
224x224, batch 1, for the FLOP totals `ceiling run --torch` declares
(tests/integration/torch/torch_run_test.cpp). Usage: flops_models.py [--calls N] NAME..."""
import argparse

import torch
import torchvision

parser = argparse.ArgumentParser()
parser.add_argument("--calls", type=int, default=1)
parser.add_argument("names", nargs="+")
args = parser.parse_args()
torch.manual_seed(0)
x = torch.randn(1, 3, 224, 224)
for name in args.names:
    model = getattr(torchvision.models, name)(weights=None).eval()
    with torch.no_grad():
        for _ in range(args.calls):
            model(x)
print("ran", " ".join(args.names))
