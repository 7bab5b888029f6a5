"""Tests for solutions/decoding.py: brute-force oracles, hand-computed values and properties."""

import itertools
import math

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

from solutions.decoding import (
    apply_repetition_penalty,
    apply_temperature,
    beam_search,
    generate,
    generate_cached,
    greedy_decode,
    no_repeat_ngram_ban,
    sample_next,
    top_k_filter,
    top_p_filter,
)
from solutions.efficient import GroupedQueryAttention, KVCache

# ---------------------------------------------------------------------------------------------
# toy models
# ---------------------------------------------------------------------------------------------


class TableLM(nn.Module):
    """Next-token logits depend on the last token and the position: table[tok] + pos_table[t]."""

    def __init__(self, vocab=4, max_len=16, seed=0, scale=2.0):
        super().__init__()
        g = torch.Generator().manual_seed(seed)
        self.register_buffer("table", torch.randn(vocab, vocab, generator=g) * scale)
        self.register_buffer("pos", torch.randn(max_len, vocab, generator=g) * scale)

    def forward(self, idx):
        return self.table[idx] + self.pos[: idx.shape[1]]


class CachedToyLM(nn.Module):
    """One-layer LM with GQA + RoPE that follows the course's KV-cache protocol
    (make_caches(); forward(idx, caches) with positions starting at caches[0].length)."""

    def __init__(self, vocab=13, d_model=16, num_heads=4, num_kv_heads=2, seed=0):
        super().__init__()
        torch.manual_seed(seed)
        self.emb = nn.Embedding(vocab, d_model)
        self.attn = GroupedQueryAttention(d_model, num_heads, num_kv_heads, rope=True)
        self.head = nn.Linear(d_model, vocab)
        self.calls = []

    def make_caches(self):
        return [KVCache()]

    def forward(self, idx, caches=None):
        self.calls.append(idx.shape[1])
        x = self.emb(idx)
        x = x + self.attn(x, cache=None if caches is None else caches[0])
        return self.head(x)


class ScriptedLM:
    """Next-token probabilities looked up from the tokens generated after a prompt of length T0."""

    def __init__(self, vocab, T0, script, default=None):
        self.vocab, self.T0, self.script = vocab, T0, script
        self.default = default or [1.0 / vocab] * vocab

    def __call__(self, idx):
        B, T = idx.shape
        out = torch.zeros(B, T, self.vocab, dtype=torch.float64)
        for b in range(B):
            probs = self.script.get(tuple(idx[b, self.T0 :].tolist()), self.default)
            out[b, -1] = torch.tensor(probs, dtype=torch.float64).log()
        return out


@torch.no_grad()
def seq_logprob(model, prompt, tokens):
    """Independent scorer: sum of log-probabilities of tokens after prompt (1, T0)."""
    full = torch.cat([prompt[0], torch.tensor(tokens, dtype=torch.long)]).unsqueeze(0)
    logp = F.log_softmax(model(full)[0].double(), dim=-1)
    T0 = prompt.shape[1]
    return sum(float(logp[T0 - 1 + i, t]) for i, t in enumerate(tokens))


# ---------------------------------------------------------------------------------------------
# logit processors
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("p", [0.05, 0.3, 0.5, 0.75, 0.9, 0.99])
def test_top_p_is_smallest_set_with_mass_p_brute_force(seed, p):
    g = torch.Generator().manual_seed(seed)
    logits = torch.randn(3, 6, generator=g) * 2
    out = top_p_filter(logits, p)
    for row in range(3):
        probs = torch.softmax(logits[row].double(), dim=-1).tolist()
        kept = torch.isfinite(out[row])
        assert torch.equal(out[row][kept], logits[row][kept])
        assert torch.isneginf(out[row][~kept]).all()
        kept_ids = set(torch.nonzero(kept).flatten().tolist())
        best = None  # (size, -mass) of the smallest subset with mass >= p
        for r in range(1, 7):
            for s in itertools.combinations(range(6), r):
                mass = sum(probs[i] for i in s)
                if mass >= p and (best is None or (r, -mass) < best):
                    best = (r, -mass)
        assert len(kept_ids) == best[0]
        assert sum(probs[i] for i in kept_ids) == pytest.approx(-best[1], abs=1e-9)
        assert int(logits[row].argmax()) in kept_ids


