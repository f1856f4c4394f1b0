"""lasagna.common: the helpers every layer shares, each defined once.

- `digest`: canonical JSON and sha256 digests (of values, text, bytes, files, folders);
- `uri`: local path or fsspec URI (`file://` is local everywhere);
- `clock`: UTC timestamps;
- `version`: the lasagna version string.

Standard library only; may import nothing else from lasagna (everything may import it).
"""
