"""The wait a reply's end makes for its turn's commit: the commit's answer, or False once the
wait is over, never cancelling the commit itself (the write stays queued)."""

from __future__ import annotations

import asyncio

import pytest

from proxy.gateway.capture import within


def test_the_commits_answer_when_it_comes_in_time() -> None:
    async def main() -> None:
        loop = asyncio.get_running_loop()
        done: asyncio.Future[bool] = loop.create_future()
        loop.call_later(0.01, done.set_result, True)
        assert await within(done, 5.0) is True
        refused: asyncio.Future[bool] = loop.create_future()
        loop.call_later(0.01, refused.set_result, False)
        assert await within(refused, 5.0) is False
        ready: asyncio.Future[bool] = loop.create_future()
        ready.set_result(True)
        assert await within(ready, 0.0) is True

    asyncio.run(main())


def test_a_late_commit_gives_false_and_is_left_to_finish() -> None:
    async def main() -> None:
        loop = asyncio.get_running_loop()
        done: asyncio.Future[bool] = loop.create_future()
        started = loop.time()
        assert await within(done, 0.05) is False
        assert loop.time() - started >= 0.05
        assert not done.cancelled()
        done.set_result(True)  # no callback of the finished wait is left to run

    asyncio.run(main())


def test_a_failed_commit_raises_and_a_cancelled_wait_leaves_the_commit() -> None:
    async def main() -> None:
        loop = asyncio.get_running_loop()
        broken: asyncio.Future[bool] = loop.create_future()
        loop.call_later(0.01, broken.set_exception, RuntimeError("store gone"))
        with pytest.raises(RuntimeError, match="store gone"):
            await within(broken, 5.0)
        done: asyncio.Future[bool] = loop.create_future()
        waiting = asyncio.create_task(within(done, 5.0))
        await asyncio.sleep(0.01)
        waiting.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiting
        assert not done.cancelled()

    asyncio.run(main())
