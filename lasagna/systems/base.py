"""The base of every system config: strict pydantic, stage resources, identity.

Stage resources keys (`retrieve`, `generate`, ...: the keys of a sweep's `resources:`) are
registered by the module of the system config whose stage they place (`register_stage`);
`resources_model()` builds the pydantic model of `resources:` from what is registered.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

from pydantic import BaseModel, Field, create_model

from lasagna.common import plugins
from lasagna.models.spec import StageResources, Strict

_STAGES: dict[str, str] = {}  # stage resources key -> what its actors do
_MODELS: dict[tuple[str, ...], type[ResourcesBase]] = {}


def register_stage(key: str, description: str) -> str:
    """Add a stage resources key (a sweep's `resources.<key>`); returns the key."""
    if not key.isidentifier():
        raise plugins.PluginError(f"stage resources key {key!r} is not a Python identifier")
    if key in _STAGES:
        return key  # a module imported again, or two systems placing one stage
    _STAGES[key] = description
    plugins.registered(f"stage resources key {key}", lambda: _STAGES.pop(key, None))
    return key


def stage_keys() -> tuple[str, ...]:
    """Every registered stage resources key (plugins' included)."""
    plugins.load()
    return tuple(_STAGES)


class ResourcesBase(Strict):
    """A sweep's defaults for the stages' actor pools; a system's own explicit values win.
    Its fields are the registered stage keys (`resources_model`)."""

    def for_stage(self, stage: str, own: StageResources | None = None) -> StageResources:
        """The resources of `stage`: sweep defaults, overlaid with `own`'s explicit keys."""
        if stage not in type(self).model_fields:
            known = ", ".join(type(self).model_fields)
            raise KeyError(f"unknown stage '{stage}' (stages: {known})")
        base = getattr(self, stage) or StageResources()
        if own is None:
            return base
        explicit = {k: getattr(own, k) for k in own.model_fields_set}
        return base.model_copy(update=explicit)

    def apply(self, stage: str, own: StageResources, written: bool) -> StageResources:
        """A system's resources for `stage` with the sweep's defaults applied: what the user
        wrote on the system (`written`) wins over the sweep's keys, which win over the
        system's built-in default (e.g. BM25's batch_size 256)."""
        sweep = getattr(self, stage, None)
        if sweep is None:
            return own
        merged = own.model_copy(update={k: getattr(sweep, k) for k in sweep.model_fields_set})
        if written:
            merged = merged.model_copy(update={k: getattr(own, k) for k in own.model_fields_set})
        return merged

    def on(self, owner: BaseModel, field: str, stage: str) -> StageResources:
        """`owner.<field>` (a StageResources) with the sweep's `stage` defaults applied."""
        return self.apply(stage, getattr(owner, field), field in owner.model_fields_set)


def resources_model() -> type[ResourcesBase]:
    """The model of a sweep's `resources:`: one optional StageResources per stage key
    registered so far (built once per set of keys)."""
    keys = tuple(_STAGES)
    if keys not in _MODELS:
        fields: dict[str, Any] = {
            k: (StageResources | None, Field(default=None, description=_STAGES[k])) for k in keys
        }
        _MODELS[keys] = create_model(
            "Resources", __base__=ResourcesBase, __module__=__name__, **fields
        )
    return _MODELS[keys]


def __getattr__(name: str) -> Any:
    """`Resources`: the model of the stage keys registered so far (lasagna.systems.Resources
    once the built-in systems are imported; a sweep's adds plugins' keys)."""
    if name == "Resources":
        return resources_model()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def left_out_at_default(config: BaseModel, name: str) -> bool:
    """Whether field `name` of `config` stays out of keys: a field added later
    (`KEY_DEFAULTS`) that holds its default."""
    later = getattr(type(config), "KEY_DEFAULTS", {})
    return name in later and getattr(config, name) == later[name]


def placement_free(value: Any) -> Any:
    """A config as plain JSON without stage placement (CPUs, GPUs, actors, batch sizes), so
    moving a sweep from a laptop to a cluster keeps its keys."""
    if isinstance(value, BaseModel):
        placement = getattr(type(value), "PLACEMENT_FIELDS", ())  # e.g. a GPU memory share
        return {
            name: placement_free(getattr(value, name))
            for name in type(value).model_fields
            if not isinstance(getattr(value, name), StageResources)
            and name not in placement
            and not left_out_at_default(value, name)
        }
    if isinstance(value, list | tuple):
        return [placement_free(v) for v in value]
    if isinstance(value, dict):
        return {str(k): placement_free(v) for k, v in value.items()}
    return value


class SystemConfig(Strict):
    """What every system config provides; subclasses set `track` and override the rest."""

    track: ClassVar[str] = ""
    # fields added after keys were first made: left out of the key while at this default,
    # so the keys of configs that do not set them stay what they were
    KEY_DEFAULTS: ClassVar[dict[str, Any]] = {}

    def display_name(self) -> str:
        """The name shown in tables: the configured name, else a short description."""
        return getattr(self, "name", None) or self.describe()

    def describe(self) -> str:
        return str(getattr(self, "kind", type(self).__name__))

    def model_identity(self) -> dict[str, Any] | None:
        """The identity of the models it runs (file hashes, prompt hash); None: no model."""
        return None

    def dense_parts(self) -> list[Any]:
        """The dense retrievers it encodes with (lasagna.systems.retrievers.DenseRetriever):
        none here; a dense or hybrid retriever's own, a RAG generator's retriever's."""
        return []

    def identity(self) -> dict[str, Any]:
        """What the trial key hashes: the placement-free config plus the model identity."""
        out = placement_free(self)
        model = self.model_identity()
        if model is not None:
            out["model_identity"] = model
        return out

    def with_resources(self, resources: ResourcesBase) -> SystemConfig:
        """The config with the sweep's stage defaults applied (explicit values win)."""
        return self

    def repeats_differ(self) -> bool:
        """Whether its repeats (`trials: N`) can score differently: True unless the system
        knows it is deterministic (a plugin's system may be random by itself)."""
        return True

    def checks(self, prepare: bool = True) -> list[Callable[[], None]]:
        """Checks (model resolves, key set) that raise UserError; run before Ray.
        prepare=False: look a packaged model up without converting it."""
        return []

    def checks_at(self, prepare: bool = True) -> list[tuple[tuple[str, ...], Callable[[], None]]]:
        """`checks` with the key path, within the system, of the part each one checks
        (("model",), ("retriever",)), so a refusal names the field the user wrote."""
        return [((), check) for check in self.checks(prepare)]


def systems_of_kind(kind: Any) -> list[type[SystemConfig]]:
    """Every system class (subclasses of subclasses too) whose `kind` defaults to `kind`."""
    out, todo = [], list(SystemConfig.__subclasses__())
    while todo:
        cls = todo.pop()
        todo += cls.__subclasses__()
        field = cls.model_fields.get("kind")
        if field is not None and field.default == kind:
            out.append(cls)
    return out


def with_key_defaults(config: dict[str, Any]) -> dict[str, Any]:
    """A stored config (the JSON its key hashed) with the fields its key leaves out at their
    default (`KEY_DEFAULTS` of the system of its `kind`) filled in, for showing it."""
    later: dict[str, Any] = {}
    for cls in systems_of_kind(config.get("kind")):
        later |= cls.KEY_DEFAULTS
    return {**later, **config} if later else config


def display_name(system: BaseModel) -> str:
    """The name a system shows in tables (see SystemConfig.display_name)."""
    if isinstance(system, SystemConfig):
        return system.display_name()
    return getattr(system, "name", None) or str(getattr(system, "kind", type(system).__name__))