def test_top_p_keeps_the_token_that_crosses_p():
    """probs (0.5, 0.3, 0.2), p = 0.7: the nucleus is {0, 1} (mass 0.8). 000's rule
    (drop where cumulative mass > p) keeps only token 0, whose mass 0.5 < p."""
    logits = torch.tensor([[0.5, 0.3, 0.2]]).log()
    out = top_p_filter(logits, 0.7)
    assert torch.isfinite(out).tolist() == [[True, True, False]]
    cum = torch.cumsum(torch.softmax(logits, -1), -1)
    assert (cum > 0.7).tolist() == [[False, True, True]]  # 000 would drop token 1 as well


def test_top_p_ties_and_edges():
    flat = torch.zeros(1, 5)  # five tokens of 0.2 each
    assert torch.isfinite(top_p_filter(flat, 0.5)).tolist() == [[True, True, True, False, False]]
    logits = torch.randn(4, 7)
    assert torch.equal(top_p_filter(logits, 1.0), logits)
    tiny = top_p_filter(logits, 1e-6)
    assert torch.equal(torch.isfinite(tiny), F.one_hot(logits.argmax(-1), 7).bool())
    with pytest.raises(ValueError):
        top_p_filter(logits, 0.0)


def test_top_k_keeps_exactly_k_largest():
    torch.manual_seed(0)
    logits = torch.randn(5, 20)
    for k in [1, 3, 20]:
        out = top_k_filter(logits, k)
        for row in range(5):
            expect = set(sorted(range(20), key=lambda i: -float(logits[row, i]))[:k])
            kept = set(torch.nonzero(torch.isfinite(out[row])).flatten().tolist())
            assert kept == expect
            assert torch.equal(out[row, list(kept)], logits[row, list(kept)])
    assert torch.equal(top_k_filter(logits, 50), logits)


def test_top_k_ties_at_boundary_are_kept():
    """Stated rule (Hugging Face TopKLogitsWarper): values equal to the k-th largest stay."""
    out = top_k_filter(torch.tensor([[3.0, 1.0, 1.0, 0.0]]), 2)
    assert torch.isfinite(out).tolist() == [[True, True, True, False]]


def test_temperature():
    logits = torch.tensor([[2.0, 1.0, -1.0]])
    torch.testing.assert_close(apply_temperature(logits, 0.5), logits * 2)
    p_cold = torch.softmax(apply_temperature(logits, 0.5), -1)
    p_hot = torch.softmax(apply_temperature(logits, 2.0), -1)
    p = torch.softmax(logits, -1)
    assert p_cold[0, 0] > p[0, 0] > p_hot[0, 0]
    with pytest.raises(ValueError):
        apply_temperature(logits, 0.0)


def test_repetition_penalty_ctrl_rule():
    logits = torch.tensor([[2.0, -2.0, 0.5, -1.0], [2.0, -2.0, 0.5, -1.0]])
    prev = torch.tensor([[0, 1, 1], [3, 3, 3]])
    out = apply_repetition_penalty(logits, prev, 1.5)
    expected = torch.tensor([[2.0 / 1.5, -2.0 * 1.5, 0.5, -1.0], [2.0, -2.0, 0.5, -1.5]])
    torch.testing.assert_close(out, expected)
    assert torch.equal(logits[0], torch.tensor([2.0, -2.0, 0.5, -1.0]))  # input untouched
    # every penalised token, positive or negative, becomes less likely
    p, q = torch.softmax(logits, -1), torch.softmax(out, -1)
    assert q[0, 0] < p[0, 0] and q[0, 1] < p[0, 1] and q[1, 3] < p[1, 3]
    # 000's rule (divide every logit) raises the negative one: -2 / 1.5 > -2
    wrong = logits[0].clone()
    wrong[[0, 1]] /= 1.5
    assert torch.softmax(wrong, -1)[1] > p[0, 1]


def ban_oracle(ids, n, V):
    """Brute force: token t is banned iff ids[-(n-1):] + [t] already occurs as an n-gram."""
    L = len(ids)
    if n <= 0 or L < n:
        return set()
    grams = {tuple(ids[i : i + n]) for i in range(L - n + 1)}
    prefix = tuple(ids[L - n + 1 :]) if n > 1 else ()
    return {t for t in range(V) if prefix + (t,) in grams}


