"""Korean number words -> digits: the small encoder-decoder that chapters 8 and 9 train and decode.

Task: read a Sino-Korean number word such as "삼백이십일" and write its digits "321", for every
integer 0 <= n <= MAX_N (99999). Reading rules (standard Korean):
- digits 일 이 삼 사 오 육 칠 팔 구, place units 십 (10), 백 (100), 천 (1000), 만 (10^4);
- a 1 before 십/백/천 is not read (10 = 십, 110 = 백십, 1000 = 천), nor before 만 (10000 = 만);
- zero digits are not read; 영 is used only for the number 0;
- words are spaced by 만 units (한글 맞춤법 제44항): 21000 = "이만 천", 10001 = "만 일".

Tokens are characters: the source vocabulary is the syllables above plus the space, the target
vocabulary the ten digits; both have <pad> = 0, and the target adds <s> and </s>.
The model is NumberReader below: a pre-norm encoder-decoder built from PyTorch's
nn.TransformerEncoderLayer and nn.TransformerDecoderLayer (no graded code lives in this file; the
student bundle ships it next to the chapter notebooks).

Split: a fixed random TEST_FRACTION of all numbers 0..MAX_N is held out (split_numbers); training
batches are drawn only from the rest, so every test number is unseen.

Weight cache (chapters run as separate notebooks): chapter 8 trains with the loop written out on
the page (the loop of `train` below, with the page's own length_weights and lr_at, checked against
these) and saves the weights with `save(...)` to _build/numwords/<key>.pt, where <key> hashes the
Config, the torch version and the source of this file. Chapter 9 calls `load_or_train(config)`:
it loads that file when chapter 8 wrote it for the same key and trains (same seed, same result)
otherwise. Training is deterministic for a given machine, torch version and thread count.
"""

import hashlib
import math
from dataclasses import asdict, dataclass
from pathlib import Path

import torch
import torch.nn.functional as F
from torch import nn

ROOT = Path(__file__).resolve().parents[1]
CACHE_DIR = ROOT / "_build" / "numwords"

MAX_N = 99999
DIGIT_WORDS = "영일이삼사오육칠팔구"
UNIT_WORDS = {1000: "천", 100: "백", 10: "십", 1: ""}

PAD, BOS, EOS = 0, 1, 2
SRC_TOKENS = ["<pad>", " ", *DIGIT_WORDS, "십", "백", "천", "만"]
TGT_TOKENS = ["<pad>", "<s>", "</s>", *"0123456789"]
SRC_ID = {t: i for i, t in enumerate(SRC_TOKENS)}
TGT_ID = {t: i for i, t in enumerate(TGT_TOKENS)}
MAX_NEW_TOKENS = len(str(MAX_N)) + 1  # up to 5 digits + </s>
PROGRESS_EVERY = 100  # train(progress=True) prints one line per this many steps


# ---------------------------------------------------------------------------------------------
# Number words


def _below_10000(n):
    """1 <= n <= 9999 -> its word without spaces, e.g. 1021 -> "천이십일"."""
    parts = []
    for unit, word in UNIT_WORDS.items():
        d = n // unit % 10
        if d == 0:
            continue
        digit = "" if (d == 1 and unit > 1) else DIGIT_WORDS[d]
        parts.append(digit + word)
    return "".join(parts)


def korean_number_words(n):
    """0 <= n <= 99999 -> Sino-Korean reading, spaced by 만 units: 321 -> "삼백이십일",
    21000 -> "이만 천", 0 -> "영"."""
    if not 0 <= n <= MAX_N:
        raise ValueError(f"n must be in 0..{MAX_N}")
    if n == 0:
        return DIGIT_WORDS[0]
    man, rest = divmod(n, 10000)
    words = []
    if man:
        words.append(("" if man == 1 else DIGIT_WORDS[man]) + "만")
    if rest:
        words.append(_below_10000(rest))
    return " ".join(words)


# ---------------------------------------------------------------------------------------------
# Data: split, vocabularies, batches


def split_numbers(max_n=MAX_N, test_fraction=0.1, seed=0):
    """Random disjoint split of 0..max_n -> (train (N_train,), test (N_test,)) long, both sorted."""
    gen = torch.Generator().manual_seed(seed)
    perm = torch.randperm(max_n + 1, generator=gen)
    n_test = round(test_fraction * (max_n + 1))
    return perm[n_test:].sort().values, perm[:n_test].sort().values


