"""The one exception type that the command line turns into a one-line error and exit code 2."""


class UserError(Exception):
    """Bad input or a run directory in a state we refuse to touch; the message is shown as is, on one line
    (a message that embeds another's, such as pyarrow's multi-line ones, is folded: see one_line)."""

    def __init__(self, *args: object) -> None:
        super().__init__(*(one_line(a) if isinstance(a, str) else a for a in args))


def one_line(message: object) -> str:
    """A message (or an exception's) on one line: pyarrow's multi-line ones ("Couldn't deserialize thrift:
    ...\nDeserializing page header failed.") joined with " | ", so every error printed stays one line."""
    return " | ".join(line.strip() for line in str(message).splitlines() if line.strip())
