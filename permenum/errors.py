"""The one exception type that the command line turns into a one-line error and exit code 2, and how text
that came from elsewhere is shown on that line (and every other)."""


class UserError(Exception):
    """Bad input or a run directory in a state we refuse to touch; the message is shown as is, on one line
    (a message that embeds another's, such as pyarrow's multi-line ones, is folded: see one_line)."""

    def __init__(self, *args: object) -> None:
        super().__init__(*(one_line(a) if isinstance(a, str) else a for a in args))


def one_line(message: object) -> str:
    """A message (or an exception's) on one line: pyarrow's multi-line ones ("Couldn't deserialize thrift:
    ...\nDeserializing page header failed.") joined with " | ", so every error printed stays one line; what a
    terminal would act on within a line is escaped (printable): an error may quote a file's content."""
    return " | ".join(printable(line.strip()) for line in str(message).splitlines() if line.strip())


def printable(text: object) -> str:
    """``text`` with every character a terminal would act on rather than show written as its Python escape:
    ESC and the other controls, newlines and DEL (``\\x1b``, ``\\n``), and the invisible ones that reorder
    or hide text (bidi overrides, zero-width, line separators: ``\\u202e``). Everything else is kept, a
    backslash too (the escapes are for reading, not for parsing back).

    Text read from a run's files passes here wherever it is printed: site names, hosts, device names, the
    names of merged verifications, error text quoting a file. Escaped, not refused at merge: results reach a
    run by hand as well (rsync into results/), and a sound count is not rejected over its label; the name
    stays recognizable and a fake line or a cleared screen cannot be printed.
    """
    s = str(text)
    if s.isprintable():  # nearly always: no copy
        return s
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in s)
