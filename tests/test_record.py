"""``moc.record``: the immutable value types of ``moc`` (and of the command line) behave
as the standard library's frozen dataclasses they replace: hand-worked cases for each
feature, and a property test against an equivalent ``dataclasses.dataclass``."""
from __future__ import annotations

import dataclasses
import pickle
from typing import ClassVar

import pytest
from hypothesis import given, settings, strategies as st

from moc.errors import SDFError
from moc.graph import Actor, Channel
from moc.phases import InitialPhases
from moc.record import FrozenError, field, fields, is_record, record, replace


@record
class Point:
    x: int
    y: int = 0
    label: str = field(default="", compare=False, repr=False)
    scale: ClassVar[int] = 10


@record
class Bag:
    name: str
    items: list = field(default_factory=list)


@record
class Positive:
    value: int

    def __post_init__(self):
        if self.value <= 0:
            raise ValueError(f"not positive: {self.value}")
        object.__setattr__(self, "value", int(self.value))   # a normalised field


@record
class Base:
    a: int
    b: int = 2


@record
class Child(Base):
    c: int = 3
    a: int = 1                              # redefined: keeps its place


@record
class Other:
    x: int
    y: int = 0


def test_fields_in_order_from_the_annotations_without_class_variables():
    assert [f.name for f in fields(Point)] == ["x", "y", "label"]
    assert [f.name for f in fields(Point(1))] == ["x", "y", "label"]
    assert Point.scale == 10 and Point(1).scale == 10
    assert Point(1).y == 0 and Point(1, 2).y == 2 and Point(x=1, y=5).y == 5


def test_equality_and_hash_by_the_compared_fields():
    assert Point(1, 2) == Point(1, 2) and Point(1, 2) != Point(2, 1)
    assert Point(1, 2, "one") == Point(1, 2, "two")            # label: compare=False
    assert hash(Point(1, 2, "one")) == hash(Point(1, 2, "two")) == hash((1, 2))
    assert len({Point(1, 2), Point(1, 2), Point(2, 1)}) == 2
    assert Point(1, 0) != Other(1, 0)                          # another class: unequal
    assert Point(1) != (1, 0, "")
    with pytest.raises(TypeError):
        hash(Bag("b"))                                         # a list field: unhashable


def test_attributes_cannot_be_assigned_nor_deleted():
    p = Point(1, 2)
    with pytest.raises(FrozenError):
        p.x = 3
    with pytest.raises(AttributeError):                        # FrozenError is one
        del p.y
    with pytest.raises(FrozenError):
        p.new = 1
    assert (p.x, p.y) == (1, 2)


def test_replace_makes_a_changed_copy_through_post_init():
    p = Point(1, 2, "keep")
    q = replace(p, y=5)
    assert (q.x, q.y, q.label) == (1, 5, "keep") and (p.x, p.y) == (1, 2)
    assert replace(Positive(3), value=4.0).value == 4 and \
        type(replace(Positive(3), value=4.0).value) is int
    with pytest.raises(ValueError, match="not positive: -1"):
        replace(Positive(3), value=-1)
    with pytest.raises(TypeError, match="unexpected keyword argument 'z'"):
        replace(p, z=1)
    # moc's own checks live on the types: a bad count is refused again on replace
    phases = InitialPhases(2, attrs={"exec": [1, 2]})
    assert replace(phases, attrs={"exec": (3, 4)}).attrs["exec"] == (3, 4)
    with pytest.raises(SDFError, match="gives 2 values for 3 phases"):
        replace(phases, count=3)


def test_post_init_runs_once_per_record_made():
    with pytest.raises(ValueError):
        Positive(0)
    assert Positive(7.0).value == 7


def test_a_default_factory_gives_each_record_its_own_value():
    a, b = Bag("a"), Bag("b")
    a.items.append(1)
    assert b.items == [] and a.items == [1]
    assert Actor("x").attrs is not Actor("y").attrs
    with pytest.raises(ValueError, match="mutable default"):
        @record
        class Shared:
            items: list = []


