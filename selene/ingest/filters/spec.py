"""Which filters run, in which order, with which settings: the `filters` section of ingest.

Each filter's settings are validated by the config model its class carries (`Filter.Config`), so an
error names the filter's own keys.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from pydantic import (
    ConfigDict,
    Field,
    GetJsonSchemaHandler,
    RootModel,
    SerializeAsAny,
    SerializerFunctionWrapHandler,
    ValidationError,
    model_serializer,
    model_validator,
)
from pydantic_core import PydanticCustomError

from selene.config.base import Strict, model_at
from selene.errors import ConfigError
from selene.ingest.filters.base import FilterConfig
from selene.ingest.filters.registry import get_filter

DEFAULT_FILTERS = ("length", "gopher_quality", "gopher_repetition")


class FilterSpec(Strict):
    """One filter of the chain: which one (a registered name or ``module:Class``) and its settings.

    Written flat, ``{name: gopher_quality, min_words: 30}``, or as the bare name; the settings are
    validated by that filter's own config model, so a typo names the field and the filter's keys.
    """

    model_config = ConfigDict(frozen=True)  # the settings can change, which filter they belong to cannot

    name: str = Field(description="A registered filter (length, gopher_quality, ...) or module:Class.")
    config: SerializeAsAny[FilterConfig] = Field(description="The filter's settings, its own config model.")

    @model_validator(mode="before")
    @classmethod
    def _from_flat(cls, data: Any) -> Any:
        if isinstance(data, FilterSpec):
            return data
        if isinstance(data, str):
            data = {"name": data}
        if not isinstance(data, dict):
            msg = "a filter is its name, or a mapping of its name and settings: {name: NAME, ...}"
            raise _filter_errors([{"type": "filter_spec", "loc": (), "input": data, "msg": msg}])
        params: Any = dict(data)
        if "name" not in params:
            raise _filter_errors([{"type": "missing", "loc": ("name",), "input": data}])
        name = params.pop("name")
        if params.keys() == {"config"} and isinstance(params["config"], FilterConfig):
            params = params["config"]  # FilterSpec(name=..., config=...)
        return _resolve_filter(name, params, name_loc=("name",), keys=("name",))

    @model_serializer(mode="wrap")
    def _to_flat(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data = handler(self)
        return {"name": data["name"], **data["config"]}

    @classmethod
    def __get_pydantic_json_schema__(cls, schema: Any, handler: GetJsonSchemaHandler) -> dict[str, Any]:
        # The flat form: which settings are accepted depends on the filter the name resolves to.
        flat = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
        return {"title": cls.__name__, "anyOf": [{"type": "string"}, {**flat, "additionalProperties": True}]}


def _filter_errors(errors: list[dict[str, Any]]) -> ValidationError:
    """A ValidationError of `errors` (type, loc, input, msg), raised from a validator: pydantic adds
    the location of the value being validated in front of each `loc`."""
    details: list[Any] = []
    for e in errors:
        typ = e["type"]
        if "msg" in e:  # re-raised from a filter's config model: keep its type and message
            typ = PydanticCustomError(typ, "{msg}", {"msg": e["msg"]})
        details.append({"type": typ, "loc": e["loc"], "input": e["input"]})
    return ValidationError.from_exception_data("filters", details)


def _resolve_filter(name: Any, params: Any, *, name_loc: tuple, keys: tuple[str, ...]) -> dict[str, Any]:
    """{name, config} of filter `name` with settings `params` (a mapping, None or a config object).
    Errors are raised at `name_loc` (the bad name) and at each bad setting; an unknown key lists
    `keys` and the filter's settings."""
    try:
        filt = get_filter(str(name))
    except ConfigError as e:
        raise _filter_errors(
            [{"type": "filter_name", "loc": name_loc, "input": name, "msg": str(e)}]
        ) from None
    model = filt.Config
    if isinstance(params, FilterConfig):
        if not isinstance(params, model):
            msg = f"filter {name} takes a {model.__qualname__}, not a {type(params).__qualname__}"
            raise _filter_errors([{"type": "filter_config", "loc": name_loc, "input": params, "msg": msg}])
        return {"name": name, "config": params}
    try:
        return {"name": name, "config": model.model_validate({} if params is None else params)}
    except ValidationError as e:
        errors: list[dict[str, Any]] = []
        for err in e.errors():
            typ, loc, msg = err["type"], err["loc"], err["msg"]
            parent = model_at(model, loc[:-1])
            if typ == "extra_forbidden" and parent is not None:
                accepted = ", ".join(
                    (*keys, *parent.model_fields) if parent is model else parent.model_fields
                )
                typ, msg = "unknown_key", f"unknown key of filter {name}; accepted keys here: {accepted}"
            errors.append({"type": typ, "loc": loc, "input": err["input"], "msg": msg})
        raise _filter_errors(errors) from None


class FiltersConfig(RootModel[list[FilterSpec]]):
    """The document filters, in the order they run; the first that rejects a document names the reason.

    A list chooses the filters and their order: ``[{name: length, min_words: 5}, gopher_quality,
    {name: "mypkg.filters:MyFilter", param: 1}]``. A mapping adjusts the default
    chain length → gopher_quality → gopher_repetition, e.g. ``{gopher_quality: {enabled: false}}``;
    any other filter it names runs after those, in mapping order. Either form resolves to the list,
    with every default filled in, which is what `selene config validate` prints.
    """

    root: list[FilterSpec] = Field(
        default_factory=lambda: [FilterSpec.model_validate(n) for n in DEFAULT_FILTERS]
    )

    @model_validator(mode="before")
    @classmethod
    def _from_mapping(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data  # the list form, validated item by item
        specs, errors = [], []
        for name in (*DEFAULT_FILTERS, *(k for k in data if k not in DEFAULT_FILTERS)):
            try:
                specs.append(_resolve_filter(name, data.get(name), name_loc=(), keys=()))
            except ValidationError as e:
                errors += [{**err, "loc": (name, *err["loc"])} for err in e.errors()]
        if errors:
            raise _filter_errors(errors)
        return specs

    @model_validator(mode="after")
    def _unique(self) -> FiltersConfig:
        names = [s.name for s in self.root]
        dup = sorted({n for n in names if names.count(n) > 1})
        if dup:
            raise ValueError(f"a filter runs at most once in the chain, repeated: {', '.join(dup)}")
        return self

    def __iter__(self) -> Iterator[FilterSpec]:  # type: ignore[override]
        return iter(self.root)

    def input_files(self) -> list[str]:
        """The files the enabled filters read (word and block lists)."""
        return [p for spec in self.root if spec.config.enabled for p in spec.config.input_files()]

    def __getitem__(self, name: str) -> FilterConfig:
        """The settings of filter `name` (as written in the config: a registered name or module:Class)."""
        for spec in self.root:
            if spec.name == name:
                return spec.config
        raise KeyError(f"no filter {name!r} in the chain; it has {', '.join(s.name for s in self.root)}")
