"""SDF3 ``csdf`` files written for the tests in the shape Kiter reads and writes (one
processor type ``p``; its ``a;b`` initialisation phases where a value's text has them)."""


def _text(value) -> str:
    """A rate or time as the file holds it: text as it is, a sequence of phases
    joined by commas."""
    return value if isinstance(value, str) else ",".join(map(str, value))


def kiter_xml(actors, channels) -> str:
    """``actors`` {name: execution times (text, or one number per phase)}, ``channels``
    [(name, src, dst, rates produced, rates consumed, initial tokens)], rates as text or
    one number per phase."""
    ports = {a: [] for a in actors}
    for name, src, dst, prod, cons, _ in channels:
        ports[src].append(f'<port name="o_{name}" type="out" rate="{_text(prod)}"/>')
        ports[dst].append(f'<port name="i_{name}" type="in" rate="{_text(cons)}"/>')
    body = [f'<actor name="{a}" type="{a}">{"".join(ports[a])}</actor>' for a in actors]
    body += [f'<channel name="{n}" srcActor="{s}" srcPort="o_{n}" dstActor="{d}" '
             f'dstPort="i_{n}" initialTokens="{t}"/>' for n, s, d, _, _, t in channels]
    props = [f'<actorProperties actor="{a}"><processor type="p" default="true">'
             f'<executionTime time="{_text(times)}"/></processor></actorProperties>'
             for a, times in actors.items()]
    return ('<?xml version="1.0"?>\n<sdf3 type="csdf" version="1.0">'
            '<applicationGraph name="g"><csdf name="g" type="g">\n' + "\n".join(body) +
            '\n</csdf><csdfProperties>' + "".join(props) +
            '</csdfProperties></applicationGraph></sdf3>\n')
