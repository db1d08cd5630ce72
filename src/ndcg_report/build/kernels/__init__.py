"""The build's kernels, forked from one server that has imported what they import."""
