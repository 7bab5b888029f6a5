"""Results that are not what they claim: a tensor subclass equal to everything, a parameter
count that is an object equal to every int, a state_dict of lists, NaN and huge outputs."""

ASSIGNMENT = "multihead"
CELLS = {
    "parameter_count": r'''
__WRONG__


class Anything(int):
    def __eq__(self, other):
        return True

    __hash__ = int.__hash__


class Liar(torch.Tensor):
    def __eq__(self, other):
        return torch.ones((), dtype=torch.bool)

    def allclose(self, *a, **k):
        return True


def mha_parameter_count(d_model, bias=True):
    return Anything(0)


def split_heads(x, num_heads):
    return torch.full_like(x, float("nan")).as_subclass(Liar)


def merge_heads(x):
    return torch.full_like(x, 3.0e38).as_subclass(Liar)


def from_torch_mha_state(state):
    return {k: v.tolist() for k, v in state.items()}


def keep_mask_from_torch(attn_mask=None, key_padding_mask=None):
    return [[True]]
'''
}
