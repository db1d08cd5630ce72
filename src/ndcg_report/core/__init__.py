"""The core: ranking within queries, every measure per query and over queries, and their text output formats."""
