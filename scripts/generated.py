"""What every generator in scripts/ does with the files it writes: rewrite them, or with
--check report the ones that differ from what it would write and exit 1."""
import os
import sys

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))


def read(path):
    """The text of `path`, relative to the package's root."""
    with open(os.path.join(ROOT, path)) as f:
        return f.read()


def update(tool, texts):
    """Writes each of `texts` (path relative to the root -> text) that differs from the file,
    or, with --check, exits 1 naming the files that differ."""
    check = "--check" in sys.argv[1:]
    stale = []
    for path, text in texts.items():
        if read(path) == text:
            continue
        if check:
            stale.append(path)
        else:
            with open(os.path.join(ROOT, path), "w") as f:
                f.write(text)
            print(f"wrote {path}")
    if stale:
        sys.exit(f"{tool}: out of date (run scripts/{tool}.py): " + ", ".join(stale))