def test_inherited_fields_come_first_and_a_redefined_one_keeps_its_place():
    assert [f.name for f in fields(Child)] == ["a", "b", "c"]
    c = Child()
    assert (c.a, c.b, c.c) == (1, 2, 3)
    assert Child(9, 8, 7) == Child(a=9, b=8, c=7)
    assert Child(1, 2, 3) != Base(1, 2)
    assert repr(Child(4)) == "Child(a=4, b=2, c=3)"


def test_wrong_arguments_are_refused_as_a_call_would_be():
    with pytest.raises(TypeError, match="missing argument 'x'"):
        Point()
    with pytest.raises(TypeError, match="takes 3 positional arguments but 4"):
        Point(1, 2, "a", 4)
    with pytest.raises(TypeError, match="multiple values for argument 'x'"):
        Point(1, x=2)
    with pytest.raises(TypeError, match="without a default follows"):
        @record
        class Unordered:
            a: int = 0
            b: int


def test_repr_names_the_class_and_the_shown_fields():
    assert repr(Point(1, 2, "hidden")) == "Point(x=1, y=2)"
    assert repr(Bag("b", [1])) == "Bag(name='b', items=[1])"
    assert repr(Channel("c", "a", "b", prod=2)) == \
        "Channel(name='c', src='a', dst='b', prod=2, cons=1, delay=0, size=1, attrs={})"


def test_methods_a_class_defines_are_kept():
    @record
    class Named:
        name: str

        def __repr__(self):
            return f"<{self.name}>"

    assert repr(Named("n")) == "<n>" and Named("n") == Named("n")


def test_records_pickle_with_their_values_and_marks():
    p = Point(1, 2, "label")
    q = pickle.loads(pickle.dumps(p))
    assert q == p and q.label == "label" and type(q) is Point
    with pytest.raises(FrozenError):
        q.x = 0
    assert pickle.loads(pickle.dumps(Child(5))) == Child(5)
    # an attribute set past the fields (``moc.graph``'s bound mark) travels too
    actor = Actor("a", {"exec": 1}, origin=("f.sdf", 3))
    object.__setattr__(actor, "_bound", True)
    copy = pickle.loads(pickle.dumps(actor))
    assert copy == actor and copy._bound is True and copy.origin == ("f.sdf", 3)


def test_is_record():
    assert is_record(Point) and is_record(Point(1)) and is_record(Channel("c", "a", "b"))
    assert not is_record(object()) and not is_record(1)
    with pytest.raises(TypeError, match="not a record"):
        fields(1)


# the same three-field value type, as a record and as a frozen dataclass


@record
class R:
    a: object
    b: object = 0
    c: object = field(default=None, compare=False)


@dataclasses.dataclass(frozen=True)
class D:
    a: object
    b: object = 0
    c: object = dataclasses.field(default=None, compare=False)


#: hashable field values; floats without NaN (a tuple compares its items by identity
#: first, so a NaN field equals itself only when it is the same object, in both)
VALUES = st.one_of(st.integers(), st.floats(allow_nan=False), st.text(max_size=3),
                   st.none(), st.booleans(), st.tuples(st.integers(), st.text(max_size=2)))


@settings(deadline=None)
@given(st.tuples(VALUES, VALUES, VALUES), st.tuples(VALUES, VALUES, VALUES),
       st.dictionaries(st.sampled_from("abc"), VALUES, max_size=3))
def test_a_record_agrees_with_a_frozen_dataclass(one, two, changes):
    r1, r2, d1, d2 = R(*one), R(*two), D(*one), D(*two)
    assert (r1 == r2) == (d1 == d2) and (r1 != r2) == (d1 != d2)
    assert hash(r1) == hash(d1) and hash(r2) == hash(d2)
    assert repr(r1) == repr(d1).replace("D(", "R(", 1)
    changed_r, changed_d = replace(r1, **changes), dataclasses.replace(d1, **changes)
    assert [getattr(changed_r, f.name) for f in fields(changed_r)] == \
        [getattr(changed_d, f.name) for f in dataclasses.fields(changed_d)]
    assert (changed_r == r1) == (changed_d == d1)
    assert hash(changed_r) == hash(changed_d)
