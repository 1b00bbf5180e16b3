# A transformers model (random init, no download) whose logits the loop keeps: the site
# of the growth must be the loop's line, with the library line it went through.
import torch
from transformers import GPT2Config, GPT2LMHeadModel

import culeak

model = GPT2LMHeadModel(GPT2Config(n_layer=2, n_embd=128, n_head=4, vocab_size=1000)).cuda().eval()
ids = torch.randint(0, 1000, (2, 32), device="cuda")
kept = []
with torch.no_grad():
    for i in range(12):
        culeak.mark("iteration %d" % i)
        kept.append(model(ids).logits)  # KEEP
torch.cuda.synchronize()
print("hf_logits: %d logits kept" % len(kept))
