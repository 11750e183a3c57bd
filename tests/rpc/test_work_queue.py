"""The -rpcthreads pool (quill.rpc.server.WorkQueue) starts its threads as calls need them: none
before the first call, never more than -rpcthreads, and a call never waits while fewer threads than
that are busy."""
import asyncio
import threading

from quill.rpc.server import WorkQueue


def test_threads_start_as_calls_need_them_and_never_beyond_the_limit():
    async def main():
        pool = WorkQueue(3, 64)
        assert pool.workers == []
        assert await pool.run(lambda: 7) == 7
        assert len(pool.workers) == 1
        for _ in range(20):   # one at a time: the same thread answers them all
            assert await pool.run(lambda: 1) == 1
        assert len(pool.workers) == 1
        gate = threading.Event()
        running = []

        def blocked(i):
            running.append(i)
            gate.wait(10)
            return i

        futures = [pool.run(blocked, i) for i in range(5)]
        for _ in range(200):   # three run at once, each on its own thread; two wait their turn
            if len(running) == 3:
                break
            await asyncio.sleep(0.01)
        assert sorted(running) == [0, 1, 2]
        assert len(pool.workers) == 3
        assert pool.jobs.qsize() == 2
        gate.set()
        assert await asyncio.gather(*futures) == [0, 1, 2, 3, 4]
        assert len(pool.workers) == 3
        await asyncio.get_running_loop().run_in_executor(None, pool.shutdown)
        assert not any(w.is_alive() for w in pool.workers)

    asyncio.run(main())
