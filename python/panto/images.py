"""Images and files in prompts: ``@path/to/image.png`` (and a pasted or
dragged path of an image file) in a prompt becomes an
:class:`~panto.conversation.Image` block after the prompt's text, and
``@path/to/file`` of a text file attaches the file's contents as a text
block (cut at :data:`MAX_FILE_BYTES`, saying so).

    att = prompt_attachments("why does @calc.py fail, see @shot.png", cwd)
    agent.submit_user_message(text, att.images, files=att.files)
    for line in att.shown: print(line)      # [file: calc.py, 2 KB] ...

The text is kept as typed (the model sees which file each attachment is);
the attachments follow it in the order they were named.  A reference to a
file that is not an image, does not exist or is too large stays plain
text; for the last two ``problems`` says why, one line each.
"""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path

from .conversation import Image, Message, Text

__all__ = [
    "FILE_BLOCK_START",
    "IMAGE_TOKENS_MAX",
    "IMAGE_TYPES",
    "MAX_FILE_BYTES",
    "MAX_IMAGE_B64",
    "MAX_IMAGE_BYTES",
    "MAX_IMAGE_SIDE",
    "PromptAttachments",
    "check_images",
    "image_marker",
    "image_size",
    "image_tokens",
    "load_image",
    "load_text_file",
    "media_type_of",
    "prompt_attachments",
    "prompt_images",
    "typed_text",
]

#: File suffix -> media type, for the types both wires accept.
IMAGE_TYPES = {
    ".png": "image/png",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".gif": "image/gif",
    ".webp": "image/webp",
}

#: The largest image in base64 characters: Anthropic rejects an image
#: whose base64 is over 5 MiB, and the request fails again on every later
#: turn of the session (OpenAI's limit is higher).
MAX_IMAGE_B64 = 5 * 1024 * 1024
#: The largest image file sent: what is 5 MiB in base64 (3.75 MiB).
MAX_IMAGE_BYTES = MAX_IMAGE_B64 // 4 * 3
#: The longest side in pixels the APIs accept (Anthropic: 8000).
MAX_IMAGE_SIDE = 8000

_SIGNATURES = (
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
)

# @path (backslash-escaped spaces allowed), a quoted path, or a bare path
# starting with / ~/ ./ ../ that ends in an image suffix.
_SUFFIX = r"\.(?:png|jpe?g|gif|webp)"
_SUFFIXES = (".png", ".jpg", ".jpeg", ".gif", ".webp")
_REF_SOURCE = rf"""(?<!\S)(?:
        @(?P<at>(?:\\\ |[^\s])+?{_SUFFIX})
      | (?P<q>'[^']+{_SUFFIX}'|"[^"]+{_SUFFIX}")
      | (?P<bare>(?:/|~/|\./|\.\./)(?:\\\ |[^\s])+?{_SUFFIX})
    )(?=[\s,;:!?)]|\.(?:\s|$)|$)"""
_ref: re.Pattern[str] | None = None  # compiled on first use (start-up: ~1 ms saved)


def media_type_of(data: bytes) -> str | None:
    """The image's media type from its first bytes (None: not an image of
    a type both wires accept, whatever its name says)."""
    for sig, mt in _SIGNATURES:
        if data.startswith(sig):
            return mt
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    return None


def load_image(path: str | os.PathLike[str]) -> Image:
    """An image block from a file; ``ValueError`` naming the file when it is
    not an image, too large or unreadable."""
    p = Path(path)
    try:
        size = p.stat().st_size
        if size > MAX_IMAGE_BYTES:
            raise ValueError(
                f"{p}: {size} bytes, more than the {MAX_IMAGE_BYTES} an image may have"
            )
        data = p.read_bytes()
    except OSError as e:
        raise ValueError(f"{p}: cannot read: {e.strerror or e}") from None
    mt = media_type_of(data)
    if mt is None:
        raise ValueError(f"{p}: not a PNG, JPEG, GIF or WebP image")
    import base64  # here: the common prompt has no image

    img = Image(mt, base64.b64encode(data).decode("ascii"))
    dims = _dimensions(img)
    if dims is not None and max(dims) > MAX_IMAGE_SIDE:
        raise ValueError(
            f"{p}: {dims[0]}x{dims[1]} pixels, more than the {MAX_IMAGE_SIDE} "
            "an image side may have"
        )
    return img


def _path_of(m: re.Match[str]) -> str:
    if m.group("at") is not None:
        return m.group("at").replace("\\ ", " ")
    if m.group("q") is not None:
        import shlex

        return shlex.split(m.group("q"))[0]
    return m.group("bare").replace("\\ ", " ")


#: The most of a text file an ``@path`` attaches (about 25,000 tokens): the
#: rest is left out, and the attachment says so.
MAX_FILE_BYTES = 100_000
#: How the text block of an attached file begins; the prompt's own text is
#: the message's first text block (see :func:`typed_text`).
FILE_BLOCK_START = '\n\n<file path="'
_AT_SOURCE = r"(?<!\S)@(?P<path>(?:\\\ |[^\s])+)"
_at: re.Pattern[str] | None = None
#: what may follow a reference without being part of it: "see @calc.py."
_TRAILING = ".,;:!?)'\""


