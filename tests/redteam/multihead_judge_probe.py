"""A module that inspects its own call stack, environment and file system for the judge's
references and the run seed, and retries forever when it cannot find them."""

ASSIGNMENT = "multihead"
CELLS = {
    "wrapper": r'''
import gc, inspect, os

__WRONG__


class MultiHeadAttentionWrapper(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        self.found = []
        for frame in inspect.stack():
            self.found += [k for k in frame.frame.f_globals if "ref" in k or "seed" in k]
        for obj in gc.get_objects():
            if isinstance(obj, dict) and "run_seed" in obj:
                self.found.append(obj["run_seed"])
        for root in ("/", "/work", "/tmp", os.getcwd()):
            try:
                self.found += os.listdir(root)
            except OSError:
                pass
        self.d_out = d_out * num_heads

    def forward(self, x):
        while not self.found:
            pass
        return torch.zeros(*x.shape[:-1], self.d_out)
'''
}