def encode_source(words):
    """List of B number words -> (B, S) long, S = the longest word, padded with PAD on the right."""
    out = torch.full((len(words), max(map(len, words))), PAD, dtype=torch.long)
    for i, w in enumerate(words):
        out[i, : len(w)] = torch.tensor([SRC_ID[c] for c in w])
    return out


def encode_target(numbers):
    """List of B ints -> (B, T) long: <s> digits </s>, padded with PAD; T = longest + 2."""
    out = torch.full((len(numbers), len(str(max(numbers))) + 2), PAD, dtype=torch.long)
    for i, n in enumerate(numbers):
        ids = [BOS, *(TGT_ID[c] for c in str(n)), EOS]
        out[i, : len(ids)] = torch.tensor(ids)
    return out


def decode_target(ids):
    """Target ids (T,) -> digit string: stops at </s>, skips <s> and <pad>."""
    chars = []
    for i in ids.tolist():
        if i == EOS:
            break
        if i not in (PAD, BOS):
            chars.append(TGT_TOKENS[i])
    return "".join(chars)


def length_weights(numbers):
    """(N,) ints -> (N,) float sampling weights that give each digit count the same total mass.

    Uniform sampling would be 90 % five-digit numbers; with these weights 0..9 are seen as often
    as 10000..99999 (each digit count 1..5 gets 1/5 of the batches)."""
    lengths = torch.tensor([len(str(n)) for n in numbers.tolist()])
    counts = torch.bincount(lengths)
    return 1.0 / counts[lengths].double()


# ---------------------------------------------------------------------------------------------
# Model and training


@dataclass(frozen=True)
class Config:
    """Hyper-parameters of the model and the training run (all of them enter the cache key)."""

    max_n: int = MAX_N  # numbers 0..max_n
    d_model: int = 32
    num_heads: int = 4
    num_layers: int = 2  # encoder layers = decoder layers
    d_ff: int = 128
    steps: int = 700
    batch_size: int = 128
    lr: float = 1e-2
    warmup: int = 100
    weight_decay: float = 0.01
    test_fraction: float = 0.1
    seed: int = 0
    threads: int = 1


