"""Sandboxed, nbgrader-native autograder of the course (see README.md, "Instructors")."""
