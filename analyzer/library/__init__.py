"""The pattern library: patterns/ as data, validated, compiled for both scan engines."""