def _sinusoidal_table(T, d_model):
    """(T, d_model) sinusoidal positions, one entry at a time as in chapter 5.3."""
    pe = torch.zeros(T, d_model)
    for p in range(T):
        for i in range(d_model // 2):
            omega = 10000.0 ** (-2 * i / d_model)
            pe[p, 2 * i] = math.sin(p * omega)
            pe[p, 2 * i + 1] = math.cos(p * omega)
    return pe


class NumberReader(nn.Module):
    """Pre-norm encoder-decoder Transformer from PyTorch's layers (GELU, no dropout).

    Embeddings are scaled by sqrt(d_model) and summed with sinusoidal positions; source <pad>
    tokens are masked as keys in the encoder and in cross-attention; both stacks end with a
    LayerNorm. forward(src (B, S), tgt (B, T)) -> logits (B, T, tgt_vocab_size). The decoder
    layers are model.decoder, their cross-attention modules layer.multihead_attn.
    """

    def __init__(self, src_vocab_size, tgt_vocab_size, d_model, num_heads, num_layers, d_ff,
                 pad_id=PAD, max_len=32):  # fmt: skip
        super().__init__()
        self.d_model, self.pad_id, self.max_len = d_model, pad_id, max_len
        self.word_table = nn.Embedding(src_vocab_size, d_model)  # syllables of the number word
        self.digit_table = nn.Embedding(tgt_vocab_size, d_model)  # <s>, digits, </s>
        self.register_buffer("pe", _sinusoidal_table(max_len, d_model), persistent=False)
        layer = dict(dim_feedforward=d_ff, dropout=0.0, activation="gelu", batch_first=True,
                     norm_first=True)  # fmt: skip
        self.encoder = nn.ModuleList(
            nn.TransformerEncoderLayer(d_model, num_heads, **layer) for _ in range(num_layers)
        )
        self.decoder = nn.ModuleList(
            nn.TransformerDecoderLayer(d_model, num_heads, **layer) for _ in range(num_layers)
        )
        self.enc_norm = nn.LayerNorm(d_model)
        self.dec_norm = nn.LayerNorm(d_model)
        self.to_logits = nn.Linear(d_model, tgt_vocab_size)

    def embed(self, table, ids):
        """ids (B, T) -> scaled token embeddings plus the first T sinusoidal positions."""
        length = ids.shape[1]
        if length > self.max_len:
            raise ValueError(f"{length} tokens do not fit the {self.max_len}-row position table")
        positions = self.pe[:length].to(table.weight.dtype)
        return table(ids) * math.sqrt(self.d_model) + positions

    def source_padding(self, src):
        """(B, S) bool, True where src is <pad> (PyTorch's key_padding_mask convention)."""
        return src == self.pad_id

    def encode(self, src, src_pad=None):
        """Encoder output for src (B, S): the memory, (B, S, d_model)."""
        src_pad = self.source_padding(src) if src_pad is None else src_pad
        x = self.embed(self.word_table, src)
        for layer in self.encoder:
            x = layer(x, src_key_padding_mask=src_pad)
        return self.enc_norm(x)

    def decode(self, tgt, memory, src_pad):
        """tgt (B, T), memory (B, S, d_model), src_pad (B, S) -> logits (B, T, tgt_vocab_size)."""
        T = tgt.shape[1]
        future = torch.ones(T, T, dtype=torch.bool, device=tgt.device).triu(1)  # True = blocked
        x = self.embed(self.digit_table, tgt)
        for layer in self.decoder:
            x = layer(x, memory, tgt_mask=future, memory_key_padding_mask=src_pad)
        hidden = self.dec_norm(x)
        return self.to_logits(hidden)

    def forward(self, src, tgt):
        src_pad = self.source_padding(src)
        return self.decode(tgt, self.encode(src, src_pad), src_pad)


def build_model(config):
    """A fresh NumberReader for this task (parameters drawn from the current RNG)."""
    return NumberReader(
        src_vocab_size=len(SRC_TOKENS),
        tgt_vocab_size=len(TGT_TOKENS),
        d_model=config.d_model,
        num_heads=config.num_heads,
        num_layers=config.num_layers,
        d_ff=config.d_ff,
        pad_id=PAD,
        max_len=32,
    )


def lr_at(step, config):
    """Linear warm-up for config.warmup steps, then cosine decay to 0 at config.steps."""
    if step < config.warmup:
        return config.lr * (step + 1) / config.warmup
    progress = (step - config.warmup) / max(1, config.steps - config.warmup)
    return config.lr * 0.5 * (1 + math.cos(math.pi * progress))


def train(config=Config(), progress=True):
    """Train from scratch -> (model in eval mode, losses: list of config.steps floats).

    One step: a batch of config.batch_size training numbers (length_weights), teacher forcing
    (decoder input tgt[:, :-1], labels tgt[:, 1:]), cross-entropy over non-pad labels, AdamW,
    gradient clipping at 1.0. torch's global RNG seeds the weights; a separate generator draws
    the batches; both come from config.seed.
    """
    threads = torch.get_num_threads()
    torch.set_num_threads(config.threads)
    try:
        torch.manual_seed(config.seed)
        model = build_model(config).train()
        train_numbers, _ = split_numbers(config.max_n, config.test_fraction, config.seed)
        words = [korean_number_words(n) for n in train_numbers.tolist()]
        src_all, tgt_all = encode_source(words), encode_target(train_numbers.tolist())
        weights = length_weights(train_numbers)
        gen = torch.Generator().manual_seed(config.seed)
        opt = torch.optim.AdamW(model.parameters(), lr=config.lr, weight_decay=config.weight_decay)
        losses = []
        for step in range(config.steps):
            for group in opt.param_groups:
                group["lr"] = lr_at(step, config)
            rows = torch.multinomial(weights, config.batch_size, replacement=True, generator=gen)
            src, tgt = src_all[rows], tgt_all[rows]  # (B, S), (B, T)
            logits = model(src, tgt[:, :-1])  # (B, T - 1, tgt_vocab_size)
            loss = F.cross_entropy(logits.transpose(1, 2), tgt[:, 1:], ignore_index=PAD)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            losses.append(loss.item())
            if progress and ((step + 1) % PROGRESS_EVERY == 0 or step + 1 == config.steps):
                print(f"학습 {step + 1}/{config.steps}스텝, 손실 {losses[-1]:.3f}", flush=True)
        return model.eval(), losses
    finally:
        torch.set_num_threads(threads)


# ---------------------------------------------------------------------------------------------
# Decoding and evaluation


def conditioned(model, src):
    """The decoder as a language model for fixed sources, for the decoding functions of chapter 9.

    src (B, S) long. Returns lm(tgt (n, T)) -> logits (n, T, tgt_vocab_size). The sources are
    encoded once; when n != B (beam search: one source, n beams) the single source row is repeated
    n times.
    """
    with torch.no_grad():
        src_pad = model.source_padding(src)  # (B, S)
        memory = model.encode(src, src_pad)  # (B, S, d_model)

    def lm(tgt):
        n = tgt.shape[0]
        if n == memory.shape[0]:
            return model.decode(tgt, memory, src_pad)
        return model.decode(tgt, memory.expand(n, -1, -1), src_pad.expand(n, -1))

    return lm


def start_tokens(batch_size):
    """(B, 1) column of <s>: the decoder's prompt."""
    return torch.full((batch_size, 1), BOS, dtype=torch.long)


def exact_match(predictions, numbers):
    """Fraction of predictions (digit strings) equal to str(number)."""
    hits = [p == str(n) for p, n in zip(predictions, numbers, strict=True)]
    return sum(hits) / len(hits)


@torch.no_grad()
def cross_attention(model, words, numbers):
    """Cross-attention weights of every decoder layer while reading words and writing numbers.

    words: list of B number words, numbers: list of B ints. The decoder input is <s> + the digits
    of each number (teacher forcing), so query row t is the step that predicts the t-th digit
    (row len(str(n)) predicts </s>). Returns a list (one per decoder layer) of (B, h, T, S)
    tensors; rows and columns beyond a number's length are padding. A forward hook on each
    layer's cross-attention (nn.MultiheadAttention, layer.multihead_attn) re-runs the module's own
    forward on the same inputs with need_weights=True, average_attn_weights=False, so the model
    code is not changed.
    """
    src = encode_source(words)  # (B, S)
    tgt = encode_target(numbers)[:, :-1]  # (B, T): <s> digits, without the last position
    maps = []

    def hook(module, args, kwargs, output):
        kwargs = {**kwargs, "need_weights": True, "average_attn_weights": False}
        _, weights = module.forward(*args, **kwargs)
        maps.append(weights)  # (B, h, T, S)

    handles = [
        layer.multihead_attn.register_forward_hook(hook, with_kwargs=True)
        for layer in model.decoder
    ]
    try:
        model(src, tgt)
    finally:
        for h in handles:
            h.remove()
    return maps


def digit_spans(n):
    """For each digit of str(n), left to right: the positions of the syllables of
    korean_number_words(n) that read it (digit syllable and unit; [] for a zero digit).

    2111 "이천백십일" -> [[0, 1], [2], [3], [4]]; 20101 "이만 백일" -> [[0, 1], [], [3], [], [4]].
    """
    digits = str(n)
    spans = [[] for _ in digits]
    pos = 0
    man, rest = divmod(n, 10000)
    groups = [(man, [(1, 4)])] if man else []
    groups.append((rest, [(1000, 3), (100, 2), (10, 1), (1, 0)]))
    for g, (value, places) in enumerate(groups):
        if g > 0 and man and rest:
            pos += 1  # the space after 만
        for unit, place in places:
            d = value // unit % 10
            if d == 0:
                continue
            read = 1 if place == 0 else 1 + (d > 1)  # digit syllable (if read) + unit syllable
            i = len(digits) - 1 - place
            spans[i] = list(range(pos, pos + read))
            pos += read
    if n == 0:
        spans[0] = [0]
    return spans


# ---------------------------------------------------------------------------------------------
# Weight cache shared by the chapters


def cache_key(config):
    """Hash of the config, the torch version and the source of this file."""
    h = hashlib.sha256(repr(sorted(asdict(config).items())).encode())
    h.update(torch.__version__.encode())
    h.update(Path(__file__).read_bytes())
    return h.hexdigest()[:16]


def cache_path(config):
    return CACHE_DIR / f"{cache_key(config)}.pt"


def save(model, losses, config):
    """Write the weights and the loss history to cache_path(config); returns the path."""
    path = cache_path(config)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    torch.save({"state_dict": model.state_dict(), "losses": losses}, tmp)
    tmp.replace(path)
    return path


def load_or_train(config=Config(), progress=False):
    """(model, losses, loaded): the cached weights when present, else train(config) and save."""
    path = cache_path(config)
    if path.is_file():
        saved = torch.load(path, weights_only=True)
        model = build_model(config)
        model.load_state_dict(saved["state_dict"])
        return model.eval(), saved["losses"], True
    model, losses = train(config, progress=progress)
    save(model, losses, config)
    return model, losses, False
