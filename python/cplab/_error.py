"""cplab.Error: the one exception class of the cplab module."""


class Error(Exception):
    """A failure reported by cplab, with the same one-line message as the ``cplab`` CLI.

    Attributes:
        kind: ``"bad_input"`` (the CLI exits 2: a malformed batch, a wrong dtype, a sharder that
            breaks its contract), ``"check_failed"`` (the CLI exits 1: shards, a sharder or a loss
            that disagree with the reference) or ``"internal"`` (the CLI exits 3: a bug of cplab).
        cli_line: the line the CLI prints on stderr for the same failure.
        Failures of ``cplab.testing`` carry more: ``case``, ``rank``, ``key``, ``batch``,
        ``shards``, ``result``, ``replay`` (see ``cplab.testing``).
    """

    def __init__(self, message, kind="bad_input", cli_line=None, **details):
        super().__init__(message)
        self.kind = kind
        self.cli_line = cli_line if cli_line is not None else f"cplab: error: {message}"
        for name, value in details.items():
            setattr(self, name, value)
