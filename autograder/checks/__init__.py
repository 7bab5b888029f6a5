"""Hidden checks, one pytest module per assignment (``autograder/checks/<assignment>.py``).

Test functions are named after the notebook's test cells (``grade_id``) and use the fixtures
``student``, ``rng`` and ``device`` (autograder/judge/plugin.py) and the helpers of
autograder/judge/checking.py. These modules run only in the trusted judge, never in a worker.
"""
