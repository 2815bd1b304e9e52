"""A reply the platform refuses because the user blocked the bot: nothing went out, so nothing
may be recorded as sent (docs/companion.md, "One turn per message")."""

from __future__ import annotations

from tests.companion.conftest import World


async def test_a_reply_refused_by_a_block_is_not_recorded_as_sent(world: World) -> None:
    message = world.incoming("kim_k", "hi there")
    world.emulator.block("kim_k")  # they blocked the bot before the answer went out
    await world.gateway.on_message(message)
    await world.gateway.drain()
    assert world.texts_to("kim_k") == []
    user = world.gateway.store.user(message.chat_id)
    assert user is not None and user.blocked
    # The ledger holds no answer to that message, neither sent nor pending: it went nowhere.
    assert not world.gateway._answered(message.chat_id, message.message_id)


async def test_after_unblocking_the_user_is_answered_again(world: World) -> None:
    first = world.incoming("lou_l", "hello")
    world.emulator.block("lou_l")
    await world.gateway.on_message(first)
    await world.gateway.drain()
    world.emulator.unblock("lou_l")
    world.clock.advance(minutes=1)
    await world.say("lou_l", "are you there?")
    assert world.texts_to("lou_l") == ["Good luck tomorrow! Tell me how it goes."]
    user = world.gateway.store.user(first.chat_id)
    assert user is not None and not user.blocked
