"""Instant answers reach the DiscoClaw app (issue 25, item 17). The app inserts an answer's row only after
decoding the POST 201 and two SQLite writes, and drops events about rows it lacks while moving its cursor;
`discoclaw_client.App` behaves like that. Against echo with no delay and the relay's own `/backend` reply,
every answer of 50 turns in a row must be shown, by an app as quick as a phone and by one slower than the
relay's hold (it then gets the answer from the /sync that conversation.updated starts)."""
import asyncio
import time

import pytest

from discoclaw_client import App, Socket, app_decodes_everything, discoclaw_config, register  # noqa: F401


@pytest.fixture
def drelay(relay_factory):
    return relay_factory(discoclaw_config(max_queued_turns=50))


def text(index: int) -> str:
    """Every tenth turn is `/backend`, which the relay answers itself."""
    return "/backend" if index % 10 == 9 else f"message {index}"


def expected(index: int) -> str:
    return "This conversation is answered by echo" if index % 10 == 9 else f"echo: message {index}"


async def run_turns(relay, turns: int, insert_delay: float) -> tuple[App, list[str], float]:
    """The user sends `turns` messages, each as soon as the app has handled the previous 201 (not waiting for
    answers); returns the app, the answer ids and how long until every answer was shown."""
    dev = register(relay)
    app = App(dev, await Socket.connect(relay, dev.token), insert_delay=insert_delay)
    conv = dev.create_conversation("fast")
    started = time.monotonic()
    answers = [(await app.send(conv["id"], text(i)))["assistantMessageId"] for i in range(turns)]
    deadline = time.monotonic() + 20
    while not all(app.shown(a) for a in answers) and time.monotonic() < deadline:
        await asyncio.sleep(0.02)  # polling the app's rows with a deadline
    missing = [(i, app.rows.get(a)) for i, a in enumerate(answers) if not (app.shown(a) or "").startswith(expected(i))]
    assert not missing, f"{len(missing)} of {turns} answers not shown: {missing[:5]}; dropped events: {len(app.dropped)}"
    assert not app.duplicates, f"a /sync stored a user message before the app renamed its optimistic row: {app.duplicates}"
    return app, answers, time.monotonic() - started


async def test_fifty_instant_answers_in_a_row_are_all_shown(drelay):
    app, answers, took = await run_turns(drelay, 50, insert_delay=0.02)
    assert not app.dropped, f"the sender's socket held the answers until the app had their rows: {app.dropped[:3]}"
    print(f"50 instant answers shown in {took:.2f} s")


async def test_an_app_slower_than_the_hold_still_shows_every_answer(drelay):
    app, answers, took = await run_turns(drelay, 10, insert_delay=0.6)
    assert app.dropped, "this app is slower than the hold: it drops the first events and relies on /sync"
    print(f"10 answers to a slow app shown in {took:.2f} s; {len(app.dropped)} events dropped and recovered by /sync")
