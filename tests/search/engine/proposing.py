"""What the proposer tests share: driving a proposer as a study loop would, without one."""

import math

from search.engine.sampling import Proposal


def drive(p, n):
    """n accepted proposals of proposer `p`, each told a value growing with its size
    (rejections are told as such and not counted)."""
    out = []
    while len(out) < n:
        q = p.ask()
        if isinstance(q, Proposal):
            p.tell(q, 10.0 + math.log10(q.params), q.params)
            out.append(q)
        else:
            p.reject(q)
    return out
