"""The Ray settings lasagna relies on to survive a lost node (set where the stage layer
creates actors), and how a failed trial is described. Pure: no Ray started."""

from __future__ import annotations

import pytest

from lasagna.engine.failures import failure_reason, root_cause, stops_the_sweep
from lasagna.stages.actors import TASK_RETRIES, actor_options
from lasagna.stages.stage import Stage, map_kwargs
from lasagna.sweep.keys import system_config
from lasagna.systems import DenseRetriever, StageResources


class Holder:  # a stateful stage's callable class
    def __call__(self, batch):
        return batch


def scoring(batch):
    return batch


def test_actor_pools_restart_lost_actors_and_retry_their_calls() -> None:
    stage = Stage("s", Holder, inputs=("q",), outputs=("a",), resources=StageResources())
    kwargs = map_kwargs(stage)
    # retried until the actor's restarts are spent, however long Ray takes to see it died
    assert kwargs["max_restarts"] == 3 and kwargs["max_task_retries"] == -1
    assert "resources" not in kwargs  # no custom resources asked: any node will do


def test_custom_resources_and_restart_budget_reach_ray() -> None:
    res = StageResources(resources={"worker": 1.0}, max_restarts=0, num_gpus=0.5)
    stage = Stage("s", Holder, inputs=("q",), outputs=("a",), resources=res)
    kwargs = map_kwargs(stage)
    assert kwargs["resources"] == {"worker": 1.0}
    assert kwargs["max_restarts"] == 0 and kwargs["max_task_retries"] == 0
    assert kwargs["num_gpus"] == 0.5
    assert actor_options(res, num_gpus=2)["num_gpus"] == 2  # tensor parallel wins


def test_stateless_tasks_are_retried() -> None:
    kwargs = map_kwargs(Stage("score", scoring, inputs=("q",), outputs=("a",)))
    assert kwargs["max_retries"] == TASK_RETRIES > 0


def test_restart_budget_refuses_nonsense() -> None:
    with pytest.raises(ValueError):
        StageResources(max_restarts=-2)


def test_placement_and_restarts_never_change_a_trial_key() -> None:
    placed = DenseRetriever(encode=StageResources(resources={"worker": 1}, max_restarts=0))
    assert system_config(placed) == system_config(DenseRetriever())


class FakeRayTaskError(Exception):  # Ray's wrapper of a remote error carries it as `cause`
    def __init__(self, cause: BaseException):
        super().__init__(f"ray::EncodeDocs.__init__()\n  Traceback ...\n{cause}")
        self.cause = cause


class ActorDiedError(Exception):  # named as Ray names it
    pass


def test_reason_is_the_root_cause_in_one_line() -> None:
    inner = OSError("model 'org/missing' is not in the cache\nmore detail")
    try:
        try:
            raise FakeRayTaskError(inner)
        except FakeRayTaskError as err:
            raise RuntimeError("dataset execution failed") from err
    except RuntimeError as outer:
        assert root_cause(outer) is inner
        assert failure_reason(outer) == "OSError: model 'org/missing' is not in the cache"


def test_reason_says_when_ray_lost_the_infrastructure() -> None:
    err = ActorDiedError("The actor died unexpectedly before finishing this task.")
    reason = failure_reason(err)
    assert reason.startswith("a Ray actor of this trial died and could not be restarted")
    assert "ActorDiedError: The actor died unexpectedly" in reason


def test_reason_is_bounded() -> None:
    assert len(failure_reason(ValueError("x" * 5000))) <= 400


def test_a_user_error_from_a_ray_worker_fails_only_its_trial() -> None:
    from lasagna.errors import UserError

    class RayError(Exception):  # named as Ray's base class is
        pass

    class RemoteUserError(RayError, UserError):  # what Ray re-raises for a worker's error
        pass

    assert stops_the_sweep(UserError("bad input"))
    assert not stops_the_sweep(RemoteUserError("embedder 'x' is not in the cache"))
    assert not stops_the_sweep(ValueError("a bug"))


class InitFailed(Exception):  # Ray's ActorDiedError for a constructor that raised
    actor_init_failed = True


def test_reason_of_an_actor_that_could_not_start_is_its_constructors_error() -> None:
    err = InitFailed(
        "The actor died because of an error raised in its creation task, "
        'ray::_MapWorker.__init__() (pid=1, ip=127.0.0.1)\n  File "x.py", line 3\n'
        'Traceback (most recent call last):\n  File "y.py", line 9, in load\n'
        "lasagna.errors.UserError: field 'model': embedder 'org/m' is not cached. Fix: copy it"
    )
    assert failure_reason(err) == (
        "a stage's actor could not start "
        "(UserError: field 'model': embedder 'org/m' is not cached. Fix: copy it)"
    )
