"""Reading `rlenvs-train`'s config: YAML (strict about YAML 1.1's surprises), dotted overrides
read as YAML, coercion into the schema's dataclasses (rlenvs_train.config.schema) collecting
every problem with its dotted key and a suggestion for a mistyped one, the machine's checks
(rlenvs_train.config.machine) in the same error, and writing a resolved config back."""

from __future__ import annotations

import dataclasses
import difflib
import functools
import math
import os
import re
import types
import typing
from collections.abc import Hashable, Mapping, Sequence
from typing import Any

import yaml

from rlenvs.files import atomic_path
from rlenvs_train.config.machine import environment_problems
from rlenvs_train.config.schema import ConfigError, TrainConfig, cross_field_problems

# --- loading ----------------------------------------------------------------------------------


def load_config(
    path: str | os.PathLike[str] | None = None, overrides: Sequence[str] = (), *, check_machine: bool = False
) -> TrainConfig:
    """The config in the YAML file at `path` (None: the defaults) with `overrides` applied on
    top, checked against the schema once. Overrides are `dotted.key=value` strings whose value
    is read as YAML (`trainer.max_steps=null`, `data.train_data='[a.parquet, b.parquet]'`).
    Raises ConfigError listing every problem. By default it does not look at the machine (so
    a config can be checked on a laptop and run on a cluster); `check_machine=True` adds
    `check_environment`'s problems (env id, model path, files, packages) to the same error,
    which is what `rlenvs-train` does: a run with a typo in a key and a wrong env id takes
    one try to fix, not two."""
    raw, source = _read(path, overrides)
    config, problems, bad = _parse(raw, overrides)
    if check_machine:
        problems.extend(environment_problems(config, bad))
    if problems:
        raise ConfigError(problems, source)
    return config


class _StrictLoader(yaml.SafeLoader):
    """YAML as a config should be read. A key given twice is an error (PyYAML keeps the last:
    a `learning_rate` written twice silently became 10.0). Only true and false are booleans:
    YAML 1.1 also reads yes, no, on, off, y and n as booleans (`split: no` became False), and
    each of those is an error that says to write true/false or to quote the text."""

    yaml_implicit_resolvers = {
        first: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:bool"]
        for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
    }

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict:
        seen: dict[Any, yaml.Mark] = {}
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=True)
            if isinstance(key, Hashable) and key in seen:
                raise yaml.constructor.ConstructorError(
                    None,
                    None,
                    f"the key {key!r} is given twice (first on line {seen[key].line + 1})",
                    key_node.start_mark,
                )
            if isinstance(key, Hashable):
                seen[key] = key_node.start_mark
        return super().construct_mapping(node, deep=deep)

    def construct_yaml11_bool(self, node: yaml.ScalarNode) -> Any:
        raise yaml.constructor.ConstructorError(
            None,
            None,
            f"{node.value!r} is a boolean only in YAML 1.1: write true or false for a flag, or quote it "
            f"('{node.value}') for the text",
            node.start_mark,
        )


_StrictLoader.add_implicit_resolver(
    "tag:yaml.org,2002:bool", re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), list("tTfF")
)
_StrictLoader.add_implicit_resolver(
    "!yaml11-bool", re.compile(r"^(?:yes|Yes|YES|no|No|NO|on|On|ON|off|Off|OFF|y|Y|n|N)$"), list("yYnNoO")
)
_StrictLoader.add_constructor("!yaml11-bool", _StrictLoader.construct_yaml11_bool)


def _load_yaml(text: Any) -> Any:
    """`text` (a string or an open file) as `_StrictLoader` reads it. Raises yaml.YAMLError,
    and ValueError for what PyYAML cannot build (an integer of more than 4,300 digits) or a
    nesting too deep to build."""
    try:
        return yaml.load(text, Loader=_StrictLoader)
    except RecursionError:
        raise ValueError("the YAML is nested too deeply to read") from None
    except ValueError as e:
        if "integer string conversion" in str(e):  # Python's cap on int() of long digit strings
            raise ValueError("a number has more than 4,300 digits; quote it if it is text") from None
        raise


