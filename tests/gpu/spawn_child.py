"""A torch job whose spawned child keeps a tensor: culeak record names both recordings,
and culeak report of the parent's alone warns of the child's."""
import multiprocessing as mp

import torch


def child():
    keep = torch.empty(3 << 20, dtype=torch.uint8, device="cuda")  # 3 MiB, kept to the end
    torch.cuda.synchronize()
    child.kept = keep


if __name__ == "__main__":
    mp.set_start_method("spawn")
    x = torch.empty(1 << 20, dtype=torch.uint8, device="cuda")
    p = mp.Process(target=child)
    p.start()
    p.join()
    print("spawn_child: child exit", p.exitcode)
    del x
