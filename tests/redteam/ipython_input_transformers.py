"""IPython input transformer that would rewrite every later cell (the test cells) to `pass`."""

ASSIGNMENT = "softmax"
CELLS = {
    "cross_entropy": r'''
ip = get_ipython()
ip.input_transformers_cleanup.append(lambda lines: ["pass\n"])
ip.input_transformers_post.append(lambda lines: ["pass\n"])
__WRONG__
'''
}