def _read(path: str | os.PathLike[str] | None, overrides: Sequence[str]) -> tuple[Any, str]:
    """The YAML at `path` (an empty mapping for None or an empty file) and the name errors give it."""
    raw: Any = {}
    source = "config"
    if path is not None:
        source = f"config {os.fspath(path)}"
        try:
            with open(path, encoding="utf-8") as f:
                raw = _load_yaml(f)
        except FileNotFoundError:
            raise ConfigError([f"config file not found: {os.fspath(path)}"], source) from None
        except IsADirectoryError:
            raise ConfigError([f"{os.fspath(path)} is a folder: --config takes a YAML file"], source) from None
        except PermissionError:
            raise ConfigError([f"{os.fspath(path)} cannot be read (permission denied)"], source) from None
        except UnicodeDecodeError as e:
            raise ConfigError(
                [f"not UTF-8 text (byte {e.start} is {e.object[e.start : e.start + 1]!r}): save the config as UTF-8"],
                source,
            ) from None
        except yaml.YAMLError as e:
            raise ConfigError([f"not valid YAML: {_yaml_error(e)}"], source) from None
        except ValueError as e:
            raise ConfigError([f"not a config rlenvs-train can read: {_one_line(e)}"], source) from None
        if raw is None:  # an empty file (or only comments): the defaults
            raw = {}
    if overrides:
        source += f" with {len(overrides)} override{'s' if len(overrides) != 1 else ''}"
    return raw, source


def config_from_dict(data: Any, overrides: Sequence[str] = (), *, source: str = "config") -> TrainConfig:
    """The config from plain nested mappings (what YAML gives), with `overrides` applied on top.
    Raises ConfigError listing every problem."""
    config, problems, _ = _parse(data, overrides)
    if problems:
        raise ConfigError(problems, source)
    return config


def _parse(data: Any, overrides: Sequence[str]) -> tuple[TrainConfig, list[str], set[str]]:
    """The config, every problem met on the way, and the dotted keys that had one (a bad
    value's place holds its default, so later checks must not judge it)."""
    problems: list[str] = []
    if not isinstance(data, Mapping):
        sections = ", ".join(f.name for f in dataclasses.fields(TrainConfig))
        problems.append(f"the top level must be a mapping of sections ({sections}), got {_describe(data)}")
        data = {}
    raw = _copy_tree(data)
    for item in overrides:
        _apply_override(raw, item, problems)
    bad: set[str] = set()
    config = _build(TrainConfig, raw, "", problems, bad)
    problems.extend(cross_field_problems(config, bad))
    return config, problems, bad


def _copy_tree(data: Any) -> Any:
    """A copy of the mappings in `data`, so overrides never write into the caller's dicts."""
    if isinstance(data, Mapping):
        return {k: _copy_tree(v) for k, v in data.items()}
    return data


def _apply_override(raw: dict[str, Any], item: str, problems: list[str]) -> None:
    """Set `dotted.key=value` in `raw`, creating the mappings on the way. Keys are not checked
    here: `_build` reports unknown ones with the same words as for a file's keys."""
    if not isinstance(item, str) or "=" not in item:
        problems.append(f"override {item!r} has no '=': write dotted.key=value, e.g. trainer.epochs=5")
        return
    key, _, text = item.partition("=")
    key = key.strip()
    parts = key.split(".")
    if not key or any(not p for p in parts):
        problems.append(
            f"override {item!r} has an empty key or key part: write dotted.key=value, e.g. trainer.epochs=5"
        )
        return
    try:
        value = _load_yaml(text)
    except yaml.YAMLError as e:
        problems.append(f"override {item!r}: the value is not valid YAML ({_yaml_error(e)}); quote it")
        return
    except ValueError as e:
        shown = item if len(item) <= 80 else item[:77] + "..."
        problems.append(f"override {shown!r}: the value cannot be read ({_one_line(e)})")
        return
    node: dict[str, Any] = raw
    cls: Any = TrainConfig  # the schema class at this level, None inside a free-form mapping
    for depth, part in enumerate(parts[:-1]):
        spec = _field(cls, part)
        child = node.get(part)
        if child is None and spec is not None and _is_mapping_type(_hints(cls)[part]):
            # `data.env_kwargs.level=3` edits the default kwargs rather than replacing them.
            # a mapping field's default is always a default_factory (dataclasses insists)
            child = dict(spec.default_factory())  # type: ignore[operator]
        elif child is None:
            child = {}
        if not isinstance(child, dict):
            where = ".".join(parts[: depth + 1])
            problems.append(
                f"override {item!r}: {where} is {_describe(child)}, not a mapping, so it has no key {parts[depth + 1]!r}"
            )
            return
        node[part] = child
        hint = _hints(cls)[part] if spec is not None else None
        cls = hint if hint is not None and dataclasses.is_dataclass(hint) else None
        node = child
    node[parts[-1]] = value


