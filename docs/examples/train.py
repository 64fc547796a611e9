import torch  # nothing else: `ceiling run --torch` finds the model, its ops and their work
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(1024, 1024), torch.nn.ReLU(), torch.nn.Linear(1024, 10))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
x, y = torch.randn(256, 1024), torch.randint(0, 10, (256,))
for _ in range(20):  # training: forward, backward, optimizer step
    opt.zero_grad()
    torch.nn.functional.cross_entropy(model(x), y).backward()
    opt.step()
with torch.no_grad():
    for _ in range(20):  # inference
        model(x)
