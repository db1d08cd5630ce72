"""One module per command: NAME, add_parser(subparsers) adding its options, run(args) -> exit code (cli.COMMANDS).

A command's module owns its subcommand: add_parser adds it (named NAME) and its options to the command
line's parser (commands.parser holds what the parsers share), and run runs it on the parsed arguments
and prints its output (commands.output), returning the exit code. Besides the options, args holds
`argv` (the arguments after the program's name) and `started` (time.monotonic() when the command
began). An error a command raises is cli's to turn into one line and an exit code.
"""
