"""Reference implementations for the course 어텐션과 트랜스포머.

One module per chapter topic: softmax, attention, masking, multihead, positional,
normalization, efficient, models, decoding. The book imports these building blocks,
and the autograder's hidden checks compare student code against them.
"""
