"""Instant feedback on JupyterHub: the grading service (``python -m autograder.service``).

A JupyterHub-managed service that watches the nbgrader exchange's inbound folder, grades each
submission of an assignment the instructor opened for it (``c.InstantFeedback`` in the course's
nbgrader_config.py) with warm judges, and releases the feedback page to that student through
the exchange, where JupyterLab's "Fetch Feedback" finds it. The page is the one the final
grading writes for that notebook: the service runs nbgrader's own Autograde (verdicts from the
engine) and GenerateFeedback in a course root of its own (gradebook included), never the
instructor's. Final grading at the deadline (collect, ``python -m autograder grade``, export)
is not touched.

- settings.py: ``InstantFeedback`` (the instructor's switches) and the Korean texts.
- inbox.py: the durable queue on disk (a copy of each submission, its state, the grading log).
- pipeline.py: nbgrader's Autograde and GenerateFeedback for a batch of submissions.
- exchange.py: releasing feedback under the hash the student's nbgrader looks for (renamed
  notebooks included), also as a ReleaseFeedback exchange class for ``nbgrader release_feedback``.
- server.py: the service process (threads, status endpoint, its refusals).
"""