# --- building and checking one level ----------------------------------------------------------


def _build(cls: type, raw: Any, prefix: str, problems: list[str], bad: set[str]) -> Any:
    """An instance of the dataclass `cls` from the mapping `raw`: each known key coerced and
    checked, each missing key its default, each problem appended (with its dotted key added to
    `bad`). A bad value falls back to the default so the rest can still be checked."""
    names = [f.name for f in dataclasses.fields(cls)]
    if raw is None:  # `trainer:` with everything under it commented out
        raw = {}
    if not isinstance(raw, Mapping):
        problems.append(f"{prefix}: expected a mapping with keys {', '.join(names)}; got {_describe(raw)}")
        bad.add(prefix)
        return cls()
    for key in raw:
        if key not in names:
            dotted = _join(prefix, str(key))
            problems.append(
                f"{dotted}: unknown key{_suggest(str(key), prefix, names)}; valid keys in {prefix or 'the top level'}: {', '.join(names)}"
            )
            bad.add(dotted)
    hints = _hints(cls)
    values: dict[str, Any] = {}
    for f in dataclasses.fields(cls):
        if f.name not in raw:
            continue
        dotted = _join(prefix, f.name)
        hint = hints[f.name]
        if isinstance(hint, type) and dataclasses.is_dataclass(hint):
            values[f.name] = _build(hint, raw[f.name], dotted, problems, bad)
            continue
        value, problem = _coerce(raw[f.name], hint, f)
        if problem is None:
            problem = _check_rule(value, f)
        if problem is not None:
            problems.append(f"{dotted}: {problem}")
            bad.add(dotted)
        else:
            values[f.name] = value
    return cls(**values)


def _coerce(value: Any, hint: Any, f: dataclasses.Field[Any]) -> tuple[Any, str | None]:
    """`value` as the type `hint` asks for, or (None, why not). Strict on purpose: a quoted
    "5" or a 2.5 where an int goes is a mistake worth hearing about, not something to round."""
    optional, hint = _unwrap_optional(hint)
    if value is None:
        return (None, None) if optional else (None, f"null is not allowed here; {_expected(hint)}")
    if hint is bool:
        if isinstance(value, bool):
            return value, None
        return None, f"expected true or false, got {_describe(value)}" + (
            " (write it without quotes)" if isinstance(value, str) else ""
        )
    if hint is int:
        if isinstance(value, int) and not isinstance(value, bool):
            return value, None
        if isinstance(value, float) and value.is_integer():
            return None, f"expected an integer, got {value!r}; write {int(value)}"
        if isinstance(value, str):
            return None, f"expected an integer, got the string {value!r}; write a number without quotes"
        return None, f"expected an integer, got {_describe(value)}"
    if hint is float:
        if isinstance(value, bool) or not isinstance(value, (int, float, str)):
            return None, f"expected a number, got {_describe(value)}"
        try:
            number = float(value)  # strings too: YAML 1.1 reads 1e-6 (no dot) as a string
        except ValueError:
            return None, f"expected a number, got the string {value!r}"
        if not math.isfinite(number):
            return None, f"expected a finite number, got {value!r}"
        return number, None
    if hint is str:
        if isinstance(value, str):
            return (os.path.expanduser(value) if f.metadata.get("path") else value), None
        return None, f"expected a string, got {_describe(value)}; quote it if it is meant as text"
    if _is_str_tuple(hint):
        items = [value] if isinstance(value, str) else value
        if not isinstance(items, (list, tuple)) or not all(isinstance(x, str) for x in items):
            return None, f"expected a list of strings (or one string), got {_describe(value)}"
        return tuple(os.path.expanduser(x) if f.metadata.get("path") else x for x in items), None
    if _is_mapping_type(hint):
        if not isinstance(value, Mapping):
            return None, f"expected a mapping (write {{}} for none), got {_describe(value)}"
        if not all(isinstance(k, str) for k in value):
            return None, f"expected string keys, got {sorted(map(repr, value))}"
        return dict(value), None
    raise TypeError(f"config.py does not know how to read the type {hint!r} of field {f.name}")  # a schema bug


