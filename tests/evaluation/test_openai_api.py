import pytest

import rlenvs
from rlenvs.evaluation import OpenAIPolicy
from rlenvs.evaluation.openai_api import (
    PolicyError,
    api_base,
    call_json,
    chat_request,
    completions_request,
    only_model,
    read_reply,
)


def test_api_base_takes_the_v1_base_or_adds_it() -> None:
    assert api_base("http://127.0.0.1:8000/v1/") == "http://127.0.0.1:8000/v1"
    assert api_base("https://api.example.org") == "https://api.example.org/v1"
    with pytest.raises(ValueError, match="must start with http"):
        api_base("127.0.0.1:8000")


def test_chat_request_sends_the_conversation_so_far() -> None:
    messages = [
        {"role": "system", "content": "s"},
        {"role": "user", "content": "q"},
        {"role": "assistant", "content": "a"},
    ]
    body = chat_request("m", messages, temperature=0.7, max_tokens=64, seed=3)
    assert body == {"model": "m", "messages": messages, "temperature": 0.7, "n": 1, "max_tokens": 64, "seed": 3}
    assert "max_tokens" not in chat_request("m", messages, temperature=0.0, max_tokens=None, seed=None)
    body = completions_request("m", "<s>q", temperature=0.7, max_tokens=64, seed=3)
    assert body == {"model": "m", "prompt": "<s>q", "temperature": 0.7, "n": 1, "max_tokens": 64, "seed": 3}


def test_read_reply_of_either_api_and_a_response_of_another_shape() -> None:
    reply = read_reply({"choices": [{"message": {"content": "x"}, "finish_reason": "length"}]}, "U")
    assert (reply.text, reply.finish_reason) == ("x", "length")
    reply = read_reply({"choices": [{"text": "y", "finish_reason": "stop"}]}, "U", "completions")
    assert (reply.text, reply.finish_reason) == ("y", "stop")
    with pytest.raises(PolicyError, match=r"U answered without choices\[0\]\.message\.content"):
        read_reply({"error": "nope"}, "U")
    with pytest.raises(PolicyError, match=r"U answered without choices\[0\]\.text"):
        read_reply({"choices": [{"message": {"content": "x"}}]}, "U", "completions")
    with pytest.raises(ValueError, match="api .--api. must be one of chat, completions"):
        OpenAIPolicy("http://127.0.0.1:9/v1", api="responses")
    with pytest.raises(ValueError, match="drop it for chat"):
        OpenAIPolicy("http://127.0.0.1:9/v1", tokenizer="gpt2")


def test_only_model_needs_exactly_one() -> None:
    assert only_model({"data": [{"id": "tiny"}]}, "B") == "tiny"
    with pytest.raises(ValueError, match="B/models lists 2 models \\(a, b\\): name one with --model"):
        only_model({"data": [{"id": "a"}, {"id": "b"}]}, "B")


def test_an_unreachable_server_is_a_policy_error_naming_the_url() -> None:
    url = "http://127.0.0.1:9/v1/models"  # the discard port: nothing listens there
    with pytest.raises(PolicyError, match="http://127.0.0.1:9/v1/models failed 1 times"):
        call_json(url, None, timeout_s=2, retries=0)


@pytest.mark.parametrize("model", [None, "named"])
def test_a_server_that_never_answered_stops_the_run_at_once(model: str | None) -> None:
    """Not a PolicyError per episode, each retried with growing pauses (14 s a task at the
    default retries), ending in a table of infrastructure failures."""
    policy = OpenAIPolicy("http://127.0.0.1:9/v1", model=model, retries=0, timeout_s=2)
    with pytest.raises(
        ValueError, match=r"openai:http://127.0.0.1:9/v1: its model list could not be read .*fix the URL"
    ):
        rlenvs.evaluate("rlenvs/Arithmetic-v1", policy, episodes=3)
