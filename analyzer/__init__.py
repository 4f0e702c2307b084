"""triage: find the root cause of a GPU/LLM-serving failure in its logs.

Data flows one way: bytes → records → events → matches → findings → report.
The library API is `analyzer.triage.analyze`; the CLI (`analyzer.cli`) is a thin shell.
"""

__version__ = "0.1.0"