def _check_rule(value: Any, f: dataclasses.Field[Any]) -> str | None:
    """The field's range or choices rule from its metadata, or None when `value` passes."""
    meta = f.metadata
    if value is None:
        return None
    choices = meta.get("choices")
    if choices and value not in choices:
        return f"{value!r} is not one of: {', '.join(choices)}"
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        why = f" ({meta['why']})" if meta.get("why") else ""
        if meta.get("ge") is not None and value < meta["ge"]:
            return f"must be >= {meta['ge']}, got {value!r}{why}"
        if meta.get("gt") is not None and value <= meta["gt"]:
            return f"must be > {meta['gt']}, got {value!r}{why}"
        if meta.get("le") is not None and value > meta["le"]:
            return f"must be <= {meta['le']}, got {value!r}{why}"
    if isinstance(value, str) and not value:
        return "must not be empty"
    return None


def validate(config: TrainConfig) -> TrainConfig:
    """`config` checked against the schema (useful for one built in Python) and against this
    machine; raises one ConfigError with every problem of both kinds, else returns it."""
    # Rebuilt from its dict, a wrongly typed value (a Path, a list where a tuple goes) is
    # reported and replaced by its default, so the machine checks never trip over it.
    checked, problems, bad = _parse(config_to_dict(config), ())
    problems.extend(environment_problems(checked, bad))
    if problems:
        raise ConfigError(problems)
    return config


# --- saving -----------------------------------------------------------------------------------


def config_to_dict(config: Any) -> dict[str, Any]:
    """`config` as plain nested dicts, lists and scalars: what `yaml.safe_dump` can write and
    `config_from_dict` reads back into an equal config."""
    return {f.name: _plain(getattr(config, f.name)) for f in dataclasses.fields(config)}


