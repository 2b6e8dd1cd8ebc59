"""The campaign's report: stage × case → outcome, and the failures with their messages."""

from __future__ import annotations

from collections import Counter

from .judges import Result


def render(results: list[Result]) -> str:
    w = max(len(f"{r.stage}  {r.case}") for r in results) + 2
    lines = [f"{'stage  case':<{w}}{'outcome':<24}held"]
    for r in results:
        lines.append(f"{r.stage + '  ' + r.case:<{w}}{r.outcome:<24}{'yes' if r.held else 'NO'}")
    held = sum(r.held for r in results)
    lines.append("")
    lines.append(f"{len(results)} cases: {held} held, {len(results) - held} failed")
    by = Counter(r.outcome for r in results if not r.held)
    if by:
        lines.append("failures: " + ", ".join(f"{k} {v}" for k, v in by.most_common()))
    fails = [r for r in results if not r.held]
    if fails:
        lines.append("")
        lines.append("failures, with the first line of each message:")
        for r in fails:
            lines.append(f"- {r.stage} / {r.case}: {r.outcome} (expected {' | '.join(r.expect)})")
            if r.detail:
                lines.append(f"    {r.detail[:300]}")
            if r.message:
                lines.append(f"    > {r.message[:300]}")
    return "\n".join(lines)
