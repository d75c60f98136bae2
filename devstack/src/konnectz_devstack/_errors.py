class DevStackError(RuntimeError):
    """A local component could not be started; the message says why and what to do."""
