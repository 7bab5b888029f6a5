"""Blind mistakes and correct variants for the `decoding` assignment."""

MISTAKES = [
    # ---------------------------------------------------------------- greedy_decode
    {
        "name": "greedy_stops_when_any_row_hits_eos",
        "cell": "greedy_decode",
        "clause": "eos_id is handled per row: a finished row keeps receiving eos_id and decoding stops only at the step where ALL rows have produced eos_id.",
        "class": "batch-axis",
        "source": r'''
def greedy_decode(table, idx, max_new_tokens, eos_id=None):
    """Greedy decoding with TableLM(table). idx (B, T) long -> (B, T + n), n <= max_new_tokens.

    With eos_id, a row that has produced eos_id keeps receiving it; stops once every row has.
    """
    model = TableLM(table)
    for _ in range(max_new_tokens):
        nxt = model(idx)[:, -1, :].argmax(dim=-1, keepdim=True)
        idx = torch.cat([idx, nxt], dim=1)
        if eos_id is not None and bool((nxt == eos_id).any()):
            break
    return idx
''',
    },
    {
        "name": "greedy_eos_zero_treated_as_none",
        "cell": "greedy_decode",
        "clause": "If eos_id is given (any token id, including 0) finished rows keep receiving eos_id and decoding stops when every row has produced it.",
        "class": "falsy-values",
        "source": r'''
def greedy_decode(table, idx, max_new_tokens, eos_id=None):
    """Greedy decoding with TableLM(table). idx (B, T) long -> (B, T + n), n <= max_new_tokens.

    With eos_id, a row that has produced eos_id keeps receiving it; stops once every row has.
    """
    model = TableLM(table)
    done = torch.zeros(idx.shape[0], dtype=torch.bool, device=idx.device)
    for _ in range(max_new_tokens):
        nxt = model(idx)[:, -1, :].argmax(dim=-1)
        if eos_id:
            nxt = torch.where(done, torch.full_like(nxt, eos_id), nxt)
            done = done | (nxt == eos_id)
        idx = torch.cat([idx, nxt.unsqueeze(1)], dim=1)
        if eos_id and done.all():
            break
    return idx
''',
    },
    {
        "name": "greedy_feeds_only_last_token",
        "cell": "greedy_decode",
        "clause": "Every step the next-token logits are model(idx)[:, -1, :] computed on the whole sequence so far (a (V, V, V) table looks at the last two tokens).",
        "class": "logic",
        "source": r'''
def greedy_decode(table, idx, max_new_tokens, eos_id=None):
    """Greedy decoding with TableLM(table). idx (B, T) long -> (B, T + n), n <= max_new_tokens.

    With eos_id, a row that has produced eos_id keeps receiving it; stops once every row has.
    """
    model = TableLM(table)
    finished = torch.zeros(idx.shape[0], dtype=torch.bool, device=idx.device)
    for _ in range(max_new_tokens):
        # only the newest token matters for the next prediction
        nxt = model(idx[:, -1:])[:, -1, :].argmax(dim=-1)
        if eos_id is not None:
            nxt = nxt.masked_fill(finished, eos_id)
            finished = finished | (nxt == eos_id)
        idx = torch.cat([idx, nxt[:, None]], dim=1)
        if eos_id is not None and bool(finished.all()):
            break
    return idx
''',
    },
    {
        "name": "greedy_preallocated_output_on_cpu",
        "cell": "greedy_decode",
        "clause": "New tensors (e.g. the finished-row flags, the output) must be created on idx.device; the result is on the input's device.",
        "class": "device",
        "source": r'''
def greedy_decode(table, idx, max_new_tokens, eos_id=None):
    """Greedy decoding with TableLM(table). idx (B, T) long -> (B, T + n), n <= max_new_tokens.

    With eos_id, a row that has produced eos_id keeps receiving it; stops once every row has.
    """
    model = TableLM(table)
    B, T = idx.shape
    out = torch.zeros(B, T + max_new_tokens, dtype=torch.long)
    out[:, :T] = idx
    finished = torch.zeros(B, dtype=torch.bool)
    n = 0
    for step in range(max_new_tokens):
        nxt = model(out[:, : T + step])[:, -1, :].argmax(dim=-1)
        if eos_id is not None:
            nxt = torch.where(finished, torch.full_like(nxt, eos_id), nxt)
            finished = finished | (nxt == eos_id)
        out[:, T + step] = nxt
        n = step + 1
        if eos_id is not None and bool(finished.all()):
            break
    return out[:, : T + n]
''',
    },
    # ---------------------------------------------------------------- top_k_filter
    {
        "name": "topk_scatter_drops_boundary_ties",
        "cell": "top_k_filter",
        "clause": "Ties: every value equal to the k-th largest is kept (Hugging Face TopKLogitsWarper rule), so more than k may remain.",
        "class": "ties-ordering",
        "source": r'''
def top_k_filter(logits, k):
    """Keep the k largest logits per row (ties with the k-th kept), the rest -> -inf.

    logits (..., vocab_size) -> same shape, dtype and device.
    """
    k = min(k, logits.size(-1))
    top = torch.topk(logits, k, dim=-1)
    out = torch.full_like(logits, float("-inf"))
    return out.scatter(-1, top.indices, top.values)
''',
    },
    {
        "name": "topk_clamps_k_with_batch_size",
        "cell": "top_k_filter",
        "clause": "If k is larger than vocab_size (the LAST axis) everything is kept; k >= 1.",
        "class": "batch-axis",
        "source": r'''
def top_k_filter(logits, k):
    """Keep the k largest logits per row (ties with the k-th kept), the rest -> -inf.

    logits (..., vocab_size) -> same shape, dtype and device.
    """
    k = min(k, len(logits))
    values, _ = logits.topk(k, dim=-1)
    threshold = values[..., -1, None]
    return torch.where(logits >= threshold, logits, torch.full_like(logits, float("-inf")))
''',
    },
    {
        "name": "topk_detach_alias_writes_input",
        "cell": "top_k_filter",
        "clause": "Returns a NEW tensor; the input logits must not be modified in place.",
        "class": "in-place",
        "source": r'''
def top_k_filter(logits, k):
    """Keep the k largest logits per row (ties with the k-th kept), the rest -> -inf.

    logits (..., vocab_size) -> same shape, dtype and device.
    """
    out = logits.detach()  # work on a detached copy
    if k >= out.shape[-1]:
        return out
    kth = torch.topk(out, k, dim=-1).values[..., -1:]
    out[out < kth] = float("-inf")
    return out
''',
    },
    {
        "name": "topk_fills_finfo_min",
        "cell": "top_k_filter",
        "clause": "Dropped entries are filled with exactly float('-inf'), not -1e9 or finfo.min.",
        "class": "edge-values",
        "source": r'''
def top_k_filter(logits, k):
    """Keep the k largest logits per row (ties with the k-th kept), the rest -> -inf.

    logits (..., vocab_size) -> same shape, dtype and device.
    """
    k = min(k, logits.shape[-1])
    kth = torch.topk(logits, k, dim=-1).values[..., -1:]
    return logits.masked_fill(logits < kth, torch.finfo(logits.dtype).min)
''',
    },
    {
        "name": "topk_upcasts_and_returns_float32",
        "cell": "top_k_filter",
        "clause": "Output has the same shape, dtype and device as the input (float16 / bfloat16 included).",
        "class": "dtype",
        "source": r'''
def top_k_filter(logits, k):
    """Keep the k largest logits per row (ties with the k-th kept), the rest -> -inf.

    logits (..., vocab_size) -> same shape, dtype and device.
    """
    x = logits.float()  # topk in half precision is fragile, work in float32
    k = min(k, x.shape[-1])
    kth = x.topk(k, dim=-1).values[..., -1:]
    return x.masked_fill(x < kth, float("-inf"))
''',
    },
    # ---------------------------------------------------------------- top_p_filter
    {
        "name": "topp_drops_token_that_crosses_p",
        "cell": "top_p_filter",
        "clause": "A token is kept when the mass of the tokens BEFORE it is < p, so the token that pushes the sum over p is kept ('drop when cumsum > p' is wrong).",
        "class": "probability-mass",
        "source": r'''
def top_p_filter(logits, p):
    """Nucleus filter: keep the smallest set of most likely tokens with probability mass >= p.

    A token (sorted by probability, stable: lower id first on ties) is kept when the mass of the
    tokens before it is < p. logits (..., vocab_size) -> same shape, dtype and device;
    dropped -> -inf.
    """
    probs = torch.softmax(logits, dim=-1)
    sorted_probs, order = torch.sort(probs, dim=-1, descending=True, stable=True)
    cum = sorted_probs.cumsum(dim=-1)
    remove_sorted = cum > p
    remove_sorted[..., 0] = False  # always keep the most likely token
    remove = remove_sorted.scatter(-1, order, remove_sorted)
    return logits.masked_fill(remove, float("-inf"))
''',
    },
    {
        "name": "topp_keeps_when_prior_mass_equals_p",
        "cell": "top_p_filter",
        "clause": "A token is kept when the mass of the tokens before it is strictly < p (smallest set whose mass first reaches p).",
        "class": "edge-values",
        "source": r'''
def top_p_filter(logits, p):
    """Nucleus filter: keep the smallest set of most likely tokens with probability mass >= p.

    A token (sorted by probability, stable: lower id first on ties) is kept when the mass of the
    tokens before it is < p. logits (..., vocab_size) -> same shape, dtype and device;
    dropped -> -inf.
    """
    if p >= 1:
        return logits.clone()
    probs = torch.softmax(logits, dim=-1)
    sorted_probs, order = torch.sort(probs, dim=-1, descending=True, stable=True)
    before = sorted_probs.cumsum(dim=-1) - sorted_probs
    before = torch.cat([torch.zeros_like(before[..., :1]), sorted_probs.cumsum(-1)[..., :-1]], -1)
    keep_sorted = before <= p
    keep = keep_sorted.scatter(-1, order, keep_sorted)
    return logits.masked_fill(~keep, float("-inf"))
''',
    },
    {
        "name": "topp_gather_instead_of_inverse_permutation",
        "cell": "top_p_filter",
        "clause": "The decision made in sorted order must be mapped back to the ORIGINAL token order (scatter by the sort indices, or gather with the inverse permutation).",
        "class": "logic",
        "source": r'''
def top_p_filter(logits, p):
    """Nucleus filter: keep the smallest set of most likely tokens with probability mass >= p.

    A token (sorted by probability, stable: lower id first on ties) is kept when the mass of the
    tokens before it is < p. logits (..., vocab_size) -> same shape, dtype and device;
    dropped -> -inf.
    """
    if p >= 1:
        return logits.clone()
    probs = torch.softmax(logits, dim=-1)
    sorted_probs, order = torch.sort(probs, dim=-1, descending=True, stable=True)
    cum = sorted_probs.cumsum(dim=-1)
    keep_sorted = (cum - sorted_probs) < p
    keep = torch.gather(keep_sorted, -1, order)  # back to token order
    return torch.where(keep, logits, torch.full_like(logits, float("-inf")))
''',
    },
    {
        "name": "topp_ascending_sort_then_flip_reverses_ties",
        "cell": "top_p_filter",
        "clause": "Ties: sort with torch.sort(..., descending=True, stable=True) so that on equal probability the LOWER token id comes first.",
        "class": "ties-ordering",
        "source": r'''
def top_p_filter(logits, p):
    """Nucleus filter: keep the smallest set of most likely tokens with probability mass >= p.

    A token (sorted by probability, stable: lower id first on ties) is kept when the mass of the
    tokens before it is < p. logits (..., vocab_size) -> same shape, dtype and device;
    dropped -> -inf.
    """
    if p >= 1:
        return logits.clone()
    probs = torch.softmax(logits, dim=-1)
    asc_probs, asc_idx = torch.sort(probs, dim=-1, stable=True)
    sorted_probs, order = asc_probs.flip(-1), asc_idx.flip(-1)  # largest first
    cum = sorted_probs.cumsum(dim=-1)
    keep_sorted = (cum - sorted_probs) < p
    keep_sorted[..., 0] = True
    keep = torch.zeros_like(keep_sorted).scatter(-1, order, keep_sorted)
    return logits.masked_fill(~keep, float("-inf"))
''',
    },
    {
        "name": "topp_implicit_softmax_dim",
        "cell": "top_p_filter",
        "clause": "Input logits are (..., vocab_size): the probabilities of each row are the softmax over the LAST axis.",
        "class": "batch-axis",
        "source": r'''
def top_p_filter(logits, p):
    """Nucleus filter: keep the smallest set of most likely tokens with probability mass >= p.

    A token (sorted by probability, stable: lower id first on ties) is kept when the mass of the
    tokens before it is < p. logits (..., vocab_size) -> same shape, dtype and device;
    dropped -> -inf.
    """
    if p >= 1:
        return logits.clone()
    probs = F.softmax(logits)
    sorted_probs, order = torch.sort(probs, dim=-1, descending=True, stable=True)
    cum = torch.cumsum(sorted_probs, dim=-1)
    before = torch.cat([torch.zeros_like(cum[..., :1]), cum[..., :-1]], dim=-1)
    keep = torch.zeros_like(before, dtype=torch.bool).scatter(-1, order, before < p)
    return logits.masked_fill(~keep, float("-inf"))
''',
    },
    # ---------------------------------------------------------------- apply_repetition_penalty
    {
        "name": "penalty_mask_built_on_cpu",
        "cell": "apply_repetition_penalty",
        "clause": "Output: a new tensor with the same shape, dtype and DEVICE (new tensors on the input's device).",
        "class": "device",
        "source": r'''
def apply_repetition_penalty(logits, prev_ids, penalty):
    """Hugging Face repetition penalty: for each id in prev_ids (B, L), a positive logit is
    divided by penalty and a negative one multiplied.
    logits (B, vocab_size) -> new (B, vocab_size)."""
    seen = torch.zeros(logits.shape, dtype=torch.bool).scatter(1, prev_ids, True)
    penalized = torch.where(logits > 0, logits / penalty, logits * penalty)
    return torch.where(seen, penalized, logits)
''',
    },
    {
        "name": "penalty_applied_once_per_occurrence",
        "cell": "apply_repetition_penalty",
        "clause": "The formula is applied ONCE per token in row b's prev_ids, even if the same token appears several times.",
        "class": "logic",
        "source": r'''
def apply_repetition_penalty(logits, prev_ids, penalty):
    """Hugging Face repetition penalty: for each id in prev_ids (B, L), a positive logit is
    divided by penalty and a negative one multiplied.
    logits (B, vocab_size) -> new (B, vocab_size)."""
    out = logits.clone()
    for j in range(prev_ids.shape[1]):
        col = prev_ids[:, j : j + 1]
        z = out.gather(1, col)
        out = out.scatter(1, col, torch.where(z > 0, z / penalty, z * penalty))
    return out
''',
    },
    {
        "name": "penalty_amax_fails_on_empty_history",
        "cell": "apply_repetition_penalty",
        "clause": "prev_ids is (B, L) and L = 0 is possible (then nothing changes).",
        "class": "edge-values",
        "source": r'''
def apply_repetition_penalty(logits, prev_ids, penalty):
    """Hugging Face repetition penalty: for each id in prev_ids (B, L), a positive logit is
    divided by penalty and a negative one multiplied.
    logits (B, vocab_size) -> new (B, vocab_size)."""
    seen = F.one_hot(prev_ids, logits.shape[-1]).amax(dim=1).bool()  # (B, V)
    penalized = torch.where(logits > 0, logits / penalty, logits * penalty)
    return torch.where(seen, penalized, logits)
''',
    },
    {
        "name": "penalty_scatter_inplace_on_input",
        "cell": "apply_repetition_penalty",
        "clause": "Return a new tensor; do not use the in-place scatter_ on the input logits.",
        "class": "in-place",
        "source": r'''
def apply_repetition_penalty(logits, prev_ids, penalty):
    """Hugging Face repetition penalty: for each id in prev_ids (B, L), a positive logit is
    divided by penalty and a negative one multiplied.
    logits (B, vocab_size) -> new (B, vocab_size)."""
    score = torch.gather(logits, 1, prev_ids)
    score = torch.where(score > 0, score / penalty, score * penalty)
    return logits.scatter_(1, prev_ids, score)
''',
    },
    # ---------------------------------------------------------------- no_repeat_ngram_ban
    {
        "name": "ngram_skips_last_ngram",
        "cell": "no_repeat_ngram_ban",
        "clause": "All n-grams fully inside ids[b] are used, INCLUDING the one that ends at the last token (i = L - n).",
        "class": "edge-values",
        "source": r'''
def no_repeat_ngram_ban(logits, ids, n):
    """Set to -inf every token that would complete an n-gram already in ids (B, L).

    logits (B, vocab_size) -> new (B, vocab_size). n <= 0 or L < n: unchanged.
    """
    L = ids.shape[1]
    if n <= 0 or L < n:
        return logits.clone()
    # n-grams seen so far; the last window is the one being extended, skip it
    grams = ids.unfold(-1, n, 1)[:, :-1]  # (B, G - 1, n)
    prefix = ids[:, L - n + 1 :]
    match = (grams[..., :-1] == prefix[:, None, :]).all(-1)
    counts = torch.zeros_like(logits).scatter_add(1, grams[..., -1], match.to(logits.dtype))
    return logits.masked_fill(counts > 0, float("-inf"))
''',
    },
    {
        "name": "ngram_prefix_from_first_row_only",
        "cell": "no_repeat_ngram_ban",
        "clause": "In row b the prefix is the last n - 1 tokens of THAT row; each row is matched against its own n-grams.",
        "class": "batch-axis",
        "source": r'''
def no_repeat_ngram_ban(logits, ids, n):
    """Set to -inf every token that would complete an n-gram already in ids (B, L).

    logits (B, vocab_size) -> new (B, vocab_size). n <= 0 or L < n: unchanged.
    """
    L = ids.shape[-1]
    if n <= 0 or L < n:
        return logits.clone()
    grams = ids.unfold(-1, n, 1)  # (B, G, n)
    prefix = ids[0, L - n + 1 :]  # (n-1,)
    hit = (grams[..., :-1] == prefix).all(dim=-1)  # (B, G)
    counts = torch.zeros_like(logits).scatter_add(1, grams[..., -1], hit.to(logits.dtype))
    return logits.masked_fill(counts > 0, float("-inf"))
''',
    },
    {
        "name": "ngram_off_by_one_length_guard",
        "cell": "no_repeat_ngram_ban",
        "clause": "Only when n <= 0 or L < n is nothing changed; with L == n the single n-gram ids[b, 0:n] still counts.",
        "class": "integer-arithmetic",
        "source": r'''
def no_repeat_ngram_ban(logits, ids, n):
    """Set to -inf every token that would complete an n-gram already in ids (B, L).

    logits (B, vocab_size) -> new (B, vocab_size). n <= 0 or L < n: unchanged.
    """
    L = ids.size(1)
    if n <= 0 or L <= n:
        return logits.clone()
    grams = ids.unfold(-1, n, 1)
    prefix = ids[:, L - n + 1 :].unsqueeze(1)
    match = (grams[:, :, : n - 1] == prefix).all(-1)
    ban = torch.zeros(logits.shape, dtype=torch.long, device=logits.device)
    ban = ban.scatter_add(1, grams[:, :, -1], match.long())
    return logits.masked_fill(ban.bool(), float("-inf"))
''',
    },
    {
        "name": "ngram_negative_zero_slice_for_unigram",
        "cell": "no_repeat_ngram_ban",
        "clause": "n = 1: the prefix is empty, so every token that appears in ids[b] is banned.",
        "class": "integer-arithmetic",
        "source": r'''
def no_repeat_ngram_ban(logits, ids, n):
    """Set to -inf every token that would complete an n-gram already in ids (B, L).

    logits (B, vocab_size) -> new (B, vocab_size). n <= 0 or L < n: unchanged.
    """
    L = ids.shape[1]
    if n <= 0 or L < n:
        return logits.clone()
    grams = ids.unfold(-1, n, 1)  # (B, G, n)
    prefix = ids[:, -(n - 1):]  # last n - 1 tokens
    match = (grams[..., :-1] == prefix[:, None, :]).all(-1)
    counts = torch.zeros_like(logits).scatter_add(1, grams[..., -1], match.to(logits.dtype))
    return logits.masked_fill(counts > 0, float("-inf"))
''',
    },
    # ---------------------------------------------------------------- generate
    {
        "name": "generate_new_generator_each_step",
        "cell": "generate",
        "clause": "Create gen = make_generator(seed, idx.device) ONCE at the start of the function (not a new generator per step).",
        "class": "randomness",
        "source": r'''
def generate(
    table,
    idx,
    max_new_tokens,
    seed,
    temperature=1.0,
    top_k=None,
    top_p=None,
    repetition_penalty=1.0,
    no_repeat_ngram_size=0,
    eos_id=None,
):
    """Seeded sampling with TableLM(table). idx (B, T) long -> (B, T + n), n <= max_new_tokens.

    Per step: repetition penalty, n-gram ban, temperature, top-k, top-p, softmax, then one
    torch.multinomial call on the generator make_generator(seed, idx.device).
    """
    model = TableLM(table)
    ids = idx
    done = torch.zeros(idx.shape[0], dtype=torch.bool, device=idx.device)
    for step in range(max_new_tokens):
        logits = model(ids)[:, -1, :]
        logits = apply_repetition_penalty(logits, ids, repetition_penalty)
        logits = no_repeat_ngram_ban(logits, ids, no_repeat_ngram_size)
        if temperature == 0:
            nxt = logits.argmax(-1, keepdim=True)
        else:
            logits = logits / temperature
            if top_k:
                logits = top_k_filter(logits, top_k)
            if top_p is not None and top_p < 1:
                logits = top_p_filter(logits, top_p)
            gen = make_generator(seed + step, idx.device)
            nxt = torch.multinomial(torch.softmax(logits, dim=-1), 1, generator=gen)
        if eos_id is not None:
            nxt = nxt.masked_fill(done[:, None], eos_id)
            done = done | (nxt[:, 0] == eos_id)
        ids = torch.cat([ids, nxt], dim=1)
        if eos_id is not None and bool(done.all()):
            break
    return ids
''',
    },
    {
        "name": "generate_samples_only_unfinished_rows",
        "cell": "generate",
        "clause": "multinomial is called once per step on the whole (B, vocab_size), finished rows included.",
        "class": "randomness",
        "source": r'''
def generate(
    table,
    idx,
    max_new_tokens,
    seed,
    temperature=1.0,
    top_k=None,
    top_p=None,
    repetition_penalty=1.0,
    no_repeat_ngram_size=0,
    eos_id=None,
):
    """Seeded sampling with TableLM(table). idx (B, T) long -> (B, T + n), n <= max_new_tokens.

    Per step: repetition penalty, n-gram ban, temperature, top-k, top-p, softmax, then one
    torch.multinomial call on the generator make_generator(seed, idx.device).
    """
    model = TableLM(table)
    gen = make_generator(seed, idx.device)
    ids = idx
    alive = torch.ones(idx.shape[0], dtype=torch.bool, device=idx.device)
    for _ in range(max_new_tokens):
        logits = model(ids)[:, -1, :]
        logits = apply_repetition_penalty(logits, ids, repetition_penalty)
        logits = no_repeat_ngram_ban(logits, ids, no_repeat_ngram_size)
        if temperature == 0:
            nxt = logits.argmax(-1)
        else:
            logits = logits / temperature
            if top_k is not None and top_k != 0:
                logits = top_k_filter(logits, top_k)
            if top_p is not None and top_p < 1:
                logits = top_p_filter(logits, top_p)
            probs = torch.softmax(logits, dim=-1)
            nxt = torch.full((ids.shape[0],), -1, dtype=ids.dtype, device=ids.device)
            if eos_id is not None:
                nxt[~alive] = eos_id
                rows = alive.nonzero().flatten()
            else:
                rows = torch.arange(ids.shape[0], device=ids.device)
            nxt[rows] = torch.multinomial(probs[rows], 1, generator=gen).flatten()
        if eos_id is not None:
            nxt = torch.where(alive, nxt, torch.full_like(nxt, eos_id))
            alive = alive & (nxt != eos_id)
        ids = torch.cat([ids, nxt[:, None]], dim=1)
        if eos_id is not None and not bool(alive.any()):
            break
    return ids
''',
    },
    {
        "name": "generate_top_p_before_top_k",
        "cell": "generate",
        "clause": "Processing order per step: temperature, then top_k_filter, then top_p_filter, then softmax.",
        "class": "logic",
        "source": r'''
def generate(
    table,
    idx,
    max_new_tokens,
    seed,
    temperature=1.0,
    top_k=None,
    top_p=None,
    repetition_penalty=1.0,
    no_repeat_ngram_size=0,
    eos_id=None,
):
    """Seeded sampling with TableLM(table). idx (B, T) long -> (B, T + n), n <= max_new_tokens.

    Per step: repetition penalty, n-gram ban, temperature, top-k, top-p, softmax, then one
    torch.multinomial call on the generator make_generator(seed, idx.device).
    """
    model = TableLM(table)
    gen = make_generator(seed, idx.device)
    ids = idx
    finished = torch.zeros(idx.shape[0], dtype=torch.bool, device=idx.device)
    for _ in range(max_new_tokens):
        logits = model(ids)[:, -1, :]
        logits = apply_repetition_penalty(logits, ids, repetition_penalty)
        logits = no_repeat_ngram_ban(logits, ids, no_repeat_ngram_size)
        if temperature == 0:
            nxt = logits.argmax(dim=-1, keepdim=True)
        else:
            logits = logits / temperature
            if top_p is not None and top_p < 1:
                logits = top_p_filter(logits, top_p)
            if top_k is not None and top_k != 0:
                logits = top_k_filter(logits, top_k)
            nxt = torch.multinomial(torch.softmax(logits, dim=-1), num_samples=1, generator=gen)
        if eos_id is not None:
            nxt = nxt.masked_fill(finished[:, None], eos_id)
            finished = finished | (nxt[:, 0] == eos_id)
        ids = torch.cat([ids, nxt], dim=1)
        if eos_id is not None and bool(finished.all()):
            break
    return ids
''',
    },
    {
        "name": "generate_zero_temperature_as_tiny_temperature",
        "cell": "generate",
        "clause": "temperature == 0 picks the argmax (no random numbers are used).",
        "class": "ties-ordering",
        "source": r'''
def generate(
    table,
    idx,
    max_new_tokens,
    seed,
    temperature=1.0,
    top_k=None,
    top_p=None,
    repetition_penalty=1.0,
    no_repeat_ngram_size=0,
    eos_id=None,
):
    """Seeded sampling with TableLM(table). idx (B, T) long -> (B, T + n), n <= max_new_tokens.

    Per step: repetition penalty, n-gram ban, temperature, top-k, top-p, softmax, then one
    torch.multinomial call on the generator make_generator(seed, idx.device).
    """
    model = TableLM(table)
    gen = make_generator(seed, idx.device)
    ids = idx
    finished = torch.zeros(idx.shape[0], dtype=torch.bool, device=idx.device)
    for _ in range(max_new_tokens):
        logits = model(ids)[:, -1, :]
        logits = apply_repetition_penalty(logits, ids, repetition_penalty)
        logits = no_repeat_ngram_ban(logits, ids, no_repeat_ngram_size)
        # temperature -> 0 is greedy; a tiny temperature gives the same one-hot distribution
        logits = logits / max(temperature, 1e-4)
        if top_k is not None and top_k != 0:
            logits = top_k_filter(logits, top_k)
        if top_p is not None and top_p < 1:
            logits = top_p_filter(logits, top_p)
        probs = torch.softmax(logits, dim=-1)
        nxt = torch.multinomial(probs, num_samples=1, generator=gen)
        if eos_id is not None:
            nxt = nxt.masked_fill(finished[:, None], eos_id)
            finished = finished | (nxt[:, 0] == eos_id)
        ids = torch.cat([ids, nxt], dim=1)
        if eos_id is not None and bool(finished.all()):
            break
    return ids
''',
    },
    {
        "name": "generate_penalty_ignores_prompt",
        "cell": "generate",
        "clause": "Repetition penalty and n-gram ban get the tokens so far ids (B, L) INCLUDING the prompt.",
        "class": "logic",
        "source": r'''
def generate(
    table,
    idx,
    max_new_tokens,
    seed,
    temperature=1.0,
    top_k=None,
    top_p=None,
    repetition_penalty=1.0,
    no_repeat_ngram_size=0,
    eos_id=None,
):
    """Seeded sampling with TableLM(table). idx (B, T) long -> (B, T + n), n <= max_new_tokens.

    Per step: repetition penalty, n-gram ban, temperature, top-k, top-p, softmax, then one
    torch.multinomial call on the generator make_generator(seed, idx.device).
    """
    model = TableLM(table)
    gen = make_generator(seed, idx.device)
    T = idx.shape[1]
    ids = idx
    finished = torch.zeros(idx.shape[0], dtype=torch.bool, device=idx.device)
    for _ in range(max_new_tokens):
        logits = model(ids)[:, -1, :]
        generated = ids[:, T:]  # penalise what the model itself produced
        logits = apply_repetition_penalty(logits, generated, repetition_penalty)
        logits = no_repeat_ngram_ban(logits, ids, no_repeat_ngram_size)
        if temperature == 0:
            nxt = logits.argmax(dim=-1, keepdim=True)
        else:
            logits = logits / temperature
            if top_k is not None and top_k != 0:
                logits = top_k_filter(logits, top_k)
            if top_p is not None and top_p < 1:
                logits = top_p_filter(logits, top_p)
            nxt = torch.multinomial(torch.softmax(logits, dim=-1), num_samples=1, generator=gen)
        if eos_id is not None:
            nxt = nxt.masked_fill(finished[:, None], eos_id)
            finished = finished | (nxt[:, 0] == eos_id)
        ids = torch.cat([ids, nxt], dim=1)
        if eos_id is not None and bool(finished.all()):
            break
    return ids
''',
    },
    {
        "name": "generate_top_k_zero_not_skipped",
        "cell": "generate",
        "clause": "top_k_filter is applied only when top_k is neither None NOR 0 (top_k=0 means no top-k filtering).",
        "class": "falsy-values",
        "source": r'''
def generate(
    table,
    idx,
    max_new_tokens,
    seed,
    temperature=1.0,
    top_k=None,
    top_p=None,
    repetition_penalty=1.0,
    no_repeat_ngram_size=0,
    eos_id=None,
):
    """Seeded sampling with TableLM(table). idx (B, T) long -> (B, T + n), n <= max_new_tokens.

    Per step: repetition penalty, n-gram ban, temperature, top-k, top-p, softmax, then one
    torch.multinomial call on the generator make_generator(seed, idx.device).
    """
    model = TableLM(table)
    gen = make_generator(seed, idx.device)
    ids = idx
    finished = torch.zeros(idx.shape[0], dtype=torch.bool, device=idx.device)
    for _ in range(max_new_tokens):
        logits = model(ids)[:, -1, :]
        logits = apply_repetition_penalty(logits, ids, repetition_penalty)
        logits = no_repeat_ngram_ban(logits, ids, no_repeat_ngram_size)
        if temperature == 0:
            nxt = logits.argmax(dim=-1, keepdim=True)
        else:
            logits = logits / temperature
            if top_k is not None:
                logits = top_k_filter(logits, top_k)
            if top_p is not None and top_p < 1:
                logits = top_p_filter(logits, top_p)
            probs = torch.softmax(logits, dim=-1)
            nxt = torch.multinomial(probs, num_samples=1, generator=gen)
        if eos_id is not None:
            nxt = nxt.masked_fill(finished[:, None], eos_id)
            finished = finished | (nxt[:, 0] == eos_id)
        ids = torch.cat([ids, nxt], dim=1)
        if eos_id is not None and bool(finished.all()):
            break
    return ids
''',
    },
    # ---------------------------------------------------------------- beam_search
    {
        "name": "beam_length_penalty_counts_prompt",
        "cell": "beam_search",
        "clause": "|Y| in lp(|Y|) = ((5 + |Y|) / 6) ** alpha is the number of GENERATED tokens (EOS included, prompt excluded).",
        "class": "beam-bookkeeping",
        "source": r'''
def beam_search(table, idx, beam_size, max_new_tokens, eos_id=None, length_penalty=0.0):
    """Beam search with TableLM(table) for one prompt idx (1, T) -> (tokens (1, T + n), score).

    score = log P(generated tokens) / ((5 + n) / 6) ** length_penalty, as a Python float.
    """
    if max_new_tokens == 0:
        return idx, 0.0
    model = TableLM(table)
    beams = idx
    scores = torch.zeros(1, dtype=torch.float64, device=idx.device)
    finished = []
    for t in range(1, max_new_tokens + 1):
        logp = F.log_softmax(model(beams)[:, -1, :].double(), dim=-1)
        V = logp.shape[-1]
        total = (scores[:, None] + logp).flatten()
        top = total.topk(min(2 * beam_size, total.numel()))
        keep_rows, keep_scores = [], []
        for rank in range(top.values.numel()):
            s, j = float(top.values[rank]), int(top.indices[rank])
            seq = torch.cat([beams[j // V], idx.new_tensor([j % V])])
            if eos_id is not None and j % V == eos_id:
                if rank < beam_size:
                    finished.append((s / (((5 + seq.numel()) / 6) ** length_penalty), seq))
                continue
            keep_rows.append(seq)
            keep_scores.append(s)
            if len(keep_rows) == beam_size:
                break
        if not keep_rows:
            beams = None
            break
        beams = torch.stack(keep_rows)
        scores = torch.tensor(keep_scores, dtype=torch.float64, device=idx.device)
    if beams is not None:
        for s, seq in zip(scores.tolist(), beams):
            finished.append((s / (((5 + seq.numel()) / 6) ** length_penalty), seq))
    best_score, best_seq = finished[0]
    for s, seq in finished[1:]:
        if s > best_score:
            best_score, best_seq = s, seq
    return best_seq[None], float(best_score)
''',
    },
    {
        "name": "beam_eos_not_counted_in_length",
        "cell": "beam_search",
        "clause": "A finished hypothesis found at step t gets score cumulative log-prob / lp(t): |Y| counts the generated tokens INCLUDING the EOS.",
        "class": "beam-bookkeeping",
        "source": r'''
def beam_search(table, idx, beam_size, max_new_tokens, eos_id=None, length_penalty=0.0):
    """Beam search with TableLM(table) for one prompt idx (1, T) -> (tokens (1, T + n), score).

    score = log P(generated tokens) / ((5 + n) / 6) ** length_penalty, as a Python float.
    """
    if max_new_tokens == 0:
        return idx, 0.0
    model = TableLM(table)

    def lp(n):
        return ((5 + n) / 6) ** length_penalty

    beams = idx
    scores = torch.zeros(1, dtype=torch.float64, device=idx.device)
    hyps = []
    for t in range(1, max_new_tokens + 1):
        logp = F.log_softmax(model(beams)[:, -1, :].double(), dim=-1)
        V = logp.shape[-1]
        cand = (scores[:, None] + logp).flatten()
        top = torch.topk(cand, min(2 * beam_size, cand.numel()))
        new_beams, new_scores = [], []
        for rank, (s, j) in enumerate(zip(top.values.tolist(), top.indices.tolist())):
            b, tok = divmod(j, V)
            seq = torch.cat([beams[b], torch.tensor([tok], device=idx.device)])
            if eos_id is not None and tok == eos_id:
                if rank < beam_size:
                    hyps.append((s / lp(t - 1), seq))  # EOS is not a real word
                continue
            new_beams.append(seq)
            new_scores.append(s)
            if len(new_beams) == beam_size:
                break
        if not new_beams:
            beams = None
            break
        beams = torch.stack(new_beams)
        scores = torch.tensor(new_scores, dtype=torch.float64, device=idx.device)
    if beams is not None:
        for s, seq in zip(scores.tolist(), beams):
            hyps.append((s / lp(max_new_tokens), seq))
    best = hyps[0]
    for h in hyps[1:]:
        if h[0] > best[0]:
            best = h
    return best[1].unsqueeze(0), float(best[0])
''',
    },
    {
        "name": "beam_only_beam_size_candidates",
        "cell": "beam_search",
        "clause": "Look at the top 2 * beam_size candidates (all if fewer) so that EOS candidates do not shrink the next live beam set.",
        "class": "beam-bookkeeping",
        "source": r'''
def beam_search(table, idx, beam_size, max_new_tokens, eos_id=None, length_penalty=0.0):
    """Beam search with TableLM(table) for one prompt idx (1, T) -> (tokens (1, T + n), score).

    score = log P(generated tokens) / ((5 + n) / 6) ** length_penalty, as a Python float.
    """
    if max_new_tokens == 0:
        return idx, 0.0
    model = TableLM(table)

    def lp(n):
        return ((5 + n) / 6) ** length_penalty

    beams = idx
    scores = torch.zeros(1, dtype=torch.float64, device=idx.device)
    hyps = []
    for t in range(1, max_new_tokens + 1):
        logp = F.log_softmax(model(beams)[:, -1, :].double(), dim=-1)
        V = logp.shape[-1]
        cand = (scores[:, None] + logp).flatten()
        top = torch.topk(cand, min(beam_size, cand.numel()))
        new_beams, new_scores = [], []
        for s, j in zip(top.values.tolist(), top.indices.tolist()):
            b, tok = divmod(j, V)
            seq = torch.cat([beams[b], torch.tensor([tok], device=idx.device)])
            if eos_id is not None and tok == eos_id:
                hyps.append((s / lp(t), seq))
            else:
                new_beams.append(seq)
                new_scores.append(s)
        if not new_beams:
            beams = None
            break
        beams = torch.stack(new_beams)
        scores = torch.tensor(new_scores, dtype=torch.float64, device=idx.device)
    if beams is not None:
        for s, seq in zip(scores.tolist(), beams):
            hyps.append((s / lp(max_new_tokens), seq))
    best = hyps[0]
    for h in hyps[1:]:
        if h[0] > best[0]:
            best = h
    return best[1].unsqueeze(0), float(best[0])
''',
    },
    {
        "name": "beam_log_softmax_in_table_dtype",
        "cell": "beam_search",
        "clause": "Compute log-probabilities in float64: F.log_softmax(model(beams)[:, -1, :].double(), dim=-1).",
        "class": "dtype",
        "source": r'''
def beam_search(table, idx, beam_size, max_new_tokens, eos_id=None, length_penalty=0.0):
    """Beam search with TableLM(table) for one prompt idx (1, T) -> (tokens (1, T + n), score).

    score = log P(generated tokens) / ((5 + n) / 6) ** length_penalty, as a Python float.
    """
    if max_new_tokens == 0:
        return idx, 0.0
    model = TableLM(table)

    def lp(n):
        return ((5 + n) / 6) ** length_penalty

    beams = idx
    scores = torch.zeros(1, dtype=table.dtype, device=idx.device)
    hyps = []
    for t in range(1, max_new_tokens + 1):
        logp = F.log_softmax(model(beams)[:, -1, :], dim=-1)
        V = logp.shape[-1]
        cand = (scores[:, None] + logp).flatten()
        top = torch.topk(cand, min(2 * beam_size, cand.numel()))
        new_beams, new_scores = [], []
        for rank, (s, j) in enumerate(zip(top.values.tolist(), top.indices.tolist())):
            b, tok = divmod(j, V)
            seq = torch.cat([beams[b], torch.tensor([tok], device=idx.device)])
            if eos_id is not None and tok == eos_id:
                if rank < beam_size:
                    hyps.append((s / lp(t), seq))
                continue
            new_beams.append(seq)
            new_scores.append(s)
            if len(new_beams) == beam_size:
                break
        if not new_beams:
            beams = None
            break
        beams = torch.stack(new_beams)
        scores = torch.tensor(new_scores, dtype=table.dtype, device=idx.device)
    if beams is not None:
        for s, seq in zip(scores.tolist(), beams):
            hyps.append((s / lp(max_new_tokens), seq))
    best = hyps[0]
    for h in hyps[1:]:
        if h[0] > best[0]:
            best = h
    return best[1].unsqueeze(0), float(best[0])
''',
    },
    {
        "name": "beam_tie_prefers_later_hypothesis",
        "cell": "beam_search",
        "clause": "Return the best-scoring hypothesis; on equal scores the one found FIRST (finished hypotheses before the final live beams).",
        "class": "ties-ordering",
        "source": r'''
def beam_search(table, idx, beam_size, max_new_tokens, eos_id=None, length_penalty=0.0):
    """Beam search with TableLM(table) for one prompt idx (1, T) -> (tokens (1, T + n), score).

    score = log P(generated tokens) / ((5 + n) / 6) ** length_penalty, as a Python float.
    """
    if max_new_tokens == 0:
        return idx, 0.0
    model = TableLM(table)

    def lp(n):
        return ((5 + n) / 6) ** length_penalty

    beams = idx
    scores = torch.zeros(1, dtype=torch.float64, device=idx.device)
    hyps = []
    for t in range(1, max_new_tokens + 1):
        logp = F.log_softmax(model(beams)[:, -1, :].double(), dim=-1)
        V = logp.shape[-1]
        cand = (scores[:, None] + logp).flatten()
        top = torch.topk(cand, min(2 * beam_size, cand.numel()))
        new_beams, new_scores = [], []
        for rank, (s, j) in enumerate(zip(top.values.tolist(), top.indices.tolist())):
            b, tok = divmod(j, V)
            seq = torch.cat([beams[b], torch.tensor([tok], device=idx.device)])
            if eos_id is not None and tok == eos_id:
                if rank < beam_size:
                    hyps.append((s / lp(t), seq))
                continue
            new_beams.append(seq)
            new_scores.append(s)
            if len(new_beams) == beam_size:
                break
        if not new_beams:
            beams = None
            break
        beams = torch.stack(new_beams)
        scores = torch.tensor(new_scores, dtype=torch.float64, device=idx.device)
    if beams is not None:
        for s, seq in zip(scores.tolist(), beams):
            hyps.append((s / lp(max_new_tokens), seq))
    best_score, best_seq = float("-inf"), None
    for s, seq in hyps:
        if s >= best_score:
            best_score, best_seq = s, seq
    return best_seq.unsqueeze(0), float(best_score)
''',
    },
    {
        "name": "beam_zero_steps_returns_int_score",
        "cell": "beam_search",
        "clause": "score is a Python float; with max_new_tokens = 0 return (idx, 0.0).",
        "class": "edge-values",
        "source": r'''
def beam_search(table, idx, beam_size, max_new_tokens, eos_id=None, length_penalty=0.0):
    """Beam search with TableLM(table) for one prompt idx (1, T) -> (tokens (1, T + n), score).

    score = log P(generated tokens) / ((5 + n) / 6) ** length_penalty, as a Python float.
    """
    if max_new_tokens == 0:
        return idx, 0  # nothing generated, log P = 0
    model = TableLM(table)
    lp = lambda n: ((5 + n) / 6) ** length_penalty
    live = [(0.0, idx[0])]  # (cumulative log-prob, tokens)
    hyps = []
    for t in range(1, max_new_tokens + 1):
        batch = torch.stack([seq for _, seq in live])
        logp = F.log_softmax(model(batch)[:, -1, :].double(), dim=-1)
        V = logp.shape[-1]
        base = torch.tensor([s for s, _ in live], dtype=torch.float64, device=idx.device)
        cand = (base[:, None] + logp).flatten()
        top = torch.topk(cand, min(2 * beam_size, cand.numel()))
        nxt = []
        for rank, (s, j) in enumerate(zip(top.values.tolist(), top.indices.tolist())):
            seq = torch.cat([live[j // V][1], idx.new_tensor([j % V])])
            if eos_id is not None and j % V == eos_id:
                if rank < beam_size:
                    hyps.append((s / lp(t), seq))
                continue
            nxt.append((s, seq))
            if len(nxt) == beam_size:
                break
        live = nxt
        if not live:
            break
    for s, seq in live:
        hyps.append((s / lp(max_new_tokens), seq))
    best = hyps[0]
    for h in hyps[1:]:
        if h[0] > best[0]:
            best = h
    return best[1].unsqueeze(0), best[0]
''',
    },
    {
        "name": "beam_early_stop_ignores_length_penalty_growth",
        "cell": "beam_search",
        "clause": "You may stop early only when no live beam can still beat the best hypothesis; the result must be the same (with alpha > 0 a longer beam's score can still rise).",
        "class": "beam-bookkeeping",
        "source": r'''
def beam_search(table, idx, beam_size, max_new_tokens, eos_id=None, length_penalty=0.0):
    """Beam search with TableLM(table) for one prompt idx (1, T) -> (tokens (1, T + n), score).

    score = log P(generated tokens) / ((5 + n) / 6) ** length_penalty, as a Python float.
    """
    if max_new_tokens == 0:
        return idx, 0.0
    model = TableLM(table)

    def lp(n):
        return ((5 + n) / 6) ** length_penalty

    beams = idx
    scores = torch.zeros(1, dtype=torch.float64, device=idx.device)
    hyps = []
    for t in range(1, max_new_tokens + 1):
        logp = F.log_softmax(model(beams)[:, -1, :].double(), dim=-1)
        V = logp.shape[-1]
        cand = (scores[:, None] + logp).flatten()
        top = torch.topk(cand, min(2 * beam_size, cand.numel()))
        new_beams, new_scores = [], []
        for rank, (s, j) in enumerate(zip(top.values.tolist(), top.indices.tolist())):
            b, tok = divmod(j, V)
            seq = torch.cat([beams[b], torch.tensor([tok], device=idx.device)])
            if eos_id is not None and tok == eos_id:
                if rank < beam_size:
                    hyps.append((s / lp(t), seq))
                continue
            new_beams.append(seq)
            new_scores.append(s)
            if len(new_beams) == beam_size:
                break
        if not new_beams:
            beams = None
            break
        beams = torch.stack(new_beams)
        scores = torch.tensor(new_scores, dtype=torch.float64, device=idx.device)
        # log-probs only go down, so once the best live beam (scored now) is worse than
        # the best finished hypothesis nothing can improve any more
        if hyps and max(h[0] for h in hyps) >= float(scores.max()) / lp(t):
            beams = None
            break
    if beams is not None:
        for s, seq in zip(scores.tolist(), beams):
            hyps.append((s / lp(max_new_tokens), seq))
    best = hyps[0]
    for h in hyps[1:]:
        if h[0] > best[0]:
            best = h
    return best[1].unsqueeze(0), float(best[0])
''',
    },
]

