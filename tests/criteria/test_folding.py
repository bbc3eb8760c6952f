"""Folding a trace of many kernels: the kernels kept are those with the most GPU time, the
restricted profile holds their rows only (and only their names as categories), and the GPU time
of each name is the same whichever way its position is found."""

from __future__ import annotations

import numpy as np
import pandas as pd

from advisor.criteria.engine import folding
from advisor.profile import Profile, Provenance

PROV = Provenance(path="t.csv", format="test", profiler="nsys")

#: kernel -> durations of its launches (ns)
LAUNCHES = {
    "e": [5.0],
    "a": [1.0, 1.0],
    "d": [40.0],
    "b": [10.0, 20.0, 5.0],
    "c": [2.0],
}


def _profile() -> Profile:
    names = [n for n, times in LAUNCHES.items() for _ in times]
    times = [t for ts in LAUNCHES.values() for t in ts]
    frame = pd.DataFrame({"name": [*names, None], "duration_ns": [*times, 7.0]})
    return Profile(provenance=(PROV,), launches=frame)


def test_the_kernels_with_the_most_time_are_kept_with_their_rows_only() -> None:
    profile = _profile()
    scored, folded = folding.fold(profile, limit=2)
    assert folded is not None
    assert (folded.kernels, folded.launches, folded.duration_ns) == (3, 4, 9.0)  # a, c, e
    launches = scored.launches
    assert launches["name"].tolist()[:4] == ["d", "b", "b", "b"]
    assert launches["name"].isna().tolist() == [False] * 4 + [True]  # a row without a name stays
    assert launches["duration_ns"].tolist() == [40.0, 10.0, 20.0, 5.0, 7.0]
    # the restricted profile's names are the kept ones, not every name of the trace
    assert list(launches["name"].cat.categories) == ["b", "d"]
    assert scored.kernel_names() == ["b", "d"]


def test_nothing_is_folded_within_the_limit() -> None:
    profile = _profile()
    scored, folded = folding.fold(profile, limit=5)
    assert scored is profile and folded is None


def test_per_name_figures_do_not_depend_on_how_names_are_found() -> None:
    profile = _profile()
    names = profile.kernel_names()
    direct = folding._per_name(profile, names)  # the categories are the names: read in order
    expected_time = [sum(LAUNCHES[n]) for n in names]
    expected_launches = [len(LAUNCHES[n]) for n in names]
    assert direct[0].tolist() == expected_launches
    assert direct[1].tolist() == expected_time
    # categories no row uses (rows taken away): the names are looked up one by one
    fewer = profile.launches[profile.launches["name"] != "c"]
    assert len(fewer["name"].cat.categories) == len(names)
    thinned = Profile(provenance=(PROV,), launches=profile.launches)
    thinned.launches = fewer.reset_index(drop=True)
    kept = [n for n in names if n != "c"]
    launches, time_ns = folding._per_name(thinned, kept)
    assert launches.tolist() == [len(LAUNCHES[n]) for n in kept]
    assert np.allclose(time_ns, [sum(LAUNCHES[n]) for n in kept])
