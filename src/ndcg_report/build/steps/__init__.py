"""The build's child steps: papermill's process, the nbval plugin, the offline HTML, failures."""
