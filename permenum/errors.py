"""The one exception type that the command line turns into a one-line error and exit code 2."""


class UserError(Exception):
    """Bad input or a run directory in a state we refuse to touch; the message is shown as is."""
