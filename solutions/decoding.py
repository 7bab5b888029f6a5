"""Decoding strategies for autoregressive language models (chapter 9).

Model interface: a callable model(idx (B, T) long) -> logits (B, T, V). generate_cached also needs
the KV-cache protocol of solutions.models.GPTModel: model.make_caches() -> list of KVCache, and
model(idx, caches=caches), where positions start at caches[0].length and every layer appends
its new keys/values.

Logit processors take next-token logits (B, V) and return a new tensor (no in-place edits);
filtered entries are set to -inf, so softmax gives them probability 0.

References
- Holtzman et al. 2020, The Curious Case of Neural Text Degeneration (nucleus / top-p sampling).
- Fan et al. 2018, Hierarchical Neural Story Generation (top-k sampling).
- Keskar et al. 2019, CTRL, sec. 4.1 (repetition penalty: the paper divides every repeated token's
  logit by theta); the sign-aware rule used here is Hugging Face's later fix (transformers issue
  #2302, PR #2303), now RepetitionPenaltyLogitsProcessor.
- Paulus et al. 2018 (no-repeat trigram); Hugging Face NoRepeatNGramLogitsProcessor.
- Wu et al. 2016, Google's NMT system (beam search length penalty ((5 + |Y|) / 6) ** alpha).
"""

import torch
import torch.nn.functional as F


@torch.no_grad()
def greedy_decode(model, idx, max_new_tokens, eos_id=None):
    """Append the argmax token max_new_tokens times. idx (B, T) -> (B, T + n), n <= max_new_tokens.

    With eos_id, a row that has produced eos_id keeps receiving eos_id, and the loop stops early
    once every row has finished.
    """
    return _decode_loop(lambda ids: model(ids)[:, -1, :], None, idx, max_new_tokens, eos_id)


def apply_temperature(logits, t):
    """logits / t (t > 0): t < 1 sharpens the distribution, t > 1 flattens it."""
    if t <= 0:
        raise ValueError("temperature must be > 0 (use greedy decoding for t -> 0)")
    return logits / t


def top_k_filter(logits, k):
    """Keep the k largest logits per row, set the rest to -inf. logits (B, V).

    Entries tied with the k-th largest value are all kept (the Hugging Face TopKLogitsWarper
    rule), so a row keeps exactly k tokens unless there is a tie at the boundary.
    """
    k = min(int(k), logits.shape[-1])
    if k < 1:
        raise ValueError("k must be >= 1")
    kth = torch.topk(logits, k, dim=-1).values[..., -1:]
    return logits.masked_fill(logits < kth, float("-inf"))


def top_p_filter(logits, p):
    """Nucleus filter: keep the smallest set of most likely tokens whose probability mass is >= p.

    Tokens are sorted by probability (a stable sort, so among equal probabilities the lower token
    id comes first); a token is kept when the mass of the tokens before it is still < p. The most
    likely token is always kept. Dropped entries -> -inf. logits (B, V), 0 < p <= 1.
    """
    if not 0 < p <= 1:
        raise ValueError("p must be in (0, 1]")
    if p >= 1:
        return logits.clone()  # a new tensor, as every logit function returns
    sorted_logits, order = torch.sort(logits, dim=-1, descending=True, stable=True)
    probs = torch.softmax(sorted_logits, dim=-1)
    mass_before = torch.cumsum(probs, dim=-1) - probs
    drop_sorted = mass_before >= p
    drop_sorted[..., 0] = False
    drop = torch.zeros_like(drop_sorted).scatter(-1, order, drop_sorted)
    return logits.masked_fill(drop, float("-inf"))


def apply_repetition_penalty(logits, prev_ids, penalty):
    """Repetition penalty with Hugging Face's sign rule: for every token id in prev_ids (B, T), a
    positive logit is divided by penalty and a negative logit is multiplied by it, so with
    penalty > 1 the token always becomes less likely. logits (B, V) -> (B, V).

    The CTRL paper (Keskar et al. 2019, sec. 4.1) divides every repeated token's logit by the
    penalty; that makes a negative logit larger, i.e. the repeated token MORE likely. Hugging Face
    reported this in transformers issue #2302 and fixed it in PR #2303 by multiplying negative
    logits; this function follows that fixed rule.
    """
    if penalty == 1.0 or prev_ids.shape[-1] == 0:
        return logits.clone()
    score = torch.gather(logits, -1, prev_ids)
    score = torch.where(score < 0, score * penalty, score / penalty)
    return logits.scatter(-1, prev_ids, score)


