"""What the outputs show, as plain values: the report (`build`), its predictions, roofline,
timeline and streams sections, the version comparison, the `--per-file` batch, the CI gates and
`inspect`'s summary.  Nothing here writes markup; :mod:`advisor.render` lays these values out."""
