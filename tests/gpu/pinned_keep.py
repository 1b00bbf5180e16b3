# A PyTorch job that keeps pinned host tensors in a list (pin_memory()), as a data loader's
# prefetch buffer that is never drained would: the pinned-host caching allocator holds
# their blocks. tests/gpu/run.sh (section clean) expects them reported at the KEEP line
# (as memory held by the pytorch caching allocator), and `culeak check` to exit 0.
import torch

kept = []
for step in range(4):
    kept.append(torch.randn(1 << 18).pin_memory())  # KEEP
    kept[-1].to("cuda", non_blocking=True)
torch.cuda.synchronize()
print("pinned_keep: %d pinned tensors kept, %d bytes" % (len(kept), sum(t.numel() * t.element_size() for t in kept)))
