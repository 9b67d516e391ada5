"""Performance scripts that print JSON; not run as tests."""
