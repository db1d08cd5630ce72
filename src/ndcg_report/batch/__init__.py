"""Scheduled builds of many reports: the config, the runner with its lock, history and index.html."""
