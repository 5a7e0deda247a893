"""Records: immutable value types with named fields (a result, an actor, an option kind).

``@record`` over a class with annotated fields gives it what ``@dataclass(frozen=True)``
would for the uses here: ``__init__`` taking the fields in order (defaults, a
:func:`field` with ``default_factory``, ``compare`` or ``repr`` off), then
``__post_init__`` if the class has one; equality and hash by the compared fields;
``Name(field=value, ...)`` as repr; attributes that cannot be assigned
(:class:`FrozenError`); fields inherited from a record base first.  :func:`replace`
makes a changed copy (through ``__init__``, so ``__post_init__`` checks it again),
:func:`fields` lists the fields.  Records pickle as plain objects do.

Why not :mod:`dataclasses`: start-up.  Its import brings :mod:`inspect` (42 million
instructions, about 10 ms), and each frozen class it makes compiles its generated
methods with ``exec`` (4 million a class of five fields; 14 classes on the path of
``mapeval analyse``).  A record class costs a twentieth of that: every record shares
the functions below, which read the class's field list.  Records (with
:mod:`typing` left out too) took ``mapeval analyse`` of a small SDF3 file from 287 to
183 million instructions (``docs/notes.md``).
"""
from __future__ import annotations

import sys
from operator import attrgetter

__all__ = ["record", "field", "fields", "replace", "is_record", "Field", "FrozenError"]

_MISSING = object()
#: the class attribute holding a record's fields, in ``__init__`` order
_FIELDS = "__record_fields__"


class FrozenError(AttributeError):
    """An attribute of a record was assigned or deleted."""


class Field:
    """One field: its ``name``, ``default`` or ``default_factory`` (``_MISSING`` when
    there is none), and whether it takes part in equality and hash (``compare``) and in
    the repr (``repr``)."""

    __slots__ = ("name", "default", "default_factory", "compare", "repr")

    def __init__(self, default=_MISSING, default_factory=_MISSING, compare=True, repr=True):
        if default is not _MISSING and default_factory is not _MISSING:
            raise ValueError("a field takes a default or a default_factory, not both")
        self.name = None
        self.default = default
        self.default_factory = default_factory
        self.compare = compare
        self.repr = repr

    def __repr__(self):
        return f"Field(name={self.name!r})"


def field(*, default=_MISSING, default_factory=_MISSING, compare: bool = True,
          repr: bool = True) -> Field:
    """A field with a default (or a ``default_factory`` called for each new record) or
    left out of equality and hash (``compare=False``) or of the repr (``repr=False``)."""
    return Field(default, default_factory, compare, repr)


def _is_class_var(annotation) -> bool:
    if isinstance(annotation, str):     # under ``from __future__ import annotations``
        return annotation.startswith(("ClassVar", "typing.ClassVar", "t.ClassVar"))
    typing = sys.modules.get("typing")  # a ClassVar object exists only once it is imported
    return typing is not None and (annotation is typing.ClassVar or
                                   getattr(annotation, "__origin__", None) is typing.ClassVar)