def _plain(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return config_to_dict(value)
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def dump_config(config: TrainConfig, path: str | os.PathLike[str]) -> None:
    """Write `config` as YAML to `path`, so a run keeps the exact config it was started with
    next to its checkpoints. Written to a temporary file in the same folder and moved into
    place, so a crash never leaves half a config that would load as a different one."""
    path = os.fspath(path)
    folder = os.path.dirname(os.path.abspath(path))
    os.makedirs(folder, exist_ok=True)
    text = "# resolved rlenvs-train config: rlenvs-train --config <this file> reruns it\n"
    text += yaml.safe_dump(config_to_dict(config), sort_keys=False, default_flow_style=False)
    with atomic_path(path) as temporary:
        temporary.write_text(text, encoding="utf-8")


# --- small helpers ----------------------------------------------------------------------------


@functools.cache
def _hints(cls: Any) -> dict[str, Any]:
    """The resolved field types of a schema class (`from __future__ import annotations` leaves
    strings in `dataclasses.fields`)."""
    return typing.get_type_hints(cls)


def _field(cls: Any, name: str) -> dataclasses.Field[Any] | None:
    if cls is None or not dataclasses.is_dataclass(cls):
        return None
    return next((f for f in dataclasses.fields(cls) if f.name == name), None)


def _unwrap_optional(hint: Any) -> tuple[bool, Any]:
    args = typing.get_args(hint)
    if isinstance(hint, types.UnionType) or typing.get_origin(hint) is typing.Union:
        rest = [a for a in args if a is not type(None)]
        return type(None) in args, rest[0] if len(rest) == 1 else hint
    return False, hint


def _is_str_tuple(hint: Any) -> bool:
    return typing.get_origin(hint) is tuple and typing.get_args(hint) == (str, ...)


def _is_mapping_type(hint: Any) -> bool:
    return typing.get_origin(hint) in (Mapping, dict)


def _expected(hint: Any) -> str:
    if hint is bool:
        return "write true or false"
    if hint in (int, float):
        return "write a number"
    if _is_str_tuple(hint):
        return "write [] for none"
    if _is_mapping_type(hint):
        return "write {} for none"
    return "write a value"


def _join(prefix: str, name: str) -> str:
    return f"{prefix}.{name}" if prefix else name


def _describe(value: Any) -> str:
    """A short, readable account of a wrong value and its YAML kind."""
    kind = {dict: "a mapping", list: "a list", str: "a string", bool: "a boolean", int: "an integer", float: "a number"}
    if value is None:
        return "null"
    text = repr(value)
    if len(text) > 60:
        text = text[:57] + "..."
    name = kind.get(type(value))
    return f"{name} {text}" if name else text


def _yaml_error(error: yaml.YAMLError) -> str:
    """PyYAML's error on one line, with where it happened (its own message takes four)."""
    mark = getattr(error, "problem_mark", None)
    problem = getattr(error, "problem", None)
    if mark is None or not problem:
        return _one_line(error)
    context = getattr(error, "context", None)
    return f"line {mark.line + 1}, column {mark.column + 1}: {problem}" + (f" ({context})" if context else "")


def _one_line(error: BaseException) -> str:
    return " ".join(str(error).split())


def _all_keys(cls: Any = TrainConfig, prefix: str = "") -> list[str]:
    """Every dotted key of the schema, sections included."""
    keys: list[str] = []
    for f in dataclasses.fields(cls):
        dotted = _join(prefix, f.name)
        keys.append(dotted)
        hint = _hints(cls)[f.name]
        if dataclasses.is_dataclass(hint):
            keys.extend(_all_keys(hint, dotted))
    return keys


@functools.cache
def free_mapping_keys() -> tuple[str, ...]:
    """The dotted keys of the schema's free-form mappings (a `Mapping` field: data.env_kwargs,
    env_workers.ray.resources), whose own keys the schema does not know: a tool comparing or
    overriding configs treats each as one value, and a field added to the schema is one too."""
    return tuple(key for key, hint in _leaf_hints(TrainConfig, "") if _is_mapping_type(hint))


def _leaf_hints(cls: Any, prefix: str) -> list[tuple[str, Any]]:
    """(dotted key, type) of every field of the schema below `cls` that is not a section."""
    leaves: list[tuple[str, Any]] = []
    for f in dataclasses.fields(cls):
        dotted, hint = _join(prefix, f.name), _hints(cls)[f.name]
        leaves.extend(_leaf_hints(hint, dotted) if dataclasses.is_dataclass(hint) else [(dotted, hint)])
    return leaves


def _suggest(key: str, prefix: str, names: Sequence[str]) -> str:
    """ " (did you mean trainer.epochs?)": first a close name at the same level (a typo), else
    the same or a close name elsewhere in the schema (a key put in the wrong section)."""
    close = difflib.get_close_matches(key, names, n=1, cutoff=0.6)
    if close:
        return f" (did you mean {_join(prefix, close[0])}?)"
    elsewhere = [k for k in _all_keys() if k.rsplit(".", 1)[-1] == key]
    if not elsewhere:
        leaves = {k.rsplit(".", 1)[-1] for k in _all_keys()}
        near = difflib.get_close_matches(key, sorted(leaves), n=1, cutoff=0.75)
        elsewhere = [k for k in _all_keys() if near and k.rsplit(".", 1)[-1] == near[0]]
    if elsewhere:
        return f" (did you mean {' or '.join(elsewhere[:3])}?)"
    return ""
