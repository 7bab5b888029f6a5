"""Blind wrong solutions for decoding, written from the release notebook and the book only."""
ASSIGNMENT = "decoding"
MISTAKES = [
    # ------------------------------------------------------------------ greedy_decode
    {
        "name": "greedy_eos_zero_treated_as_none",
        "cell": "greedy_decode",
        "clause": "eos_id handling applies whenever eos_id is given; token id 0 is a valid eos_id",
        "class": "falsy-values",
        "source": r'''def greedy_decode(table, idx, max_new_tokens, eos_id=None):
    """Greedy decoding with TableLM(table). idx (B, T) long -> (B, T + n), n <= max_new_tokens.

    With eos_id, a row that has produced eos_id keeps receiving it; stops once every row has.
    """
    model = TableLM(table)
    ids = idx
    finished = torch.zeros(idx.shape[0], dtype=torch.bool, device=idx.device)
    for _ in range(max_new_tokens):
        next_id = model(ids)[:, -1, :].argmax(dim=-1)          # (B,)
        if eos_id:
            next_id = next_id.masked_fill(finished, eos_id)
            finished = finished | (next_id == eos_id)
        ids = torch.cat([ids, next_id.unsqueeze(1)], dim=1)
        if eos_id and bool(finished.all()):
            break
    return ids
''',
    },
    {
        "name": "greedy_finished_mask_on_default_device",
        "cell": "greedy_decode",
        "clause": "new tensors (the finished-row flags) must be created on idx.device",
        "class": "device",
        "source": r'''def greedy_decode(table, idx, max_new_tokens, eos_id=None):
    """Greedy decoding with TableLM(table). idx (B, T) long -> (B, T + n), n <= max_new_tokens.

    With eos_id, a row that has produced eos_id keeps receiving it; stops once every row has.
    """
    model = TableLM(table)
    ids = idx
    if eos_id is not None:
        done = torch.zeros(idx.shape[0], dtype=torch.bool)
        eos = torch.tensor(eos_id)
    for _ in range(max_new_tokens):
        next_id = model(ids)[:, -1, :].argmax(dim=-1)
        if eos_id is not None:
            next_id = torch.where(done, eos, next_id)
            done = done | (next_id == eos_id)
        ids = torch.cat([ids, next_id[:, None]], dim=1)
        if eos_id is not None and done.all():
            break
    return ids
''',
    },
    {
        "name": "greedy_feeds_only_last_token",
        "cell": "greedy_decode",
        "clause": "the model must see the whole sequence so far (model(idx)[:, -1, :]); a 3-D table depends on the last two tokens",
        "class": "logic",
        "source": r'''def greedy_decode(table, idx, max_new_tokens, eos_id=None):
    """Greedy decoding with TableLM(table). idx (B, T) long -> (B, T + n), n <= max_new_tokens.

    With eos_id, a row that has produced eos_id keeps receiving it; stops once every row has.
    """
    model = TableLM(table)
    ids = idx
    done = torch.zeros(idx.shape[0], dtype=torch.bool, device=idx.device)
    for _ in range(max_new_tokens):
        # only the newest token matters for the next-token logits, so feed just that one
        next_id = model(ids[:, -1:])[:, -1, :].argmax(dim=-1)
        if eos_id is not None:
            next_id = torch.where(done, torch.full_like(next_id, eos_id), next_id)
            done = done | (next_id == eos_id)
        ids = torch.cat([ids, next_id[:, None]], dim=1)
        if eos_id is not None and bool(done.all()):
            break
    return ids
''',
    },
    # ------------------------------------------------------------------ top_k_filter
    {
        "name": "top_k_scatter_exactly_k_drops_ties",
        "cell": "top_k_filter",
        "clause": "values equal to the k-th largest are all kept (ties may keep more than k)",
        "class": "ties-ordering",
        "source": r'''def top_k_filter(logits, k):
    """Keep the k largest logits per row (ties with the k-th kept), the rest -> -inf.

    logits (..., vocab_size) -> same shape, dtype and device.
    """
    k = min(k, logits.shape[-1])
    top = torch.topk(logits, k, dim=-1)
    out = torch.full_like(logits, float("-inf"))
    return out.scatter(-1, top.indices, top.values)
''',
    },
    {
        "name": "top_k_view_fails_on_noncontiguous",
        "cell": "top_k_filter",
        "clause": "logits (..., vocab_size) of any layout, including non-contiguous views",
        "class": "input-layout",
        "source": r'''def top_k_filter(logits, k):
    """Keep the k largest logits per row (ties with the k-th kept), the rest -> -inf.

    logits (..., vocab_size) -> same shape, dtype and device.
    """
    vocab_size = logits.shape[-1]
    flat = logits.view(-1, vocab_size)                      # (rows, vocab_size)
    k = min(k, vocab_size)
    kth = torch.topk(flat, k, dim=-1).values[:, -1:]        # (rows, 1)
    out = torch.where(flat >= kth, flat, torch.full_like(flat, float("-inf")))
    return out.view(logits.shape)
''',
    },
    {
        "name": "top_k_threshold_indexing_assumes_2d",
        "cell": "top_k_filter",
        "clause": "logits may have any number of leading axes (..., vocab_size), not only (B, V) or (V,)",
        "class": "batch-axis",
        "source": r'''def top_k_filter(logits, k):
    """Keep the k largest logits per row (ties with the k-th kept), the rest -> -inf.

    logits (..., vocab_size) -> same shape, dtype and device.
    """
    one_row = logits.dim() == 1
    x = logits.unsqueeze(0) if one_row else logits          # (B, vocab_size)
    k = min(k, x.shape[-1])
    kth = torch.topk(x, k, dim=-1).values[:, -1:]           # (B, 1): the k-th largest
    out = torch.where(x >= kth, x, torch.full_like(x, float("-inf")))
    return out[0] if one_row else out
''',
    },
    {
        "name": "top_k_large_k_returns_input_itself",
        "cell": "top_k_filter",
        "clause": "the output is a new tensor, also when k >= vocab_size (no aliasing of the input)",
        "class": "in-place",
        "source": r'''def top_k_filter(logits, k):
    """Keep the k largest logits per row (ties with the k-th kept), the rest -> -inf.

    logits (..., vocab_size) -> same shape, dtype and device.
    """
    if k >= logits.shape[-1]:
        return logits                                       # nothing to remove
    kth = torch.topk(logits, k, dim=-1).values[..., -1:]
    return logits.masked_fill(logits < kth, float("-inf"))
''',
    },
    {
        "name": "top_k_fill_tensor_default_dtype",
        "cell": "top_k_filter",
        "clause": "the output keeps the input dtype (float16 / bfloat16 must not become float32)",
        "class": "dtype",
        "source": r'''def top_k_filter(logits, k):
    """Keep the k largest logits per row (ties with the k-th kept), the rest -> -inf.

    logits (..., vocab_size) -> same shape, dtype and device.
    """
    k = min(k, logits.shape[-1])
    kth = torch.topk(logits, k, dim=-1).values[..., -1:]
    minus_inf = torch.full(logits.shape, float("-inf"), device=logits.device)
    return torch.where(logits >= kth, logits, minus_inf)
''',
    },
    # ------------------------------------------------------------------ top_p_filter
    {
        "name": "top_p_keeps_when_mass_before_equals_p",
        "cell": "top_p_filter",
        "clause": "a token is kept only when the mass before it is strictly < p (mass before == p drops it)",
        "class": "mass-boundary",
        "source": r'''def top_p_filter(logits, p):
    """Nucleus filter: keep the smallest set of most likely tokens with probability mass >= p.

    A token (sorted by probability, stable: lower id first on ties) is kept when the mass of the
    tokens before it is < p. logits (..., vocab_size) -> same shape, dtype and device;
    dropped -> -inf.
    """
    if p >= 1:
        return logits.clone()
    probs = torch.softmax(logits, dim=-1)
    sorted_probs, order = torch.sort(probs, dim=-1, descending=True, stable=True)
    mass_before = torch.cumsum(sorted_probs, dim=-1) - sorted_probs
    keep_sorted = mass_before <= p
    keep = torch.zeros_like(keep_sorted).scatter(-1, order, keep_sorted)
    return logits.masked_fill(~keep, float("-inf"))
''',
    },
    {
        "name": "top_p_unstable_sort_on_ties",
        "cell": "top_p_filter",
        "clause": "ties in probability are ordered by lower token id first (stable sort)",
        "class": "ties-ordering",
        "source": r'''def top_p_filter(logits, p):
    """Nucleus filter: keep the smallest set of most likely tokens with probability mass >= p.

    A token (sorted by probability, stable: lower id first on ties) is kept when the mass of the
    tokens before it is < p. logits (..., vocab_size) -> same shape, dtype and device;
    dropped -> -inf.
    """
    if p >= 1:
        return logits.clone()
    probs = torch.softmax(logits, dim=-1)
    order = torch.argsort(probs, dim=-1, descending=True)
    sorted_probs = torch.gather(probs, -1, order)
    mass_before = torch.cumsum(sorted_probs, dim=-1) - sorted_probs
    keep_sorted = mass_before < p
    keep = torch.zeros_like(keep_sorted).scatter(-1, order, keep_sorted)
    return torch.where(keep, logits, torch.full_like(logits, float("-inf")))
''',
    },
    {
        "name": "top_p_hardcoded_dim1",
        "cell": "top_p_filter",
        "clause": "logits (..., vocab_size): the vocabulary is the LAST axis, also for (vocab_size,) and 3-D inputs",
        "class": "batch-axis",
        "source": r'''def top_p_filter(logits, p):
    """Nucleus filter: keep the smallest set of most likely tokens with probability mass >= p.

    A token (sorted by probability, stable: lower id first on ties) is kept when the mass of the
    tokens before it is < p. logits (..., vocab_size) -> same shape, dtype and device;
    dropped -> -inf.
    """
    if p >= 1:
        return logits.clone()
    probs = torch.softmax(logits, dim=1)
    sorted_probs, order = torch.sort(probs, dim=1, descending=True, stable=True)
    mass_before = torch.cumsum(sorted_probs, dim=1) - sorted_probs
    keep_sorted = mass_before < p
    keep = torch.zeros_like(keep_sorted).scatter(1, order, keep_sorted)
    return torch.where(keep, logits, torch.full_like(logits, float("-inf")))
''',
    },
    {
        "name": "top_p_masked_fill_in_place",
        "cell": "top_p_filter",
        "clause": "return a new tensor; the input logits must not be changed in place",
        "class": "in-place",
        "source": r'''def top_p_filter(logits, p):
    """Nucleus filter: keep the smallest set of most likely tokens with probability mass >= p.

    A token (sorted by probability, stable: lower id first on ties) is kept when the mass of the
    tokens before it is < p. logits (..., vocab_size) -> same shape, dtype and device;
    dropped -> -inf.
    """
    if p >= 1:
        return logits.clone()
    probs = torch.softmax(logits, dim=-1)
    sorted_probs, order = torch.sort(probs, dim=-1, descending=True, stable=True)
    mass_before = torch.cumsum(sorted_probs, dim=-1) - sorted_probs
    drop_sorted = mass_before >= p
    drop = torch.zeros_like(drop_sorted).scatter(-1, order, drop_sorted)
    return logits.masked_fill_(drop, float("-inf"))
''',
    },
    {
        "name": "top_p_upcasts_to_float32",
        "cell": "top_p_filter",
        "clause": "the output has the same dtype as the input (float16 / bfloat16 / float64 stay so)",
        "class": "dtype",
        "source": r'''def top_p_filter(logits, p):
    """Nucleus filter: keep the smallest set of most likely tokens with probability mass >= p.

    A token (sorted by probability, stable: lower id first on ties) is kept when the mass of the
    tokens before it is < p. logits (..., vocab_size) -> same shape, dtype and device;
    dropped -> -inf.
    """
    logits = logits.float()                  # half precision cumsums are too coarse
    if p >= 1:
        return logits.clone()
    probs = torch.softmax(logits, dim=-1)
    sorted_probs, order = torch.sort(probs, dim=-1, descending=True, stable=True)
    mass_before = torch.cumsum(sorted_probs, dim=-1) - sorted_probs
    keep = torch.zeros_like(mass_before, dtype=torch.bool).scatter(-1, order, mass_before < p)
    return torch.where(keep, logits, torch.full_like(logits, float("-inf")))
''',
    },
    {
        "name": "top_p_no_shortcut_for_p_one",
        "cell": "top_p_filter",
        "clause": "p = 1 keeps every token (even ones whose preceding mass rounds to 1.0)",
        "class": "edge-values",
        "source": r'''def top_p_filter(logits, p):
    """Nucleus filter: keep the smallest set of most likely tokens with probability mass >= p.

    A token (sorted by probability, stable: lower id first on ties) is kept when the mass of the
    tokens before it is < p. logits (..., vocab_size) -> same shape, dtype and device;
    dropped -> -inf.
    """
    probs = torch.softmax(logits, dim=-1)
    sorted_probs, order = torch.sort(probs, dim=-1, descending=True, stable=True)
    mass_before = torch.cumsum(sorted_probs, dim=-1) - sorted_probs
    keep_sorted = mass_before < p
    keep = torch.zeros_like(keep_sorted).scatter(-1, order, keep_sorted)
    return torch.where(keep, logits, torch.full_like(logits, float("-inf")))
''',
    },
    {
        "name": "top_p_gather_instead_of_scatter",
        "cell": "top_p_filter",
        "clause": "the keep decision of sorted position j belongs to token order[j] (inverse permutation)",
        "class": "logic",
        "source": r'''def top_p_filter(logits, p):
    """Nucleus filter: keep the smallest set of most likely tokens with probability mass >= p.

    A token (sorted by probability, stable: lower id first on ties) is kept when the mass of the
    tokens before it is < p. logits (..., vocab_size) -> same shape, dtype and device;
    dropped -> -inf.
    """
    if p >= 1:
        return logits.clone()
    probs = torch.softmax(logits, dim=-1)
    sorted_probs, order = torch.sort(probs, dim=-1, descending=True, stable=True)
    mass_before = torch.cumsum(sorted_probs, dim=-1) - sorted_probs
    keep_sorted = mass_before < p
    keep = torch.gather(keep_sorted, -1, order)           # back to the token order
    return torch.where(keep, logits, torch.full_like(logits, float("-inf")))
''',
    },
    # ------------------------------------------------------------------ apply_repetition_penalty
    {
        "name": "penalty_skipped_when_below_one",
        "cell": "apply_repetition_penalty",
        "clause": "penalty < 1 uses the same formula (encourages repetition); it is not a no-op",
        "class": "edge-values",
        "source": r'''def apply_repetition_penalty(logits, prev_ids, penalty):
    """Hugging Face repetition penalty: for each id in prev_ids (B, L), a positive logit is
    divided by penalty and a negative one multiplied.
    logits (B, vocab_size) -> new (B, vocab_size)."""
    if penalty <= 1.0 or prev_ids.shape[1] == 0:
        return logits.clone()                # nothing to penalise
    seen = torch.gather(logits, 1, prev_ids)
    seen = torch.where(seen > 0, seen / penalty, seen * penalty)
    return logits.scatter(1, prev_ids, seen)
''',
    },
    {
        "name": "penalty_ctrl_divides_every_logit",
        "cell": "apply_repetition_penalty",
        "clause": "sign rule: positive logits are divided, logits <= 0 are multiplied by the penalty",
        "class": "logic",
        "source": r'''def apply_repetition_penalty(logits, prev_ids, penalty):
    """Hugging Face repetition penalty: for each id in prev_ids (B, L), a positive logit is
    divided by penalty and a negative one multiplied.
    logits (B, vocab_size) -> new (B, vocab_size)."""
    seen = torch.gather(logits, 1, prev_ids)
    return logits.scatter(1, prev_ids, seen / penalty)
''',
    },
    # ------------------------------------------------------------------ no_repeat_ngram_ban
    {
        "name": "ngram_bool_scatter_last_write_wins",
        "cell": "no_repeat_ngram_ban",
        "clause": "a token is banned if ANY earlier n-gram with the prefix ends in it (duplicates must not un-ban)",
        "class": "logic",
        "source": r'''def no_repeat_ngram_ban(logits, ids, n):
    """Set to -inf every token that would complete an n-gram already in ids (B, L).

    logits (B, vocab_size) -> new (B, vocab_size). n <= 0 or L < n: unchanged.
    """
    B, L = ids.shape
    if n <= 0 or L < n:
        return logits.clone()
    grams = ids.unfold(-1, n, 1)                                   # (B, L - n + 1, n)
    prefix = ids[:, L - n + 1:]                                    # (B, n - 1)
    match = (grams[..., :-1] == prefix[:, None, :]).all(dim=-1)    # (B, L - n + 1)
    banned = torch.zeros_like(logits, dtype=torch.bool).scatter(-1, grams[..., -1], match)
    return logits.masked_fill(banned, float("-inf"))
''',
    },
    {
        "name": "ngram_skips_ngram_ending_at_last_token",
        "cell": "no_repeat_ngram_ban",
        "clause": "the n-gram ending with the last token (i = L - n) is included",
        "class": "logic",
        "source": r'''def no_repeat_ngram_ban(logits, ids, n):
    """Set to -inf every token that would complete an n-gram already in ids (B, L).

    logits (B, vocab_size) -> new (B, vocab_size). n <= 0 or L < n: unchanged.
    """
    B, L = ids.shape
    if n <= 0 or L < n:
        return logits.clone()
    prefix = ids[:, L - n + 1:]                                    # (B, n - 1)
    # earlier n-grams: the window that ends at the last token is the current one, skip it
    grams = ids[:, :-1].unfold(-1, n, 1)                           # (B, L - n, n)
    match = (grams[..., :-1] == prefix[:, None, :]).all(dim=-1)
    hits = torch.zeros(logits.shape, dtype=torch.long, device=logits.device)
    hits = hits.scatter_add(-1, grams[..., -1], match.long())
    return logits.masked_fill(hits > 0, float("-inf"))
''',
    },
    {
        "name": "ngram_length_equal_n_treated_as_too_short",
        "cell": "no_repeat_ngram_ban",
        "clause": "only L < n leaves logits unchanged; L == n has one complete n-gram to check",
        "class": "edge-values",
        "source": r'''def no_repeat_ngram_ban(logits, ids, n):
    """Set to -inf every token that would complete an n-gram already in ids (B, L).

    logits (B, vocab_size) -> new (B, vocab_size). n <= 0 or L < n: unchanged.
    """
    B, L = ids.shape
    if n <= 0 or L <= n:
        return logits.clone()
    grams = ids.unfold(-1, n, 1)
    prefix = ids[:, L - n + 1:]
    match = (grams[..., :-1] == prefix[:, None, :]).all(dim=-1)
    hits = torch.zeros(logits.shape, dtype=torch.long, device=logits.device)
    hits = hits.scatter_add(-1, grams[..., -1], match.long())
    return logits.masked_fill(hits > 0, float("-inf"))
''',
    },
    {
        "name": "ngram_negative_zero_slice_for_n1",
        "cell": "no_repeat_ngram_ban",
        "clause": "n = 1: the prefix is empty, every token in ids is banned",
        "class": "integer-arithmetic",
        "source": r'''def no_repeat_ngram_ban(logits, ids, n):
    """Set to -inf every token that would complete an n-gram already in ids (B, L).

    logits (B, vocab_size) -> new (B, vocab_size). n <= 0 or L < n: unchanged.
    """
    B, L = ids.shape
    if n <= 0 or L < n:
        return logits.clone()
    grams = ids.unfold(-1, n, 1)
    prefix = ids[:, -(n - 1):]                                     # the last n - 1 tokens
    match = (grams[..., :-1] == prefix[:, None, :]).all(dim=-1)
    hits = torch.zeros(logits.shape, dtype=torch.long, device=logits.device)
    hits = hits.scatter_add(-1, grams[..., -1], match.long())
    return logits.masked_fill(hits > 0, float("-inf"))
''',
    },
    {
        "name": "ngram_in_place_on_logits",
        "cell": "no_repeat_ngram_ban",
        "clause": "return a new tensor; do not modify the input logits in place",
        "class": "in-place",
        "source": r'''def no_repeat_ngram_ban(logits, ids, n):
    """Set to -inf every token that would complete an n-gram already in ids (B, L).

    logits (B, vocab_size) -> new (B, vocab_size). n <= 0 or L < n: unchanged.
    """
    B, L = ids.shape
    if n <= 0 or L < n:
        return logits.clone()
    grams = ids.unfold(-1, n, 1)
    prefix = ids[:, L - n + 1:]
    match = (grams[..., :-1] == prefix[:, None, :]).all(dim=-1)
    hits = torch.zeros(logits.shape, dtype=torch.long, device=logits.device)
    hits = hits.scatter_add(-1, grams[..., -1], match.long())
    logits[hits > 0] = float("-inf")
    return logits
''',
    },
    {
        "name": "ngram_no_guard_for_nonpositive_n",
        "cell": "no_repeat_ngram_ban",
        "clause": "n <= 0 (the generate default 0) leaves logits unchanged",
        "class": "defaults",
        "source": r'''def no_repeat_ngram_ban(logits, ids, n):
    """Set to -inf every token that would complete an n-gram already in ids (B, L).

    logits (B, vocab_size) -> new (B, vocab_size). n <= 0 or L < n: unchanged.
    """
    B, L = ids.shape
    if L < n:
        return logits.clone()
    grams = ids.unfold(-1, n, 1)
    prefix = ids[:, L - n + 1:]
    match = (grams[..., :-1] == prefix[:, None, :]).all(dim=-1)
    hits = torch.zeros(logits.shape, dtype=torch.long, device=logits.device)
    hits = hits.scatter_add(-1, grams[..., -1], match.long())
    return logits.masked_fill(hits > 0, float("-inf"))
''',
    },
    # ------------------------------------------------------------------ generate
    {
        "name": "generate_top_p_before_temperature",
        "cell": "generate",
        "clause": "order per step: penalty, n-gram ban, temperature, top-k, top-p, softmax",
        "class": "logic",
        "source": r'''def generate(
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
    done = torch.zeros(idx.shape[0], dtype=torch.bool, device=idx.device)
    for _ in range(max_new_tokens):
        logits = model(ids)[:, -1, :]
        logits = apply_repetition_penalty(logits, ids, repetition_penalty)
        logits = no_repeat_ngram_ban(logits, ids, no_repeat_ngram_size)
        if temperature == 0:
            nxt = logits.argmax(dim=-1, keepdim=True)
        else:
            # filters first, then sharpen / flatten what is left
            if top_k is not None and top_k != 0:
                logits = top_k_filter(logits, top_k)
            if top_p is not None and top_p < 1:
                logits = top_p_filter(logits, top_p)
            logits = logits / temperature
            probs = torch.softmax(logits, dim=-1)
            nxt = torch.multinomial(probs, num_samples=1, generator=gen)
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
        "clause": "torch.multinomial is called once per step on the whole (B, vocab_size), finished rows included",
        "class": "randomness",
        "source": r'''def generate(
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
    done = torch.zeros(idx.shape[0], dtype=torch.bool, device=idx.device)
    for _ in range(max_new_tokens):
        logits = model(ids)[:, -1, :]
        logits = apply_repetition_penalty(logits, ids, repetition_penalty)
        logits = no_repeat_ngram_ban(logits, ids, no_repeat_ngram_size)
        if temperature == 0:
            nxt = logits.argmax(dim=-1, keepdim=True)
        else:
            logits = logits / temperature
            if top_k is not None and top_k != 0:
                logits = top_k_filter(logits, top_k)
            if top_p is not None and top_p < 1:
                logits = top_p_filter(logits, top_p)
            probs = torch.softmax(logits, dim=-1)
            nxt = torch.full((ids.shape[0], 1), eos_id if eos_id is not None else 0,
                             dtype=ids.dtype, device=ids.device)
            active = ~done
            # finished rows only get eos_id, so there is no need to sample them
            nxt[active] = torch.multinomial(probs[active], num_samples=1, generator=gen)
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
        "name": "generate_top_k_zero_not_disabled",
        "cell": "generate",
        "clause": "top_k = 0 (like None) means no top-k filtering",
        "class": "defaults",
        "source": r'''def generate(
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
    done = torch.zeros(idx.shape[0], dtype=torch.bool, device=idx.device)
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
            nxt = torch.where(done[:, None], torch.full_like(nxt, eos_id), nxt)
            done = done | (nxt[:, 0] == eos_id)
        ids = torch.cat([ids, nxt], dim=1)
        if eos_id is not None and bool(done.all()):
            break
    return ids
''',
    },
    {
        "name": "generate_eos_zero_treated_as_none",
        "cell": "generate",
        "clause": "EOS handling applies whenever eos_id is not None; eos_id = 0 is valid",
        "class": "falsy-values",
        "source": r'''def generate(
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
    done = torch.zeros(idx.shape[0], dtype=torch.bool, device=idx.device)
    for _ in range(max_new_tokens):
        logits = model(ids)[:, -1, :]
        logits = apply_repetition_penalty(logits, ids, repetition_penalty)
        logits = no_repeat_ngram_ban(logits, ids, no_repeat_ngram_size)
        if temperature == 0:
            nxt = logits.argmax(dim=-1, keepdim=True)
        else:
            logits = logits / temperature
            if top_k:
                logits = top_k_filter(logits, top_k)
            if top_p is not None and top_p < 1:
                logits = top_p_filter(logits, top_p)
            probs = torch.softmax(logits, dim=-1)
            nxt = torch.multinomial(probs, num_samples=1, generator=gen)
        if eos_id:
            nxt = torch.where(done[:, None], torch.full_like(nxt, eos_id), nxt)
            done = done | (nxt[:, 0] == eos_id)
            if bool(done.all()):
                ids = torch.cat([ids, nxt], dim=1)
                break
        ids = torch.cat([ids, nxt], dim=1)
    return ids
''',
    },
    {
        "name": "generate_generator_always_on_cpu",
        "cell": "generate",
        "clause": "the generator is make_generator(seed, idx.device) (a CUDA generator for CUDA inputs)",
        "class": "device",
        "source": r'''def generate(
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
    gen = torch.Generator().manual_seed(seed)
    ids = idx
    done = torch.zeros(idx.shape[0], dtype=torch.bool, device=idx.device)
    for _ in range(max_new_tokens):
        logits = model(ids)[:, -1, :]
        logits = apply_repetition_penalty(logits, ids, repetition_penalty)
        logits = no_repeat_ngram_ban(logits, ids, no_repeat_ngram_size)
        if temperature == 0:
            nxt = logits.argmax(dim=-1, keepdim=True)
        else:
            logits = logits / temperature
            if top_k is not None and top_k != 0:
                logits = top_k_filter(logits, top_k)
            if top_p is not None and top_p < 1:
                logits = top_p_filter(logits, top_p)
            probs = torch.softmax(logits, dim=-1)
            nxt = torch.multinomial(probs, num_samples=1, generator=gen)
        if eos_id is not None:
            nxt = torch.where(done[:, None], torch.full_like(nxt, eos_id), nxt)
            done = done | (nxt[:, 0] == eos_id)
        ids = torch.cat([ids, nxt], dim=1)
        if eos_id is not None and bool(done.all()):
            break
    return ids
''',
    },
    {
        "name": "generate_greedy_branch_skips_penalty_and_ban",
        "cell": "generate",
        "clause": "temperature == 0 takes the argmax AFTER the repetition penalty and the n-gram ban",
        "class": "logic",
        "source": r'''def generate(
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
    if temperature == 0:
        return greedy_decode(table, idx, max_new_tokens, eos_id=eos_id)
    model = TableLM(table)
    gen = make_generator(seed, idx.device)
    ids = idx
    done = torch.zeros(idx.shape[0], dtype=torch.bool, device=idx.device)
    for _ in range(max_new_tokens):
        logits = model(ids)[:, -1, :]
        logits = apply_repetition_penalty(logits, ids, repetition_penalty)
        logits = no_repeat_ngram_ban(logits, ids, no_repeat_ngram_size)
        logits = logits / temperature
        if top_k is not None and top_k != 0:
            logits = top_k_filter(logits, top_k)
        if top_p is not None and top_p < 1:
            logits = top_p_filter(logits, top_p)
        probs = torch.softmax(logits, dim=-1)
        nxt = torch.multinomial(probs, num_samples=1, generator=gen)
        if eos_id is not None:
            nxt = torch.where(done[:, None], torch.full_like(nxt, eos_id), nxt)
            done = done | (nxt[:, 0] == eos_id)
        ids = torch.cat([ids, nxt], dim=1)
        if eos_id is not None and bool(done.all()):
            break
    return ids
''',
    },
    {
        "name": "generate_penalty_ignores_prompt_tokens",
        "cell": "generate",
        "clause": "the penalty and the n-gram ban see all tokens so far, prompt included",
        "class": "logic",
        "source": r'''def generate(
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
    done = torch.zeros(idx.shape[0], dtype=torch.bool, device=idx.device)
    for _ in range(max_new_tokens):
        logits = model(ids)[:, -1, :]
        generated = ids[:, T:]                      # only what the model itself produced
        logits = apply_repetition_penalty(logits, generated, repetition_penalty)
        logits = no_repeat_ngram_ban(logits, generated, no_repeat_ngram_size)
        if temperature == 0:
            nxt = logits.argmax(dim=-1, keepdim=True)
        else:
            logits = logits / temperature
            if top_k is not None and top_k != 0:
                logits = top_k_filter(logits, top_k)
            if top_p is not None and top_p < 1:
                logits = top_p_filter(logits, top_p)
            probs = torch.softmax(logits, dim=-1)
            nxt = torch.multinomial(probs, num_samples=1, generator=gen)
        if eos_id is not None:
            nxt = torch.where(done[:, None], torch.full_like(nxt, eos_id), nxt)
            done = done | (nxt[:, 0] == eos_id)
        ids = torch.cat([ids, nxt], dim=1)
        if eos_id is not None and bool(done.all()):
            break
    return ids
''',
    },
    {
        "name": "generate_finished_rows_keep_sampling",
        "cell": "generate",
        "clause": "a row that produced eos_id keeps receiving eos_id (its samples are overwritten)",
        "class": "logic",
        "source": r'''def generate(
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
    seen_eos = torch.zeros(idx.shape[0], dtype=torch.bool, device=idx.device)
    for _ in range(max_new_tokens):
        logits = model(ids)[:, -1, :]
        logits = apply_repetition_penalty(logits, ids, repetition_penalty)
        logits = no_repeat_ngram_ban(logits, ids, no_repeat_ngram_size)
        if temperature == 0:
            nxt = logits.argmax(dim=-1, keepdim=True)
        else:
            logits = logits / temperature
            if top_k is not None and top_k != 0:
                logits = top_k_filter(logits, top_k)
            if top_p is not None and top_p < 1:
                logits = top_p_filter(logits, top_p)
            probs = torch.softmax(logits, dim=-1)
            nxt = torch.multinomial(probs, num_samples=1, generator=gen)
        ids = torch.cat([ids, nxt], dim=1)
        if eos_id is not None:
            seen_eos = seen_eos | (nxt[:, 0] == eos_id)
            if bool(seen_eos.all()):
                break
    return ids
''',
    },
    # ------------------------------------------------------------------ beam_search
    {
        "name": "beam_finished_hypotheses_stay_in_beam",
        "cell": "beam_search",
        "clause": "a finished (EOS) hypothesis leaves the live beam; live beams are refilled from non-EOS candidates",
        "class": "beam-bookkeeping",
        "source": r'''def beam_search(table, idx, beam_size, max_new_tokens, eos_id=None, length_penalty=0.0):
    """Beam search with TableLM(table) for one prompt idx (1, T) -> (tokens (1, T + n), score).

    score = log P(generated tokens) / ((5 + n) / 6) ** length_penalty, as a Python float.
    """
    if max_new_tokens == 0:
        return idx, 0.0
    model = TableLM(table)
    T = idx.shape[1]
    beams = idx                                                  # (n, T + t)
    scores = torch.zeros(1, dtype=torch.float64, device=idx.device)
    lengths = torch.zeros(1, dtype=torch.long, device=idx.device)
    for _ in range(max_new_tokens):
        logp = F.log_softmax(model(beams)[:, -1, :].double(), dim=-1)
        vocab_size = logp.shape[-1]
        if eos_id is not None:
            done = (beams[:, T:] == eos_id).any(dim=1)           # this beam already ended
            only_eos = torch.full_like(logp, float("-inf"))
            only_eos[:, eos_id] = 0.0
            logp = torch.where(done[:, None], only_eos, logp)
            lengths = lengths + (~done).long()
        else:
            lengths = lengths + 1
        top = (scores[:, None] + logp).flatten().topk(min(beam_size, logp.numel()))
        parent, token = top.indices // vocab_size, top.indices % vocab_size
        beams = torch.cat([beams[parent], token[:, None]], dim=1)
        scores, lengths = top.values, lengths[parent]
    final = scores / ((5 + lengths.double()) / 6) ** length_penalty
    best = int(final.argmax())
    n = int(lengths[best])
    return beams[best : best + 1, : T + n], float(final[best])
''',
    },
    {
        "name": "beam_only_beam_size_candidates",
        "cell": "beam_search",
        "clause": "each step looks at the top 2 * beam_size candidates, not only beam_size",
        "class": "beam-bookkeeping",
        "source": r'''def beam_search(table, idx, beam_size, max_new_tokens, eos_id=None, length_penalty=0.0):
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
    finished = []
    alive = True
    for t in range(1, max_new_tokens + 1):
        logp = F.log_softmax(model(beams)[:, -1, :].double(), dim=-1)
        vocab_size = logp.shape[-1]
        total = (scores[:, None] + logp).flatten()
        top = torch.topk(total, min(beam_size, total.numel()))
        keep_rows, keep_scores = [], []
        for rank, (value, flat) in enumerate(zip(top.values, top.indices.tolist())):
            parent, token = divmod(flat, vocab_size)
            row = torch.cat([beams[parent], beams.new_tensor([token])])
            if eos_id is not None and token == eos_id:
                if rank < beam_size:
                    finished.append((value.item() / lp(t), row))
            else:
                keep_rows.append(row)
                keep_scores.append(value)
                if len(keep_rows) == beam_size:
                    break
        if not keep_rows:
            alive = False
            break
        beams, scores = torch.stack(keep_rows), torch.stack(keep_scores)
    if alive:
        for value, row in zip(scores.tolist(), beams):
            finished.append((value / lp(max_new_tokens), row))
    best_score, best_row = finished[0]
    for s, row in finished[1:]:
        if s > best_score:
            best_score, best_row = s, row
    return best_row.unsqueeze(0), float(best_score)
''',
    },
    {
        "name": "beam_log_softmax_in_table_dtype",
        "cell": "beam_search",
        "clause": "log-probabilities are computed in float64 (log_softmax(... .double())), whatever the table dtype",
        "class": "dtype",
        "source": r'''def beam_search(table, idx, beam_size, max_new_tokens, eos_id=None, length_penalty=0.0):
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
    finished = []
    alive = True
    for t in range(1, max_new_tokens + 1):
        logp = F.log_softmax(model(beams)[:, -1, :], dim=-1).double()
        vocab_size = logp.shape[-1]
        total = (scores[:, None] + logp).flatten()
        top = torch.topk(total, min(2 * beam_size, total.numel()))
        keep_rows, keep_scores = [], []
        for rank, (value, flat) in enumerate(zip(top.values, top.indices.tolist())):
            parent, token = divmod(flat, vocab_size)
            row = torch.cat([beams[parent], beams.new_tensor([token])])
            if eos_id is not None and token == eos_id:
                if rank < beam_size:
                    finished.append((value.item() / lp(t), row))
            else:
                keep_rows.append(row)
                keep_scores.append(value)
                if len(keep_rows) == beam_size:
                    break
        if not keep_rows:
            alive = False
            break
        beams, scores = torch.stack(keep_rows), torch.stack(keep_scores)
    if alive:
        for value, row in zip(scores.tolist(), beams):
            finished.append((value / lp(max_new_tokens), row))
    best_score, best_row = finished[0]
    for s, row in finished[1:]:
        if s > best_score:
            best_score, best_row = s, row
    return best_row.unsqueeze(0), float(best_score)
''',
    },
    {
        "name": "beam_ties_go_to_later_hypothesis",
        "cell": "beam_search",
        "clause": "on equal scores the hypothesis found first wins (finished before final live beams)",
        "class": "ties-ordering",
        "source": r'''def beam_search(table, idx, beam_size, max_new_tokens, eos_id=None, length_penalty=0.0):
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
    finished = []
    alive = True
    for t in range(1, max_new_tokens + 1):
        logp = F.log_softmax(model(beams)[:, -1, :].double(), dim=-1)
        vocab_size = logp.shape[-1]
        total = (scores[:, None] + logp).flatten()
        top = torch.sort(total, descending=True, stable=True)
        keep_rows, keep_scores = [], []
        for rank in range(min(2 * beam_size, total.numel())):
            value, flat = top.values[rank], int(top.indices[rank])
            parent, token = divmod(flat, vocab_size)
            row = torch.cat([beams[parent], beams.new_tensor([token])])
            if eos_id is not None and token == eos_id:
                if rank < beam_size:
                    finished.append((value.item() / lp(t), row))
            else:
                keep_rows.append(row)
                keep_scores.append(value)
                if len(keep_rows) == beam_size:
                    break
        if not keep_rows:
            alive = False
            break
        beams, scores = torch.stack(keep_rows), torch.stack(keep_scores)
    if alive:
        for value, row in zip(scores.tolist(), beams):
            finished.append((value / lp(max_new_tokens), row))
    best_score, best_row = finished[0]
    for s, row in finished[1:]:
        if s >= best_score:                   # keep the best one seen so far
            best_score, best_row = s, row
    return best_row.unsqueeze(0), float(best_score)
''',
    },
    {
        "name": "beam_stops_once_beam_size_finished",
        "cell": "beam_search",
        "clause": "search continues until max_new_tokens or no live beam (an early stop must not change the result)",
        "class": "beam-bookkeeping",
        "source": r'''def beam_search(table, idx, beam_size, max_new_tokens, eos_id=None, length_penalty=0.0):
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
    finished = []
    alive = True
    for t in range(1, max_new_tokens + 1):
        logp = F.log_softmax(model(beams)[:, -1, :].double(), dim=-1)
        vocab_size = logp.shape[-1]
        total = (scores[:, None] + logp).flatten()
        top = torch.topk(total, min(2 * beam_size, total.numel()))
        keep_rows, keep_scores = [], []
        for rank, (value, flat) in enumerate(zip(top.values, top.indices.tolist())):
            parent, token = divmod(flat, vocab_size)
            row = torch.cat([beams[parent], beams.new_tensor([token])])
            if eos_id is not None and token == eos_id:
                if rank < beam_size:
                    finished.append((value.item() / lp(t), row))
            else:
                keep_rows.append(row)
                keep_scores.append(value)
                if len(keep_rows) == beam_size:
                    break
        if not keep_rows:
            alive = False
            break
        beams, scores = torch.stack(keep_rows), torch.stack(keep_scores)
        if len(finished) >= beam_size:        # enough finished hypotheses: done
            alive = False
            break
    if alive:
        for value, row in zip(scores.tolist(), beams):
            finished.append((value / lp(max_new_tokens), row))
    best_score, best_row = finished[0]
    for s, row in finished[1:]:
        if s > best_score:
            best_score, best_row = s, row
    return best_row.unsqueeze(0), float(best_score)
''',
    },
    {
        "name": "beam_per_beam_topk_prefilter",
        "cell": "beam_search",
        "clause": "the top 2 * beam_size candidates are ranked over ALL beam x vocab extensions",
        "class": "beam-bookkeeping",
        "source": r'''def beam_search(table, idx, beam_size, max_new_tokens, eos_id=None, length_penalty=0.0):
    """Beam search with TableLM(table) for one prompt idx (1, T) -> (tokens (1, T + n), score).

    score = log P(generated tokens) / ((5 + n) / 6) ** length_penalty, as a Python float.
    """
    if max_new_tokens == 0:
        return idx, 0.0
    model = TableLM(table)

    def lp(n):
        return ((5 + n) / 6) ** length_penalty

    beams = [(idx[0], 0.0)]                               # live: (tokens, summed log P)
    hyps = []
    for t in range(1, max_new_tokens + 1):
        rows = torch.stack([b[0] for b in beams])
        logp = F.log_softmax(model(rows)[:, -1, :].double(), dim=-1)
        candidates = []
        for i, (tokens, score) in enumerate(beams):
            # each beam proposes its own best beam_size continuations
            best = torch.topk(logp[i], min(beam_size, logp.shape[-1]))
            for lp_tok, tok in zip(best.values.tolist(), best.indices.tolist()):
                candidates.append((score + lp_tok, i, tok))
        candidates.sort(key=lambda c: -c[0])
        new_beams = []
        for rank, (score, i, tok) in enumerate(candidates[: 2 * beam_size]):
            tokens = torch.cat([beams[i][0], idx.new_tensor([tok])])
            if eos_id is not None and tok == eos_id:
                if rank < beam_size:
                    hyps.append((score / lp(t), tokens))
            else:
                new_beams.append((tokens, score))
                if len(new_beams) == beam_size:
                    break
        beams = new_beams
        if not beams:
            break
    for tokens, score in beams:
        hyps.append((score / lp(max_new_tokens), tokens))
    best_score, best_tokens = hyps[0]
    for s, tokens in hyps[1:]:
        if s > best_score:
            best_score, best_tokens = s, tokens
    return best_tokens.unsqueeze(0), float(best_score)
''',
    },
    {
        "name": "beam_length_counts_prompt",
        "cell": "beam_search",
        "clause": "|Y| in the GNMT length penalty counts generated tokens only (prompt excluded)",
        "class": "beam-bookkeeping",
        "source": r'''def beam_search(table, idx, beam_size, max_new_tokens, eos_id=None, length_penalty=0.0):
    """Beam search with TableLM(table) for one prompt idx (1, T) -> (tokens (1, T + n), score).

    score = log P(generated tokens) / ((5 + n) / 6) ** length_penalty, as a Python float.
    """
    if max_new_tokens == 0:
        return idx, 0.0
    model = TableLM(table)

    def lp(tokens):
        return ((5 + tokens.shape[-1]) / 6) ** length_penalty    # length of the hypothesis

    beams = idx
    scores = torch.zeros(1, dtype=torch.float64, device=idx.device)
    finished = []
    alive = True
    for t in range(1, max_new_tokens + 1):
        logp = F.log_softmax(model(beams)[:, -1, :].double(), dim=-1)
        vocab_size = logp.shape[-1]
        total = (scores[:, None] + logp).flatten()
        top = torch.topk(total, min(2 * beam_size, total.numel()))
        keep_rows, keep_scores = [], []
        for rank, (value, flat) in enumerate(zip(top.values, top.indices.tolist())):
            parent, token = divmod(flat, vocab_size)
            row = torch.cat([beams[parent], beams.new_tensor([token])])
            if eos_id is not None and token == eos_id:
                if rank < beam_size:
                    finished.append((value.item() / lp(row), row))
            else:
                keep_rows.append(row)
                keep_scores.append(value)
                if len(keep_rows) == beam_size:
                    break
        if not keep_rows:
            alive = False
            break
        beams, scores = torch.stack(keep_rows), torch.stack(keep_scores)
    if alive:
        for value, row in zip(scores.tolist(), beams):
            finished.append((value / lp(row), row))
    best_score, best_row = finished[0]
    for s, row in finished[1:]:
        if s > best_score:
            best_score, best_row = s, row
    return best_row.unsqueeze(0), float(best_score)
''',
    },
    {
        "name": "beam_tokens_built_on_cpu",
        "cell": "beam_search",
        "clause": "the returned tokens tensor lives on idx.device",
        "class": "device",
        "source": r'''def beam_search(table, idx, beam_size, max_new_tokens, eos_id=None, length_penalty=0.0):
    """Beam search with TableLM(table) for one prompt idx (1, T) -> (tokens (1, T + n), score).

    score = log P(generated tokens) / ((5 + n) / 6) ** length_penalty, as a Python float.
    """
    if max_new_tokens == 0:
        return idx, 0.0
    model = TableLM(table)

    def lp(n):
        return ((5 + n) / 6) ** length_penalty

    live = [(idx[0].tolist(), 0.0)]                       # (token list, summed log P)
    hyps = []
    for t in range(1, max_new_tokens + 1):
        rows = torch.tensor([tokens for tokens, _ in live], device=idx.device)
        logp = F.log_softmax(model(rows)[:, -1, :].double(), dim=-1)
        vocab_size = logp.shape[-1]
        prev = torch.tensor([s for _, s in live], dtype=torch.float64, device=idx.device)
        total = (prev[:, None] + logp).flatten()
        top = torch.topk(total, min(2 * beam_size, total.numel()))
        new_live = []
        for rank, (value, flat) in enumerate(zip(top.values.tolist(), top.indices.tolist())):
            parent, token = divmod(flat, vocab_size)
            tokens = live[parent][0] + [token]
            if eos_id is not None and token == eos_id:
                if rank < beam_size:
                    hyps.append((value / lp(t), tokens))
            else:
                new_live.append((tokens, value))
                if len(new_live) == beam_size:
                    break
        live = new_live
        if not live:
            break
    for tokens, value in live:
        hyps.append((value / lp(max_new_tokens), tokens))
    best_score, best_tokens = hyps[0]
    for s, tokens in hyps[1:]:
        if s > best_score:
            best_score, best_tokens = s, tokens
    return torch.tensor([best_tokens]), float(best_score)
''',
    },
]

CORRECT = [
    {
        "name": "greedy_preallocated_output",
        "cell": "greedy_decode",
        "source": r'''def greedy_decode(table, idx, max_new_tokens, eos_id=None):
    """Greedy decoding with TableLM(table). idx (B, T) long -> (B, T + n), n <= max_new_tokens.

    With eos_id, a row that has produced eos_id keeps receiving it; stops once every row has.
    """
    model = TableLM(table)
    B, T = idx.shape
    out = torch.empty(B, T + max_new_tokens, dtype=idx.dtype, device=idx.device)
    out[:, :T] = idx
    length = T
    finished = torch.zeros(B, dtype=torch.bool, device=idx.device)
    for step in range(max_new_tokens):
        logits = model(out[:, :length])[:, -1, :]
        nxt = torch.max(logits, dim=-1).indices
        if eos_id is not None:
            nxt = nxt.masked_fill(finished, eos_id)
            finished = torch.logical_or(finished, nxt == eos_id)
        out[:, length] = nxt
        length += 1
        if eos_id is not None and bool(finished.all()):
            break
    return out[:, :length]
''',
    },
    {
        "name": "top_k_via_sort_threshold",
        "cell": "top_k_filter",
        "source": r'''def top_k_filter(logits, k):
    """Keep the k largest logits per row (ties with the k-th kept), the rest -> -inf.

    logits (..., vocab_size) -> same shape, dtype and device.
    """
    vocab_size = logits.shape[-1]
    if k >= vocab_size:
        return logits.clone()
    sorted_logits = torch.sort(logits, dim=-1, descending=True).values
    threshold = sorted_logits[..., k - 1 : k]          # (..., 1): the k-th largest value
    return logits.masked_fill(logits < threshold, float("-inf"))
''',
    },
    {
        "name": "top_p_rows_reshaped_with_masked_fill",
        "cell": "top_p_filter",
        "source": r'''def top_p_filter(logits, p):
    """Nucleus filter: keep the smallest set of most likely tokens with probability mass >= p.

    A token (sorted by probability, stable: lower id first on ties) is kept when the mass of the
    tokens before it is < p. logits (..., vocab_size) -> same shape, dtype and device;
    dropped -> -inf.
    """
    shape = logits.shape
    rows = logits.reshape(-1, shape[-1])                           # (N, vocab_size), copies if needed
    if p >= 1:
        return logits.clone()
    probs = torch.softmax(rows, dim=-1)
    sorted_probs, order = torch.sort(probs, dim=-1, descending=True, stable=True)
    before = torch.cumsum(sorted_probs, dim=-1) - sorted_probs     # mass of the tokens in front
    drop_sorted = before >= p
    drop = torch.empty_like(drop_sorted).scatter_(-1, order, drop_sorted)   # own new tensor
    return rows.masked_fill(drop, float("-inf")).reshape(shape)
''',
    },
    {
        "name": "penalty_bool_mask_where",
        "cell": "apply_repetition_penalty",
        "source": r'''def apply_repetition_penalty(logits, prev_ids, penalty):
    """Hugging Face repetition penalty: for each id in prev_ids (B, L), a positive logit is
    divided by penalty and a negative one multiplied.
    logits (B, vocab_size) -> new (B, vocab_size)."""
    seen = torch.zeros(logits.shape, dtype=torch.bool, device=logits.device)
    seen = seen.scatter(1, prev_ids, torch.ones(prev_ids.shape, dtype=torch.bool, device=logits.device))
    penalised = torch.where(logits > 0, logits / penalty, logits * penalty)
    return torch.where(seen, penalised, logits)
''',
    },
    {
        "name": "ngram_shifted_slices_scatter_reduce",
        "cell": "no_repeat_ngram_ban",
        "source": r'''def no_repeat_ngram_ban(logits, ids, n):
    """Set to -inf every token that would complete an n-gram already in ids (B, L).

    logits (B, vocab_size) -> new (B, vocab_size). n <= 0 or L < n: unchanged.
    """
    B, L = ids.shape
    if n <= 0 or L < n:
        return logits.clone()
    G = L - n + 1                                           # number of complete n-grams
    match = torch.ones(B, G, dtype=torch.bool, device=ids.device)
    for j in range(n - 1):                                  # compare position j of every n-gram
        match = match & (ids[:, j : j + G] == ids[:, L - n + 1 + j][:, None])
    last = ids[:, n - 1 : n - 1 + G]                        # the token that completes each n-gram
    banned = torch.zeros(logits.shape, dtype=torch.int8, device=logits.device)
    banned = banned.scatter_reduce(-1, last, match.to(torch.int8), reduce="amax")
    return torch.where(banned.bool(), torch.full_like(logits, float("-inf")), logits)
''',
    },
    {
        "name": "generate_with_helper_step",
        "cell": "generate",
        "source": r'''def generate(
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
    use_top_k = top_k not in (None, 0)
    use_top_p = top_p is not None and top_p < 1

    def next_tokens(ids):
        z = model(ids)[:, -1, :]
        z = apply_repetition_penalty(z, ids, repetition_penalty)
        z = no_repeat_ngram_ban(z, ids, no_repeat_ngram_size)
        if temperature == 0:
            return torch.argmax(z, dim=-1, keepdim=True)
        z = z / temperature
        if use_top_k:
            z = top_k_filter(z, top_k)
        if use_top_p:
            z = top_p_filter(z, top_p)
        return torch.multinomial(torch.softmax(z, dim=-1), num_samples=1, generator=gen)

    ids = idx
    alive = torch.ones(idx.shape[0], 1, dtype=torch.bool, device=idx.device)
    for _ in range(max_new_tokens):
        nxt = next_tokens(ids)
        if eos_id is not None:
            nxt = torch.where(alive, nxt, torch.full_like(nxt, eos_id))
            alive = alive & (nxt != eos_id)
        ids = torch.cat((ids, nxt), dim=1)
        if eos_id is not None and not bool(alive.any()):
            break
    return ids
''',
    },
    {
        "name": "beam_python_lists_float64",
        "cell": "beam_search",
        "source": r'''def beam_search(table, idx, beam_size, max_new_tokens, eos_id=None, length_penalty=0.0):
    """Beam search with TableLM(table) for one prompt idx (1, T) -> (tokens (1, T + n), score).

    score = log P(generated tokens) / ((5 + n) / 6) ** length_penalty, as a Python float.
    """
    if max_new_tokens == 0:
        return idx, 0.0
    model = TableLM(table)
    gnmt = lambda n: ((5 + n) / 6) ** length_penalty
    live = [(idx[0].tolist(), 0.0)]
    best = None                                  # (score, tokens), first found wins ties

    def offer(score, tokens):
        nonlocal best
        if best is None or score > best[0]:
            best = (score, tokens)

    for t in range(1, max_new_tokens + 1):
        rows = torch.tensor([toks for toks, _ in live], dtype=idx.dtype, device=idx.device)
        logp = F.log_softmax(model(rows)[:, -1, :].double(), dim=-1).tolist()
        cands = []
        for b, (toks, s) in enumerate(live):
            for tok, lp_tok in enumerate(logp[b]):
                cands.append((s + lp_tok, b * len(logp[b]) + tok, b, tok))
        cands.sort(key=lambda c: (-c[0], c[1]))          # stable: lower flat index first
        new_live = []
        for rank, (s, _, b, tok) in enumerate(cands[: 2 * beam_size]):
            toks = live[b][0] + [tok]
            if eos_id is not None and tok == eos_id:
                if rank < beam_size:
                    offer(s / gnmt(t), toks)
            else:
                new_live.append((toks, s))
                if len(new_live) == beam_size:
                    break
        live = new_live
        if not live:
            break
    for toks, s in live:
        offer(s / gnmt(max_new_tokens), toks)
    return torch.tensor([best[1]], dtype=idx.dtype, device=idx.device), float(best[0])
''',
    },
]
