"""What DIVERGENCE's share does across the steps of a shared-memory reduction: an instruction model.

The DIVERGENCE value is thread instructions at work / (32 x warp instructions issued)
(advisor/criteria/divergence.py).  Across the classic reduction steps (interleaved addressing with
``if (tid % (2*s) == 0)``, the same with a strided index, sequential addressing with
``if (tid < s)``, the first add during the load, the last warp unrolled) this script counts, for
one block of 256 threads (8 warps), the warp instructions each warp issues and the lanes at work
in each, under the two ways a compiler builds the short ``if`` body:

* ``branch``: a branch around the body; a warp whose lanes all skip it issues nothing;
* ``predicated``: the body if-converted; every warp issues it, lanes predicated off count as idle
  (the predicated-on counters Decision V1 reads first).

It prints the share, the branch efficiency (warp-uniform branches / branches), the warp
instructions and the idle lane slots (32 x warp instructions - thread instructions at work).  The
instruction counts per step are a model (a SASS-like instruction count per source line, listed in
:data:`COSTS`, :data:`CONDITION` and :data:`BODY`), not a measurement; docs/criteria.md
("DIVERGENCE across a tuning step") sets its figures beside the shares a real series measured.
Run: ``python benchmarks/reduction_lanes.py``.
"""

from __future__ import annotations

from dataclasses import dataclass

BLOCK = 256
WARP = 32

#: warp instructions per source construct (a SASS-like count): thread ids, load, store to shared
#: memory and barrier; the first add during the load; per loop step the loop control (its
#: back-edge a warp-uniform branch) and barrier; the branch around the body with its
#: reconvergence pair (BSSY/BSYNC); the final ``if (tid == 0)`` and the store of the block's sum;
#: one step of the unrolled last warp
COSTS = {
    "prologue": 6,
    "first_add": 4,
    "step": 4,
    "branch": 3,
    "reconverge": 1,
    "epilogue": 2,
    "store": 3,
    "unrolled_step": 5,
}
#: the condition (an unsigned remainder by a variable takes about 13 instructions)
CONDITION = {"interleaved": 13, "strided": 2, "sequential": 0}
#: the body: two shared loads, an add, a shared store and its index arithmetic
BODY = {"interleaved": 5, "strided": 6, "sequential": 5}


@dataclass
class Count:
    warp_inst: int = 0
    thread_inst: int = 0
    branches: int = 0
    divergent: int = 0

    def issue(self, n: int, lanes_on: int, lanes_issued: int | None = None) -> None:
        """``n`` instructions with ``lanes_on`` lanes at work, issued when ``lanes_issued``
        (default ``lanes_on``) lanes take the path."""
        if (lanes_on if lanes_issued is None else lanes_issued) > 0:
            self.warp_inst += n
            self.thread_inst += n * lanes_on

    def branch(self, lanes_taking: int) -> None:
        self.branches += 1
        self.divergent += 0 < lanes_taking < WARP

    @property
    def share(self) -> float:
        return self.thread_inst / (WARP * self.warp_inst)

    @property
    def uniform(self) -> float:
        return 1.0 - self.divergent / self.branches

    @property
    def idle_slots(self) -> int:
        return WARP * self.warp_inst - self.thread_inst


def _active(kind: str, tid: int, s: int) -> bool:
    if kind == "interleaved":
        return tid % (2 * s) == 0
    if kind == "strided":
        return 2 * s * tid < BLOCK
    return tid < s


def reduction(kind: str, body: str, first_add: bool = False, unroll: bool = False) -> Count:
    """One block's counts; ``kind`` interleaved / strided / sequential, ``body`` branch or
    predicated."""
    count = Count()
    halving = [BLOCK // 2 >> k for k in range(8)]
    steps = halving if kind == "sequential" else [1 << k for k in range(8)]
    for w in range(BLOCK // WARP):
        tids = range(w * WARP, (w + 1) * WARP)
        count.issue(COSTS["prologue"] + (COSTS["first_add"] if first_add else 0), WARP)
        for s in steps:
            if unroll and s <= WARP:
                break
            count.issue(COSTS["step"], WARP)
            count.branch(WARP)  # the loop's back-edge
            active = sum(_active(kind, t, s) for t in tids)
            if body == "predicated":
                count.issue(CONDITION[kind] + 1, WARP)
                count.issue(BODY[kind], active, WARP)  # every warp issues the body
            else:
                count.issue(CONDITION[kind] + COSTS["branch"], WARP)
                count.branch(active)
                count.issue(BODY[kind], active)
                count.issue(COSTS["reconverge"], WARP)
        if unroll:
            count.issue(COSTS["branch"], WARP)
            count.branch(WARP if w == 0 else 0)
            if w == 0:  # six unrolled steps (32 .. 1), all 32 lanes at work
                count.issue(6 * COSTS["unrolled_step"], WARP)
        count.issue(COSTS["epilogue"], WARP)
        count.branch(1 if w == 0 else 0)
        count.issue(COSTS["store"], 1 if w == 0 else 0)
    return count


STEPS = (
    ("interleaved, tid % (2*s)", "interleaved", False, False),
    ("interleaved, strided index", "strided", False, False),
    ("sequential addressing", "sequential", False, False),
    ("+ first add during load", "sequential", True, False),
    ("+ last warp unrolled", "sequential", True, True),
)


def main() -> None:
    for body in ("branch", "predicated"):
        print(f"body compiled as: {body}")
        print(f"  {'step':28} {'share':>6} {'branch eff':>10} {'warp inst':>9} {'idle slots':>10}")
        for label, kind, first_add, unroll in STEPS:
            c = reduction(kind, body, first_add, unroll)
            print(
                f"  {label:28} {c.share:6.2f} {c.uniform:10.2f} {c.warp_inst:9d} {c.idle_slots:10d}"
            )


if __name__ == "__main__":
    main()
