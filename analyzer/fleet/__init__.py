"""`triage fleet`: many nodes' logs, one answer: which node failed first, and how the others
echoed it. Per-node analysis is the single-node pipeline, run in local worker processes or
as Ray tasks; the findings of all nodes become one table (DuckDB, Parquet), from which the
cross-node diagnosis is queried."""
