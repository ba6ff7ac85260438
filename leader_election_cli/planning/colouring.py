"""The fewest colours for a set of vertices under conflicts, exactly where a time limit allows. Pure, no I/O.

The conflicts: edges (two vertices that never share a colour), limits (at most k of a set in one colour,
2 <= k < the set's size) and a cap on the vertices of a colour. `colour` starts from a greedy colouring
(DSatur: the vertex with the most colours closed to it first, into the first colour still open to it), which is
always a valid answer, then asks CP-SAT for fewer colours within the time limit, the greedy colouring as its
hint. The model: x[v, c] (vertex v has colour c, c below the greedy count), y[c] (colour c is used), each vertex
one colour, an edge's ends never both in c, a limit's set at most k in c, at most `cap` in c; minimise the
colours used. Symmetry breaking: the colours are used in order (y[c] >= y[c+1]) and the vertices of a clique of
edges take colours 0, 1, ... (every colouring can be renamed so).

Limits go into the model lazily: first those the greedy colouring fills to k, then those a solution breaks,
and the model is solved again (at most LIMITS_ADDED a time, the most broken first; the time limit counts the
model's building). A model with fewer constraints can only need fewer colours, so its bound is a bound of the
whole problem, and its optimum, once it breaks no limit, is the optimum. The lower bound is the largest of:
CP-SAT's objective bound, the clique (found greedily; its vertices pairwise in conflict), for each limit
ceil(size / k), and ceil(vertices / cap).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

WORKERS = 8  # CP-SAT's portfolio of search strategies; fewer loses its strongest ones
LIMITS_ADDED = 2000  # broken limits added to the model a round, the most broken first (each one per colour)


@dataclass(frozen=True)
class Conflicts:
    """What may not share a colour: `edges` (u, v) with u < v; `limits` (members, k): at most k of the members
    in one colour, 2 <= k < len(members); `cap`: at most that many vertices a colour (None: no cap)."""

    vertices: tuple[int, ...]
    edges: frozenset[tuple[int, int]]
    limits: tuple[tuple[frozenset[int], int], ...]
    cap: int | None = None


@dataclass(frozen=True)
class Colouring:
    """Colour classes (each a tuple of vertices), a lower bound on their count for any valid colouring, and the
    clique of edges found (pairwise conflicting vertices: one colour each)."""

    classes: tuple[tuple[int, ...], ...]
    lower_bound: int
    clique: tuple[int, ...]


def colour(conflicts: Conflicts, time_limit_s: float) -> Colouring:
    """The fewest colours found within `time_limit_s` (module docstring); `lower_bound == len(classes)` when
    proven minimal."""
    started = time.monotonic()
    neighbours = _neighbours(conflicts)
    best = dsatur(conflicts, neighbours)
    clique = greedy_clique(conflicts.vertices, neighbours)
    lower = max([len(clique), *(math.ceil(len(m) / k) for m, k in conflicts.limits),
                 math.ceil(len(conflicts.vertices) / conflicts.cap) if conflicts.cap else 0])
    active = _broken(best, conflicts.limits, full=True)[:LIMITS_ADDED]
    deadline = started + time_limit_s
    while lower < len(best) and time.monotonic() < deadline - 0.05:
        found, bound, optimal = _solve(conflicts, active, best, clique, deadline)
        lower = max(lower, bound)
        broken = _broken(found, conflicts.limits) if found is not None else []
        if found is not None and not broken and len(found) < len(best):
            best = found
        if not broken:
            if optimal and found is not None:
                lower = max(lower, len(found))
            break
        active += broken[:LIMITS_ADDED]
    return Colouring(tuple(tuple(sorted(c)) for c in best), min(lower, len(best)), tuple(sorted(clique)))


def dsatur(conflicts: Conflicts, neighbours: dict[int, int] | None = None) -> list[list[int]]:
    """A greedy colouring: the vertex with the most colours closed to it (by edges, full limits) next, ties to the
    most edges, then the most limits, then the smallest id; it takes the first colour open to it and not full."""
    neighbours = neighbours if neighbours is not None else _neighbours(conflicts)
    within: dict[int, list[int]] = {v: [] for v in conflicts.vertices}
    for i, (members, _) in enumerate(conflicts.limits):
        for v in members:
            within[v].append(i)
    counts: list[dict[int, int]] = [{} for _ in conflicts.limits]
    closed: dict[int, set[int]] = {v: set() for v in conflicts.vertices}
    degree = {v: neighbours[v].bit_count() for v in conflicts.vertices}
    classes: list[list[int]] = []
    left = set(conflicts.vertices)
    while left:
        v = max(left, key=lambda u: (len(closed[u]), degree[u], len(within[u]), -u))
        left.remove(v)
        c = next((c for c in range(len(classes)) if c not in closed[v]
                  and (conflicts.cap is None or len(classes[c]) < conflicts.cap)), len(classes))
        if c == len(classes):
            classes.append([])
        classes[c].append(v)
        for u in _bits(neighbours[v], conflicts.vertices):
            closed[u].add(c)
        for i in within[v]:
            counts[i][c] = counts[i].get(c, 0) + 1
            if counts[i][c] == conflicts.limits[i][1]:
                for u in conflicts.limits[i][0]:
                    closed[u].add(c)
    return classes


def greedy_clique(vertices: tuple[int, ...], neighbours: dict[int, int]) -> list[int]:
    """A large clique of edges: from each vertex (most edges first, while it could still beat the best), add the
    candidate with the most neighbours among the candidates left."""
    best: list[int] = []
    for seed in sorted(vertices, key=lambda v: (-neighbours[v].bit_count(), v)):
        if neighbours[seed].bit_count() + 1 <= len(best):
            break
        clique, candidates = [seed], neighbours[seed]
        while candidates:
            v = max(_bits(candidates, vertices), key=lambda u: ((neighbours[u] & candidates).bit_count(), -u))
            clique.append(v)
            candidates &= neighbours[v]
        if len(clique) > len(best):
            best = clique
    return best


def _solve(conflicts: Conflicts, limits: list[tuple[frozenset[int], int]], hint: list[list[int]],
           clique: list[int], deadline: float) -> tuple[list[list[int]] | None, int, bool]:
    """CP-SAT over the edges, the cap and `limits`, with at most len(hint) colours, until `deadline` (monotonic
    time; building the model counts): (the classes found or None, the objective's bound, whether proven optimal).
    OR-Tools is imported here, when a model is needed (0.4 s: every `roll` and `can-stop` would pay it)."""
    from ortools.sat.python import cp_model

    colours = range(len(hint))
    model = cp_model.CpModel()
    x = {(v, c): model.NewBoolVar(f"x{v}_{c}") for v in conflicts.vertices for c in colours}
    used = [model.NewBoolVar(f"y{c}") for c in colours]
    for v in conflicts.vertices:
        model.AddExactlyOne(x[v, c] for c in colours)
    for c in colours:
        if time.monotonic() > deadline:
            return None, 0, False
        off = {v: x[v, c].Not() for v in conflicts.vertices}
        for v in conflicts.vertices:
            model.AddImplication(x[v, c], used[c])
        for u, v in conflicts.edges:
            model.AddBoolOr([off[u], off[v]])
        for members, k in limits:
            model.Add(cp_model.LinearExpr.Sum([x[v, c] for v in members]) <= k)
        if conflicts.cap is not None:
            model.Add(cp_model.LinearExpr.Sum([x[v, c] for v in conflicts.vertices]) <= conflicts.cap)
        if c:
            model.AddImplication(used[c], used[c - 1])
    # The clique's vertices take colours 0, 1, ... in the model and in the hint (renamed to match).
    rename = {hint_colour: i for i, v in enumerate(clique)
              for hint_colour, members in enumerate(hint) if v in members}
    free = [c for c in colours if c not in rename.values()]
    rename.update(zip([c for c in colours if c not in rename], free, strict=True))
    for i, v in enumerate(clique):
        model.Add(x[v, i] == 1)
    for c, members in enumerate(hint):
        for v in conflicts.vertices:
            model.AddHint(x[v, rename[c]], v in members)
        model.AddHint(used[rename[c]], True)
    model.Minimize(sum(used))
    solver = cp_model.CpSolver()
    solver.parameters.max_time_in_seconds = max(deadline - time.monotonic(), 0.01)
    solver.parameters.num_workers = WORKERS
    status = solver.Solve(model)
    bound = math.ceil(solver.BestObjectiveBound() - 1e-6)
    if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        return None, bound, False
    classes = [[v for v in conflicts.vertices if solver.Value(x[v, c])] for c in colours]
    return [c for c in classes if c], bound, status == cp_model.OPTIMAL


def _broken(classes: list[list[int]], limits: tuple[tuple[frozenset[int], int], ...], full: bool = False
            ) -> list[tuple[frozenset[int], int]]:
    """The limits the classes break (`full`: those they fill to k), the most broken first."""
    sets = [frozenset(c) for c in classes]
    excess = [(max((len(members & c) for c in sets), default=0) - k, members, k) for members, k in limits]
    return [(members, k) for over, members, k in sorted(excess, key=lambda e: -e[0]) if over > (-1 if full else 0)]


def _neighbours(conflicts: Conflicts) -> dict[int, int]:
    """Each vertex's neighbours by edges, as a bit set over the vertices' positions (bit i: vertices[i])."""
    position = {v: i for i, v in enumerate(conflicts.vertices)}
    neighbours = dict.fromkeys(conflicts.vertices, 0)
    for u, v in conflicts.edges:
        neighbours[u] |= 1 << position[v]
        neighbours[v] |= 1 << position[u]
    return neighbours


def _bits(mask: int, vertices: tuple[int, ...]) -> list[int]:
    """The vertices of a bit set."""
    found = []
    while mask:
        low = mask & -mask
        found.append(vertices[low.bit_length() - 1])
        mask ^= low
    return found
