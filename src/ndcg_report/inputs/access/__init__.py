"""How input files are opened: regular files and pipes, text checks and limits, identity stamps."""
