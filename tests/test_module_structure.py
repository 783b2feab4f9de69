"""Module structure: no import cycles in the package, and train orientation lives in the core.

The import graph counts every ``import`` / ``from ... import`` in a module, lazy ones
inside functions included (a lazy import hides a cycle from the interpreter, not from a
reader). Rendering and serialization read a train's orientation (R7) and the double to
satisfy next (R20, R21) from the rules core, once.
"""

from __future__ import annotations

import ast
import json
from pathlib import Path

import numpy as np
import pytest

import mtrain_env
from mtrain_env.mexican_train.core.rules import MexicanTrain
from mtrain_env.mexican_train.core.state import Phase

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("mtrain_env", "agents", "training")


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def import_graph() -> dict[str, set[str]]:
    """Module -> the package modules it imports (any depth in the file), by static reading."""
    files = {_module_name(p): p for pkg in PACKAGES for p in (ROOT / pkg).rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for name, path in files.items():
        is_package = path.name == "__init__.py"
        targets: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                targets.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    anchor = name.split(".")[: len(name.split(".")) - node.level + (1 if is_package else 0)]
                    base = ".".join([*anchor, *([base] if base else [])])
                targets.add(base)
                targets.update(f"{base}.{alias.name}" for alias in node.names)
        graph[name] = {t for t in targets if t in files and t != name}
    return graph


def find_cycle(graph: dict[str, set[str]], ignore_packages: bool = True) -> list[str] | None:
    """A cycle of module imports (packages' ``__init__`` re-exports left out), or None."""
    packages = {m for m in graph if any(other.startswith(m + ".") for other in graph)}
    edges = {m: {t for t in ts if not (ignore_packages and t in packages)} for m, ts in graph.items()}
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(m: str) -> list[str] | None:
        state[m] = 1
        stack.append(m)
        for t in sorted(edges.get(m, ())):
            if state.get(t) == 1:
                return [*stack[stack.index(t) :], t]
            if t not in state:
                found = visit(t)
                if found:
                    return found
        stack.pop()
        state[m] = 2
        return None

    for m in sorted(edges):
        if m not in state and not (ignore_packages and m in packages):
            found = visit(m)
            if found:
                return found
    return None


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set(), "c": {"a"}}) is None


def test_no_module_imports_another_in_a_cycle() -> None:
    graph = import_graph()
    assert "mtrain_env.mexican_train.core.rules" in graph["mtrain_env.mexican_train.render_image"]
    assert find_cycle(graph) is None


def test_render_image_does_not_import_render() -> None:
    graph = import_graph()
    assert "mtrain_env.mexican_train.render" not in graph["mtrain_env.mexican_train.render_image"]


@pytest.mark.parametrize("kwargs", [{}, {"satisfy_in_reverse_order": True, "num_players": 3, "max_pips": 9}])
def test_oriented_trains_chain_from_the_engine_r7_and_match_the_snapshot(kwargs: dict) -> None:
    env = mtrain_env.raw_env(**kwargs)
    env.reset(seed=11)
    game: MexicanTrain = env.game
    rng = np.random.default_rng(11)
    seen_head = 0
    while env.agents and env.state_obj.phase < Phase.ROUND_OVER:
        s = env.state_obj
        snap = json.loads(json.dumps(env.state_dict()))
        for t in range(game.width):
            tiles = game.oriented_train(s, t)
            assert len(tiles) == len(s.trains[t])
            end = s.engine
            for (a, b), i in zip(tiles, s.trains[t], strict=True):
                assert a == end and sorted((a, b)) == sorted(game.tiles.tiles[i])  # R7
                end = b
            assert end == s.ends[t]
            saved = snap["mexican_train"] if t == game.mexican else snap["trains"][t]
            assert saved == [list(p) for p in tiles]
        head = game.double_to_satisfy(s)
        if s.pending and s.phase == Phase.NORMAL:
            assert head == (s.pending[-1] if game.config.satisfy_in_reverse_order else s.pending[0])
            seen_head += 1
        else:
            assert head == -1
        env.step(int(rng.choice(env.legal_actions())))
    assert seen_head, "the game should have had a double to satisfy"
