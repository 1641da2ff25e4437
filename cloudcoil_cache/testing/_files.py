"""Files the fake servers write that hold secrets (kubeconfigs, TLS keys): created owner-only (0600), atomically."""

from __future__ import annotations

import os
import tempfile

__all__ = ["write_private"]


def write_private(path: str | os.PathLike[str], data: str | bytes) -> str:
    """Write ``data`` to ``path`` readable by its owner only; returns the path.

    The content goes to a new file in the same folder that is created 0600 (``mkstemp``: never a
    moment with wider permissions, whatever the umask, and whatever mode a file already at
    ``path`` had), then replaces ``path`` in one rename.
    """
    target = os.fspath(path)
    raw = data.encode() if isinstance(data, str) else data
    fd, temporary = tempfile.mkstemp(
        dir=os.path.dirname(os.path.abspath(target)), prefix=f".{os.path.basename(target)}."
    )
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(raw)
        os.replace(temporary, target)
    except BaseException:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        raise
    return target