def no_repeat_ngram_ban(logits, ids, n):
    """Set to -inf every token that would complete an n-gram already present in ids.

    logits (B, V), ids (B, L) (prompt + generated so far). The last n - 1 tokens of each row are
    the prefix; every earlier occurrence of that prefix bans the token that followed it.
    n <= 0 or L < n: unchanged. n == 1 bans every token already present.
    """
    L = ids.shape[-1]
    if n <= 0 or L < n:
        return logits.clone()
    grams = ids.unfold(-1, n, 1)  # (B, L - n + 1, n), includes the last complete n-gram
    prefix = ids[:, L - n + 1 :]  # (B, n - 1)
    match = (grams[..., :-1] == prefix.unsqueeze(1)).all(dim=-1)  # (B, G)
    hits = torch.zeros(logits.shape, dtype=torch.long, device=logits.device)
    hits.scatter_add_(-1, grams[..., -1], match.long())
    return logits.masked_fill(hits > 0, float("-inf"))


def sample_next(logits, temperature=1.0, top_k=None, top_p=None, generator=None):
    """Sample one token per row from next-token logits (B, V) -> (B, 1) long.

    Order: temperature, top-k, top-p, softmax, torch.multinomial(generator=generator).
    temperature == 0 means greedy (argmax); top_k None or 0 and top_p None or 1.0 mean no filter.
    """
    if temperature == 0:
        return logits.argmax(dim=-1, keepdim=True)
    logits = apply_temperature(logits, temperature)
    if top_k:
        logits = top_k_filter(logits, top_k)
    if top_p is not None and top_p < 1.0:
        logits = top_p_filter(logits, top_p)
    probs = torch.softmax(logits, dim=-1)
    return torch.multinomial(probs, num_samples=1, generator=generator)


def _pick(
    logits, ids, temperature, top_k, top_p, repetition_penalty, no_repeat_ngram_size, generator
):
    """Process next-token logits (B, V) given the ids so far (B, L), then sample (B, 1)."""
    logits = apply_repetition_penalty(logits, ids, repetition_penalty)
    logits = no_repeat_ngram_ban(logits, ids, no_repeat_ngram_size)
    return sample_next(logits, temperature, top_k, top_p, generator)


def _decode_loop(first_logits, step_logits, idx, max_new_tokens, eos_id, pick=None):
    """Shared loop: first_logits(idx) gives (B, V) for the prompt; step_logits(next (B, 1)) gives
    the next (B, V) (None: call first_logits on the whole sequence again). pick(logits, ids)
    chooses (B, 1); default argmax. Finished rows (after eos_id) keep receiving eos_id."""
    pick = pick or (lambda logits, ids: logits.argmax(dim=-1, keepdim=True))
    finished = torch.zeros(idx.shape[0], dtype=torch.bool, device=idx.device)
    logits = None
    for step in range(max_new_tokens):
        if step == 0 or step_logits is None:
            logits = first_logits(idx)
        else:
            logits = step_logits(idx[:, -1:])
        nxt = pick(logits, idx)
        if eos_id is not None:
            nxt = torch.where(finished.unsqueeze(1), torch.full_like(nxt, eos_id), nxt)
            finished = finished | (nxt.squeeze(1) == eos_id)
        idx = torch.cat([idx, nxt], dim=1)
        if eos_id is not None and bool(finished.all()):
            break
    return idx


@torch.no_grad()
def generate(
    model,
    idx,
    max_new_tokens,
    temperature=1.0,
    top_k=None,
    top_p=None,
    repetition_penalty=1.0,
    no_repeat_ngram_size=0,
    eos_id=None,
    generator=None,
):
    """Sample max_new_tokens tokens, re-running the model on the whole sequence every step.

    idx (B, T) -> (B, T + n). Per step: repetition penalty and no-repeat n-gram ban over all ids
    so far (prompt included, as in Hugging Face), then sample_next. A torch.Generator makes the
    result reproducible. Rows that produced eos_id keep receiving eos_id; stops when all did.
    """

    def pick(logits, ids):
        return _pick(
            logits,
            ids,
            temperature,
            top_k,
            top_p,
            repetition_penalty,
            no_repeat_ngram_size,
            generator,
        )

    return _decode_loop(lambda ids: model(ids)[:, -1, :], None, idx, max_new_tokens, eos_id, pick)


