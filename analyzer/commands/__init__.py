"""What `triage patterns|kb|site …` do: each command body calls the library, the knowledge
base or the site builder and hands the result to `render`. The only layer besides `cli.py`
that may import `render`; nothing below it prints."""
