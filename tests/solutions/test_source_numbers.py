"""The printed numbers of source 002 (ch. 3 of "Build a LLM from Scratch", Korean translation),
reproduced to 4 decimals with the course's own code (solutions/softmax, attention, masking).

The 6 x 3 embeddings of "Your journey starts with one step" come from
solutions.attention.example_inputs(); INPUTS_002 below is the same tensor for other tests.
MultiHeadAttention numbers are checked in the multi-head tests.
"""

import torch
import torch.nn as nn

from solutions.attention import (
    SelfAttention_v1,
    SelfAttention_v2,
    example_inputs,
    scaled_dot_product_attention,
    simple_self_attention,
)
from solutions.masking import (
    CausalAttention,
    attention_dropout,
    causal_mask,
    masked_softmax,
    masked_softmax_renorm,
)
from solutions.softmax import softmax, softmax_naive, sum_normalize

INPUTS_002 = example_inputs()


def assert_4dp(actual, expected):
    """Equal to the printed value to 4 decimals (|diff| <= half a unit in the 4th place)."""
    expected = torch.as_tensor(expected, dtype=torch.float32)
    torch.testing.assert_close(actual.detach().float(), expected, atol=5.001e-5, rtol=0)


def test_inputs_are_the_source_tensor():
    expected = [
        [0.43, 0.15, 0.89],
        [0.55, 0.87, 0.66],
        [0.57, 0.85, 0.64],
        [0.22, 0.58, 0.33],
        [0.77, 0.25, 0.10],
        [0.05, 0.80, 0.55],
    ]
    assert torch.equal(INPUTS_002, torch.tensor(expected))


# --- 3.3 weight-free self-attention ------------------------------------------------------------


def test_journey_scores_and_normalisations():
    scores = INPUTS_002 @ INPUTS_002[1]
    assert_4dp(scores, [0.9544, 1.4950, 1.4754, 0.8434, 0.7070, 1.0865])
    assert_4dp(sum_normalize(scores, dim=0), [0.1455, 0.2278, 0.2249, 0.1285, 0.1077, 0.1656])
    softmaxed = [0.1385, 0.2379, 0.2333, 0.1240, 0.1082, 0.1581]
    assert_4dp(softmax_naive(scores, dim=0), softmaxed)
    assert_4dp(softmax(scores, dim=0), softmaxed)


def test_weight_free_context_vectors():
    context, weights = simple_self_attention(INPUTS_002)
    assert_4dp(context[1], [0.4419, 0.6515, 0.5683])  # "journey"
    assert_4dp(
        INPUTS_002 @ INPUTS_002.T,
        [
            [0.9995, 0.9544, 0.9422, 0.4753, 0.4576, 0.6310],
            [0.9544, 1.4950, 1.4754, 0.8434, 0.7070, 1.0865],
            [0.9422, 1.4754, 1.4570, 0.8296, 0.7154, 1.0605],
            [0.4753, 0.8434, 0.8296, 0.4937, 0.3474, 0.6565],
            [0.4576, 0.7070, 0.7154, 0.3474, 0.6654, 0.2935],
            [0.6310, 1.0865, 1.0605, 0.6565, 0.2935, 0.9450],
        ],
    )
    assert_4dp(
        weights,
        [
            [0.2098, 0.2006, 0.1981, 0.1242, 0.1220, 0.1452],
            [0.1385, 0.2379, 0.2333, 0.1240, 0.1082, 0.1581],
            [0.1390, 0.2369, 0.2326, 0.1242, 0.1108, 0.1565],
            [0.1435, 0.2074, 0.2046, 0.1462, 0.1263, 0.1720],
            [0.1526, 0.1958, 0.1975, 0.1367, 0.1879, 0.1295],
            [0.1385, 0.2184, 0.2128, 0.1420, 0.0988, 0.1896],
        ],
    )
    assert_4dp(
        context,
        [
            [0.4421, 0.5931, 0.5790],
            [0.4419, 0.6515, 0.5683],
            [0.4431, 0.6496, 0.5671],
            [0.4304, 0.6298, 0.5510],
            [0.4671, 0.5910, 0.5266],
            [0.4177, 0.6503, 0.5645],
        ],
    )


