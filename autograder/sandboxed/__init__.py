"""Code that runs inside the sandbox, next to the student's code (see README.md here)."""
