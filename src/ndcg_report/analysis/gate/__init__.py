"""The gate: two builds of a report compared system by system, one verdict for people and for CI."""