# --- 3.4 trainable weights -------------------------------------------------------------------


def _v1():
    torch.manual_seed(123)
    return SelfAttention_v1(3, 2)


def test_step_by_step_journey_with_v1_weights():
    sa = _v1()  # same draws as 002's W_query, W_key, W_value after manual_seed(123)
    x2 = INPUTS_002[1]
    query_2 = x2 @ sa.W_query
    keys, values = INPUTS_002 @ sa.W_key, INPUTS_002 @ sa.W_value
    assert_4dp(query_2, [0.4306, 1.4551])
    assert_4dp(query_2 @ keys[1], 1.8524)
    assert_4dp(query_2 @ keys.T, [1.2705, 1.8524, 1.8111, 1.0795, 0.5577, 1.5440])
    context_2, weights_2 = scaled_dot_product_attention(query_2[None], keys, values)
    assert_4dp(weights_2[0], [0.1500, 0.2264, 0.2199, 0.1311, 0.0906, 0.1820])
    assert_4dp(context_2[0], [0.3061, 0.8210])


def test_self_attention_v1_seed_123():
    assert_4dp(
        _v1()(INPUTS_002),
        [
            [0.2996, 0.8053],
            [0.3061, 0.8210],
            [0.3058, 0.8203],
            [0.2948, 0.7939],
            [0.2927, 0.7891],
            [0.2990, 0.8040],
        ],
    )


def _v2():
    torch.manual_seed(789)
    return SelfAttention_v2(3, 2)


def test_self_attention_v2_seed_789():
    assert_4dp(
        _v2()(INPUTS_002),
        [
            [-0.0739, 0.0713],
            [-0.0748, 0.0703],
            [-0.0749, 0.0702],
            [-0.0760, 0.0685],
            [-0.0763, 0.0679],
            [-0.0754, 0.0693],
        ],
    )


# --- 3.5 causal mask and dropout ---------------------------------------------------------------

MASKED_WEIGHTS_002 = [
    [1.0000, 0.0000, 0.0000, 0.0000, 0.0000, 0.0000],
    [0.5517, 0.4483, 0.0000, 0.0000, 0.0000, 0.0000],
    [0.3800, 0.3097, 0.3103, 0.0000, 0.0000, 0.0000],
    [0.2758, 0.2460, 0.2462, 0.2319, 0.0000, 0.0000],
    [0.2175, 0.1983, 0.1984, 0.1888, 0.1971, 0.0000],
    [0.1935, 0.1663, 0.1666, 0.1542, 0.1666, 0.1529],
]


def _v2_scores():
    sa = _v2()
    q, k = sa.W_query(INPUTS_002), sa.W_key(INPUTS_002)
    return sa, q, k, (q @ k.T) / k.shape[-1] ** 0.5


