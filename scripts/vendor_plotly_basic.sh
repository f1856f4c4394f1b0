#!/usr/bin/env bash
# Refresh the plotly.js the report page inlines: plotly's own basic bundle (bar, scatter,
# pie), from the npm package plotly.js-basic-dist-min at the plotly.js version the installed
# plotly Python package carries (tests/test_report_data.py checks the two agree). Run it
# after upgrading plotly; commit the two files it writes.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-/work/main/.venv/bin/python}
[ -x "$PY" ] || PY=.venv/bin/python
version=$("$PY" -c "import plotly.offline as o; print(o.get_plotlyjs_version())")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && npm pack --silent "plotly.js-basic-dist-min@$version" >/dev/null &&
  tar xzf "plotly.js-basic-dist-min-$version.tgz")
dest=lasagna/results/report/templates
cp "$tmp/package/plotly-basic.min.js" "$dest/plotly-basic.min.js"
cp "$tmp/package/LICENSE" "$dest/plotly-basic.LICENSE"
echo "vendored plotly.js basic v$version into $dest"