@torch.no_grad()
def generate_cached(
    model,
    idx,
    max_new_tokens,
    temperature=1.0,
    top_k=None,
    top_p=None,
    repetition_penalty=1.0,
    no_repeat_ngram_size=0,
    eos_id=None,
    generator=None,
):
    """generate() with a KV cache: the prompt is run once, then only the newest token per step.

    Same arguments and same result as generate() under the same generator (up to floating-point
    rounding of the logits). Needs model.make_caches() and model(idx, caches=caches).
    """
    caches = model.make_caches()

    def pick(logits, ids):
        return _pick(
            logits,
            ids,
            temperature,
            top_k,
            top_p,
            repetition_penalty,
            no_repeat_ngram_size,
            generator,
        )

    def step(ids):
        return model(ids, caches=caches)[:, -1, :]

    return _decode_loop(step, step, idx, max_new_tokens, eos_id, pick)


def gnmt_length_penalty(length, alpha):
    """lp(Y) = ((5 + |Y|) / 6) ** alpha (Wu et al. 2016); alpha = 0 gives 1 (raw log-prob)."""
    return ((5.0 + length) / 6.0) ** alpha


@torch.no_grad()
def beam_search(model, idx, beam_size, max_new_tokens, eos_id=None, length_penalty=0.0):
    """Beam search for one prompt idx (1, T); returns (tokens (1, T + n), score).

    Each step extends every live beam by every token and keeps the beam_size best by summed
    log-probability (all live beams have the same length, so the penalty cannot change their
    order). A candidate ending in eos_id among those top beam_size becomes a finished hypothesis
    and stops growing. Hypotheses are compared by score = log P(Y) / lp(Y) with the GNMT
    penalty lp = ((5 + |Y|) / 6) ** alpha, |Y| = number of generated tokens (eos included),
    alpha = length_penalty. Live beams left after max_new_tokens also count as hypotheses.
    The search stops early once no live beam can still beat the best finished hypothesis.
    beam_size = 1 gives greedy decoding when length_penalty == 0 or no eos_id is set (with
    alpha > 0 a single beam may still prefer continuing past a likely eos, as in fairseq).
    """
    if idx.shape[0] != 1:
        raise ValueError("beam_search takes one prompt of shape (1, T)")
    T0 = idx.shape[1]
    if max_new_tokens <= 0:
        return idx, 0.0
    beams = idx  # (n, T0 + t)
    sums = torch.zeros(1, dtype=torch.float64, device=idx.device)  # summed log-probs
    best_tokens, best_score = None, float("-inf")
    for t in range(1, max_new_tokens + 1):
        logp = F.log_softmax(model(beams)[:, -1, :].double(), dim=-1)  # (n, V)
        V = logp.shape[-1]
        cand = (sums.unsqueeze(1) + logp).flatten()
        top = torch.topk(cand, min(2 * beam_size, cand.numel()))
        new_beams, new_sums = [], []
        for rank, (s, flat) in enumerate(
            zip(top.values.tolist(), top.indices.tolist(), strict=True)
        ):
            b, tok = divmod(flat, V)
            seq = torch.cat([beams[b], beams.new_tensor([tok])])
            if eos_id is not None and tok == eos_id:
                if rank < beam_size:
                    score = s / gnmt_length_penalty(t, length_penalty)
                    if score > best_score:
                        best_tokens, best_score = seq, score
                continue
            new_beams.append(seq)
            new_sums.append(s)
            if len(new_beams) == beam_size:
                break
        if not new_beams:
            break
        beams = torch.stack(new_beams)
        sums = torch.tensor(new_sums, dtype=torch.float64, device=idx.device)
        if t == max_new_tokens:
            break
        # a live beam's score only falls as tokens are added (log-probs <= 0), so its best possible
        # final score is max over lengths t+1..max_new_tokens of sums / lp, reached at an end
        bound = torch.maximum(
            sums / gnmt_length_penalty(t + 1, length_penalty),
            sums / gnmt_length_penalty(max_new_tokens, length_penalty),
        )
        if best_tokens is not None and bool((bound <= best_score).all()):
            return best_tokens.unsqueeze(0), best_score
    if len(new_beams) > 0 or best_tokens is None:
        n_gen = beams.shape[1] - T0
        final = sums / gnmt_length_penalty(n_gen, length_penalty)
        i = int(final.argmax())
        if float(final[i]) > best_score:
            best_tokens, best_score = beams[i], float(final[i])
    return best_tokens.unsqueeze(0), best_score
