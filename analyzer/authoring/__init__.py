"""Tools for the library's authors that run the engine on it: fixture runs, `patterns lint`,
`patterns stats`, pattern and postmortem drafts, `kb lint`. Above the engine (`run.py`),
below the commands; the library's data layer (`analyzer/library/`) never imports them."""