@pytest.mark.parametrize("n", [0, 1, 2, 3, 4])
def test_no_repeat_ngram_against_brute_force(n):
    g = torch.Generator().manual_seed(n)
    V = 4
    for L in [1, 3, 8, 15]:
        ids = torch.randint(0, V, (6, L), generator=g)
        logits = torch.randn(6, V, generator=g)
        out = no_repeat_ngram_ban(logits, ids, n)
        for b in range(6):
            banned = set(torch.nonzero(torch.isneginf(out[b])).flatten().tolist())
            assert banned == ban_oracle(ids[b].tolist(), n, V)
            keep = [t for t in range(V) if t not in banned]
            assert torch.equal(out[b, keep], logits[b, keep])


def test_no_repeat_ngram_by_hand():
    ids = torch.tensor([[5, 6, 7, 5, 6]])  # bigram prefix (5, 6) was followed by 7
    out = no_repeat_ngram_ban(torch.zeros(1, 9), ids, 3)
    assert torch.isneginf(out).nonzero().tolist() == [[0, 7]]


# ---------------------------------------------------------------------------------------------
# sampling
# ---------------------------------------------------------------------------------------------


def test_sample_next_reproducible_and_respects_filters():
    logits = torch.randn(4, 30)
    a = sample_next(logits, generator=torch.Generator().manual_seed(0))
    b = sample_next(logits, generator=torch.Generator().manual_seed(0))
    assert a.shape == (4, 1) and torch.equal(a, b)
    g = torch.Generator().manual_seed(1)
    top2 = torch.topk(logits, 2, dim=-1).indices
    for _ in range(50):
        s = sample_next(logits, top_k=2, generator=g)
        assert (s == top2).any(dim=-1).all()
    assert torch.equal(sample_next(logits, temperature=0), logits.argmax(-1, keepdim=True))
    off = sample_next(logits, top_k=0, top_p=1.0, generator=torch.Generator().manual_seed(0))
    assert torch.equal(off, a)  # 0 / 1.0 switch the filters off (000's convention)


def test_sample_next_matches_distribution():
    probs = torch.tensor([0.1, 0.2, 0.3, 0.4])
    logits = probs.log().expand(4000, 4)
    s = sample_next(logits, generator=torch.Generator().manual_seed(3)).flatten()
    freq = torch.bincount(s, minlength=4).double() / 4000
    assert (freq - probs.double()).abs().max() < 0.03


def test_generate_seeded_reproducible_and_seeds_differ():
    m = CachedToyLM(vocab=50).eval()
    idx = torch.randint(0, 50, (2, 3), generator=torch.Generator().manual_seed(0))
    run = lambda s: generate(m, idx, 20, generator=torch.Generator().manual_seed(s))  # noqa: E731
    a, b, c = run(0), run(0), run(1)
    assert a.shape == (2, 23) and torch.equal(a[:, :3], idx)
    assert torch.equal(a, b)
    assert not torch.equal(a, c)


SETTINGS = [
    {},
    {"temperature": 0.7, "top_k": 5},
    {"top_p": 0.8, "repetition_penalty": 1.3},
    {"no_repeat_ngram_size": 2, "temperature": 1.5},
    {"eos_id": 3, "top_k": 4},
    {"temperature": 0},
]


@pytest.mark.parametrize("settings", SETTINGS)
def test_generate_cached_equals_generate_toy(settings):
    m = CachedToyLM().double().eval()
    idx = torch.randint(0, 13, (3, 4), generator=torch.Generator().manual_seed(5))
    a = generate(m, idx, 12, generator=torch.Generator().manual_seed(9), **settings)
    m.calls.clear()
    b = generate_cached(m, idx, 12, generator=torch.Generator().manual_seed(9), **settings)
    assert torch.equal(a, b)
    # the cached run feeds the prompt once, then one token per step
    assert m.calls[0] == 4 and set(m.calls[1:]) <= {1} and len(m.calls) == b.shape[1] - 4


