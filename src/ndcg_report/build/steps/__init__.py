"""The build's child steps: papermill's process, the nbval plugin and its cell snapshots, the offline HTML exporter, and what a failed step says."""
