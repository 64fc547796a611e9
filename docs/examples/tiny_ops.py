# Twelve 64-wide Linear/LayerNorm/GELU layers at batch 1: a model of tiny ops (docs/pytorch.md).
import torch
layers = []
for _ in range(12):
    layers += [torch.nn.Linear(64, 64), torch.nn.LayerNorm(64), torch.nn.GELU()]
model = torch.nn.Sequential(*layers).eval()
x = torch.randn(1, 64)
with torch.no_grad():
    for _ in range(400):
        model(x)
