"""What joining a cluster says when it cannot: the head refusing the client's token is
named as that, not as "Failed to connect to Ray cluster at ..."."""

from __future__ import annotations

from ray.exceptions import AuthenticationError

from lasagna.engine.ray_session import connect_error


def _as_ray_raises_it() -> ConnectionError:
    """Ray 2.60's chain: ray.init's ConnectionError from the node's RuntimeError, whose
    message holds the GCS client's AuthenticationError (raised from it)."""
    token = AuthenticationError("RPC error: InvalidAuthToken: Authentication token is missing")
    try:
        try:
            raise token
        except AuthenticationError as err:
            raise RuntimeError(f"Failed to connect to GCS. Last connection error: {err}") from err
    except RuntimeError as err:
        try:
            raise ConnectionError("Failed to connect to Ray cluster at 10.0.0.2:6379") from err
        except ConnectionError as outer:
            return outer


def test_a_refused_token_is_named_with_the_setting_that_sends_one() -> None:
    text = connect_error("10.0.0.2:6379", _as_ray_raises_it()).render()
    assert "uses token authentication and refused this client's token" in text, text
    assert "export RAY_AUTH_MODE=token" in text and "Failed to connect" not in text
    other = connect_error("10.0.0.2:6379", ConnectionError("nothing answers at 10.0.0.2:6379"))
    assert "cannot connect to the Ray cluster at '10.0.0.2:6379': nothing answers" in other.render()