class PromptAttachments:
    """What a prompt's references attach: ``images`` and ``files`` (text
    blocks, each starting with :data:`FILE_BLOCK_START`), one line per
    attachment for the user (``shown``: ``[image: shot.png, 120 KB]``,
    ``[file: calc.py, 2 KB]``), and the references that could not be
    attached, one line each (``problems``)."""

    __slots__ = ("images", "files", "shown", "problems")

    def __init__(self) -> None:  # a plain class: no dataclass to build at start-up
        self.images: list[Image] = []
        self.files: list[Text] = []
        self.shown: list[str] = []
        self.problems: list[str] = []


def _stat(p: Path) -> os.stat_result | None:
    """``os.stat``, or None when there is nothing there (or the name cannot
    be a file: too long, a NUL byte)."""
    try:
        return p.stat()
    except (OSError, ValueError):
        return None


def _resolve(ref: str, base: Path) -> Path:
    p = Path(os.path.expanduser(ref))
    return p if p.is_absolute() else base / p


def prompt_attachments(text: str, cwd: str | os.PathLike[str] | None = None) -> PromptAttachments:
    """Every image file and ``@file`` a prompt names (see the module
    docstring), read; relative paths resolve against ``cwd``.  The same file
    named twice is attached once."""
    att = PromptAttachments()
    low = text.lower()
    named_image = any(s in low for s in _SUFFIXES)
    if not named_image and "@" not in text:  # the common case: no regex
        return att
    base = Path(cwd if cwd is not None else os.getcwd())
    seen: set[Path] = set()
    if named_image:
        _attach_images(text, base, att, seen)
    if "@" in text:
        _attach_files(text, base, att, seen)
    return att


def _attach_images(text: str, base: Path, att: PromptAttachments, seen: set[Path]) -> None:
    global _ref
    if _ref is None:
        _ref = re.compile(_REF_SOURCE, re.X | re.I)
    for m in _ref.finditer(text):
        p = _resolve(_path_of(m), base)
        if p in seen:
            continue
        st = _stat(p)
        if st is None or not stat.S_ISREG(st.st_mode):
            if m.group("at") is not None:
                att.problems.append(f"{p}: no such image file (sent as text)")
            continue
        seen.add(p)
        try:
            img = load_image(p)
        except ValueError as e:
            att.problems.append(f"{e} (sent as text)")
            continue
        att.images.append(img)
        att.shown.append(f"[image: {p.name}, {_shown_size(img)}]")


def _attach_files(text: str, base: Path, att: PromptAttachments, seen: set[Path]) -> None:
    global _at
    if _at is None:
        _at = re.compile(_AT_SOURCE)
    for m in _at.finditer(text):
        ref = m.group("path").replace("\\ ", " ")
        p, st = _resolve(ref, base), None
        while ref:  # "see @calc.py." names calc.py
            p = _resolve(ref, base)
            st = _stat(p)
            if st is not None or ref[-1] not in _TRAILING:
                break
            ref = ref[:-1]
        if st is None or ref.lower().endswith(_SUFFIXES) or p in seen:
            continue  # @someone, @property: plain text; an image: _attach_images
        seen.add(p)
        if stat.S_ISDIR(st.st_mode):
            att.problems.append(f"@{ref}: a directory, not attached (name files: @dir/file)")
        elif not stat.S_ISREG(st.st_mode):
            att.problems.append(f"@{ref}: not a regular file, not attached")
        else:
            try:
                block, shown = load_text_file(p, ref)
            except ValueError as e:
                att.problems.append(f"{e} (sent as text)")
                continue
            att.files.append(block)
            att.shown.append(shown)


