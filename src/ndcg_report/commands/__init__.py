"""The commands of the `ndcg-report` command line, one module each, with its parser and its one-line output."""