def test_causal_masking_both_ways():
    sa, q, k, scaled = _v2_scores()
    _, weights = scaled_dot_product_attention(q, k, sa.W_value(INPUTS_002))
    assert_4dp(
        weights,
        [
            [0.1921, 0.1646, 0.1652, 0.1550, 0.1721, 0.1510],
            [0.2041, 0.1659, 0.1662, 0.1496, 0.1665, 0.1477],
            [0.2036, 0.1659, 0.1662, 0.1498, 0.1664, 0.1480],
            [0.1869, 0.1667, 0.1668, 0.1571, 0.1661, 0.1564],
            [0.1830, 0.1669, 0.1670, 0.1588, 0.1658, 0.1585],
            [0.1935, 0.1663, 0.1666, 0.1542, 0.1666, 0.1529],
        ],
    )
    keep = causal_mask(6)
    assert_4dp(
        weights * keep,  # 002's masked_simple: zeroed above the diagonal, not yet renormalised
        [
            [0.1921, 0.0000, 0.0000, 0.0000, 0.0000, 0.0000],
            [0.2041, 0.1659, 0.0000, 0.0000, 0.0000, 0.0000],
            [0.2036, 0.1659, 0.1662, 0.0000, 0.0000, 0.0000],
            [0.1869, 0.1667, 0.1668, 0.1571, 0.0000, 0.0000],
            [0.1830, 0.1669, 0.1670, 0.1588, 0.1658, 0.0000],
            [0.1935, 0.1663, 0.1666, 0.1542, 0.1666, 0.1529],
        ],
    )
    assert_4dp(masked_softmax_renorm(scaled, keep), MASKED_WEIGHTS_002)
    assert_4dp(masked_softmax(scaled, keep), MASKED_WEIGHTS_002)
    # 002 prints the unscaled masked scores (the -inf entries are the blocked ones)
    unscaled = [
        [0.2899],
        [0.4656, 0.1723],
        [0.4594, 0.1703, 0.1731],
        [0.2642, 0.1024, 0.1036, 0.0186],
        [0.2183, 0.0874, 0.0882, 0.0177, 0.0786],
        [0.3408, 0.1270, 0.1290, 0.0198, 0.1290, 0.0078],
    ]
    scores = q @ k.T
    for i, row in enumerate(unscaled):
        assert_4dp(scores[i, : i + 1], row)


def test_dropout_on_ones_seed_123():
    torch.manual_seed(123)
    out = attention_dropout(torch.ones(6, 6), 0.5)
    expected = [
        [2.0, 2.0, 0.0, 2.0, 2.0, 0.0],
        [0.0, 0.0, 0.0, 2.0, 0.0, 2.0],
        [2.0, 2.0, 2.0, 2.0, 0.0, 2.0],
        [0.0, 2.0, 2.0, 0.0, 0.0, 2.0],
        [0.0, 2.0, 0.0, 2.0, 0.0, 2.0],
        [0.0, 2.0, 2.0, 2.0, 2.0, 0.0],
    ]
    assert torch.equal(out, torch.tensor(expected))
    torch.manual_seed(123)
    assert torch.equal(nn.Dropout(0.5)(torch.ones(6, 6)), out)


def test_dropout_on_masked_weights_seed_123():
    _, _, _, scaled = _v2_scores()
    weights = masked_softmax(scaled, causal_mask(6))
    torch.manual_seed(123)
    out = attention_dropout(weights, 0.5)
    assert_4dp(
        out,
        [
            [2.0000, 0.0000, 0.0000, 0.0000, 0.0000, 0.0000],
            [0.0000, 0.0000, 0.0000, 0.0000, 0.0000, 0.0000],
            [0.7599, 0.6194, 0.6206, 0.0000, 0.0000, 0.0000],
            [0.0000, 0.4921, 0.4925, 0.0000, 0.0000, 0.0000],
            [0.0000, 0.3966, 0.0000, 0.3775, 0.0000, 0.0000],
            [0.0000, 0.3327, 0.3331, 0.3084, 0.3331, 0.0000],
        ],
    )


def test_causal_attention_seed_123():
    """002 prints only the shape; the values are the first head of its MultiHeadAttentionWrapper
    printout (the wrapper builds CausalAttention heads right after the same seed)."""
    torch.manual_seed(123)
    ca = CausalAttention(3, 2, context_length=6, dropout=0.0)
    batch = torch.stack((INPUTS_002, INPUTS_002), dim=0)
    out = ca(batch)
    assert out.shape == (2, 6, 2)
    first_head = [
        [-0.4519, 0.2216],
        [-0.5874, 0.0058],
        [-0.6300, -0.0632],
        [-0.5675, -0.0843],
        [-0.5526, -0.0981],
        [-0.5299, -0.1081],
    ]
    assert_4dp(out[0], first_head)
    assert_4dp(out[1], first_head)
