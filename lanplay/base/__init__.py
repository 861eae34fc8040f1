"""What every other part of lanplay may use and that uses none of them: the disk (store.py: identity
key, journals, records, the saved network), text from peers made safe to show (text.py), and small
asyncio helpers (aio.py)."""
