"""What a report shows, computed and drawn from evaluated runs (nothing of Jupyter, papermill or nbval)."""
