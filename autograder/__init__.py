"""Sandboxed, nbgrader-native autograder for the course (see /work/notes/ENGINE.md, README)."""