def record(cls):
    """Make ``cls`` a record (see the module): its fields are those of its record bases,
    then its own annotations in order (``ClassVar`` ones left out).  Methods the class
    defines itself (``__repr__``, ``__eq__``) are kept.  A subclass that adds fields or
    a ``__post_init__`` is decorated too."""
    found = {}
    for base in reversed(cls.__mro__[1:]):
        for f in base.__dict__.get(_FIELDS, ()):
            found[f.name] = f
    for name, annotation in cls.__dict__.get("__annotations__", {}).items():
        if _is_class_var(annotation):
            continue
        value = cls.__dict__.get(name, _MISSING)
        f = value if isinstance(value, Field) else Field(value)
        if isinstance(value, Field):
            if f.default is _MISSING:
                delattr(cls, name)
            else:
                setattr(cls, name, f.default)
        if f.default is not _MISSING and type(f.default).__hash__ is None:
            raise ValueError(f"{cls.__qualname__}.{name}: mutable default "
                             f"{type(f.default).__name__}, use default_factory")
        f.name = name
        found[name] = f
    own = tuple(found.values())
    required_after = [f.name for i, f in enumerate(own) if _required(f) and
                      any(not _required(g) for g in own[:i])]
    if required_after:
        raise TypeError(f"{cls.__qualname__}: field '{required_after[0]}' without a "
                        "default follows one with a default")
    setattr(cls, _FIELDS, own)
    cls._record_names = tuple(f.name for f in own)
    cls._record_key = staticmethod(_key_of(tuple(f.name for f in own if f.compare)))
    cls._record_post_init = getattr(cls, "__post_init__", None)
    for name, method in (("__init__", _init), ("__repr__", _repr),
                         ("__setattr__", _frozen), ("__delattr__", _frozen)):
        if name not in cls.__dict__:
            setattr(cls, name, method)
    if "__eq__" not in cls.__dict__:
        cls.__eq__ = _eq
        if "__hash__" not in cls.__dict__:
            cls.__hash__ = _hash
    return cls


def _required(f: Field) -> bool:
    return f.default is _MISSING and f.default_factory is _MISSING


def _init(self, *args, **kwargs):
    cls = type(self)
    names = cls._record_names
    state = self.__dict__
    if len(args) == len(names) and not kwargs:
        state.update(zip(names, args))
    else:
        if len(args) > len(names):
            raise TypeError(f"{cls.__qualname__}() takes {len(names)} positional "
                            f"arguments but {len(args)} were given")
        state.update(zip(names, args))
        for f in getattr(cls, _FIELDS)[len(args):]:
            value = kwargs.pop(f.name, _MISSING)
            if value is _MISSING:
                if f.default is not _MISSING:
                    value = f.default
                elif f.default_factory is not _MISSING:
                    value = f.default_factory()
                else:
                    raise TypeError(f"{cls.__qualname__}() missing argument '{f.name}'")
            state[f.name] = value
        if kwargs:
            name = next(iter(kwargs))
            raise TypeError(f"{cls.__qualname__}() got "
                            + (f"multiple values for argument '{name}'" if name in names
                               else f"an unexpected keyword argument '{name}'"))
    if cls._record_post_init is not None:
        cls._record_post_init(self)


def _frozen(self, name, *value):
    raise FrozenError(f"cannot set or delete '{name}': a {type(self).__qualname__} "
                      "is immutable")


def _key_of(names: tuple[str, ...]):
    """The tuple of a record's compared fields (as a dataclass compares and hashes)."""
    if len(names) > 1:
        return attrgetter(*names)       # the tuple made in C
    if names:
        get = attrgetter(names[0])
        return lambda record: (get(record),)
    return lambda record: ()


def _eq(self, other):
    if other.__class__ is not self.__class__:
        return NotImplemented
    key = self._record_key
    return key(self) == key(other)


def _hash(self):
    return hash(self._record_key(self))


def _repr(self):
    state = self.__dict__
    shown = ", ".join(f"{f.name}={state[f.name]!r}" for f in getattr(type(self), _FIELDS)
                      if f.repr)
    return f"{type(self).__qualname__}({shown})"


def is_record(obj) -> bool:
    """Whether ``obj`` is a record or a record class."""
    return hasattr(obj, _FIELDS)


def fields(obj) -> tuple[Field, ...]:
    """The fields of record (or record class) ``obj``, in order."""
    try:
        return getattr(obj, _FIELDS)
    except AttributeError:
        raise TypeError(f"{obj!r} is not a record") from None


def replace(obj, /, **changes):
    """A copy of record ``obj`` with ``changes`` (field name -> value), made by its
    ``__init__`` (hence checked again by ``__post_init__``)."""
    state = obj.__dict__
    for f in fields(obj):
        if f.name not in changes:
            changes[f.name] = state[f.name]
    return type(obj)(**changes)