CORRECT = [
    {
        "name": "greedy_python_row_lists",
        "cell": "greedy_decode",
        "why": "Tracks finished rows with a bool tensor built on idx.device via zeros_like, forces EOS with torch.where and stops exactly when all rows are done; same tokens as the batched reference.",
        "source": r'''
def greedy_decode(table, idx, max_new_tokens, eos_id=None):
    """Greedy decoding with TableLM(table). idx (B, T) long -> (B, T + n), n <= max_new_tokens.

    With eos_id, a row that has produced eos_id keeps receiving it; stops once every row has.
    """
    model = TableLM(table)
    out = idx
    step = 0
    done = torch.zeros_like(idx[:, 0], dtype=torch.bool)
    while step < max_new_tokens:
        logits = model(out)[:, -1, :]
        nxt = torch.max(logits, dim=-1).indices
        if eos_id is not None:
            eos = torch.full_like(nxt, eos_id)
            nxt = torch.where(done, eos, nxt)
            done = torch.logical_or(done, nxt.eq(eos_id))
        out = torch.cat((out, nxt.view(-1, 1)), dim=-1)
        step += 1
        if eos_id is not None and done.all().item():
            break
    return out
''',
    },
    {
        "name": "topk_kthvalue_threshold",
        "cell": "top_k_filter",
        "why": "Uses the k-th largest value found by sorting (torch.sort, descending) as a threshold, so boundary ties are kept; k is clamped to the last axis and the fill is -inf via torch.where on a new tensor.",
        "source": r'''
def top_k_filter(logits, k):
    """Keep the k largest logits per row (ties with the k-th kept), the rest -> -inf.

    logits (..., vocab_size) -> same shape, dtype and device.
    """
    V = logits.shape[-1]
    if k >= V:
        return logits.clone()
    desc = torch.sort(logits, dim=-1, descending=True).values
    kth = desc.narrow(-1, k - 1, 1)
    neg = torch.tensor(float("-inf"), dtype=logits.dtype, device=logits.device)
    return torch.where(logits >= kth, logits, neg)
''',
    },
    {
        "name": "topp_inverse_permutation_via_argsort",
        "cell": "top_p_filter",
        "why": "Same stable descending sort and exclusive cumulative mass (< p); maps the decision back with gather by the inverse permutation argsort(order) instead of scatter.",
        "source": r'''
def top_p_filter(logits, p):
    """Nucleus filter: keep the smallest set of most likely tokens with probability mass >= p.

    A token (sorted by probability, stable: lower id first on ties) is kept when the mass of the
    tokens before it is < p. logits (..., vocab_size) -> same shape, dtype and device;
    dropped -> -inf.
    """
    if p >= 1:
        return logits.clone()
    probs = torch.softmax(logits, dim=-1)
    sorted_probs, order = torch.sort(probs, dim=-1, descending=True, stable=True)
    cum = sorted_probs.cumsum(-1)
    mass_before = F.pad(cum, (1, 0))[..., :-1]
    keep_sorted = mass_before < p
    inverse = torch.argsort(order, dim=-1)
    keep = keep_sorted.gather(-1, inverse)
    return logits.masked_fill(keep.logical_not(), float("-inf"))
''',
    },
    {
        "name": "penalty_bool_scatter_mask",
        "cell": "apply_repetition_penalty",
        "why": "Builds a (B, V) 'seen' mask with zeros_like(...).scatter (on the logits' device), so duplicates count once, then applies the divide/multiply rule with torch.where; returns a new tensor of the same dtype.",
        "source": r'''
def apply_repetition_penalty(logits, prev_ids, penalty):
    """Hugging Face repetition penalty: for each id in prev_ids (B, L), a positive logit is
    divided by penalty and a negative one multiplied.
    logits (B, vocab_size) -> new (B, vocab_size)."""
    seen = torch.zeros_like(logits, dtype=torch.bool).scatter(
        1, prev_ids, torch.ones_like(prev_ids, dtype=torch.bool)
    )
    pos = logits / penalty
    neg = logits * penalty
    penalized = torch.where(logits > 0, pos, neg)
    return torch.where(seen, penalized, logits)
''',
    },
    {
        "name": "ngram_one_hot_any",
        "cell": "no_repeat_ngram_ban",
        "why": "Vectorised with one-hot of each n-gram's last token weighted by the prefix match, reduced with any over the n-gram axis; handles n = 1 (empty prefix matches everything) and L == n.",
        "source": r'''
def no_repeat_ngram_ban(logits, ids, n):
    """Set to -inf every token that would complete an n-gram already in ids (B, L).

    logits (B, vocab_size) -> new (B, vocab_size). n <= 0 or L < n: unchanged.
    """
    B, L = ids.shape
    if n <= 0 or L < n:
        return logits.clone()
    windows = ids.unfold(1, n, 1)  # (B, G, n)
    head, last = windows[..., : n - 1], windows[..., n - 1]
    prefix = ids[:, L - n + 1 :]
    match = torch.eq(head, prefix.unsqueeze(1)).all(dim=-1)  # (B, G)
    onehot = F.one_hot(last, logits.shape[-1]).bool() & match.unsqueeze(-1)
    banned = onehot.any(dim=1)
    return torch.where(banned, torch.full_like(logits, float("-inf")), logits)
''',
    },
    {
        "name": "generate_while_loop_keepdim",
        "cell": "generate",
        "why": "Same single generator, same processing order and one multinomial call over all rows per step; written as a while loop with a 'still running' mask instead of a finished mask.",
        "source": r'''
def generate(
    table,
    idx,
    max_new_tokens,
    seed,
    temperature=1.0,
    top_k=None,
    top_p=None,
    repetition_penalty=1.0,
    no_repeat_ngram_size=0,
    eos_id=None,
):
    """Seeded sampling with TableLM(table). idx (B, T) long -> (B, T + n), n <= max_new_tokens.

    Per step: repetition penalty, n-gram ban, temperature, top-k, top-p, softmax, then one
    torch.multinomial call on the generator make_generator(seed, idx.device).
    """
    model = TableLM(table)
    gen = make_generator(seed, idx.device)
    ids = idx
    running = torch.ones(idx.shape[0], 1, dtype=torch.bool, device=idx.device)
    produced = 0
    while produced < max_new_tokens:
        z = model(ids)[:, -1, :]
        z = apply_repetition_penalty(z, ids, repetition_penalty)
        z = no_repeat_ngram_ban(z, ids, no_repeat_ngram_size)
        if temperature == 0:
            choice = torch.argmax(z, dim=-1).unsqueeze(-1)
        else:
            z = z / temperature
            if top_k not in (None, 0):
                z = top_k_filter(z, top_k)
            if top_p is not None and top_p < 1:
                z = top_p_filter(z, top_p)
            choice = torch.multinomial(F.softmax(z, dim=-1), 1, generator=gen)
        if eos_id is not None:
            choice = torch.where(running, choice, torch.full_like(choice, eos_id))
            running = running & (choice != eos_id)
        ids = torch.cat((ids, choice), dim=1)
        produced += 1
        if eos_id is not None and not running.any().item():
            break
    return ids
''',
    },
    {
        "name": "beam_sort_all_candidates_python",
        "cell": "beam_search",
        "why": "Scores every candidate in float64, keeps Python lists of (score, tokens) instead of stacked tensors, takes the top 2*beam_size with topk, and keeps the same EOS rank rule, 2*beam_size window, GNMT penalty on generated length and first-found tie rule.",
        "source": r'''
def beam_search(table, idx, beam_size, max_new_tokens, eos_id=None, length_penalty=0.0):
    """Beam search with TableLM(table) for one prompt idx (1, T) -> (tokens (1, T + n), score).

    score = log P(generated tokens) / ((5 + n) / 6) ** length_penalty, as a Python float.
    """
    if max_new_tokens == 0:
        return idx, 0.0
    model = TableLM(table)
    gnmt = lambda n: math.pow((5.0 + n) / 6.0, length_penalty)
    live = [(0.0, idx[0])]
    done = []
    for t in range(1, max_new_tokens + 1):
        seqs = torch.stack([s for _, s in live])
        logp = torch.log_softmax(model(seqs)[:, -1, :].to(torch.float64), dim=-1)
        base = torch.tensor([c for c, _ in live], dtype=torch.float64, device=logp.device)
        flat = (base.unsqueeze(1) + logp).reshape(-1)
        limit = min(2 * beam_size, flat.numel())
        vals, order = torch.topk(flat, limit)
        V = logp.shape[1]
        nxt = []
        for rank in range(limit):
            j = int(order[rank])
            tok = j % V
            seq = torch.cat([live[j // V][1], idx.new_full((1,), tok)])
            if eos_id is not None and tok == eos_id:
                if rank < beam_size:
                    done.append((float(vals[rank]) / gnmt(t), seq))
            else:
                nxt.append((float(vals[rank]), seq))
                if len(nxt) == beam_size:
                    break
        live = nxt
        if not live:
            break
    done.extend((c / gnmt(max_new_tokens), s) for c, s in live)
    best_i = 0
    for i in range(1, len(done)):
        if done[i][0] > done[best_i][0]:
            best_i = i
    return done[best_i][1].unsqueeze(0), float(done[best_i][0])
''',
    },
]

if __name__ == "__main__":
    import ast

    for entry in MISTAKES + CORRECT:
        ast.parse(entry["source"])
    assert len({e["name"] for e in MISTAKES + CORRECT}) == len(MISTAKES + CORRECT)
    print(f"decoding: {len(MISTAKES)} mistakes, {len(CORRECT)} correct variants")