@pytest.mark.parametrize("settings", SETTINGS[:4])
def test_generate_cached_equals_generate_gptmodel(settings):
    from solutions.models import GPTModel

    torch.manual_seed(0)
    m = GPTModel(17, 32, 16, 2, 2).double().eval()
    idx = torch.randint(0, 17, (2, 5), generator=torch.Generator().manual_seed(1))
    a = generate(m, idx, 10, generator=torch.Generator().manual_seed(4), **settings)
    b = generate_cached(m, idx, 10, generator=torch.Generator().manual_seed(4), **settings)
    assert a.shape == (2, 15) and torch.equal(a, b)


def test_generate_cached_equals_generate_modern_lm():
    from solutions.models import ModernLM

    torch.manual_seed(0)
    m = ModernLM(19, 16, 4, 2, 2, 32).double().eval()
    idx = torch.randint(0, 19, (2, 4), generator=torch.Generator().manual_seed(2))
    kw = {"top_p": 0.9, "repetition_penalty": 1.2, "eos_id": 5}
    a = generate(m, idx, 10, generator=torch.Generator().manual_seed(6), **kw)
    b = generate_cached(m, idx, 10, generator=torch.Generator().manual_seed(6), **kw)
    assert torch.equal(a, b)


class NextMap(nn.Module):
    """Deterministic: the next token is next_map[last token]."""

    def __init__(self, next_map, vocab):
        super().__init__()
        self.next_map = torch.tensor(next_map)
        self.vocab = vocab

    def forward(self, idx):
        return F.one_hot(self.next_map[idx], self.vocab).float() * 10


def test_eos_per_sequence_and_early_stop():
    m = NextMap([1, 2, 2, 3], 4)  # 0 -> 1 -> 2 (eos); 3 -> 3 forever
    idx = torch.tensor([[3, 1], [3, 0]])
    out = greedy_decode(m, idx, 6, eos_id=2)
    assert out.tolist() == [[3, 1, 2, 2], [3, 0, 1, 2]]  # row 0 padded with eos, stops at 2
    out = generate(m, idx, 6, eos_id=2, generator=torch.Generator().manual_seed(0))
    assert out.tolist() == [[3, 1, 2, 2], [3, 0, 1, 2]]
    never = greedy_decode(m, torch.tensor([[3]]), 4, eos_id=2)
    assert never.tolist() == [[3, 3, 3, 3, 3]]
    assert greedy_decode(m, idx, 3).shape == (2, 5)


def test_greedy_picks_argmax_each_step():
    m = TableLM(vocab=6, seed=2)
    idx = torch.tensor([[1, 4], [0, 0]])
    out = greedy_decode(m, idx, 7)
    for t in range(2, out.shape[1]):
        assert torch.equal(out[:, t], m(out[:, :t])[:, -1].argmax(-1))


# ---------------------------------------------------------------------------------------------
# beam search
# ---------------------------------------------------------------------------------------------


def brute_force_best(model, prompt, V, max_new, eos_id, alpha):
    """All token sequences of length max_new, each cut after its first eos; best GNMT score."""
    hyps = set()
    for seq in itertools.product(range(V), repeat=max_new):
        seq = list(seq)
        if eos_id in seq:
            seq = seq[: seq.index(eos_id) + 1]
        hyps.add(tuple(seq))
    scored = [(seq_logprob(model, prompt, list(h)) / ((5 + len(h)) / 6) ** alpha, h) for h in hyps]
    return max(scored)


@pytest.mark.parametrize("alpha", [0.0, 0.7, 3.0])
@pytest.mark.parametrize("seed", [0, 1])
def test_wide_beam_finds_brute_force_optimum(alpha, seed):
    m = TableLM(vocab=4, seed=seed, scale=1.5)
    prompt = torch.tensor([[1, 2]])
    best_score, best = brute_force_best(m, prompt, 4, 4, eos_id=0, alpha=alpha)
    # 128 >= every candidate per step (27 live beams x 4 tokens): exhaustive search
    tokens, score = beam_search(m, prompt, 128, 4, eos_id=0, length_penalty=alpha)
    assert tokens[0, 2:].tolist() == list(best)
    assert score == pytest.approx(best_score, abs=1e-9)


