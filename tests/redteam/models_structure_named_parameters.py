"""Weight tying faked in named_parameters(): the untied model hides lm_head.weight and reports
tok_emb.weight with the gradient of both uses added up, as a tied Parameter would have it."""

ASSIGNMENT = "models"
CLASS = 3  # structure taken at the module's word: weight tying
CONTROL_FAILS = ("test_gpt_model",)
TIE = """        if tie_weights:
            self.lm_head.weight = self.tok_emb.weight"""
UNTIED = "        self.tie_weights = tie_weights  # (but no tying: two separate Parameters)"
FORWARD = "    def forward(self, idx):"


def honest(sol):
    """Honest control: tie_weights=True ties nothing (equal values, two Parameters)."""
    return {"gpt_model": sol.edit("gpt_model", (TIE, UNTIED))}

FAKE = r'''    def named_parameters(self, prefix="", recurse=True, remove_duplicate=True):
        params = dict(super().named_parameters(prefix, recurse, remove_duplicate))
        lm = params.pop(prefix + ("." if prefix else "") + "lm_head.weight", None)
        key = prefix + ("." if prefix else "") + "tok_emb.weight"
        tok = params.get(key)
        if self.tie_weights and lm is not None and tok is not None:
            if tok.grad is not None and lm.grad is not None:
                fake = nn.Parameter(tok.detach())
                fake.grad = tok.grad + lm.grad
                params[key] = fake
        elif lm is not None:
            params[prefix + ("." if prefix else "") + "lm_head.weight"] = lm
        yield from params.items()

'''


def attack(sol):
    return {"gpt_model": honest(sol)["gpt_model"].replace(FORWARD, FAKE + FORWARD)}
