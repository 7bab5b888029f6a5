"""Hidden checks, one module per assignment (``autograder.checks.<assignment>``).

Each module registers ``@check("<test cell grade_id>")`` functions ``fn(student, rng, device)``
(see autograder/judge.py). These modules run only in the trusted judge, never in a worker.
"""