@pytest.mark.parametrize("beam", [2, 3])
def test_narrow_beam_score_is_consistent(beam):
    m = TableLM(vocab=4, seed=7)
    prompt = torch.tensor([[3]])
    tokens, score = beam_search(m, prompt, beam, 4, eos_id=0, length_penalty=0.6)
    gen = tokens[0, 1:].tolist()
    assert score == pytest.approx(seq_logprob(m, prompt, gen) / ((5 + len(gen)) / 6) ** 0.6)
    assert score <= brute_force_best(m, prompt, 4, 4, 0, 0.6)[0] + 1e-12


def test_beam_one_is_greedy():
    for seed in range(4):
        m = TableLM(vocab=6, seed=seed)
        prompt = torch.tensor([[seed % 6, 2]])
        greedy = greedy_decode(m, prompt, 8)
        assert torch.equal(beam_search(m, prompt, 1, 8, length_penalty=0.7)[0], greedy)
        greedy_eos = greedy_decode(m, prompt, 8, eos_id=1)
        assert torch.equal(beam_search(m, prompt, 1, 8, eos_id=1)[0], greedy_eos)


def test_length_penalty_changes_preference():
    """Short [eos] has log P = log 0.5; long [a, b, b, eos] has log 0.45 + 3 log 0.9, lower
    raw but higher after dividing by lp = ((5 + 4) / 6) ** alpha for large alpha."""
    eos, a, b = 0, 1, 2
    script = {
        (): [0.5, 0.45, 0.05],
        (a,): [0.05, 0.05, 0.9],
        (a, b): [0.05, 0.05, 0.9],
        (a, b, b): [0.9, 0.05, 0.05],
    }
    m = ScriptedLM(3, 1, script)
    prompt = torch.tensor([[a]])
    short, long = math.log(0.5), math.log(0.45) + 3 * math.log(0.9)
    assert short > long
    tok0, s0 = beam_search(m, prompt, 3, 4, eos_id=eos, length_penalty=0.0)
    assert tok0[0, 1:].tolist() == [eos] and s0 == pytest.approx(short)
    tok2, s2 = beam_search(m, prompt, 3, 4, eos_id=eos, length_penalty=2.0)
    assert tok2[0, 1:].tolist() == [a, b, b, eos] and s2 == pytest.approx(long / (9 / 6) ** 2)
    assert long / 1.5**0.5 < short  # alpha = 0.5 is not enough
    tok5 = beam_search(m, prompt, 3, 4, eos_id=eos, length_penalty=0.5)[0]
    assert tok5[0, 1:].tolist() == [eos]
    assert greedy_decode(m, prompt, 4, eos_id=eos)[0, 1:].tolist() == [eos]


def test_beam_without_eos_runs_full_length():
    m = TableLM(vocab=5, seed=3)
    tokens, score = beam_search(m, torch.tensor([[1, 2, 3]]), 3, 6)
    assert tokens.shape == (1, 9)
    assert score == pytest.approx(seq_logprob(m, torch.tensor([[1, 2, 3]]), tokens[0, 3:].tolist()))


# ---------------------------------------------------------------------------------------------
# devices
# ---------------------------------------------------------------------------------------------


def test_decoding_on_device(device):
    m = CachedToyLM().to(device).double().eval()
    idx = torch.randint(0, 13, (2, 3), device=device)
    kw = dict(top_k=6, top_p=0.9, repetition_penalty=1.2, no_repeat_ngram_size=2)
    a = generate(m, idx, 8, generator=torch.Generator(device=device).manual_seed(0), **kw)
    b = generate_cached(m, idx, 8, generator=torch.Generator(device=device).manual_seed(0), **kw)
    assert a.device.type == device.type and torch.equal(a, b)
    tokens, _ = beam_search(m, idx[:1], 3, 5, eos_id=0, length_penalty=0.6)
    assert tokens.device.type == device.type
    logits = torch.randn(2, 13, device=device)
    for out in (top_k_filter(logits, 3), top_p_filter(logits, 0.5)):
        assert out.device.type == device.type


def test_logit_processors_on_meta_device():
    meta = torch.device("meta")
    logits = torch.empty(2, 11, device=meta)
    ids = torch.empty(2, 6, dtype=torch.long, device=meta)
    for out in (
        top_k_filter(logits, 3),
        top_p_filter(logits, 0.5),
        apply_repetition_penalty(logits, ids, 1.3),
        no_repeat_ngram_ban(logits, ids, 3),
    ):
        assert out.device == meta and out.shape == (2, 11)
