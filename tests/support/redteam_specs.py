"""The red team's specs (tests/redteam/*.py) and how a spec becomes notebook cells.

Shared by tests/adversarial/test_redteam.py, which grades every spec in a sandboxed copy of the
course, and tests/grader/test_mistakes.py, which grades the specs made of solution cells under
several run seeds. A spec only builds notebooks: its hostile code is in strings, and loading it
runs none of that code.
"""

import importlib.util
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
REDTEAM = REPO / "tests" / "redteam"
SPECS = sorted(p for p in REDTEAM.glob("*.py"))

# what __WRONG__ in a spec's cells stands for: wrong definitions of every graded piece of an
# assignment (they pass no check)
WRONG = {
    "softmax": (
        "def softmax(x, dim=-1, temperature=1.0):\n    return x * 0\n"
        "def softmax_jacobian(p):\n    return p.unsqueeze(-1) * 0 + p.unsqueeze(-2) * 0\n"
        "def log_softmax(x, dim=-1):\n    return x * 0\n"
        "def cross_entropy(logits, target, ignore_index=-100, reduction='mean'):\n"
        "    return logits.sum() * 0\n"
    ),
    "masking": (
        "def causal_mask(T, S=None, device=None):\n"
        "    return torch.ones(T, S or T, dtype=torch.bool, device=device)\n"
        "def padding_mask(lengths, S=None):\n"
        "    return torch.ones(len(lengths), 1, 1, S or 1, dtype=torch.bool)\n"
        "def combine_masks(*masks):\n    return masks[0]\n"
        "def masked_softmax(scores, mask, dim=-1):\n    return scores * 0\n"
        "def masked_softmax_renorm(scores, mask, dim=-1):\n    return scores * 0\n"
        "class CausalAttention(nn.Module):\n"
        "    def __init__(self, d_in, d_out, context_length, dropout, qkv_bias=False):\n"
        "        super().__init__()\n"
        "        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)\n"
        "        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)\n"
        "        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)\n"
        "    def forward(self, x):\n        return self.W_value(x) * 0\n"
    ),
    "multihead": (
        "def split_heads(x, num_heads):\n    return x * 0\n"
        "def merge_heads(x):\n    return x * 0\n"
        "class MultiHeadAttentionWrapper(nn.Module):\n"
        "    def __init__(self, *args, **kwargs):\n        super().__init__()\n"
        "    def forward(self, x):\n        return x * 0\n"
        "class MultiHeadAttention(nn.Module):\n"
        "    def __init__(self, *args, **kwargs):\n        super().__init__()\n"
        "    def forward(self, x, *args, **kwargs):\n        return x * 0\n"
        "def mha_parameter_count(d_model, bias=True):\n    return -1\n"
        "def from_torch_mha_state(state):\n    return {}\n"
        "def keep_mask_from_torch(attn_mask=None, key_padding_mask=None):\n    return None\n"
    ),
    "models": (
        "class DecoderBlock(nn.Module):\n"
        "    def __init__(self, d_model, num_heads, d_ff, dropout=0.0, eps=1e-5):\n"
        "        super().__init__()\n"
        "    def forward(self, x, memory, self_mask=None, memory_mask=None):\n"
        "        return x * 0\n"
        "def mlm_mask(input_ids, vocab_size, mask_id, special_ids, seed, p=0.15):\n"
        "    return input_ids * 0, input_ids * 0\n"
        "class GPTModel(nn.Module):\n"
        "    def __init__(self, vocab_size, context_length, d_model, num_heads, num_layers, d_ff,\n"
        "                 tie_weights=False):\n"
        "        super().__init__()\n"
        "        self.V = vocab_size\n"
        "    def forward(self, idx):\n        return torch.zeros(*idx.shape, self.V)\n"
        "def apply_rope(x, positions=None, base=10000.0):\n    return x * 0\n"
        "class ModernBlock(nn.Module):\n"
        "    def __init__(self, d_model, num_heads, num_kv_heads, d_ff, eps=1e-6,\n"
        "                 rope_base=10000.0):\n"
        "        super().__init__()\n"
        "    def forward(self, x, mask=None):\n        return x * 0\n"
    ),
    "decoding": (
        "def greedy_decode(table, idx, max_new_tokens, eos_id=None):\n    return idx * 0\n"
        "def top_k_filter(logits, k):\n    return logits * 0\n"
        "def top_p_filter(logits, p):\n    return logits * 0\n"
        "def apply_repetition_penalty(logits, prev_ids, penalty):\n    return logits * 0\n"
        "def no_repeat_ngram_ban(logits, ids, n):\n    return logits * 0\n"
        "def generate(table, idx, max_new_tokens, seed, **options):\n    return idx * 0\n"
        "def beam_search(table, idx, beam_size, max_new_tokens, eos_id=None,\n"
        "                length_penalty=0.0):\n"
        "    return idx * 0, 0.0\n"
    ),
}


def load_spec(path):
    spec = importlib.util.spec_from_file_location(f"redteam_{path.stem}", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)  # the spec only builds notebooks; hostile code is in strings
    return mod


SPEC = {p: load_spec(p) for p in SPECS}


def is_controlled(path):
    return hasattr(SPEC[path], "HONEST") or hasattr(SPEC[path], "honest")


class Solutions(dict):
    """{grade_id: the reference solution's source} of one assignment (the good student's cells),
    handed to a spec's ``honest(sol)`` / ``attack(sol)``."""

    def edit(self, gid, *pairs):
        """The solution of ``gid`` with each (old, new) replaced; ``old`` must occur in it."""
        src = self[gid]
        for old, new in pairs:
            assert old in src, f"{gid}: {old!r} is not in the solution any more"
            src = src.replace(old, new)
        return src


def spec_cells(spec, which, sol):
    """``which`` = "attack" or "honest": the spec's {grade_id: source} (a dict or a function)."""
    upper = {"attack": "CELLS", "honest": "HONEST"}[which]
    if hasattr(spec, which):
        return getattr(spec, which)(sol)
    return getattr(spec, upper)


def substitute(src, a, ctx):
    """A spec cell's source with its placeholders filled in: __WRONG__ (the assignment's wrong
    definitions), and __REPO__, __COURSE__, __PORT__, __MARK__ from ``ctx``."""
    return (
        src.replace("__WRONG__", WRONG[a])
        .replace("__REPO__", str(ctx["repo"]))
        .replace("__COURSE__", str(ctx["course"]))
        .replace("__PORT__", str(ctx["port"]))
        .replace("__MARK__", str(ctx["mark"]))
    )
