"""Check package used only by tests/test_redteam.py to verify the sandbox limits first."""