def load_text_file(path: str | os.PathLike[str], name: str) -> tuple[Text, str]:
    """The text block attaching a text file (at most :data:`MAX_FILE_BYTES`
    of it, cut at a line end, with a note when cut) and the line that shows
    it to the user; ``ValueError`` naming the file when it cannot be read or
    is binary (it holds a NUL byte).  Bytes that are not UTF-8 become
    U+FFFD."""
    try:
        with open(path, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            data = f.read(MAX_FILE_BYTES + 1)
    except OSError as e:
        raise ValueError(f"{path}: cannot read: {e.strerror or e}") from None
    if b"\0" in data:
        raise ValueError(f"{path}: not a text file")
    size = max(size, len(data))
    cut = len(data) > MAX_FILE_BYTES
    if cut:
        data = data[:MAX_FILE_BYTES]
        end = data.rfind(b"\n")
        if end >= MAX_FILE_BYTES // 2:
            data = data[: end + 1]
    body = data.decode("utf-8", errors="replace")
    label = name.replace('"', "&quot;")
    note = ""
    shown = f"[file: {name}, {_bytes(len(data))}]"
    if cut:
        note = (
            f"[cut: the first {len(data):,} of the file's {size:,} bytes are attached; "
            "the rest is not]\n"
        )
        shown = f"[file: {name}, cut to the first {_bytes(len(data))} of {_bytes(size)}]"
    if body and not body.endswith("\n"):
        body += "\n"
    return Text(f'{FILE_BLOCK_START}{label}">\n{body}{note}</file>'), shown


def typed_text(msg: Message) -> str:
    """The text a user message's author typed: its text blocks, less the
    files attached to it (``@path``; see :data:`FILE_BLOCK_START`)."""
    texts = [b.text for b in msg.content if isinstance(b, Text)]
    return "".join(t for i, t in enumerate(texts) if i == 0 or not t.startswith(FILE_BLOCK_START))


def prompt_images(
    text: str, cwd: str | os.PathLike[str] | None = None
) -> tuple[str, list[Image], list[str]]:
    """``(text, images, problems)``: the images of :func:`prompt_attachments`
    alone (an ``@file`` of text is not read)."""
    att = PromptAttachments()
    low = text.lower()
    if any(s in low for s in _SUFFIXES):  # no image named: the common case, no regex
        _attach_images(text, Path(cwd if cwd is not None else os.getcwd()), att, set())
    return text, att.images, att.problems


# -- size, marker, token estimate ------------------------------------------------

#: What one image costs at most, in input tokens (Anthropic: about
#: width x height / 750, images scaled to at most ~1.15 megapixels; OpenAI's
#: high-detail tiles come to a similar figure).  Used when the size is unknown.
IMAGE_TOKENS_MAX = 1600


def image_size(img: Image) -> int:
    """The image's size in bytes (decoded from the base64 length)."""
    n = len(img.data_b64)
    return n * 3 // 4 - img.data_b64.count("=", max(0, n - 2))


def image_marker(img: Image) -> str:
    """How an image is shown where its data must not go (a terminal, a
    transcript): ``[image: image/png, 12 KB]``."""
    return f"[image: {img.media_type}, {_shown_size(img)}]"


def _shown_size(img: Image) -> str:
    size = image_size(img)
    return _bytes(size)


def _bytes(size: int) -> str:
    if size >= 1024 * 1024:
        return f"{size / (1024 * 1024):.1f} MB"
    return f"{size} B" if size < 1024 else f"{size / 1024:.0f} KB"


def _dimensions(img: Image) -> tuple[int, int] | None:
    """Width and height from a PNG or GIF header (None for other types)."""
    import base64
    import struct

    try:
        head = base64.b64decode(img.data_b64[:44])  # 33 bytes: the PNG IHDR
    except ValueError:
        return None
    if head.startswith(b"\x89PNG\r\n\x1a\n") and len(head) >= 24:
        w, h = struct.unpack(">II", head[16:24])
        return w, h
    if head[:6] in (b"GIF87a", b"GIF89a") and len(head) >= 10:
        w, h = struct.unpack("<HH", head[6:10])
        return w, h
    return None


def image_tokens(img: Image) -> int:
    """An estimate of the input tokens an image costs: width x height / 750
    (Anthropic's rule) when the header tells the size, at most
    :data:`IMAGE_TOKENS_MAX`, which is also the estimate when it does not."""
    dims = _dimensions(img)
    if dims is None:
        return IMAGE_TOKENS_MAX
    w, h = dims
    return max(1, min(IMAGE_TOKENS_MAX, (w * h + 749) // 750))


def check_images(images: tuple[Image, ...]) -> tuple[tuple[Image, ...], list[str]]:
    """A tool's images as they may be sent: ``(kept, notes)``.  An image
    whose data is not a PNG, JPEG, GIF or WebP, is over the size limit
    (:data:`MAX_IMAGE_B64`) or has a side over :data:`MAX_IMAGE_SIDE` is
    dropped with a note saying why (the API would reject it, and every later
    request of the session with it); a wrong media type is corrected from
    the data."""
    kept: list[Image] = []
    notes: list[str] = []
    for img in images:
        import base64  # here: most prompts have no image

        try:
            head = base64.b64decode(img.data_b64[:16])
        except ValueError:
            head = b""
        mt = media_type_of(head)
        if mt is None:
            notes.append(
                f"[image dropped: the {img.media_type} data is not a PNG, JPEG, GIF or WebP image]"
            )
            continue
        if mt != img.media_type:
            img = Image(mt, img.data_b64)
        if len(img.data_b64) > MAX_IMAGE_B64:
            notes.append(
                f"[image dropped: {img.media_type}, {_shown_size(img)}, "
                "over the 5 MiB (base64) limit]"
            )
            continue
        dims = _dimensions(img)
        if dims is not None and max(dims) > MAX_IMAGE_SIDE:
            notes.append(
                f"[image dropped: {dims[0]}x{dims[1]} pixels, over {MAX_IMAGE_SIDE} a side]"
            )
            continue
        kept.append(img)
    return tuple(kept), notes
