"""The full-screen terminal client: a plain `TableModel` (model.py) that back ends feed, screens that
read it (screens.py and render_*.py, with moves and events told in words by describe.py), and the
prompt_toolkit application that binds keys to it (app.py).

`NetTable` (net_table.py) plays the model's seat through the real protocol (hosting, joining or
resuming a table); `LocalTable` (local_table.py) is the in-process back end against bots (`--offline`).
The lobby (lobby_model.py, lobby_screen.py) lists the tables on the network and opens the table screen.
"""
