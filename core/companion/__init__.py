"""The companion (docs/companion.md): a free AI friend, one short-lived turn per message.

What is not about Telegram lives here (pacing, limits, notes, retention, check-in rules, the
private store), so another chat platform could reuse it; the aiogram side is in
adapters/telegram/companion*.py.
"""
