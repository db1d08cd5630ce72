"""The build's kernels, forked from one server that has imported what they import, and the provisioner that asks for them."""
